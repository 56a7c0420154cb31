//! The client's retry policy (`Scenario::retry`, under the run's presets:
//! `Scenario::retry_policy`): the schedule the lab shows is what the client
//! does, a retry never breaks the policy's bounds, the deadline against the
//! key's TTL decides ttl-expiry, and the explorer searches under the presets.

use idem_sim::invariant::Expect;
use idem_sim::rng::Rng;
use idem_sim::run::MAX_STEPS;
use idem_sim::scenario::{self, Handler, Retry, Scenario, Slot};
use idem_sim::trace::Happening;
use idem_sim::world::{key_ttl, Belief};
use idem_sim::{Config, Millis, NodeId, Run, Toggle};

/// Every scenario with the app, but conditional-update: its re-read after a
/// version conflict is a request of its own, not a retry.
fn with_the_app() -> Vec<Scenario> {
    scenario::all()
        .iter()
        .filter(|s| s.nodes().contains(&NodeId::Client) && s.handler != Handler::Debit)
        .cloned()
        .collect()
}

/// The scenario's run with the client under `retry`.
fn run(s: &Scenario, retry: Retry, seed: u64) -> Run {
    let s = s.with_retry(retry);
    let config = Config::defaults(&s, seed);
    Run::new(s, config)
}

/// When each attempt of operation `op` went out, in order.
fn sent(r: &Run, op: usize) -> Vec<Millis> {
    r.trace
        .iter()
        .flat_map(|rec| rec.happenings.iter().map(move |h| (rec.time, h)))
        .filter_map(|(t, h)| match h {
            Happening::ClientSent { op: o, .. } if *o == op => Some(t),
            _ => None,
        })
        .collect()
}

/// A policy drawn within the bounds, short enough for runs of a few seconds.
fn random_policy(rng: &mut Rng) -> Retry {
    let mut pick = |lo: u64, hi: u64| Millis(lo + rng.below(hi - lo + 1));
    Retry {
        timeout: pick(200, 4_000),
        max_attempts: pick(1, 7).0 as u32,
        backoff: pick(0, 3_000),
        jitter: pick(0, 1_500),
        deadline: pick(1_000, 40_000),
    }
}

#[test]
fn one_attempt_never_retries() {
    let once = Retry {
        max_attempts: 1,
        ..Retry::MOBILE
    };
    assert_eq!(once.schedule().len(), 1);
    for s in with_the_app() {
        for seed in 0..20 {
            let r = run(&s, once, seed);
            let end = r.end();
            for (op, o) in end.client.ops.iter().enumerate() {
                assert!(
                    o.lanes.iter().all(|l| l.sent <= 1),
                    "{} seed {seed} op {op}\n{}",
                    s.id,
                    r.text()
                );
            }
            // One request per lane (concurrent-duplicates starts with two); a status
            // read, once the app stopped retrying, is a lane of its own and no POST.
            let lanes: usize = end
                .client
                .ops
                .iter()
                .map(|o| o.lanes.iter().filter(|l| !l.check).count())
                .sum();
            let posts: usize = (0..end.client.ops.len()).map(|op| sent(&r, op).len()).sum();
            assert_eq!(posts, lanes, "{} seed {seed}\n{}", s.id, r.text());
        }
    }
}

#[test]
fn the_schedule_counts_timeouts_backoffs_jitter_and_the_deadline() {
    let slot = |from, to, cut| Slot {
        from: Millis(from),
        to: Millis(to),
        cut,
    };
    // 1.5 s per attempt, pauses of 0.5 s, 1 s, 2 s plus up to 0.2 s each.
    assert_eq!(
        Retry::MOBILE.schedule(),
        [
            slot(0, 0, None),
            slot(2_000, 2_200, None),
            slot(4_500, 4_900, None),
            slot(8_000, 8_600, None),
        ]
    );
    // A deadline of 4.7 s may stop the third attempt, and always stops the fourth,
    // the last the schedule lists.
    let r = Retry {
        max_attempts: 9,
        deadline: Millis(4_700),
        ..Retry::MOBILE
    };
    assert_eq!(
        r.schedule(),
        [
            slot(0, 0, None),
            slot(2_000, 2_200, None),
            slot(4_500, 4_900, Some(false)),
            slot(8_000, 8_600, Some(true)),
        ]
    );
}

/// Over many seeds and policies: no lane sends more than its attempts; each
/// retry waits at least its pause after the attempt before, at most its pause
/// with the whole jitter after what triggered it (the timeout, or an answer to
/// retry on, which comes before the timeout: a late one is never read), and
/// never goes out past the deadline; where every attempt before it timed out, it
/// goes out within its slot of the schedule.
#[test]
fn every_retry_respects_the_backoff_and_the_deadline() {
    let mut rng = Rng::new(12);
    let mut checked = 0;
    for seed in 0..120 {
        let policy = random_policy(&mut rng);
        let slots = policy.schedule();
        // ttl-expiry's script moves the clock 25 h between an attempt and its retry.
        for s in with_the_app().iter().filter(|s| s.script.is_empty()) {
            let r = run(s, policy, seed);
            let end = r.end();
            for (op, o) in end.client.ops.iter().enumerate() {
                let why = || format!("{} seed {seed} op {op} {policy:?}\n{}", s.id, r.text());
                assert!(
                    o.lanes.iter().all(|l| l.sent <= policy.max_attempts),
                    "{}",
                    why()
                );
                if o.lanes.len() > 1 {
                    continue;
                }
                let t = sent(&r, op);
                let timed_out = |k: u32| {
                    r.trace.iter().any(|rec| {
                        rec.happenings
                            .contains(&Happening::ClientTimeout { op, attempt: k })
                    })
                };
                let mut clean = true;
                for k in 1..t.len() {
                    let n = k as u32;
                    let gap = t[k] - t[k - 1];
                    assert!(gap >= policy.pause(n, Millis(0)), "{}", why());
                    // It follows its trigger (the timeout, or an answer to retry on
                    // read before it) by its pause with the jitter at most.
                    let trigger = r
                        .trace
                        .iter()
                        .filter(|rec| rec.time >= t[k - 1] && rec.time <= t[k])
                        .filter(|rec| {
                            rec.happenings.iter().any(|h| {
                                *h == Happening::ClientTimeout { op, attempt: n }
                                    || matches!(
                                        h,
                                        Happening::Delivered {
                                            to: NodeId::Client,
                                            ..
                                        }
                                    )
                            })
                        })
                        .map(|rec| rec.time)
                        .max()
                        .unwrap_or(t[k - 1]);
                    assert!(trigger <= t[k - 1] + policy.timeout, "{}", why());
                    assert!(
                        gap <= policy.timeout + policy.pause(n, policy.jitter),
                        "{}",
                        why()
                    );
                    assert!(
                        t[k] - trigger <= policy.pause(n, policy.jitter),
                        "{}",
                        why()
                    );
                    assert!(policy.in_time(t[0], t[k]), "{}", why());
                    // Every attempt so far timed out and nothing else planned its retry.
                    clean &= timed_out(n) && trigger == t[k - 1] + policy.timeout;
                    if clean {
                        let at = t[k] - t[0];
                        assert!(slots[k].from <= at && at <= slots[k].to, "{}", why());
                        assert_ne!(slots[k].cut, Some(true), "{}", why());
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 500, "only {checked} retries checked");
}

/// ttl-expiry: the app's first attempt times out and its retry comes 25 h later,
/// past the key's 24 h. A deadline shorter than the TTL gives up first, and no
/// safety invariant breaks; a longer one sends the retry, and the payment is
/// charged twice.
#[test]
fn in_ttl_expiry_a_deadline_under_the_ttl_keeps_the_invariants_and_a_longer_one_breaks_them() {
    let s = scenario::by_id("ttl-expiry").unwrap();
    let ttl = key_ttl(&s, s.default_toggles()).unwrap();
    assert_eq!(ttl, Millis::hours(24));
    let safety_holds = |r: &Run| {
        !r.trace.iter().any(|rec| {
            rec.happenings.iter().any(|h| {
                matches!(h, Happening::Invariant { inv, holds: false } if inv.expect() != Expect::Eventually)
            })
        })
    };
    for seed in 0..10 {
        for hours in [1, 12, 23] {
            let policy = Retry {
                deadline: Millis::hours(hours),
                ..s.retry
            };
            assert!(policy.deadline < ttl);
            let r = run(&s, policy, seed);
            assert!(safety_holds(&r), "{hours} h seed {seed}\n{}", r.text());
            assert_eq!(r.end().processor.charges.len(), 1);
            // Past its deadline it asked by the key, and learnt the payment.
            assert!(matches!(r.end().client.ops[0].belief, Belief::Succeeded(_)));
        }
        for hours in [26, 48, 24 * 14] {
            let policy = Retry {
                deadline: Millis::hours(hours),
                ..s.retry
            };
            let r = run(&s, policy, seed);
            assert!(!safety_holds(&r), "{hours} h seed {seed}\n{}", r.text());
            assert_eq!(r.end().processor.charges.len(), 2);
        }
        // The preset cuts the 48 h to 1 h: the same as a deadline under the TTL.
        let toggles = s.default_toggles().with(Toggle::ShortDeadline, true);
        assert_eq!(s.retry_policy(toggles).deadline, Millis::hours(1));
        assert!(safety_holds(&Run::new(
            s.clone(),
            Config::defaults(&s, seed).with_toggles(toggles)
        )));
    }
}

/// The preset "the app never retries": one attempt, the lost answer is never
/// asked for again by a retry; the app says it is checking, and learns the
/// payment by a status read where it has a key to ask by.
#[test]
fn the_no_retry_preset_sends_one_attempt_and_gives_up() {
    for id in ["naive-post", "idempotency-key"] {
        let s = scenario::by_id(id).unwrap();
        let toggles = s.default_toggles().with(Toggle::NoRetry, true);
        assert_eq!(s.retry_policy(toggles).schedule().len(), 1);
        for seed in 0..10 {
            let r = Run::new(s.clone(), Config::defaults(&s, seed).with_toggles(toggles));
            assert_eq!(sent(&r, 0).len(), 1, "{id} seed {seed}\n{}", r.text());
            let end = r.end();
            let learnt = matches!(end.client.ops[0].belief, Belief::Succeeded(_));
            assert_eq!(learnt, id == "idempotency-key", "{id}");
            assert_eq!(end.processor.charges.len(), 1, "{id}");
        }
    }
}

/// A search runs the preset: naive-post's explorer (one more lost message)
/// finds more than one charge under the app's retries, and one at most when it
/// never retries.
#[test]
fn the_explorer_searches_under_the_retry_preset() {
    use idem_sim::answer::{answer, Reply};
    use idem_sim::wire::Request;
    let s = scenario::by_id("naive-post").unwrap();
    let most_charges = |toggles, retry| {
        let req = Request {
            scenario: s.id,
            seed: 1,
            toggles,
            retry,
            commands: Vec::new(),
            step: 0,
            losses: 1,
            crashes: 0,
            jumps: 0,
            table: false,
            cmp: None,
        };
        let mut most = 0;
        answer(&req, usize::MAX, &mut |reply| {
            if let Reply::Found(found) = reply {
                most = found
                    .outcomes
                    .iter()
                    .map(|b| b.outcome.charges())
                    .max()
                    .unwrap_or(0);
            }
        });
        most
    };
    assert!(most_charges(s.default_toggles(), s.retry) >= 2);
    assert_eq!(
        most_charges(s.default_toggles().with(Toggle::NoRetry, true), s.retry),
        1
    );
    // The reader's own numbers reach the worker as the preset does.
    let once = Retry {
        max_attempts: 1,
        ..s.retry
    };
    assert_eq!(most_charges(s.default_toggles(), once), 1);
}

/// The reader's numbers: any five make a policy within `Retry::BOUNDS`, the
/// numbers in range unchanged; the catalogue's policies are numbers in range;
/// every scenario with the app runs to its end under the bounds' corners, no
/// lane past its attempts.
#[test]
fn any_numbers_make_a_policy_in_range_that_runs() {
    let mut rng = Rng::new(7);
    for _ in 0..2_000 {
        let n: [u64; 5] = std::array::from_fn(|_| match rng.below(3) {
            0 => rng.below(100),
            1 => rng.below(5_000_000),
            _ => u64::MAX - rng.below(10),
        });
        let r = Retry::of(n);
        let back = r.numbers();
        for i in 0..5 {
            let (lo, hi) = Retry::BOUNDS[i];
            assert!(lo <= back[i] && back[i] <= hi, "{n:?} -> {back:?}");
            if (lo..=hi).contains(&n[i]) {
                assert_eq!(back[i], n[i], "{n:?}");
            }
        }
        assert_eq!(Retry::of(back), r);
    }
    for s in scenario::all() {
        assert_eq!(Retry::of(s.retry.numbers()), s.retry, "{}", s.id);
    }
    let lo = Retry::of(Retry::BOUNDS.map(|b| b.0));
    let hi = Retry::of(Retry::BOUNDS.map(|b| b.1));
    let busy = Retry {
        max_attempts: hi.max_attempts,
        ..lo
    };
    for s in with_the_app() {
        for policy in [lo, hi, busy] {
            let r = run(&s, policy, 3);
            assert!(r.len() < MAX_STEPS, "{} {policy:?}", s.id);
            for o in &r.end().client.ops {
                assert!(o.lanes.iter().all(|l| l.sent <= policy.max_attempts));
            }
        }
    }
}

/// A policy of the reader's is the run's: it stays through a toggle and in the
/// run compared side by side, and the reader's commands replay under it.
#[test]
fn the_readers_policy_stays_through_toggles_and_the_comparison() {
    let s = scenario::by_id("idempotency-key").unwrap();
    let mut base = Run::new(s.clone(), Config::defaults(&s, 2));
    base.apply_at(0, idem_sim::Command::LoseNextResponse)
        .unwrap();
    let once = Retry {
        max_attempts: 1,
        ..s.retry
    };
    let (r, dropped) = base.with_policy(once, s.default_toggles());
    assert!(dropped.is_empty());
    assert_eq!(r.commands(), base.commands());
    assert_eq!(r.scenario.retry, once);
    assert_eq!(sent(&r, 0).len(), 1, "{}", r.text());
    let toggled = r
        .with_toggles(s.default_toggles().with(Toggle::Fingerprint, true))
        .0;
    assert_eq!(toggled.scenario.retry, once);
    assert_eq!(r.with_defences(Default::default()).scenario.retry, once);
}
