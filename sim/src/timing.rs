//! Every fixed duration of the model, documented once: the client's pauses,
//! the handlers' deadlines and leases, the keys' lifetimes, the pipeline's
//! timeouts, the relay's poll, and the clock jumps the reader and the proofs
//! make. The nodes and the proofs name them from here; the retry policy's
//! figures are the policy's (`scenario::retry`), and a scenario's own
//! durations are its data (`scenario::catalogue`).

use crate::time::Millis;

/// The client's pause between two of its operations.
pub const THINK_TIME: Millis = Millis(1_000);

/// How long after it stops retrying the app asks what became of an operation
/// ("checking"), and between two such asks.
pub const CHECK_AFTER: Millis = Millis(60_000);

/// How many times the app asks before it leaves the operation unknown.
pub const MAX_CHECKS: u32 = 5;

/// How long a handler waits for a store or the processor before it answers 503.
pub const STORE_DEADLINE: Millis = Millis(3_000);

/// How long a claim (a key marked `processing`) is held before another request
/// may take it over: the in-progress lease, apart from the result's TTL. It is
/// shorter than the client's retry window, so a claim whose owner died or gave
/// up is resumed by a retry; the takeover is fenced, so a slow owner that wakes
/// up after it cannot write. The order's `PAYING` lease of status-transition too.
pub const CLAIM_LEASE: Millis = Millis(3_000);

/// How long a key's result is kept: a day, as Stripe keeps its keys.
pub const TTL_DAY: Millis = Millis::hours(24);

/// The same under `Toggle::LongTtl`: a week.
pub const TTL_WEEK: Millis = Millis::hours(24 * 7);

/// How long the processor remembers an idempotency key: Stripe keeps a key
/// for at least 24 hours and prunes it after; a retry later than that is a
/// new request there.
pub const KEY_RETENTION: Millis = Millis::hours(24);

/// How long the outbox's relay waits before it polls again: after a failure,
/// and while its process is handling requests or its last poll found a receipt.
pub const RELAY_POLL: Millis = Millis(1_000);

/// How often the reconciliation job runs (`node::reconciler`): nightly, a
/// day after the run began and every day after.
pub const RECONCILE_EVERY: Millis = Millis::hours(24);

/// How long the producer waits for the broker's ack before it sends again.
pub const PRODUCER_TIMEOUT: Millis = Millis(500);

/// How long the broker waits for a delivered record's offset commit before it
/// takes the record back for redelivery (a consumer group's session timeout:
/// Kafka's `session.timeout.ms` was 10 s by default before 3.0).
pub const SESSION_TIMEOUT: Millis = Millis(10_000);

/// How long the consumer waits for Postgres to answer a statement before it
/// closes the connection (its transaction rolls back) and drops the record,
/// as a JDBC statement timeout does.
pub const STATEMENT_TIMEOUT: Millis = Millis(3_000);

/// The deadline of `Toggle::ShortDeadline`: 1 h, well under the key's 24 h.
pub const SHORT_DEADLINE: Millis = Millis::hours(1);

/// The clock jump of the truth table's `Fault::ClockPastTtl` and of the lab's
/// "+25 h": past a day's TTL and the processor's retention.
pub const PAST_TTL: Millis = Millis::hours(25);

/// The longest clock jump a command may make.
pub const MAX_JUMP: Millis = Millis::hours(24 * 30);
