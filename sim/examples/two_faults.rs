//! A sampled two-fault sweep: every scenario's defended configuration, on a
//! few seeds, with a first fault at a sampled step and a second one at a
//! sampled later step of the run that follows, each drawn from every fault the
//! lab's buttons offer there (lose a message in flight or the next response,
//! crash or restart a process, +1 h, +25 h, 2 or 10 parallel copies). It
//! prints the runs and, by scenario, the pair of fault classes and the
//! invariants broken beyond the scenario's declared limits (a run is judged as
//! the single-fault sweep judges it: safety at any step, the ledger and the
//! answers at the end).
//!
//! `cargo run --release -p idem-sim --example two_faults [seeds] [every]`:
//! `seeds` per scenario (default 4), and a fault pair at every `every`-th step
//! of each (default 3).

use idem_sim::scenario::{self, FaultClass, Scenario, ToggleKind};
use idem_sim::{Command, Config, Invariant, Millis, Run};
use std::collections::{BTreeMap, BTreeSet};

/// The parallel copies it fires: the least and the lab's most.
const COPIES: [u32; 2] = [2, *Command::PARALLEL.end()];

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .nth(n)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let (seeds, every) = (arg(1, 4) as u64, arg(2, 3).max(1));
    let mut runs = 0usize;
    let mut beyond = 0usize;
    let mut by_class: BTreeMap<String, usize> = BTreeMap::new();
    for s in scenario::all() {
        if s.toggles
            .iter()
            .all(|(t, _)| t.kind() == ToggleKind::Variant)
        {
            continue; // naive-post: nothing to defend with.
        }
        let mut s: Scenario = s.clone();
        s.auto_restart = s.auto_restart.or(Some(Millis(800)));
        let toggles = s.defended();
        for seed in 0..seeds {
            let base = Run::new(s.clone(), Config::defaults(&s, seed).with_toggles(toggles));
            for k in (0..=base.len()).step_by(every) {
                for first in base.state_at(k).reader_faults(&COPIES) {
                    let mut one = base.clone();
                    if one.apply_at(k, first.clone()).is_err() {
                        continue;
                    }
                    let c1 = FaultClass::of(&first).expect("a fault");
                    // The second fault: at a later step, turned by the first's place.
                    for j in (k + 1..=one.len()).skip(k % every).step_by(every) {
                        for second in one.state_at(j).reader_faults(&COPIES) {
                            let mut two = one.clone();
                            if two.apply_at(j, second.clone()).is_err() {
                                continue;
                            }
                            runs += 1;
                            let c2 = FaultClass::of(&second).expect("a fault");
                            let allowed: BTreeSet<Invariant> = s
                                .allowed_breaks(c1)
                                .into_iter()
                                .chain(s.allowed_breaks(c2))
                                .collect();
                            let extra: Vec<Invariant> =
                                two.broken().difference(&allowed).copied().collect();
                            if !extra.is_empty() {
                                beyond += 1;
                                let key = format!("{:<32} {c1:?}+{c2:?} {extra:?}", s.id);
                                *by_class.entry(key).or_default() += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    println!("two-fault sweep: {runs} runs ({seeds} seeds, a pair at every {every}th step)");
    println!("{beyond} runs break an invariant beyond the declared limits of both faults");
    for (k, n) in &by_class {
        println!("{n:8} {k}");
    }
}
