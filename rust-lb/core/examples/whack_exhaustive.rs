//! Whack-a-Mole's spray counter against the paper's bound (the Whack-a-Mole paper, §4 and §9),
//! exhaustively: for ℓ = 1..=L (default 8), every profile of m = 2^ℓ balls over any number of
//! paths and every source seed (s_a, s_b), for each shuffle; the method is in
//! `tests/support/whack_bound.rs`. Exits with status 1 if a deviation exceeds ℓ (no shuffle,
//! method 1) or 2ℓ (method 2, the crate's reconstruction).
//!
//! ```sh
//! cargo run --release -p rdma-lb-core --example whack_exhaustive [-- L]
//! ```
//! Output: one CSV line per ℓ (`l,m,none_worst,none_over_l,method1_worst,method1_over_l,
//! method2_worst,method2_over_l,bound_l,bound_2l,exceed`): the worst deviation in packets, that
//! over ℓ, and whether any bound was exceeded (0 / 1).

#[path = "../tests/support/whack_bound.rs"]
mod whack_bound;

use rdma_lb_core::host::whack_a_mole::Shuffle;
use whack_bound::{worst_reduced, SHUFFLES};

fn main() {
    let max_l: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(8)
        .clamp(1, 10);
    println!(
        "l,m,none_worst,none_over_l,method1_worst,method1_over_l,method2_worst,method2_over_l,\
         bound_l,bound_2l,exceed"
    );
    let mut failed = false;
    for l in 1..=max_l {
        let m = 1u32 << l;
        let mut cols = String::new();
        let mut exceed = false;
        for shuffle in SHUFFLES {
            let w = worst_reduced(l, shuffle);
            let bound =
                i64::from(l) * i64::from(m) * if shuffle == Shuffle::Method2 { 2 } else { 1 };
            exceed |= w.scaled > bound;
            let packets = w.scaled as f64 / f64::from(m);
            cols.push_str(&format!(",{packets:.3},{:.3}", packets / f64::from(l)));
        }
        failed |= exceed;
        println!("{l},{m}{cols},{l},{},{}", 2 * l, u8::from(exceed));
    }
    if failed {
        eprintln!("whack_exhaustive: a deviation exceeds its bound");
        std::process::exit(1);
    }
}
