//! The sequence diagram's content, read off the trace: an arrow per message
//! (from the step that sent it to the step that delivered or lost it; one from
//! outside the system arrives in the step it is told) and a mark per event on a
//! lane; and where each is drawn ([`lay_out`]): every label in a place where no
//! other arrow, arrowhead, mark or label crosses it. Pure data and geometry;
//! `render::sequence` draws it.

use idem_sim::net::PayloadKind;
use idem_sim::trace::{Happening, StepRecord};
use idem_sim::{MsgId, NodeId};

/// One message, drawn from its sender's lane to its receiver's.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrow {
    /// `None` for a message from outside the system (`Happening::FromOutside`).
    pub msg: Option<MsgId>,
    /// `None`: a sender outside the system (another client), drawn from the edge.
    pub from: Option<NodeId>,
    pub to: NodeId,
    pub label: String,
    pub kind: PayloadKind,
    /// The step that sent it (1-based).
    pub sent: usize,
    /// The step that delivered or lost it; `None` if still in flight at the end.
    pub end: Option<usize>,
    pub lost: bool,
}

/// Something that happened on one lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    Crash,
    Restart,
    Timeout,
    /// An invariant broke at this step.
    Violation,
    KeyExpired,
    ClockJump,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    pub step: usize,
    pub node: NodeId,
    pub kind: MarkKind,
}

/// Arrows and marks of a whole trace.
pub fn build(trace: &[StepRecord]) -> (Vec<Arrow>, Vec<Mark>) {
    let mut arrows: Vec<Arrow> = Vec::new();
    let mut marks = Vec::new();
    for rec in trace {
        for h in &rec.happenings {
            match h {
                Happening::Sent {
                    msg,
                    from,
                    to,
                    label,
                    kind,
                    ..
                } => arrows.push(Arrow {
                    msg: Some(*msg),
                    from: Some(*from),
                    to: *to,
                    label: label.clone(),
                    kind: *kind,
                    sent: rec.index,
                    end: None,
                    lost: false,
                }),
                Happening::FromOutside { to, label, kind } => arrows.push(Arrow {
                    msg: None,
                    from: None,
                    to: *to,
                    label: label.clone(),
                    kind: *kind,
                    sent: rec.index,
                    end: Some(rec.index),
                    lost: false,
                }),
                Happening::Delivered { msg, .. } | Happening::Lost { msg, .. } => {
                    if let Some(a) = arrows.iter_mut().rev().find(|a| a.msg == Some(*msg)) {
                        a.end = Some(rec.index);
                        a.lost = matches!(h, Happening::Lost { .. });
                    }
                }
                Happening::Crashed(n) => marks.push(Mark {
                    step: rec.index,
                    node: *n,
                    kind: MarkKind::Crash,
                }),
                Happening::Restarted(n) => marks.push(Mark {
                    step: rec.index,
                    node: *n,
                    kind: MarkKind::Restart,
                }),
                Happening::ClientTimeout { .. } => marks.push(Mark {
                    step: rec.index,
                    node: NodeId::Client,
                    kind: MarkKind::Timeout,
                }),
                Happening::KeyExpired(_) => marks.push(Mark {
                    step: rec.index,
                    node: NodeId::Redis,
                    kind: MarkKind::KeyExpired,
                }),
                Happening::ClockAdvanced(_) => marks.push(Mark {
                    step: rec.index,
                    node: NodeId::Client,
                    kind: MarkKind::ClockJump,
                }),
                Happening::Invariant { holds: false, .. } => marks.push(Mark {
                    step: rec.index,
                    node: NodeId::Processor,
                    kind: MarkKind::Violation,
                }),
                _ => {}
            }
        }
    }
    (arrows, marks)
}

/// A lane: every lane fits its column (about 310 px on a phone, 350 px beside the
/// topology), up to 60 or 70 px.
pub fn lane_width(tall: bool, lanes: usize) -> f64 {
    let (fit, most) = if tall { (310.0, 60.0) } else { (350.0, 70.0) };
    (fit / lanes.max(1) as f64).min(most)
}

/// The first step's row and a row's height, in SVG user units.
pub const TOP: f64 = 34.0;
pub const ROW_H: f64 = 26.0;

/// Where the diagram draws step `k`.
pub fn row_y(k: usize) -> f64 {
    TOP + ROW_H * k as f64
}

/// A label's font is monospace 12 px: a character's advance (DejaVu Sans Mono's
/// 0.602 em, rounded up), and the box of a line of it around its baseline.
pub const CH: f64 = 7.25;
const ASCENT: f64 = 11.5;
const DESCENT: f64 = 3.0;
/// The longest label drawn, and the fewest characters a cut one keeps (its "…"
/// counted): with less room the label is not drawn; its arrow's name, its
/// tooltip and its focus still give the whole text.
pub const MAX_CHARS: usize = 18;
const MIN_CHARS: usize = 4;

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
}

impl Rect {
    fn around(x: f64, y: f64, r: f64) -> Rect {
        Rect {
            left: x - r,
            top: y - r,
            right: x + r,
            bottom: y + r,
        }
    }

    /// The part of [`Seg`] `s` inside this box's rows, as an interval of x; `None`
    /// if it stays out of them (touching an edge is not crossing).
    fn band(&self, s: &Seg) -> Option<(f64, f64)> {
        let (t, b) = (self.top, self.bottom);
        if s.y1 == s.y2 {
            return (s.y1 > t && s.y1 < b).then(|| (s.x1.min(s.x2), s.x1.max(s.x2)));
        }
        let at = |y: f64| ((y - s.y1) / (s.y2 - s.y1)).clamp(0.0, 1.0);
        let (p, q) = (at(t), at(b));
        if p == q {
            return None;
        }
        let (xa, xb) = (s.x1 + (s.x2 - s.x1) * p, s.x1 + (s.x2 - s.x1) * q);
        Some((xa.min(xb), xa.max(xb)))
    }

    /// Whether segment `s` crosses this box.
    pub fn crossed_by(&self, s: &Seg) -> bool {
        self.band(s)
            .is_some_and(|(a, b)| b > self.left && a < self.right)
    }

    pub fn meets(&self, o: &Rect) -> bool {
        self.left < o.right && o.left < self.right && self.top < o.bottom && o.top < self.bottom
    }
}

/// A straight line from (x1, y1) to (x2, y2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seg {
    pub x1: f64,
    pub y1: f64,
    pub x2: f64,
    pub y2: f64,
}

/// Where an arrow's label is drawn: its baseline's anchor, the side it runs to
/// (`end`: leftwards from `x`) and the text shown (cut with "…", or empty where
/// there is no room).
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub x: f64,
    pub y: f64,
    pub end: bool,
    pub text: String,
}

impl Label {
    /// The box of `chars` characters set at this label's place.
    pub fn rect_of(&self, chars: usize) -> Rect {
        let w = CH * chars as f64;
        let left = if self.end { self.x - w } else { self.x };
        Rect {
            left,
            top: self.y - ASCENT,
            right: left + w,
            bottom: self.y + DESCENT,
        }
    }

    /// The box of the text shown; `None` if none is.
    pub fn rect(&self) -> Option<Rect> {
        let n = self.text.chars().count();
        (n > 0).then(|| self.rect_of(n))
    }
}

/// An arrow as drawn: its line (to the receiver, to where a lost message breaks
/// off, or a stub while it is in flight), whether it ends in a head, its
/// marks' boxes (the head, a found message's dot, a lost one's ✕) and its label.
#[derive(Clone, Debug, PartialEq)]
pub struct Drawn {
    pub line: Seg,
    pub head: bool,
    pub marks: Vec<Rect>,
    pub label: Label,
}

/// A lane mark's box (its glyph right of the lane, on the step's row).
pub fn mark_box(x: f64, k: usize) -> Rect {
    let y = row_y(k);
    Rect {
        left: x + 5.0,
        top: y - 7.0,
        right: x + 15.0,
        bottom: y + 6.0,
    }
}

/// Where every arrow of `arrows` and its label go, lanes at `lane(node)` across a
/// diagram `width` wide. Each label is set where no other arrow, arrowhead, mark
/// or label crosses it: above its arrow's start on the receiver's side, else on
/// the other side, else under the start; as long as the room there allows, cut
/// to it with "…", and not drawn where no place has room for a few characters.
pub fn lay_out(
    arrows: &[Arrow],
    marks: &[Mark],
    lane: impl Fn(NodeId) -> f64,
    width: f64,
) -> Vec<Drawn> {
    let mut drawn: Vec<Drawn> = arrows
        .iter()
        .map(|a| {
            // A sender outside the system: from the edge nearer the receiver's lane.
            let x1 = match a.from {
                Some(f) => lane(f),
                None if lane(a.to) > width / 2.0 => width - 3.0,
                None => 3.0,
            };
            let y1 = row_y(a.sent);
            let stub = a.end.is_none();
            let (tx, ty) = (lane(a.to), row_y(a.end.unwrap_or(a.sent + 1)));
            let part = if a.lost {
                0.75
            } else if stub {
                0.4
            } else {
                1.0
            };
            let (x2, y2) = (x1 + (tx - x1) * part, y1 + (ty - y1) * part);
            let head = !a.lost && !stub;
            let mut boxes = Vec::new();
            let len = (x2 - x1).hypot(y2 - y1).max(1.0);
            if head {
                // The marker's triangle (7 × the line's 1.4 units, render::sequence): its
                // tip a unit past the end, its base 9 units back, 10 wide; its box.
                let (ux, uy) = ((x2 - x1) / len, (y2 - y1) / len);
                let (bx, by) = (x2 - 9.0 * ux, y2 - 9.0 * uy);
                let xs = [x2 + ux, bx - 5.0 * uy, bx + 5.0 * uy];
                let ys = [y2 + uy, by + 5.0 * ux, by - 5.0 * ux];
                boxes.push(Rect {
                    left: xs.iter().copied().fold(f64::MAX, f64::min),
                    top: ys.iter().copied().fold(f64::MAX, f64::min),
                    right: xs.iter().copied().fold(f64::MIN, f64::max),
                    bottom: ys.iter().copied().fold(f64::MIN, f64::max),
                });
            }
            if a.from.is_none() {
                boxes.push(Rect::around(x1, y1, 3.5));
            }
            if a.lost {
                boxes.push(Rect {
                    left: x2 - 6.0,
                    top: y2 - 6.0,
                    right: x2 + 5.0,
                    bottom: y2 + 7.0,
                });
            }
            Drawn {
                line: Seg { x1, y1, x2, y2 },
                head,
                marks: boxes,
                label: Label {
                    x: x1,
                    y: y1,
                    end: false,
                    text: String::new(),
                },
            }
        })
        .collect();
    let glyphs: Vec<Rect> = marks
        .iter()
        .map(|m| mark_box(lane(m.node), m.step))
        .collect();
    let mut taken: Vec<Rect> = Vec::new();
    for i in 0..drawn.len() {
        let Seg { x1, y1, x2, .. } = drawn[i].line;
        let toward = x2 >= x1;
        let text = &arrows[i].label;
        let want = text.chars().count().min(MAX_CHARS);
        // Above the start toward the receiver, above it away, under it away, under it
        // toward; each from beside the lane, or just past what crosses its row near the
        // lane (an arrow arriving there): a character of text is worth 12 units of that.
        let bases = [
            (y1 - 3.0, !toward),
            (y1 - 3.0, toward),
            (y1 + ASCENT + 2.0, toward),
            (y1 + ASCENT + 2.0, !toward),
        ];
        let mut best: Option<(f64, usize, Label)> = None;
        for (y, end) in bases {
            let (top, bottom) = (y - ASCENT, y + DESCENT);
            let rows = Rect {
                left: f64::MIN,
                top,
                right: f64::MAX,
                bottom,
            };
            let boxes = drawn
                .iter()
                .flat_map(|d| &d.marks)
                .chain(&glyphs)
                .chain(&taken);
            let blocks: Vec<(f64, f64)> = drawn
                .iter()
                .filter_map(|d| rows.band(&d.line))
                .chain(
                    boxes
                        .filter(|r| r.top < bottom && top < r.bottom)
                        .map(|r| (r.left, r.right)),
                )
                .collect();
            let dir = if end { -1.0 } else { 1.0 };
            let beside = x1 + 4.0 * dir;
            let past = blocks
                .iter()
                .map(|(a, b)| if end { a - 1.0 } else { b + 1.0 });
            let starts = std::iter::once(beside)
                .chain(past.filter(|x| (x - beside) * dir > 0.0 && (x - x1).abs() <= 48.0));
            for x in starts {
                // The room ahead of x: to the diagram's edge or the first block.
                let edge = if end { x } else { width - x };
                let room = blocks.iter().fold(edge, |room, &(a, b)| {
                    let (near, far) = if end { (b, a) } else { (a, b) };
                    if (far - x) * dir <= 0.0 {
                        room
                    } else if (near - x) * dir <= 0.0 {
                        0.0
                    } else {
                        room.min((near - x) * dir)
                    }
                });
                let n = (((room - 1.0) / CH).floor().max(0.0) as usize).min(want);
                if n < want.min(MIN_CHARS) {
                    continue;
                }
                let score = n as f64 - (x - beside).abs() / 12.0;
                if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
                    let text = String::new();
                    best = Some((score, n, Label { x, y, end, text }));
                }
            }
        }
        if let Some((_, n, mut at)) = best {
            at.text = if n >= text.chars().count() {
                text.clone()
            } else {
                format!("{}…", text.chars().take(n - 1).collect::<String>())
            };
            taken.extend(at.rect());
            drawn[i].label = at;
        }
    }
    drawn
}

#[cfg(test)]
mod tests {
    use super::*;
    use idem_sim::{scenario, Config, Run};

    #[test]
    fn naive_post_has_one_lost_response_and_two_charges() {
        let s = scenario::by_id("naive-post").unwrap();
        let run = Run::new(s.clone(), Config::defaults(&s, 1));
        let (arrows, marks) = build(&run.trace);
        let lost: Vec<&Arrow> = arrows.iter().filter(|a| a.lost).collect();
        assert_eq!(lost.len(), 1);
        assert_eq!(
            (lost[0].from, lost[0].to),
            (Some(NodeId::Api(0)), NodeId::Client)
        );
        assert_eq!(
            arrows.iter().filter(|a| a.to == NodeId::Processor).count(),
            2
        );
        assert!(
            arrows.iter().all(|a| a.end.is_some_and(|e| e > a.sent)),
            "every message arrives after it leaves"
        );
        assert!(marks.iter().any(|m| m.kind == MarkKind::Violation));
        assert!(marks.iter().any(|m| m.kind == MarkKind::Timeout));
    }

    /// Issue 26: labels never cross arrows. In every scenario's default run, on a
    /// wide screen's lanes and a phone's, no label's box meets another arrow's line,
    /// head, dot or ✕, a lane's mark or another label, and each stays in the diagram.
    #[test]
    fn no_label_crosses_another_arrow_in_any_scenario() {
        let (mut all, mut cut, mut hidden, mut shown, mut want) = (0, 0, 0, 0, 0);
        for s in scenario::all() {
            let run = Run::new(s.clone(), Config::defaults(s, 1));
            let nodes = s.nodes();
            for tall in [false, true] {
                let w = lane_width(tall, nodes.len());
                let lane = |n: NodeId| {
                    let i = nodes.iter().position(|x| *x == n).unwrap_or(0);
                    w / 2.0 + w * i as f64
                };
                let width = w * nodes.len() as f64;
                // Every prefix is drawn while a run plays: the first steps, the whole.
                for upto in [run.trace.len() / 2, run.trace.len()] {
                    let (arrows, marks) = build(&run.trace[..upto]);
                    let drawn = lay_out(&arrows, &marks, lane, width);
                    let glyphs: Vec<Rect> = marks
                        .iter()
                        .map(|m| mark_box(lane(m.node), m.step))
                        .collect();
                    for (i, d) in drawn.iter().enumerate() {
                        all += 1;
                        let Some(r) = d.label.rect() else {
                            hidden += 1;
                            continue;
                        };
                        cut += usize::from(d.label.text != arrows[i].label);
                        shown += d.label.text.chars().count();
                        want += arrows[i].label.chars().count().min(MAX_CHARS);
                        let at = format!(
                            "{} tall={tall} step {}: {:?}",
                            s.id, arrows[i].sent, d.label
                        );
                        assert!(r.left >= 0.0 && r.right <= width, "{at} leaves the diagram");
                        assert!(glyphs.iter().all(|g| !r.meets(g)), "{at} covers a mark");
                        for (j, o) in drawn.iter().enumerate().filter(|(j, _)| *j != i) {
                            assert!(
                                !r.crossed_by(&o.line),
                                "{at} crosses the arrow {:?}",
                                arrows[j].label
                            );
                            assert!(
                                o.marks.iter().all(|m| !r.meets(m)),
                                "{at} covers the head of {:?}",
                                arrows[j].label
                            );
                            assert!(
                                o.label.rect().is_none_or(|q| !r.meets(&q)),
                                "{at} meets the label {:?}",
                                o.label
                            );
                        }
                    }
                }
            }
        }
        println!(
            "labels: {all}, cut: {cut}, not drawn: {hidden}, characters shown: {shown} of {want}"
        );
        assert!(hidden * 20 <= all, "{hidden} of {all} labels find no room");
    }

    #[test]
    fn a_label_crossed_where_it_would_go_moves_or_is_cut() {
        // Two arrows from the middle lane: one to the right (its label first, right
        // of the lane), then one to the left in the same step: its label would cross
        // nothing on the left (no arrow there yet), so it goes there.
        let arrow = |from: NodeId, to: NodeId, label: &str, sent: usize| Arrow {
            msg: None,
            from: Some(from),
            to,
            label: label.to_string(),
            kind: PayloadKind::Request,
            sent,
            end: Some(sent + 1),
            lost: false,
        };
        let nodes = [NodeId::Client, NodeId::Api(0), NodeId::Redis];
        let lane = |n: NodeId| 35.0 + 70.0 * nodes.iter().position(|x| *x == n).unwrap() as f64;
        let a = [
            arrow(NodeId::Api(0), NodeId::Redis, "GET k", 1),
            // Arrives at the API in step 2 from Redis, then the API answers the client:
            // above its start on the left is the returning arrow's head: the label moves.
            arrow(NodeId::Redis, NodeId::Api(0), "nil", 2),
            arrow(NodeId::Api(0), NodeId::Client, "201 Created", 3),
        ];
        let d = lay_out(&a, &[], lane, 210.0);
        assert_eq!((d[0].label.end, d[0].label.text.as_str()), (false, "GET k"));
        for (i, x) in d.iter().enumerate() {
            let r = x.label.rect().expect("drawn");
            for (j, o) in d.iter().enumerate().filter(|(j, _)| *j != i) {
                assert!(
                    !r.crossed_by(&o.line) && o.marks.iter().all(|m| !r.meets(m)),
                    "{i} crosses {j}"
                );
            }
        }
    }

    /// Regression: the web version's write (late-put's scripted PUT, and the
    /// other client's debit the reader sends in conditional-update) was told but
    /// drawn with no arrow: it is a message into Postgres from outside the
    /// system, drawn from the diagram's edge in the step it runs.
    #[test]
    fn another_writers_write_is_an_arrow_into_postgres() {
        use idem_sim::Command;
        let late_put = {
            let s = scenario::by_id("late-put").unwrap();
            Run::new(s.clone(), Config::defaults(&s, 1))
        };
        let debit = {
            let s = scenario::by_id("conditional-update").unwrap();
            let mut r = Run::new(s.clone(), Config::defaults(&s, 1));
            r.apply_at(2, Command::ExternalDebit { amount: 30 })
                .unwrap();
            r
        };
        for run in [late_put, debit] {
            let step = run
                .trace
                .iter()
                .find(|r| {
                    r.happenings.iter().any(|h| {
                        matches!(
                            h,
                            Happening::Command(
                                Command::ExternalPut | Command::ExternalDebit { .. }
                            )
                        )
                    })
                })
                .expect("another writer's write")
                .index;
            let (arrows, _) = build(&run.trace);
            let found: Vec<&Arrow> = arrows.iter().filter(|a| a.sent == step).collect();
            assert_eq!(found.len(), 1, "{}", run.text());
            let a = found[0];
            assert_eq!((a.from, a.to, a.end), (None, NodeId::Postgres, Some(step)));
            assert!(a.label.starts_with("UPDATE "), "{}", a.label);
            assert_eq!(a.kind, PayloadKind::Sql);
        }
    }
}
