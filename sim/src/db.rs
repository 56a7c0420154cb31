//! Postgres, reduced to what the scenarios need and no less: tables with rows,
//! unique indexes that may be present or absent, transactions at READ
//! COMMITTED with row locks (a writer that touches a row another open
//! transaction changed waits for it), `INSERT … ON CONFLICT DO NOTHING`,
//! `UPDATE … WHERE` with rows affected, and a unique violation that aborts the
//! transaction. Statements are values ([`Stmt`]) rendered as exact SQL.

use crate::key::Paid;
use crate::shared::Shared;
use crate::vecmap::VecMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A cell value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    Null,
    Int(i64),
    /// Shared: copying a row, a statement or a database copies no text.
    Text(Arc<str>),
    /// A JSON document the handler wrote (a stored response body).
    Paid(Paid),
}

impl Value {
    pub fn text(s: impl Into<Arc<str>>) -> Value {
        Value::Text(s.into())
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(&s[..]),
            _ => None,
        }
    }
}

/// A unique index (a primary key is one too). `present: false` models the
/// anti-pattern of a table that was meant to have it and does not.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UniqueIndex {
    pub name: String,
    pub columns: Vec<usize>,
    pub present: bool,
}

/// One row. Readers see `committed`; the transaction that wrote `pending`
/// sees its own version and holds the row's lock until it ends.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Row {
    pub id: u32,
    pub committed: Option<Vec<Value>>,
    pub pending: Option<Pending>,
}

/// An uncommitted version: `values: None` is a delete. `lock_only`: the
/// transaction only locked the row (an `UPDATE` that waited for it and
/// re-checked it to no match): its version stays the committed one, and
/// committing it makes no new version.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pending {
    pub tx: TxId,
    pub values: Option<Vec<Value>>,
    pub lock_only: bool,
}

impl Row {
    fn visible(&self, tx: TxId) -> Option<&Vec<Value>> {
        match &self.pending {
            Some(p) if p.tx == tx => p.values.as_ref(),
            _ => self.committed.as_ref(),
        }
    }
    fn locked_by_other(&self, tx: TxId) -> Option<TxId> {
        self.pending.as_ref().map(|p| p.tx).filter(|t| *t != tx)
    }
}

/// A table. Its schema (columns, unique indexes) is shared by every copy of
/// a world (`Arc`): the explorer clones worlds by the million, and a clone
/// copies only rows; an index switched on or off is copied on write.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Table {
    pub name: &'static str,
    pub columns: Arc<[&'static str]>,
    pub unique: Arc<Vec<UniqueIndex>>,
    pub rows: Vec<Row>,
    next_row: u32,
}

impl Table {
    pub fn new(name: &'static str, columns: &[&'static str]) -> Table {
        Table {
            name,
            columns: columns.into(),
            unique: Arc::new(Vec::new()),
            rows: Vec::new(),
            next_row: 1,
        }
    }

    /// Declares a unique index over `cols` (by name); `present: false` leaves it out.
    pub fn with_unique(mut self, name: &str, cols: &[&str], present: bool) -> Table {
        let columns = cols.iter().map(|c| self.col(c)).collect();
        Arc::make_mut(&mut self.unique).push(UniqueIndex {
            name: name.into(),
            columns,
            present,
        });
        self
    }

    /// Adds a committed row at set-up time.
    pub fn with_row(mut self, values: Vec<Value>) -> Table {
        let id = self.next_row;
        self.next_row += 1;
        self.rows.push(Row {
            id,
            committed: Some(values),
            pending: None,
        });
        self
    }

    pub fn col(&self, name: &str) -> usize {
        self.columns
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("table {} has no column {name}", self.name))
    }

    /// Committed rows, as any other session would read them.
    pub fn committed_rows(&self) -> impl Iterator<Item = &Vec<Value>> {
        self.rows.iter().filter_map(|r| r.committed.as_ref())
    }

    pub fn committed_count(&self) -> usize {
        self.committed_rows().count()
    }

    fn matches(&self, values: &[Value], cond: &[Cond]) -> bool {
        cond.iter().all(|c| match c {
            Cond::Eq(col, v) => values[self.col(col)] == *v,
            Cond::Lt(col, v) => values[self.col(col)] < *v,
        })
    }
}

/// A transaction id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TxId(pub u32);

impl fmt::Display for TxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tx{}", self.0)
    }
}

/// A client connection (one per API request handler, or per consumer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnId(pub u32);

/// A `WHERE` term.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    Eq(&'static str, Value),
    Lt(&'static str, Value),
}

/// A `SET` term.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Assign {
    To(&'static str, Value),
    Add(&'static str, i64),
}

/// What `INSERT` does on a unique conflict.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OnConflict {
    /// Plain `INSERT`: a conflict is a unique violation that aborts the transaction.
    Error,
    /// `ON CONFLICT DO NOTHING` (no target): skips the row on a conflict with any
    /// unique index. Without a unique index it never fires.
    DoNothing,
}

/// A statement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stmt {
    Begin,
    Commit,
    Rollback,
    Insert {
        table: &'static str,
        /// Static: a statement's columns are its handler's (a vector was an
        /// allocation per statement and per copy of it).
        columns: &'static [&'static str],
        values: Vec<Value>,
        on_conflict: OnConflict,
    },
    Update {
        table: &'static str,
        set: Vec<Assign>,
        cond: Vec<Cond>,
    },
    /// `SELECT *`, in the order of `order_by` when it names a column (NULLs
    /// last); without one Postgres promises no order, and no handler may
    /// read a row by its position.
    Select {
        table: &'static str,
        cond: Vec<Cond>,
        order_by: Option<&'static str>,
    },
}

/// Why a statement failed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SqlError {
    /// 23505.
    UniqueViolation { index: String },
    /// 25P02: a previous statement of this transaction failed.
    InFailedTransaction,
    /// 40P01: waiting would close a cycle of transactions waiting for each
    /// other; Postgres aborts the transaction whose wait closed it (after
    /// `deadlock_timeout`, which the model does not wait).
    Deadlock,
}

/// A statement's result.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Command tag and the rows a `SELECT` returned.
    Ok {
        tag: Tag,
        rows: Vec<Vec<Value>>,
    },
    Error(SqlError),
}

/// The command tag Postgres reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tag {
    Begin,
    Commit,
    /// A `COMMIT` of a failed transaction reports `ROLLBACK`.
    Rollback,
    Insert(usize),
    Update(usize),
    Select(usize),
}

impl Outcome {
    /// Rows affected (or returned).
    pub fn count(&self) -> usize {
        match self {
            Outcome::Ok {
                tag: Tag::Insert(n) | Tag::Update(n) | Tag::Select(n),
                ..
            } => *n,
            _ => 0,
        }
    }
    pub fn is_error(&self) -> bool {
        matches!(self, Outcome::Error(_))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Session {
    tx: TxId,
    failed: bool,
}

/// A statement waiting for a row lock.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Waiting {
    pub conn: ConnId,
    pub stmt: Stmt,
    pub on: TxId,
    /// An `UPDATE`'s rows as its first run matched them (its snapshot): after
    /// the wait it re-checks these rows' newest versions and no others
    /// (EvalPlanQual), and keeps the lock on a row that no longer matches.
    pub targets: Vec<u32>,
    /// Whether it holds its place in its row's queue (Postgres's tuple lock,
    /// first come first served: [`Waiting::queues_behind`]). A commit that
    /// makes a new version of the row takes it away from every waiter for
    /// the row: each leaves the old version's queue and races for the new
    /// one, and the order they queue in there is the scheduler's, so the
    /// release after that is a race among them too.
    pub queued: bool,
}

impl Db {
    /// The connection whose waiting statement `conn`'s waiting statement
    /// queues behind (Postgres shows that one among its blockers, and lets
    /// it run first unless a new version of the row made them race), if any.
    pub fn queued_behind(&self, conn: ConnId) -> Option<ConnId> {
        let at = self.waiting.iter().position(|w| w.conn == conn)?;
        let w = &self.waiting[at];
        let v = self.waiting[..at].iter().find(|v| w.queues_behind(v))?;
        Some(v.conn)
    }
}

impl Waiting {
    /// Whether it queues behind waiter `v` (Postgres's tuple lock): both are
    /// `UPDATE`s of one table waiting for the same row, the first of the rows
    /// they matched. The first in the queue waits for the holder, the others
    /// behind it. When the holder rolls back or had only locked the row, they
    /// run in turn, not in a race; when it commits a new version, they race
    /// ([`Waiting::queued`]). (A waiting `INSERT` has no rows: it waits for
    /// the holder's new key.)
    pub fn queues_behind(&self, v: &Waiting) -> bool {
        self.row().is_some() && v.row() == self.row()
    }

    /// The row it waits for, if it is an `UPDATE`'s: (table, row id).
    pub fn row(&self) -> Option<(&'static str, u32)> {
        match &self.stmt {
            Stmt::Update { table, .. } => Some((*table, *self.targets.first()?)),
            _ => None,
        }
    }
}

/// What executing a statement did.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Exec {
    Done {
        outcome: Outcome,
        tx: Option<TxId>,
        touched: Vec<(&'static str, u32)>,
    },
    /// Parked behind the lock of transaction `on` (and maybe queued behind
    /// another waiter: [`Db::queued_behind`]).
    Blocked { on: TxId },
}

/// A race between statements a release woke at once.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Race {
    /// The waiting connections, in the order they began to wait.
    pub candidates: Vec<ConnId>,
    pub winner: ConnId,
    /// How many woken statements had run before it (since the database began).
    pub after: u64,
}

/// A statement that finished later, after the transaction it waited for ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Woken {
    pub conn: ConnId,
    pub stmt: Stmt,
    pub exec: Exec,
    /// Its connection was closed while it waited: the statement still ran (a
    /// backend waiting on a lock does not read its socket), its answer goes
    /// nowhere, and the transaction it ran in, if any, rolled back right
    /// after, when the backend read the closed socket.
    pub closed: bool,
    pub lost: Option<TxId>,
}

/// The database.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Db {
    /// Each table shared by the world's copies until one of them changes it:
    /// a step that writes one table copies that table alone.
    pub tables: Vec<Shared<Table>>,
    sessions: VecMap<ConnId, Session>,
    pub waiting: Vec<Waiting>,
    next_tx: u32,
    /// Races so far: a release that let several waiting statements run at
    /// once (a ROLLBACK wakes every waiter on its key, and whichever gets
    /// there first wins: Postgres's scheduler decides).
    pub races: Vec<Race>,
    /// Which candidate wins each race, in order (`race_picks[i]` for the
    /// i-th race; past its end, or out of range, the first waiter wins).
    pub race_picks: Vec<u32>,
    /// How many statements that waited have run since the database began.
    pub woken: u64,
    /// Connections that were closed (their process crashed or gave up on
    /// them). A new statement of a closed session never runs: the client
    /// library fails it. One that was waiting still runs (see [`Woken`]).
    closed: Vec<ConnId>,
}

mod engine;
#[cfg(test)]
mod tests;
