//! The core's values as text, in one place: SQL as `psql` takes it and its
//! command tags, Redis commands as `redis-cli` takes them and their replies,
//! a key's record as the JSON the lesson shows, messages' labels and exact
//! commands. The trace carries the typed values; the page and the tests
//! render them through these, and nothing reads text back.

use crate::db::{self, Assign, Cond, OnConflict, Outcome, SqlError, Stmt, Tag};
use crate::key::{KeyRecord, Paid};
use crate::net::Payload;
use crate::redis;
use std::fmt;

impl db::Value {
    /// The value as a SQL literal: `NULL`, `42`, `'PAID'`.
    pub fn sql(&self) -> String {
        match self {
            db::Value::Null => "NULL".into(),
            db::Value::Int(i) => i.to_string(),
            db::Value::Text(s) => format!("'{}'", s.replace('\'', "''")),
            db::Value::Paid(p) => format!("'{p}'"),
        }
    }
}

impl fmt::Display for db::Value {
    /// The value as a table cell shows it (`NULL`, `42`, `PAID`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            db::Value::Null => f.write_str("NULL"),
            db::Value::Int(i) => write!(f, "{i}"),
            db::Value::Text(s) => f.write_str(s),
            db::Value::Paid(p) => p.fmt(f),
        }
    }
}

impl fmt::Display for Stmt {
    /// The statement as SQL text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stmt::Begin => f.write_str("BEGIN"),
            Stmt::Commit => f.write_str("COMMIT"),
            Stmt::Rollback => f.write_str("ROLLBACK"),
            Stmt::Insert {
                table,
                columns,
                values,
                on_conflict,
            } => {
                let vals: Vec<String> = values.iter().map(db::Value::sql).collect();
                write!(
                    f,
                    "INSERT INTO {table} ({}) VALUES ({})",
                    columns.join(", "),
                    vals.join(", ")
                )?;
                if *on_conflict == OnConflict::DoNothing {
                    f.write_str(" ON CONFLICT DO NOTHING")?;
                }
                Ok(())
            }
            Stmt::Update { table, set, cond } => {
                let sets: Vec<String> = set
                    .iter()
                    .map(|a| match a {
                        Assign::To(c, v) => format!("{c} = {}", v.sql()),
                        Assign::Add(c, d) if *d < 0 => format!("{c} = {c} - {}", -d),
                        Assign::Add(c, d) => format!("{c} = {c} + {d}"),
                    })
                    .collect();
                write!(
                    f,
                    "UPDATE {table} SET {}{}",
                    sets.join(", "),
                    where_clause(cond)
                )
            }
            Stmt::Select {
                table,
                cond,
                order_by,
            } => {
                write!(f, "SELECT * FROM {table}{}", where_clause(cond))?;
                match order_by {
                    Some(c) => write!(f, " ORDER BY {c}"),
                    None => Ok(()),
                }
            }
        }
    }
}

fn where_clause(cond: &[Cond]) -> String {
    if cond.is_empty() {
        return String::new();
    }
    let terms: Vec<String> = cond
        .iter()
        .map(|c| match c {
            Cond::Eq(col, v) => format!("{col} = {}", v.sql()),
            Cond::Lt(col, v) => format!("{col} < {}", v.sql()),
        })
        .collect();
    format!(" WHERE {}", terms.join(" AND "))
}

impl fmt::Display for Outcome {
    /// As psql prints it: `INSERT 0 1`, `UPDATE 0`, `SELECT 1`, `ERROR: …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Ok { tag, .. } => match tag {
                Tag::Begin => f.write_str("BEGIN"),
                Tag::Commit => f.write_str("COMMIT"),
                Tag::Rollback => f.write_str("ROLLBACK"),
                Tag::Insert(n) => write!(f, "INSERT 0 {n}"),
                Tag::Update(n) => write!(f, "UPDATE {n}"),
                Tag::Select(n) => write!(f, "SELECT {n}"),
            },
            Outcome::Error(SqlError::UniqueViolation { index }) => {
                write!(f, "ERROR: duplicate key value violates unique constraint \"{index}\"")
            }
            Outcome::Error(SqlError::InFailedTransaction) => {
                f.write_str("ERROR: current transaction is aborted, commands ignored until end of transaction block")
            }
            Outcome::Error(SqlError::Deadlock) => f.write_str("ERROR: deadlock detected"),
        }
    }
}

impl fmt::Display for redis::Cmd {
    /// As `redis-cli` takes it: a key with a space or a quote in it is quoted
    /// (key-scope's `idem:u42:POST /charges:K1`), a value always is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            redis::Cmd::Get(k) => write!(f, "GET {}", cli_arg(k, false)),
            redis::Cmd::Set {
                key,
                value,
                nx,
                xx,
                ttl,
            } => {
                write!(
                    f,
                    "SET {} {}",
                    cli_arg(key, false),
                    cli_arg(&value.to_string(), true)
                )?;
                if *nx {
                    f.write_str(" NX")?;
                }
                if *xx {
                    f.write_str(" XX")?;
                }
                match ttl {
                    Some(redis::Ttl::Ex(s)) => write!(f, " EX {s}")?,
                    Some(redis::Ttl::Px(ms)) => write!(f, " PX {ms}")?,
                    None => {}
                }
                Ok(())
            }
            redis::Cmd::Del(k) => write!(f, "DEL {}", cli_arg(k, false)),
            redis::Cmd::Incr(k) => write!(f, "INCR {}", cli_arg(k, false)),
        }
    }
}

/// One argument of a `redis-cli` line: bare when it can be, else in single
/// quotes (inside which only `\'` is an escape), else in double quotes.
fn cli_arg(s: &str, quote: bool) -> String {
    let plain = |c: char| !c.is_whitespace() && !matches!(c, '\'' | '"' | '\\');
    if !quote && !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else if !s.contains(['\'', '\\']) {
        format!("'{s}'")
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

impl fmt::Display for redis::Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            redis::Reply::Ok => f.write_str("OK"),
            redis::Reply::Nil => f.write_str("(nil)"),
            redis::Reply::Bulk(s) => write!(f, "\"{s}\""),
            redis::Reply::Int(i) => write!(f, "(integer) {i}"),
            redis::Reply::Error(e) => write!(f, "(error) {e}"),
        }
    }
}

impl fmt::Display for redis::Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            redis::Value::Text(s) => f.write_str(s),
            redis::Value::Key(k) => k.fmt(f),
        }
    }
}

impl fmt::Display for Paid {
    /// The response body kept in `idempotency_keys.response_body`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{{\"payment_id\":\"{}\",\"amount\":{}}}",
            self.payment, self.amount
        )
    }
}

impl fmt::Display for KeyRecord {
    /// The JSON kept in Redis: `{"status":201,"payment_id":…}` or `{"status":"processing",…}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.done {
            // A 503 stored as the key's answer (Stripe's way): its code in `payment`.
            Some((code, p)) if *code == 503 => write!(
                f,
                "{{\"status\":{code},\"error\":\"{}\",\"request_hash\":\"{}\"}}",
                p.payment, self.hash
            ),
            Some((code, p)) => write!(
                f,
                "{{\"status\":{code},\"payment_id\":\"{}\",\"amount\":{},\"request_hash\":\"{}\"}}",
                p.payment, p.amount, self.hash
            ),
            None => write!(
                f,
                "{{\"status\":\"processing\",\"request_hash\":\"{}\"}}",
                self.hash
            ),
        }
    }
}

impl Payload {
    /// A compact label for the diagram: `POST /charges K1`, `GET idem:u42:K1 → (nil)`, `201 pay_1`.
    pub fn label(&self) -> String {
        match self {
            Payload::Request(r) => r.label(),
            Payload::Response(r) => r.label(),
            Payload::RedisCmd(c) => short_redis(c),
            Payload::RedisReply(b) => format!("{} → {}", short_redis(&b.0), b.1),
            Payload::Sql(s) => short_sql(s),
            Payload::SqlReply(b) => format!("{} → {}", short_sql(&b.0), short_outcome(&b.1)),
            Payload::Charge { amount, key, .. } => {
                // A negative charge is a refund: the money goes back.
                let what = match *amount {
                    a if a < 0 => format!("refund ${}", dollars(-a)),
                    a => format!("charge ${}", dollars(a)),
                };
                match key {
                    Some(k) => format!("{what} {k}"),
                    None => what,
                }
            }
            Payload::ChargeRefused { code } => format!("400 {code}"),
            Payload::FindCharge { key } => format!("GET /charges?key={key}"),
            Payload::ListCharges => "GET /charges".into(),
            Payload::ChargeList { charges } => {
                let ids: Vec<&str> = charges.iter().map(|c| c.id.as_str()).collect();
                format!("[{}]", ids.join(", "))
            }
            Payload::ChargeFound { charge } => match charge {
                Some((id, _)) => id.clone(),
                None => "[]".into(),
            },
            Payload::ChargeReply { charge, replayed } => {
                if *replayed {
                    format!("{charge} (replay)")
                } else {
                    charge.clone()
                }
            }
            Payload::Produce { msg_id, seq, .. } => format!("produce {msg_id} seq={seq}"),
            Payload::ProduceAck { seq, duplicate } => {
                if *duplicate {
                    format!("ack seq={seq} (dup)")
                } else {
                    format!("ack seq={seq}")
                }
            }
            Payload::Deliver { offset, msg_id, .. } => format!("deliver #{offset} {msg_id}"),
            Payload::CommitOffset { offset } => format!("commit offset {offset}"),
            // The message id where there is one (it names the payment too).
            Payload::Email { id, payment } => format!("email {}", id.as_ref().unwrap_or(payment)),
            Payload::EmailAck { duplicate } => if *duplicate { "202 (dup)" } else { "202" }.into(),
        }
    }

    /// The exact command text, where there is one (SQL, Redis, HTTP).
    pub fn command(&self) -> Option<String> {
        match self {
            Payload::Request(r) => {
                let mut s = format!("{} {} HTTP/1.1", r.body.method(), r.body.path());
                if let Some(k) = r.key {
                    s.push_str(&format!("\nIdempotency-Key: {k}"));
                }
                let json = r.body.json();
                if !json.is_empty() {
                    s.push_str(&format!("\n\n{json}"));
                }
                Some(s)
            }
            Payload::RedisCmd(c) => Some(c.to_string()),
            Payload::Sql(s) => Some(s.to_string()),
            _ => None,
        }
    }
}

/// `args` written into a string made with `room` for them: `format!` and
/// `to_string` grow theirs a push at a time (the explorer writes an
/// idempotency key and its Redis name at most steps of a keyed handler).
#[inline]
pub(crate) fn with_room(room: usize, args: fmt::Arguments<'_>) -> String {
    use fmt::Write;
    let mut s = String::with_capacity(room);
    let _ = s.write_fmt(args);
    s
}

/// `$100.00` without the dollar sign: cents are whole dollars here.
pub fn dollars(amount: i64) -> String {
    format!("{amount}.00")
}

fn short_redis(c: &redis::Cmd) -> String {
    match c {
        redis::Cmd::Get(k) => format!("GET {k}"),
        redis::Cmd::Set { key, nx, .. } => format!("SET {key}{}", if *nx { " NX" } else { "" }),
        redis::Cmd::Del(k) => format!("DEL {k}"),
        redis::Cmd::Incr(k) => format!("INCR {k}"),
    }
}

fn short_sql(s: &Stmt) -> String {
    match s {
        Stmt::Begin => "BEGIN".into(),
        Stmt::Commit => "COMMIT".into(),
        Stmt::Rollback => "ROLLBACK".into(),
        Stmt::Insert { table, .. } => format!("INSERT {table}"),
        Stmt::Update { table, .. } => format!("UPDATE {table}"),
        Stmt::Select { table, .. } => format!("SELECT {table}"),
    }
}

fn short_outcome(o: &Outcome) -> String {
    match o {
        Outcome::Error(SqlError::UniqueViolation { .. }) => "unique violation".into(),
        Outcome::Error(SqlError::InFailedTransaction) => "aborted".into(),
        Outcome::Error(SqlError::Deadlock) => "deadlock".into(),
        Outcome::Ok {
            tag: Tag::Insert(n),
            ..
        } => format!("{n} row{}", if *n == 1 { "" } else { "s" }),
        ok => ok.to_string(),
    }
}
