//! Dumps what the model's stores executed, for `stores/replay.py` to replay on
//! a real PostgreSQL and Redis (`make stores`): every scenario in its default
//! and defended configurations and with each defence alone, over several seeds
//! and fault schedules that create concurrency (parallel copies, crashes of a
//! lock holder and of a waiter, lost COMMITs, clock jumps).
//!
//! One JSON object per run and line on stdout. The statements are the page's
//! own text (`Display` of [`Stmt`] and [`Cmd`], which the panes show); the
//! results are typed. Nothing here re-implements a rule of the model.

use idem_sim::db::{Assign, Cond, ConnId, Outcome, SqlError, Stmt, Table, TxId, Value};
use idem_sim::net::Payload;
use idem_sim::redis::Reply;
use idem_sim::run::MAX_STEPS;
use idem_sim::scenario::{self, Scenario, Toggles};
use idem_sim::trace::{Cause, Happening, StepRecord};
use idem_sim::{Command, Config, Millis, Run, World};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use std::sync::Arc;

/// Seeds per configuration.
const SEEDS: u64 = 4;
/// Seeds per configuration of a scenario that uses Redis.
const REDIS_SEEDS: u64 = 7;
/// Parallel copies the schedules fire.
const COPIES: u32 = 3;

#[derive(Serialize)]
struct Dump {
    name: String,
    tables: Vec<TableDump>,
    events: Vec<Ev>,
    end: End,
}

#[derive(Serialize)]
struct TableDump {
    name: &'static str,
    /// (column, SQL type).
    columns: Vec<(&'static str, &'static str)>,
    /// (index name, columns): only the indexes the configuration has.
    unique: Vec<(String, Vec<&'static str>)>,
    rows: Vec<Vec<Cell>>,
}

/// A cell: SQL NULL, an integer or text.
#[derive(Serialize, Clone)]
#[serde(untagged)]
enum Cell {
    Null,
    Int(i64),
    Text(String),
}

fn cell(v: &Value) -> Cell {
    match v {
        Value::Null => Cell::Null,
        Value::Int(i) => Cell::Int(*i),
        Value::Text(_) | Value::Paid(_) => Cell::Text(v.to_string()),
    }
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Ev {
    /// A statement ran (at once, or after a wait the `wait` event announced).
    Sql {
        t: u64,
        conn: u32,
        text: String,
        result: SqlResult,
    },
    /// A statement parked behind connection `holder`: the one whose
    /// transaction holds the lock, or the one queued first for the same row.
    Wait {
        t: u64,
        conn: u32,
        text: String,
        holder: Option<u32>,
    },
    /// The connection was lost with its transaction open: Postgres rolls it back.
    Lost { t: u64, conn: u32 },
    /// A release woke several waiting statements at once; `winner` ran first.
    /// This is the race's `index`-th (the `--picks` that choose other winners).
    Race {
        t: u64,
        index: usize,
        candidates: Vec<u32>,
        winner: u32,
    },
    Redis {
        t: u64,
        text: String,
        reply: RedisReply,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum SqlResult {
    Ok {
        tag: String,
        rows: Vec<Vec<Cell>>,
    },
    Error {
        code: &'static str,
        constraint: Option<String>,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum RedisReply {
    Ok,
    Nil,
    Bulk(String),
    Int(i64),
    Error(String),
}

#[derive(Serialize)]
struct End {
    t: u64,
    /// Committed rows per table.
    tables: BTreeMap<&'static str, Vec<Vec<Cell>>>,
    /// Live keys: (key, value, remaining TTL in ms).
    redis: Vec<(String, String, Option<u64>)>,
}

fn result(o: &Outcome) -> SqlResult {
    match o {
        Outcome::Ok { rows, .. } => SqlResult::Ok {
            // The tag as psql prints it: the page's own rendering of the outcome.
            tag: o.to_string(),
            rows: rows.iter().map(|r| r.iter().map(cell).collect()).collect(),
        },
        Outcome::Error(SqlError::UniqueViolation { index }) => SqlResult::Error {
            code: "23505",
            constraint: Some(index.clone()),
        },
        Outcome::Error(SqlError::InFailedTransaction) => SqlResult::Error {
            code: "25P02",
            constraint: None,
        },
        Outcome::Error(SqlError::Deadlock) => SqlResult::Error {
            code: "40P01",
            constraint: None,
        },
    }
}

fn reply(r: &Reply) -> RedisReply {
    match r {
        Reply::Ok => RedisReply::Ok,
        Reply::Nil => RedisReply::Nil,
        Reply::Bulk(v) => RedisReply::Bulk(v.to_string()),
        Reply::Int(i) => RedisReply::Int(*i),
        Reply::Error(e) => RedisReply::Error(e.clone()),
    }
}

/// Each column's SQL type: `bigint` where the model ever puts an integer in
/// it (set-up rows, literals of the run's statements), `text` otherwise.
fn column_types(
    tables: &[Table],
    trace: &[StepRecord],
) -> BTreeMap<(&'static str, &'static str), bool> {
    let mut int = BTreeMap::new();
    let mut see = |t: &'static str, c: &'static str, v: &Value| {
        if matches!(v, Value::Int(_)) {
            int.insert((t, c), true);
        }
    };
    for t in tables {
        for r in t.committed_rows() {
            for (c, v) in t.columns.iter().zip(r) {
                see(t.name, c, v);
            }
        }
    }
    for rec in trace {
        for h in &rec.happenings {
            let stmt = match h {
                Happening::Sql { stmt, .. } | Happening::SqlWaits { stmt, .. } => stmt,
                _ => continue,
            };
            match stmt {
                Stmt::Insert {
                    table,
                    columns,
                    values,
                    ..
                } => columns
                    .iter()
                    .zip(values)
                    .for_each(|(c, v)| see(table, c, v)),
                Stmt::Update { table, set, cond } => {
                    for a in set {
                        match a {
                            Assign::To(c, v) => see(table, c, v),
                            Assign::Add(c, _) => see(table, c, &Value::Int(0)),
                        }
                    }
                    conds(table, cond, &mut see);
                }
                Stmt::Select { table, cond, .. } => conds(table, cond, &mut see),
                _ => {}
            }
        }
    }
    int
}

fn conds(
    table: &'static str,
    cond: &[Cond],
    see: &mut impl FnMut(&'static str, &'static str, &Value),
) {
    for c in cond {
        match c {
            Cond::Eq(col, v) | Cond::Lt(col, v) => see(table, col, v),
        }
    }
}

/// One run computed step by step as [`Run`] computes it (a command at step k
/// is step k + 1), with `picks` deciding the races: its trace and its end.
/// `races[i]`: how many races the database had run after step i + 1.
type Sim = (Vec<StepRecord>, Vec<usize>, World);

fn simulate(s: &Scenario, cfg: Config, sched: &[(usize, Command)], picks: &[u32]) -> Option<Sim> {
    let mut w = World::new(Arc::new(s.clone()), cfg);
    w.db.race_picks = picks.to_vec();
    let mut trace = Vec::new();
    let mut races = Vec::new();
    let mut cmds = sched.iter().peekable();
    loop {
        let index = trace.len() + 1;
        if let Some((_, cmd)) = cmds.next_if(|(k, _)| *k == trace.len()) {
            let happenings = w.apply(cmd).ok()?;
            trace.push(StepRecord {
                index,
                time: w.now,
                cause: Cause::Command(cmd.clone()),
                happenings,
            });
            races.push(w.db.races.len());
            continue;
        }
        if w.is_quiet() || trace.len() >= MAX_STEPS {
            break;
        }
        let before = w.clone();
        let happenings = w.step();
        if happenings.is_empty() {
            // Only stale timers: the run ends at the last recorded step.
            w = before;
            break;
        }
        trace.push(StepRecord {
            index,
            time: w.now,
            cause: Cause::Event,
            happenings,
        });
        races.push(w.db.races.len());
    }
    cmds.next().is_none().then_some((trace, races, w))
}

fn dump(name: String, s: &Scenario, cfg: Config, (trace, races_after, w): &Sim) -> Dump {
    let tables0 = s.tables(cfg.toggles);
    let ints = column_types(&tables0, trace);
    let tables = tables0
        .iter()
        .map(|t| TableDump {
            name: t.name,
            columns: t
                .columns
                .iter()
                .map(|c| {
                    let ty = if ints.contains_key(&(t.name, *c)) {
                        "bigint"
                    } else {
                        "text"
                    };
                    (*c, ty)
                })
                .collect(),
            unique: t
                .unique
                .iter()
                .filter(|ix| ix.present)
                .map(|ix| {
                    (
                        ix.name.clone(),
                        ix.columns.iter().map(|&c| t.columns[c]).collect(),
                    )
                })
                .collect(),
            rows: t
                .committed_rows()
                .map(|r| r.iter().map(cell).collect())
                .collect(),
        })
        .collect();
    let mut owner: BTreeMap<TxId, ConnId> = BTreeMap::new();
    let mut events = Vec::new();
    // Connections with a statement waiting, and how many waiting statements have run.
    let mut parked: Vec<ConnId> = Vec::new();
    let mut woken = 0u64;
    let mut races = w.db.races.iter().enumerate().peekable();
    // The races of the step that ran until `upto` (exclusive), and that came before `woken`.
    let mut race_before = |events: &mut Vec<Ev>, t: u64, woken: u64, upto: usize| {
        while let Some((index, r)) = races.next_if(|(i, r)| *i < upto && r.after <= woken) {
            events.push(Ev::Race {
                t,
                index,
                candidates: r.candidates.iter().map(|c| c.0).collect(),
                winner: r.winner.0,
            });
        }
    };
    for (rec, &upto) in trace.iter().zip(races_after) {
        let t = rec.time.0;
        for h in &rec.happenings {
            match h {
                Happening::Sql {
                    conn,
                    tx,
                    stmt,
                    outcome,
                    ..
                } => {
                    if let Some(i) = parked.iter().position(|c| c == conn) {
                        race_before(&mut events, t, woken, upto);
                        parked.remove(i);
                        woken += 1;
                    }
                    if let Some(tx) = tx {
                        owner.insert(*tx, *conn);
                    }
                    events.push(Ev::Sql {
                        t,
                        conn: conn.0,
                        text: stmt.to_string(),
                        result: result(outcome),
                    });
                }
                Happening::SqlWaits {
                    conn,
                    stmt,
                    on,
                    behind,
                } => {
                    parked.push(*conn);
                    events.push(Ev::Wait {
                        t,
                        conn: conn.0,
                        text: stmt.to_string(),
                        holder: behind.or_else(|| owner.get(on).copied()).map(|c| c.0),
                    })
                }
                Happening::TxRollback { tx, crash: true } => {
                    if let Some(c) = owner.get(tx) {
                        events.push(Ev::Lost { t, conn: c.0 });
                    }
                }
                Happening::Redis { cmd, reply: r } => events.push(Ev::Redis {
                    t,
                    text: cmd.to_string(),
                    reply: reply(r),
                }),
                _ => {}
            }
        }
        race_before(&mut events, t, u64::MAX, upto);
    }
    let tables_end =
        w.db.tables
            .iter()
            .map(|t| {
                (
                    t.name,
                    t.committed_rows()
                        .map(|r| r.iter().map(cell).collect())
                        .collect(),
                )
            })
            .collect();
    let redis = w
        .redis
        .keys
        .iter()
        .filter(|(_, e)| e.expires_at.is_none_or(|x| x > w.now))
        .map(|(k, e)| {
            (
                k.clone(),
                e.value.to_string(),
                w.redis.ttl(k, w.now).map(|m| m.0),
            )
        })
        .collect();
    Dump {
        name,
        tables,
        events,
        end: End {
            t: w.now.0,
            tables: tables_end,
            redis,
        },
    }
}

/// The configurations: default, defended, and each defence alone.
fn configurations(s: &Scenario) -> Vec<(String, Toggles)> {
    let mut v = vec![
        ("default".to_string(), s.default_toggles()),
        ("defended".to_string(), s.defended()),
    ];
    for d in s.defences() {
        v.push((format!("+{}", d.id()), s.undefended().with(d, true)));
    }
    v.dedup_by(|a, b| a.1 == b.1);
    v
}

/// Whether a message in flight carries a COMMIT or its answer.
fn commit_in_flight(w: &World) -> Vec<idem_sim::MsgId> {
    w.msgs
        .values()
        .filter(|m| match &m.payload {
            Payload::Sql(s) => **s == Stmt::Commit,
            Payload::SqlReply(r) => *r.0 == Stmt::Commit,
            _ => false,
        })
        .map(|m| m.id)
        .collect()
}

/// Up to `n` evenly spread picks of `v`.
fn spread<T: Copy>(v: &[T], n: usize) -> Vec<T> {
    if v.len() <= n {
        return v.to_vec();
    }
    (0..n)
        .map(|i| v[i * (v.len() - 1) / (n - 1).max(1)])
        .collect()
}

/// Commands, each at the step it is applied after.
type Schedule = Vec<(usize, Command)>;

/// The fault schedules of one configuration: (name, commands at steps).
fn schedules(s: &Scenario, cfg: Config) -> Vec<(String, Schedule)> {
    let base = Run::new(s.clone(), cfg);
    let mut out: Vec<(String, Schedule)> = vec![("none".into(), vec![])];
    // Clock jumps: past a claim's lease, an hour, past a day's TTL.
    for (at, jump) in [
        (base.len() / 3, Millis(3_000)),
        (base.len() / 2, Millis::HOUR),
        (base.len() / 2, Millis::hours(25)),
    ] {
        out.push((
            format!("clock+{jump}@{at}"),
            vec![(at, Command::AdvanceClock(jump))],
        ));
    }
    let Some(first) = base.trace.iter().position(|r| {
        r.happenings
            .iter()
            .any(|h| matches!(h, Happening::ClientSent { .. }))
    }) else {
        return out;
    };
    let p = first + 1;
    for (copies, crashes, commits) in [(2, 0, 0), (COPIES, 3, 2), (5, 2, 1)] {
        let par = vec![(p, Command::ParallelRetries(copies))];
        let mut run = base.clone();
        if run.apply_at(p, Command::ParallelRetries(copies)).is_err() {
            continue;
        }
        out.push((format!("parallel{copies}"), par.clone()));
        // Steps where a statement waits, where a transaction is open, where a COMMIT travels.
        let mut open = Vec::new();
        let mut waiting = Vec::new();
        let mut commit = Vec::new();
        for k in p + 1..run.len() {
            let w = run.state_at(k);
            if !w.db.waiting.is_empty() {
                waiting.push(k);
            } else if w.db.open_transactions().next().is_some() {
                open.push(k);
            }
            for m in commit_in_flight(&w) {
                commit.push((k, m));
            }
        }
        let mut picks = spread(&waiting, crashes);
        picks.extend(spread(&open, crashes.min(2)));
        for k in picks {
            let w = run.state_at(k);
            for n in s.nodes() {
                if n.can_crash() && w.is_up(n) {
                    let mut sched = par.clone();
                    sched.push((k, Command::Crash(n)));
                    out.push((format!("parallel{copies}+crash({n})@{k}"), sched));
                }
            }
        }
        for (k, m) in spread(&commit, commits) {
            let mut sched = par.clone();
            sched.push((k, Command::Lose(m)));
            out.push((format!("parallel{copies}+lose-commit(#{})@{k}", m.0), sched));
        }
    }
    out
}

/// Every run of the matrix whose name starts with `prefix`: (name, scenario,
/// configuration, schedule). The schedules of other configurations are not computed.
fn matrix(prefix: &str) -> Vec<(String, &'static Scenario, Config, Schedule)> {
    let mut v = Vec::new();
    for s in scenario::all() {
        // Redis's scenarios run more seeds: they send fewer commands per run.
        let redis = Run::new(s.clone(), Config::defaults(s, 1))
            .trace
            .iter()
            .any(|r| {
                r.happenings
                    .iter()
                    .any(|h| matches!(h, Happening::Redis { .. }))
            });
        let seeds = if redis { REDIS_SEEDS } else { SEEDS };
        for (cname, toggles) in configurations(s) {
            for seed in 1..=seeds {
                let cfg = Config::defaults(s, seed).with_toggles(toggles);
                let config = format!("{} {cname} seed={seed} ", s.id.as_str());
                if !(config.starts_with(prefix) || prefix.starts_with(&config)) {
                    continue;
                }
                for (fname, sched) in schedules(s, cfg) {
                    let name = format!("{} {cname} seed={seed} {fname}", s.id.as_str());
                    v.push((name, s, cfg, sched));
                }
            }
        }
    }
    v
}

const USAGE: &str = "usage: idem-stores            every run of the matrix, one JSON line each
       idem-stores --only PREFIX [--repeat N]
                              the runs whose name starts with PREFIX (each N times: a
                              race Postgres's scheduler decides shows on some repeats)
       idem-stores RUN PICKS  that run again, its races won by PICKS (comma-separated candidate indexes)";

/// Dumps every run whose name starts with `prefix`, each `repeat` times.
fn dump_all(out: &mut impl Write, prefix: &str, repeat: usize) -> io::Result<usize> {
    let mut runs = 0usize;
    for (name, s, cfg, sched) in matrix(prefix) {
        if !name.starts_with(prefix) {
            continue;
        }
        if let Some(sim) = simulate(s, cfg, &sched, &[]) {
            let line = serde_json::to_string(&dump(name, s, cfg, &sim))?;
            for _ in 0..repeat {
                writeln!(out, "{line}")?;
            }
            runs += 1;
        }
    }
    Ok(runs)
}

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let line = |out: &mut BufWriter<_>, d: Dump| -> io::Result<()> {
        serde_json::to_writer(&mut *out, &d)?;
        out.write_all(b"\n")
    };
    match args.as_slice() {
        [] => {
            let runs = dump_all(&mut out, "", 1)?;
            eprintln!("dumped {runs} runs");
        }
        [only, prefix, rest @ ..] if only == "--only" => {
            let repeat = match rest {
                [] => Some(1),
                [flag, n] if flag == "--repeat" => n.parse().ok().filter(|&n: &usize| n > 0),
                _ => None,
            };
            let Some(repeat) = repeat else {
                eprintln!("idem-stores: --only PREFIX takes only --repeat N (N ≥ 1)\n{USAGE}");
                std::process::exit(2);
            };
            let runs = dump_all(&mut out, prefix, repeat)?;
            if runs == 0 {
                eprintln!("idem-stores: no run's name starts with {prefix:?}\n{USAGE}");
                std::process::exit(2);
            }
            eprintln!("dumped {runs} runs starting with {prefix:?}, {repeat} times each");
        }
        [run, picks] => {
            let picks: Option<Vec<u32>> = picks
                .split(',')
                .filter(|p| !p.is_empty())
                .map(|p| p.trim().parse().ok())
                .collect();
            let Some(picks) = picks else {
                eprintln!("idem-stores: PICKS must be comma-separated numbers\n{USAGE}");
                std::process::exit(2);
            };
            let Some((name, s, cfg, sched)) = matrix(run).into_iter().find(|(n, ..)| n == run)
            else {
                eprintln!("idem-stores: no run named {run:?}\n{USAGE}");
                std::process::exit(2);
            };
            let sim = simulate(s, cfg, &sched, &picks).expect("its schedule applied before");
            line(&mut out, dump(name, s, cfg, &sim))?;
        }
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    }
    out.flush()
}
