//! Fuzz target: ConWeave flow file (spec §7.4) against a small leaf-spine — must return (never panic); errors are one line with a line number.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let topology = rdma_lb_scenario::topology::LeafSpine {
        leaves: 2,
        hosts_per_leaf: 4,
        spines: 2,
        host_rate_bps: 100_000_000_000,
        fabric_rate_bps: 100_000_000_000,
        delay_ns: 1000,
    }
    .build();
    let Some(topology) = topology else { return };
    let result = rdma_lb_scenario::flows::parse_flow_str("fuzz", text, &topology).map(|_| ());
    if let Err(e) = result {
        let s = e.to_string();
        assert!(!s.contains('\n') && e.line.is_some() && s.starts_with("fuzz:"), "{s}");
    }
});
