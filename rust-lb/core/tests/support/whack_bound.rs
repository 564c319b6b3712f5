//! The exhaustive window-deviation check of Whack-a-Mole's spray counter (the Whack-a-Mole
//! paper, §4 and §9), shared by the test `tests/whack_exhaustive.rs` (small ℓ) and the example
//! `examples/whack_exhaustive.rs` (ℓ ≤ 8, run by `experiments/whack-a-mole/run.sh`).
//!
//! A profile maps ball x to the path whose cumulative range holds x, so path i's balls are one
//! interval [a, a + b) of the ball space and its counts depend on that interval only. Every
//! interval with 1 ≤ b ≤ m − 1 is a path of some profile with at most three paths, so checking
//! every interval checks every profile of m balls over any number of paths (2..=min(16, m), the
//! Monte Carlo's range, included). The deviation of a path is the spread max − min over one
//! counter period of m·count(t) − (t + 1)·b (scaled by m): the counter is periodic with period m
//! and a period sends exactly b packets on the path, so this is the worst |count − len·b/m| over
//! every window of consecutive packets, wrapping ones included.
//!
//! The seeds: method 1 selects θ(s_a + s_b·j); since s_b is odd, s_a + s_b·j = s_b·(j + s_b⁻¹·s_a)
//! is a cyclic shift of the counter, which leaves the set of windows unchanged, so s_a = 0 covers
//! every s_a. Method 2 selects s_a + s_b·θ(j); ball x lies in [a, a + b) iff s_b·θ(j) lies in the
//! cyclic interval [a − s_a, a − s_a + b) mod m, so s_a = 0 over every cyclic interval covers
//! every s_a. `worst_brute` checks both reductions against every (s_a, s_b).

#![allow(dead_code, reason = "each includer uses part of the module")]

use rdma_lb_core::host::whack_a_mole::{Shuffle, SprayCounter};

/// The shuffles, in the order of the example's columns.
pub const SHUFFLES: [Shuffle; 3] = [Shuffle::None, Shuffle::Method1, Shuffle::Method2];

/// The ball of every counter value over one period.
pub fn period(log2_m: u32, shuffle: Shuffle, s_a: u32, s_b: u32) -> Vec<u32> {
    let c = SprayCounter::with_seed(log2_m, shuffle, s_a, s_b);
    (0..1u32 << log2_m).map(|j| c.ball(j)).collect()
}

/// The worst path, over every interval of the ball space (`cyclic`: wrapping ones too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Worst {
    /// Deviation × m (packets × m).
    pub scaled: i64,
    /// Where: the interval's first ball and length.
    pub start: u32,
    /// The interval's length b(i).
    pub balls: u32,
}

/// The worst window deviation of any interval path under the ball sequence `seq` (one period,
/// a permutation of 0..m). O(m³).
pub fn worst_over_intervals(seq: &[u32], cyclic: bool) -> Worst {
    let m = seq.len();
    let mi = i64::try_from(m).unwrap_or(i64::MAX);
    // time[x]: the counter value that selects ball x.
    let mut time = vec![0usize; m];
    for (t, &x) in seq.iter().enumerate() {
        if let Some(slot) = time.get_mut(x as usize) {
            *slot = t;
        }
    }
    let mut worst = Worst::default();
    let mut dev = vec![0i64; m];
    for a in 0..m {
        dev.iter_mut().for_each(|d| *d = 0);
        let longest = if cyclic { m - 1 } else { (m - a).min(m - 1) };
        for b in 1..=longest {
            // Add ball (a + b − 1) mod m: one more packet on the path from its time on, and
            // one more ball of expectation, b/m per packet, at every t.
            let p = time.get((a + b - 1) % m).copied().unwrap_or(0);
            let (mut lo, mut hi) = (0i64, 0i64);
            for (t, d) in dev.iter_mut().enumerate() {
                *d -= i64::try_from(t).unwrap_or(0) + 1;
                if t >= p {
                    *d += mi;
                }
                lo = lo.min(*d);
                hi = hi.max(*d);
            }
            if hi - lo > worst.scaled {
                worst = Worst {
                    scaled: hi - lo,
                    start: u32::try_from(a).unwrap_or(0),
                    balls: u32::try_from(b).unwrap_or(0),
                };
            }
        }
    }
    worst
}

/// The worst over every profile and every seed (s_a, s_b) of one shuffle, by the reductions in
/// the module's documentation.
pub fn worst_reduced(log2_m: u32, shuffle: Shuffle) -> Worst {
    let m = 1u32 << log2_m;
    match shuffle {
        Shuffle::None => worst_over_intervals(&period(log2_m, shuffle, 0, 1), false),
        Shuffle::Method1 | Shuffle::Method2 => (1..m.max(2))
            .step_by(2)
            .map(|s_b| {
                worst_over_intervals(
                    &period(log2_m, shuffle, 0, s_b),
                    shuffle == Shuffle::Method2,
                )
            })
            .max_by_key(|w| w.scaled)
            .unwrap_or_default(),
    }
}

/// The same by brute force: every (s_a, s_b), non-wrapping intervals only (profiles as they
/// are). O(m⁵): for small ℓ only.
pub fn worst_brute(log2_m: u32, shuffle: Shuffle) -> Worst {
    let m = 1u32 << log2_m;
    let mut worst = Worst::default();
    for s_a in 0..m {
        for s_b in (1..m.max(2)).step_by(2) {
            let w = worst_over_intervals(&period(log2_m, shuffle, s_a, s_b), false);
            if w.scaled > worst.scaled {
                worst = w;
            }
        }
    }
    worst
}
