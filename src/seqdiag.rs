//! The sequence diagram's content, read off the trace: an arrow per message
//! (from the step that sent it to the step that delivered or lost it; one from
//! outside the system arrives in the step it is told) and a mark per event on a
//! lane. Pure data; `render::sequence` draws it.

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
