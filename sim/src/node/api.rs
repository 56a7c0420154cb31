//! An API instance: the requests it is handling and its in-process map. Its
//! runtime feeds a handler the result of its last call, runs the rules
//! (`node::handlers`) to the next call out, sends it with a deadline, and
//! sends the response when the rules answer.

use crate::http::{Reply, Request, Response};
use crate::net::{NodeId, Payload, ReqId};
use crate::node::handlers;
use crate::node::rules::{Call, Handling, Input, Move, Stored};
use crate::out::{Event, EventKey, Out};
use crate::scenario::Phase;
use crate::shared::Shared;
use crate::timing::{RELAY_POLL, STORE_DEADLINE};
use crate::trace::Happening;
use crate::vecmap::VecMap;
use std::sync::Arc;

/// The API instances (at most [`Apis::MAX`]), each shared by the world's
/// copies until one of them changes it: a step that one instance takes
/// copies that instance alone (it copied every one, and their list), and
/// the explorer hashes each version of an instance once.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Apis {
    /// The first `len` are the scenario's; the others stay idle and shared.
    each: [Shared<Api>; Apis::MAX],
    len: u8,
}

impl Apis {
    /// Instances a scenario may run.
    pub const MAX: usize = 2;

    /// `n` instances (more than [`Apis::MAX`] panics at the first use).
    pub(crate) fn new(n: u8) -> Apis {
        Apis {
            each: std::array::from_fn(|_| Shared::new(Api::new())),
            len: n,
        }
    }
}

impl std::ops::Deref for Apis {
    type Target = [Shared<Api>];
    fn deref(&self) -> &[Shared<Api>] {
        &self.each[..usize::from(self.len)]
    }
}

impl std::ops::DerefMut for Apis {
    fn deref_mut(&mut self) -> &mut [Shared<Api>] {
        &mut self.each[..usize::from(self.len)]
    }
}

impl<'a> IntoIterator for &'a Apis {
    type Item = &'a Shared<Api>;
    type IntoIter = std::slice::Iter<'a, Shared<Api>>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// One API instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Api {
    pub up: bool,
    /// The in-process map of the in-memory-store pitfall (a HashMap in the narrative).
    pub memory: VecMap<String, Stored>,
    pub handling: VecMap<ReqId, Handling>,
    /// The outbox's relay was woken while it ran: it polls again before it stops.
    pub relay_again: bool,
    /// The relay's next poll.
    pub relay_timer: Option<EventKey>,
}

impl Api {
    pub(crate) fn new() -> Api {
        Api {
            up: true,
            memory: VecMap::new(),
            handling: VecMap::new(),
            relay_again: false,
            relay_timer: None,
        }
    }

    /// A request arrived; the world numbered it `rid`.
    pub(crate) fn receive(&mut self, node: NodeId, rid: ReqId, req: Request, out: &mut Out) {
        out.happen(Happening::Phase {
            node,
            req: rid,
            phase: Phase::Receive,
        });
        self.start(node, rid, req, out);
    }

    /// The outbox's relay, a task of this process, is woken (after a commit, a
    /// restart, or its own failure): it reads the outbox and sends what it
    /// finds, numbered `rid`, unless it is running already (then it reads the
    /// outbox again before it stops). Returns whether it started.
    pub(crate) fn wake_relay(&mut self, node: NodeId, rid: ReqId, out: &mut Out) -> bool {
        out.cancel(self.relay_timer.take());
        let running = self.handling.values().any(Handling::is_relay);
        self.relay_again |= running;
        if running || !self.up {
            return false;
        }
        let req = Request {
            body: crate::http::Body::Relay,
            key: None,
            user: 0,
            op: 0,
            attempt: 0,
            lane: 0,
            sent: out.now,
        };
        self.start(node, rid, req, out);
        true
    }

    fn start(&mut self, node: NodeId, rid: ReqId, req: Request, out: &mut Out) {
        let relay = matches!(req.body, crate::http::Body::Relay);
        // A handling is 280 bytes: the map grows by one, not to four (the
        // explorer's `World::wait` gave back the doubled room at every state).
        self.handling.reserve_exact_one();
        self.handling.insert(rid, Handling::new(node, rid, req));
        // A request may commit a receipt to the outbox: the relay polls while
        // the process has work (it is not only woken by the handler that
        // commits, whose wake a lost answer or a crash can cut off).
        if !relay && node.is_api() && out.cfg.api.relay {
            self.poll_later(node, out);
        }
        self.advance(rid, Input::Start, out);
    }

    /// A reply to request `rid`'s call out arrived.
    pub(crate) fn reply(&mut self, rid: ReqId, p: Payload, out: &mut Out) {
        let deadline = self.handling.get_mut(&rid).and_then(|h| h.deadline.take());
        out.cancel(deadline);
        let input = match p {
            Payload::RedisReply(r) => Input::Redis(Arc::unwrap_or_clone(r).1),
            Payload::SqlReply(r) => Input::Sql(Arc::unwrap_or_clone(r).1),
            Payload::ChargeReply { charge, replayed } => Input::Charged(charge, replayed),
            Payload::ChargeRefused { code } => Input::Refused(code),
            Payload::ChargeFound { charge } => Input::Found(charge),
            Payload::ChargeList { charges } => Input::Listed(charges),
            Payload::EmailAck { .. } => Input::Emailed,
            _ => return,
        };
        self.advance(rid, input, out);
    }

    /// Whether the deadline with `token` is request `rid`'s current one (if so it
    /// is spent: the world closes the request's connection, then [`Api::timed_out`]).
    pub(crate) fn deadline_due(&mut self, rid: ReqId, token: u32) -> bool {
        match self.handling.get_mut(&rid) {
            Some(h) if h.token == token => {
                h.deadline = None;
                true
            }
            _ => false,
        }
    }

    pub(crate) fn timed_out(&mut self, rid: ReqId, out: &mut Out) {
        self.advance(rid, Input::Timeout, out);
    }

    /// Feeds a handler the result of its last call and runs it to its next call out.
    fn advance(&mut self, rid: ReqId, mut input: Input, out: &mut Out) {
        loop {
            let Some(h) = self.handling.get_mut(&rid) else {
                return;
            };
            let (node, task) = (h.node, h.is_task());
            let cfg = out.cfg;
            let act = handlers::rules(h, input, &cfg.api, &mut self.memory, out);
            let call = match act {
                Move::Go(phase, call) => {
                    if !self.enter(rid, phase, out) {
                        return;
                    }
                    call
                }
                Move::Respond(status, reply, replayed) => {
                    if task || self.enter(rid, Phase::Reply, out) {
                        self.respond(rid, status, reply, replayed, out);
                    }
                    return;
                }
            };
            match call {
                Call::Local(next) => {
                    // The in-process map: no message, but the trace shows the lookup or the write.
                    let key = self.handling[&rid]
                        .req
                        .key
                        .map(|k| k.to_string())
                        .unwrap_or_default();
                    let hit = match &next {
                        Input::Memory(found) => Some(found.is_some()),
                        _ => None,
                    };
                    if matches!(next, Input::Memory(_) | Input::Stored) {
                        out.happen(Happening::Memory { node, key, hit });
                    }
                    input = next
                }
                Call::Redis(cmd) => {
                    return self.call(rid, NodeId::Redis, Payload::RedisCmd(Arc::new(cmd)), out)
                }
                Call::Sql(stmt) => {
                    return self.call(rid, NodeId::Postgres, Payload::Sql(Arc::new(stmt)), out)
                }
                Call::Charge(amount, key) => {
                    let op = self.handling[&rid].req.op;
                    let p = Payload::Charge { amount, key, op };
                    return self.call(rid, NodeId::Processor, p, out);
                }
                Call::FindCharge(key) => {
                    let p = Payload::FindCharge { key };
                    return self.call(rid, NodeId::Processor, p, out);
                }
                Call::ListCharges => {
                    return self.call(rid, NodeId::Processor, Payload::ListCharges, out)
                }
                Call::Email(id, payment) => {
                    return self.call(rid, NodeId::Mail, Payload::Email { id, payment }, out)
                }
            }
        }
    }

    /// Moves a handler into `phase`, unless its node crashes first. Returns false on a crash.
    fn enter(&mut self, rid: ReqId, phase: Phase, out: &mut Out) -> bool {
        let Some(h) = self.handling.get_mut(&rid) else {
            return false;
        };
        if out.crash_due(h.node, Some(h.phase)) {
            return false;
        }
        h.phase = phase;
        out.happen(Happening::Phase {
            node: h.node,
            req: rid,
            phase,
        });
        true
    }

    fn call(&mut self, rid: ReqId, to: NodeId, p: Payload, out: &mut Out) {
        let Some(h) = self.handling.get_mut(&rid) else {
            return;
        };
        h.token += 1;
        let (node, token) = (h.node, h.token);
        out.send(node, to, p, Some(rid));
        let k = out.timer(
            out.now + STORE_DEADLINE,
            Event::Deadline {
                node,
                req: rid,
                token,
            },
        );
        if let Some(h) = self.handling.get_mut(&rid) {
            h.deadline = Some(k);
        }
    }

    fn respond(&mut self, rid: ReqId, status: u16, reply: Reply, replayed: bool, out: &mut Out) {
        let Some(h) = self.handling.remove(&rid) else {
            return;
        };
        if matches!(h.req.body, crate::http::Body::Reconcile) {
            // The job answers no one; its next run is on its timer.
            return;
        }
        if h.is_relay() {
            // The relay stops: it reads the outbox again if it was woken
            // meanwhile; it polls again in a second after a failure, after a
            // receipt it sent, or while its process handles a request; it
            // sleeps once a poll finds the outbox empty and the process idle
            // (a request that arrives wakes it).
            let busy = !self.handling.is_empty() || h.payment.is_some() || status != 200;
            if std::mem::take(&mut self.relay_again) && status == 200 {
                self.wake_relay(h.node, rid, out);
            } else if busy {
                self.poll_later(h.node, out);
            }
            return;
        }
        out.happen(Happening::Responded {
            node: h.node,
            status,
            replayed,
            error: match &reply {
                Reply::Error(code) => Some(*code),
                _ => None,
            },
        });
        let resp = Response {
            status,
            reply,
            replayed,
            op: h.req.op,
            attempt: h.req.attempt,
            lane: h.req.lane,
        };
        out.send(h.node, NodeId::Client, Payload::Response(resp), None);
    }

    /// The relay's next poll, in [`RELAY_POLL`], unless one is set.
    fn poll_later(&mut self, node: NodeId, out: &mut Out) {
        let running = self.handling.values().any(Handling::is_relay);
        if self.relay_timer.is_none() && !running {
            self.relay_timer = Some(out.timer(out.now + RELAY_POLL, Event::Relay(node)));
        }
    }

    /// The reconciliation job's process starts a run, numbered `rid`, unless
    /// one is still going. Returns whether it started.
    pub(crate) fn run_job(&mut self, node: NodeId, rid: ReqId, out: &mut Out) -> bool {
        if !self.handling.is_empty() || !self.up {
            return false;
        }
        let req = Request {
            body: crate::http::Body::Reconcile,
            key: None,
            user: crate::scenario::USER_ID,
            op: 0,
            attempt: 0,
            lane: 0,
            sent: out.now,
        };
        self.start(node, rid, req, out);
        true
    }

    /// The process dies: its map and its requests are gone. Returns each
    /// request with its pending deadline, for the world to cancel and to
    /// close its database connection.
    pub(crate) fn crash(&mut self) -> VecMap<ReqId, Handling> {
        self.up = false;
        self.memory.clear();
        self.relay_again = false;
        std::mem::take(&mut self.handling)
    }
}
