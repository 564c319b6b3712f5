//! One entry point per fuzz target, shared by the libFuzzer targets (`fuzz/fuzz_targets/`,
//! nightly + cargo-fuzz) and the stable campaign (`tests/fuzz_campaign.rs`), so both routes
//! exercise exactly the same code with the same invariant: a parser returns (never panics)
//! and every error it returns is one line `NAME:LINE: key: message`.
//!
//! [`check`] returns `Err` with a description when the invariant is broken; the callers turn
//! that into a crash (libFuzzer) or a counted failure (stable campaign).

use std::path::Path;

use crate::topology::LeafSpine;
use crate::{Overrides, Result as ParseResult};

/// The fuzz targets, each named after the format it parses (also the corpus folder names
/// under `fuzz/corpus/`).
pub const TARGETS: [&str; 8] = [
    "conweave_config",
    "topology",
    "flow_file",
    "cdf",
    "toml_config",
    "htsim_topo",
    "htsim_cm",
    "simai_conf",
];

/// The `htsim_topo` target builds the fabric only up to this many links (a few lines of a
/// `.topo` file can describe millions; the parser's own guard allows 4 M).
pub const HTSIM_FUZZ_MAX_LINKS: u64 = 1 << 16;

/// The name every input is parsed under.
pub const NAME: &str = "fuzz";
/// Where the `toml_config` target pretends its input lives (a directory that does not exist).
pub const TOML_PATH: &str = "/nonexistent-rdma-lb-fuzz/fuzz.toml";

/// Runs `data` through target `target`'s parser.
///
/// # Errors
/// A description if the parser broke the invariant (a multi-line error, one without a line
/// number or not naming the input) or the target is unknown. Panics are the caller's to
/// catch: they are what fuzzing looks for.
pub fn check(target: &str, data: &[u8]) -> Result<(), String> {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    match target {
        "conweave_config" => one_line(
            crate::conweave::parse_conweave_config_str(NAME, text).map(|_| ()),
            NAME,
            true,
        ),
        "topology" => one_line(
            crate::topology::parse_topology_str(NAME, text).map(|_| ()),
            NAME,
            true,
        ),
        "flow_file" => {
            // ConWeave's 128-host leaf-spine (8 leaves x 16 hosts, 8 spines), the topology of
            // the real flow files in the corpus.
            let topology = LeafSpine {
                leaves: 8,
                hosts_per_leaf: 16,
                spines: 8,
                host_rate_bps: 100_000_000_000,
                fabric_rate_bps: 100_000_000_000,
                delay_ns: 1000,
            }
            .build()
            .ok_or("the flow-file target's topology does not build")?;
            one_line(
                crate::flows::parse_flow_str(NAME, text, &topology).map(|_| ()),
                NAME,
                true,
            )
        }
        "cdf" => one_line(
            crate::cdf::parse_cdf_str(NAME, text).map(|c| {
                // Sampling and the mean must not panic either.
                let _ = (
                    c.mean_bytes(),
                    c.sample(0.0),
                    c.sample(0.999_999),
                    c.cdf_at(1e6),
                );
            }),
            NAME,
            true,
        ),
        "toml_config" => {
            // The whole TOML stage (sections, units, topology, link faults, transport, lb),
            // as if the file were in a directory that does not exist: file references fail
            // with an error, so no input makes the target read files or generate large
            // workloads. Errors about the whole file may have no line.
            let path = Path::new(TOML_PATH);
            let r = crate::toml_config::load_toml_str(path, text, &Overrides::default());
            one_line(r.map(|_| ()), TOML_PATH, false)
        }
        "htsim_topo" => one_line(
            crate::htsim::parse_topo_str(NAME, text).map(|t| {
                // The derived values and (if small) the fabric must not panic either.
                let _ = crate::htsim::uet_defaults(&t, 4150, true, None);
                if t.link_count() <= HTSIM_FUZZ_MAX_LINKS {
                    let _ = t.to_topology();
                }
            }),
            NAME,
            true,
        ),
        "htsim_cm" => one_line(
            crate::htsim::parse_cm_str(NAME, text).map(|m| {
                let _ = m.flows();
            }),
            NAME,
            true,
        ),
        "simai_conf" => one_line(
            crate::simai::parse_conf_str(NAME, text).map(|_| ()),
            NAME,
            true,
        ),
        _ => Err(format!("unknown fuzz target `{target}`")),
    }
}

/// The invariant on a parser's result: an error is one line naming `file` (and, if
/// `needs_line`, a line: `file:LINE: ...`).
fn one_line(r: ParseResult<()>, file: &str, needs_line: bool) -> Result<(), String> {
    let Err(e) = r else { return Ok(()) };
    let s = e.to_string();
    if s.contains('\n') || s.contains('\r') {
        return Err(format!("multi-line error: {s:?}"));
    }
    if e.file != file || !s.starts_with(&format!("{file}:")) {
        return Err(format!("error does not name the input `{file}`: {s}"));
    }
    match e.line {
        Some(line) if line >= 1 && s.starts_with(&format!("{file}:{line}: ")) => Ok(()),
        None if !needs_line => Ok(()),
        _ => Err(format!("error without a valid line number: {s}")),
    }
}
