//! Exhaustive, bounded exploration of what can happen to a world.
//!
//! A world lists its [`Choice`]s ([`World::choices`]): fire a pending event
//! (messages may race), lose a message in flight, crash or restart a node,
//! fast-forward the clock. [`explore`] tries them breadth first, within a
//! [`Bound`], from a start world, and reports every invariant some reachable
//! world breaks, each with the *shortest* path of choices that breaks it, and
//! a histogram of the quiet end states ([`EndState`]s).
//!
//! Visited worlds are kept as 64-bit fingerprints only ([`World::fingerprint`]):
//! a hash of the world's canonical form, which leaves out pure bookkeeping
//! (event sequence numbers, message ids) but not the id counters: worlds with
//! one fingerprint have the same futures, so the counts do not depend on the
//! order of the search (`explore::exact` tests both). Two different worlds
//! could share a fingerprint; with 64 bits and a million states the odds are
//! about one in 10⁷ per exploration, and a collision can only hide a state,
//! never invent a violation (every reported path is replayable).
//!
//! The bound ([`Bound`]): at most so many lost messages, crashes and clock
//! jumps on a path (restarts are free: any node that is down may come back at
//! any point, including one the scenario crashed); faults may come between any
//! two events. Reorderings are bounded by a race window: a message may be
//! delivered before the earliest pending event only if it is due at most
//! `window` after it, and timers (client timeouts and retries, deadlines,
//! restarts, scripts) fire in time order. An event fired ahead of others moves
//! the clock to its time; the ones it overtook then happen at that time. A
//! quiet world (nothing pending) is an end and is not expanded.
//!
//! Paths replay: applying a path's choices with [`World::choose`] to a clone
//! of the start reaches the same world. [`to_commands`] turns a path without
//! reorderings into the page's commands (`Run::apply_at`); [`describe`] prints
//! one.

use crate::invariant::Expect;
use crate::net::{Fate, Msg, MsgId, NodeId};
use crate::prefetch;
use crate::time::Millis;
use crate::timing::PAST_TTL;
use crate::trace::Happening;
use crate::world::{Command, Event, EventKey, World};
use std::collections::VecDeque;
use std::hash::{Hash, Hasher};

#[cfg(test)]
mod exact;
mod fingerprint;
mod path;
mod report;
mod waiting;
pub use fingerprint::{FingerprintSet, FxHasher, IdentityHasher};
pub use path::{describe, to_commands, NotCommands, Script};
pub use report::{Believed, EndState, Ending, Report};

/// A choice the world can make at a step, listed as data for an explorer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Choice {
    /// Fire this pending event (an ordinary step when it is the earliest).
    Fire(EventKey),
    /// Lose this message in flight ([`Command::Lose`]).
    Lose(MsgId),
    /// Crash this node ([`Command::Crash`]).
    Crash(NodeId),
    /// Bring this crashed node back ([`Command::Restart`]).
    Restart(NodeId),
    /// Fast-forward the clock ([`Command::AdvanceClock`], the reader's "+1 h").
    AdvanceClock(Millis),
    /// Fire this many parallel copies of the client's request
    /// ([`Command::ParallelRetries`], the reader's "parallel retries").
    Parallel(u32),
    /// Take this choice, and the races among waiting statements that it
    /// starts (a ROLLBACK, or a crashed lock holder's rollback, wakes every
    /// waiter on its key; a commit that renews a row lets its waiters race
    /// for it) are won as [`Picks`] says, not each by the first waiter:
    /// Postgres's scheduler picks.
    Race(Start, Picks),
}

/// Who wins each race one choice starts, in order: a candidate's index per
/// race, four bits each (a race has at most 16 candidates: the lab fires at
/// most 10 copies), 0 the first waiter. `Picks(1)` lets the second candidate
/// win the first race.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Picks(pub u32);

impl Picks {
    /// Races a choice's picks can name.
    pub const MAX_RACES: usize = 8;

    /// The winner of the choice's `j`-th race.
    pub fn of(self, j: usize) -> u32 {
        (self.0 >> (4 * j)) & 0xF
    }

    /// These picks, and candidate `k` for race `j`.
    fn with(self, j: usize, k: u32) -> Picks {
        Picks(self.0 & !(0xF << (4 * j)) | (k << (4 * j)))
    }

    /// How many races these picks name: up to the last that another
    /// candidate wins.
    fn len(self) -> usize {
        (32 - self.0.leading_zeros() as usize).div_ceil(4)
    }
}

impl std::fmt::Display for Picks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.len();
        let plural = if n == 1 { "" } else { "s" };
        write!(f, "race{plural}; waiter{plural} ")?;
        for j in 0..n {
            let sep = if j == 0 { "" } else { ", " };
            write!(f, "{sep}{}", self.of(j))?;
        }
        write!(f, " win{}", if n == 1 { "s" } else { "" })
    }
}

/// A choice that can start a race among waiting statements: an event (a
/// COMMIT or ROLLBACK arrives) or a crash (the holder's connection drops and
/// its transaction rolls back). Other choices never touch the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Start {
    Fire(EventKey),
    Crash(NodeId),
}

impl Start {
    /// The choice as a `Start`, if it is one that can start a race.
    pub fn of(c: Choice) -> Option<Start> {
        match c {
            Choice::Fire(k) => Some(Start::Fire(k)),
            Choice::Crash(n) => Some(Start::Crash(n)),
            _ => None,
        }
    }
}

impl From<Start> for Choice {
    fn from(s: Start) -> Choice {
        match s {
            Start::Fire(k) => Choice::Fire(k),
            Start::Crash(n) => Choice::Crash(n),
        }
    }
}

impl Choice {
    /// The command this choice is, if it is one (every choice but `Fire`
    /// and `Race`: another waiter winning is Postgres's choice, not a reader's).
    pub fn command(self) -> Option<Command> {
        match self {
            Choice::Fire(_) | Choice::Race(..) => None,
            Choice::Lose(m) => Some(Command::Lose(m)),
            Choice::Crash(n) => Some(Command::Crash(n)),
            Choice::Restart(n) => Some(Command::Restart(n)),
            Choice::AdvanceClock(d) => Some(Command::AdvanceClock(d)),
            Choice::Parallel(n) => Some(Command::ParallelRetries(n)),
        }
    }
}

/// How far [`explore`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bound {
    /// Messages the explorer may lose on one path.
    pub max_losses: u32,
    /// Crashes the explorer may cause on one path (restarts are free).
    pub max_crashes: u32,
    /// Clock jumps on one path (of [`Search::jump`] each: an hour unless set).
    pub max_clock_jumps: u32,
    /// Bursts of parallel copies of the client's request on one path (of
    /// [`Search::copies`] copies each).
    pub max_parallel: u32,
    /// Choices on one path; a world this deep is not expanded (the report is truncated).
    pub max_depth: usize,
    /// Distinct states; the exploration stops there (the report is truncated).
    /// Memory grows with the frontier (a few KB per world waiting to be expanded).
    pub max_states: usize,
    /// The race window: a message may be delivered before the earliest pending
    /// event only if it is due at most this long after it (its latency could
    /// have come out the other way). A timer fires only when it is the
    /// earliest pending timer, and also within the window of the earliest event.
    pub window: Millis,
}

impl Default for Bound {
    /// One lost message and one crash anywhere, no clock jump, and races
    /// between events due at the same millisecond (the two copies of a double
    /// submit). A wider window multiplies the states quickly: defended
    /// concurrent-duplicates has about 280 k states at 0 ms and more than 2 M
    /// at 1 ms; a clock jump multiplies them by 10 to 50.
    fn default() -> Bound {
        Bound {
            max_losses: 1,
            max_crashes: 1,
            max_clock_jumps: 0,
            max_parallel: 0,
            max_depth: 200,
            max_states: 1_000_000,
            window: Millis(0),
        }
    }
}

impl World {
    /// Every fault the reader's buttons can cause now: the explorer's (lose a
    /// message in flight, crash or restart a process, +1 h), losing the next
    /// response while one may come, `copies` parallel copies of each count given
    /// (where there is a client), and +25 h. The sweeps draw from it.
    pub fn reader_faults(&self, copies: &[u32]) -> Vec<Command> {
        let mut v: Vec<Command> = self
            .choices()
            .into_iter()
            .filter_map(Choice::command)
            .collect();
        if !self.client.ops.is_empty() {
            if !self.is_quiet() {
                v.push(Command::LoseNextResponse);
            }
            v.extend(copies.iter().map(|n| Command::ParallelRetries(*n)));
        }
        v.push(Command::AdvanceClock(PAST_TTL));
        v
    }

    /// Every choice the world could make now: fire any pending event (in any
    /// order), lose any message in flight that would arrive, crash any node
    /// that can crash and is up, restart any that is down, advance the clock
    /// by an hour. [`explore`] takes a bounded subset of them, and adds
    /// bursts of parallel copies within [`Bound::max_parallel`].
    pub fn choices(&self) -> Vec<Choice> {
        // A quiet world fires nothing (the reconciliation job's next run waits for a day to pass).
        let mut v: Vec<Choice> = match self.is_quiet() {
            true => Vec::new(),
            false => self.queue.keys().map(|k| Choice::Fire(*k)).collect(),
        };
        v.extend(
            self.msgs
                .values()
                .filter(|m| m.fate == Fate::Deliver)
                .map(|m| Choice::Lose(m.id)),
        );
        for n in self.scenario.nodes() {
            if n.can_crash() {
                v.push(if self.is_up(n) {
                    Choice::Crash(n)
                } else {
                    Choice::Restart(n)
                });
            }
        }
        v.push(Choice::AdvanceClock(Millis::HOUR));
        v
    }

    /// Takes a choice. `Fire` is a step (of the given event, not necessarily
    /// the earliest); the others are commands. A command that does not apply
    /// (the message arrived, the node is already down) changes nothing.
    pub fn choose(&mut self, c: &Choice) -> Vec<Happening> {
        let mut hs = Vec::new();
        self.take(c, &mut hs);
        hs
    }

    /// [`World::choose`], adding what happened to `hs`: the explorer lends
    /// every transition one buffer (a step's happenings are a few hundred
    /// bytes, allocated, grown and freed per transition otherwise).
    fn take(&mut self, c: &Choice, hs: &mut Vec<Happening>) {
        match c {
            Choice::Fire(k) => self.fire_into(*k, hs),
            Choice::Race(start, picks) => {
                let next = self.db.races.len();
                self.db.race_picks.resize(next, 0);
                self.db
                    .race_picks
                    .extend((0..picks.len()).map(|j| picks.of(j)));
                self.take(&Choice::from(*start), hs)
            }
            c => {
                if let Some(cmd) = c.command() {
                    // A command that does not apply changes nothing.
                    let _ = self.apply_into(&cmd, hs);
                }
            }
        }
    }

    /// Prefetches what taking this world's choices reads first: the event
    /// queue's first four events, the lists of messages and connections, and
    /// each shared part.
    fn prefetch_parts(&self) {
        let events = 4 * std::mem::size_of::<(EventKey, Event)>();
        prefetch::span(self.queue.as_ptr().cast(), events);
        prefetch::line(self.msgs.as_ptr());
        prefetch::line(self.conns.as_ptr());
        for a in self.apis.iter() {
            a.prefetch();
        }
        self.client.prefetch();
        self.redis.prefetch();
        self.db.prefetch();
        self.processor.prefetch();
        self.mail.prefetch();
        self.broker.prefetch();
        self.pipeline.prefetch();
        self.armed.prefetch();
        self.seldom.prefetch();
        self.reconciler.prefetch();
        self.invariants.prefetch();
    }

    /// Prefetches the messages in flight (their list came in with the parts).
    fn prefetch_messages(&self) {
        for (_, m) in self.msgs.iter() {
            m.prefetch();
        }
    }
}

/// Faults a path has used so far. Sixteen bits each (a path is at most
/// [`Bound::max_depth`] choices long): every state waiting to be expanded
/// holds one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Used {
    losses: u16,
    crashes: u16,
    clock_jumps: u16,
    parallel: u16,
}

impl Used {
    fn after(mut self, c: &Choice) -> Used {
        match c {
            Choice::Lose(_) => self.losses = self.losses.saturating_add(1),
            Choice::Crash(_) => self.crashes = self.crashes.saturating_add(1),
            Choice::AdvanceClock(_) => self.clock_jumps = self.clock_jumps.saturating_add(1),
            Choice::Parallel(_) => self.parallel = self.parallel.saturating_add(1),
            // Racing costs what its start costs (a crash is a crash).
            Choice::Race(start, _) => return self.after(&Choice::from(*start)),
            Choice::Fire(_) | Choice::Restart(_) => {}
        }
        self
    }

    /// The fault budget is part of the explored state: the same world with
    /// more faults left can still reach more. The scenario and the
    /// configuration are not: every world of one search shares them.
    fn key(self, w: &World) -> u64 {
        let mut h = FxHasher::default();
        w.hash_canonical(&mut h);
        h.write_u32(self.losses.into());
        h.write_u32(self.crashes.into());
        h.write_u32(self.clock_jumps.into());
        h.write_u32(self.parallel.into());
        h.finish()
    }
}

/// The choices [`explore`] takes in `w`: those of [`World::choices`] within
/// the bound. A quiet world has none (it is an end).
fn bounded_choices(
    w: &World,
    bound: &Bound,
    used: Used,
    crashable: &[NodeId],
    rules: Rules,
    out: &mut Vec<Choice>,
) {
    out.clear();
    let Some(&(first, _)) = w.queue.first_key() else {
        return;
    };
    let limit = first + bound.window;
    let mut timer = false;
    for (&k, ev) in w.queue.iter() {
        if k.0 > limit {
            break;
        }
        match ev {
            Event::Deliver(_) => out.push(Choice::Fire(k)),
            // Only the earliest timer: timers keep their order.
            _ if !timer => {
                timer = true;
                out.push(Choice::Fire(k));
            }
            _ => {}
        }
    }
    if u32::from(used.losses) < bound.max_losses {
        out.extend(
            w.msgs
                .values()
                .filter(|m| m.fate == Fate::Deliver && rules.losable.allows(m))
                .map(|m| Choice::Lose(m.id)),
        );
    }
    for &n in crashable {
        if !w.is_up(n) {
            out.push(Choice::Restart(n));
        } else if u32::from(used.crashes) < bound.max_crashes {
            out.push(Choice::Crash(n));
        }
    }
    if u32::from(used.clock_jumps) < bound.max_clock_jumps {
        out.push(Choice::AdvanceClock(rules.jump));
    }
    if u32::from(used.parallel) < bound.max_parallel && !w.client.ops.is_empty() {
        out.push(Choice::Parallel(rules.copies));
    }
}

/// The choices the explorer takes from `w` with no fault used yet, each other
/// winner of every race they start included (as [`Search`] lists them).
pub fn next_choices(w: &World, bound: &Bound) -> Vec<Choice> {
    let mut choices = Vec::new();
    let crashable = crashable(w);
    bounded_choices(w, bound, Used::default(), &crashable, RULES, &mut choices);
    successors(
        Box::new(w.clone()),
        &mut choices,
        &mut Vec::new(),
        |_, _, _| true,
    );
    choices
}

/// What the search's faults are, within the bound's counts.
#[derive(Clone, Copy, Debug)]
struct Rules {
    /// Which messages may be lost.
    losable: Losable,
    /// How far a clock jump moves the clock.
    jump: Millis,
    /// How many copies a burst of parallel retries fires.
    copies: u32,
}

/// The search's faults unless set: lose any message, move the clock by an
/// hour (the lab's "+1 h"), fire two parallel copies.
const RULES: Rules = Rules {
    losable: Losable::Any,
    jump: Millis::HOUR,
    copies: 2,
};

/// The nodes of `w`'s scenario that can crash.
fn crashable(w: &World) -> Vec<NodeId> {
    let nodes = w.scenario.nodes().into_iter();
    nodes.filter(|n| n.can_crash()).collect()
}

/// Takes each of `choices` in `parent`, and hands `f` the choice's index,
/// the choice and the world it leads to. A fired event that starts a race
/// among waiting statements (so may a crash) adds a choice per other winner
/// ([`Choice::Race`]). `f` returns `false` to stop. The last choice takes the
/// parent itself instead of a copy.
fn successors(
    parent: Box<World>,
    choices: &mut Vec<Choice>,
    hs: &mut Vec<Happening>,
    mut f: impl FnMut(usize, Choice, Box<World>) -> bool,
) {
    // With two statements waiting, a step or a crash may start a race
    // between them: each other winner is a successor too (the parent is
    // kept for them).
    let racy = parent.db.may_race();
    let races = parent.db.races.len();
    let mut parent = Some(parent);
    let mut i = 0;
    while i < choices.len() {
        let c = choices[i];
        i += 1;
        let mut w = if i == choices.len() && !racy {
            parent.take().expect("the parent is still here")
        } else {
            Box::new(World::clone(
                parent.as_ref().expect("the parent is still here"),
            ))
        };
        w.take(&c, hs);
        // The search reads states, not what happened.
        hs.clear();
        // Each other winner of each race this choice started is a successor:
        // a choice that already names winners adds only those of the races
        // after its last named one, so each combination is listed once.
        let (start, named) = match c {
            Choice::Race(start, picks) => (Some(start), Some(picks)),
            c => (Start::of(c), None),
        };
        if let Some(start) = start {
            let picks = named.unwrap_or(Picks(0));
            let started = w.db.races.get(races..).unwrap_or_default();
            for (j, r) in started.iter().enumerate().take(Picks::MAX_RACES) {
                if j < picks.len() {
                    continue;
                }
                let others = 1..(r.candidates.len() as u32).min(16);
                choices.extend(others.map(|k| Choice::Race(start, picks.with(j, k))));
            }
        }
        if !f(i - 1, c, w) {
            return;
        }
    }
}

/// A node of the search tree: how a state was first reached. Node 0 is the
/// start. Eight bytes: the choice is its index among the parent's choices
/// (the same every time they are listed), and a path is found again by
/// replaying them from the start ([`Paths::to`]).
#[derive(Clone, Copy, Debug)]
struct Link {
    parent: u32,
    choice: u16,
    /// Every choice from the start to here fires the earliest pending event
    /// or is a command: the path is a run the lab can replay.
    ordered: bool,
}

/// What turns a node of the tree back into its path: the start, the tree
/// and what decides a state's choices.
struct Paths<'a> {
    start: &'a World,
    tree: &'a [Link],
    bound: &'a Bound,
    crashable: &'a [NodeId],
    rules: Rules,
}

impl Paths<'_> {
    /// The choices from the start to `node`, replayed (a path is asked for
    /// only when a violation or a new outcome is found).
    fn to(&self, mut node: u32) -> Vec<Choice> {
        let mut picks = Vec::new();
        while node != 0 {
            let l = self.tree[node as usize];
            picks.push(l.choice);
            node = l.parent;
        }
        let mut w = Box::new(self.start.clone());
        let mut used = Used::default();
        let mut path = Vec::with_capacity(picks.len());
        let (mut choices, mut hs) = (Vec::new(), Vec::new());
        for &pick in picks.iter().rev() {
            bounded_choices(
                &w,
                self.bound,
                used,
                self.crashable,
                self.rules,
                &mut choices,
            );
            let pick = usize::from(pick);
            let (c, next) = match choices.get(pick) {
                // A listed choice is taken alone: the successors before it
                // only add races after the list.
                Some(&c) => {
                    w.take(&c, &mut hs);
                    hs.clear();
                    (c, w)
                }
                None => {
                    let mut taken = None;
                    successors(w, &mut choices, &mut hs, |i, c, next| {
                        if i == pick {
                            taken = Some((c, next));
                        }
                        taken.is_none()
                    });
                    taken.expect("a node's choice is among its parent's")
                }
            };
            path.push(c);
            used = used.after(&c);
            w = next;
        }
        path
    }
}

/// The frontier's length from which the next worlds are prefetched: a
/// shorter one fits in the processor's own cache, and the hints only cost
/// instructions (measured with worlds of about a kilobyte and a half, before
/// waiting worlds shared their equal parts; not measured again since).
const PREFETCH_FROM: usize = 1024;

/// A state waiting to be expanded: 24 bytes beside its world (the frontier's
/// ring buffer holds up to twice the widest frontier of them).
struct Open {
    /// Boxed: the frontier moves states around, and a world is large.
    world: Box<World>,
    node: u32,
    used: Used,
    depth: u32,
}

/// What an exploration has found so far.
struct Found {
    report: Report,
    /// Invariants already reported, by `Invariant as usize`.
    reported: u64,
    /// The nodes that a supervisor brings back (empty: none is assumed to come back).
    supervised: Vec<NodeId>,
    /// For each outcome, the shortest path to it without a race, if any.
    ordered: Vec<Ordered>,
}

impl Found {
    /// Looks at a newly reached state: violations and ends. With `supervised`
    /// (see [`Search::supervise`]) a world with a node down is judged only
    /// on the invariants that hold after every step, and is no end.
    fn look(&mut self, w: &World, paths: &Paths, node: u32) {
        let down = self.supervised.iter().any(|n| !w.is_up(*n));
        for (inv, holds) in w.invariants.iter() {
            let bit = 1u64 << (*inv as usize);
            if !*holds && self.reported & bit == 0 && !(down && inv.expect() != Expect::Always) {
                self.reported |= bit;
                self.report.violations.push((*inv, paths.to(node)));
            }
        }
        if w.is_quiet() && !down {
            self.report.ends += 1;
            let outcome = EndState::of(w);
            let ordered = paths.tree[node as usize].ordered;
            match self
                .report
                .outcomes
                .iter_mut()
                .position(|e| e.outcome == outcome)
            {
                Some(i) => {
                    self.report.outcomes[i].count += 1;
                    if ordered && matches!(self.ordered[i], Ordered::None) {
                        self.ordered[i] = Ordered::Own(paths.to(node));
                    }
                }
                None => {
                    // One replay: the report's path is the ordered one too, if it is.
                    let path = paths.to(node);
                    self.ordered.push(match ordered {
                        true => Ordered::Reported,
                        false => Ordered::None,
                    });
                    self.report.outcomes.push(Ending {
                        outcome,
                        count: 1,
                        path,
                    });
                }
            }
        }
    }
}

/// An outcome's shortest path whose events all fire in time order.
enum Ordered {
    /// None found yet.
    None,
    /// The report's own path is one (kept once, not copied here).
    Reported,
    /// A longer one than the report's, which wins a race.
    Own(Vec<Choice>),
}

/// Explores every choice from `start` within `bound`, breadth first. Faults
/// (losses, crashes, restarts, clock jumps) may come between any two events;
/// a quiet world is an end and is not expanded further. Deterministic: the
/// same start and bound give the same report.
pub fn explore(start: &World, bound: &Bound) -> Report {
    let mut search = Search::new(start, *bound);
    search.run(usize::MAX);
    search.into_report()
}

/// Which messages the explorer may lose (within `Bound::max_losses`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Losable {
    /// Any message in flight.
    #[default]
    Any,
    /// Only an API's answer to the client (the lost response).
    Responses,
    /// Only a store's reply to an API (Redis or Postgres answering).
    StoreReplies,
}

impl Losable {
    fn allows(self, m: &Msg) -> bool {
        match self {
            Losable::Any => true,
            Losable::Responses => matches!(m.from, NodeId::Api(_)) && m.to == NodeId::Client,
            Losable::StoreReplies => {
                matches!(m.from, NodeId::Redis | NodeId::Postgres) && matches!(m.to, NodeId::Api(_))
            }
        }
    }
}

/// [`explore`] in installments: [`Search::run`] takes at most so many
/// transitions and returns, so a page can report progress between chunks and
/// stop a search that is no longer wanted. The same start and bound give the
/// same report however the work is cut.
pub struct Search {
    bound: Bound,
    /// Which messages may be lost.
    pub losable: Losable,
    /// How far a clock jump moves the clock (an hour unless set).
    pub jump: Millis,
    /// How many copies a burst of parallel retries fires (two unless set).
    pub copies: u32,
    crashable: Vec<NodeId>,
    /// The start (untraced): paths are replayed from it.
    start: World,
    found: Found,
    tree: Vec<Link>,
    seen: FingerprintSet,
    /// The waiting worlds' parts, shared where equal.
    parts: waiting::Parts,
    open: VecDeque<Open>,
    /// The most states waiting to be expanded at once (their worlds are most
    /// of the search's memory).
    widest: usize,
    choices: Vec<Choice>,
    /// The buffer every transition's happenings go into (and are dropped from).
    happenings: Vec<Happening>,
    done: bool,
    /// Takes the frontier in a random order instead of breadth first (the
    /// tests of the fingerprint's exactness: the counts must not change).
    #[cfg(test)]
    shuffle: Option<crate::rng::Rng>,
}

impl Search {
    pub fn new(start: &World, bound: Bound) -> Search {
        let crashable = crashable(start);
        let mut found = Found {
            report: Report {
                states: 0,
                unique: 1,
                ends: 0,
                depth: 0,
                truncated: false,
                violations: Vec::new(),
                outcomes: Vec::new(),
            },
            reported: 0,
            supervised: Vec::new(),
            ordered: Vec::new(),
        };
        let tree = vec![Link {
            parent: 0,
            choice: 0,
            ordered: true,
        }];
        // The search reads states, not the trace: its worlds skip the trace's texts.
        let mut start = start.clone();
        start.untraced = true;
        let mut seen = FingerprintSet::default();
        seen.insert(Used::default().key(&start));
        let paths = Paths {
            start: &start,
            tree: &tree,
            bound: &bound,
            crashable: &crashable,
            rules: RULES,
        };
        found.look(&start, &paths, 0);
        let mut open = VecDeque::new();
        if !start.is_quiet() {
            open.push_back(Open {
                world: Box::new(start.clone()),
                node: 0,
                used: Used::default(),
                depth: 0,
            });
        }
        Search {
            bound,
            losable: RULES.losable,
            jump: RULES.jump,
            copies: RULES.copies,
            crashable,
            start,
            found,
            tree,
            seen,
            parts: waiting::Parts::default(),
            widest: open.len(),
            open,
            choices: Vec::new(),
            happenings: Vec::new(),
            done: false,
            #[cfg(test)]
            shuffle: None,
        }
    }

    /// The next state to expand: the oldest (breadth first).
    fn pop(&mut self) -> Option<Open> {
        #[cfg(test)]
        if let Some(rng) = &mut self.shuffle {
            let i = rng.below(self.open.len().max(1) as u64) as usize;
            return self.open.swap_remove_back(i);
        }
        self.open.pop_front()
    }

    /// Takes about `transitions` more transitions (a state's choices are
    /// taken together); `true` once the search is over.
    pub fn run(&mut self, transitions: usize) -> bool {
        let until = self.found.report.states.saturating_add(transitions);
        while !self.done && self.found.report.states < until {
            match self.pop() {
                Some(o) => {
                    if self.open.len() > PREFETCH_FROM {
                        self.prefetch();
                    }
                    self.expand(o)
                }
                None => self.done = true,
            }
        }
        self.done
    }

    /// Hints the next three worlds into the cache, a stage each: a stage
    /// reads only pointers an earlier one brought in (the world's own lines,
    /// then its parts, then its messages), and the expansion in between
    /// gives the memory time to answer.
    fn prefetch(&self) {
        if let Some(next) = self.open.front() {
            next.world.prefetch_messages();
        }
        if let Some(then) = self.open.get(1) {
            then.world.prefetch_parts();
        }
        if let Some(after) = self.open.get(2) {
            prefetch::lines(&*after.world);
        }
    }

    fn expand(&mut self, o: Open) {
        o.world.unwait(&mut self.parts);
        if o.depth as usize >= self.bound.max_depth {
            self.found.report.truncated = true;
            return;
        }
        let mut choices = std::mem::take(&mut self.choices);
        bounded_choices(
            &o.world,
            &self.bound,
            o.used,
            &self.crashable,
            self.rules(),
            &mut choices,
        );
        let first = o.world.queue.first_key().copied();
        let mut stop = false;
        let mut hs = std::mem::take(&mut self.happenings);
        successors(o.world, &mut choices, &mut hs, |i, c, w| {
            self.found.report.states += 1;
            let used = o.used.after(&c);
            if !self.seen.insert(used.key(&w)) {
                return true;
            }
            if self.seen.len() > self.bound.max_states {
                self.found.report.truncated = true;
                stop = true;
                return false;
            }
            self.found.report.unique += 1;
            let node = self.tree.len() as u32;
            let in_order = match c {
                Choice::Fire(k) => first == Some(k),
                Choice::Race(..) => false,
                _ => true,
            };
            if self.tree.len() == self.tree.capacity() {
                // A quarter more, not double: the tree keeps a link per state
                // to the end, and a doubled one was up to 8 bytes per state
                // of room never used.
                self.tree.reserve_exact(self.tree.len() / 4 + 1);
            }
            self.tree.push(Link {
                parent: o.node,
                choice: u16::try_from(i).expect("fewer than 65,536 choices in a state"),
                ordered: in_order && self.tree[o.node as usize].ordered,
            });
            self.found.report.depth = self.found.report.depth.max(o.depth as usize + 1);
            let paths = Paths {
                start: &self.start,
                tree: &self.tree,
                bound: &self.bound,
                crashable: &self.crashable,
                rules: self.rules(),
            };
            self.found.look(&w, &paths, node);
            if !w.is_quiet() {
                let mut w = w;
                w.wait(&mut self.parts);
                self.open.push_back(Open {
                    world: w,
                    node,
                    used,
                    depth: o.depth + 1,
                });
            }
            true
        });
        if stop {
            self.done = true;
        }
        self.widest = self.widest.max(self.open.len());
        self.choices = choices;
        self.happenings = hs;
    }

    fn rules(&self) -> Rules {
        Rules {
            losable: self.losable,
            jump: self.jump,
            copies: self.copies,
        }
    }

    /// Judges a world with a crashed node only once it is back: as if a
    /// supervisor always restarted it (the explorer restarts it at any point).
    /// Worlds with a node down still count for the invariants of `Expect::Always`,
    /// but are neither ends nor judged on the ledger or on answers. Call before
    /// the first [`Search::run`]; the start world is judged as it is.
    pub fn supervise(&mut self) {
        self.found.supervised = self.crashable.clone();
    }

    /// The shortest path to outcome `i` (of the report) whose events all fire
    /// in time order, so that the lab's commands can replay it
    /// ([`to_commands`]); the report's own path may win a race instead.
    pub fn ordered_path(&self, i: usize) -> Option<&[Choice]> {
        match self.found.ordered.get(i)? {
            Ordered::None => None,
            Ordered::Reported => Some(&self.found.report.outcomes[i].path),
            Ordered::Own(path) => Some(path),
        }
    }

    /// The most states that waited to be expanded at once, so far.
    pub fn widest(&self) -> usize {
        self.widest
    }

    /// What the search has found so far (all of it once [`Search::run`] says it is over).
    pub fn report(&self) -> &Report {
        &self.found.report
    }

    pub fn into_report(self) -> Report {
        self.found.report
    }
}
