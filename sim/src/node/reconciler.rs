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
use crate::node::rules::{cell, Call, Handling, Input, Move};
use crate::out::Out;
use crate::scenario::{Phase, PAYMENT_COLUMNS};

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
            h.todo.retain(|c| c.amount > 0 && c.key.is_some());
            match h.todo.is_empty() {
                // Nothing charged: nothing to match.
                true => Move::Respond(200, Reply::Liked, false),
                false => ledger,
            }
        }
        (Phase::MatchLedger, Input::Sql(Outcome::Ok { rows, .. })) => {
            // A charge whose key the ledger has is matched; the first that has none is booked.
            h.todo.retain(|c| {
                !rows.iter().any(|r| {
                    cell(r, &PAYMENT_COLUMNS, "idempotency_key").and_then(|k| k.as_text())
                        == c.key.as_deref()
                })
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
