//! The per-packet chooser: the smaller role of the schemes that only pick one equal-cost
//! candidate per packet ([`EgressChooser`]: ECMP, PLTS, adaptive routing, DRILL), and
//! [`Chooser`], which makes any of them a whole [`SwitchAgent`].

use super::agent::{LbTag, SwitchAgent, Verdict};
use super::packet::{EgressCandidate, PacketMeta};
use crate::rng::SimRng;
use crate::time::SimTime;
use crate::units::Entropy;

/// The decision for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EgressChoice {
    /// Index into the candidates passed in.
    pub index: usize,
    /// A new entropy (UDP source port) to write into the packet before it leaves, when the
    /// algorithm steers the next tiers through the header (Themis-S in a 3-tier fabric).
    pub rewrite_entropy: Option<Entropy>,
}

impl EgressChoice {
    /// Candidate `index`, header unchanged.
    #[must_use]
    pub const fn at(index: usize) -> Self {
        EgressChoice {
            index,
            rewrite_entropy: None,
        }
    }
}

/// One switch's egress chooser. Implementations are pure: time and randomness are arguments.
pub trait EgressChooser {
    /// Whether `choose` reads the candidates' loads (see [`SwitchAgent::reads_port_load`]).
    const READS_PORT_LOAD: bool = true;

    /// Fires for each packet with at least two candidates; the returned index must be
    /// `< candidates.len()`.
    fn choose(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> EgressChoice;
}

/// A scheme whose switch role is only an [`EgressChooser`]: it is asked for packets with at
/// least two candidates, and takes candidate 0 otherwise.
#[derive(Debug, Clone)]
pub struct Chooser<C>(pub C);

/// The verdict of `chooser` for a packet: its choice among two or more candidates, else
/// candidate 0.
pub fn chosen_verdict(
    chooser: &mut impl EgressChooser,
    now: SimTime,
    pkt: &PacketMeta,
    candidates: &[EgressCandidate],
    rng: &mut SimRng,
) -> Verdict {
    if candidates.len() <= 1 {
        return Verdict::at(0);
    }
    let c = chooser.choose(now, pkt, candidates, rng);
    Verdict::Forward {
        index: c.index,
        rewrite_entropy: c.rewrite_entropy,
    }
}

impl<C: EgressChooser> SwitchAgent for Chooser<C> {
    fn reads_port_load(&self) -> bool {
        C::READS_PORT_LOAD
    }
    fn on_ingress(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        _tag: &mut LbTag,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> Verdict {
        chosen_verdict(&mut self.0, now, pkt, candidates, rng)
    }
}
