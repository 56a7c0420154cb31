//! The world: every node's state, the messages in flight and the event queue.
//! [`World::step`] fires exactly one event and returns what happened. Nothing
//! here reads a clock or a global random source; the world owns its
//! generator, and the whole state is `Clone + Eq + Hash`.

use crate::db::{self, Assign, Cond, ConnId, Db, Exec, OnConflict, Outcome, Stmt, Value};
use crate::http::{Body, KeyId, OpId, Reply, Request, Response};
use crate::invariant::Invariant;
use crate::key::{KeyRecord, Paid};
use crate::net::{
    Fate, FaultRule, LossCause, Msg, MsgId, NodeId, Payload, RandomFaults, ReqId, Verdict,
};
use crate::redis::{self, Redis};
use crate::rng::Rng;
use crate::scenario::{Handler, KeyMode, KeyStore, OpSpec, Phase, Scenario, Toggle, Toggles, When};
use crate::time::Millis;
use crate::trace::Happening;
use crate::vecmap::VecMap;
use std::fmt;
use std::sync::Arc;

/// How a run is set up: the toggles, the seed, and optional random faults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub toggles: Toggles,
    pub seed: u64,
    pub random: RandomFaults,
}

impl Config {
    /// The scenario's default toggles, no random faults.
    pub fn defaults(s: &Scenario, seed: u64) -> Config {
        Config {
            toggles: s.default_toggles(),
            seed,
            random: RandomFaults::default(),
        }
    }

    /// The same with these toggles.
    pub fn with_toggles(self, toggles: Toggles) -> Config {
        Config { toggles, ..self }
    }
}

/// A command from outside the world: the reader's controls, or a scenario's script.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// Lose the next HTTP response on its way to the client (the lost ack).
    LoseNextResponse,
    /// Lose this message, now in flight.
    Lose(MsgId),
    /// The client fires this many extra copies of its current request at once.
    ParallelRetries(u32),
    Crash(NodeId),
    Restart(NodeId),
    /// Fast-forward the virtual clock.
    AdvanceClock(Millis),
    /// Another writer (the web app) debits the account directly.
    ExternalDebit {
        amount: i64,
    },
}

impl Command {
    /// How many parallel copies the reader may fire at once.
    pub const PARALLEL: std::ops::RangeInclusive<u32> = 2..=10;
}

/// Why a command cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CommandError {
    /// No such message in flight (it arrived or was never sent).
    NoSuchMessage(MsgId),
    /// The scenario has no such node, or that node cannot crash.
    NotCrashable(NodeId),
    AlreadyDown(NodeId),
    AlreadyUp(NodeId),
    /// `ParallelRetries(n)` takes n in [`Command::PARALLEL`].
    BadCount(u32),
    /// This scenario has no mobile client.
    NoClient,
    /// The clock only moves forward, by at most 30 days.
    BadDuration(Millis),
    /// This scenario has no account to debit.
    NoAccount,
    /// The run is over: no response is coming that could be lost.
    NothingToLose,
    /// The run has fewer steps than the command's.
    BeyondTheEnd(usize),
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::NoSuchMessage(m) => write!(f, "message #{} is not in flight", m.0),
            CommandError::NotCrashable(n) => write!(f, "{n} cannot crash in this scenario"),
            CommandError::AlreadyDown(n) => write!(f, "{n} is already down"),
            CommandError::AlreadyUp(n) => write!(f, "{n} is already up"),
            CommandError::BadCount(n) => write!(
                f,
                "{n} parallel retries: choose {} to {}",
                Command::PARALLEL.start(),
                Command::PARALLEL.end()
            ),
            CommandError::NoClient => f.write_str("this scenario has no mobile client"),
            CommandError::BadDuration(d) => write!(f, "cannot advance the clock by {d}"),
            CommandError::NoAccount => f.write_str("this scenario has no account to debit"),
            CommandError::NothingToLose => {
                f.write_str("the run is over: no response is coming that could be lost")
            }
            CommandError::BeyondTheEnd(k) => write!(f, "the run ends before step {k}"),
        }
    }
}

/// What the client believes about one operation. Kept apart from what
/// actually happened (the processor's charges, the ledger's rows).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Belief {
    NotStarted,
    /// A request is out; the spinner turns.
    Waiting,
    /// An attempt timed out: it may or may not have worked. A retry is planned.
    Unknown,
    Succeeded(String),
    /// A definite failure (4xx), with its status and error code.
    Failed(u16, &'static str),
    /// The API answered 409 version_mismatch: the client re-reads the account.
    Conflict,
    /// The client re-read the account and must decide again.
    Reread {
        balance: i64,
        version: i64,
    },
    /// Out of attempts without a definite answer.
    GaveUp,
}

impl Belief {
    /// A definite answer ends the operation.
    pub fn is_definite(&self) -> bool {
        matches!(
            self,
            Belief::Succeeded(_) | Belief::Failed(..) | Belief::Reread { .. }
        )
    }
}

/// One conceptual operation of the client.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientOp {
    pub spec: OpSpec,
    pub key: Option<KeyId>,
    pub attempts: u32,
    pub belief: Belief,
    /// A success response carried another request's result (key reuse without fingerprint).
    pub wrong_answer: bool,
    /// The request loops of this operation: one, plus one per parallel copy.
    pub lanes: Vec<Lane>,
}

/// One request loop: it sends, waits, and retries until it gets an answer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lane {
    /// Attempt number of its latest request.
    pub last: u32,
    /// Requests it has sent.
    pub sent: u32,
    /// It got an answer or ran out of attempts.
    pub done: bool,
    /// The pending timeout of its latest request, or its planned retry.
    pub(crate) timer: Option<EventKey>,
}

impl ClientOp {
    pub fn body(&self) -> Body {
        match self.spec {
            OpSpec::Charge(amount) => Body::Charge { amount },
            OpSpec::Debit {
                amount,
                expected_version,
            } => Body::Debit {
                amount,
                expected_version,
            },
            OpSpec::Like(op) => Body::Like { op_id: op.into() },
            OpSpec::PayOrder { order, amount } => Body::PayOrder { order, amount },
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Client {
    /// Generated idempotency keys (UUID v4); `KeyId(i)` is `keys[i]`.
    pub keys: Vec<String>,
    pub ops: Vec<ClientOp>,
    /// The operation in progress.
    pub current: Option<OpId>,
}

/// A key record as the API reads it back from its store.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stored {
    /// The request finished with a definite answer, stored to replay. A
    /// record that is not completed is a claim: some request is working on it.
    pub completed: bool,
    pub hash: String,
    pub code: u16,
    pub payment: String,
    pub amount: i64,
    /// When its owner took the claim. In Postgres it is also the owner's
    /// fencing token: a takeover writes a new one, and every write of the
    /// owner checks that the token is still its own.
    pub locked_at: Millis,
}

impl Stored {
    /// The record kept in Redis (or the in-process map).
    fn record(&self) -> KeyRecord {
        KeyRecord {
            hash: self.hash.clone(),
            done: self.completed.then(|| {
                (
                    self.code,
                    Paid {
                        payment: self.payment.clone(),
                        amount: self.amount,
                    },
                )
            }),
        }
    }

    fn from_record(r: KeyRecord, now: Millis) -> Stored {
        let (code, paid) = r.done.map_or((0, None), |(c, p)| (c, Some(p)));
        Stored {
            completed: paid.is_some(),
            hash: r.hash,
            code,
            amount: paid.as_ref().map_or(0, |p| p.amount),
            payment: paid.map(|p| p.payment).unwrap_or_default(),
            locked_at: now,
        }
    }

    fn from_row(table: &db::Table, row: &[Value]) -> Stored {
        let get = |c: &str| row[table.col(c)].clone();
        let (payment, amount) = match get("response_body") {
            Value::Paid(p) => (p.payment, p.amount),
            _ => (String::new(), 0),
        };
        Stored {
            completed: get("status").as_text() == Some("completed"),
            hash: get("request_hash")
                .as_text()
                .unwrap_or_default()
                .to_string(),
            code: get("response_code").as_int().unwrap_or(0) as u16,
            payment,
            amount,
            locked_at: Millis(get("locked_at").as_int().unwrap_or(0) as u64),
        }
    }
}

/// A request being handled by an API instance (or a record by the consumer).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Handling {
    pub node: NodeId,
    pub id: ReqId,
    pub req: Request,
    pub phase: Phase,
    /// Bumped on each call out; a deadline with an older token is stale.
    pub(crate) token: u32,
    pub(crate) charge: Option<String>,
    pub(crate) payment: Option<String>,
    /// Rows affected by the last statement.
    pub(crate) rows: usize,
    /// The deadline of the call out in progress.
    pub(crate) deadline: Option<EventKey>,
    /// The fencing token of the Postgres claim this request took or is taking (its `locked_at`).
    pub(crate) lock: Option<Millis>,
    /// The payment the ledger already had for this key: (id, amount), answered as a replay.
    pub(crate) existing: Option<(String, i64)>,
    /// The owner's fenced write found its claim taken over: it rolled back.
    pub(crate) lost_claim: bool,
}

/// One API instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Api {
    pub up: bool,
    /// The in-process map of the in-memory-store pitfall (a HashMap in the narrative).
    pub memory: VecMap<String, Stored>,
    pub handling: VecMap<ReqId, Handling>,
}

/// A charge at the card processor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Charge {
    pub id: String,
    pub amount: i64,
    pub key: Option<String>,
    pub at: Millis,
    /// Ground truth: the client operation that caused it.
    pub op: OpId,
}

/// The card processor (a PSP such as Stripe). It honours an idempotency key
/// when the API passes one: the same key gets the original charge back.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Processor {
    pub charges: Vec<Charge>,
    pub by_key: VecMap<String, usize>,
}

impl Processor {
    pub fn total(&self) -> i64 {
        self.charges.iter().map(|c| c.amount).sum()
    }
}

/// A record of the broker's topic.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    pub offset: u64,
    pub msg_id: String,
    pub amount: i64,
    pub producer: u32,
    pub seq: u32,
}

/// A Kafka-like broker: one partition, one consumer group.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Broker {
    pub log: Vec<Record>,
    /// The consumer group's committed offset: the next record to process.
    pub committed: u64,
    /// The offset delivered and not yet committed.
    pub in_flight: Option<u64>,
    /// Highest sequence number appended per producer (idempotent producer).
    pub last_seq: VecMap<u32, u32>,
    /// Offsets delivered so far, to spot a redelivery.
    pub delivered: Vec<u64>,
}

/// The producer side of the pipeline scenario (runs in API instance A).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Producer {
    pub attempts: u32,
    pub acked: bool,
}

/// The consumer of the pipeline scenario.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Consumer {
    pub up: bool,
    /// The record being processed: (request id, offset, message id, amount, phase).
    pub current: Option<(ReqId, u64, String, i64, Phase)>,
}

/// The account balance and the post's likes when the run began (0 where the scenario has none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Initial {
    pub balance: i64,
    pub likes: i64,
}

/// Something scheduled on the virtual clock.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    Deliver(MsgId),
    ClientStart(OpId),
    ClientTimeout {
        op: OpId,
        lane: usize,
        attempt: u32,
    },
    ClientRetry {
        op: OpId,
        lane: usize,
    },
    /// A handler gives up waiting for a store.
    Deadline {
        node: NodeId,
        req: ReqId,
        token: u32,
    },
    Restart(NodeId),
    Script(usize),
    ProducerSend,
    ProducerTimeout {
        attempt: u32,
    },
}

/// A queued event's place: (time, sequence number).
pub type EventKey = (Millis, u64);

/// How long a handler waits for a store or the processor before it answers 503.
const STORE_DEADLINE: Millis = Millis(3_000);
/// How long a claim (a key marked `processing`) is held before another request
/// may take it over: the in-progress lease, apart from the result's TTL. It is
/// shorter than the client's retry window, so a claim whose owner died or gave
/// up is resumed by a retry; the takeover is fenced, so a slow owner that wakes
/// up after it cannot write.
pub const CLAIM_LEASE: Millis = Millis(3_000);
const TTL_DAY: Millis = Millis::hours(24);
const TTL_WEEK: Millis = Millis::hours(24 * 7);
/// Pause between two operations of the client.
const THINK_TIME: Millis = Millis(1_000);
const PRODUCER_ID: u32 = 7;
const PRODUCER_TIMEOUT: Millis = Millis(500);

/// The key handling an API instance does, derived from the scenario and its toggles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct KeyCfg {
    store: KeyStore,
    atomic: bool,
    fingerprint: bool,
    to_processor: bool,
    ttl: Millis,
}

/// The whole simulated world.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct World {
    pub scenario: Arc<Scenario>,
    pub config: Config,
    pub now: Millis,
    pub(crate) rng: Rng,
    pub(crate) queue: VecMap<EventKey, Event>,
    pub(crate) seq: u64,
    /// Messages in flight, by id.
    pub msgs: VecMap<MsgId, Msg>,
    pub(crate) next_msg: u32,
    /// Fault rules still armed.
    pub faults: Vec<FaultRule>,
    pub(crate) crashes_left: Vec<u32>,
    pub(crate) random_crashes: u32,
    pub client: Client,
    pub apis: Vec<Api>,
    pub(crate) lb: u8,
    pub redis: Redis,
    pub db: Db,
    pub processor: Processor,
    pub broker: Broker,
    pub producer: Producer,
    pub consumer: Consumer,
    /// Which node owns each database connection.
    pub(crate) conns: VecMap<ConnId, NodeId>,
    /// Planned automatic restarts.
    pub(crate) restarts: VecMap<NodeId, EventKey>,
    pub(crate) producer_timer: Option<EventKey>,
    pub(crate) next_req: u32,
    pub(crate) next_payment: u32,
    /// Money the world meant to take from the account (client debits, other writers, events).
    pub intended_debits: i64,
    /// Counters as the run began, for the invariants that compare against them.
    pub initial: Initial,
    /// Each invariant's status after the last step.
    pub invariants: VecMap<Invariant, bool>,
    /// The decisive moment (a retry or a duplicate is sent, a record is redelivered) has come.
    pub decisive: bool,
    /// The trace's texts (labels, SQL, Redis commands) are left empty: an
    /// explorer that only looks at the state saves their formatting.
    pub(crate) untraced: bool,
}

impl World {
    pub fn new(scenario: Arc<Scenario>, config: Config) -> World {
        let db = Db::new(scenario.tables(config.toggles));
        let initial = Initial {
            balance: db.first_int("accounts", "balance").unwrap_or(0),
            likes: db.first_int("posts", "likes").unwrap_or(0),
        };
        let mut w = World {
            config,
            now: Millis::ZERO,
            rng: Rng::new(config.seed),
            queue: VecMap::new(),
            seq: 0,
            msgs: VecMap::new(),
            next_msg: 1,
            faults: scenario.faults.clone(),
            crashes_left: scenario.crashes.iter().map(|c| c.times).collect(),
            random_crashes: 0,
            client: Client::default(),
            apis: (0..scenario.apis)
                .map(|_| Api {
                    up: true,
                    memory: VecMap::new(),
                    handling: VecMap::new(),
                })
                .collect(),
            lb: 0,
            redis: Redis::default(),
            db,
            processor: Processor::default(),
            broker: Broker::default(),
            producer: Producer::default(),
            consumer: Consumer {
                up: true,
                current: None,
            },
            conns: VecMap::new(),
            restarts: VecMap::new(),
            producer_timer: None,
            next_req: 1,
            next_payment: 1,
            intended_debits: 0,
            initial,
            invariants: scenario.invariants.iter().map(|i| (*i, true)).collect(),
            decisive: false,
            untraced: false,
            scenario,
        };
        w.client.ops = w
            .scenario
            .ops
            .iter()
            .map(|op| ClientOp {
                spec: op.spec,
                key: None,
                attempts: 0,
                belief: Belief::NotStarted,
                wrong_answer: false,
                lanes: Vec::new(),
            })
            .collect();
        if !w.client.ops.is_empty() {
            w.schedule(Millis::ZERO, Event::ClientStart(0));
        }
        if w.scenario.handler == Handler::Pipeline {
            w.schedule(Millis::ZERO, Event::ProducerSend);
        }
        for (i, s) in w.scenario.script.clone().iter().enumerate() {
            if let When::At(t) = s.when {
                w.schedule(t, Event::Script(i));
            }
        }
        w
    }

    /// A text for the trace, unless the world runs untraced.
    fn text(&self, f: impl FnOnce() -> String) -> String {
        if self.untraced {
            String::new()
        } else {
            f()
        }
    }

    fn has(&self, t: Toggle) -> bool {
        self.config.toggles.has(t)
    }

    fn schedule(&mut self, at: Millis, ev: Event) -> EventKey {
        self.seq += 1;
        self.queue.insert((at, self.seq), ev);
        (at, self.seq)
    }

    /// Cancels a timer that is no longer wanted, so the queue holds only live events.
    fn cancel(&mut self, key: Option<EventKey>) {
        if let Some(k) = key {
            self.queue.remove(&k);
        }
    }

    /// Events waiting on the clock, in firing order.
    pub fn pending(&self) -> impl Iterator<Item = (&EventKey, &Event)> {
        self.queue.iter()
    }

    /// Nothing left to happen.
    pub fn is_quiet(&self) -> bool {
        self.queue.is_empty()
    }

    /// Fires the earliest event that does something (a stale timer, such as
    /// the timeout of an attempt that was already answered, is skipped as part
    /// of the same step). Returns what happened (empty when quiet).
    pub fn step(&mut self) -> Vec<Happening> {
        while let Some(k) = self.queue.first_key().copied() {
            let hs = self.fire(k);
            if !hs.is_empty() {
                return hs;
            }
        }
        Vec::new()
    }

    pub(crate) fn fire(&mut self, key: EventKey) -> Vec<Happening> {
        let Some(ev) = self.queue.remove(&key) else {
            return Vec::new();
        };
        self.now = self.now.max(key.0);
        let mut hs = Vec::new();
        for k in self.redis.expire(self.now) {
            hs.push(Happening::KeyExpired(k));
        }
        match ev {
            Event::Deliver(id) => self.deliver(id, &mut hs),
            Event::ClientStart(op) => self.client_start(op, &mut hs),
            Event::ClientTimeout { op, lane, attempt } => {
                self.client_timeout(op, lane, attempt, &mut hs)
            }
            Event::ClientRetry { op, lane } => {
                self.client.ops[op].lanes[lane].timer = None;
                self.client_send(op, lane, &mut hs);
            }
            Event::Deadline { node, req, token } => self.deadline(node, req, token, &mut hs),
            Event::Restart(n) => {
                if !self.is_up(n) {
                    self.restart(n, &mut hs);
                }
            }
            Event::Script(i) => {
                let s = self.scenario.script[i].clone();
                if s.only_with.is_none_or(|t| self.has(t)) {
                    hs.extend(self.command(&s.command).unwrap_or_default());
                }
            }
            Event::ProducerSend => self.producer_send(&mut hs),
            Event::ProducerTimeout { attempt } => {
                self.producer_timer = None;
                if !self.producer.acked && attempt == self.producer.attempts && attempt < 3 {
                    self.producer_send(&mut hs);
                }
            }
        }
        self.broker_pump(&mut hs);
        self.check_invariants(&mut hs);
        hs
    }

    /// Applies a command at the current step.
    pub fn apply(&mut self, cmd: &Command) -> Result<Vec<Happening>, CommandError> {
        let mut hs = self.command(cmd)?;
        self.broker_pump(&mut hs);
        self.check_invariants(&mut hs);
        Ok(hs)
    }

    /// A command's own effect, inside a step that checks invariants at its end.
    fn command(&mut self, cmd: &Command) -> Result<Vec<Happening>, CommandError> {
        let mut hs = vec![Happening::Command(cmd.clone())];
        match cmd {
            Command::LoseNextResponse => {
                if self.client.ops.is_empty() {
                    return Err(CommandError::NoClient);
                }
                if self.is_quiet() {
                    return Err(CommandError::NothingToLose);
                }
                self.faults.push(FaultRule::lose_first_response());
            }
            Command::Lose(id) => {
                let m = self.msgs.get_mut(id).filter(|m| m.fate == Fate::Deliver);
                let Some(m) = m else {
                    return Err(CommandError::NoSuchMessage(*id));
                };
                m.fate = Fate::Lost(LossCause::Reader);
            }
            Command::ParallelRetries(n) => {
                if !Command::PARALLEL.contains(n) {
                    return Err(CommandError::BadCount(*n));
                }
                // The operation in progress, else the next to start, else the last.
                let ops = &self.client.ops;
                let op = self
                    .client
                    .current
                    .or_else(|| ops.iter().position(|o| o.belief == Belief::NotStarted))
                    .or(ops.len().checked_sub(1))
                    .ok_or(CommandError::NoClient)?;
                if self.client.ops[op].belief == Belief::NotStarted {
                    // These copies are the operation's start.
                    self.queue.retain(|_, e| *e != Event::ClientStart(op));
                    self.begin_op(op);
                }
                for _ in 0..*n {
                    let lane = self.new_lane(op);
                    self.client_send(op, lane, &mut hs);
                }
            }
            Command::Crash(n) => {
                if !self.scenario.nodes().contains(n) || !n.can_crash() {
                    return Err(CommandError::NotCrashable(*n));
                }
                if !self.is_up(*n) {
                    return Err(CommandError::AlreadyDown(*n));
                }
                self.crash(*n, &mut hs);
            }
            Command::Restart(n) => {
                if !self.scenario.nodes().contains(n) || !n.can_crash() {
                    return Err(CommandError::NotCrashable(*n));
                }
                if self.is_up(*n) {
                    return Err(CommandError::AlreadyUp(*n));
                }
                self.restart(*n, &mut hs);
            }
            Command::AdvanceClock(d) => {
                if d.0 == 0 || d.0 > Millis::hours(24 * 30).0 {
                    return Err(CommandError::BadDuration(*d));
                }
                self.now = self.now + *d;
                hs.push(Happening::ClockAdvanced(*d));
                for k in self.redis.expire(self.now) {
                    hs.push(Happening::KeyExpired(k));
                }
            }
            Command::ExternalDebit { amount } => {
                if self.db.table("accounts").is_none() {
                    return Err(CommandError::NoAccount);
                }
                let stmt = Stmt::Update {
                    table: "accounts",
                    set: vec![Assign::Add("balance", -amount), Assign::Add("version", 1)],
                    cond: vec![Cond::Eq("id", Value::Int(1))],
                };
                self.intended_debits += amount;
                let (exec, woken) = self.db.execute(ConnId(0), stmt.clone());
                self.sql_happened(&stmt, &exec, &mut hs);
                self.resume_woken(woken, &mut hs);
            }
        }
        Ok(hs)
    }

    pub fn is_up(&self, n: NodeId) -> bool {
        match n {
            NodeId::Api(i) => self.apis.get(i as usize).is_some_and(|a| a.up),
            NodeId::Consumer => self.consumer.up,
            _ => true,
        }
    }

    // ----- the network -----

    fn send(
        &mut self,
        from: NodeId,
        to: NodeId,
        payload: Payload,
        req: Option<ReqId>,
        hs: &mut Vec<Happening>,
    ) {
        let lat = self.scenario.links.between(from, to);
        let mut arrives_at = self.now + Millis(lat.base + self.rng.below(lat.jitter + 1));
        let id = MsgId(self.next_msg);
        self.next_msg += 1;
        let mut msg = Msg {
            id,
            from,
            to,
            payload,
            req,
            sent_at: self.now,
            arrives_at,
            fate: Fate::Deliver,
        };
        let mut duplicate = None;
        if let Some(i) = self.faults.iter().position(|f| f.matcher.matches(&msg)) {
            let rule = &mut self.faults[i];
            if rule.skip > 0 {
                rule.skip -= 1;
            } else {
                match rule.verdict {
                    Verdict::Drop => msg.fate = Fate::Lost(LossCause::Fault),
                    Verdict::Delay { by } => arrives_at = arrives_at + by,
                    Verdict::Duplicate { after } => duplicate = Some(after),
                }
                rule.times -= 1;
                if rule.times == 0 {
                    self.faults.remove(i);
                }
            }
        }
        let mobile = from == NodeId::Client || to == NodeId::Client;
        let rf = self.config.random;
        if mobile && rf.loss > 0 && self.rng.chance(rf.loss) {
            msg.fate = Fate::Lost(LossCause::Random);
        }
        if from == NodeId::Client && rf.duplicate > 0 && self.rng.chance(rf.duplicate) {
            duplicate = Some(Millis(1 + self.rng.below(50)));
        }
        msg.arrives_at = arrives_at;
        hs.push(Happening::Sent {
            msg: id,
            from,
            to,
            label: self.text(|| msg.payload.label()),
            kind: msg.payload.kind(),
            arrives_at,
            fate: msg.fate,
        });
        if let Some(after) = duplicate {
            let copy = MsgId(self.next_msg);
            self.next_msg += 1;
            let c = Msg {
                id: copy,
                arrives_at: arrives_at + after,
                fate: Fate::Deliver,
                ..msg.clone()
            };
            hs.push(Happening::Duplicated { msg: id, copy });
            hs.push(Happening::Sent {
                msg: copy,
                from,
                to,
                label: self.text(|| c.payload.label()),
                kind: c.payload.kind(),
                arrives_at: c.arrives_at,
                fate: c.fate,
            });
            self.schedule(c.arrives_at, Event::Deliver(copy));
            self.msgs.insert(copy, c);
        }
        self.schedule(arrives_at, Event::Deliver(id));
        self.msgs.insert(id, msg);
    }

    fn deliver(&mut self, id: MsgId, hs: &mut Vec<Happening>) {
        let Some(m) = self.msgs.remove(&id) else {
            return;
        };
        let label = self.text(|| m.payload.label());
        let down = !self.is_up(m.to)
            || match (m.to, m.req) {
                (NodeId::Api(i), Some(r)) if m.payload.is_reply() => {
                    !self.apis[i as usize].handling.contains_key(&r)
                }
                (NodeId::Consumer, Some(r)) if m.payload.is_reply() => {
                    self.consumer.current.as_ref().is_none_or(|c| c.0 != r)
                }
                _ => false,
            };
        // A statement of a closed session never runs (the process that opened it is gone).
        let closed = matches!(m.payload, Payload::Sql(_))
            && self.db.is_closed(ConnId(m.req.map_or(0, |r| r.0)));
        let fate = match m.fate {
            Fate::Deliver if down => Fate::Lost(LossCause::NodeDown),
            Fate::Deliver if closed => Fate::Lost(LossCause::ConnClosed),
            f => f,
        };
        if let Fate::Lost(cause) = fate {
            hs.push(Happening::Lost {
                msg: id,
                from: m.from,
                to: m.to,
                label,
                cause,
            });
            return;
        }
        hs.push(Happening::Delivered {
            msg: id,
            from: m.from,
            to: m.to,
            label,
        });
        match (m.to, m.payload) {
            (NodeId::Api(i), Payload::Request(r)) => self.api_receive(i, r, hs),
            (NodeId::Api(i), p) if m.req.is_some() => {
                self.handler_input(NodeId::Api(i), m.req.unwrap_or(ReqId(0)), p, hs)
            }
            (NodeId::Api(_), Payload::ProduceAck { .. }) => {
                self.producer.acked = true;
                let t = self.producer_timer.take();
                self.cancel(t);
            }
            (
                NodeId::Consumer,
                Payload::Deliver {
                    offset,
                    msg_id,
                    amount,
                },
            ) => self.consumer_receive(offset, msg_id, amount, hs),
            (NodeId::Consumer, p) => self.consumer_reply(m.req.unwrap_or(ReqId(0)), p, hs),
            (NodeId::Redis, Payload::RedisCmd(cmd)) => {
                let reply = self.redis.execute(&cmd, self.now);
                if !self.untraced {
                    hs.push(Happening::Redis {
                        cmd: cmd.clone(),
                        reply: reply.clone(),
                    });
                }
                self.send(
                    NodeId::Redis,
                    m.from,
                    Payload::RedisReply(cmd, reply),
                    m.req,
                    hs,
                );
            }
            (NodeId::Postgres, Payload::Sql(stmt)) => {
                let conn = ConnId(m.req.map_or(0, |r| r.0));
                self.conns.insert(conn, m.from);
                let (exec, woken) = self.db.execute(conn, stmt.clone());
                self.sql_happened(&stmt, &exec, hs);
                if let Exec::Done { outcome, .. } = exec {
                    self.send(
                        NodeId::Postgres,
                        m.from,
                        Payload::SqlReply(stmt, outcome),
                        m.req,
                        hs,
                    );
                }
                self.resume_woken(woken, hs);
            }
            (NodeId::Processor, Payload::Charge { amount, key, op }) => {
                let known = key
                    .as_ref()
                    .and_then(|k| self.processor.by_key.get(k))
                    .copied();
                if known.is_some_and(|i| self.processor.charges[i].amount != amount) {
                    // A processor checks a reused key's parameters, as Stripe does.
                    self.send(
                        NodeId::Processor,
                        m.from,
                        Payload::ChargeRefused {
                            code: "idempotency_key_reused",
                        },
                        m.req,
                        hs,
                    );
                    return;
                }
                let (charge, replayed) = match known {
                    Some(i) => (self.processor.charges[i].id.clone(), true),
                    None => {
                        let id = format!("ch_{}", self.processor.charges.len() + 1);
                        self.processor.charges.push(Charge {
                            id: id.clone(),
                            amount,
                            key: key.clone(),
                            at: self.now,
                            op,
                        });
                        if let Some(k) = &key {
                            self.processor
                                .by_key
                                .insert(k.clone(), self.processor.charges.len() - 1);
                        }
                        (id, false)
                    }
                };
                hs.push(Happening::Charged {
                    charge: charge.clone(),
                    amount,
                    key,
                    replayed,
                });
                self.send(
                    NodeId::Processor,
                    m.from,
                    Payload::ChargeReply { charge, replayed },
                    m.req,
                    hs,
                );
            }
            (NodeId::Client, Payload::Response(r)) => self.client_response(r, hs),
            (
                NodeId::Broker,
                Payload::Produce {
                    producer,
                    seq,
                    msg_id,
                    amount,
                },
            ) => {
                let dup = self.has(Toggle::IdempotentProducer)
                    && self
                        .broker
                        .last_seq
                        .get(&producer)
                        .is_some_and(|&s| s >= seq);
                let offset = self.broker.log.len() as u64;
                if !dup {
                    self.broker.log.push(Record {
                        offset,
                        msg_id: msg_id.clone(),
                        amount,
                        producer,
                        seq,
                    });
                    self.broker.last_seq.insert(producer, seq);
                }
                hs.push(Happening::Appended {
                    offset,
                    msg_id,
                    duplicate: dup,
                });
                self.send(
                    NodeId::Broker,
                    m.from,
                    Payload::ProduceAck {
                        seq,
                        duplicate: dup,
                    },
                    None,
                    hs,
                );
            }
            (NodeId::Broker, Payload::CommitOffset { offset }) => {
                self.broker.committed = offset;
                self.broker.in_flight = None;
                hs.push(Happening::OffsetCommitted(offset));
            }
            _ => {}
        }
    }

    fn sql_happened(&mut self, stmt: &Stmt, exec: &Exec, hs: &mut Vec<Happening>) {
        // The explorer's worlds skip the trace's copies of statements and results.
        let traced = !self.untraced;
        match exec {
            Exec::Blocked { on } if traced => hs.push(Happening::SqlWaits {
                stmt: stmt.clone(),
                on: *on,
            }),
            Exec::Blocked { .. } => {}
            Exec::Done {
                outcome,
                tx,
                touched,
            } => {
                if traced {
                    hs.push(Happening::Sql {
                        tx: *tx,
                        stmt: stmt.clone(),
                        outcome: outcome.clone(),
                        touched: touched.clone(),
                    });
                }
                if let Some(tx) = *tx {
                    match (stmt, outcome) {
                        (Stmt::Begin, _) => hs.push(Happening::TxBegin(tx)),
                        (
                            Stmt::Commit,
                            Outcome::Ok {
                                tag: db::Tag::Commit,
                                ..
                            },
                        ) => hs.push(Happening::TxCommit(tx)),
                        (Stmt::Commit | Stmt::Rollback, _) => {
                            hs.push(Happening::TxRollback { tx, crash: false })
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    fn resume_woken(&mut self, woken: Vec<db::Woken>, hs: &mut Vec<Happening>) {
        for w in woken {
            self.sql_happened(&w.stmt, &w.exec, hs);
            if let (Exec::Done { outcome, .. }, Some(owner)) =
                (w.exec, self.conns.get(&w.conn).copied())
            {
                self.send(
                    NodeId::Postgres,
                    owner,
                    Payload::SqlReply(w.stmt, outcome),
                    Some(ReqId(w.conn.0)),
                    hs,
                );
            }
        }
    }

    // ----- the mobile client -----

    fn key_for(&mut self, op: OpId) -> Option<KeyId> {
        if !self.client_sends_key() {
            return None;
        }
        match self.scenario.ops.get(op).map(|o| o.key) {
            Some(KeyMode::ReuseOf(earlier)) => match self.client.ops.get(earlier) {
                Some(o) if o.key.is_some() => o.key,
                // Nothing to reuse (yet): a key of its own.
                _ => {
                    self.client.keys.push(self.rng.uuid_v4());
                    Some(KeyId(self.client.keys.len() - 1))
                }
            },
            _ => {
                self.client.keys.push(self.rng.uuid_v4());
                Some(KeyId(self.client.keys.len() - 1))
            }
        }
    }

    fn client_sends_key(&self) -> bool {
        self.key_cfg().is_some()
    }

    /// The client starts operation `op`: it makes its key, once.
    fn begin_op(&mut self, op: OpId) {
        self.client.current = Some(op);
        if let OpSpec::Debit { amount, .. } = self.client.ops[op].spec {
            self.intended_debits += amount;
        }
        self.client.ops[op].key = self.key_for(op);
    }

    fn client_start(&mut self, op: OpId, hs: &mut Vec<Happening>) {
        self.begin_op(op);
        for _ in 0..self.scenario.ops[op].copies.max(1) {
            let lane = self.new_lane(op);
            self.client_send(op, lane, hs);
        }
    }

    fn new_lane(&mut self, op: OpId) -> usize {
        let lanes = &mut self.client.ops[op].lanes;
        lanes.push(Lane {
            last: 0,
            sent: 0,
            done: false,
            timer: None,
        });
        lanes.len() - 1
    }

    fn client_send(&mut self, op: OpId, lane: usize, hs: &mut Vec<Happening>) {
        let o = &mut self.client.ops[op];
        o.attempts += 1;
        let attempt = o.attempts;
        if attempt > 1 && self.config.toggles.has(Toggle::NewKeyPerRetry) && o.key.is_some() {
            self.client.keys.push(self.rng.uuid_v4());
            self.client.ops[op].key = Some(KeyId(self.client.keys.len() - 1));
        }
        let o = &self.client.ops[op];
        let body = if o.belief == Belief::Conflict {
            Body::ReadAccount
        } else {
            o.body()
        };
        let req = Request {
            body,
            key: o.key,
            user: self.scenario.ops[op].user,
            op,
            attempt,
            lane,
        };
        hs.push(Happening::ClientSent {
            op,
            attempt,
            key: o.key.map(|k| k.to_string()),
        });
        if attempt >= 2 && !self.decisive {
            // The same operation is on its way again: the moment to ask what the
            // server will do with it, before the server does anything.
            self.decisive = true;
            hs.push(Happening::Decisive);
        }
        if !matches!(o.belief, Belief::Conflict) && !o.belief.is_definite() {
            self.set_belief(op, Belief::Waiting, hs);
        }
        let to = self.pick_api();
        self.send(
            NodeId::Client,
            NodeId::Api(to),
            Payload::Request(req),
            None,
            hs,
        );
        let t = self.now + self.scenario.retry.timeout;
        let key = self.schedule(t, Event::ClientTimeout { op, lane, attempt });
        let l = &mut self.client.ops[op].lanes[lane];
        l.last = attempt;
        l.sent += 1;
        let old = l.timer.replace(key);
        self.cancel(old);
    }

    /// Round-robin over the instances that are up (all down: the next one, and the request is lost).
    fn pick_api(&mut self) -> u8 {
        let n = self.apis.len() as u8;
        for k in 0..n {
            let i = (self.lb + k) % n;
            if self.apis[i as usize].up {
                self.lb = (i + 1) % n;
                return i;
            }
        }
        let i = self.lb;
        self.lb = (i + 1) % n;
        i
    }

    fn set_belief(&mut self, op: OpId, b: Belief, hs: &mut Vec<Happening>) {
        if self.client.ops[op].belief != b {
            self.client.ops[op].belief = b.clone();
            hs.push(Happening::Belief { op, belief: b });
        }
    }

    /// Ends a lane: no more timeouts or retries from it.
    fn lane_done(&mut self, op: OpId, lane: usize) {
        let l = &mut self.client.ops[op].lanes[lane];
        l.done = true;
        let t = l.timer.take();
        self.cancel(t);
    }

    fn client_timeout(&mut self, op: OpId, lane: usize, attempt: u32, hs: &mut Vec<Happening>) {
        let l = &mut self.client.ops[op].lanes[lane];
        if l.done || l.last != attempt {
            return;
        }
        l.timer = None;
        if self.client.ops[op].belief.is_definite() {
            // Another lane already got the answer: this one stops waiting.
            self.lane_done(op, lane);
            return;
        }
        hs.push(Happening::ClientTimeout { op, attempt });
        for s in self.scenario.script.clone() {
            if s.when == (When::ClientTimedOut { op, attempt })
                && s.only_with.is_none_or(|t| self.has(t))
            {
                hs.extend(self.command(&s.command).unwrap_or_default());
            }
        }
        self.plan_retry(op, lane, hs);
    }

    fn plan_retry(&mut self, op: OpId, lane: usize, hs: &mut Vec<Happening>) {
        let sent = self.client.ops[op].lanes[lane].sent;
        let r = self.scenario.retry;
        if sent >= r.max_attempts {
            self.lane_done(op, lane);
            let o = &self.client.ops[op];
            if !o.belief.is_definite() && o.lanes.iter().all(|l| l.done) {
                self.set_belief(op, Belief::GaveUp, hs);
                self.next_op(op);
            }
            return;
        }
        if !self.client.ops[op].belief.is_definite() {
            self.set_belief(op, Belief::Unknown, hs);
        }
        let backoff =
            Millis(r.backoff.0 << (sent - 1).min(10)) + Millis(self.rng.below(r.jitter.0 + 1));
        let key = self.schedule(self.now + backoff, Event::ClientRetry { op, lane });
        let old = self.client.ops[op].lanes[lane].timer.replace(key);
        self.cancel(old);
    }

    fn next_op(&mut self, op: OpId) {
        if self.client.current == Some(op) && op + 1 < self.client.ops.len() {
            self.client.current = None;
            self.schedule(self.now + THINK_TIME, Event::ClientStart(op + 1));
        }
    }

    fn client_response(&mut self, r: Response, hs: &mut Vec<Happening>) {
        let (op, lane) = (r.op, r.lane);
        let o = &self.client.ops[op];
        let current = !o.lanes[lane].done && o.lanes[lane].last == r.attempt;
        if r.is_success() {
            if current {
                self.lane_done(op, lane);
            }
            let o = &self.client.ops[op];
            if o.belief.is_definite() {
                return;
            }
            let belief = match &r.reply {
                Reply::Payment { id, amount } => {
                    if Some(*amount) != o.body().amount() {
                        self.client.ops[op].wrong_answer = true;
                    }
                    Belief::Succeeded(id.clone())
                }
                Reply::Account { balance, version } if o.belief == Belief::Conflict => {
                    Belief::Reread {
                        balance: *balance,
                        version: *version,
                    }
                }
                _ => Belief::Succeeded(r.label()),
            };
            self.set_belief(op, belief, hs);
            self.next_op(op);
            return;
        }
        if !current {
            return;
        }
        match (r.status, &r.reply) {
            (409, Reply::Error("version_mismatch")) => {
                // The version moved: re-read the account before deciding again.
                self.set_belief(op, Belief::Conflict, hs);
                self.client_send(op, lane, hs);
            }
            (409, _) | (500..=599, _) => self.plan_retry(op, lane, hs),
            (status, Reply::Error(code)) => {
                self.lane_done(op, lane);
                if !self.client.ops[op].belief.is_definite() {
                    self.set_belief(op, Belief::Failed(status, code), hs);
                    self.next_op(op);
                }
            }
            _ => {}
        }
    }

    // ----- the API -----

    fn key_cfg(&self) -> Option<KeyCfg> {
        let Handler::Charge { store, .. } = self.scenario.handler else {
            return None;
        };
        let store = match store {
            None if self.has(Toggle::IdempotencyKey) => KeyStore::Postgres,
            None => return None,
            Some(_) if self.has(Toggle::SameTransaction) => KeyStore::Postgres,
            Some(KeyStore::Memory) if self.has(Toggle::SharedStore) => KeyStore::Redis,
            Some(s) => s,
        };
        Some(KeyCfg {
            store,
            atomic: self.has(Toggle::AtomicClaim),
            fingerprint: self.has(Toggle::Fingerprint),
            to_processor: self.has(Toggle::KeyToProcessor),
            ttl: if self.has(Toggle::LongTtl) {
                TTL_WEEK
            } else {
                TTL_DAY
            },
        })
    }

    fn api_receive(&mut self, i: u8, req: Request, hs: &mut Vec<Happening>) {
        let rid = ReqId(self.next_req);
        self.next_req += 1;
        let h = Handling {
            node: NodeId::Api(i),
            id: rid,
            req,
            phase: Phase::Receive,
            token: 0,
            charge: None,
            payment: None,
            rows: 0,
            deadline: None,
            lock: None,
            existing: None,
            lost_claim: false,
        };
        self.apis[i as usize].handling.insert(rid, h);
        hs.push(Happening::Phase {
            node: NodeId::Api(i),
            req: rid,
            phase: Phase::Receive,
        });
        self.advance(NodeId::Api(i), rid, Input::Start, hs);
    }

    fn handler_input(&mut self, node: NodeId, rid: ReqId, p: Payload, hs: &mut Vec<Happening>) {
        let deadline = self.handling_mut(node, rid).and_then(|h| h.deadline.take());
        self.cancel(deadline);
        let input = match p {
            Payload::RedisReply(_, r) => Input::Redis(r),
            Payload::SqlReply(_, o) => Input::Sql(o),
            Payload::ChargeReply { charge, replayed } => Input::Charged(charge, replayed),
            Payload::ChargeRefused { code } => Input::Refused(code),
            _ => return,
        };
        self.advance(node, rid, input, hs);
    }

    fn handling(&self, node: NodeId, rid: ReqId) -> Option<&Handling> {
        match node {
            NodeId::Api(i) => self.apis[i as usize].handling.get(&rid),
            _ => None,
        }
    }

    fn handling_mut(&mut self, node: NodeId, rid: ReqId) -> Option<&mut Handling> {
        match node {
            NodeId::Api(i) => self.apis[i as usize].handling.get_mut(&rid),
            _ => None,
        }
    }

    /// Feeds a handler the result of its last call and runs it to its next call out.
    fn advance(&mut self, node: NodeId, rid: ReqId, mut input: Input, hs: &mut Vec<Happening>) {
        loop {
            let Some(h) = self.handling(node, rid).cloned() else {
                return;
            };
            let act = self.api_logic(&h, input);
            let act = match act {
                Act::Go(phase, call) => {
                    if !self.enter(node, rid, phase, hs) {
                        return;
                    }
                    call
                }
                Act::Respond(status, reply, replayed) => {
                    if !self.enter(node, rid, Phase::Reply, hs) {
                        return;
                    }
                    self.respond(node, rid, status, reply, replayed, hs);
                    return;
                }
            };
            match act {
                Call::Local(next) => {
                    // The in-process map: no message, but the trace shows the lookup or the write.
                    let key = h.req.key.map(|k| k.to_string()).unwrap_or_default();
                    match &next {
                        Input::Memory(found) => hs.push(Happening::Memory {
                            node,
                            key,
                            hit: Some(found.is_some()),
                        }),
                        Input::Stored => hs.push(Happening::Memory {
                            node,
                            key,
                            hit: None,
                        }),
                        _ => {}
                    }
                    input = next
                }
                Call::Redis(cmd) => {
                    return self.call(node, rid, NodeId::Redis, Payload::RedisCmd(cmd), hs)
                }
                Call::Sql(stmt) => {
                    return self.call(node, rid, NodeId::Postgres, Payload::Sql(stmt), hs)
                }
                Call::Charge(amount, key) => {
                    let op = self.handling(node, rid).map_or(0, |h| h.req.op);
                    return self.call(
                        node,
                        rid,
                        NodeId::Processor,
                        Payload::Charge { amount, key, op },
                        hs,
                    );
                }
            }
        }
    }

    /// Moves a handler into `phase`, unless its node crashes first. Returns false on a crash.
    fn enter(&mut self, node: NodeId, rid: ReqId, phase: Phase, hs: &mut Vec<Happening>) -> bool {
        let prev = match node {
            NodeId::Consumer => self.consumer.current.as_ref().map(|c| c.4),
            _ => self.handling(node, rid).map(|h| h.phase),
        };
        let toggles = self.config.toggles;
        let rule = self.scenario.crashes.iter().enumerate().position(|(i, c)| {
            c.node == node
                && Some(c.after) == prev
                && self.crashes_left[i] > 0
                && c.if_toggle.is_none_or(|(t, on)| toggles.has(t) == on)
        });
        let rf = self.config.random;
        let random =
            rf.crash > 0 && self.random_crashes < rf.max_crashes && self.rng.chance(rf.crash);
        if let Some(i) = rule {
            self.crashes_left[i] -= 1;
        }
        if rule.is_some() || random {
            if random && rule.is_none() {
                self.random_crashes += 1;
            }
            self.crash(node, hs);
            return false;
        }
        match node {
            NodeId::Consumer => {
                if let Some(c) = self.consumer.current.as_mut() {
                    c.4 = phase;
                }
            }
            _ => {
                if let Some(h) = self.handling_mut(node, rid) {
                    h.phase = phase;
                }
            }
        }
        hs.push(Happening::Phase {
            node,
            req: rid,
            phase,
        });
        true
    }

    fn call(&mut self, node: NodeId, rid: ReqId, to: NodeId, p: Payload, hs: &mut Vec<Happening>) {
        let Some(h) = self.handling_mut(node, rid) else {
            return;
        };
        h.token += 1;
        let token = h.token;
        self.send(node, to, p, Some(rid), hs);
        let k = self.schedule(
            self.now + STORE_DEADLINE,
            Event::Deadline {
                node,
                req: rid,
                token,
            },
        );
        if let Some(h) = self.handling_mut(node, rid) {
            h.deadline = Some(k);
        }
    }

    fn deadline(&mut self, node: NodeId, rid: ReqId, token: u32, hs: &mut Vec<Happening>) {
        if self.handling(node, rid).is_some_and(|h| h.token == token) {
            if let Some(h) = self.handling_mut(node, rid) {
                h.deadline = None;
            }
            self.drop_connection(ReqId(rid.0), hs);
            self.advance(node, rid, Input::Timeout, hs);
        }
    }

    fn respond(
        &mut self,
        node: NodeId,
        rid: ReqId,
        status: u16,
        reply: Reply,
        replayed: bool,
        hs: &mut Vec<Happening>,
    ) {
        let NodeId::Api(i) = node else { return };
        let Some(h) = self.apis[i as usize].handling.remove(&rid) else {
            return;
        };
        hs.push(Happening::Responded {
            node,
            status,
            replayed,
        });
        let resp = Response {
            status,
            reply,
            replayed,
            op: h.req.op,
            attempt: h.req.attempt,
            lane: h.req.lane,
        };
        self.send(node, NodeId::Client, Payload::Response(resp), None, hs);
    }

    fn drop_connection(&mut self, rid: ReqId, hs: &mut Vec<Happening>) {
        let (tx, woken) = self.db.disconnect(ConnId(rid.0));
        if let Some(tx) = tx {
            hs.push(Happening::TxRollback { tx, crash: true });
        }
        self.resume_woken(woken, hs);
    }

    fn crash(&mut self, node: NodeId, hs: &mut Vec<Happening>) {
        hs.push(Happening::Crashed(node));
        match node {
            NodeId::Api(i) => {
                let api = &mut self.apis[i as usize];
                api.up = false;
                api.memory.clear();
                let gone = std::mem::take(&mut api.handling);
                for (r, h) in gone {
                    self.cancel(h.deadline);
                    self.drop_connection(r, hs);
                }
            }
            NodeId::Consumer => {
                self.consumer.up = false;
                if let Some((r, ..)) = self.consumer.current.take() {
                    self.drop_connection(r, hs);
                }
                // The broker notices the lost session and will deliver from the committed offset.
                self.broker.in_flight = None;
            }
            _ => return,
        }
        if let Some(after) = self.scenario.auto_restart {
            let k = self.schedule(self.now + after, Event::Restart(node));
            self.restarts.insert(node, k);
        }
    }

    fn restart(&mut self, node: NodeId, hs: &mut Vec<Happening>) {
        let planned = self.restarts.remove(&node);
        self.cancel(planned);
        match node {
            NodeId::Api(i) => self.apis[i as usize].up = true,
            NodeId::Consumer => self.consumer.up = true,
            _ => return,
        }
        hs.push(Happening::Restarted(node));
    }

    fn new_payment_id(&mut self) -> String {
        let id = format!("pay_{}", self.next_payment);
        self.next_payment += 1;
        id
    }

    /// The API's handler: given where a request is and what its last call
    /// returned, what it does next. One rule book for every scenario.
    fn api_logic(&mut self, h: &Handling, input: Input) -> Act {
        let req = &h.req;
        let charges = matches!(req.body, Body::Charge { .. });
        if input == Input::Timeout && !charges {
            return Act::Respond(503, Reply::Error("upstream_timeout"), false);
        }
        let key = req.key.map(|k| k.to_string());
        match (self.scenario.handler, req.body.clone()) {
            (_, Body::ReadAccount) => match (h.phase, input) {
                (Phase::Receive, _) => Act::Go(Phase::ReadAccount, Call::Sql(select_account())),
                (_, Input::Sql(o)) => account_reply(&o, 200),
                _ => Act::Respond(500, Reply::Error("internal_error"), false),
            },
            (Handler::Charge { transactional, .. }, Body::Charge { amount }) => {
                self.charge_logic(h, input, amount, key, transactional)
            }
            (
                Handler::Debit,
                Body::Debit {
                    amount,
                    expected_version,
                },
            ) => match (h.phase, input) {
                (Phase::Receive, _) => {
                    let mut cond = vec![Cond::Eq("id", Value::Int(1))];
                    if self.has(Toggle::VersionCheck) {
                        cond.push(Cond::Eq("version", Value::Int(expected_version)));
                    }
                    let set = vec![Assign::Add("balance", -amount), Assign::Add("version", 1)];
                    Act::Go(
                        Phase::Debit,
                        Call::Sql(Stmt::Update {
                            table: "accounts",
                            set,
                            cond,
                        }),
                    )
                }
                (Phase::Debit, Input::Sql(o)) => {
                    self.update(h, |m| m.rows = o.count());
                    Act::Go(Phase::ReadAccount, Call::Sql(select_account()))
                }
                (Phase::ReadAccount, Input::Sql(o)) => {
                    if h.rows == 1 {
                        account_reply(&o, 200)
                    } else {
                        Act::Respond(409, Reply::Error("version_mismatch"), false)
                    }
                }
                _ => Act::Respond(500, Reply::Error("internal_error"), false),
            },
            (Handler::Like, Body::Like { op_id }) => {
                let dedup = self.has(Toggle::OpDedup);
                let inc = Stmt::Update {
                    table: "posts",
                    set: vec![Assign::Add("likes", 1)],
                    cond: vec![Cond::Eq("id", Value::Int(1))],
                };
                match (h.phase, input) {
                    (Phase::Receive, _) if dedup => Act::Go(Phase::Begin, Call::Sql(Stmt::Begin)),
                    (Phase::Receive, _) => Act::Go(Phase::Increment, Call::Sql(inc)),
                    (Phase::Begin, _) => Act::Go(
                        Phase::InsertOp,
                        Call::Sql(Stmt::Insert {
                            table: "like_ops",
                            columns: vec!["op_id"],
                            values: vec![Value::text(op_id)],
                            on_conflict: OnConflict::DoNothing,
                        }),
                    ),
                    (Phase::InsertOp, Input::Sql(o)) if o.count() == 1 => {
                        Act::Go(Phase::Increment, Call::Sql(inc))
                    }
                    (Phase::InsertOp, Input::Sql(_)) | (Phase::Increment, Input::Sql(_))
                        if dedup =>
                    {
                        Act::Go(Phase::Commit, Call::Sql(Stmt::Commit))
                    }
                    (Phase::Increment | Phase::Commit, Input::Sql(_)) => {
                        Act::Respond(200, Reply::Liked, false)
                    }
                    _ => Act::Respond(500, Reply::Error("internal_error"), false),
                }
            }
            (Handler::PayOrder, Body::PayOrder { order, amount }) => match (h.phase, input) {
                (Phase::Receive, _) => Act::Go(
                    Phase::UpdateStatus,
                    Call::Sql(Stmt::Update {
                        table: "orders",
                        set: vec![Assign::To("status", Value::text("PAID"))],
                        cond: vec![
                            Cond::Eq("id", Value::Int(order)),
                            Cond::Eq("status", Value::text("NEW")),
                        ],
                    }),
                ),
                (Phase::UpdateStatus, Input::Sql(o)) => {
                    if o.count() == 0 && self.has(Toggle::RowCountCheck) {
                        // Already paid: the transition happened before. Nothing to do again.
                        Act::Respond(
                            200,
                            Reply::Order {
                                status: "PAID".into(),
                            },
                            false,
                        )
                    } else {
                        Act::Go(Phase::Charge, Call::Charge(amount, None))
                    }
                }
                (Phase::Charge, Input::Charged(charge, _)) => {
                    self.update(h, |m| m.charge = Some(charge));
                    let pay = self.insert_payment(h, amount, None);
                    Act::Go(Phase::InsertPayment, Call::Sql(pay))
                }
                (Phase::InsertPayment, Input::Sql(_)) => Act::Respond(
                    200,
                    Reply::Order {
                        status: "PAID".into(),
                    },
                    false,
                ),
                _ => Act::Respond(500, Reply::Error("internal_error"), false),
            },
            _ => Act::Respond(400, Reply::Error("bad_request"), false),
        }
    }

    /// Updates the live copy of a handler (the logic works on a snapshot of it).
    fn update(&mut self, h: &Handling, f: impl FnOnce(&mut Handling)) {
        if let Some(m) = self.handling_mut(h.node, h.id) {
            f(m);
        }
    }

    /// The in-process map of the instance that runs `h`.
    fn memory(&mut self, h: &Handling) -> &mut VecMap<String, Stored> {
        let NodeId::Api(i) = h.node else {
            unreachable!("only API instances handle requests")
        };
        &mut self.apis[i as usize].memory
    }

    /// The answer to a payment that went through; `replayed` when the ledger already had it.
    fn paid(payment: String, amount: i64, replayed: bool) -> Act {
        Act::Respond(
            201,
            Reply::Payment {
                id: payment,
                amount,
            },
            replayed,
        )
    }

    /// The answer `h` has for its payment: the one the ledger already had, or its own.
    fn answer(h: &Handling, amount: i64) -> Act {
        let (id, paid) = Self::payment_of(h, amount);
        Self::paid(id, paid, h.existing.is_some())
    }

    /// The payment `h` answers with, and its amount: the one the ledger already had
    /// for the key, or its own (for `amount`, the request's).
    fn payment_of(h: &Handling, amount: i64) -> (String, i64) {
        h.existing
            .clone()
            .unwrap_or_else(|| (h.payment.clone().unwrap_or_default(), amount))
    }

    /// The ledger row for `h`'s payment; `h` remembers the payment id for its answer.
    /// With a key, the row carries it under `UNIQUE (user_id, idempotency_key)`, so
    /// the ledger itself refuses a second row for the same operation.
    fn insert_payment(&mut self, h: &Handling, amount: i64, key: Option<String>) -> Stmt {
        let id = self.new_payment_id();
        self.update(h, |m| m.payment = Some(id.clone()));
        Stmt::Insert {
            table: "payments",
            columns: vec!["id", "user_id", "amount", "idempotency_key"],
            values: vec![
                Value::text(id),
                Value::Int(h.req.user),
                Value::Int(amount),
                key.clone().map_or(Value::Null, Value::Text),
            ],
            on_conflict: if key.is_some() {
                OnConflict::DoNothing
            } else {
                OnConflict::Error
            },
        }
    }

    /// `POST /charges`: naive, `@Transactional`, or deduplicated by key.
    ///
    /// A timeout is an unknown outcome, never a failure: the handler answers
    /// 503 and stores nothing, and its claim stays until its lease runs out;
    /// then a retry takes it over and resumes (with the key passed to the
    /// processor, asking again is safe). A key store that does not answer
    /// fails closed: 503, nothing charged.
    fn charge_logic(
        &mut self,
        h: &Handling,
        input: Input,
        amount: i64,
        key: Option<String>,
        transactional: bool,
    ) -> Act {
        let cfg = self.key_cfg();
        let user = h.req.user;
        // Computed where a phase needs them (a handler steps through many phases).
        let hash = || h.req.body.fingerprint();
        let redis_key = || {
            key.as_ref()
                .map(|k| format!("idem:u{user}:{k}"))
                .unwrap_or_default()
        };
        let charge_call = |cfg: Option<KeyCfg>| {
            let pass = cfg.is_some_and(|c| c.to_processor);
            Call::Charge(amount, if pass { key.clone() } else { None })
        };
        let begin_first = transactional;
        // After the key check: where the real work starts.
        let start_work = |cfg: Option<KeyCfg>| {
            if begin_first {
                Act::Go(Phase::Begin, Call::Sql(Stmt::Begin))
            } else {
                Act::Go(Phase::Charge, charge_call(cfg))
            }
        };
        let postgres = cfg.is_some_and(|c| c.store == KeyStore::Postgres);
        match (h.phase, input) {
            // The ledger has committed: a cache write that fails or times out does not change the answer.
            (Phase::StoreResponse, _) => Self::answer(h, amount),
            (_, Input::Timeout) => Act::Respond(503, Reply::Error("upstream_timeout"), false),
            (Phase::Receive, _) => match (cfg, &key) {
                (None, _) => start_work(None),
                (Some(_), None) => {
                    Act::Respond(400, Reply::Error("idempotency_key_missing"), false)
                }
                (Some(c), Some(k)) => match (c.store, c.atomic) {
                    (KeyStore::Redis, false) => {
                        Act::Go(Phase::CheckKey, Call::Redis(redis::Cmd::Get(redis_key())))
                    }
                    (KeyStore::Redis, true) => {
                        let marker = Stored {
                            completed: false,
                            hash: hash(),
                            code: 0,
                            payment: String::new(),
                            amount,
                            locked_at: self.now,
                        };
                        Act::Go(
                            Phase::Claim,
                            Call::Redis(redis::Cmd::Set {
                                key: redis_key(),
                                value: redis::Value::Key(marker.record()),
                                nx: true,
                                xx: false,
                                ttl: Some(redis::Ttl::Px(CLAIM_LEASE.0)),
                            }),
                        )
                    }
                    (KeyStore::Postgres, false) => Act::Go(
                        Phase::CheckKey,
                        Call::Sql(Stmt::Select {
                            table: "idempotency_keys",
                            cond: key_cond(user, k),
                        }),
                    ),
                    (KeyStore::Postgres, true) => Act::Go(
                        Phase::Claim,
                        Call::Sql(self.insert_key(h, k, &hash(), true)),
                    ),
                    (KeyStore::Memory, _) => {
                        let hit = self.memory(h).get(k).cloned();
                        Act::Go(Phase::CheckKey, Call::Local(Input::Memory(hit)))
                    }
                },
            },
            (Phase::CheckKey | Phase::Lookup, found) => {
                let c = cfg.expect("keyed");
                let stored = match found {
                    Input::Redis(redis::Reply::Bulk(redis::Value::Key(r))) => {
                        Some(Stored::from_record(r, self.now))
                    }
                    Input::Sql(Outcome::Ok { rows, .. }) if !rows.is_empty() => {
                        let t = self.db.table("idempotency_keys").expect("table");
                        Some(Stored::from_row(t, &rows[0]))
                    }
                    Input::Memory(m) => m,
                    _ => None,
                };
                match stored {
                    Some(s) => self.decide(h, c, s),
                    None if h.phase == Phase::Lookup => {
                        // Claimed a moment ago and already gone (its lease ran out): try again later.
                        Act::Respond(409, Reply::Error("idempotency_key_in_use"), false)
                    }
                    None if postgres => {
                        let k = key.clone().unwrap_or_default();
                        Act::Go(
                            Phase::Claim,
                            Call::Sql(self.insert_key(h, &k, &hash(), false)),
                        )
                    }
                    None => start_work(cfg),
                }
            }
            (Phase::Claim, result) => match result {
                Input::Redis(redis::Reply::Ok) => start_work(cfg),
                Input::Sql(o) if o.count() == 1 => start_work(cfg),
                Input::Sql(Outcome::Error(_)) => {
                    Act::Respond(409, Reply::Error("idempotency_key_in_use"), false)
                }
                Input::Redis(_) => {
                    Act::Go(Phase::Lookup, Call::Redis(redis::Cmd::Get(redis_key())))
                }
                _ => Act::Go(
                    Phase::Lookup,
                    Call::Sql(Stmt::Select {
                        table: "idempotency_keys",
                        cond: key_cond(user, &key.clone().unwrap_or_default()),
                    }),
                ),
            },
            (Phase::Takeover, Input::Sql(o)) => {
                if o.count() == 1 {
                    start_work(cfg)
                } else {
                    Act::Respond(409, Reply::Error("idempotency_key_in_use"), false)
                }
            }
            (Phase::Begin, Input::Sql(_)) => {
                if begin_first && h.charge.is_none() {
                    Act::Go(Phase::Charge, charge_call(cfg))
                } else {
                    Act::Go(
                        Phase::InsertPayment,
                        Call::Sql(self.insert_payment(h, amount, key.clone())),
                    )
                }
            }
            (Phase::Charge, Input::Charged(charge, _)) => {
                self.update(h, |m| m.charge = Some(charge));
                if begin_first || cfg.is_none() {
                    // Inside the @Transactional transaction already, or no transaction at all.
                    Act::Go(
                        Phase::InsertPayment,
                        Call::Sql(self.insert_payment(h, amount, key.clone())),
                    )
                } else {
                    Act::Go(Phase::Begin, Call::Sql(Stmt::Begin))
                }
            }
            (Phase::Charge, Input::Refused(code)) => {
                // A definite answer from the processor: nothing was charged.
                Act::Respond(422, Reply::Error(code), false)
            }
            (Phase::InsertPayment, Input::Sql(o)) => {
                if o.is_error() {
                    return Act::Go(Phase::Rollback, Call::Sql(Stmt::Rollback));
                }
                if o.count() == 0 {
                    // The ledger already has this key's payment: read it and answer with it.
                    return Act::Go(
                        Phase::FindPayment,
                        Call::Sql(Stmt::Select {
                            table: "payments",
                            cond: vec![
                                Cond::Eq("user_id", Value::Int(user)),
                                Cond::Eq(
                                    "idempotency_key",
                                    Value::text(key.clone().unwrap_or_default()),
                                ),
                            ],
                        }),
                    );
                }
                self.recorded(h, cfg, amount, &key, begin_first)
            }
            (Phase::FindPayment, Input::Sql(Outcome::Ok { rows, .. })) if !rows.is_empty() => {
                let t = self.db.table("payments").expect("table");
                let id = rows[0][t.col("id")]
                    .as_text()
                    .unwrap_or_default()
                    .to_string();
                let paid = rows[0][t.col("amount")].as_int().unwrap_or(0);
                self.update(h, |m| m.existing = Some((id, paid)));
                let h = self.handling(h.node, h.id).cloned().expect("live");
                self.recorded(&h, cfg, amount, &key, begin_first)
            }
            (Phase::CompleteKey, Input::Sql(o)) => {
                // (More than one row: duplicate claims, where the unique index is missing.)
                if o.count() >= 1 {
                    Act::Go(Phase::Commit, Call::Sql(Stmt::Commit))
                } else {
                    // The claim was taken over while this request worked (a pause, a lease
                    // that ran out): the fence refuses its write, and it undoes its ledger row.
                    self.update(h, |m| m.lost_claim = true);
                    Act::Go(Phase::Rollback, Call::Sql(Stmt::Rollback))
                }
            }
            (Phase::Commit, Input::Sql(o)) => {
                if matches!(
                    o,
                    Outcome::Ok {
                        tag: db::Tag::Rollback,
                        ..
                    }
                ) {
                    return Act::Respond(500, Reply::Error("internal_error"), false);
                }
                let (payment, paid) = Self::payment_of(h, amount);
                let stored = Stored {
                    completed: true,
                    hash: hash(),
                    code: 201,
                    payment,
                    amount: paid,
                    locked_at: self.now,
                };
                match cfg.map(|c| (c.store, c.ttl)) {
                    Some((KeyStore::Redis, ttl)) => Act::Go(
                        Phase::StoreResponse,
                        Call::Redis(redis::Cmd::Set {
                            key: redis_key(),
                            value: redis::Value::Key(stored.record()),
                            nx: false,
                            xx: false,
                            ttl: Some(redis::Ttl::Px(ttl.0)),
                        }),
                    ),
                    Some((KeyStore::Memory, _)) => {
                        let k = key.clone().unwrap_or_default();
                        self.memory(h).insert(k, stored);
                        Act::Go(Phase::StoreResponse, Call::Local(Input::Stored))
                    }
                    _ => Self::answer(h, amount),
                }
            }
            (Phase::Rollback, _) if h.lost_claim => {
                // The fence refused this request's write: answer with what the claim's owner stored.
                Act::Go(
                    Phase::Lookup,
                    Call::Sql(Stmt::Select {
                        table: "idempotency_keys",
                        cond: key_cond(user, &key.clone().unwrap_or_default()),
                    }),
                )
            }
            _ => Act::Respond(500, Reply::Error("internal_error"), false),
        }
    }

    /// The ledger row is written (or was already there): complete the key in the
    /// same transaction (fenced by the claim's token), commit, or answer.
    fn recorded(
        &mut self,
        h: &Handling,
        cfg: Option<KeyCfg>,
        amount: i64,
        key: &Option<String>,
        transactional: bool,
    ) -> Act {
        match cfg {
            Some(c) if c.store == KeyStore::Postgres => {
                let (payment, paid) = Self::payment_of(h, amount);
                let k = key.clone().unwrap_or_default();
                let body = Paid {
                    payment,
                    amount: paid,
                };
                let mut cond = key_cond(h.req.user, &k);
                cond.push(Cond::Eq("status", Value::text("processing")));
                cond.push(Cond::Eq(
                    "locked_at",
                    Value::Int(h.lock.unwrap_or_default().0 as i64),
                ));
                Act::Go(
                    Phase::CompleteKey,
                    Call::Sql(Stmt::Update {
                        table: "idempotency_keys",
                        set: vec![
                            Assign::To("status", Value::text("completed")),
                            Assign::To("response_code", Value::Int(201)),
                            Assign::To("response_body", Value::Paid(body)),
                        ],
                        cond,
                    }),
                )
            }
            _ if transactional || cfg.is_some() => Act::Go(Phase::Commit, Call::Sql(Stmt::Commit)),
            _ => Self::answer(h, amount),
        }
    }

    /// The claim: `INSERT … 'processing'` with this moment as the lock (the fencing token).
    fn insert_key(&mut self, h: &Handling, key: &str, hash: &str, atomic: bool) -> Stmt {
        let now = self.now;
        self.update(h, |m| m.lock = Some(now));
        Stmt::Insert {
            table: "idempotency_keys",
            columns: vec!["user_id", "key", "request_hash", "status", "locked_at"],
            values: vec![
                Value::Int(h.req.user),
                Value::text(key),
                Value::text(hash),
                Value::text("processing"),
                Value::Int(now.0 as i64),
            ],
            on_conflict: if atomic {
                OnConflict::DoNothing
            } else {
                OnConflict::Error
            },
        }
    }

    /// The key is known: refuse, wait, take over or replay.
    fn decide(&mut self, h: &Handling, c: KeyCfg, s: Stored) -> Act {
        if c.fingerprint && s.hash != h.req.body.fingerprint() {
            return Act::Respond(422, Reply::Error("idempotency_key_reused"), false);
        }
        let postgres = c.store == KeyStore::Postgres;
        // Redis drops an expired key by itself; a Postgres row is there until it is reclaimed.
        let expired = postgres && s.completed && s.locked_at + c.ttl <= self.now;
        if s.completed && !expired {
            return Self::paid(s.payment, s.amount, true);
        }
        if postgres && (expired || s.locked_at + CLAIM_LEASE <= self.now) {
            // Take the claim over, fenced: only if its token is still the one read.
            let k = h.req.key.map(|k| k.to_string()).unwrap_or_default();
            let now = self.now;
            self.update(h, |m| m.lock = Some(now));
            let mut cond = key_cond(h.req.user, &k);
            cond.push(Cond::Eq("locked_at", Value::Int(s.locked_at.0 as i64)));
            return Act::Go(
                Phase::Takeover,
                Call::Sql(Stmt::Update {
                    table: "idempotency_keys",
                    set: vec![
                        Assign::To("status", Value::text("processing")),
                        Assign::To("request_hash", Value::text(h.req.body.fingerprint())),
                        Assign::To("locked_at", Value::Int(now.0 as i64)),
                    ],
                    cond,
                }),
            );
        }
        Act::Respond(409, Reply::Error("idempotency_key_in_use"), false)
    }

    // ----- the pipeline: producer, broker, consumer -----

    fn producer_send(&mut self, hs: &mut Vec<Happening>) {
        if !self.apis[0].up {
            return;
        }
        if self.producer.attempts == 0 {
            self.intended_debits += 100;
        }
        self.producer.attempts += 1;
        let p = Payload::Produce {
            producer: PRODUCER_ID,
            seq: 0,
            msg_id: "evt_1".into(),
            amount: 100,
        };
        hs.push(Happening::Phase {
            node: NodeId::Api(0),
            req: ReqId(0),
            phase: Phase::Publish,
        });
        self.send(NodeId::Api(0), NodeId::Broker, p, None, hs);
        let attempt = self.producer.attempts;
        self.producer_timer = Some(self.schedule(
            self.now + PRODUCER_TIMEOUT,
            Event::ProducerTimeout { attempt },
        ));
    }

    /// The broker pushes the next record to an idle consumer.
    fn broker_pump(&mut self, hs: &mut Vec<Happening>) {
        if self.scenario.handler != Handler::Pipeline
            || !self.consumer.up
            || self.consumer.current.is_some()
        {
            return;
        }
        if self.broker.in_flight.is_some() || self.msgs.values().any(|m| m.to == NodeId::Consumer) {
            return;
        }
        let next = self.broker.committed;
        let Some(r) = self.broker.log.get(next as usize).cloned() else {
            return;
        };
        if self.broker.delivered.contains(&next) && !self.decisive {
            self.decisive = true;
            hs.push(Happening::Decisive);
        }
        self.broker.delivered.push(next);
        self.broker.in_flight = Some(next);
        let p = Payload::Deliver {
            offset: r.offset,
            msg_id: r.msg_id,
            amount: r.amount,
        };
        self.send(NodeId::Broker, NodeId::Consumer, p, None, hs);
    }

    fn consumer_receive(
        &mut self,
        offset: u64,
        msg_id: String,
        amount: i64,
        hs: &mut Vec<Happening>,
    ) {
        let rid = ReqId(self.next_req);
        self.next_req += 1;
        self.consumer.current = Some((rid, offset, msg_id, amount, Phase::Consume));
        hs.push(Happening::Phase {
            node: NodeId::Consumer,
            req: rid,
            phase: Phase::Consume,
        });
        if self.enter(NodeId::Consumer, rid, Phase::Begin, hs) {
            self.send(
                NodeId::Consumer,
                NodeId::Postgres,
                Payload::Sql(Stmt::Begin),
                Some(rid),
                hs,
            );
        }
    }

    fn consumer_input(&mut self, rid: ReqId, o: Outcome, hs: &mut Vec<Happening>) {
        let Some((_, offset, msg_id, amount, phase)) = self.consumer.current.clone() else {
            return;
        };
        let debit = Stmt::Update {
            table: "accounts",
            set: vec![Assign::Add("balance", -amount), Assign::Add("version", 1)],
            cond: vec![Cond::Eq("id", Value::Int(1))],
        };
        let (next, stmt) = match phase {
            Phase::Begin if self.has(Toggle::ConsumerDedup) => (
                Phase::Dedup,
                Some(Stmt::Insert {
                    table: "processed_messages",
                    columns: vec!["message_id"],
                    values: vec![Value::text(msg_id)],
                    on_conflict: OnConflict::DoNothing,
                }),
            ),
            Phase::Begin => (Phase::Apply, Some(debit)),
            Phase::Dedup if o.count() == 1 => (Phase::Apply, Some(debit)),
            Phase::Dedup | Phase::Apply => (Phase::Commit, Some(Stmt::Commit)),
            _ => (Phase::CommitOffset, None),
        };
        if !self.enter(NodeId::Consumer, rid, next, hs) {
            return;
        }
        match stmt {
            Some(s) => self.send(
                NodeId::Consumer,
                NodeId::Postgres,
                Payload::Sql(s),
                Some(rid),
                hs,
            ),
            None => {
                self.consumer.current = None;
                self.send(
                    NodeId::Consumer,
                    NodeId::Broker,
                    Payload::CommitOffset { offset: offset + 1 },
                    None,
                    hs,
                );
            }
        }
    }
}

/// What a handler's last call returned.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Input {
    Start,
    Redis(redis::Reply),
    Sql(Outcome),
    Charged(String, bool),
    /// The processor refused the charge (a definite answer).
    Refused(&'static str),
    Memory(Option<Stored>),
    Stored,
    /// The call out got no answer in time.
    Timeout,
}

/// A call out of the handler.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Call {
    Redis(redis::Cmd),
    Sql(Stmt),
    Charge(i64, Option<String>),
    /// Work inside the process (the in-memory map): no message, the result is immediate.
    Local(Input),
}

/// A handler's next move.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Act {
    Go(Phase, Call),
    Respond(u16, Reply, bool),
}

/// `WHERE user_id = … AND key = …`: keys are scoped per user.
fn key_cond(user: i64, key: &str) -> Vec<Cond> {
    vec![
        Cond::Eq("user_id", Value::Int(user)),
        Cond::Eq("key", Value::text(key)),
    ]
}

fn select_account() -> Stmt {
    Stmt::Select {
        table: "accounts",
        cond: vec![Cond::Eq("id", Value::Int(1))],
    }
}

fn account_reply(o: &Outcome, status: u16) -> Act {
    match o {
        Outcome::Ok { rows, .. } if !rows.is_empty() => Act::Respond(
            status,
            Reply::Account {
                balance: rows[0][1].as_int().unwrap_or(0),
                version: rows[0][2].as_int().unwrap_or(0),
            },
            false,
        ),
        _ => Act::Respond(500, Reply::Error("internal_error"), false),
    }
}

impl World {
    /// Consumer replies come back through here (the consumer is not an API instance).
    pub(crate) fn consumer_reply(&mut self, rid: ReqId, p: Payload, hs: &mut Vec<Happening>) {
        if let Payload::SqlReply(_, o) = p {
            self.consumer_input(rid, o, hs);
        }
    }
}
