//! Redis as a node: it runs the commands that arrive (the store itself is
//! [`crate::redis::Redis`]) and answers each, and its keys expire on the
//! virtual clock.

use crate::net::{NodeId, Payload, ReqId};
use crate::out::Out;
use crate::redis::{Cmd, Redis};
use crate::trace::Happening;

/// A command arrived from `from`.
pub(crate) fn on_cmd(redis: &mut Redis, from: NodeId, req: Option<ReqId>, cmd: Cmd, out: &mut Out) {
    let reply = redis.execute(&cmd, out.now);
    if out.traced {
        out.happen(Happening::Redis {
            cmd: cmd.clone(),
            reply: reply.clone(),
        });
    }
    out.send(
        NodeId::Redis,
        from,
        Payload::RedisReply(Box::new((cmd, reply))),
        req,
    );
}
