//! htsim connection matrices (`.cm`: `htsim_uec -tm FILE`), as the UEC's htsim reads them
//! (`ConnectionMatrix::load`, connection_matrix.cpp) and `main_uec.cpp` starts them.
//!
//! ```text
//! Nodes 128                 # header: hosts (must equal the topology's)
//! Connections 128           # the number of connection lines that follow
//! 103->32 id 1 start 0 size 2000000     # SRC->DST, then keywords in any order
//! ```
//! * `start US` is required: htsim parses it as a number and starts the connection at its
//!   whole microseconds (`timeFromUs((uint32_t)start)` in main_uec.cpp; its comment about
//!   picoseconds is wrong), so `start 9.7` starts at 9 us.
//! * `size BYTES` is required and at least 1 (htsim leaves a connection without one unsized).
//! * `id N` is optional; it must be non-zero and, as htsim asserts, unique. rdma-lb numbers
//!   flows by line order (flow i = the i-th connection line, htsim's connection number); the
//!   id is checked and otherwise unused.
//! * Every flow gets priority group 3, as the flows of ConWeave flow files.
//! * Host i is htsim's host i: node id i on a topology read from a `.topo` file
//!   ([`HtsimCm::flows`]); on another topology, its i-th host ([`HtsimCm::flows_on`]).
//!
//! Not supported yet, each refused with one line naming it: triggers (`trigger` lines, the
//! `trigger`, `send_done_trigger` and `recv_done_trigger` keywords, a non-zero `Triggers`
//! count), link failures (`failure` lines, a non-zero `Failures` count), messages on reused
//! connections (`msg`, htsim's `-conn_reuse`) and priorities (`prio`). `Triggers 0` and
//! `Failures 0` are accepted.
//!
//! Deviations: htsim skips header lines it does not know and lets a repeated keyword replace
//! the earlier one; here both are errors, as are a header key after the first connection, a
//! connection from a host to itself, a host index `>= Nodes` (htsim does not check) and a
//! negative start (htsim casts it to an unsigned integer). `#` starts a comment anywhere (htsim:
//! only at the start of a header line). Keywords are case-sensitive, as htsim's.

use std::path::Path;

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::flows::MAX_FLOWS;
use crate::model::Flow;
use crate::text::{numbered_lines, read_file, real, uint};
use crate::topology::MAX_NODES;

/// One connection line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmConnection {
    /// 1-based line in the file.
    pub line: usize,
    /// Sender host index (htsim's host number).
    pub src: u32,
    /// Receiver host index.
    pub dst: u32,
    /// htsim's flow id, if given (non-zero, unique).
    pub id: Option<u32>,
    /// Start, whole microseconds (the `start` field, truncated as htsim does).
    pub start_us: u64,
    /// Bytes to send (>= 1).
    pub size_bytes: u64,
}

/// A parsed connection matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HtsimCm {
    /// The file's name as used in messages.
    pub file: String,
    /// `Nodes`: the number of hosts it is written for.
    pub nodes: u32,
    /// The connections, in file order.
    pub connections: Vec<CmConnection>,
}

/// The priority group of the flows (as ConWeave flow files' flows).
pub const PG: u32 = 3;

/// Largest start accepted, us (htsim casts the start to a 32-bit unsigned integer).
const MAX_START_US: f64 = 4_294_967_295.0;

impl HtsimCm {
    /// The flows, host index i = node id i (a topology from a `.topo` file: hosts first), flow
    /// i = connection i, priority group 3.
    #[must_use]
    pub fn flows(&self) -> Vec<Flow> {
        self.connections
            .iter()
            .enumerate()
            .map(|(i, c)| Flow {
                id: u32::try_from(i).unwrap_or(u32::MAX),
                src: c.src,
                dst: c.dst,
                pg: PG,
                size_bytes: c.size_bytes,
                start_ns: c.start_us.saturating_mul(1000),
                after: Vec::new(),
                compute_after: Vec::new(),
                compute_ns: 0,
                latency_ns: 0,
                after_completion: false,
                after_sent: Vec::new(),
                after_ready: Vec::new(),
                send_latency_ns: 0,
            })
            .collect()
    }

    /// The flows on a topology whose hosts (ascending ids) are `hosts`: host index i is
    /// `hosts[i]`. `None` if the topology has not exactly `Nodes` hosts.
    #[must_use]
    pub fn flows_on(&self, hosts: &[u32]) -> Option<Vec<Flow>> {
        if hosts.len() != self.nodes as usize {
            return None;
        }
        let mut flows = self.flows();
        for f in &mut flows {
            f.src = *hosts.get(f.src as usize)?;
            f.dst = *hosts.get(f.dst as usize)?;
        }
        Some(flows)
    }
}

/// Reads and parses a connection matrix.
///
/// # Errors
/// See the module documentation.
pub fn parse_cm_file(path: &Path) -> Result<HtsimCm> {
    let text = read_file(path, "connection matrix")?;
    parse_cm_str(&path.display().to_string(), &text)
}

const NOT_YET: &str = "not supported yet (rdma-lb starts connections at their start time only)";

/// Parses connection-matrix text; `name` is used in error messages as the file name.
///
/// # Errors
/// See the module documentation.
pub fn parse_cm_str(name: &str, text: &str) -> Result<HtsimCm> {
    let last_line = text.lines().count().max(1);
    let mut nodes: Option<(u32, usize)> = None;
    let mut count: Option<(u64, usize)> = None;
    let mut connections: Vec<CmConnection> = Vec::new();
    let mut ids: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for (ln, line) in numbered_lines(text, true) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some(&first) = f.first() else { continue };
        if first.contains("->") {
            let Some((n, _)) = nodes else {
                return Err(missing(name, ln, "Nodes", "before the first connection"));
            };
            if count.is_none() {
                return Err(missing(
                    name,
                    ln,
                    "Connections",
                    "before the first connection",
                ));
            }
            if connections.len() as u64 >= MAX_FLOWS {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    "Connections",
                    ErrorKind::Value,
                    format!("more than {MAX_FLOWS} connections"),
                ));
            }
            let c = connection(name, ln, &f, n)?;
            if let Some(id) = c.id {
                if let Some(prev) = ids.insert(id, ln) {
                    return Err(ScenarioError::at(
                        name,
                        ln,
                        "id",
                        ErrorKind::Duplicate,
                        format!("flow id {id} is already used at line {prev}"),
                    ));
                }
            }
            connections.push(c);
            continue;
        }
        match first {
            "trigger" => {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    "trigger",
                    ErrorKind::Unsupported,
                    format!("a trigger line is {NOT_YET}"),
                ))
            }
            "failure" => {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    "failure",
                    ErrorKind::Unsupported,
                    format!(
                        "a failure line (a cut aggregation-core link) is {NOT_YET}; \
                         [topology] link_faults can take links down"
                    ),
                ))
            }
            "Nodes" | "Connections" | "Triggers" | "Failures" => {
                let [_, v] = f.as_slice() else {
                    return Err(ScenarioError::at(
                        name,
                        ln,
                        first,
                        ErrorKind::Syntax,
                        format!("expected `{first} <count>`, found {} fields", f.len()),
                    ));
                };
                if !connections.is_empty() {
                    return Err(ScenarioError::at(
                        name,
                        ln,
                        first,
                        ErrorKind::Syntax,
                        "a header key must come before the first connection",
                    ));
                }
                let v: u64 = uint(name, ln, first, v)?;
                header_key(name, ln, first, v, &mut nodes, &mut count)?;
            }
            _ => {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    first,
                    ErrorKind::UnknownKey,
                    "unknown line (known: Nodes, Connections, Triggers, Failures, SRC->DST ...)",
                ))
            }
        }
    }
    let Some((nodes, _)) = nodes else {
        return Err(missing(name, last_line, "Nodes", "in the header"));
    };
    let Some((count, cl)) = count else {
        return Err(missing(name, last_line, "Connections", "in the header"));
    };
    if connections.len() as u64 != count {
        return Err(ScenarioError::at(
            name,
            cl,
            "Connections",
            ErrorKind::Count,
            format!(
                "says {count} connections, the file has {}",
                connections.len()
            ),
        ));
    }
    Ok(HtsimCm {
        file: name.to_owned(),
        nodes,
        connections,
    })
}

fn missing(name: &str, ln: usize, key: &str, where_: &str) -> ScenarioError {
    ScenarioError::at(
        name,
        ln,
        key,
        ErrorKind::Missing,
        format!("no `{key}` line {where_}"),
    )
}

/// A header line's value into `nodes` or `count`; `Triggers` and `Failures` must be 0.
fn header_key(
    name: &str,
    ln: usize,
    key: &str,
    v: u64,
    nodes: &mut Option<(u32, usize)>,
    count: &mut Option<(u64, usize)>,
) -> Result<()> {
    let twice = |first: usize| {
        ScenarioError::at(
            name,
            ln,
            key,
            ErrorKind::Duplicate,
            format!("given twice (first at line {first})"),
        )
    };
    match key {
        "Nodes" => {
            if let Some((_, first)) = *nodes {
                return Err(twice(first));
            }
            if v == 0 || v > u64::from(MAX_NODES) {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    key,
                    ErrorKind::Value,
                    format!("must be in 1..={MAX_NODES}, got {v}"),
                ));
            }
            *nodes = Some((u32::try_from(v).unwrap_or(MAX_NODES), ln));
        }
        "Connections" => {
            if let Some((_, first)) = *count {
                return Err(twice(first));
            }
            *count = Some((v, ln));
        }
        _ if v != 0 => {
            let what = if key == "Triggers" {
                "triggers"
            } else {
                "link failures"
            };
            return Err(ScenarioError::at(
                name,
                ln,
                key,
                ErrorKind::Unsupported,
                format!("{v} {what}: {what} are {NOT_YET}"),
            ));
        }
        _ => {}
    }
    Ok(())
}

/// One `SRC->DST key value ...` line, hosts checked against `nodes`.
fn connection(name: &str, ln: usize, f: &[&str], nodes: u32) -> Result<CmConnection> {
    let at = |key: &str, kind, msg: String| ScenarioError::at(name, ln, key, kind, msg);
    let first = f.first().copied().unwrap_or("");
    let (src, dst) = first.split_once("->").unwrap_or((first, ""));
    let src: u32 = uint(name, ln, "src", src)?;
    let dst: u32 = uint(name, ln, "dst", dst)?;
    for (field, h) in [("src", src), ("dst", dst)] {
        if h >= nodes {
            return Err(at(
                field,
                ErrorKind::Node,
                format!(
                    "host {h} does not exist (Nodes {nodes}: hosts 0 to {})",
                    nodes - 1
                ),
            ));
        }
    }
    if src == dst {
        return Err(at(
            "dst",
            ErrorKind::Value,
            format!("connection from host {src} to itself"),
        ));
    }
    let mut id = None;
    let mut start_us = None;
    let mut size_bytes = None;
    let mut rest = f.iter().skip(1).copied();
    while let Some(key) = rest.next() {
        match key {
            "id" | "start" | "size" => {
                let Some(v) = rest.next() else {
                    return Err(at(key, ErrorKind::Syntax, "has no value".to_owned()));
                };
                let seen = match key {
                    "id" => id.is_some(),
                    "start" => start_us.is_some(),
                    _ => size_bytes.is_some(),
                };
                if seen {
                    return Err(at(key, ErrorKind::Duplicate, "given twice".to_owned()));
                }
                match key {
                    "id" => {
                        let v: u32 = uint(name, ln, "id", v)?;
                        if v == 0 {
                            return Err(at(
                                "id",
                                ErrorKind::Value,
                                "flow id 0 is not allowed (as in htsim)".to_owned(),
                            ));
                        }
                        id = Some(v);
                    }
                    "start" => {
                        let s = real(name, ln, "start", v)?;
                        if !(0.0..=MAX_START_US).contains(&s) {
                            return Err(at(
                                "start",
                                ErrorKind::Value,
                                format!("must be in 0..={MAX_START_US} us, got {v}"),
                            ));
                        }
                        #[allow(
                            clippy::cast_possible_truncation,
                            clippy::cast_sign_loss,
                            reason = "0 <= s < 2^32: htsim's (uint32_t) cast, whole us"
                        )]
                        let us = s.trunc() as u64;
                        start_us = Some(us);
                    }
                    _ => {
                        let v: u64 = uint(name, ln, "size", v)?;
                        if v == 0 {
                            return Err(at(
                                "size",
                                ErrorKind::Value,
                                "must be >= 1 byte".to_owned(),
                            ));
                        }
                        size_bytes = Some(v);
                    }
                }
            }
            "trigger" | "send_done_trigger" | "recv_done_trigger" => {
                return Err(at(
                    key,
                    ErrorKind::Unsupported,
                    format!("`{key}`: triggers are {NOT_YET}"),
                ))
            }
            "msg" => {
                return Err(at(
                    key,
                    ErrorKind::Unsupported,
                    format!(
                        "`msg` (messages on a reused connection, htsim -conn_reuse) is {NOT_YET}"
                    ),
                ))
            }
            "prio" => {
                return Err(at(
                    key,
                    ErrorKind::Unsupported,
                    format!("`prio` (connection priorities) is {NOT_YET}"),
                ))
            }
            _ => {
                return Err(at(
                    key,
                    ErrorKind::UnknownKey,
                    "unknown keyword (known: id, start, size)".to_owned(),
                ))
            }
        }
    }
    let Some(start_us) = start_us else {
        return Err(at(
            "start",
            ErrorKind::Missing,
            "the connection has no `start`".to_owned(),
        ));
    };
    let Some(size_bytes) = size_bytes else {
        return Err(at(
            "size",
            ErrorKind::Missing,
            "the connection has no `size`".to_owned(),
        ));
    };
    Ok(CmConnection {
        line: ln,
        src,
        dst,
        id,
        start_us,
        size_bytes,
    })
}

#[cfg(test)]
mod tests;
