//! Exploration of what can happen to a world: a world lists its
//! [`Choice`]s ([`World::choices`]) and takes one ([`World::choose`]): fire a
//! pending event (messages may race), lose a message in flight, crash or
//! restart a node, fast-forward the clock.

use crate::net::{Fate, MsgId, NodeId};
use crate::time::Millis;
use crate::trace::Happening;
use crate::world::{Command, EventKey, World};

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
}

impl Choice {
    /// The command this choice is, if it is one (every choice but `Fire`).
    pub fn command(self) -> Option<Command> {
        match self {
            Choice::Fire(_) => None,
            Choice::Lose(m) => Some(Command::Lose(m)),
            Choice::Crash(n) => Some(Command::Crash(n)),
            Choice::Restart(n) => Some(Command::Restart(n)),
            Choice::AdvanceClock(d) => Some(Command::AdvanceClock(d)),
        }
    }
}

impl World {
    /// Every choice the world could make now: fire any pending event (in any
    /// order), lose any message in flight that would arrive, crash any node
    /// that can crash and is up, restart any that is down, advance the clock
    /// by an hour. An explorer takes a bounded subset of them.
    pub fn choices(&self) -> Vec<Choice> {
        let mut v: Vec<Choice> = self.queue.keys().map(|k| Choice::Fire(*k)).collect();
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
        match c {
            Choice::Fire(k) => self.fire(*k),
            c => c
                .command()
                .and_then(|cmd| self.apply(&cmd).ok())
                .unwrap_or_default(),
        }
    }
}
