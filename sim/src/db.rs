//! Postgres, reduced to what the scenarios need and no less: tables with rows,
//! unique indexes that may be present or absent, transactions at READ
//! COMMITTED with row locks (a writer that touches a row another open
//! transaction changed waits for it), `INSERT … ON CONFLICT DO NOTHING`,
//! `UPDATE … WHERE` with rows affected, and a unique violation that aborts the
//! transaction. Statements are values ([`Stmt`]) rendered as exact SQL.

use crate::key::Paid;
use crate::vecmap::VecMap;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A cell value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
    /// A JSON document the handler wrote (a stored response body).
    Paid(Paid),
}

impl Value {
    pub fn text(s: impl Into<String>) -> Value {
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
            Value::Text(s) => Some(s),
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

/// An uncommitted version: `values: None` is a delete.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pending {
    pub tx: TxId,
    pub values: Option<Vec<Value>>,
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

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Table {
    pub name: &'static str,
    pub columns: Vec<&'static str>,
    pub unique: Vec<UniqueIndex>,
    pub rows: Vec<Row>,
    next_row: u32,
}

impl Table {
    pub fn new(name: &'static str, columns: &[&'static str]) -> Table {
        Table {
            name,
            columns: columns.to_vec(),
            unique: Vec::new(),
            rows: Vec::new(),
            next_row: 1,
        }
    }

    /// Declares a unique index over `cols` (by name); `present: false` leaves it out.
    pub fn with_unique(mut self, name: &str, cols: &[&str], present: bool) -> Table {
        let columns = cols.iter().map(|c| self.col(c)).collect();
        self.unique.push(UniqueIndex {
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
        columns: Vec<&'static str>,
        values: Vec<Value>,
        on_conflict: OnConflict,
    },
    Update {
        table: &'static str,
        set: Vec<Assign>,
        cond: Vec<Cond>,
    },
    Select {
        table: &'static str,
        cond: Vec<Cond>,
    },
}

/// Why a statement failed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SqlError {
    /// 23505.
    UniqueViolation { index: String },
    /// 25P02: a previous statement of this transaction failed.
    InFailedTransaction,
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
}

/// What executing a statement did.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Exec {
    Done {
        outcome: Outcome,
        tx: Option<TxId>,
        touched: Vec<(&'static str, u32)>,
    },
    /// Parked behind the lock of another transaction.
    Blocked { on: TxId },
}

/// A statement that finished later, after the transaction it waited for ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Woken {
    pub conn: ConnId,
    pub stmt: Stmt,
    pub exec: Exec,
}

/// The database.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Db {
    pub tables: Vec<Table>,
    sessions: VecMap<ConnId, Session>,
    pub waiting: Vec<Waiting>,
    next_tx: u32,
    /// Connections that were closed (their process crashed or gave up on
    /// them). A statement of a closed session never runs: the client library
    /// fails it, and Postgres ended the session's backend.
    closed: Vec<ConnId>,
}

impl Db {
    pub fn new(tables: Vec<Table>) -> Db {
        Db {
            tables,
            sessions: VecMap::new(),
            waiting: Vec::new(),
            next_tx: 1,
            closed: Vec::new(),
        }
    }

    /// The committed value of `column` in the first row of `table`, if it is an integer.
    pub fn first_int(&self, table: &str, column: &str) -> Option<i64> {
        let t = self.table(table)?;
        let c = t.col(column);
        t.committed_rows().next().and_then(|r| r[c].as_int())
    }

    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }

    fn table_mut(&mut self, name: &str) -> &mut Table {
        self.tables
            .iter_mut()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no table {name}"))
    }

    /// Open transactions: (connection, transaction).
    pub fn open_transactions(&self) -> impl Iterator<Item = (ConnId, TxId)> + '_ {
        self.sessions.iter().map(|(c, s)| (*c, s.tx))
    }

    pub fn set_unique_present(&mut self, table: &str, present: bool) {
        for ix in &mut self.table_mut(table).unique {
            ix.present = present;
        }
    }

    /// The session of `conn` was closed: its statements must not run.
    pub fn is_closed(&self, conn: ConnId) -> bool {
        self.closed.contains(&conn)
    }

    /// Runs `stmt` for `conn`. Statements outside `BEGIN … COMMIT` autocommit.
    /// Returns the result, plus statements of other connections that a
    /// `COMMIT`/`ROLLBACK` released and that have now run.
    pub fn execute(&mut self, conn: ConnId, stmt: Stmt) -> (Exec, Vec<Woken>) {
        let exec = self.run(conn, &stmt);
        if let Exec::Blocked { on } = exec {
            self.waiting.push(Waiting { conn, stmt, on });
            return (exec, Vec::new());
        }
        let woken = self.wake();
        (exec, woken)
    }

    /// The connection dropped (its process crashed): an open transaction rolls
    /// back and a waiting statement is cancelled. Returns what that released.
    pub fn disconnect(&mut self, conn: ConnId) -> (Option<TxId>, Vec<Woken>) {
        if !self.closed.contains(&conn) {
            self.closed.push(conn);
        }
        self.waiting.retain(|w| w.conn != conn);
        let tx = self.sessions.remove(&conn).map(|s| s.tx);
        if let Some(tx) = tx {
            self.finish(tx, false);
        }
        (tx, self.wake())
    }

    fn wake(&mut self) -> Vec<Woken> {
        let mut woken = Vec::new();
        loop {
            let ready = self.waiting.iter().position(|w| !self.tx_open(w.on));
            let Some(i) = ready else { break };
            let w = self.waiting.remove(i);
            let exec = self.run(w.conn, &w.stmt);
            if let Exec::Blocked { on } = exec {
                // Blocked again, behind a transaction that is still open.
                self.waiting.insert(i, Waiting { on, ..w });
                continue;
            }
            woken.push(Woken {
                conn: w.conn,
                stmt: w.stmt,
                exec,
            });
        }
        woken
    }

    fn tx_open(&self, tx: TxId) -> bool {
        self.sessions.values().any(|s| s.tx == tx)
    }

    fn new_tx(&mut self) -> TxId {
        let tx = TxId(self.next_tx);
        self.next_tx += 1;
        tx
    }

    fn finish(&mut self, tx: TxId, commit: bool) {
        for t in &mut self.tables {
            for r in &mut t.rows {
                if r.pending.as_ref().is_some_and(|p| p.tx == tx) {
                    let p = r.pending.take().expect("checked");
                    if commit {
                        r.committed = p.values;
                    }
                }
            }
            t.rows
                .retain(|r| r.committed.is_some() || r.pending.is_some());
        }
    }

    fn run(&mut self, conn: ConnId, stmt: &Stmt) -> Exec {
        let done = |outcome, tx, touched| Exec::Done {
            outcome,
            tx,
            touched,
        };
        let ok = |tag| Outcome::Ok {
            tag,
            rows: Vec::new(),
        };
        match stmt {
            Stmt::Begin => {
                let tx = match self.sessions.get(&conn) {
                    Some(s) => s.tx,
                    None => {
                        let tx = self.new_tx();
                        self.sessions.insert(conn, Session { tx, failed: false });
                        tx
                    }
                };
                done(ok(Tag::Begin), Some(tx), Vec::new())
            }
            Stmt::Commit | Stmt::Rollback => match self.sessions.remove(&conn) {
                Some(s) => {
                    let commit = *stmt == Stmt::Commit && !s.failed;
                    let touched = self.pending_of(s.tx);
                    self.finish(s.tx, commit);
                    let tag = if commit { Tag::Commit } else { Tag::Rollback };
                    done(ok(tag), Some(s.tx), touched)
                }
                // Postgres warns "there is no transaction in progress" and succeeds.
                None => done(
                    ok(if *stmt == Stmt::Commit {
                        Tag::Commit
                    } else {
                        Tag::Rollback
                    }),
                    None,
                    Vec::new(),
                ),
            },
            _ => {
                let (tx, autocommit) = match self.sessions.get(&conn) {
                    Some(s) if s.failed => {
                        return done(
                            Outcome::Error(SqlError::InFailedTransaction),
                            Some(s.tx),
                            Vec::new(),
                        )
                    }
                    Some(s) => (s.tx, false),
                    None => (self.new_tx(), true),
                };
                match self.run_dml(tx, stmt) {
                    Err(on) => Exec::Blocked { on },
                    Ok((outcome, touched)) => {
                        if autocommit {
                            self.finish(tx, !outcome.is_error());
                        } else if outcome.is_error() {
                            if let Some(s) = self.sessions.get_mut(&conn) {
                                s.failed = true;
                            }
                        }
                        done(outcome, Some(tx), touched)
                    }
                }
            }
        }
    }

    fn pending_of(&self, tx: TxId) -> Vec<(&'static str, u32)> {
        let mut out = Vec::new();
        for t in &self.tables {
            for r in &t.rows {
                if r.pending.as_ref().is_some_and(|p| p.tx == tx) {
                    out.push((t.name, r.id));
                }
            }
        }
        out
    }

    /// Runs a DML statement inside `tx`; `Err(other)` when it must wait.
    #[allow(clippy::type_complexity)]
    fn run_dml(
        &mut self,
        tx: TxId,
        stmt: &Stmt,
    ) -> Result<(Outcome, Vec<(&'static str, u32)>), TxId> {
        match stmt {
            Stmt::Select { table, cond } => {
                let t = self.table_mut(table);
                let rows: Vec<Vec<Value>> = t
                    .rows
                    .iter()
                    .filter_map(|r| r.visible(tx))
                    .filter(|v| t.matches(v, cond))
                    .cloned()
                    .collect();
                Ok((
                    Outcome::Ok {
                        tag: Tag::Select(rows.len()),
                        rows,
                    },
                    Vec::new(),
                ))
            }
            Stmt::Update { table, set, cond } => {
                let t = self.table_mut(table);
                let hits: Vec<usize> = (0..t.rows.len())
                    .filter(|&i| t.rows[i].visible(tx).is_some_and(|v| t.matches(v, cond)))
                    .collect();
                if let Some(other) = hits.iter().find_map(|&i| t.rows[i].locked_by_other(tx)) {
                    return Err(other);
                }
                let mut touched = Vec::new();
                for &i in &hits {
                    let mut v = t.rows[i].visible(tx).cloned().expect("visible");
                    for a in set {
                        match a {
                            Assign::To(c, val) => v[t.col(c)] = val.clone(),
                            Assign::Add(c, d) => {
                                let c = t.col(c);
                                v[c] = Value::Int(v[c].as_int().unwrap_or(0) + d);
                            }
                        }
                    }
                    t.rows[i].pending = Some(Pending {
                        tx,
                        values: Some(v),
                    });
                    touched.push((t.name, t.rows[i].id));
                }
                Ok((
                    Outcome::Ok {
                        tag: Tag::Update(hits.len()),
                        rows: Vec::new(),
                    },
                    touched,
                ))
            }
            Stmt::Insert {
                table,
                columns,
                values,
                on_conflict,
            } => {
                let t = self.table_mut(table);
                let mut row = vec![Value::Null; t.columns.len()];
                for (c, v) in columns.iter().zip(values) {
                    row[t.col(c)] = v.clone();
                }
                for ix in t.unique.iter().filter(|ix| ix.present) {
                    // NULLs are distinct in a unique index (a payment without a key never conflicts).
                    if ix.columns.iter().any(|&c| row[c] == Value::Null) {
                        continue;
                    }
                    let same = |v: &Vec<Value>| ix.columns.iter().all(|&c| v[c] == row[c]);
                    for r in &t.rows {
                        if let Some(p) = r.pending.as_ref().filter(|p| p.tx != tx) {
                            // The other transaction's uncommitted row holds the key: wait.
                            if p.values.as_ref().is_some_and(same) {
                                return Err(p.tx);
                            }
                        }
                        if r.visible(tx).is_some_and(same) {
                            return Ok((
                                match on_conflict {
                                    OnConflict::DoNothing => Outcome::Ok {
                                        tag: Tag::Insert(0),
                                        rows: Vec::new(),
                                    },
                                    OnConflict::Error => {
                                        Outcome::Error(SqlError::UniqueViolation {
                                            index: ix.name.clone(),
                                        })
                                    }
                                },
                                Vec::new(),
                            ));
                        }
                    }
                }
                let id = t.next_row;
                t.next_row += 1;
                t.rows.push(Row {
                    id,
                    committed: None,
                    pending: Some(Pending {
                        tx,
                        values: Some(row),
                    }),
                });
                Ok((
                    Outcome::Ok {
                        tag: Tag::Insert(1),
                        rows: Vec::new(),
                    },
                    vec![(t.name, id)],
                ))
            }
            Stmt::Begin | Stmt::Commit | Stmt::Rollback => unreachable!("handled by run"),
        }
    }
}

impl Db {
    /// Feeds the database's state to `h`, for the explorer's fingerprints:
    /// rows, sessions, waiting statements and which unique indexes are present.
    /// Leaves out what a scenario fixes (table names, columns, index names) and
    /// the id counters (`next_tx`, `next_row`), which are bookkeeping.
    pub(crate) fn hash_state<H: Hasher>(&self, h: &mut H) {
        // Exhaustive on purpose: a new field does not compile until it is decided here.
        let Db {
            tables,
            sessions,
            waiting,
            next_tx: _,
            closed,
        } = self;
        h.write_usize(tables.len());
        for t in tables {
            let Table {
                name: _,
                columns: _,
                unique,
                rows,
                next_row: _,
            } = t;
            h.write_usize(unique.len());
            for ix in unique {
                ix.present.hash(h);
            }
            rows.hash(h);
        }
        sessions.hash(h);
        waiting.hash(h);
        closed.hash(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn like_ops(unique: bool) -> Db {
        Db::new(vec![
            Table::new("posts", &["id", "likes"]).with_row(vec![Value::Int(1), Value::Int(100)]),
            Table::new("like_ops", &["op_id"]).with_unique(
                "like_ops_op_id_key",
                &["op_id"],
                unique,
            ),
        ])
    }

    fn insert_op(op: &str) -> Stmt {
        Stmt::Insert {
            table: "like_ops",
            columns: vec!["op_id"],
            values: vec![Value::text(op)],
            on_conflict: OnConflict::DoNothing,
        }
    }

    fn outcome(e: Exec) -> String {
        match e {
            Exec::Done { outcome, .. } => outcome.to_string(),
            Exec::Blocked { on } => format!("blocked on {on}"),
        }
    }

    #[test]
    fn on_conflict_do_nothing_needs_a_unique_index() {
        let mut db = like_ops(true);
        assert_eq!(
            outcome(db.execute(ConnId(1), insert_op("op_1")).0),
            "INSERT 0 1"
        );
        assert_eq!(
            outcome(db.execute(ConnId(1), insert_op("op_1")).0),
            "INSERT 0 0"
        );
        let mut db = like_ops(false);
        assert_eq!(
            outcome(db.execute(ConnId(1), insert_op("op_1")).0),
            "INSERT 0 1"
        );
        assert_eq!(
            outcome(db.execute(ConnId(1), insert_op("op_1")).0),
            "INSERT 0 1"
        );
        assert_eq!(db.table("like_ops").unwrap().committed_count(), 2);
    }

    #[test]
    fn sql_text_is_exact() {
        assert_eq!(
            insert_op("op_1").to_string(),
            "INSERT INTO like_ops (op_id) VALUES ('op_1') ON CONFLICT DO NOTHING"
        );
        let upd = Stmt::Update {
            table: "accounts",
            set: vec![Assign::Add("balance", -20), Assign::Add("version", 1)],
            cond: vec![
                Cond::Eq("id", Value::Int(1)),
                Cond::Eq("version", Value::Int(5)),
            ],
        };
        assert_eq!(
            upd.to_string(),
            "UPDATE accounts SET balance = balance - 20, version = version + 1 WHERE id = 1 AND version = 5"
        );
    }

    #[test]
    fn unique_violation_aborts_the_transaction() {
        let mut db = like_ops(true);
        let c = ConnId(1);
        db.execute(c, insert_op("op_1"));
        db.execute(c, Stmt::Begin);
        let plain = Stmt::Insert {
            table: "like_ops",
            columns: vec!["op_id"],
            values: vec![Value::text("op_1")],
            on_conflict: OnConflict::Error,
        };
        assert_eq!(
            outcome(db.execute(c, plain).0),
            "ERROR: duplicate key value violates unique constraint \"like_ops_op_id_key\""
        );
        assert!(outcome(
            db.execute(
                c,
                Stmt::Select {
                    table: "posts",
                    cond: vec![]
                }
            )
            .0
        )
        .starts_with("ERROR: current"));
        assert_eq!(outcome(db.execute(c, Stmt::Commit).0), "ROLLBACK");
    }

    #[test]
    fn a_writer_waits_for_the_row_lock_and_then_sees_the_committed_value() {
        let mut db = like_ops(true);
        let (a, b) = (ConnId(1), ConnId(2));
        let inc = Stmt::Update {
            table: "posts",
            set: vec![Assign::Add("likes", 1)],
            cond: vec![],
        };
        db.execute(a, Stmt::Begin);
        db.execute(b, Stmt::Begin);
        assert_eq!(outcome(db.execute(a, inc.clone()).0), "UPDATE 1");
        assert!(outcome(db.execute(b, inc).0).starts_with("blocked"));
        let (_, woken) = db.execute(a, Stmt::Commit);
        assert_eq!(woken.len(), 1);
        assert_eq!(outcome(woken[0].exec.clone()), "UPDATE 1");
        db.execute(b, Stmt::Commit);
        let likes = db.table("posts").unwrap().committed_rows().next().unwrap()[1].clone();
        assert_eq!(likes, Value::Int(102));
    }

    #[test]
    fn an_insert_waits_for_an_uncommitted_duplicate_then_does_nothing() {
        let mut db = like_ops(true);
        let (a, b) = (ConnId(1), ConnId(2));
        db.execute(a, Stmt::Begin);
        db.execute(a, insert_op("op_1"));
        assert!(outcome(db.execute(b, insert_op("op_1")).0).starts_with("blocked"));
        let (_, woken) = db.execute(a, Stmt::Commit);
        assert_eq!(outcome(woken[0].exec.clone()), "INSERT 0 0");
    }

    #[test]
    fn a_dropped_connection_rolls_back() {
        let mut db = like_ops(true);
        db.execute(ConnId(1), Stmt::Begin);
        db.execute(ConnId(1), insert_op("op_1"));
        let (tx, _) = db.disconnect(ConnId(1));
        assert!(tx.is_some());
        assert_eq!(db.table("like_ops").unwrap().rows.len(), 0);
    }
}
