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

    /// The flow's entropy.
    #[must_use]
    pub const fn entropy(&self) -> Entropy {
        self.entropy
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

    /// `HostLb::fixed_entropy`'s promise, on which the NIC skips its per-packet calls: the
    /// fixed selector's answers stay constant through every kind of feedback and timer; any
    /// other scheme's selector makes no such promise.
    #[test]
    fn fixed_entropy_is_every_answer_of_a_fixed_selector() {
        use crate::host::{Feedback, FeedbackKind};
        use crate::time::SimDuration;
        let mut lb = HostLb::for_flow(&HostLbConfig::FixedPerFlow, 7, Some(Entropy(4242)));
        assert_eq!(lb.fixed_entropy(), Some(Entropy(4242)));
        let kinds = [
            FeedbackKind::Ack,
            FeedbackKind::Nack,
            FeedbackKind::Cnp,
            FeedbackKind::Timeout,
            FeedbackKind::ProbeAck,
        ];
        for (i, kind) in kinds.into_iter().cycle().take(50).enumerate() {
            let psn = u32::try_from(i).unwrap();
            lb.on_feedback(&Feedback {
                kind,
                now: SimTime::from_ns(u64::from(psn) * 1000),
                entropy: Entropy(4242),
                psn: Psn(psn),
                rtt: Some(SimDuration::from_ns(9000)),
                ecn: i % 2 == 0,
                last_hop: i % 3 == 0,
            });
            lb.on_timer(SimTime::from_ns(u64::from(psn) * 1000 + 1));
            assert_eq!(lb.next_entropy(&cx(psn)), Entropy(4242));
            assert_eq!(lb.poll_at(), None);
            assert_eq!(lb.send_after(), SimTime::ZERO);
            assert_eq!(
                lb.take_probe(SimTime::from_ns(u64::from(psn) * 1000 + 2)),
                None
            );
            assert_eq!(lb.path_switches(), 0);
            assert_eq!(lb.fixed_entropy(), Some(Entropy(4242)));
        }
        let drawn = HostLb::new(&HostLbConfig::FixedPerFlow, 7);
        assert!(drawn.fixed_entropy().is_some());
        for algorithm in crate::Algorithm::ALL.iter().copied() {
            let (host, _) = crate::registry::configure(algorithm, crate::params::Table::new())
                .expect("every scheme has defaults");
            let lb = HostLb::new(&host, 7);
            assert_eq!(
                lb.fixed_entropy().is_some(),
                host == HostLbConfig::FixedPerFlow,
                "{}",
                algorithm.name()
            );
        }
    }
}
