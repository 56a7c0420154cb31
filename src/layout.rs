//! Where the topology draws each node: a landscape layout for wide screens
//! and a portrait one for phones. Pure geometry, in SVG user units.

use idem_sim::NodeId;

/// A node's box: centre, width and height.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Place {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

/// The drawing: its viewBox size and every node's place.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub width: f64,
    pub height: f64,
    pub nodes: Vec<(NodeId, Place)>,
}

impl Layout {
    /// Lays out `nodes` (as `Scenario::nodes` lists them); `tall` for a phone.
    pub fn new(nodes: &[NodeId], tall: bool) -> Layout {
        let apis: Vec<NodeId> = nodes.iter().copied().filter(|n| n.is_api()).collect();
        let pipeline = nodes.contains(&NodeId::Broker);
        let mail = nodes.contains(&NodeId::Mail);

        // The stores and the processor the scenario draws, centred on the API.
        let stores: Vec<NodeId> = [NodeId::Redis, NodeId::Postgres, NodeId::Processor]
            .into_iter()
            .filter(|n| nodes.contains(n))
            .collect();
        let mid = |i: usize| i as f64 - (stores.len() as f64 - 1.0) / 2.0;
        let at = |x: f64, y: f64, w: f64, h: f64| Place { x, y, w, h };
        let mut out = Vec::new();
        // A phone's portrait is kept short, so the narration fits under it above the
        // outcome bar stuck to the bottom edge (e2e/layout.test.mjs), and playback too.
        let (width, height) = match (tall, pipeline) {
            (true, true) => (360.0, 450.0),
            (true, false) => (360.0, 320.0),
            _ => (700.0, 300.0),
        };
        match (tall, pipeline) {
            // Top to bottom: producer, broker, consumer, ledger.
            (true, true) => {
                out.push((apis[0], at(180.0, 45.0, 170.0, 60.0)));
                out.push((NodeId::Broker, at(180.0, 165.0, 170.0, 60.0)));
                out.push((NodeId::Consumer, at(180.0, 285.0, 170.0, 60.0)));
                out.push((NodeId::Postgres, at(180.0, 400.0, 170.0, 70.0)));
            }
            // Top to bottom: the client, the API instances, the stores in a row.
            (true, false) => {
                out.push((NodeId::Client, at(180.0, 32.0, 170.0, 56.0)));
                let gap = if apis.len() > 2 { 118.0 } else { 170.0 };
                // The mail service sits right of the one API instance.
                let left = if mail { 70.0 } else { 0.0 };
                if mail {
                    out.push((NodeId::Mail, at(280.0, 134.0, 140.0, 60.0)));
                }
                for (i, a) in apis.iter().enumerate() {
                    let x = 180.0 - left + (i as f64 - (apis.len() as f64 - 1.0) / 2.0) * gap;
                    out.push((
                        *a,
                        at(x, 134.0, if apis.len() > 2 { 110.0 } else { 160.0 }, 60.0),
                    ));
                }
                for (i, n) in stores.iter().enumerate() {
                    out.push((*n, at(180.0 + 121.0 * mid(i), 262.0, 115.0, 100.0)));
                }
            }
            // Left to right: producer, broker, consumer, ledger.
            (false, true) => {
                out.push((apis[0], at(95.0, 150.0, 170.0, 64.0)));
                out.push((NodeId::Broker, at(270.0, 55.0, 170.0, 64.0)));
                out.push((NodeId::Consumer, at(440.0, 150.0, 170.0, 64.0)));
                out.push((NodeId::Postgres, at(600.0, 245.0, 190.0, 72.0)));
            }
            // Left to right: the client, the API instances, the stores in a column.
            (false, false) => {
                out.push((NodeId::Client, at(85.0, 150.0, 150.0, 64.0)));
                let gap = if apis.len() > 2 { 85.0 } else { 110.0 };
                for (i, a) in apis.iter().enumerate() {
                    let y = 150.0 + (i as f64 - (apis.len() as f64 - 1.0) / 2.0) * gap;
                    out.push((*a, at(330.0, y, 160.0, 64.0)));
                }
                // The mail service sits under the one API instance.
                if mail {
                    out.push((NodeId::Mail, at(330.0, 258.0, 160.0, 56.0)));
                }
                for (i, n) in stores.iter().enumerate() {
                    out.push((*n, at(590.0, 150.0 + 100.0 * mid(i), 210.0, 80.0)));
                }
            }
        }
        // The reconciliation job: above the API instances, or right of the app on a phone.
        if nodes.contains(&NodeId::Reconciler) {
            out.push((
                NodeId::Reconciler,
                match tall {
                    true => at(313.0, 32.0, 86.0, 60.0),
                    false => at(330.0, 31.0, 160.0, 50.0),
                },
            ));
        }
        Layout {
            width,
            height,
            nodes: out,
        }
    }

    pub fn place(&self, n: NodeId) -> Option<Place> {
        self.nodes.iter().find(|(m, _)| *m == n).map(|(_, p)| *p)
    }

    /// The links drawn: who talks to whom in this topology. The client talks
    /// only to the API; the API owns every path to the stores and the processor.
    pub fn links(&self) -> Vec<(NodeId, NodeId)> {
        let has = |n: NodeId| self.place(n).is_some();
        let apis: Vec<NodeId> = self
            .nodes
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| n.is_api())
            .collect();
        let mut v = Vec::new();
        if has(NodeId::Broker) {
            v.push((apis[0], NodeId::Broker));
            v.push((NodeId::Broker, NodeId::Consumer));
            v.push((NodeId::Consumer, NodeId::Postgres));
            return v;
        }
        for a in &apis {
            v.push((NodeId::Client, *a));
        }
        for a in &apis {
            for s in [NodeId::Redis, NodeId::Postgres, NodeId::Processor] {
                if has(s) {
                    v.push((*a, s));
                }
            }
            if has(NodeId::Mail) {
                v.push((*a, NodeId::Mail));
            }
        }
        // The job reads the processor's charges and books into the ledger.
        if has(NodeId::Reconciler) {
            v.push((NodeId::Reconciler, NodeId::Postgres));
            v.push((NodeId::Reconciler, NodeId::Processor));
        }
        v
    }

    /// The point a fraction `t` (0..1) of the way from `a`'s edge to `b`'s edge.
    pub fn along(&self, a: NodeId, b: NodeId, t: f64) -> Option<(f64, f64)> {
        let (pa, pb) = (self.place(a)?, self.place(b)?);
        let (ax, ay) = edge(pa, pb.x, pb.y);
        let (bx, by) = edge(pb, pa.x, pa.y);
        let t = t.clamp(0.0, 1.0);
        Some((ax + (bx - ax) * t, ay + (by - ay) * t))
    }
}

impl Layout {
    /// Where a message's tag `w` units wide goes beside its dot at (x, y): the
    /// offset of its left edge, right of the dot if it clears every node's box
    /// and the drawing's edges there, else left of it; `None` if neither side is
    /// clear (the tag is hidden, so it never covers a node's name).
    pub fn tag_dx(&self, x: f64, y: f64, w: f64) -> Option<f64> {
        let (top, bottom) = (y - TAG_RISE - TAG_H, y - TAG_RISE);
        let clear = |left: f64| {
            left >= 0.0
                && left + w <= self.width
                && top >= 0.0
                && self.nodes.iter().all(|(_, p)| {
                    left + w <= p.x - p.w / 2.0
                        || left >= p.x + p.w / 2.0
                        || bottom <= p.y - p.h / 2.0
                        || top >= p.y + p.h / 2.0
                })
        };
        [9.0, -(w + 9.0)].into_iter().find(|dx| clear(x + dx))
    }
}

/// A message's tag: its height, and how far its bottom sits above the dot.
pub const TAG_H: f64 = 20.0;
pub const TAG_RISE: f64 = 4.0;

/// The width of a tag of `chars` characters at the tag's font size (monospace).
pub fn tag_width(chars: usize) -> f64 {
    10.0 + 8.7 * chars as f64
}

/// Where the segment from the centre of `p` towards (tx, ty) leaves its box.
fn edge(p: Place, tx: f64, ty: f64) -> (f64, f64) {
    let (dx, dy) = (tx - p.x, ty - p.y);
    if dx == 0.0 && dy == 0.0 {
        return (p.x, p.y);
    }
    let sx = if dx == 0.0 {
        f64::INFINITY
    } else {
        (p.w / 2.0) / dx.abs()
    };
    let sy = if dy == 0.0 {
        f64::INFINITY
    } else {
        (p.h / 2.0) / dy.abs()
    };
    let s = sx.min(sy);
    (p.x + dx * s, p.y + dy * s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use idem_sim::scenario;

    #[test]
    fn every_node_of_every_scenario_fits_without_overlap() {
        for s in scenario::all() {
            for tall in [false, true] {
                let l = Layout::new(&s.nodes(), tall);
                assert_eq!(l.nodes.len(), s.nodes().len(), "{} tall={tall}", s.id);
                for (i, (_, a)) in l.nodes.iter().enumerate() {
                    assert!(
                        a.x - a.w / 2.0 >= 0.0 && a.x + a.w / 2.0 <= l.width,
                        "{} {a:?}",
                        s.id
                    );
                    assert!(
                        a.y - a.h / 2.0 >= 0.0 && a.y + a.h / 2.0 <= l.height,
                        "{} {a:?}",
                        s.id
                    );
                    for (_, b) in &l.nodes[i + 1..] {
                        let apart = (a.x - b.x).abs() * 2.0 >= a.w + b.w
                            || (a.y - b.y).abs() * 2.0 >= a.h + b.h;
                        assert!(apart, "{}: {a:?} overlaps {b:?}", s.id);
                    }
                }
            }
        }
    }

    #[test]
    fn the_client_only_talks_to_the_api() {
        let s = scenario::by_id("naive-post").unwrap();
        let l = Layout::new(&s.nodes(), false);
        let links = l.links();
        assert_eq!(links.len(), 4);
        assert!(links
            .iter()
            .all(|(a, b)| *a != NodeId::Client || b.is_api()));
    }
}

/// Where a message is drawn at a moment of the glide between two steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MsgAt {
    pub x: f64,
    pub y: f64,
    /// Delivered during this step and the glide is over: no longer drawn.
    pub hidden: bool,
    /// A lost message that reached the point where it breaks off.
    pub broken: bool,
}

/// Where a lost message breaks off, as a fraction of its link.
pub const BREAK_AT: f64 = 0.78;

impl Layout {
    /// Places a message at the displayed moment: virtual time runs from
    /// `t0` (the step before) to `t1` (this step) as `anim` goes from 0 to 1.
    /// `in_flight` tells whether it is still in flight after this step.
    pub fn msg_at(
        &self,
        m: &idem_sim::net::Msg,
        t0: u64,
        t1: u64,
        anim: f64,
        in_flight: bool,
    ) -> MsgAt {
        let t = t0 as f64 + (t1 as f64 - t0 as f64) * anim;
        let span = (m.arrives_at.0 as f64 - m.sent_at.0 as f64).max(1.0);
        let p = ((t - m.sent_at.0 as f64) / span).clamp(0.0, 1.0);
        let lost = matches!(m.fate, idem_sim::net::Fate::Lost(_));
        let (x, y) = self
            .along(m.from, m.to, if lost { p.min(BREAK_AT) } else { p })
            .unwrap_or((0.0, 0.0));
        MsgAt {
            x,
            y,
            hidden: !in_flight && anim >= 1.0 && !lost,
            broken: lost && p >= BREAK_AT,
        }
    }
}
