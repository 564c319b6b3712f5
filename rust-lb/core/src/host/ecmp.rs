//! Flow-level ECMP at the sender: one entropy per queue pair for its whole life. The switches'
//! hash of the 5-tuple then pins the flow to one path.

use super::selector::{PathSelector, SendCx};
use crate::rng::SimRng;
use crate::units::Entropy;

/// Keeps the entropy drawn when the queue pair was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedEntropy {
    entropy: Entropy,
}

impl FixedEntropy {
    /// Draws the flow's entropy uniformly from the 16-bit space.
    pub fn new(rng: &mut SimRng) -> Self {
        Self::with(Entropy(rng.next_u16()))
    }

    /// Keeps `entropy` (a flow whose source port is given, e.g. the reference simulator's).
    #[must_use]
    pub const fn with(entropy: Entropy) -> Self {
        FixedEntropy { entropy }
    }
}

impl PathSelector for FixedEntropy {
    fn next_entropy(&mut self, _cx: &SendCx, _rng: &mut SimRng) -> Entropy {
        self.entropy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::HostLbConfig;
    use crate::host::HostLb;
    use crate::time::SimTime;
    use crate::units::Psn;

    fn cx(psn: u32) -> SendCx {
        SendCx {
            now: SimTime::from_ns(u64::from(psn)),
            psn: Psn(psn),
            retransmission: false,
            inflight_pkts: 0,
            every_arrival_answered: false,
        }
    }

    #[test]
    fn stable_within_a_flow_and_different_across_flows() {
        let flows: Vec<Entropy> = (0..64)
            .map(|seed| {
                let mut lb = HostLb::new(&HostLbConfig::FixedPerFlow, seed);
                let first = lb.next_entropy(&cx(0));
                assert!((1..1000).all(|p| lb.next_entropy(&cx(p)) == first));
                first
            })
            .collect();
        let mut distinct = flows.clone();
        distinct.sort_unstable();
        distinct.dedup();
        // 64 draws from 65536 values: a collision has probability ~3%; this seed set has none.
        assert_eq!(distinct.len(), flows.len());
    }
}
