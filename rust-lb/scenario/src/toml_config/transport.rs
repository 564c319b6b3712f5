//! `[transport]` of a TOML scenario: the transport kind (RoCE, or the UET-style transport of
//! `[transport.uet]`), loss recovery, congestion control and its parameters, the switches'
//! PFC, ECN and buffer settings, and the reference simulator's quirks to reproduce. Every key
//! is optional; the defaults are ConWeave's `run.py` values (`Transport::default`).

use serde::Deserialize;
use toml::Spanned;

use super::context::Cx;
use super::quantity::{Bytes, Rate, Time};
use crate::error::{ErrorKind, Result, ScenarioError};
use crate::model::{Cc, EcnEntry, QuirkSet, Recovery, SwitchHash, Transport, TransportKind};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EcnSec {
    pub(super) rate: Rate,
    pub(super) kmin: Bytes,
    pub(super) kmax: Bytes,
    pub(super) pmax: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) enum RecoverySec {
    Gbn,
    Irn,
    NicSr,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) enum CcSec {
    Dcqcn,
    Hpcc,
    Timely,
    Dctcp,
    None,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) enum KindSec {
    Roce,
    Uet,
}

/// `[transport.uet]`: the UET transport's parameters (model::UetParams; 0 = derived).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UetSec {
    pub(super) payload: Option<Spanned<Bytes>>,
    pub(super) header: Option<Spanned<Bytes>>,
    pub(super) trimming: Option<bool>,
    pub(super) queue_packets: Option<u32>,
    pub(super) ecn_kmin_packets: Option<u32>,
    pub(super) ecn_kmax_packets: Option<u32>,
    pub(super) initial_window_packets: Option<u32>,
    pub(super) max_window_bdp: Option<Spanned<f64>>,
    pub(super) base_rtt: Option<Time>,
    pub(super) rto: Option<Time>,
    pub(super) switch_hash: Option<SwitchHashSec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) enum SwitchHashSec {
    FiveTuple,
    Htsim,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TransportSec {
    pub(super) kind: Option<KindSec>,
    pub(super) uet: Option<Spanned<UetSec>>,
    pub(super) recovery: Option<RecoverySec>,
    pub(super) cc: Option<CcSec>,
    pub(super) window: Option<bool>,
    pub(super) var_win: Option<bool>,
    pub(super) u_target: Option<Spanned<f64>>,
    pub(super) mi_thresh: Option<u32>,
    pub(super) fast_react: Option<bool>,
    pub(super) multi_rate: Option<bool>,
    pub(super) sample_feedback: Option<bool>,
    pub(super) int_multi: Option<Spanned<u32>>,
    pub(super) dctcp_rate_ai: Option<Rate>,
    pub(super) pfc: Option<bool>,
    pub(super) ecn: Option<bool>,
    pub(super) buffer: Option<Bytes>,
    pub(super) ecn_thresholds: Option<Spanned<Vec<EcnSec>>>,
    pub(super) alpha_resume_interval: Option<Time>,
    pub(super) rate_decrease_interval: Option<Time>,
    pub(super) rp_timer: Option<Time>,
    pub(super) fast_recovery_times: Option<u32>,
    pub(super) ewma_gain: Option<Spanned<f64>>,
    pub(super) rate_ai: Option<Rate>,
    pub(super) rate_hai: Option<Rate>,
    pub(super) min_rate: Option<Rate>,
    pub(super) clamp_target_rate: Option<bool>,
    pub(super) rate_on_first_cnp: Option<Spanned<f64>>,
    pub(super) ack_interval_packets: Option<u32>,
    l2_chunk: Option<Bytes>,
    l2_back_to_zero: Option<bool>,
    pub(super) rate_bound: Option<bool>,
    pub(super) payload: Option<Spanned<Bytes>>,
    pub(super) pause_time: Option<Time>,
    l2_timeout: Option<Time>,
    pub(super) nack_interval: Option<Time>,
    pub(super) irn_rto_low: Option<Time>,
    pub(super) irn_rto_high: Option<Time>,
    pub(super) irn_bdp: Option<Bytes>,
    pub(super) irn_ooo_threshold: Option<u32>,
    pub(super) ack_milestone_fix: Option<bool>,
    pub(super) nack_carries_cnp: Option<bool>,
    pub(super) headroom_sum_quirk: Option<bool>,
    pub(super) withdraw_failed_ports: Option<bool>,
    pub(super) quirks: Option<Spanned<QuirksSec>>,
}

/// `quirks = "all"` / `"none"` / `["flow-ports", ...]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum QuirksSec {
    Word(String),
    List(Vec<String>),
}

/// The transport `[transport]` describes.
pub(super) fn transport(cx: &Cx<'_>, t: &TransportSec) -> Result<Transport> {
    let mut out = Transport::default();
    kind(cx, t, &mut out)?;
    congestion_control(cx, t, &mut out)?;
    switch_flags_and_quirks(cx, t, &mut out)?;
    timers_rates_and_sizes(cx, t, &mut out)?;
    buffer_and_ecn(cx, t, &mut out)?;
    Ok(out)
}

/// `*dst = v` if the key is given.
fn set_b(dst: &mut bool, v: Option<bool>) {
    if let Some(v) = v {
        *dst = v;
    }
}

/// `*dst = v` in ns if the key is given.
fn set_t(dst: &mut u64, v: Option<Time>) {
    if let Some(v) = v {
        *dst = v.0;
    }
}

/// `kind` and `[transport.uet]` (kind UET: lossy, PFC off, the window is the CC).
fn kind(cx: &Cx<'_>, t: &TransportSec, out: &mut Transport) -> Result<()> {
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
        uet_params(cx, u, out)?;
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
    Ok(())
}

/// `recovery`, `cc`, the window (`window`, `var_win`; by default on for HPCC and DCTCP, as
/// `run.py`) and the CC parameters.
fn congestion_control(cx: &Cx<'_>, t: &TransportSec, out: &mut Transport) -> Result<()> {
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
    Ok(())
}

/// The on/off switches (`pfc`, `ecn`, ...) and `quirks`.
fn switch_flags_and_quirks(cx: &Cx<'_>, t: &TransportSec, out: &mut Transport) -> Result<()> {
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
    Ok(())
}

/// Timers, rates, sizes, gains and `payload`.
fn timers_rates_and_sizes(cx: &Cx<'_>, t: &TransportSec, out: &mut Transport) -> Result<()> {
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
    Ok(())
}

/// `buffer` (must be positive) and `ecn_thresholds` (per port rate, no rate twice).
fn buffer_and_ecn(cx: &Cx<'_>, t: &TransportSec, out: &mut Transport) -> Result<()> {
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
    Ok(())
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
