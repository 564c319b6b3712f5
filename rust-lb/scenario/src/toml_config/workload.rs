//! `[workload]` of a TOML scenario: a ConWeave flow file, an htsim connection matrix
//! (`crate::htsim::cm`), one iteration of a SimAI workload file (`crate::simai::iteration`, on
//! a `[topology] simai_file`), Poisson arrivals with sizes from a CDF, and collectives
//! (`[[workload.collective]]`: ring allreduce / allgather / reduce-scatter, all-to-all,
//! permutation, incast), generated in that order, their flow ids in sequence.

use serde::Deserialize;
use toml::Spanned;

use super::context::{line_of, Cx};
use super::quantity::{Bytes, Time};
use crate::cdf::parse_cdf_file;
use crate::error::{ErrorKind, Result, ScenarioError};
use crate::flows::{parse_flow_file, truncate_starts_as_ns3_19};
use crate::htsim::parse_cm_file;
use crate::model::{Collective, CollectiveKind, Flow, Quirk, QuirkSet, Topology};
use crate::overrides::{Overrides, OVERRIDES};
use crate::simai::iteration::{
    expand as simai_expand, Options as SimAiOptions, SIMAI_SEND_LATENCY_NS,
};
use crate::simai::report::EndToEndPlan;
use crate::simai::{
    parse_workload_file as parse_simai_workload_file, GroupSizes, Groups, NcclOptions, SimAiFabric,
};
use crate::workload::{
    derive_seed, expand_collective, place_ranks, poisson_flows, CollectiveSpec, Placement,
    PoissonSpec,
};

pub use crate::flows::MAX_FLOWS;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WorkloadSec {
    pub(super) flow_file: Option<Spanned<String>>,
    pub(super) htsim_cm: Option<Spanned<String>>,
    pub(super) simai_file: Option<Spanned<String>>,
    pub(super) simai_send_latency: Option<Spanned<Time>>,
    pub(super) simai_comm_scale: Option<Spanned<f64>>,
    pub(super) simai_compute_scale: Option<Spanned<f64>>,
    pub(super) simai_pxn: Option<Spanned<bool>>,
    pub(super) simai_nvls: Option<Spanned<bool>>,
    pub(super) poisson: Option<Spanned<PoissonSec>>,
    #[serde(default)]
    pub(super) collective: Vec<Spanned<CollectiveSec>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PoissonSec {
    pub(super) cdf: Spanned<String>,
    pub(super) load: Spanned<f64>,
    pub(super) duration: Time,
    pub(super) start: Option<Time>,
    pub(super) seed: Option<u64>,
    pub(super) pg: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CollectiveSec {
    pub(super) kind: Spanned<String>,
    pub(super) ranks: u32,
    pub(super) groups: Option<u32>,
    pub(super) placement: Option<Spanned<String>>,
    pub(super) size: Bytes,
    pub(super) start: Option<Time>,
    pub(super) seed: Option<u64>,
    pub(super) pg: Option<u32>,
    pub(super) in_order: Option<Spanned<bool>>,
}

/// What `[workload]` generates.
pub(super) struct Workload {
    /// Every flow, ids in order: flow-file flows, connection-matrix flows, Poisson flows, then
    /// each collective's.
    pub(super) flows: Vec<Flow>,
    /// The collectives' records.
    pub(super) collectives: Vec<Collective>,
    /// The end of flow generation: the Poisson window's end or the latest flow start, if later
    /// (at least the run's start).
    pub(super) gen_end_ns: u64,
    /// The Poisson workload's host load (0 without one).
    pub(super) load: f64,
    /// One note per host the Poisson workload leaves out (no link).
    pub(super) notes: Vec<String>,
    /// The SimAI iteration's per-layer report plan (`crate::simai::report`).
    pub(super) simai_report: Option<EndToEndPlan>,
}

/// The flows of `[workload]`; `quirks` are the run's (a flow file's start times are truncated
/// as ns-3.19 does under `time-truncation`), `seed` the run's (generators without their own
/// seed derive one from it).
#[allow(
    clippy::too_many_arguments,
    reason = "one per input the workload draws on"
)]
pub(super) fn workload(
    cx: &Cx<'_>,
    w: &WorkloadSec,
    topology: &Topology,
    simai: Option<&SimAiFabric>,
    quirks: QuirkSet,
    o: &Overrides,
    seed: u64,
    run_start_ns: u64,
) -> Result<Workload> {
    if w.flow_file.is_none()
        && w.htsim_cm.is_none()
        && w.simai_file.is_none()
        && w.poisson.is_none()
        && w.collective.is_empty()
    {
        return Err(ScenarioError::file(
            cx.file,
            "workload",
            ErrorKind::Missing,
            "needs flow_file, htsim_cm, simai_file, poisson and/or [[workload.collective]]",
        ));
    }
    let mut out = Workload {
        flows: Vec::new(),
        collectives: Vec::new(),
        gen_end_ns: run_start_ns,
        load: 0.0,
        notes: Vec::new(),
        simai_report: None,
    };
    if let Some(ff) = &w.flow_file {
        out.flows = flow_file(cx, ff, topology, quirks)?;
    }
    if let Some(cm) = &w.htsim_cm {
        append(&mut out.flows, htsim_cm(cx, cm, topology)?);
    }
    if let Some(sf) = &w.simai_file {
        let latency = w
            .simai_send_latency
            .as_ref()
            .map_or(SIMAI_SEND_LATENCY_NS, |t| t.get_ref().0);
        let scale = |v: &Option<Spanned<f64>>, key: &str| -> Result<f64> {
            match v {
                Some(s) if !(s.get_ref().is_finite() && *s.get_ref() > 0.0) => Err(cx.err(
                    s,
                    key,
                    ErrorKind::Value,
                    format!("{}: must be a positive number", s.get_ref()),
                )),
                Some(s) => Ok(*s.get_ref()),
                None => Ok(1.0),
            }
        };
        let scales = (
            scale(&w.simai_comm_scale, "workload.simai_comm_scale")?,
            scale(&w.simai_compute_scale, "workload.simai_compute_scale")?,
        );
        let nccl = NcclOptions {
            pxn: w.simai_pxn.as_ref().is_some_and(|v| *v.get_ref()),
            nvls: w.simai_nvls.as_ref().is_some_and(|v| *v.get_ref()),
        };
        let keys = SimAiKeys {
            send_latency_ns: latency,
            comm_scale: scales.0,
            compute_scale: scales.1,
            nccl,
        };
        simai_iteration(cx, sf, simai, keys, run_start_ns, &mut out)?;
    } else {
        let stray = [
            w.simai_send_latency
                .as_ref()
                .map(|l| (l.span(), "simai_send_latency")),
            w.simai_comm_scale
                .as_ref()
                .map(|l| (l.span(), "simai_comm_scale")),
            w.simai_compute_scale
                .as_ref()
                .map(|l| (l.span(), "simai_compute_scale")),
            w.simai_pxn.as_ref().map(|l| (l.span(), "simai_pxn")),
            w.simai_nvls.as_ref().map(|l| (l.span(), "simai_nvls")),
        ];
        if let Some((span, key)) = stray.into_iter().flatten().next() {
            return Err(ScenarioError::at(
                cx.file,
                line_of(cx.text, span.start),
                &format!("workload.{key}"),
                ErrorKind::Value,
                "needs workload.simai_file",
            ));
        }
    }
    if let Some(ps) = &w.poisson {
        poisson(cx, ps, topology, o, seed, run_start_ns, &mut out)?;
    } else if o.load.is_some() {
        return Err(ScenarioError::file(
            OVERRIDES,
            "load",
            ErrorKind::Unsupported,
            format!("{} has no [workload] poisson to apply a load to", cx.file),
        ));
    }
    collectives(cx, &w.collective, topology, seed, run_start_ns, &mut out)?;
    if let Some(last) = out.flows.iter().map(|f| f.start_ns).max() {
        out.gen_end_ns = out.gen_end_ns.max(last);
    }
    Ok(out)
}

/// `flow_file`: a ConWeave flow file's flows.
fn flow_file(
    cx: &Cx<'_>,
    ff: &Spanned<String>,
    topology: &Topology,
    quirks: QuirkSet,
) -> Result<Vec<Flow>> {
    let mut flows = cx.read(ff, "workload.flow_file", |p| parse_flow_file(p, topology))?;
    if quirks.contains(Quirk::TimeTruncation) {
        truncate_starts_as_ns3_19(&mut flows);
    }
    Ok(flows)
}

/// `htsim_cm`: an htsim connection matrix's flows, its host i the topology's i-th host (host
/// i itself on a topology from `htsim_topo`); its `Nodes` must be the topology's host count.
fn htsim_cm(cx: &Cx<'_>, cm: &Spanned<String>, topology: &Topology) -> Result<Vec<Flow>> {
    let m = cx.read(cm, "workload.htsim_cm", parse_cm_file)?;
    let hosts = topology.hosts();
    m.flows_on(&hosts).ok_or_else(|| {
        cx.err(
            cm,
            "workload.htsim_cm",
            ErrorKind::Count,
            format!(
                "{} is written for Nodes {} hosts; the topology has {}",
                m.file,
                m.nodes,
                hosts.len()
            ),
        )
    })
}

/// The `[workload] simai_*` keys besides the file, read.
struct SimAiKeys {
    /// `simai_send_latency` (SimAI's `AS_SEND_LAT`), ns.
    send_latency_ns: u64,
    /// `simai_comm_scale`.
    comm_scale: f64,
    /// `simai_compute_scale`.
    compute_scale: f64,
    /// `simai_pxn` (SimAI's `AS_PXN_ENABLE`).
    nccl: NcclOptions,
}

/// `simai_file`: one iteration of a SimAI workload on the SimAI topology of `[topology]
/// simai_file` (`crate::simai::iteration`), its flows and collectives appended to `out`, starting
/// at the run's start.
fn simai_iteration(
    cx: &Cx<'_>,
    sf: &Spanned<String>,
    fabric: Option<&SimAiFabric>,
    keys: SimAiKeys,
    run_start_ns: u64,
    out: &mut Workload,
) -> Result<()> {
    let SimAiKeys {
        send_latency_ns,
        comm_scale,
        compute_scale,
        nccl,
    } = keys;
    let key = "workload.simai_file";
    let Some(fabric) = fabric else {
        return Err(cx.err(
            sf,
            key,
            ErrorKind::Value,
            "a SimAI workload needs a SimAI topology ([topology] simai_file)".to_owned(),
        ));
    };
    let mut w = cx.read(sf, key, parse_simai_workload_file)?;
    if (comm_scale, compute_scale) != (1.0, 1.0) {
        w.scale(comm_scale, compute_scale);
    }
    let h = &w.header;
    let header_err =
        |field: &str, msg: String| ScenarioError::at(&w.file, h.line, field, ErrorKind::Value, msg);
    if let Some(n) = h.all_gpus.filter(|&n| n != fabric.gpus) {
        return Err(header_err(
            "all_gpus",
            format!("{n} GPUs in the workload, {} in the topology", fabric.gpus),
        ));
    }
    let tp = h.tp.ok_or_else(|| {
        header_err(
            "model_parallel_NPU_group",
            "missing: the tensor-parallel size is needed to build the groups".to_owned(),
        )
    })?;
    let sizes = GroupSizes::new(fabric.gpus, fabric.gpus_per_server, tp, h.ep).map_err(|e| {
        let (field, msg) = e.split_once(": ").unwrap_or(("header", e.as_str()));
        header_err(field, msg.to_owned())
    })?;
    let first_id = u32::try_from(out.flows.len()).unwrap_or(u32::MAX);
    let first_group = u32::try_from(out.collectives.len()).unwrap_or(u32::MAX);
    let options = SimAiOptions {
        pg: 3,
        send_latency_ns,
        first_id,
        first_group,
        nccl,
    };
    let mut it = simai_expand(&w, fabric, &Groups::build(sizes), options)
        .map_err(|msg| cx.err(sf, key, ErrorKind::Count, msg))?;
    if it.flows.len() as u64 + out.flows.len() as u64 > MAX_FLOWS {
        return Err(cx.err(
            sf,
            key,
            ErrorKind::Count,
            format!(
                "{} flows in one iteration: more than {MAX_FLOWS}",
                it.flows.len()
            ),
        ));
    }
    for f in &mut it.flows {
        f.start_ns = f.start_ns.saturating_add(run_start_ns);
    }
    out.notes.push(format!(
        "{}: one iteration, {} flows in {} collectives; the busiest rank computes {} ns after \
         its last blocking collective",
        w.file,
        it.flows.len(),
        it.collectives.len(),
        it.trailing_compute_ns
    ));
    out.flows.append(&mut it.flows);
    out.collectives.append(&mut it.collectives);
    it.report.start_ns = run_start_ns;
    out.simai_report = Some(it.report);
    Ok(())
}

/// `poisson`: Poisson arrivals from every host with a link, sizes from the CDF, appended to
/// `out` (`overrides.load` replaces the load).
fn poisson(
    cx: &Cx<'_>,
    ps: &Spanned<PoissonSec>,
    topology: &Topology,
    o: &Overrides,
    seed: u64,
    run_start_ns: u64,
    out: &mut Workload,
) -> Result<()> {
    let file = cx.file;
    let p = ps.get_ref();
    let load = o.load.unwrap_or(*p.load.get_ref());
    out.load = load;
    if !(load > 0.0 && load <= 1.0) {
        return Err(if o.load.is_some() {
            ScenarioError::file(OVERRIDES, "load", ErrorKind::Value, "must be in (0, 1]")
        } else {
            cx.err(
                &p.load,
                "workload.poisson.load",
                ErrorKind::Value,
                format!("host load must be in (0, 1], got {load}"),
            )
        });
    }
    let cdf = cx.read(&p.cdf, "workload.poisson.cdf", parse_cdf_file)?;
    let mut hosts = Vec::new();
    for h in topology.hosts() {
        match topology.first_link_rate_bps(h) {
            Some(r) => hosts.push((h, r)),
            None => out.notes.push(format!(
                "{file}: workload.poisson: host {h} has no link and sends no flows"
            )),
        }
    }
    let start_ns = p.start.map_or(run_start_ns, |t| t.0);
    let spec = PoissonSpec {
        hosts,
        load,
        start_ns,
        duration_ns: p.duration.0,
        pg: p.pg.unwrap_or(3),
        seed: p.seed.unwrap_or_else(|| derive_seed(seed, 1)),
    };
    if p.duration.0 == 0 {
        return Err(cx.err(
            ps,
            "workload.poisson.duration",
            ErrorKind::Value,
            "must be positive",
        ));
    }
    let expected: f64 = spec
        .hosts
        .iter()
        .map(|&(_, r)| {
            r as f64 * load * p.duration.0 as f64 * 1e-9 / (cdf.mean_bytes().max(1.0) * 8.0)
        })
        .sum();
    if expected > MAX_FLOWS as f64 {
        return Err(cx.err(
            ps,
            "workload.poisson",
            ErrorKind::Value,
            format!("would generate about {expected:.0} flows (limit {MAX_FLOWS}); shorten the duration"),
        ));
    }
    out.gen_end_ns = out.gen_end_ns.max(start_ns.saturating_add(p.duration.0));
    append(&mut out.flows, poisson_flows(&spec, &cdf));
    Ok(())
}

/// `[[workload.collective]]`: each collective's groups of ranks, placed on the hosts, appended
/// to `out` in order.
fn collectives(
    cx: &Cx<'_>,
    sections: &[Spanned<CollectiveSec>],
    topology: &Topology,
    seed: u64,
    run_start_ns: u64,
    out: &mut Workload,
) -> Result<()> {
    let mut group = 0u32;
    for (k, cs) in sections.iter().enumerate() {
        let c = cs.get_ref();
        let kind = CollectiveKind::from_name(c.kind.get_ref())
            .filter(|k| k.generated())
            .ok_or_else(|| {
                let known: Vec<&str> = CollectiveKind::ALL
                    .iter()
                    .filter(|k| k.generated())
                    .map(|k| k.name())
                    .collect();
                cx.err(
                    &c.kind,
                    "workload.collective.kind",
                    ErrorKind::Value,
                    format!(
                        "unknown kind `{}` (known: {}; allreduce-nvls comes only from a SimAI \
                         workload)",
                        c.kind.get_ref(),
                        known.join(", ")
                    ),
                )
            })?;
        let placement = match &c.placement {
            None => Placement::Consecutive,
            Some(p) => Placement::from_name(p.get_ref()).ok_or_else(|| {
                cx.err(
                    p,
                    "workload.collective.placement",
                    ErrorKind::Value,
                    format!(
                        "unknown placement `{}` (known: one-per-tor, consecutive)",
                        p.get_ref()
                    ),
                )
            })?,
        };
        if c.ranks < 2 {
            return Err(cx.err(
                cs,
                "workload.collective.ranks",
                ErrorKind::Value,
                "needs at least 2 ranks",
            ));
        }
        let groups = c.groups.unwrap_or(1);
        let n = u64::from(c.ranks);
        let per_group = match kind {
            CollectiveKind::AllreduceRing => (n - 1).saturating_mul(n).saturating_mul(2),
            CollectiveKind::AllgatherRing
            | CollectiveKind::ReducescatterRing
            | CollectiveKind::Alltoall
            | CollectiveKind::AlltoallPairwise => n.saturating_mul(n - 1),
            CollectiveKind::Permutation | CollectiveKind::Incast => n,
            CollectiveKind::AllreduceNvls => 0, // not generated: refused above
        };
        if per_group
            .saturating_mul(u64::from(groups))
            .saturating_add(out.flows.len() as u64)
            > MAX_FLOWS
        {
            return Err(cx.err(
                cs,
                "workload.collective",
                ErrorKind::Value,
                format!("{groups} groups of {n} ranks exceed the limit of {MAX_FLOWS} flows"),
            ));
        }
        let placed = place_ranks(topology, placement, groups, c.ranks)
            .map_err(|m| cx.err(cs, "workload.collective", ErrorKind::Value, m))?;
        let start_ns = c.start.map_or(run_start_ns, |t| t.0);
        let in_order = match &c.in_order {
            Some(v) if *v.get_ref() && !kind.is_ring() => {
                return Err(cx.err(
                    v,
                    "workload.collective.in_order",
                    ErrorKind::Value,
                    format!("only for the ring kinds, not {}", kind.name()),
                ));
            }
            Some(v) => *v.get_ref(),
            None => false,
        };
        for (g, ranks) in placed.into_iter().enumerate() {
            let spec = CollectiveSpec {
                kind,
                ranks,
                size_bytes: c.size.0,
                start_ns,
                pg: c.pg.unwrap_or(3),
                seed: c.seed.map_or_else(
                    || derive_seed(seed, 100 + k as u64),
                    |s| derive_seed(s, g as u64),
                ),
                in_order,
            };
            let first = u32::try_from(out.flows.len()).unwrap_or(u32::MAX);
            if let Some((fl, coll)) = expand_collective(&spec, group, first) {
                out.flows.extend(fl);
                out.collectives.push(coll);
                group = group.saturating_add(1);
            }
        }
    }
    Ok(())
}

/// Appends `more`, renumbering its ids (and `after` lists) after the existing flows.
fn append(flows: &mut Vec<crate::model::Flow>, more: Vec<crate::model::Flow>) {
    let base = u32::try_from(flows.len()).unwrap_or(u32::MAX);
    for mut f in more {
        f.id = f.id.saturating_add(base);
        for a in &mut f.after {
            *a = a.saturating_add(base);
        }
        flows.push(f);
    }
}
