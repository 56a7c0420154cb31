//! Nodes, messages and the faults that befall them. Every message travels a
//! link with a latency; a fault rule decides its fate when it is sent
//! (delivered, lost, duplicated or delayed), and the reader can lose a
//! message while it is in flight. A lost message still travels: it fails
//! where it would have arrived, so the page can draw it breaking off.

use crate::db::{Outcome, Stmt};
use crate::http::{ErrorCode, Request, Response};
use crate::redis;
use crate::time::Millis;
use std::fmt;
use std::sync::Arc;

/// A node of the topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeId {
    Client,
    /// API instance `0`, `1`, … behind a round-robin load balancer.
    Api(u8),
    Redis,
    Postgres,
    Processor,
    Broker,
    Consumer,
    /// The mail service (an email provider): it sends the customer receipts.
    Mail,
    /// The reconciliation job (`node::reconciler`): a process of its own.
    Reconciler,
}

impl NodeId {
    /// A stable identifier for URLs, test ids and CSS: `client`, `api-a`, `redis`…
    pub fn slug(self) -> String {
        match self {
            NodeId::Client => "client".into(),
            NodeId::Api(i) => format!("api-{}", (b'a' + i) as char),
            NodeId::Redis => "redis".into(),
            NodeId::Postgres => "postgres".into(),
            NodeId::Processor => "processor".into(),
            NodeId::Broker => "broker".into(),
            NodeId::Consumer => "consumer".into(),
            NodeId::Mail => "mail".into(),
            NodeId::Reconciler => "reconciler".into(),
        }
    }

    /// The node with this slug (the inverse of [`NodeId::slug`]).
    pub fn from_slug(s: &str) -> Option<NodeId> {
        Some(match s {
            "client" => NodeId::Client,
            "redis" => NodeId::Redis,
            "postgres" => NodeId::Postgres,
            "processor" => NodeId::Processor,
            "broker" => NodeId::Broker,
            "consumer" => NodeId::Consumer,
            "mail" => NodeId::Mail,
            "reconciler" => NodeId::Reconciler,
            _ => {
                let letter = s.strip_prefix("api-")?.as_bytes();
                match letter {
                    [c @ b'a'..=b'z'] => NodeId::Api(c - b'a'),
                    _ => return None,
                }
            }
        })
    }

    pub fn is_api(self) -> bool {
        matches!(self, NodeId::Api(_))
    }

    /// Nodes that run our code and so can crash and restart.
    pub fn can_crash(self) -> bool {
        matches!(self, NodeId::Api(_) | NodeId::Consumer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_round_trip() {
        for n in [
            NodeId::Client,
            NodeId::Api(0),
            NodeId::Api(2),
            NodeId::Redis,
            NodeId::Consumer,
            NodeId::Mail,
            NodeId::Reconciler,
        ] {
            assert_eq!(NodeId::from_slug(&n.slug()), Some(n));
        }
        assert_eq!(NodeId::from_slug("api-"), None);
        assert_eq!(NodeId::from_slug("api-ab"), None);
        assert_eq!(NodeId::from_slug("nope"), None);
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeId::Client => f.write_str("client"),
            NodeId::Api(i) => write!(f, "api-{}", (b'a' + i) as char),
            NodeId::Redis => f.write_str("redis"),
            NodeId::Postgres => f.write_str("postgres"),
            NodeId::Processor => f.write_str("processor"),
            NodeId::Broker => f.write_str("broker"),
            NodeId::Consumer => f.write_str("consumer"),
            NodeId::Mail => f.write_str("mail"),
            NodeId::Reconciler => f.write_str("reconciler"),
        }
    }
}

/// Identifies a message for the whole run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MsgId(pub u32);

/// Correlates a store call and its reply with the request handler that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReqId(pub u32);

/// What a message carries.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Payload {
    Request(Request),
    Response(Response),
    /// Shared (`Arc`), as a statement is (see `Sql`): the largest payloads,
    /// and a message is as large as its largest. Hashed as the command.
    RedisCmd(Arc<redis::Cmd>),
    RedisReply(Arc<(Arc<redis::Cmd>, redis::Reply)>),
    /// Shared (`Arc`), as the reply's copy of it: a message delivered in one
    /// of the explorer's copies of a world is taken out of the copy it shares
    /// with the others, and the statement, echoed in the reply, was copied
    /// twice per call (each copy a few allocations). Hashed as the statement.
    Sql(Arc<Stmt>),
    SqlReply(Arc<(Arc<Stmt>, Outcome)>),
    Charge {
        amount: i64,
        key: Option<String>,
        op: usize,
    },
    ChargeReply {
        charge: String,
        replayed: bool,
    },
    /// The processor refused: this key was used for a charge with other parameters.
    ChargeRefused {
        code: ErrorCode,
    },
    /// `GET /charges?key=…`: the charge made with this key, if any (kept after
    /// the key's idempotency is forgotten, as a charge's metadata is).
    FindCharge {
        key: String,
    },
    /// The charge found, with its amount, or none.
    ChargeFound {
        charge: Option<(String, i64)>,
    },
    /// `GET /charges`: every charge made (the reconciliation job's list).
    ListCharges,
    /// The charges, each with its amount and key.
    ChargeList {
        charges: Vec<crate::node::processor::Charge>,
    },
    Produce {
        producer: u32,
        seq: u32,
        msg_id: String,
        amount: i64,
    },
    ProduceAck {
        seq: u32,
        duplicate: bool,
    },
    Deliver {
        offset: u64,
        msg_id: String,
        amount: i64,
    },
    CommitOffset {
        offset: u64,
    },
    /// Send the customer a receipt for `payment`; with `id`, the mail service
    /// sends each id once (the outbox's message id, as an idempotency key).
    Email {
        id: Option<String>,
        payment: String,
    },
    /// The mail service accepted the email (`duplicate`: it had sent this id already).
    EmailAck {
        duplicate: bool,
    },
}

/// What kind of message a payload is, for styling and matching.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PayloadKind {
    Request,
    Response,
    Redis,
    Sql,
    Charge,
    Broker,
    Mail,
}

impl PayloadKind {
    /// The kind's name in markup (`msg--sql`): `request`, `response`, `redis`, `sql`, `charge`, `broker`.
    pub fn slug(self) -> &'static str {
        match self {
            PayloadKind::Request => "request",
            PayloadKind::Response => "response",
            PayloadKind::Redis => "redis",
            PayloadKind::Sql => "sql",
            PayloadKind::Charge => "charge",
            PayloadKind::Broker => "broker",
            PayloadKind::Mail => "mail",
        }
    }
}

impl Payload {
    pub fn kind(&self) -> PayloadKind {
        match self {
            Payload::Request(_) => PayloadKind::Request,
            Payload::Response(_) => PayloadKind::Response,
            Payload::RedisCmd(_) | Payload::RedisReply(..) => PayloadKind::Redis,
            Payload::Sql(_) | Payload::SqlReply(..) => PayloadKind::Sql,
            Payload::Charge { .. }
            | Payload::ChargeReply { .. }
            | Payload::ChargeRefused { .. }
            | Payload::FindCharge { .. }
            | Payload::ChargeFound { .. }
            | Payload::ListCharges
            | Payload::ChargeList { .. } => PayloadKind::Charge,
            Payload::Produce { .. }
            | Payload::ProduceAck { .. }
            | Payload::Deliver { .. }
            | Payload::CommitOffset { .. } => PayloadKind::Broker,
            Payload::Email { .. } | Payload::EmailAck { .. } => PayloadKind::Mail,
        }
    }

    pub fn is_reply(&self) -> bool {
        matches!(
            self,
            Payload::Response(_)
                | Payload::RedisReply(..)
                | Payload::SqlReply(..)
                | Payload::ChargeReply { .. }
                | Payload::ChargeRefused { .. }
                | Payload::ChargeFound { .. }
                | Payload::ChargeList { .. }
                | Payload::ProduceAck { .. }
                | Payload::EmailAck { .. }
        )
    }
}

/// What happens to a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fate {
    Deliver,
    /// Lost on the way: it fails where it would have arrived.
    Lost(LossCause),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LossCause {
    /// A fault rule of the scenario or the reader's "lose the next response".
    Fault,
    /// Random loss drawn from the seeded generator.
    Random,
    /// The reader clicked the message in flight.
    Reader,
    /// The receiving process is down (crashed, or its handler is gone).
    NodeDown,
    /// Sent on a connection that was closed: a statement of a database
    /// session whose process crashed or gave up on it (Postgres never runs
    /// it), or an answer to a request the client stopped waiting for at its
    /// timeout (`Client::awaits`: it is never read).
    ConnClosed,
}

/// A message in flight.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Msg {
    pub id: MsgId,
    pub from: NodeId,
    pub to: NodeId,
    pub payload: Payload,
    pub req: Option<ReqId>,
    pub sent_at: Millis,
    pub arrives_at: Millis,
    pub fate: Fate,
}

/// Which messages a fault rule applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Matcher {
    /// An HTTP response on its way to the mobile client (the lost ack).
    ResponseToClient,
    /// An HTTP request from the mobile client.
    RequestFromClient,
    /// A broker's acknowledgement to the producer.
    ProduceAck,
    /// Any message between two nodes.
    Link(NodeId, NodeId),
}

impl Matcher {
    pub fn matches(self, m: &Msg) -> bool {
        match self {
            Matcher::ResponseToClient => {
                m.to == NodeId::Client && matches!(m.payload, Payload::Response(_))
            }
            Matcher::RequestFromClient => {
                m.from == NodeId::Client && matches!(m.payload, Payload::Request(_))
            }
            Matcher::ProduceAck => matches!(m.payload, Payload::ProduceAck { .. }),
            Matcher::Link(a, b) => (m.from == a && m.to == b) || (m.from == b && m.to == a),
        }
    }
}

/// What a rule does to a matching message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Drop,
    /// Deliver it twice (the second copy `after` ms later).
    Duplicate {
        after: Millis,
    },
    /// Deliver it `by` ms late.
    Delay {
        by: Millis,
    },
}

/// A fault as data: the next `times` messages that match (after skipping
/// `skip` of them) get the verdict.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FaultRule {
    pub matcher: Matcher,
    pub verdict: Verdict,
    pub skip: u32,
    pub times: u32,
}

impl FaultRule {
    /// The lost ack: the first response to the client is lost.
    pub const fn lose_first_response() -> FaultRule {
        FaultRule {
            matcher: Matcher::ResponseToClient,
            verdict: Verdict::Drop,
            skip: 0,
            times: 1,
        }
    }
}

/// Random faults on the mobile link (client ↔ API), drawn from the seeded generator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RandomFaults {
    /// Per mille of client ↔ API messages lost.
    pub loss: u32,
    /// Per mille of client requests duplicated (a proxy retry).
    pub duplicate: u32,
    /// Per mille of handler steps at which the API instance crashes.
    pub crash: u32,
    /// At most this many random crashes in a run.
    pub max_crashes: u32,
}

/// Base latency and jitter of a link, in ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Latency {
    pub base: u64,
    pub jitter: u64,
}

/// Latencies of the link classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Links {
    /// Mobile client ↔ API: a phone network.
    pub mobile: Latency,
    /// API ↔ Redis, Postgres, broker; consumer ↔ anything: one data centre.
    pub internal: Latency,
    /// API ↔ card processor or mail service: an external service over the internet.
    pub processor: Latency,
}

impl Default for Links {
    fn default() -> Links {
        Links::DEFAULT
    }
}

impl Links {
    /// The default latencies.
    pub const DEFAULT: Links = Links {
        mobile: Latency {
            base: 80,
            jitter: 40,
        },
        internal: Latency { base: 2, jitter: 1 },
        processor: Latency {
            base: 150,
            jitter: 50,
        },
    };

    pub fn between(&self, a: NodeId, b: NodeId) -> Latency {
        if a == NodeId::Client || b == NodeId::Client {
            self.mobile
        } else if [a, b]
            .iter()
            .any(|n| matches!(n, NodeId::Processor | NodeId::Mail))
        {
            self.processor
        } else {
            self.internal
        }
    }
}
