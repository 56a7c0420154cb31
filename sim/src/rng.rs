//! The one source of randomness: a seeded SplitMix64 generator owned by the
//! world. Latency jitter, backoff jitter, random faults and UUIDs all draw from
//! it, in a fixed order, so a (scenario, seed) pair always gives the same run.

/// Seeded pseudo-random generator (SplitMix64). Small, fast, `Clone + Eq + Hash`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`); 0 when `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// True with probability `permille / 1000`.
    pub fn chance(&mut self, permille: u32) -> bool {
        permille > 0 && self.below(1000) < u64::from(permille)
    }

    /// A random (version 4, variant 1) UUID in its canonical text form.
    pub fn uuid_v4(&mut self) -> String {
        let hi = (self.next_u64() & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000;
        let lo = (self.next_u64() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            hi >> 32,
            (hi >> 16) & 0xFFFF,
            hi & 0xFFFF,
            lo >> 48,
            lo & 0xFFFF_FFFF_FFFF
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
    }

    #[test]
    fn uuid_is_version_4_variant_1() {
        let mut r = Rng::new(42);
        for _ in 0..50 {
            let u = r.uuid_v4();
            assert_eq!(u.len(), 36);
            let b: Vec<char> = u.chars().collect();
            assert_eq!(b[14], '4', "{u}");
            assert!(matches!(b[19], '8' | '9' | 'a' | 'b'), "{u}");
        }
    }
}
