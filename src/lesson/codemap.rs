//! Which line of a scenario's handler code ([`super::ScenarioText::code`]) a
//! simulation phase executes. Data, one table per scenario; the code pane highlights
//! the line of the latest phase at or before the current step.

use super::code_lines::*;
use idem_sim::scenario::Phase::{self, *};
use idem_sim::trace::{Happening, StepRecord};

/// The line of `scenario`'s code that `phase` runs; `None` for a phase the listing
/// does not show (the listing then keeps the previous line highlighted).
pub fn line(scenario: &str, phase: Phase) -> Option<usize> {
    table(scenario)
        .iter()
        .find(|(p, _)| *p == phase)
        .map(|(_, l)| *l)
}

/// The line to highlight at step `k` of a trace: the line of the latest phase, at
/// or before step `k`, that the listing shows.
pub fn current(trace: &[StepRecord], scenario: &str, k: usize) -> Option<usize> {
    trace[..k.min(trace.len())].iter().rev().find_map(|r| {
        r.happenings.iter().rev().find_map(|h| match h {
            Happening::Phase { phase, .. } => line(scenario, *phase),
            _ => None,
        })
    })
}

/// The listing as `<li>` items: `code` holds one escaped line per line (a
/// fragment's `code` part); line `cur` is marked as the current one.
pub fn listing(code: &str, cur: Option<usize>) -> String {
    let mut out = String::with_capacity(code.len() + 256);
    for (i, l) in code.lines().enumerate() {
        out.push_str(if Some(i) == cur {
            "<li class=\"cur\" aria-current=\"step\">"
        } else {
            "<li>"
        });
        out.push_str(l);
        out.push_str("</li>");
    }
    out
}

fn table(scenario: &str) -> &'static [(Phase, usize)] {
    match scenario {
        "naive-post" => {
            use naive_post::*;
            &[
                (Receive, RECEIVE),
                (Charge, CHARGE),
                (Begin, BEGIN),
                (InsertPayment, INSERT_LEDGER),
                (FindPayment, INSERT_LEDGER),
                (Commit, COMMIT),
                (Reply, REPLY),
            ]
        }
        "idempotency-key" => {
            use idempotency_key::*;
            &[
                (Receive, RECEIVE),
                (CheckKey, CHECK_KEY),
                (Claim, CHECK_KEY),
                (Lookup, REPLAY),
                (Charge, CHARGE),
                (Begin, BEGIN),
                (InsertPayment, INSERT_LEDGER),
                (FindPayment, INSERT_LEDGER),
                (Commit, COMMIT),
                (StoreResponse, STORE_RESPONSE),
                (Reply, REPLY),
            ]
        }
        "conditional-update" => {
            use conditional_update::*;
            &[
                (Receive, RECEIVE),
                (Begin, BEGIN),
                (Debit, UPDATE),
                (ReadAccount, READ_CURRENT),
                (Rollback, REPLY_CONFLICT),
                (Commit, COMMIT),
                (Reply, REPLY),
            ]
        }
        "counter-increment" => {
            use counter_increment::*;
            &[
                (Receive, RECEIVE),
                (Begin, BEGIN),
                (InsertOp, INSERT_OP),
                (Increment, INCREMENT),
                (Commit, COMMIT),
                (Reply, REPLY),
            ]
        }
        "concurrent-duplicates" => {
            use concurrent_duplicates::*;
            &[
                (Receive, RECEIVE),
                (CheckKey, CHECK_KEY),
                (Lookup, FOUND),
                (Claim, CLAIM),
                (Rollback, LOST_RACE),
                (Charge, CHARGE),
                (Begin, BEGIN),
                (InsertPayment, INSERT_LEDGER),
                (FindPayment, INSERT_LEDGER),
                (CompleteKey, STORE_RESPONSE),
                (Commit, COMMIT),
                (Reply, REPLY),
            ]
        }
        "in-memory-store" => {
            use in_memory_store::*;
            &[
                (Receive, RECEIVE),
                (CheckKey, CHECK_KEY),
                (Charge, CHARGE),
                (InsertPayment, INSERT_LEDGER),
                (FindPayment, INSERT_LEDGER),
                (StoreResponse, STORE_RESPONSE),
                (Reply, REPLY),
            ]
        }
        "key-reuse-different-body" => {
            use key_reuse_different_body::*;
            &[
                (Receive, RECEIVE),
                (CheckKey, LOOKUP),
                (Lookup, REPLAY),
                (Charge, CHARGE),
                (Begin, BEGIN),
                (InsertPayment, INSERT_LEDGER),
                (FindPayment, INSERT_LEDGER),
                (StoreResponse, STORE_KEY),
                (CompleteKey, STORE_KEY),
                (Commit, COMMIT),
                (Reply, REPLY),
            ]
        }
        "ttl-expiry" => {
            use ttl_expiry::*;
            &[
                (Receive, RECEIVE),
                (CheckKey, CHECK_KEY),
                (Lookup, REPLAY),
                (Charge, CHARGE),
                (Begin, BEGIN),
                (InsertPayment, INSERT_LEDGER),
                (FindPayment, INSERT_LEDGER),
                (Commit, COMMIT),
                (StoreResponse, STORE_RESPONSE),
                (Reply, REPLY),
            ]
        }
        "crash-after-charge" => {
            use crash_after_charge::*;
            &[
                (Receive, RECEIVE),
                (CheckKey, CHECK_CACHE),
                (Lookup, CHECK_DB),
                (Charge, CHARGE),
                (Begin, BEGIN),
                (InsertPayment, INSERT_LEDGER),
                (FindPayment, INSERT_LEDGER),
                (CompleteKey, STORE_KEY_DB),
                (Commit, COMMIT),
                (StoreResponse, STORE_CACHE),
                (Reply, REPLY),
            ]
        }
        "transaction-is-not-idempotency" => {
            use transaction_is_not_idempotency::*;
            &[
                (Receive, RECEIVE),
                (Begin, BEGIN),
                (InsertPayment, INSERT_LEDGER),
                (FindPayment, INSERT_LEDGER),
                (Charge, CHARGE),
                (Commit, COMMIT),
                (Rollback, RETRY_NOTE),
                (Reply, REPLY),
            ]
        }
        "consumer-redelivery" => {
            use consumer_redelivery::*;
            &[
                (Consume, POLL),
                (Begin, BEGIN),
                (Dedup, INSERT_PROCESSED),
                (Rollback, SKIP),
                (Apply, APPLY),
                (Commit, COMMIT),
                (CommitOffset, COMMIT_OFFSET),
            ]
        }
        "new-key-per-retry" => {
            use new_key_per_retry::*;
            &[
                (Receive, SEND),
                (CheckKey, CHECK_KEY),
                (Lookup, REPLAY),
                (Charge, CHARGE),
                (StoreResponse, STORE_RESPONSE),
                (Reply, REPLY),
            ]
        }
        "status-transition" => {
            use status_transition::*;
            &[
                (Receive, RECEIVE),
                (Begin, BEGIN),
                (UpdateStatus, TRANSITION),
                (ReadAccount, READ_STATUS),
                (Rollback, REPLY_EXISTING),
                (Charge, CHARGE),
                (InsertPayment, INSERT_LEDGER),
                (FindPayment, INSERT_LEDGER),
                (Commit, COMMIT),
                (Reply, REPLY),
            ]
        }
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::{lesson, Lang, ScenarioId};
    use idem_sim::scenario;
    use idem_sim::{Config, Run};

    /// Every line in a table exists in the listing.
    #[test]
    fn lines_exist() {
        for id in ScenarioId::ALL.map(ScenarioId::as_str) {
            let len = lesson(Lang::En)
                .scenario(ScenarioId::parse(id).unwrap())
                .code
                .len();
            assert!(!table(id).is_empty(), "{id} has no table");
            for (p, l) in table(id) {
                assert!(*l < len, "{id}: {p:?} → line {l} of {len}");
            }
        }
    }

    /// The lines a scenario's first request runs, in order, with its default switches.
    fn first_lines(id: &str) -> Vec<usize> {
        let s = scenario::by_id(id).unwrap();
        let toggles = s.default_toggles();
        let run = Run::new(
            s,
            Config {
                toggles,
                seed: 1,
                random: Default::default(),
            },
        );
        let mut out: Vec<usize> = Vec::new();
        let mut first = None;
        for r in &run.trace {
            for h in &r.happenings {
                if let Happening::Phase { phase, req, .. } = h {
                    if *first.get_or_insert(*req) == *req {
                        if let Some(l) = line(id, *phase) {
                            out.push(l);
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn the_current_line_follows_the_steps() {
        let s = scenario::by_id("naive-post").unwrap();
        let toggles = s.default_toggles();
        let run = Run::new(
            s,
            Config {
                toggles,
                seed: 1,
                random: Default::default(),
            },
        );
        assert_eq!(current(&run.trace, "naive-post", 0), None);
        let seen: Vec<Option<usize>> = (0..=run.len())
            .map(|k| current(&run.trace, "naive-post", k))
            .collect();
        assert!(
            seen.contains(&Some(1)) && seen.contains(&Some(5)),
            "{seen:?}"
        );
        assert_eq!(
            listing("a\nb &lt; c\n", Some(1)),
            "<li>a</li><li class=\"cur\" aria-current=\"step\">b &lt; c</li>"
        );
    }

    #[test]
    fn first_requests_walk_down_their_listing() {
        assert_eq!(first_lines("naive-post"), [0, 1, 3, 5]);
        assert_eq!(first_lines("idempotency-key"), [0, 1, 3, 4, 5, 6, 7, 8]);
        assert_eq!(first_lines("status-transition"), [0, 2, 6, 7, 9]);
    }
}
