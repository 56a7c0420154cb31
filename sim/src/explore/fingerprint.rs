//! A world's fingerprint for the explorer's visited set: a 64-bit hash of
//! its canonical form, leaving out bookkeeping, and the hashers it uses.

use crate::db::Db;
use crate::net::Msg;
use crate::time::Millis;
use crate::world::{
    Api, Client, ClientOp, Event, EventKey, Handling, Lane, Pipeline, Seldom, World,
};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hash, Hasher};

impl World {
    /// A 64-bit hash of the world's canonical form: an exact state identity,
    /// so two worlds with one fingerprint have the same futures (tested in
    /// `explore::exact`). Equal for worlds that differ only in bookkeeping no
    /// rule reads: the event queue is hashed as the ordered list of its
    /// timers (time, event) without sequence numbers and the multiset of its
    /// messages (time, content without the id); a timer held in a field is
    /// hashed by its time; the counters `seq` and `next_msg` are left out (no
    /// state names a message or a sequence number), and so are the database's
    /// schema and race log ([`crate::db::Db`]). The counters of ids the state
    /// does hold (requests, payments, transactions, rows) are hashed: two
    /// worlds that differ only in them hand out different ids later. The
    /// scenario is hashed by its id (an exploration's visited set leaves it and
    /// the configuration out: its worlds share them). The
    /// nodes' states and the messages in flight, which copies of a world
    /// share ([`crate::shared::Shared`]), are hashed once per version, and
    /// their hash goes in. The same on every
    /// platform (lengths are hashed as 64-bit words).
    pub fn fingerprint(&self) -> u64 {
        let mut h = FxHasher::default();
        self.scenario.id.hash(&mut h);
        self.config.hash(&mut h);
        self.hash_canonical(&mut h);
        h.finish()
    }

    /// The canonical form but for the scenario and the configuration.
    pub(super) fn hash_canonical(&self, h: &mut FxHasher) {
        // Exhaustive on purpose: a new field does not compile until it is decided here.
        let World {
            // Hashed by `fingerprint`; one exploration's worlds share them.
            scenario: _,
            config: _,
            // Resolved from `config`, which is hashed.
            cfg: _,
            now,
            rng,
            queue,
            seq: _,
            msgs,
            next_msg: _,
            armed,
            seldom,
            client,
            apis,
            reconciler,
            lb,
            redis,
            db,
            processor,
            mail,
            broker,
            pipeline,
            conns,
            session_timer,
            next_req,
            next_payment,
            intended_debits,
            invariants,
            decisive,
            // A setting of the search, not state.
            untraced: _,
        } = self;
        now.hash(h);
        rng.hash(h);
        // Timers in firing order; messages in flight as a multiset (a sum of
        // their hashes), so that two messages due at the same time are the
        // same state whichever was sent first: the explorer delivers them in
        // either order anyway.
        h.write_usize(queue.len());
        let mut in_flight = 0u64;
        for (&(at, _seq), ev) in queue.iter() {
            match ev {
                Event::Deliver(id) => {
                    // A message is hashed once (its copies in other worlds
                    // share the hash), and mixed with its time here.
                    let m = msgs
                        .get(id)
                        .map_or(0xFF, |m| m.hash_with::<FxHasher>(hash_msg));
                    in_flight = in_flight.wrapping_add(mix(m ^ at.0.wrapping_mul(SEED)));
                }
                ev => {
                    at.hash(h);
                    ev.hash(h);
                }
            }
        }
        h.write_u64(in_flight);
        // Every message in flight has its Deliver event above.
        h.write_usize(msgs.len());
        h.write_u64(armed.hash_with::<FxHasher>(Hash::hash));
        h.write_u64(seldom.hash_with::<FxHasher>(|s, h| {
            let Seldom {
                closing,
                restarts,
                newest,
                initial,
            } = s;
            closing.hash(h);
            h.write_usize(restarts.len());
            for (node, &(at, _seq)) in restarts.iter() {
                node.hash(h);
                at.hash(h);
            }
            newest.hash(h);
            initial.hash(h);
        }));
        // The parts the world's copies share are hashed once per version.
        h.write_u64(client.hash_with::<FxHasher>(hash_client));
        // Each instance is hashed once per version of it.
        h.write_usize(apis.len());
        for api in apis.iter() {
            h.write_u64(api.hash_with::<FxHasher>(hash_api));
        }
        h.write_u64(reconciler.hash_with::<FxHasher>(hash_api));
        lb.hash(h);
        h.write_u64(redis.hash_with::<FxHasher>(Hash::hash));
        h.write_u64(db.hash_with::<FxHasher>(Db::hash_state));
        h.write_u64(processor.hash_with::<FxHasher>(Hash::hash));
        h.write_u64(mail.hash_with::<FxHasher>(Hash::hash));
        h.write_u64(broker.hash_with::<FxHasher>(Hash::hash));
        h.write_u64(pipeline.hash_with::<FxHasher>(|p, h| {
            let Pipeline {
                producer,
                consumer,
                producer_timer,
                statement_timer,
            } = p;
            producer.hash(h);
            consumer.hash(h);
            time_of(*producer_timer).hash(h);
            time_of(*statement_timer).hash(h);
        }));
        conns.hash(h);
        time_of(*session_timer).hash(h);
        // Id counters are state: the ids they hand out are hashed where they are used.
        next_req.hash(h);
        next_payment.hash(h);
        intended_debits.hash(h);
        h.write_u64(invariants.hash_with::<FxHasher>(Hash::hash));
        decisive.hash(h);
    }
}

/// A timer's time, without its sequence number.
fn time_of(k: Option<EventKey>) -> Option<Millis> {
    k.map(|(at, _seq)| at)
}

fn hash_msg(m: &Msg, h: &mut FxHasher) {
    let Msg {
        id: _,
        from,
        to,
        payload,
        req,
        sent_at,
        arrives_at,
        fate,
    } = m;
    from.hash(h);
    to.hash(h);
    payload.hash(h);
    req.hash(h);
    sent_at.hash(h);
    arrives_at.hash(h);
    fate.hash(h);
}

fn hash_client(c: &Client, h: &mut FxHasher) {
    let Client { keys, ops, current } = c;
    keys.hash(h);
    current.hash(h);
    h.write_usize(ops.len());
    for op in ops {
        let ClientOp {
            spec,
            key,
            attempts,
            belief,
            wrong_answer,
            started,
            lanes,
            checks,
            last_sent,
        } = op;
        checks.hash(h);
        last_sent.hash(h);
        spec.hash(h);
        key.hash(h);
        attempts.hash(h);
        belief.hash(h);
        wrong_answer.hash(h);
        started.hash(h);
        h.write_usize(lanes.len());
        for lane in lanes {
            let Lane {
                last,
                sent,
                done,
                open,
                timer,
                check,
            } = lane;
            check.hash(h);
            last.hash(h);
            sent.hash(h);
            done.hash(h);
            open.hash(h);
            time_of(*timer).hash(h);
        }
    }
}

fn hash_api(a: &Api, h: &mut FxHasher) {
    let Api {
        up,
        memory,
        handling,
        relay_again,
        relay_timer,
    } = a;
    up.hash(h);
    time_of(*relay_timer).hash(h);
    relay_again.hash(h);
    memory.hash(h);
    h.write_usize(handling.len());
    for (rid, hd) in handling.iter() {
        rid.hash(h);
        let Handling {
            node,
            id,
            req,
            phase,
            token,
            charge,
            payment,
            rows,
            deadline,
            lock,
            existing,
            lost_claim,
            failed,
            todo,
            refund,
        } = hd;
        node.hash(h);
        id.hash(h);
        req.hash(h);
        phase.hash(h);
        token.hash(h);
        charge.hash(h);
        payment.hash(h);
        rows.hash(h);
        time_of(*deadline).hash(h);
        lock.hash(h);
        existing.hash(h);
        lost_claim.hash(h);
        failed.hash(h);
        todo.hash(h);
        refund.hash(h);
    }
}

/// A small, fast, non-cryptographic hasher in the style of FxHash: each word
/// is mixed in with a rotate, an xor and a multiply. Words alternate between
/// two lanes, so that two multiplications can be in flight at once (a world
/// is a couple of hundred small fields, and one chain of dependent multiplies
/// was the fingerprint's cost); `finish` folds the lanes and runs a final
/// avalanche, so that every bit of the result depends on every input bit.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    /// The lane the next word goes into.
    hash: u64,
    other: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        let h = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
        self.hash = self.other;
        self.other = h;
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            self.add(tail(rest) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // The finalizer of MurmurHash3 (fmix64).
        let mut z = self.hash ^ self.other.rotate_left(32);
        z ^= z >> 33;
        z = z.wrapping_mul(0xff51_afd7_ed55_8ccd);
        z ^= z >> 33;
        z = z.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        z ^ (z >> 33)
    }
}

/// The 1 to 7 bytes of `rest` as a little-endian word, zero-padded: two
/// overlapping reads (copying them into a buffer was a call to memcpy, and
/// most of the world's strings are short).
#[inline]
fn tail(rest: &[u8]) -> u64 {
    let n = rest.len();
    let word = |b: &[u8]| b.iter().rev().fold(0u64, |w, &x| (w << 8) | u64::from(x));
    if n >= 4 {
        let lo = u64::from(u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")));
        let hi = u64::from(u32::from_le_bytes(
            rest[n - 4..].try_into().expect("4 bytes"),
        ));
        lo | hi << ((n - 4) * 8)
    } else if n >= 2 {
        let lo = u64::from(u16::from_le_bytes(rest[..2].try_into().expect("2 bytes")));
        let hi = u64::from(u16::from_le_bytes(
            rest[n - 2..].try_into().expect("2 bytes"),
        ));
        lo | hi << ((n - 2) * 8)
    } else {
        word(rest)
    }
}

/// Hashes a `u64` fingerprint to itself: the fingerprints are well mixed already.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = i;
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A set of fingerprints, in shards: a hash table that grows allocates its
/// double while the old one is still full, and one table of every visited
/// state doing so was often the search's peak of memory (a third of the
/// set's bytes more, for a moment). A shard grows alone, by 1/64 of the set.
pub struct FingerprintSet {
    shards: Vec<HashSet<u64, BuildHasherDefault<IdentityHasher>>>,
    len: usize,
}

impl FingerprintSet {
    const SHARDS: usize = 64;

    /// Whether `key` was new (and is now in the set).
    pub fn insert(&mut self, key: u64) -> bool {
        // Bits the shard's own table hardly reads: it places a key by its
        // low bits and tells keys apart by its top seven.
        let shard = (key >> 40) as usize % Self::SHARDS;
        let new = self.shards[shard].insert(key);
        self.len += usize::from(new);
        new
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every fingerprint in the set, in no particular order.
    pub fn into_keys(self) -> impl Iterator<Item = u64> {
        self.shards.into_iter().flatten()
    }
}

impl Default for FingerprintSet {
    fn default() -> FingerprintSet {
        FingerprintSet {
            shards: (0..Self::SHARDS).map(|_| HashSet::default()).collect(),
            len: 0,
        }
    }
}

/// A strong 64-bit finaliser (splitmix64's): FxHash is linear enough that sums
/// of raw message hashes collide for different multisets.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_tail_is_read_as_its_bytes_zero_padded() {
        let bytes: Vec<u8> = (1..=7).map(|b| b * 0x11).collect();
        for n in 1..=7 {
            let mut buf = [0u8; 8];
            buf[..n].copy_from_slice(&bytes[..n]);
            assert_eq!(tail(&bytes[..n]), u64::from_le_bytes(buf), "{n} bytes");
        }
    }
}
