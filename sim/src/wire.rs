//! The messages between the page and the explorer's Web Worker, and their
//! encoding: both sides use this module, so they cannot disagree.
//!
//! The page sends one [`Request`] (the reader's run, the step they are on,
//! the bound); the worker answers with [`Reply`]s: [`Reply::Progress`] between
//! installments of the search, [`Reply::Found`] once the reader's search is
//! over, then [`Reply::Table`] with the scenario's truth table. A message is
//! a list of 32-bit words (a `Uint32Array` on the JavaScript side): numbers
//! and tags, never text, so neither side parses a string. A malformed message
//! decodes to `None`; decoding never panics.

use crate::explore::{Believed, Report};
use crate::invariant::Invariant;
use crate::net::{MsgId, NodeId};
use crate::scenario::{self, Toggle, Toggles};
use crate::time::Millis;
use crate::truth::{Fault, Replay};
use crate::world::Command;

/// What the page asks the worker: explore from `step` of the run of
/// `scenario` (seed, toggles and the reader's commands), within the bound;
/// with `table`, also fill the scenario's truth table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub scenario: &'static str,
    pub seed: u64,
    pub toggles: Toggles,
    pub commands: Vec<(usize, Command)>,
    pub step: usize,
    /// Lost messages on one path (0 or 1, [`MAX_FAULTS`]).
    pub losses: u32,
    /// Crashes on one path (0 or 1).
    pub crashes: u32,
    pub table: bool,
}

/// The most of each fault the panel offers: one more lost message or crash
/// multiplies the states by 10 to 50, past a few seconds in the browser.
pub const MAX_FAULTS: u32 = 1;

/// Distinct states a reader's search may visit before it stops (truncated).
pub const MAX_STATES: usize = 400_000;

/// What the worker answers.
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

/// One outcome of the histogram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bar {
    /// Charges at the processor, and their total in dollars.
    pub charges: u32,
    pub charged: i64,
    pub ledger_rows: u32,
    pub beliefs: Vec<Believed>,
    pub broken: Vec<Invariant>,
    /// Distinct end states with this outcome.
    pub count: u32,
    /// The shortest run to it, as the lab replays it (`None`: it needs a race
    /// the lab's commands cannot express).
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
    pub fn of(r: &Report, show: impl Fn(&[crate::explore::Choice]) -> Option<Replay>) -> Found {
        Found {
            transitions: sat(r.states),
            unique: sat(r.unique),
            ends: sat(r.ends),
            truncated: r.truncated,
            outcomes: r
                .outcomes
                .iter()
                .map(|e| Bar {
                    charges: sat(e.outcome.charges),
                    charged: e.outcome.charged,
                    ledger_rows: sat(e.outcome.ledger_rows),
                    beliefs: e.outcome.beliefs.clone(),
                    broken: e.outcome.broken.clone(),
                    count: sat(e.count),
                    show: show(&e.path),
                })
                .collect(),
        }
    }
}

/// A count as a word (saturating: a search never gets near 4 billion).
pub fn sat(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

// ---- encoding ----

struct W(Vec<u32>);

impl W {
    fn u(&mut self, x: u32) {
        self.0.push(x);
    }
    fn u64(&mut self, x: u64) {
        self.u(x as u32);
        self.u((x >> 32) as u32);
    }
    fn len(&mut self, n: usize) {
        self.u(sat(n));
    }
    fn toggles(&mut self, t: Toggles) {
        let bits = Toggle::ALL
            .iter()
            .enumerate()
            .filter(|(_, x)| t.has(**x))
            .fold(0u32, |acc, (i, _)| acc | 1 << i);
        self.u(bits);
    }
    fn node(&mut self, n: NodeId) {
        self.u(match n {
            NodeId::Client => 0,
            NodeId::Redis => 1,
            NodeId::Postgres => 2,
            NodeId::Processor => 3,
            NodeId::Broker => 4,
            NodeId::Consumer => 5,
            NodeId::Api(i) => 16 + u32::from(i),
        });
    }
    fn command(&mut self, c: &Command) {
        match c {
            Command::LoseNextResponse => self.u(0),
            Command::Lose(m) => {
                self.u(1);
                self.u(m.0);
            }
            Command::ParallelRetries(n) => {
                self.u(2);
                self.u(*n);
            }
            Command::Crash(n) => {
                self.u(3);
                self.node(*n);
            }
            Command::Restart(n) => {
                self.u(4);
                self.node(*n);
            }
            Command::AdvanceClock(d) => {
                self.u(5);
                self.u64(d.0);
            }
            Command::ExternalDebit { amount } => {
                self.u(6);
                self.u64(*amount as u64);
            }
        }
    }
    fn commands(&mut self, cs: &[(usize, Command)]) {
        self.len(cs.len());
        for (k, c) in cs {
            self.len(*k);
            self.command(c);
        }
    }
    fn replay(&mut self, r: &Option<Replay>) {
        match r {
            None => self.u(0),
            Some(r) => {
                self.u(1);
                self.toggles(r.toggles);
                self.commands(&r.commands);
                self.len(r.step);
            }
        }
    }
    fn believed(&mut self, b: Believed) {
        match b {
            Believed::NotStarted => self.u(0),
            Believed::Succeeded => self.u(1),
            Believed::Failed(s) => {
                self.u(2);
                self.u(u32::from(s));
            }
            Believed::Unknown => self.u(3),
            Believed::GaveUp => self.u(4),
        }
    }
}

/// Every invariant, in the order of their codes.
const INVARIANTS: [Invariant; 6] = [
    Invariant::AtMostOnceCharge,
    Invariant::LedgerMatchesCharges,
    Invariant::LikesMatchOps,
    Invariant::BalanceMatches,
    Invariant::DefiniteAnswer,
    Invariant::ResponseMatchesRequest,
];

fn invariant_code(i: Invariant) -> u32 {
    // Exhaustive: a new invariant does not compile until it has a code.
    match i {
        Invariant::AtMostOnceCharge => 0,
        Invariant::LedgerMatchesCharges => 1,
        Invariant::LikesMatchOps => 2,
        Invariant::BalanceMatches => 3,
        Invariant::DefiniteAnswer => 4,
        Invariant::ResponseMatchesRequest => 5,
    }
}

fn fault_code(f: Fault) -> u32 {
    match f {
        Fault::LostResponse => 0,
        Fault::LostStoreReply => 1,
        Fault::Parallel => 2,
        Fault::Crash => 3,
        Fault::ClockPastTtl => 4,
    }
}

struct R<'a>(&'a [u32]);

impl R<'_> {
    fn u(&mut self) -> Option<u32> {
        let (x, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*x)
    }
    fn u64(&mut self) -> Option<u64> {
        let lo = self.u()?;
        let hi = self.u()?;
        Some(u64::from(lo) | u64::from(hi) << 32)
    }
    /// A length: never more than the words left (each item takes one at least).
    fn len(&mut self) -> Option<usize> {
        let n = self.u()? as usize;
        (n <= self.0.len()).then_some(n)
    }
    fn count(&mut self) -> Option<usize> {
        self.u().map(|x| x as usize)
    }
    fn bool(&mut self) -> Option<bool> {
        match self.u()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn toggles(&mut self) -> Option<Toggles> {
        let bits = self.u()?;
        if bits >> Toggle::ALL.len() != 0 {
            return None;
        }
        let on: Vec<Toggle> = Toggle::ALL
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & 1 << i != 0)
            .map(|(_, t)| *t)
            .collect();
        Some(Toggles::of(&on))
    }
    fn node(&mut self) -> Option<NodeId> {
        Some(match self.u()? {
            0 => NodeId::Client,
            1 => NodeId::Redis,
            2 => NodeId::Postgres,
            3 => NodeId::Processor,
            4 => NodeId::Broker,
            5 => NodeId::Consumer,
            i @ 16..=271 => NodeId::Api((i - 16) as u8),
            _ => return None,
        })
    }
    fn command(&mut self) -> Option<Command> {
        Some(match self.u()? {
            0 => Command::LoseNextResponse,
            1 => Command::Lose(MsgId(self.u()?)),
            2 => Command::ParallelRetries(self.u()?),
            3 => Command::Crash(self.node()?),
            4 => Command::Restart(self.node()?),
            5 => Command::AdvanceClock(Millis(self.u64()?)),
            6 => Command::ExternalDebit {
                amount: self.u64()? as i64,
            },
            _ => return None,
        })
    }
    fn commands(&mut self) -> Option<Vec<(usize, Command)>> {
        let n = self.len()?;
        (0..n)
            .map(|_| Some((self.count()?, self.command()?)))
            .collect()
    }
    fn replay(&mut self) -> Option<Option<Replay>> {
        Some(match self.bool()? {
            false => None,
            true => Some(Replay {
                toggles: self.toggles()?,
                commands: self.commands()?,
                step: self.count()?,
            }),
        })
    }
    fn believed(&mut self) -> Option<Believed> {
        Some(match self.u()? {
            0 => Believed::NotStarted,
            1 => Believed::Succeeded,
            2 => Believed::Failed(u16::try_from(self.u()?).ok()?),
            3 => Believed::Unknown,
            4 => Believed::GaveUp,
            _ => return None,
        })
    }
    fn invariant(&mut self) -> Option<Invariant> {
        INVARIANTS.get(self.u()? as usize).copied()
    }
    fn fault(&mut self) -> Option<Fault> {
        Fault::ALL
            .into_iter()
            .find(|f| Some(fault_code(*f)) == self.0.first().copied())
            .inspect(|_| self.0 = &self.0[1..])
    }
    fn end(self) -> Option<()> {
        self.0.is_empty().then_some(())
    }
}

impl Request {
    pub fn encode(&self) -> Vec<u32> {
        let mut w = W(Vec::new());
        let ids = scenario::ids();
        w.len(ids.iter().position(|i| *i == self.scenario).unwrap_or(0));
        w.u64(self.seed);
        w.toggles(self.toggles);
        w.commands(&self.commands);
        w.len(self.step);
        w.u(self.losses);
        w.u(self.crashes);
        w.u(u32::from(self.table));
        w.0
    }

    pub fn decode(words: &[u32]) -> Option<Request> {
        let mut r = R(words);
        let scenario = *scenario::ids().get(r.count()?)?;
        let req = Request {
            scenario,
            seed: r.u64()?,
            toggles: r.toggles()?,
            commands: r.commands()?,
            step: r.count()?,
            losses: r.u()?.min(MAX_FAULTS),
            crashes: r.u()?.min(MAX_FAULTS),
            table: r.bool()?,
        };
        r.end()?;
        Some(req)
    }
}

impl Reply {
    pub fn encode(&self) -> Vec<u32> {
        let mut w = W(Vec::new());
        match self {
            Reply::Progress {
                transitions,
                unique,
                cells,
                of,
            } => {
                w.u(0);
                w.u(*transitions);
                w.u(*unique);
                w.u(*cells);
                w.u(*of);
            }
            Reply::Found(f) => {
                w.u(1);
                w.u(f.transitions);
                w.u(f.unique);
                w.u(f.ends);
                w.u(u32::from(f.truncated));
                w.len(f.outcomes.len());
                for b in &f.outcomes {
                    w.u(b.charges);
                    w.u64(b.charged as u64);
                    w.u(b.ledger_rows);
                    w.len(b.beliefs.len());
                    for x in &b.beliefs {
                        w.believed(*x);
                    }
                    w.len(b.broken.len());
                    for i in &b.broken {
                        w.u(invariant_code(*i));
                    }
                    w.u(b.count);
                    w.replay(&b.show);
                }
            }
            Reply::Table(cells) => {
                w.u(2);
                w.len(cells.len());
                for c in cells {
                    w.toggles(c.toggles);
                    w.u(fault_code(c.fault));
                    w.u(u32::from(c.breaks));
                    w.replay(&c.show);
                }
            }
        }
        w.0
    }

    pub fn decode(words: &[u32]) -> Option<Reply> {
        let mut r = R(words);
        let reply = match r.u()? {
            0 => Reply::Progress {
                transitions: r.u()?,
                unique: r.u()?,
                cells: r.u()?,
                of: r.u()?,
            },
            1 => {
                let transitions = r.u()?;
                let unique = r.u()?;
                let ends = r.u()?;
                let truncated = r.bool()?;
                let n = r.len()?;
                let mut outcomes = Vec::with_capacity(n);
                for _ in 0..n {
                    let charges = r.u()?;
                    let charged = r.u64()? as i64;
                    let ledger_rows = r.u()?;
                    let nb = r.len()?;
                    let beliefs = (0..nb).map(|_| r.believed()).collect::<Option<_>>()?;
                    let ni = r.len()?;
                    let broken = (0..ni).map(|_| r.invariant()).collect::<Option<_>>()?;
                    outcomes.push(Bar {
                        charges,
                        charged,
                        ledger_rows,
                        beliefs,
                        broken,
                        count: r.u()?,
                        show: r.replay()?,
                    });
                }
                Reply::Found(Found {
                    transitions,
                    unique,
                    ends,
                    truncated,
                    outcomes,
                })
            }
            2 => {
                let n = r.len()?;
                let cells = (0..n)
                    .map(|_| {
                        Some(Cell {
                            toggles: r.toggles()?,
                            fault: r.fault()?,
                            breaks: r.bool()?,
                            show: r.replay()?,
                        })
                    })
                    .collect::<Option<_>>()?;
                Reply::Table(cells)
            }
            _ => return None,
        };
        r.end()?;
        Some(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay() -> Replay {
        Replay {
            toggles: Toggles::of(&[Toggle::AtomicClaim, Toggle::CrashBeforeCommit]),
            commands: vec![
                (0, Command::LoseNextResponse),
                (3, Command::Lose(MsgId(12))),
                (4, Command::ParallelRetries(3)),
                (5, Command::Crash(NodeId::Api(1))),
                (6, Command::Restart(NodeId::Consumer)),
                (7, Command::AdvanceClock(Millis::hours(25))),
                (8, Command::ExternalDebit { amount: -30 }),
                (9, Command::Crash(NodeId::Client)),
                (9, Command::Crash(NodeId::Redis)),
                (9, Command::Crash(NodeId::Postgres)),
                (9, Command::Crash(NodeId::Processor)),
                (9, Command::Crash(NodeId::Broker)),
            ],
            step: 11,
        }
    }

    fn replies() -> Vec<Reply> {
        vec![
            Reply::Progress {
                transitions: 123_456,
                unique: 7_890,
                cells: 3,
                of: 20,
            },
            Reply::Found(Found {
                transitions: 10,
                unique: 9,
                ends: 2,
                truncated: true,
                outcomes: vec![
                    Bar {
                        charges: 2,
                        charged: 200,
                        ledger_rows: 1,
                        beliefs: vec![
                            Believed::NotStarted,
                            Believed::Succeeded,
                            Believed::Failed(409),
                            Believed::Unknown,
                            Believed::GaveUp,
                        ],
                        broken: INVARIANTS.to_vec(),
                        count: 5,
                        show: Some(replay()),
                    },
                    Bar {
                        charges: 0,
                        charged: -1,
                        ledger_rows: 0,
                        beliefs: Vec::new(),
                        broken: Vec::new(),
                        count: 1,
                        show: None,
                    },
                ],
            }),
            Reply::Table(
                Fault::ALL
                    .into_iter()
                    .map(|fault| Cell {
                        toggles: Toggles::of(&Toggle::ALL),
                        fault,
                        breaks: fault == Fault::Crash,
                        show: (fault == Fault::Crash).then(replay),
                    })
                    .collect(),
            ),
            Reply::Table(Vec::new()),
        ]
    }

    #[test]
    fn a_request_round_trips() {
        let req = Request {
            scenario: "crash-after-charge",
            seed: u64::MAX - 5,
            toggles: Toggles::of(&[Toggle::SameTransaction]),
            commands: replay().commands,
            step: 17,
            losses: 1,
            crashes: 0,
            table: true,
        };
        assert_eq!(Request::decode(&req.encode()), Some(req));
    }

    #[test]
    fn every_reply_round_trips() {
        for r in replies() {
            assert_eq!(Reply::decode(&r.encode()), Some(r.clone()), "{r:?}");
        }
    }

    #[test]
    fn a_malformed_message_decodes_to_none() {
        for r in replies() {
            let words = r.encode();
            // Every truncation, and one word too many.
            for k in 0..words.len() {
                assert_eq!(Reply::decode(&words[..k]), None, "{r:?} cut at {k}");
            }
            let mut longer = words.clone();
            longer.push(0);
            assert_eq!(Reply::decode(&longer), None);
        }
        assert_eq!(Reply::decode(&[9]), None);
        assert_eq!(Reply::decode(&[1, 0, 0, 0, 0, u32::MAX]), None);
        assert_eq!(Request::decode(&[999, 0, 0, 0, 0, 0, 0, 0, 0, 0]), None);
        assert_eq!(Request::decode(&[]), None);
    }

    #[test]
    fn a_request_asks_for_at_most_one_fault_of_each() {
        let req = Request {
            scenario: "idempotency-key",
            seed: 1,
            toggles: Toggles::default(),
            commands: Vec::new(),
            step: 0,
            losses: 7,
            crashes: 9,
            table: false,
        };
        let back = Request::decode(&req.encode()).expect("decodes");
        assert_eq!((back.losses, back.crashes), (MAX_FAULTS, MAX_FAULTS));
    }
}
