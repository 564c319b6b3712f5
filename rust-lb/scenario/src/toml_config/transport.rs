//! `[transport]` of a TOML scenario: the transport kind (RoCE, or the UET-style transport of
//! `[transport.uet]`), loss recovery, congestion control and its parameters, the switches'
//! PFC, ECN and buffer settings, and the reference simulator's quirks to reproduce. Every key
//! is optional; the defaults are ConWeave's `run.py` values (`Transport::default`), but with an
//! htsim topology file (`[topology] htsim_topo`) and `kind = "uet"` the `[transport.uet]` keys
//! left out take the UEC htsim's defaults for that topology (`crate::htsim`).

use serde::Deserialize;
use toml::Spanned;

use super::context::Cx;
use super::quantity::{Bytes, Rate, Time};
use crate::error::{ErrorKind, Result, ScenarioError};
use crate::htsim::{uet_defaults, HtsimTopo};
use crate::model::{
    Cc, EcnEntry, LinkEvent, Quirk, QuirkSet, Recovery, SwitchHash, Topology, Transport,
    TransportKind, UetAckRequest, UetCc, UetInflight, UetNsccFeedback, UetParams, UetQueueRelease,
    UetTxTime,
};
use crate::simai::{parse_conf_file, SimAiConf, SimAiFabric};
use crate::transport_params::uet::define_uet_toml_keys;
use crate::transport_params::{define_toml_keys, IntoField};

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

/// `[transport.uet] ack_request`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) enum UetAckRequestSec {
    Uec,
    Reps,
}

impl IntoField<UetAckRequest> for UetAckRequestSec {
    fn into_field(self) -> std::result::Result<UetAckRequest, String> {
        Ok(match self {
            UetAckRequestSec::Uec => UetAckRequest::Uec,
            UetAckRequestSec::Reps => UetAckRequest::Reps,
        })
    }
}

/// `[transport.uet] nscc_feedback`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) enum UetNsccFeedbackSec {
    EveryAck,
    Htsim,
}

impl IntoField<UetNsccFeedback> for UetNsccFeedbackSec {
    fn into_field(self) -> std::result::Result<UetNsccFeedback, String> {
        Ok(match self {
            UetNsccFeedbackSec::EveryAck => UetNsccFeedback::EveryAck,
            UetNsccFeedbackSec::Htsim => UetNsccFeedback::Htsim,
        })
    }
}

/// `[transport.uet] inflight`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) enum UetInflightSec {
    NamedPackets,
    ReceivedBytes,
}

impl IntoField<UetInflight> for UetInflightSec {
    fn into_field(self) -> std::result::Result<UetInflight, String> {
        Ok(match self {
            UetInflightSec::NamedPackets => UetInflight::NamedPackets,
            UetInflightSec::ReceivedBytes => UetInflight::ReceivedBytes,
        })
    }
}

/// `[transport.uet] queue_release`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) enum UetQueueReleaseSec {
    Start,
    End,
}

impl IntoField<UetQueueRelease> for UetQueueReleaseSec {
    fn into_field(self) -> std::result::Result<UetQueueRelease, String> {
        Ok(match self {
            UetQueueReleaseSec::Start => UetQueueRelease::Start,
            UetQueueReleaseSec::End => UetQueueRelease::End,
        })
    }
}

/// `[transport.uet] tx_time`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) enum UetTxTimeSec {
    Ns,
    Ps,
}

impl IntoField<UetTxTime> for UetTxTimeSec {
    fn into_field(self) -> std::result::Result<UetTxTime, String> {
        Ok(match self {
            UetTxTimeSec::Ns => UetTxTime::Ns,
            UetTxTimeSec::Ps => UetTxTime::Ps,
        })
    }
}

/// `[transport.uet] switch_hash`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) enum SwitchHashSec {
    FiveTuple,
    Htsim,
}

impl IntoField<SwitchHash> for SwitchHashSec {
    fn into_field(self) -> std::result::Result<SwitchHash, String> {
        Ok(match self {
            SwitchHashSec::FiveTuple => SwitchHash::FiveTuple,
            SwitchHashSec::Htsim => SwitchHash::Htsim,
        })
    }
}

/// `[transport.uet] cc`: a name of [`UetCc::name`].
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub(super) struct UetCcName(String);

impl IntoField<UetCc> for UetCcName {
    fn into_field(self) -> std::result::Result<UetCc, String> {
        UetCc::from_name(&self.0).ok_or_else(|| {
            let names: Vec<&str> = UetCc::ALL.iter().map(|c| c.name()).collect();
            format!("unknown {:?}, expected one of {}", self.0, names.join(", "))
        })
    }
}

// `UetSec` and `apply_uet_keys`: the keys of the uet table (`transport_params/uet.rs`).
crate::transport_params::uet::uet_params!(define_uet_toml_keys);

// `TransportSec` and `apply_table_keys`: the keys of the table of transport parameters.
crate::transport_params::transport_params!(define_toml_keys);

/// `quirks = "all"` / `"none"` / `["flow-ports", ...]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum QuirksSec {
    Word(String),
    List(Vec<String>),
}

/// The transport `[transport]` describes; `htsim` is the topology's htsim file, if it came from
/// one (its defaults for the uet keys left out). With `simai_conf`, the file's settings are the
/// base and the section's other keys apply on top; the parsed file is returned too (its link
/// events, PFC trace, error rate and notes are the caller's to apply).
pub(super) fn transport(
    cx: &Cx<'_>,
    t: &TransportSec,
    htsim: Option<&HtsimTopo>,
) -> Result<(Transport, Option<SimAiConf>)> {
    let conf = match &t.simai_conf {
        Some(p) => {
            if matches!(t.kind, Some(KindSec::Uet)) {
                return Err(cx.err(
                    p,
                    "transport.simai_conf",
                    ErrorKind::Value,
                    "SimAI's transport is RoCE: not with kind = \"uet\"".to_owned(),
                ));
            }
            Some(cx.read(p, "transport.simai_conf", parse_conf_file)?)
        }
        None => None,
    };
    let mut out = conf
        .as_ref()
        .map_or_else(Transport::default, |c| c.transport.clone());
    kind(cx, t, htsim, &mut out)?;
    congestion_control(t, conf.is_some(), &mut out);
    apply_table_keys(cx, t, &mut out)?;
    quirks(cx, t, conf.is_some(), &mut out)?;
    ecn(cx, t, &mut out)?;
    Ok((out, conf))
}

/// `kind` and `[transport.uet]` (kind UET: lossy, PFC off, the window is the CC; with an htsim
/// topology, htsim's defaults for the keys left out).
fn kind(
    cx: &Cx<'_>,
    t: &TransportSec,
    htsim: Option<&HtsimTopo>,
    out: &mut Transport,
) -> Result<()> {
    if let Some(k) = &t.kind {
        out.kind = match k {
            KindSec::Roce => TransportKind::Roce,
            KindSec::Uet => TransportKind::Uet,
        };
    }
    if out.kind == TransportKind::Uet && htsim.is_some() {
        out.uet = htsim_base();
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
        if let Some(h) = htsim {
            htsim_derived(h, &mut out.uet);
            // htsim get_oversubscription_ratio: the ToRs', times the aggregation's with 3 tiers.
            let tiers = if h.tiers > 2 { 2 } else { 1 };
            let oversub: u32 = h
                .tier
                .iter()
                .take(tiers)
                .map(|t| t.oversubscribed.max(1))
                .product();
            if out.uet.cc == UetCc::Rccc && oversub > 1 {
                // htsim_uec switches its receiver OversubscribedCC on here (main_uec.cpp).
                return Err(ScenarioError::file(
                    cx.file,
                    "transport.uet.cc",
                    ErrorKind::Value,
                    format!(
                        "\"rccc\" on an oversubscribed htsim topology ({oversub}:1): htsim runs \
                         its receiver OversubscribedCC there, which is not modelled"
                    ),
                ));
            }
        }
        check_uet_queue(cx, t, htsim.is_some(), &out.uet)?;
    }
    if out.kind == TransportKind::Uet {
        if t.pfc_enabled.as_ref().is_some_and(|p| *p.get_ref()) {
            return Err(ScenarioError::file(
                cx.file,
                "transport.pfc",
                ErrorKind::Value,
                "the uet transport is lossy (trimming or drops): set pfc = false or leave it out",
            ));
        }
        if let Some(p) = &t.payload_bytes {
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

/// On a SimAI topology the uet transport's derived queue, ECN thresholds, base RTT and RTO are
/// sized for the NICs' rate unless `[transport.uet] sizing_rate` says otherwise: the largest
/// bottleneck of a host pair there is NVLink's (2,880 Gbps), whose one-BDP queue would hold
/// seven BDPs at a 400 G NIC port and outlast the RTO derived from it.
pub(super) fn simai_uet_sizing(f: &SimAiFabric, out: &mut Transport) {
    if out.kind == TransportKind::Uet && out.uet.sizing_rate_bps == 0 {
        out.uet.sizing_rate_bps = f.nic_rate_bps();
    }
}

/// What a `simai_conf` sets beyond the transport: `LINK_DOWN` (a link of the topology in
/// SimAI's ids, a GPU's NVLink link at its NVLink side, at SimAI's 2 s + t), `ERROR_RATE_PER_LINK` (links whose own rate is 0), and, unless
/// `ecn_thresholds` is given, a never-marking ECN entry (thresholds at the buffer size) for
/// each NVLink rate the file's maps lack: SimAI's NVSwitch ports mark nothing and its maps
/// need not cover them (`common.h`).
pub(super) fn apply_simai_conf(
    cx: &Cx<'_>,
    t: &TransportSec,
    c: &SimAiConf,
    simai: Option<&SimAiFabric>,
    topology: &mut Topology,
    out: &mut Transport,
    link_events: &mut Vec<LinkEvent>,
) -> Result<()> {
    for e in &c.link_events {
        let mut e = e.clone();
        (e.a, e.b) = simai.map_or((e.a, e.b), |f| f.link_ends(e.a, e.b));
        if !topology
            .links
            .iter()
            .any(|l| (l.a == e.a && l.b == e.b) || (l.a == e.b && l.b == e.a))
        {
            return Err(ScenarioError::at(
                &c.file,
                c.link_down_line,
                "LINK_DOWN",
                ErrorKind::Node,
                format!("no link {}-{} in the topology of {}", e.a, e.b, cx.file),
            ));
        }
        link_events.push(e);
    }
    if !c.link_events.is_empty() {
        link_events.sort_by_key(|e| e.at_ns);
    }
    if let Some(r) = c.error_rate_per_link {
        for l in topology.links.iter_mut().filter(|l| l.error_rate <= 0.0) {
            l.error_rate = r;
        }
    }
    if t.ecn_thresholds.is_none() && !out.ecn.is_empty() {
        for rate in simai.map(SimAiFabric::nvlink_rates).unwrap_or_default() {
            if !out.ecn.iter().any(|e| e.rate_bps == rate) {
                out.ecn.push(EcnEntry {
                    rate_bps: rate,
                    kmin_bytes: out.buffer_bytes,
                    kmax_bytes: out.buffer_bytes,
                    pmax: 0.2,
                });
            }
        }
    }
    Ok(())
}

/// `recovery`, `cc`, the window (`window`, `var_win`; by default on for HPCC and DCTCP, as
/// `run.py`; with a SimAI.conf, its `HAS_WIN` / `VAR_WIN` unless `cc` is given) and the CC
/// parameters.
fn congestion_control(t: &TransportSec, from_simai_conf: bool, out: &mut Transport) {
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
    if !from_simai_conf || t.cc.is_some() {
        out.has_win = Transport::run_py_window(out.cc);
        out.var_win = out.has_win;
    }
    if let Some(v) = t.window {
        out.has_win = v;
    }
    if let Some(v) = t.var_win {
        out.var_win = v;
    }
}

/// `quirks`. Our scenarios model the fabric as it should behave: the reference's quirks are
/// opt-in. With `simai_conf` (SimAI's own configuration, read unchanged) the reference is SimAI
/// and the default is SimAI's behaviour: quirks `flow-ports` (its UDP ports, which ECMP hashes)
/// and `time-truncation` (its `DataRate::CalculateBytesTxTime` divides integers: serialization
/// and pacing times truncate; data/simai/reference/README.md); `quirks = "none"` gives the fixes.
fn quirks(cx: &Cx<'_>, t: &TransportSec, from_simai_conf: bool, out: &mut Transport) -> Result<()> {
    out.quirks = match &t.quirks {
        None if from_simai_conf => QuirkSet::NONE
            .with(Quirk::FlowPorts)
            .with(Quirk::TimeTruncation),
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

/// `ecn_thresholds` (per port rate, no rate twice).
fn ecn(cx: &Cx<'_>, t: &TransportSec, out: &mut Transport) -> Result<()> {
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
    apply_uet_keys(cx, sec.get_ref(), &mut out.uet)
}

/// htsim's uet settings that do not depend on the topology (htsim_uec without flags): NSCC,
/// trimming, 4086 B + 64 B packets, an ACK per 16 KiB (`-sack_threshold`), switches whose ECMP
/// salts are drawn from the run's seed (`switch_hash = "htsim"`) and queues that count the
/// packet being sent until it has left (`queue_release = "end"`, its `CompositeQueue`) and,
/// full, trim their newest packet instead of the arrival on a coin of 0.5
/// (`trim_newest_probability`, `CompositeQueue::receivePacket`), NSCC fed as its
/// `UecSrc::processAck` feeds it (`nscc_feedback = "htsim"`), bytes in flight counted as
/// it counts them (`inflight = "received-bytes"`), serialization times in its whole ps
/// (`tx_time = "ps"`) and host ports that give data one turn in 11 when control waits too
/// (`control_turns = 10`, its `UecNIC`); the rest as ours.
fn htsim_base() -> UetParams {
    UetParams {
        cc: UetCc::Nscc,
        trimming: true,
        payload_bytes: 4086,
        header_bytes: 64,
        ack_bytes: 16384,
        switch_hash: SwitchHash::Htsim,
        queue_release: UetQueueRelease::End,
        trim_newest_probability: 0.5,
        nscc_feedback: UetNsccFeedback::Htsim,
        inflight: UetInflight::ReceivedBytes,
        tx_time: UetTxTime::Ps,
        control_turns: 10,
        ..UetParams::default()
    }
}

/// htsim's derived settings (`crate::htsim::uet_defaults`) for each of queue, ECN thresholds,
/// base RTT and RTO that `[transport.uet]` leaves out or sets to 0 ("derived"); explicit
/// trimming, payload, header and queue feed the others.
fn htsim_derived(h: &HtsimTopo, p: &mut UetParams) {
    let mtu = u64::from(p.payload_bytes) + u64::from(p.header_bytes);
    let explicit_queue = (p.queue_packets != 0).then_some(u64::from(p.queue_packets));
    let d = uet_defaults(h, mtu, p.trimming, explicit_queue);
    let packets = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    if p.queue_packets == 0 {
        p.queue_packets = packets(d.queue_packets);
    }
    if p.ecn_kmin_packets == 0 {
        p.ecn_kmin_packets = packets(d.ecn_kmin_packets);
    }
    if p.ecn_kmax_packets == 0 {
        p.ecn_kmax_packets = packets(d.ecn_kmax_packets);
    }
    if p.base_rtt_ns == 0 {
        p.base_rtt_ns = d.base_rtt_ns;
    }
    if p.rto_ns == 0 {
        p.rto_ns = d.rto_ns;
    }
}

/// kmin <= kmax <= queue (0 = derived by the scenario program, not compared); with an htsim
/// topology the message says which values are htsim's defaults.
fn check_uet_queue(cx: &Cx<'_>, t: &TransportSec, htsim: bool, p: &UetParams) -> Result<()> {
    let (q, lo, hi) = (p.queue_packets, p.ecn_kmin_packets, p.ecn_kmax_packets);
    if (lo != 0 && hi != 0 && lo > hi) || (q != 0 && hi > q) {
        let note = if htsim {
            " (the keys left out are htsim's defaults for the htsim_topo file)"
        } else {
            ""
        };
        let msg = format!(
            "needs ecn_kmin_packets <= ecn_kmax_packets <= queue_packets, got {lo}, {hi}, {q}{note}"
        );
        return Err(match &t.uet {
            Some(sec) => cx.err(sec, "transport.uet", ErrorKind::Value, msg),
            None => ScenarioError::file(cx.file, "transport.uet", ErrorKind::Value, msg),
        });
    }
    Ok(())
}
