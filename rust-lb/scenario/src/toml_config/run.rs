//! `[lb]` and `[run]` of a TOML scenario: the load-balancing scheme's name and parameters
//! (validated later, with the whole scenario, by `rdma_lb_core::config::LbConfig::parse`) and
//! the run's seed, flow-generation window, hard stop, output directory and traces.

use serde::Deserialize;
use toml::Spanned;

use super::context::{line_of, Cx};
use super::quantity::Time;
use crate::error::{ErrorKind, Result};
use crate::model::{LbSpec, LinkEvent, RunSpec};

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum ParamsSec {
    Text(String),
    Table(toml::Table),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LbSec {
    pub(super) name: Spanned<String>,
    pub(super) params: Option<ParamsSec>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RunSec {
    pub(super) seed: Option<u64>,
    pub(super) start: Option<Time>,
    pub(super) stop: Option<Spanned<Time>>,
    pub(super) out: Option<String>,
    pub(super) monitor_interval: Option<Time>,
    pub(super) pfc_trace: Option<bool>,
    pub(super) queue_trace: Option<bool>,
    pub(super) rate_trace: Option<Time>,
    pub(super) failed_link_drops: Option<bool>,
    pub(super) rtt_histogram_ns: Option<Spanned<u64>>,
    pub(super) port_bytes: Option<bool>,
}

/// `[lb]`: the scheme and its parameters as one `k = v, ...` text (a table's entries in
/// order), with the line of `name`; `ecmp` at line 0 without the section.
pub(super) fn lb(cx: &Cx<'_>, lb: Option<&LbSec>) -> (LbSpec, usize) {
    match lb {
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
                line_of(cx.text, l.name.span().start),
            )
        }
    }
}

/// `[run] start`: the start of flow generation (and of the measurement window), 0 by default.
pub(super) fn start_ns(sec: &RunSec) -> u64 {
    sec.start.map_or(0, |t| t.0)
}

/// `[run]`: the run's settings; the hard stop defaults to 10 s after `gen_end_ns`, the end of
/// flow generation.
pub(super) fn run(
    cx: &Cx<'_>,
    sec: &RunSec,
    seed: u64,
    run_start_ns: u64,
    gen_end_ns: u64,
    load: f64,
    link_events: Vec<LinkEvent>,
) -> Result<RunSpec> {
    let hard_stop_ns = match &sec.stop {
        Some(s) => {
            if s.get_ref().0 == 0 {
                return Err(cx.err(s, "run.stop", ErrorKind::Value, "must be positive"));
            }
            s.get_ref().0
        }
        None => gen_end_ns.saturating_add(10_000_000_000),
    };
    let rtt_histogram_ns = match &sec.rtt_histogram_ns {
        Some(w) if *w.get_ref() == 0 => {
            return Err(cx.err(
                w,
                "run.rtt_histogram_ns",
                ErrorKind::Value,
                "the bin width must be positive (leave the key out for no histogram)",
            ))
        }
        Some(w) => *w.get_ref(),
        None => 0,
    };
    Ok(RunSpec {
        seed,
        flowgen_start_ns: run_start_ns,
        flowgen_stop_ns: gen_end_ns,
        hard_stop_ns,
        monitor_interval_ns: sec.monitor_interval.map_or(10_000, |t| t.0.max(1)),
        link_events,
        out_dir: sec.out.clone().unwrap_or_default(),
        pfc_trace: sec.pfc_trace.unwrap_or(false),
        queue_trace: sec.queue_trace.unwrap_or(false),
        rate_trace_ns: sec.rate_trace.map_or(0, |t| t.0.max(1)),
        failed_link_drops: sec.failed_link_drops.unwrap_or(false),
        rtt_histogram_ns,
        port_bytes: sec.port_bytes.unwrap_or(false),
        load,
    })
}

/// `[run] rtt_histogram_ns` needs the uet transport (its senders measure the RTTs).
pub(super) fn check_rtt_histogram(cx: &Cx<'_>, sec: &RunSec, transport_is_uet: bool) -> Result<()> {
    match &sec.rtt_histogram_ns {
        Some(w) if !transport_is_uet => Err(cx.err(
            w,
            "run.rtt_histogram_ns",
            ErrorKind::Value,
            "the RTT histogram is measured by the uet senders: needs [transport] kind = \"uet\"",
        )),
        _ => Ok(()),
    }
}
