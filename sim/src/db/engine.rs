//! How the database runs a statement: sessions and transactions at READ
//! COMMITTED, row locks that park a writer until the holder ends, unique
//! indexes, `ON CONFLICT DO NOTHING`, aborted transactions; and the state's
//! hash for the explorer.

use super::*;

impl Db {
    pub fn new(tables: Vec<Table>) -> Db {
        Db {
            tables: tables.into_iter().map(Shared::new).collect(),
            sessions: VecMap::new(),
            waiting: Vec::new(),
            next_tx: 1,
            races: Vec::new(),
            race_picks: Vec::new(),
            woken: 0,
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
        self.tables.iter().find(|t| t.name == name).map(|t| &**t)
    }

    fn table_mut(&mut self, name: &str) -> &mut Table {
        let t = self.tables.iter_mut().find(|t| t.name == name);
        // Copied here if another world shares it.
        &mut *t.unwrap_or_else(|| panic!("no table {name}"))
    }

    /// Open transactions: (connection, transaction).
    pub fn open_transactions(&self) -> impl Iterator<Item = (ConnId, TxId)> + '_ {
        self.sessions.iter().map(|(c, s)| (*c, s.tx))
    }

    pub fn set_unique_present(&mut self, table: &str, present: bool) {
        for ix in Arc::make_mut(&mut self.table_mut(table).unique) {
            ix.present = present;
        }
    }

    /// Whether two statements wait: a step that ends a transaction may start
    /// a race between them (for the explorer, which branches on the winner).
    pub fn may_race(&self) -> bool {
        self.waiting.len() > 1
    }

    /// The session of `conn` was closed: its statements must not run.
    pub fn is_closed(&self, conn: ConnId) -> bool {
        self.closed.contains(&conn)
    }

    /// Runs `stmt` for `conn`. Statements outside `BEGIN … COMMIT` autocommit.
    /// Returns the result, plus statements of other connections that a
    /// `COMMIT`/`ROLLBACK` released and that have now run.
    pub fn execute(&mut self, conn: ConnId, stmt: Stmt) -> (Exec, Vec<Woken>) {
        self.execute_ref(conn, &stmt)
    }

    /// [`Db::execute`] of a statement the caller keeps (Postgres answers
    /// with it): it is copied only if it must wait.
    pub fn execute_ref(&mut self, conn: ConnId, stmt: &Stmt) -> (Exec, Vec<Woken>) {
        let exec = match self.settle(conn, stmt, None) {
            Ok(exec) => exec,
            Err((on, targets)) => {
                self.waiting.push(Waiting {
                    conn,
                    stmt: stmt.clone(),
                    on,
                    targets,
                    queued: true,
                });
                return (Exec::Blocked { on }, Vec::new());
            }
        };
        let woken = self.wake();
        (exec, woken)
    }

    /// The connection dropped (its process crashed): an open transaction rolls
    /// back. Returns what that released. A backend waiting on a lock does not
    /// read its socket: a waiting statement stays, runs once the lock is
    /// released, and only then its transaction rolls back ([`Woken::lost`]).
    pub fn disconnect(&mut self, conn: ConnId) -> (Option<TxId>, Vec<Woken>) {
        if !self.closed.contains(&conn) {
            self.closed.push(conn);
        }
        if self.waiting.iter().any(|w| w.conn == conn) {
            return (None, Vec::new());
        }
        let tx = self.sessions.remove(&conn).map(|s| s.tx);
        if let Some(tx) = tx {
            self.finish(tx, false);
        }
        (tx, self.wake())
    }

    fn wake(&mut self) -> Vec<Woken> {
        let mut woken = Vec::new();
        loop {
            // Released, and first in the queue for its row if it holds a place
            // there; waiters a new version of their row took it from race.
            let ready: Vec<usize> = (0..self.waiting.len())
                .filter(|&i| {
                    let w = &self.waiting[i];
                    let queue = w.queued && self.waiting[..i].iter().any(|v| w.queues_behind(v));
                    !self.tx_open(w.on) && !queue
                })
                .collect();
            let Some(&first) = ready.first() else { break };
            let pick = self.race_picks.get(self.races.len()).copied().unwrap_or(0) as usize;
            let i = ready.get(pick).copied().unwrap_or(first);
            let candidates: Vec<ConnId> = ready.iter().map(|&j| self.waiting[j].conn).collect();
            let w = self.waiting.remove(i);
            let exec = match self.settle(w.conn, &w.stmt, Some(&w.targets)) {
                Ok(exec) => exec,
                Err((on, targets)) => {
                    // Blocked again, behind a transaction that is still open.
                    self.waiting.insert(i, Waiting { on, targets, ..w });
                    continue;
                }
            };
            if candidates.len() > 1 {
                self.races.push(Race {
                    candidates,
                    winner: w.conn,
                    after: self.woken,
                });
            }
            self.woken += 1;
            let closed = self.closed.contains(&w.conn);
            let lost = if closed {
                let tx = self.sessions.remove(&w.conn).map(|s| s.tx);
                if let Some(tx) = tx {
                    self.finish(tx, false);
                }
                tx
            } else {
                None
            };
            woken.push(Woken {
                conn: w.conn,
                stmt: w.stmt,
                exec,
                closed,
                lost,
            });
        }
        woken
    }

    /// Runs `stmt`; a wait that would close a cycle of waits fails it with a
    /// deadlock instead (and aborts its transaction).
    fn settle(
        &mut self,
        conn: ConnId,
        stmt: &Stmt,
        targets: Option<&[u32]>,
    ) -> Result<Exec, (TxId, Vec<u32>)> {
        match self.run(conn, stmt, targets) {
            Err((on, _)) if self.waits_for(on, conn) => {
                let tx = self.sessions.get(&conn).map(|s| s.tx);
                if let Some(tx) = tx {
                    self.abort(conn, tx);
                }
                Ok(Exec::Done {
                    outcome: Outcome::Error(SqlError::Deadlock),
                    tx,
                    touched: Vec::new(),
                })
            }
            r => r,
        }
    }

    /// Whether transaction `on` waits, directly or through others, for `conn`.
    fn waits_for(&self, on: TxId, conn: ConnId) -> bool {
        let mut tx = on;
        for _ in 0..=self.waiting.len() {
            let Some(holder) = self
                .sessions
                .iter()
                .find(|(_, s)| s.tx == tx)
                .map(|(c, _)| *c)
            else {
                return false;
            };
            if holder == conn {
                return true;
            }
            match self.waiting.iter().find(|w| w.conn == holder) {
                Some(w) => tx = w.on,
                None => return false,
            }
        }
        false
    }

    /// A statement of `conn`'s transaction failed: Postgres aborts the
    /// transaction at once (its writes and locks are gone) and refuses every
    /// statement until ROLLBACK.
    fn abort(&mut self, conn: ConnId, tx: TxId) {
        if let Some(s) = self.sessions.get_mut(&conn) {
            s.failed = true;
        }
        self.finish(tx, false);
    }

    /// Whether `tx` still holds its locks: open and not aborted.
    fn tx_open(&self, tx: TxId) -> bool {
        self.sessions.values().any(|s| s.tx == tx && !s.failed)
    }

    fn new_tx(&mut self) -> TxId {
        let tx = TxId(self.next_tx);
        self.next_tx += 1;
        tx
    }

    fn finish(&mut self, tx: TxId, commit: bool) {
        let mine = |r: &Row| r.pending.as_ref().is_some_and(|p| p.tx == tx);
        // Only the tables the transaction wrote are copied (another world may share the rest).
        for t in self.tables.iter_mut().filter(|t| t.rows.iter().any(mine)) {
            let t = &mut **t;
            for r in &mut t.rows {
                if r.pending.as_ref().is_some_and(|p| p.tx == tx) {
                    let p = r.pending.take().expect("checked");
                    if commit && !p.lock_only {
                        r.committed = p.values;
                        // A new version: the row's waiters leave the old
                        // version's queue, each re-checks and races to lock
                        // the new one (heap_update's TM_Updated, then
                        // EvalPlanQual locks the latest version).
                        for w in &mut self.waiting {
                            if w.row() == Some((t.name, r.id)) {
                                w.queued = false;
                            }
                        }
                    }
                }
            }
            t.rows
                .retain(|r| r.committed.is_some() || r.pending.is_some());
        }
    }

    /// Runs `stmt`; `Err((holder, targets))` when it must wait.
    fn run(
        &mut self,
        conn: ConnId,
        stmt: &Stmt,
        targets: Option<&[u32]>,
    ) -> Result<Exec, (TxId, Vec<u32>)> {
        let done = |outcome, tx, touched| Exec::Done {
            outcome,
            tx,
            touched,
        };
        let ok = |tag| Outcome::Ok {
            tag,
            rows: Vec::new(),
        };
        Ok(match stmt {
            Stmt::Begin => match self.sessions.get(&conn) {
                // Postgres: "current transaction is aborted" (25P02), BEGIN included.
                Some(s) if s.failed => done(
                    Outcome::Error(SqlError::InFailedTransaction),
                    Some(s.tx),
                    Vec::new(),
                ),
                // "there is already a transaction in progress": a warning, same transaction.
                Some(s) => done(ok(Tag::Begin), Some(s.tx), Vec::new()),
                None => {
                    let tx = self.new_tx();
                    self.sessions.insert(conn, Session { tx, failed: false });
                    done(ok(Tag::Begin), Some(tx), Vec::new())
                }
            },
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
                        return Ok(done(
                            Outcome::Error(SqlError::InFailedTransaction),
                            Some(s.tx),
                            Vec::new(),
                        ))
                    }
                    Some(s) => (s.tx, false),
                    None => (self.new_tx(), true),
                };
                let (outcome, touched) = self.run_dml(tx, stmt, targets)?;
                if autocommit {
                    self.finish(tx, !outcome.is_error());
                } else if outcome.is_error() {
                    self.abort(conn, tx);
                }
                done(outcome, Some(tx), touched)
            }
        })
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

    /// Runs a DML statement inside `tx`; `Err((other, targets))` when it
    /// must wait. `targets`: an `UPDATE` that waited re-checks only these rows.
    #[allow(clippy::type_complexity)]
    fn run_dml(
        &mut self,
        tx: TxId,
        stmt: &Stmt,
        targets: Option<&[u32]>,
    ) -> Result<(Outcome, Vec<(&'static str, u32)>), (TxId, Vec<u32>)> {
        match stmt {
            Stmt::Select {
                table,
                cond,
                order_by,
            } => {
                // Read only: a table another world shares is not copied.
                let t = self
                    .table(table)
                    .unwrap_or_else(|| panic!("no table {table}"));
                let mut rows: Vec<Vec<Value>> = t
                    .rows
                    .iter()
                    .filter_map(|r| r.visible(tx))
                    .filter(|v| t.matches(v, cond))
                    .cloned()
                    .collect();
                if let Some(c) = order_by {
                    let c = t.col(c);
                    // NULLs last. An insertion sort: stable as `sort_by`, and a few
                    // hundred bytes of the page's module where the standard library's
                    // stable sort took 5 KB; a SELECT here returns a handful of rows.
                    let after = |a: &[Value], b: &[Value]| {
                        (a[c] == Value::Null, &a[c]) > (b[c] == Value::Null, &b[c])
                    };
                    for i in 1..rows.len() {
                        let mut j = i;
                        while j > 0 && after(&rows[j - 1], &rows[j]) {
                            rows.swap(j - 1, j);
                            j -= 1;
                        }
                    }
                }
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
                let matching = |i: usize| t.rows[i].visible(tx).is_some_and(|v| t.matches(v, cond));
                // A first run matches rows by their visible version; after a wait,
                // only the rows it matched then, by their newest version (EvalPlanQual).
                let rows: Vec<usize> = match targets {
                    None => (0..t.rows.len()).filter(|&i| matching(i)).collect(),
                    Some(ids) => (0..t.rows.len())
                        .filter(|&i| ids.contains(&t.rows[i].id) && t.rows[i].visible(tx).is_some())
                        .collect(),
                };
                if let Some(other) = rows.iter().find_map(|&i| t.rows[i].locked_by_other(tx)) {
                    return Err((other, rows.iter().map(|&i| t.rows[i].id).collect()));
                }
                let (hits, missed): (Vec<usize>, Vec<usize>) =
                    rows.into_iter().partition(|&i| matching(i));
                // A row it waited for and that no longer matches stays locked
                // until the transaction ends (Postgres locked it before re-checking).
                for i in missed {
                    if t.rows[i].pending.is_none() {
                        t.rows[i].pending = Some(Pending {
                            tx,
                            values: t.rows[i].committed.clone(),
                            lock_only: true,
                        });
                    }
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
                        lock_only: false,
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
                        // (A row another transaction only locked, its version
                        // unchanged, is a committed row: it conflicts at once.)
                        let changed = |p: &&Pending| p.tx != tx && !p.lock_only;
                        if let Some(p) = r.pending.as_ref().filter(changed) {
                            // The other transaction's uncommitted row holds the key: wait.
                            if p.values.as_ref().is_some_and(same) {
                                return Err((p.tx, Vec::new()));
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
                        lock_only: false,
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
    /// Gives back the room the database's collections grew into (the explorer's
    /// `World::wait`: it keeps many worlds waiting).
    pub(crate) fn compact(&mut self) {
        for t in &mut self.tables {
            t.if_unique(|t| t.rows.shrink_to_fit());
        }
        self.sessions.shrink_to_fit();
        self.waiting.shrink_to_fit();
    }

    /// Feeds the database's state to `h`, for the explorer's fingerprints:
    /// rows, sessions, waiting statements, which unique indexes are present,
    /// and the id counters (`next_tx`, `next_row`: the next transaction and
    /// row get those ids). Leaves out what a scenario fixes (table names,
    /// columns, index names) and the race log (history).
    pub(crate) fn hash_state<H: Hasher + Default>(&self, h: &mut H) {
        // Exhaustive on purpose: a new field does not compile until it is decided here.
        let Db {
            tables,
            sessions,
            waiting,
            next_tx,
            // The race log is history, and the picks a script for the harness.
            races: _,
            race_picks: _,
            woken: _,
            closed,
        } = self;
        h.write_usize(tables.len());
        for t in tables {
            // Each table is hashed once per version: the worlds that share it share its hash.
            h.write_u64(t.hash_with::<H>(|t, h| {
                let Table {
                    name: _,
                    columns: _,
                    unique,
                    rows,
                    next_row,
                } = t;
                next_row.hash(h);
                h.write_usize(unique.len());
                for ix in unique.iter() {
                    ix.present.hash(h);
                }
                rows.hash(h);
            }));
        }
        sessions.hash(h);
        waiting.hash(h);
        closed.hash(h);
        // The ids the database hands out next: the rows and transactions they
        // name are hashed, so two worlds that differ only here differ later.
        next_tx.hash(h);
    }
}
