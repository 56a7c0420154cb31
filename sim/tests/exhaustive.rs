//! Every order and every single fault: for each scenario's defended
//! configuration, the explorer tries every order of the events due together,
//! with up to one lost message and one crash (at any point between two
//! events; the supervisor restarts the process), or two lost messages, and separately with one
//! clock jump (an hour, or the lab's +25 h) or one burst of two parallel
//! copies of the client's request at any point. (Bursts of up to the lab's
//! ten copies, at every step, are the single-fault sweep's: in every order,
//! three copies already make concurrent-duplicates 400 k states and ten do
//! not finish.) No safety invariant may break in any
//! reachable world, and every quiet end must keep the ledger in step and give
//! every operation a definite answer — except the limits the lesson teaches
//! (`Scenario::limits`). The undefended configurations' textbook
//! counterexamples are in `explore.rs`.
//!
//! The bounds, and the states they reach, are printed by
//! `cargo run --release -p idem-sim --example explore_bench`.

use idem_sim::explore::{describe, explore, Believed, Bound, Report, Search};
use idem_sim::invariant::Expect;
use idem_sim::scenario::{self, FaultClass, Scenario, Toggle, ToggleKind};
use idem_sim::timing::PAST_TTL;
use idem_sim::{Config, Invariant, Millis, World};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The supervisor's restart delay for scenarios that have none of their own.
const SUPERVISOR: Millis = Millis(800);

fn start(s: &Scenario) -> World {
    let mut s = s.clone();
    s.auto_restart = s.auto_restart.or(Some(SUPERVISOR));
    let toggles = s.defended();
    let config = Config::defaults(&s, 1).with_toggles(toggles);
    World::new(Arc::new(s), config)
}

/// What `report` shows broken beyond what `allowed` permits, with the shortest
/// path to it. With `single` (at most one fault on any path) every quiet end
/// must also keep the ledger in step and answer every operation (liveness);
/// with two faults the client may run out of attempts, so an end is judged
/// only where it got its answers (the ledger's repair is the retry's job).
fn unexpected(
    start: &World,
    report: &Report,
    allowed: &BTreeSet<Invariant>,
    single: bool,
) -> Vec<(Invariant, Vec<String>)> {
    let mut out = Vec::new();
    for (inv, path) in &report.violations {
        if inv.expect() == Expect::Always && !allowed.contains(inv) {
            out.push((*inv, describe(start, path)));
        }
    }
    for e in &report.outcomes {
        let answered = e.outcome.beliefs.iter().all(|b| {
            !matches!(
                b,
                Believed::NotStarted | Believed::Unknown | Believed::GaveUp
            )
        });
        for inv in &e.outcome.broken {
            let judged = match inv.expect() {
                Expect::Always => false,
                Expect::AtRest => single || answered,
                Expect::Eventually => single,
            };
            if judged && !allowed.contains(inv) && !out.iter().any(|(i, _)| i == inv) {
                out.push((*inv, describe(start, &e.path)));
            }
        }
    }
    out
}

fn check(bound: &Bound, classes: &[FaultClass]) {
    check_with(bound, classes, |_| {});
}

/// [`check`], with the search's faults set by `rules` (how far a clock jump
/// goes, how many copies a burst fires).
fn check_with(bound: &Bound, classes: &[FaultClass], rules: impl Fn(&mut Search)) {
    let single =
        bound.max_losses + bound.max_crashes + bound.max_clock_jumps + bound.max_parallel <= 1;
    let mut failures = Vec::new();
    let mut total = 0;
    for s in scenario::all() {
        if s.toggles
            .iter()
            .all(|(t, _)| t.kind() == ToggleKind::Variant)
        {
            continue; // naive-post: nothing to defend with, only the retry preset.
        }
        let w = start(s);
        let mut search = Search::new(&w, *bound);
        rules(&mut search);
        search.run(usize::MAX);
        let report = search.into_report();
        total += report.unique;
        assert!(
            !report.truncated,
            "{}: the bound {bound:?} is too wide ({} states)",
            s.id, report.unique
        );
        assert!(report.ends > 0, "{}: no end reached", s.id);
        eprintln!(
            "{:<32} {:>9} transitions {:>8} unique {:>6} ends (losses {}, crashes {}, clock jumps {}, bursts {})",
            s.id,
            report.states,
            report.unique,
            report.ends,
            bound.max_losses,
            bound.max_crashes,
            bound.max_clock_jumps,
            bound.max_parallel
        );
        let allowed: BTreeSet<Invariant> =
            classes.iter().flat_map(|c| s.allowed_breaks(*c)).collect();
        for (inv, path) in unexpected(&w, &report, &allowed, single) {
            failures.push(format!(
                "{} (defended) breaks {inv:?}:\n    {}",
                s.id,
                path.join("\n    ")
            ));
        }
    }
    assert!(total > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn bound(losses: u32, crashes: u32, clock_jumps: u32) -> Bound {
    Bound {
        max_losses: losses,
        max_crashes: crashes,
        max_clock_jumps: clock_jumps,
        ..Bound::default()
    }
}

#[test]
fn defended_configurations_keep_safety_in_every_order_with_a_loss_and_a_crash() {
    check(&bound(1, 1, 0), &[FaultClass::Loss, FaultClass::Crash]);
}

/// The truth table's column of two lost messages (and the Explore panel's
/// bound of two): any two messages lost anywhere, in every order. With two
/// faults the app may run out of attempts, so an end is judged where it got
/// its answers; no safety invariant may break anywhere.
#[test]
fn defended_configurations_keep_safety_in_every_order_with_two_losses() {
    check(&bound(2, 0, 0), &[FaultClass::Loss]);
}

#[test]
fn defended_configurations_answer_in_every_order_with_one_loss() {
    check(&bound(1, 0, 0), &[FaultClass::Loss]);
}

#[test]
fn defended_configurations_answer_in_every_order_with_one_crash() {
    check(&bound(0, 1, 0), &[FaultClass::Crash]);
}

#[test]
fn defended_configurations_survive_every_order_with_one_clock_jump() {
    check(&bound(0, 0, 1), &[FaultClass::Clock]);
}

/// The lab's +25 h at any point: past the keys' 24 h, the processor's and the
/// app's deadline. The recommended designs declare no limit for it.
#[test]
fn defended_configurations_survive_every_order_with_a_jump_past_a_day() {
    check_with(&bound(0, 0, 1), &[FaultClass::DayLater], |s| {
        s.jump = PAST_TTL
    });
}

/// Two parallel copies of the client's request at any point (the lab's
/// "parallel retries"), in every order of their statements.
#[test]
fn defended_configurations_survive_every_order_with_parallel_copies_at_any_point() {
    let copies = Bound {
        max_parallel: 1,
        ..bound(0, 0, 0)
    };
    check_with(&copies, &[FaultClass::Parallel], |s| s.copies = 2);
}

/// receipt-email without its own fault: one fault of the explorer's, a lost
/// message or a crash anywhere, in every order. The ADR's key keeps the charge
/// once either way; the receipt is sent twice on some path without the outbox,
/// and exactly once on every path with it.
#[test]
fn the_outbox_sends_exactly_one_receipt_under_any_single_fault() {
    let mut s = scenario::by_id("receipt-email").expect("scenario");
    s.faults = &[];
    for (losses, crashes) in [(1, 0), (0, 1)] {
        for outbox in [false, true] {
            let toggles = s.default_toggles().with(Toggle::Outbox, outbox);
            let w = World::new(
                Arc::new(s.clone()),
                Config::defaults(&s, 1).with_toggles(toggles),
            );
            let report = explore(&w, &bound(losses, crashes, 0));
            assert!(!report.truncated && report.ends > 0);
            eprintln!(
                "receipt-email outbox {outbox:<5} losses {losses} crashes {crashes}: \
                 {} transitions {} unique {} ends",
                report.states, report.unique, report.ends
            );
            let twice = report.violation(Invariant::OneReceipt);
            assert_eq!(twice.is_some(), !outbox, "{twice:?}");
            for e in &report.outcomes {
                assert!(e.outcome.broken.iter().all(|i| *i == Invariant::OneReceipt));
            }
            assert!(report.violation(Invariant::AtMostOnceCharge).is_none());
        }
    }
}
/// late-put with If-Match, in every order with one lost message, one crash or
/// one clock jump (and with a loss and a crash together): every end keeps the
/// web version's newer email; with one fault the app also knows what happened — saved (its re-read found its own value) or changed
/// elsewhere (412, then the re-read) — never a silent overwrite.
#[test]
fn late_put_with_if_match_keeps_the_newer_write_in_every_order_and_single_fault() {
    use idem_sim::explore::Believed::{Failed, Succeeded};
    let s = scenario::by_id("late-put").expect("late-put");
    let w = start(&s);
    for b in [
        bound(1, 0, 0),
        bound(0, 1, 0),
        bound(0, 0, 1),
        bound(1, 1, 0),
    ] {
        let report = explore(&w, &b);
        assert!(!report.truncated && report.ends > 0, "{b:?}");
        let single = b.max_losses + b.max_crashes + b.max_clock_jumps == 1;
        assert_eq!(report.violation(Invariant::NewerWriteKept), None, "{b:?}");
        for e in &report.outcomes {
            assert_eq!(e.outcome.seen.email.as_deref(), Some("ann@web.io"), "{b:?}");
            // With two faults the app may run out of attempts (no definite answer).
            let allowed: &[Invariant] = if single {
                &[]
            } else {
                &[Invariant::DefiniteAnswer]
            };
            assert!(
                e.outcome.broken.iter().all(|i| allowed.contains(i)),
                "{b:?}: {:?}",
                e.outcome
            );
            if single {
                assert!(
                    matches!(e.outcome.beliefs[..], [Succeeded | Failed(412)]),
                    "{b:?}: {:?}",
                    e.outcome
                );
            }
        }
        eprintln!(
            "late-put (If-Match) {:>6} transitions {:>6} unique {:>4} ends {b:?}",
            report.states, report.unique, report.ends
        );
    }
}

/// key-scope in every order, with one lost message, one crash or one clock
/// jump, under three configurations of the ADR's handler. Keys by user and key
/// only: some path replays the payment's answer to the refund. Scoped by method
/// and path: nothing breaks, and every end where the app got both answers has
/// the refund made (the customer back at $0). The fingerprint alone: the refund
/// gets 422 and the app knows, so no answer is wrong — but no end has the
/// refund made, and every end says so (`RefundMade`).
#[test]
fn key_scope_scoped_keys_make_the_refund_in_every_order_and_single_fault() {
    let s = scenario::by_id("key-scope").expect("key-scope");
    for (scoped, fingerprint) in [(false, false), (true, false), (false, true)] {
        let toggles = s
            .default_toggles()
            .with(Toggle::ScopedKey, scoped)
            .with(Toggle::Fingerprint, fingerprint);
        let mut sc = s.clone();
        sc.auto_restart = Some(SUPERVISOR);
        let config = Config::defaults(&sc, 1).with_toggles(toggles);
        let w = World::new(Arc::new(sc), config);
        for b in [bound(1, 0, 0), bound(0, 1, 0), bound(0, 0, 1)] {
            let report = explore(&w, &b);
            assert!(!report.truncated && report.ends > 0, "{b:?}");
            eprintln!(
                "key-scope scoped {scoped:<5} fingerprint {fingerprint:<5} {:>6} transitions \
                 {:>6} unique {:>4} ends {b:?}",
                report.states, report.unique, report.ends
            );
            let replayed = report.violation(Invariant::ResponseMatchesRequest);
            assert_eq!(replayed.is_some(), !scoped && !fingerprint, "{b:?}");
            let not_made = report.violation(Invariant::RefundMade);
            assert_eq!(not_made.is_some(), !scoped, "{b:?}");
            for e in &report.outcomes {
                let both = e
                    .outcome
                    .beliefs
                    .iter()
                    .all(|b| matches!(b, Believed::Succeeded));
                if scoped {
                    assert!(e.outcome.broken.is_empty(), "{b:?}: {:?}", e.outcome);
                    assert!(both, "{b:?}: {:?}", e.outcome);
                    assert_eq!(e.outcome.seen.charged, 0, "{b:?}: {:?}", e.outcome);
                } else {
                    assert_eq!(e.outcome.seen.charged, 100, "{b:?}: {:?}", e.outcome);
                }
                if fingerprint {
                    let refund = [Invariant::RefundMade];
                    assert_eq!(e.outcome.broken, refund, "{b:?}: {:?}", e.outcome);
                    assert_eq!(e.outcome.beliefs[1], Believed::Failed(422), "{b:?}");
                }
            }
        }
    }
}
