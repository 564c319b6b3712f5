//! One training iteration of a SimAI workload as flows with dependencies (issue 39: "flow-level
//! dependencies between phases, compute gaps from the file").
//!
//! Every rank runs SimAI's loop for `HYBRID_TRANSFORMER_FWD_IN_BCKWD` workloads
//! (`Workload::iterate_hybrid_parallel_Transformer_fwd_in_bckwd`, SimAI NSDI '25) once:
//! * forward, layers first to last: compute the layer's forward time, then its forward
//!   collective, *blocking* (the next compute waits for it); a forward collective of 1-4095 bytes
//!   is sent as 4,096 (SimAI's minimum);
//! * backward, layers last to first: compute the input-gradient time, the input-gradient
//!   collective (blocking), then the weight-gradient time and the weight-gradient collective,
//!   *non-blocking* (the rank goes on to the next layer; only the next iteration's forward pass
//!   would wait for it).
//!
//! A collective runs in every group of its kind ([`super::groups`]) as SimAI's NCCL model
//! decomposes it ([`super::nccl`]), each transfer between the hosts [`SimAiFabric::endpoints`]
//! picks. A rank's readiness is "the flows of its last blocking collective completed, then its
//! compute since": its flows in the next collective wait for that ([`Flow::compute_after`],
//! [`Flow::compute_ns`]; before its first collective, `start_ns` holds the compute) besides
//! their own ring predecessor ([`Flow::after`]). A blocking collective is done for a rank when
//! its last-step flows from and to it are completed (every flow for all-to-all), plus the
//! layer's update time (the last field of its line; SimAI adds it to every collective's end).
//!
//! Every flow starts a send latency after what it waits for (SimAI's `AS_SEND_LAT`, applied to
//! each flow it hands to ns-3): [`SIMAI_SEND_LATENCY_NS`] by default, SimAI's value when the
//! variable is unset, 6,000 x 1,000 ns = 6 ms (its docs mean 6 us; the code scales the default
//! by 1,000 into ns-3's ns), plus [`SIMAI_START_DELAY_NS`], plus SimAI's reduction time for a
//! send it marks (`nccl::SIMAI_REDUCE_DELAY_NS`, [`NcclFlow::reduced`]). What a flow waits for
//! counts when it
//! *completes* at its sender ([`Flow::after_completion`]), as SimAI's next ring step follows a
//! flow's completion. With these, a ring step of SimAI's micro example takes 6 ms + the flow's
//! FCT, and its 16 MiB AllReduce 84 ms, as SimAI's own run (`data/simai/reference/`). After a
//! blocking collective's update time the rank's next compute starts [`SIMAI_PHASE_WAIT_NS`]
//! later, as SimAI's loop schedules it; so does it after a phase without a blocking
//! collective (none, one SimAI's reader skips such as `BROADCAST`, or a weight-gradient one,
//! which does not block), once the phase's compute is done, but for the pass's last phase.
//!
//! Deviations from SimAI: one iteration (its first pass); SimAI's per-rank stream scheduling
//! (collectives of a rank queued one behind the other per dimension) is not modelled:
//! collectives that overlap (a non-blocking one and what follows) share the network; a flow
//! counts as done when it completes at its sender; the fwd-in-backward recomputation of
//! checkpointed layers is not run (AICB's files have no checkpoints); pipeline traffic is not simulated (as in SimAI's ns-3 backend).

use std::collections::HashMap;

use super::fabric::SimAiFabric;
use super::groups::{Group, Groups};
use super::nccl::{self, NcclFlow, NcclOptions};
use super::nvls;
use super::report::{EndToEndPlan, LayerReport, PhaseReport, ReportSizes, REPORTED_RANK};
use super::workload::{CommGroup, CommKind, Phase, PhaseKind, Workload, SIMAI_PHASE_WAIT_NS};
use crate::model::{Collective, CollectiveKind, Flow};

/// SimAI's smallest forward collective, bytes.
pub const MIN_FORWARD_BYTES: u64 = 4096;

/// SimAI's per-flow send latency when `AS_SEND_LAT` is unset, ns (module docs).
pub const SIMAI_SEND_LATENCY_NS: u64 = 6_000_000;

/// What SimAI's flows wait beyond the send latency, ns: in its runs a collective's first flows
/// start 10 ns after issue + latency (`data/simai/reference/`, both cases, both latencies).
pub const SIMAI_START_DELAY_NS: u64 = 10;

/// Which layer phase a collective of the iteration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectiveLabel {
    /// Layer index (file order).
    pub layer: usize,
    /// The phase.
    pub phase: PhaseKind,
    /// The group kind.
    pub group: CommGroup,
    /// The collective.
    pub kind: CommKind,
    /// Bytes per rank, as sent.
    pub bytes: u64,
}

/// The expanded iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Iteration {
    /// Flows, ids from `first_id`, every dependency earlier.
    pub flows: Vec<Flow>,
    /// One record per collective and group, group numbers from `first_group`.
    pub collectives: Vec<Collective>,
    /// Where each record came from (same order as `collectives`).
    pub labels: Vec<CollectiveLabel>,
    /// Compute of the busiest rank after its last collective was issued, ns: what the iteration
    /// takes beyond its last flow at most.
    pub trailing_compute_ns: u64,
    /// What SimAI's per-layer report needs (`super::report`; `start_ns` 0: the caller sets the
    /// run's start).
    pub report: EndToEndPlan,
}

/// A rank's readiness: the flows it waits for, then its compute since.
#[derive(Debug, Clone, Default)]
struct Ready {
    deps: Vec<u32>,
    compute_ns: u64,
}

/// How an iteration is expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Priority group of the flows.
    pub pg: u32,
    /// Each flow's send latency, ns (SimAI's `AS_SEND_LAT`).
    pub send_latency_ns: u64,
    /// Id of the first flow.
    pub first_id: u32,
    /// Number of the first collective record.
    pub first_group: u32,
    /// SimAI's optional NCCL behaviours (`[workload] simai_pxn`).
    pub nccl: NcclOptions,
}

/// Expands one iteration of `w` on `fabric` with `groups`.
///
/// # Errors
/// A flow count or id beyond `u32`.
pub fn expand(
    w: &Workload,
    fabric: &SimAiFabric,
    groups: &Groups,
    o: Options,
) -> Result<Iteration, String> {
    let mut it = Iteration {
        flows: Vec::new(),
        collectives: Vec::new(),
        labels: Vec::new(),
        trailing_compute_ns: 0,
        report: report_plan(w, groups),
    };
    let mut ready = vec![Ready::default(); groups.sizes.world as usize];
    let mut cx = Cx {
        fabric,
        groups,
        o,
        it: &mut it,
        ready: &mut ready,
    };
    let order = (0..w.layers.len()).map(|i| (i, PhaseKind::Forward)).chain(
        (0..w.layers.len())
            .rev()
            .flat_map(|i| [(i, PhaseKind::InputGrad), (i, PhaseKind::WeightGrad)]),
    );
    for (i, kind) in order {
        let Some(layer) = w.layers.get(i) else {
            continue;
        };
        let phase = layer.phase(kind);
        for r in cx.ready.iter_mut() {
            r.compute_ns = r.compute_ns.saturating_add(phase.compute_ns);
        }
        if let Some(c) = phase.comm {
            let bytes = issued_bytes(kind, c.bytes);
            let label = CollectiveLabel {
                layer: i,
                phase: kind,
                group: c.group,
                kind: c.kind,
                bytes,
            };
            cx.issue(&label, kind != PhaseKind::WeightGrad, layer.update_ns)?;
        }
        // SimAI's loop steps one tick to the next phase whatever the phase held: after a
        // blocking collective's end and update time (as `issue` leaves the rank), else as soon
        // as the phase's compute is done and its collective (non-blocking, or none) issued.
        // The last phase ends the pass (SimAI's "pass finished" time is before that tick).
        if (i, kind) == (0, PhaseKind::WeightGrad) {
            continue;
        }
        for r in cx.ready.iter_mut() {
            r.compute_ns = r.compute_ns.saturating_add(SIMAI_PHASE_WAIT_NS);
        }
    }
    it.trailing_compute_ns = ready.iter().map(|r| r.compute_ns).max().unwrap_or(0);
    Ok(it)
}

/// The bytes SimAI issues for a collective of `bytes` in phase `kind`.
fn issued_bytes(kind: PhaseKind, bytes: u64) -> u64 {
    if kind == PhaseKind::Forward && bytes > 0 {
        bytes.max(MIN_FORWARD_BYTES)
    } else {
        bytes
    }
}

/// The report's plan before any flow exists: names, compute, collectives as issued, the
/// header values SimAI's report reads (`super::report`: substitutes for absent ones).
fn report_plan(w: &Workload, groups: &Groups) -> EndToEndPlan {
    let h = &w.header;
    let phase = |p: &Phase, kind: PhaseKind| PhaseReport {
        compute_ns: p.compute_ns,
        comm: p.comm.map(|mut c| {
            c.bytes = issued_bytes(kind, c.bytes);
            c
        }),
        done_flows: Vec::new(),
    };
    EndToEndPlan {
        start_ns: 0,
        sizes: ReportSizes {
            tp: groups.sizes.tp,
            pp: h.pp.unwrap_or(1),
            ep: h.ep.unwrap_or(1),
            all_gpus: h.all_gpus.unwrap_or(groups.sizes.world),
            vpp: h.vpp.unwrap_or(1),
            ga: h.ga.unwrap_or(1),
        },
        layers: w
            .layers
            .iter()
            .map(|l| LayerReport {
                name: l.name.clone(),
                update_ns: l.update_ns,
                fwd: phase(&l.forward, PhaseKind::Forward),
                ig: phase(&l.input_grad, PhaseKind::InputGrad),
                wg: phase(&l.weight_grad, PhaseKind::WeightGrad),
            })
            .collect(),
    }
}

/// The expansion's state.
struct Cx<'a> {
    fabric: &'a SimAiFabric,
    groups: &'a Groups,
    o: Options,
    it: &'a mut Iteration,
    ready: &'a mut Vec<Ready>,
}

impl Cx<'_> {
    /// Issues `label`'s collective in every group of its kind; a blocking one makes each rank
    /// wait for its last-step flows, then `update_ns` (the layer's update time).
    fn issue(
        &mut self,
        label: &CollectiveLabel,
        blocking: bool,
        update_ns: u64,
    ) -> Result<(), String> {
        let ring_kind = match label.kind {
            CommKind::AllReduce => CollectiveKind::AllreduceRing,
            CommKind::AllGather => CollectiveKind::AllgatherRing,
            CommKind::ReduceScatter => CollectiveKind::ReducescatterRing,
            CommKind::AllToAll => CollectiveKind::Alltoall,
            CommKind::Broadcast => return Ok(()),
        };
        let mut done: Vec<(u32, Vec<u32>)> = Vec::new();
        for group in self.groups.of_kind(label.group) {
            let (flows, nvls) = self.decompose(label, group)?;
            let kind = if nvls {
                CollectiveKind::AllreduceNvls
            } else {
                ring_kind
            };
            if flows.is_empty() {
                continue;
            }
            let base = self.next_id()?;
            let mut ids = Vec::with_capacity(flows.len());
            for f in &flows {
                let id = self.push(f, base)?;
                ids.push(id);
            }
            let group_no = self
                .o
                .first_group
                .checked_add(u32::try_from(self.it.collectives.len()).map_err(|_| too_many())?)
                .ok_or_else(too_many)?;
            self.it.collectives.push(Collective {
                group: group_no,
                kind,
                flow_ids: ids.clone(),
            });
            self.it.labels.push(label.clone());
            // Each rank's last-step flows, from and to it, in one pass over the flows.
            let last = flows.iter().map(|f| f.step).max().unwrap_or(0);
            let mut deps: HashMap<u32, Vec<u32>> =
                group.ranks.iter().map(|&r| (r, Vec::new())).collect();
            for (f, &id) in flows.iter().zip(&ids).filter(|(f, _)| f.step == last) {
                for end in [f.src, f.dst] {
                    if let Some(d) = deps.get_mut(&end) {
                        d.push(id);
                    }
                }
            }
            if let (Some(d), Some(layer)) = (
                deps.get(&REPORTED_RANK),
                self.it.report.layers.get_mut(label.layer),
            ) {
                layer.phase_mut(label.phase).done_flows.clone_from(d);
            }
            if blocking {
                done.extend(deps);
            }
        }
        for (r, deps) in done {
            if let Some(slot) = self.ready.get_mut(r as usize) {
                *slot = Ready {
                    deps,
                    compute_ns: update_ns,
                };
            }
        }
        Ok(())
    }

    /// `label`'s collective in `group` as SimAI's NCCL model decomposes it: NVLS where SimAI
    /// picks it ([`nvls::applies`]), else rings; and whether it is NVLS.
    fn decompose(
        &self,
        label: &CollectiveLabel,
        group: &Group,
    ) -> Result<(Vec<NcclFlow>, bool), String> {
        let nvls = self.o.nccl.nvls
            && nvls::applies(
                label.kind,
                label.group,
                group.ranks.len(),
                self.fabric.gpu_type,
            );
        if !nvls {
            let flows = nccl::decompose_with(label.kind, group, label.bytes, self.o.nccl);
            return Ok((flows, false));
        }
        if let Some(why) = nvls::check(group, label.bytes) {
            return Err(format!("layer {}: {why}", label.layer));
        }
        let server = group.servers.first().copied().unwrap_or(0);
        let nvswitch = self.fabric.nvswitch_of(server).ok_or_else(|| {
            format!(
                "layer {}: an NVLS all-reduce in server {server}, which has no NVSwitch",
                label.layer
            )
        })?;
        Ok((nvls::decompose(group, label.bytes, nvswitch), true))
    }

    /// The id of the next flow.
    fn next_id(&self) -> Result<u32, String> {
        u32::try_from(self.it.flows.len())
            .ok()
            .and_then(|n| self.o.first_id.checked_add(n))
            .ok_or_else(too_many)
    }

    /// Pushes the flow of `f`, whose collective's first flow has id `base`; \return its id.
    fn push(&mut self, f: &NcclFlow, base: u32) -> Result<u32, String> {
        let id = self.next_id()?;
        let (src, dst) = self.fabric.endpoints(f.src, f.dst);
        let in_collective = |j: usize| {
            u32::try_from(j)
                .ok()
                .and_then(|j| base.checked_add(j))
                .ok_or_else(too_many)
        };
        let after = f
            .after
            .iter()
            .map(|&j| in_collective(j))
            .collect::<Result<Vec<u32>, String>>()?;
        let after_sent = f
            .after_sent
            .map(in_collective)
            .transpose()?
            .into_iter()
            .collect();
        let after_ready = f
            .after_ready
            .map(in_collective)
            .transpose()?
            .into_iter()
            .collect();
        let reduce = if f.reduced {
            nccl::SIMAI_REDUCE_DELAY_NS
        } else {
            0
        };
        let latency = self
            .o
            .send_latency_ns
            .saturating_add(SIMAI_START_DELAY_NS)
            .saturating_add(reduce);
        let (start_ns, compute_after, compute_ns) = match self.ready.get(f.src as usize) {
            // Not a rank (an NVSwitch): only its flow's own dependencies.
            None => (0, Vec::new(), 0),
            // Before its first blocking collective a rank's compute is an absolute start time.
            Some(r) if r.deps.is_empty() => (r.compute_ns.saturating_add(latency), Vec::new(), 0),
            Some(r) => (0, r.deps.clone(), r.compute_ns),
        };
        self.it.flows.push(Flow {
            id,
            src,
            dst,
            pg: self.o.pg,
            size_bytes: f.bytes.max(1),
            start_ns,
            after,
            compute_after,
            compute_ns,
            latency_ns: latency,
            after_completion: true,
            after_sent,
            after_ready,
            send_latency_ns: self.o.send_latency_ns,
        });
        Ok(id)
    }
}

fn too_many() -> String {
    "the iteration has more flows or collectives than ids (2^32)".to_owned()
}

#[cfg(test)]
mod tests;
