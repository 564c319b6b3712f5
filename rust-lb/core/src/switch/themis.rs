//! Themis (Liu, Li, Chen, "Enabling Packet Spraying over Commodity RNICs with In-Network
//! Support", APNet 2025): PSN-based spraying at the source ToR and invalid-NACK
//! blocking with NACK compensation at the destination ToR, so that commodity RNICs running
//! selective repeat (NIC-SR) can be sprayed.
//!
//! * **Themis-S** (§3.2), at the source ToR, for data packets arriving from a host: with `N`
//!   equal-cost paths and `P_base` = the flow's ECMP hash mod `N`, packet `PSN` takes path
//!   `(PSN mod N + P_base) mod N` (Eq. 1). In a 2-tier leaf-spine the ToR's uplinks are the
//!   paths. In a 3-tier fabric (`remote_paths` > 1) path `p` leaves on uplink `p mod n_up`
//!   and the entropy is rewritten to `PathMap[p / n_up]`, an entropy that the next tier maps
//!   onto its `p / n_up`-th candidate, so the `N = n_up × remote_paths` indices are `N`
//!   distinct paths.
//! * **Themis-D** (§3.3), at the destination ToR: a per-QP ring of the PSNs of the data
//!   packets sent to the host, of `ceil(BW × RTT_last × F / MTU)` entries; on a NACK from the
//!   host, dequeue to the packet that triggered it (tPSN) and forward the NACK iff
//!   `tPSN mod N = ePSN mod N` (Eq. 3), else block it and record `BePSN = ePSN`, `Valid`.
//! * **NACK compensation** (§3.4): while `Valid`, a later data packet with `PSN > BePSN` on
//!   BePSN's path makes the ToR send the NACK for BePSN itself; the BePSN packet arriving
//!   instead cancels it. Either way `Valid` is cleared.
//! * **Memory** (§4): [`ThemisConfig::ring_entries`], [`paper_memory_bytes`]; a ToR reports
//!   its own by the same accounting ([`Themis::memory_bytes`]).
//! * **Link failure** (§6): when a link fails (one of the ToR's uplinks, or elsewhere as
//!   reported by the monitoring system) the ToR reverts every flow to ECMP: Themis-S hashes,
//!   Themis-D forwards every NACK and drops pending compensations; it resumes when every
//!   failed link is back.
//!
//! Themis expects NIC-SR receivers (one NACK per ePSN, carrying only the ePSN), as the paper
//! does; Go-Back-N receivers also work. IRN receivers do not: their "ACK-like NACKs" would be
//! filtered as NACKs.
//!
//! Deviations and reconstructions (documented choices):
//! * **tPSN search.** The paper dequeues to the first PSN greater than ePSN. That misses when
//!   a packet beyond the new ePSN arrived *before* the packet that advanced the receiver's
//!   ePSN (e.g. arrivals 0, 2, 4, 1, 5 with packet 3 lost on path 1: the NACK for 3 was
//!   triggered by 5, but 4 comes first in the queue, and the valid NACK is blocked). The
//!   default `tpsn_search = "after-advance"` first skips to the last queued PSN below ePSN
//!   (the arrival that advanced the ePSN; the RNIC only NACKs an ePSN on an arrival after it
//!   was reached) and takes the first PSN greater than ePSN after it; with no duplicate
//!   arrivals this is exactly the trigger (property-tested). `"first-greater"` is the paper's
//!   literal rule. A duplicate (spuriously retransmitted) PSN below ePSN arriving between the
//!   trigger and the NACK would hide the trigger; the NACK is then forwarded.
//! * **A blocked ePSN that already passed.** The NACK needs a last-hop RTT to come back; the
//!   late ePSN packet may leave the ToR in that time (it is then queued behind the trigger).
//!   The paper would arm compensation anyway and, since the ePSN never passes again, send a
//!   spurious NACK at the next packet of its path (the ring scenario of the paper's Fig. 1 does
//!   this for most blocked NACKs). We look for the ePSN among the entries queued after the
//!   trigger and arm compensation only if it is not there.
//! * A NACK whose tPSN is not in the queue (overwritten or never seen) is forwarded, and
//!   counted as unresolved. A QP that the ToR has not seen data for (intra-rack traffic, whose
//!   data enters from a host port) is not tracked and its NACKs pass.
//! * Each ePSN is compensated at most once, and never an ePSN at or below one already
//!   compensated (the RNIC's ePSN only grows), which bounds compensations to one per BePSN
//!   even for adversarial inputs.
//! * The PathMap is computed for the fabric's deterministic path-index routing mode (a switch
//!   with `n` candidates takes candidate `entropy mod n`, so an entropy names a path) where
//!   entry `r` is entropy `r`. The paper builds it from the linearity of the switches' CRC hash
//!   (its ref. 37); our ECMP hash (MurmurHash3, as the reference simulator) is not linear, so
//!   no flow-independent PathMap exists for it and 3-tier Themis needs the path-index mode at
//!   the upper tiers.
//! * The queue stores full 32-bit PSNs (the paper truncates to 1 byte); memory is reported
//!   with the paper's accounting (1 byte per entry, 20 bytes per flow-table entry).
//! * **Initial PSN.** Our NICs start every queue pair at PSN 0, so QPs that send at the same
//!   rate walk the uplinks in step, offset only by `P_base`. `initial_psn = "random"` models
//!   RNICs that start each QP at a random PSN `X`: Themis-S takes path
//!   `((PSN + X) mod N + P_base) mod N`. Only Themis-S needs it: Eq. 3 and the compensation
//!   test compare residues mod `N` of two PSNs of one QP, which the same `X` leaves equal or
//!   unequal. Since `P_base` is already a per-QP hash, the option redraws each QP's offset;
//!   it cannot change the spread of offsets, only which QPs share one.
//! * `RTT_last` is the configured `last_hop_rtt_ns`, or by default derived from the host port:
//!   two propagation delays plus one MTU and one 60-byte NACK serialised at the port's rate.

use std::collections::{HashMap, VecDeque};

use serde::Deserialize;

use super::agent::{ControlKind, ControlPacket, LbTag, LinkScope, PortInfo, SwitchAgent, Verdict};
use super::chooser::{chosen_verdict, EgressChoice, EgressChooser};
use super::ecmp::EcmpHash;
use super::packet::{EgressCandidate, PacketKind, PacketMeta};
use super::plts_rr::TableHasher;
use super::tor::{Compensation, NackVerdict, TorAgent};
use crate::error::{check_int, check_real, ParamError};
use crate::rng::SimRng;
use crate::scheme::{Scheme, SwitchRole};
use crate::time::SimTime;
use crate::units::{Entropy, Psn};

/// Bytes of one flow-table entry in the paper's accounting (§4): 13 B QP id, 3 B BePSN, 1 B
/// Valid, 3 B queue metadata.
pub const FLOW_ENTRY_BYTES: u64 = 20;
/// Bytes of one PSN-queue entry in the paper's accounting (a truncated PSN).
pub const RING_ENTRY_BYTES: u64 = 1;
/// Bytes of one PathMap entry (a 16-bit entropy).
pub const PATH_MAP_ENTRY_BYTES: u64 = 2;
/// Wire size of a NACK (60 B, the reference's), used for the derived last-hop RTT.
const NACK_BYTES: u64 = 60;

/// How Themis-D finds the packet that triggered a NACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TpsnSearch {
    /// The first queued PSN greater than ePSN after the last one below it (default; see the
    /// module documentation).
    AfterAdvance,
    /// The paper's rule: the first queued PSN greater than ePSN.
    FirstGreater,
}

/// The PSN a queue pair's first packet carries, as Eq. 1 sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InitialPsn {
    /// Every queue pair starts at PSN 0, as the NICs of this model do (default).
    Zero,
    /// Every queue pair starts at its own uniformly random 24-bit PSN, as RoCE NICs may
    /// choose it: Themis-S adds a per-QP offset, drawn at the QP's first packet, to the PSN
    /// in Eq. 1 (see the module documentation).
    Random,
}

/// Parameters of Themis.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThemisConfig {
    /// Paths beyond the ToR's own uplink choice (1 in a 2-tier leaf-spine; in a 3-tier fat
    /// tree, the aggregation switch's core fan-out). `N` = uplinks × `remote_paths`.
    pub remote_paths: u32,
    /// The queue capacity expansion factor `F` (§3.3, Table 1: 1.5).
    pub queue_factor: f64,
    /// Bytes of a full data packet on the wire (`MTU` of §3.3; 1000 B payload + 48 B headers).
    pub mtu_bytes: u32,
    /// Last-hop RTT; 0 derives it from each host port's delay and rate.
    pub last_hop_rtt_ns: u64,
    /// How the trigger of a NACK is found.
    pub tpsn_search: TpsnSearch,
    /// Whether blocked NACKs are compensated (§3.4).
    pub compensation: bool,
    /// The initial PSN of each queue pair, as Eq. 1 sees it.
    pub initial_psn: InitialPsn,
}

impl Default for ThemisConfig {
    fn default() -> Self {
        ThemisConfig {
            remote_paths: 1,
            queue_factor: 1.5,
            mtu_bytes: 1048,
            last_hop_rtt_ns: 0,
            tpsn_search: TpsnSearch::AfterAdvance,
            compensation: true,
            initial_psn: InitialPsn::Zero,
        }
    }
}

impl ThemisConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// `remote_paths` outside `1..=4096`, `queue_factor` outside `[1, 16]`, `mtu_bytes` outside
    /// `64..=9216`, `last_hop_rtt_ns` above 1 s.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int("remote_paths", u64::from(self.remote_paths), 1, 4096)?;
        check_real("queue_factor", self.queue_factor, 1.0, 16.0)?;
        check_int("mtu_bytes", u64::from(self.mtu_bytes), 64, 9216)?;
        check_int("last_hop_rtt_ns", self.last_hop_rtt_ns, 0, 1_000_000_000)
    }

    /// The last-hop RTT used for a host port of `bandwidth_bps` and one-way `delay_ns`.
    #[must_use]
    pub fn last_hop_rtt_ns(&self, bandwidth_bps: u64, delay_ns: u64) -> u64 {
        if self.last_hop_rtt_ns != 0 {
            return self.last_hop_rtt_ns;
        }
        let serialisation_ns = if bandwidth_bps == 0 {
            0
        } else {
            let bits = u128::from(u64::from(self.mtu_bytes) + NACK_BYTES) * 8 * 1_000_000_000;
            u64::try_from(bits.div_ceil(u128::from(bandwidth_bps))).unwrap_or(u64::MAX)
        };
        delay_ns.saturating_mul(2).saturating_add(serialisation_ns)
    }

    /// PSN-queue entries for a host port: `ceil(BW × RTT_last × F / MTU)` (§3.3), at least 1.
    #[must_use]
    pub fn ring_entries(&self, bandwidth_bps: u64, delay_ns: u64) -> usize {
        ring_entries(
            bandwidth_bps,
            self.last_hop_rtt_ns(bandwidth_bps, delay_ns),
            self.mtu_bytes,
            self.queue_factor,
        )
    }
}

/// `ceil(BW × RTT × F / MTU)` with `F` taken to a thousandth, in exact integer arithmetic;
/// at least 1, at most 2^20.
#[must_use]
pub fn ring_entries(bandwidth_bps: u64, rtt_ns: u64, mtu_bytes: u32, factor: f64) -> usize {
    // `factor` is validated to [1, 16]; rounding it to 1/1000 keeps the ceiling exact.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "factor is in [1, 16], so factor * 1000 fits in u32"
    )]
    let factor_milli = (factor.clamp(0.0, 1.0e6) * 1000.0).round() as u128;
    let num = u128::from(bandwidth_bps) * u128::from(rtt_ns) * factor_milli;
    let den = 8 * u128::from(mtu_bytes.max(1)) * 1_000_000_000 * 1000;
    let entries = num.div_ceil(den).clamp(1, 1 << 20);
    usize::try_from(entries).unwrap_or(1 << 20)
}

/// Total Themis memory of one ToR by the paper's Eq. 4: `N_paths × 2 B + (20 B + entries ×
/// 1 B) × N_QP × N_NIC`.
#[must_use]
pub fn paper_memory_bytes(
    n_paths: u64,
    bandwidth_bps: u64,
    rtt_ns: u64,
    mtu_bytes: u32,
    factor: f64,
    n_nic: u64,
    n_qp: u64,
) -> u64 {
    let entries = ring_entries(bandwidth_bps, rtt_ns, mtu_bytes, factor) as u64;
    n_paths * PATH_MAP_ENTRY_BYTES + (FLOW_ENTRY_BYTES + entries * RING_ENTRY_BYTES) * n_qp * n_nic
}

/// Counters of one Themis ToR.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThemisStats {
    /// Data packets sprayed by Themis-S (source role).
    pub sprayed_pkts: u64,
    /// Data packets to hosts recorded in a PSN queue.
    pub data_observed: u64,
    /// NACKs from hosts seen.
    pub nacks_seen: u64,
    /// NACKs blocked as invalid.
    pub nacks_blocked: u64,
    /// NACKs forwarded (valid, unresolved, untracked or in ECMP mode).
    pub nacks_forwarded: u64,
    /// Forwarded NACKs whose trigger was not in the queue.
    pub nacks_unresolved: u64,
    /// Compensation NACKs generated.
    pub compensations: u64,
    /// Pending compensations cancelled by the BePSN packet's arrival.
    pub cancellations: u64,
    /// Blocked NACKs whose ePSN packet had already passed the ToR when the NACK arrived (no
    /// compensation armed).
    pub already_passed: u64,
    /// Queue entries overwritten before a NACK consumed them (queue too small).
    pub ring_overwrites: u64,
    /// Queue pairs in the flow table.
    pub flows: u64,
    /// Whether the ToR is in ECMP mode after a link failure.
    pub ecmp_fallback: bool,
}

/// The flow table's key: (data sender, data receiver, sender's queue-pair number).
type QpKey = (u32, u32, u16);

/// Themis-D state of one queue pair.
#[derive(Debug, Clone)]
struct DstFlow {
    ring: Vec<u32>,
    head: usize,
    len: usize,
    bepsn: u32,
    valid: bool,
    /// Paths of the flow, learned from its NACKs (for the compensation check).
    n_paths: u32,
    max_compensated: Option<u32>,
}

impl DstFlow {
    fn new(capacity: usize) -> Self {
        DstFlow {
            ring: vec![0; capacity.max(1)],
            head: 0,
            len: 0,
            bepsn: 0,
            valid: false,
            n_paths: 0,
            max_compensated: None,
        }
    }

    fn cap(&self) -> usize {
        self.ring.len()
    }

    /// The `i`-th queued PSN (0 = oldest).
    fn at(&self, i: usize) -> u32 {
        self.ring
            .get((self.head + i) % self.cap())
            .copied()
            .unwrap_or(0)
    }

    /// Enqueues; returns whether the oldest entry was overwritten.
    fn push(&mut self, psn: u32) -> bool {
        let cap = self.cap();
        let tail = (self.head + self.len) % cap;
        if let Some(slot) = self.ring.get_mut(tail) {
            *slot = psn;
        }
        if self.len == cap {
            self.head = (self.head + 1) % cap;
            true
        } else {
            self.len += 1;
            false
        }
    }

    /// Whether `psn` is still queued.
    fn queued(&self, psn: u32) -> bool {
        (0..self.len).any(|i| self.at(i) == psn)
    }

    /// Dequeues the `n` oldest entries.
    fn pop(&mut self, n: usize) {
        let n = n.min(self.len);
        self.head = (self.head + n) % self.cap();
        self.len -= n;
    }

    /// Dequeues to the trigger of a NACK for `epsn` and returns it (see [`TpsnSearch`]).
    fn find_tpsn(&mut self, epsn: u32, search: TpsnSearch) -> Option<u32> {
        let start = match search {
            TpsnSearch::FirstGreater => 0,
            TpsnSearch::AfterAdvance => (0..self.len)
                .rev()
                .find(|&i| self.at(i) < epsn)
                .map_or(0, |i| i + 1),
        };
        match (start..self.len).find(|&i| self.at(i) > epsn) {
            Some(j) => {
                let t = self.at(j);
                self.pop(j + 1);
                Some(t)
            }
            None => {
                // Nothing before `start` can be a later trigger; the rest may still be.
                let drop = match search {
                    TpsnSearch::FirstGreater => self.len,
                    TpsnSearch::AfterAdvance => start,
                };
                self.pop(drop);
                None
            }
        }
    }
}

/// Per-host-port parameters.
#[derive(Debug, Clone, Copy)]
struct HostPort {
    ring_entries: usize,
}

/// One ToR's Themis (both roles; a switch without host ports only hashes).
#[derive(Debug, Clone)]
pub struct Themis {
    config: ThemisConfig,
    ecmp: EcmpHash,
    path_map: Vec<Entropy>,
    /// Indexed by port; `Some` for host-facing ports.
    host_ports: Vec<Option<HostPort>>,
    /// Indexed by port: whether the link is down.
    down_ports: Vec<bool>,
    local_failures: u32,
    remote_failures: u32,
    flows: HashMap<QpKey, DstFlow, TableHasher>,
    /// Themis-S: each queue pair's initial PSN (`initial_psn = "random"` only).
    initial_psns: HashMap<QpKey, u32, TableHasher>,
    max_paths: u64,
    stats: ThemisStats,
    /// Compensation NACKs waiting for `poll_transmit`.
    pending: VecDeque<ControlPacket>,
}

impl Themis {
    /// Themis of the switch whose ECMP hash is `ecmp` (no host ports yet).
    #[must_use]
    pub fn new(config: &ThemisConfig, ecmp: EcmpHash) -> Self {
        let path_map = (0..config.remote_paths)
            .map(|r| Entropy(u16::try_from(r).unwrap_or(u16::MAX)))
            .collect();
        Themis {
            config: *config,
            ecmp,
            path_map,
            host_ports: Vec::new(),
            down_ports: Vec::new(),
            local_failures: 0,
            remote_failures: 0,
            flows: HashMap::default(),
            initial_psns: HashMap::default(),
            max_paths: 0,
            stats: ThemisStats::default(),
            pending: VecDeque::with_capacity(4),
        }
    }

    /// Bytes this ToR's Themis state occupies in this implementation (not the paper's
    /// hardware accounting, [`paper_memory_bytes`]): the struct itself, the PathMap, the port
    /// tables, the flow table's slots at its current capacity (key, per-QP state and one
    /// control byte each; the table's load factor leaves some slots beyond the capacity
    /// uncounted, so this is a lower bound) and every PSN queue (a full 32-bit PSN per entry,
    /// where the paper stores a 1-byte truncated one).
    #[must_use]
    pub fn resident_bytes(&self) -> u64 {
        use std::mem::size_of;
        let slot = size_of::<(QpKey, DstFlow)>() + 1;
        let rings: usize = self
            .flows
            .values()
            .map(|f| f.ring.capacity() * size_of::<u32>())
            .sum();
        let bytes = size_of::<Self>()
            + self.path_map.capacity() * size_of::<Entropy>()
            + self.host_ports.capacity() * size_of::<Option<HostPort>>()
            + self.down_ports.capacity() * size_of::<bool>()
            + self.flows.capacity() * slot
            + rings
            + self.pending.capacity() * size_of::<ControlPacket>();
        bytes as u64
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> ThemisStats {
        let mut s = self.stats;
        s.flows = self.flows.len() as u64;
        s.ecmp_fallback = self.in_ecmp_mode();
        s
    }

    /// The PathMap (entropies written for remote path indices `0..remote_paths`).
    #[must_use]
    pub fn path_map(&self) -> &[Entropy] {
        &self.path_map
    }

    fn in_ecmp_mode(&self) -> bool {
        self.local_failures > 0 || self.remote_failures > 0
    }

    fn host_port(&self, port: u32) -> Option<HostPort> {
        usize::try_from(port)
            .ok()
            .and_then(|p| self.host_ports.get(p))
            .copied()
            .flatten()
    }

    fn remote_paths(&self) -> usize {
        usize::try_from(self.config.remote_paths)
            .unwrap_or(1)
            .max(1)
    }

    /// The NACK verdict and the trigger found (for tests and tracing).
    fn filter(&mut self, pkt: &PacketMeta, num_uplinks: usize) -> (NackVerdict, Option<Psn>) {
        if pkt.kind != PacketKind::Nack || self.host_port(pkt.ingress_port).is_none() {
            return (NackVerdict::Forward, None);
        }
        self.stats.nacks_seen += 1;
        let n = num_uplinks.saturating_mul(self.remote_paths());
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let key = (pkt.dip, pkt.sip, pkt.sport.0);
        let search = self.config.tpsn_search;
        let compensation = self.config.compensation;
        let ecmp_mode = self.in_ecmp_mode();
        let verdict = match self.flows.get_mut(&key) {
            Some(flow) if n > 1 && !ecmp_mode => {
                let epsn = pkt.psn.0;
                if flow.max_compensated.is_some_and(|c| epsn <= c) {
                    // The ToR already sent the NACK for this ePSN (or a later one).
                    (NackVerdict::Block, None)
                } else {
                    match flow.find_tpsn(epsn, search) {
                        None => {
                            self.stats.nacks_unresolved += 1;
                            (NackVerdict::Forward, None)
                        }
                        Some(t) if t % n == epsn % n => (NackVerdict::Forward, Some(Psn(t))),
                        Some(t) => {
                            if flow.queued(epsn) {
                                // The ePSN packet already passed the ToR, after the trigger:
                                // it was late, not lost; nothing to compensate.
                                self.stats.already_passed += 1;
                            } else if compensation {
                                flow.bepsn = epsn;
                                flow.valid = true;
                                flow.n_paths = n;
                            }
                            (NackVerdict::Block, Some(Psn(t)))
                        }
                    }
                }
            }
            _ => (NackVerdict::Forward, None),
        };
        match verdict.0 {
            NackVerdict::Forward => self.stats.nacks_forwarded += 1,
            NackVerdict::Block => self.stats.nacks_blocked += 1,
        }
        verdict
    }
}

impl EgressChooser for Themis {
    const READS_PORT_LOAD: bool = false;

    fn choose(
        &mut self,
        _now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> EgressChoice {
        let n_up = candidates.len().max(1);
        let sprays = pkt.kind == PacketKind::Data
            && self.host_port(pkt.ingress_port).is_some()
            && !self.in_ecmp_mode();
        if !sprays {
            return EgressChoice::at(self.ecmp.index(pkt, n_up));
        }
        // Eq. 1: path = (PSN mod N + P_base) mod N, P_base = the flow's ECMP hash mod N.
        let n = n_up.saturating_mul(self.remote_paths());
        self.max_paths = self.max_paths.max(n as u64);
        let p_base = self.ecmp.index(pkt, n);
        let psn = match self.config.initial_psn {
            InitialPsn::Zero => pkt.psn.0,
            InitialPsn::Random => {
                let initial = *self
                    .initial_psns
                    .entry((pkt.sip, pkt.dip, pkt.dport))
                    .or_insert_with(|| rng.below(1 << 24));
                // RoCE PSNs are 24 bits and wrap.
                pkt.psn.0.wrapping_add(initial) & 0x00ff_ffff
            }
        };
        let psn = usize::try_from(psn).unwrap_or(0);
        let path = (psn % n + p_base) % n;
        self.stats.sprayed_pkts += 1;
        EgressChoice {
            index: path % n_up,
            rewrite_entropy: if self.remote_paths() > 1 {
                self.path_map.get(path / n_up).copied()
            } else {
                None
            },
        }
    }
}

impl TorAgent for Themis {
    fn add_host_port(&mut self, port: u32, bandwidth_bps: u64, delay_ns: u64) {
        let Ok(p) = usize::try_from(port) else { return };
        if p >= self.host_ports.len() {
            self.host_ports.resize(p + 1, None);
        }
        if let Some(slot) = self.host_ports.get_mut(p) {
            *slot = Some(HostPort {
                ring_entries: self.config.ring_entries(bandwidth_bps, delay_ns),
            });
        }
    }

    fn on_data_to_host(
        &mut self,
        _now: SimTime,
        pkt: &PacketMeta,
        port: u32,
    ) -> Option<Compensation> {
        if pkt.kind != PacketKind::Data || self.in_ecmp_mode() {
            return None;
        }
        let hp = self.host_port(port)?;
        if self.host_port(pkt.ingress_port).is_some() {
            return None; // intra-rack: one path, nothing to filter
        }
        let key = (pkt.sip, pkt.dip, pkt.dport);
        let flow = self
            .flows
            .entry(key)
            .or_insert_with(|| DstFlow::new(hp.ring_entries));
        let psn = pkt.psn.0;
        self.stats.data_observed += 1;
        if flow.push(psn) {
            self.stats.ring_overwrites += 1;
        }
        if !flow.valid {
            return None;
        }
        let n = flow.n_paths.max(1);
        if psn == flow.bepsn {
            flow.valid = false;
            self.stats.cancellations += 1;
            None
        } else if psn > flow.bepsn && psn % n == flow.bepsn % n {
            flow.valid = false;
            flow.max_compensated = Some(flow.bepsn);
            self.stats.compensations += 1;
            Some(Compensation {
                sender: pkt.sip,
                receiver: pkt.dip,
                qpn: pkt.dport,
                epsn: Psn(flow.bepsn),
            })
        } else {
            None
        }
    }

    fn on_nack_from_host(
        &mut self,
        _now: SimTime,
        pkt: &PacketMeta,
        num_uplinks: usize,
    ) -> NackVerdict {
        self.filter(pkt, num_uplinks).0
    }
}

/// Themis as a switch agent: ingress = NACK filtering of the host ports (Themis-D), then
/// spraying (Themis-S) or ECMP; egress = the PSN queues of the host ports, whose compensation
/// NACKs the switch pulls with `poll_transmit`.
impl SwitchAgent for Themis {
    fn reads_port_load(&self) -> bool {
        <Self as EgressChooser>::READS_PORT_LOAD // the candidates reach only `choose`
    }
    fn add_port(&mut self, port: PortInfo) {
        if port.faces_host {
            self.add_host_port(port.port, port.rate_bps, port.delay_ns);
        }
    }

    fn sees_every_packet(&self) -> bool {
        true // NACKs from hosts are filtered even on a single uplink
    }

    fn sees_egress(&self) -> bool {
        true
    }

    fn on_ingress(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        _tag: &mut LbTag,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> Verdict {
        if !pkt.local
            && pkt.kind == PacketKind::Nack
            && self.on_nack_from_host(now, pkt, candidates.len()) == NackVerdict::Block
        {
            return Verdict::Drop;
        }
        chosen_verdict(self, now, pkt, candidates, rng)
    }

    fn on_egress(&mut self, now: SimTime, pkt: &PacketMeta, _tag: &LbTag, port: u32) {
        if let Some(c) = self.on_data_to_host(now, pkt, port) {
            // The NACK the receiver NIC would have sent, from the receiver's port.
            self.pending.push_back(ControlPacket {
                kind: ControlKind::Nack,
                sip: c.receiver,
                dip: c.sender,
                sport: pkt.dport,
                dport: pkt.sport.0,
                qpn: pkt.qpn,
                pg: pkt.pg,
                epsn: c.epsn,
                echo_seq_bytes: pkt.seq_bytes,
                ts_ns: pkt.ts_ns,
                size_bytes: 0,
                from_port: port,
                tag: LbTag::NONE,
            });
        }
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<ControlPacket> {
        self.pending.pop_front()
    }

    fn on_link_state(&mut self, scope: LinkScope, down: bool) {
        let was = self.in_ecmp_mode();
        match scope {
            LinkScope::Local { port } => {
                if self.host_port(port).is_some() {
                    return; // a host link carries one path; spraying is unaffected
                }
                let Ok(p) = usize::try_from(port) else { return };
                if p >= self.down_ports.len() {
                    self.down_ports.resize(p + 1, false);
                }
                if let Some(d) = self.down_ports.get_mut(p) {
                    if *d != down {
                        *d = down;
                        if down {
                            self.local_failures += 1;
                        } else {
                            self.local_failures = self.local_failures.saturating_sub(1);
                        }
                    }
                }
            }
            LinkScope::Remote => {
                if down {
                    self.remote_failures += 1;
                } else {
                    self.remote_failures = self.remote_failures.saturating_sub(1);
                }
            }
        }
        if !was && self.in_ecmp_mode() {
            for f in self.flows.values_mut() {
                f.valid = false; // no compensation for NACKs blocked before the failure
            }
        }
    }

    fn memory_bytes(&self) -> u64 {
        let rings: u64 = self
            .flows
            .values()
            .map(|f| FLOW_ENTRY_BYTES + f.cap() as u64 * RING_ENTRY_BYTES)
            .sum();
        self.max_paths * PATH_MAP_ENTRY_BYTES + rings
    }

    fn counters(&self, out: &mut dyn FnMut(&'static str, u64)) {
        let s = self.stats();
        out("themis_sprayed_pkts", s.sprayed_pkts);
        out("themis_data_observed", s.data_observed);
        out("themis_nacks_seen", s.nacks_seen);
        out("themis_nacks_blocked", s.nacks_blocked);
        out("themis_nacks_forwarded", s.nacks_forwarded);
        out("themis_nacks_unresolved", s.nacks_unresolved);
        out("themis_compensations", s.compensations);
        out("themis_cancellations", s.cancellations);
        out("themis_already_passed", s.already_passed);
        out("themis_ring_overwrites", s.ring_overwrites);
        out("themis_flows", s.flows);
        out("themis_ecmp_fallback", u64::from(s.ecmp_fallback));
    }
}

#[cfg(test)]
mod tests;

impl Scheme for Themis {
    type Config = ThemisConfig;

    fn validate(config: &ThemisConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl SwitchRole for Themis {
    type Agent = Box<Themis>;

    fn agent(config: &ThemisConfig, _switch_id: u32, ecmp: EcmpHash) -> Box<Themis> {
        Box::new(Themis::new(config, ecmp))
    }
}
