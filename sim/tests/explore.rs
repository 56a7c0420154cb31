//! The explorer of `idem_sim::explore`: its paths replay, its fingerprint
//! ignores bookkeeping and nothing else, its paths are the shortest, it is
//! deterministic, and it finds each scenario's textbook violation.

use idem_sim::explore::{explore, to_commands, Bound, Choice, EndState, NotCommands};
use idem_sim::scenario::{self, Scenario};
use idem_sim::world::Event;
use idem_sim::{Config, Invariant, Millis, NodeId, Run, Toggles, World};
use std::sync::Arc;

fn world(s: &Scenario, toggles: Toggles) -> World {
    World::new(
        Arc::new(s.clone()),
        Config {
            toggles,
            seed: 1,
            random: Default::default(),
        },
    )
}

fn by_id(id: &str) -> Scenario {
    scenario::by_id(id).expect("scenario")
}

/// Applies `path` to a copy of `start`.
fn replay(start: &World, path: &[Choice]) -> World {
    let mut w = start.clone();
    for c in path {
        w.choose(c);
    }
    w
}

#[test]
fn violation_and_outcome_paths_replay_to_their_worlds() {
    for id in [
        "naive-post",
        "crash-after-charge",
        "counter-increment",
        "consumer-redelivery",
    ] {
        let s = by_id(id);
        let start = world(&s, s.undefended());
        let r = explore(&start, &Bound::default());
        assert!(!r.violations.is_empty(), "{id}");
        for (inv, path) in &r.violations {
            let w = replay(&start, path);
            assert!(!w.invariants[inv], "{id}: {inv:?} holds after {path:?}");
        }
        assert!(!r.outcomes.is_empty(), "{id}");
        assert_eq!(r.outcomes.iter().map(|e| e.count).sum::<usize>(), r.ends);
        for e in &r.outcomes {
            let w = replay(&start, &e.path);
            assert!(w.is_quiet(), "{id}: {:?}", e.path);
            assert_eq!(EndState::of(&w), e.outcome, "{id}");
        }
    }
}

#[test]
fn paths_stay_within_the_bound() {
    let s = by_id("idempotency-key");
    let start = world(&s, s.default_toggles());
    let count = |p: &[Choice], f: fn(&Choice) -> bool| p.iter().filter(|c| f(c)).count();
    let quiet = Bound {
        max_losses: 0,
        max_crashes: 0,
        ..Bound::default()
    };
    let r = explore(&start, &quiet);
    assert!(r
        .outcomes
        .iter()
        .all(|e| e.path.iter().all(|c| matches!(c, Choice::Fire(_)))));
    let r = explore(&start, &Bound::default());
    for e in &r.outcomes {
        assert!(count(&e.path, |c| matches!(c, Choice::Lose(_))) <= 1);
        assert!(count(&e.path, |c| matches!(c, Choice::Crash(_))) <= 1);
        assert_eq!(count(&e.path, |c| matches!(c, Choice::AdvanceClock(_))), 0);
    }
    assert!(r
        .outcomes
        .iter()
        .any(|e| e.path.contains(&Choice::Crash(NodeId::Api(0)))));
}

#[test]
fn choices_list_faults_and_the_clock() {
    let s = by_id("crash-after-charge");
    let mut w = world(&s, s.default_toggles());
    let c = w.choices();
    assert!(matches!(c[0], Choice::Fire(_)));
    assert!(c.contains(&Choice::Crash(NodeId::Api(0))));
    assert!(c.contains(&Choice::AdvanceClock(Millis::HOUR)));
    w.choose(&Choice::Crash(NodeId::Api(0)));
    let c = w.choices();
    assert!(c.contains(&Choice::Restart(NodeId::Api(0))));
    assert!(!c.contains(&Choice::Crash(NodeId::Api(0))));
    assert_eq!(
        Choice::Restart(NodeId::Api(0)).command(),
        Some(idem_sim::Command::Restart(NodeId::Api(0)))
    );
}

// ----- the fingerprint -----

#[test]
fn fingerprint_ignores_sequence_numbers() {
    // Crash the idle instance and bring it back: the planned automatic restart
    // was scheduled and cancelled, so only the event sequence number moved.
    let s = by_id("crash-after-charge");
    let start = world(&s, s.default_toggles());
    let mut w = start.clone();
    w.choose(&Choice::Crash(NodeId::Api(0)));
    assert_ne!(w.fingerprint(), start.fingerprint(), "the instance is down");
    w.choose(&Choice::Restart(NodeId::Api(0)));
    assert_ne!(w, start, "the sequence number differs");
    assert_eq!(w.fingerprint(), start.fingerprint());
}

#[test]
fn fingerprint_ignores_message_ids_of_two_interleavings() {
    // Two instances read the key at the same moment; Postgres answers the
    // reads in either order. With jitter-free links the two orders reach the
    // same state; only the replies' message ids and the queue's sequence
    // numbers differ.
    let mut s = by_id("concurrent-duplicates");
    s.links.internal.jitter = 0;
    let mut w = world(&s, s.default_toggles());
    let to_postgres = |w: &World, e: &Event| match e {
        Event::Deliver(m) => w.msgs[m].to == NodeId::Postgres,
        _ => false,
    };
    let (k1, k2) = loop {
        let p: Vec<_> = w.pending().take(2).map(|(k, e)| (*k, e.clone())).collect();
        if let [(k1, e1), (k2, e2)] = &p[..] {
            if k1.0 == k2.0 && to_postgres(&w, e1) && to_postgres(&w, e2) {
                break (*k1, *k2);
            }
        }
        assert!(!w.is_quiet(), "no two reads at the same moment");
        w.step();
    };
    let mut a = w.clone();
    a.choose(&Choice::Fire(k1));
    a.choose(&Choice::Fire(k2));
    let mut b = w.clone();
    b.choose(&Choice::Fire(k2));
    b.choose(&Choice::Fire(k1));
    assert_ne!(a, b, "the replies have each other's ids");
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert_ne!(a.fingerprint(), w.fingerprint());
}

#[test]
fn fingerprint_differs_when_the_state_differs() {
    let s = by_id("idempotency-key");
    let start = world(&s, s.default_toggles());
    let mut seen = vec![start.fingerprint()];
    let mut w = start.clone();
    // Every step of the run changes something that matters (time, messages, stores).
    while !w.is_quiet() {
        w.step();
        seen.push(w.fingerprint());
    }
    let mut unique = seen.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), seen.len());
    // A lost message, a crash, another seed, other toggles.
    let mut w = start.clone();
    w.step();
    w.step();
    let m = *w.msgs.keys().next().expect("a message in flight");
    let mut lost = w.clone();
    lost.choose(&Choice::Lose(m));
    assert_ne!(lost.fingerprint(), w.fingerprint());
    let mut crashed = w.clone();
    crashed.choose(&Choice::Crash(NodeId::Api(0)));
    assert_ne!(crashed.fingerprint(), w.fingerprint());
    let other_seed = World::new(
        start.scenario.clone(),
        Config {
            seed: 2,
            ..start.config
        },
    );
    assert_ne!(other_seed.fingerprint(), start.fingerprint());
    assert_ne!(world(&s, s.undefended()).fingerprint(), start.fingerprint());
}

// ----- shortest paths -----

/// The explorer's rules, restated plainly over `World::choices()`.
fn allowed(w: &World, b: &Bound, used: [u32; 3]) -> Vec<Choice> {
    let Some(first) = w.pending().next().map(|(k, _)| k.0) else {
        return Vec::new();
    };
    let first_timer = w
        .pending()
        .find(|(_, e)| !matches!(e, Event::Deliver(_)))
        .map(|(k, _)| *k);
    let is_message = |k| {
        w.pending()
            .any(|(x, e)| *x == k && matches!(e, Event::Deliver(_)))
    };
    w.choices()
        .into_iter()
        .filter(|c| match c {
            Choice::Fire(k) => {
                k.0 <= first + b.window && (is_message(*k) || first_timer == Some(*k))
            }
            Choice::Lose(_) => used[0] < b.max_losses,
            Choice::Crash(_) => used[1] < b.max_crashes,
            Choice::Restart(_) => true,
            Choice::AdvanceClock(_) => used[2] < b.max_clock_jumps,
            // Only the explorer finds races, by firing an event; `choices()`
            // lists no burst of copies (the bound's `max_parallel` adds them).
            Choice::Race(..) | Choice::Parallel(_) => false,
        })
        .collect()
}

/// Depth-first over every sequence of at most `depth` choices, no deduplication:
/// the length of the shortest one after which `inv` does not hold.
fn brute_force(
    w: &World,
    b: &Bound,
    inv: Invariant,
    depth: usize,
    used: [u32; 3],
) -> Option<usize> {
    if !w.invariants[&inv] {
        return Some(0);
    }
    if depth == 0 {
        return None;
    }
    let mut best: Option<usize> = None;
    for c in allowed(w, b, used) {
        let mut u = used;
        match c {
            Choice::Lose(_) => u[0] += 1,
            Choice::Crash(_) => u[1] += 1,
            Choice::AdvanceClock(_) => u[2] += 1,
            _ => {}
        }
        let mut next = w.clone();
        next.choose(&c);
        let limit = best.map_or(depth - 1, |d| d.saturating_sub(2));
        if let Some(d) = brute_force(&next, b, inv, limit, u) {
            best = Some(best.map_or(d + 1, |x: usize| x.min(d + 1)));
        }
    }
    best
}

#[test]
fn breadth_first_finds_the_shortest_paths() {
    let s = by_id("naive-post");
    let start = world(&s, s.default_toggles());
    let races_and_a_clock_jump = Bound {
        window: Millis(50),
        max_clock_jumps: 1,
        ..Bound::default()
    };
    for bound in [Bound::default(), races_and_a_clock_jump] {
        let r = explore(&start, &bound);
        let double = r
            .violation(Invariant::AtMostOnceCharge)
            .expect("naive-post charges twice");
        // A crash is a shortcut: the scenario's own run (the lost ack) is longer.
        let run = Run::new(s.clone(), start.config);
        assert!(double.len() < run.first_violation(Invariant::AtMostOnceCharge).unwrap());
        for (inv, path) in &r.violations {
            let shortest = brute_force(&start, &bound, *inv, path.len(), [0; 3]);
            assert_eq!(shortest, Some(path.len()), "{inv:?}: {path:?}");
        }
    }
}

// ----- determinism -----

#[test]
fn the_same_exploration_gives_the_same_report() {
    let s = by_id("idempotency-key");
    let start = world(&s, s.defended());
    let a = explore(&start, &Bound::default());
    let b = explore(&world(&s, s.defended()), &Bound::default());
    assert_eq!(a, b);
    assert!(a.unique > 1000 && !a.truncated, "{} states", a.unique);
}

// ----- paths as commands -----

#[test]
fn a_path_in_time_order_replays_as_commands_on_a_run() {
    let s = by_id("naive-post");
    let start = world(&s, s.default_toggles());
    let r = explore(&start, &Bound::default());
    let mut checked = 0;
    for (inv, path) in &r.violations {
        let Ok(script) = to_commands(&start, path) else {
            continue;
        };
        let mut run = Run::new(s.clone(), start.config);
        for (step, cmd) in &script.commands {
            run.apply_at(*step, cmd.clone())
                .expect("the command applies");
        }
        let w = run.state_at(script.steps);
        assert_eq!(w, replay(&start, path), "{inv:?}: {path:?}");
        assert!(!w.invariants[inv]);
        assert_eq!(run.first_violation(*inv), Some(script.steps));
        checked += 1;
    }
    assert!(checked > 0);
}

#[test]
fn a_race_is_not_a_command() {
    let s = by_id("concurrent-duplicates");
    let mut w = world(&s, s.default_toggles());
    let start = w.clone();
    let first = *w.pending().next().expect("the client starts").0;
    w.choose(&Choice::Fire(first));
    // The two copies arrive at the same moment; the second in line goes first.
    let second = *w.pending().nth(1).expect("two copies").0;
    let path = [Choice::Fire(first), Choice::Fire(second)];
    assert_eq!(
        to_commands(&start, &path),
        Err(NotCommands::Reordered { index: 1 })
    );
}

// ----- every scenario's textbook violation -----

#[test]
fn each_undefended_scenario_shows_its_textbook_violation() {
    for s in scenario::all() {
        let expected = match s.id.as_str() {
            "conditional-update" | "consumer-redelivery" => Invariant::BalanceMatches,
            "counter-increment" => Invariant::LikesMatchOps,
            "key-reuse-different-body" | "key-scope" => Invariant::ResponseMatchesRequest,
            "receipt-email" => Invariant::OneReceipt,
            "late-put" => Invariant::NewerWriteKept,
            _ => Invariant::AtMostOnceCharge,
        };
        let start = world(s, s.undefended());
        let r = explore(&start, &Bound::default());
        let path = r
            .violation(expected)
            .unwrap_or_else(|| panic!("{}: no {expected:?} in {} states", s.id, r.unique));
        assert!(!replay(&start, path).invariants[&expected], "{}", s.id);
    }
}
