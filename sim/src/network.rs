//! The world's network and fault model, lent to a node with its outbox
//! ([`crate::out::Out::net`]), as turmoil's `Net`: it routes (each link's
//! latency, the load balancer over the API instances that are up), decides
//! a message's fate when it is sent (the fault rules' verdicts, random
//! losses and duplicates), numbers messages and payments, and keeps the
//! scenario's crash rules. Its state is the world's, borrowed field by field;
//! a node asks it, and its outbox records what follows.

use crate::net::{
    Fate, FaultRule, LossCause, Msg, MsgId, NodeId, Payload, RandomFaults, ReqId, Verdict,
};
use crate::rng::Rng;
use crate::scenario::{Phase, Scenario, Toggles};
use crate::shared::Shared;
use crate::time::Millis;
use crate::vecmap::VecMap;

/// The fault model's state: the scripted rules still armed, the scripted
/// crashes left, and the random crashes so far.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Armed {
    /// Fault rules still armed.
    pub faults: Vec<FaultRule>,
    /// How many more times each of the scenario's crash rules fires.
    pub(crate) crashes_left: Vec<u32>,
    pub(crate) random_crashes: u32,
}

/// The network as a node's reaction sees it (see the module's doc).
pub struct Net<'a> {
    pub(crate) scenario: &'a Scenario,
    pub(crate) toggles: Toggles,
    pub(crate) random: RandomFaults,
    /// The world's one generator: a link's latency and a random fault draw
    /// from it in the order the nodes send.
    pub rng: &'a mut Rng,
    pub(crate) msgs: &'a mut VecMap<MsgId, Shared<Msg>>,
    pub(crate) next_msg: &'a mut u32,
    /// Written only when a fault fires: the world's copies share it until then.
    pub(crate) armed: &'a mut Shared<Armed>,
    /// Payment ids, one sequence for every API instance.
    pub(crate) next_payment: &'a mut u32,
    /// The load balancer's next instance, and which instances are up (a bit each).
    pub(crate) lb: &'a mut u8,
    pub(crate) apis_up: u32,
    pub(crate) apis: u8,
}

impl Net<'_> {
    /// A ledger row's id: `pay_N`, or `re_N` for a refund (money going back),
    /// as the processor names its refund.
    pub fn payment_id(&mut self, amount: i64) -> String {
        let kind = if amount < 0 { "re" } else { "pay" };
        let id = format!("{kind}_{}", *self.next_payment);
        *self.next_payment += 1;
        id
    }

    /// A message is on its way to `to`.
    pub fn in_flight_to(&self, to: NodeId) -> bool {
        self.msgs.values().any(|m| m.to == to)
    }

    /// The load balancer: round-robin over the instances that are up (all
    /// down: the next one, and the request is lost).
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
    /// scenario, or a random crash.
    pub fn crash_due(&mut self, node: NodeId, prev: Option<Phase>) -> bool {
        let toggles = self.toggles;
        let left = &self.armed.crashes_left;
        let rule = self.scenario.crashes.iter().enumerate().position(|(i, c)| {
            c.node == node
                && Some(c.after) == prev
                && left[i] > 0
                && c.if_toggle.is_none_or(|(t, on)| toggles.has(t) == on)
        });
        let rf = self.random;
        let random =
            rf.crash > 0 && self.armed.random_crashes < rf.max_crashes && self.rng.chance(rf.crash);
        if let Some(i) = rule {
            self.armed.crashes_left[i] -= 1;
        }
        if random && rule.is_none() {
            self.armed.random_crashes += 1;
        }
        rule.is_some() || random
    }

    /// A message sent at `now`: its link's latency, the fault rules and random
    /// faults decide when it arrives and whether it is lost or duplicated.
    /// Returns it, numbered, and its duplicate's delay (the copy is numbered
    /// by [`Net::copy`]).
    pub fn route(
        &mut self,
        now: Millis,
        (from, to): (NodeId, NodeId),
        payload: Payload,
        req: Option<ReqId>,
    ) -> (Msg, Option<Millis>) {
        let lat = self.scenario.links.between(from, to);
        let mut arrives_at = now + Millis(lat.base + self.rng.below(lat.jitter + 1));
        let id = MsgId(*self.next_msg);
        *self.next_msg += 1;
        let mut msg = Msg {
            id,
            from,
            to,
            payload,
            req,
            sent_at: now,
            arrives_at,
            fate: Fate::Deliver,
        };
        let mut duplicate = None;
        if let Some(i) = self
            .armed
            .faults
            .iter()
            .position(|f| f.matcher.matches(&msg))
        {
            let faults = &mut self.armed.faults;
            let rule = &mut faults[i];
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
                    faults.remove(i);
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
        (msg, duplicate)
    }

    /// A copy of `msg` that arrives `after` it, delivered whatever `msg`'s fate.
    pub fn copy(&mut self, msg: &Msg, after: Millis) -> Msg {
        let id = MsgId(*self.next_msg);
        *self.next_msg += 1;
        Msg {
            id,
            arrives_at: msg.arrives_at + after,
            fate: Fate::Deliver,
            ..msg.clone()
        }
    }

    /// `msg` is on the wire (its delivery is queued).
    pub(crate) fn put(&mut self, msg: Msg) {
        self.msgs.insert(msg.id, Shared::new(msg));
    }
}
