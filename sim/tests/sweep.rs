//! The single-fault sweep: for every scenario's defended configuration and
//! [`SEEDS`] seeds, at every step of the run, apply each single fault the
//! reader can cause there — crash or restart each crashable node, lose each
//! message in flight or the next response, move the clock by an hour or by 25,
//! fire parallel copies (2 to the lab's 10) —
//! run to the end, and check the safety invariants and liveness.
//!
//! A fault strikes between any two events, not only at a handler's phase
//! boundaries: every step of the trace is a place to strike. A crashed process
//! is restarted by a supervisor (the scenario's own, or [`SUPERVISOR`]), so
//! that once the fault has passed every operation must end with a definite
//! answer while the client keeps retrying.
//!
//! The only exceptions are the limits the lesson teaches, declared with each
//! scenario (`Scenario::limits`), each naming the scenario that shows it. A
//! failure names scenario, seed, step and fault.

use idem_sim::scenario::{self, FaultClass, Scenario, Toggle, ToggleKind};
use idem_sim::{Command, Config, Invariant, Millis, Run, World};
use std::collections::BTreeSet;

/// Seeds per scenario.
const SEEDS: u64 = 50;

/// The supervisor's restart delay for scenarios that have none of their own.
const SUPERVISOR: Millis = Millis(800);

/// The most parallel copies the lab fires at once ([`Command::PARALLEL`]).
const MAX_COPIES: u32 = *Command::PARALLEL.end();

/// Every single fault the reader can cause in `w` at `step` of seed `seed`'s
/// run: the explorer's faults (lose a message in flight, crash or restart a
/// process, +1 h), +25 h, and the client's own (lose the next response,
/// parallel copies: 2 and the lab's maximum everywhere, and one count between,
/// which turns with the step and the seed so that every count is swept).
fn single_faults(w: &World, seed: u64, step: usize) -> Vec<Command> {
    let between = 3 + (seed as u32 + step as u32) % (MAX_COPIES - 3);
    w.reader_faults(&[2, between, MAX_COPIES])
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
        if s.toggles
            .iter()
            .all(|(t, _)| t.kind() == ToggleKind::Variant)
        {
            continue; // naive-post: nothing to defend with, only the retry preset.
        }
        let s = supervised(s);
        let toggles = s.defended();
        for seed in 0..SEEDS {
            let base = Run::new(s.clone(), Config::defaults(&s, seed).with_toggles(toggles));
            for k in 0..=base.len() {
                let w = base.state_at(k);
                for cmd in single_faults(&w, seed, k) {
                    let class = FaultClass::of(&cmd).expect("a fault");
                    let mut run = base.clone();
                    if run.apply_at(k, cmd.clone()).is_err() {
                        failures.push(format!("{} seed {seed}: {cmd:?} at {k} refused", s.id));
                        continue;
                    }
                    runs += 1;
                    let allowed: BTreeSet<Invariant> =
                        s.allowed_breaks(class).into_iter().collect();
                    let b = run.broken();
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
    // Each limit is real: each of its fault classes breaks something, and each
    // invariant it names breaks somewhere (else the scenario's `limits` are stale).
    for s in scenario::all() {
        for l in s.limits {
            let shows =
                |class: &FaultClass, inv: &Invariant| seen_limits.contains(&(s.id, *class, *inv));
            for class in l.faults {
                assert!(
                    l.breaks.iter().any(|inv| shows(class, inv)),
                    "the limit of {} under {class:?} (breaks {:?}, shown by {}) never shows: \
                     update its limits",
                    s.id,
                    l.breaks,
                    l.shown_by
                );
            }
            for inv in l.breaks {
                assert!(
                    l.faults.iter().any(|class| shows(class, inv)),
                    "the limit of {} never breaks {inv:?}: update its limits",
                    s.id
                );
            }
        }
    }
    println!("sweep: {runs} single-fault runs");
    let tally: Vec<String> = tally.iter().map(|(k, n)| format!("{n:6} {k}")).collect();
    assert!(
        failures.is_empty(),
        "{} of {runs} single-fault runs fail; by scenario, fault and invariants:\n{}\nthe first:\n{}",
        failures.len(),
        tally.join("\n"),
        failures[..failures.len().min(20)].join("\n")
    );
}
