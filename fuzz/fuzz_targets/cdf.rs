//! Fuzz target: flow-size CDF (spec §8.3) — must return (never panic); errors are one line with a line number.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let result = rdma_lb_scenario::cdf::parse_cdf_str("fuzz", text).map(|c| {
        // Sampling and the mean must not panic either.
        let _ = (c.mean_bytes(), c.sample(0.0), c.sample(0.999_999), c.cdf_at(1e6));
    });
    if let Err(e) = result {
        let s = e.to_string();
        assert!(!s.contains('\n') && e.line.is_some() && s.starts_with("fuzz:"), "{s}");
    }
});
