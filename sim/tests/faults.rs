//! The fault model, one narrative per defect it once had. Each test names its
//! scenario, toggles, seed and fault; each failed on the core before the fix
//! (the step numbers are those of the runs as they are now, found by what
//! happens there where the story depends on it).
//!
//! - A statement of a closed session never runs (a crash or a deadline closes it);
//!   one already on the wire is read first, then the close rolls it back.
//! - A timeout is an unknown outcome: nothing is stored; the claim is resumed
//!   by a retry once its short lease runs out, and the key passed to the
//!   processor makes asking again safe.
//! - A key store that does not answer fails closed: 503, nothing charged.
//! - Leases are fenced: a takeover writes a new token and the old owner's
//!   write, checked against its token, is refused.
//! - Commands never panic; keys are scoped per user; Postgres keys expire; the
//!   processor refuses a reused key with other parameters.

use idem_sim::db::Value;
use idem_sim::http::ErrorCode;
use idem_sim::key::KeyRecord;
use idem_sim::net::NodeId;
use idem_sim::redis;
use idem_sim::scenario::{self, KeyMode, Op, OpSpec, Scenario, Toggle};
use idem_sim::timing::CLAIM_LEASE;
use idem_sim::trace::Happening;
use idem_sim::world::{Belief, CommandError};
use idem_sim::{Command, Config, Invariant, Millis, Run, World};
use std::sync::Arc;

fn defended(id: &str, seed: u64) -> Run {
    let s = scenario::by_id(id).unwrap();
    let t = s.defended();
    Run::new(s.clone(), Config::defaults(&s, seed).with_toggles(t))
}

fn ledger(run: &Run) -> Vec<String> {
    let t = run.end().db.table("payments").expect("payments");
    t.committed_rows()
        .map(|r| r[t.col("id")].as_text().unwrap_or_default().to_string())
        .collect()
}

fn charges(run: &Run) -> usize {
    run.end().processor.charges.len()
}

fn belief(run: &Run) -> Belief {
    run.end().client.ops[0].belief.clone()
}

/// The message now in flight from `from` to `to`.
fn in_flight(run: &Run, step: usize, from: NodeId, to: NodeId) -> idem_sim::MsgId {
    run.state_at(step)
        .msgs
        .values()
        .find(|m| m.from == from && m.to == to)
        .unwrap_or_else(|| panic!("nothing in flight {from}->{to} at step {step}"))
        .id
}

/// Transactions the close of their connection rolled back.
fn rolled_back_by_a_close(run: &Run) -> usize {
    run.trace
        .iter()
        .flat_map(|r| &r.happenings)
        .filter(|h| matches!(h, Happening::TxRollback { crash: true, .. }))
        .count()
}

// ---------------------------------------------------------------- 1. dead sessions

#[test]
fn crash_after_charge_a_crash_with_sql_in_flight_runs_none_of_it() {
    // Once: no ledger row, the key completed with pay_1, the app believing pay_1.
    let mut r = defended("crash-after-charge", 4);
    r.apply_at(12, Command::Crash(NodeId::Api(0))).unwrap();
    assert_eq!(charges(&r), 1);
    assert_eq!(ledger(&r).len(), 1, "{}", r.text());
    let Belief::Succeeded(p) = belief(&r) else {
        panic!("{:?}", belief(&r))
    };
    assert_eq!(ledger(&r), [p]);
    // The statement on the wire is read before the close, which rolls it back.
    assert!(rolled_back_by_a_close(&r) >= 1, "{}", r.text());

    // Once: two ledger rows for one charge.
    let mut r = defended("crash-after-charge", 1);
    r.apply_at(10, Command::Crash(NodeId::Api(0))).unwrap();
    assert_eq!((charges(&r), ledger(&r).len()), (1, 1), "{}", r.text());
    assert!(r.end().all_hold());
}

#[test]
fn consumer_redelivery_a_crash_with_the_debit_in_flight_debits_once() {
    // Once: balance 300 instead of 400.
    let mut r = defended("consumer-redelivery", 1);
    r.apply_at(8, Command::Crash(NodeId::Consumer)).unwrap();
    assert_eq!(r.end().balance(), Some(400));
    assert!(r.end().invariants[&Invariant::BalanceMatches]);
}

#[test]
fn counter_increment_a_crash_and_a_restart_count_one_like() {
    // Once: 102 likes.
    let mut r = defended("counter-increment", 28);
    r.apply_at(6, Command::Crash(NodeId::Api(0))).unwrap();
    r.apply_at(14, Command::Restart(NodeId::Api(0))).unwrap();
    assert_eq!(r.end().likes(), Some(101), "{}", r.text());
    assert!(rolled_back_by_a_close(&r) >= 1, "{}", r.text());
}

// ---------------------------------------------------------------- 2. unknown outcomes

#[test]
fn idempotency_key_a_lost_processor_reply_is_resumed_not_stored() {
    // Once: 503 upstream_timeout stored as the key's answer and replayed; $100
    // charged, no ledger row, the app gave up.
    let mut r = defended("idempotency-key", 0);
    let m = in_flight(&r, 5, NodeId::Processor, NodeId::Api(0));
    r.apply_at(5, Command::Lose(m)).unwrap();
    assert_eq!(charges(&r), 1);
    assert_eq!(ledger(&r), ["pay_1"]);
    assert_eq!(belief(&r), Belief::Succeeded("pay_1".into()));
    // The handler timed out and answered 503, storing nothing; a retry took
    // the claim once its lease ran out and asked the processor again with the
    // key: the same charge came back.
    let hs: Vec<&Happening> = r.trace.iter().flat_map(|r| &r.happenings).collect();
    assert!(hs
        .iter()
        .any(|h| matches!(h, Happening::Responded { status: 503, .. })));
    assert!(!hs.iter().any(|h| matches!(h, Happening::Redis { cmd, .. }
        if cmd.to_string().contains("\"status\":503"))));
    assert!(hs
        .iter()
        .any(|h| matches!(h, Happening::Charged { replayed: true, .. })));
    assert!(r.end().all_hold());
}

#[test]
fn crash_after_charge_a_lost_processor_reply_is_resumed_not_stored() {
    for seed in 0..10 {
        let r = defended("crash-after-charge", seed);
        let k = r
            .trace
            .iter()
            .position(|rec| {
                rec.happenings
                    .iter()
                    .any(|h| matches!(h, Happening::Charged { .. }))
            })
            .expect("a charge")
            + 1;
        let mut r = r;
        let m = in_flight(&r, k, NodeId::Processor, NodeId::Api(0));
        r.apply_at(k, Command::Lose(m)).unwrap();
        assert_eq!((charges(&r), ledger(&r).len()), (1, 1), "seed {seed}");
        assert!(r.end().all_hold(), "seed {seed}\n{}", r.text());
    }
}

/// Once: the handler's 503 to an attempt the app had timed out arrived while its
/// retry waited, and the app planned the retry again (a later attempt, a second
/// draw of the jitter). A timeout closes the attempt's connection: its answer,
/// whatever it is, is dropped on arrival and the retry goes out as planned.
#[test]
fn idempotency_key_a_late_5xx_to_a_timed_out_attempt_is_never_read() {
    let s = scenario::by_id("idempotency-key").unwrap();
    let policy = scenario::Retry {
        backoff: Millis(5_000),
        jitter: Millis(0),
        ..s.retry
    };
    // No response lost by the scenario's fault: the 503 travels.
    let s = Scenario {
        faults: &[],
        ..s.with_retry(policy)
    };
    let t = s.defended();
    let mut r = Run::new(s.clone(), Config::defaults(&s, 0).with_toggles(t));
    let m = in_flight(&r, 5, NodeId::Processor, NodeId::Api(0));
    r.apply_at(5, Command::Lose(m)).unwrap();
    let at = |want: &dyn Fn(&Happening) -> bool| {
        r.trace
            .iter()
            .find(|rec| rec.happenings.iter().any(want))
            .map(|rec| rec.time)
    };
    let first = at(&|h| matches!(h, Happening::ClientSent { attempt: 1, .. })).unwrap();
    let second = at(&|h| matches!(h, Happening::ClientSent { attempt: 2, .. }));
    let answered = at(&|h| matches!(h, Happening::Responded { status: 503, .. })).unwrap();
    let dropped = at(&|h| {
        matches!(
            h,
            Happening::Lost {
                to: NodeId::Client,
                cause: idem_sim::net::LossCause::ConnClosed,
                ..
            }
        )
    });
    // The 503 comes after the timeout and before the retry: dropped, not read.
    assert!(first + policy.timeout < answered, "{}", r.text());
    assert!(dropped.is_some_and(|d| d > answered), "{}", r.text());
    assert_eq!(
        second,
        Some(first + policy.timeout + policy.pause(1, Millis(0))),
        "{}",
        r.text()
    );
    assert_eq!(charges(&r), 1);
    assert_eq!(belief(&r), Belief::Succeeded("pay_1".into()));
    assert!(r.end().all_hold(), "{}", r.text());
}

// ---------------------------------------------------------------- 3. fail closed

#[test]
fn ttl_expiry_a_lost_key_lookup_fails_closed() {
    // Once: the lost GET read as a miss, and the retry charged a second time.
    let mut r = defended("ttl-expiry", 1);
    let m = in_flight(&r, 19, NodeId::Redis, NodeId::Api(0));
    r.apply_at(19, Command::Lose(m)).unwrap();
    assert_eq!(charges(&r), 1, "{}", r.text());
    assert_eq!(belief(&r), Belief::Succeeded("pay_1".into()));
}

// ---------------------------------------------------------------- 4. leases and fencing

#[test]
fn concurrent_duplicates_clock_jumps_never_charge_twice() {
    // Once: $200 with no crash: the lease ran out under a live owner, and nothing
    // checked ownership when it completed.
    let mut r = defended("concurrent-duplicates", 29);
    for k in [3, 17, 26] {
        r.apply_at(k, Command::AdvanceClock(Millis::HOUR)).unwrap();
    }
    assert_eq!((charges(&r), ledger(&r).len()), (1, 1), "{}", r.text());
    assert!(r.end().all_hold());
}

#[test]
fn concurrent_duplicates_a_fenced_owner_rolls_back_and_answers_with_the_winner() {
    // Every step at which a clock jump lets a copy take the claim over: the old
    // owner's completion is refused by its token, and one row stays.
    let mut fenced = 0;
    for seed in 0..20 {
        let base = defended("concurrent-duplicates", seed);
        for k in 0..base.len() {
            let mut r = base.clone();
            r.apply_at(k, Command::AdvanceClock(Millis::HOUR)).unwrap();
            assert_eq!(
                (charges(&r), ledger(&r).len()),
                (1, 1),
                "seed {seed} at {k}"
            );
            fenced += r
                .trace
                .iter()
                .flat_map(|rec| &rec.happenings)
                .filter(|h| {
                    matches!(h, Happening::Sql { stmt: sql, outcome, .. }
                    if sql.to_string().starts_with("UPDATE idempotency_keys SET status = 'completed'")
                        && outcome.to_string() == "UPDATE 0")
                })
                .count();
        }
    }
    assert!(fenced > 0, "some takeover fenced an owner");
}

#[test]
fn idempotency_key_a_crash_after_the_claim_is_not_stuck_for_a_day() {
    // Once: SET … NX PX 86400000 held the key for 24 h after a crash; every retry
    // got 409 and the app gave up. Now the claim is a lease of a few seconds.
    let base = defended("idempotency-key", 1);
    let claimed = base
        .find(|h| matches!(h, Happening::Redis { reply, .. } if reply.to_string() == "OK"))
        .expect("the claim");
    let mut r = base.clone();
    r.apply_at(claimed, Command::Crash(NodeId::Api(0))).unwrap();
    r.apply_at(claimed + 1, Command::Restart(NodeId::Api(0)))
        .unwrap();
    assert_eq!(
        belief(&r),
        Belief::Succeeded("pay_1".into()),
        "{}",
        r.text()
    );
    assert_eq!((charges(&r), ledger(&r).len()), (1, 1));
    let lease = format!("NX PX {}", CLAIM_LEASE.0);
    assert!(r.text().contains(&lease));
    assert!(r.end().all_hold());
}

// ---------------------------------------------------------------- 5. smaller defects

#[test]
fn an_external_debit_without_an_account_is_refused_not_a_panic() {
    for s in scenario::all() {
        let has_account = s
            .tables(s.default_toggles())
            .iter()
            .any(|t| t.name == "accounts");
        let mut w = World::new(Arc::new(s.clone()), Config::defaults(s, 1));
        let r = w.apply(&Command::ExternalDebit { amount: 5 });
        assert_eq!(r.is_ok(), has_account, "{}", s.id);
        if !has_account {
            assert_eq!(r, Err(CommandError::NoAccount));
        }
    }
}

#[test]
fn a_key_reused_from_an_operation_that_does_not_exist_is_a_key_of_its_own() {
    let mut s = scenario::by_id("key-reuse-different-body").unwrap();
    let mut ops = s.ops.to_vec();
    ops[1].key = KeyMode::ReuseOf(7);
    s.ops = ops.leak();
    let r = Run::new(s.clone(), Config::defaults(&s, 1));
    let keys: Vec<_> = r.end().client.ops.iter().map(|o| o.key).collect();
    assert!(keys.iter().all(Option::is_some));
    assert_ne!(keys[0], keys[1]);
}

#[test]
fn parallel_retries_at_step_zero_carry_the_first_operations_key() {
    let s = scenario::by_id("key-reuse-different-body").unwrap();
    let mut r = Run::new(s.clone(), Config::defaults(&s, 1));
    r.apply_at(0, Command::ParallelRetries(2)).unwrap();
    let sent: Vec<_> = r
        .trace
        .iter()
        .flat_map(|rec| &rec.happenings)
        .filter_map(|h| match h {
            Happening::ClientSent { op, key, .. } => Some((*op, key.clone())),
            _ => None,
        })
        .collect();
    assert!(sent.iter().all(|(_, k)| k.is_some()), "{sent:?}");
    assert_eq!(sent[0].0, 0);
}

#[test]
fn keys_are_scoped_per_user() {
    // Two users send the same key string: each gets a payment of their own,
    // not the other's replay and not a 422.
    let mut s = scenario::by_id("key-reuse-different-body").unwrap();
    s.ops = vec![
        s.ops[0],
        Op {
            key: KeyMode::ReuseOf(0),
            user: 43,
            ..Op::new(OpSpec::Charge(150))
        },
    ]
    .leak();
    let toggles = s.default_toggles().with(Toggle::Fingerprint, true);
    let r = Run::new(s.clone(), Config::defaults(&s, 1).with_toggles(toggles));
    let end = r.end();
    assert_eq!(end.client.ops[0].key, end.client.ops[1].key);
    assert_eq!(end.client.ops[0].belief, Belief::Succeeded("pay_1".into()));
    assert_eq!(end.client.ops[1].belief, Belief::Succeeded("pay_2".into()));
    assert_eq!(end.processor.total(), 250);
    assert!(r.text().contains("idem:u43:"), "{}", r.text());
    assert!(end.all_hold());
}

/// The run of `s` under `toggles`, with the clock moved 25 h on once the first
/// operation has its answer (that step is returned too).
fn a_day_later(s: &Scenario, toggles: idem_sim::Toggles) -> (Run, usize) {
    let mut r = Run::new(s.clone(), Config::defaults(s, 1).with_toggles(toggles));
    let first_done = r
        .find(|h| {
            matches!(
                h,
                Happening::Belief {
                    op: 0,
                    belief: Belief::Succeeded(_)
                }
            )
        })
        .expect("the first operation succeeds");
    r.apply_at(first_done, Command::AdvanceClock(Millis::hours(25)))
        .expect("the clock moves");
    (r, first_done)
}

/// concurrent-duplicates, defended, with one operation after the first, 25 h
/// later, reusing its key (as a client that keeps keys too long would).
fn reused_after_a_day() -> Scenario {
    let mut s = scenario::by_id("concurrent-duplicates").unwrap();
    s.ops = vec![
        Op::new(OpSpec::Charge(100)),
        Op {
            key: KeyMode::ReuseOf(0),
            ..Op::new(OpSpec::Charge(100))
        },
    ]
    .leak();
    s
}

#[test]
fn postgres_keys_expire_after_their_ttl() {
    let s = reused_after_a_day();
    let toggles = s.defended().with(Toggle::KeyToProcessor, false);
    let (r, first_done) = a_day_later(&s, toggles);
    // The second operation finds a completed key older than its TTL: it takes it
    // over and runs again (a second charge), instead of replaying a day-old
    // answer from the key table…
    let takeover = r.find(|h| {
        matches!(h, Happening::Sql { stmt: sql, outcome, .. }
            if sql.to_string().starts_with("UPDATE idempotency_keys SET status = 'processing'")
                // The first claim's token: taken at 80 ms (this scenario's fixed mobile latency).
                && sql.to_string().ends_with("locked_at = 80")
                && outcome.to_string() == "UPDATE 1")
    });
    assert!(takeover.is_some_and(|k| k > first_done), "{}", r.text());
    let end = r.end();
    assert_eq!(end.processor.charges.len(), 2);
    // …and the ledger, whose row keeps the key for good, refuses a second row
    // and answers with the first payment.
    assert_eq!(ledger(&r), ["pay_1"]);
    assert_eq!(end.client.ops[1].belief, Belief::Succeeded("pay_1".into()));
}

#[test]
fn the_processor_forgets_a_key_after_24_hours() {
    // Once: a request 25 h later with the same key was answered with the
    // day-old charge. Stripe prunes keys once they are 24 hours old.
    let s = reused_after_a_day();
    let toggles = s.defended();
    assert!(toggles.has(Toggle::KeyToProcessor));
    let (r, _) = a_day_later(&s, toggles);
    let charges = &r.end().processor.charges;
    assert_eq!(charges.len(), 2, "{}", r.text());
    assert!(charges[0].key.is_some());
    assert_eq!(
        charges[0].key, charges[1].key,
        "the same key, charged again"
    );
}

#[test]
fn the_processor_refuses_a_reused_key_with_other_parameters() {
    // The same key, 25 h later, for $150: our store forgot it, the processor has
    // not, and it answers an error instead of replaying the $100 charge.
    let mut s = reused_after_a_day();
    let mut ops = s.ops.to_vec();
    ops[1].spec = OpSpec::Charge(150);
    s.ops = ops.leak();
    let toggles = s.defended().with(Toggle::Fingerprint, true);
    let (r, _) = a_day_later(&s, toggles);
    let end = r.end();
    assert_eq!(
        end.client.ops[1].belief,
        Belief::Failed(422, ErrorCode::IdempotencyKeyReused),
        "{}",
        r.text()
    );
    assert_eq!(end.processor.charges.len(), 1);
}

#[test]
fn a_completed_key_is_never_overwritten_by_an_error() {
    // Once: fail() stored 503 under a key, and its UPDATE lacked
    // `status = 'processing'`, so it could overwrite a completed 201. Now no
    // error is ever stored, and the key's answer names a payment of the ledger:
    // checked under every single fault, at every step, on a few seeds.
    for id in [
        "idempotency-key",
        "crash-after-charge",
        "concurrent-duplicates",
    ] {
        for seed in 0..4 {
            let base = defended(id, seed);
            for k in 0..base.len() {
                let w = base.state_at(k);
                let mut faults = vec![
                    Command::Crash(NodeId::Api(0)),
                    Command::AdvanceClock(Millis::HOUR),
                    Command::ParallelRetries(2),
                ];
                faults.extend(w.msgs.values().map(|m| Command::Lose(m.id)));
                for f in faults {
                    let mut r = base.clone();
                    if r.apply_at(k, f.clone()).is_err() {
                        continue;
                    }
                    let text = r.text();
                    assert!(
                        !text.contains("\"error\""),
                        "{id} seed {seed}: {f:?} at {k}"
                    );
                    let stored = stored_payment(r.end());
                    if let Some(p) = stored {
                        assert!(
                            ledger(&r).contains(&p),
                            "{id} seed {seed}: {f:?} at {k}: the key answers {p}, not in the ledger"
                        );
                    }
                }
            }
        }
    }
}

/// The payment the key's completed record answers with (Postgres row or Redis entry).
fn stored_payment(w: &World) -> Option<String> {
    if let Some(t) = w.db.table("idempotency_keys") {
        for r in t.committed_rows() {
            if r[t.col("status")].as_text() == Some("completed") {
                if let Value::Paid(p) = &r[t.col("response_body")] {
                    return Some(p.payment.clone());
                }
            }
        }
    }
    w.redis.keys.values().find_map(|e| match &e.value {
        redis::Value::Key(KeyRecord {
            done: Some((_, p)), ..
        }) => Some(p.payment.clone()),
        _ => None,
    })
}

// ---------------------------------------------------------------- liveness

#[test]
fn liveness_is_judged_once_the_run_is_quiet() {
    use idem_sim::invariant::Expect;
    assert_eq!(Invariant::DefiniteAnswer.expect(), Expect::Eventually);
    assert_eq!(Invariant::LedgerMatchesCharges.expect(), Expect::AtRest);
    assert_eq!(Invariant::AtMostOnceCharge.expect(), Expect::Always);
    // While the app still waits for its answer, "eventually" is not yet broken…
    let r = defended("idempotency-key", 1);
    let waiting = r
        .find(|h| matches!(h, Happening::ClientTimeout { .. }))
        .unwrap();
    assert!(r.state_at(waiting).invariants[&Invariant::DefiniteAnswer]);
    // …and at the end it holds.
    assert!(r.end().invariants[&Invariant::DefiniteAnswer]);
}

#[test]
fn liveness_breaks_when_the_fault_never_stops() {
    // The only instance crashes after the claim and nobody restarts it: every
    // retry is lost, the app runs out of attempts and gives up. The claim's
    // lease is not the cause here (it would have let a retry resume).
    let base = defended("idempotency-key", 1);
    let claimed = base
        .find(|h| matches!(h, Happening::Redis { reply, .. } if reply.to_string() == "OK"))
        .unwrap();
    let mut r = base;
    r.apply_at(claimed, Command::Crash(NodeId::Api(0))).unwrap();
    assert_eq!(belief(&r), Belief::GaveUp);
    assert!(!r.end().invariants[&Invariant::DefiniteAnswer]);
    assert_eq!(r.first_violation(Invariant::DefiniteAnswer), Some(r.len()));
    // Safety still holds: nothing was charged twice.
    assert!(r.end().invariants[&Invariant::AtMostOnceCharge]);
}

// ---------------------------------------------------------------- the reader's command log

#[test]
fn losing_the_next_response_after_the_end_is_refused_not_an_empty_step() {
    let mut r = defended("idempotency-key", 1);
    let (len, end) = (r.len(), r.end().clone());
    assert_eq!(
        r.apply_at(len, Command::LoseNextResponse),
        Err(CommandError::NothingToLose)
    );
    assert_eq!((r.len(), r.end()), (len, &end));
}

#[test]
fn a_toggle_change_keeps_the_commands_that_still_apply_and_names_the_others() {
    let s = scenario::by_id("crash-after-charge").unwrap();
    let mut r = Run::new(s.clone(), Config::defaults(&s, 1));
    r.apply_at(2, Command::ParallelRetries(2)).unwrap();
    let m = r.state_at(6).msgs.keys().next().copied().unwrap();
    r.apply_at(6, Command::Lose(m)).unwrap();
    assert_eq!(r.commands().len(), 2);
    // Under the other toggles the run takes another path: the parallel copies
    // still apply at step 2; message m may or may not be in flight at step 6.
    let (again, dropped) = r.with_toggles(s.defended());
    assert_eq!(again.config.toggles, s.defended());
    assert_eq!(again.commands().len() + dropped.len(), 2);
    assert_eq!(again.commands()[0], (2, Command::ParallelRetries(2)));
    for d in &dropped {
        assert!(matches!(
            d.why,
            CommandError::NoSuchMessage(_) | CommandError::BeyondTheEnd(_)
        ));
    }
    // A command beyond the end of the new run is dropped and named.
    let (_, dropped) = Run::replay(
        s.clone(),
        Config::defaults(&s, 1),
        &[(9_999, Command::ParallelRetries(2))],
    );
    assert_eq!(dropped[0].why, CommandError::BeyondTheEnd(9_999));
}

/// Regression: the Postgres takeover matched the key as the request sent it
/// (`h.req.key`), not as the store keeps it: with `ScopedKey` the row is
/// `POST /charges:K1`, the fenced UPDATE found nothing, and every retry after
/// a crash with the claim held was refused 409 until the app gave up.
#[test]
fn a_postgres_takeover_finds_a_scoped_key() {
    use idem_sim::scenario::{CrashRule, Handler, KeyStore, Phase};
    let mut s = scenario::by_id("key-scope").unwrap();
    s.handler = Handler::Charge {
        store: Some(KeyStore::Postgres),
        transactional: false,
        receipt: false,
    };
    s.ops = vec![s.ops[0]].leak();
    s.crashes = vec![CrashRule {
        node: NodeId::Api(0),
        after: Phase::Claim,
        times: 1,
        if_toggle: None,
    }]
    .leak();
    s.auto_restart = Some(Millis(800));
    let t = s.defended().with(Toggle::ScopedKey, true);
    let r = Run::new(s.clone(), Config::defaults(&s, 1).with_toggles(t));
    let takeover = r.find(|h| {
        matches!(h, Happening::Sql { stmt: sql, outcome, .. }
            if sql.to_string().starts_with("UPDATE idempotency_keys SET status = 'processing'")
                && outcome.to_string() == "UPDATE 1")
    });
    assert!(takeover.is_some(), "{}", r.text());
    assert!(matches!(belief(&r), Belief::Succeeded(_)), "{}", r.text());
    assert_eq!(charges(&r), 1);
}
