//! The mail service (an email provider). It sends the customer what the API
//! asks it to. Like the card processor with a key, it honours a message id
//! when it is given one: an id it has sent already is acknowledged and not
//! sent again (the outbox's relay sends at least once, so it needs that).

use crate::net::{NodeId, Payload, ReqId};
use crate::out::Out;
use crate::trace::Happening;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Mail {
    /// The receipts the customer received, in order: the payment of each.
    pub sent: Vec<String>,
    /// The message ids it has sent.
    pub ids: Vec<String>,
}

impl Mail {
    /// A request to send a receipt arrived from `from`.
    pub(crate) fn on_email(
        &mut self,
        from: NodeId,
        req: Option<ReqId>,
        (id, payment): (Option<String>, String),
        out: &mut Out,
    ) {
        let duplicate = id.as_ref().is_some_and(|i| self.ids.contains(i));
        if !duplicate {
            self.ids.extend(id);
            self.sent.push(payment.clone());
        }
        out.happen(Happening::Emailed { payment, duplicate });
        out.send(NodeId::Mail, from, Payload::EmailAck { duplicate }, req);
    }
}
