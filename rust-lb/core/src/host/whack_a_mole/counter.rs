//! The spray counter of Whack-a-Mole (M. Luby and J. Byers, "Whack-a-Mole: Deterministic Packet
//! Spraying Across Multiple Network Paths", arXiv:2509.18519, §4): an ℓ-bit counter j, one step per
//! packet sent, selects ball θ(j), the reversal of its ℓ low bits, optionally shuffled with the
//! source's seed (s_a, s_b) by method 1 or method 2.

use super::config::Shuffle;
use crate::rng::SimRng;

/// θ(j, ℓ): the ℓ low bits of `j`, reversed (1 ≤ ℓ ≤ 32).
#[must_use]
pub fn bit_reverse(j: u32, log2_m: u32) -> u32 {
    j.reverse_bits()
        .checked_shr(32u32.saturating_sub(log2_m))
        .unwrap_or(0)
}

/// The spray counter and the source's seed (paper §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SprayCounter {
    log2_m: u32,
    mask: u32,
    shuffle: Shuffle,
    pub(super) s_a: u32,
    pub(super) s_b: u32,
    j: u32,
}

impl SprayCounter {
    /// A counter at 0 with the seed (s_a, s_b); `s_a` is reduced mod m and `s_b` made odd.
    #[must_use]
    pub fn with_seed(log2_m: u32, shuffle: Shuffle, s_a: u32, s_b: u32) -> Self {
        let log2_m = log2_m.clamp(1, 31);
        let mask = (1u32 << log2_m) - 1;
        SprayCounter {
            log2_m,
            mask,
            shuffle,
            s_a: s_a & mask,
            s_b: (s_b | 1) & mask,
            j: 0,
        }
    }

    /// A counter with a seed drawn uniformly: s_a ∈ [0, m), s_b odd in [1, m).
    pub fn random(log2_m: u32, shuffle: Shuffle, rng: &mut SimRng) -> Self {
        let m = 1u32 << log2_m.clamp(1, 31);
        let s_a = rng.below(m);
        let s_b = 2 * rng.below(m / 2) + 1;
        SprayCounter::with_seed(log2_m, shuffle, s_a, s_b)
    }

    /// The ball that counter value `j` selects.
    #[must_use]
    pub fn ball(&self, j: u32) -> u32 {
        let m = self.mask;
        match self.shuffle {
            Shuffle::None => bit_reverse(j & m, self.log2_m),
            Shuffle::Method1 => bit_reverse(
                self.s_a.wrapping_add(self.s_b.wrapping_mul(j)) & m,
                self.log2_m,
            ),
            Shuffle::Method2 => {
                self.s_a
                    .wrapping_add(self.s_b.wrapping_mul(bit_reverse(j & m, self.log2_m)))
                    & m
            }
        }
    }

    /// The ball for the next packet; advances the counter.
    pub fn next_ball(&mut self) -> u32 {
        let x = self.ball(self.j);
        self.j = (self.j + 1) & self.mask;
        x
    }
}
