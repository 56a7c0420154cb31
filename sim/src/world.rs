//! The world: the nodes, the messages in flight and the event queue. It
//! routes: [`World::step`] fires exactly one event, hands a delivered
//! message or a timer to the node it is for, and lends that node an
//! [`Out`] for its effects. Each node owns its state and rules
//! (`crate::node`); none reaches into another. Nothing here reads a clock
//! or a global random source; the world owns its generator, and the whole
//! state is `Clone + Eq + Hash`.

use crate::db::{Assign, Cond, ConnId, Db, Stmt, Value};
use crate::invariant::Invariant;
use crate::net::{Fate, FaultRule, LossCause, Msg, MsgId, NodeId, Payload, RandomFaults, ReqId};
use crate::network::{Armed, Net};
use crate::node::config::NodeConfig;
use crate::node::{self, postgres};
use crate::out::{self, Out};
use crate::redis::Redis;
use crate::rng::Rng;
use crate::scenario::{Handler, Scenario, Toggle, Toggles, When, EMAILS, USER_ID};
use crate::shared::Shared;
use crate::time::Millis;
use crate::timing::{MAX_JUMP, RECONCILE_EVERY};
use crate::trace::Happening;
use crate::vecmap::VecMap;
use std::sync::Arc;

pub use crate::belief::Belief;
pub use crate::command::{Command, CommandError};
pub use crate::node::api::{Api, Apis};
pub use crate::node::broker::{Broker, Consumer, Producer, Record};
pub use crate::node::client::{Client, ClientOp, Lane};
pub use crate::node::config::key_ttl;
pub use crate::node::mail::Mail;
pub use crate::node::processor::{Charge, Processor};
pub use crate::node::rules::{Handling, Stored};
pub use crate::out::{Event, EventKey};

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

/// The account balance and the post's likes when the run began (0 where the scenario has none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Initial {
    pub balance: i64,
    pub likes: i64,
}

/// The pipeline scenario's producer and consumer, with their timers (the
/// broker's session timer is the world's: the broker pumps at every step).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pipeline {
    pub producer: Producer,
    pub consumer: Consumer,
    pub(crate) producer_timer: Option<EventKey>,
    /// The consumer's statement timeout on its last statement.
    pub(crate) statement_timer: Option<EventKey>,
}

/// Parts of a world a step seldom changes (see [`World::seldom`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Seldom {
    /// Connections whose process closed them with statements still on the
    /// wire: as over TCP, the server reads those first, then the close.
    pub(crate) closing: Vec<ReqId>,
    /// Planned automatic restarts.
    pub(crate) restarts: VecMap<NodeId, EventKey>,
    /// The newest value another client has written (a later write than the
    /// app's): nothing older may overwrite it (`Invariant::NewerWriteKept`).
    pub newest: Option<&'static str>,
    /// Counters as the run began, for the invariants that compare against them.
    pub initial: Initial,
}

/// The whole simulated world.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct World {
    pub scenario: Arc<Scenario>,
    pub config: Config,
    /// `config`'s switches, resolved once per node; shared by the world's
    /// copies (it never changes).
    pub(crate) cfg: Arc<NodeConfig>,
    pub now: Millis,
    pub(crate) rng: Rng,
    pub(crate) queue: VecMap<EventKey, Event>,
    pub(crate) seq: u64,
    /// Messages in flight, by id. Shared: a copy of the world copies none
    /// of their payloads, and the explorer hashes each message once.
    pub msgs: VecMap<MsgId, Shared<Msg>>,
    pub(crate) next_msg: u32,
    /// The fault rules still armed and the crashes left. Shared, as is
    /// `seldom`: a step seldom changes them, a copy of the world copies none
    /// of them, and a world the explorer keeps waiting is 28% smaller
    /// without them inline (424 bytes, now 304).
    pub armed: Shared<Armed>,
    /// Closing connections, planned restarts, the newest write, the first counters.
    pub seldom: Shared<Seldom>,
    pub client: Shared<Client>,
    pub apis: Apis,
    /// The reconciliation job's process (`node::reconciler`), run by the
    /// API's runtime; idle where the scenario's system has no job.
    pub reconciler: Shared<Api>,
    pub(crate) lb: u8,
    pub redis: Shared<Redis>,
    pub db: Shared<Db>,
    pub processor: Shared<Processor>,
    /// The mail service: the receipts the customer received.
    pub mail: Shared<Mail>,
    pub broker: Shared<Broker>,
    /// The queue pipeline's producer and consumer and two of their timers.
    /// Shared: only the pipeline scenario has them, and they were a
    /// quarter of every world the explorer keeps waiting.
    pub pipeline: Shared<Pipeline>,
    /// Which node owns each database connection.
    pub(crate) conns: postgres::Conns,
    /// The broker's session timer on the record it delivered last.
    pub(crate) session_timer: Option<EventKey>,
    pub(crate) next_req: u32,
    pub(crate) next_payment: u32,
    /// Money the world meant to take from the account (client debits, other writers, events).
    pub intended_debits: i64,
    /// Each invariant's status after the last step. Shared: it seldom
    /// changes, and a copy of the world then copies nothing.
    pub invariants: Shared<VecMap<Invariant, bool>>,
    /// The decisive moment (a retry or a duplicate is sent, a record is redelivered) has come.
    pub decisive: bool,
    /// The trace's texts (labels, SQL, Redis commands) are left empty: an
    /// explorer that only looks at the state saves their formatting.
    pub(crate) untraced: bool,
}

/// The outbox a node writes into: the world's network, clock, fault model
/// and trace, borrowed field by field so the node itself stays borrowable.
macro_rules! out {
    ($w:ident, $hs:expr) => {
        Out {
            now: $w.now,
            traced: !$w.untraced,
            scenario: &$w.scenario,
            cfg: &$w.cfg,
            net: Net {
                scenario: &$w.scenario,
                toggles: $w.config.toggles,
                random: $w.config.random,
                rng: &mut $w.rng,
                msgs: &mut $w.msgs,
                next_msg: &mut $w.next_msg,
                armed: &mut $w.armed,
                next_payment: &mut $w.next_payment,
                lb: &mut $w.lb,
                apis_up: $w
                    .apis
                    .iter()
                    .enumerate()
                    .fold(0, |m, (i, a)| m | (u32::from(a.up) << i)),
                apis: $w.apis.len() as u8,
            },
            queue: &mut $w.queue,
            seq: &mut $w.seq,
            decisive: &mut $w.decisive,
            intended_debits: &mut $w.intended_debits,
            hs: $hs,
            crash: None,
            relay: None,
        }
    };
}

impl World {
    pub fn new(scenario: Arc<Scenario>, config: Config) -> World {
        let db = Db::new(scenario.tables(config.toggles));
        let initial = Initial {
            balance: db.first_int("accounts", "balance").unwrap_or(0),
            likes: db.first_int("posts", "likes").unwrap_or(0),
        };
        let mut w = World {
            cfg: Arc::new(NodeConfig::new(&scenario, config.toggles)),
            config,
            now: Millis::ZERO,
            rng: Rng::new(config.seed),
            queue: VecMap::new(),
            seq: 0,
            msgs: VecMap::new(),
            next_msg: 1,
            armed: Shared::new(Armed {
                faults: scenario.faults_for(config.toggles),
                crashes_left: scenario.crashes.iter().map(|c| c.times).collect(),
                random_crashes: 0,
            }),
            seldom: Shared::new(Seldom {
                closing: Vec::new(),
                restarts: VecMap::new(),
                newest: None,
                initial,
            }),
            client: Shared::new(Client::new(scenario.ops)),
            apis: Apis::new(scenario.apis),
            reconciler: Shared::new(Api::new()),
            lb: 0,
            redis: Shared::default(),
            db: Shared::new(db),
            processor: Shared::default(),
            mail: Shared::default(),
            broker: Shared::default(),
            pipeline: Shared::new(Pipeline {
                producer: Producer::default(),
                consumer: Consumer {
                    up: true,
                    current: None,
                },
                producer_timer: None,
                statement_timer: None,
            }),
            conns: VecMap::new(),
            session_timer: None,
            next_req: 1,
            next_payment: 1,
            intended_debits: 0,
            invariants: Shared::new(scenario.invariants.iter().map(|i| (*i, true)).collect()),
            decisive: false,
            untraced: false,
            scenario,
        };
        if !w.client.ops.is_empty() {
            w.schedule(Millis::ZERO, Event::ClientStart(0));
        }
        if w.scenario.handler == Handler::Pipeline {
            w.schedule(Millis::ZERO, Event::ProducerSend);
        }
        if w.cfg.reconcile {
            w.schedule(RECONCILE_EVERY, Event::Reconcile);
        }
        for (i, s) in w.scenario.script.iter().enumerate() {
            if let When::At(t) = s.when {
                w.schedule(t, Event::Script(i));
            }
        }
        w
    }

    fn has(&self, t: Toggle) -> bool {
        self.config.toggles.has(t)
    }

    fn schedule(&mut self, at: Millis, ev: Event) -> EventKey {
        out::schedule(&mut self.queue, &mut self.seq, at, ev)
    }

    fn cancel(&mut self, key: Option<EventKey>) {
        out::cancel(&mut self.queue, key)
    }

    /// Events waiting on the clock, in firing order.
    pub fn pending(&self) -> impl Iterator<Item = (&EventKey, &Event)> {
        self.queue.iter()
    }

    /// Nothing left to happen but the reconciliation job's next run, which
    /// does not keep a run going (it runs when a day passes in the run).
    pub fn is_quiet(&self) -> bool {
        self.queue.values().all(|e| matches!(e, Event::Reconcile))
    }

    pub fn is_up(&self, n: NodeId) -> bool {
        match n {
            NodeId::Api(i) => self.apis.get(i as usize).is_some_and(|a| a.up),
            NodeId::Consumer => self.pipeline.consumer.up,
            _ => true,
        }
    }

    /// Fires the earliest event that does something (a stale timer, such as
    /// the timeout of an attempt that was already answered, is skipped as part
    /// of the same step). Returns what happened (empty when quiet).
    pub fn step(&mut self) -> Vec<Happening> {
        while let Some(k) = self.queue.first_key().copied().filter(|_| !self.is_quiet()) {
            let hs = self.fire(k);
            if !hs.is_empty() {
                return hs;
            }
        }
        Vec::new()
    }

    /// Fires what is left when only stale timers are (the timeout of an
    /// attempt already answered, a deadline of a request already done): the
    /// world is then quiet, as a run ends ([`crate::Run::end`]). It changes
    /// nothing while any pending event would still do something. A command
    /// applied at a run's end applies to this world, and a replay of it too.
    pub fn fire_stale(&mut self) {
        if self.is_quiet() || self.queue.values().any(|e| matches!(e, Event::Deliver(_))) {
            return;
        }
        let mut w = self.clone();
        if w.step().is_empty() {
            *self = w;
        }
    }

    pub(crate) fn fire(&mut self, key: EventKey) -> Vec<Happening> {
        let mut hs = Vec::new();
        self.fire_into(key, &mut hs);
        hs
    }

    /// [`World::fire`], adding what happened to `hs` (the explorer lends
    /// every step one buffer instead of allocating a vector per step).
    pub(crate) fn fire_into(&mut self, key: EventKey, hs: &mut Vec<Happening>) {
        let Some(ev) = self.queue.remove(&key) else {
            return;
        };
        self.now = self.now.max(key.0);
        self.expire(hs);
        let hs_ = &mut *hs;
        match ev {
            Event::Deliver(id) => self.deliver(id, hs_),
            Event::ClientTimeout { op, lane, attempt } => {
                if self.react(ev, hs_) {
                    let script = self.scenario.script;
                    for c in script {
                        if c.when == (When::ClientTimedOut { op, attempt })
                            && c.only_with.is_none_or(|t| self.has(t))
                        {
                            // A command that does not apply adds nothing.
                            let _ = self.command(&c.command, hs_);
                        }
                    }
                    self.react(Event::PlanRetry { op, lane }, hs_);
                }
            }
            Event::Deadline { node, req, token } => {
                let due = match node {
                    NodeId::Api(i) => self.apis[i as usize].deadline_due(req, token),
                    NodeId::Reconciler => self.reconciler.deadline_due(req, token),
                    _ => false,
                };
                if due {
                    self.drop_connection(req, hs_);
                    self.react(ev, hs_);
                }
            }
            Event::Restart(n) => {
                if !self.is_up(n) {
                    self.restart(n, hs_);
                }
            }
            Event::Script(i) => {
                let s = self.scenario.clone();
                let s = &s.script[i];
                if s.only_with.is_none_or(|t| self.has(t)) {
                    let _ = self.command(&s.command, hs_);
                }
            }
            // The job runs again in a day, whatever this run does.
            Event::Reconcile => {
                self.schedule(self.now + RECONCILE_EVERY, Event::Reconcile);
                self.react(ev, hs_);
            }
            // The timers of a node, and nothing else is queued.
            ev => {
                self.react(ev, hs_);
            }
        }
        self.settle(hs);
    }

    /// The end of every step: the broker feeds an idle consumer, and the invariants are judged.
    fn settle(&mut self, hs: &mut Vec<Happening>) {
        if self.scenario.handler == Handler::Pipeline && self.pipeline.consumer.idle() {
            self.react(Event::Pump, hs);
        }
        self.check_invariants(hs);
    }

    /// Redis drops the keys whose TTL ran out.
    fn expire(&mut self, hs: &mut Vec<Happening>) {
        // Redis is shared by the world's copies until it changes: look first.
        if !self.redis.expires_by(self.now) {
            return;
        }
        for k in self.redis.expire(self.now) {
            hs.push(Happening::KeyExpired(k));
        }
    }

    /// Applies a command at the current step.
    pub fn apply(&mut self, cmd: &Command) -> Result<Vec<Happening>, CommandError> {
        let mut hs = Vec::new();
        self.apply_into(cmd, &mut hs)?;
        Ok(hs)
    }

    /// [`World::apply`], adding what happened to `hs` (the explorer's one buffer).
    pub(crate) fn apply_into(
        &mut self,
        cmd: &Command,
        hs: &mut Vec<Happening>,
    ) -> Result<(), CommandError> {
        self.command(cmd, hs)?;
        self.settle(hs);
        Ok(())
    }

    /// A command's own effect, inside a step that checks invariants at its
    /// end, added to `hs`; one that does not apply adds nothing.
    fn command(&mut self, cmd: &Command, hs: &mut Vec<Happening>) -> Result<(), CommandError> {
        let mark = hs.len();
        hs.push(Happening::Command(cmd.clone()));
        let applied = self.command_effect(cmd, hs);
        if applied.is_err() {
            hs.truncate(mark);
        }
        applied
    }

    fn command_effect(
        &mut self,
        cmd: &Command,
        hs: &mut Vec<Happening>,
    ) -> Result<(), CommandError> {
        match cmd {
            Command::LoseNextResponse => {
                if self.client.ops.is_empty() {
                    return Err(CommandError::NoClient);
                }
                if self.is_quiet() {
                    return Err(CommandError::NothingToLose);
                }
                self.armed.faults.push(FaultRule::lose_first_response());
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
                if !self.react(Event::Parallel(*n), hs) {
                    return Err(CommandError::NoClient);
                }
            }
            Command::Crash(n) | Command::Restart(n) => {
                if !n.can_crash() || !self.scenario.has_node(*n) {
                    return Err(CommandError::NotCrashable(*n));
                }
                match (cmd, self.is_up(*n)) {
                    (Command::Crash(_), true) => self.crash(*n, hs),
                    (Command::Crash(_), false) => return Err(CommandError::AlreadyDown(*n)),
                    (_, false) => self.restart(*n, hs),
                    (_, true) => return Err(CommandError::AlreadyUp(*n)),
                }
            }
            Command::AdvanceClock(d) => {
                if d.0 == 0 || *d > MAX_JUMP {
                    return Err(CommandError::BadDuration(*d));
                }
                self.now = self.now + *d;
                hs.push(Happening::ClockAdvanced(*d));
                self.expire(hs);
            }
            Command::ExternalDebit { .. } | Command::ExternalPut => {
                let (table, id, set) = match cmd {
                    Command::ExternalDebit { amount } => {
                        ("accounts", 1, Assign::Add("balance", -amount))
                    }
                    _ => (
                        "profiles",
                        USER_ID,
                        Assign::To("email", Value::text(EMAILS[2])),
                    ),
                };
                if self.db.table(table).is_none() {
                    return Err(CommandError::NoAccount);
                }
                match cmd {
                    Command::ExternalDebit { amount } => self.intended_debits += amount,
                    _ => self.seldom.newest = Some(EMAILS[2]),
                }
                let stmt = Stmt::Update {
                    table,
                    set: vec![set, Assign::Add("version", 1)],
                    cond: vec![Cond::Eq("id", Value::Int(id))],
                };
                self.react(Event::External(Box::new(stmt)), hs);
            }
        }
        Ok(())
    }

    /// A message arrives, or fails where it would have arrived; the node it
    /// is for reacts to it.
    fn deliver(&mut self, id: MsgId, hs: &mut Vec<Happening>) {
        let Some(m) = self.msgs.remove(&id) else {
            return;
        };
        let label = if self.untraced {
            String::new()
        } else {
            m.payload.label()
        };
        let down = !self.is_up(m.to)
            || match (m.to, m.req) {
                (NodeId::Api(i), Some(r)) if m.payload.is_reply() => {
                    !self.apis[i as usize].handling.contains_key(&r)
                }
                (NodeId::Reconciler, Some(r)) => !self.reconciler.handling.contains_key(&r),
                (NodeId::Consumer, Some(r)) if m.payload.is_reply() => self
                    .pipeline
                    .consumer
                    .current
                    .as_ref()
                    .is_none_or(|c| c.0 != r),
                _ => false,
            };
        // A statement of a closed session never runs (the process that opened it is
        // gone), and an answer to a request the client closed is never read.
        let closed = match &m.payload {
            Payload::Sql(_) => self.db.is_closed(ConnId(m.req.map_or(0, |r| r.0))),
            Payload::Response(r) if m.to == NodeId::Client => !self.client.awaits(r),
            _ => false,
        };
        let fate = match m.fate {
            Fate::Deliver if down => Fate::Lost(LossCause::NodeDown),
            Fate::Deliver if closed => Fate::Lost(LossCause::ConnClosed),
            f => f,
        };
        let (from, to) = (m.from, m.to);
        let closing = match (to, &m.payload, m.req) {
            (NodeId::Postgres, Payload::Sql(_), Some(r)) if self.seldom.closing.contains(&r) => {
                Some(r)
            }
            _ => None,
        };
        if let Fate::Lost(cause) = fate {
            hs.push(Happening::Lost {
                msg: id,
                from,
                to,
                label,
                cause,
            });
        } else {
            hs.push(Happening::Delivered {
                msg: id,
                from,
                to,
                label,
            });
            self.react(Event::Arrive(m), hs);
        }
        // The last statement its process sent before the close has been read: now the close.
        if let Some(r) = closing.filter(|r| !self.sql_in_flight(*r)) {
            self.seldom.closing.retain(|c| *c != r);
            self.react(Event::Disconnect(r), hs);
        }
    }

    /// A statement of request `rid`'s connection is on its way to Postgres.
    fn sql_in_flight(&self, rid: ReqId) -> bool {
        self.msgs.values().any(|m| {
            m.to == NodeId::Postgres
                && m.req == Some(rid)
                && m.fate == Fate::Deliver
                && matches!(m.payload, Payload::Sql(_))
        })
    }

    /// A node reacts, with the outbox lent to it (the one place that lends
    /// one); a crash it decided on happens once it returns. The answer is
    /// the node's (whether the timeout counts, whether the client could fire).
    fn react(&mut self, ev: Event, hs: &mut Vec<Happening>) -> bool {
        let mut o = out!(self, hs);
        let mut answer = true;
        let mut drop_after = None;
        match ev {
            Event::Arrive(m) => {
                let m = m.into_inner();
                match (m.to, m.payload) {
                    (to @ NodeId::Api(i), Payload::Request(r)) => {
                        let rid = ReqId(self.next_req);
                        self.next_req += 1;
                        self.apis[i as usize].receive(to, rid, r, &mut o);
                    }
                    (NodeId::Api(i), p) if m.req.is_some() => {
                        self.apis[i as usize].reply(m.req.unwrap_or(ReqId(0)), p, &mut o)
                    }
                    (NodeId::Reconciler, p) => {
                        self.reconciler.reply(m.req.unwrap_or(ReqId(0)), p, &mut o)
                    }
                    (NodeId::Api(_), Payload::ProduceAck { .. }) => {
                        let p = &mut *self.pipeline;
                        p.producer.on_ack(&mut p.producer_timer, &mut o)
                    }
                    (
                        NodeId::Consumer,
                        Payload::Deliver {
                            offset,
                            msg_id,
                            amount,
                        },
                    ) => {
                        let rid = ReqId(self.next_req);
                        self.next_req += 1;
                        let r = (offset, msg_id, amount);
                        let p = &mut *self.pipeline;
                        p.consumer.receive(rid, r, &mut p.statement_timer, &mut o);
                    }
                    (NodeId::Consumer, p) => {
                        let pl = &mut *self.pipeline;
                        let (rid, timer) = (m.req.unwrap_or(ReqId(0)), &mut pl.statement_timer);
                        pl.consumer.on_reply(rid, p, timer, &mut o)
                    }
                    (NodeId::Redis, Payload::RedisCmd(cmd)) => {
                        node::redis::on_cmd(&mut self.redis, m.from, m.req, cmd, &mut o)
                    }
                    (NodeId::Postgres, Payload::Sql(stmt)) => {
                        postgres::on_sql(&mut self.db, &mut self.conns, m.from, m.req, stmt, &mut o)
                    }
                    (NodeId::Processor, Payload::Charge { amount, key, op }) => self
                        .processor
                        .on_charge(m.from, m.req, (amount, key, op), &mut o),
                    (NodeId::Processor, Payload::FindCharge { key }) => {
                        self.processor.on_find(m.from, m.req, key, &mut o)
                    }
                    (NodeId::Processor, Payload::ListCharges) => {
                        self.processor.on_list(m.from, m.req, &mut o)
                    }
                    (NodeId::Mail, Payload::Email { id, payment }) => {
                        self.mail.on_email(m.from, m.req, (id, payment), &mut o)
                    }
                    (NodeId::Client, Payload::Response(r)) => self.client.on_response(r, &mut o),
                    (
                        NodeId::Broker,
                        Payload::Produce {
                            producer,
                            seq,
                            msg_id,
                            amount,
                        },
                    ) => self
                        .broker
                        .on_produce(m.from, (producer, seq, msg_id, amount), &mut o),
                    (NodeId::Broker, Payload::CommitOffset { offset }) => {
                        self.broker
                            .on_commit(offset, &mut self.session_timer, &mut o)
                    }
                    _ => {}
                }
            }
            Event::ClientStart(op) => self.client.start(op, &mut o),
            Event::ClientTimeout { op, lane, attempt } => {
                answer = self.client.timed_out(op, lane, attempt, &mut o)
            }
            Event::PlanRetry { op, lane } => self.client.plan_retry(op, lane, &mut o),
            Event::ClientRetry { op, lane } => self.client.retry(op, lane, &mut o),
            Event::ClientCheck { op } => self.client.check(op, &mut o),
            Event::Parallel(n) => answer = self.client.parallel(n, &mut o).is_some(),
            Event::Deadline {
                node: NodeId::Api(i),
                req,
                ..
            } => self.apis[i as usize].timed_out(req, &mut o),
            Event::Deadline {
                node: NodeId::Reconciler,
                req,
                ..
            } => self.reconciler.timed_out(req, &mut o),
            Event::ProducerSend => {
                let (up, p) = (self.apis[0].up, &mut *self.pipeline);
                p.producer.send(up, &mut p.producer_timer, &mut o)
            }
            Event::ProducerTimeout { attempt } => {
                let (up, p) = (self.apis[0].up, &mut *self.pipeline);
                p.producer
                    .timeout(attempt, up, &mut p.producer_timer, &mut o)
            }
            Event::Pump => self.broker.pump(&mut self.session_timer, &mut o),
            Event::SessionTimeout => self.broker.session_expired(&mut self.session_timer, &mut o),
            Event::StatementTimeout(rid) => {
                let p = &mut *self.pipeline;
                if let Some(r) = p
                    .consumer
                    .statement_timed_out(rid, &mut p.statement_timer, &mut o)
                {
                    drop_after = Some(r);
                }
            }
            Event::External(stmt) => postgres::external(&mut self.db, &self.conns, *stmt, &mut o),
            Event::Disconnect(rid) => postgres::disconnect(&mut self.db, &self.conns, rid, &mut o),
            Event::Reconcile => {
                let rid = ReqId(self.next_req);
                if self.reconciler.run_job(NodeId::Reconciler, rid, &mut o) {
                    self.next_req += 1;
                }
            }
            Event::Relay(node @ NodeId::Api(i)) => {
                let rid = ReqId(self.next_req);
                if self.apis[i as usize].wake_relay(node, rid, &mut o) {
                    self.next_req += 1;
                }
            }
            // The world's own: a message on its way, a restart, a script's command.
            Event::Deliver(_)
            | Event::Restart(_)
            | Event::Script(_)
            | Event::Deadline { .. }
            | Event::Relay(_) => {}
        }
        let (crash, relay) = (o.crash, o.relay);
        if let Some(r) = drop_after {
            self.drop_connection(r, hs);
        }
        if let Some(n) = crash {
            self.crash(n, hs);
        }
        if let Some(n @ NodeId::Api(_)) = relay {
            self.react(Event::Relay(n), hs);
        }
        answer
    }

    /// Request `rid`'s database connection closes: its transaction rolls back.
    /// A statement it sent is still on the wire: the server reads it first
    /// (a COMMIT commits), and the connection closes once it has arrived.
    fn drop_connection(&mut self, rid: ReqId, hs: &mut Vec<Happening>) {
        if self.sql_in_flight(rid) {
            if !self.seldom.closing.contains(&rid) {
                self.seldom.closing.push(rid);
            }
            return;
        }
        self.react(Event::Disconnect(rid), hs);
    }

    fn crash(&mut self, node: NodeId, hs: &mut Vec<Happening>) {
        hs.push(Happening::Crashed(node));
        match node {
            NodeId::Api(i) => {
                let poll = self.apis[i as usize].relay_timer.take();
                self.cancel(poll);
                for (r, h) in self.apis[i as usize].crash() {
                    self.cancel(h.deadline);
                    self.drop_connection(r, hs);
                }
            }
            NodeId::Consumer => {
                let p = &mut *self.pipeline;
                let (r, statement) = (p.consumer.crash(), p.statement_timer.take());
                if let Some(r) = r {
                    self.drop_connection(r, hs);
                }
                let timers = [statement, self.session_timer.take()];
                for t in timers {
                    self.cancel(t);
                }
                // The broker notices the lost session and will deliver from the committed offset.
                self.broker.in_flight = None;
            }
            _ => return,
        }
        if let Some(after) = self.scenario.auto_restart {
            let k = self.schedule(self.now + after, Event::Restart(node));
            self.seldom.restarts.insert(node, k);
        }
    }

    fn restart(&mut self, node: NodeId, hs: &mut Vec<Happening>) {
        // Looked up first: a restart nobody planned copies nothing shared.
        let planned = match self.seldom.restarts.contains_key(&node) {
            true => self.seldom.restarts.remove(&node),
            false => None,
        };
        self.cancel(planned);
        match node {
            NodeId::Api(i) => self.apis[i as usize].up = true,
            NodeId::Consumer => self.pipeline.consumer.up = true,
            _ => return,
        }
        hs.push(Happening::Restarted(node));
        // The outbox's relay starts with its process, and sends what is left.
        if let (NodeId::Api(_), true) = (node, self.cfg.api.relay) {
            self.react(Event::Relay(node), hs);
        }
    }
}

#[cfg(test)]
impl World {
    /// Lends the world's outbox to `f`, as a node is lent it when it reacts:
    /// for tests that drive a node's rules by hand.
    pub(crate) fn lend_out<R>(&mut self, f: impl FnOnce(&mut Out) -> R) -> R {
        let mut hs = Vec::new();
        let mut o = out!(self, &mut hs);
        f(&mut o)
    }
}
