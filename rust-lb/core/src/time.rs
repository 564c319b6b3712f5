//! Simulated time in integer nanoseconds (the resolution of the reference simulator's outputs).

use std::fmt;
use std::ops::{Add, Sub};

/// A point in simulated time, in nanoseconds since the start of the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(u64);

/// A span of simulated time, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimDuration(u64);

impl SimTime {
    /// The start of the simulation.
    pub const ZERO: SimTime = SimTime(0);
    /// A time later than any real event; used for "no deadline".
    pub const NEVER: SimTime = SimTime(u64::MAX);

    /// The time `ns` nanoseconds after the start.
    #[must_use]
    pub const fn from_ns(ns: u64) -> Self {
        SimTime(ns)
    }

    /// Nanoseconds since the start.
    #[must_use]
    pub const fn as_ns(self) -> u64 {
        self.0
    }

    /// Time elapsed since `earlier`, or zero if `earlier` is later.
    #[must_use]
    pub const fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    /// No time.
    pub const ZERO: SimDuration = SimDuration(0);

    /// A span of `ns` nanoseconds.
    #[must_use]
    pub const fn from_ns(ns: u64) -> Self {
        SimDuration(ns)
    }

    /// A span of `us` microseconds.
    #[must_use]
    pub const fn from_us(us: u64) -> Self {
        SimDuration(us.saturating_mul(1_000))
    }

    /// The span in nanoseconds.
    #[must_use]
    pub const fn as_ns(self) -> u64 {
        self.0
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    /// Saturates at [`SimTime::NEVER`] instead of overflowing.
    fn add(self, rhs: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    /// Saturates at zero instead of underflowing.
    fn sub(self, rhs: SimTime) -> SimDuration {
        self.saturating_since(rhs)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ns", self.0)
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ns", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(SimTime::NEVER + SimDuration::from_ns(1), SimTime::NEVER);
        assert_eq!(SimTime::from_ns(5) - SimTime::from_ns(9), SimDuration::ZERO);
        assert_eq!(
            SimTime::from_ns(9) - SimTime::from_ns(5),
            SimDuration::from_ns(4)
        );
        assert_eq!(SimDuration::from_us(3).as_ns(), 3_000);
    }
}
