//! What a path of choices becomes outside the explorer: the page's commands
//! ([`to_commands`], for Show me links) and text ([`describe`], for reports and
//! failing tests).

use super::{Choice, Start};
use crate::net::{Fate, Msg};
use crate::world::{Command, Event, World};

/// A path as the reader's commands: on a run whose step 0 is the path's
/// start, `run.apply_at(step, command)` for each entry in order, then
/// `run.state_at(steps)` is the path's world.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Script {
    pub commands: Vec<(usize, Command)>,
    pub steps: usize,
}

/// Why a path cannot be replayed as commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NotCommands {
    /// Choice `index` fires an event that is not the earliest pending one (a
    /// race won out of time order), or lets another waiter win a race: a run
    /// (always the earliest event first, the first waiter first) cannot
    /// express either.
    Reordered { index: usize },
    /// Choice `index` is a command right after a stale timer fired (a timer
    /// that did nothing): a run folds stale timers into the next step, so
    /// its state at that step has not fired it yet.
    AfterStaleTimer { index: usize },
    /// Choice `index` does not apply in the world it meets.
    Inapplicable { index: usize },
}

/// Maps `path` from `start` onto `Run::apply_at` commands. Fire choices must
/// each be the earliest pending event (ordinary steps); every other choice is
/// a command. Steps count as a run counts them: a stale timer (firing it does
/// nothing) is part of the next step, and stale timers at the end of the path
/// are not counted. Paths of an exploration with a zero window and only
/// earliest-first firing always map; races generally do not.
pub fn to_commands(start: &World, path: &[Choice]) -> Result<Script, NotCommands> {
    let mut w = start.clone();
    let mut commands = Vec::new();
    let mut steps = 0;
    let mut stale = false;
    for (index, c) in path.iter().enumerate() {
        match (*c, c.command()) {
            (Choice::Fire(k), _) => {
                if w.queue.first_key() != Some(&k) {
                    return Err(NotCommands::Reordered { index });
                }
                if w.fire(k).is_empty() {
                    stale = true;
                } else {
                    stale = false;
                    steps += 1;
                }
            }
            (_, Some(cmd)) => {
                if stale {
                    return Err(NotCommands::AfterStaleTimer { index });
                }
                if w.apply(&cmd).is_err() {
                    return Err(NotCommands::Inapplicable { index });
                }
                commands.push((steps, cmd));
                steps += 1;
            }
            // Another waiter winning a race is Postgres's choice, not a reader's.
            (Choice::Race(..), _) => return Err(NotCommands::Reordered { index }),
            (_, None) => unreachable!("only Fire and Race are no command"),
        }
    }
    Ok(Script { commands, steps })
}

/// A path as text, a line per choice: the event's time and what it is (a
/// message's route and label), or the fault. Out-of-order fires are marked
/// `(race)`. For reports and failing tests; texts are language-neutral.
pub fn describe(start: &World, path: &[Choice]) -> Vec<String> {
    let mut w = start.clone();
    let mut lines = Vec::with_capacity(path.len());
    for c in path {
        let line = match *c {
            Choice::Race(Start::Crash(n), k) => {
                format!("{:>10}  CRASH {n} ({k})", "")
            }
            Choice::Fire((at, seq)) | Choice::Race(Start::Fire((at, seq)), _) => {
                let race = match *c {
                    Choice::Race(_, k) => format!(" ({k})"),
                    _ if w.queue.first_key() == Some(&(at, seq)) => String::new(),
                    _ => " (race)".to_string(),
                };
                let what = match w.queue.get(&(at, seq)) {
                    Some(Event::Deliver(id)) => match w.msgs.get(id) {
                        Some(m) => format!("{}{race}", message(m)),
                        None => format!("deliver #{}{race}", id.0),
                    },
                    Some(ev) => format!("{ev:?}{race}"),
                    None => "(no such event)".to_string(),
                };
                format!("{:>10}  {what}", at.to_string())
            }
            Choice::Lose(id) => match w.msgs.get(&id) {
                Some(m) => format!("{:>10}  LOSE {}", "", message(m)),
                None => format!("{:>10}  LOSE #{}", "", id.0),
            },
            Choice::Crash(n) => format!("{:>10}  CRASH {n}", ""),
            Choice::Restart(n) => format!("{:>10}  RESTART {n}", ""),
            Choice::AdvanceClock(d) => format!("{:>10}  CLOCK +{d}", ""),
            Choice::Parallel(n) => format!("{:>10}  PARALLEL ×{n}", ""),
        };
        lines.push(line);
        w.choose(c);
    }
    lines
}

fn message(m: &Msg) -> String {
    let lost = match m.fate {
        Fate::Deliver => "",
        Fate::Lost(_) => " (lost)",
    };
    format!("{} → {}: {}{lost}", m.from, m.to, m.payload.label())
}
