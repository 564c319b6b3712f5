//! SimAI topology files (`SimAI_simulator -n`; written by SimAI's
//! `astra-sim-alibabacloud/inputs/topo/gen_Topo_Template.py`), as SimAI's ns-3 frontend
//! (`SetupNetwork` in `astra-sim/network_frontend/ns3/common.h`, SimAI NSDI '25, commit
//! `cef83f9d`) reads them.
//!
//! ```text
//! <nodes> <gpus_per_server> <nvswitch_count> <switch_count> <link_count> <gpu_type>
//! <nvswitch ids ...> <switch ids ...>          (nvswitch_count + switch_count ids)
//! <a> <b> <rate, e.g. 400Gbps> <delay, e.g. 0.0005ms> <error_rate>   (link_count lines)
//! ```
//! * `switch_count` counts network switches only; NVSwitches are counted apart, and their ids
//!   come first on the id line. Every other node is a GPU; the GPU is also its own NIC host.
//! * [`GpuType`]: SimAI maps any other spelling to "none" (kept here as
//!   [`SimAiTopology::gpu_type`] = `None`); it only matters for the NCCL model's choice of NVLS.
//! * Link classes are not written in the file: a link is [`LinkClass::NvLink`] iff one end is an
//!   NVSwitch, [`LinkClass::Nic`] between a GPU and a switch, [`LinkClass::Fabric`] between two
//!   switches (and [`LinkClass::Direct`] GPU–GPU, which the generator never writes).
//! * Rates and delays are ns-3 attribute strings; parsed exactly with this crate's units
//!   (`2880Gbps`, `0.000025ms` = 25 ns).
//! * SimAI's frontend numbers ranks by node id: GPUs must be ids `0..gpus`, where
//!   `gpus = nodes − nvswitch_count − switch_count`, followed by the NVSwitches; the GPU count must
//!   be a multiple of `gpus_per_server` (SimAI's NCCL model refuses other counts). The
//!   generator always writes files like that.
//!
//! Deviations: SimAI reads tokens and checks nothing; here the header must have exactly six
//! fields, each link line five, ids must be in range and distinct, the numbering above is
//! checked, self links and error rates outside [0, 1] are errors, and text after the links is
//! ignored. Blank lines are skipped.

use std::path::Path;

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::model::Link;
use crate::text::{numbered_lines, read_file, uint};
use crate::topology::{MAX_LINKS, MAX_NODES};

token_enum! {
    /// The GPU types SimAI's reader knows (`gpu_type` in the header).
    pub enum GpuType {
        /// NVIDIA A100 (NCCL model: always ring).
        A100 = "A100",
        /// NVIDIA A800.
        A800 = "A800",
        /// NVIDIA H100 (NVLS possible with `AS_NVLS_ENABLE=1`).
        H100 = "H100",
        /// NVIDIA H800.
        H800 = "H800",
    }
}

token_enum! {
    /// What a link connects (derived from its ends' node kinds).
    pub enum LinkClass {
        /// GPU (or switch) to an NVSwitch: scale-up NVLink.
        NvLink = "nvlink",
        /// GPU NIC to a network switch (ToR / ASW).
        Nic = "nic",
        /// Switch to switch (ASW–PSW).
        Fabric = "fabric",
        /// GPU to GPU, no switch (never written by SimAI's generator).
        Direct = "direct",
    }
}

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// A GPU and its NIC(s) (SimAI node type 0); its id is its rank.
    Gpu,
    /// An NVSwitch (type 2).
    NvSwitch,
    /// A network switch (type 1).
    Switch,
}

/// One link line.
#[derive(Debug, Clone, PartialEq)]
pub struct SimAiLink {
    /// 1-based line in the file.
    pub line: usize,
    /// One end.
    pub a: u32,
    /// The other end.
    pub b: u32,
    /// Line rate, bits/s.
    pub rate_bps: u64,
    /// Propagation delay, ns.
    pub delay_ns: u64,
    /// Per-packet error probability, 0..=1.
    pub error_rate: f64,
    /// What the link connects.
    pub class: LinkClass,
}

/// A parsed SimAI topology.
#[derive(Debug, Clone, PartialEq)]
pub struct SimAiTopology {
    /// The file's name as used in messages.
    pub file: String,
    /// Number of nodes (GPUs + NVSwitches + switches); ids `0..node_count`.
    pub node_count: u32,
    /// GPUs per server (scale-up domain); ranks `s·g .. (s+1)·g` form server `s`.
    pub gpus_per_server: u32,
    /// The header's GPU type as written.
    pub gpu_type_text: String,
    /// The GPU type, if SimAI knows it.
    pub gpu_type: Option<GpuType>,
    /// NVSwitch ids, in file order.
    pub nvswitch_ids: Vec<u32>,
    /// Network switch ids, in file order.
    pub switch_ids: Vec<u32>,
    /// Links, in file order.
    pub links: Vec<SimAiLink>,
}

impl SimAiTopology {
    /// Number of GPUs (= ranks); they are node ids `0..gpu_count`.
    #[must_use]
    pub fn gpu_count(&self) -> u32 {
        self.node_count
            .saturating_sub(self.nvswitch_count())
            .saturating_sub(self.switch_count())
    }

    /// Number of NVSwitches.
    #[must_use]
    pub fn nvswitch_count(&self) -> u32 {
        u32::try_from(self.nvswitch_ids.len()).unwrap_or(u32::MAX)
    }

    /// Number of network switches.
    #[must_use]
    pub fn switch_count(&self) -> u32 {
        u32::try_from(self.switch_ids.len()).unwrap_or(u32::MAX)
    }

    /// Number of servers (`gpu_count / gpus_per_server`).
    #[must_use]
    pub fn server_count(&self) -> u32 {
        self.gpu_count()
            .checked_div(self.gpus_per_server)
            .unwrap_or(0)
    }

    /// The kind of node `id`, `None` if out of range.
    #[must_use]
    pub fn node_kind(&self, id: u32) -> Option<NodeKind> {
        if id >= self.node_count {
            None
        } else if id < self.gpu_count() {
            Some(NodeKind::Gpu)
        } else if id < self.gpu_count().saturating_add(self.nvswitch_count()) {
            // The parser checks that the NVSwitch ids are exactly this block.
            Some(NodeKind::NvSwitch)
        } else {
            Some(NodeKind::Switch)
        }
    }

    /// The server of GPU `gpu` (`gpu / gpus_per_server`), `None` if it is not a GPU.
    #[must_use]
    pub fn server_of(&self, gpu: u32) -> Option<u32> {
        if gpu < self.gpu_count() {
            gpu.checked_div(self.gpus_per_server)
        } else {
            None
        }
    }

    /// Links of one class.
    pub fn links_of(&self, class: LinkClass) -> impl Iterator<Item = &SimAiLink> + '_ {
        self.links.iter().filter(move |l| l.class == class)
    }

    /// How many links of one class.
    #[must_use]
    pub fn link_count(&self, class: LinkClass) -> usize {
        self.links_of(class).count()
    }

    /// The nodes at the other end of `node`'s links of `class`, in file order.
    #[must_use]
    pub fn neighbours(&self, node: u32, class: LinkClass) -> Vec<u32> {
        self.links_of(class)
            .filter_map(|l| {
                if l.a == node {
                    Some(l.b)
                } else if l.b == node {
                    Some(l.a)
                } else {
                    None
                }
            })
            .collect()
    }
}

/// Header field names, in order (used in error messages).
const HEADER_FIELDS: [&str; 6] = [
    "node_count",
    "gpus_per_server",
    "nvswitch_count",
    "switch_count",
    "link_count",
    "gpu_type",
];

/// Reads and parses a SimAI topology file.
///
/// # Errors
/// See the module documentation.
pub fn parse_topology_file(path: &Path) -> Result<SimAiTopology> {
    let text = read_file(path, "topology")?;
    parse_topology_str(&path.display().to_string(), &text)
}

/// Parses SimAI topology text; `name` is used in error messages as the file name.
///
/// # Errors
/// See the module documentation.
pub fn parse_topology_str(name: &str, text: &str) -> Result<SimAiTopology> {
    let mut lines = numbered_lines(text, false);
    let last_line = text.lines().count().max(1);
    let expected = format!("`{}`", HEADER_FIELDS.join(" "));
    let Some((hl, header)) = lines.next() else {
        return Err(ScenarioError::at(
            name,
            1,
            "header",
            ErrorKind::Missing,
            format!("empty file; expected {expected}"),
        ));
    };
    let h: Vec<&str> = header.split_whitespace().collect();
    if h.len() > HEADER_FIELDS.len() {
        return Err(ScenarioError::at(
            name,
            hl,
            "header",
            ErrorKind::Syntax,
            format!("expected 6 fields {expected}, found {}", h.len()),
        ));
    }
    let field = |i: usize| -> Result<&str> {
        let label = HEADER_FIELDS.get(i).copied().unwrap_or("header");
        h.get(i).copied().ok_or_else(|| {
            ScenarioError::at(
                name,
                hl,
                label,
                ErrorKind::Missing,
                format!("header has {} fields, expected 6: {expected}", h.len()),
            )
        })
    };
    let num = |i: usize| -> Result<u32> {
        uint(
            name,
            hl,
            HEADER_FIELDS.get(i).copied().unwrap_or("header"),
            field(i)?,
        )
    };
    let node_count = num(0)?;
    let gpus_per_server = num(1)?;
    let nvswitch_count = num(2)?;
    let switch_count = num(3)?;
    let link_count = num(4)?;
    let gpu_type_text = field(5)?.to_owned();
    let value_err =
        |key: &str, msg: String| ScenarioError::at(name, hl, key, ErrorKind::Value, msg);
    if node_count == 0 || node_count > MAX_NODES {
        return Err(value_err(
            "node_count",
            format!("must be in 1..={MAX_NODES}, got {node_count}"),
        ));
    }
    if gpus_per_server == 0 {
        return Err(value_err("gpus_per_server", "must be at least 1".into()));
    }
    if link_count > MAX_LINKS {
        return Err(value_err(
            "link_count",
            format!("at most {MAX_LINKS} links, got {link_count}"),
        ));
    }
    let switches = u64::from(nvswitch_count) + u64::from(switch_count);
    if switches >= u64::from(node_count) {
        return Err(ScenarioError::at(
            name,
            hl,
            "switch_count",
            ErrorKind::Count,
            format!(
                "{nvswitch_count} NVSwitches + {switch_count} switches leave no GPU among \
                 {node_count} nodes"
            ),
        ));
    }
    // switches < node_count ≤ MAX_NODES, so these fit.
    let gpu_count = node_count - nvswitch_count - switch_count;
    if gpu_count % gpus_per_server != 0 {
        return Err(value_err(
            "gpus_per_server",
            format!(
                "{gpu_count} GPUs are not a whole number of servers of {gpus_per_server} \
                 (SimAI's NCCL model refuses this)"
            ),
        ));
    }

    // Switch ids: nvswitch_count then switch_count tokens, possibly over several lines.
    let total = nvswitch_count as usize + switch_count as usize;
    let mut ids: Vec<u32> = Vec::with_capacity(total);
    let mut seen = vec![false; node_count as usize];
    while ids.len() < total {
        let Some((ln, line)) = lines.next() else {
            return Err(ScenarioError::at(
                name,
                last_line,
                "switch ids",
                ErrorKind::Count,
                format!(
                    "header says {nvswitch_count} NVSwitches + {switch_count} switches, the file \
                     ends after {} ids",
                    ids.len()
                ),
            ));
        };
        for tok in line.split_whitespace() {
            let field = if ids.len() < nvswitch_count as usize {
                "nvswitch id"
            } else {
                "switch id"
            };
            if ids.len() == total {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    "switch ids",
                    ErrorKind::Count,
                    format!("more than the {total} ids the header announces"),
                ));
            }
            let id: u32 = uint(name, ln, field, tok)?;
            match seen.get_mut(id as usize) {
                None => {
                    return Err(ScenarioError::at(
                        name,
                        ln,
                        field,
                        ErrorKind::Node,
                        format!("{id} is not a node id (0..{node_count})"),
                    ))
                }
                Some(true) => {
                    return Err(ScenarioError::at(
                        name,
                        ln,
                        field,
                        ErrorKind::Duplicate,
                        format!("{id} listed twice"),
                    ))
                }
                Some(f) => *f = true,
            }
            if id < gpu_count {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    field,
                    ErrorKind::Node,
                    format!(
                        "{id} is below the GPU count {gpu_count}: SimAI takes nodes \
                         0..{gpu_count} to be the GPUs (rank = node id)"
                    ),
                ));
            }
            if field == "nvswitch id" && id >= gpu_count + nvswitch_count {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    field,
                    ErrorKind::Node,
                    format!(
                        "{id}: SimAI takes the NVSwitches to be nodes {gpu_count}..{}, right \
                         after the GPUs",
                        gpu_count + nvswitch_count
                    ),
                ));
            }
            ids.push(id);
        }
    }
    let switch_ids = ids.split_off(nvswitch_count as usize);
    let nvswitch_ids = ids;

    let mut topo = SimAiTopology {
        file: name.to_owned(),
        node_count,
        gpus_per_server,
        gpu_type: GpuType::from_token(&gpu_type_text),
        gpu_type_text,
        nvswitch_ids,
        switch_ids,
        links: Vec::with_capacity((link_count as usize).min(1 << 16)),
    };
    while topo.links.len() < link_count as usize {
        let Some((ln, line)) = lines.next() else {
            return Err(ScenarioError::at(
                name,
                last_line,
                "links",
                ErrorKind::Count,
                format!(
                    "header says {link_count} links, the file ends after {}",
                    topo.links.len()
                ),
            ));
        };
        let link = parse_link(name, ln, line, &topo)?;
        topo.links.push(link);
    }
    Ok(topo)
}

fn parse_link(name: &str, ln: usize, line: &str, topo: &SimAiTopology) -> Result<SimAiLink> {
    // The HPCC link line; every id below the node count is a GPU, an NVSwitch or a switch.
    let Link {
        a,
        b,
        rate_bps,
        delay_ns,
        error_rate,
    } = crate::topology::parse_link(name, ln, line, topo.node_count)?;
    let kind = |id: u32| topo.node_kind(id).unwrap_or(NodeKind::Switch);
    let kinds = [kind(a), kind(b)];
    let class = match kinds {
        [NodeKind::NvSwitch, _] | [_, NodeKind::NvSwitch] => LinkClass::NvLink,
        [NodeKind::Gpu, NodeKind::Gpu] => LinkClass::Direct,
        [NodeKind::Gpu, NodeKind::Switch] | [NodeKind::Switch, NodeKind::Gpu] => LinkClass::Nic,
        [NodeKind::Switch, NodeKind::Switch] => LinkClass::Fabric,
    };
    Ok(SimAiLink {
        line: ln,
        a,
        b,
        rate_bps,
        delay_ns,
        error_rate,
        class,
    })
}

#[cfg(test)]
mod tests;
