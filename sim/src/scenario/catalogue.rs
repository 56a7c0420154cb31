//! The catalogue: every scenario of the lesson as data, in the lesson's order.

use super::*;

fn base(id: &'static str, group: Group, handler: Handler, ops: Vec<Op>) -> Scenario {
    Scenario {
        id,
        group,
        handler,
        apis: 1,
        ops,
        retry: Retry::MOBILE,
        links: Links::default(),
        faults: vec![FaultRule::lose_first_response()],
        crashes: Vec::new(),
        script: Vec::new(),
        toggles: Vec::new(),
        invariants: vec![
            Invariant::AtMostOnceCharge,
            Invariant::LedgerMatchesCharges,
            Invariant::DefiniteAnswer,
        ],
        auto_restart: None,
        expected_charge: Some(100),
        ledger_key: false,
        limits: Vec::new(),
    }
}

fn charge(store: Option<KeyStore>) -> Handler {
    Handler::Charge {
        store,
        transactional: false,
    }
}

/// Every scenario, in the picker's order: the four of the concept lesson, then the pitfalls.
pub fn all() -> Vec<Scenario> {
    use Group::*;
    use Toggle::*;
    let pay = Op::new(OpSpec::Charge(100));
    vec![
        base("naive-post", Seed, charge(None), vec![pay]),
        Scenario {
            toggles: vec![
                (AtomicClaim, true),
                (Fingerprint, false),
                (KeyToProcessor, true),
                (NewKeyPerRetry, false),
            ],
            ledger_key: true,
            ..base(
                "idempotency-key",
                Seed,
                charge(Some(KeyStore::Redis)),
                vec![pay],
            )
        },
        Scenario {
            toggles: vec![(VersionCheck, true), (OtherWriter, false)],
            invariants: vec![Invariant::BalanceMatches, Invariant::DefiniteAnswer],
            script: vec![Scripted {
                when: When::At(Millis(10)),
                command: Command::ExternalDebit { amount: 30 },
                only_with: Some(OtherWriter),
            }],
            expected_charge: None,
            ..base(
                "conditional-update",
                Seed,
                Handler::Debit,
                vec![Op::new(OpSpec::Debit {
                    amount: 20,
                    expected_version: 5,
                })],
            )
        },
        Scenario {
            toggles: vec![(OpDedup, false), (UniqueConstraint, true)],
            invariants: vec![Invariant::LikesMatchOps, Invariant::DefiniteAnswer],
            expected_charge: None,
            ..base(
                "counter-increment",
                Seed,
                Handler::Like,
                vec![Op::new(OpSpec::Like("op_7f3a"))],
            )
        },
        Scenario {
            apis: 2,
            toggles: vec![
                (UniqueConstraint, false),
                (AtomicClaim, false),
                (KeyToProcessor, false),
            ],
            ledger_key: true,
            faults: Vec::new(),
            links: Links {
                mobile: crate::net::Latency {
                    base: 80,
                    jitter: 0,
                },
                ..Links::default()
            },
            ..base(
                "concurrent-duplicates",
                Pitfall,
                charge(Some(KeyStore::Postgres)),
                vec![Op { copies: 2, ..pay }],
            )
        },
        Scenario {
            apis: 2,
            toggles: vec![(SharedStore, false)],
            limits: vec![CHECK_THEN_ACT],
            ..base(
                "in-memory-store",
                Pitfall,
                charge(Some(KeyStore::Memory)),
                vec![pay],
            )
        },
        Scenario {
            toggles: vec![(Fingerprint, false)],
            faults: Vec::new(),
            // Its two operations share one key: only the charge count is watched.
            limits: vec![Limit {
                breaks: &[Invariant::AtMostOnceCharge],
                ..CHECK_THEN_ACT
            }],
            invariants: vec![
                Invariant::AtMostOnceCharge,
                Invariant::ResponseMatchesRequest,
            ],
            ..base(
                "key-reuse-different-body",
                Pitfall,
                charge(Some(KeyStore::Redis)),
                vec![
                    pay,
                    Op {
                        key: KeyMode::ReuseOf(0),
                        ..Op::new(OpSpec::Charge(150))
                    },
                ],
            )
        },
        Scenario {
            toggles: vec![(LongTtl, false), (ShortDeadline, false)],
            limits: vec![CHECK_THEN_ACT],
            // An app that keeps a failed payment and retries it for two days, past
            // the key's 24 hours.
            retry: Retry {
                deadline: Millis::hours(48),
                ..Retry::MOBILE
            },
            script: vec![Scripted {
                when: When::ClientTimedOut { op: 0, attempt: 1 },
                command: Command::AdvanceClock(Millis::hours(25)),
                only_with: None,
            }],
            ..base(
                "ttl-expiry",
                Pitfall,
                charge(Some(KeyStore::Redis)),
                vec![pay],
            )
        },
        Scenario {
            toggles: vec![
                (SameTransaction, false),
                (KeyToProcessor, false),
                (CrashBeforeCommit, false),
            ],
            faults: Vec::new(),
            crashes: vec![
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
                "crash-after-charge",
                Pitfall,
                charge(Some(KeyStore::Redis)),
                vec![pay],
            )
        },
        Scenario {
            toggles: vec![(IdempotencyKey, false), (KeyToProcessor, false)],
            ledger_key: true,
            ..base(
                "transaction-is-not-idempotency",
                Pitfall,
                Handler::Charge {
                    store: None,
                    transactional: true,
                },
                vec![pay],
            )
        },
        Scenario {
            toggles: vec![
                (ConsumerDedup, false),
                (UniqueConstraint, true),
                (IdempotentProducer, false),
            ],
            faults: vec![FaultRule {
                matcher: Matcher::ProduceAck,
                verdict: Verdict::Drop,
                skip: 0,
                times: 1,
            }],
            crashes: vec![CrashRule {
                node: NodeId::Consumer,
                after: Phase::Commit,
                times: 1,
                if_toggle: None,
            }],
            auto_restart: Some(Millis(800)),
            invariants: vec![Invariant::BalanceMatches],
            expected_charge: None,
            ..base(
                "consumer-redelivery",
                Pitfall,
                Handler::Pipeline,
                Vec::new(),
            )
        },
        Scenario {
            toggles: vec![(NewKeyPerRetry, true)],
            limits: vec![CHECK_THEN_ACT],
            ..base(
                "new-key-per-retry",
                Pitfall,
                charge(Some(KeyStore::Redis)),
                vec![pay],
            )
        },
        Scenario {
            toggles: vec![(RowCountCheck, true)],
            limits: vec![Limit {
                faults: &[FaultClass::Crash, FaultClass::Loss, FaultClass::Clock],
                breaks: &[Invariant::LedgerMatchesCharges],
                shown_by: "status-transition",
                why: "the transition to PAID commits on its own, before the charge and the \
                      ledger row: when the charge's answer is lost or the process dies after it, \
                      the retry's UPDATE finds 0 rows and answers 200, and the charge never gets \
                      its row. The row-count check stops the second charge, not the half-done \
                      first one.",
            }],
            ..base(
                "status-transition",
                Pitfall,
                Handler::PayOrder,
                vec![Op::new(OpSpec::PayOrder {
                    order: 42,
                    amount: 100,
                })],
            )
        },
    ]
}

/// The scenario with this id.
pub fn by_id(id: &str) -> Option<Scenario> {
    all().into_iter().find(|s| s.id == id)
}

/// Every scenario id, in order.
pub fn ids() -> Vec<&'static str> {
    all().iter().map(|s| s.id).collect()
}
