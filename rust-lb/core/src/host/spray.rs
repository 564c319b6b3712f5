//! Oblivious packet spraying (the baseline of the REPS paper, §4, and of the Themis paper,
//! Fig. 1): every data packet gets an entropy drawn uniformly from an entropy space of
//! `num_entropies` values, ignoring all feedback.

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
}

impl Default for SprayConfig {
    fn default() -> Self {
        SprayConfig {
            num_entropies: 1 << 16,
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
        Ok(())
    }
}

/// Draws a fresh entropy for every packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spray {
    num_entropies: u32,
}

impl Spray {
    /// A sprayer over `config.num_entropies` entropies.
    #[must_use]
    pub fn new(config: &SprayConfig) -> Self {
        Spray {
            num_entropies: config.num_entropies,
        }
    }
}

impl PathSelector for Spray {
    fn next_entropy(&mut self, _cx: &SendCx, rng: &mut SimRng) -> Entropy {
        // `below` returns < num_entropies <= 65536, so the value fits in 16 bits.
        Entropy(u16::try_from(rng.below(self.num_entropies)).unwrap_or(u16::MAX))
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

    fn selector(config: &SprayConfig, _rng: &mut SimRng) -> Spray {
        Spray::new(config)
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
        let mut s = Spray::new(&SprayConfig { num_entropies: 16 });
        let mut rng = SimRng::new(3);
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
}
