//! How the database runs a statement: sessions and transactions at READ
//! COMMITTED, row locks that park a writer until the holder ends, unique
//! indexes, `ON CONFLICT DO NOTHING`, aborted transactions; and the state's
//! hash for the explorer.

use super::*;

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
        self.first(table, column)?.as_int()
    }

    /// `column` of the first committed row of `table`.
    pub fn first(&self, table: &str, column: &str) -> Option<&Value> {
        let t = self.table(table)?;
        let c = t.col(column);
        t.committed_rows().next().map(|r| &r[c])
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
