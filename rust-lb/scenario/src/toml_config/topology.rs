//! `[topology]` of a TOML scenario: a ConWeave topology file, an htsim topology file
//! (`crate::htsim::topo`) or a generated leaf-spine (`crate::topology::LeafSpine`), and the per-link rate overrides `link_rates` (one way or
//! both, optionally scaling the port's queue as htsim's reduced-speed links). Its
//! `link_faults` are read by `super::link_faults`.

use serde::Deserialize;
use toml::Spanned;

use super::context::Cx;
use super::link_faults::LinkFaultSec;
use super::quantity::{Rate, Time};
use crate::error::{ErrorKind, Result, ScenarioError};
use crate::htsim::{parse_topo_file, HtsimTopo};
use crate::model::{PortRate, Topology, Transport};
use crate::topology::{parse_topology_file, LeafSpine};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TopologySec {
    pub(super) conweave_file: Option<Spanned<String>>,
    pub(super) htsim_topo: Option<Spanned<String>>,
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

/// The topology `[topology]` names or describes, with its `link_rates` applied; and the htsim
/// topology file it was built from, if any (its uet defaults: `super::transport`).
pub(super) fn topology(cx: &Cx<'_>, sec: &TopologySec) -> Result<(Topology, Option<HtsimTopo>)> {
    let sources = [
        sec.conweave_file
            .as_ref()
            .map(|p| (p.span(), "conweave_file")),
        sec.htsim_topo.as_ref().map(|p| (p.span(), "htsim_topo")),
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
                "give one of conweave_file, htsim_topo or leaf_spine, not {}",
                names.join(" and ")
            ),
        ));
    }
    let mut htsim = None;
    let mut topology = if let Some(p) = &sec.conweave_file {
        cx.read(p, "topology.conweave_file", parse_topology_file)?
    } else if let Some(p) = &sec.htsim_topo {
        let h = cx.read(p, "topology.htsim_topo", parse_topo_file)?;
        let t = h.to_topology();
        htsim = Some(h);
        t
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
            "needs conweave_file, htsim_topo or leaf_spine",
        ));
    };
    for lr in &sec.link_rates {
        let r = lr.get_ref();
        let link = topology
            .links
            .iter_mut()
            .find(|l| (l.a == r.a && l.b == r.b) || (l.a == r.b && l.b == r.a))
            .ok_or_else(|| {
                cx.err(
                    lr,
                    "topology.link_rates",
                    ErrorKind::Node,
                    format!("no link {}-{} in the topology", r.a, r.b),
                )
            })?;
        let one_way = r.one_way.unwrap_or(false);
        let scale_queue = r.scale_queue.unwrap_or(false);
        let scale = if scale_queue {
            // a rate above the link's would grow the queue: only slowdowns scale
            (r.rate.0 as f64 / link.rate_bps as f64).min(1.0)
        } else {
            1.0
        };
        let ends: &[(u32, u32)] = if one_way {
            &[(r.a, r.b)]
        } else {
            link.rate_bps = r.rate.0;
            &[(r.a, r.b), (r.b, r.a)]
        };
        if one_way || scale_queue {
            topology
                .port_rates
                .extend(ends.iter().map(|&(node, peer)| PortRate {
                    node,
                    peer,
                    rate_bps: r.rate.0,
                    queue_scale: scale,
                }));
        }
    }
    Ok((topology, htsim))
}

/// `scale_queue = true` in `link_rates` needs the UET transport (RoCE's ECN thresholds follow
/// the port rate).
pub(super) fn check_queue_scaling(
    cx: &Cx<'_>,
    sec: &TopologySec,
    transport: &Transport,
) -> Result<()> {
    if transport.kind.is_roce() {
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
