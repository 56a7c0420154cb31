//! What a world waiting in the frontier holds: the least it can.
//!
//! The frontier's worlds are most of a search's memory. Copy on write
//! ([`Shared`]) already shares a part between a world and the worlds taken
//! from it. Two more savings, as a world enters the frontier
//! ([`World::wait`]):
//! - Each part it alone holds gives back the room its collections grew into:
//!   a step that adds a request or a row doubles the vector that holds them
//!   (about a fifth of a waiting world was such room). The event queue and
//!   the messages in flight keep theirs: every successor's step grows them
//!   again, and shrinking them cost 7% of a transition for 2 to 5 bytes per
//!   state.
//! - Worlds reached along different paths often hold equal parts all the
//!   same: a database with the same rows, an API handling the same request.
//!   Such a part is looked up by its remembered hash (the fingerprint has
//!   just computed it) among the parts the waiting worlds hold, and an equal
//!   one found is shared instead (hash-consing). Equal is the derived
//!   `PartialEq`, every field compared, so the world holds the same values
//!   either way and behaves the same.
//!
//! A world leaving the frontier to be expanded takes its parts out of the
//! table where no other waiting world holds them ([`World::unwait`]), so its
//! last successor, which takes its place, changes them in place again.

use crate::db::Db;
use crate::network::Armed;
use crate::shared::Shared;
use crate::world::{Api, Broker, Mail, Pipeline, Processor, Seldom, World};

/// The least length at which the table drops the parts no world holds.
const MIN_PURGE: usize = 64;

/// A part of a kind worth sharing: the database and the APIs are the
/// largest, and equal ones are common (of those a waiting world alone held,
/// 88 to 99% of the databases and 55 to 100% of the APIs had an equal one
/// waiting, by search); the others for the searches that change them often.
/// Not the client nor the messages: equal too seldom (10 to 40%) to pay for
/// the lookup. One table for every kind, so the search
/// carries one hash table's code, not one per kind (the worker's budget).
enum Part {
    Api(Shared<Api>),
    Db(Shared<Db>),
    Processor(Shared<Processor>),
    Mail(Shared<Mail>),
    Broker(Shared<Broker>),
    Pipeline(Shared<Pipeline>),
    Seldom(Shared<Seldom>),
    Armed(Shared<Armed>),
}

impl Part {
    /// Whether no waiting world holds it any more (only the table), and its address.
    fn state(&self) -> (bool, usize) {
        match self {
            Part::Api(p) => (p.is_unique(), p.addr()),
            Part::Db(p) => (p.is_unique(), p.addr()),
            Part::Processor(p) => (p.is_unique(), p.addr()),
            Part::Mail(p) => (p.is_unique(), p.addr()),
            Part::Broker(p) => (p.is_unique(), p.addr()),
            Part::Pipeline(p) => (p.is_unique(), p.addr()),
            Part::Seldom(p) => (p.is_unique(), p.addr()),
            Part::Armed(p) => (p.is_unique(), p.addr()),
        }
    }
}

/// A kind of [`Part`].
trait Kind: PartialEq + Sized {
    /// Told apart in the table's keys (two kinds' hashes may meet).
    const SALT: u64;
    fn part(p: Shared<Self>) -> Part;
    fn of(p: &Part) -> Option<&Shared<Self>>;
}

macro_rules! kinds {
    ($($kind:ident = $salt:literal),*) => {$(
        impl Kind for $kind {
            const SALT: u64 = $salt;
            fn part(p: Shared<Self>) -> Part {
                Part::$kind(p)
            }
            fn of(p: &Part) -> Option<&Shared<Self>> {
                match p {
                    Part::$kind(p) => Some(p),
                    _ => None,
                }
            }
        }
    )*};
}

kinds!(
    Api = 1,
    Db = 2,
    Processor = 3,
    Mail = 4,
    Broker = 5,
    Pipeline = 6,
    Seldom = 7,
    Armed = 8
);

/// The parts the waiting worlds hold, by their remembered hash: open
/// addressing, at most three quarters full, its own code (a few hundred
/// bytes of the worker's module, where a `HashMap` of them weighed
/// kilobytes).
#[derive(Default)]
pub(super) struct Parts {
    /// A power of two of slots (or none yet); a key's search starts at its
    /// low bits (the hashes are mixed) and goes on until an empty slot.
    slots: Vec<Option<(u64, Part)>>,
    len: usize,
    /// The length at which the parts no world holds any more are dropped
    /// (a search cut short leaves some behind).
    purge_at: usize,
}

impl Parts {
    /// Shares `part`, if no other world holds it, with an equal one of the
    /// table; else gives back its room (`compact`, which must not change its
    /// value) and enters it.
    fn share<T: Kind>(&mut self, part: &mut Shared<T>, compact: fn(&mut T)) {
        let hash = part.known_hash();
        if !part.is_unique() || hash == 0 {
            return;
        }
        let key = hash.wrapping_add(T::SALT);
        if let Some((i, found)) = self.find(key) {
            match T::of(found) {
                Some(equal) if *equal == *part => {
                    *part = equal.clone();
                    return;
                }
                // Equal keys, other values: the one a world holds stays.
                _ if !found.state().0 => {
                    part.if_unique(compact);
                    return;
                }
                _ => self.remove(i),
            }
        }
        part.if_unique(compact);
        self.enter(key, T::part(part.clone()));
    }

    /// Forgets `part` if the table and one world (leaving the frontier) are
    /// all that hold it.
    fn release<T: Kind>(&mut self, part: &Shared<T>) {
        if part.copies() == 2 {
            let key = part.known_hash().wrapping_add(T::SALT);
            if let Some((i, found)) = self.find(key) {
                if found.state().1 == part.addr() {
                    self.remove(i);
                }
            }
        }
    }

    /// The slot of `key` and its part, if it is in the table.
    fn find(&self, key: u64) -> Option<(usize, &Part)> {
        let mask = self.slots.len().checked_sub(1)?;
        let mut i = key as usize & mask;
        while let Some((k, part)) = &self.slots[i] {
            if *k == key {
                return Some((i, part));
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// Enters `part` under `key` (not in the table).
    fn enter(&mut self, key: u64, part: Part) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.rebuild((self.slots.len() * 2).max(16));
        }
        self.put(key, part);
        if self.len >= self.purge_at {
            self.rebuild(self.slots.len());
        }
    }

    /// Puts `part` into the first empty slot from its key's.
    fn put(&mut self, key: u64, part: Part) {
        let mask = self.slots.len() - 1;
        let mut i = key as usize & mask;
        while self.slots[i].is_some() {
            i = (i + 1) & mask;
        }
        self.slots[i] = Some((key, part));
        self.len += 1;
    }

    /// Empties slot `i`, and moves back each key after it that a search
    /// would no longer reach (no tombstones).
    fn remove(&mut self, mut i: usize) {
        let mask = self.slots.len() - 1;
        self.slots[i] = None;
        self.len -= 1;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let Some((k, _)) = &self.slots[j] else { return };
            let home = *k as usize & mask;
            // A key whose search starts cyclically in (i, j] stays.
            let stays = if i <= j {
                i < home && home <= j
            } else {
                i < home || home <= j
            };
            if !stays {
                self.slots.swap(i, j);
                i = j;
            }
        }
    }

    /// The table again in `size` slots, without the parts no world holds.
    fn rebuild(&mut self, size: usize) {
        let old = std::mem::replace(&mut self.slots, (0..size).map(|_| None).collect());
        self.len = 0;
        for (key, part) in old.into_iter().flatten() {
            if !part.state().0 {
                self.put(key, part);
            }
        }
        self.purge_at = (self.len * 2).max(MIN_PURGE);
    }
}

impl World {
    /// Readies this world to wait in the frontier (see the module's docs).
    /// Changes no value: the world stays equal, with the same fingerprint.
    /// Call after the fingerprint (parts are looked up by their hash).
    pub(super) fn wait(&mut self, t: &mut Parts) {
        // A part another world shares was copied at its length already.
        for a in self.apis.iter_mut() {
            t.share(a, compact_api);
        }
        t.share(&mut self.reconciler, compact_api);
        t.share(&mut self.db, Db::compact);
        t.share(&mut self.processor, |p| p.charges.shrink_to_fit());
        t.share(&mut self.mail, |m| {
            m.sent.shrink_to_fit();
            m.ids.shrink_to_fit();
        });
        t.share(&mut self.broker, |b| {
            b.log.shrink_to_fit();
            b.delivered.shrink_to_fit();
        });
        t.share(&mut self.pipeline, |_| {});
        t.share(&mut self.seldom, |_| {});
        t.share(&mut self.armed, |_| {});
        self.client.if_unique(|c| {
            c.keys.shrink_to_fit();
            for op in &mut c.ops {
                op.lanes.shrink_to_fit();
            }
        });
        self.redis.if_unique(|r| r.keys.shrink_to_fit());
    }

    /// Takes this world's parts out of the table where no other waiting
    /// world holds them: call as it leaves the frontier.
    pub(super) fn unwait(&self, t: &mut Parts) {
        for a in self.apis.iter() {
            t.release(a);
        }
        t.release(&self.reconciler);
        t.release(&self.db);
        t.release(&self.processor);
        t.release(&self.mail);
        t.release(&self.broker);
        t.release(&self.pipeline);
        t.release(&self.seldom);
        t.release(&self.armed);
    }
}

fn compact_api(a: &mut Api) {
    a.handling.shrink_to_fit();
    a.memory.shrink_to_fit();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::fingerprint::IdentityHasher;
    use std::hash::Hasher;

    /// A processor part of its own value, remembered under hash `hash`.
    fn part(i: usize, hash: u64) -> Shared<Processor> {
        let mut p = Processor::default();
        p.by_key.insert(format!("k{i}"), i);
        let p = Shared::new(p);
        p.hash_with::<IdentityHasher>(|_, h| h.write_u64(hash));
        p
    }

    /// Parts entered under crowded keys (many with one start, some equal),
    /// half of them forgotten in an order of their own: every part still
    /// held is found, shared with an equal newcomer; a forgotten one is not.
    #[test]
    fn the_table_finds_each_part_it_holds_through_removals() {
        let mut t = Parts::default();
        // Keys 64 apart start at one slot until the table is 64 long.
        let hash = |i: usize| 1 + 64 * (i as u64 % 40) + (i as u64 / 40);
        let held: Vec<Shared<Processor>> = (0..300)
            .map(|i| {
                let mut p = part(i, hash(i));
                t.share(&mut p, |_| {});
                p
            })
            .collect();
        let gone: Vec<usize> = (0..300).filter(|i| i * 7 % 11 < 5).collect();
        for &i in &gone {
            t.release(&held[i]);
        }
        for (i, p) in held.iter().enumerate() {
            let mut newcomer = part(i, hash(i));
            t.share(&mut newcomer, |_| {});
            let found = newcomer.addr() == p.addr();
            assert_eq!(found, !gone.contains(&i), "part {i}");
        }
    }
}
