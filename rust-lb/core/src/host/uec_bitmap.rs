//! The UEC htsim's bitmap load balancer: Ultra Ethernet Consortium htsim
//! (`ultraethernet/uet-htsim`), `htsim/sim/uec_mp.cpp`, `UecMpBitmap`, commit 40ccb05; its
//! `-load_balancing_algo bitmap`, and the fallback of its default, `mixed` ([`super::uec_mixed`]).
//!
//! A queue pair walks its `num_entropies` entropies (a power of two) in rounds: in a round the
//! i-th pick is `i XOR x`, and `x` is drawn afresh from the generator whenever a round ends, so
//! every entropy comes once per round (htsim's oblivious spraying, [`super::spray`] with
//! `cycle = true`). The bits above the entropy space are a per-queue-pair random constant.
//!
//! Each entropy has a penalty, a small counter. Feedback about a path adds to it: an ACK that
//! echoes ECN `ecn_penalty` (1), a NACK `nack_penalty` (4), a timeout `max_penalty` (15); the
//! sum never exceeds `max_penalty`. An unmarked ACK changes nothing. Picking walks on from the
//! round's position and takes the first entropy whose penalty is 0; the **first** penalised
//! entropy met on the way (only that one) loses one point of penalty, the others are skipped
//! unchanged. If the walk has passed every entropy of the space (all penalised), it gives up and
//! takes the entropy it stands on. The walk's position always moves one past the entropy taken.
//!
//! Which feedback is which (htsim `uec.cpp`, the calls of `processEv`, and what our uet NIC
//! delivers, [`PathFeedback::of`]): a (coalesced) ACK is ECN or good by the ECN echo of the
//! packet that triggered it; a NACK of a packet trimmed at its last hop (the switch port
//! facing the receiver; `Feedback::last_hop`) says nothing against the path and counts as an
//! ACK with the trimmed packet's ECN echo, any other NACK is a NACK; a retransmission timeout
//! is a timeout. CNPs and probe answers (not produced by the uet transport) are ignored.
//!
//! Deviation, as an option: htsim's sender keeps no per-packet entropy, so its timeout names
//! entropy 0 (`UNKNOWN_EV`) and penalises that entry whatever was lost
//! (`timeout_entropy = "zero"`, the default); our NIC knows the lost packet's entropy and
//! `timeout_entropy = "lost"` penalises that one instead. htsim's count of penalised entries
//! (`_ev_skip_count`) is only checked by an assertion there and is not kept here; htsim's
//! arguments of `nextEntropy` (sequence number, window) are unused by the bitmap, and so here.
//! Randomness is the queue pair's
//! [`SimRng`] (htsim uses the process-wide `rand()`), so runs match htsim in distribution, not
//! draw for draw.

use serde::Deserialize;

use super::selector::{Feedback, FeedbackKind, PathSelector, SendCx};
use super::spray::XorRounds;
use crate::error::{check_int, ParamError};
use crate::rng::SimRng;
use crate::scheme::{HostRole, Scheme};
use crate::units::Entropy;

/// Which entropy a retransmission timeout penalises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimeoutEntropy {
    /// Entropy 0, as htsim (its sender does not remember what the lost packet was sent on).
    Zero,
    /// The lost packet's own entropy (the NIC's timeout feedback names it).
    Lost,
}

/// Parameters of the UEC htsim's bitmap load balancer (defaults: htsim's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UecBitmapConfig {
    /// Entropies a queue pair walks (htsim `-paths`, default 64); a power of two.
    pub num_entropies: u32,
    /// The largest penalty an entropy can carry; a timeout sets it (htsim: 15).
    pub max_penalty: u32,
    /// Penalty of an ECN-echoing ACK (htsim: 1).
    pub ecn_penalty: u32,
    /// Penalty of a NACK that is not a last-hop trim (htsim: 4).
    pub nack_penalty: u32,
    /// Which entropy a timeout penalises (htsim: entropy 0).
    pub timeout_entropy: TimeoutEntropy,
}

impl Default for UecBitmapConfig {
    fn default() -> Self {
        UecBitmapConfig {
            num_entropies: 64,
            max_penalty: 15,
            ecn_penalty: 1,
            nack_penalty: 4,
            timeout_entropy: TimeoutEntropy::Zero,
        }
    }
}

impl UecBitmapConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// The first parameter out of range: `num_entropies` not a power of two in 1..=65536,
    /// `max_penalty` outside 1..=255, a penalty above `max_penalty`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int("num_entropies", self.num_entropies.into(), 1, 1 << 16)?;
        if !self.num_entropies.is_power_of_two() {
            return Err(ParamError::new(
                "num_entropies",
                format!("must be a power of two, got {}", self.num_entropies),
            ));
        }
        check_int("max_penalty", self.max_penalty.into(), 1, 255)?;
        let max = self.max_penalty.into();
        check_int("ecn_penalty", self.ecn_penalty.into(), 0, max)?;
        check_int("nack_penalty", self.nack_penalty.into(), 0, max)?;
        Ok(())
    }
}

/// What a piece of feedback says about the path of its entropy (htsim's `PathFeedback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathFeedback {
    /// Delivered unmarked.
    Good,
    /// Delivered with an ECN mark.
    Ecn,
    /// Trimmed before its last hop.
    Nack,
    /// Never answered.
    Timeout,
}

impl PathFeedback {
    /// The path feedback of `fb`, as htsim's sender classifies it; `None` for feedback htsim's
    /// load balancers never hear (CNPs, probe answers).
    #[must_use]
    pub fn of(fb: &Feedback) -> Option<Self> {
        let delivered = if fb.ecn {
            PathFeedback::Ecn
        } else {
            PathFeedback::Good
        };
        match fb.kind {
            FeedbackKind::Ack => Some(delivered),
            FeedbackKind::Nack if fb.last_hop => Some(delivered),
            FeedbackKind::Nack => Some(PathFeedback::Nack),
            FeedbackKind::Timeout => Some(PathFeedback::Timeout),
            FeedbackKind::Cnp | FeedbackKind::ProbeAck => None,
        }
    }
}

/// The bitmap load balancer of one queue pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UecBitmap {
    walk: XorRounds,
    /// Per entropy index, its penalty (at most `max_penalty`).
    penalty: Vec<u8>,
    max_penalty: u8,
    ecn_penalty: u8,
    nack_penalty: u8,
    timeout_entropy: TimeoutEntropy,
}

impl UecBitmap {
    /// Every entropy unpenalised; the upper bits and the first XOR drawn from `rng`.
    #[must_use]
    pub fn new(config: &UecBitmapConfig, rng: &mut SimRng) -> Self {
        let byte = |v: u32| u8::try_from(v).unwrap_or(u8::MAX);
        let n = config.num_entropies.clamp(1, 1 << 16);
        UecBitmap {
            walk: XorRounds::new(n, rng),
            penalty: vec![0; usize::try_from(n).unwrap_or(1)],
            max_penalty: byte(config.max_penalty),
            ecn_penalty: byte(config.ecn_penalty),
            nack_penalty: byte(config.nack_penalty),
            timeout_entropy: config.timeout_entropy,
        }
    }

    /// The penalty of entropy `e` (its bits above the space ignored).
    #[must_use]
    pub fn penalty_of(&self, e: Entropy) -> u8 {
        self.penalty
            .get(self.index_of(e))
            .copied()
            .unwrap_or_default()
    }

    fn index_of(&self, e: Entropy) -> usize {
        usize::try_from(u32::from(e.0) & self.walk.mask).unwrap_or(0)
    }

    /// Adds what `what` costs to entropy `e`'s penalty, capped.
    pub fn penalise(&mut self, e: Entropy, what: PathFeedback) {
        let add = match what {
            PathFeedback::Good => return,
            PathFeedback::Ecn => self.ecn_penalty,
            PathFeedback::Nack => self.nack_penalty,
            PathFeedback::Timeout => self.max_penalty,
        };
        let i = self.index_of(e);
        if let Some(p) = self.penalty.get_mut(i) {
            *p = p.saturating_add(add).min(self.max_penalty);
        }
    }

    /// Feeds `fb` to the penalties.
    pub fn learn(&mut self, fb: &Feedback) {
        let Some(what) = PathFeedback::of(fb) else {
            return;
        };
        let e = match (what, self.timeout_entropy) {
            (PathFeedback::Timeout, TimeoutEntropy::Zero) => Entropy(0),
            _ => fb.entropy,
        };
        self.penalise(e, what);
    }

    /// The next entropy of the walk, skipping penalised ones (see the module documentation).
    pub fn pick(&mut self, rng: &mut SimRng) -> Entropy {
        let space = self.penalty.len();
        let mut i = self.walk.current();
        let mut decremented = false;
        let mut passed = 0;
        while self.penalty.get(i).is_some_and(|&p| p > 0) {
            if !decremented {
                if let Some(p) = self.penalty.get_mut(i) {
                    *p -= 1;
                }
                decremented = true;
            }
            passed += 1;
            if passed > space {
                break;
            }
            self.walk.advance(rng);
            i = self.walk.current();
        }
        self.walk.advance(rng);
        self.walk.entropy(i)
    }
}

impl PathSelector for UecBitmap {
    fn next_entropy(&mut self, _cx: &SendCx, rng: &mut SimRng) -> Entropy {
        self.pick(rng)
    }

    fn on_feedback(&mut self, fb: &Feedback, _rng: &mut SimRng) {
        self.learn(fb);
    }
}

impl Scheme for UecBitmap {
    type Config = UecBitmapConfig;
    const SPRAYS_ON_FEEDBACK: bool = true;

    fn validate(config: &UecBitmapConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl HostRole for UecBitmap {
    type Selector = UecBitmap;

    fn selector(config: &UecBitmapConfig, rng: &mut SimRng) -> UecBitmap {
        UecBitmap::new(config, rng)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::time::SimTime;
    use crate::units::Psn;

    pub(crate) fn fb(kind: FeedbackKind, entropy: u16, ecn: bool, last_hop: bool) -> Feedback {
        Feedback {
            kind,
            now: SimTime::ZERO,
            entropy: Entropy(entropy),
            psn: Psn(0),
            rtt: None,
            ecn,
            last_hop,
        }
    }

    fn bitmap(n: u32) -> (UecBitmap, SimRng) {
        let mut rng = SimRng::new(5);
        let config = UecBitmapConfig {
            num_entropies: n,
            ..UecBitmapConfig::default()
        };
        (UecBitmap::new(&config, &mut rng), rng)
    }

    /// The walk's next `k` indices (entropies without the upper bits), as a fresh walk would
    /// give them from the same state: what `pick` takes with nothing penalised.
    fn walk_ahead(b: &UecBitmap, rng: &SimRng, k: usize) -> Vec<usize> {
        let (mut w, mut r) = (b.walk, rng.clone());
        (0..k)
            .map(|_| {
                let i = w.current();
                w.advance(&mut r);
                i
            })
            .collect()
    }

    #[test]
    fn penalties_add_up_and_cap_at_the_maximum() {
        let (mut b, _) = bitmap(8);
        let e = Entropy(3);
        b.learn(&fb(FeedbackKind::Ack, 3, true, false));
        assert_eq!(b.penalty_of(e), 1, "ECN: +1");
        b.learn(&fb(FeedbackKind::Nack, 3, false, false));
        assert_eq!(b.penalty_of(e), 5, "NACK: +4");
        b.learn(&fb(FeedbackKind::Ack, 3, false, false));
        assert_eq!(b.penalty_of(e), 5, "an unmarked ACK changes nothing");
        b.learn(&fb(FeedbackKind::Nack, 3, true, false));
        b.learn(&fb(FeedbackKind::Nack, 3, false, false));
        assert_eq!(b.penalty_of(e), 13, "5 + 4 + 4");
        b.learn(&fb(FeedbackKind::Nack, 3, false, false));
        assert_eq!(b.penalty_of(e), 15, "13 + 4 = 17, capped at 15");
        // The upper bits are ignored: entropy 3 + 8 * k is entry 3.
        b.learn(&fb(FeedbackKind::Ack, 3 + 8 * 100, true, false));
        assert_eq!(b.penalty_of(e), 15);
        // A timeout sets the maximum, on entropy 0 (htsim's UNKNOWN_EV) by default ...
        b.learn(&fb(FeedbackKind::Timeout, 6, false, false));
        assert_eq!(
            (b.penalty_of(Entropy(0)), b.penalty_of(Entropy(6))),
            (15, 0)
        );
        // ... on the lost packet's with timeout_entropy = "lost".
        let mut rng = SimRng::new(1);
        let mut lost = UecBitmap::new(
            &UecBitmapConfig {
                num_entropies: 8,
                timeout_entropy: TimeoutEntropy::Lost,
                ..UecBitmapConfig::default()
            },
            &mut rng,
        );
        lost.learn(&fb(FeedbackKind::Timeout, 6, false, false));
        assert_eq!(
            (lost.penalty_of(Entropy(0)), lost.penalty_of(Entropy(6))),
            (0, 15)
        );
    }

    #[test]
    fn a_last_hop_trim_is_an_ack_and_cnps_are_ignored() {
        let (mut b, _) = bitmap(8);
        b.learn(&fb(FeedbackKind::Nack, 2, false, true));
        assert_eq!(b.penalty_of(Entropy(2)), 0, "last-hop trim, unmarked: good");
        b.learn(&fb(FeedbackKind::Nack, 2, true, true));
        assert_eq!(b.penalty_of(Entropy(2)), 1, "last-hop trim, marked: ECN");
        b.learn(&fb(FeedbackKind::Cnp, 2, true, false));
        b.learn(&fb(FeedbackKind::ProbeAck, 2, true, false));
        assert_eq!(b.penalty_of(Entropy(2)), 1);
    }

    #[test]
    fn one_round_visits_every_entropy_once() {
        let (mut b, mut rng) = bitmap(16);
        let upper = b.walk.upper;
        for _ in 0..5 {
            let mut round: Vec<u16> = (0..16).map(|_| b.pick(&mut rng).0).collect();
            assert!(round.iter().all(|&e| u32::from(e) & !15 == upper));
            round.iter_mut().for_each(|e| *e &= 15);
            // i XOR x for i = 0..16: the first pick is x, each later one differs by i.
            let x = round[0];
            assert!(round.iter().enumerate().all(|(i, &e)| e == (i as u16) ^ x));
            round.sort_unstable();
            assert_eq!(round, (0..16).collect::<Vec<u16>>());
        }
    }

    #[test]
    fn skips_penalised_entropies_and_decrements_only_the_first() {
        let (mut b, mut rng) = bitmap(8);
        let ahead = walk_ahead(&b, &rng, 8);
        let entropy = |i: usize| Entropy(u16::try_from(i).unwrap());
        // The next two on the walk are penalised: 2 (ECN twice) and 1 (ECN once).
        b.learn(&fb(FeedbackKind::Ack, entropy(ahead[0]).0, true, false));
        b.learn(&fb(FeedbackKind::Ack, entropy(ahead[0]).0, true, false));
        b.learn(&fb(FeedbackKind::Ack, entropy(ahead[1]).0, true, false));
        // The pick skips both, takes the third; only the first skipped one lost a point.
        assert_eq!(usize::from(b.pick(&mut rng).0 & 7), ahead[2]);
        assert_eq!(b.penalty_of(entropy(ahead[0])), 1);
        assert_eq!(b.penalty_of(entropy(ahead[1])), 1);
        // The walk goes on after the entropy taken.
        assert_eq!(usize::from(b.pick(&mut rng).0 & 7), ahead[3]);
    }

    #[test]
    fn penalty_k_is_skipped_k_times_then_taken() {
        // Entropy e with penalty 3 and nothing else penalised, over 8 entropies: each round
        // reaches e once, where it is the first penalised entry met, so it loses a point and is
        // skipped; it is taken the 4th time, in the 4th round (within 32 picks). Every pick
        // that does not meet e takes the walk's entropy.
        let (mut b, mut rng) = bitmap(8);
        let e = Entropy(u16::try_from(walk_ahead(&b, &rng, 1)[0]).unwrap());
        for _ in 0..3 {
            b.learn(&fb(FeedbackKind::Ack, e.0, true, false));
        }
        let mut penalties = vec![b.penalty_of(e)];
        let mut picks = 0;
        loop {
            let before = b.penalty_of(e);
            let got = Entropy(b.pick(&mut rng).0 & 7);
            picks += 1;
            if got == e {
                assert_eq!(before, 0, "taken while penalised");
                break;
            }
            if b.penalty_of(e) != before {
                penalties.push(b.penalty_of(e));
            }
            assert!(picks <= 32, "not taken in 4 rounds");
        }
        assert_eq!(penalties, vec![3, 2, 1, 0]);
        // 4 rounds of 8 positions hold e 4 times: 3 skips + 1 take, so at least 24 - 3 + 1
        // picks (e first in the 4th round) and at most 32 - 3.
        assert!((22..=29).contains(&picks), "{picks}");
    }

    #[test]
    fn all_penalised_gives_up_after_one_pass() {
        let (mut b, mut rng) = bitmap(4);
        for e in 0..4 {
            b.learn(&fb(FeedbackKind::Nack, e, false, false));
        }
        let ahead = walk_ahead(&b, &rng, 6);
        // Passed all 4 entropies (5 checks): takes the 5th position's entropy, one more step.
        let e = b.pick(&mut rng);
        assert_eq!(usize::from(e.0 & 3), ahead[4]);
        // Only the first was decremented: 3 on ahead[0], 4 on the rest.
        let total: u32 = (0..4).map(|i| u32::from(b.penalty_of(Entropy(i)))).sum();
        assert_eq!(total, 15);
        assert_eq!(b.penalty_of(Entropy(u16::try_from(ahead[0]).unwrap())), 3);
        assert_eq!(b.walk.current(), ahead[5]);
    }

    #[test]
    fn same_seed_same_decisions() {
        let run = |seed| {
            let mut rng = SimRng::new(seed);
            let mut b = UecBitmap::new(&UecBitmapConfig::default(), &mut rng);
            (0..500u16)
                .map(|i| {
                    let e = b.pick(&mut rng);
                    b.learn(&fb(FeedbackKind::Ack, e.0, i % 3 == 0, false));
                    e.0
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(4), run(4));
        assert_ne!(run(4), run(5));
    }

    #[test]
    fn validate_refuses_what_htsim_cannot_run() {
        let bad = |c: UecBitmapConfig| c.validate().unwrap_err().to_string();
        let d = UecBitmapConfig::default();
        assert!(bad(UecBitmapConfig {
            num_entropies: 96,
            ..d
        })
        .contains("power of two"));
        assert!(bad(UecBitmapConfig {
            max_penalty: 0,
            ..d
        })
        .contains("max_penalty"));
        assert!(bad(UecBitmapConfig {
            nack_penalty: 16,
            ..d
        })
        .contains("nack_penalty"));
        assert!(d.validate().is_ok());
    }
}
