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
use crate::node::rules::{cell, key_cond, Call, Handling, Input, Move, StoreKey, Stored};
use crate::out::Out;
use crate::redis;
use crate::scenario::{KeyStore, Phase, OUTBOX_COLUMNS, PAYMENT_COLUMNS};
use crate::time::Millis;
use crate::timing::CLAIM_LEASE;
use crate::vecmap::VecMap;

/// Where Redis keeps user `user`'s key `key`: `idem:u<user>:<key>`.
pub(crate) fn redis_key(user: i64, key: impl std::fmt::Display) -> String {
    // Room for a scoped key.
    crate::text::with_room(48, format_args!("idem:u{user}:{key}"))
}

/// `SELECT … FROM idempotency_keys WHERE user_id = … AND key = …`.
pub(crate) fn select_key(user: i64, key: &str) -> Call {
    Call::Sql(Stmt::Select {
        table: "idempotency_keys",
        cond: key_cond(user, key),
        order_by: Some("locked_at"),
    })
}

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
    let id = out.net.payment_id(amount);
    h.payment = Some(id.clone());
    Stmt::Insert {
        table: "payments",
        columns: &["id", "user_id", "amount", "idempotency_key"],
        values: vec![
            Value::text(id),
            Value::Int(h.req.user),
            Value::Int(amount),
            key.as_deref().map_or(Value::Null, Value::text),
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
///
/// The phases come in groups, each a function of [`Charge`]: the key's
/// (receive, check, claim, take over), the work's (the charge and the ledger
/// row's transaction), and the end's (commit, receipt, the key's answer).
pub(crate) fn rules(
    h: &mut Handling,
    input: Input,
    amount: i64,
    key: Option<StoreKey>,
    config: &ChargeConfig,
    memory: &mut VecMap<String, Stored>,
    out: &mut Out,
) -> Move {
    let c = Charge {
        config,
        cfg: config.key,
        amount,
        user: h.req.user,
        // Sent longer ago than keys are kept (it waited on the way, or its process
        // paused, while a day passed): its key may be forgotten here and at the
        // processor, so a charge now could be a second one. The app stopped
        // reading it long ago. Checked before anything runs and again before the charge.
        stale: config.key.is_some_and(|k| h.req.sent + k.ttl <= out.now),
        key,
    };
    if h.failed {
        // The key is stored or deleted (or the store did not answer): the 503.
        return timeout();
    }
    match (h.phase, input) {
        // The ledger has committed: a cache write that fails or times out does not change the answer.
        (Phase::StoreResponse, _) => answer(h, amount),
        (phase, Input::Timeout) => c.timed_out(h, phase),
        (
            Phase::Receive | Phase::CheckKey | Phase::Lookup | Phase::Claim | Phase::Takeover,
            input,
        ) => c.key_phase(h, input, memory, out),
        (
            Phase::Begin
            | Phase::Charge
            | Phase::InsertPayment
            | Phase::FindPayment
            | Phase::Outbox
            | Phase::CompleteKey,
            input,
        ) => c.work(h, input, out),
        (Phase::Commit | Phase::SendEmail | Phase::Rollback, input) => {
            c.finish(h, input, memory, out)
        }
        _ => Move::error(500, ErrorCode::InternalError),
    }
}

/// What every phase of one request's charge handler reads: its configuration
/// and the request's figures.
struct Charge<'c> {
    config: &'c ChargeConfig,
    /// The key handling (`config.key`).
    cfg: Option<KeyCfg>,
    amount: i64,
    /// The key as the store keeps it (scoped where `Toggle::ScopedKey` says so).
    key: Option<StoreKey>,
    user: i64,
    /// Sent longer ago than keys are kept: refused (see [`rules`]).
    stale: bool,
}

/// The 503 of a timeout: an unknown outcome.
fn timeout() -> Move {
    Move::error(503, ErrorCode::UpstreamTimeout)
}

fn expired() -> Move {
    Move::error(400, ErrorCode::RequestExpired)
}

/// The fingerprint of `h`'s request body (computed where a phase needs it).
fn hash(h: &Handling) -> String {
    h.req.body.fingerprint()
}

impl Charge<'_> {
    fn redis_key(&self) -> String {
        self.key
            .as_ref()
            .map(|k| redis_key(self.user, k))
            .unwrap_or_default()
    }

    /// `SET idem:u<user>:<key> <value> [NX] PX <ttl>`.
    fn set_key(&self, value: redis::Value, nx: bool, ttl: Millis) -> Call {
        Call::Redis(redis::Cmd::Set {
            key: self.redis_key(),
            value,
            nx,
            xx: false,
            ttl: Some(redis::Ttl::Px(ttl.0)),
        })
    }

    /// The key written out, if the request has one.
    fn key_text(&self) -> Option<String> {
        self.key.as_ref().map(StoreKey::text)
    }

    fn key_or_empty(&self) -> String {
        self.key_text().unwrap_or_default()
    }

    fn charge_call(&self) -> Call {
        let pass = self.cfg.is_some_and(|c| c.to_processor);
        Call::Charge(self.amount, if pass { self.key_text() } else { None })
    }

    /// After the key check: where the real work starts.
    fn start_work(&self) -> Move {
        if self.stale {
            expired()
        } else if self.config.transactional {
            Move::Go(Phase::Begin, Call::Sql(Stmt::Begin))
        } else {
            Move::Go(Phase::Charge, self.charge_call())
        }
    }

    fn select_key(&self) -> Call {
        select_key(self.user, &self.key_or_empty())
    }

    /// A timeout in `phase`. Past the claim, where keys live in Redis: Stripe's
    /// way stores the 503 as the key's answer, Powertools' deletes the key; then the 503.
    fn timed_out(&self, h: &mut Handling, phase: Phase) -> Move {
        let replay = self.config.errors_replayed;
        match self.cfg {
            Some(c)
                if c.store == KeyStore::Redis
                    && past_the_claim(phase)
                    && (replay || self.config.delete_on_error) =>
            {
                h.failed = true;
                if !replay {
                    let del = redis::Cmd::Del(self.redis_key());
                    return Move::Go(Phase::Rollback, Call::Redis(del));
                }
                let done = Paid {
                    payment: "upstream_timeout".into(),
                    amount: 0,
                };
                let value = redis::Value::Key(KeyRecord {
                    hash: hash(h),
                    done: Some((503, done)),
                });
                Move::Go(Phase::StoreResponse, self.set_key(value, false, c.ttl))
            }
            _ => timeout(),
        }
    }

    /// The key's phases: the request arrives, its key is looked up, claimed
    /// (atomically or not) or taken over.
    fn key_phase(
        &self,
        h: &mut Handling,
        input: Input,
        memory: &mut VecMap<String, Stored>,
        out: &mut Out,
    ) -> Move {
        let (cfg, amount) = (self.cfg, self.amount);
        let postgres = cfg.is_some_and(|c| c.store == KeyStore::Postgres);
        match (h.phase, input) {
            (Phase::Receive, _) => match (cfg, &self.key) {
                (None, _) => self.start_work(),
                (Some(_), Some(_)) if self.stale => expired(),
                (Some(_), None) => Move::error(400, ErrorCode::IdempotencyKeyMissing),
                (Some(c), Some(k)) => match (c.store, c.atomic) {
                    (KeyStore::Redis, false) => Move::Go(
                        Phase::CheckKey,
                        Call::Redis(redis::Cmd::Get(self.redis_key())),
                    ),
                    (KeyStore::Redis, true) => {
                        let marker = Stored {
                            completed: false,
                            hash: hash(h),
                            code: 0,
                            payment: String::new(),
                            amount,
                            locked_at: out.now,
                        };
                        let value = redis::Value::Key(marker.record());
                        Move::Go(Phase::Claim, self.set_key(value, true, CLAIM_LEASE))
                    }
                    (KeyStore::Postgres, false) => Move::Go(Phase::CheckKey, self.select_key()),
                    (KeyStore::Postgres, true) => Move::Go(
                        Phase::Claim,
                        Call::Sql({
                            let fp = hash(h);
                            insert_key(h, out, &k.text(), &fp, true)
                        }),
                    ),
                    (KeyStore::Memory, _) => {
                        let hit = memory.get(k.text().as_str()).cloned();
                        Move::Go(Phase::CheckKey, Call::Local(Input::Memory(hit)))
                    }
                },
            },
            (Phase::CheckKey | Phase::Lookup, found) => {
                let c = cfg.expect("keyed");
                match Stored::read(found, out.now) {
                    Some(s) => decide(h, out, c, s, &self.key_or_empty()),
                    None if h.phase == Phase::Lookup => {
                        // Claimed a moment ago and already gone (its lease ran out): try again later.
                        Move::error(409, ErrorCode::IdempotencyKeyInUse)
                    }
                    None if postgres => {
                        let k = self.key_or_empty();
                        Move::Go(
                            Phase::Claim,
                            Call::Sql({
                                let fp = hash(h);
                                insert_key(h, out, &k, &fp, false)
                            }),
                        )
                    }
                    None => self.start_work(),
                }
            }
            (Phase::Claim, result) => match result {
                Input::Redis(redis::Reply::Ok) => self.start_work(),
                Input::Sql(o) if o.count() == 1 => self.start_work(),
                Input::Sql(Outcome::Error(_)) => Move::error(409, ErrorCode::IdempotencyKeyInUse),
                Input::Redis(_) => Move::Go(
                    Phase::Lookup,
                    Call::Redis(redis::Cmd::Get(self.redis_key())),
                ),
                _ => Move::Go(Phase::Lookup, self.select_key()),
            },
            (Phase::Takeover, Input::Sql(o)) => {
                if o.count() == 1 {
                    self.start_work()
                } else {
                    Move::error(409, ErrorCode::IdempotencyKeyInUse)
                }
            }
            _ => Move::error(500, ErrorCode::InternalError),
        }
    }

    /// The work's phases: the charge, and the ledger row's transaction (the
    /// row, the receipt into the outbox, the key completed).
    fn work(&self, h: &mut Handling, input: Input, out: &mut Out) -> Move {
        let (cfg, amount, begin_first) = (self.cfg, self.amount, self.config.transactional);
        match (h.phase, input) {
            (Phase::Begin, Input::Sql(_)) => {
                if begin_first && h.charge.is_none() {
                    if self.stale {
                        return expired();
                    }
                    Move::Go(Phase::Charge, self.charge_call())
                } else {
                    Move::Go(
                        Phase::InsertPayment,
                        Call::Sql(insert_payment(h, out, amount, self.key_text())),
                    )
                }
            }
            (Phase::Charge, Input::Charged(charge, _)) => {
                h.charge = Some(charge);
                if begin_first || cfg.is_none() {
                    // Inside the @Transactional transaction already, or no transaction at all.
                    Move::Go(
                        Phase::InsertPayment,
                        Call::Sql(insert_payment(h, out, amount, self.key_text())),
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
                                Cond::Eq("user_id", Value::Int(self.user)),
                                Cond::Eq("idempotency_key", Value::text(self.key_or_empty())),
                            ],
                            order_by: Some("id"),
                        }),
                    );
                }
                self.recorded(h, self.config.outbox)
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
                self.recorded(h, self.config.outbox)
            }
            (Phase::Outbox, Input::Sql(_)) => self.recorded(h, false),
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
            _ => Move::error(500, ErrorCode::InternalError),
        }
    }

    /// The end's phases: the commit, the receipt emailed after it or left to
    /// the relay, the key's answer stored; a rollback after a lost claim.
    fn finish(
        &self,
        h: &mut Handling,
        input: Input,
        memory: &mut VecMap<String, Stored>,
        out: &mut Out,
    ) -> Move {
        let amount = self.amount;
        match (h.phase, input) {
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
                if self.config.outbox {
                    // The receipt is in the outbox, committed: the relay will send it.
                    out.relay = Some(h.node);
                } else if self.config.receipt && h.phase == Phase::Commit {
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
                match self.cfg.map(|c| (c.store, c.ttl)) {
                    Some((KeyStore::Redis, ttl)) => {
                        let value = redis::Value::Key(stored.record());
                        Move::Go(Phase::StoreResponse, self.set_key(value, false, ttl))
                    }
                    Some((KeyStore::Memory, _)) => {
                        memory.insert(self.key_or_empty(), stored);
                        Move::Go(Phase::StoreResponse, Call::Local(Input::Stored))
                    }
                    _ => answer(h, amount),
                }
            }
            (Phase::Rollback, _) if h.lost_claim => {
                // The fence refused this request's write: answer with what the claim's owner stored.
                Move::Go(Phase::Lookup, self.select_key())
            }
            _ => Move::error(500, ErrorCode::InternalError),
        }
    }

    /// The ledger row is written (or was already there): write the receipt into
    /// the outbox (`outbox`), complete the key in the same transaction (fenced by
    /// the claim's token), commit, or answer.
    fn recorded(&self, h: &Handling, outbox: bool) -> Move {
        let amount = self.amount;
        match self.cfg {
            _ if outbox => insert_receipt(h, amount),
            Some(c) if c.store == KeyStore::Postgres => {
                let (payment, paid) = payment_of(h, amount);
                let body = Paid {
                    payment,
                    amount: paid,
                };
                let mut cond = key_cond(h.req.user, &self.key_or_empty());
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
            _ if self.config.transactional || self.cfg.is_some() => {
                Move::Go(Phase::Commit, Call::Sql(Stmt::Commit))
            }
            _ => answer(h, amount),
        }
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
            columns: &OUTBOX_COLUMNS,
            values: vec![
                Value::text(format!("rcpt_{payment}")),
                Value::text(payment),
                Value::text("pending"),
            ],
            on_conflict: OnConflict::DoNothing,
        }),
    )
}

/// The claim: `INSERT … 'processing'` with this moment as the lock (the fencing token).
fn insert_key(h: &mut Handling, out: &Out, key: &str, hash: &str, atomic: bool) -> Stmt {
    let now = out.now;
    h.lock = Some(now);
    Stmt::Insert {
        table: "idempotency_keys",
        columns: &["user_id", "key", "request_hash", "status", "locked_at"],
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
