//! The card processor (a PSP such as Stripe). It honours an idempotency key
//! when the API passes one: the same key gets the original charge back, and
//! a reused key with other parameters is refused.

use crate::http::{ErrorCode, OpId};
use crate::net::{NodeId, Payload, ReqId};
use crate::out::Out;
use crate::time::Millis;
use crate::timing::KEY_RETENTION;
use crate::trace::Happening;
use crate::vecmap::VecMap;

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

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Processor {
    pub charges: Vec<Charge>,
    pub by_key: VecMap<String, usize>,
}

impl Processor {
    pub fn total(&self) -> i64 {
        self.charges.iter().map(|c| c.amount).sum()
    }

    /// The money taken for client operation `op` (a refund's is negative).
    pub fn taken_for(&self, op: OpId) -> i64 {
        self.charges
            .iter()
            .filter(|c| c.op == op)
            .map(|c| c.amount)
            .sum()
    }

    /// `GET /charges?key=…` arrived from `from`: the charge made with this key,
    /// if any. A search, not an idempotent replay: it finds a charge whose key
    /// the processor no longer deduplicates (reconciliation asks it so).
    pub(crate) fn on_find(&self, from: NodeId, req: Option<ReqId>, key: String, out: &mut Out) {
        let charge = self
            .charges
            .iter()
            .find(|c| c.key.as_deref() == Some(key.as_str()))
            .map(|c| (c.id.clone(), c.amount));
        out.send(
            NodeId::Processor,
            from,
            Payload::ChargeFound { charge },
            req,
        );
    }

    /// `GET /charges` arrived from `from`: every charge, with its amount and key.
    pub(crate) fn on_list(&self, from: NodeId, req: Option<ReqId>, out: &mut Out) {
        let p = Payload::ChargeList {
            charges: self.charges.clone(),
        };
        out.send(NodeId::Processor, from, p, req);
    }

    /// A charge request arrived from `from`.
    pub(crate) fn on_charge(
        &mut self,
        from: NodeId,
        req: Option<ReqId>,
        (amount, key, op): (i64, Option<String>, OpId),
        out: &mut Out,
    ) {
        // A key older than the retention period is forgotten.
        let charges = &self.charges;
        self.by_key
            .retain(|_, i| out.now < charges[*i].at + KEY_RETENTION);
        let known = key.as_ref().and_then(|k| self.by_key.get(k)).copied();
        if known.is_some_and(|i| self.charges[i].amount != amount) {
            // A processor checks a reused key's parameters, as Stripe does.
            let p = Payload::ChargeRefused {
                code: ErrorCode::IdempotencyKeyReused,
            };
            out.send(NodeId::Processor, from, p, req);
            return;
        }
        let (charge, replayed) = match known {
            Some(i) => (self.charges[i].id.clone(), true),
            None => {
                // A negative amount is a refund.
                let kind = if amount < 0 { "re" } else { "ch" };
                let id = format!("{kind}_{}", self.charges.len() + 1);
                self.charges.push(Charge {
                    id: id.clone(),
                    amount,
                    key: key.clone(),
                    at: out.now,
                    op,
                });
                if let Some(k) = &key {
                    self.by_key.insert(k.clone(), self.charges.len() - 1);
                }
                (id, false)
            }
        };
        out.happen(Happening::Charged {
            charge: charge.clone(),
            amount,
            key,
            replayed,
        });
        let p = Payload::ChargeReply { charge, replayed };
        out.send(NodeId::Processor, from, p, req);
    }
}
