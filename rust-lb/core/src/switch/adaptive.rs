//! Adaptive routing, the "AR" baseline of the Themis paper (§2.2, §5) and of the REPS artifact
//! ("nvidia" mode of its `htsim/sim/datacenter/fat_tree_switch.cpp`): every packet leaves on the
//! equal-cost candidate with the fewest queued bytes.
//!
//! Deviations: ties are broken uniformly at random among the shortest queues (with all queues
//! empty, as at low load, this is random spraying; a fixed tie-break would send everything to
//! one port). Every packet kind is adaptively routed (htsim keeps packets under 100 B on ECMP;
//! our ACKs are 60 B and few, so the difference is small and documented).

use super::chooser::{EgressChoice, EgressChooser};
use super::packet::{EgressCandidate, PacketMeta};
use crate::rng::SimRng;
use crate::time::SimTime;

/// Shortest-queue egress per packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Adaptive;

/// Index of a candidate with the fewest queued bytes among `indices` (an iterator over
/// candidate indices), ties broken uniformly at random (reservoir sampling, one draw per tie).
pub(crate) fn shortest(
    candidates: &[EgressCandidate],
    indices: impl Iterator<Item = usize>,
    rng: &mut SimRng,
) -> usize {
    let mut best = 0;
    let mut best_q = u64::MAX;
    let mut ties = 0u32;
    for i in indices {
        let Some(c) = candidates.get(i) else { continue };
        if c.queue_bytes < best_q {
            best = i;
            best_q = c.queue_bytes;
            ties = 1;
        } else if c.queue_bytes == best_q && i != best {
            ties = ties.saturating_add(1);
            if rng.below(ties) == 0 {
                best = i;
            }
        }
    }
    best
}

impl EgressChooser for Adaptive {
    fn choose(
        &mut self,
        _now: SimTime,
        _pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> EgressChoice {
        EgressChoice::at(shortest(candidates, 0..candidates.len(), rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::test_support::{cands, data};

    #[test]
    fn picks_the_shortest_queue_and_spreads_ties() {
        let mut a = Adaptive;
        let mut rng = SimRng::new(2);
        let cs = cands(&[5000, 1048, 9000, 1048]);
        let mut counts = [0u32; 4];
        for psn in 0..4000 {
            counts[a.choose(SimTime::ZERO, &data(1, psn), &cs, &mut rng).index] += 1;
        }
        assert_eq!((counts[0], counts[2]), (0, 0), "{counts:?}");
        // Ties: binomial(4000, 1/2), 4 sigma = 126.
        assert!(counts[1].abs_diff(2000) < 126, "{counts:?}");
        let cs = cands(&[3000, 2000, 1000, 4000]);
        assert_eq!(a.choose(SimTime::ZERO, &data(1, 0), &cs, &mut rng).index, 2);
    }
}
