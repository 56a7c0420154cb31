//! The catalogue: every scenario of the lesson as static data, in the lesson's
//! order, keyed by [`ScenarioId`]. The page derives its picker, the URL's
//! `scenario`, the progress, the "N of M" counts and the fragments from it, and
//! each language's text tables are arrays of [`ScenarioId::COUNT`] entries.

use super::*;

macro_rules! catalogue {
    ($($(#[$doc:meta])* $v:ident = $id:literal,)*) => {
        /// A scenario of the lesson: the key of the catalogue and of every text
        /// table (a table is an array of [`ScenarioId::COUNT`] entries in this order).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum ScenarioId {
            $($(#[$doc])* $v,)*
        }

        impl ScenarioId {
            /// Every scenario, in the picker's order.
            pub const ALL: [ScenarioId; [$($id),*].len()] = [$(ScenarioId::$v),*];

            /// Its stable id (URLs, fragments' file names, test ids).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ScenarioId::$v => $id,)*
                }
            }
        }
    };
}

catalogue! {
    NaivePost = "naive-post",
    IdempotencyKey = "idempotency-key",
    ConditionalUpdate = "conditional-update",
    CounterIncrement = "counter-increment",
    ConcurrentDuplicates = "concurrent-duplicates",
    InMemoryStore = "in-memory-store",
    KeyReuseDifferentBody = "key-reuse-different-body",
    TtlExpiry = "ttl-expiry",
    CrashAfterCharge = "crash-after-charge",
    TransactionIsNotIdempotency = "transaction-is-not-idempotency",
    ConsumerRedelivery = "consumer-redelivery",
    NewKeyPerRetry = "new-key-per-retry",
    StatusTransition = "status-transition",
    ReceiptEmail = "receipt-email",
    LatePut = "late-put",
    KeyScope = "key-scope",
}

impl ScenarioId {
    /// How many scenarios there are: the length of every text table.
    pub const COUNT: usize = ScenarioId::ALL.len();

    /// The scenario with this id.
    pub fn parse(id: &str) -> Option<ScenarioId> {
        ScenarioId::ALL.into_iter().find(|s| s.as_str() == id)
    }

    /// Its place in [`ScenarioId::ALL`] (and in every text table).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The scenario itself.
    pub fn scenario(self) -> &'static Scenario {
        &CATALOGUE[self.index()]
    }

    /// Its group in the picker.
    pub fn group(self) -> Group {
        self.scenario().group
    }

    /// The scenarios of `group`, in order.
    pub fn of(group: Group) -> impl Iterator<Item = ScenarioId> {
        ScenarioId::ALL
            .into_iter()
            .filter(move |s| s.group() == group)
    }
}

impl std::fmt::Display for ScenarioId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ScenarioId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

const PAY: Op = Op::new(OpSpec::Charge(100));
const DEFAULT_INVARIANTS: &[Invariant] = &[
    Invariant::AtMostOnceCharge,
    Invariant::LedgerMatchesCharges,
    Invariant::DefiniteAnswer,
    Invariant::AppShowsWhatHappened,
];

/// What a payment scenario shows: the processor's charges and the ledger's rows.
const PAYMENT_FIGURES: &[Figure] = &[Figure::Charges, Figure::LedgerRows];

const LOSE_FIRST_RESPONSE: &[FaultRule] = &[FaultRule::lose_first_response()];

const fn base(id: ScenarioId, group: Group, handler: Handler, ops: &'static [Op]) -> Scenario {
    Scenario {
        id,
        group,
        handler,
        apis: 1,
        ops,
        retry: Retry::MOBILE,
        links: Links::DEFAULT,
        faults: LOSE_FIRST_RESPONSE,
        crashes: &[],
        script: &[],
        toggles: &[],
        invariants: DEFAULT_INVARIANTS,
        auto_restart: None,
        shows: PAYMENT_FIGURES,
        ledger_key: false,
        limits: &[],
        explore_losses: 2,
    }
}

const fn charge(store: Option<KeyStore>) -> Handler {
    Handler::Charge {
        store,
        transactional: false,
        receipt: false,
    }
}

/// Every scenario, in [`ScenarioId::ALL`]'s order (a test checks each entry's id).
static CATALOGUE: [Scenario; ScenarioId::COUNT] = {
    use Group::*;
    use ScenarioId as Id;
    use Toggle::*;
    [
        Scenario {
            toggles: &[(NoRetry, false)],
            ..base(Id::NaivePost, Seed, charge(None), &[PAY])
        },
        Scenario {
            toggles: &[
                (AtomicClaim, true),
                (Fingerprint, false),
                (KeyToProcessor, true),
                (NewKeyPerRetry, false),
                (NoRetry, false),
                // The same fault under three designs of what is stored on an error.
                (ProcessorTimeout, false),
                (ErrorsReplayed, false),
                (DeleteOnError, false),
            ],
            ledger_key: true,
            ..base(
                Id::IdempotencyKey,
                Seed,
                charge(Some(KeyStore::Redis)),
                &[PAY],
            )
        },
        Scenario {
            toggles: &[(VersionCheck, true), (OtherWriter, false)],
            invariants: &[Invariant::BalanceMatches, Invariant::DefiniteAnswer],
            script: &[Scripted {
                when: When::At(Millis(10)),
                command: Command::ExternalDebit { amount: 30 },
                only_with: Some(OtherWriter),
            }],
            shows: &[Figure::Account],
            ..base(
                Id::ConditionalUpdate,
                Seed,
                Handler::Debit,
                &[Op::new(OpSpec::Debit {
                    amount: 20,
                    expected_version: 5,
                })],
            )
        },
        Scenario {
            toggles: &[(OpDedup, false), (UniqueConstraint, true)],
            invariants: &[Invariant::LikesMatchOps, Invariant::DefiniteAnswer],
            shows: &[Figure::Likes],
            ..base(
                Id::CounterIncrement,
                Seed,
                Handler::Like,
                &[Op::new(OpSpec::Like("op_7f3a"))],
            )
        },
        Scenario {
            apis: 2,
            toggles: &[
                (UniqueConstraint, false),
                (AtomicClaim, false),
                (KeyToProcessor, false),
            ],
            ledger_key: true,
            faults: &[],
            links: Links {
                mobile: crate::net::Latency {
                    base: 80,
                    jitter: 0,
                },
                ..Links::DEFAULT
            },
            explore_losses: 1,
            ..base(
                Id::ConcurrentDuplicates,
                Pitfall,
                charge(Some(KeyStore::Postgres)),
                &[Op { copies: 2, ..PAY }],
            )
        },
        Scenario {
            apis: 2,
            toggles: &[(SharedStore, false)],
            limits: &[DAY_LATER_UNBOOKED, CHECK_THEN_ACT],
            ..base(
                Id::InMemoryStore,
                Pitfall,
                charge(Some(KeyStore::Memory)),
                &[PAY],
            )
        },
        Scenario {
            toggles: &[(Fingerprint, false)],
            faults: &[],
            // Its two operations share one key: only the charge count is watched.
            limits: &[Limit {
                breaks: &[Invariant::AtMostOnceCharge],
                ..CHECK_THEN_ACT
            }],
            invariants: &[
                Invariant::AtMostOnceCharge,
                Invariant::ResponseMatchesRequest,
                Invariant::AppShowsWhatHappened,
            ],
            explore_losses: 1,
            ..base(
                Id::KeyReuseDifferentBody,
                Pitfall,
                charge(Some(KeyStore::Redis)),
                &[
                    PAY,
                    Op {
                        key: KeyMode::ReuseOf(0),
                        ..Op::new(OpSpec::Charge(150))
                    },
                ],
            )
        },
        Scenario {
            toggles: &[(LongTtl, false), (ShortDeadline, false)],
            limits: &[DAY_LATER_UNBOOKED, CHECK_THEN_ACT],
            // An app that keeps a failed payment and retries it for two days, past
            // the key's 24 hours.
            retry: Retry {
                deadline: Millis::hours(48),
                ..Retry::MOBILE
            },
            script: &[Scripted {
                when: When::ClientTimedOut { op: 0, attempt: 1 },
                command: Command::AdvanceClock(Millis::hours(25)),
                only_with: None,
            }],
            ..base(
                Id::TtlExpiry,
                Pitfall,
                charge(Some(KeyStore::Redis)),
                &[PAY],
            )
        },
        Scenario {
            toggles: &[
                (SameTransaction, false),
                (KeyToProcessor, false),
                (CrashBeforeCommit, false),
            ],
            faults: &[],
            crashes: &[
                CrashRule {
                    node: NodeId::Api(0),
                    after: Phase::Commit,
                    times: 1,
                    if_toggle: Some((CrashBeforeCommit, false)),
                },
                CrashRule {
                    node: NodeId::Api(0),
                    after: Phase::Charge,
                    times: 1,
                    if_toggle: Some((CrashBeforeCommit, true)),
                },
            ],
            auto_restart: Some(Millis(800)),
            retry: Retry {
                max_attempts: 8,
                ..Retry::MOBILE
            },
            ..base(
                Id::CrashAfterCharge,
                Pitfall,
                charge(Some(KeyStore::Redis)),
                &[PAY],
            )
        },
        Scenario {
            toggles: &[(IdempotencyKey, false), (KeyToProcessor, false)],
            ledger_key: true,
            ..base(
                Id::TransactionIsNotIdempotency,
                Pitfall,
                Handler::Charge {
                    store: None,
                    transactional: true,
                    receipt: false,
                },
                &[PAY],
            )
        },
        Scenario {
            toggles: &[
                (ConsumerDedup, false),
                (UniqueConstraint, true),
                (IdempotentProducer, false),
            ],
            faults: &[FaultRule {
                matcher: Matcher::ProduceAck,
                verdict: Verdict::Drop,
                skip: 0,
                times: 1,
            }],
            crashes: &[CrashRule {
                node: NodeId::Consumer,
                after: Phase::Commit,
                times: 1,
                if_toggle: None,
            }],
            auto_restart: Some(Millis(800)),
            invariants: &[Invariant::BalanceMatches],
            shows: &[Figure::Account],
            explore_losses: 1,
            ..base(Id::ConsumerRedelivery, Pitfall, Handler::Pipeline, &[])
        },
        Scenario {
            toggles: &[(NewKeyPerRetry, true)],
            limits: &[DAY_LATER_UNBOOKED, CHECK_THEN_ACT],
            explore_losses: 1,
            ..base(
                Id::NewKeyPerRetry,
                Pitfall,
                charge(Some(KeyStore::Redis)),
                &[PAY],
            )
        },
        Scenario {
            // Off by default, the flag-first handler: the transition to PAID commits on
            // its own, before the charge and the ledger row. When the UPDATE's answer is
            // lost, or the process dies after it, the retry's UPDATE finds 0 rows and
            // answers 200 PAID with nothing charged (the app shows what did not happen);
            // after the charge, the charge never gets its row. The row-count check stops
            // the second charge, not the half-done first one. With the lease (defended)
            // PAID commits with the ledger row and a retry resumes the payment.
            toggles: &[(RowCountCheck, true), (PayingLease, false)],
            shows: &[Figure::Charges, Figure::LedgerRows, Figure::OrderStatus],
            ..base(
                Id::StatusTransition,
                Pitfall,
                Handler::PayOrder,
                &[Op::new(OpSpec::PayOrder {
                    order: 42,
                    amount: 100,
                })],
            )
        },
        Scenario {
            // The ADR's handler, safe for the charge, also emails a receipt.
            toggles: &[(AtomicClaim, true), (KeyToProcessor, true), (Outbox, false)],
            ledger_key: true,
            // The mail service sends the receipt; its answer is lost.
            faults: &[FaultRule {
                matcher: Matcher::Link(NodeId::Api(0), NodeId::Mail),
                verdict: Verdict::Drop,
                skip: 1,
                times: 1,
            }],
            auto_restart: Some(Millis(800)),
            invariants: &[
                Invariant::AtMostOnceCharge,
                Invariant::LedgerMatchesCharges,
                Invariant::DefiniteAnswer,
                Invariant::OneReceipt,
                Invariant::AppShowsWhatHappened,
            ],
            shows: &[Figure::Charges, Figure::LedgerRows, Figure::Receipts],
            ..base(
                Id::ReceiptEmail,
                Pitfall,
                Handler::Charge {
                    store: Some(KeyStore::Redis),
                    transactional: false,
                    receipt: true,
                },
                &[PAY],
            )
        },
        Scenario {
            toggles: &[(IfMatch, false)],
            invariants: &[Invariant::NewerWriteKept, Invariant::DefiniteAnswer],
            // The user sets another email on the web while the app's answer is lost.
            script: &[Scripted {
                when: When::At(Millis(1_000)),
                command: Command::ExternalPut,
                only_with: None,
            }],
            shows: &[Figure::Profile],
            ..base(
                Id::LatePut,
                Pitfall,
                Handler::Put,
                &[Op::new(OpSpec::Put {
                    email: EMAILS[1],
                    version: 5,
                })],
            )
        },
        Scenario {
            // The ADR's handler; the app derives the key from the order and sends
            // it to pay, then to refund.
            toggles: &[
                (AtomicClaim, true),
                (KeyToProcessor, true),
                (ScopedKey, false),
                (Fingerprint, false),
            ],
            ledger_key: true,
            faults: &[],
            invariants: &[
                Invariant::AtMostOnceCharge,
                Invariant::LedgerMatchesCharges,
                Invariant::DefiniteAnswer,
                Invariant::ResponseMatchesRequest,
                Invariant::RefundMade,
                Invariant::AppShowsWhatHappened,
            ],
            explore_losses: 1,
            ..base(
                Id::KeyScope,
                Pitfall,
                charge(Some(KeyStore::Redis)),
                &[
                    Op {
                        key: KeyMode::Named("order-42"),
                        ..PAY
                    },
                    Op {
                        key: KeyMode::Named("order-42"),
                        ..Op::new(OpSpec::Refund(100))
                    },
                ],
            )
        },
    ]
};

/// Every scenario, in the picker's order.
pub fn all() -> &'static [Scenario] {
    &CATALOGUE
}

/// The scenario with this id.
pub fn by_id(id: &str) -> Option<Scenario> {
    ScenarioId::parse(id).map(|s| s.scenario().clone())
}

/// Every scenario id, in order.
pub fn ids() -> impl Iterator<Item = &'static str> {
    ScenarioId::ALL.into_iter().map(ScenarioId::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_is_in_the_order_of_its_ids() {
        for (s, id) in CATALOGUE.iter().zip(ScenarioId::ALL) {
            assert_eq!(s.id, id);
            assert_eq!(ScenarioId::parse(id.as_str()), Some(id));
        }
    }
}
