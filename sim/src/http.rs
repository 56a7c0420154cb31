//! HTTP requests and responses between the mobile client and the API, with
//! the status codes of `draft-ietf-httpapi-idempotency-key-header`: 400 for a
//! missing key, 422 for a key reused with another payload, 409 while the first
//! request with the key is still being processed.

use crate::time::Millis;
use std::fmt::{self, Write as _};

/// Index of a client operation (a conceptual request such as "Pay $100").
pub type OpId = usize;

/// A client-generated idempotency key: the index into the client's key list.
/// The UUID itself is `World::client.keys[k]`; texts show it as `K1`, `K2`, …
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyId(pub usize);

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "K{}", self.0 + 1)
    }
}

/// What a request asks for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Body {
    /// `POST /charges {amount}`
    Charge { amount: i64 },
    /// `POST /refunds {amount}`: the payment's money back.
    Refund { amount: i64 },
    /// `POST /accounts/1/debit {amount, expected_version}`
    Debit { amount: i64, expected_version: i64 },
    /// `GET /accounts/1`
    ReadAccount,
    /// `POST /posts/1/like {op_id}`
    Like { op_id: String },
    /// `POST /orders/42/pay`
    PayOrder { order: i64, amount: i64 },
    /// Not a request: the outbox's relay, a task of the API process
    /// (`node::api`), run by the same runtime as a request's handler.
    Relay,
    /// Not a request: the reconciliation job (`node::reconciler`), run by the
    /// same runtime in a process of its own.
    Reconcile,
    /// `PUT /profile {email}` with `If-Match: "<version>"`, the version the client read.
    Put { email: &'static str, version: i64 },
    /// `GET /profile`
    ReadProfile,
    /// `GET /payments?key=K1` (`/refunds`, `/orders/42`, `/posts/1/likes/op_7f3a`):
    /// what became of operation `of`, asked by its key once the app has
    /// stopped retrying it (an idempotent read; the API reconciles first).
    /// `since`: when the app sent the operation's latest attempt, so the API
    /// knows until when an attempt may still arrive and be charged.
    Status { of: Asked, since: Millis },
}

/// The operation a status read asks about, as the app knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Asked {
    Payment(i64),
    Refund(i64),
    Order { order: i64, amount: i64 },
    Like(&'static str),
}

impl Asked {
    /// The money it moves, as its request's [`Body::amount`] (a refund's is negative).
    pub fn amount(self) -> i64 {
        match self {
            Asked::Payment(a) | Asked::Order { amount: a, .. } => a,
            Asked::Refund(a) => -a,
            Asked::Like(_) => 0,
        }
    }
}

impl Body {
    pub fn method(&self) -> &'static str {
        match self {
            Body::ReadAccount | Body::ReadProfile | Body::Status { .. } => "GET",
            Body::Put { .. } => "PUT",
            _ => "POST",
        }
    }

    pub fn path(&self) -> String {
        let mut s = String::new();
        let _ = self.write_path(&mut s);
        s
    }

    fn write_path(&self, f: &mut impl fmt::Write) -> fmt::Result {
        match self {
            Body::Charge { .. } => f.write_str("/charges"),
            Body::Refund { .. } => f.write_str("/refunds"),
            Body::Debit { .. } => f.write_str("/accounts/1/debit"),
            Body::ReadAccount => f.write_str("/accounts/1"),
            Body::Like { .. } => f.write_str("/posts/1/like"),
            Body::PayOrder { order, .. } => write!(f, "/orders/{order}/pay"),
            Body::Relay | Body::Reconcile => Ok(()),
            Body::Put { .. } | Body::ReadProfile => f.write_str("/profile"),
            Body::Status { of, .. } => match of {
                Asked::Payment(_) => f.write_str("/payments"),
                Asked::Refund(_) => f.write_str("/refunds"),
                Asked::Order { order, .. } => write!(f, "/orders/{order}"),
                Asked::Like(op_id) => write!(f, "/posts/1/likes/{op_id}"),
            },
        }
    }

    /// What an idempotency key is scoped to (`Toggle::ScopedKey`): the method
    /// and path of the operation it names (a status read names its operation's).
    pub fn scope(&self) -> String {
        match self {
            Body::Status {
                of: Asked::Refund(_),
                ..
            } => "POST /refunds".into(),
            Body::Status { .. } => "POST /charges".into(),
            b => format!("{} {}", b.method(), b.path()),
        }
    }

    /// The JSON body as sent.
    pub fn json(&self) -> String {
        let mut s = String::new();
        let _ = self.write_json(&mut s);
        s
    }

    fn write_json(&self, f: &mut impl fmt::Write) -> fmt::Result {
        match self {
            Body::Charge { amount } => write!(f, "{{\"amount\":{amount},\"currency\":\"usd\"}}"),
            Body::Refund { amount } | Body::PayOrder { amount, .. } => {
                write!(f, "{{\"amount\":{amount}}}")
            }
            Body::Debit {
                amount,
                expected_version,
            } => {
                write!(
                    f,
                    "{{\"amount\":{amount},\"expected_version\":{expected_version}}}"
                )
            }
            Body::ReadAccount
            | Body::ReadProfile
            | Body::Relay
            | Body::Reconcile
            | Body::Status { .. } => Ok(()),
            Body::Put { email, .. } => write!(f, "{{\"email\":\"{email}\"}}"),
            Body::Like { op_id } => write!(f, "{{\"op_id\":\"{op_id}\"}}"),
        }
    }

    /// Money the request moves, if any (a refund's is negative).
    pub fn amount(&self) -> Option<i64> {
        match self {
            Body::Refund { amount } => Some(-amount),
            Body::Charge { amount }
            | Body::Debit { amount, .. }
            | Body::PayOrder { amount, .. } => Some(*amount),
            Body::ReadAccount
            | Body::ReadProfile
            | Body::Put { .. }
            | Body::Like { .. }
            | Body::Status { .. }
            | Body::Relay
            | Body::Reconcile => None,
        }
    }

    /// The request fingerprint: a short FNV-1a hash of method, path and body.
    /// Hashed as it is written, without a string (the explorer asks for it at
    /// every request a handler takes).
    pub fn fingerprint(&self) -> String {
        struct Fnv(u32);
        impl fmt::Write for Fnv {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                for b in s.bytes() {
                    self.0 ^= u32::from(b);
                    self.0 = self.0.wrapping_mul(0x0100_0193);
                }
                Ok(())
            }
        }
        let mut h = Fnv(0x811c_9dc5);
        let _ = (h.write_str(self.method()), h.write_str(" "));
        let _ = (
            self.write_path(&mut h),
            h.write_str(" "),
            self.write_json(&mut h),
        );
        // Eight hex digits, written without the formatting machinery.
        (0..8)
            .rev()
            .filter_map(|i| char::from_digit((h.0 >> (4 * i)) & 0xF, 16))
            .collect()
    }
}

/// A request on the wire. `op` and `attempt` are the simulation's ground
/// truth (which conceptual operation this is); the server never reads them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    pub body: Body,
    pub key: Option<KeyId>,
    pub user: i64,
    pub op: OpId,
    pub attempt: u32,
    /// Which of the client's parallel request loops sent it.
    pub lane: usize,
    /// When the client sent it (its `Date` header): a server that keeps keys
    /// for a day refuses a request older than that, whose key it may have forgotten.
    pub sent: Millis,
}

impl Request {
    /// `POST /charges K1`
    pub fn label(&self) -> String {
        let mut s = format!("{} {}", self.body.method(), self.body.path());
        if let Some(k) = self.key {
            s.push_str(&format!(" {k}"));
        }
        s
    }
}

/// What a response carries.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Reply {
    Payment {
        id: String,
        amount: i64,
    },
    Account {
        balance: i64,
        version: i64,
    },
    Liked,
    /// A value the handler answers with: the order's status, the profile's email.
    Value(String),
    /// A machine-readable error code, as Stripe puts it in `error.code`.
    Error(ErrorCode),
}

/// The error codes an answer carries: typed, so the client and the narration
/// decide on the variant, never on its spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    BadRequest,
    IdempotencyKeyMissing,
    IdempotencyKeyInUse,
    IdempotencyKeyReused,
    /// Another request holds the order's PAYING lease: try again later.
    PaymentInProgress,
    VersionMismatch,
    PreconditionFailed,
    InternalError,
    UpstreamTimeout,
    /// A status read found no such operation: nothing was charged.
    NotFound,
    /// The request is older than the keys are kept (it waited a day on the way).
    RequestExpired,
    /// A status read cannot tell: the ledger has no such payment and the
    /// processor was never given the key to find it by.
    OutcomeUnknown,
}

impl ErrorCode {
    /// As the answer's body spells it: `idempotency_key_in_use`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::IdempotencyKeyMissing => "idempotency_key_missing",
            ErrorCode::IdempotencyKeyInUse => "idempotency_key_in_use",
            ErrorCode::IdempotencyKeyReused => "idempotency_key_reused",
            ErrorCode::PaymentInProgress => "payment_in_progress",
            ErrorCode::VersionMismatch => "version_mismatch",
            ErrorCode::PreconditionFailed => "precondition_failed",
            ErrorCode::InternalError => "internal_error",
            ErrorCode::UpstreamTimeout => "upstream_timeout",
            ErrorCode::NotFound => "not_found",
            ErrorCode::RequestExpired => "request_expired",
            ErrorCode::OutcomeUnknown => "outcome_unknown",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A response on the wire. `replayed` marks a stored response served again.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Response {
    pub status: u16,
    pub reply: Reply,
    pub replayed: bool,
    pub op: OpId,
    pub attempt: u32,
    pub lane: usize,
}

/// Whether an error answer with `status` tells the app the operation failed
/// for good: a 4xx, but for 409 (it retries) and 412 (it re-reads first).
pub fn refuses(status: u16) -> bool {
    (400..500).contains(&status) && !matches!(status, 409 | 412)
}

impl Response {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// `201 pay_1`, `409 idempotency_key_in_use`, `200 pay_1 (replay)`.
    pub fn label(&self) -> String {
        let detail = match &self.reply {
            Reply::Payment { id, .. } => id.clone(),
            Reply::Account { balance, version } => format!("balance={balance} v{version}"),
            Reply::Liked => "liked".into(),
            Reply::Value(v) => v.clone(),
            Reply::Error(code) => code.as_str().to_string(),
        };
        let mut s = format!("{} {detail}", self.status);
        if self.replayed {
            s.push_str(" (replay)");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_depends_on_the_body() {
        let a = Body::Charge { amount: 100 }.fingerprint();
        assert_eq!(a, Body::Charge { amount: 100 }.fingerprint());
        assert_ne!(a, Body::Charge { amount: 150 }.fingerprint());
        assert_eq!(a.len(), 8);
        // FNV-1a of the request line and the body as the page shows them.
        assert_eq!(
            a, "191922c9",
            "POST /charges {{\"amount\":100,\"currency\":\"usd\"}}"
        );
        let order = Body::PayOrder {
            order: 7,
            amount: 30,
        };
        assert_eq!(
            order.fingerprint(),
            "da136e01",
            "POST /orders/7/pay {{\"amount\":30}}"
        );
    }
}
