//! The idempotency record kept under a key, typed: what the API stores in
//! Redis, in its in-process map, or across the columns of `idempotency_keys`,
//! and reads back. Its JSON is only how a pane shows it ([`crate::text`]).

/// The answer of a completed payment: the body replayed for the key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Paid {
    pub payment: String,
    pub amount: i64,
}

/// A key's record: a claim (`done: None`, some request is working on it) or
/// a definite answer stored to replay, with the fingerprint of the request
/// that made it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyRecord {
    pub hash: String,
    /// The status code and body of the answer, once the request finished. A
    /// timeout's 503 stored as final (`Toggle::ErrorsReplayed`, Stripe's way)
    /// keeps its error code in `Paid::payment`.
    pub done: Option<(u16, Paid)>,
}
