//! `[topology]` of a TOML scenario: a ConWeave topology file, an htsim topology file
//! (`crate::htsim::topo`), a SimAI topology file (`crate::simai::fabric`: a GPU's NVLink and NIC
//! ports as two hosts) or a generated leaf-spine (`crate::topology::LeafSpine`), and the per-link rate overrides `link_rates` (one way or
//! both, optionally scaling the port's queue as htsim's reduced-speed links), and htsim's
//! `-failed N` as `htsim_failed = N` (with `htsim_topo`: the links
//! `crate::htsim::HtsimTopo::failed_links` picks, applied as `link_rates` entries with the
//! queue scaled by 0.25, before the explicit `link_rates`). Its
//! `link_faults` are read by `super::link_faults`.

use serde::Deserialize;
use toml::Spanned;

use super::context::Cx;
use super::link_faults::LinkFaultSec;
use super::quantity::{Rate, Time};
use crate::error::{ErrorKind, Result, ScenarioError};
use crate::htsim::{parse_topo_file, HtsimTopo, FAILED_LINK_RATIO};
use crate::model::{PortRate, Topology, Transport};
use crate::simai::{parse_topology_file as parse_simai_topology_file, SimAiFabric};
use crate::topology::{parse_topology_file, LeafSpine};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TopologySec {
    pub(super) conweave_file: Option<Spanned<String>>,
    pub(super) htsim_topo: Option<Spanned<String>>,
    pub(super) htsim_failed: Option<Spanned<u32>>,
    pub(super) simai_file: Option<Spanned<String>>,
    pub(super) leaf_spine: Option<Spanned<LeafSpineSec>>,
    #[serde(default)]
    pub(super) link_rates: Vec<Spanned<LinkRateSec>>,
    #[serde(default)]
    pub(super) link_faults: Vec<Spanned<LinkFaultSec>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LeafSpineSec {
    pub(super) leaves: u32,
    pub(super) hosts_per_leaf: u32,
    pub(super) spines: u32,
    pub(super) host_rate: Rate,
    pub(super) fabric_rate: Option<Rate>,
    pub(super) delay: Time,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LinkRateSec {
    pub(super) a: u32,
    pub(super) b: u32,
    pub(super) rate: Rate,
    pub(super) one_way: Option<bool>,
    pub(super) scale_queue: Option<bool>,
}

/// The topology `[topology]` names or describes, with its `link_rates` applied, and the file
/// it came from where the workload or transport read more of it.
pub(super) struct Built {
    /// The fabric.
    pub(super) topology: Topology,
    /// The htsim topology file (its uet defaults: `super::transport`).
    pub(super) htsim: Option<HtsimTopo>,
    /// The SimAI topology's GPUs (`[workload] simai_file`).
    pub(super) simai: Option<SimAiFabric>,
}

/// See [`Built`].
pub(super) fn topology(cx: &Cx<'_>, sec: &TopologySec) -> Result<Built> {
    let sources = [
        sec.conweave_file
            .as_ref()
            .map(|p| (p.span(), "conweave_file")),
        sec.htsim_topo.as_ref().map(|p| (p.span(), "htsim_topo")),
        sec.simai_file.as_ref().map(|p| (p.span(), "simai_file")),
        sec.leaf_spine.as_ref().map(|p| (p.span(), "leaf_spine")),
    ];
    let given: Vec<_> = sources.iter().flatten().collect();
    if let [_, (span, key), ..] = given.as_slice() {
        let names: Vec<&str> = given.iter().map(|(_, k)| *k).collect();
        return Err(ScenarioError::at(
            cx.file,
            super::context::line_of(cx.text, span.start),
            &format!("topology.{key}"),
            ErrorKind::Value,
            format!(
                "give one of conweave_file, htsim_topo, simai_file or leaf_spine, not {}",
                names.join(" and ")
            ),
        ));
    }
    let mut htsim = None;
    let mut simai = None;
    let mut topology = if let Some(p) = &sec.conweave_file {
        cx.read(p, "topology.conweave_file", parse_topology_file)?
    } else if let Some(p) = &sec.htsim_topo {
        let h = cx.read(p, "topology.htsim_topo", parse_topo_file)?;
        let t = h.to_topology();
        htsim = Some(h);
        t
    } else if let Some(p) = &sec.simai_file {
        let t = cx.read(p, "topology.simai_file", parse_simai_topology_file)?;
        let f = SimAiFabric::build(&t).map_err(|(line, msg)| {
            if line == 0 {
                ScenarioError::file(&t.file, "link", ErrorKind::Value, msg)
            } else {
                ScenarioError::at(&t.file, line, "link", ErrorKind::Value, msg)
            }
        })?;
        let topology = f.topology.clone();
        simai = Some(f);
        topology
    } else if let Some(ls) = &sec.leaf_spine {
        let l = ls.get_ref();
        LeafSpine {
            leaves: l.leaves,
            hosts_per_leaf: l.hosts_per_leaf,
            spines: l.spines,
            host_rate_bps: l.host_rate.0,
            fabric_rate_bps: l.fabric_rate.unwrap_or(l.host_rate).0,
            delay_ns: l.delay.0,
        }
        .build()
        .ok_or_else(|| {
            cx.err(
                ls,
                "topology.leaf_spine",
                ErrorKind::Value,
                format!(
                    "leaves, hosts_per_leaf and spines must be positive, with at most {} \
                     nodes and {} links",
                    crate::topology::MAX_NODES,
                    crate::topology::MAX_LINKS
                ),
            )
        })?
    } else {
        return Err(ScenarioError::file(
            cx.file,
            "topology",
            ErrorKind::Missing,
            "needs conweave_file, htsim_topo, simai_file or leaf_spine",
        ));
    };
    if let Some(n) = &sec.htsim_failed {
        let Some(h) = &htsim else {
            return Err(cx.err(
                n,
                "topology.htsim_failed",
                ErrorKind::Value,
                "htsim_failed (htsim_uec's -failed) needs htsim_topo".to_owned(),
            ));
        };
        let failed = h
            .failed_links(*n.get_ref())
            .map_err(|msg| cx.err(n, "topology.htsim_failed", ErrorKind::Value, msg))?;
        for f in failed {
            set_rate(
                &mut topology,
                f.a,
                f.b,
                f.rate_bps,
                f.one_way,
                QueueScale::Fixed(FAILED_LINK_RATIO),
            )
            .map_err(|msg| cx.err(n, "topology.htsim_failed", ErrorKind::Node, msg))?;
        }
    }
    for lr in &sec.link_rates {
        let r = lr.get_ref();
        let one_way = r.one_way.unwrap_or(false);
        let scale_queue = r.scale_queue.unwrap_or(false);
        let scale = if scale_queue {
            QueueScale::ByRate
        } else {
            QueueScale::None
        };
        set_rate(&mut topology, r.a, r.b, r.rate.0, one_way, scale)
            .map_err(|msg| cx.err(lr, "topology.link_rates", ErrorKind::Node, msg))?;
    }
    Ok(Built {
        topology,
        htsim,
        simai,
    })
}

/// The factor on a rate-set port's queue limit and ECN thresholds.
#[derive(Clone, Copy)]
enum QueueScale {
    /// None (`scale_queue` false or left out).
    None,
    /// The new rate / the link's, at most 1 (`scale_queue = true`: a rate above the link's would
    /// grow the queue, so only slowdowns scale).
    ByRate,
    /// This factor (`htsim_failed`: htsim's `_failed_link_ratio`).
    Fixed(f64),
}

/// Sets link a-b's rate (both ways) or only a's port towards b (`one_way`) to `rate_bps`, as a
/// `link_rates` entry, scaling the port(s)' queue as `queue_scale` says.
fn set_rate(
    topology: &mut Topology,
    a: u32,
    b: u32,
    rate_bps: u64,
    one_way: bool,
    queue_scale: QueueScale,
) -> std::result::Result<(), String> {
    let link = topology
        .links
        .iter_mut()
        .find(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
        .ok_or_else(|| format!("no link {a}-{b} in the topology"))?;
    let scale = match queue_scale {
        QueueScale::None => 1.0,
        QueueScale::ByRate => (rate_bps as f64 / link.rate_bps as f64).min(1.0),
        QueueScale::Fixed(f) => f,
    };
    let ends: &[(u32, u32)] = if one_way {
        &[(a, b)]
    } else {
        link.rate_bps = rate_bps;
        &[(a, b), (b, a)]
    };
    if one_way || !matches!(queue_scale, QueueScale::None) {
        topology
            .port_rates
            .extend(ends.iter().map(|&(node, peer)| PortRate {
                node,
                peer,
                rate_bps,
                queue_scale: scale,
            }));
    }
    Ok(())
}

/// `scale_queue = true` in `link_rates` and `htsim_failed` (which scales the queues) need the
/// UET transport (RoCE's ECN thresholds follow the port rate).
pub(super) fn check_queue_scaling(
    cx: &Cx<'_>,
    sec: &TopologySec,
    transport: &Transport,
) -> Result<()> {
    if transport.kind.is_roce() {
        if let Some(n) = sec.htsim_failed.as_ref().filter(|n| *n.get_ref() > 0) {
            return Err(cx.err(
                n,
                "topology.htsim_failed",
                ErrorKind::Value,
                "htsim_failed needs kind = \"uet\" (it scales the failed ports' queues and ECN \
                 thresholds, as htsim; RoCE's follow the port rate)"
                    .to_owned(),
            ));
        }
        if let Some(lr) = sec
            .link_rates
            .iter()
            .find(|lr| lr.get_ref().scale_queue == Some(true))
        {
            return Err(cx.err(
                lr,
                "topology.link_rates",
                ErrorKind::Value,
                "scale_queue needs kind = \"uet\" (RoCE's ECN thresholds follow the port rate)"
                    .to_owned(),
            ));
        }
    }
    Ok(())
}
