//! Virtual time. The simulation never reads a wall clock: time is a number of
//! milliseconds that only the event queue moves forward.

use std::fmt;
use std::ops::{Add, Sub};

/// A point on the virtual clock, in milliseconds since the run began.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Millis(pub u64);

impl Millis {
    pub const ZERO: Millis = Millis(0);
    pub const SECOND: Millis = Millis(1_000);
    pub const HOUR: Millis = Millis(3_600_000);

    pub const fn secs(s: u64) -> Millis {
        Millis(s * 1_000)
    }
    pub const fn hours(h: u64) -> Millis {
        Millis(h * 3_600_000)
    }
    pub fn saturating_sub(self, other: Millis) -> Millis {
        Millis(self.0.saturating_sub(other.0))
    }
}

impl Add for Millis {
    type Output = Millis;
    fn add(self, rhs: Millis) -> Millis {
        Millis(self.0 + rhs.0)
    }
}

impl Sub for Millis {
    type Output = Millis;
    fn sub(self, rhs: Millis) -> Millis {
        Millis(self.0 - rhs.0)
    }
}

impl fmt::Display for Millis {
    /// `1.250 s`, `25 h 0 min 3.100 s`: short, exact, language-neutral.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0;
        let h = ms / 3_600_000;
        let m = (ms / 60_000) % 60;
        let s = (ms / 1000) % 60;
        let milli = ms % 1000;
        if h > 0 {
            write!(f, "{h} h {m} min {s}.{milli:03} s")
        } else if m > 0 {
            write!(f, "{m} min {s}.{milli:03} s")
        } else {
            write!(f, "{s}.{milli:03} s")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_compact_and_exact() {
        assert_eq!(Millis(1250).to_string(), "1.250 s");
        assert_eq!(Millis(61_005).to_string(), "1 min 1.005 s");
        assert_eq!(
            (Millis::hours(25) + Millis(3100)).to_string(),
            "25 h 0 min 3.100 s"
        );
    }
}
