//! `POST /charges`: the charge handler's rules, naive, `@Transactional`, or
//! deduplicated by an idempotency key kept in Redis, Postgres or the
//! process's memory, with an atomic claim, a request fingerprint, a lease
//! and a fenced takeover, and the key passed on to the processor; where the
//! scenario says so, with a receipt emailed after the commit, or written into
//! the outbox with the ledger row for the relay (`node::handlers`) to send.

use crate::db::{self, Assign, Cond, OnConflict, Outcome, Stmt, Value};
use crate::http::{ErrorCode, Reply};
use crate::key::{KeyRecord, Paid};
use crate::node::config::{ChargeConfig, KeyCfg};
use crate::node::rules::{cell, key_cond, Call, Handling, Input, Move, Stored};
use crate::out::Out;
use crate::redis;
use crate::scenario::{KeyStore, Phase, OUTBOX_COLUMNS, PAYMENT_COLUMNS};
use crate::timing::CLAIM_LEASE;
use crate::vecmap::VecMap;

/// The answer to a payment that went through; `replayed` when the ledger already had it.
pub(crate) fn paid(payment: String, amount: i64, replayed: bool) -> Move {
    Move::Respond(
        201,
        Reply::Payment {
            id: payment,
            amount,
        },
        replayed,
    )
}

/// The answer `h` has for its payment: the one the ledger already had, or its own.
pub(crate) fn answer(h: &Handling, amount: i64) -> Move {
    let (id, amount) = payment_of(h, amount);
    paid(id, amount, h.existing.is_some())
}

/// The payment `h` answers with, and its amount: the one the ledger already had
/// for the key, or its own (for `amount`, the request's).
pub(crate) fn payment_of(h: &Handling, amount: i64) -> (String, i64) {
    h.existing
        .clone()
        .unwrap_or_else(|| (h.payment.clone().unwrap_or_default(), amount))
}

/// The ledger row for `h`'s payment; `h` remembers the payment id for its answer.
/// With a key, the row carries it under `UNIQUE (user_id, idempotency_key)`, so
/// the ledger itself refuses a second row for the same operation.
pub(crate) fn insert_payment(
    h: &mut Handling,
    out: &mut Out,
    amount: i64,
    key: Option<String>,
) -> Stmt {
    let id = out.new_payment_id(amount);
    h.payment = Some(id.clone());
    Stmt::Insert {
        table: "payments",
        columns: vec!["id", "user_id", "amount", "idempotency_key"],
        values: vec![
            Value::text(id),
            Value::Int(h.req.user),
            Value::Int(amount),
            key.clone().map_or(Value::Null, Value::Text),
        ],
        on_conflict: if key.is_some() {
            OnConflict::DoNothing
        } else {
            OnConflict::Error
        },
    }
}

/// `POST /charges`: naive, `@Transactional`, or deduplicated by key.
///
/// A timeout is an unknown outcome, never a failure: the handler answers
/// 503 and stores nothing, and its claim stays until its lease runs out;
/// then a retry takes it over and resumes (with the key passed to the
/// processor, asking again is safe). A key store that does not answer
/// fails closed: 503, nothing charged.
///
/// That is the lab's ADR. Two other designs are variants, for a timeout
/// after the claim, where keys live in Redis: Stripe's
/// (`Toggle::ErrorsReplayed`) stores the 503 under the key as its final
/// answer, replayed to every retry; Powertools' (`Toggle::DeleteOnError`)
/// deletes the key, so the next retry runs the handler afresh. Either then
/// answers 503.
pub(crate) fn rules(
    h: &mut Handling,
    input: Input,
    amount: i64,
    key: Option<String>,
    config: &ChargeConfig,
    memory: &mut VecMap<String, Stored>,
    out: &mut Out,
) -> Move {
    let (cfg, transactional) = (config.key, config.transactional);
    // The receipt goes into the outbox in the ledger row's transaction, or is
    // emailed by the handler itself once the payment has committed.
    let (receipt, outbox) = (config.receipt, config.outbox);
    let user = h.req.user;
    // Computed where a phase needs them (a handler steps through many phases).
    let hash = |h: &Handling| h.req.body.fingerprint();
    let redis_key = || {
        key.as_ref()
            .map(|k| format!("idem:u{user}:{k}"))
            .unwrap_or_default()
    };
    let charge_call = |cfg: Option<KeyCfg>| {
        let pass = cfg.is_some_and(|c| c.to_processor);
        Call::Charge(amount, if pass { key.clone() } else { None })
    };
    let begin_first = transactional;
    // Sent longer ago than keys are kept (it waited on the way, or its process
    // paused, while a day passed): its key may be forgotten here and at the
    // processor, so a charge now could be a second one. The app stopped
    // reading it long ago. Checked before anything runs and again before the charge.
    let stale = cfg.is_some_and(|c| h.req.sent + c.ttl <= out.now);
    let expired = || Move::error(400, ErrorCode::RequestExpired);
    // After the key check: where the real work starts.
    let start_work = |cfg: Option<KeyCfg>| {
        if stale {
            expired()
        } else if begin_first {
            Move::Go(Phase::Begin, Call::Sql(Stmt::Begin))
        } else {
            Move::Go(Phase::Charge, charge_call(cfg))
        }
    };
    let postgres = cfg.is_some_and(|c| c.store == KeyStore::Postgres);
    let timeout = Move::error(503, ErrorCode::UpstreamTimeout);
    if h.failed {
        // The key is stored or deleted (or the store did not answer): the 503.
        return timeout;
    }
    match (h.phase, input) {
        // The ledger has committed: a cache write that fails or times out does not change the answer.
        (Phase::StoreResponse, _) => answer(h, amount),
        (phase, Input::Timeout) => {
            // Past the claim, where keys live in Redis: Stripe's way stores the 503
            // as the key's answer, Powertools' deletes the key; then the 503.
            let replay = config.errors_replayed;
            match cfg {
                Some(c)
                    if c.store == KeyStore::Redis
                        && past_the_claim(phase)
                        && (replay || config.delete_on_error) =>
                {
                    h.failed = true;
                    let key = redis_key();
                    if !replay {
                        return Move::Go(Phase::Rollback, Call::Redis(redis::Cmd::Del(key)));
                    }
                    let done = Paid {
                        payment: "upstream_timeout".into(),
                        amount: 0,
                    };
                    let value = redis::Value::Key(KeyRecord {
                        hash: hash(h),
                        done: Some((503, done)),
                    });
                    Move::Go(
                        Phase::StoreResponse,
                        Call::Redis(redis::Cmd::Set {
                            key,
                            value,
                            nx: false,
                            xx: false,
                            ttl: Some(redis::Ttl::Px(c.ttl.0)),
                        }),
                    )
                }
                _ => timeout,
            }
        }
        (Phase::Receive, _) => match (cfg, &key) {
            (None, _) => start_work(None),
            (Some(_), Some(_)) if stale => expired(),
            (Some(_), None) => Move::error(400, ErrorCode::IdempotencyKeyMissing),
            (Some(c), Some(k)) => match (c.store, c.atomic) {
                (KeyStore::Redis, false) => {
                    Move::Go(Phase::CheckKey, Call::Redis(redis::Cmd::Get(redis_key())))
                }
                (KeyStore::Redis, true) => {
                    let marker = Stored {
                        completed: false,
                        hash: hash(h),
                        code: 0,
                        payment: String::new(),
                        amount,
                        locked_at: out.now,
                    };
                    Move::Go(
                        Phase::Claim,
                        Call::Redis(redis::Cmd::Set {
                            key: redis_key(),
                            value: redis::Value::Key(marker.record()),
                            nx: true,
                            xx: false,
                            ttl: Some(redis::Ttl::Px(CLAIM_LEASE.0)),
                        }),
                    )
                }
                (KeyStore::Postgres, false) => Move::Go(
                    Phase::CheckKey,
                    Call::Sql(Stmt::Select {
                        table: "idempotency_keys",
                        cond: key_cond(user, k),
                        order_by: Some("locked_at"),
                    }),
                ),
                (KeyStore::Postgres, true) => Move::Go(
                    Phase::Claim,
                    Call::Sql({
                        let fp = hash(h);
                        insert_key(h, out, k, &fp, true)
                    }),
                ),
                (KeyStore::Memory, _) => {
                    let hit = memory.get(k).cloned();
                    Move::Go(Phase::CheckKey, Call::Local(Input::Memory(hit)))
                }
            },
        },
        (Phase::CheckKey | Phase::Lookup, found) => {
            let c = cfg.expect("keyed");
            let stored = match found {
                Input::Redis(redis::Reply::Bulk(redis::Value::Key(r))) => {
                    Some(Stored::from_record(r, out.now))
                }
                Input::Sql(Outcome::Ok { rows, .. }) if !rows.is_empty() => {
                    Some(Stored::from_row(&rows[0]))
                }
                Input::Memory(m) => m,
                _ => None,
            };
            match stored {
                Some(s) => decide(h, out, c, s, key.as_deref().unwrap_or_default()),
                None if h.phase == Phase::Lookup => {
                    // Claimed a moment ago and already gone (its lease ran out): try again later.
                    Move::error(409, ErrorCode::IdempotencyKeyInUse)
                }
                None if postgres => {
                    let k = key.clone().unwrap_or_default();
                    Move::Go(
                        Phase::Claim,
                        Call::Sql({
                            let fp = hash(h);
                            insert_key(h, out, &k, &fp, false)
                        }),
                    )
                }
                None => start_work(cfg),
            }
        }
        (Phase::Claim, result) => match result {
            Input::Redis(redis::Reply::Ok) => start_work(cfg),
            Input::Sql(o) if o.count() == 1 => start_work(cfg),
            Input::Sql(Outcome::Error(_)) => Move::error(409, ErrorCode::IdempotencyKeyInUse),
            Input::Redis(_) => Move::Go(Phase::Lookup, Call::Redis(redis::Cmd::Get(redis_key()))),
            _ => Move::Go(
                Phase::Lookup,
                Call::Sql(Stmt::Select {
                    table: "idempotency_keys",
                    cond: key_cond(user, &key.clone().unwrap_or_default()),
                    order_by: Some("locked_at"),
                }),
            ),
        },
        (Phase::Takeover, Input::Sql(o)) => {
            if o.count() == 1 {
                start_work(cfg)
            } else {
                Move::error(409, ErrorCode::IdempotencyKeyInUse)
            }
        }
        (Phase::Begin, Input::Sql(_)) => {
            if begin_first && h.charge.is_none() {
                if stale {
                    return expired();
                }
                Move::Go(Phase::Charge, charge_call(cfg))
            } else {
                Move::Go(
                    Phase::InsertPayment,
                    Call::Sql(insert_payment(h, out, amount, key.clone())),
                )
            }
        }
        (Phase::Charge, Input::Charged(charge, _)) => {
            h.charge = Some(charge);
            if begin_first || cfg.is_none() {
                // Inside the @Transactional transaction already, or no transaction at all.
                Move::Go(
                    Phase::InsertPayment,
                    Call::Sql(insert_payment(h, out, amount, key.clone())),
                )
            } else {
                Move::Go(Phase::Begin, Call::Sql(Stmt::Begin))
            }
        }
        (Phase::Charge, Input::Refused(code)) => {
            // A definite answer from the processor: nothing was charged.
            Move::Respond(422, Reply::Error(code), false)
        }
        (Phase::InsertPayment, Input::Sql(o)) => {
            if o.is_error() {
                return Move::Go(Phase::Rollback, Call::Sql(Stmt::Rollback));
            }
            if o.count() == 0 {
                // The ledger already has this key's payment: read it and answer with it.
                return Move::Go(
                    Phase::FindPayment,
                    Call::Sql(Stmt::Select {
                        table: "payments",
                        cond: vec![
                            Cond::Eq("user_id", Value::Int(user)),
                            Cond::Eq(
                                "idempotency_key",
                                Value::text(key.clone().unwrap_or_default()),
                            ),
                        ],
                        order_by: Some("id"),
                    }),
                );
            }
            recorded(h, cfg, amount, &key, begin_first, outbox)
        }
        (Phase::FindPayment, Input::Sql(Outcome::Ok { rows, .. })) if !rows.is_empty() => {
            let row = &rows[0];
            let get = |c| cell(row, &PAYMENT_COLUMNS, c);
            let id = get("id")
                .and_then(Value::as_text)
                .unwrap_or_default()
                .to_string();
            let paid = get("amount").and_then(Value::as_int).unwrap_or(0);
            h.existing = Some((id, paid));
            recorded(h, cfg, amount, &key, begin_first, outbox)
        }
        (Phase::Outbox, Input::Sql(_)) => recorded(h, cfg, amount, &key, begin_first, false),
        (Phase::CompleteKey, Input::Sql(o)) => {
            // (More than one row: duplicate claims, where the unique index is missing.)
            if o.count() >= 1 {
                Move::Go(Phase::Commit, Call::Sql(Stmt::Commit))
            } else {
                // The claim was taken over while this request worked (a pause, a lease
                // that ran out): the fence refuses its write, and it undoes its ledger row.
                h.lost_claim = true;
                Move::Go(Phase::Rollback, Call::Sql(Stmt::Rollback))
            }
        }
        (Phase::Commit | Phase::SendEmail, o) => {
            if matches!(
                o,
                Input::Sql(Outcome::Ok {
                    tag: db::Tag::Rollback,
                    ..
                })
            ) {
                return Move::error(500, ErrorCode::InternalError);
            }
            let (payment, paid) = payment_of(h, amount);
            if outbox {
                // The receipt is in the outbox, committed: the relay will send it.
                out.relay = Some(h.node);
            } else if receipt && h.phase == Phase::Commit {
                return Move::Go(Phase::SendEmail, Call::Email(None, payment));
            }
            let stored = Stored {
                completed: true,
                hash: hash(h),
                code: 201,
                payment,
                amount: paid,
                locked_at: out.now,
            };
            match cfg.map(|c| (c.store, c.ttl)) {
                Some((KeyStore::Redis, ttl)) => Move::Go(
                    Phase::StoreResponse,
                    Call::Redis(redis::Cmd::Set {
                        key: redis_key(),
                        value: redis::Value::Key(stored.record()),
                        nx: false,
                        xx: false,
                        ttl: Some(redis::Ttl::Px(ttl.0)),
                    }),
                ),
                Some((KeyStore::Memory, _)) => {
                    let k = key.clone().unwrap_or_default();
                    memory.insert(k, stored);
                    Move::Go(Phase::StoreResponse, Call::Local(Input::Stored))
                }
                _ => answer(h, amount),
            }
        }
        (Phase::Rollback, _) if h.lost_claim => {
            // The fence refused this request's write: answer with what the claim's owner stored.
            Move::Go(
                Phase::Lookup,
                Call::Sql(Stmt::Select {
                    table: "idempotency_keys",
                    cond: key_cond(user, &key.clone().unwrap_or_default()),
                    order_by: Some("locked_at"),
                }),
            )
        }
        _ => Move::error(500, ErrorCode::InternalError),
    }
}

/// The request holds its claim and its work has begun: a timeout from here on
/// is one that Stripe's way stores and Powertools' deletes. Before it (the
/// request arriving, its key looked up, claimed or taken over) nothing ran.
/// Named, not compared: phases have no order.
fn past_the_claim(p: Phase) -> bool {
    !matches!(
        p,
        Phase::Receive | Phase::CheckKey | Phase::Claim | Phase::Lookup | Phase::Takeover
    )
}

/// The receipt of `h`'s payment into the outbox, in the ledger row's
/// transaction; its id is made from the payment's, so a resumed request that
/// found the payment already there writes nothing new.
pub(crate) fn insert_receipt(h: &Handling, amount: i64) -> Move {
    let (payment, _) = payment_of(h, amount);
    Move::Go(
        Phase::Outbox,
        Call::Sql(Stmt::Insert {
            table: "outbox",
            columns: OUTBOX_COLUMNS.to_vec(),
            values: vec![
                Value::text(format!("rcpt_{payment}")),
                Value::text(payment),
                Value::text("pending"),
            ],
            on_conflict: OnConflict::DoNothing,
        }),
    )
}

/// The ledger row is written (or was already there): write the receipt into
/// the outbox (`outbox`), complete the key in the same transaction (fenced by
/// the claim's token), commit, or answer.
fn recorded(
    h: &Handling,
    cfg: Option<KeyCfg>,
    amount: i64,
    key: &Option<String>,
    transactional: bool,
    outbox: bool,
) -> Move {
    match cfg {
        _ if outbox => insert_receipt(h, amount),
        Some(c) if c.store == KeyStore::Postgres => {
            let (payment, paid) = payment_of(h, amount);
            let k = key.clone().unwrap_or_default();
            let body = Paid {
                payment,
                amount: paid,
            };
            let mut cond = key_cond(h.req.user, &k);
            cond.push(Cond::Eq("status", Value::text("processing")));
            cond.push(Cond::Eq(
                "locked_at",
                Value::Int(h.lock.unwrap_or_default().0 as i64),
            ));
            Move::Go(
                Phase::CompleteKey,
                Call::Sql(Stmt::Update {
                    table: "idempotency_keys",
                    set: vec![
                        Assign::To("status", Value::text("completed")),
                        Assign::To("response_code", Value::Int(201)),
                        Assign::To("response_body", Value::Paid(body)),
                    ],
                    cond,
                }),
            )
        }
        _ if transactional || cfg.is_some() => Move::Go(Phase::Commit, Call::Sql(Stmt::Commit)),
        _ => answer(h, amount),
    }
}

/// The claim: `INSERT … 'processing'` with this moment as the lock (the fencing token).
fn insert_key(h: &mut Handling, out: &Out, key: &str, hash: &str, atomic: bool) -> Stmt {
    let now = out.now;
    h.lock = Some(now);
    Stmt::Insert {
        table: "idempotency_keys",
        columns: vec!["user_id", "key", "request_hash", "status", "locked_at"],
        values: vec![
            Value::Int(h.req.user),
            Value::text(key),
            Value::text(hash),
            Value::text("processing"),
            Value::Int(now.0 as i64),
        ],
        on_conflict: if atomic {
            OnConflict::DoNothing
        } else {
            OnConflict::Error
        },
    }
}

/// The key (`key`, as the store keeps it: scoped where `Toggle::ScopedKey`
/// says so) is known: refuse, wait, take over or replay.
fn decide(h: &mut Handling, out: &Out, c: KeyCfg, s: Stored, key: &str) -> Move {
    if c.fingerprint && s.hash != h.req.body.fingerprint() {
        return Move::error(422, ErrorCode::IdempotencyKeyReused);
    }
    let postgres = c.store == KeyStore::Postgres;
    // Redis drops an expired key by itself; a Postgres row is there until it is reclaimed.
    let expired = postgres && s.completed && s.locked_at + c.ttl <= out.now;
    if s.completed && !expired {
        if s.code == 503 {
            // A timeout stored as final (`Toggle::ErrorsReplayed`): replayed as it was.
            return Move::Respond(503, Reply::Error(ErrorCode::UpstreamTimeout), true);
        }
        return paid(s.payment, s.amount, true);
    }
    if postgres && (expired || s.locked_at + CLAIM_LEASE <= out.now) {
        // Take the claim over, fenced: only if its token is still the one read.
        let now = out.now;
        h.lock = Some(now);
        let mut cond = key_cond(h.req.user, key);
        cond.push(Cond::Eq("locked_at", Value::Int(s.locked_at.0 as i64)));
        return Move::Go(
            Phase::Takeover,
            Call::Sql(Stmt::Update {
                table: "idempotency_keys",
                set: vec![
                    Assign::To("status", Value::text("processing")),
                    Assign::To("request_hash", Value::text(h.req.body.fingerprint())),
                    Assign::To("locked_at", Value::Int(now.0 as i64)),
                ],
                cond,
            }),
        );
    }
    Move::error(409, ErrorCode::IdempotencyKeyInUse)
}
