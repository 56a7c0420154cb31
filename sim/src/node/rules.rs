//! What a request handler works with: the request's state ([`Handling`]),
//! the result of its last call ([`Input`]), its next call out ([`Call`]) and
//! its next move ([`Move`]); the key record as it reads one back
//! ([`Stored`]). A handler's rules are a function from (state, input) to a
//! move; the runtime (`node::api`) sends the call and feeds the reply back.
//! A handler reads what Postgres answers, never its tables.

use crate::db::{Cond, Outcome, Stmt, Value};
use crate::http::{self, Body, ErrorCode, KeyId, Reply, Request};
use crate::key::{KeyRecord, Paid};
use crate::net::{NodeId, ReqId};
use crate::out::EventKey;
use crate::redis;
use crate::scenario::{Phase, KEY_COLUMNS};
use crate::time::Millis;

/// A request being handled by an API instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Handling {
    pub node: NodeId,
    pub id: ReqId,
    pub req: Request,
    pub phase: Phase,
    /// Bumped on each call out; a deadline with an older token is stale.
    pub(crate) token: u32,
    pub(crate) charge: Option<String>,
    pub(crate) payment: Option<String>,
    /// Rows affected by the last statement.
    pub(crate) rows: usize,
    /// The deadline of the call out in progress.
    pub(crate) deadline: Option<EventKey>,
    /// The fencing token of the Postgres claim this request took or is taking (its `locked_at`).
    pub(crate) lock: Option<Millis>,
    /// The payment the ledger already had for this key: (id, amount), answered as a replay.
    pub(crate) existing: Option<(String, i64)>,
    /// The owner's fenced write found its claim taken over: it rolled back.
    pub(crate) lost_claim: bool,
    /// It timed out and has asked the key store to store or delete the key
    /// (`Toggle::ErrorsReplayed`, `Toggle::DeleteOnError`): it answers 503 next.
    pub(crate) failed: bool,
    /// The reconciliation job: the processor's charges it has still to match,
    /// and the refunds in its list (a refund it made before is not made twice).
    pub(crate) todo: Vec<crate::node::processor::Charge>,
    /// The reconciliation job: the refund of the charge it matches, not yet
    /// booked: it books the charge and the refund in one transaction.
    pub(crate) refund: Option<String>,
}

impl Handling {
    /// Request `req`, numbered `id`, as it arrives at `node`.
    pub(crate) fn new(node: NodeId, id: ReqId, req: Request) -> Handling {
        Handling {
            node,
            id,
            req,
            phase: Phase::Receive,
            token: 0,
            charge: None,
            payment: None,
            rows: 0,
            deadline: None,
            lock: None,
            existing: None,
            lost_claim: false,
            failed: false,
            todo: Vec::new(),
            refund: None,
        }
    }

    /// It is the outbox's relay, not a request.
    pub fn is_relay(&self) -> bool {
        matches!(self.req.body, crate::http::Body::Relay)
    }

    /// It is a task that answers no one: the outbox's relay or the reconciliation job.
    pub fn is_task(&self) -> bool {
        matches!(
            self.req.body,
            crate::http::Body::Relay | crate::http::Body::Reconcile
        )
    }
}

/// A key record as the API reads it back from its store.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stored {
    /// The request finished with a definite answer, stored to replay. A
    /// record that is not completed is a claim: some request is working on it.
    pub completed: bool,
    pub hash: String,
    pub code: u16,
    pub payment: String,
    pub amount: i64,
    /// When its owner took the claim. In Postgres it is also the owner's
    /// fencing token: a takeover writes a new one, and every write of the
    /// owner checks that the token is still its own.
    pub locked_at: Millis,
}

impl Stored {
    /// The record kept in Redis (or the in-process map).
    pub(crate) fn record(&self) -> KeyRecord {
        KeyRecord {
            hash: self.hash.clone(),
            done: self.completed.then(|| {
                (
                    self.code,
                    Paid {
                        payment: self.payment.clone(),
                        amount: self.amount,
                    },
                )
            }),
        }
    }

    /// The record a key store answered to a read of the key (Redis `GET`,
    /// `SELECT … FROM idempotency_keys`, the in-process map), if it has one.
    pub(crate) fn read(found: Input, now: Millis) -> Option<Stored> {
        match found {
            Input::Redis(redis::Reply::Bulk(redis::Value::Key(r))) => {
                Some(Stored::from_record(r, now))
            }
            Input::Sql(Outcome::Ok { rows, .. }) => rows.first().map(|r| Stored::from_row(r)),
            Input::Memory(m) => m,
            _ => None,
        }
    }

    /// The answer stored is a definite refusal ([`http::refuses`]): the app
    /// was told the operation failed under this key.
    pub(crate) fn refused(&self) -> bool {
        self.completed && http::refuses(self.code)
    }

    pub(crate) fn from_record(r: KeyRecord, now: Millis) -> Stored {
        let (code, paid) = r.done.map_or((0, None), |(c, p)| (c, Some(p)));
        Stored {
            completed: paid.is_some(),
            hash: r.hash,
            code,
            amount: paid.as_ref().map_or(0, |p| p.amount),
            payment: paid.map(|p| p.payment).unwrap_or_default(),
            locked_at: now,
        }
    }

    /// A row of `idempotency_keys` as `SELECT *` returns it.
    pub(crate) fn from_row(row: &[Value]) -> Stored {
        let get = |c: &str| cell(row, &KEY_COLUMNS, c).unwrap_or(&Value::Null);
        let (payment, amount) = match get("response_body") {
            Value::Paid(p) => (p.payment.clone(), p.amount),
            _ => (String::new(), 0),
        };
        Stored {
            completed: get("status").as_text() == Some("completed"),
            hash: get("request_hash")
                .as_text()
                .unwrap_or_default()
                .to_string(),
            code: get("response_code").as_int().unwrap_or(0) as u16,
            payment,
            amount,
            locked_at: Millis(get("locked_at").as_int().unwrap_or(0) as u64),
        }
    }
}

/// The value in column `name` of `row`, whose columns are `columns`: `None`
/// for a column it does not have (never another column's value).
pub(crate) fn cell<'a>(row: &'a [Value], columns: &[&str], name: &str) -> Option<&'a Value> {
    columns
        .iter()
        .position(|c| *c == name)
        .and_then(|i| row.get(i))
}

/// What a handler's last call returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Input {
    Start,
    Redis(redis::Reply),
    Sql(Outcome),
    Charged(String, bool),
    /// The processor refused the charge (a definite answer).
    Refused(ErrorCode),
    /// The processor's search by key: the charge and its amount, or none.
    Found(Option<(String, i64)>),
    /// The processor's list of charges.
    Listed(Vec<crate::node::processor::Charge>),
    /// The mail service accepted the email.
    Emailed,
    Memory(Option<Stored>),
    Stored,
    /// The call out got no answer in time.
    Timeout,
}

/// A call out of the handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Call {
    Redis(redis::Cmd),
    Sql(Stmt),
    Charge(i64, Option<String>),
    /// Ask the processor for the charge made with this key.
    FindCharge(String),
    /// Ask the processor for every charge it made.
    ListCharges,
    /// Email the customer the receipt of a payment (with a message id, or none).
    Email(Option<String>, String),
    /// Work inside the process (the in-memory map): no message, the result is immediate.
    Local(Input),
}

/// A handler's next move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Move {
    Go(Phase, Call),
    Respond(u16, Reply, bool),
}

impl Move {
    pub(crate) fn error(status: u16, code: ErrorCode) -> Move {
        Move::Respond(status, Reply::Error(code), false)
    }
}

/// An idempotency key as the key store keeps it: under its operation's
/// method and path where `Toggle::ScopedKey` says so (`POST /charges:K1`),
/// else as sent (`K1`). Written out only where a phase sends it (a handler
/// runs a rule per reply, and a quarter of them do not name the key).
#[derive(Clone, Debug)]
pub(crate) struct StoreKey {
    /// The body whose method and path scope the key ([`Body::scope`]), written
    /// out with the key (it was a string made at every step).
    scope: Option<Body>,
    key: KeyId,
}

impl StoreKey {
    /// `req`'s key, if it has one, scoped or not.
    pub(crate) fn of(req: &Request, scoped: bool) -> Option<StoreKey> {
        req.key.map(|key| StoreKey {
            scope: scoped.then(|| req.body.clone()),
            key,
        })
    }

    /// The key written out (`POST /charges:K1` or `K1`), into a string with room for it.
    pub(crate) fn text(&self) -> String {
        crate::text::with_room(32, format_args!("{self}"))
    }
}

impl std::fmt::Display for StoreKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(body) = &self.scope {
            write!(f, "{}:", body.scope())?;
        }
        self.key.fmt(f)
    }
}

/// `WHERE user_id = … AND key = …`: keys are scoped per user.
pub(crate) fn key_cond(user: i64, key: &str) -> Vec<Cond> {
    vec![
        Cond::Eq("user_id", Value::Int(user)),
        Cond::Eq("key", Value::text(key)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::PAYMENT_COLUMNS;

    /// Regression: `col()` answered column 0 for a name the table lacks, so a
    /// misspelt column read the row's id as if it were the column asked for.
    #[test]
    fn an_unknown_column_has_no_value() {
        let row = [
            Value::text("pay_1"),
            Value::Int(42),
            Value::Int(100),
            Value::Null,
        ];
        assert_eq!(
            cell(&row, &PAYMENT_COLUMNS, "amount"),
            Some(&Value::Int(100))
        );
        assert_eq!(cell(&row, &PAYMENT_COLUMNS, "amout"), None);
        assert_eq!(cell(&row[..2], &PAYMENT_COLUMNS, "amount"), None);
    }
}
