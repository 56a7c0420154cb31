//! The switches a reader can flip ([`Toggle`]: defences, bugs, variants of the
//! story) and a set of them ([`Toggles`], a bit set).

/// A switch the reader can flip. Most are defences; some are bugs or
/// variants of the scenario's story.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Toggle {
    /// The client sends an Idempotency-Key and the API deduplicates by it.
    IdempotencyKey,
    /// The dedup table has its unique index (idempotency_keys, like_ops, processed_messages).
    UniqueConstraint,
    /// Claim the key atomically (SET NX / INSERT … ON CONFLICT DO NOTHING) instead of check-then-act.
    AtomicClaim,
    /// Bind the key to a hash of the request; a different payload gets 422.
    Fingerprint,
    /// Store the key under the request's method and path too
    /// (`idem:u42:POST /refunds:K1`): another endpoint never finds its answer.
    ScopedKey,
    /// Write the key and its response in the same Postgres transaction as the effect.
    SameTransaction,
    /// Pass the key down to the card processor, which deduplicates charges by it.
    KeyToProcessor,
    /// Keys live in a store shared by all instances (off: a HashMap per instance).
    SharedStore,
    /// Keep keys 7 days instead of 24 h.
    LongTtl,
    /// Variant: the client stops retrying after [`SHORT_DEADLINE`](crate::timing::SHORT_DEADLINE) (1 h, under the
    /// key's TTL) instead of its policy's own deadline.
    ShortDeadline,
    /// Variant: the client sends one attempt and never retries (its policy's
    /// `max_attempts` is 1): no duplicate, and no answer after a lost one.
    NoRetry,
    /// UPDATE … WHERE version = expected_version (off: a blind debit).
    VersionCheck,
    /// A PUT carries `If-Match` with the version the client read; the server
    /// writes only if it still matches, else 412 (off: the PUT overwrites blindly).
    IfMatch,
    /// INSERT INTO like_ops … before the increment; increment only on 1 row.
    OpDedup,
    /// Check the rows affected by the status transition before charging.
    RowCountCheck,
    /// The order goes NEW → PAYING (a lease, its start the fencing token) before
    /// the charge, the order id is the processor's key, and PAID commits with the
    /// ledger row; a retry that finds PAYING past its lease takes it over and asks
    /// the processor again with the same key. Off: the flag commits before the charge.
    PayingLease,
    /// The consumer records message ids in processed_messages in the effect's transaction.
    ConsumerDedup,
    /// Kafka's enable.idempotence=true: the broker drops producer retries by (producer id, seq).
    IdempotentProducer,
    /// Bug: the client makes a new key on every retry.
    NewKeyPerRetry,
    /// Variant: another writer debits the account before the client's request lands.
    OtherWriter,
    /// Variant: the crash comes after the charge and before the ledger commit.
    CrashBeforeCommit,
    /// Variant: the processor charges and its answer is lost (instead of the
    /// scenario's own faults): the handler times out after the charge.
    ProcessorTimeout,
    /// Variant, Stripe's behaviour: a timeout after the claim is stored under
    /// the key as its final answer (503) and replayed to every retry.
    ErrorsReplayed,
    /// Variant, AWS Lambda Powertools' behaviour: a timeout after the claim
    /// deletes the key, so the next retry runs the handler afresh. With neither
    /// this nor [`Toggle::ErrorsReplayed`], the lab's ADR: nothing is stored, the
    /// claim stays until its lease runs out, and a retry resumes.
    DeleteOnError,
    /// The transactional outbox: the handler writes the receipt into `outbox` in
    /// the ledger row's transaction, and a relay sends it after the commit, at
    /// least once, with the message id that the mail service deduplicates by.
    Outbox,
}

/// What a toggle is, for grouping on the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToggleKind {
    Defence,
    Bug,
    Variant,
}

impl Toggle {
    pub const ALL: [Toggle; 25] = [
        Toggle::IdempotencyKey,
        Toggle::UniqueConstraint,
        Toggle::AtomicClaim,
        Toggle::Fingerprint,
        Toggle::ScopedKey,
        Toggle::SameTransaction,
        Toggle::KeyToProcessor,
        Toggle::SharedStore,
        Toggle::LongTtl,
        Toggle::ShortDeadline,
        Toggle::NoRetry,
        Toggle::VersionCheck,
        Toggle::IfMatch,
        Toggle::OpDedup,
        Toggle::RowCountCheck,
        Toggle::PayingLease,
        Toggle::ConsumerDedup,
        Toggle::IdempotentProducer,
        Toggle::NewKeyPerRetry,
        Toggle::OtherWriter,
        Toggle::CrashBeforeCommit,
        Toggle::ProcessorTimeout,
        Toggle::ErrorsReplayed,
        Toggle::DeleteOnError,
        Toggle::Outbox,
    ];

    pub fn kind(self) -> ToggleKind {
        match self {
            Toggle::NewKeyPerRetry => ToggleKind::Bug,
            // The client's policy, not the server's defence: with it the app stops
            // before the key expires, and never learns the outcome (a variant of the
            // story, so `defended()` keeps the story's retry).
            // What the idempotency layer does on an error is a choice of design the
            // lesson compares (IETF/ADR, Stripe, Powertools), not a defence.
            Toggle::OtherWriter
            | Toggle::CrashBeforeCommit
            | Toggle::ShortDeadline
            | Toggle::NoRetry
            | Toggle::ProcessorTimeout
            | Toggle::ErrorsReplayed
            | Toggle::DeleteOnError => ToggleKind::Variant,
            _ => ToggleKind::Defence,
        }
    }

    /// Stable id for URLs and test ids.
    pub fn id(self) -> &'static str {
        match self {
            Toggle::IdempotencyKey => "idempotency-key",
            Toggle::UniqueConstraint => "unique-constraint",
            Toggle::AtomicClaim => "atomic-claim",
            Toggle::Fingerprint => "fingerprint",
            Toggle::ScopedKey => "scoped-key",
            Toggle::SameTransaction => "same-transaction",
            Toggle::KeyToProcessor => "key-to-processor",
            Toggle::SharedStore => "shared-store",
            Toggle::LongTtl => "long-ttl",
            Toggle::ShortDeadline => "short-deadline",
            Toggle::NoRetry => "no-retry",
            Toggle::VersionCheck => "version-check",
            Toggle::IfMatch => "if-match",
            Toggle::OpDedup => "op-dedup",
            Toggle::RowCountCheck => "row-count-check",
            Toggle::PayingLease => "paying-lease",
            Toggle::ConsumerDedup => "consumer-dedup",
            Toggle::IdempotentProducer => "idempotent-producer",
            Toggle::NewKeyPerRetry => "new-key-per-retry",
            Toggle::OtherWriter => "other-writer",
            Toggle::CrashBeforeCommit => "crash-before-commit",
            Toggle::ProcessorTimeout => "processor-timeout",
            Toggle::ErrorsReplayed => "errors-replayed",
            Toggle::DeleteOnError => "delete-on-error",
            Toggle::Outbox => "outbox",
        }
    }

    pub fn from_id(id: &str) -> Option<Toggle> {
        Toggle::ALL.into_iter().find(|t| t.id() == id)
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// The set of toggles that are on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Toggles(u32);

impl Toggles {
    pub fn of(on: &[Toggle]) -> Toggles {
        Toggles(on.iter().fold(0, |acc, t| acc | t.bit()))
    }
    pub fn has(self, t: Toggle) -> bool {
        self.0 & t.bit() != 0
    }
    /// The set with `t` on or off. The idempotency layer does one thing on an
    /// error: switching [`Toggle::ErrorsReplayed`] on switches
    /// [`Toggle::DeleteOnError`] off, and the other way round.
    pub fn with(self, t: Toggle, on: bool) -> Toggles {
        if on {
            let rival = match t {
                Toggle::ErrorsReplayed => Toggle::DeleteOnError.bit(),
                Toggle::DeleteOnError => Toggle::ErrorsReplayed.bit(),
                _ => 0,
            };
            Toggles((self.0 | t.bit()) & !rival)
        } else {
            Toggles(self.0 & !t.bit())
        }
    }
}
