//! What an exploration reports: the quiet end states summed up ([`EndState`],
//! with the app's [`Believed`] per operation), grouped into [`Ending`]s, and
//! the invariants broken with their shortest paths ([`Report`]).

use super::Choice;
use crate::invariant::Invariant;
use crate::observe::Observables;
use crate::world::{Belief, World};

/// What the client believes about one operation at the end, for a histogram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Believed {
    NotStarted,
    /// A success (a payment, an account re-read after a conflict, …).
    Succeeded,
    /// A definite failure with this status.
    Failed(u16),
    /// No answer and not given up (an attempt or a retry was cut short).
    Unknown,
    /// Out of attempts without a definite answer.
    GaveUp,
}

impl Believed {
    pub fn of(b: &Belief) -> Believed {
        match b {
            Belief::NotStarted => Believed::NotStarted,
            Belief::Succeeded(_) | Belief::Reread { .. } => Believed::Succeeded,
            Belief::Failed(status, _) => Believed::Failed(*status),
            // Its PUT was refused with 412, and it says so.
            Belief::ChangedElsewhere => Believed::Failed(412),
            Belief::Waiting | Belief::Unknown | Belief::Conflict => Believed::Unknown,
            Belief::GaveUp => Believed::GaveUp,
        }
    }
}

/// A quiet world, summed up: what the reader can observe of it (the figures
/// its scenario shows, [`World::observables`]), what the app believes and which
/// invariants fail. End states are grouped by it, so a figure the catalogue
/// adds is a figure the explorer tells apart.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EndState {
    pub seen: Observables,
    /// What the client believes, per operation.
    pub beliefs: Vec<Believed>,
    /// The invariants that do not hold.
    pub broken: Vec<Invariant>,
}

impl EndState {
    pub fn of(w: &World) -> EndState {
        EndState {
            seen: w.observables(),
            beliefs: w
                .client
                .ops
                .iter()
                .map(|o| Believed::of(&o.belief))
                .collect(),
            broken: w
                .invariants
                .iter()
                .filter(|(_, holds)| !**holds)
                .map(|(i, _)| *i)
                .collect(),
        }
    }

    /// Charges at the card processor (0 where the scenario has none).
    pub fn charges(&self) -> usize {
        self.seen.charges.unwrap_or(0)
    }
}

/// One bar of the outcome histogram.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ending {
    pub outcome: EndState,
    /// Distinct quiet worlds with this outcome.
    pub count: usize,
    /// A shortest path from the start to one of them.
    pub path: Vec<Choice>,
}

/// What an exploration found.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Report {
    /// Transitions taken (choices applied, including those that led to a known state).
    pub states: usize,
    /// Distinct states reached, the start included.
    pub unique: usize,
    /// Distinct quiet states (nothing pending).
    pub ends: usize,
    /// The longest path explored.
    pub depth: usize,
    /// Some state was left unexpanded (`max_depth` or `max_states`).
    pub truncated: bool,
    /// Each invariant broken in some reachable world, with the shortest path
    /// that breaks it, in the order found.
    pub violations: Vec<(Invariant, Vec<Choice>)>,
    /// The quiet end states grouped by outcome, in the order found.
    pub outcomes: Vec<Ending>,
}

impl Report {
    /// The shortest path that breaks `inv`, if any.
    pub fn violation(&self, inv: Invariant) -> Option<&[Choice]> {
        self.violations
            .iter()
            .find(|(i, _)| *i == inv)
            .map(|(_, p)| p.as_slice())
    }
}
