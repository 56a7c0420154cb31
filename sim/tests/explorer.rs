//! A small, bounded, exhaustive exploration of event orderings, built on
//! `World::choices()` / `World::choose()` and on the world being `Hash + Eq`.
//!
//! Only `Choice::Fire` is taken: every ordering of the pending events is
//! tried, breadth first, with visited worlds deduplicated in a `HashSet`. To
//! keep it small the orderings are bounded by a race window: an event may fire
//! before the earliest pending one only if it is due at most `window` ms after
//! it (messages whose latencies could have come out the other way round). With
//! a window of 0 the exploration is the scenario's own run (plus ties). Timers
//! fire in time order, so the client never retries before its timeout.
//! One test adds `Choice::Crash`: the API may die between any two events.

use idem_sim::explore::Choice;
use idem_sim::scenario::{self, Op, OpSpec, Scenario, Toggle};
use idem_sim::world::Event;
use idem_sim::{Config, Invariant, Millis, NodeId, Toggles, World};
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

/// A choice taken on the way.
#[derive(Clone, Debug)]
enum Taken {
    /// The event due at this time fired.
    Fire(Millis, Event),
    Crash(NodeId),
}

/// What an exploration saw.
struct Explored {
    states: usize,
    /// Worlds with nothing left to fire.
    ends: usize,
    /// An ordering that reaches a bad world: the choices taken, in order (the first found).
    witness: Option<Vec<Taken>>,
    /// Worlds in which some API instance answered 409 (two copies raced on the key).
    raced: usize,
}

const MAX_DEPTH: usize = 200;
const MAX_STATES: usize = 20_000;

/// Breadth-first over the `Fire` choices of `start`, within `window`.
/// Stops at the first world for which `bad` is true when `stop_at_bad`.
fn explore(
    start: World,
    window: Millis,
    bad: impl Fn(&World) -> bool,
    stop_at_bad: bool,
) -> Explored {
    explore_with(start, window, false, bad, stop_at_bad)
}

/// As [`explore`]; with `crashes`, also `Choice::Crash` of any instance that is up, at any point.
fn explore_with(
    start: World,
    window: Millis,
    crashes: bool,
    bad: impl Fn(&World) -> bool,
    stop_at_bad: bool,
) -> Explored {
    let mut seen: HashSet<World> = HashSet::new();
    let mut queue: VecDeque<(World, Vec<Taken>)> = VecDeque::new();
    seen.insert(start.clone());
    queue.push_back((start, Vec::new()));
    let mut out = Explored {
        states: 0,
        ends: 0,
        witness: None,
        raced: 0,
    };
    while let Some((w, path)) = queue.pop_front() {
        out.states += 1;
        if bad(&w) && out.witness.is_none() {
            out.witness = Some(path.clone());
            if stop_at_bad {
                break;
            }
        }
        let choices = w.choices();
        let Some(first) = choices.iter().find_map(|c| match c {
            Choice::Fire(k) => Some(k.0),
            _ => None,
        }) else {
            out.ends += 1;
            continue;
        };
        assert!(
            path.len() < MAX_DEPTH,
            "an ordering runs past {MAX_DEPTH} events"
        );
        for c in choices {
            let taken = match c {
                Choice::Fire(k) if k.0 <= first + window => {
                    let ev = w
                        .pending()
                        .find(|(key, _)| **key == k)
                        .map(|(_, e)| e.clone());
                    Taken::Fire(k.0, ev.expect("pending"))
                }
                Choice::Crash(n) if crashes => Taken::Crash(n),
                _ => continue,
            };
            let mut next = w.clone();
            let hs = next.choose(&c);
            if hs
                .iter()
                .any(|h| matches!(h, idem_sim::trace::Happening::Responded { status: 409, .. }))
            {
                out.raced += 1;
            }
            if seen.insert(next.clone()) {
                let mut p = path.clone();
                p.push(taken);
                queue.push_back((next, p));
            }
        }
        assert!(
            seen.len() <= MAX_STATES,
            "more than {MAX_STATES} states: narrow the window"
        );
    }
    out
}

fn world(s: Scenario, toggles: Toggles) -> World {
    World::new(
        Arc::new(s),
        Config {
            toggles,
            seed: 1,
            random: Default::default(),
        },
    )
}

fn double_charged(w: &World) -> bool {
    !w.invariants[&Invariant::AtMostOnceCharge]
}

/// idempotency-key, with the request sent twice at once (a double submit),
/// and its default lost ack.
fn idempotency_key_with_copies(copies: u32) -> Scenario {
    let base = scenario::by_id("idempotency-key").unwrap();
    Scenario {
        ops: vec![Op {
            copies,
            ..Op::new(OpSpec::Charge(100))
        }]
        .leak(),
        ..base
    }
}

fn show(path: &[Taken]) -> String {
    path.iter()
        .map(|t| match t {
            Taken::Fire(at, e) => format!("{:>6} ms {e:?}", at.0),
            Taken::Crash(n) => format!("CRASH {n}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn idempotency_key_charges_at_most_once_in_every_ordering() {
    let s = idempotency_key_with_copies(2);
    let toggles = s.default_toggles();
    assert!(toggles.has(Toggle::AtomicClaim));
    let start = world(s, toggles);
    // Without reordering it is one run; within 150 ms the two copies, the
    // Redis calls and the processor's replies race in every order.
    let single = explore(start.clone(), Millis(0), double_charged, false);
    let e = explore(start, Millis(150), double_charged, false);
    assert!(
        e.witness.is_none(),
        "a double charge is reachable:\n{}",
        show(e.witness.as_deref().unwrap())
    );
    assert!(
        e.states > 10 * single.states,
        "{} vs {} states",
        e.states,
        single.states
    );
    assert!(e.ends > 1, "several distinct endings");
    assert!(
        e.raced > 0,
        "some ordering makes the copies race on the key (409)"
    );
}

#[test]
fn idempotency_key_check_then_act_double_charges_in_some_ordering() {
    // The same double submit with the claim turned into GET-then-SET and the
    // key kept from the processor: the explorer finds the race the property
    // tests find with random duplicates.
    let s = idempotency_key_with_copies(2);
    let toggles = s
        .default_toggles()
        .with(Toggle::AtomicClaim, false)
        .with(Toggle::KeyToProcessor, false);
    let e = explore(world(s, toggles), Millis(150), double_charged, true);
    let path = e.witness.expect("some ordering charges twice");
    assert!(!path.is_empty());
}

#[test]
fn concurrent_duplicates_without_the_unique_constraint_double_charges() {
    let s = scenario::by_id("concurrent-duplicates").unwrap();
    let toggles = s.default_toggles();
    assert!(!toggles.has(Toggle::UniqueConstraint));
    let e = explore(world(s, toggles), Millis(3), double_charged, true);
    let path = e.witness.expect("some ordering charges twice");
    // Both requests were delivered before the second charge.
    let delivered = path
        .iter()
        .filter(|t| matches!(t, Taken::Fire(Millis(80), Event::Deliver(_))))
        .count();
    assert!(delivered >= 2, "{}", show(&path));
}

#[test]
fn concurrent_duplicates_with_the_unique_constraint_never_double_charges() {
    let s = scenario::by_id("concurrent-duplicates").unwrap();
    for toggles in [
        s.default_toggles().with(Toggle::UniqueConstraint, true),
        s.defended(),
    ] {
        let e = explore(world(s.clone(), toggles), Millis(3), double_charged, false);
        assert!(
            e.witness.is_none(),
            "a double charge is reachable:\n{}",
            show(e.witness.as_deref().unwrap())
        );
        assert!(e.ends > 1);
        assert!(e.raced > 0);
    }
}

#[test]
fn idempotency_key_charges_at_most_once_when_the_api_may_crash_anywhere() {
    // Every point at which an instance can die, in every order of the events
    // due together; no supervisor restarts it in this scenario. The double
    // submit makes the two copies race on the key as well.
    for copies in [1, 2] {
        let s = idempotency_key_with_copies(copies);
        let toggles = s.default_toggles();
        let e = explore_with(
            world(s.clone(), toggles),
            Millis(0),
            true,
            double_charged,
            false,
        );
        assert!(
            e.witness.is_none(),
            "a double charge is reachable:\n{}",
            show(e.witness.as_deref().unwrap())
        );
        assert!(e.ends > 1);
        // What the key alone does not cover: a crash between the charge and the
        // ledger commit leaves a charge without its row (crash-after-charge).
        let ledger_gap = explore_with(
            world(s, toggles),
            Millis(0),
            true,
            |w| !w.invariants[&Invariant::LedgerMatchesCharges],
            true,
        );
        let path = ledger_gap
            .witness
            .expect("a crash after the charge is reachable");
        assert!(
            path.iter()
                .any(|t| matches!(t, Taken::Crash(NodeId::Api(0)))),
            "{}",
            show(&path)
        );
    }
}
