//! The database's own tests: unique indexes, locks, aborts, SQL text.

use super::*;

fn like_ops(unique: bool) -> Db {
    Db::new(vec![
        Table::new("posts", &["id", "likes"]).with_row(vec![Value::Int(1), Value::Int(100)]),
        Table::new("like_ops", &["op_id"]).with_unique("like_ops_op_id_key", &["op_id"], unique),
    ])
}

fn insert_op(op: &str) -> Stmt {
    Stmt::Insert {
        table: "like_ops",
        columns: &["op_id"],
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
        columns: &["op_id"],
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
                cond: vec![],
                order_by: None,
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
