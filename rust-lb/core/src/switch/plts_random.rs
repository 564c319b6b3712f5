//! PLTS-Random (the PLTS paper: Dixit, Prakash, Kompella, "On the Efficacy of Fine-Grained Traffic
//! Splitting Protocols in Data Center Networks", Purdue technical report and SIGCOMM 2011 poster,
//! §III-A.1; its sequel is "On the Impact of Packet Spraying in Data Center Networks", INFOCOM
//! 2013): every packet, of every flow, leaves on a port drawn uniformly at random among the
//! equal-cost next hops; no state.
//!
//! Deviation: none. All packet kinds (data, ACK, NACK) are sprayed, as the paper sprays every
//! packet; the draw comes from the switch's own seeded generator.

use super::chooser::{Chooser, EgressChoice, EgressChooser};
use super::ecmp::EcmpHash;
use super::packet::{EgressCandidate, PacketMeta};
use crate::error::ParamError;
use crate::rng::SimRng;
use crate::scheme::{NoParams, Scheme, SwitchRole};
use crate::time::SimTime;

/// Uniform random egress per packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PltsRandom;

impl EgressChooser for PltsRandom {
    const READS_PORT_LOAD: bool = false;

    fn choose(
        &mut self,
        _now: SimTime,
        _pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> EgressChoice {
        let n = u32::try_from(candidates.len()).unwrap_or(u32::MAX);
        EgressChoice::at(usize::try_from(rng.below(n)).unwrap_or(0))
    }
}

impl Scheme for PltsRandom {
    type Config = NoParams;

    fn validate(_config: &NoParams) -> Result<(), ParamError> {
        Ok(())
    }
}

impl SwitchRole for PltsRandom {
    type Agent = Chooser<PltsRandom>;

    fn agent(_config: &NoParams, _switch_id: u32, _ecmp: EcmpHash) -> Chooser<PltsRandom> {
        Chooser(PltsRandom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::test_support::{cands, data};

    #[test]
    fn uniform_over_candidates() {
        // 4 ports, 40000 packets of one flow: chi-square, 3 degrees of freedom, p = 0.001 → 16.27.
        let mut c = PltsRandom;
        let mut rng = SimRng::new(9);
        let cs = cands(&[0, 0, 0, 0]);
        let mut counts = [0u32; 4];
        for psn in 0..40_000 {
            counts[c.choose(SimTime::ZERO, &data(7, psn), &cs, &mut rng).index] += 1;
        }
        let chi2: f64 = counts
            .iter()
            .map(|&k| (f64::from(k) - 10_000.0).powi(2) / 10_000.0)
            .sum();
        assert!(chi2 < 16.27, "chi2 = {chi2}, {counts:?}");
    }
}
