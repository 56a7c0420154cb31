//! Properties over many seeds, with a small property loop of our own (the
//! core has no dependencies, and neither do its tests):
//!
//! (a) every scenario under its `defended()` toggles keeps its safety
//!     invariants under random faults — or breaks exactly where a documented
//!     limit of its defence says it may, and the defence of the lesson that
//!     covers that fault closes the gap;
//! (b) every scenario under its `undefended()` toggles breaks its headline
//!     invariant under its default fault, for every seed;
//! (c) the same scenario and configuration always give the same run;
//! (d) restoring step k and stepping once (or re-applying the command recorded
//!     there) gives step k + 1, and a command applied at step k keeps the past
//!     and replaces the future.
//!
//! A failure names the scenario, the toggles, the seed and the faults, and
//! prints the trace of the first failing run.

use idem_sim::net::RandomFaults;
use idem_sim::rng::Rng;
use idem_sim::run::MAX_STEPS;
use idem_sim::scenario::{self, Scenario, Toggle, Toggles};
use idem_sim::trace::Cause;
use idem_sim::{Command, Config, Invariant, Millis, NodeId, Run, World};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::Arc;

/// Seeds per scenario and property.
const SEEDS: u64 = 1_000;

/// Loss and duplication on the mobile link: the faults every defence must survive.
const NETWORK: RandomFaults = RandomFaults {
    loss: 150,
    duplicate: 150,
    crash: 0,
    max_crashes: 0,
};

/// The same plus API (and consumer) crashes at handler steps, at most two a run.
const CRASHES: RandomFaults = RandomFaults {
    loss: 100,
    duplicate: 100,
    crash: 40,
    max_crashes: 2,
};

/// How long the supervisor takes to restart a crashed process, for the
/// scenarios that have none (`auto_restart: None`). Without one, a crashed
/// instance stays down for good: every later request to it is lost, which is
/// only more loss (NETWORK covers it), and with a single instance the run ends
/// with the client giving up — no retry ever meets a fresh process, and that
/// meeting is what the defences are about. So under CRASHES every scenario
/// gets the supervisor crash-after-charge has.
const SUPERVISOR: Millis = Millis(800);

// ---------------------------------------------------------------- the property loop

/// One configuration under test.
#[derive(Clone)]
struct Case {
    scenario: Arc<Scenario>,
    toggles: Toggles,
    random: RandomFaults,
}

impl Case {
    fn new(s: &Scenario, toggles: Toggles, random: RandomFaults) -> Case {
        let mut s = s.clone();
        if random.crash > 0 && s.auto_restart.is_none() {
            s.auto_restart = Some(SUPERVISOR);
        }
        Case {
            scenario: Arc::new(s),
            toggles,
            random,
        }
    }

    fn config(&self, seed: u64) -> Config {
        Config {
            toggles: self.toggles,
            seed,
            random: self.random,
        }
    }

    fn run(&self, seed: u64) -> Run {
        Run::new((*self.scenario).clone(), self.config(seed))
    }

    /// How to get this run again.
    fn describe(&self, seed: u64) -> String {
        let on: Vec<&str> = Toggle::ALL
            .iter()
            .filter(|t| self.toggles.has(**t))
            .map(|t| t.id())
            .collect();
        let mut s = format!(
            "scenario {}, toggles on [{}], seed {seed}, random {:?}",
            self.scenario.id,
            on.join(", "),
            self.random
        );
        if self.random.crash > 0 {
            let _ = write!(s, ", auto_restart {:?}", self.scenario.auto_restart);
        }
        s
    }
}

/// Runs `prop` on the run of each seed `0..SEEDS`; on failures, panics with the first few,
/// each naming what reproduces it, and the trace of the first.
fn for_all_seeds(case: &Case, prop: impl Fn(u64, Run) -> Result<(), String>) {
    for_seeds(case, 0..SEEDS, prop)
}

fn for_seeds(
    case: &Case,
    seeds: impl IntoIterator<Item = u64>,
    prop: impl Fn(u64, Run) -> Result<(), String>,
) {
    let mut failures = Vec::new();
    let mut first_trace = None;
    let mut count = 0;
    for seed in seeds {
        count += 1;
        if let Err(e) = prop(seed, case.run(seed)) {
            if first_trace.is_none() {
                // The run is deterministic: run it again to show it.
                first_trace = Some(case.run(seed).text());
            }
            failures.push(format!("{}: {e}", case.describe(seed)));
        }
    }
    if !failures.is_empty() {
        panic!(
            "{} of {count} seeds fail:\n{}\n--- trace of the first:\n{}",
            failures.len(),
            failures[..failures.len().min(5)].join("\n"),
            first_trace.unwrap_or_default()
        );
    }
}

fn ensure(ok: bool, msg: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(msg())
    }
}

// ---------------------------------------------------------------- (a) defended configurations

/// A fault class a defence does not cover: the invariant may break, and
/// `fix` (the defence another lesson teaches) closes it; `None`: no toggle does.
struct Limit {
    scenario: &'static str,
    faults: &'static str,
    breaks: &'static [Invariant],
    fix: Option<&'static [Toggle]>,
    /// The scenario of the lesson that shows this limit to the reader.
    shown_by: &'static str,
    why: &'static str,
}

const CHECK_THEN_ACT: &str = "the key is looked up with GET and written after the work \
    (check-then-act): a duplicate of the request that arrives while the first is still \
    running misses too. The scenario's own defence is about something else (which \
    instance, which body, how long); concurrent-duplicates teaches the atomic claim.";

const CHARGE_OUTSIDE_THE_TRANSACTION: &str = "a crash between the processor's charge and \
    the commit of the key loses the record of the charge; the retry charges again. \
    crash-after-charge teaches the fix: the key in the effect's transaction and passed \
    down to the processor (which, with the key in Postgres under a unique index, also \
    stops the duplicates that break check-then-act in these runs).";

const LIMITS: &[Limit] = &[
    Limit {
        scenario: "in-memory-store",
        faults: "network",
        breaks: &[Invariant::AtMostOnceCharge],
        fix: Some(&[Toggle::AtomicClaim]),
        shown_by: "concurrent-duplicates",
        why: CHECK_THEN_ACT,
    },
    Limit {
        scenario: "key-reuse-different-body",
        faults: "network",
        breaks: &[Invariant::AtMostOnceCharge],
        fix: Some(&[Toggle::AtomicClaim]),
        shown_by: "concurrent-duplicates",
        why: CHECK_THEN_ACT,
    },
    Limit {
        scenario: "ttl-expiry",
        faults: "network",
        breaks: &[Invariant::AtMostOnceCharge],
        fix: Some(&[Toggle::AtomicClaim]),
        shown_by: "concurrent-duplicates",
        why: CHECK_THEN_ACT,
    },
    Limit {
        scenario: "new-key-per-retry",
        faults: "network",
        breaks: &[Invariant::AtMostOnceCharge],
        fix: Some(&[Toggle::AtomicClaim]),
        shown_by: "concurrent-duplicates",
        why: CHECK_THEN_ACT,
    },
    Limit {
        scenario: "in-memory-store",
        faults: "crashes",
        breaks: &[Invariant::AtMostOnceCharge, Invariant::LedgerMatchesCharges],
        fix: Some(&[Toggle::SameTransaction, Toggle::KeyToProcessor]),
        shown_by: "crash-after-charge",
        why: CHARGE_OUTSIDE_THE_TRANSACTION,
    },
    Limit {
        scenario: "key-reuse-different-body",
        faults: "crashes",
        breaks: &[Invariant::AtMostOnceCharge],
        fix: Some(&[Toggle::SameTransaction, Toggle::KeyToProcessor]),
        shown_by: "crash-after-charge",
        why: CHARGE_OUTSIDE_THE_TRANSACTION,
    },
    Limit {
        scenario: "ttl-expiry",
        faults: "crashes",
        breaks: &[Invariant::AtMostOnceCharge, Invariant::LedgerMatchesCharges],
        // Its retry comes 25 h later, when the processor has forgotten the key
        // too (it prunes keys after 24 h): the fix also stops the app retrying
        // past a day.
        fix: Some(&[
            Toggle::SameTransaction,
            Toggle::KeyToProcessor,
            Toggle::ShortDeadline,
        ]),
        shown_by: "crash-after-charge",
        why: CHARGE_OUTSIDE_THE_TRANSACTION,
    },
    Limit {
        scenario: "new-key-per-retry",
        faults: "crashes",
        breaks: &[Invariant::AtMostOnceCharge, Invariant::LedgerMatchesCharges],
        fix: Some(&[Toggle::SameTransaction, Toggle::KeyToProcessor]),
        shown_by: "crash-after-charge",
        why: CHARGE_OUTSIDE_THE_TRANSACTION,
    },
];

/// The safety invariants (all but DefiniteAnswer) broken in `run`.
///
/// Under crashes, LedgerMatchesCharges is judged at the end and only when the
/// client got a definite answer: between a crash after the charge and the
/// retry that repairs it the ledger genuinely lags (the trace shows it), and a
/// client that gave up leaves the repair to reconciliation, outside the model.
/// Every other invariant must hold at every step.
fn broken(run: &Run, crashes: bool) -> BTreeSet<Invariant> {
    let end = run.end();
    let answered = end.client.ops.iter().all(|o| o.belief.is_definite());
    run.scenario
        .invariants
        .iter()
        .copied()
        .filter(|inv| match inv {
            Invariant::DefiniteAnswer => false,
            Invariant::LedgerMatchesCharges if crashes => answered && !end.invariants[inv],
            _ => run.first_violation(*inv).is_some(),
        })
        .collect()
}

fn defended_under(faults: &'static str, random: RandomFaults) {
    for s in scenario::all() {
        if s.id == "naive-post" {
            // It offers no defence: its defended() is its undefended(), covered by (b).
            assert!(s.defences().is_empty());
            continue;
        }
        let limits: Vec<&Limit> = LIMITS
            .iter()
            .filter(|l| s.id == l.scenario && l.faults == faults)
            .collect();
        for l in &limits {
            assert!(scenario::by_id(l.shown_by).is_some(), "{}", l.shown_by);
        }
        let allowed: BTreeSet<Invariant> = limits
            .iter()
            .flat_map(|l| l.breaks.iter().copied())
            .collect();
        let crashes = random.crash > 0;

        // The defended configuration breaks nothing beyond its documented limits…
        let case = Case::new(s, s.defended(), random);
        let seen = std::cell::RefCell::new(BTreeSet::new());
        for_all_seeds(&case, |_, run| {
            let b = broken(&run, crashes);
            seen.borrow_mut().extend(b.iter().copied());
            let extra: Vec<_> = b.difference(&allowed).collect();
            ensure(extra.is_empty(), || {
                format!("the defended configuration breaks {extra:?}")
            })
        });
        // …and each documented limit is real (else the table is stale).
        for l in &limits {
            let missing: Vec<_> = l
                .breaks
                .iter()
                .filter(|i| !seen.borrow().contains(i))
                .collect();
            assert!(
                missing.is_empty(),
                "{} under {faults}: the documented limit ({}) never breaks {missing:?} in \
                 {SEEDS} seeds; update LIMITS",
                s.id,
                l.why
            );
        }

        // With the fixes added, only the unfixable limits may still break.
        if limits.is_empty() {
            continue;
        }
        let fixed = limits
            .iter()
            .flat_map(|l| l.fix.unwrap_or(&[]).iter())
            .fold(s.defended(), |acc, t| acc.with(*t, true));
        let unfixable: BTreeSet<Invariant> = limits
            .iter()
            .filter(|l| l.fix.is_none())
            .flat_map(|l| l.breaks.iter().copied())
            .collect();
        let case = Case::new(s, fixed, random);
        for_all_seeds(&case, |_, run| {
            let b = broken(&run, crashes);
            let extra: Vec<_> = b.difference(&unfixable).collect();
            ensure(extra.is_empty(), || {
                format!("with the fixes of LIMITS it still breaks {extra:?}")
            })
        });
    }
}

#[test]
fn defended_configurations_survive_loss_and_duplication() {
    defended_under("network", NETWORK);
}

#[test]
fn defended_configurations_survive_crashes_up_to_their_documented_limits() {
    defended_under("crashes", CRASHES);
}

// ---------------------------------------------------------------- (b) undefended configurations

/// The invariant each scenario's story breaks.
fn headline(id: &str) -> Invariant {
    match id {
        "conditional-update" | "consumer-redelivery" => Invariant::BalanceMatches,
        "counter-increment" => Invariant::LikesMatchOps,
        "key-reuse-different-body" | "key-scope" => Invariant::ResponseMatchesRequest,
        "receipt-email" => Invariant::OneReceipt,
        "late-put" => Invariant::NewerWriteKept,
        _ => Invariant::AtMostOnceCharge,
    }
}

#[test]
fn undefended_configurations_break_under_their_default_fault_for_every_seed() {
    for s in scenario::all() {
        let inv = headline(s.id.as_str());
        assert!(
            s.invariants.contains(&inv),
            "{} does not watch {inv:?}",
            s.id
        );
        let case = Case::new(s, s.undefended(), RandomFaults::default());
        for_all_seeds(&case, |_, run| {
            ensure(run.first_violation(inv).is_some(), || {
                format!("{inv:?} never breaks")
            })?;
            ensure(!run.end().invariants[&inv], || {
                format!("{inv:?} holds again at the end")
            })
        });
    }
}

// ---------------------------------------------------------------- (c) determinism

#[test]
fn the_same_scenario_and_config_give_the_same_run() {
    for s in scenario::all() {
        // Half the seeds as the page runs them, half with every fault at once.
        for (toggles, random, parity) in [
            (s.default_toggles(), RandomFaults::default(), 0),
            (s.defended(), CRASHES, 1),
        ] {
            let case = Case::new(s, toggles, random);
            for_seeds(&case, (parity..SEEDS).step_by(2), |seed, run| {
                let again = case.run(seed);
                ensure(again.text() == run.text(), || {
                    "the text traces differ".into()
                })?;
                ensure(again.trace == run.trace, || "the traces differ".into())?;
                ensure(again.end() == run.end(), || "the end states differ".into())
            });
        }
    }
    // And a different seed does change something (the seed is not ignored).
    let s = scenario::by_id("idempotency-key").unwrap();
    let case = Case::new(&s, s.default_toggles(), RandomFaults::default());
    assert_ne!(case.run(1).text(), case.run(2).text());
}

/// A run computed in two installments, first as far as a step (`Run::head`, the page's
/// first stage) and then to its end (`Run::finish`), is the run computed at once: every
/// step and every world on the way, wherever the first installment stopped.
#[test]
fn a_run_computed_in_two_installments_is_the_run_computed_at_once() {
    for s in scenario::all() {
        let case = Case::new(s, s.default_toggles(), RandomFaults::default());
        for_seeds(&case, (0..SEEDS).step_by(50), |seed, run| {
            let n = run.len();
            for upto in [0, 1, 7, n / 2, n.saturating_sub(1), n, n + 3] {
                let mut head = Run::head((*case.scenario).clone(), case.config(seed), upto);
                ensure(head.len() == upto.min(n), || {
                    format!("head({upto}) has {} steps of {n}", head.len())
                })?;
                ensure(head.trace[..] == run.trace[..head.len()], || {
                    format!("head({upto}) steps differently")
                })?;
                ensure(
                    head.is_whole() == (upto > n || head.end() == run.end()),
                    || format!("head({upto}) of {n} steps says whole: {}", head.is_whole()),
                )?;
                head.finish();
                ensure(head.is_whole(), || {
                    format!("head({upto}) finished is not whole")
                })?;
                ensure(head.trace == run.trace, || {
                    format!("head({upto}) finished has another trace")
                })?;
                ensure(head.end() == run.end(), || {
                    format!("head({upto}) finished has another end")
                })?;
                for k in 0..=n {
                    ensure(head.state_at(k) == run.state_at(k), || {
                        format!("head({upto}) finished has another world at step {k}")
                    })?;
                }
            }
            Ok(())
        });
    }
}

// ---------------------------------------------------------------- (d) restore and branch

/// The world after the first `k` records of `run`, rebuilt from scratch
/// (no checkpoint): the reference `state_at` must agree with.
fn replay_from_scratch(run: &Run, k: usize) -> World {
    let mut w = World::new(run.scenario.clone(), run.config);
    for rec in &run.trace[..k] {
        let hs = match &rec.cause {
            Cause::Event => w.step(),
            Cause::Command(c) => {
                w.fire_stale();
                w.apply(c).expect("it applied once")
            }
        };
        assert_eq!(hs, rec.happenings, "step {} replays differently", rec.index);
    }
    w
}

/// A command that applies at `w`, chosen by `rng`.
fn some_command(w: &World, rng: &mut Rng) -> Command {
    let mut options = vec![Command::AdvanceClock(Millis(1 + rng.below(5_000)))];
    if !w.client.ops.is_empty() {
        if !w.is_quiet() {
            options.push(Command::LoseNextResponse);
        }
        options.push(Command::ParallelRetries(2 + rng.below(3) as u32));
    }
    for n in w.scenario.nodes() {
        if n.can_crash() {
            options.push(if w.is_up(n) {
                Command::Crash(n)
            } else {
                Command::Restart(n)
            });
        }
    }
    if let Some(m) = w
        .msgs
        .values()
        .find(|m| m.fate == idem_sim::net::Fate::Deliver)
    {
        options.push(Command::Lose(m.id));
    }
    let i = rng.below(options.len() as u64) as usize;
    options.swap_remove(i)
}

#[test]
fn restoring_a_step_and_stepping_once_gives_the_next_step() {
    for s in scenario::all() {
        let case = Case::new(s, s.defended(), CRASHES);
        for_all_seeds(&case, |seed, mut run| {
            let mut rng = Rng::new(seed ^ 0x5EED);
            // On odd seeds the run carries a command (a branch), and on every
            // other one of those the restored step is that command, re-applied.
            let mut at_command = None;
            let mut branch = String::new();
            if seed % 2 == 1 {
                let j = rng.below(run.len() as u64 + 1) as usize;
                let cmd = some_command(&run.state_at(j), &mut rng);
                branch = format!("after apply_at({j}, {cmd:?}): ");
                run.apply_at(j, cmd).map_err(|e| format!("{branch}{e}"))?;
                at_command = Some(j).filter(|_| seed % 4 == 1);
            }
            check_restore(&run, &mut rng, at_command).map_err(|e| format!("{branch}{e}"))
        });
    }
}

/// Restores a step of `run` (`at_command`, or a random one) and steps it once.
fn check_restore(run: &Run, rng: &mut Rng, at_command: Option<usize>) -> Result<(), String> {
    let n = run.len();
    ensure(run.state_at(n) == *run.end(), || {
        "state_at(len) is not the end".into()
    })?;
    ensure(
        !n.is_multiple_of(16) || run.state_at(n + 5) == *run.end(),
        || "state_at clamps".into(),
    )?;
    let k = at_command.unwrap_or_else(|| rng.below(n as u64) as usize);
    let mut w = run.state_at(k);
    ensure(w == replay_from_scratch(run, k), || {
        format!("state_at({k}) differs from a replay from scratch")
    })?;
    let rec = &run.trace[k];
    let hs = match &rec.cause {
        Cause::Event => w.step(),
        Cause::Command(c) => {
            w.fire_stale();
            w.apply(c).map_err(|e| format!("{e}"))?
        }
    };
    ensure(hs == rec.happenings, || {
        format!("step {} from state_at({k}) happens differently", k + 1)
    })?;
    if k + 1 == n {
        // The end is the last step's world with its stale timers fired.
        ensure(w.step().is_empty(), || "events remain after the end".into())?;
    }
    ensure(w == run.state_at(k + 1), || {
        format!(
            "state_at({k}) stepped once differs from state_at({})",
            k + 1
        )
    })
}

#[test]
fn a_command_at_step_k_keeps_the_past_and_replaces_the_future() {
    for s in scenario::all() {
        let case = Case::new(s, s.default_toggles(), CRASHES);
        for_all_seeds(&case, |seed, run| {
            let mut rng = Rng::new(seed ^ 0xB4A2C);
            let k = rng.below(run.len() as u64 + 1) as usize;
            let before = run.state_at(k);
            let cmd = some_command(&before, &mut rng);
            let old = run.trace.clone();
            let mut branch = run;
            branch
                .apply_at(k, cmd.clone())
                .map_err(|e| format!("{cmd:?} at {k}: {e}"))?;
            ensure(branch.trace[..k] == old[..k], || {
                format!("{cmd:?} at {k} changed the past")
            })?;
            let rec = &branch.trace[k];
            ensure(
                rec.index == k + 1 && rec.cause == Cause::Command(cmd.clone()),
                || format!("step {} is not the command {cmd:?}", k + 1),
            )?;
            ensure(branch.trace[k..] != old[k..], || {
                "the old future survived".into()
            })?;
            ensure(
                branch
                    .trace
                    .iter()
                    .enumerate()
                    .all(|(i, r)| r.index == i + 1),
                || "step indices are not 1..=len".into(),
            )?;
            // The new future is what the world restored at k does after the command,
            // step by step (restoring itself is checked against replays from
            // scratch above), and the branch's checkpoints agree with it.
            let mut w = before;
            let probe = (k + 1 + branch.len()) / 2;
            for (i, rec) in branch.trace.iter().enumerate().skip(k) {
                if i == probe && branch.state_at(i) != w {
                    return Err(format!(
                        "after {cmd:?} at {k}, state_at({i}) differs from the world stepped there"
                    ));
                }
                let hs = match &rec.cause {
                    Cause::Event => w.step(),
                    Cause::Command(c) => {
                        w.fire_stale();
                        w.apply(c).map_err(|e| format!("{e}"))?
                    }
                };
                ensure(hs == rec.happenings, || {
                    format!("after {cmd:?} at {k}, step {} happens differently", i + 1)
                })?;
            }
            // What is left after the last step are stale timers: firing them
            // happens nothing, and the end is the world with them fired, quiet.
            ensure(w.step().is_empty() || branch.len() == MAX_STEPS, || {
                format!("after {cmd:?} at {k}, the run stopped while events remained")
            })?;
            ensure(*branch.end() == w, || {
                format!("after {cmd:?} at {k}, the end is not the world after the last step")
            })?;
            ensure(branch.len() == MAX_STEPS || branch.end().is_quiet(), || {
                format!("after {cmd:?} at {k}, the run ends with timers pending")
            })?;
            // A command that cannot apply changes nothing (checked on every 8th seed).
            if seed % 8 != 0 {
                return Ok(());
            }
            let (len, end) = (branch.len(), branch.end().clone());
            ensure(
                branch.apply_at(k, Command::ParallelRetries(0)).is_err(),
                || "ParallelRetries(0) applied".into(),
            )?;
            ensure(branch.len() == len && *branch.end() == end, || {
                "a refused command changed the run".into()
            })
        });
    }
}

#[test]
fn commands_that_cannot_apply_are_refused() {
    use idem_sim::world::CommandError;
    let s = scenario::by_id("idempotency-key").unwrap();
    let mut w = World::new(
        Arc::new(s),
        Config {
            toggles: Toggles::default(),
            seed: 1,
            random: RandomFaults::default(),
        },
    );
    assert_eq!(
        w.apply(&Command::Restart(NodeId::Api(0))),
        Err(CommandError::AlreadyUp(NodeId::Api(0)))
    );
    assert_eq!(
        w.apply(&Command::Crash(NodeId::Api(1))),
        Err(CommandError::NotCrashable(NodeId::Api(1)))
    );
    assert_eq!(
        w.apply(&Command::Crash(NodeId::Redis)),
        Err(CommandError::NotCrashable(NodeId::Redis))
    );
    assert_eq!(
        w.apply(&Command::ParallelRetries(11)),
        Err(CommandError::BadCount(11))
    );
    assert_eq!(
        w.apply(&Command::AdvanceClock(Millis::ZERO)),
        Err(CommandError::BadDuration(Millis::ZERO))
    );
    assert_eq!(
        w.apply(&Command::Lose(idem_sim::MsgId(999))),
        Err(CommandError::NoSuchMessage(idem_sim::MsgId(999)))
    );
    assert!(w.apply(&Command::Crash(NodeId::Api(0))).is_ok());
    assert_eq!(
        w.apply(&Command::Crash(NodeId::Api(0))),
        Err(CommandError::AlreadyDown(NodeId::Api(0)))
    );
    let pipeline = scenario::by_id("consumer-redelivery").unwrap();
    let mut w = World::new(
        Arc::new(pipeline),
        Config {
            toggles: Toggles::default(),
            seed: 1,
            random: RandomFaults::default(),
        },
    );
    assert_eq!(
        w.apply(&Command::LoseNextResponse),
        Err(CommandError::NoClient)
    );
    assert_eq!(
        w.apply(&Command::ParallelRetries(2)),
        Err(CommandError::NoClient)
    );
}
