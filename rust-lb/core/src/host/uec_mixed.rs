//! The UEC htsim's default load balancer, "mixed": Ultra Ethernet Consortium htsim
//! (`ultraethernet/uet-htsim`), `htsim/sim/uec_mp.cpp`, `UecMpMixed` over `UecMpRepsLegacy`
//! and `UecMpBitmap`, commit 40ccb05; what `htsim_uec` runs without `-load_balancing_algo`
//! (`datacenter/main_uec.cpp`).
//!
//! Two pieces see every piece of feedback:
//! * **Recycling** (htsim's REPS-legacy, its `nextEntropyRecycle`): every entropy reported good
//!   (an unmarked ACK, or an unmarked NACK of a packet trimmed at its last hop) joins the back
//!   of a queue, with its upper bits as echoed; nothing else is remembered. The queue has no
//!   bound and no expiry, a queued entropy is used once.
//! * **The bitmap** ([`super::uec_bitmap`]): penalties per entropy, XOR-permuted rounds that
//!   skip penalised entries.
//!
//! Each data packet takes the front of the recycling queue if there is one, else the bitmap's
//! next pick; the bitmap's walk moves only when it picks. Feedback is classified as the bitmap
//! module says ([`PathFeedback::of`]); the parameters are the bitmap's.
//!
//! Our `reps` ([`super::reps`], htsim's `-load_balancing_algo reps`, `UecMpReps`) is not this
//! recycling: it keeps only the newest `buffer_size` (8) good entropies, explores at the start
//! and freezes on timeouts; REPS-legacy keeps every good entropy, oldest first, and in `mixed`
//! neither explores (its first-window walk is not used by `mixed`) nor freezes. Hence the
//! queue here. Randomness: the bitmap's, from the queue pair's [`SimRng`].

use std::collections::VecDeque;

use super::selector::{Feedback, PathSelector, SendCx};
use super::uec_bitmap::{PathFeedback, UecBitmap, UecBitmapConfig};
use crate::error::ParamError;
use crate::rng::SimRng;
use crate::scheme::{HostRole, Scheme};
use crate::units::Entropy;

/// The UEC htsim's "mixed" load balancer for one queue pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UecMixed {
    /// Entropies reported good, oldest first (REPS-legacy's list).
    recycled: VecDeque<Entropy>,
    bitmap: UecBitmap,
    /// Packets sent on a recycled entropy (for tests and counters).
    recycled_sends: u64,
}

impl UecMixed {
    /// Nothing recycled yet; the bitmap's draws from `rng`.
    #[must_use]
    pub fn new(config: &UecBitmapConfig, rng: &mut SimRng) -> Self {
        UecMixed {
            recycled: VecDeque::new(),
            bitmap: UecBitmap::new(config, rng),
            recycled_sends: 0,
        }
    }

    /// Entropies waiting to be recycled.
    #[must_use]
    pub fn queued(&self) -> usize {
        self.recycled.len()
    }

    /// Packets sent so far on a recycled entropy.
    #[must_use]
    pub fn recycled_sends(&self) -> u64 {
        self.recycled_sends
    }

    /// The bitmap piece.
    #[must_use]
    pub fn bitmap(&self) -> &UecBitmap {
        &self.bitmap
    }
}

impl PathSelector for UecMixed {
    fn next_entropy(&mut self, _cx: &SendCx, rng: &mut SimRng) -> Entropy {
        if let Some(e) = self.recycled.pop_front() {
            self.recycled_sends += 1;
            return e;
        }
        self.bitmap.pick(rng)
    }

    fn on_feedback(&mut self, fb: &Feedback, _rng: &mut SimRng) {
        self.bitmap.learn(fb);
        if PathFeedback::of(fb) == Some(PathFeedback::Good) {
            self.recycled.push_back(fb.entropy);
        }
    }
}

impl Scheme for UecMixed {
    type Config = UecBitmapConfig;
    const SPRAYS_ON_FEEDBACK: bool = true;

    fn validate(config: &UecBitmapConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl HostRole for UecMixed {
    type Selector = Box<UecMixed>;

    fn selector(config: &UecBitmapConfig, rng: &mut SimRng) -> Box<UecMixed> {
        Box::new(UecMixed::new(config, rng))
    }
}

#[cfg(test)]
mod tests {
    use super::super::selector::FeedbackKind;
    use super::super::uec_bitmap::tests::fb;
    use super::*;
    use crate::time::SimTime;
    use crate::units::Psn;

    fn cx() -> SendCx {
        SendCx {
            now: SimTime::ZERO,
            psn: Psn(0),
            retransmission: false,
            inflight_pkts: 0,
            every_arrival_answered: false,
        }
    }

    fn mixed(seed: u64) -> (UecMixed, SimRng) {
        let mut rng = SimRng::new(seed);
        let config = UecBitmapConfig {
            num_entropies: 16,
            ..UecBitmapConfig::default()
        };
        (UecMixed::new(&config, &mut rng), rng)
    }

    #[test]
    fn recycled_entropies_come_first_oldest_first_once_each() {
        let (mut m, mut rng) = mixed(1);
        // The bitmap alone, from a clone: what an empty queue gives.
        let (mut alone, mut alone_rng) = (m.bitmap.clone(), rng.clone());
        for e in [0x1234, 0x0007, 0xff03] {
            m.on_feedback(&fb(FeedbackKind::Ack, e, false, false), &mut rng);
        }
        // Not good news: not queued (an ECN echo, a NACK before the last hop, a timeout).
        m.on_feedback(&fb(FeedbackKind::Ack, 9, true, false), &mut rng);
        m.on_feedback(&fb(FeedbackKind::Nack, 10, false, false), &mut rng);
        m.on_feedback(&fb(FeedbackKind::Timeout, 11, false, false), &mut rng);
        // A last-hop trim, unmarked, is good news (htsim processNack).
        m.on_feedback(&fb(FeedbackKind::Nack, 12, false, true), &mut rng);
        assert_eq!(m.queued(), 4);
        let got: Vec<u16> = (0..6).map(|_| m.next_entropy(&cx(), &mut rng).0).collect();
        // The four queued ones, with their upper bits as echoed, then the bitmap's picks,
        // which the bitmap alone (fed the same feedback) makes too.
        assert_eq!(got[..4], [0x1234, 0x0007, 0xff03, 12]);
        for f in [
            fb(FeedbackKind::Ack, 9, true, false),
            fb(FeedbackKind::Nack, 10, false, false),
            fb(FeedbackKind::Timeout, 11, false, false),
        ] {
            alone.learn(&f);
        }
        let want: Vec<u16> = (0..2).map(|_| alone.pick(&mut alone_rng).0).collect();
        assert_eq!(got[4..], want[..]);
        assert_eq!((m.queued(), m.recycled_sends()), (0, 4));
    }

    #[test]
    fn feedback_reaches_both_pieces() {
        let (mut m, mut rng) = mixed(2);
        m.on_feedback(&fb(FeedbackKind::Ack, 5, true, false), &mut rng);
        m.on_feedback(&fb(FeedbackKind::Nack, 6, false, false), &mut rng);
        m.on_feedback(&fb(FeedbackKind::Timeout, 6, false, false), &mut rng);
        m.on_feedback(&fb(FeedbackKind::Ack, 7, false, false), &mut rng);
        let b = m.bitmap();
        // ECN +1 on 5, NACK +4 on 6, the timeout's maximum on entropy 0 (htsim's UNKNOWN_EV).
        assert_eq!(
            [5, 6, 0, 7].map(|e| b.penalty_of(Entropy(e))),
            [1, 4, 15, 0]
        );
        assert_eq!(m.queued(), 1, "only the unmarked ACK is recycled");
    }

    #[test]
    fn same_seed_same_decisions() {
        let run = |seed| {
            let (mut m, mut rng) = mixed(seed);
            (0..300u16)
                .map(|i| {
                    let e = m.next_entropy(&cx(), &mut rng);
                    if i % 2 == 0 {
                        m.on_feedback(&fb(FeedbackKind::Ack, e.0, i % 6 == 0, false), &mut rng);
                    }
                    e.0
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }
}
