//! Prints every load-balancing algorithm rdma-lb has, one per line: its name
//! ([`rdma_lb_core::Algorithm::name`]) and where it decides (`host` or `switch`), in the order
//! of [`rdma_lb_core::Algorithm::ALL`]. Scripts (e.g. `scripts/demo`) take the list from here
//! instead of spelling the names again:
//!
//! ```sh
//! cargo run --release -q -p rdma-lb-core --example algorithms
//! ```

use rdma_lb_core::{Algorithm, Side};

fn main() {
    for a in Algorithm::ALL {
        let side = match a.side() {
            Side::Host => "host",
            Side::Switch => "switch",
        };
        println!("{} {side}", a.name());
    }
}
