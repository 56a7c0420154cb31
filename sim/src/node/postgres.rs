//! Postgres as a node: it runs the statements that arrive (the database
//! itself is [`crate::db::Db`]), answers each on the connection it came
//! from, and runs the statements a lock held back once it is released.

use crate::db::{self, ConnId, Db, Exec, Outcome, Stmt};
use crate::net::{NodeId, Payload, ReqId};
use crate::out::Out;
use crate::trace::Happening;
use crate::vecmap::VecMap;
use std::sync::Arc;

/// Which node owns each connection (one per request handler).
pub type Conns = VecMap<ConnId, NodeId>;

/// A statement arrived from `from` on request `req`'s connection.
pub(crate) fn on_sql(
    db: &mut Db,
    conns: &mut Conns,
    from: NodeId,
    req: Option<ReqId>,
    stmt: Arc<Stmt>,
    out: &mut Out,
) {
    let conn = ConnId(req.map_or(0, |r| r.0));
    conns.insert(conn, from);
    let (exec, woken) = db.execute_ref(conn, &stmt);
    happened(db, conn, &stmt, &exec, out);
    if let Exec::Done { outcome, .. } = exec {
        out.send(
            NodeId::Postgres,
            from,
            Payload::SqlReply(Arc::new((stmt, outcome))),
            req,
        );
    }
    resume(db, conns, woken, out);
}

/// A statement of another writer, outside the system (no reply).
pub(crate) fn external(db: &mut Db, conns: &Conns, stmt: Stmt, out: &mut Out) {
    // It arrives like any statement, from a sender the model does not run.
    let stmt = Arc::new(stmt);
    let arrived = Payload::Sql(Arc::clone(&stmt));
    out.happen(Happening::FromOutside {
        to: NodeId::Postgres,
        label: out.label(&arrived),
        kind: arrived.kind(),
    });
    let (exec, woken) = db.execute_ref(ConnId(0), &stmt);
    happened(db, ConnId(0), &stmt, &exec, out);
    resume(db, conns, woken, out);
}

/// Request `rid`'s connection closed (its process crashed or gave up on the
/// call): its transaction rolls back.
pub(crate) fn disconnect(db: &mut Db, conns: &Conns, rid: ReqId, out: &mut Out) {
    let (tx, woken) = db.disconnect(ConnId(rid.0));
    if let Some(tx) = tx {
        out.happen(Happening::TxRollback { tx, crash: true });
    }
    resume(db, conns, woken, out);
}

fn happened(db: &Db, conn: ConnId, stmt: &Stmt, exec: &Exec, out: &mut Out) {
    // The explorer's worlds skip the trace's copies of statements and results.
    let traced = out.traced;
    match exec {
        Exec::Blocked { on } if traced => out.happen(Happening::SqlWaits {
            conn,
            stmt: stmt.clone(),
            on: *on,
            behind: db.queued_behind(conn),
        }),
        Exec::Blocked { .. } => {}
        Exec::Done {
            outcome,
            tx,
            touched,
        } => {
            if traced {
                out.happen(Happening::Sql {
                    conn,
                    tx: *tx,
                    stmt: stmt.clone(),
                    outcome: outcome.clone(),
                    touched: touched.clone(),
                });
            }
            if let Some(tx) = *tx {
                match (stmt, outcome) {
                    (Stmt::Begin, _) => out.happen(Happening::TxBegin(tx)),
                    (
                        Stmt::Commit,
                        Outcome::Ok {
                            tag: db::Tag::Commit,
                            ..
                        },
                    ) => out.happen(Happening::TxCommit(tx)),
                    (Stmt::Commit | Stmt::Rollback, _) => {
                        out.happen(Happening::TxRollback { tx, crash: false })
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Statements a released lock let run: each answers its own connection.
fn resume(db: &Db, conns: &Conns, woken: Vec<db::Woken>, out: &mut Out) {
    for w in woken {
        happened(db, w.conn, &w.stmt, &w.exec, out);
        if let Some(tx) = w.lost {
            out.happen(Happening::TxRollback { tx, crash: true });
        }
        if w.closed {
            continue;
        }
        if let (Exec::Done { outcome, .. }, Some(owner)) = (w.exec, conns.get(&w.conn).copied()) {
            out.send(
                NodeId::Postgres,
                owner,
                Payload::SqlReply(Arc::new((Arc::new(w.stmt), outcome))),
                Some(ReqId(w.conn.0)),
            );
        }
    }
}
