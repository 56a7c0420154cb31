//! The pipeline: a producer (in API instance A) publishes an event to a
//! Kafka-like broker (one partition, one consumer group), which delivers
//! each record to a consumer that applies it to the ledger in a transaction
//! and then commits its offset.

use crate::db::{Assign, Cond, OnConflict, Outcome, Stmt, Value};
use crate::net::{NodeId, Payload, ReqId};
use crate::out::{Event, EventKey, Out};
use crate::scenario::Phase;
use crate::timing::{PRODUCER_TIMEOUT, SESSION_TIMEOUT, STATEMENT_TIMEOUT};
use crate::trace::Happening;
use crate::vecmap::VecMap;
use std::sync::Arc;

const PRODUCER_ID: u32 = 7;

/// A record of the broker's topic.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    pub offset: u64,
    pub msg_id: String,
    pub amount: i64,
    pub producer: u32,
    pub seq: u32,
}

/// A Kafka-like broker: one partition, one consumer group.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Broker {
    pub log: Vec<Record>,
    /// The consumer group's committed offset: the next record to process.
    pub committed: u64,
    /// The offset delivered and not yet committed.
    pub in_flight: Option<u64>,
    /// Highest sequence number appended per producer (idempotent producer).
    pub last_seq: VecMap<u32, u32>,
    /// Offsets delivered so far, to spot a redelivery.
    pub delivered: Vec<u64>,
}

/// The producer side of the pipeline scenario (runs in API instance A).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Producer {
    pub attempts: u32,
    pub acked: bool,
}

/// The consumer of the pipeline scenario.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Consumer {
    pub up: bool,
    /// The record being processed: (request id, offset, message id, amount, phase).
    pub current: Option<(ReqId, u64, String, i64, Phase)>,
}

/// A statement the consumer sent, and the timer of its statement timeout.
fn sql(rid: ReqId, stmt: Stmt, deadline: &mut Option<EventKey>, out: &mut Out) {
    out.send(
        NodeId::Consumer,
        NodeId::Postgres,
        Payload::Sql(Arc::new(stmt)),
        Some(rid),
    );
    out.cancel(deadline.take());
    let ev = Event::StatementTimeout(rid);
    *deadline = Some(out.timer(out.now + STATEMENT_TIMEOUT, ev));
}

impl Broker {
    /// A producer's record arrived: append it, unless the idempotent producer
    /// has already appended this sequence number.
    pub(crate) fn on_produce(
        &mut self,
        from: NodeId,
        (producer, seq, msg_id, amount): (u32, u32, String, i64),
        out: &mut Out,
    ) {
        let dup = out.cfg.pipeline.idempotent_producer
            && self.last_seq.get(&producer).is_some_and(|&s| s >= seq);
        let offset = self.log.len() as u64;
        if !dup {
            self.log.push(Record {
                offset,
                msg_id: msg_id.clone(),
                amount,
                producer,
                seq,
            });
            self.last_seq.insert(producer, seq);
        }
        out.happen(Happening::Appended {
            offset,
            msg_id,
            duplicate: dup,
        });
        let ack = Payload::ProduceAck {
            seq,
            duplicate: dup,
        };
        out.send(NodeId::Broker, from, ack, None);
    }

    pub(crate) fn on_commit(&mut self, offset: u64, session: &mut Option<EventKey>, out: &mut Out) {
        self.committed = offset;
        self.in_flight = None;
        out.cancel(session.take());
        out.happen(Happening::OffsetCommitted(offset));
    }

    /// The session timed out on the record delivered last: no offset commit
    /// came for it, so the broker takes it back and delivers it again from
    /// the committed offset once the consumer is idle.
    pub(crate) fn session_expired(&mut self, session: &mut Option<EventKey>, out: &mut Out) {
        *session = None;
        if let Some(offset) = self.in_flight.take() {
            out.happen(Happening::SessionExpired { offset });
        }
    }

    /// Pushes the next record to the consumer, which is idle, and waits for its
    /// offset commit no longer than the session timeout.
    pub(crate) fn pump(&mut self, session: &mut Option<EventKey>, out: &mut Out) {
        if self.in_flight.is_some() || out.net.in_flight_to(NodeId::Consumer) {
            return;
        }
        let next = self.committed;
        let Some(r) = self.log.get(next as usize).cloned() else {
            return;
        };
        if self.delivered.contains(&next) {
            out.decisive();
        }
        self.delivered.push(next);
        self.in_flight = Some(next);
        out.cancel(session.take());
        *session = Some(out.timer(out.now + SESSION_TIMEOUT, Event::SessionTimeout));
        let p = Payload::Deliver {
            offset: r.offset,
            msg_id: r.msg_id,
            amount: r.amount,
        };
        out.send(NodeId::Broker, NodeId::Consumer, p, None);
    }
}

impl Producer {
    /// Publishes the event (again, on a retry), unless instance A is down.
    pub(crate) fn send(&mut self, api_up: bool, timer: &mut Option<EventKey>, out: &mut Out) {
        if !api_up {
            return;
        }
        if self.attempts == 0 {
            out.intend_debit(100);
        }
        self.attempts += 1;
        let p = Payload::Produce {
            producer: PRODUCER_ID,
            seq: 0,
            msg_id: "evt_1".into(),
            amount: 100,
        };
        out.happen(Happening::Phase {
            node: NodeId::Api(0),
            req: ReqId(0),
            phase: Phase::Publish,
        });
        out.send(NodeId::Api(0), NodeId::Broker, p, None);
        let attempt = self.attempts;
        *timer = Some(out.timer(
            out.now + PRODUCER_TIMEOUT,
            Event::ProducerTimeout { attempt },
        ));
    }

    /// No ack in time: publish again, up to three attempts.
    pub(crate) fn timeout(
        &mut self,
        attempt: u32,
        api_up: bool,
        timer: &mut Option<EventKey>,
        out: &mut Out,
    ) {
        *timer = None;
        if !self.acked && attempt == self.attempts && attempt < 3 {
            self.send(api_up, timer, out);
        }
    }

    pub(crate) fn on_ack(&mut self, timer: &mut Option<EventKey>, out: &mut Out) {
        self.acked = true;
        out.cancel(timer.take());
    }
}

impl Consumer {
    pub fn idle(&self) -> bool {
        self.up && self.current.is_none()
    }

    /// A record arrived; the world numbered its handling `rid`.
    pub(crate) fn receive(
        &mut self,
        rid: ReqId,
        (offset, msg_id, amount): (u64, String, i64),
        deadline: &mut Option<EventKey>,
        out: &mut Out,
    ) {
        self.current = Some((rid, offset, msg_id, amount, Phase::Consume));
        out.happen(Happening::Phase {
            node: NodeId::Consumer,
            req: rid,
            phase: Phase::Consume,
        });
        if self.enter(rid, Phase::Begin, out) {
            sql(rid, Stmt::Begin, deadline, out);
        }
    }

    /// Its statement timeout ran out: the world closes the connection (the
    /// transaction rolls back) and the consumer drops the record, which the
    /// broker delivers again once its session times out. Returns the request
    /// whose connection to close.
    pub(crate) fn statement_timed_out(
        &mut self,
        rid: ReqId,
        deadline: &mut Option<EventKey>,
        out: &mut Out,
    ) -> Option<ReqId> {
        *deadline = None;
        let current = self.current.as_ref().is_some_and(|c| c.0 == rid);
        if !current {
            return None;
        }
        let offset = self.current.take().map_or(0, |c| c.1);
        out.happen(Happening::StatementTimedOut { offset });
        Some(rid)
    }

    /// Postgres answered the consumer's last statement.
    pub(crate) fn on_reply(
        &mut self,
        rid: ReqId,
        p: Payload,
        deadline: &mut Option<EventKey>,
        out: &mut Out,
    ) {
        let Payload::SqlReply(r) = p else {
            return;
        };
        let (_, o) = Arc::unwrap_or_clone(r);
        out.cancel(deadline.take());
        let Some((_, offset, msg_id, amount, phase)) = self.current.clone() else {
            return;
        };
        let debit = Stmt::Update {
            table: "accounts",
            set: vec![Assign::Add("balance", -amount), Assign::Add("version", 1)],
            cond: vec![Cond::Eq("id", Value::Int(1))],
        };
        let (next, stmt) = match phase {
            Phase::Begin if out.cfg.pipeline.consumer_dedup => (
                Phase::Dedup,
                Some(Stmt::Insert {
                    table: "processed_messages",
                    columns: &["message_id"],
                    values: vec![Value::text(msg_id)],
                    on_conflict: OnConflict::DoNothing,
                }),
            ),
            Phase::Begin => (Phase::Apply, Some(debit)),
            Phase::Dedup if dedup_inserted(&o) => (Phase::Apply, Some(debit)),
            Phase::Dedup | Phase::Apply => (Phase::Commit, Some(Stmt::Commit)),
            _ => (Phase::CommitOffset, None),
        };
        if !self.enter(rid, next, out) {
            return;
        }
        match stmt {
            Some(s) => sql(rid, s, deadline, out),
            None => {
                self.current = None;
                let p = Payload::CommitOffset { offset: offset + 1 };
                out.send(NodeId::Consumer, NodeId::Broker, p, None);
            }
        }
    }

    /// Moves the record's handling into `phase`, unless the consumer crashes first.
    fn enter(&mut self, rid: ReqId, phase: Phase, out: &mut Out) -> bool {
        let prev = self.current.as_ref().map(|c| c.4);
        if out.crash_due(NodeId::Consumer, prev) {
            return false;
        }
        if let Some(c) = self.current.as_mut() {
            c.4 = phase;
        }
        out.happen(Happening::Phase {
            node: NodeId::Consumer,
            req: rid,
            phase,
        });
        true
    }

    /// The process dies: the record it was handling, whose connection closes.
    pub(crate) fn crash(&mut self) -> Option<ReqId> {
        self.up = false;
        self.current.take().map(|c| c.0)
    }
}

/// The message id was new: the dedup row went in.
fn dedup_inserted(o: &Outcome) -> bool {
    o.count() == 1
}
