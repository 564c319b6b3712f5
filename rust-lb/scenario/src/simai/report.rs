//! SimAI's per-layer result file, `ncclFlowModel_EndToEnd.csv`, written from one iteration of
//! ours (issue 39: "per-layer breakdown in the shape SimAI's output CSVs use, so its users can
//! diff them").
//!
//! SimAI's packet-level simulator (SimAI, NSDI '25; `Workload::report` and `Layer::report` in
//! `astra-sim/workload/`, the variant its ns-3 build compiles) writes, for rank 0, at the end of
//! the run, into `ncclFlowModel_EndToEnd.csv` (its result prefix `./ncclFlowModel_` + `EndToEnd.csv`):
//!
//! ```text
//! File name, Expose DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, Expose_PP_comm, bubble time, total comp, total exposed comm, Total time
//! test1, 0 (0.00%), 0 (0.00%), 168411 (99.34%), 0 (0.00%), 0 (0.00%), 0 (0.00%), 1112 (0.66%), 168411 (99.34%), 169523
//! layer_name,test1,fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed comm,ig exposed comm,fwd total comm,algbw,busbw,wg total comm,algbw,busbw,ig total comm,algbw,busbw,workload finished at
//! embedding_layer,test1,556.000000,0.001000,...,169522.549000
//! SUM,test1,<column sums>,NONE,NONE,...
//! total exposed comm,<end - total comp>,total comp,<sum of compute>,total time,<their sum>
//! ```
//!
//! The columns, all times in **µs** (ns / 1000 as a double, printed `%f`: 6 decimals), in the
//! order of the file; `test1` is the run name SimAI's ns-3 main passes (kept, so that a diff
//! shows only numbers):
//! * `fwd compute`, `wg compute`, `ig compute`: the layer's compute times from the workload
//!   file (after `simai_compute_scale`), identical to SimAI's;
//! * `fwd exposed comm`, `ig exposed comm`: the time rank 0 waited for the layer's forward /
//!   input-gradient collective: both are blocking, so the collective's whole time;
//! * `wg exposed comm`: weight-gradient collectives do not block; SimAI counts a wait only for
//!   layer 0's (the last issued), from 1 ns after rank 0's loop ended (SimAI's next event) to the
//!   collective's end; every other layer's is 0 (a SimAI quirk, reproduced: its wait is only
//!   registered by the next iteration's forward pass, which a one-iteration run never reaches);
//! * `fwd total comm`, `wg total comm`, `ig total comm`: from rank 0 issuing the collective to
//!   its end for rank 0 (its last-step flows from and to rank 0 completed at their senders, the
//!   rule the iteration itself uses, `super::iteration`) plus the layer's update time;
//! * each `algbw`: bytes / total comm in GiB/s (bytes as issued: a forward size of 1-4095 B
//!   counts as 4,096, as SimAI rewrites it); each `busbw`: algbw x 2 (n - 1) / n for
//!   all-reduce, x (n - 1) / n for all-gather, reduce-scatter, all-to-all, 0 for no
//!   collective; n = TP (EP for an `_EP` forward / input-gradient collective), DP = all GPUs /
//!   (TP x PP) for a weight-gradient one (DP / EP for `_DP_EP`), from the workload header as
//!   SimAI's report reads it. Both are `float`s in SimAI (printed `%f`); computed here in the
//!   same precision and order, so with equal times the digits are equal. A phase without a
//!   collective has 0 total, so algbw = bytes / 0: `-nan` for 0 bytes (x86's NaN, as glibc
//!   prints it), `inf` otherwise;
//! * `workload finished at`: when rank 0 finished: the later of 1 ns after its loop and its
//!   last collective's end (with update time);
//! * `SUM`: column sums (bandwidths `NONE`); `total comp`: the sum of every compute time;
//!   `total exposed comm` = finished − total comp; `total time` = their sum;
//! * the summary (SimAI writes it last, at the top of the file; integers, `%.0f`, and shares of
//!   the total time, `%.2f`): `Expose DP comm` / `Expose DP_EP comm`: the weight-gradient
//!   waits by group; `Expose TP comm` / `Expose_EP_comm`: forward + input-gradient waits, by
//!   the *forward* collective's group (SimAI's rule); `Expose_PP_comm`: 0 (SimAI's formula
//!   multiplies by 1 - `pp_overlap_ratio`, 1 by default and not settable in its ns-3 main);
//!   `bubble time`: the forward and input-gradient waits plus the three compute times of every
//!   layer not named `embedding_layer`, x (PP - 1) / (GA x VPP) (SimAI's estimate; 0 for
//!   PP = 1); then total comp, total exposed comm, total time.
//!
//! Values filled differently from SimAI (all from our simulation, by construction):
//! * the times are ours: rank 0's collectives end when our flows do; SimAI's loop waits 1 ns
//!   after each blocking collective (its `register_event(..., 1)`), which the iteration models
//!   (`super::workload::SIMAI_PHASE_WAIT_NS`) and the report follows;
//! * header values SimAI leaves uninitialised when the file omits them (AICB's older files
//!   give only TP): `all_gpus` is the topology's GPU count, `pp`, `ep`, `vpp` and `ga` are 1;
//! * a collective whose group has one rank sends nothing here (0 comm time, SimAI's "all dims
//!   disabled"); a `NONE` phase counts 0 bytes whatever size its line gives (`-nan` algbw).
//!
//! Written only when every collective of rank 0 completed (SimAI writes it only at the end of
//! a run); otherwise the error names the first one that did not.

use std::fmt::Write as _;

use super::workload::{Comm, CommGroup, CommKind, PhaseKind, SIMAI_PHASE_WAIT_NS};

/// The file's name (SimAI's result prefix `ncclFlowModel_` + `EndToEnd.csv`).
pub const END_TO_END_CSV: &str = "ncclFlowModel_EndToEnd.csv";

/// The run name SimAI's ns-3 main passes (its second column).
pub const RUN_NAME: &str = "test1";

/// The rank SimAI reports (its `generator->id == 0`).
pub const REPORTED_RANK: u32 = 0;

/// The layer name SimAI leaves out of the pipeline-bubble estimate.
const EMBEDDING_LAYER: &str = "embedding_layer";

/// One phase of a layer as the report needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseReport {
    /// Compute time, ns.
    pub compute_ns: u64,
    /// The collective as issued (forward sizes of 1-4095 B raised to 4,096); `None` for `NONE`.
    pub comm: Option<Comm>,
    /// The reported rank's flows whose completion ends the collective for it (empty: nothing
    /// sent).
    pub done_flows: Vec<u32>,
}

impl PhaseReport {
    /// The collective SimAI's report sees: `BROADCAST` is no collective to it.
    fn sending(&self) -> Option<Comm> {
        self.comm.filter(|c| c.kind.simai_sends())
    }
}

/// One layer line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerReport {
    /// Name, as in the file.
    pub name: String,
    /// Delay after each collective, ns.
    pub update_ns: u64,
    /// Forward.
    pub fwd: PhaseReport,
    /// Input gradient.
    pub ig: PhaseReport,
    /// Weight gradient.
    pub wg: PhaseReport,
}

impl LayerReport {
    /// The phase of `kind`.
    #[must_use]
    pub fn phase(&self, kind: PhaseKind) -> &PhaseReport {
        match kind {
            PhaseKind::Forward => &self.fwd,
            PhaseKind::InputGrad => &self.ig,
            PhaseKind::WeightGrad => &self.wg,
        }
    }

    /// The phase of `kind`, mutably.
    pub fn phase_mut(&mut self, kind: PhaseKind) -> &mut PhaseReport {
        match kind {
            PhaseKind::Forward => &mut self.fwd,
            PhaseKind::InputGrad => &mut self.ig,
            PhaseKind::WeightGrad => &mut self.wg,
        }
    }
}

/// The header values SimAI's report reads (module docs: substitutes for absent ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportSizes {
    /// `model_parallel_NPU_group:`.
    pub tp: u32,
    /// `pp:` (1 if absent).
    pub pp: u32,
    /// `ep:` (1 if absent).
    pub ep: u32,
    /// `all_gpus:` (the topology's GPUs if absent).
    pub all_gpus: u32,
    /// `vpp:` (1 if absent).
    pub vpp: u32,
    /// `ga:` (1 if absent).
    pub ga: u32,
}

/// What the report of one iteration needs besides the flows' completion times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndToEndPlan {
    /// When the iteration starts, ns (the run's start).
    pub start_ns: u64,
    /// Header values.
    pub sizes: ReportSizes,
    /// The layers, in file order.
    pub layers: Vec<LayerReport>,
}

/// Per-layer results, ns: (compute, exposed, total) for fwd, wg, ig (the file's order).
#[derive(Debug, Clone, Copy, Default)]
struct LayerTimes {
    compute: [u64; 3],
    exposed: [u64; 3],
    total: [u64; 3],
}

/// Column order of the three phases.
const COLUMNS: [PhaseKind; 3] = [
    PhaseKind::Forward,
    PhaseKind::WeightGrad,
    PhaseKind::InputGrad,
];

fn column(kind: PhaseKind) -> usize {
    match kind {
        PhaseKind::Forward => 0,
        PhaseKind::WeightGrad => 1,
        PhaseKind::InputGrad => 2,
    }
}

/// Ticks (ns) as SimAI's µs (`Tick / FREQ`, FREQ = 1000.0).
#[allow(
    clippy::cast_precision_loss,
    reason = "SimAI converts its u64 ticks to double the same way"
)]
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// C's `%f` (`std::to_string(double)`): 6 decimals; NaN as glibc prints x86's default NaN.
fn f6(v: f64) -> String {
    if v.is_nan() {
        "-nan".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        format!("{v:.6}")
    }
}

/// SimAI's `format_value`: `%.0f`, or `NaN or Inf`.
fn f0(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.0}")
    } else {
        "NaN or Inf".to_owned()
    }
}

/// SimAI's `format_percentage`: `%.2f` of the share of `total`, then `%`.
fn pct(v: f64, total: f64) -> String {
    let p = v / total * 100.0;
    if p.is_nan() {
        "-nan%".to_owned()
    } else {
        format!("{p:.2}%")
    }
}

/// SimAI's `Layer::compute_busbw`: (algbw, busbw) in GiB/s, as `float`s, in its order of
/// operations.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    reason = "SimAI's float arithmetic, reproduced"
)]
fn busbw(comm: Option<Comm>, nranks: i64, bytes: u64, total_ns: u64) -> (f32, f32) {
    let algbw =
        (bytes as f64 / (total_ns as f64 / 1000.0) * 1_000_000.0 * 1.0 / 1_073_741_824.0) as f32;
    let n = nranks as f64;
    let busbw = match comm.map(|c| c.kind) {
        Some(CommKind::AllReduce) => ((algbw * 2.0 * (nranks - 1) as f32) as f64 / n) as f32,
        Some(CommKind::AllGather | CommKind::ReduceScatter | CommKind::AllToAll) => {
            ((algbw * (nranks - 1) as f32) as f64 / n) as f32
        }
        Some(CommKind::Broadcast) | None => 0.0,
    };
    (algbw, busbw)
}

impl EndToEndPlan {
    /// Rank 0's timeline and the file's text; `flow_end_ns(id)` is flow `id`'s completion at
    /// its sender, `None` if it did not complete.
    ///
    /// # Errors
    /// A collective of rank 0 that did not complete (one line naming the layer, the phase and
    /// the flow).
    pub fn csv(&self, flow_end_ns: &dyn Fn(u32) -> Option<u64>) -> Result<String, String> {
        let mut times = vec![LayerTimes::default(); self.layers.len()];
        let mut t = self.start_ns;
        let mut last_end = t;
        let order = (0..self.layers.len())
            .map(|i| (i, PhaseKind::Forward))
            .chain(
                (0..self.layers.len())
                    .rev()
                    .flat_map(|i| [(i, PhaseKind::InputGrad), (i, PhaseKind::WeightGrad)]),
            );
        for (i, kind) in order {
            let (Some(layer), Some(out)) = (self.layers.get(i), times.get_mut(i)) else {
                continue;
            };
            let p = layer.phase(kind);
            let k = column(kind);
            if let Some(c) = out.compute.get_mut(k) {
                *c = p.compute_ns;
            }
            t = t.saturating_add(p.compute_ns);
            let mut end: Option<u64> = None;
            for &id in &p.done_flows {
                let e = flow_end_ns(id).ok_or_else(|| {
                    format!(
                        "{END_TO_END_CSV} not written: rank {REPORTED_RANK}'s {kind} collective of \
                         layer {i} ({}) did not complete (flow {id})",
                        layer.name
                    )
                })?;
                end = Some(end.map_or(e, |x| x.max(e)));
            }
            let Some(end) = end else { continue };
            let end = end.saturating_add(layer.update_ns);
            let total = end.saturating_sub(t);
            if let Some(x) = out.total.get_mut(k) {
                *x = total;
            }
            last_end = last_end.max(end);
            if kind != PhaseKind::WeightGrad {
                if let Some(x) = out.exposed.get_mut(k) {
                    *x = total;
                }
                // The rank's loop goes on 1 ns after the collective's end.
                t = end.saturating_add(SIMAI_PHASE_WAIT_NS);
            }
        }
        // SimAI's loop ends 1 ns after its last phase; only layer 0's weight-gradient wait is
        // counted (module docs).
        let loop_end = t.saturating_add(1);
        if let Some(out) = times.first_mut() {
            // Layer 0's weight-gradient collective is the last one issued, at `t`.
            let wg_end = t.saturating_add(out.total[1]);
            if out.total[1] > 0 {
                out.exposed[1] = wg_end.saturating_sub(loop_end);
            }
        }
        let finished = loop_end.max(last_end).saturating_sub(self.start_ns);
        Ok(self.format(&times, finished))
    }

    /// The group size SimAI's report uses for `p` in column `k`.
    fn nranks(&self, p: &PhaseReport, kind: PhaseKind) -> i64 {
        let s = self.sizes;
        let group = p.sending().map(|c| c.group);
        if kind == PhaseKind::WeightGrad {
            let dp = i64::from(s.all_gpus) / (i64::from(s.tp) * i64::from(s.pp)).max(1);
            if group == Some(CommGroup::DpEp) {
                dp / i64::from(s.ep).max(1)
            } else {
                dp
            }
        } else if group == Some(CommGroup::Ep) {
            i64::from(s.ep)
        } else {
            i64::from(s.tp)
        }
    }

    fn format(&self, times: &[LayerTimes], finished_ns: u64) -> String {
        let header = format!(
            "layer_name,{RUN_NAME},fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed \
             comm,ig exposed comm,fwd total comm,algbw,busbw,wg total comm,algbw,busbw,ig total \
             comm,algbw,busbw,workload finished at"
        );
        let mut body = header;
        body.push('\n');
        let mut total_compute = 0.0_f64;
        let mut sums = [[0.0_f64; 3]; 3]; // [phase column][compute, exposed, total]
        let (mut dp, mut dp_ep, mut tp, mut ep, mut pre_bubble) = (0.0, 0.0, 0.0, 0.0, 0.0);
        let finished = us(finished_ns);
        for (layer, x) in self.layers.iter().zip(times) {
            let exposed = |k: usize| us(x.exposed.get(k).copied().unwrap_or(0));
            let compute = |k: usize| us(x.compute.get(k).copied().unwrap_or(0));
            if layer.name != EMBEDDING_LAYER {
                pre_bubble += us(x.exposed[0]
                    .saturating_add(x.compute[0])
                    .saturating_add(x.compute[1])
                    .saturating_add(x.compute[2])
                    .saturating_add(x.exposed[2]));
            }
            if layer.wg.sending().map(|c| c.group) == Some(CommGroup::DpEp) {
                dp_ep += exposed(1);
            } else {
                dp += exposed(1);
            }
            if layer.fwd.sending().map(|c| c.group) == Some(CommGroup::Ep) {
                ep += exposed(0) + exposed(2);
            } else {
                tp += exposed(0) + exposed(2);
            }
            for k in 0..3 {
                total_compute += compute(k);
            }
            let _ = write!(body, "{},{RUN_NAME}", layer.name);
            for k in 0..3 {
                let _ = write!(body, ",{}", f6(compute(k)));
            }
            for k in 0..3 {
                let _ = write!(body, ",{}", f6(exposed(k)));
            }
            for (k, &kind) in COLUMNS.iter().enumerate() {
                let p = layer.phase(kind);
                let total_ns = x.total.get(k).copied().unwrap_or(0);
                let bytes = p.comm.map_or(0, |c| c.bytes);
                let (alg, bus) = busbw(p.sending(), self.nranks(p, kind), bytes, total_ns);
                let _ = write!(
                    body,
                    ",{},{},{}",
                    f6(us(total_ns)),
                    f6(f64::from(alg)),
                    f6(f64::from(bus))
                );
            }
            let _ = writeln!(body, ",{}", f6(finished));
            for (k, s) in sums.iter_mut().enumerate() {
                s[0] += compute(k);
                s[1] += exposed(k);
                s[2] += us(x.total.get(k).copied().unwrap_or(0));
            }
        }
        let _ = writeln!(
            body,
            "SUM,{RUN_NAME},{},{},{},{},{},{},{},NONE,NONE,{},NONE,NONE,{},NONE,NONE",
            f6(sums[0][0]),
            f6(sums[1][0]),
            f6(sums[2][0]),
            f6(sums[0][1]),
            f6(sums[1][1]),
            f6(sums[2][1]),
            f6(sums[0][2]),
            f6(sums[1][2]),
            f6(sums[2][2]),
        );
        let total_exposed = finished - total_compute;
        let total_time = total_compute + total_exposed;
        let _ = writeln!(
            body,
            "total exposed comm,{},total comp,{},total time,{}",
            f6(total_exposed),
            f6(total_compute),
            f6(total_time)
        );
        let s = self.sizes;
        let bubble =
            pre_bubble * f64::from(s.pp.saturating_sub(1)) / (f64::from(s.ga) * f64::from(s.vpp));
        let pp_comm = 0.0;
        let cell = |v: f64| format!("{} ({})", f0(v), pct(v, total_time));
        format!(
            "File name, Expose DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, \
             Expose_PP_comm, bubble time, total comp, total exposed comm, Total time\n\
             {RUN_NAME}, {}, {}, {}, {}, {}, {}, {}, {}, {}\n{body}",
            cell(dp),
            cell(dp_ep),
            cell(tp),
            cell(ep),
            cell(pp_comm),
            cell(bubble),
            cell(total_compute),
            cell(total_exposed),
            f0(total_time)
        )
    }
}

#[cfg(test)]
mod tests;
