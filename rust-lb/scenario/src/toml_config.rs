//! rdma-lb's own TOML scenario files.
//!
//! ```toml
//! [topology]                       # exactly one of conweave_file / leaf_spine
//! conweave_file = "../shared/data/conweave/config/leaf_spine_128_100G_OS2.txt"
//! leaf_spine = { leaves = 8, hosts_per_leaf = 16, spines = 8, host_rate = "100Gbps",
//!                fabric_rate = "100Gbps", delay = "1us" }   # fabric_rate defaults to host_rate
//! link_rates = [ { a = 128, b = 136, rate = "40Gbps" } ]    # per-link rate overrides;
//! #   one_way = true: only a's port towards b sends at `rate`; scale_queue = true (uet): the
//! #   port's queue limit and ECN thresholds scale by rate / the link's (htsim's -failed)
//! link_faults = [ { at = "1ms", a = 128, b = 136 },          # down at 1 ms, for good
//!                 { at = "1ms", up = "3ms", a = 129, b = 137 }, # down at 1 ms, up at 3 ms
//!                 { at = "2ms", switch = 136, port = 3, up = "4ms" },  # a switch loses a port
//!                 { at = "9ms", a = 128, b = 136, down = false } ]     # back up
//!
//! [workload]                       # any combination; at least one
//! flow_file = "flows.txt"          # ConWeave flow file
//! poisson = { cdf = "AliStorage2019.txt", load = 0.25, duration = "10ms", start = "0ns",
//!             seed = 7, pg = 3 }   # seed defaults to one derived from [run] seed
//! [[workload.collective]]
//! kind = "allreduce-ring"          # | "alltoall" | "permutation" | "incast"
//! ranks = 16
//! groups = 16                      # default 1
//! placement = "one-per-tor"        # | "consecutive" (default)
//! size = "16MiB"                   # per-rank message size
//! start = "0ns"
//!
//! [transport]                      # every key optional; defaults = ConWeave run.py values
//! kind = "roce"                    # | "uet": REPS's Ultra-Ethernet-style transport (4 KiB
//!                                  # packets, ECN-driven window, SACK, trimming); PFC off
//! recovery = "gbn"                 # | "irn" | "nic-sr"
//! cc = "dcqcn"                     # | "hpcc" | "timely" | "dctcp" | "none"
//! window = true                    # HAS_WIN (+ var_win = VAR_WIN); default: on for hpcc and
//!                                  # dctcp (run.py's rule), off otherwise
//! # HPCC: u_target, mi_thresh, fast_react, multi_rate, sample_feedback, int_multi;
//! # DCTCP: dctcp_rate_ai; HPCC's additive step and TIMELY's steps are rate_ai / rate_hai
//! pfc = true
//! buffer = "9MiB"
//! ecn_thresholds = [ { rate = "100Gbps", kmin = "100KB", kmax = "400KB", pmax = 0.2 } ]
//! # also: ecn, alpha_resume_interval, rate_decrease_interval, rp_timer, fast_recovery_times,
//! # ewma_gain, rate_ai, rate_hai, min_rate, clamp_target_rate, rate_on_first_cnp,
//! # ack_interval_packets, l2_chunk, l2_back_to_zero, rate_bound, payload, pause_time,
//! # l2_timeout, nack_interval, irn_rto_low, irn_rto_high, irn_bdp, irn_ooo_threshold,
//! # ack_milestone_fix, nack_carries_cnp, headroom_sum_quirk, withdraw_failed_ports
//! quirks = []                      # reference behaviours to reproduce: "all", "none" or a
//!                                  # list of flow-ports, time-truncation, pacing-wakeup,
//!                                  # irn-sender, ecn-shared-stream, event-order,
//!                                  # glibc-rand (ConWeave configs: all)
//!
//! [transport.uet]                  # only with kind = "uet"; 0 = derived from the fabric
//! payload = 4086                   # header = 64; trimming = false; queue_packets = 101;
//!                                  # ecn_kmin_packets = 25; ecn_kmax_packets = 76;
//!                                  # initial_window_packets = 151; max_window_bdp = 1.5;
//!                                  # base_rtt = "8337ns"; rto = "41us";
//!                                  # switch_hash = "five-tuple" | "htsim" (the REPS
//!                                  # authors' switches; host algorithms only)
//!
//! [lb]
//! name = "reps"                    # an rdma_lb_core::Algorithm name; default "ecmp"
//! params = { num_entropies = 64 }  # or the string "num_entropies = 64"
//!
//! [run]
//! seed = 1
//! start = "0ns"                    # flowgen start (measurement window start)
//! stop = "1s"                      # hard stop; default = end of flow generation + 10 s
//! out = "out/demo"                 # default: the scenario program's out/<stem>-<lb>-s<seed>
//! monitor_interval = "10us"
//! pfc_trace = false
//! queue_trace = false
//! rate_trace = "10us"              # rate.txt + retx.txt sampled at this period (default off)
//! ```
//! Unknown keys anywhere are errors (`deny_unknown_fields`). Quantities are strings with
//! units (`"100Gbps"`, `"1us"`, `"10ms"`, `"9MiB"`; sizes may also be plain integers of
//! bytes). Errors name `file:line: section.key: message` (the line comes from the TOML
//! parser's span). Relative paths resolve against the TOML file's directory, then the
//! current directory.
//!
//! Flow ids: flow-file flows first, then Poisson flows, then each collective in order.
//! `flowgen_stop_ns` = end of the Poisson window, or the latest flow start if later.

use std::fmt;
use std::ops::Range;
use std::path::Path;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use toml::Spanned;

mod link_faults;

use crate::cdf::parse_cdf_file;
use crate::error::{ErrorKind, Result, ScenarioError};
use crate::flows::{parse_flow_file, truncate_starts_as_ns3_19};
use crate::model::{
    Cc, CollectiveKind, EcnEntry, LbSpec, PortRate, Quirk, QuirkSet, Recovery, RunSpec, Scenario,
    SwitchHash, Transport, TransportKind,
};
use crate::overrides::{Overrides, OVERRIDES};
use crate::text::resolve_relative;
use crate::topology::{parse_topology_file, LeafSpine};
use crate::units::{parse_bytes, parse_rate_bps, parse_time_ns};
use crate::workload::{
    derive_seed, expand_collective, place_ranks, poisson_flows, CollectiveSpec, Placement,
    PoissonSpec,
};

/// Largest number of flows a scenario may generate (memory guard; ~1 GB of flow records).
pub const MAX_FLOWS: u64 = 20_000_000;

macro_rules! unit_type {
    ($name:ident, $parse:path, $what:literal, $int_ok:literal) => {
        /// A quantity parsed from a string with a unit.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name(pub u64);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<$name, E> {
                        if $int_ok {
                            u64::try_from(v)
                                .map($name)
                                .map_err(|_| E::custom(format!("negative value {v}")))
                        } else {
                            Err(E::custom(format!(
                                "{v} has no unit; write {} as a string with a unit",
                                $what
                            )))
                        }
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<$name, E> {
                        Err(E::custom(format!(
                            "{v} has no unit; write {} as a string with a unit",
                            $what
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(Rate, parse_rate_bps, "a rate such as \"100Gbps\"", false);
unit_type!(Time, parse_time_ns, "a time such as \"1us\"", false);
unit_type!(
    Bytes,
    parse_bytes,
    "a size such as \"9MiB\" or an integer of bytes",
    true
);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSec {
    topology: TopologySec,
    workload: WorkloadSec,
    #[serde(default)]
    transport: TransportSec,
    lb: Option<LbSec>,
    #[serde(default)]
    run: RunSec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TopologySec {
    conweave_file: Option<Spanned<String>>,
    leaf_spine: Option<Spanned<LeafSpineSec>>,
    #[serde(default)]
    link_rates: Vec<Spanned<LinkRateSec>>,
    #[serde(default)]
    link_faults: Vec<Spanned<LinkFaultSec>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LeafSpineSec {
    leaves: u32,
    hosts_per_leaf: u32,
    spines: u32,
    host_rate: Rate,
    fabric_rate: Option<Rate>,
    delay: Time,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkRateSec {
    a: u32,
    b: u32,
    rate: Rate,
    one_way: Option<bool>,
    scale_queue: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkFaultSec {
    at: Time,
    a: Option<u32>,
    b: Option<u32>,
    switch: Option<u32>,
    port: Option<u32>,
    #[serde(default = "yes")]
    down: bool,
    up: Option<Time>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadSec {
    flow_file: Option<Spanned<String>>,
    poisson: Option<Spanned<PoissonSec>>,
    #[serde(default)]
    collective: Vec<Spanned<CollectiveSec>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PoissonSec {
    cdf: Spanned<String>,
    load: Spanned<f64>,
    duration: Time,
    start: Option<Time>,
    seed: Option<u64>,
    pg: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CollectiveSec {
    kind: Spanned<String>,
    ranks: u32,
    groups: Option<u32>,
    placement: Option<Spanned<String>>,
    size: Bytes,
    start: Option<Time>,
    seed: Option<u64>,
    pg: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EcnSec {
    rate: Rate,
    kmin: Bytes,
    kmax: Bytes,
    pmax: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
enum RecoverySec {
    Gbn,
    Irn,
    NicSr,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
enum CcSec {
    Dcqcn,
    Hpcc,
    Timely,
    Dctcp,
    None,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
enum KindSec {
    Roce,
    Uet,
}

/// `[transport.uet]`: the UET transport's parameters (model::UetParams; 0 = derived).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct UetSec {
    payload: Option<Spanned<Bytes>>,
    header: Option<Spanned<Bytes>>,
    trimming: Option<bool>,
    queue_packets: Option<u32>,
    ecn_kmin_packets: Option<u32>,
    ecn_kmax_packets: Option<u32>,
    initial_window_packets: Option<u32>,
    max_window_bdp: Option<Spanned<f64>>,
    base_rtt: Option<Time>,
    rto: Option<Time>,
    switch_hash: Option<SwitchHashSec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
enum SwitchHashSec {
    FiveTuple,
    Htsim,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TransportSec {
    kind: Option<KindSec>,
    uet: Option<Spanned<UetSec>>,
    recovery: Option<RecoverySec>,
    cc: Option<CcSec>,
    window: Option<bool>,
    var_win: Option<bool>,
    u_target: Option<Spanned<f64>>,
    mi_thresh: Option<u32>,
    fast_react: Option<bool>,
    multi_rate: Option<bool>,
    sample_feedback: Option<bool>,
    int_multi: Option<Spanned<u32>>,
    dctcp_rate_ai: Option<Rate>,
    pfc: Option<bool>,
    ecn: Option<bool>,
    buffer: Option<Bytes>,
    ecn_thresholds: Option<Spanned<Vec<EcnSec>>>,
    alpha_resume_interval: Option<Time>,
    rate_decrease_interval: Option<Time>,
    rp_timer: Option<Time>,
    fast_recovery_times: Option<u32>,
    ewma_gain: Option<Spanned<f64>>,
    rate_ai: Option<Rate>,
    rate_hai: Option<Rate>,
    min_rate: Option<Rate>,
    clamp_target_rate: Option<bool>,
    rate_on_first_cnp: Option<Spanned<f64>>,
    ack_interval_packets: Option<u32>,
    l2_chunk: Option<Bytes>,
    l2_back_to_zero: Option<bool>,
    rate_bound: Option<bool>,
    payload: Option<Spanned<Bytes>>,
    pause_time: Option<Time>,
    l2_timeout: Option<Time>,
    nack_interval: Option<Time>,
    irn_rto_low: Option<Time>,
    irn_rto_high: Option<Time>,
    irn_bdp: Option<Bytes>,
    irn_ooo_threshold: Option<u32>,
    ack_milestone_fix: Option<bool>,
    nack_carries_cnp: Option<bool>,
    headroom_sum_quirk: Option<bool>,
    withdraw_failed_ports: Option<bool>,
    quirks: Option<Spanned<QuirksSec>>,
}

/// `quirks = "all"` / `"none"` / `["flow-ports", ...]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum QuirksSec {
    Word(String),
    List(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ParamsSec {
    Text(String),
    Table(toml::Table),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LbSec {
    name: Spanned<String>,
    params: Option<ParamsSec>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunSec {
    seed: Option<u64>,
    start: Option<Time>,
    stop: Option<Spanned<Time>>,
    out: Option<String>,
    monitor_interval: Option<Time>,
    pfc_trace: Option<bool>,
    queue_trace: Option<bool>,
    rate_trace: Option<Time>,
}

/// Line (1-based) of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |t| t.bytes().filter(|&b| b == b'\n').count() + 1)
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The key whose inline table is still open at the end of `prefix` (same line), if any.
fn inline_parent(prefix: &str) -> Option<String> {
    let mut depth = 0i32;
    let mut open_at = None;
    for (i, c) in prefix.char_indices().rev() {
        match c {
            '}' => depth += 1,
            '{' if depth == 0 => {
                open_at = Some(i);
                break;
            }
            '{' => depth -= 1,
            _ => {}
        }
    }
    let before = prefix.get(..open_at?)?;
    let before = before.trim_end_matches(|c: char| c.is_whitespace() || c == '[' || c == ',');
    let before = before.strip_suffix('=')?.trim_end();
    let k: String = before
        .chars()
        .rev()
        .take_while(|&c| is_key_char(c) || c == '.')
        .collect();
    (!k.is_empty()).then(|| k.chars().rev().collect())
}

/// The `section.key` a span points at (the key itself, or the value of `key = value`),
/// found from the text around the span.
fn key_at(text: &str, span: &Range<usize>) -> String {
    let start = span.start.min(text.len());
    let before = text.get(..start).unwrap_or("");
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let prefix = before.get(line_start..).unwrap_or("");
    let at = text.get(start..span.end.min(text.len())).unwrap_or("");
    let trimmed = prefix.trim_end();
    let key = if let Some(p) = trimmed.strip_suffix('=') {
        let p = p.trim_end();
        let k: String = p
            .chars()
            .rev()
            .take_while(|&c| is_key_char(c) || c == '.')
            .collect();
        k.chars().rev().collect()
    } else {
        let k: String = at.chars().take_while(|&c| is_key_char(c)).collect();
        if k.is_empty() {
            // A table header or a whole table: name the header.
            let h = at.trim_start_matches('[').trim_start_matches('[');
            h.chars()
                .take_while(|&c| is_key_char(c) || c == '.')
                .collect()
        } else {
            k
        }
    };
    // Inside an inline table (`parent = { ... }` or `parent = [ { ... } ]`): prefix the parent.
    let key = match inline_parent(prefix) {
        Some(parent) if !key.is_empty() => format!("{parent}.{key}"),
        _ => key,
    };
    // The section: the last [header] at or before the span.
    let section = text
        .get(..line_start)
        .unwrap_or("")
        .lines()
        .rev()
        .find_map(|l| {
            let l = l.trim();
            l.starts_with('[')
                .then(|| l.trim_matches(|c| c == '[' || c == ']').trim().to_owned())
        });
    match section {
        Some(s) if !key.is_empty() && !key.starts_with(&s) => format!("{s}.{key}"),
        Some(s) if key.is_empty() => s,
        _ => {
            if key.is_empty() {
                "toml".to_owned()
            } else {
                key
            }
        }
    }
}

/// Parses TOML scenario text into its sections without touching the file system (for
/// fuzzing and for `check`-style validation of the syntax and units).
///
/// # Errors
/// TOML syntax errors, unknown keys, wrong types, bad units: `file:line: key: message`.
pub fn parse_toml_str(name: &str, text: &str) -> Result<()> {
    parse_sections(name, text).map(|_| ())
}

fn parse_sections(name: &str, text: &str) -> Result<FileSec> {
    toml::from_str::<FileSec>(text).map_err(|e| {
        let (line, key) = e.span().map_or((1, "toml".to_owned()), |s| {
            (line_of(text, s.start), key_at(text, &s))
        });
        ScenarioError::at(
            name,
            line,
            &key,
            ErrorKind::Syntax,
            e.message().trim().to_owned(),
        )
    })
}

struct Cx<'a> {
    file: &'a str,
    text: &'a str,
    path: &'a Path,
}

impl Cx<'_> {
    fn err<T>(
        &self,
        s: &Spanned<T>,
        key: &str,
        kind: ErrorKind,
        msg: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::at(
            self.file,
            line_of(self.text, s.span().start),
            key,
            kind,
            msg,
        )
    }

    /// Reads a file named at `s` with `read`; I/O errors are located at the naming key.
    fn read<T>(
        &self,
        s: &Spanned<String>,
        key: &str,
        read: impl FnOnce(&Path) -> Result<T>,
    ) -> Result<T> {
        let p = resolve_relative(self.path, s.get_ref());
        read(&p).map_err(|e| e.io_at(self.file, line_of(self.text, s.span().start), key))
    }
}

/// Loads a TOML scenario from its text; returns the scenario and the line of `[lb] name`
/// (0 if absent). `overrides.seed` and `overrides.load` are applied before generation.
///
/// # Errors
/// See the module documentation.
pub fn load_toml_str(path: &Path, text: &str, o: &Overrides) -> Result<(Scenario, usize)> {
    let file = path.display().to_string();
    let cx = Cx {
        file: &file,
        text,
        path,
    };
    let f = parse_sections(&file, text)?;
    let seed = o.seed.or(f.run.seed).unwrap_or(1);
    let mut notes = Vec::new();

    // Topology.
    let mut topology = match (&f.topology.conweave_file, &f.topology.leaf_spine) {
        (Some(p), None) => cx.read(p, "topology.conweave_file", parse_topology_file)?,
        (None, Some(ls)) => {
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
        }
        (Some(p), Some(_)) => {
            return Err(cx.err(
                p,
                "topology",
                ErrorKind::Value,
                "give either conweave_file or leaf_spine, not both",
            ))
        }
        (None, None) => {
            return Err(ScenarioError::file(
                &file,
                "topology",
                ErrorKind::Missing,
                "needs conweave_file or leaf_spine",
            ))
        }
    };
    for lr in &f.topology.link_rates {
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
    let link_events = link_faults::link_events(&cx, &topology, &f.topology.link_faults)?;

    let transport = transport(&cx, &f.transport)?;
    if transport.kind.is_roce() {
        if let Some(lr) = f
            .topology
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

    // Workload.
    let run_start_ns = f.run.start.map_or(0, |t| t.0);
    let mut flows = Vec::new();
    let mut collectives = Vec::new();
    let mut gen_end_ns = run_start_ns;
    let w = &f.workload;
    if w.flow_file.is_none() && w.poisson.is_none() && w.collective.is_empty() {
        return Err(ScenarioError::file(
            &file,
            "workload",
            ErrorKind::Missing,
            "needs flow_file, poisson and/or [[workload.collective]]",
        ));
    }
    if let Some(ff) = &w.flow_file {
        flows = cx.read(ff, "workload.flow_file", |p| parse_flow_file(p, &topology))?;
        if o.quirks
            .unwrap_or(transport.quirks)
            .contains(Quirk::TimeTruncation)
        {
            truncate_starts_as_ns3_19(&mut flows);
        }
    }
    let mut load = 0.0;
    if let Some(ps) = &w.poisson {
        let p = ps.get_ref();
        load = o.load.unwrap_or(*p.load.get_ref());
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
                None => notes.push(format!(
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
        gen_end_ns = gen_end_ns.max(start_ns.saturating_add(p.duration.0));
        append(&mut flows, poisson_flows(&spec, &cdf));
    } else if o.load.is_some() {
        return Err(ScenarioError::file(
            OVERRIDES,
            "load",
            ErrorKind::Unsupported,
            format!("{file} has no [workload] poisson to apply a load to"),
        ));
    }
    let mut group = 0u32;
    for (k, cs) in w.collective.iter().enumerate() {
        let c = cs.get_ref();
        let kind = CollectiveKind::from_name(c.kind.get_ref()).ok_or_else(|| {
            cx.err(
                &c.kind,
                "workload.collective.kind",
                ErrorKind::Value,
                format!(
                    "unknown kind `{}` (known: allreduce-ring, alltoall, permutation, incast)",
                    c.kind.get_ref()
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
            CollectiveKind::Alltoall => n.saturating_mul(n - 1),
            CollectiveKind::Permutation | CollectiveKind::Incast => n,
        };
        if per_group
            .saturating_mul(u64::from(groups))
            .saturating_add(flows.len() as u64)
            > MAX_FLOWS
        {
            return Err(cx.err(
                cs,
                "workload.collective",
                ErrorKind::Value,
                format!("{groups} groups of {n} ranks exceed the limit of {MAX_FLOWS} flows"),
            ));
        }
        let placed = place_ranks(&topology, placement, groups, c.ranks)
            .map_err(|m| cx.err(cs, "workload.collective", ErrorKind::Value, m))?;
        let start_ns = c.start.map_or(run_start_ns, |t| t.0);
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
            };
            let first = u32::try_from(flows.len()).unwrap_or(u32::MAX);
            if let Some((fl, coll)) = expand_collective(&spec, group, first) {
                flows.extend(fl);
                collectives.push(coll);
                group = group.saturating_add(1);
            }
        }
    }
    if let Some(last) = flows.iter().map(|f| f.start_ns).max() {
        gen_end_ns = gen_end_ns.max(last);
    }

    // Transport.

    // LB.
    let (lb, lb_line) = match &f.lb {
        None => (
            LbSpec {
                name: "ecmp".to_owned(),
                params: String::new(),
            },
            0,
        ),
        Some(l) => {
            let params = match &l.params {
                None => String::new(),
                Some(ParamsSec::Text(t)) => t.clone(),
                Some(ParamsSec::Table(t)) => t
                    .iter()
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            (
                LbSpec {
                    name: l.name.get_ref().clone(),
                    params,
                },
                line_of(text, l.name.span().start),
            )
        }
    };

    // Run.
    let hard_stop_ns = match &f.run.stop {
        Some(s) => {
            if s.get_ref().0 == 0 {
                return Err(cx.err(s, "run.stop", ErrorKind::Value, "must be positive"));
            }
            s.get_ref().0
        }
        None => gen_end_ns.saturating_add(10_000_000_000),
    };
    let run = RunSpec {
        seed,
        flowgen_start_ns: run_start_ns,
        flowgen_stop_ns: gen_end_ns,
        hard_stop_ns,
        monitor_interval_ns: f.run.monitor_interval.map_or(10_000, |t| t.0.max(1)),
        link_events,
        out_dir: f.run.out.clone().unwrap_or_default(),
        pfc_trace: f.run.pfc_trace.unwrap_or(false),
        queue_trace: f.run.queue_trace.unwrap_or(false),
        rate_trace_ns: f.run.rate_trace.map_or(0, |t| t.0.max(1)),
        load,
    };
    let name = path.file_stem().map_or_else(
        || "scenario".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    Ok((
        Scenario {
            name,
            config_path: file.clone(),
            topology,
            flows,
            collectives,
            transport,
            lb,
            run,
            notes,
        },
        lb_line,
    ))
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

/// The `[transport.uet]` table into `out` (kind UET: PFC off, the window is the CC).
fn uet_params(cx: &Cx<'_>, sec: &Spanned<UetSec>, out: &mut Transport) -> Result<()> {
    let u = sec.get_ref();
    let p = &mut out.uet;
    if let Some(b) = &u.payload {
        let v = b.get_ref().0;
        if v == 0 || v > 9000 {
            return Err(cx.err(
                b,
                "transport.uet.payload",
                ErrorKind::Value,
                format!("must be in 1..=9000 bytes, got {v}"),
            ));
        }
        p.payload_bytes = u32::try_from(v).unwrap_or(4086);
    }
    if let Some(b) = &u.header {
        let v = b.get_ref().0;
        // The model's data header is 48 B (Ethernet, IPv4, UDP, BTH); the rest is padding.
        if !(48..=512).contains(&v) {
            return Err(cx.err(
                b,
                "transport.uet.header",
                ErrorKind::Value,
                format!("must be in 48..=512 bytes, got {v}"),
            ));
        }
        p.header_bytes = u32::try_from(v).unwrap_or(64);
    }
    if let Some(v) = u.trimming {
        p.trimming = v;
    }
    if let Some(v) = u.queue_packets {
        p.queue_packets = v;
    }
    if let Some(v) = u.ecn_kmin_packets {
        p.ecn_kmin_packets = v;
    }
    if let Some(v) = u.ecn_kmax_packets {
        p.ecn_kmax_packets = v;
    }
    if let Some(v) = u.initial_window_packets {
        p.initial_window_packets = v;
    }
    if let Some(f) = &u.max_window_bdp {
        let v = *f.get_ref();
        if !(v > 0.0 && v <= 100.0) {
            return Err(cx.err(
                f,
                "transport.uet.max_window_bdp",
                ErrorKind::Value,
                format!("must be in (0, 100], got {v}"),
            ));
        }
        p.max_window_bdp = v;
    }
    if let Some(t) = u.base_rtt {
        p.base_rtt_ns = t.0;
    }
    if let Some(t) = u.rto {
        p.rto_ns = t.0;
    }
    if let Some(h) = &u.switch_hash {
        p.switch_hash = match h {
            SwitchHashSec::FiveTuple => SwitchHash::FiveTuple,
            SwitchHashSec::Htsim => SwitchHash::Htsim,
        };
    }
    let (q, lo, hi) = (p.queue_packets, p.ecn_kmin_packets, p.ecn_kmax_packets);
    if (lo != 0 && hi != 0 && lo > hi) || (q != 0 && hi > q) {
        return Err(cx.err(
            sec,
            "transport.uet",
            ErrorKind::Value,
            format!(
                "needs ecn_kmin_packets <= ecn_kmax_packets <= queue_packets, got {lo}, {hi}, {q}"
            ),
        ));
    }
    Ok(())
}

fn transport(cx: &Cx<'_>, t: &TransportSec) -> Result<Transport> {
    let mut out = Transport::default();
    if let Some(k) = &t.kind {
        out.kind = match k {
            KindSec::Roce => TransportKind::Roce,
            KindSec::Uet => TransportKind::Uet,
        };
    }
    if let Some(u) = &t.uet {
        if out.kind != TransportKind::Uet {
            return Err(cx.err(
                u,
                "transport.uet",
                ErrorKind::Value,
                "only with kind = \"uet\"".to_owned(),
            ));
        }
        uet_params(cx, u, &mut out)?;
    }
    if out.kind == TransportKind::Uet {
        if t.pfc == Some(true) {
            return Err(ScenarioError::file(
                cx.file,
                "transport.pfc",
                ErrorKind::Value,
                "the uet transport is lossy (trimming or drops): set pfc = false or leave it out",
            ));
        }
        if let Some(p) = &t.payload {
            return Err(cx.err(
                p,
                "transport.payload",
                ErrorKind::Value,
                "with kind = \"uet\" the payload is transport.uet.payload".to_owned(),
            ));
        }
        // Lossy fabric; the window is the congestion control (no rate-based CC).
        out.pfc_enabled = false;
        out.cc = Cc::None;
        out.payload_bytes = out.uet.payload_bytes;
    }
    if let Some(r) = &t.recovery {
        out.recovery = match r {
            RecoverySec::Gbn => Recovery::Gbn,
            RecoverySec::Irn => Recovery::Irn,
            RecoverySec::NicSr => Recovery::NicSr,
        };
    }
    if let Some(c) = &t.cc {
        out.cc = match c {
            CcSec::Dcqcn => Cc::Dcqcn,
            CcSec::Hpcc => Cc::Hpcc,
            CcSec::Timely => Cc::Timely,
            CcSec::Dctcp => Cc::Dctcp,
            CcSec::None => Cc::None,
        };
    }
    out.has_win = Transport::run_py_window(out.cc);
    out.var_win = out.has_win;
    let set_b = |dst: &mut bool, v: Option<bool>| {
        if let Some(v) = v {
            *dst = v;
        }
    };
    let set_t = |dst: &mut u64, v: Option<Time>| {
        if let Some(v) = v {
            *dst = v.0;
        }
    };
    set_b(&mut out.has_win, t.window);
    set_b(&mut out.var_win, t.var_win);
    set_b(&mut out.fast_react, t.fast_react);
    set_b(&mut out.multi_rate, t.multi_rate);
    set_b(&mut out.sample_feedback, t.sample_feedback);
    if let Some(v) = t.mi_thresh {
        out.mi_thresh = v;
    }
    if let Some(r) = t.dctcp_rate_ai {
        out.dctcp_rate_ai_bps = r.0;
    }
    if let Some(u) = &t.u_target {
        let v = *u.get_ref();
        if !(v > 0.0 && v <= 10.0) {
            return Err(cx.err(
                u,
                "transport.u_target",
                ErrorKind::Value,
                format!("must be in (0, 10], got {v}"),
            ));
        }
        out.u_target = v;
    }
    if let Some(m) = &t.int_multi {
        let v = *m.get_ref();
        if v == 0 {
            return Err(cx.err(
                m,
                "transport.int_multi",
                ErrorKind::Value,
                "must be >= 1".to_owned(),
            ));
        }
        out.int_multi = v;
    }
    set_b(&mut out.pfc_enabled, t.pfc);
    set_b(&mut out.ecn_enabled, t.ecn);
    set_b(&mut out.clamp_target_rate, t.clamp_target_rate);
    set_b(&mut out.l2_back_to_zero, t.l2_back_to_zero);
    set_b(&mut out.rate_bound, t.rate_bound);
    set_b(&mut out.ack_milestone_fix, t.ack_milestone_fix);
    set_b(&mut out.nack_carries_cnp, t.nack_carries_cnp);
    set_b(&mut out.headroom_sum_quirk, t.headroom_sum_quirk);
    set_b(&mut out.withdraw_failed_ports, t.withdraw_failed_ports);
    // Our scenarios model the fabric as it should behave; the reference's quirks are opt-in.
    out.quirks = match &t.quirks {
        None => QuirkSet::NONE,
        Some(q) => {
            let text = match q.get_ref() {
                QuirksSec::Word(w) => w.clone(),
                QuirksSec::List(l) if l.is_empty() => "none".to_owned(),
                QuirksSec::List(l) => l.join(","),
            };
            QuirkSet::parse_list(&text)
                .map_err(|m| cx.err(q, "transport.quirks", ErrorKind::Value, m))?
        }
    };
    set_t(&mut out.alpha_resume_interval_ns, t.alpha_resume_interval);
    set_t(&mut out.rate_decrease_interval_ns, t.rate_decrease_interval);
    set_t(&mut out.rp_timer_ns, t.rp_timer);
    set_t(&mut out.pause_time_ns, t.pause_time);
    set_t(&mut out.l2_timeout_ns, t.l2_timeout);
    set_t(&mut out.nack_interval_ns, t.nack_interval);
    set_t(&mut out.irn_rto_low_ns, t.irn_rto_low);
    set_t(&mut out.irn_rto_high_ns, t.irn_rto_high);
    if let Some(b) = t.buffer {
        out.buffer_bytes = b.0;
    }
    if let Some(b) = t.irn_bdp {
        out.irn_bdp_bytes = b.0;
    }
    if let Some(r) = t.rate_ai {
        out.rate_ai_bps = r.0;
    }
    if let Some(r) = t.rate_hai {
        out.rate_hai_bps = r.0;
    }
    if let Some(r) = t.min_rate {
        out.min_rate_bps = r.0;
    }
    if let Some(v) = t.fast_recovery_times {
        out.fast_recovery_times = v;
    }
    if let Some(v) = t.ack_interval_packets {
        out.ack_interval_packets = v;
    }
    if let Some(v) = t.irn_ooo_threshold {
        out.irn_ooo_threshold = v;
    }
    if let Some(b) = t.l2_chunk {
        out.l2_chunk_bytes = u32::try_from(b.0).unwrap_or(u32::MAX);
    }
    if let Some(g) = &t.ewma_gain {
        let v = *g.get_ref();
        if !(v > 0.0 && v <= 1.0) {
            return Err(cx.err(
                g,
                "transport.ewma_gain",
                ErrorKind::Value,
                format!("must be in (0, 1], got {v}"),
            ));
        }
        out.ewma_gain = v;
    }
    if let Some(g) = &t.rate_on_first_cnp {
        let v = *g.get_ref();
        if !(v > 0.0 && v <= 1.0) {
            return Err(cx.err(
                g,
                "transport.rate_on_first_cnp",
                ErrorKind::Value,
                format!("must be in (0, 1], got {v}"),
            ));
        }
        out.rate_on_first_cnp = v;
    }
    if let Some(p) = &t.payload {
        let v = p.get_ref().0;
        if v == 0 || v > 9000 {
            return Err(cx.err(
                p,
                "transport.payload",
                ErrorKind::Value,
                format!("must be in 1..=9000 bytes, got {v}"),
            ));
        }
        out.payload_bytes = u32::try_from(v).unwrap_or(1000);
    }
    if out.buffer_bytes == 0 {
        return Err(ScenarioError::file(
            cx.file,
            "transport.buffer",
            ErrorKind::Value,
            "must be positive",
        ));
    }
    if let Some(e) = &t.ecn_thresholds {
        let mut entries = Vec::new();
        for x in e.get_ref() {
            if !(0.0..=1.0).contains(&x.pmax) || x.kmin.0 > x.kmax.0 {
                return Err(cx.err(
                    e,
                    "transport.ecn_thresholds",
                    ErrorKind::Value,
                    "need kmin <= kmax and pmax in [0, 1]",
                ));
            }
            if entries.iter().any(|en: &EcnEntry| en.rate_bps == x.rate.0) {
                return Err(cx.err(
                    e,
                    "transport.ecn_thresholds",
                    ErrorKind::Duplicate,
                    "a rate is listed twice",
                ));
            }
            entries.push(EcnEntry {
                rate_bps: x.rate.0,
                kmin_bytes: x.kmin.0,
                kmax_bytes: x.kmax.0,
                pmax: x.pmax,
            });
        }
        out.ecn = entries;
    }
    Ok(out)
}
