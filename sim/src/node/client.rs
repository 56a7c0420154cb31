//! The mobile client: its operations, their keys, and the request loops
//! ("lanes") that send, wait and retry until an operation has a definite
//! answer or runs out of attempts.

use crate::belief::Belief;
use crate::http::{self, Asked, Body, ErrorCode, KeyId, OpId, Reply, Request, Response};
use crate::net::{NodeId, Payload};
use crate::out::{Event, EventKey, Out};
use crate::scenario::{KeyMode, OpSpec};
use crate::time::Millis;
use crate::timing::{CHECK_AFTER, MAX_CHECKS, THINK_TIME};
use crate::trace::Happening;

/// One conceptual operation of the client.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientOp {
    pub spec: OpSpec,
    pub key: Option<KeyId>,
    pub attempts: u32,
    pub belief: Belief,
    /// A success response carried another request's result (key reuse without fingerprint).
    pub wrong_answer: bool,
    /// When its first attempt went out: the retry deadline counts from here.
    pub started: Millis,
    /// The request loops of this operation: one, plus one per parallel copy,
    /// plus one per status read.
    pub lanes: Vec<Lane>,
    /// Status reads asked so far, once it stopped retrying ([`CHECK_AFTER`]).
    pub checks: u32,
    /// When its latest attempt went out: until that is older than the key's
    /// TTL, an attempt may still arrive and be charged.
    pub last_sent: Millis,
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
    /// The connection of its latest request is open: the lane reads its answer.
    /// A timeout closes it, as a real client does: an answer that comes after is
    /// never read ([`Client::awaits`]).
    pub open: bool,
    /// The pending timeout of its latest request, or its planned retry.
    pub(crate) timer: Option<EventKey>,
    /// It is a status read of the operation, not the operation itself.
    pub check: bool,
}

impl ClientOp {
    /// What the customer owes for it so far: a payment from its first attempt
    /// (money may be taken from then on) unless refused, a refund once the app
    /// is told it is made (until then the money may still be taken).
    pub fn owed(&self) -> i64 {
        match (self.spec, &self.belief) {
            (_, Belief::NotStarted | Belief::Failed(..)) => 0,
            (OpSpec::Charge(a) | OpSpec::PayOrder { amount: a, .. }, _) => a,
            (OpSpec::Refund(a), Belief::Succeeded(_)) => -a,
            _ => 0,
        }
    }

    pub fn body(&self) -> Body {
        match self.spec {
            OpSpec::Charge(amount) => Body::Charge { amount },
            OpSpec::Refund(amount) => Body::Refund { amount },
            OpSpec::Debit {
                amount,
                expected_version,
            } => Body::Debit {
                amount,
                expected_version,
            },
            OpSpec::Like(op) => Body::Like { op_id: op.into() },
            OpSpec::PayOrder { order, amount } => Body::PayOrder { order, amount },
            OpSpec::Put { email, version } => Body::Put { email, version },
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

impl Client {
    pub(crate) fn new(ops: &[crate::scenario::Op]) -> Client {
        Client {
            keys: Vec::new(),
            ops: ops
                .iter()
                .map(|op| ClientOp {
                    spec: op.spec,
                    key: None,
                    attempts: 0,
                    belief: Belief::NotStarted,
                    wrong_answer: false,
                    started: Millis(0),
                    lanes: Vec::new(),
                    checks: 0,
                    last_sent: Millis(0),
                })
                .collect(),
            current: None,
        }
    }

    /// Operation `op`'s state. The client reaches its operations by index only through
    /// here and [`Client::lane`]: two bounds checks' panic locations in the page's module
    /// instead of forty (issue 28 item 5).
    #[inline]
    fn op(&mut self, op: OpId) -> &mut ClientOp {
        &mut self.ops[op]
    }

    /// Lane `lane` of operation `op`.
    #[inline]
    fn lane(&mut self, op: OpId, lane: usize) -> &mut Lane {
        &mut self.op(op).lanes[lane]
    }

    fn new_key(&mut self, out: &mut Out) -> Option<KeyId> {
        self.keys.push(out.net.rng.uuid_v4());
        Some(KeyId(self.keys.len() - 1))
    }

    fn key_for(&mut self, op: OpId, out: &mut Out) -> Option<KeyId> {
        out.cfg.client.key?;
        match out.scenario.ops.get(op).map(|o| o.key) {
            Some(KeyMode::ReuseOf(earlier)) => match self.ops.get(earlier) {
                Some(o) if o.key.is_some() => {
                    // An earlier operation's key is on its way again (key-reuse-different-body).
                    out.decisive();
                    o.key
                }
                // Nothing to reuse (yet): a key of its own.
                _ => self.new_key(out),
            },
            Some(KeyMode::Named(name)) => {
                let Some(i) = self.keys.iter().position(|k| k == name) else {
                    self.keys.push(name.into());
                    return Some(KeyId(self.keys.len() - 1));
                };
                // The key another operation sent is on its way again.
                out.decisive();
                Some(KeyId(i))
            }
            _ => self.new_key(out),
        }
    }

    /// The client starts operation `op`: it makes its key, once.
    fn begin_op(&mut self, op: OpId, out: &mut Out) {
        self.current = Some(op);
        self.op(op).started = out.now;
        if let OpSpec::Debit { amount, .. } = self.op(op).spec {
            out.intend_debit(amount);
        }
        self.op(op).key = self.key_for(op, out);
    }

    /// `Event::ClientStart`: the operation's first request, one per copy.
    pub(crate) fn start(&mut self, op: OpId, out: &mut Out) {
        self.begin_op(op, out);
        for _ in 0..out.scenario.ops[op].copies.max(1) {
            let lane = self.new_lane(op, false);
            self.send(op, lane, out);
        }
    }

    /// The reader fires `n` copies of the current request at once (the
    /// operation in progress, else the next to start, else the last).
    /// `None`: the scenario has no client.
    pub(crate) fn parallel(&mut self, n: u32, out: &mut Out) -> Option<()> {
        let ops = &self.ops;
        let op = self
            .current
            .or_else(|| ops.iter().position(|o| o.belief == Belief::NotStarted))
            .or(ops.len().checked_sub(1))?;
        if self.op(op).belief == Belief::NotStarted {
            // These copies are the operation's start.
            out.queue.retain(|_, e| *e != Event::ClientStart(op));
            self.begin_op(op, out);
        }
        for _ in 0..n {
            let lane = self.new_lane(op, false);
            self.send(op, lane, out);
        }
        Some(())
    }

    fn new_lane(&mut self, op: OpId, check: bool) -> usize {
        let lanes = &mut self.op(op).lanes;
        lanes.push(Lane {
            last: 0,
            sent: 0,
            done: false,
            open: false,
            timer: None,
            check,
        });
        lanes.len() - 1
    }

    /// `Event::ClientRetry`: the lane's planned retry, unless the deadline
    /// has passed meanwhile (the phone slept through it): then it stops.
    pub(crate) fn retry(&mut self, op: OpId, lane: usize, out: &mut Out) {
        self.lane(op, lane).timer = None;
        let r = out.cfg.client.retry;
        if !r.in_time(self.op(op).started, out.now) {
            self.give_up(op, lane, out);
            return;
        }
        self.send(op, lane, out);
    }

    /// The read that asks the API what became of operation `op` by its key,
    /// once the app has stopped retrying it (`None`: it has nothing to ask by).
    fn status_read(&mut self, op: OpId, out: &Out) -> Option<Body> {
        let o = &*self.op(op);
        let since = o.last_sent;
        match o.spec {
            OpSpec::Debit { .. } => Some(Body::ReadAccount),
            OpSpec::Put { .. } => Some(Body::ReadProfile),
            OpSpec::Like(_) if !out.cfg.client.op_ids => None,
            OpSpec::Charge(_) | OpSpec::Refund(_) if o.key.is_none() => None,
            OpSpec::Charge(a) => Some(Body::Status {
                of: Asked::Payment(a),
                since,
            }),
            OpSpec::Refund(a) => Some(Body::Status {
                of: Asked::Refund(a),
                since,
            }),
            OpSpec::PayOrder { order, amount } => Some(Body::Status {
                of: Asked::Order { order, amount },
                since,
            }),
            OpSpec::Like(op) => Some(Body::Status {
                of: Asked::Like(op),
                since,
            }),
        }
    }

    /// Plans the next status read of `op`, while it has asks left: in
    /// [`CHECK_AFTER`], and not before `not_before`.
    fn check_later(&mut self, op: OpId, not_before: Millis, out: &mut Out) {
        let o = self.op(op);
        if o.checks < MAX_CHECKS && !o.belief.is_definite() {
            o.checks += 1;
            let at = (out.now + CHECK_AFTER).max(not_before);
            out.timer(at, Event::ClientCheck { op });
        }
    }

    /// `Event::ClientCheck`: the app asks what became of `op`, on a lane of its own.
    pub(crate) fn check(&mut self, op: OpId, out: &mut Out) {
        let Some(body) = self.status_read(op, out) else {
            return;
        };
        if self.op(op).belief.is_definite() {
            return;
        }
        let lane = self.new_lane(op, true);
        self.send_as(op, lane, Some(body), out);
    }

    fn send(&mut self, op: OpId, lane: usize, out: &mut Out) {
        self.send_as(op, lane, None, out);
    }

    /// Sends the lane's next attempt of `op`, or, given a `status` read, asks
    /// what became of it (no new key, no deadline moved, the belief kept).
    fn send_as(&mut self, op: OpId, lane: usize, status: Option<Body>, out: &mut Out) {
        let check = status.is_some();
        let o = self.op(op);
        o.attempts += 1;
        let attempt = o.attempts;
        if !check {
            o.last_sent = out.now;
            if attempt > 1 && out.cfg.client.new_key_per_retry && o.key.is_some() {
                self.op(op).key = self.new_key(out);
            }
        }
        let o = &*self.op(op);
        let body = match (status, &o.belief, o.spec) {
            (Some(b), ..) => b,
            (_, Belief::Conflict, OpSpec::Put { .. }) => Body::ReadProfile,
            (_, Belief::Conflict, _) => Body::ReadAccount,
            _ => o.body(),
        };
        let req = Request {
            body,
            key: o.key,
            user: out.scenario.ops[op].user,
            op,
            attempt,
            lane,
            sent: out.now,
        };
        if check {
            out.happen(Happening::ClientChecks { op });
        } else {
            out.happen(Happening::ClientSent {
                op,
                attempt,
                key: o.key.map(|k| k.to_string()),
            });
            if attempt >= 2 {
                // The same operation is on its way again: the moment to ask what the
                // server will do with it, before the server does anything.
                out.decisive();
            }
            if !matches!(o.belief, Belief::Conflict) && !o.belief.is_definite() {
                self.set_belief(op, Belief::Waiting, out);
            }
        }
        let to = out.net.pick_api();
        out.send(NodeId::Client, NodeId::Api(to), Payload::Request(req), None);
        let t = out.now + out.cfg.client.retry.timeout;
        let key = out.timer(t, Event::ClientTimeout { op, lane, attempt });
        let l = self.lane(op, lane);
        l.last = attempt;
        l.sent += 1;
        l.open = true;
        let old = l.timer.replace(key);
        out.cancel(old);
    }

    fn set_belief(&mut self, op: OpId, b: Belief, out: &mut Out) {
        if self.op(op).belief != b {
            self.op(op).belief = b.clone();
            out.happen(Happening::Belief { op, belief: b });
        }
    }

    /// Ends a lane: no more timeouts or retries from it.
    fn lane_done(&mut self, op: OpId, lane: usize, out: &mut Out) {
        let l = self.lane(op, lane);
        l.done = true;
        l.open = false;
        let t = l.timer.take();
        out.cancel(t);
    }

    /// `Event::ClientTimeout`: whether the attempt really timed out (the
    /// world then runs the scenario's script for that moment and calls
    /// [`Client::plan_retry`]).
    pub(crate) fn timed_out(&mut self, op: OpId, lane: usize, attempt: u32, out: &mut Out) -> bool {
        let l = self.lane(op, lane);
        if l.done || l.last != attempt {
            return false;
        }
        l.timer = None;
        // The client closes the attempt's connection: whatever it answers later is never read.
        l.open = false;
        if self.op(op).belief.is_definite() {
            // Another lane already got the answer: this one stops waiting.
            self.lane_done(op, lane, out);
            return false;
        }
        out.happen(Happening::ClientTimeout { op, attempt });
        true
    }

    pub(crate) fn plan_retry(&mut self, op: OpId, lane: usize, out: &mut Out) {
        if self.lane(op, lane).check {
            // A status read got no answer: ask again later.
            self.lane_done(op, lane, out);
            self.check_later(op, Millis(0), out);
            return;
        }
        let sent = self.lane(op, lane).sent;
        // The rules `Retry::schedule` shows the reader.
        let r = out.cfg.client.retry;
        if !r.again(sent) {
            self.give_up(op, lane, out);
            return;
        }
        let backoff = r.pause(sent, Millis(out.net.rng.below(r.jitter.0 + 1)));
        if !r.in_time(self.op(op).started, out.now + backoff) {
            // Past the deadline: no more retries; the outcome stays unknown.
            self.give_up(op, lane, out);
            return;
        }
        if !self.op(op).belief.is_definite() {
            self.set_belief(op, Belief::Unknown, out);
        }
        let key = out.timer(out.now + backoff, Event::ClientRetry { op, lane });
        let old = self.lane(op, lane).timer.replace(key);
        out.cancel(old);
    }

    /// The lane stops; once every lane of the operation has stopped without a
    /// definite answer, the client gives it up and goes on.
    fn give_up(&mut self, op: OpId, lane: usize, out: &mut Out) {
        self.lane_done(op, lane, out);
        let o = &*self.op(op);
        if !o.belief.is_definite() && o.lanes.iter().all(|l| l.done) && o.checks == 0 {
            // The screen says "checking": the app will ask by the key.
            self.set_belief(op, Belief::GaveUp, out);
            self.check_later(op, Millis(0), out);
            self.next_op(op, out);
        }
    }

    fn next_op(&mut self, op: OpId, out: &mut Out) {
        if self.current == Some(op) && op + 1 < self.ops.len() {
            self.current = None;
            out.timer(out.now + THINK_TIME, Event::ClientStart(op + 1));
        }
    }

    /// Whether the client reads `r`: the answer to its lane's latest request,
    /// whose connection is still open. Any other (an attempt that timed out, or
    /// a lane that has stopped) arrives on a closed connection and is dropped
    /// (`LossCause::ConnClosed`): it changes neither the belief nor the plan.
    pub fn awaits(&self, r: &Response) -> bool {
        self.ops
            .get(r.op)
            .and_then(|o| o.lanes.get(r.lane))
            .is_some_and(|l| l.open && l.last == r.attempt)
    }

    /// The answer the client awaited ([`Client::awaits`]) arrived.
    pub(crate) fn on_response(&mut self, r: Response, out: &mut Out) {
        let (op, lane) = (r.op, r.lane);
        let check = self.lane(op, lane).check;
        if r.is_success() {
            self.lane_done(op, lane, out);
            let o = &*self.op(op);
            if o.belief.is_definite() {
                return;
            }
            // A re-read after a conflict, or a status read: it decides from what it reads.
            let reread = o.belief == Belief::Conflict || check;
            let belief = match &r.reply {
                Reply::Payment { id, amount } => {
                    if Some(*amount) != o.body().amount() {
                        self.op(op).wrong_answer = true;
                    }
                    Belief::Succeeded(id.clone())
                }
                Reply::Account { balance, version } if reread => Belief::Reread {
                    balance: *balance,
                    version: *version,
                },
                // Re-read after a 412: its own value means its write landed before.
                Reply::Value(v)
                    if reread
                        && matches!(o.spec, OpSpec::Put { .. })
                        && !matches!(o.spec, OpSpec::Put { email, .. } if email == v) =>
                {
                    Belief::ChangedElsewhere
                }
                _ => Belief::Succeeded(r.label()),
            };
            self.set_belief(op, belief, out);
            if !check {
                self.next_op(op, out);
            }
            return;
        }
        match (r.status, &r.reply) {
            (404, Reply::Error(code)) if check => {
                // The API has no such operation, and the processor no charge for it.
                self.lane_done(op, lane, out);
                self.set_belief(op, Belief::Failed(404, *code), out);
            }
            (503, Reply::Error(ErrorCode::OutcomeUnknown)) if check => {
                // It cannot tell yet: an attempt may still arrive and be charged
                // until it is older than the key's (or the order's) TTL. Ask again then.
                self.lane_done(op, lane, out);
                let ttl = out.cfg.client.op_ttl.unwrap_or(Millis(0));
                let at = self.op(op).last_sent + ttl;
                self.check_later(op, at, out);
            }
            (409, Reply::Error(ErrorCode::VersionMismatch)) | (412, _) => {
                // The version moved: re-read before deciding again.
                self.set_belief(op, Belief::Conflict, out);
                self.send(op, lane, out);
            }
            (409, _) | (500..=599, _) => self.plan_retry(op, lane, out),
            (status, Reply::Error(code)) if http::refuses(status) => {
                self.lane_done(op, lane, out);
                if !self.op(op).belief.is_definite() {
                    self.set_belief(op, Belief::Failed(status, *code), out);
                    self.next_op(op, out);
                }
            }
            _ => {}
        }
    }
}
