//! The truth table: which defences hold against which fault.
//!
//! For a scenario, every combination of its defence toggles (its bugs and
//! variants as by default) meets each [`Fault`] class: the explorer
//! ([`crate::explore::Search`]) walks every order of the scenario's events
//! with that fault (one, or two lost messages) added anywhere, on top of the scenario's own story
//! (its scripted faults stay, so a cell's counterexample replays in the lab
//! exactly). A cell *breaks* when some reachable world breaks an invariant
//! that holds after every step (`Expect::Always`), or a quiet end breaks one
//! judged at rest (the ledger against the processor); liveness (`Eventually`:
//! every operation answered) is left out, since the client's retry budget,
//! not the defence, decides it. Crashed nodes are judged once back up
//! ([`crate::explore::Search::supervise`]).
//!
//! A cell is a plain value; [`Cell::search`] sets up its exploration, which
//! the caller runs in installments, and [`Cell::verdict`] reads the report.

use crate::explore::{to_commands, Bound, Choice, Losable, Report, Search};
use crate::invariant::Expect;
use crate::scenario::{Scenario, Toggles};
use crate::timing::PAST_TTL;
use crate::world::{Command, Config, World};
use std::sync::Arc;

/// A class of fault, one column of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// One answer of the API to the client is lost.
    LostResponse,
    /// One reply of Redis or Postgres to the API is lost.
    LostStoreReply,
    /// Two messages are lost, any two, anywhere.
    TwoLosses,
    /// The client fires two copies of its request at once.
    Parallel,
    /// One crash of any process, at any step (restarted at any later point).
    Crash,
    /// The clock jumps 25 hours, past the keys' default TTL of 24 h.
    ClockPastTtl,
}

impl Fault {
    pub const ALL: [Fault; 6] = [
        Fault::LostResponse,
        Fault::LostStoreReply,
        Fault::TwoLosses,
        Fault::Parallel,
        Fault::Crash,
        Fault::ClockPastTtl,
    ];

    /// Stable id for test ids.
    pub fn id(self) -> &'static str {
        match self {
            Fault::LostResponse => "lost-response",
            Fault::LostStoreReply => "lost-store-reply",
            Fault::TwoLosses => "two-losses",
            Fault::Parallel => "parallel",
            Fault::Crash => "crash",
            Fault::ClockPastTtl => "clock",
        }
    }
}

/// How far a cell's exploration may go: every order of the events due at the
/// same millisecond, with its fault. Under a second each in the browser.
pub const CELL_STATES: usize = 200_000;

/// Every combination of the defences, from none to all (bit i of the index:
/// defence i is on); bugs and variants keep their defaults.
pub fn configurations(s: &Scenario) -> Vec<Toggles> {
    let ds = s.defences();
    let base = s.default_toggles();
    (0..1u32 << ds.len())
        .map(|mask| {
            ds.iter()
                .enumerate()
                .fold(base, |acc, (i, t)| acc.with(*t, mask & (1 << i) != 0))
        })
        .collect()
}

/// One cell: a configuration under a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    pub toggles: Toggles,
    pub fault: Fault,
}

/// The cells of a scenario's table, row by row (configurations × faults).
/// A scenario without a client has no responses to lose and nothing to send twice.
pub fn cells(s: &Scenario) -> Vec<Cell> {
    let faults: Vec<Fault> = Fault::ALL
        .into_iter()
        .filter(|f| s.handler != crate::scenario::Handler::Pipeline || f.needs_no_client())
        .collect();
    configurations(s)
        .into_iter()
        .flat_map(|toggles| faults.iter().map(move |&fault| Cell { toggles, fault }))
        .collect()
}

impl Fault {
    fn needs_no_client(self) -> bool {
        matches!(
            self,
            Fault::LostStoreReply | Fault::TwoLosses | Fault::Crash | Fault::ClockPastTtl
        )
    }
}

/// A counterexample as the lab replays it: the reader's commands from the
/// start of the run, and the step at which the broken world is reached.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Replay {
    pub toggles: Toggles,
    pub commands: Vec<(usize, Command)>,
    pub step: usize,
}

impl Cell {
    /// The cell's start (the run's step 0, or step 1 after the parallel
    /// copies), the commands that reached it, and its search, ready to run.
    pub fn search(&self, s: &Scenario, seed: u64) -> (World, Vec<(usize, Command)>, Search) {
        let config = Config::defaults(s, seed).with_toggles(self.toggles);
        let mut start = World::new(Arc::new(s.clone()), config);
        let mut prefix = Vec::new();
        let mut bound = Bound {
            max_losses: 0,
            max_crashes: 0,
            max_clock_jumps: 0,
            max_states: CELL_STATES,
            ..Bound::default()
        };
        let mut losable = Losable::Any;
        match self.fault {
            Fault::LostResponse => {
                bound.max_losses = 1;
                losable = Losable::Responses;
            }
            Fault::LostStoreReply => {
                bound.max_losses = 1;
                losable = Losable::StoreReplies;
            }
            Fault::TwoLosses => bound.max_losses = 2,
            Fault::Parallel => {
                let cmd = Command::ParallelRetries(2);
                if start.apply(&cmd).is_ok() {
                    prefix.push((0, cmd));
                }
            }
            Fault::Crash => bound.max_crashes = 1,
            Fault::ClockPastTtl => bound.max_clock_jumps = 1,
        }
        let mut search = Search::new(&start, bound);
        search.losable = losable;
        search.jump = PAST_TTL;
        search.supervise();
        (start, prefix, search)
    }
}

/// A finished cell's verdict: `None` if it holds, else the shortest path
/// (from the cell's start) to a world that breaks a judged invariant: one
/// that must hold after every step (`Expect::Always`), broken anywhere, or
/// one judged at rest (the ledger against the processor), broken in a quiet
/// end. Liveness (`Eventually`) is not judged.
pub fn verdict(report: &Report) -> Option<&[Choice]> {
    let always = report
        .violations
        .iter()
        .filter(|(inv, _)| inv.expect() == Expect::Always)
        .map(|(_, p)| p.as_slice());
    let at_rest = report
        .outcomes
        .iter()
        .filter(|e| {
            e.outcome
                .broken
                .iter()
                .any(|i| i.expect() == Expect::AtRest)
        })
        .map(|e| e.path.as_slice());
    always.chain(at_rest).min_by_key(|p| p.len())
}

/// `path` from a search that started at step `at` of a run with `before`
/// (the commands applied before `at`) as a run the lab replays: those
/// commands, then the path's, and the step the path ends at. `None` if the
/// path has a race the lab cannot replay ([`to_commands`]).
pub fn replay(
    start: &World,
    at: usize,
    before: &[(usize, Command)],
    path: &[Choice],
) -> Option<Replay> {
    let script = to_commands(start, path).ok()?;
    let mut commands: Vec<(usize, Command)> = before.to_vec();
    commands.extend(script.commands.into_iter().map(|(k, c)| (at + k, c)));
    Some(Replay {
        toggles: start.config.toggles,
        commands,
        step: at + script.steps,
    })
}
