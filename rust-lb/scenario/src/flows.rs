//! Flow files in ConWeave format, read and written.
//!
//! ```text
//! <flow_count>
//! <src> <dst> <pg> <size_bytes> <start_time_seconds>     (one line per flow)
//! ```
//! Exactly 5 fields per record (the HPCC upstream 6-field format with a dport column is
//! rejected with a message saying so); the count line must match the number of records;
//! `src`/`dst` must be hosts of the topology and differ; size 0 becomes 1 (as the reference);
//! negative or non-integer sizes are errors. Start times are parsed from the decimal text to
//! nanoseconds exactly (no binary floating point: `2.000013125` is 2,000,013,125 ns; digits
//! beyond the ninth decimal round half up). Flows keep file order with ids `0..n`.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::model::{Flow, Topology};
use crate::text::{numbered_lines, read_file, uint};
use crate::units::{ns3_19_seconds_to_ns, parse_seconds_to_ns};

/// Largest number of flows a scenario may generate (memory guard; ~1 GB of flow records).
pub const MAX_FLOWS: u64 = 20_000_000;

/// Reads and parses a flow file against `topology`.
///
/// # Errors
/// See the module documentation.
pub fn parse_flow_file(path: &Path, topology: &Topology) -> Result<Vec<Flow>> {
    let text = read_file(path, "flows")?;
    parse_flow_str(&path.display().to_string(), &text, topology)
}

/// Parses flow-file text; `name` is used in error messages as the file name.
///
/// # Errors
/// See the module documentation.
pub fn parse_flow_str(name: &str, text: &str, topology: &Topology) -> Result<Vec<Flow>> {
    let mut is_switch = vec![false; topology.node_count as usize];
    for &s in &topology.switch_ids {
        if let Some(f) = is_switch.get_mut(s as usize) {
            *f = true;
        }
    }
    let mut lines = numbered_lines(text, false);
    let Some((cl, count_line)) = lines.next() else {
        return Err(ScenarioError::at(
            name,
            1,
            "flow_count",
            ErrorKind::Missing,
            "empty file; expected the number of flows on the first line",
        ));
    };
    let count: u32 = match count_line.split_whitespace().collect::<Vec<_>>().as_slice() {
        [c] => uint(name, cl, "flow_count", c)?,
        other => {
            return Err(ScenarioError::at(
                name,
                cl,
                "flow_count",
                ErrorKind::Syntax,
                format!(
                    "the first line must hold only the number of flows, found {} fields",
                    other.len()
                ),
            ))
        }
    };
    let mut flows = Vec::with_capacity(count.min(1 << 20) as usize);
    for (ln, line) in lines {
        let id = u32::try_from(flows.len()).unwrap_or(u32::MAX);
        if id >= count {
            return Err(ScenarioError::at(
                name,
                ln,
                "flow_count",
                ErrorKind::Count,
                format!("the count line ({cl}) says {count} flows, but more records follow"),
            ));
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let [src, dst, pg, size, start] = f.as_slice() else {
            let hint = if f.len() == 6 {
                " (HPCC's 6-field format with a dport column is not ConWeave's)"
            } else {
                ""
            };
            return Err(ScenarioError::at(
                name,
                ln,
                "flow",
                ErrorKind::Syntax,
                format!(
                    "expected 5 fields `<src> <dst> <pg> <size_bytes> <start_s>`, found {}{hint}",
                    f.len()
                ),
            ));
        };
        let src: u32 = uint(name, ln, "src", src)?;
        let dst: u32 = uint(name, ln, "dst", dst)?;
        for (field, node) in [("src", src), ("dst", dst)] {
            match is_switch.get(node as usize) {
                None => {
                    return Err(ScenarioError::at(
                        name,
                        ln,
                        field,
                        ErrorKind::Node,
                        format!(
                            "host {node} does not exist (topology has {} nodes)",
                            topology.node_count
                        ),
                    ))
                }
                Some(true) => {
                    return Err(ScenarioError::at(
                        name,
                        ln,
                        field,
                        ErrorKind::Node,
                        format!("node {node} is a switch, not a host"),
                    ))
                }
                Some(false) => {}
            }
        }
        if src == dst {
            return Err(ScenarioError::at(
                name,
                ln,
                "dst",
                ErrorKind::Value,
                format!("flow from host {src} to itself"),
            ));
        }
        let pg: u32 = uint(name, ln, "pg", pg)?;
        if pg == 0 || pg > 7 {
            return Err(ScenarioError::at(
                name,
                ln,
                "pg",
                ErrorKind::Value,
                format!("priority group must be in 1..=7 (0 is the control queue), got {pg}"),
            ));
        }
        if size.starts_with('-') {
            return Err(ScenarioError::at(
                name,
                ln,
                "size_bytes",
                ErrorKind::Value,
                format!("negative size `{size}`"),
            ));
        }
        let size_bytes: u64 = uint(name, ln, "size_bytes", size)?;
        let start_ns = parse_seconds_to_ns(start)
            .map_err(|m| ScenarioError::at(name, ln, "start_s", ErrorKind::Syntax, m))?;
        flows.push(Flow {
            id,
            src,
            dst,
            pg,
            size_bytes: size_bytes.max(1),
            start_ns,
            after: Vec::new(),
            compute_after: Vec::new(),
            compute_ns: 0,
            latency_ns: 0,
            after_completion: false,
            after_sent: Vec::new(),
            after_ready: Vec::new(),
            send_latency_ns: 0,
        });
    }
    if flows.len() != count as usize {
        return Err(ScenarioError::at(
            name,
            cl,
            "flow_count",
            ErrorKind::Count,
            format!("says {count} flows, the file has {}", flows.len()),
        ));
    }
    Ok(flows)
}

/// Re-times flows read from a flow file as the reference does (quirk `time-truncation`): its
/// driver starts a flow at `Seconds(start_s)`, which ns-3.19 truncates to whole nanoseconds
/// ([`ns3_19_seconds_to_ns`]; 2.000000041 s starts at 2000000040 ns). The order of the flows
/// is unchanged (the conversion is monotone).
#[allow(
    clippy::cast_precision_loss,
    reason = "start times below 2^53 ns are exact in f64, as the reference's double"
)]
pub fn truncate_starts_as_ns3_19(flows: &mut [Flow]) {
    for f in flows {
        f.start_ns = ns3_19_seconds_to_ns(f.start_ns as f64 / 1e9);
    }
}

/// Writes flows in ConWeave format (start times with 9 decimals, exactly). `after`
/// dependencies cannot be expressed in this format and are left out.
#[must_use]
pub fn format_flow_file(flows: &[Flow]) -> String {
    let mut out = String::with_capacity(flows.len() * 32 + 16);
    let _ = writeln!(out, "{}", flows.len());
    for f in flows {
        let _ = writeln!(
            out,
            "{} {} {} {} {}.{:09}",
            f.src,
            f.dst,
            f.pg,
            f.size_bytes,
            f.start_ns / 1_000_000_000,
            f.start_ns % 1_000_000_000
        );
    }
    out
}
