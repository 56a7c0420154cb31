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
        let mut out = Vec::new();
        let (width, height);
        if tall {
            // Top to bottom: client, API instances, the stores in a row.
            width = 360.0;
            height = 430.0;
            let (w, h) = (104.0, 58.0);
            if pipeline {
                out.push((
                    apis[0],
                    Place {
                        x: 180.0,
                        y: 45.0,
                        w: 150.0,
                        h,
                    },
                ));
                out.push((
                    NodeId::Broker,
                    Place {
                        x: 180.0,
                        y: 165.0,
                        w: 150.0,
                        h,
                    },
                ));
                out.push((
                    NodeId::Consumer,
                    Place {
                        x: 180.0,
                        y: 280.0,
                        w: 150.0,
                        h,
                    },
                ));
                out.push((
                    NodeId::Postgres,
                    Place {
                        x: 180.0,
                        y: 385.0,
                        w: 150.0,
                        h,
                    },
                ));
            } else {
                out.push((
                    NodeId::Client,
                    Place {
                        x: 180.0,
                        y: 40.0,
                        w: 150.0,
                        h: 52.0,
                    },
                ));
                spread(&apis, 180.0, 175.0, 150.0, &mut out, |x, y| Place {
                    x,
                    y,
                    w: 132.0,
                    h,
                });
                let stores = [NodeId::Redis, NodeId::Postgres, NodeId::Processor];
                for (i, n) in stores.into_iter().enumerate() {
                    out.push((
                        n,
                        Place {
                            x: 62.0 + 118.0 * i as f64,
                            y: 355.0,
                            w,
                            h: 74.0,
                        },
                    ));
                }
            }
        } else {
            // Left to right: client, API instances, the stores in a column.
            width = 760.0;
            height = 320.0;
            let h = 62.0;
            if pipeline {
                out.push((
                    apis[0],
                    Place {
                        x: 95.0,
                        y: 160.0,
                        w: 150.0,
                        h,
                    },
                ));
                out.push((
                    NodeId::Broker,
                    Place {
                        x: 290.0,
                        y: 80.0,
                        w: 150.0,
                        h,
                    },
                ));
                out.push((
                    NodeId::Consumer,
                    Place {
                        x: 480.0,
                        y: 160.0,
                        w: 150.0,
                        h,
                    },
                ));
                out.push((
                    NodeId::Postgres,
                    Place {
                        x: 665.0,
                        y: 250.0,
                        w: 170.0,
                        h,
                    },
                ));
            } else {
                out.push((
                    NodeId::Client,
                    Place {
                        x: 90.0,
                        y: 160.0,
                        w: 150.0,
                        h,
                    },
                ));
                let x = 355.0;
                let step = if apis.len() > 2 { 85.0 } else { 110.0 };
                spread_vertical(&apis, x, 160.0, step, &mut out, |x, y| Place {
                    x,
                    y,
                    w: 150.0,
                    h,
                });
                let stores = [NodeId::Redis, NodeId::Postgres, NodeId::Processor];
                for (i, n) in stores.into_iter().enumerate() {
                    out.push((
                        n,
                        Place {
                            x: 655.0,
                            y: 55.0 + 105.0 * i as f64,
                            w: 190.0,
                            h: 72.0,
                        },
                    ));
                }
            }
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
                v.push((*a, s));
            }
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

fn spread(
    nodes: &[NodeId],
    cx: f64,
    y: f64,
    gap: f64,
    out: &mut Vec<(NodeId, Place)>,
    f: impl Fn(f64, f64) -> Place,
) {
    let n = nodes.len() as f64;
    for (i, node) in nodes.iter().enumerate() {
        let x = cx + (i as f64 - (n - 1.0) / 2.0) * gap;
        out.push((*node, f(x, y)));
    }
}

fn spread_vertical(
    nodes: &[NodeId],
    x: f64,
    cy: f64,
    gap: f64,
    out: &mut Vec<(NodeId, Place)>,
    f: impl Fn(f64, f64) -> Place,
) {
    let n = nodes.len() as f64;
    for (i, node) in nodes.iter().enumerate() {
        let y = cy + (i as f64 - (n - 1.0) / 2.0) * gap;
        out.push((*node, f(x, y)));
    }
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
