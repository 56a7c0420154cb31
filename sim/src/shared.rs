//! A part of the world that copies of the world share until one of them
//! changes it (copy on write), with its fingerprint remembered.
//!
//! The explorer clones a world for every choice it takes, and most choices
//! touch one or two nodes: the others' state (the database's rows, Redis's
//! keys, the processor's charges) was copied for nothing, and hashed again
//! for nothing. A [`Shared`] part is an `Arc`: a clone shares it, reading it
//! is a deref, and the first mutable borrow of a shared one copies it into
//! an `Arc` of its own and forgets its remembered hash. So a world's parts are
//! copied only when they change, and hashed only once per version
//! ([`Shared::hash_with`]).

use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// A value shared by the world's copies until one changes it.
pub struct Shared<T>(Arc<Inner<T>>);

/// The remembered hash first, beside the `Arc`'s counts: a copy of the
/// world and its fingerprint read those two, and a step the start of the value.
#[repr(C)]
struct Inner<T> {
    /// The fingerprint of `value` ([`Shared::hash_with`]), 0 while unknown.
    hash: AtomicU64,
    value: T,
}

impl<T> Shared<T> {
    pub fn new(value: T) -> Shared<T> {
        Shared(Arc::new(Inner {
            value,
            hash: AtomicU64::new(0),
        }))
    }

    /// `f`'s hash of the value, computed once per version of it: a world and
    /// its copies that did not change this part share the result. `f` must be
    /// the same function at every call (the explorer's canonical hash).
    pub fn hash_with<H: Hasher + Default>(&self, f: impl FnOnce(&T, &mut H)) -> u64 {
        let known = self.0.hash.load(Relaxed);
        if known != 0 {
            return known;
        }
        let mut h = H::default();
        f(&self.0.value, &mut h);
        // 0 means unknown: a hash of 0 is remembered as 1.
        let v = h.finish().max(1);
        self.0.hash.store(v, Relaxed);
        v
    }

    /// Hints this part's counts, remembered hash and value into the cache,
    /// up to four lines (a node's state is smaller than that): a copy of the
    /// world and its fingerprint read the counts and the hash, a step the value.
    #[inline(always)]
    pub(crate) fn prefetch(&self) {
        // The `Arc`'s two counts are just before `Inner` (if a later std
        // moved them, the hint would only be less useful).
        const COUNTS: usize = 2 * std::mem::size_of::<usize>();
        let start = Arc::as_ptr(&self.0).cast::<u8>().wrapping_sub(COUNTS);
        let size = (COUNTS + std::mem::size_of::<Inner<T>>()).min(256);
        crate::prefetch::span(start, size);
    }

    /// Whether no other copy shares the value (no weak reference is ever made).
    #[inline]
    pub(crate) fn is_unique(&self) -> bool {
        self.copies() == 1
    }

    /// How many copies share the value.
    #[inline]
    pub(crate) fn copies(&self) -> usize {
        Arc::strong_count(&self.0)
    }

    /// Where the value is: one address, one value (two equal values have two).
    #[inline]
    pub(crate) fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// The remembered hash ([`Shared::hash_with`]), 0 while unknown.
    #[inline]
    pub(crate) fn known_hash(&self) -> u64 {
        self.0.hash.load(Relaxed)
    }

    /// The value itself: moved out if no other copy shares it, else copied.
    pub fn into_inner(self) -> T
    where
        T: Clone,
    {
        match Arc::try_unwrap(self.0) {
            Ok(inner) => inner.value,
            Err(shared) => shared.value.clone(),
        }
    }

    /// The value, to give back room its collections grew into, only if no
    /// other copy shares it (a shared one was copied at its length). `f` must
    /// not change what the value is: the remembered hash is kept.
    pub fn if_unique(&mut self, f: impl FnOnce(&mut T)) {
        if let Some(inner) = Arc::get_mut(&mut self.0) {
            f(&mut inner.value);
        }
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0.value
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    /// Copies the value if another copy of the world shares it, and forgets
    /// its hash (the caller may change it).
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // Not `Arc::make_mut`: no copy has a weak reference, and its code for
        // them weighed on the page (one instance per shared part).
        if Arc::get_mut(&mut self.0).is_none() {
            let value = self.0.value.clone();
            self.0 = Arc::new(Inner {
                value,
                hash: AtomicU64::new(0),
            });
        }
        let inner = Arc::get_mut(&mut self.0).expect("unique now");
        *inner.hash.get_mut() = 0;
        &mut inner.value
    }
}

impl<T> Clone for Shared<T> {
    #[inline]
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<'a, T> IntoIterator for &'a Shared<T>
where
    &'a T: IntoIterator,
{
    type Item = <&'a T as IntoIterator>::Item;
    type IntoIter = <&'a T as IntoIterator>::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        (&self.0.value).into_iter()
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.value == other.0.value
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: Hash> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.value.hash(state);
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.value.fmt(f)
    }
}

impl<T: Default> Default for Shared<T> {
    fn default() -> Self {
        Shared::new(T::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_shares_until_it_changes_and_then_hashes_anew() {
        let a = Shared::new(vec![1, 2, 3]);
        let mut b = a.clone();
        let hash = |v: &Vec<i32>, h: &mut std::hash::DefaultHasher| v.hash(h);
        let ha = a.hash_with(hash);
        assert_eq!(
            b.hash_with(|_, _: &mut std::hash::DefaultHasher| panic!("remembered")),
            ha
        );
        assert!(Arc::ptr_eq(&a.0, &b.0));
        b.push(4);
        assert!(!Arc::ptr_eq(&a.0, &b.0));
        assert_eq!(*a, vec![1, 2, 3]);
        assert_ne!(b.hash_with(hash), ha);
        b.pop();
        assert_eq!(b.hash_with(hash), ha);
        assert_eq!(a, b);
    }
}
