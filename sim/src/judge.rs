//! Judging the invariants: whether each holds in a world, evaluated after
//! every step, and when a world is one in which it is judged.

use crate::belief::Belief;
use crate::http::ErrorCode;
use crate::invariant::{Expect, Invariant};
use crate::net::NodeId;
use crate::scenario::OpSpec;
use crate::trace::Happening;
use crate::world::World;

impl Invariant {
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
            // A charge and a refund are counted apart: a refund of the charge
            // (the reconciliation job's, of an operation refused) is not a second one.
            Invariant::AtMostOnceCharge => {
                let ops = w.client.ops.len().max(1);
                let n = |op, back| {
                    let cs = w.processor.charges.iter();
                    cs.filter(|c| c.op == op && (c.amount < 0) == back).count()
                };
                // One charge or none cannot be two of anything (most worlds).
                w.processor.charges.len() <= 1
                    || (0..ops).all(|op| n(op, false) <= 1 && n(op, true) <= 1)
            }
            Invariant::LedgerMatchesCharges => {
                w.ledger_rows().unwrap_or(0) == w.processor.charges.len()
            }
            Invariant::LikesMatchOps => {
                let started = w.client.ops.iter().filter(|o| o.attempts > 0).count() as i64;
                w.likes()
                    .is_none_or(|likes| likes <= w.seldom.initial.likes + started)
            }
            Invariant::BalanceMatches => w
                .balance()
                .is_none_or(|b| b >= w.seldom.initial.balance - w.intended_debits),
            Invariant::DefiniteAnswer => w.client.ops.iter().all(|o| o.belief.is_definite()),
            Invariant::ResponseMatchesRequest => w.client.ops.iter().all(|o| !o.wrong_answer),
            // Safety (never two) always; liveness (one each) once nothing is left to happen.
            // (Every receipt names a committed payment: counting them is enough.)
            Invariant::OneReceipt => {
                let (sent, rows) = (w.mail.sent.len(), w.ledger_rows().unwrap_or(0));
                sent <= rows && (sent == rows || !w.is_quiet())
            }
            Invariant::NewerWriteKept => w
                .seldom
                .newest
                .is_none_or(|v| w.email().as_deref() == Some(v)),
            // Each refund the app has its answer for has money going back at the
            // processor; one it was told, asking after its deadline, was never
            // made (404) has none: the user can ask again, and the app knows it.
            Invariant::RefundMade => w.client.ops.iter().enumerate().all(|(i, o)| {
                let back = || {
                    w.processor
                        .charges
                        .iter()
                        .any(|c| c.op == i && c.amount < 0)
                };
                match &o.belief {
                    _ if !matches!(o.spec, OpSpec::Refund(_)) => true,
                    Belief::Failed(404, ErrorCode::NotFound) => !back(),
                    b => !b.is_definite() || back(),
                }
            }),
            Invariant::AppShowsWhatHappened => w.app_shows_what_happened(),
        }
    }
}

impl World {
    /// [`Invariant::AppShowsWhatHappened`]: each payment the phone calls paid
    /// has money taken at the processor for it, and the ledger has a committed
    /// payment row for each of them (a row does not name its operation: they are
    /// counted); one it calls failed took nothing, and a refund told refused gave
    /// nothing back. Waiting, unknown and "checking" claim nothing.
    fn app_shows_what_happened(&self) -> bool {
        let net = |i: usize| self.processor.taken_for(i);
        let mut paid = 0;
        for (i, o) in self.client.ops.iter().enumerate() {
            let payment = matches!(o.spec, OpSpec::Charge(_) | OpSpec::PayOrder { .. });
            let refund = matches!(o.spec, OpSpec::Refund(_));
            match &o.belief {
                Belief::Succeeded(_) if payment => {
                    if net(i) <= 0 {
                        return false;
                    }
                    paid += 1;
                }
                Belief::Failed(..) if (payment || refund) && net(i) != 0 => return false,
                _ => {}
            }
        }
        // Nothing the phone calls paid needs a row (the ledger is not read).
        if paid == 0 {
            return true;
        }
        let booked = self.db.table("payments").map(|t| {
            let amount = t.col("amount");
            t.committed_rows()
                .filter(|r| r[amount].as_int().is_some_and(|a| a > 0))
                .count()
        });
        booked.is_none_or(|rows| rows >= paid)
    }

    /// Re-evaluates every invariant of the scenario and records changes.
    pub(crate) fn check_invariants(&mut self, hs: &mut Vec<Happening>) {
        let invariants = self.scenario.invariants;
        for &inv in invariants {
            if inv.judged_in(self) {
                let now = inv.holds(self);
                // Written only when it changes: a copy of the world shares it until then.
                if self.invariants.get(&inv) != Some(&now) {
                    self.invariants.insert(inv, now);
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
            || !self.reconciler.handling.is_empty()
            || self
                .msgs
                .values()
                .any(|m| matches!(m.to, NodeId::Processor | NodeId::Postgres))
    }
}
