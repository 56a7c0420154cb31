//! An API instance: the requests it is handling and its in-process map. Its
//! runtime feeds a handler the result of its last call, runs the rules
//! (`node::handlers`) to the next call out, sends it with a deadline, and
//! sends the response when the rules answer.

use crate::http::{Reply, Request, Response};
use crate::net::{NodeId, Payload, ReqId};
use crate::node::handlers;
use crate::node::rules::{Act, Call, Handling, Input, Stored};
use crate::out::{Event, Out};
use crate::scenario::Phase;
use crate::time::Millis;
use crate::trace::Happening;
use crate::vecmap::VecMap;

/// How long a handler waits for a store or the processor before it answers 503.
const STORE_DEADLINE: Millis = Millis(3_000);

/// One API instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Api {
    pub up: bool,
    /// The in-process map of the in-memory-store pitfall (a HashMap in the narrative).
    pub memory: VecMap<String, Stored>,
    pub handling: VecMap<ReqId, Handling>,
}

impl Api {
    pub(crate) fn new() -> Api {
        Api {
            up: true,
            memory: VecMap::new(),
            handling: VecMap::new(),
        }
    }

    /// A request arrived; the world numbered it `rid`.
    pub(crate) fn receive(&mut self, node: NodeId, rid: ReqId, req: Request, out: &mut Out) {
        let h = Handling {
            node,
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
            failed: false,
        };
        self.handling.insert(rid, h);
        out.happen(Happening::Phase {
            node,
            req: rid,
            phase: Phase::Receive,
        });
        self.advance(rid, Input::Start, out);
    }

    /// A reply to request `rid`'s call out arrived.
    pub(crate) fn reply(&mut self, rid: ReqId, p: Payload, out: &mut Out) {
        let deadline = self.handling.get_mut(&rid).and_then(|h| h.deadline.take());
        out.cancel(deadline);
        let input = match p {
            Payload::RedisReply(_, r) => Input::Redis(r),
            Payload::SqlReply(_, o) => Input::Sql(o),
            Payload::ChargeReply { charge, replayed } => Input::Charged(charge, replayed),
            Payload::ChargeRefused { code } => Input::Refused(code),
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
            let node = h.node;
            let act = handlers::rules(h, input, &mut self.memory, out);
            let call = match act {
                Act::Go(phase, call) => {
                    if !self.enter(rid, phase, out) {
                        return;
                    }
                    call
                }
                Act::Respond(status, reply, replayed) => {
                    if self.enter(rid, Phase::Reply, out) {
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
                    return self.call(rid, NodeId::Redis, Payload::RedisCmd(cmd), out)
                }
                Call::Sql(stmt) => {
                    return self.call(rid, NodeId::Postgres, Payload::Sql(stmt), out)
                }
                Call::Charge(amount, key) => {
                    let op = self.handling[&rid].req.op;
                    let p = Payload::Charge { amount, key, op };
                    return self.call(rid, NodeId::Processor, p, out);
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
        out.happen(Happening::Responded {
            node: h.node,
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
        out.send(h.node, NodeId::Client, Payload::Response(resp), None);
    }

    /// The process dies: its map and its requests are gone. Returns each
    /// request with its pending deadline, for the world to cancel and to
    /// close its database connection.
    pub(crate) fn crash(&mut self) -> VecMap<ReqId, Handling> {
        self.up = false;
        self.memory.clear();
        std::mem::take(&mut self.handling)
    }
}
