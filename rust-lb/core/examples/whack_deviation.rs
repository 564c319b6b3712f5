//! Whack-a-Mole's spray-counter balance, measured against the paper's bound (the Whack-a-Mole
//! paper, §4 and §9; the shuffles as reconstructed in `host::whack_a_mole`): over any window of
//! consecutive packets, each path's packet count stays within ℓ = log2 m of its expected share
//! (b(i)/m per packet) with the plain bit-reversal counter; the crate's reconstruction of the two
//! shuffles is tested against ℓ (method 1) and 2ℓ (method 2).
//!
//! For ℓ = 4..=12 this draws random profiles (n paths, 2 ≤ n ≤ min(16, m), a uniformly random
//! composition of the m balls into n positive counts) and random source seeds
//! (s_a, s_b), and measures, for each shuffle, the worst window deviation of any path:
//! max over windows (s, t] of |count_i(s, t] − (t − s)·b(i)/m|, computed as the spread
//! max − min of m·count_i(t) − t·b(i) over one counter period (the counter is periodic with
//! period m and a full period sends exactly b(i) packets on path i, so this covers every
//! window, wrapping ones included). Deterministic: the draws come from `SimRng::new(seed)`.
//!
//! ```sh
//! cargo run --release -p rdma-lb-core --example whack_deviation [-- TRIALS [SEED]]
//! ```
//! Output: one CSV line per ℓ (`l,m,trials,none_max,none_mean,method1_max,method1_mean,
//! method2_max,method2_mean,bound_l,bound_2l,exceed_l,exceed_2l`), where `*_max` is the worst
//! deviation over the trials (in packets), `*_mean` the mean of each trial's worst, and
//! `exceed_*` the number of (trial, shuffle) pairs above ℓ and above 2ℓ; then
//! `random_max,random_mean,random_exceed_l`: the same metric for random spraying (each packet's
//! ball drawn uniformly, i.e. path i with probability b(i)/m; the paper's §2 motivation) over
//! the same profiles and m packets. Random spraying is not periodic, so its deviation only grows
//! with a longer horizon: over m packets it is a lower bound on its deviation over longer runs,
//! while the counter's covers every window. Its draws come from a second stream
//! (`SimRng::new(seed ^ RANDOM_STREAM)`), so the counter columns are those of the draws alone.

use rdma_lb_core::host::whack_a_mole::{Profile, Shuffle, SprayCounter};
use rdma_lb_core::SimRng;

const SHUFFLES: [Shuffle; 3] = [Shuffle::None, Shuffle::Method1, Shuffle::Method2];

/// Salt of the random sprayer's stream.
const RANDOM_STREAM: u64 = 0x7261_6e64_6f6d;

/// Worst window deviation (in units of 1/m packet) of any path over m packets whose balls are
/// `ball(0..m)`.
fn worst_window_deviation_scaled(p: &Profile, mut ball: impl FnMut(u32) -> u32) -> i64 {
    let m = i64::from(p.total());
    let balls = p.balls();
    let n = balls.len();
    let mut count = vec![0i64; n];
    let mut lo = vec![0i64; n];
    let mut hi = vec![0i64; n];
    for t in 0..p.total() {
        if let Some(k) = count.get_mut(p.path_of(ball(t))) {
            *k += 1;
        }
        for ((k, b), (l, h)) in count
            .iter()
            .zip(balls)
            .zip(lo.iter_mut().zip(hi.iter_mut()))
        {
            let d = m * k - i64::from(t + 1) * i64::from(*b);
            *l = (*l).min(d);
            *h = (*h).max(d);
        }
    }
    lo.iter().zip(&hi).map(|(l, h)| h - l).max().unwrap_or(0)
}

/// A random profile of m = 2^l balls over n paths (n uniform in 2..=min(16, m)), uniform over
/// the compositions of m into n positive parts: n − 1 distinct cut points in 1..m, sorted.
fn random_profile(l: u32, rng: &mut SimRng) -> Option<Profile> {
    let m = 1u32 << l;
    let n = 2 + rng.below(m.min(16) - 1);
    let mut cuts = std::collections::BTreeSet::new();
    while cuts.len() + 1 < n as usize {
        cuts.insert(1 + rng.below(m - 1));
    }
    let mut balls = Vec::with_capacity(n as usize);
    let mut prev = 0u32;
    for c in cuts.into_iter().chain(std::iter::once(m)) {
        balls.push(c - prev);
        prev = c;
    }
    Profile::from_balls(balls, l)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let trials: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(500);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut rng = SimRng::new(seed);
    let mut spray_rng = SimRng::new(seed ^ RANDOM_STREAM);
    println!(
        "l,m,trials,none_max,none_mean,method1_max,method1_mean,method2_max,method2_mean,\
         bound_l,bound_2l,exceed_l,exceed_2l,random_max,random_mean,random_exceed_l"
    );
    for l in 4u32..=12 {
        let m = 1u32 << l;
        let mut worst = [0i64; 3];
        let mut sum = [0i64; 3];
        let (mut exceed_l, mut exceed_2l) = (0u32, 0u32);
        let (mut random_worst, mut random_sum, mut random_exceed) = (0i64, 0i64, 0u32);
        let mut done = 0u32;
        for _ in 0..trials {
            let Some(p) = random_profile(l, &mut rng) else {
                continue;
            };
            let s_a = rng.below(m);
            let s_b = 2 * rng.below(m / 2) + 1;
            done += 1;
            for (k, shuffle) in SHUFFLES.iter().enumerate() {
                let c = SprayCounter::with_seed(l, *shuffle, s_a, s_b);
                let d = worst_window_deviation_scaled(&p, |t| c.ball(t));
                if let (Some(w), Some(s)) = (worst.get_mut(k), sum.get_mut(k)) {
                    *w = (*w).max(d);
                    *s += d;
                }
                exceed_l += u32::from(d > i64::from(l) * i64::from(m));
                exceed_2l += u32::from(d > 2 * i64::from(l) * i64::from(m));
            }
            let d = worst_window_deviation_scaled(&p, |_| spray_rng.below(m));
            random_worst = random_worst.max(d);
            random_sum += d;
            random_exceed += u32::from(d > i64::from(l) * i64::from(m));
        }
        let mf = f64::from(m);
        let per = |v: i64| v as f64 / mf;
        let mean = |v: i64| v as f64 / mf / f64::from(done.max(1));
        println!(
            "{l},{m},{done},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{l},{},{exceed_l},{exceed_2l},{:.3},{:.3},\
             {random_exceed}",
            per(worst[0]),
            mean(sum[0]),
            per(worst[1]),
            mean(sum[1]),
            per(worst[2]),
            mean(sum[2]),
            2 * l,
            per(random_worst),
            mean(random_sum)
        );
    }
}
