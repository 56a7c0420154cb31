//! Named properties of a run, evaluated after every step. The trace marks
//! the exact step at which one stops (or starts again) holding.

use crate::net::NodeId;
use crate::trace::Happening;
use crate::world::World;

/// A property the system should keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    /// Each conceptual payment is charged at most once at the card processor.
    AtMostOnceCharge,
    /// Committed ledger rows match the processor's charges (checked when no request is in flight).
    LedgerMatchesCharges,
    /// Likes never exceed the initial count plus the distinct like operations.
    LikesMatchOps,
    /// The balance never drops below the initial balance minus the debits meant.
    BalanceMatches,
    /// Every client operation ends with a definite answer (checked when the run is quiet).
    DefiniteAnswer,
    /// A success response answers the request it came for, not another one.
    ResponseMatchesRequest,
}

impl Invariant {
    /// Stable id for test ids and URLs.
    pub fn id(self) -> &'static str {
        match self {
            Invariant::AtMostOnceCharge => "at-most-once-charge",
            Invariant::LedgerMatchesCharges => "ledger-matches-charges",
            Invariant::LikesMatchOps => "likes-match-ops",
            Invariant::BalanceMatches => "balance-matches",
            Invariant::DefiniteAnswer => "definite-answer",
            Invariant::ResponseMatchesRequest => "response-matches-request",
        }
    }

    /// Whether it holds in `w`; `None` when it cannot be judged at this moment
    /// (the previous verdict stands).
    pub fn check(self, w: &World) -> Option<bool> {
        match self {
            Invariant::AtMostOnceCharge => {
                let ops = w.client.ops.len().max(1);
                Some(
                    (0..ops)
                        .all(|op| w.processor.charges.iter().filter(|c| c.op == op).count() <= 1),
                )
            }
            Invariant::LedgerMatchesCharges => {
                let busy = w.apis.iter().any(|a| !a.handling.is_empty())
                    || w.msgs
                        .values()
                        .any(|m| matches!(m.to, NodeId::Processor | NodeId::Postgres));
                if busy {
                    return None;
                }
                let rows = w.db.table("payments").map_or(0, |t| t.committed_count());
                Some(rows == w.processor.charges.len())
            }
            Invariant::LikesMatchOps => {
                let likes = w.int_cell("posts", "likes")?;
                let started = w.client.ops.iter().filter(|o| o.attempts > 0).count() as i64;
                Some(likes <= w.initial.likes + started)
            }
            Invariant::BalanceMatches => {
                let balance = w.int_cell("accounts", "balance")?;
                Some(balance >= w.initial.balance - w.intended_debits)
            }
            Invariant::DefiniteAnswer => {
                if !w.is_quiet() {
                    return None;
                }
                Some(w.client.ops.iter().all(|o| o.belief.is_definite()))
            }
            Invariant::ResponseMatchesRequest => Some(w.client.ops.iter().all(|o| !o.wrong_answer)),
        }
    }
}

impl World {
    /// Re-evaluates every invariant of the scenario and records changes.
    pub(crate) fn check_invariants(&mut self, hs: &mut Vec<Happening>) {
        for inv in self.scenario.invariants.clone() {
            if let Some(now) = inv.check(self) {
                let was = self.invariants.insert(inv, now);
                if was != Some(now) {
                    hs.push(Happening::Invariant { inv, holds: now });
                }
            }
        }
    }

    /// Every invariant of the scenario holds.
    pub fn all_hold(&self) -> bool {
        self.invariants.values().all(|h| *h)
    }

    /// The committed value of `column` in the first row of `table`.
    pub fn int_cell(&self, table: &str, column: &str) -> Option<i64> {
        self.db.first_int(table, column)
    }
}
