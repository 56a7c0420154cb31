//! The API's rule book: given where a request is and what its last call
//! returned, what it does next. The charge handler has a module of its own
//! (`node::charge`); the others are here: reading and debiting an account,
//! a like, paying an order.

use crate::db::{self, Assign, Cond, OnConflict, Outcome, Stmt, Value};
use crate::http::{Asked, Body, ErrorCode, Reply, Request};
use crate::node::charge::{self, insert_payment};
use crate::node::config::ApiConfig;
use crate::node::rules::{cell, Call, Handling, Input, Move, StoreKey, Stored};
use crate::out::Out;
use crate::scenario::{Handler, Phase, ORDER_COLUMNS, OUTBOX_COLUMNS, PAYMENT_COLUMNS};
use crate::time::Millis;
use crate::timing::CLAIM_LEASE;
use crate::vecmap::VecMap;

/// The API's handler: given where a request is and what its last call
/// returned, what it does next. One rule book for every scenario.
pub(crate) fn rules(
    h: &mut Handling,
    input: Input,
    cfg: &ApiConfig,
    memory: &mut VecMap<String, Stored>,
    out: &mut Out,
) -> Move {
    let req = &h.req;
    let charges = matches!(req.body, Body::Charge { .. } | Body::Refund { .. });
    if input == Input::Timeout && !charges {
        return Move::error(503, ErrorCode::UpstreamTimeout);
    }
    // With `ScopedKey` the key is stored under the method and path too.
    let key = StoreKey::of(req, cfg.scoped_key);
    match (out.scenario.handler, req.body.clone()) {
        (_, Body::Relay) => relay(h, input),
        (_, Body::Reconcile) => crate::node::reconciler::rules(h, input, cfg, out),
        (_, Body::Status { of, since }) => status(h, input, (of, since), key, cfg, out),
        (_, Body::ReadAccount | Body::ReadProfile) => match (h.phase, input) {
            (Phase::Receive, _) => Move::Go(Phase::ReadAccount, Call::Sql(select_row(req))),
            (_, Input::Sql(o)) => row_reply(&o),
            _ => Move::error(500, ErrorCode::InternalError),
        },
        // A refund runs the charge's rules with the money going back.
        (Handler::Charge { .. }, b @ (Body::Charge { .. } | Body::Refund { .. })) => {
            let amount = b.amount().unwrap_or_default();
            charge::rules(h, input, amount, key, &cfg.charge, memory, out)
        }
        // A debit with `expected_version`, or a PUT with `If-Match`: one
        // conditional UPDATE of the row, read back; 0 rows is a conflict.
        (Handler::Debit, Body::Debit { .. }) | (Handler::Put, Body::Put { .. }) => {
            match (h.phase, input) {
                (Phase::Receive, _) => {
                    let (set, version, check) = match req.body {
                        Body::Debit {
                            amount,
                            expected_version,
                        } => (
                            Assign::Add("balance", -amount),
                            expected_version,
                            cfg.version_check,
                        ),
                        Body::Put { email, version } => (
                            Assign::To("email", Value::text(email)),
                            version,
                            cfg.if_match,
                        ),
                        _ => return Move::error(400, ErrorCode::BadRequest),
                    };
                    let Stmt::Select {
                        table, mut cond, ..
                    } = select_row(req)
                    else {
                        return Move::error(500, ErrorCode::InternalError);
                    };
                    if check {
                        cond.push(Cond::Eq("version", Value::Int(version)));
                    }
                    let set = vec![set, Assign::Add("version", 1)];
                    Move::Go(
                        Phase::UpdateRow,
                        Call::Sql(Stmt::Update { table, set, cond }),
                    )
                }
                (Phase::UpdateRow, Input::Sql(o)) => {
                    h.rows = o.count();
                    Move::Go(Phase::ReadAccount, Call::Sql(select_row(req)))
                }
                (Phase::ReadAccount, Input::Sql(o)) if h.rows == 1 => row_reply(&o),
                // The version moved since the client read it: 409 for the debit's
                // own field, 412 for If-Match (RFC 9110 §13.1.1).
                (Phase::ReadAccount, Input::Sql(_)) => match req.body {
                    Body::Put { .. } => Move::error(412, ErrorCode::PreconditionFailed),
                    _ => Move::error(409, ErrorCode::VersionMismatch),
                },
                _ => Move::error(500, ErrorCode::InternalError),
            }
        }
        (Handler::Like, Body::Like { op_id }) => {
            let dedup = cfg.op_dedup;
            let inc = Stmt::Update {
                table: "posts",
                set: vec![Assign::Add("likes", 1)],
                cond: vec![Cond::Eq("id", Value::Int(1))],
            };
            match (h.phase, input) {
                // Older than the operation id's TTL: the app has been told (404) or may be.
                (Phase::Receive | Phase::Begin, _) if dedup && stale(h, cfg, out) => {
                    Move::error(400, ErrorCode::RequestExpired)
                }
                (Phase::Receive, _) if dedup => Move::Go(Phase::Begin, Call::Sql(Stmt::Begin)),
                (Phase::Receive, _) => Move::Go(Phase::Increment, Call::Sql(inc)),
                (Phase::Begin, _) => Move::Go(
                    Phase::InsertOp,
                    Call::Sql(Stmt::Insert {
                        table: "like_ops",
                        columns: &["op_id"],
                        values: vec![Value::text(op_id)],
                        on_conflict: OnConflict::DoNothing,
                    }),
                ),
                (Phase::InsertOp, Input::Sql(o)) if o.count() == 1 => {
                    Move::Go(Phase::Increment, Call::Sql(inc))
                }
                (Phase::InsertOp, Input::Sql(_)) | (Phase::Increment, Input::Sql(_)) if dedup => {
                    Move::Go(Phase::Commit, Call::Sql(Stmt::Commit))
                }
                (Phase::Increment | Phase::Commit, Input::Sql(_)) => {
                    Move::Respond(200, Reply::Liked, false)
                }
                _ => Move::error(500, ErrorCode::InternalError),
            }
        }
        (Handler::PayOrder, Body::PayOrder { order, amount }) if cfg.order.paying_lease => {
            pay_with_lease(h, input, (order, amount), cfg, out)
        }
        (Handler::PayOrder, Body::PayOrder { order, amount }) => match (h.phase, input) {
            (Phase::Receive, _) => Move::Go(
                Phase::UpdateStatus,
                Call::Sql(mark_paid(order, "NEW", None)),
            ),
            (Phase::UpdateStatus, Input::Sql(o)) => {
                if o.count() == 0 && cfg.order.row_count_check {
                    // Already paid: the transition happened before. Nothing to do again.
                    Move::Respond(200, Reply::Value("PAID".into()), false)
                } else {
                    Move::Go(Phase::Charge, Call::Charge(amount, None))
                }
            }
            (Phase::Charge, Input::Charged(charge, _)) => {
                h.charge = Some(charge);
                let pay = insert_payment(h, out, amount, None);
                Move::Go(Phase::InsertPayment, Call::Sql(pay))
            }
            (Phase::InsertPayment, Input::Sql(_)) => {
                Move::Respond(200, Reply::Value("PAID".into()), false)
            }
            _ => Move::error(500, ErrorCode::InternalError),
        },
        _ => Move::error(400, ErrorCode::BadRequest),
    }
}

/// `POST /orders/42/pay` with a lease, as the ADR's claim: `UPDATE … SET
/// status = 'PAYING', locked_at = now WHERE status = 'NEW'` (on its own: the
/// lease is visible to every retry), the charge with the order id as the
/// processor's key, then the ledger row and `PAID` in one transaction, fenced
/// by the lease's token. A retry whose claim finds 0 rows reads the order:
/// PAID is answered as paid; PAYING within its lease is in progress (409);
/// PAYING past it is taken over (fenced, a new token) and the payment resumes:
/// the processor answers the same key with the same charge.
fn pay_with_lease(
    h: &mut Handling,
    input: Input,
    (order, amount): (i64, i64),
    cfg: &ApiConfig,
    out: &mut Out,
) -> Move {
    let paid = || Move::Respond(200, Reply::Value("PAID".into()), false);
    let busy = Move::error(409, ErrorCode::PaymentInProgress);
    let this = Cond::Eq("id", Value::Int(order));
    let charge = || Call::Charge(amount, Some(format!("order-{order}")));
    let now = out.now;
    let lease = |h: &mut Handling, cond: Vec<Cond>, phase: Phase| {
        h.lock = Some(now);
        let set = vec![
            Assign::To("status", Value::text("PAYING")),
            Assign::To("locked_at", Value::Int(now.0 as i64)),
        ];
        Move::Go(
            phase,
            Call::Sql(Stmt::Update {
                table: "orders",
                set,
                cond,
            }),
        )
    };
    // Sent longer ago than the order's TTL: refused before it claims and before it charges.
    let expired = stale(h, cfg, out);
    match (h.phase, input) {
        (Phase::Receive, _) | (Phase::ClaimOrder | Phase::Takeover, Input::Sql(_)) if expired => {
            Move::error(400, ErrorCode::RequestExpired)
        }
        (Phase::Receive, _) => {
            let cond = vec![this, Cond::Eq("status", Value::text("NEW"))];
            lease(h, cond, Phase::ClaimOrder)
        }
        (Phase::ClaimOrder | Phase::Takeover, Input::Sql(o)) if o.count() == 1 => {
            Move::Go(Phase::Charge, charge())
        }
        (Phase::ClaimOrder, Input::Sql(_)) => Move::Go(
            Phase::ReadOrder,
            Call::Sql(Stmt::Select {
                table: "orders",
                cond: vec![this],
                // The primary key: one row at most.
                order_by: None,
            }),
        ),
        (Phase::ReadOrder, Input::Sql(Outcome::Ok { rows, .. })) if !rows.is_empty() => {
            let get = |c| cell(&rows[0], &ORDER_COLUMNS, c);
            let since = get("locked_at").and_then(Value::as_int);
            match (get("status").and_then(Value::as_text), since) {
                (Some("PAID"), _) => paid(),
                (Some("PAYING"), Some(t)) if Millis(t as u64) + CLAIM_LEASE <= now => {
                    // Its owner died or stalled: take the lease over, only if its token
                    // is still the one read.
                    let cond = vec![
                        this,
                        Cond::Eq("status", Value::text("PAYING")),
                        Cond::Eq("locked_at", Value::Int(t)),
                    ];
                    lease(h, cond, Phase::Takeover)
                }
                _ => busy,
            }
        }
        (Phase::Charge, Input::Charged(c, _)) => {
            h.charge = Some(c);
            Move::Go(Phase::Begin, Call::Sql(Stmt::Begin))
        }
        (Phase::Charge, Input::Refused(code)) => Move::Respond(422, Reply::Error(code), false),
        (Phase::Begin, Input::Sql(_)) => {
            let pay = insert_payment(h, out, amount, None);
            Move::Go(Phase::InsertPayment, Call::Sql(pay))
        }
        (Phase::InsertPayment, Input::Sql(o)) if o.is_error() => {
            Move::Go(Phase::Rollback, Call::Sql(Stmt::Rollback))
        }
        (Phase::InsertPayment, Input::Sql(_)) => {
            let token = h.lock.unwrap_or_default().0 as i64;
            let mark = mark_paid(order, "PAYING", Some(token));
            Move::Go(Phase::MarkPaid, Call::Sql(mark))
        }
        (Phase::MarkPaid, Input::Sql(o)) if o.count() == 1 => {
            Move::Go(Phase::Commit, Call::Sql(Stmt::Commit))
        }
        // The lease was taken over while this request worked: the fence refuses
        // its write, it undoes its ledger row, and the new owner finishes.
        (Phase::MarkPaid, Input::Sql(_)) => Move::Go(Phase::Rollback, Call::Sql(Stmt::Rollback)),
        (Phase::Commit, Input::Sql(Outcome::Ok { tag, .. })) if tag != db::Tag::Rollback => paid(),
        (Phase::Takeover | Phase::Rollback, _) => busy,
        _ => Move::error(500, ErrorCode::InternalError),
    }
}

/// Sent longer ago than the operation's TTL (`ApiConfig::op_ttl`): refused
/// before it changes anything.
fn stale(h: &Handling, cfg: &ApiConfig, out: &Out) -> bool {
    cfg.op_ttl.is_some_and(|ttl| h.req.sent + ttl <= out.now)
}

/// `GET /payments?key=K1` and its kin (`/refunds`, `/orders/42`,
/// `/posts/1/likes/op_7f3a`): what became of an operation, asked by its key
/// once the app has stopped retrying it. An idempotent read that reconciles
/// before it answers: where the ledger lacks the payment (its request died
/// after the charge, or a day passed before its retry), it asks the processor
/// for a charge made with the key and books it, idempotently (the row under
/// the key's unique index, the receipt into the outbox, the order PAID, in one
/// transaction), then answers with it; 404 when the processor has none:
/// nothing was charged and no attempt can be any more: the latest (sent at
/// `since`) is older than the key's TTL, so the charge handler refuses it.
/// Until then it cannot tell (503): an attempt may still be on its way.
fn status(
    h: &mut Handling,
    input: Input,
    (of, since): (Asked, Millis),
    key: Option<StoreKey>,
    config: &ApiConfig,
    out: &mut Out,
) -> Move {
    let user = h.req.user;
    // Written out only where a step names it (most steps do not).
    let key = || key.as_ref().map(StoreKey::text).unwrap_or_default();
    let not_found = match config.op_ttl {
        Some(ttl) if out.now < since + ttl => Move::error(503, ErrorCode::OutcomeUnknown),
        _ => Move::error(404, ErrorCode::NotFound),
    };
    let amount = of.amount();
    let read = || {
        let (table, cond, order_by) = match of {
            Asked::Order { order, .. } => ("orders", vec![Cond::Eq("id", Value::Int(order))], None),
            Asked::Like(op_id) => (
                "like_ops",
                vec![Cond::Eq("op_id", Value::text(op_id))],
                None,
            ),
            _ => (
                "payments",
                vec![
                    Cond::Eq("user_id", Value::Int(user)),
                    Cond::Eq("idempotency_key", Value::text(key())),
                ],
                Some("id"),
            ),
        };
        Move::Go(
            Phase::Status,
            Call::Sql(Stmt::Select {
                table,
                cond,
                order_by,
            }),
        )
    };
    match (h.phase, input) {
        (Phase::Receive | Phase::Rollback, _) => read(),
        (Phase::Status, Input::Sql(Outcome::Ok { rows, .. })) => match (of, rows.first()) {
            (Asked::Like(_), Some(_)) => Move::Respond(200, Reply::Liked, false),
            (Asked::Order { order, .. }, Some(row)) => {
                match cell(row, &ORDER_COLUMNS, "status").and_then(Value::as_text) {
                    Some("PAID") => Move::Respond(200, Reply::Value("PAID".into()), false),
                    // Claimed, perhaps charged, never booked: reconcile.
                    Some("PAYING") => {
                        Move::Go(Phase::Reconcile, Call::FindCharge(format!("order-{order}")))
                    }
                    _ => not_found,
                }
            }
            (Asked::Like(_) | Asked::Order { .. }, None) => not_found,
            (_, Some(row)) => {
                let get = |c| cell(row, &PAYMENT_COLUMNS, c);
                let id = get("id").and_then(Value::as_text).unwrap_or_default();
                let paid = get("amount").and_then(Value::as_int).unwrap_or(0);
                if paid != amount && config.status.fingerprint {
                    // The key names another payment (reused): it cannot tell about this one.
                    return Move::error(503, ErrorCode::OutcomeUnknown);
                }
                charge::paid(id.to_string(), paid, false)
            }
            // The processor was given the key, so it can say whether it charged, and
            // the ledger refuses a second row for the key, so booking is idempotent.
            (_, None) if config.status.books_found_charges => {
                Move::Go(Phase::Reconcile, Call::FindCharge(key()))
            }
            (_, None) => Move::error(503, ErrorCode::OutcomeUnknown),
        },
        (Phase::Reconcile, Input::Found(None)) => not_found,
        (Phase::Reconcile, Input::Found(Some((charge, _)))) => {
            h.charge = Some(charge);
            Move::Go(Phase::Begin, Call::Sql(Stmt::Begin))
        }
        (Phase::Begin, Input::Sql(_)) => {
            let ledger_key = (!matches!(of, Asked::Order { .. })).then(key);
            let pay = insert_payment(h, out, amount, ledger_key);
            Move::Go(Phase::InsertPayment, Call::Sql(pay))
        }
        // Booked meanwhile by its own request: undo, and read it again.
        (Phase::InsertPayment, Input::Sql(o)) if o.count() == 0 || o.is_error() => {
            Move::Go(Phase::Rollback, Call::Sql(Stmt::Rollback))
        }
        (Phase::InsertPayment, Input::Sql(_)) => match of {
            Asked::Order { order, .. } => {
                Move::Go(Phase::MarkPaid, Call::Sql(mark_paid(order, "PAYING", None)))
            }
            _ if config.charge.outbox => charge::insert_receipt(h, amount),
            _ => Move::Go(Phase::Commit, Call::Sql(Stmt::Commit)),
        },
        (Phase::MarkPaid, Input::Sql(o)) if o.count() == 0 => {
            Move::Go(Phase::Rollback, Call::Sql(Stmt::Rollback))
        }
        (Phase::MarkPaid | Phase::Outbox, Input::Sql(_)) => {
            Move::Go(Phase::Commit, Call::Sql(Stmt::Commit))
        }
        (Phase::Commit, Input::Sql(Outcome::Ok { tag, .. })) if tag != db::Tag::Rollback => {
            match of {
                Asked::Order { .. } => Move::Respond(200, Reply::Value("PAID".into()), false),
                _ => charge::answer(h, amount),
            }
        }
        _ => Move::error(503, ErrorCode::UpstreamTimeout),
    }
}

/// The outbox's relay: the first receipt not yet sent, sent with its id as the
/// mail service's idempotency key, then marked sent; 200 when that is done or
/// nothing is pending (it polls again if it was woken meanwhile), 503 on a
/// failure (it tries again later). It sends at least once: a receipt whose
/// answer was lost is sent again, with the same id. (Its 200 carries any
/// reply: the relay answers no one.)
fn relay(h: &mut Handling, input: Input) -> Move {
    let poll = || {
        Move::Go(
            Phase::Poll,
            Call::Sql(Stmt::Select {
                table: "outbox",
                cond: vec![Cond::Eq("status", Value::text("pending"))],
                order_by: Some("id"),
            }),
        )
    };
    match (h.phase, input) {
        (Phase::Receive, _) => poll(),
        (Phase::MarkSent, Input::Sql(_)) => Move::Respond(200, Reply::Liked, false),
        (Phase::Poll, Input::Sql(Outcome::Ok { rows, .. })) => match rows.first() {
            Some(row) => {
                let text = |c| {
                    cell(row, &OUTBOX_COLUMNS, c)
                        .and_then(Value::as_text)
                        .unwrap_or_default()
                };
                let (id, payment) = (text("id").to_string(), text("payment_id").to_string());
                h.payment = Some(id.clone());
                Move::Go(Phase::RelaySend, Call::Email(Some(id), payment))
            }
            None => Move::Respond(200, Reply::Liked, false),
        },
        (Phase::RelaySend, Input::Emailed) => Move::Go(
            Phase::MarkSent,
            Call::Sql(Stmt::Update {
                table: "outbox",
                set: vec![Assign::To("status", Value::text("sent"))],
                cond: vec![Cond::Eq(
                    "id",
                    Value::text(h.payment.clone().unwrap_or_default()),
                )],
            }),
        ),
        _ => Move::error(503, ErrorCode::UpstreamTimeout),
    }
}

/// `UPDATE orders SET status = 'PAID' WHERE id = <order> AND status = <from>`,
/// and `AND locked_at = <token>` where a lease's token fences it.
fn mark_paid(order: i64, from: &'static str, token: Option<i64>) -> Stmt {
    let mut cond = vec![
        Cond::Eq("id", Value::Int(order)),
        Cond::Eq("status", Value::text(from)),
    ];
    cond.extend(token.map(|t| Cond::Eq("locked_at", Value::Int(t))));
    Stmt::Update {
        table: "orders",
        set: vec![Assign::To("status", Value::text("PAID"))],
        cond,
    }
}

/// `SELECT * FROM accounts WHERE id = 1`, or the user's profile for a PUT's request.
fn select_row(req: &Request) -> Stmt {
    let (table, id) = match req.body {
        Body::Put { .. } | Body::ReadProfile => ("profiles", req.user),
        _ => ("accounts", 1),
    };
    Stmt::Select {
        table,
        cond: vec![Cond::Eq("id", Value::Int(id))],
        // The primary key: one row at most.
        order_by: None,
    }
}

/// `accounts` is `(id, balance, version)` and `profiles` `(id, email, version)`:
/// the reply carries the balance and the version, or the email.
fn row_reply(o: &Outcome) -> Move {
    let reply = match o {
        Outcome::Ok { rows, .. } if !rows.is_empty() => match &rows[0][1] {
            Value::Int(balance) => Reply::Account {
                balance: *balance,
                version: rows[0][2].as_int().unwrap_or(0),
            },
            v => Reply::Value(v.as_text().unwrap_or_default().into()),
        },
        _ => return Move::error(500, ErrorCode::InternalError),
    };
    Move::Respond(200, reply, false)
}
