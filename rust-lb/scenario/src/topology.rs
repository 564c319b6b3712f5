//! Topology files in ConWeave/HPCC format and a leaf-spine
//! generator with the same numbering.
//!
//! ```text
//! <total_nodes> <switch_count> <link_count>
//! <switch id> ... (switch_count ids)
//! <a> <b> <rate, e.g. 100Gbps> <delay, e.g. 1000ns> <error_rate>   (link_count lines)
//! ... free text after the links is ignored
//! ```
//! Deviation from the reference: its driver asserts that every delay is exactly `1000ns` and
//! that the file name is one of two registered topologies (for its IRN BDP table); here any
//! delay with a unit (`ns`, `us`, `ms`, `s`, exact decimals such as HPCC's `0.001ms`) and any
//! name is accepted. Errors: count-line mismatches, ids out of range, duplicate switch ids,
//! self links, bad numbers and bad units, each naming `file:line: field`.
//! Blank lines before and between the links are skipped (the reference reads tokens).

use std::path::Path;

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::model::{Link, Topology};
use crate::text::{numbered_lines, read_file, real, uint};
use crate::units::{parse_rate_bps, parse_time_ns};

/// Largest node count accepted (a guard against allocating for absurd inputs; 1 M nodes is
/// far beyond what a packet-level simulation can run).
pub const MAX_NODES: u32 = 1 << 20;
/// Largest link count accepted.
pub const MAX_LINKS: u32 = 1 << 22;

/// Reads and parses a topology file.
///
/// # Errors
/// See the module documentation.
pub fn parse_topology_file(path: &Path) -> Result<Topology> {
    let text = read_file(path, "topology")?;
    parse_topology_str(&path.display().to_string(), &text)
}

/// Parses topology text; `name` is used in error messages as the file name.
///
/// # Errors
/// See the module documentation.
pub fn parse_topology_str(name: &str, text: &str) -> Result<Topology> {
    let mut lines = numbered_lines(text, false);
    let last_line = text.lines().count().max(1);
    let Some((hl, header)) = lines.next() else {
        return Err(ScenarioError::at(
            name,
            1,
            "header",
            ErrorKind::Missing,
            "empty file; expected `<total_nodes> <switch_count> <link_count>`",
        ));
    };
    let h: Vec<&str> = header.split_whitespace().collect();
    let [n, s, l] = h.as_slice() else {
        return Err(ScenarioError::at(
            name,
            hl,
            "header",
            ErrorKind::Syntax,
            format!(
                "expected 3 fields `<total_nodes> <switch_count> <link_count>`, found {}",
                h.len()
            ),
        ));
    };
    let node_count: u32 = uint(name, hl, "total_nodes", n)?;
    let switch_count: u32 = uint(name, hl, "switch_count", s)?;
    let link_count: u32 = uint(name, hl, "link_count", l)?;
    if node_count == 0 || node_count > MAX_NODES {
        return Err(ScenarioError::at(
            name,
            hl,
            "total_nodes",
            ErrorKind::Value,
            format!("must be in 1..={MAX_NODES}, got {node_count}"),
        ));
    }
    if link_count > MAX_LINKS {
        return Err(ScenarioError::at(
            name,
            hl,
            "link_count",
            ErrorKind::Value,
            format!("at most {MAX_LINKS} links, got {link_count}"),
        ));
    }
    if switch_count > node_count {
        return Err(ScenarioError::at(
            name,
            hl,
            "switch_count",
            ErrorKind::Count,
            format!("{switch_count} switches but only {node_count} nodes"),
        ));
    }

    // Switch ids: switch_count tokens, possibly over several lines.
    let mut switch_ids = Vec::with_capacity(switch_count as usize);
    let mut seen = vec![false; node_count as usize];
    while switch_ids.len() < switch_count as usize {
        let Some((ln, line)) = lines.next() else {
            return Err(ScenarioError::at(
                name,
                last_line,
                "switch ids",
                ErrorKind::Count,
                format!(
                    "header says {switch_count} switches, file ends after {}",
                    switch_ids.len()
                ),
            ));
        };
        for tok in line.split_whitespace() {
            let id: u32 = uint(name, ln, "switch id", tok)?;
            if switch_ids.len() == switch_count as usize {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    "switch ids",
                    ErrorKind::Count,
                    format!("more than the {switch_count} switch ids the header announces"),
                ));
            }
            match seen.get_mut(id as usize) {
                None => {
                    return Err(ScenarioError::at(
                        name,
                        ln,
                        "switch id",
                        ErrorKind::Node,
                        format!("{id} is not a node id (0..{node_count})"),
                    ))
                }
                Some(true) => {
                    return Err(ScenarioError::at(
                        name,
                        ln,
                        "switch id",
                        ErrorKind::Duplicate,
                        format!("{id} listed twice"),
                    ))
                }
                Some(f) => *f = true,
            }
            switch_ids.push(id);
        }
    }

    let mut links = Vec::with_capacity(link_count as usize);
    while links.len() < link_count as usize {
        let Some((ln, line)) = lines.next() else {
            return Err(ScenarioError::at(
                name,
                last_line,
                "links",
                ErrorKind::Count,
                format!(
                    "header says {link_count} links, file ends after {}",
                    links.len()
                ),
            ));
        };
        links.push(parse_link(name, ln, line, node_count)?);
    }
    Ok(Topology {
        node_count,
        switch_ids,
        links,
        port_rates: Vec::new(),
        endpoint_switch_ids: Vec::new(),
    })
}

/// One link line of the HPCC topology format (`a b rate delay error_rate`), its ends below
/// `node_count`; also SimAI's link lines (`crate::simai::topology`).
pub(crate) fn parse_link(name: &str, ln: usize, line: &str, node_count: u32) -> Result<Link> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let [a, b, rate, delay, err] = f.as_slice() else {
        return Err(ScenarioError::at(
            name,
            ln,
            "link",
            ErrorKind::Syntax,
            format!(
                "expected 5 fields `<a> <b> <rate> <delay> <error_rate>`, found {}",
                f.len()
            ),
        ));
    };
    let a: u32 = uint(name, ln, "a", a)?;
    let b: u32 = uint(name, ln, "b", b)?;
    for (field, id) in [("a", a), ("b", b)] {
        if id >= node_count {
            return Err(ScenarioError::at(
                name,
                ln,
                field,
                ErrorKind::Node,
                format!("node {id} does not exist (ids 0..{node_count})"),
            ));
        }
    }
    if a == b {
        return Err(ScenarioError::at(
            name,
            ln,
            "b",
            ErrorKind::Node,
            format!("self link {a}-{b}"),
        ));
    }
    let rate_bps = parse_rate_bps(rate)
        .map_err(|m| ScenarioError::at(name, ln, "rate", ErrorKind::Unit, m))?;
    let delay_ns = parse_time_ns(delay)
        .map_err(|m| ScenarioError::at(name, ln, "delay", ErrorKind::Unit, m))?;
    let error_rate = real(name, ln, "error_rate", err)?;
    if !(0.0..=1.0).contains(&error_rate) {
        return Err(ScenarioError::at(
            name,
            ln,
            "error_rate",
            ErrorKind::Value,
            format!("must be in [0, 1], got {err}"),
        ));
    }
    Ok(Link {
        a,
        b,
        rate_bps,
        delay_ns,
        error_rate,
    })
}

/// A two-tier leaf-spine in ConWeave's numbering: hosts `0..H`, leaves `H..H+L` (host `i` on
/// leaf `H + i / hosts_per_leaf`), spines after the leaves; links are every host link in host
/// order, then every leaf × spine pair (leaf-major), as in `leaf_spine_128_100G_OS2.txt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafSpine {
    /// Number of leaves (ToRs).
    pub leaves: u32,
    /// Hosts under each leaf.
    pub hosts_per_leaf: u32,
    /// Number of spines.
    pub spines: u32,
    /// Host link rate.
    pub host_rate_bps: u64,
    /// Leaf-spine link rate.
    pub fabric_rate_bps: u64,
    /// Delay of every link.
    pub delay_ns: u64,
}

impl LeafSpine {
    /// Builds the topology; `None` if a count is zero or the node count overflows `u32`.
    #[must_use]
    pub fn build(&self) -> Option<Topology> {
        if self.leaves == 0 || self.hosts_per_leaf == 0 || self.spines == 0 {
            return None;
        }
        let hosts = self.leaves.checked_mul(self.hosts_per_leaf)?;
        let node_count = hosts.checked_add(self.leaves)?.checked_add(self.spines)?;
        let links = u64::from(hosts) + u64::from(self.leaves) * u64::from(self.spines);
        if node_count > MAX_NODES || links > u64::from(MAX_LINKS) {
            return None;
        }
        let link = |a, b, rate_bps| Link {
            a,
            b,
            rate_bps,
            delay_ns: self.delay_ns,
            error_rate: 0.0,
        };
        let mut links = Vec::new();
        for h in 0..hosts {
            links.push(link(h, hosts + h / self.hosts_per_leaf, self.host_rate_bps));
        }
        for l in 0..self.leaves {
            for s in 0..self.spines {
                links.push(link(
                    hosts + l,
                    hosts + self.leaves + s,
                    self.fabric_rate_bps,
                ));
            }
        }
        Some(Topology {
            node_count,
            switch_ids: (hosts..node_count).collect(),
            links,
            port_rates: Vec::new(),
            endpoint_switch_ids: Vec::new(),
        })
    }
}
