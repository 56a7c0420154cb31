//! A whole run of a scenario, computed to its end, with instant time travel.
//!
//! The run keeps the trace and a checkpoint of the world every
//! [`CHECKPOINT_EVERY`] steps. The state at step k is the nearest checkpoint
//! at or before k, replayed forward (at most `CHECKPOINT_EVERY − 1` steps;
//! the world is deterministic, so the replay repeats history exactly). A
//! command applied at step k starts a new branch: the future after k is
//! discarded, the command becomes step k + 1, and the run is computed again
//! to its end.
//!
//! A run may also be computed in two installments: [`Run::head`] only as far as
//! a step, [`Run::finish`] the rest (the page shows its first step before the
//! rest is computed); the same run as [`Run::new`] computes at once.

use crate::invariant::Invariant;
use crate::scenario::{Retry, Scenario, Toggles};
use crate::trace::{Cause, Happening, StepRecord};
use crate::world::{Command, CommandError, Config, World};
use std::sync::Arc;

/// How often the run keeps a full copy of the world.
pub const CHECKPOINT_EVERY: usize = 32;
/// A run stops here even if events remain (a safety net; scenarios end far sooner).
pub const MAX_STEPS: usize = 10_000;

/// A reader's command that could not be applied again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    pub step: usize,
    pub command: Command,
    pub why: CommandError,
}

#[derive(Clone, Debug)]
pub struct Run {
    pub scenario: Arc<Scenario>,
    pub config: Config,
    /// `trace[i]` is step `i + 1`.
    pub trace: Vec<StepRecord>,
    /// `checkpoints[j]` is the world after step `j × CHECKPOINT_EVERY`.
    checkpoints: Vec<World>,
    /// The world after the last step.
    end: World,
}

impl Run {
    /// Runs `scenario` under `config` to its end.
    pub fn new(scenario: Scenario, config: Config) -> Run {
        Run::head(scenario, config, MAX_STEPS)
    }

    /// The run of `scenario` under `config` computed only as far as step `upto`
    /// (to its end if that comes sooner): its steps up to `upto` are those of
    /// [`Run::new`], and [`Run::finish`] computes the rest.
    pub fn head(scenario: Scenario, config: Config, upto: usize) -> Run {
        let scenario = Arc::new(scenario);
        let w = World::new(scenario.clone(), config);
        let mut run = Run {
            scenario,
            config,
            trace: Vec::new(),
            checkpoints: vec![w.clone()],
            end: w.clone(),
        };
        run.extend_to(w, upto);
        run
    }

    /// Whether the run is computed to its end (every run but a [`Run::head`]
    /// that stopped short of it). Only such a run takes commands or replays.
    pub fn is_whole(&self) -> bool {
        self.end.is_quiet() || self.trace.len() >= MAX_STEPS
    }

    /// Computes the rest of a run [`Run::head`] began: then it is the run
    /// [`Run::new`] computes at once.
    pub fn finish(&mut self) {
        if !self.is_whole() {
            self.extend(self.end.clone());
        }
    }

    /// The number of steps (computed so far: see [`Run::is_whole`]).
    pub fn len(&self) -> usize {
        self.trace.len()
    }

    pub fn is_empty(&self) -> bool {
        self.trace.is_empty()
    }

    /// The world after the last step.
    pub fn end(&self) -> &World {
        &self.end
    }

    /// The world after `step` steps (0: the start). Clamped to the end.
    pub fn state_at(&self, step: usize) -> World {
        let step = step.min(self.len());
        if step == self.len() {
            return self.end.clone();
        }
        self.replay_to(step)
    }

    /// The world after `step` steps, rebuilt from the nearest checkpoint.
    fn replay_to(&self, step: usize) -> World {
        let j = step / CHECKPOINT_EVERY;
        let mut w = self.checkpoints[j].clone();
        for rec in &self.trace[j * CHECKPOINT_EVERY..step] {
            replay(&mut w, rec);
        }
        w
    }

    /// Applies `cmd` at `step`: the future after `step` is replaced by the
    /// command (step `step + 1`) and what follows from it.
    pub fn apply_at(&mut self, step: usize, cmd: Command) -> Result<(), CommandError> {
        let step = step.min(self.len());
        let mut w = self.state_at(step);
        w.fire_stale();
        let happenings = w.apply(&cmd)?;
        self.trace.truncate(step);
        self.checkpoints.truncate(step / CHECKPOINT_EVERY + 1);
        self.push(
            StepRecord {
                index: step + 1,
                time: w.now,
                cause: Cause::Command(cmd),
                happenings,
            },
            &w,
        );
        self.extend(w);
        Ok(())
    }

    fn push(&mut self, rec: StepRecord, w: &World) {
        self.trace.push(rec);
        if self.trace.len().is_multiple_of(CHECKPOINT_EVERY) {
            self.checkpoints.push(w.clone());
        }
    }

    fn extend(&mut self, w: World) {
        self.extend_to(w, MAX_STEPS);
    }

    /// Steps `w`, the world after the last step, on to step `upto` or the end.
    fn extend_to(&mut self, mut w: World, upto: usize) {
        while !w.is_quiet() && self.trace.len() < upto.min(MAX_STEPS) {
            let happenings = w.step();
            if happenings.is_empty() {
                // Only stale timers were left, and firing them changed nothing
                // but the clock and the queue: no step records it. The end is
                // the world with them fired, quiet (`World::step` returns nothing
                // only once the queue is empty), so what is judged once nothing
                // is left to happen is judged there.
                break;
            }
            let rec = StepRecord {
                index: self.trace.len() + 1,
                time: w.now,
                cause: Cause::Event,
                happenings,
            };
            self.push(rec, &w);
        }
        self.end = w;
    }

    /// The reader's commands in this run, each with the step it was applied at
    /// (the scenario's own scripted commands are events, not listed here). A
    /// copied link carries exactly these.
    pub fn commands(&self) -> Vec<(usize, Command)> {
        self.trace
            .iter()
            .filter_map(|r| match &r.cause {
                Cause::Command(c) => Some((r.index - 1, c.clone())),
                Cause::Event => None,
            })
            .collect()
    }

    /// The run of `scenario` under `config` with `commands` applied in order, each at
    /// its step; the commands that no longer apply (the run is shorter, the message is
    /// not in flight, the node is already down…) are left out and returned with why.
    pub fn replay(
        scenario: Scenario,
        config: Config,
        commands: &[(usize, Command)],
    ) -> (Run, Vec<Dropped>) {
        let mut run = Run::new(scenario, config);
        let mut dropped = Vec::new();
        for (k, cmd) in commands {
            let result = if *k > run.len() {
                Err(CommandError::BeyondTheEnd(*k))
            } else {
                run.apply_at(*k, cmd.clone())
            };
            if let Err(why) = result {
                dropped.push(Dropped {
                    step: *k,
                    command: cmd.clone(),
                    why,
                });
            }
        }
        (run, dropped)
    }

    /// The same run under other toggles: the reader's commands that still apply
    /// are applied again at their steps; the others are returned.
    pub fn with_toggles(&self, toggles: Toggles) -> (Run, Vec<Dropped>) {
        self.with_policy(self.scenario.retry, toggles)
    }

    /// The same run with the client under `retry` (the reader's numbers) and
    /// `toggles`, the reader's commands replayed as [`Run::with_toggles`] does.
    pub fn with_policy(&self, retry: Retry, toggles: Toggles) -> (Run, Vec<Dropped>) {
        let s = self.scenario.with_retry(retry);
        let config = Config {
            toggles,
            ..self.config
        };
        Run::replay(s, config, &self.commands())
    }

    /// The invariants of its scenario it breaks, as the sweeps judge a run:
    /// safety at any step; the ledger and the answers at the end (between a
    /// crash after the charge and the retry that repairs it the ledger
    /// genuinely lags).
    pub fn broken(&self) -> std::collections::BTreeSet<Invariant> {
        let end = self.end();
        self.scenario
            .invariants
            .iter()
            .copied()
            .filter(|inv| match inv {
                Invariant::LedgerMatchesCharges | Invariant::DefiniteAnswer => !end.invariants[inv],
                _ => self.first_violation(*inv).is_some(),
            })
            .collect()
    }

    /// The first step at which `inv` stopped holding.
    pub fn first_violation(&self, inv: Invariant) -> Option<usize> {
        // A pattern, not `==`: Happening's whole equality would be code in both modules for this.
        self.find(|h| matches!(h, Happening::Invariant { inv: i, holds: false } if *i == inv))
    }

    /// The step of the decisive moment: a retry or a duplicate is sent, or a record is
    /// redelivered, and the server has not yet acted on it.
    pub fn decisive_step(&self) -> Option<usize> {
        self.find(|h| matches!(h, Happening::Decisive))
    }

    /// The same run (scenario, seed, the reader's commands that still apply) with
    /// exactly the defences of `on`, its bugs and variants as they are: the other
    /// side when the lab compares two sets of defences.
    pub fn with_defences(&self, on: Toggles) -> Run {
        let toggles = self
            .scenario
            .defences()
            .into_iter()
            .fold(self.config.toggles, |acc, d| acc.with(d, on.has(d)));
        self.with_toggles(toggles).0
    }

    /// The first step at which this run and `other` differ: the same step doing
    /// something else, or a step one of them has and the other has not; `None` if
    /// they are the same run. The lab compares two sets of defences with it (the
    /// same scenario, seed and commands, `with_toggles`), and the explorer's
    /// worker a counterexample with the reader's run.
    pub fn diverges(&self, other: &Run) -> Option<usize> {
        let same = self
            .trace
            .iter()
            .zip(&other.trace)
            .take_while(|(a, b)| a == b)
            .count();
        (same < self.len().max(other.len())).then_some(same + 1)
    }

    /// The first step with a happening that satisfies `f`.
    pub fn find(&self, f: impl Fn(&Happening) -> bool) -> Option<usize> {
        self.trace
            .iter()
            .find(|r| r.happenings.iter().any(&f))
            .map(|r| r.index)
    }

    /// The whole trace, a line per step.
    pub fn text(&self) -> String {
        self.trace.iter().map(|r| r.line() + "\n").collect()
    }
}

fn replay(w: &mut World, rec: &StepRecord) {
    match &rec.cause {
        Cause::Event => {
            w.step();
        }
        Cause::Command(c) => {
            // It was applied once already (to the world with its stale timers
            // fired, as `Run::apply_at` does), so it applies again.
            w.fire_stale();
            let _ = w.apply(c);
        }
    }
}
