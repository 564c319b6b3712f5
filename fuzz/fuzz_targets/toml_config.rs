//! Fuzz target: rdma-lb TOML scenario (sections, units, unknown keys) — must return (never panic); errors are one line with a line number.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let result = rdma_lb_scenario::toml_config::parse_toml_str("fuzz", text);
    if let Err(e) = result {
        let s = e.to_string();
        assert!(!s.contains('\n') && e.line.is_some() && s.starts_with("fuzz:"), "{s}");
    }
});
