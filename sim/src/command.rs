//! Commands from outside the world: the reader's controls and a scenario's
//! script, and why one cannot apply.

use crate::net::{MsgId, NodeId};
use crate::time::Millis;
use std::fmt;

/// A command from outside the world: the reader's controls, or a scenario's script.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// Lose the next HTTP response on its way to the client (the lost ack).
    LoseNextResponse,
    /// Lose this message, now in flight.
    Lose(MsgId),
    /// The client fires this many extra copies of its current request at once.
    ParallelRetries(u32),
    Crash(NodeId),
    Restart(NodeId),
    /// Fast-forward the virtual clock.
    AdvanceClock(Millis),
    /// Another writer (the web app) debits the account directly.
    ExternalDebit {
        amount: i64,
    },
    /// Another client (the web version) PUTs a newer email into the profile.
    ExternalPut,
}

impl Command {
    /// How many parallel copies the reader may fire at once.
    pub const PARALLEL: std::ops::RangeInclusive<u32> = 2..=10;
}

/// Why a command cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CommandError {
    /// No such message in flight (it arrived or was never sent).
    NoSuchMessage(MsgId),
    /// The scenario has no such node, or that node cannot crash.
    NotCrashable(NodeId),
    AlreadyDown(NodeId),
    AlreadyUp(NodeId),
    /// `ParallelRetries(n)` takes n in [`Command::PARALLEL`].
    BadCount(u32),
    /// This scenario has no mobile client.
    NoClient,
    /// The clock only moves forward, by at most 30 days.
    BadDuration(Millis),
    /// This scenario has no account to debit.
    NoAccount,
    /// The run is over: no response is coming that could be lost.
    NothingToLose,
    /// The run has fewer steps than the command's.
    BeyondTheEnd(usize),
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::NoSuchMessage(m) => write!(f, "message #{} is not in flight", m.0),
            CommandError::NotCrashable(n) => write!(f, "{n} cannot crash in this scenario"),
            CommandError::AlreadyDown(n) => write!(f, "{n} is already down"),
            CommandError::AlreadyUp(n) => write!(f, "{n} is already up"),
            CommandError::BadCount(n) => write!(
                f,
                "{n} parallel retries: choose {} to {}",
                Command::PARALLEL.start(),
                Command::PARALLEL.end()
            ),
            CommandError::NoClient => f.write_str("this scenario has no mobile client"),
            CommandError::BadDuration(d) => write!(f, "cannot advance the clock by {d}"),
            CommandError::NoAccount => f.write_str("this scenario has no account to debit"),
            CommandError::NothingToLose => {
                f.write_str("the run is over: no response is coming that could be lost")
            }
            CommandError::BeyondTheEnd(k) => write!(f, "the run ends before step {k}"),
        }
    }
}
