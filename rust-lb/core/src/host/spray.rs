//! Oblivious packet spraying (the baseline of the REPS paper, §4, and of the Themis paper,
//! Fig. 1): every data packet gets an entropy drawn uniformly from an entropy space of
//! `num_entropies` values, ignoring all feedback.
//!
//! With `cycle = true`, the Ultra Ethernet Consortium htsim's oblivious spraying
//! (`UecMpOblivious`, its `-load_balancing_algo oblivious`): the queue pair walks through all
//! `num_entropies` values (a power of two) in the order `i XOR x` for i = 0, 1, ..., drawing a
//! fresh `x` after each full round, so every entropy is used once per round; the bits above the
//! entropy space are a per-queue-pair random constant, as htsim's.

use serde::Deserialize;

use super::selector::{PathSelector, SendCx};
use crate::error::ParamError;
use crate::rng::SimRng;
use crate::scheme::{HostRole, Scheme};
use crate::units::Entropy;

/// Parameters of oblivious spraying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SprayConfig {
    /// Size of the entropy space (REPS uses 256; the default is the whole 16-bit space).
    pub num_entropies: u32,
    /// Walk the entropies in XOR-permuted rounds instead of drawing each (htsim's oblivious
    /// spraying); `num_entropies` must then be a power of two.
    pub cycle: bool,
}

impl Default for SprayConfig {
    fn default() -> Self {
        SprayConfig {
            num_entropies: 1 << 16,
            cycle: false,
        }
    }
}

impl SprayConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// `num_entropies` outside `1..=65536`.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(1..=1 << 16).contains(&self.num_entropies) {
            return Err(ParamError::new(
                "num_entropies",
                format!("must be in 1..=65536, got {}", self.num_entropies),
            ));
        }
        if self.cycle && !self.num_entropies.is_power_of_two() {
            return Err(ParamError::new(
                "num_entropies",
                format!(
                    "must be a power of two with cycle = true, got {}",
                    self.num_entropies
                ),
            ));
        }
        Ok(())
    }
}

/// The walk over `num_entropies` (a power of two) in XOR-permuted rounds, with the constant
/// upper bits (htsim's oblivious spraying; also the UEC bitmap's walk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct XorRounds {
    pub(crate) mask: u32,
    index: u32,
    xor: u32,
    pub(crate) upper: u32,
}

impl XorRounds {
    /// Draws the upper bits, then the first round's XOR, from `rng` (htsim's order).
    pub(crate) fn new(num_entropies: u32, rng: &mut SimRng) -> Self {
        let mask = num_entropies - 1;
        let upper = rng.below(1 << 16) & !mask & 0xffff;
        let xor = rng.below(num_entropies);
        XorRounds {
            mask,
            index: 0,
            xor,
            upper,
        }
    }

    /// The entropy index the walk stands on.
    pub(crate) fn current(&self) -> usize {
        usize::try_from((self.index ^ self.xor) & self.mask).unwrap_or(0)
    }

    /// One step on; a new XOR when a round ends.
    pub(crate) fn advance(&mut self, rng: &mut SimRng) {
        self.index += 1;
        if self.index > self.mask {
            self.index = 0;
            self.xor = rng.below(self.mask + 1);
        }
    }

    /// Index `i` with the upper bits: the entropy on the wire.
    pub(crate) fn entropy(&self, i: usize) -> Entropy {
        let low = u32::try_from(i).unwrap_or(0) & self.mask;
        Entropy(u16::try_from(low | self.upper).unwrap_or(u16::MAX))
    }
}

/// Draws a fresh entropy for every packet, or walks them in rounds (`cycle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spray {
    num_entropies: u32,
    /// With `cycle`, the walk.
    cycle: Option<XorRounds>,
}

impl Spray {
    /// A sprayer over `config.num_entropies` entropies; with `cycle`, the first round's XOR and
    /// the upper bits are drawn from `rng` here (htsim draws them at construction).
    #[must_use]
    pub fn new(config: &SprayConfig, rng: &mut SimRng) -> Self {
        let cycle = config
            .cycle
            .then(|| XorRounds::new(config.num_entropies, rng));
        Spray {
            num_entropies: config.num_entropies,
            cycle,
        }
    }
}

impl PathSelector for Spray {
    fn next_entropy(&mut self, _cx: &SendCx, rng: &mut SimRng) -> Entropy {
        let Some(walk) = self.cycle.as_mut() else {
            // `below` returns < num_entropies <= 65536, so the value fits in 16 bits.
            return Entropy(u16::try_from(rng.below(self.num_entropies)).unwrap_or(u16::MAX));
        };
        let e = walk.entropy(walk.current());
        walk.advance(rng);
        e
    }
}

impl Scheme for Spray {
    type Config = SprayConfig;

    fn validate(config: &SprayConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl HostRole for Spray {
    type Selector = Spray;

    fn selector(config: &SprayConfig, rng: &mut SimRng) -> Spray {
        Spray::new(config, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;
    use crate::units::Psn;

    #[test]
    fn uniform_over_the_entropy_space() {
        // Chi-square over 16 entropies, 16000 draws: 15 degrees of freedom, p = 0.001 → 37.7.
        let mut rng = SimRng::new(3);
        let mut s = Spray::new(
            &SprayConfig {
                num_entropies: 16,
                cycle: false,
            },
            &mut rng,
        );
        let mut counts = [0u32; 16];
        for p in 0..16_000 {
            let cx = SendCx {
                now: SimTime::ZERO,
                psn: Psn(p),
                retransmission: false,
                inflight_pkts: 0,
                every_arrival_answered: false,
            };
            counts[usize::from(s.next_entropy(&cx, &mut rng).0)] += 1;
        }
        let chi2: f64 = counts
            .iter()
            .map(|&c| (f64::from(c) - 1000.0).powi(2) / 1000.0)
            .sum();
        assert!(chi2 < 37.7, "chi2 = {chi2}, counts = {counts:?}");
    }

    #[test]
    fn cycle_uses_every_entropy_once_per_round_with_constant_upper_bits() {
        // htsim's oblivious spraying over 8 entropies: each round of 8 packets is a permutation
        // of 0..8 (i XOR x), the XOR changes between rounds only, the upper bits never change.
        let mut rng = SimRng::new(7);
        let config = SprayConfig {
            num_entropies: 8,
            cycle: true,
        };
        let mut s = Spray::new(&config, &mut rng);
        let cx = SendCx {
            now: SimTime::ZERO,
            psn: Psn(0),
            retransmission: false,
            inflight_pkts: 0,
            every_arrival_answered: false,
        };
        let rounds: Vec<Vec<u16>> = (0..20)
            .map(|_| (0..8).map(|_| s.next_entropy(&cx, &mut rng).0).collect())
            .collect();
        let upper = rounds[0][0] & !7;
        let mut xors = std::collections::BTreeSet::new();
        for r in &rounds {
            let mut low: Vec<u16> = r.iter().map(|e| e & 7).collect();
            let x = low[0];
            assert!(r.iter().all(|e| e & !7 == upper), "{r:?}");
            assert!(
                low.iter().enumerate().all(|(i, &e)| e == (i as u16) ^ x),
                "{r:?}"
            );
            low.sort_unstable();
            assert_eq!(low, (0..8).collect::<Vec<u16>>());
            xors.insert(x);
        }
        assert!(xors.len() > 1, "the XOR is redrawn between rounds");
        let e = SprayConfig {
            num_entropies: 6,
            cycle: true,
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(e.contains("power of two"), "{e}");
    }
}
