//! The outbox a node writes its effects into: messages to send, timers to
//! set or cancel, what happened for the trace, and whether it crashes. A
//! node owns its own state and reaches no other node; the world lends it an
//! `Out` with the clock and the world's network ([`Net`]), which routes
//! each message and decides its fate.
//!
//! Effects are applied as they are written, in order, so every random draw
//! (a link's latency, a random fault) comes in the same order as the node's
//! own, and nothing is collected per step: no buffer to allocate.

use crate::db::Stmt;
use crate::http::OpId;
use crate::net::{Msg, MsgId, NodeId, Payload, ReqId};
use crate::network::Net;
use crate::node::config::NodeConfig;
use crate::scenario::{Phase, Scenario};
use crate::shared::Shared;
use crate::time::Millis;
use crate::trace::Happening;
use crate::vecmap::VecMap;

/// What happens: something scheduled on the virtual clock (a message's
/// delivery, a timer), or what the world hands a node to react to at once
/// (a message that arrived, a command's effect). The one enum of both: the
/// world queues the first kind and fires each event, a node reacts to it.
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
    /// The app asks what became of an operation it stopped retrying.
    ClientCheck {
        op: OpId,
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
    /// The outbox's relay of this API instance polls the outbox (every
    /// second while there is work, and again after a failure).
    Relay(NodeId),
    /// The broker's session timeout on the record it delivered last.
    SessionTimeout,
    /// The consumer's statement timeout on request `.0`'s last statement.
    StatementTimeout(ReqId),
    // Never queued: the world hands these to a node as they happen.
    /// A message arrives at its node (its `Deliver` fired and it was not lost),
    /// as it was in flight: taken out of its `Shared` only by the node's
    /// reaction, not copied into a box of its own on the way.
    Arrive(Shared<Msg>),
    /// The client plans its next attempt after a timeout that counts.
    PlanRetry {
        op: OpId,
        lane: usize,
    },
    /// The reader's parallel copies.
    Parallel(u32),
    /// Another writer's statement.
    External(Box<Stmt>),
    /// A request's database connection closes.
    Disconnect(ReqId),
    /// The broker may feed an idle consumer.
    Pump,
    /// Queued, appended so the others hash as before: the reconciliation
    /// job's next run (`node::reconciler`). It does not keep a run going
    /// ([`crate::World::is_quiet`]).
    Reconcile,
}

/// A queued event's place: (time, sequence number).
pub type EventKey = (Millis, u64);

/// Queues `ev` at `at`, numbered by `seq`: the one way an event is queued,
/// by a node ([`Out::timer`]) or by the world. Its key cancels it.
pub(crate) fn schedule(
    queue: &mut VecMap<EventKey, Event>,
    seq: &mut u64,
    at: Millis,
    ev: Event,
) -> EventKey {
    *seq += 1;
    queue.insert((at, *seq), ev);
    (at, *seq)
}

/// Cancels a queued event that is no longer wanted, so the queue holds only live events.
pub(crate) fn cancel(queue: &mut VecMap<EventKey, Event>, key: Option<EventKey>) {
    if let Some(k) = key {
        queue.remove(&k);
    }
}

/// What a node may do besides changing its own state (see the module's doc).
pub struct Out<'a> {
    pub now: Millis,
    /// The run keeps a trace (the explorer's worlds skip its texts and copies).
    pub traced: bool,
    pub scenario: &'a Scenario,
    /// The switches, resolved per node when the world was made.
    pub cfg: &'a NodeConfig,
    /// The world's network and fault model, which the node asks (routing,
    /// the load balancer, payment ids, crash rules, the world's generator).
    pub net: Net<'a>,
    pub(crate) queue: &'a mut VecMap<EventKey, Event>,
    pub(crate) seq: &'a mut u64,
    /// The decisive moment has come (once per run).
    pub(crate) decisive: &'a mut bool,
    /// Money the world meant to take from the account.
    pub(crate) intended_debits: &'a mut i64,
    pub hs: &'a mut Vec<Happening>,
    /// A node that must crash now: the world crashes it once the node returns.
    pub crash: Option<NodeId>,
    /// A handler committed a message to the outbox: the world wakes this
    /// instance's relay once the node returns.
    pub relay: Option<NodeId>,
}

impl Out<'_> {
    pub fn happen(&mut self, h: Happening) {
        self.hs.push(h);
    }

    /// Sets a timer; its key cancels it.
    pub fn timer(&mut self, at: Millis, ev: Event) -> EventKey {
        schedule(self.queue, self.seq, at, ev)
    }

    /// Cancels a timer that is no longer wanted.
    pub fn cancel(&mut self, key: Option<EventKey>) {
        cancel(self.queue, key)
    }

    /// The decisive moment: a retry or a duplicate is sent, a record is redelivered.
    pub fn decisive(&mut self) {
        if !*self.decisive {
            *self.decisive = true;
            self.hs.push(Happening::Decisive);
        }
    }

    pub fn intend_debit(&mut self, amount: i64) {
        *self.intended_debits += amount;
    }

    /// Whether `node`, about to leave `prev`, crashes (the network's crash
    /// rules, [`Net::crash_due`]). If so, the world crashes it when it returns.
    pub fn crash_due(&mut self, node: NodeId, prev: Option<Phase>) -> bool {
        let due = self.net.crash_due(node, prev);
        if due {
            self.crash = Some(node);
        }
        due
    }

    /// Sends a message: the network routes it and decides its fate
    /// ([`Net::route`]); it goes on the wire with its delivery queued, and
    /// its copy first where the network duplicates it.
    pub fn send(&mut self, from: NodeId, to: NodeId, payload: Payload, req: Option<ReqId>) {
        let (msg, duplicate) = self.net.route(self.now, (from, to), payload, req);
        self.sent(&msg);
        if let Some(after) = duplicate {
            let c = self.net.copy(&msg, after);
            self.hs.push(Happening::Duplicated {
                msg: msg.id,
                copy: c.id,
            });
            self.sent(&c);
            self.timer(c.arrives_at, Event::Deliver(c.id));
            self.net.put(c);
        }
        self.timer(msg.arrives_at, Event::Deliver(msg.id));
        self.net.put(msg);
    }

    fn sent(&mut self, m: &Msg) {
        self.hs.push(Happening::Sent {
            msg: m.id,
            from: m.from,
            to: m.to,
            label: self.label(&m.payload),
            kind: m.payload.kind(),
            arrives_at: m.arrives_at,
            fate: m.fate,
        });
    }

    /// A message's label for the trace (empty in an untraced world).
    pub fn label(&self, p: &Payload) -> String {
        if self.traced {
            p.label()
        } else {
            String::new()
        }
    }
}
