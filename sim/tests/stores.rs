//! The stores on their own, through their public API: what the unit tests in
//! db.rs and redis.rs leave out (visibility at READ COMMITTED, re-evaluation
//! after a lock wait, waits that end in a rollback or a disconnect, composite
//! unique keys, Redis XX / TTL replacement / expiry boundaries, replies as
//! redis-cli prints them).

use idem_sim::db::{
    Assign, Cond, ConnId, Db, Exec, OnConflict, Outcome, SqlError, Stmt, Table, Tag, TxId, Value,
};
use idem_sim::redis::{Cmd, Entry, Redis, Reply};
use idem_sim::Millis;

// ---------------------------------------------------------------- Postgres

const A: ConnId = ConnId(1);
const B: ConnId = ConnId(2);
const C: ConnId = ConnId(3);

fn db() -> Db {
    Db::new(vec![
        Table::new("accounts", &["id", "balance", "version"])
            .with_unique("accounts_pkey", &["id"], true)
            .with_row(vec![Value::Int(1), Value::Int(100), Value::Int(5)]),
        Table::new("idempotency_keys", &["user_id", "key", "status"]).with_unique(
            "idempotency_keys_user_id_key_key",
            &["user_id", "key"],
            true,
        ),
    ])
}

fn key(user: i64, k: &str, on_conflict: OnConflict) -> Stmt {
    Stmt::Insert {
        table: "idempotency_keys",
        columns: &["user_id", "key", "status"],
        values: vec![Value::Int(user), Value::text(k), Value::text("processing")],
        on_conflict,
    }
}

fn select_keys() -> Stmt {
    Stmt::Select {
        table: "idempotency_keys",
        cond: vec![],
        order_by: None,
    }
}

fn debit(amount: i64, expected_version: Option<i64>) -> Stmt {
    let mut cond = vec![Cond::Eq("id", Value::Int(1))];
    if let Some(v) = expected_version {
        cond.push(Cond::Eq("version", Value::Int(v)));
    }
    Stmt::Update {
        table: "accounts",
        set: vec![Assign::Add("balance", -amount), Assign::Add("version", 1)],
        cond,
    }
}

/// Runs `stmt` on `conn` and returns its outcome as psql prints it (or `blocked on txN`).
fn exec(db: &mut Db, conn: ConnId, stmt: Stmt) -> String {
    show(db.execute(conn, stmt).0)
}

fn show(e: Exec) -> String {
    match e {
        Exec::Done { outcome, .. } => outcome.to_string(),
        Exec::Blocked { on } => format!("blocked on {on}"),
    }
}

fn account(db: &Db) -> (i64, i64) {
    let t = db.table("accounts").unwrap();
    let row = t.committed_rows().next().unwrap();
    (row[1].as_int().unwrap(), row[2].as_int().unwrap())
}

#[test]
fn read_committed_hides_uncommitted_rows_from_other_sessions() {
    let mut db = db();
    exec(&mut db, A, Stmt::Begin);
    assert_eq!(
        exec(&mut db, A, key(42, "K1", OnConflict::Error)),
        "INSERT 0 1"
    );
    // The writer sees its own row; another session does not, until COMMIT.
    assert_eq!(exec(&mut db, A, select_keys()), "SELECT 1");
    assert_eq!(exec(&mut db, B, select_keys()), "SELECT 0");
    assert_eq!(db.table("idempotency_keys").unwrap().committed_count(), 0);
    assert_eq!(exec(&mut db, A, Stmt::Commit), "COMMIT");
    assert_eq!(exec(&mut db, B, select_keys()), "SELECT 1");
}

#[test]
fn an_update_is_visible_to_its_transaction_only_until_commit() {
    let mut db = db();
    exec(&mut db, A, Stmt::Begin);
    assert_eq!(exec(&mut db, A, debit(20, Some(5))), "UPDATE 1");
    let sel = Stmt::Select {
        table: "accounts",
        cond: vec![Cond::Eq("version", Value::Int(6))],
        order_by: None,
    };
    assert_eq!(exec(&mut db, A, sel.clone()), "SELECT 1");
    assert_eq!(exec(&mut db, B, sel.clone()), "SELECT 0");
    assert_eq!(account(&db), (100, 5));
    exec(&mut db, A, Stmt::Commit);
    assert_eq!(account(&db), (80, 6));
    assert_eq!(exec(&mut db, B, sel), "SELECT 1");
}

#[test]
fn a_conditional_update_applies_once_then_touches_nothing() {
    let mut db = db();
    let (exec1, _) = db.execute(A, debit(20, Some(5)));
    let Exec::Done {
        outcome, touched, ..
    } = exec1
    else {
        panic!("blocked")
    };
    assert_eq!(outcome.count(), 1);
    assert_eq!(touched, [("accounts", 1)]);
    let (exec2, _) = db.execute(A, debit(20, Some(5)));
    let Exec::Done {
        outcome, touched, ..
    } = exec2
    else {
        panic!("blocked")
    };
    assert_eq!(outcome.to_string(), "UPDATE 0");
    assert!(touched.is_empty());
    assert_eq!(account(&db), (80, 6));
}

#[test]
fn a_waiting_update_re_evaluates_its_where_after_the_holder_commits() {
    // Postgres at READ COMMITTED: the blocked UPDATE re-checks the new row version.
    let mut db = db();
    exec(&mut db, A, Stmt::Begin);
    assert_eq!(exec(&mut db, A, debit(30, None)), "UPDATE 1");
    assert_eq!(exec(&mut db, B, debit(20, Some(5))), "blocked on tx1");
    assert_eq!(db.waiting.len(), 1);
    let (commit, woken) = db.execute(A, Stmt::Commit);
    assert_eq!(show(commit), "COMMIT");
    assert_eq!(woken.len(), 1);
    assert_eq!(woken[0].conn, B);
    assert_eq!(show(woken[0].exec.clone()), "UPDATE 0");
    assert!(db.waiting.is_empty());
    assert_eq!(account(&db), (70, 6));
}

#[test]
fn a_waiting_update_proceeds_when_the_holder_rolls_back() {
    let mut db = db();
    exec(&mut db, A, Stmt::Begin);
    exec(&mut db, A, debit(30, None));
    assert_eq!(exec(&mut db, B, debit(20, Some(5))), "blocked on tx1");
    let (rb, woken) = db.execute(A, Stmt::Rollback);
    assert_eq!(show(rb), "ROLLBACK");
    assert_eq!(show(woken[0].exec.clone()), "UPDATE 1");
    assert_eq!(account(&db), (80, 6));
}

#[test]
fn a_plain_insert_waiting_on_a_duplicate_fails_after_commit_and_succeeds_after_rollback() {
    for (end, expect) in [
        (Stmt::Commit, "ERROR: duplicate key value violates unique constraint \"idempotency_keys_user_id_key_key\""),
        (Stmt::Rollback, "INSERT 0 1"),
    ] {
        let mut db = db();
        exec(&mut db, A, Stmt::Begin);
        exec(&mut db, A, key(42, "K1", OnConflict::Error));
        assert_eq!(exec(&mut db, B, key(42, "K1", OnConflict::Error)), "blocked on tx1");
        let (_, woken) = db.execute(A, end);
        assert_eq!(show(woken[0].exec.clone()), expect);
        assert_eq!(db.table("idempotency_keys").unwrap().committed_count(), 1);
    }
}

#[test]
fn keys_are_unique_per_user_not_globally() {
    let mut db = db();
    assert_eq!(
        exec(&mut db, A, key(42, "K1", OnConflict::DoNothing)),
        "INSERT 0 1"
    );
    assert_eq!(
        exec(&mut db, A, key(7, "K1", OnConflict::DoNothing)),
        "INSERT 0 1"
    );
    assert_eq!(
        exec(&mut db, A, key(42, "K2", OnConflict::DoNothing)),
        "INSERT 0 1"
    );
    assert_eq!(
        exec(&mut db, A, key(42, "K1", OnConflict::DoNothing)),
        "INSERT 0 0"
    );
    assert_eq!(db.table("idempotency_keys").unwrap().committed_count(), 3);
}

#[test]
fn without_the_unique_index_a_plain_insert_duplicates_too() {
    let mut db = db();
    db.set_unique_present("idempotency_keys", false);
    assert_eq!(
        exec(&mut db, A, key(42, "K1", OnConflict::Error)),
        "INSERT 0 1"
    );
    assert_eq!(
        exec(&mut db, A, key(42, "K1", OnConflict::Error)),
        "INSERT 0 1"
    );
    assert_eq!(exec(&mut db, B, select_keys()), "SELECT 2");
    db.set_unique_present("idempotency_keys", true);
    // The index is back (on existing duplicates, as a test double may): new duplicates fail.
    assert!(exec(&mut db, A, key(42, "K1", OnConflict::Error)).starts_with("ERROR: duplicate key"));
}

#[test]
fn a_failed_transaction_commits_nothing_not_even_its_earlier_writes() {
    let mut db = db();
    exec(&mut db, A, key(42, "K1", OnConflict::Error));
    exec(&mut db, B, Stmt::Begin);
    assert_eq!(exec(&mut db, B, debit(20, Some(5))), "UPDATE 1");
    assert!(exec(&mut db, B, key(42, "K1", OnConflict::Error)).starts_with("ERROR: duplicate key"));
    assert!(
        exec(&mut db, B, debit(20, Some(6))).starts_with("ERROR: current transaction is aborted")
    );
    let (commit, _) = db.execute(B, Stmt::Commit);
    let Exec::Done {
        outcome,
        tx,
        touched,
    } = commit
    else {
        panic!("blocked")
    };
    assert_eq!(outcome.to_string(), "ROLLBACK");
    assert_eq!(tx, Some(TxId(2)));
    assert_eq!(touched, [], "the error already threw the writes away");
    assert_eq!(account(&db), (100, 5));
    // The session is over: the next statement autocommits.
    assert_eq!(exec(&mut db, B, debit(20, Some(5))), "UPDATE 1");
}

#[test]
fn an_autocommit_error_leaves_no_session_behind() {
    let mut db = db();
    exec(&mut db, A, key(42, "K1", OnConflict::Error));
    let dup = db.execute(B, key(42, "K1", OnConflict::Error)).0;
    assert!(matches!(
        dup,
        Exec::Done {
            outcome: Outcome::Error(SqlError::UniqueViolation { .. }),
            ..
        }
    ));
    assert_eq!(db.open_transactions().count(), 0);
    assert_eq!(exec(&mut db, B, select_keys()), "SELECT 1");
}

#[test]
fn commit_without_a_transaction_succeeds_and_reports_no_transaction() {
    let mut db = db();
    let (e, _) = db.execute(A, Stmt::Commit);
    assert_eq!(
        e,
        Exec::Done {
            outcome: Outcome::Ok {
                tag: Tag::Commit,
                rows: vec![]
            },
            tx: None,
            touched: vec![]
        }
    );
    assert_eq!(exec(&mut db, A, Stmt::Rollback), "ROLLBACK");
}

#[test]
fn begin_twice_stays_in_the_same_transaction() {
    let mut db = db();
    let first = db.execute(A, Stmt::Begin).0;
    let second = db.execute(A, Stmt::Begin).0;
    assert_eq!(first, second);
    assert_eq!(db.open_transactions().collect::<Vec<_>>(), [(A, TxId(1))]);
}

/// Postgres: a backend waiting on a lock does not read its socket. The
/// statement of a client that crashed while waiting still runs once the lock
/// is released; outside a transaction it commits (the probe: 60 in
/// Postgres, 90 in the model that cancelled it).
#[test]
fn a_crashed_clients_waiting_statement_still_runs_and_commits_outside_a_transaction() {
    let mut db = db();
    exec(&mut db, A, Stmt::Begin);
    exec(&mut db, A, debit(10, None));
    assert_eq!(exec(&mut db, B, debit(30, None)), "blocked on tx1");
    let (tx, woken) = db.disconnect(B);
    assert_eq!(tx, None, "B had no transaction of its own");
    assert!(woken.is_empty());
    assert_eq!(db.waiting.len(), 1, "the backend still waits");
    let (_, woken) = db.execute(A, Stmt::Commit);
    assert_eq!(woken.len(), 1);
    assert_eq!(
        (woken[0].conn, show(woken[0].exec.clone())),
        (B, "UPDATE 1".into())
    );
    assert!(woken[0].closed, "its answer goes nowhere");
    assert_eq!(woken[0].lost, None);
    assert_eq!(account(&db), (60, 7));
}

/// Inside a transaction the crashed client's statement runs too, and the
/// backend rolls the transaction back when it reads the closed socket.
#[test]
fn a_crashed_clients_waiting_statement_runs_then_its_transaction_rolls_back() {
    let mut db = db();
    exec(&mut db, A, Stmt::Begin);
    exec(&mut db, A, key(42, "K1", OnConflict::Error));
    exec(&mut db, B, Stmt::Begin);
    assert_eq!(exec(&mut db, B, debit(30, None)), "UPDATE 1");
    assert_eq!(
        exec(&mut db, B, key(42, "K1", OnConflict::DoNothing)),
        "blocked on tx1"
    );
    assert_eq!(
        db.disconnect(B),
        (None, Vec::new()),
        "nothing rolls back yet"
    );
    let (_, woken) = db.execute(A, Stmt::Rollback);
    assert_eq!(woken.len(), 1);
    assert_eq!(show(woken[0].exec.clone()), "INSERT 0 1");
    assert_eq!(woken[0].lost, Some(TxId(2)));
    assert_eq!(account(&db), (100, 5), "B's debit rolled back with it");
    assert_eq!(db.table("idempotency_keys").unwrap().committed_count(), 0);
    assert_eq!(db.open_transactions().count(), 0);
}

#[test]
fn a_disconnect_of_the_lock_holder_rolls_back_and_wakes_the_waiters_in_order() {
    let mut db = db();
    exec(&mut db, A, Stmt::Begin);
    exec(&mut db, A, debit(30, None));
    assert_eq!(exec(&mut db, B, debit(20, Some(5))), "blocked on tx1");
    assert_eq!(exec(&mut db, C, debit(10, Some(5))), "blocked on tx1");
    let (tx, woken) = db.disconnect(A);
    assert_eq!(tx, Some(TxId(1)));
    let got: Vec<(ConnId, String)> = woken.into_iter().map(|w| (w.conn, show(w.exec))).collect();
    // B runs first and moves the version, so C's condition no longer holds.
    assert_eq!(got, [(B, "UPDATE 1".into()), (C, "UPDATE 0".into())]);
    assert_eq!(account(&db), (80, 6));
}

#[test]
fn a_woken_statement_inside_a_transaction_waits_again_behind_the_next_holder() {
    let mut db = db();
    exec(&mut db, A, Stmt::Begin);
    exec(&mut db, A, debit(1, None));
    exec(&mut db, B, Stmt::Begin);
    assert_eq!(exec(&mut db, B, debit(2, None)), "blocked on tx1");
    assert_eq!(exec(&mut db, C, debit(3, None)), "blocked on tx1");
    let (_, woken) = db.execute(A, Stmt::Commit);
    // B gets the lock; C, an autocommit statement, now waits for B's transaction.
    assert_eq!(woken.len(), 1);
    assert_eq!(woken[0].conn, B);
    assert_eq!(db.waiting.len(), 1);
    assert_eq!(db.waiting[0].on, TxId(2));
    let (_, woken) = db.execute(B, Stmt::Commit);
    assert_eq!(woken.len(), 1);
    assert_eq!(account(&db), (94, 8));
}

#[test]
fn less_than_conditions_and_text_literals() {
    let mut db = db();
    let sel = |v: i64| Stmt::Select {
        table: "accounts",
        cond: vec![Cond::Lt("version", Value::Int(v))],
        order_by: None,
    };
    assert_eq!(exec(&mut db, A, sel(5)), "SELECT 0");
    assert_eq!(exec(&mut db, A, sel(6)), "SELECT 1");
    assert_eq!(Value::text("O'Brien").sql(), "'O''Brien'");
    assert_eq!(Value::Null.sql(), "NULL");
    assert_eq!(Value::Null.to_string(), "NULL");
    assert_eq!(Value::text("PAID").to_string(), "PAID");
    assert_eq!(
        sel(6).to_string(),
        "SELECT * FROM accounts WHERE version < 6"
    );
    assert_eq!(select_keys().to_string(), "SELECT * FROM idempotency_keys");
    assert_eq!(
        Stmt::Update {
            table: "orders",
            set: vec![Assign::To("status", Value::text("PAID"))],
            cond: vec![
                Cond::Eq("id", Value::Int(42)),
                Cond::Eq("status", Value::text("NEW"))
            ],
        }
        .to_string(),
        "UPDATE orders SET status = 'PAID' WHERE id = 42 AND status = 'NEW'"
    );
    assert_eq!(
        key(42, "K1", OnConflict::Error).to_string(),
        "INSERT INTO idempotency_keys (user_id, key, status) VALUES (42, 'K1', 'processing')"
    );
}

#[test]
fn outcomes_count_rows_and_print_as_psql_does() {
    let ok = |tag| Outcome::Ok { tag, rows: vec![] };
    assert_eq!(ok(Tag::Insert(1)).to_string(), "INSERT 0 1");
    assert_eq!(ok(Tag::Update(0)).to_string(), "UPDATE 0");
    assert_eq!(ok(Tag::Select(2)).to_string(), "SELECT 2");
    assert_eq!(ok(Tag::Begin).to_string(), "BEGIN");
    assert_eq!(ok(Tag::Select(2)).count(), 2);
    assert_eq!(ok(Tag::Begin).count(), 0);
    assert_eq!(ok(Tag::Commit).count(), 0);
    assert!(!ok(Tag::Rollback).is_error());
    let err = Outcome::Error(SqlError::InFailedTransaction);
    assert_eq!(err.count(), 0);
    assert!(err.is_error());
}

#[test]
fn select_returns_the_rows_themselves() {
    let mut db = db();
    let Exec::Done { outcome, .. } = db
        .execute(
            A,
            Stmt::Select {
                table: "accounts",
                cond: vec![Cond::Eq("id", Value::Int(1))],
                order_by: None,
            },
        )
        .0
    else {
        panic!("blocked")
    };
    assert_eq!(
        outcome,
        Outcome::Ok {
            tag: Tag::Select(1),
            rows: vec![vec![Value::Int(1), Value::Int(100), Value::Int(5)]]
        }
    );
}

// ---------------------------------------------------------------- Redis

fn set(k: &str, v: &str, nx: bool, xx: bool, px: Option<u64>) -> Cmd {
    Cmd::Set {
        key: k.into(),
        value: v.into(),
        nx,
        xx,
        ttl: px.map(idem_sim::redis::Ttl::Px),
    }
}

fn get(k: &str) -> Cmd {
    Cmd::Get(k.into())
}

#[test]
fn set_xx_only_replaces_an_existing_key() {
    let mut r = Redis::default();
    assert_eq!(
        r.execute(&set("k", "a", false, true, None), Millis(0)),
        Reply::Nil
    );
    assert_eq!(r.execute(&get("k"), Millis(0)), Reply::Nil);
    r.execute(&set("k", "a", false, false, None), Millis(0));
    assert_eq!(
        r.execute(&set("k", "b", false, true, None), Millis(0)),
        Reply::Ok
    );
    assert_eq!(r.execute(&get("k"), Millis(0)), Reply::Bulk("b".into()));
    assert_eq!(
        set("k", "b", false, true, Some(1000)).to_string(),
        "SET k 'b' XX PX 1000"
    );
    assert_eq!(set("k", "b", false, false, None).to_string(), "SET k 'b'");
}

#[test]
fn set_replaces_the_ttl_and_a_plain_set_removes_it() {
    let mut r = Redis::default();
    r.execute(&set("k", "a", false, false, Some(1_000)), Millis(0));
    assert_eq!(r.ttl("k", Millis(400)), Some(Millis(600)));
    // A new SET … PX counts from now.
    r.execute(&set("k", "b", false, false, Some(1_000)), Millis(500));
    assert_eq!(
        r.keys["k"],
        Entry {
            value: "b".into(),
            expires_at: Some(Millis(1_500))
        }
    );
    // A SET without PX (and without KEEPTTL) makes the key persistent, as in Redis.
    r.execute(&set("k", "c", false, false, None), Millis(600));
    assert_eq!(r.ttl("k", Millis(600)), None);
    assert_eq!(
        r.execute(&get("k"), Millis::hours(1000)),
        Reply::Bulk("c".into())
    );
}

#[test]
fn a_key_expires_exactly_at_its_deadline() {
    let mut r = Redis::default();
    r.execute(&set("a", "1", true, false, Some(100)), Millis(0));
    r.execute(&set("b", "2", true, false, Some(300)), Millis(0));
    r.execute(&set("c", "3", true, false, None), Millis(0));
    assert_eq!(r.ttl("a", Millis(99)), Some(Millis(1)));
    assert_eq!(r.execute(&get("a"), Millis(99)), Reply::Bulk("1".into()));
    assert_eq!(r.execute(&get("a"), Millis(100)), Reply::Nil);
    assert!(
        r.expire(Millis(299)).is_empty(),
        "a is already gone, b not yet"
    );
    assert_eq!(r.expire(Millis(1_000_000)), ["b"]);
    assert_eq!(r.keys.keys().collect::<Vec<_>>(), ["c"]);
    assert_eq!(r.ttl("c", Millis(0)), None, "no TTL");
    assert_eq!(r.ttl("missing", Millis(0)), None);
}

#[test]
fn expire_reports_every_expired_key_in_order() {
    let mut r = Redis::default();
    for k in ["idem:u42:K2", "idem:u42:K1", "idem:u7:K1"] {
        r.execute(&set(k, "{}", true, false, Some(86_400_000)), Millis(0));
    }
    assert_eq!(
        r.expire(Millis::hours(25)),
        ["idem:u42:K1", "idem:u42:K2", "idem:u7:K1"]
    );
    assert!(r.keys.is_empty());
    assert!(r.expire(Millis::hours(50)).is_empty());
}

#[test]
fn set_nx_claims_again_once_the_old_claim_expired() {
    let mut r = Redis::default();
    let claim = set("idem:u42:K1", "processing", true, false, Some(86_400_000));
    assert_eq!(r.execute(&claim, Millis(0)), Reply::Ok);
    assert_eq!(r.execute(&claim, Millis::hours(23)), Reply::Nil);
    assert_eq!(r.execute(&claim, Millis::hours(24)), Reply::Ok);
    assert_eq!(
        r.ttl("idem:u42:K1", Millis::hours(24)),
        Some(Millis(86_400_000))
    );
}

#[test]
fn incr_keeps_the_ttl_and_refuses_non_integers() {
    let mut r = Redis::default();
    r.execute(&set("n", "41", false, false, Some(1_000)), Millis(0));
    assert_eq!(
        r.execute(&Cmd::Incr("n".into()), Millis(10)),
        Reply::Int(42)
    );
    assert_eq!(r.ttl("n", Millis(10)), Some(Millis(990)));
    r.execute(&set("s", "abc", false, false, None), Millis(0));
    let e = r.execute(&Cmd::Incr("s".into()), Millis(0));
    assert_eq!(
        e.to_string(),
        "(error) ERR value is not an integer or out of range"
    );
    assert_eq!(r.execute(&get("s"), Millis(0)), Reply::Bulk("abc".into()));
    // An expired counter starts again from 0.
    assert_eq!(
        r.execute(&Cmd::Incr("n".into()), Millis(1_000)),
        Reply::Int(1)
    );
}

#[test]
fn del_reports_how_many_keys_it_removed() {
    let mut r = Redis::default();
    assert_eq!(r.execute(&Cmd::Del("k".into()), Millis(0)), Reply::Int(0));
    r.execute(&set("k", "v", false, false, Some(10)), Millis(0));
    assert_eq!(r.execute(&Cmd::Del("k".into()), Millis(5)), Reply::Int(1));
    r.execute(&set("k", "v", false, false, Some(10)), Millis(0));
    assert_eq!(
        r.execute(&Cmd::Del("k".into()), Millis(10)),
        Reply::Int(0),
        "already expired"
    );
}

#[test]
fn replies_and_commands_print_as_redis_cli_does() {
    assert_eq!(Reply::Ok.to_string(), "OK");
    assert_eq!(Reply::Nil.to_string(), "(nil)");
    assert_eq!(Reply::Bulk("v".into()).to_string(), "\"v\"");
    assert_eq!(Reply::Int(3).to_string(), "(integer) 3");
    assert_eq!(get("idem:u42:K1").to_string(), "GET idem:u42:K1");
    assert_eq!(Cmd::Del("k".into()).to_string(), "DEL k");
    assert_eq!(Cmd::Incr("k".into()).to_string(), "INCR k");
}

// ------------------------------------------------ differences from Postgres (issue 24)

/// Postgres aborts a transaction at its first error: its writes and row locks
/// are gone at once, not at the ROLLBACK that ends the block.
#[test]
fn an_error_aborts_the_transaction_at_once_and_releases_its_locks() {
    let mut db = db();
    exec(&mut db, A, key(42, "K1", OnConflict::Error));
    exec(&mut db, B, Stmt::Begin);
    assert_eq!(exec(&mut db, B, debit(20, None)), "UPDATE 1");
    assert_eq!(exec(&mut db, C, debit(5, None)), "blocked on tx2");
    let (e, woken) = db.execute(B, key(42, "K1", OnConflict::Error));
    assert!(show(e).starts_with("ERROR: duplicate key"));
    assert_eq!(woken.len(), 1, "C's debit no longer waits");
    assert_eq!(show(woken[0].exec.clone()), "UPDATE 1");
    assert_eq!(account(&db), (95, 6));
}

/// BEGIN inside an aborted transaction block is refused like any statement (25P02).
#[test]
fn begin_inside_an_aborted_transaction_answers_25p02() {
    let mut db = db();
    exec(&mut db, A, key(42, "K1", OnConflict::Error));
    exec(&mut db, B, Stmt::Begin);
    exec(&mut db, B, key(42, "K1", OnConflict::Error));
    let (begin, _) = db.execute(B, Stmt::Begin);
    assert!(matches!(
        begin,
        Exec::Done {
            outcome: Outcome::Error(SqlError::InFailedTransaction),
            ..
        }
    ));
    assert_eq!(exec(&mut db, B, Stmt::Rollback), "ROLLBACK");
    assert_eq!(exec(&mut db, B, Stmt::Begin), "BEGIN");
}

/// An UPDATE that waited for a row, then re-checked it and no longer matched
/// (UPDATE 0), still holds the row's lock until its transaction ends: the
/// next writer waits for it.
#[test]
fn an_update_that_rechecked_to_no_rows_keeps_its_row_lock() {
    let mut db = db();
    exec(&mut db, A, Stmt::Begin);
    exec(&mut db, A, debit(20, Some(5)));
    exec(&mut db, B, Stmt::Begin);
    assert_eq!(exec(&mut db, B, debit(10, Some(5))), "blocked on tx1");
    let (_, woken) = db.execute(A, Stmt::Commit);
    assert_eq!(show(woken[0].exec.clone()), "UPDATE 0");
    assert_eq!(exec(&mut db, C, debit(5, None)), "blocked on tx2");
    let (_, woken) = db.execute(B, Stmt::Commit);
    assert_eq!(show(woken[0].exec.clone()), "UPDATE 1");
    assert_eq!(account(&db), (75, 7));
}

/// After a wait, an UPDATE re-checks the newest version of the rows it
/// matched (EvalPlanQual), and no row committed meanwhile.
#[test]
fn an_update_after_a_wait_rechecks_only_the_rows_it_matched() {
    let mut db = db();
    let mark = || Stmt::Update {
        table: "idempotency_keys",
        set: vec![Assign::To("status", Value::text("done"))],
        cond: vec![Cond::Eq("user_id", Value::Int(42))],
    };
    exec(&mut db, A, key(42, "K1", OnConflict::Error));
    exec(&mut db, A, Stmt::Begin);
    assert_eq!(exec(&mut db, A, mark()), "UPDATE 1");
    assert_eq!(exec(&mut db, B, mark()), "blocked on tx2");
    assert_eq!(
        exec(&mut db, C, key(42, "K2", OnConflict::Error)),
        "INSERT 0 1"
    );
    let (_, woken) = db.execute(A, Stmt::Commit);
    assert_eq!(
        show(woken[0].exec.clone()),
        "UPDATE 1",
        "K2 came after its snapshot"
    );
    let statuses: Vec<String> = db
        .table("idempotency_keys")
        .unwrap()
        .committed_rows()
        .map(|r| r[2].to_string())
        .collect();
    assert_eq!(statuses, ["done", "processing"]);
}

/// A wait that would close a cycle fails with 40P01 and aborts its
/// transaction, which lets the other side go on.
#[test]
fn a_deadlock_aborts_the_transaction_whose_wait_closes_the_cycle() {
    let mut db = db();
    exec(&mut db, A, Stmt::Begin);
    exec(&mut db, A, debit(10, None));
    exec(&mut db, B, Stmt::Begin);
    exec(&mut db, B, key(42, "K1", OnConflict::Error));
    assert_eq!(
        exec(&mut db, A, key(42, "K1", OnConflict::Error)),
        "blocked on tx2"
    );
    let (e, woken) = db.execute(B, debit(20, None));
    assert_eq!(show(e), "ERROR: deadlock detected");
    assert_eq!(woken.len(), 1);
    assert_eq!(
        (woken[0].conn, show(woken[0].exec.clone())),
        (A, "INSERT 0 1".into())
    );
    assert!(exec(&mut db, B, select_keys()).starts_with("ERROR: current transaction is aborted"));
    exec(&mut db, A, Stmt::Commit);
    assert_eq!(account(&db), (90, 6));
}

/// Difference 5: a second statement waiting for the same row queues behind
/// the first waiter (Postgres's tuple lock: `pg_blocking_pids` names the
/// first waiter, not the holder), and when the holder ends the first waiter
/// runs first, whatever the race picks say: waiters for one row do not race.
#[test]
fn a_second_waiter_queues_behind_the_first_waiter_not_behind_the_holder() {
    for picks in [vec![], vec![1]] {
        let mut db = db();
        db.race_picks = picks;
        exec(&mut db, A, Stmt::Begin);
        exec(&mut db, A, debit(1, None));
        exec(&mut db, B, Stmt::Begin);
        let blocked = |db: &mut Db, c, amount| match db.execute(c, debit(amount, None)).0 {
            Exec::Blocked { on } => (on, db.queued_behind(c)),
            e => panic!("{c:?} runs: {}", show(e)),
        };
        assert_eq!(blocked(&mut db, B, 2), (TxId(1), None));
        assert_eq!(blocked(&mut db, C, 3), (TxId(1), Some(B)));
        let (_, woken) = db.execute(A, Stmt::Rollback);
        let got: Vec<(ConnId, String)> =
            woken.into_iter().map(|w| (w.conn, show(w.exec))).collect();
        assert_eq!(got, [(B, "UPDATE 1".into())]);
        assert!(db.races.is_empty(), "a queue is not a race");
        let (_, woken) = db.execute(B, Stmt::Commit);
        assert_eq!(woken[0].conn, C);
        assert_eq!(account(&db), (95, 7));
    }
    // Statements waiting for a key (INSERTs) wait for the holder, not behind each other.
    let mut db = db();
    exec(&mut db, A, Stmt::Begin);
    exec(&mut db, A, key(42, "K1", OnConflict::Error));
    for c in [B, C] {
        let e = db.execute(c, key(42, "K1", OnConflict::DoNothing)).0;
        assert_eq!(e, Exec::Blocked { on: TxId(1) });
        assert_eq!(db.queued_behind(c), None);
    }
}

/// Difference 5, the second half: the queue for a row holds only while the
/// row keeps its version. When the holder COMMITs a new version, every
/// waiter for the row leaves the old version's queue and races to lock the
/// new one (heap_update gives TM_Updated, then EvalPlanQual locks the latest
/// version), and they queue for it in the order they get there, which is
/// the scheduler's: so the release after that is a race among them too, not
/// a queue. Seen on PostgreSQL 15 in concurrent-duplicates +atomic-claim
/// seed=3 parallel5+lose-commit(#45)@40: the waiters that re-checked to
/// UPDATE 0 (and kept the lock) ran in another order than they first queued.
#[test]
fn waiters_for_a_row_a_commit_renewed_race_for_it_and_again_at_the_next_release() {
    const D: ConnId = ConnId(4);
    for (picks, order) in [(vec![], [B, C, D]), (vec![0, 1], [B, D, C])] {
        let mut db = db();
        db.race_picks = picks;
        exec(&mut db, A, Stmt::Begin);
        exec(&mut db, A, debit(1, Some(5)));
        for c in [B, C, D] {
            exec(&mut db, c, Stmt::Begin);
            assert_eq!(exec(&mut db, c, debit(2, Some(5))), "blocked on tx1");
        }
        assert_eq!(db.queued_behind(D), Some(B));
        // A's COMMIT makes a new version (version 6): all three re-check it.
        let (_, woken) = db.execute(A, Stmt::Commit);
        let got: Vec<(ConnId, String)> =
            woken.into_iter().map(|w| (w.conn, show(w.exec))).collect();
        assert_eq!(
            got,
            [(order[0], "UPDATE 0".into())],
            "it keeps the row locked"
        );
        assert_eq!(db.races.len(), 1);
        assert_eq!(db.races[0].candidates, [B, C, D]);
        // B only locked the row: its ROLLBACK leaves the version, and still the
        // two left race (they queued for the new version in any order).
        let (_, woken) = db.execute(order[0], Stmt::Rollback);
        assert_eq!(woken.len(), 1);
        assert_eq!(woken[0].conn, order[1]);
        assert_eq!(db.races.len(), 2);
        assert_eq!(db.races[1].candidates, [C, D]);
        let (_, woken) = db.execute(order[1], Stmt::Rollback);
        assert_eq!(woken.len(), 1);
        assert_eq!(woken[0].conn, order[2]);
        assert_eq!(db.races.len(), 2, "one waiter left: no race");
        assert_eq!(account(&db), (99, 6));
    }
}

/// A holder that only locked the row (an UPDATE that waited and re-checked
/// to 0) makes no new version when it COMMITs: the queue behind it keeps
/// its order, and no race starts.
#[test]
fn a_commit_of_a_row_it_only_locked_keeps_the_queue_in_order() {
    let mut db = db();
    exec(&mut db, C, Stmt::Begin);
    exec(&mut db, C, debit(1, Some(5)));
    exec(&mut db, A, Stmt::Begin);
    assert_eq!(exec(&mut db, A, debit(1, Some(5))), "blocked on tx1");
    let (_, woken) = db.execute(C, Stmt::Commit);
    assert_eq!(show(woken[0].exec.clone()), "UPDATE 0");
    const D: ConnId = ConnId(4);
    for c in [B, D] {
        exec(&mut db, c, Stmt::Begin);
        assert_eq!(exec(&mut db, c, debit(10, None)), "blocked on tx2");
    }
    assert_eq!(db.queued_behind(D), Some(B));
    db.race_picks = vec![1];
    let (_, woken) = db.execute(A, Stmt::Commit);
    let got: Vec<(ConnId, String)> = woken.into_iter().map(|w| (w.conn, show(w.exec))).collect();
    assert_eq!(got, [(B, "UPDATE 1".into())]);
    assert!(db.races.is_empty(), "a queue is not a race");
    assert_eq!(db.queued_behind(D), None, "D waits for B now");
    assert_eq!(
        (db.waiting[0].conn, db.waiting[0].on),
        (D, TxId(3)),
        "behind B's tx"
    );
}

/// The run of `make stores` that showed it: concurrent-duplicates with the
/// atomic claim alone, seed 3, five parallel copies and the COMMIT of
/// message #45 lost at step 40. The lost COMMIT's holder is rolled back,
/// the first waiter (conn 2) completes all 7 claims and commits; the five
/// waiters behind it then race for the new versions, and after each one's
/// ROLLBACK the rest race again (in Postgres conn 7 went before conn 5).
#[test]
fn concurrent_duplicates_waiters_race_after_the_completing_commit() {
    use idem_sim::{scenario, Command, Config, MsgId, Run, ScenarioId};
    let s = scenario::by_id(ScenarioId::ConcurrentDuplicates.as_str()).expect("scenario");
    let claim = s
        .defences()
        .into_iter()
        .find(|d| d.id() == "atomic-claim")
        .expect("the atomic claim");
    let cfg = Config::defaults(&s, 3).with_toggles(s.undefended().with(claim, true));
    let (mut run, _) = with_copies(Run::new(s.clone(), cfg), 5);
    run.apply_at(40, Command::Lose(MsgId(45))).expect("lost");
    let races: Vec<Vec<u32>> = run
        .end()
        .db
        .races
        .iter()
        .map(|r| r.candidates.iter().map(|c| c.0).collect())
        .collect();
    assert_eq!(
        races,
        [
            vec![3, 6, 1, 5, 7],
            vec![6, 1, 5, 7],
            vec![1, 5, 7],
            vec![5, 7]
        ]
    );
}

/// Regression: the explorer branched only on the first race a choice
/// starts. In counter-increment (five copies, a statement lost) the API's
/// crash rolls back several transactions at once, and the waiters of each
/// race in turn: the explorer lists another winner of the second race too
/// (`Picks` names a winner per race), and taking it lets that waiter win.
#[test]
fn the_explorer_branches_on_every_race_one_choice_starts() {
    use idem_sim::explore::{next_choices, Bound, Picks, Start};
    use idem_sim::{scenario, Choice, Config, MsgId, Run, ScenarioId, World};
    let s = scenario::by_id(ScenarioId::CounterIncrement.as_str()).expect("scenario");
    // From step 12 with message 15 lost, step on (the earliest event each
    // time) to a state where one choice starts two races or more.
    let two_races = |mut w: World| loop {
        let choices = w.choices();
        let two = choices.iter().find_map(|&c| {
            let start = Start::of(c)?;
            let mut next = w.clone();
            next.choose(&c);
            (next.db.races.len() >= w.db.races.len() + 2).then_some(start)
        });
        if let Some(start) = two {
            return Some((w, start));
        }
        match choices.first() {
            Some(&c @ Choice::Fire(_)) => w.choose(&c),
            _ => return None,
        };
    };
    let (w, start) = std::iter::once(s.undefended())
        .chain(
            s.defences()
                .into_iter()
                .map(|d| s.undefended().with(d, true)),
        )
        .find_map(|t| {
            let cfg = Config::defaults(&s, 0).with_toggles(t);
            let (run, _) = with_copies(Run::new(s.clone(), cfg), 5);
            let mut w = run.state_at(12);
            w.choose(&Choice::Lose(MsgId(15)));
            two_races(w)
        })
        .expect("a choice that starts two races");
    let bound = Bound {
        max_losses: 0,
        max_crashes: 1,
        max_clock_jumps: 0,
        max_depth: 1,
        ..Bound::default()
    };
    let second: Vec<Picks> = next_choices(&w, &bound)
        .into_iter()
        .filter_map(|c| match c {
            Choice::Race(s, p) if s == start && p.of(1) != 0 => Some(p),
            _ => None,
        })
        .collect();
    assert!(
        !second.is_empty(),
        "another winner of the second race is a choice"
    );
    for p in second {
        let mut v = w.clone();
        v.choose(&Choice::Race(start, p));
        let r = &v.db.races[w.db.races.len() + 1];
        assert_eq!(r.winner, r.candidates[p.of(1) as usize], "{p:?}");
    }
}

/// A ROLLBACK wakes every statement waiting on its key, and any of them may
/// win: the race is recorded and `race_picks` chooses its winner (the first
/// waiter by default).
#[test]
fn a_rollback_lets_any_waiter_win_the_race() {
    for (picks, winner, loser) in [(vec![], B, C), (vec![1], C, B)] {
        let mut db = db();
        db.race_picks = picks;
        exec(&mut db, A, Stmt::Begin);
        exec(&mut db, A, key(42, "K1", OnConflict::Error));
        for c in [B, C] {
            exec(&mut db, c, Stmt::Begin);
            assert_eq!(
                exec(&mut db, c, key(42, "K1", OnConflict::DoNothing)),
                "blocked on tx1"
            );
        }
        let (_, woken) = db.execute(A, Stmt::Rollback);
        assert_eq!(woken.len(), 1);
        assert_eq!(
            (woken[0].conn, show(woken[0].exec.clone())),
            (winner, "INSERT 0 1".into())
        );
        assert_eq!(db.races.len(), 1);
        assert_eq!(
            (db.races[0].candidates.clone(), db.races[0].winner),
            (vec![B, C], winner)
        );
        assert_eq!(db.waiting.len(), 1);
        assert_eq!(
            db.waiting[0].conn, loser,
            "the loser waits for the winner now"
        );
    }
}

/// Every command the page shows runs as written in redis-cli: key-scope's
/// scoped key has a space in it.
#[test]
fn a_key_with_a_space_is_quoted_as_redis_cli_takes_it() {
    let k = "idem:u42:POST /charges:K1".to_string();
    assert_eq!(
        Cmd::Get(k.clone()).to_string(),
        "GET 'idem:u42:POST /charges:K1'"
    );
    assert_eq!(
        set(&k, "v", true, false, Some(3000)).to_string(),
        "SET 'idem:u42:POST /charges:K1' 'v' NX PX 3000"
    );
    assert_eq!(Cmd::Del("it's".into()).to_string(), "DEL \"it's\"");
    assert_eq!(Cmd::Incr("n".into()).to_string(), "INCR n");
}

/// `ORDER BY` fixes the order of the rows (NULLs last); Postgres returns an
/// updated row after the others, so without it a handler must not read
/// `rows[0]` (concurrent-duplicates' lookups answered 409 in Postgres and 201
/// in the model).
#[test]
fn order_by_fixes_the_rows_order_with_nulls_last() {
    let mut db = db();
    for k in ["K2", "K1", "K3"] {
        exec(&mut db, A, key(42, k, OnConflict::Error));
    }
    exec(
        &mut db,
        A,
        Stmt::Update {
            table: "idempotency_keys",
            set: vec![Assign::To("key", Value::Null)],
            cond: vec![Cond::Eq("key", Value::text("K1"))],
        },
    );
    let sel = Stmt::Select {
        table: "idempotency_keys",
        cond: vec![],
        order_by: Some("key"),
    };
    assert_eq!(
        sel.to_string(),
        "SELECT * FROM idempotency_keys ORDER BY key"
    );
    let Exec::Done {
        outcome: Outcome::Ok { rows, .. },
        ..
    } = db.execute(A, sel).0
    else {
        panic!("no rows")
    };
    let keys: Vec<String> = rows.iter().map(|r| r[1].to_string()).collect();
    assert_eq!(keys, ["K2", "K3", "NULL"]);
}

/// Where a handler can get several rows back (duplicates where a unique index
/// is missing), the SQL it sends fixes their order: every scenario, default
/// and defended, with three parallel copies of its first request.
#[test]
fn every_select_that_returns_several_rows_fixes_their_order() {
    use idem_sim::trace::Happening;
    use idem_sim::{scenario, Command, Config, Run};
    let mut several = 0;
    for s in scenario::all() {
        for toggles in [s.default_toggles(), s.defended()] {
            let mut run = Run::new(s.clone(), Config::defaults(s, 1).with_toggles(toggles));
            let first = run.trace.iter().position(|r| {
                r.happenings
                    .iter()
                    .any(|h| matches!(h, Happening::ClientSent { .. }))
            });
            if let Some(k) = first {
                run.apply_at(k + 1, Command::ParallelRetries(3))
                    .expect("the client has a request in flight");
            }
            for h in run.trace.iter().flat_map(|r| &r.happenings) {
                if let Happening::Sql {
                    stmt: stmt @ Stmt::Select { order_by, .. },
                    outcome,
                    ..
                } = h
                {
                    if outcome.count() > 1 {
                        several += 1;
                        assert!(
                            order_by.is_some(),
                            "{}: {stmt} has no ORDER BY",
                            s.id.as_str()
                        );
                    }
                }
            }
        }
    }
    assert!(
        several > 0,
        "no SELECT returned several rows: the test proves nothing"
    );
}

/// `run` with `copies` parallel copies of its first request, sent right
/// after it: the run, and the step the request was sent at.
fn with_copies(mut run: idem_sim::Run, copies: u32) -> (idem_sim::Run, usize) {
    use idem_sim::trace::Happening;
    use idem_sim::Command;
    let sent = run
        .trace
        .iter()
        .position(|r| {
            r.happenings
                .iter()
                .any(|h| matches!(h, Happening::ClientSent { .. }))
        })
        .expect("a request");
    run.apply_at(sent + 1, Command::ParallelRetries(copies))
        .expect("copies");
    (run, sent)
}

/// Defended counter-increment with three parallel copies of its first
/// request and the first COMMIT lost: its waiters pile up behind the
/// transaction that never commits. The run, and the step of the loss.
fn counter_increment_with_a_lost_commit() -> (idem_sim::Run, usize) {
    use idem_sim::net::Payload;
    use idem_sim::{scenario, Command, Config, Run, ScenarioId};
    let s = scenario::by_id(ScenarioId::CounterIncrement.as_str()).expect("scenario");
    let run = Run::new(
        s.clone(),
        Config::defaults(&s, 1).with_toggles(s.defended()),
    );
    let (mut run, sent) = with_copies(run, 3);
    let (k, m) = (sent + 2..run.len())
        .find_map(|k| {
            let w = run.state_at(k);
            let m = w
                .msgs
                .values()
                .find(|m| matches!(&m.payload, Payload::Sql(s) if **s == Stmt::Commit))?;
            Some((k, m.id))
        })
        .expect("a COMMIT on the wire");
    run.apply_at(k, Command::Lose(m)).expect("lost");
    (run, k)
}

/// The explorer's choice of a race's winner: where firing the next event wakes
/// several waiters at once (counter-increment defended, three parallel copies,
/// the first COMMIT lost), `Choice::Race` fires the same event with another
/// waiter winning, as Postgres's scheduler may.
#[test]
fn the_explorer_can_let_another_waiter_win_a_race() {
    use idem_sim::explore::{Picks, Start};
    use idem_sim::Choice;
    let (run, _) = counter_increment_with_a_lost_commit();
    let mut raced = 0;
    for j in 0..run.len() {
        let w = run.state_at(j);
        let Some(next) = w.pending().next().map(|(k, _)| *k) else {
            continue;
        };
        let n = w.db.races.len();
        let mut first = w.clone();
        first.choose(&Choice::Fire(next));
        let Some(r) = first.db.races.get(n) else {
            continue;
        };
        let mut other = w.clone();
        other.choose(&Choice::Race(Start::Fire(next), Picks(1)));
        assert_eq!(other.db.races[n].winner, r.candidates[1]);
        assert_ne!(other.db.races[n].winner, r.winner);
        raced += 1;
    }
    assert!(raced > 0, "no step of the run started a race");
}

/// The first state of `counter_increment_with_a_lost_commit` where crashing an API
/// instance makes its transaction roll back and wake several waiters at
/// once: (state, instance, waiters).
fn crash_that_starts_a_race() -> (idem_sim::World, idem_sim::NodeId, usize) {
    use idem_sim::Choice;
    let (run, k) = counter_increment_with_a_lost_commit();
    let nodes = run.state_at(0).scenario.nodes();
    for j in k + 1..run.len() {
        let w = run.state_at(j);
        for &n in &nodes {
            if !n.can_crash() || !w.is_up(n) {
                continue;
            }
            let mut crashed = w.clone();
            crashed.choose(&Choice::Crash(n));
            if let Some(r) = crashed.db.races.get(w.db.races.len()) {
                return (w, n, r.candidates.len());
            }
        }
    }
    panic!("no crash of a lock holder woke several waiters");
}

/// Regression: the explorer let another waiter win only when a fired event
/// started the race. A crashed lock holder's rollback wakes its waiters too,
/// and Postgres lets any of them win: the explorer takes each winner as a
/// successor of the crash (`Choice::Race(Start::Crash(..), k)`), and the
/// race costs the path its crash.
#[test]
fn the_explorer_branches_on_the_winner_of_a_race_a_crash_starts() {
    use idem_sim::explore::{explore, Bound, Picks, Start};
    use idem_sim::Choice;
    let (w, holder, waiters) = crash_that_starts_a_race();
    assert!(waiters > 1);
    // One choice deep: the distinct successors, with and without crashes.
    let bound = |max_crashes| Bound {
        max_losses: 0,
        max_crashes,
        max_clock_jumps: 0,
        max_depth: 1,
        ..Bound::default()
    };
    let with = explore(&w, &bound(1)).unique;
    let without = explore(&w, &bound(0)).unique;
    // Every crash, and every winner of the race it starts, is a world of its own.
    let mut crashes = Vec::new();
    for n in w.scenario.nodes() {
        if !n.can_crash() || !w.is_up(n) {
            continue;
        }
        let mut first = w.clone();
        first.choose(&Choice::Crash(n));
        let won = first
            .db
            .races
            .get(w.db.races.len())
            .map_or(1, |r| r.candidates.len());
        for k in 0..won as u32 {
            let mut v = w.clone();
            v.choose(&Choice::Race(Start::Crash(n), Picks(k)));
            crashes.push(v.fingerprint());
        }
    }
    crashes.sort_unstable();
    crashes.dedup();
    assert!(
        crashes.len() >= waiters,
        "each winner is a world of its own"
    );
    assert_eq!(
        with - without,
        crashes.len(),
        "the crash of {holder} wakes {waiters} waiters: each may win"
    );
    // The waiter that wins is the one picked, and the holder is down.
    let mut other = w.clone();
    other.choose(&Choice::Race(Start::Crash(holder), Picks(1)));
    let r = &other.db.races[w.db.races.len()];
    assert_eq!(r.winner, r.candidates[1]);
    assert!(!other.is_up(holder));
}
