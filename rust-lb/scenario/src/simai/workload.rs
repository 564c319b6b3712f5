//! SimAI workload files (`SimAI_simulator -w`; written by AICB), as SimAI's
//! `Workload::initialize_workload` (`astra-sim/workload/Workload.cc`, SimAI NSDI '25, commit
//! `cef83f9d`) reads them.
//!
//! ```text
//! <POLICY> [key: value ...]                 header, e.g. HYBRID_TRANSFORMER_FWD_IN_BCKWD
//!                                           model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 8 ga: 1
//!                                           all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0
//! <layer count>
//! <name> <reserved> <fwd compute> <fwd comm type> <fwd bytes> <ig compute> <ig comm type>
//!        <ig bytes> <wg compute> <wg comm type> <wg bytes> <update time> [<policy>]
//! ```
//! * Policy: one of [`Policy`]. The `key: value` pairs SimAI reads: `model_parallel_NPU_group:`
//!   (TP), `ep:`, `pp:`, `vpp:`, `ga:`, `all_gpus:` (only for the two `HYBRID_TRANSFORMER`
//!   policies), `checkpoints: n id…` and `checkpoint_initiates: n id…` (only for
//!   `HYBRID_TRANSFORMER_FWD_IN_BCKWD`), `DLRM_LAST_BOTTOM_LAYER:` (DLRM policies) and
//!   `pp_comm` / `pp_comm:` (any policy; bytes). Other tokens are ignored by SimAI; they are kept
//!   in [`WorkloadHeader::ignored`]. Absent values are `None` (SimAI leaves them uninitialised).
//! * Times are simulator ticks = **ns** (SimAI's `CLOCK_PERIOD` is 1 and its ns-3 frontend
//!   schedules ticks as nanoseconds); sizes are **bytes**. The update time is a delay added after
//!   each of the layer's three communications completes.
//! * Comm type: `NONE`, or a [`CommKind`] token optionally followed by `_EP` or `_DP_EP` (the
//!   [`CommGroup`]); without a suffix the group is TP for the forward and input-gradient phases
//!   and DP for the weight-gradient phase.
//! * The 13th field exists only for `HYBRID_CUSTOMIZED` (a per-layer policy).
//!
//! Deviations (SimAI reads tokens with `>>` and never reports a bad one):
//! * Line based: each layer is one line of exactly 12 fields (13 for `HYBRID_CUSTOMIZED`);
//!   a missing field is an error naming it. Extra fields are accepted only on the last layer
//!   line (SimAI never reads past the last layer) and are kept, with anything after the layers,
//!   in [`Workload::ignored_after_layers`].
//!   Blank lines are skipped.
//! * SimAI treats an unknown comm type as "no communication"; here it is an error, except
//!   `BROADCAST`, which AICB writes and which is kept as [`CommKind::Broadcast`] (see
//!   [`CommKind::simai_sends`]). `ALLREDUCEALLTOALL…` is rejected: SimAI's prefix match decodes
//!   it as an all-reduce with no group, which its NCCL model cannot run.
//! * A comm type suffix other than `_EP` / `_DP_EP` is an error (SimAI: group NONE).
//! * SimAI records only the first id of `checkpoints: n …` n times (an index bug); here the n ids
//!   are read, and must be layer indices.
//! * A header key given twice is an error (SimAI keeps the last).
//! * `pp_comm` accepts an integral decimal (`6291456.0`, as AICB writes with sequence
//!   parallelism); SimAI's `stoi` reads the integer part of any decimal.
//! * Fewer layer lines than the count is an error (SimAI would run on uninitialised values;
//!   AICB's `L65B-M1-C05…txt` is such a file).

use std::path::Path;

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::text::{numbered_lines, read_file, uint};
use crate::units::{parse_decimal, scale_exact};

/// What SimAI's loop waits after a blocking collective's end (and its update time) before the
/// rank's next compute, ns: its workload loop steps by `register_event(this, General, NULL, 1)`
/// (`Workload::iterate_hybrid_parallel_Transformer_fwd_in_bckwd`), one tick = 1 ns; measured on
/// `data/simai/reference/case3_w64_tp4_64g*`: the input-gradient collective's flows start 1 ns
/// and the weight-gradient ones 2 ns after the sums of compute, update and latency. The loop
/// steps so after every phase but the pass's last, with or without a collective
/// (`case6_llama7b_tp2_128g`: 76 layers).
pub const SIMAI_PHASE_WAIT_NS: u64 = 1;

/// Largest layer count accepted (guards allocation; SimAI's largest example has 1789).
pub const MAX_LAYERS: u32 = 1 << 22;

token_enum! {
    /// Parallelism policy: the first header token (SimAI's `decode_parallelsim`).
    pub enum Policy {
        /// Data parallel: only weight-gradient communication.
        Data = "DATA",
        /// Hybrid transformer (TP for forward/input-gradient, DP for weight-gradient).
        HybridTransformer = "HYBRID_TRANSFORMER",
        /// Hybrid transformer with forward-in-backward checkpointing; what AICB writes.
        HybridTransformerFwdInBckwd = "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
        /// DLRM.
        HybridDlrm = "HYBRID_DLRM",
        /// DLRM, enhanced.
        HybridDlrmEnhanced = "HYBRID_DLRM_ENHANCED",
        /// Model parallel: no weight-gradient communication.
        Model = "MODEL",
        /// Data parallel in the first dimension, model parallel in the others.
        HybridDataModel = "HYBRID_DATA_MODEL",
        /// Model parallel in the first dimension, data parallel in the others.
        HybridModelData = "HYBRID_MODEL_DATA",
        /// Per-layer policy in a 13th field.
        HybridCustomized = "HYBRID_CUSTOMIZED",
        /// Micro-benchmark: only the weight-gradient collective of each layer (AICB micro tests).
        Micro = "MICRO",
        /// Distributed inference.
        DistributedInference = "DISTRIBUTED_INFERENCE",
    }
}

impl Policy {
    /// SimAI reads `model_parallel_NPU_group:`, `ep:`, `pp:`, `vpp:`, `ga:`, `all_gpus:`.
    #[must_use]
    pub fn reads_parallelism(self) -> bool {
        matches!(
            self,
            Policy::HybridTransformer | Policy::HybridTransformerFwdInBckwd
        )
    }

    /// SimAI reads `checkpoints:` and `checkpoint_initiates:`.
    #[must_use]
    pub fn reads_checkpoints(self) -> bool {
        self == Policy::HybridTransformerFwdInBckwd
    }

    /// SimAI reads `DLRM_LAST_BOTTOM_LAYER:`.
    #[must_use]
    pub fn reads_dlrm(self) -> bool {
        matches!(self, Policy::HybridDlrm | Policy::HybridDlrmEnhanced)
    }
}

token_enum! {
    /// Collective of a comm-type field, without its group suffix.
    pub enum CommKind {
        /// All-reduce.
        AllReduce = "ALLREDUCE",
        /// All-to-all.
        AllToAll = "ALLTOALL",
        /// All-gather.
        AllGather = "ALLGATHER",
        /// Reduce-scatter.
        ReduceScatter = "REDUCESCATTER",
        /// Broadcast: written by AICB (`norm` layers) but unknown to SimAI's reader, which sends
        /// nothing for it.
        Broadcast = "BROADCAST",
    }
}

impl CommKind {
    /// Whether SimAI's reader turns this kind into communication (everything but
    /// [`CommKind::Broadcast`]).
    #[must_use]
    pub fn simai_sends(self) -> bool {
        self != CommKind::Broadcast
    }
}

token_enum! {
    /// Communication group (SimAI's `MockNccl::GroupType`); the suffix of a comm type picks it.
    pub enum CommGroup {
        /// Tensor parallel (consecutive ranks; inside a server when TP ≤ GPUs per server).
        Tp = "TP",
        /// Data parallel (ranks strided by `all_gpus / DP`).
        Dp = "DP",
        /// Expert parallel (suffix `_EP`).
        Ep = "EP",
        /// Data parallel across expert groups (suffix `_DP_EP`).
        DpEp = "DP_EP",
    }
}

/// Comm-type suffixes and their groups, longest first (`_DP_EP` also ends in `_EP`).
const GROUP_SUFFIXES: [(&str, CommGroup); 2] =
    [("_DP_EP", CommGroup::DpEp), ("_EP", CommGroup::Ep)];

/// The comm-type token meaning "no communication".
pub const NO_COMM: &str = "NONE";

/// SimAI's combined all-reduce + all-to-all type, which its reader cannot decode.
const ALLREDUCE_ALLTOALL: &str = "ALLREDUCEALLTOALL";

token_enum! {
    /// The three phases of a layer, in file order.
    pub enum PhaseKind {
        /// Forward pass.
        Forward = "fwd",
        /// Input-gradient (backward) pass.
        InputGrad = "ig",
        /// Weight-gradient pass.
        WeightGrad = "wg",
    }
}

impl PhaseKind {
    /// The group of an unsuffixed comm type in this phase.
    #[must_use]
    pub fn default_group(self) -> CommGroup {
        match self {
            PhaseKind::Forward | PhaseKind::InputGrad => CommGroup::Tp,
            PhaseKind::WeightGrad => CommGroup::Dp,
        }
    }
}

/// One collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comm {
    /// Which collective.
    pub kind: CommKind,
    /// Among which ranks.
    pub group: CommGroup,
    /// Data size, bytes (per rank, as NCCL counts it).
    pub bytes: u64,
}

/// Compute then (optionally) communicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phase {
    /// Compute time, ns.
    pub compute_ns: u64,
    /// The collective; `None` for `NONE`.
    pub comm: Option<Comm>,
}

/// One layer line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// 1-based line in the file.
    pub line: usize,
    /// Layer name (not unique).
    pub name: String,
    /// The second field (SimAI's `depen`, always `-1` in AICB's files; unused).
    pub reserved: i32,
    /// Forward pass.
    pub forward: Phase,
    /// Input-gradient pass.
    pub input_grad: Phase,
    /// Weight-gradient pass.
    pub weight_grad: Phase,
    /// Delay after each of the three communications completes, ns.
    pub update_ns: u64,
    /// Per-layer policy (13th field; `HYBRID_CUSTOMIZED` only).
    pub policy: Option<Policy>,
}

impl Layer {
    /// The phase of `kind`.
    #[must_use]
    pub fn phase(&self, kind: PhaseKind) -> &Phase {
        match kind {
            PhaseKind::Forward => &self.forward,
            PhaseKind::InputGrad => &self.input_grad,
            PhaseKind::WeightGrad => &self.weight_grad,
        }
    }
}

/// The header line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadHeader {
    /// 1-based line.
    pub line: usize,
    /// Parallelism policy.
    pub policy: Policy,
    /// `model_parallel_NPU_group:` (TP size).
    pub tp: Option<u32>,
    /// `ep:` (expert-parallel size).
    pub ep: Option<u32>,
    /// `pp:` (pipeline stages; SimAI's ns-3 backend builds groups with PP = 1 regardless).
    pub pp: Option<u32>,
    /// `vpp:` (virtual pipeline stages; AICB writes the layer count of the model).
    pub vpp: Option<u32>,
    /// `ga:` (gradient-accumulation steps).
    pub ga: Option<u32>,
    /// `all_gpus:` (world size).
    pub all_gpus: Option<u32>,
    /// `checkpoints:` layer indices.
    pub checkpoints: Vec<u32>,
    /// `checkpoint_initiates:` layer indices.
    pub checkpoint_initiates: Vec<u32>,
    /// `pp_comm` / `pp_comm:` (pipeline activation size), bytes.
    pub pp_comm_bytes: Option<u64>,
    /// `DLRM_LAST_BOTTOM_LAYER:`.
    pub dlrm_last_bottom_layer: Option<u32>,
    /// Tokens SimAI does not read for this policy (e.g. AICB's `expert_parallel_npu_group:`).
    pub ignored: Vec<String>,
}

/// A parsed workload file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    /// The file's name as used in messages.
    pub file: String,
    /// First line.
    pub header: WorkloadHeader,
    /// Line of the layer count.
    pub count_line: usize,
    /// The layers, in file order (as many as the count line says).
    pub layers: Vec<Layer>,
    /// Text SimAI never reads: extra fields of the last layer line and lines after the layers,
    /// with their line numbers.
    pub ignored_after_layers: Vec<(usize, String)>,
}

impl Workload {
    /// Multiplies every collective's size by `comm_scale` and every compute time by
    /// `compute_scale`, each product truncated to a whole byte / ns, as SimAI's workload reader
    /// does with its `comm_scale` / `compute_scale` (`Workload::initialize_workload`: both
    /// applied to the three phases of each layer line; the update time is not scaled; its
    /// packet-level `SimAI_simulator` passes 1, its `phynet` frontend takes `-s comm_scale`).
    /// Deviation: the product is taken in `f64` (SimAI's scales are `float`s).
    pub fn scale(&mut self, comm_scale: f64, compute_scale: f64) {
        let mul = |v: u64, s: f64| -> u64 {
            #[allow(
                clippy::cast_precision_loss,
                reason = "sizes and times beyond 2^53 lose their last digits, as in SimAI"
            )]
            let x = v as f64 * s;
            // Saturating float-to-int cast: negative / NaN -> 0 (the scales are checked > 0).
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "truncation is SimAI's float-to-integer conversion"
            )]
            let y = x as u64;
            y
        };
        for l in &mut self.layers {
            for p in [&mut l.forward, &mut l.input_grad, &mut l.weight_grad] {
                p.compute_ns = mul(p.compute_ns, compute_scale);
                if let Some(c) = &mut p.comm {
                    c.bytes = mul(c.bytes, comm_scale);
                }
            }
        }
    }

    /// Every (layer index, phase, collective), in file order.
    pub fn comms(&self) -> impl Iterator<Item = (usize, PhaseKind, Comm)> + '_ {
        self.layers.iter().enumerate().flat_map(|(i, l)| {
            PhaseKind::ALL
                .iter()
                .filter_map(move |&k| l.phase(k).comm.map(|c| (i, k, c)))
        })
    }
}

/// Header keys: (spelling, what it sets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeaderKey {
    Tp,
    Ep,
    Pp,
    Vpp,
    Ga,
    AllGpus,
    Checkpoints,
    CheckpointInitiates,
    PpComm,
    DlrmLastBottomLayer,
}

const HEADER_KEYS: [(&str, HeaderKey); 11] = [
    ("model_parallel_NPU_group:", HeaderKey::Tp),
    ("ep:", HeaderKey::Ep),
    ("pp:", HeaderKey::Pp),
    ("vpp:", HeaderKey::Vpp),
    ("ga:", HeaderKey::Ga),
    ("all_gpus:", HeaderKey::AllGpus),
    ("checkpoints:", HeaderKey::Checkpoints),
    ("checkpoint_initiates:", HeaderKey::CheckpointInitiates),
    ("pp_comm", HeaderKey::PpComm),
    ("pp_comm:", HeaderKey::PpComm),
    ("DLRM_LAST_BOTTOM_LAYER:", HeaderKey::DlrmLastBottomLayer),
];

impl HeaderKey {
    fn read_by(self, policy: Policy) -> bool {
        match self {
            HeaderKey::Tp
            | HeaderKey::Ep
            | HeaderKey::Pp
            | HeaderKey::Vpp
            | HeaderKey::Ga
            | HeaderKey::AllGpus => policy.reads_parallelism(),
            HeaderKey::Checkpoints | HeaderKey::CheckpointInitiates => policy.reads_checkpoints(),
            HeaderKey::PpComm => true,
            HeaderKey::DlrmLastBottomLayer => policy.reads_dlrm(),
        }
    }
}

/// Field names of a layer line, in order (used in error messages).
const LAYER_FIELDS: [&str; 13] = [
    "name",
    "reserved",
    "fwd_compute_ns",
    "fwd_comm_type",
    "fwd_comm_bytes",
    "ig_compute_ns",
    "ig_comm_type",
    "ig_comm_bytes",
    "wg_compute_ns",
    "wg_comm_type",
    "wg_comm_bytes",
    "update_ns",
    "layer_policy",
];

/// Reads and parses a workload file.
///
/// # Errors
/// See the module documentation.
pub fn parse_workload_file(path: &Path) -> Result<Workload> {
    let text = read_file(path, "workload")?;
    parse_workload_str(&path.display().to_string(), &text)
}

/// Parses workload text; `name` is used in error messages as the file name.
///
/// # Errors
/// See the module documentation.
pub fn parse_workload_str(name: &str, text: &str) -> Result<Workload> {
    let mut lines = numbered_lines(text, false);
    let last_line = text.lines().count().max(1);
    let Some((hl, header_text)) = lines.next() else {
        return Err(ScenarioError::at(
            name,
            1,
            "policy",
            ErrorKind::Missing,
            format!(
                "empty file; expected a header starting with one of {}",
                Policy::tokens()
            ),
        ));
    };
    let header = parse_header(name, hl, header_text)?;

    let Some((cl, count_text)) = lines.next() else {
        return Err(ScenarioError::at(
            name,
            last_line,
            "layer count",
            ErrorKind::Missing,
            "file ends after the header; expected the number of layers",
        ));
    };
    let count: u32 = uint(name, cl, "layer count", count_text)?;
    if count > MAX_LAYERS {
        return Err(ScenarioError::at(
            name,
            cl,
            "layer count",
            ErrorKind::Value,
            format!("at most {MAX_LAYERS} layers, got {count}"),
        ));
    }
    for (key, ids) in [
        ("checkpoints:", &header.checkpoints),
        ("checkpoint_initiates:", &header.checkpoint_initiates),
    ] {
        if let Some(bad) = ids.iter().find(|&&id| id >= count) {
            return Err(ScenarioError::at(
                name,
                hl,
                key,
                ErrorKind::Value,
                format!("layer {bad} does not exist (layers 0..{count})"),
            ));
        }
    }

    let arity = if header.policy == Policy::HybridCustomized {
        13
    } else {
        12
    };
    let mut layers = Vec::with_capacity(count.min(1 << 16) as usize);
    let mut ignored_after_layers = Vec::new();
    while layers.len() < count as usize {
        let Some((ln, line)) = lines.next() else {
            return Err(ScenarioError::at(
                name,
                last_line,
                "layers",
                ErrorKind::Count,
                format!(
                    "the count line ({cl}) says {count} layers, the file ends after {}",
                    layers.len()
                ),
            ));
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        let is_last = layers.len() + 1 == count as usize;
        let (used, extra) = fields.split_at(fields.len().min(arity));
        if !extra.is_empty() {
            if is_last {
                ignored_after_layers.push((ln, extra.join(" ")));
            } else {
                return Err(ScenarioError::at(
                    name,
                    ln,
                    "layer",
                    ErrorKind::Syntax,
                    format!(
                        "expected {arity} fields, found {} (SimAI reads tokens, so the extra \
                         ones would shift every later field)",
                        fields.len()
                    ),
                ));
            }
        }
        layers.push(parse_layer(name, ln, used, arity)?);
    }
    ignored_after_layers.extend(lines.map(|(ln, l)| (ln, l.to_owned())));
    Ok(Workload {
        file: name.to_owned(),
        header,
        count_line: cl,
        layers,
        ignored_after_layers,
    })
}

fn parse_header(name: &str, ln: usize, text: &str) -> Result<WorkloadHeader> {
    let mut tokens = text.split_whitespace();
    let first = tokens.next().unwrap_or_default();
    let policy = Policy::from_token(first).ok_or_else(|| {
        ScenarioError::at(
            name,
            ln,
            "policy",
            ErrorKind::UnknownKey,
            format!(
                "unknown parallelism policy `{first}` (one of {})",
                Policy::tokens()
            ),
        )
    })?;
    let mut h = WorkloadHeader {
        line: ln,
        policy,
        tp: None,
        ep: None,
        pp: None,
        vpp: None,
        ga: None,
        all_gpus: None,
        checkpoints: Vec::new(),
        checkpoint_initiates: Vec::new(),
        pp_comm_bytes: None,
        dlrm_last_bottom_layer: None,
        ignored: Vec::new(),
    };
    let mut seen: Vec<HeaderKey> = Vec::new();
    while let Some(tok) = tokens.next() {
        let key = HEADER_KEYS
            .iter()
            .find(|(spelling, k)| *spelling == tok && k.read_by(policy))
            .map(|&(_, k)| k);
        let Some(key) = key else {
            h.ignored.push(tok.to_owned());
            continue;
        };
        if seen.contains(&key) {
            return Err(ScenarioError::at(
                name,
                ln,
                tok,
                ErrorKind::Duplicate,
                "given twice",
            ));
        }
        seen.push(key);
        let mut value = || {
            tokens.next().ok_or_else(|| {
                ScenarioError::at(
                    name,
                    ln,
                    tok,
                    ErrorKind::Missing,
                    "header ends before this key's value",
                )
            })
        };
        let small = |v: &str| -> Result<u32> { uint(name, ln, tok, v) };
        match key {
            HeaderKey::Tp => h.tp = Some(positive(name, ln, tok, small(value()?)?)?),
            HeaderKey::Ep => h.ep = Some(positive(name, ln, tok, small(value()?)?)?),
            HeaderKey::Pp => h.pp = Some(positive(name, ln, tok, small(value()?)?)?),
            HeaderKey::Vpp => h.vpp = Some(positive(name, ln, tok, small(value()?)?)?),
            HeaderKey::Ga => h.ga = Some(positive(name, ln, tok, small(value()?)?)?),
            HeaderKey::AllGpus => h.all_gpus = Some(positive(name, ln, tok, small(value()?)?)?),
            HeaderKey::DlrmLastBottomLayer => h.dlrm_last_bottom_layer = Some(small(value()?)?),
            HeaderKey::PpComm => {
                let v = value()?;
                let bytes = parse_decimal(v)
                    .and_then(|(m, s)| scale_exact(m, s, 1))
                    .ok_or_else(|| {
                        ScenarioError::at(
                            name,
                            ln,
                            tok,
                            ErrorKind::Syntax,
                            format!("`{v}` is not a whole number of bytes"),
                        )
                    })?;
                h.pp_comm_bytes = Some(bytes);
            }
            HeaderKey::Checkpoints | HeaderKey::CheckpointInitiates => {
                let n: u32 = small(value()?)?;
                let mut ids = Vec::new();
                for _ in 0..n {
                    ids.push(small(value()?)?);
                }
                if key == HeaderKey::Checkpoints {
                    h.checkpoints = ids;
                } else {
                    h.checkpoint_initiates = ids;
                }
            }
        }
    }
    Ok(h)
}

fn positive(name: &str, ln: usize, key: &str, v: u32) -> Result<u32> {
    if v == 0 {
        Err(ScenarioError::at(
            name,
            ln,
            key,
            ErrorKind::Value,
            "must be at least 1",
        ))
    } else {
        Ok(v)
    }
}

/// `fields` holds at most `arity` tokens; a shorter slice names the first missing field.
fn parse_layer(name: &str, ln: usize, fields: &[&str], arity: usize) -> Result<Layer> {
    let field = |i: usize| -> Result<&str> {
        let label = LAYER_FIELDS.get(i).copied().unwrap_or("layer");
        fields.get(i).copied().ok_or_else(|| {
            ScenarioError::at(
                name,
                ln,
                label,
                ErrorKind::Missing,
                format!(
                    "layer line has {} fields, expected {arity} (missing `{label}`)",
                    fields.len()
                ),
            )
        })
    };
    let num = |i: usize| -> Result<u64> {
        let label = LAYER_FIELDS.get(i).copied().unwrap_or("layer");
        uint(name, ln, label, field(i)?)
    };
    let layer_name = field(0)?.to_owned();
    let reserved_text = field(1)?;
    let reserved: i32 = reserved_text.parse().map_err(|_| {
        ScenarioError::at(
            name,
            ln,
            "reserved",
            ErrorKind::Syntax,
            format!("`{reserved_text}` is not an integer"),
        )
    })?;
    let mut phases = [Phase {
        compute_ns: 0,
        comm: None,
    }; 3];
    for (slot, (kind, first)) in phases
        .iter_mut()
        .zip(PhaseKind::ALL.iter().copied().zip([2usize, 5, 8]))
    {
        let compute_ns = num(first)?;
        let type_label = LAYER_FIELDS.get(first + 1).copied().unwrap_or("comm_type");
        let comm_type = field(first + 1)?;
        let bytes = num(first + 2)?;
        let comm = parse_comm_type(name, ln, type_label, comm_type, kind)?
            .map(|(kind, group)| Comm { kind, group, bytes });
        *slot = Phase { compute_ns, comm };
    }
    let update_ns = num(11)?;
    let policy = if arity == 13 {
        let t = field(12)?;
        Some(Policy::from_token(t).ok_or_else(|| {
            ScenarioError::at(
                name,
                ln,
                "layer_policy",
                ErrorKind::UnknownKey,
                format!("unknown policy `{t}` (one of {})", Policy::tokens()),
            )
        })?)
    } else {
        None
    };
    let [forward, input_grad, weight_grad] = phases;
    Ok(Layer {
        line: ln,
        name: layer_name,
        reserved,
        forward,
        input_grad,
        weight_grad,
        update_ns,
        policy,
    })
}

/// `None` for `NONE`, else the kind and group.
fn parse_comm_type(
    name: &str,
    ln: usize,
    field: &str,
    token: &str,
    phase: PhaseKind,
) -> Result<Option<(CommKind, CommGroup)>> {
    if token == NO_COMM {
        return Ok(None);
    }
    let (base, group) = GROUP_SUFFIXES
        .iter()
        .find_map(|&(suffix, g)| token.strip_suffix(suffix).map(|b| (b, g)))
        .unwrap_or((token, phase.default_group()));
    if base == ALLREDUCE_ALLTOALL {
        return Err(ScenarioError::at(
            name,
            ln,
            field,
            ErrorKind::Unsupported,
            format!(
                "`{token}`: SimAI decodes this as an all-reduce with no group (its prefix \
                 match sees ALLREDUCE first), which its NCCL model cannot run"
            ),
        ));
    }
    match CommKind::from_token(base) {
        Some(kind) => Ok(Some((kind, group))),
        None => Err(ScenarioError::at(
            name,
            ln,
            field,
            ErrorKind::UnknownKey,
            format!(
                "unknown comm type `{token}` (SimAI would silently send nothing); expected \
                 {NO_COMM} or one of {} with an optional _EP or _DP_EP suffix",
                CommKind::tokens()
            ),
        )),
    }
}

#[cfg(test)]
mod tests;
