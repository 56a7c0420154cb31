//! Nodes, messages and the faults that befall them. Every message travels a
//! link with a latency; a fault rule decides its fate when it is sent
//! (delivered, lost, duplicated or delayed), and the reader can lose a
//! message while it is in flight. A lost message still travels: it fails
//! where it would have arrived, so the page can draw it breaking off.

use crate::db::{Outcome, Stmt};
use crate::http::{Request, Response};
use crate::redis;
use crate::time::Millis;
use std::fmt;

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
    RedisCmd(redis::Cmd),
    RedisReply(redis::Cmd, redis::Reply),
    Sql(Stmt),
    SqlReply(Stmt, Outcome),
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
        code: &'static str,
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
}

impl Payload {
    /// The kind, for styling and matching: `request`, `response`, `redis`, `sql`, `charge`, `broker`.
    pub fn kind(&self) -> &'static str {
        match self {
            Payload::Request(_) => "request",
            Payload::Response(_) => "response",
            Payload::RedisCmd(_) | Payload::RedisReply(..) => "redis",
            Payload::Sql(_) | Payload::SqlReply(..) => "sql",
            Payload::Charge { .. }
            | Payload::ChargeReply { .. }
            | Payload::ChargeRefused { .. } => "charge",
            Payload::Produce { .. }
            | Payload::ProduceAck { .. }
            | Payload::Deliver { .. }
            | Payload::CommitOffset { .. } => "broker",
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
                | Payload::ProduceAck { .. }
        )
    }

    /// A compact label for the diagram: `POST /charges K1`, `GET idem:u42:K1 → (nil)`, `201 pay_1`.
    pub fn label(&self) -> String {
        match self {
            Payload::Request(r) => r.label(),
            Payload::Response(r) => r.label(),
            Payload::RedisCmd(c) => short_redis(c),
            Payload::RedisReply(c, r) => format!("{} → {r}", short_redis(c)),
            Payload::Sql(s) => short_sql(s),
            Payload::SqlReply(s, o) => format!("{} → {}", short_sql(s), short_outcome(o)),
            Payload::Charge { amount, key, .. } => match key {
                Some(k) => format!("charge ${} {k}", dollars(*amount)),
                None => format!("charge ${}", dollars(*amount)),
            },
            Payload::ChargeRefused { code } => format!("400 {code}"),
            Payload::ChargeReply { charge, replayed } => {
                if *replayed {
                    format!("{charge} (replay)")
                } else {
                    charge.clone()
                }
            }
            Payload::Produce { msg_id, seq, .. } => format!("produce {msg_id} seq={seq}"),
            Payload::ProduceAck { seq, duplicate } => {
                if *duplicate {
                    format!("ack seq={seq} (dup)")
                } else {
                    format!("ack seq={seq}")
                }
            }
            Payload::Deliver { offset, msg_id, .. } => format!("deliver #{offset} {msg_id}"),
            Payload::CommitOffset { offset } => format!("commit offset {offset}"),
        }
    }

    /// The exact command text, where there is one (SQL, Redis, HTTP).
    pub fn command(&self) -> Option<String> {
        match self {
            Payload::Request(r) => {
                let mut s = format!("{} {} HTTP/1.1", r.body.method(), r.body.path());
                if let Some(k) = r.key {
                    s.push_str(&format!("\nIdempotency-Key: {k}"));
                }
                let json = r.body.json();
                if !json.is_empty() {
                    s.push_str(&format!("\n\n{json}"));
                }
                Some(s)
            }
            Payload::RedisCmd(c) => Some(c.to_string()),
            Payload::Sql(s) => Some(s.to_string()),
            _ => None,
        }
    }
}

/// `$100.00` without the dollar sign: cents are whole dollars here.
pub fn dollars(amount: i64) -> String {
    format!("{amount}.00")
}

fn short_redis(c: &redis::Cmd) -> String {
    match c {
        redis::Cmd::Get(k) => format!("GET {k}"),
        redis::Cmd::Set { key, nx, .. } => format!("SET {key}{}", if *nx { " NX" } else { "" }),
        redis::Cmd::Del(k) => format!("DEL {k}"),
        redis::Cmd::Incr(k) => format!("INCR {k}"),
    }
}

fn short_sql(s: &Stmt) -> String {
    match s {
        Stmt::Begin => "BEGIN".into(),
        Stmt::Commit => "COMMIT".into(),
        Stmt::Rollback => "ROLLBACK".into(),
        Stmt::Insert { table, .. } => format!("INSERT {table}"),
        Stmt::Update { table, .. } => format!("UPDATE {table}"),
        Stmt::Select { table, .. } => format!("SELECT {table}"),
    }
}

fn short_outcome(o: &Outcome) -> String {
    match o {
        Outcome::Error(crate::db::SqlError::UniqueViolation { .. }) => "unique violation".into(),
        Outcome::Error(crate::db::SqlError::InFailedTransaction) => "aborted".into(),
        ok => {
            let s = ok.to_string();
            s.strip_prefix("INSERT 0 ")
                .map(|n| format!("{n} row{}", if n == "1" { "" } else { "s" }))
                .unwrap_or(s)
        }
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
    /// A statement of a database session that was closed (its process
    /// crashed or gave up on it): Postgres never runs it.
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
    /// API ↔ card processor: an external PSP over the internet.
    pub processor: Latency,
}

impl Default for Links {
    fn default() -> Links {
        Links {
            mobile: Latency {
                base: 80,
                jitter: 40,
            },
            internal: Latency { base: 2, jitter: 1 },
            processor: Latency {
                base: 150,
                jitter: 50,
            },
        }
    }
}

impl Links {
    pub fn between(&self, a: NodeId, b: NodeId) -> Latency {
        if a == NodeId::Client || b == NodeId::Client {
            self.mobile
        } else if a == NodeId::Processor || b == NodeId::Processor {
            self.processor
        } else {
            self.internal
        }
    }
}
