//! Redis as a node: it runs the commands that arrive (the store itself is
//! [`crate::redis::Redis`]) and answers each, and its keys expire on the
//! virtual clock.

use crate::net::{NodeId, Payload, ReqId};
use crate::out::Out;
use crate::redis::{Cmd, Redis};
use crate::trace::Happening;
use std::sync::Arc;

/// A command arrived from `from`.
pub(crate) fn on_cmd(
    redis: &mut Redis,
    from: NodeId,
    req: Option<ReqId>,
    cmd: Arc<Cmd>,
    out: &mut Out,
) {
    let reply = redis.execute(&cmd, out.now);
    if out.traced {
        out.happen(Happening::Redis {
            cmd: Cmd::clone(&cmd),
            reply: reply.clone(),
        });
    }
    out.send(
        NodeId::Redis,
        from,
        Payload::RedisReply(Arc::new((cmd, reply))),
        req,
    );
}
