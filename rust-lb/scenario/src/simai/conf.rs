//! SimAI's network configuration, `SimAI.conf` (`SimAI_simulator -c FILE`), read by `ReadConf`
//! in `astra-sim-alibabacloud/astra-sim/network_frontend/ns3/common.h` (lines 460-666): one key
//! per line followed by its value(s), whitespace-separated.
//!
//! SimAI's ns-3 backend descends from the HPCC simulator, like ConWeave's, so most keys are
//! ConWeave-config keys with the same meaning: those are read by [`crate::conweave`]'s own code
//! (its `Line` parsers, the `conweave "KEY"` clauses of [`crate::transport_params`] and its
//! cross-key checks), not by a copy. Every key SimAI reads is **honoured** (mapped into
//! [`SimAiConf`]), **noted** (accepted; one line `file:line: KEY: why` in
//! [`SimAiConf::notes`]) or **refused** (an error naming `file:line: KEY` and why). Unknown keys
//! are errors (SimAI skips them silently), and so are the ConWeave keys SimAI does not read.
//!
//! | Key | Decision |
//! |---|---|
//! | `ENABLE_QCN`, `CLAMP_TARGET_RATE`, `PAUSE_TIME`, `PACKET_PAYLOAD_SIZE`, `L2_CHUNK_SIZE`, `L2_ACK_INTERVAL`, `ALPHA_RESUME_INTERVAL`, `RATE_DECREASE_INTERVAL`, `RP_TIMER`, `EWMA_GAIN`, `FAST_RECOVERY_TIMES`, `RATE_AI`, `RATE_HAI`, `MIN_RATE`, `DCTCP_RATE_AI`, `FAST_REACT`, `U_TARGET`, `MI_THRESH`, `INT_MULTI`, `MULTI_RATE`, `SAMPLE_FEEDBACK`, `RATE_BOUND`, `BUFFER_SIZE` (MiB; SimAI also sizes NVSwitch buffers with it) | honoured: the transport parameter, as in a ConWeave config |
//! | `L2_BACK_TO_ZERO` | honoured: 0; 1 refused (not modelled, the table row's check) |
//! | `CC_MODE` | honoured: 1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP; 10 (HPCC-PINT) refused: not modelled |
//! | `HAS_WIN`, `VAR_WIN` | honoured (absent: SimAI's defaults 1 and 0) |
//! | `USE_DYNAMIC_PFC_THRESHOLD` | honoured: 1; 0 noted (no effect, as in the reference) |
//! | `KMAX_MAP`, `KMIN_MAP`, `PMAX_MAP` | honoured: `transport.ecn` (all three or none) |
//! | `ERROR_RATE_PER_LINK` | honoured: `error_rate_per_link` if > 0 |
//! | `LINK_DOWN t_us a b` | honoured: link a–b down at 2 s + t µs (SimAI's rule, common.h:1029-1033); `0 0 0` = none; given once (SimAI keeps only the last) |
//! | `PFC_OUTPUT_FILE` | honoured: PFC trace on (`pfc.txt` in the output directory) |
//! | `FCT_OUTPUT_FILE` | noted: `fct.txt` is written to the output directory instead |
//! | `DATA_RATE`, `LINK_DELAY` | noted: unused (as in SimAI) |
//! | `FLOW_FILE` | noted: SimAI reads only its flow count; traffic comes from the workload |
//! | `TRACE_FILE`, `TRACE_OUTPUT_FILE`, `ENABLE_TRACE` | noted: the packet trace is not produced |
//! | `SIMULATOR_STOP_TIME` (s) | noted: SimAI's main stops at 2e9 s regardless; the run ends with the workload |
//! | `GLOBAL_T` | noted: SimAI overwrites it with 1 after reading (common.h:565-567), one BDP for all pairs, as rdma-lb |
//! | `PINT_LOG_BASE`, `PINT_PROB` | noted: only used by CC_MODE 10 (HPCC-PINT, refused) |
//! | `ACK_HIGH_PRIO` | honoured: `ack_high_prio` (1: ACKs/NACKs in the switches' highest-priority queue, as the ConWeave reference; 0, its example's: in their flow's data queue, through the MMU; hosts send ACKs first either way, as SimAI's) |
//! | `NIC_TOTAL_PAUSE_TIME` | noted: 0 (SimAI's default); other values refused: not modelled |
//! | `QLEN_MON_FILE`, `BW_MON_FILE`, `RATE_MON_FILE`, `CNP_MON_FILE`, `MON_START`, `MON_END`, `QP_MON_INTERVAL`, `BW_MON_INTERVAL`, `QLEN_MON_INTERVAL` | noted: inert in SimAI (`schedule_monitor` is never called); value checked |
//! | `TOPOLOGY_FILE`, `ENABLE_PFC`, `ENABLE_IRN`, `LB_MODE`, `LB_PARAMS`, `CONWEAVE_*`, `FLOWGEN_*`, `SW_MONITORING_INTERVAL`, `LOAD`, `RANDOM_SEED`, `QLEN_MON_START`, `QLEN_MON_END`, ConWeave's other output/monitor files | refused: ConWeave keys SimAI does not read (it would ignore them) |
//!
//! Totals: 35 keys honoured, 21 noted, the ConWeave-only keys refused (and the values above).
//!
//! A TOML scenario reads it with `[transport] simai_conf = "SimAI.conf"`
//! (`crate::toml_config`): [`SimAiConf::transport`] is the base of `[transport]` (its other keys
//! override it), the link events, error rate and PFC trace apply to the run, the notes are the
//! run's, each NVLink rate the ECN maps lack gets thresholds at the buffer size (SimAI's
//! NVSwitch ports mark nothing), a RoCE data packet has SimAI's 52 B of headers (its 64-bit
//! sequence number; `roce_header` overrides it), and the quirks default to SimAI's behaviour,
//! `flow-ports` (its UDP ports) and `time-truncation` (its serialization and pacing times
//! truncate to whole nanoseconds, in integers under a SimAI workload: `Seconds(bits) / rate`);
//! `quirks = "none"` gives the fixes.
//!
//! SimAI-specific settings that are *not* `SimAI.conf` keys: NVLink and NVSwitch bandwidths,
//! latencies and the GPU type come from the topology file ([`super::topology`]); NVLS/PXN and
//! the send latency from environment variables (`AS_NVLS_ENABLE`, `AS_PXN_ENABLE`,
//! `AS_SEND_LAT`, ...), which this parser does not read.
//!
//! Absent keys take SimAI's defaults (common.h:51-108) where those are usable (`ALPHA_RESUME_
//! INTERVAL` 55 µs, `FAST_RECOVERY_TIMES` 5, `MI_THRESH` 5, `FAST_REACT` 1, `MULTI_RATE` 1,
//! `BUFFER_SIZE` 16, `HAS_WIN` 1, `VAR_WIN` 0; the others equal rdma-lb's). Where SimAI's default
//! is degenerate (`EWMA_GAIN` = integer `1/16` = 0, `RP_TIMER` uninitialised, `RATE_AI` and
//! `RATE_HAI` empty, `L2_CHUNK_SIZE` and `L2_ACK_INTERVAL` 0, the ECN maps empty) rdma-lb's
//! default is kept and a note says so. A key given twice is an error. Blank lines and `#`
//! comments are allowed.

use std::collections::HashMap;
use std::path::Path;

use crate::conweave::{Line, Settings};
use crate::error::{ErrorKind, Result};
use crate::model::{LinkEvent, Transport};
use crate::text::{numbered_lines, read_file};

/// A parsed `SimAI.conf`.
#[derive(Debug, Clone, PartialEq)]
pub struct SimAiConf {
    /// The file's name as used in messages.
    pub file: String,
    /// Transport settings (recovery Go-Back-N: SimAI has no IRN).
    pub transport: Transport,
    /// `LINK_DOWN`, if not `0 0 0`: the link going down at 2 s + t µs.
    pub link_events: Vec<LinkEvent>,
    /// The line of `LINK_DOWN` (0 if absent), for messages about its link.
    pub link_down_line: usize,
    /// `PFC_OUTPUT_FILE` given: write the PFC trace.
    pub pfc_trace: bool,
    /// `ERROR_RATE_PER_LINK` if > 0 (for links whose own error rate is 0).
    pub error_rate_per_link: Option<f64>,
    /// Accepted-but-not-modelled keys, one message each (`file:line: KEY: ...`).
    pub notes: Vec<String>,
}

/// The keys read by [`crate::conweave`]'s code with the same meaning.
const SHARED: &[&str] = &[
    "ENABLE_QCN",
    "USE_DYNAMIC_PFC_THRESHOLD",
    "CLAMP_TARGET_RATE",
    "PAUSE_TIME",
    "DATA_RATE",
    "LINK_DELAY",
    "PACKET_PAYLOAD_SIZE",
    "L2_CHUNK_SIZE",
    "L2_ACK_INTERVAL",
    "L2_BACK_TO_ZERO",
    "FCT_OUTPUT_FILE",
    "PFC_OUTPUT_FILE",
    "CC_MODE",
    "ALPHA_RESUME_INTERVAL",
    "RATE_DECREASE_INTERVAL",
    "RP_TIMER",
    "EWMA_GAIN",
    "FAST_RECOVERY_TIMES",
    "RATE_AI",
    "RATE_HAI",
    "MIN_RATE",
    "DCTCP_RATE_AI",
    "ERROR_RATE_PER_LINK",
    "HAS_WIN",
    "VAR_WIN",
    "FAST_REACT",
    "U_TARGET",
    "MI_THRESH",
    "INT_MULTI",
    "MULTI_RATE",
    "SAMPLE_FEEDBACK",
    "RATE_BOUND",
    "LINK_DOWN",
    "KMAX_MAP",
    "KMIN_MAP",
    "PMAX_MAP",
    "BUFFER_SIZE",
];

/// Monitor keys: inert in SimAI (`schedule_monitor` is never called).
const MONITOR_FILES: &[&str] = &[
    "QLEN_MON_FILE",
    "BW_MON_FILE",
    "RATE_MON_FILE",
    "CNP_MON_FILE",
];
const MONITOR_NUMBERS: &[&str] = &[
    "MON_START",
    "MON_END",
    "QP_MON_INTERVAL",
    "BW_MON_INTERVAL",
    "QLEN_MON_INTERVAL",
];

/// Keys whose SimAI default is degenerate: rdma-lb's default is kept when they are absent.
const DEGENERATE_DEFAULTS: &[(&str, &str)] = &[
    ("EWMA_GAIN", "integer 1/16 = 0"),
    ("RP_TIMER", "uninitialised"),
    ("RATE_AI", "empty"),
    ("RATE_HAI", "empty"),
    ("L2_CHUNK_SIZE", "0"),
    ("L2_ACK_INTERVAL", "0"),
    ("KMAX_MAP", "empty"),
    ("KMIN_MAP", "empty"),
    ("PMAX_MAP", "empty"),
];

/// Reads and parses a `SimAI.conf`.
///
/// # Errors
/// I/O errors and everything [`parse_conf_str`] reports.
pub fn parse_conf_file(path: &Path) -> Result<SimAiConf> {
    let text = read_file(path, "SimAI.conf")?;
    parse_conf_str(&path.display().to_string(), &text)
}

/// Parses `SimAI.conf` text (no file access); `name` is used in messages.
///
/// # Errors
/// Unknown, refused or repeated keys and bad values; see the module documentation.
pub fn parse_conf_str(name: &str, text: &str) -> Result<SimAiConf> {
    let mut s = Settings::new();
    // SimAI's defaults where they differ from rdma-lb's and are usable.
    s.t.alpha_resume_interval_ns = 55_000;
    s.t.fast_recovery_times = 5;
    s.t.mi_thresh = 5;
    s.t.fast_react = true;
    s.t.multi_rate = true;
    s.t.buffer_bytes = 16 << 20;
    // SimAI's data packets carry a 64-bit sequence number: 52 B of headers, not 48.
    s.t.roce_header_bytes = 52;
    s.has_win = Some(true);
    s.var_win = Some(false);
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (ln, raw) in numbered_lines(text, true) {
        let mut toks = raw.split_whitespace();
        let Some(key) = toks.next() else { continue };
        let l = Line {
            file: name,
            ln,
            key,
            vals: toks.collect(),
        };
        if let Some(first) = seen.insert(key, ln) {
            return Err(l.err(
                ErrorKind::Duplicate,
                format!("given twice (first on line {first}; SimAI would keep the last)"),
            ));
        }
        simai_key(&mut s, &l)?;
    }
    for (key, what) in DEGENERATE_DEFAULTS {
        if !seen.contains_key(key) {
            s.notes.push(format!(
                "{name}: {key}: absent; SimAI's default ({what}) is not usable, rdma-lb's default kept"
            ));
        }
    }
    s.finish_shared(name)?;
    // SimAI: link a-b down at 2 s + t (common.h:1029-1033); `Settings` counts from
    // FLOWGEN_START_TIME, which SimAI.conf does not set and defaults to 2 s.
    debug_assert_eq!(s.run.flowgen_start_ns, 2_000_000_000);
    Ok(SimAiConf {
        file: name.to_owned(),
        link_down_line: s.link_down.first().map_or(0, |&(ln, ..)| ln),
        transport: s.t,
        link_events: s.run.link_events,
        pfc_trace: s.run.pfc_trace,
        error_rate_per_link: s.error_rate_per_link,
        notes: s.notes,
    })
}

/// One line: a shared key through [`Settings::key`], else a SimAI-only key.
fn simai_key<'a>(s: &mut Settings<'a>, l: &Line<'a>) -> Result<()> {
    let key = l.key;
    if key == "CC_MODE" && l.int()? == 10 {
        return Err(l.err(
            ErrorKind::Unsupported,
            "10 (HPCC-PINT) is not modelled; use 1 (DCQCN), 3 (HPCC), 7 (TIMELY) or 8 (DCTCP)",
        ));
    }
    if SHARED.contains(&key) {
        let known = s.key(l)?;
        debug_assert!(known, "{key} is a ConWeave key");
        return Ok(());
    }
    let note = match key {
        "FLOW_FILE" => {
            l.one()?;
            "accepted; SimAI reads only its flow count, traffic comes from the workload"
        }
        "TRACE_FILE" | "TRACE_OUTPUT_FILE" => {
            l.one()?;
            "accepted; the packet trace is not produced"
        }
        "ENABLE_TRACE" => {
            l.int()?;
            "accepted; the packet trace is not produced"
        }
        "SIMULATOR_STOP_TIME" => {
            l.real()?;
            "accepted; unused (SimAI stops at 2e9 s regardless; the run ends with the workload)"
        }
        "GLOBAL_T" => {
            l.flag()?;
            "accepted; SimAI overwrites it with 1 (one BDP for all pairs), as rdma-lb models"
        }
        "PINT_LOG_BASE" | "PINT_PROB" => {
            l.real()?;
            "accepted; only used by CC_MODE 10 (HPCC-PINT), not modelled"
        }
        "ACK_HIGH_PRIO" => {
            s.t.ack_high_prio = l.flag()?;
            return Ok(());
        }
        "NIC_TOTAL_PAUSE_TIME" => {
            if l.int()? != 0 {
                return Err(l.err(
                    ErrorKind::Unsupported,
                    "a NIC pause-time budget is not modelled; only 0 (SimAI's default)",
                ));
            }
            "accepted; 0 is SimAI's default"
        }
        k if MONITOR_FILES.contains(&k) => {
            l.one()?;
            "accepted; inert in SimAI (its monitors are never scheduled), not produced"
        }
        k if MONITOR_NUMBERS.contains(&k) => {
            l.int()?;
            "accepted; inert in SimAI (its monitors are never scheduled)"
        }
        _ => {
            // `Ok(false)` from ConWeave's reader: a key it does not know either.
            return Err(if matches!(Settings::new().key(l), Ok(false)) {
                l.err(
                    ErrorKind::UnknownKey,
                    "unknown key (the keys of a SimAI.conf: `cargo doc -p rdma-lb-scenario`, module simai::conf)",
                )
            } else {
                l.err(
                    ErrorKind::Unsupported,
                    "a ConWeave key SimAI does not read (SimAI would ignore it); remove it",
                )
            });
        }
    };
    s.notes.push(l.note(note));
    Ok(())
}

#[cfg(test)]
mod tests;
