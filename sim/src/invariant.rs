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

/// When a property is judged, as in stateright's `always` / `eventually`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Expect {
    /// Safety: it holds after every step.
    Always,
    /// Safety of state that lags by design (the ledger behind the processor while
    /// a request is in flight): judged whenever no request is in flight.
    AtRest,
    /// Liveness: judged once nothing is left to happen. Every operation ends
    /// with a definite answer once faults stop and the client keeps retrying
    /// within its attempts; a claim that never frees breaks it.
    Eventually,
}

impl Invariant {
    pub const ALL: [Invariant; 6] = [
        Invariant::AtMostOnceCharge,
        Invariant::LedgerMatchesCharges,
        Invariant::LikesMatchOps,
        Invariant::BalanceMatches,
        Invariant::DefiniteAnswer,
        Invariant::ResponseMatchesRequest,
    ];

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

    /// When it is judged.
    pub fn expect(self) -> Expect {
        match self {
            Invariant::LedgerMatchesCharges => Expect::AtRest,
            Invariant::DefiniteAnswer => Expect::Eventually,
            _ => Expect::Always,
        }
    }

    /// Whether `w` is a world in which it is judged (see [`Invariant::expect`]).
    pub fn judged_in(self, w: &World) -> bool {
        match self.expect() {
            Expect::Always => true,
            Expect::AtRest => !w.busy(),
            Expect::Eventually => w.is_quiet(),
        }
    }

    /// Whether it holds in `w` (meaningful where [`Invariant::judged_in`] is true).
    pub fn holds(self, w: &World) -> bool {
        match self {
            Invariant::AtMostOnceCharge => {
                let ops = w.client.ops.len().max(1);
                (0..ops).all(|op| w.processor.charges.iter().filter(|c| c.op == op).count() <= 1)
            }
            Invariant::LedgerMatchesCharges => {
                w.ledger_rows().unwrap_or(0) == w.processor.charges.len()
            }
            Invariant::LikesMatchOps => {
                let started = w.client.ops.iter().filter(|o| o.attempts > 0).count() as i64;
                w.likes()
                    .is_none_or(|likes| likes <= w.initial.likes + started)
            }
            Invariant::BalanceMatches => w
                .balance()
                .is_none_or(|b| b >= w.initial.balance - w.intended_debits),
            Invariant::DefiniteAnswer => w.client.ops.iter().all(|o| o.belief.is_definite()),
            Invariant::ResponseMatchesRequest => w.client.ops.iter().all(|o| !o.wrong_answer),
        }
    }
}

impl World {
    /// Re-evaluates every invariant of the scenario and records changes.
    pub(crate) fn check_invariants(&mut self, hs: &mut Vec<Happening>) {
        let scenario = self.scenario.clone();
        for &inv in &scenario.invariants {
            if inv.judged_in(self) {
                let now = inv.holds(self);
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

    /// A request is in flight: a handler is working, or a message to the ledger or the processor travels.
    pub fn busy(&self) -> bool {
        self.apis.iter().any(|a| !a.handling.is_empty())
            || self
                .msgs
                .values()
                .any(|m| matches!(m.to, NodeId::Processor | NodeId::Postgres))
    }
}
