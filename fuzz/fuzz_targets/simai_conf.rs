//! Fuzz target: SimAI's network configuration (SimAI.conf) — must return (never panic); errors are one line with a line number.
//! The check itself is `rdma_lb_scenario::fuzz_check`, shared with the stable campaign.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = rdma_lb_scenario::fuzz_check::check("simai_conf", data) {
        panic!("{e}");
    }
});
