//! Newtypes for the packet fields the algorithms read and write.

use std::fmt;

/// The 16-bit per-packet entropy that switches hash for ECMP (the RoCEv2 UDP source port).
///
/// Host algorithms choose it per data packet; ACKs and NACKs echo it back, so the sender learns
/// per path without side tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Entropy(pub u16);

/// A packet sequence number (per queue pair, counted in packets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Psn(pub u32);

impl fmt::Display for Entropy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Display for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
