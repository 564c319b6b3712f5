//! PLTS-RR, per-flow round robin (Dixit et al., INFOCOM 2013, seed 003 §III-A.3): each switch
//! remembers, per flow, the next hop taken by the flow's previous packet and sends the next
//! packet to the following candidate.
//!
//! Deviations: a flow is the 4-tuple (addresses, UDP ports); its first packet starts where the
//! switch's ECMP hash would put it (the paper leaves the start open), so flows start spread.
//! The per-flow table is never aged (the paper's per-prefix variant is not modelled); a
//! table entry is made on a flow's first packet, never on later ones.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::ecmp::EcmpHash;
use super::{EgressCandidate, EgressChoice, EgressChooser, PacketMeta};
use crate::rng::SimRng;
use crate::time::SimTime;

/// The hasher of the switch's per-flow tables: a multiply-rotate word hash (the one rustc uses
/// internally, written here from its published description), fixed-keyed, so tables behave the
/// same in every run; it costs a few nanoseconds where SipHash costs tens. The tables are only
/// looked up, never iterated, so decisions never depend on the hash anyway.
#[derive(Debug, Clone, Copy, Default)]
pub struct WordHasher(u64);

impl WordHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            for (d, s) in w.iter_mut().zip(chunk) {
                *d = *s;
            }
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

/// Builds [`WordHasher`]s for the switch tables.
pub(crate) type TableHasher = BuildHasherDefault<WordHasher>;

/// Per-flow round-robin egress.
#[derive(Debug, Clone)]
pub struct PltsRr {
    ecmp: EcmpHash,
    next: HashMap<(u32, u32, u16, u16), u32, TableHasher>,
}

impl PltsRr {
    /// A table-less chooser; `ecmp` places each flow's first packet.
    #[must_use]
    pub fn new(ecmp: EcmpHash) -> Self {
        PltsRr {
            ecmp,
            next: HashMap::default(),
        }
    }

    /// Flows in the table.
    #[must_use]
    pub fn flows(&self) -> usize {
        self.next.len()
    }
}

impl EgressChooser for PltsRr {
    fn choose(
        &mut self,
        _now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        _rng: &mut SimRng,
    ) -> EgressChoice {
        let n = candidates.len().max(1);
        let key = (pkt.sip, pkt.dip, pkt.sport.0, pkt.dport);
        let ecmp = &self.ecmp;
        let slot = self
            .next
            .entry(key)
            .or_insert_with(|| u32::try_from(ecmp.index(pkt, n)).unwrap_or(0));
        let i = usize::try_from(*slot).unwrap_or(0) % n;
        *slot = u32::try_from((i + 1) % n).unwrap_or(0);
        EgressChoice::at(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::test_support::{cands, data};

    #[test]
    fn each_flow_cycles_through_every_candidate() {
        let mut c = PltsRr::new(EcmpHash::new(4));
        let mut rng = SimRng::new(0);
        let cs = cands(&[0, 0, 0, 0]);
        for flow in 0..3u32 {
            let first = c.choose(SimTime::ZERO, &data(flow, 0), &cs, &mut rng).index;
            assert_eq!(first, EcmpHash::new(4).index(&data(flow, 0), 4));
            for psn in 1..9 {
                let i = c
                    .choose(SimTime::ZERO, &data(flow, psn), &cs, &mut rng)
                    .index;
                assert_eq!(i, (first + psn as usize) % 4, "flow {flow} psn {psn}");
            }
        }
        assert_eq!(c.flows(), 3);
    }
}
