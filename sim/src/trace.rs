//! The trace: what each step did, as data. The page narrates it, draws the
//! sequence diagram from it and animates the topology with it; the tests read
//! it too. Texts in it are language-neutral (commands, labels, ids).

use crate::belief::Belief;
use crate::command::Command;
use crate::db::{ConnId, Outcome, Stmt, TxId};
use crate::http::ErrorCode;
use crate::invariant::Invariant;
use crate::net::{Fate, LossCause, MsgId, NodeId, PayloadKind, ReqId};
use crate::redis;
use crate::scenario::Phase;
use crate::time::Millis;

/// One thing that happened during a step.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Happening {
    /// A message left `from`; `fate` is already decided (a lost one still travels).
    Sent {
        msg: MsgId,
        from: NodeId,
        to: NodeId,
        label: String,
        kind: PayloadKind,
        arrives_at: Millis,
        fate: Fate,
    },
    Delivered {
        msg: MsgId,
        from: NodeId,
        to: NodeId,
        label: String,
    },
    Lost {
        msg: MsgId,
        from: NodeId,
        to: NodeId,
        label: String,
        cause: LossCause,
    },
    /// A message from outside the system arrived at `to` in this step: another
    /// client's write (the web version's PUT, the web app's debit), whose sender
    /// the model does not run. The sequence diagram draws it from its edge.
    FromOutside {
        to: NodeId,
        label: String,
        kind: PayloadKind,
    },
    /// A fault duplicated message `msg` as `copy`.
    Duplicated {
        msg: MsgId,
        copy: MsgId,
    },
    /// A request handler (API instance or consumer) entered a phase.
    Phase {
        node: NodeId,
        req: ReqId,
        phase: Phase,
    },
    /// Redis ran a command.
    Redis {
        cmd: redis::Cmd,
        reply: redis::Reply,
    },
    /// Postgres ran a statement on connection `conn`. `touched` lists (table, row id) it wrote.
    Sql {
        conn: ConnId,
        tx: Option<TxId>,
        stmt: Stmt,
        outcome: Outcome,
        touched: Vec<(&'static str, u32)>,
    },
    /// A statement of connection `conn` waits for a row lock held by `on`,
    /// queued behind connection `behind` if that one waits for the row first.
    SqlWaits {
        conn: ConnId,
        stmt: Stmt,
        on: TxId,
        behind: Option<ConnId>,
    },
    TxBegin(TxId),
    TxCommit(TxId),
    TxRollback {
        tx: TxId,
        crash: bool,
    },
    /// The in-process map of an API instance was read or written.
    Memory {
        node: NodeId,
        key: String,
        hit: Option<bool>,
    },
    /// The card processor charged the card (or replayed an earlier charge for the same key).
    Charged {
        charge: String,
        amount: i64,
        key: Option<String>,
        replayed: bool,
    },
    /// An API instance or consumer answered; `error` is the answer's error code,
    /// if any (a 409 is a key in use or a version mismatch).
    Responded {
        node: NodeId,
        status: u16,
        replayed: bool,
        error: Option<ErrorCode>,
    },
    ClientSent {
        op: usize,
        attempt: u32,
        key: Option<String>,
    },
    ClientTimeout {
        op: usize,
        attempt: u32,
    },
    /// The app, past its retries, asks the API what became of operation `op`
    /// (by its key, where it has one).
    ClientChecks {
        op: usize,
    },
    Belief {
        op: usize,
        belief: Belief,
    },
    Crashed(NodeId),
    Restarted(NodeId),
    ClockAdvanced(Millis),
    KeyExpired(String),
    /// The broker appended a record (or dropped a producer retry as a duplicate).
    Appended {
        offset: u64,
        msg_id: String,
        duplicate: bool,
    },
    OffsetCommitted(u64),
    /// The broker's session timed out with record `offset` delivered and not
    /// committed: it takes the record back to deliver it again.
    SessionExpired {
        offset: u64,
    },
    /// The consumer's statement timed out while it handled record `offset`: it
    /// closed its connection (the transaction rolls back) and dropped the record.
    StatementTimedOut {
        offset: u64,
    },
    /// The mail service sent the customer a receipt for `payment` (or, for a
    /// message id it had sent already, acknowledged it and sent nothing).
    Emailed {
        payment: String,
        duplicate: bool,
    },
    /// A command from the reader (or the scenario's script) was applied.
    Command(Command),
    /// The moment the lesson pauses on: a retry or a duplicate leaves the app, or a
    /// record is redelivered — before the server has done anything with it.
    Decisive,
    /// An invariant started or stopped holding.
    Invariant {
        inv: Invariant,
        holds: bool,
    },
}

/// What made a step happen.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// The next event of the queue fired.
    Event,
    /// A command was applied.
    Command(Command),
}

/// One step of the trace.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StepRecord {
    /// 1-based: the state after this step is "step n".
    pub index: usize,
    pub time: Millis,
    pub cause: Cause,
    pub happenings: Vec<Happening>,
}

impl StepRecord {
    /// Messages sent during the step.
    pub fn sent(&self) -> impl Iterator<Item = &Happening> {
        self.happenings
            .iter()
            .filter(|h| matches!(h, Happening::Sent { .. }))
    }

    /// The first exact command this step executed (SQL, Redis), with its result, as text.
    pub fn command(&self) -> Option<(String, String)> {
        self.happenings.iter().find_map(|h| match h {
            Happening::Sql { stmt, outcome, .. } => Some((stmt.to_string(), outcome.to_string())),
            Happening::Redis { cmd, reply } => Some((cmd.to_string(), reply.to_string())),
            _ => None,
        })
    }

    /// A one-line, language-neutral rendering, for snapshot tests and logs.
    pub fn line(&self) -> String {
        let parts: Vec<String> = self.happenings.iter().filter_map(render).collect();
        format!(
            "{:>4} {:>9}ms {}",
            self.index,
            self.time.0,
            parts.join(" | ")
        )
    }
}

fn render(h: &Happening) -> Option<String> {
    Some(match h {
        Happening::Sent {
            from,
            to,
            label,
            fate,
            ..
        } => match fate {
            Fate::Deliver => format!("{from}->{to} {label}"),
            Fate::Lost(_) => format!("{from}->{to} {label} [will be lost]"),
        },
        Happening::Delivered {
            to: NodeId::Client,
            label,
            ..
        } => format!("client got {label}"),
        Happening::Delivered { .. } => return None,
        Happening::Lost {
            from, to, label, ..
        } => format!("LOST {from}->{to} {label}"),
        Happening::FromOutside { to, label, .. } => format!("outside->{to} {label}"),
        Happening::Duplicated { .. } => "DUPLICATED".into(),
        Happening::Phase { node, phase, .. } => format!("{node}:{phase:?}"),
        Happening::Redis { cmd, reply } => format!("{cmd} → {reply}"),
        Happening::Sql { stmt, outcome, .. } => format!("{stmt} → {outcome}"),
        Happening::SqlWaits { stmt, on, .. } => format!("{stmt} waits for {on}"),
        Happening::TxBegin(_) | Happening::TxCommit(_) => return None,
        Happening::TxRollback { tx, crash } => format!(
            "ROLLBACK {tx}{}",
            if *crash { " (connection lost)" } else { "" }
        ),
        Happening::Memory { node, key, hit } => match hit {
            Some(hit) => format!(
                "{node} map.get({key}) → {}",
                if *hit { "hit" } else { "miss" }
            ),
            None => format!("{node} map.put({key})"),
        },
        Happening::Charged {
            charge,
            amount,
            replayed,
            ..
        } => {
            format!(
                "CHARGE {charge} ${amount}{}",
                if *replayed { " (replay)" } else { "" }
            )
        }
        Happening::Responded { .. } => return None,
        Happening::ClientSent { op, attempt, .. } => format!("client op{op} attempt {attempt}"),
        Happening::ClientTimeout { op, attempt } => {
            format!("client op{op} attempt {attempt} timed out")
        }
        Happening::ClientChecks { op, .. } => format!("client op{op} checks its status"),
        Happening::Belief { op, belief } => format!("client op{op} believes {belief:?}"),
        Happening::Crashed(n) => format!("CRASH {n}"),
        Happening::Restarted(n) => format!("RESTART {n}"),
        Happening::ClockAdvanced(d) => format!("clock +{d}"),
        Happening::KeyExpired(k) => format!("expired {k}"),
        Happening::Appended {
            msg_id,
            duplicate: true,
            ..
        } => format!("duplicate {msg_id} dropped"),
        Happening::Appended { offset, msg_id, .. } => format!("append #{offset} {msg_id}"),
        Happening::OffsetCommitted(o) => format!("offset={o}"),
        Happening::SessionExpired { offset } => format!("session-expired offset={offset}"),
        Happening::StatementTimedOut { offset } => {
            format!("consumer statement-timeout offset={offset}")
        }
        Happening::Emailed {
            payment, duplicate, ..
        } => format!(
            "EMAIL receipt {payment}{}",
            if *duplicate {
                " (duplicate dropped)"
            } else {
                ""
            }
        ),
        Happening::Command(c) => format!("COMMAND {c:?}"),
        Happening::Decisive => "DECISIVE".into(),
        Happening::Invariant { inv, holds } => {
            format!(
                "INVARIANT {} {}",
                inv.id(),
                if *holds { "holds" } else { "VIOLATED" }
            )
        }
    })
}
