//! Whack-a-Mole's spray counter against the paper's bound (the Whack-a-Mole paper, §4 and §9),
//! exhaustively for small ℓ: every profile of m = 2^ℓ balls (every interval path) and every
//! seed. No shuffle and method 1 stay within ℓ packets, method 2 within 2ℓ (the crate's
//! reconstruction). ℓ = 7 and 8 run in `examples/whack_exhaustive.rs` (seconds in release).

#[path = "support/whack_bound.rs"]
mod whack_bound;

use rdma_lb_core::host::whack_a_mole::Shuffle;
use whack_bound::{worst_brute, worst_reduced, SHUFFLES};

fn bound_scaled(log2_m: u32, shuffle: Shuffle) -> i64 {
    let l = i64::from(log2_m) << log2_m;
    if shuffle == Shuffle::Method2 {
        2 * l
    } else {
        l
    }
}

#[test]
fn every_profile_and_seed_within_the_bound_up_to_l6() {
    for l in 1..=6 {
        for shuffle in SHUFFLES {
            let w = worst_reduced(l, shuffle);
            assert!(
                w.scaled <= bound_scaled(l, shuffle),
                "l = {l}, {shuffle:?}: deviation {}/{} at interval [{}, +{})",
                w.scaled,
                1u32 << l,
                w.start,
                w.balls
            );
        }
    }
}

#[test]
fn the_seed_reductions_match_brute_force() {
    for l in 1..=4 {
        for shuffle in SHUFFLES {
            assert_eq!(
                worst_reduced(l, shuffle).scaled,
                worst_brute(l, shuffle).scaled,
                "l = {l}, {shuffle:?}"
            );
        }
    }
}

#[test]
fn a_single_interval_is_measured_as_the_monte_carlo_does() {
    // m = 4, no shuffle: θ = 0, 2, 1, 3; the path of balls [0, 2) gets packets at t = 0 and 2:
    // m·count − (t+1)·b = 2, 0, 2, 0 → spread 2/4 of a packet; [1, 3) (balls 1, 2) gets t = 1,
    // 2: −2, 0, 2, 0 → 4/4.
    let seq = whack_bound::period(2, Shuffle::None, 0, 1);
    assert_eq!(seq, vec![0, 2, 1, 3]);
    let w = whack_bound::worst_over_intervals(&seq, false);
    assert_eq!(w.scaled, 4);
}
