//! What the explorer's worker does with a [`Request`]: the reader's search
//! in installments, then the truth table, each answer a [`Reply`]. Plain
//! Rust, tested on the host; the worker crate renders the replies as markup
//! (`worker/src/view.rs`).

use crate::explore::{Bound, Choice, EndState, Report, Search};
use crate::run::Run;
use crate::scenario::Toggles;
use crate::timing::PAST_TTL;
use crate::truth::{self, Fault, Replay};
use crate::wire::{sat, Request, MAX_STATES};
use crate::world::Config;

/// What the worker answers, in order: progress, the reader's outcomes, the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Between installments: transitions taken, distinct states, and how many
    /// cells of the truth table are done, of how many.
    Progress {
        transitions: u32,
        unique: u32,
        cells: u32,
        of: u32,
    },
    /// The reader's search is over.
    Found(Found),
    /// The truth table is filled.
    Table(Vec<Cell>),
    /// Two sets of defences side by side: the first step where the reader's
    /// run and the same run under the other defences differ (`None`: they are
    /// the same), and how each ends.
    Compared {
        defences: Toggles,
        step: Option<usize>,
        mine: Box<EndState>,
        other: Box<EndState>,
    },
}

/// The reader's search, summed up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub transitions: u32,
    pub unique: u32,
    /// Distinct quiet end states.
    pub ends: u32,
    /// The bound stopped it before every state was seen.
    pub truncated: bool,
    pub outcomes: Vec<Bar>,
}

/// One outcome of the histogram: the explorer's [`EndState`], how many
/// distinct end states have it, and the shortest run to it as the lab
/// replays it (`None`: it needs a race the lab's commands cannot express).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bar {
    pub outcome: EndState,
    pub count: u32,
    pub show: Option<Replay>,
}

/// One cell of the truth table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub toggles: Toggles,
    pub fault: Fault,
    pub breaks: bool,
    /// The shortest counterexample, where it breaks and the lab can replay it.
    pub show: Option<Replay>,
}

impl Found {
    /// The report as the page shows it; `show` maps each outcome's path.
    pub fn of(r: &Report, show: impl Fn(&[Choice]) -> Option<Replay>) -> Found {
        Found {
            transitions: sat(r.states),
            unique: sat(r.unique),
            ends: sat(r.ends),
            truncated: r.truncated,
            outcomes: r
                .outcomes
                .iter()
                .map(|e| Bar {
                    outcome: e.outcome.clone(),
                    count: sat(e.count),
                    show: show(&e.path),
                })
                .collect(),
        }
    }
}

/// Transitions between two progress reports (a few tens of milliseconds).
pub const CHUNK: usize = 20_000;

/// Answers `req`, handing each reply to `post` as it is ready (a comparison,
/// `req.cmp`, is one [`Reply::Compared`]; a search is this): progress
/// after every `chunk` transitions, the reader's outcomes, then (if asked)
/// the truth table. A clock jump of the reader's search is the truth table's:
/// past the keys' TTL ([`PAST_TTL`]).
pub fn answer(req: &Request, chunk: usize, post: &mut dyn FnMut(&Reply)) {
    let s = &req.setup();
    let config = Config::defaults(s, req.seed).with_toggles(req.toggles);
    let (run, _) = Run::replay(s.clone(), config, &req.commands);
    if let Some(defences) = req.cmp {
        let other = run.with_defences(defences);
        post(&Reply::Compared {
            defences,
            step: run.diverges(&other),
            mine: Box::new(EndState::of(run.end())),
            other: Box::new(EndState::of(other.end())),
        });
        return;
    }
    let step = req.step.min(run.len());
    let start = run.state_at(step);
    let before: Vec<_> = run
        .commands()
        .into_iter()
        .filter(|(k, _)| *k < step)
        .collect();
    let bound = Bound {
        max_losses: req.losses,
        max_crashes: req.crashes,
        max_clock_jumps: req.jumps,
        max_states: MAX_STATES,
        ..Bound::default()
    };
    let cells = if req.table {
        truth::cells(s)
    } else {
        Vec::new()
    };
    let of = sat(cells.len());
    let mut search = Search::new(&start, bound);
    search.jump = PAST_TTL;
    search.supervise();
    let progress = |r: &Report, cells: usize| Reply::Progress {
        transitions: sat(r.states),
        unique: sat(r.unique),
        cells: sat(cells),
        of,
    };
    while !search.run(chunk) {
        post(&progress(search.report(), 0));
    }
    let report = search.report();
    post(&progress(report, 0));
    // An outcome's run for the lab: its shortest path, or else its shortest without a race.
    let mut found = Found::of(report, |path| truth::replay(&start, step, &before, path));
    for (i, bar) in found.outcomes.iter_mut().enumerate() {
        if bar.show.is_none() {
            bar.show = search
                .ordered_path(i)
                .and_then(|p| truth::replay(&start, step, &before, p));
        }
    }
    post(&Reply::Found(found));
    let report = search.into_report();
    if !req.table {
        return;
    }
    let mut table = Vec::with_capacity(cells.len());
    for (i, cell) in cells.iter().enumerate() {
        let (start, prefix, mut search) = cell.search(s, req.seed);
        while !search.run(chunk) {}
        let r = search.into_report();
        let path = truth::verdict(&r);
        let show: Option<Replay> =
            path.and_then(|p| truth::replay(&start, prefix.len(), &prefix, p));
        table.push(Cell {
            toggles: cell.toggles,
            fault: cell.fault,
            breaks: path.is_some(),
            show,
        });
        post(&progress(&report, i + 1));
    }
    post(&Reply::Table(table));
}
