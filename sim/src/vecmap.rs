//! A small ordered map over a sorted `Vec`. The world's maps hold a handful of
//! entries, so a sorted vector is as fast as a B-tree here and compiles to far
//! less WebAssembly (one B-tree instantiation per key/value type costs kilobytes).
//! Iteration is in key order, so runs stay deterministic.

use std::borrow::Borrow;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VecMap<K, V> {
    items: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap { items: Vec::new() }
    }
}

impl<K: Ord, V> VecMap<K, V> {
    pub fn new() -> Self {
        VecMap { items: Vec::new() }
    }

    fn find<Q: Ord + ?Sized>(&self, k: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.items.binary_search_by(|(x, _)| x.borrow().cmp(k))
    }

    /// Inserts or replaces; returns the previous value.
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        match self.find(&k) {
            Ok(i) => Some(std::mem::replace(&mut self.items[i].1, v)),
            Err(i) => {
                self.items.insert(i, (k, v));
                None
            }
        }
    }

    pub fn get<Q: Ord + ?Sized>(&self, k: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(k).ok().map(|i| &self.items[i].1)
    }

    pub fn get_mut<Q: Ord + ?Sized>(&mut self, k: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.find(k).ok().map(|i| &mut self.items[i].1)
    }

    /// The value under `k`, inserting `f()` first if there is none.
    pub fn get_or_insert_with(&mut self, k: K, f: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&k) {
            Ok(i) => i,
            Err(i) => {
                self.items.insert(i, (k, f()));
                i
            }
        };
        &mut self.items[i].1
    }

    pub fn remove<Q: Ord + ?Sized>(&mut self, k: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.find(k).ok().map(|i| self.items.remove(i).1)
    }

    pub fn contains_key<Q: Ord + ?Sized>(&self, k: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(k).is_ok()
    }

    pub fn retain(&mut self, mut f: impl FnMut(&K, &mut V) -> bool) {
        self.items.retain_mut(|(k, v)| f(k, v));
    }
}

impl<K, V> VecMap<K, V> {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// Gives back the room the map grew into beyond its entries.
    pub fn shrink_to_fit(&mut self) {
        self.items.shrink_to_fit();
    }

    /// Room for exactly one more entry (a map that stays small and is copied
    /// often: doubling would leave room that a copy of the world carries).
    pub fn reserve_exact_one(&mut self) {
        self.items.reserve_exact(1);
    }

    /// Where the entries are (for a prefetch).
    pub(crate) fn as_ptr(&self) -> *const (K, V) {
        self.items.as_ptr()
    }

    /// The entry with the smallest key.
    pub fn first_key(&self) -> Option<&K> {
        self.items.first().map(|(k, _)| k)
    }

    /// Entries in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> {
        self.items.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> {
        self.items.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> {
        self.items.iter().map(|(_, v)| v)
    }
}

impl<K: Ord + Borrow<Q>, Q: Ord + ?Sized, V> std::ops::Index<&Q> for VecMap<K, V> {
    type Output = V;
    /// Like `BTreeMap`'s: panics when the key is absent.
    fn index(&self, k: &Q) -> &V {
        self.get(k).expect("no entry for this key")
    }
}

impl<K, V> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for VecMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut m = VecMap::new();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_keys_sorted_and_unique() {
        let mut m = VecMap::new();
        for k in [5, 1, 3, 1] {
            m.insert(k, k * 10);
        }
        assert_eq!(m.keys().copied().collect::<Vec<_>>(), vec![1, 3, 5]);
        assert_eq!(m.insert(3, 0), Some(30));
        assert_eq!(m.remove(&1), Some(10));
        assert_eq!(m.get(&5), Some(&50));
        assert!(!m.contains_key(&1));
        *m.get_or_insert_with(7, || 70) += 1;
        assert_eq!(m.get(&7), Some(&71));
        m.retain(|k, _| *k > 3);
        assert_eq!(m.into_iter().collect::<Vec<_>>(), vec![(5, 50), (7, 71)]);
    }

    #[test]
    fn string_keys_look_up_by_str() {
        let mut m: VecMap<String, u8> = VecMap::new();
        m.insert("idem:K1".into(), 1);
        assert_eq!(m.get("idem:K1"), Some(&1));
    }
}
