//! PLTS-Counter (Dixit et al., the PLTS paper, §III-A.2): the switch keeps one byte
//! counter per output port; each packet leaves on the candidate with the smallest counter,
//! which then grows by the packet's size.
//!
//! Deviations: ties go to the first candidate in routing-table order (the paper does not say);
//! the counters live in a table indexed by port that grows the first time a port index is
//! seen (never on the steady-state path).

use super::chooser::{Chooser, EgressChoice, EgressChooser};
use super::ecmp::EcmpHash;
use super::packet::{EgressCandidate, PacketMeta};
use crate::error::ParamError;
use crate::rng::SimRng;
use crate::scheme::{NoParams, Scheme, SwitchRole};
use crate::time::SimTime;

/// Least-bytes-sent egress per packet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PltsCounter {
    sent_bytes: Vec<u64>,
}

impl PltsCounter {
    /// Counters all at zero.
    #[must_use]
    pub fn new() -> Self {
        PltsCounter::default()
    }

    /// Bytes this chooser has sent to `port` so far.
    #[must_use]
    pub fn sent_bytes(&self, port: u32) -> u64 {
        usize::try_from(port)
            .ok()
            .and_then(|p| self.sent_bytes.get(p))
            .copied()
            .unwrap_or(0)
    }
}

impl EgressChooser for PltsCounter {
    const READS_PORT_LOAD: bool = false;

    fn choose(
        &mut self,
        _now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        _rng: &mut SimRng,
    ) -> EgressChoice {
        let mut best = 0;
        let mut best_bytes = u64::MAX;
        for (i, c) in candidates.iter().enumerate() {
            let b = self.sent_bytes(c.port);
            if b < best_bytes {
                best = i;
                best_bytes = b;
            }
        }
        if let Some(port) = candidates
            .get(best)
            .and_then(|c| usize::try_from(c.port).ok())
        {
            if port >= self.sent_bytes.len() {
                self.sent_bytes.resize(port + 1, 0);
            }
            if let Some(b) = self.sent_bytes.get_mut(port) {
                *b = b.saturating_add(u64::from(pkt.size_bytes));
            }
        }
        EgressChoice::at(best)
    }
}

impl Scheme for PltsCounter {
    type Config = NoParams;

    fn validate(_config: &NoParams) -> Result<(), ParamError> {
        Ok(())
    }
}

impl SwitchRole for PltsCounter {
    type Agent = Chooser<PltsCounter>;

    fn agent(_config: &NoParams, _switch_id: u32, _ecmp: EcmpHash) -> Chooser<PltsCounter> {
        Chooser(PltsCounter::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::test_support::{cands, data};

    #[test]
    fn keeps_ports_within_one_packet_of_each_other() {
        let mut c = PltsCounter::new();
        let mut rng = SimRng::new(1);
        let cs = cands(&[0, 0, 0, 0]);
        let mut seq = Vec::new();
        for psn in 0..1000 {
            let mut p = data(psn % 3, psn);
            p.size_bytes = 100 + (psn % 7) * 150; // mixed sizes
            seq.push(c.choose(SimTime::ZERO, &p, &cs, &mut rng).index);
        }
        assert_eq!(&seq[..4], &[0, 1, 2, 3], "ties go to the first candidate");
        let bytes: Vec<u64> = (0..4).map(|p| c.sent_bytes(p)).collect();
        let (lo, hi) = (bytes.iter().min().unwrap(), bytes.iter().max().unwrap());
        assert!(hi - lo <= 1000, "{bytes:?}: within one (largest) packet");
    }
}
