//! The single-fault sweep: for every scenario's defended configuration and
//! [`SEEDS`] seeds, at every step of the run, apply each single fault the
//! reader can cause there — crash or restart each crashable node, lose each
//! message in flight or the next response, move the clock by an hour, fire
//! two parallel copies —
//! run to the end, and check the safety invariants and liveness.
//!
//! A fault strikes between any two events, not only at a handler's phase
//! boundaries: every step of the trace is a place to strike. A crashed process
//! is restarted by a supervisor (the scenario's own, or [`SUPERVISOR`]), so
//! that once the fault has passed every operation must end with a definite
//! answer while the client keeps retrying.
//!
//! The only exceptions are the [`LIMITS`] the lesson teaches, each naming the
//! scenario that shows it. A failure names scenario, seed, step and fault.

use idem_sim::net::Fate;
use idem_sim::scenario::{self, Scenario, Toggle};
use idem_sim::{Command, Config, Invariant, Millis, Run, World};
use std::collections::BTreeSet;

/// Seeds per scenario.
const SEEDS: u64 = 50;

/// The supervisor's restart delay for scenarios that have none of their own.
const SUPERVISOR: Millis = Millis(800);

/// What kind of fault a command is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    /// A process crashes (and its supervisor restarts it), or restarts early.
    Crash,
    /// One message in flight is lost.
    Loss,
    /// The clock jumps an hour (a process paused, a lease ran out under it).
    Clock,
    /// The client fires two extra copies at once.
    Parallel,
}

/// A real limit of a defence: under the fault `classes`, the defended
/// configuration of `scenario` may break `breaks`, for the reason `why`;
/// `shown_by` is the scenario of the lesson that shows that limit to the reader.
struct Limit {
    scenario: &'static str,
    classes: &'static [Class],
    breaks: &'static [Invariant],
    shown_by: &'static str,
    why: &'static str,
}

const ALL: &[Class] = &[Class::Crash, Class::Loss, Class::Clock, Class::Parallel];
const MONEY: &[Invariant] = &[Invariant::AtMostOnceCharge, Invariant::LedgerMatchesCharges];

/// The pitfalls that each teach one defence keep the rest of their handler
/// naive: they look the key up with GET and write it after the work (no claim)
/// and keep the key from the processor.
const CHECK_THEN_ACT: &str = "no claim (GET, then SET after the work) and no key to the \
    processor: a duplicate during the work, or a retry after a lost answer or a crash, \
    finds no key and charges again";

const LIMITS: &[Limit] = &[
    Limit {
        scenario: "in-memory-store",
        classes: ALL,
        breaks: MONEY,
        shown_by: "concurrent-duplicates",
        why: CHECK_THEN_ACT,
    },
    Limit {
        scenario: "ttl-expiry",
        classes: ALL,
        breaks: MONEY,
        shown_by: "concurrent-duplicates",
        why: CHECK_THEN_ACT,
    },
    Limit {
        scenario: "new-key-per-retry",
        classes: ALL,
        breaks: MONEY,
        shown_by: "concurrent-duplicates",
        why: CHECK_THEN_ACT,
    },
    Limit {
        // Its two operations reuse one key: the ledger keeps one row per key, so
        // only the charge count is watched.
        scenario: "key-reuse-different-body",
        classes: ALL,
        breaks: &[Invariant::AtMostOnceCharge],
        shown_by: "concurrent-duplicates",
        why: CHECK_THEN_ACT,
    },
    Limit {
        scenario: "status-transition",
        classes: &[Class::Crash, Class::Loss, Class::Clock],
        breaks: &[Invariant::LedgerMatchesCharges],
        shown_by: "status-transition",
        why: "the transition to PAID commits on its own, before the charge and the ledger \
              row: when the charge's answer is lost or the process dies after it, the retry's \
              UPDATE finds 0 rows and answers 200, and the charge never gets its row. The \
              row-count check stops the second charge, not the half-done first one.",
    },
];

/// Every single fault the reader can cause in `w`.
fn single_faults(w: &World) -> Vec<(Class, Command)> {
    let mut v = Vec::new();
    for n in w.scenario.nodes() {
        if n.can_crash() {
            if w.is_up(n) {
                v.push((Class::Crash, Command::Crash(n)));
            } else {
                v.push((Class::Crash, Command::Restart(n)));
            }
        }
    }
    for m in w.msgs.values() {
        if m.fate == Fate::Deliver {
            v.push((Class::Loss, Command::Lose(m.id)));
        }
    }
    v.push((Class::Clock, Command::AdvanceClock(Millis::HOUR)));
    if !w.client.ops.is_empty() {
        v.push((Class::Loss, Command::LoseNextResponse));
        v.push((Class::Parallel, Command::ParallelRetries(2)));
    }
    v
}

/// The invariants `run` breaks: safety at any step (the ledger at the end:
/// between a crash after the charge and the retry that repairs it the ledger
/// genuinely lags), liveness at the end.
fn broken(run: &Run) -> BTreeSet<Invariant> {
    let end = run.end();
    run.scenario
        .invariants
        .iter()
        .copied()
        .filter(|inv| match inv {
            Invariant::LedgerMatchesCharges | Invariant::DefiniteAnswer => !end.invariants[inv],
            _ => run.first_violation(*inv).is_some(),
        })
        .collect()
}

fn supervised(s: &Scenario) -> Scenario {
    let mut s = s.clone();
    s.auto_restart = s.auto_restart.or(Some(SUPERVISOR));
    s
}

fn on(s: &Scenario, toggles: idem_sim::Toggles) -> String {
    Toggle::ALL
        .iter()
        .filter(|t| s.offers(**t) && toggles.has(**t))
        .map(|t| t.id())
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn defended_configurations_survive_every_single_fault_at_every_step() {
    let mut failures = Vec::new();
    let mut tally: std::collections::BTreeMap<String, usize> = Default::default();
    let mut runs = 0usize;
    let mut seen_limits = BTreeSet::new();
    for s in scenario::all() {
        if s.toggles.is_empty() {
            continue; // naive-post: nothing to defend with.
        }
        let s = supervised(&s);
        let toggles = s.defended();
        for seed in 0..SEEDS {
            let base = Run::new(s.clone(), Config::defaults(&s, seed).with_toggles(toggles));
            for k in 0..=base.len() {
                let w = base.state_at(k);
                for (class, cmd) in single_faults(&w) {
                    let mut run = base.clone();
                    if run.apply_at(k, cmd.clone()).is_err() {
                        failures.push(format!("{} seed {seed}: {cmd:?} at {k} refused", s.id));
                        continue;
                    }
                    runs += 1;
                    let allowed: BTreeSet<Invariant> = LIMITS
                        .iter()
                        .filter(|l| l.scenario == s.id && l.classes.contains(&class))
                        .flat_map(|l| l.breaks.iter().copied())
                        .collect();
                    let b = broken(&run);
                    for inv in &b {
                        if allowed.contains(inv) {
                            seen_limits.insert((s.id, class, *inv));
                        }
                    }
                    let extra: Vec<_> = b.difference(&allowed).collect();
                    if !extra.is_empty() {
                        *tally
                            .entry(format!("{} {class:?} {extra:?}", s.id))
                            .or_default() += 1;
                        failures.push(format!(
                            "{} [{}] seed {seed}: {cmd:?} at step {k} breaks {extra:?}",
                            s.id,
                            on(&s, toggles)
                        ));
                    }
                }
            }
        }
    }
    for l in LIMITS {
        assert!(
            scenario::by_id(l.shown_by).is_some(),
            "no scenario {} shows the limit of {}",
            l.shown_by,
            l.scenario
        );
        // Each fault class of the limit breaks something, and each invariant breaks somewhere.
        let shows =
            |class: &Class, inv: &Invariant| seen_limits.contains(&(l.scenario, *class, *inv));
        for class in l.classes {
            assert!(
                l.breaks.iter().any(|inv| shows(class, inv)),
                "the limit of {} under {class:?} ({}) never shows: update LIMITS",
                l.scenario,
                l.why
            );
        }
        for inv in l.breaks {
            assert!(
                l.classes.iter().any(|class| shows(class, inv)),
                "the limit of {} never breaks {inv:?}: update LIMITS",
                l.scenario
            );
        }
    }
    eprintln!("sweep: {runs} single-fault runs");
    let tally: Vec<String> = tally.iter().map(|(k, n)| format!("{n:6} {k}")).collect();
    assert!(
        failures.is_empty(),
        "{} of {runs} single-fault runs fail; by scenario, fault and invariants:\n{}\nthe first:\n{}",
        failures.len(),
        tally.join("\n"),
        failures[..failures.len().min(20)].join("\n")
    );
}
