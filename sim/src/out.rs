//! The outbox a node writes its effects into: messages to send, timers to
//! set or cancel, what happened for the trace, and whether it crashes. A
//! node owns its own state and reaches no other node; the world lends it an
//! `Out` over the network, the clock and the fault model, and routes.
//!
//! Effects are applied as they are written, in order, so every random draw
//! (a link's latency, a random fault) comes in the same order as the node's
//! own, and nothing is collected per step: no buffer to allocate.

use crate::db::Stmt;
use crate::http::OpId;
use crate::net::{
    Fate, FaultRule, LossCause, Msg, MsgId, NodeId, Payload, RandomFaults, ReqId, Verdict,
};
use crate::node::config::NodeConfig;
use crate::rng::Rng;
use crate::scenario::{Phase, Scenario, Toggles};
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
    /// A message arrives at its node (its `Deliver` fired and it was not lost).
    Arrive(Box<Msg>),
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
    pub toggles: Toggles,
    /// The switches, resolved per node when the world was made.
    pub cfg: &'a NodeConfig,
    pub random: RandomFaults,
    pub rng: &'a mut Rng,
    pub(crate) queue: &'a mut VecMap<EventKey, Event>,
    pub(crate) seq: &'a mut u64,
    pub(crate) msgs: &'a mut VecMap<MsgId, Msg>,
    pub(crate) next_msg: &'a mut u32,
    pub(crate) faults: &'a mut Vec<FaultRule>,
    pub(crate) crashes_left: &'a mut [u32],
    pub(crate) random_crashes: &'a mut u32,
    /// The decisive moment has come (once per run).
    pub(crate) decisive: &'a mut bool,
    /// Money the world meant to take from the account.
    pub(crate) intended_debits: &'a mut i64,
    /// Payment ids, one sequence for every API instance.
    pub(crate) next_payment: &'a mut u32,
    /// The load balancer's next instance, and which instances are up (a bit each).
    pub(crate) lb: &'a mut u8,
    pub(crate) apis_up: u32,
    pub(crate) apis: u8,
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

    /// A ledger row's id: `pay_N`, or `re_N` for a refund (money going back),
    /// as the processor names its refund.
    pub fn new_payment_id(&mut self, amount: i64) -> String {
        let kind = if amount < 0 { "re" } else { "pay" };
        let id = format!("{kind}_{}", *self.next_payment);
        *self.next_payment += 1;
        id
    }

    /// A message is on its way to `to`.
    pub fn in_flight_to(&self, to: NodeId) -> bool {
        self.msgs.values().any(|m| m.to == to)
    }

    /// Round-robin over the instances that are up (all down: the next one, and the request is lost).
    pub fn pick_api(&mut self) -> u8 {
        let n = self.apis;
        for k in 0..n {
            let i = (*self.lb + k) % n;
            if self.apis_up & (1 << i) != 0 {
                *self.lb = (i + 1) % n;
                return i;
            }
        }
        let i = *self.lb;
        *self.lb = (i + 1) % n;
        i
    }

    /// Whether `node`, about to leave `prev`, crashes: a crash rule of the
    /// scenario, or a random crash. If so, the world crashes it when it returns.
    pub fn crash_due(&mut self, node: NodeId, prev: Option<Phase>) -> bool {
        let toggles = self.toggles;
        let left = &*self.crashes_left;
        let rule = self.scenario.crashes.iter().enumerate().position(|(i, c)| {
            c.node == node
                && Some(c.after) == prev
                && left[i] > 0
                && c.if_toggle.is_none_or(|(t, on)| toggles.has(t) == on)
        });
        let rf = self.random;
        let random =
            rf.crash > 0 && *self.random_crashes < rf.max_crashes && self.rng.chance(rf.crash);
        if let Some(i) = rule {
            self.crashes_left[i] -= 1;
        }
        if rule.is_some() || random {
            if random && rule.is_none() {
                *self.random_crashes += 1;
            }
            self.crash = Some(node);
            return true;
        }
        false
    }

    /// Sends a message: its latency, the fault rules and random faults decide
    /// when it arrives and whether it is lost or duplicated.
    pub fn send(&mut self, from: NodeId, to: NodeId, payload: Payload, req: Option<ReqId>) {
        let lat = self.scenario.links.between(from, to);
        let mut arrives_at = self.now + Millis(lat.base + self.rng.below(lat.jitter + 1));
        let id = MsgId(*self.next_msg);
        *self.next_msg += 1;
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
        let rf = self.random;
        if mobile && rf.loss > 0 && self.rng.chance(rf.loss) {
            msg.fate = Fate::Lost(LossCause::Random);
        }
        if from == NodeId::Client && rf.duplicate > 0 && self.rng.chance(rf.duplicate) {
            duplicate = Some(Millis(1 + self.rng.below(50)));
        }
        msg.arrives_at = arrives_at;
        self.sent(&msg);
        if let Some(after) = duplicate {
            let copy = MsgId(*self.next_msg);
            *self.next_msg += 1;
            let c = Msg {
                id: copy,
                arrives_at: arrives_at + after,
                fate: Fate::Deliver,
                ..msg.clone()
            };
            self.hs.push(Happening::Duplicated { msg: id, copy });
            self.sent(&c);
            self.timer(c.arrives_at, Event::Deliver(copy));
            self.msgs.insert(copy, c);
        }
        self.timer(arrives_at, Event::Deliver(id));
        self.msgs.insert(id, msg);
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
