//! A run as the page's link writes it: the reader's commands (`cmd=`) and the
//! toggles that differ from the scenario's defaults (`on=`, `off=`). The page
//! (`src/params.rs`) parses and writes its links with these, and the
//! explorer's worker writes each counterexample's link with them, so both
//! write one format.

use crate::scenario::Scenario;
use crate::{Command, Millis, MsgId, NodeId, Toggles};

/// A reader's command as the URL writes it: `ack`, `m12`, `p3`, `xapi-a`, `rapi-a`, `t3600000`.
/// A scenario's own scripted command (another writer's debit) is never in the URL.
pub fn command_text(c: &Command) -> String {
    match c {
        Command::LoseNextResponse => "ack".into(),
        Command::Lose(m) => format!("m{}", m.0),
        Command::ParallelRetries(n) => format!("p{n}"),
        Command::Crash(n) => format!("x{}", n.slug()),
        Command::Restart(n) => format!("r{}", n.slug()),
        Command::AdvanceClock(d) => format!("t{}", d.0),
        Command::ExternalDebit { amount } => format!("d{amount}"),
        Command::ExternalPut => "w".into(),
    }
}

/// The inverse of [`command_text`]; `None` for anything else.
pub fn parse_command(s: &str) -> Option<Command> {
    match s {
        "ack" => return Some(Command::LoseNextResponse),
        "w" => return Some(Command::ExternalPut),
        _ => {}
    }
    // `split_at_checked`: `split_at`'s panic would link the standard library's
    // char-boundary message into the page's module.
    let (head, rest) = s.split_at_checked(s.char_indices().nth(1)?.0)?;
    Some(match head {
        "m" => Command::Lose(MsgId(rest.parse().ok()?)),
        "p" => Command::ParallelRetries(rest.parse().ok()?),
        "x" => Command::Crash(NodeId::from_slug(rest)?),
        "r" => Command::Restart(NodeId::from_slug(rest)?),
        "t" => Command::AdvanceClock(Millis(rest.parse().ok()?)),
        "d" => Command::ExternalDebit {
            amount: rest.parse().ok()?,
        },
        _ => return None,
    })
}

/// The end of a link's query for a run of `s` under `toggles`: `&on=…&off=…`
/// (the toggles `s` offers whose state differs from its defaults),
/// `&retry=1500,4,500,200,43200` (the client's policy, [`crate::scenario::Retry::numbers`],
/// where it is not the catalogue's) and `&cmd=3:ack,5:p3` (the commands with
/// their steps); empty parts are left out.
pub fn tail(s: &Scenario, toggles: Toggles, commands: &[(usize, Command)]) -> String {
    let mut q = String::new();
    let defaults = s.default_toggles();
    for (name, want) in [("on", true), ("off", false)] {
        let ids: Vec<&str> = s
            .toggles
            .iter()
            .map(|(t, _)| *t)
            .filter(|t| toggles.has(*t) == want && defaults.has(*t) != want)
            .map(|t| t.id())
            .collect();
        if !ids.is_empty() {
            q.push_str(&format!("&{name}={}", ids.join(",")));
        }
    }
    if s.retry != s.id.scenario().retry {
        for (i, n) in s.retry.numbers().into_iter().enumerate() {
            q.push_str(if i == 0 { "&retry=" } else { "," });
            q.push_str(&n.to_string());
        }
    }
    let cmds: Vec<String> = commands
        .iter()
        .map(|(k, c)| format!("{k}:{}", command_text(c)))
        .collect();
    if !cmds.is_empty() {
        q.push_str(&format!("&cmd={}", cmds.join(",")));
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scenario::{Retry, ScenarioId};
    use crate::Toggle;

    #[test]
    fn the_tail_names_what_differs_and_the_commands() {
        let s = ScenarioId::IdempotencyKey.scenario();
        let defaults = s.default_toggles();
        let now = defaults
            .with(Toggle::AtomicClaim, false)
            .with(Toggle::NoRetry, true);
        let cmds = [
            (2, Command::ParallelRetries(2)),
            (5, Command::Crash(NodeId::Api(0))),
        ];
        assert_eq!(
            tail(s, now, &cmds),
            "&on=no-retry&off=atomic-claim&cmd=2:p2,5:xapi-a"
        );
        assert_eq!(tail(s, defaults, &[]), "");
        // A policy of the reader's own, as its five numbers.
        let mine = Scenario {
            retry: Retry {
                max_attempts: 2,
                ..s.retry
            },
            ..s.clone()
        };
        assert_eq!(tail(&mine, defaults, &[]), "&retry=1500,2,500,200,43200");
    }
}
