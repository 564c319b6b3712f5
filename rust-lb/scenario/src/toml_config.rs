//! rdma-lb's own TOML scenario files.
//!
//! ```toml
//! [topology]                       # exactly one of conweave_file / htsim_topo / simai_file /
//!                                  # leaf_spine
//! conweave_file = "../data/conweave/config/leaf_spine_128_100G_OS2.txt"
//! htsim_topo = "fat_tree_128_1os.topo"   # the UEC htsim's .topo (crate::htsim): hosts 0..Nodes,
//! #   then ToRs, aggregation, core switches; with kind = "uet", htsim's [transport.uet] defaults
//! htsim_failed = 1                 # with htsim_topo (uet): htsim_uec's -failed N, the links it
//! #   degrades at 0.25 x speed, queue and ECN (2 tiers: every leaf <-> spines 0..N-1, both ways;
//! #   3 tiers: core -> aggregation where l + agg x aggs-per-pod < N); 0 = none
//! simai_file = "Spectrum-X_8g_8gps_400Gbps_H100"   # a SimAI topology (crate::simai::fabric):
//! #   SimAI's node ids, then an NVLink-side host per GPU (node_count + rank); single-ToR only
//! leaf_spine = { leaves = 8, hosts_per_leaf = 16, spines = 8, host_rate = "100Gbps",
//!                fabric_rate = "100Gbps", delay = "1us" }   # fabric_rate defaults to host_rate
//! link_rates = [ { a = 128, b = 136, rate = "40Gbps" } ]    # per-link rate overrides;
//! #   one_way = true: only a's port towards b sends at `rate`; scale_queue = true (uet): the
//! #   port's queue limit and ECN thresholds scale by rate / the link's (htsim's -failed)
//! link_faults = [ { at = "1ms", a = 128, b = 136 },          # down at 1 ms, for good
//!                 { at = "1ms", up = "3ms", a = 129, b = 137 }, # down at 1 ms, up at 3 ms
//!                 { at = "2ms", switch = 136, port = 3, up = "4ms" },  # a switch loses a port
//!                 { at = "9ms", a = 128, b = 136, down = false },      # back up
//!                 { at = "0ns", a = 160, b = 192, one_way = true } ]   # only 160 -> 192
//! #   one_way = true: only a's (or the switch's) sending direction drops, silently (a black
//! #   hole: no switch is told); per direction, faults alternate down, up
//!
//! [workload]                       # any combination; at least one
//! flow_file = "flows.txt"          # ConWeave flow file
//! htsim_cm = "perm.cm"             # the UEC htsim's connection matrix (host i = the i-th host)
//! simai_file = "microAllReduce.txt" # one iteration of a SimAI workload (crate::simai::iteration;
//!                                  # needs [topology] simai_file): groups, NCCL rings, compute
//! simai_send_latency = "6us"       # per-flow send latency (SimAI's AS_SEND_LAT; default 6 ms,
//!                                  # its value when the variable is unset)
//! simai_comm_scale = 0.015625      # SimAI's comm_scale / compute_scale: every collective's
//! simai_compute_scale = 0.015625   # bytes / compute time times this, truncated (default 1)
//! simai_pxn = true                 # SimAI's AS_PXN_ENABLE=1: all-reduce / reduce-scatter ring
//!                                  # hops between servers relayed through the sender's peer on
//!                                  # the destination's rail (crate::simai::pxn; default false)
//! simai_nvls = true                # SimAI's AS_NVLS_ENABLE=1: a TP all-reduce of 8+ ranks on
//!                                  # H100 / H800 in one server goes through its NVSwitch
//!                                  # (crate::simai::nvls; default false)
//! poisson = { cdf = "AliStorage2019.txt", load = 0.25, duration = "10ms", start = "0ns",
//!             seed = 7, pg = 3 }   # seed defaults to one derived from [run] seed
//! [[workload.collective]]
//! kind = "allreduce-ring"          # | "allgather-ring" | "reducescatter-ring" | "alltoall" |
//!                                  # "alltoall-pairwise" | "permutation" | "incast"
//! ranks = 16
//! groups = 16                      # default 1
//! placement = "one-per-tor"        # | "consecutive" (default)
//! size = "16MiB"                   # per-rank message size
//! start = "0ns"
//! in_order = false                 # ring kinds: a rank's steps leave in order (true), as
//!                                  # one connection per ring neighbour carries them
//!
//! [transport]                      # every key optional; defaults = ConWeave run.py values
//! simai_conf = "SimAI.conf"        # SimAI's config file as the base (crate::simai::conf: every
//!                                  # key honoured, noted or refused); the keys below override
//!                                  # it; also its LINK_DOWN, ERROR_RATE_PER_LINK, PFC trace, and
//!                                  # a never-marking ECN entry per NVLink rate its maps lack
//! kind = "roce"                    # | "uet": REPS's Ultra-Ethernet-style transport (4 KiB
//!                                  # packets, ECN-driven window, SACK, trimming); PFC off
//! recovery = "gbn"                 # | "irn" | "nic-sr"
//! cc = "dcqcn"                     # | "hpcc" | "timely" | "dctcp" | "none"
//! window = true                    # HAS_WIN (+ var_win = VAR_WIN); default: on for hpcc and
//!                                  # dctcp (run.py's rule), off otherwise
//! # HPCC: u_target, ...; DCTCP: dctcp_rate_ai; HPCC's additive step and TIMELY's steps are
//! # rate_ai / rate_hai
//! pfc = true
//! buffer = "9MiB"
//! ecn_thresholds = [ { rate = "100Gbps", kmin = "100KB", kmax = "400KB", pmax = 0.2 } ]
//! # every other key: a `toml` clause of the table of transport parameters
//! # (crate::transport_params), with its unit and default
//! quirks = []                      # reference behaviours to reproduce: "all", "none" or a
//!                                  # list of flow-ports, time-truncation, pacing-wakeup,
//!                                  # irn-sender, ecn-shared-stream, event-order,
//!                                  # glibc-rand (ConWeave configs: all; with
//!                                  # simai_conf: flow-ports and time-truncation, SimAI's
//!                                  # ports and times)
//! roce_header = "48B"              # a RoCE data packet's headers (with simai_conf: 52B,
//!                                  # SimAI's 64-bit sequence number)
//!
//! [transport.uet]                  # only with kind = "uet"; 0 = derived from the fabric
//!                                  # (with htsim_topo: keys left out take htsim's defaults,
//!                                  # crate::htsim: nscc, trimming, queue, ECN, base_rtt, rto,
//!                                  # switch_hash = "htsim", queue_release = "end",
//!                                  # trim_newest_probability = 0.5, nscc_feedback = "htsim",
//!                                  # inflight = "received-bytes", tx_time = "ps",
//!                                  # control_turns = 10)
//! payload = 4086                   # header = 64; trimming = false; queue_packets = 101;
//!                                  # ecn_kmin_packets = 25; ecn_kmax_packets = 76;
//!                                  # initial_window_packets = 151; max_window_bdp = 1.5;
//!                                  # base_rtt = "8337ns"; rto = "41us";
//!                                  # sizing_rate = "400Gbps" (the rate the derived values
//!                                  # are sized for: default the largest pair bottleneck,
//!                                  # on a SimAI topology its NICs' rate);
//!                                  # switch_hash = "five-tuple" | "htsim" (the REPS
//!                                  # authors' switches; host algorithms only);
//!                                  # queue_release = "start" | "end" (htsim's queue:
//!                                  # the packet in service counts, ECN at its end);
//!                                  # trim_newest_probability = 0.5 (htsim's queue:
//!                                  # full, it trims its newest packet on that coin);
//!                                  # tx_time = "ns" | "ps" (htsim's ps serialization,
//!                                  # the fraction carried); control_turns = 10 (htsim's
//!                                  # NIC: data every 11th turn when control waits too)
//! cc = "mprdma"                    # | "nscc" | "rccc" | "nscc+rccc" (model::UetCc);
//!                                  # nscc_target_delay = "0ns" (derived); nscc_qa_gate = 3;
//!                                  # nscc_feedback = "every-ack" | "htsim" (its
//!                                  # processAck's RTT samples and NACK bytes);
//!                                  # inflight = "named-packets" | "received-bytes"
//!                                  # (htsim's: the receiver's byte count in each ACK);
//!                                  # rccc_pull_rate = 0.99; rccc_credit_per_pull = 16384
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
//! failed_link_drops = true         # failed_drops.csv: per flow, data packets lost on down
//!                                  # links: count, first and last loss, resends among them;
//!                                  # probes lost, apart (default off)
//! rtt_histogram_ns = 500           # rtt_hist.csv: uet senders' per-packet RTTs in bins of
//!                                  # this width (default off; needs kind = "uet")
//! port_bytes = true                # port_bytes.csv: bytes sent on every switch-to-switch
//!                                  # port at the end, every tier (default off)
//! ```
//! Unknown keys anywhere are errors (`deny_unknown_fields`). Quantities are strings with
//! units (`"100Gbps"`, `"1us"`, `"10ms"`, `"9MiB"`; sizes may also be plain integers of
//! bytes). Errors name `file:line: section.key: message` (the line comes from the TOML
//! parser's span). Relative paths resolve against the TOML file's directory, then the
//! current directory.
//!
//! Flow ids: flow-file flows first, then connection-matrix flows, then Poisson flows, then each
//! collective in order.
//! `flowgen_stop_ns` = end of the Poisson window, or the latest flow start if later.
//!
//! One module per section: `topology` (with `link_faults`), `workload`, `transport`, and `run`
//! (`[lb]` and `[run]`); `quantity` reads quantities with units and `context` locates errors.

mod context;
mod link_faults;
pub(crate) mod quantity;
mod run;
mod topology;
mod transport;
mod workload;

use std::path::Path;

use serde::Deserialize;

pub use quantity::{Bytes, Rate, Time};
pub use workload::MAX_FLOWS;

use context::{key_at, line_of, Cx};
use run::{LbSec, RunSec};
use topology::TopologySec;
use transport::TransportSec;
use workload::WorkloadSec;

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::model::Scenario;
use crate::overrides::Overrides;

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
    let topology::Built {
        mut topology,
        htsim,
        simai,
    } = topology::topology(&cx, &f.topology)?;
    let mut link_events = link_faults::link_events(&cx, &topology, &f.topology.link_faults)?;
    let (mut transport, simai_conf) = transport::transport(&cx, &f.transport, htsim.as_ref())?;
    if let Some(c) = &simai_conf {
        transport::apply_simai_conf(
            &cx,
            &f.transport,
            c,
            simai.as_ref(),
            &mut topology,
            &mut transport,
            &mut link_events,
        )?;
    }
    if let Some(f) = &simai {
        transport::simai_uet_sizing(f, &mut transport);
    }
    topology::check_queue_scaling(&cx, &f.topology, &transport)?;
    let run_start_ns = run::start_ns(&f.run);
    let quirks = o.quirks.unwrap_or(transport.quirks);
    let workload = workload::workload(
        &cx,
        &f.workload,
        &topology,
        simai.as_ref(),
        quirks,
        o,
        seed,
        run_start_ns,
    )?;
    if let Some(fabric) = &simai {
        topology.endpoint_switch_ids = fabric.endpoint_nvswitches(&workload.flows);
    }
    let (lb, lb_line) = run::lb(&cx, f.lb.as_ref());
    let run = run::run(
        &cx,
        &f.run,
        seed,
        run_start_ns,
        workload.gen_end_ns,
        workload.load,
        link_events,
    )?;
    run::check_rtt_histogram(&cx, &f.run, !transport.kind.is_roce())?;
    let mut run = run;
    let mut notes = workload.notes;
    if let Some(c) = simai_conf {
        run.pfc_trace |= c.pfc_trace;
        notes.extend(c.notes);
    }
    let htsim_inputs = htsim.is_some() && transport.kind == crate::model::TransportKind::Uet;
    let name = path.file_stem().map_or_else(
        || "scenario".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    Ok((
        Scenario {
            name,
            config_path: file.clone(),
            topology,
            flows: workload.flows,
            collectives: workload.collectives,
            transport,
            lb,
            run,
            notes,
            simai_report: workload.simai_report,
            htsim_inputs,
        },
        lb_line,
    ))
}
