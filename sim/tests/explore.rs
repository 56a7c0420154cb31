//! `World::choices()`/`choose()` and `World::fingerprint()`: the fingerprint
//! ignores bookkeeping and nothing else.

use idem_sim::explore::Choice;
use idem_sim::scenario::{self, Scenario};
use idem_sim::world::Event;
use idem_sim::{Config, Millis, NodeId, Toggles, World};
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
