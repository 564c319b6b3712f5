//! Flow ECMP at a switch, as the reference simulator does it (`rdma-lb.rst`, "Routing and ECMP"):
//! `candidates[murmur3([sip, dip, sport | dport << 16], seed = switch id) % n]`.
//! The host's entropy is the UDP source port, so a host algorithm steers a packet by choosing
//! its entropy; the same entropy always takes the same path.

use super::chooser::{EgressChoice, EgressChooser};
use super::packet::{EgressCandidate, PacketMeta};
use crate::hash::flow_hash;
use crate::rng::SimRng;
use crate::time::SimTime;

/// Hashes the 5-tuple (with the entropy as source port), seeded by the switch id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EcmpHash {
    seed: u32,
}

impl EcmpHash {
    /// The hash of switch `switch_id`.
    #[must_use]
    pub fn new(switch_id: u32) -> Self {
        EcmpHash { seed: switch_id }
    }

    /// The index the hash picks among `n` candidates.
    #[must_use]
    pub fn index(&self, pkt: &PacketMeta, n: usize) -> usize {
        let h = flow_hash(pkt.sip, pkt.dip, pkt.sport.0, pkt.dport, self.seed);
        usize::try_from(h).unwrap_or(0) % n.max(1)
    }
}

impl EgressChooser for EcmpHash {
    const READS_PORT_LOAD: bool = false;

    fn choose(
        &mut self,
        _now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        _rng: &mut SimRng,
    ) -> EgressChoice {
        EgressChoice::at(self.index(pkt, candidates.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::PacketKind;
    use crate::units::{Entropy, Psn};

    fn pkt(sport: u16) -> PacketMeta {
        PacketMeta {
            kind: PacketKind::Data,
            sip: 0x0b00_0001,
            dip: 0x0b00_0101,
            sport: Entropy(sport),
            dport: 100,
            psn: Psn(0),
            ingress_port: 1,
            size_bytes: 1048,
            ..PacketMeta::default()
        }
    }

    #[test]
    fn same_entropy_same_port_and_entropies_spread_evenly() {
        // 8 candidates, 8000 distinct entropies: chi-square with 7 degrees of freedom at
        // p = 0.01 is 18.48.
        let h = EcmpHash::new(5);
        let mut counts = [0u32; 8];
        for e in 0..8000u16 {
            let i = h.index(&pkt(e), 8);
            assert_eq!(i, h.index(&pkt(e), 8));
            counts[i] += 1;
        }
        let chi2: f64 = counts
            .iter()
            .map(|&c| (f64::from(c) - 1000.0).powi(2) / 1000.0)
            .sum();
        assert!(chi2 < 18.48, "chi2 = {chi2}, counts = {counts:?}");
    }

    #[test]
    fn switches_hash_differently() {
        let differing = (0..1000u16)
            .filter(|&e| EcmpHash::new(1).index(&pkt(e), 4) != EcmpHash::new(2).index(&pkt(e), 4))
            .count();
        // Independent hashes disagree on 3/4 of the entropies.
        assert!((650..850).contains(&differing), "{differing}");
    }
}
