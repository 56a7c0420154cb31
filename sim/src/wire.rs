//! The message from the page to the explorer's Web Worker, and its encoding:
//! both sides use this module, so they cannot disagree.
//!
//! The page sends one [`Request`] (the reader's run, the step they are on,
//! the bound) as a list of 32-bit words (a `Uint32Array` on the JavaScript
//! side): numbers and tags, never text, so the worker parses no string. A
//! malformed request decodes to `None`; decoding never panics. The worker
//! answers with markup it renders itself (`worker/src/view.rs`) from
//! [`crate::answer::Reply`].

use crate::net::{MsgId, NodeId};
use crate::scenario::{Retry, Scenario, ScenarioId, Toggle, Toggles};
use crate::time::Millis;
use crate::world::Command;

/// What the page asks the worker: explore from `step` of the run of
/// `scenario` (seed, toggles and the reader's commands), within the bound;
/// with `table`, also fill the scenario's truth table; with `cmp`, only
/// compare the run with the same run under other defences.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub scenario: ScenarioId,
    pub seed: u64,
    pub toggles: Toggles,
    /// The client's policy (the scenario's, or the reader's numbers): five
    /// words, [`Retry::numbers`], brought into range as they are decoded.
    pub retry: Retry,
    pub commands: Vec<(usize, Command)>,
    pub step: usize,
    /// Lost messages on one path (0 or 1, [`MAX_FAULTS`]).
    pub losses: u32,
    /// Crashes on one path (0 or 1).
    pub crashes: u32,
    /// Clock jumps past the keys' TTL on one path (0 or 1, `timing::PAST_TTL`).
    pub jumps: u32,
    pub table: bool,
    /// Instead of a search: compare the run with the same run under these
    /// defences (`Run::with_defences`), [`crate::answer::Reply::Compared`].
    pub cmp: Option<Toggles>,
}

/// The most of each fault the panel offers: one more lost message or crash
/// multiplies the states by 10 to 50, past a few seconds in the browser.
pub const MAX_FAULTS: u32 = 1;

/// The most lost messages the panel offers: two (on at first where the
/// search finishes, [`crate::Scenario::explore_losses`]).
pub const MAX_LOSSES: u32 = 2;

/// Distinct states a reader's search may visit before it stops (truncated):
/// about a second and a half in the worker (`make bench`), and at about 100
/// bytes a state, 50 MB.
pub const MAX_STATES: usize = 500_000;

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
            NodeId::Mail => 6,
            NodeId::Reconciler => 7,
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
            Command::ExternalPut => self.u(7),
        }
    }
    fn commands(&mut self, cs: &[(usize, Command)]) {
        self.len(cs.len());
        for (k, c) in cs {
            self.len(*k);
            self.command(c);
        }
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
            6 => NodeId::Mail,
            7 => NodeId::Reconciler,
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
            7 => Command::ExternalPut,
            _ => return None,
        })
    }
    fn commands(&mut self) -> Option<Vec<(usize, Command)>> {
        let n = self.len()?;
        (0..n)
            .map(|_| Some((self.count()?, self.command()?)))
            .collect()
    }
    fn end(self) -> Option<()> {
        self.0.is_empty().then_some(())
    }
}

impl Request {
    /// The scenario as the reader runs it: the catalogue's, its client under
    /// the request's policy.
    pub fn setup(&self) -> Scenario {
        self.scenario.scenario().with_retry(self.retry)
    }

    pub fn encode(&self) -> Vec<u32> {
        let mut w = W(Vec::new());
        w.len(self.scenario.index());
        w.u64(self.seed);
        w.toggles(self.toggles);
        for n in self.retry.numbers() {
            w.u(n as u32);
        }
        w.commands(&self.commands);
        w.len(self.step);
        w.u(self.losses);
        w.u(self.crashes);
        w.u(self.jumps);
        w.u(u32::from(self.table));
        match self.cmp {
            Some(t) => {
                w.u(1);
                w.toggles(t);
            }
            None => w.u(0),
        }
        w.0
    }

    pub fn decode(words: &[u32]) -> Option<Request> {
        let mut r = R(words);
        let scenario = *ScenarioId::ALL.get(r.count()?)?;
        let req = Request {
            scenario,
            seed: r.u64()?,
            toggles: r.toggles()?,
            retry: Retry::of([
                r.u()?.into(),
                r.u()?.into(),
                r.u()?.into(),
                r.u()?.into(),
                r.u()?.into(),
            ]),
            commands: r.commands()?,
            step: r.count()?,
            losses: r.u()?.min(MAX_LOSSES),
            crashes: r.u()?.min(MAX_FAULTS),
            jumps: r.u()?.min(MAX_FAULTS),
            table: r.bool()?,
            cmp: match r.bool()? {
                true => Some(r.toggles()?),
                false => None,
            },
        };
        r.end()?;
        Some(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Request {
        Request {
            scenario: ScenarioId::CrashAfterCharge,
            seed: u64::MAX - 5,
            toggles: Toggles::of(&[Toggle::AtomicClaim, Toggle::CrashBeforeCommit]),
            retry: Retry {
                max_attempts: 9,
                deadline: Millis::hours(700),
                ..Retry::MOBILE
            },
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
            step: 17,
            losses: 1,
            crashes: 0,
            jumps: 1,
            table: true,
            cmp: Some(Toggles::of(&[Toggle::KeyToProcessor])),
        }
    }

    #[test]
    fn a_request_round_trips() {
        let req = request();
        assert_eq!(Request::decode(&req.encode()), Some(req.clone()));
        let search = Request { cmp: None, ..req };
        assert_eq!(Request::decode(&search.encode()), Some(search));
    }

    #[test]
    fn a_malformed_request_decodes_to_none() {
        let words = request().encode();
        // Every truncation, and one word too many.
        for k in 0..words.len() {
            assert_eq!(Request::decode(&words[..k]), None, "cut at {k}");
        }
        let mut longer = words.clone();
        longer.push(0);
        assert_eq!(Request::decode(&longer), None);
        assert_eq!(
            Request::decode(&[999, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            None
        );
        assert_eq!(Request::decode(&[]), None);
    }

    #[test]
    fn a_request_asks_for_at_most_two_losses_and_one_fault_of_each_other_kind() {
        let req = Request {
            scenario: ScenarioId::IdempotencyKey,
            seed: 1,
            toggles: Toggles::default(),
            retry: Retry::MOBILE,
            commands: Vec::new(),
            step: 0,
            losses: 7,
            crashes: 9,
            jumps: 2,
            table: false,
            cmp: None,
        };
        let back = Request::decode(&req.encode()).expect("decodes");
        assert_eq!(
            (back.losses, back.crashes, back.jumps),
            (MAX_LOSSES, MAX_FAULTS, MAX_FAULTS)
        );
    }

    #[test]
    fn a_policy_out_of_range_decodes_into_range() {
        let mut words = request().encode();
        // The policy's five words follow the scenario, the seed and the toggles.
        words[4..9].copy_from_slice(&[0, 0, u32::MAX, 7, u32::MAX]);
        let back = Request::decode(&words).expect("decodes");
        assert_eq!(back.retry.numbers(), [50, 1, 60_000, 7, 2_592_000]);
        assert_eq!(back.setup().retry, back.retry);
    }
}
