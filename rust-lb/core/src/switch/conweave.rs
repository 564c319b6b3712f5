//! ConWeave (Song et al., "Network Load Balancing with In-network Reordering Support for
//! RDMA", SIGCOMM 2023), as the reference simulator runs it (its
//! `conweave-routing` and `conweave-voq`, `LB_MODE 9`; the Hopper paper compares with it, §4).
//!
//! * **Source ToR** (per data packet of an inter-ToR flow): a flow is "expired" after
//!   `tx_expiry` of inactivity, "stabilized" after a timely RTT_REPLY; either starts a new
//!   epoch whose first packet is an INIT (RTT_REQUEST) with a reply deadline of base RTT +
//!   `reply_timeout_extra`. The first packet sent after a missed deadline is the TAIL: it goes
//!   on the old path, the flow moves (phase 1) to a good path -- the first of two random
//!   paths not paused by a NOTIFY, else the second, else no move.
//! * **Destination ToR**: per flow, the epoch and phase seen; a phase-1 packet that overtakes
//!   phase 0 is held in a per-flow queue (the switch's held queue: outside the MMU, released
//!   in FIFO order through the normal path, MMU admission at release) until the predicted
//!   arrival of the TAIL (`tail - phase0 tx + phase0 rx + extra_voq_flush`, or
//!   `default_voq_wait` without timing) or 1 ns after the TAIL itself arrives. Replies to INIT
//!   and TAIL, and a NOTIFY for every CE-marked data packet, go back to the source ToR as
//!   64-byte control packets at the highest priority (queue 0), hashed by ECMP.
//! * **Other switches**: data follows the path in its tag (hop + 1); anything else, control
//!   packets and intra-ToR traffic take the ECMP hash.
//!
//! Deviations from the reference, none of them visible in its outputs' statistics:
//! * Paths paused by NOTIFY are kept per path id; the reference keeps them in a 65,536-slot
//!   table indexed by a hash of the path id, where two paths could share a slot (never with the
//!   8-16 paths of its topologies).
//! * Random draws come from the switch's own generator, not C `rand()`, and the reference's
//!   unused first draw per packet is not made -- unless [`ConWeave::share_reference_rand`] gave
//!   the agent a glibc `rand()` stream shared by every switch of the run (quirk `glibc-rand`).
//!   Then every data packet at the source ToR draws as the reference (path-aware rerouting):
//!   `rand() % n` three times, the unused initial path, then the two candidate paths, each an
//!   index into the sorted path list.
//! * Base RTT per destination ToR is propagation only, 2 x 1 µs per switch hop of the path, as
//!   the reference hard-codes it (4 µs in a leaf-spine).
//! * A flow whose first packet comes before `tx_expiry` (the reference asserts) is treated as
//!   stabilized: its first packet is an INIT.
//! * A path hop that is not a live candidate (a withdrawn port) falls back to ECMP (counted).

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};

use serde::Deserialize;

use super::agent::{
    candidate_index, ControlKind, ControlPacket, LbTag, PathId, PortInfo, SwitchAgent, Verdict,
};
use super::ecmp::EcmpHash;
use super::fabric::{Fabric, Role};
use super::packet::{EgressCandidate, PacketKind, PacketMeta};
use super::plts_rr::TableHasher;
use crate::algorithm::Algorithm;
use crate::error::{check_int, ConfigError};
use crate::rng::{below_or_shared, SharedGlibcRand, SimRng};
use crate::time::{SimDuration, SimTime};
use crate::units::Psn;

/// Parameters of ConWeave (the reference's `CONWEAVE_*` keys; defaults = run.py's leaf-spine
/// values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConWeaveConfig {
    /// Inactivity after which a flow starts a new epoch and may move (`TX_EXPIRY_TIME`).
    pub tx_expiry_us: u64,
    /// Added to the base RTT for the INIT reply deadline (`REPLY_TIMEOUT_EXTRA`).
    pub reply_timeout_extra_us: u64,
    /// How long a path is avoided after a NOTIFY (`PATH_PAUSE_TIME`).
    pub path_pause_us: u64,
    /// Margin added to the predicted VOQ flush time (`EXTRA_VOQ_FLUSH_TIME`).
    pub extra_voq_flush_us: u64,
    /// Flush wait without phase-0 timing (`DEFAULT_VOQ_WAITING_TIME`).
    pub default_voq_wait_us: u64,
    /// Idle time after which flow state is aged out (the reference's fixed 2 ms).
    pub aging_us: u64,
}

impl Default for ConWeaveConfig {
    fn default() -> Self {
        ConWeaveConfig {
            tx_expiry_us: 300,
            reply_timeout_extra_us: 4,
            path_pause_us: 16,
            extra_voq_flush_us: 16,
            default_voq_wait_us: 200,
            aging_us: 2_000,
        }
    }
}

impl ConWeaveConfig {
    /// The defaults of the reference's scenario program when a `CONWEAVE_*` key is absent
    /// (the scenario program's own defaults, not run.py's).
    pub const SCRATCH_DEFAULTS: ConWeaveConfig = ConWeaveConfig {
        tx_expiry_us: 1_000,
        reply_timeout_extra_us: 4,
        path_pause_us: 8,
        extra_voq_flush_us: 32,
        default_voq_wait_us: 500,
        aging_us: 2_000,
    };

    /// Checks the ranges.
    ///
    /// # Errors
    /// A time outside 1 µs..=1 s (0 allowed for the margins).
    pub fn validate(&self, algorithm: Algorithm) -> Result<(), ConfigError> {
        const S: u64 = 1_000_000;
        check_int(algorithm, "tx_expiry_us", self.tx_expiry_us, 1, S)?;
        check_int(
            algorithm,
            "reply_timeout_extra_us",
            self.reply_timeout_extra_us,
            0,
            S,
        )?;
        check_int(algorithm, "path_pause_us", self.path_pause_us, 0, S)?;
        check_int(
            algorithm,
            "extra_voq_flush_us",
            self.extra_voq_flush_us,
            0,
            S,
        )?;
        check_int(
            algorithm,
            "default_voq_wait_us",
            self.default_voq_wait_us,
            1,
            S,
        )?;
        check_int(algorithm, "aging_us", self.aging_us, 1, S)
    }
}

/// Wire size of ConWeave's control packets (the NACK format padded to 64 B, as the reference).
pub const CONTROL_BYTES: u32 = 64;
/// Propagation per switch hop the reference assumes for the base RTT.
const HOP_DELAY_NS: u64 = 1_000;

/// What a data packet's tag says (the reference's DATA / INIT / TAIL flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DataFlag {
    Data = 0,
    Init = 1,
    Tail = 2,
}

/// Kind of tag (the top byte of word 0).
const TAG_DATA: u64 = 1;
const TAG_REPLY: u64 = 2;
const TAG_NOTIFY: u64 = 3;

/// The data tag: path, hop, epoch, phase, TX and TAIL timestamps, flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DataTag {
    path: PathId,
    hop: u8,
    epoch: u32,
    phase: u8,
    tx_ns: u64,
    tail_ns: u64,
    flag: DataFlag,
}

impl DataTag {
    fn encode(self) -> LbTag {
        LbTag::new([
            u64::from(self.path.id)
                | u64::from(self.path.hops) << 32
                | u64::from(self.hop) << 40
                | (self.flag as u64) << 48
                | TAG_DATA << 56,
            u64::from(self.epoch) | u64::from(self.phase) << 32,
            self.tx_ns,
            self.tail_ns,
            0,
        ])
    }

    fn decode(tag: &LbTag) -> Option<Self> {
        let w = tag.words;
        if !tag.present || w[0] >> 56 != TAG_DATA {
            return None;
        }
        let byte = |shift: u32| u8::try_from((w[0] >> shift) & 0xff).unwrap_or(0);
        Some(DataTag {
            path: PathId {
                id: u32::try_from(w[0] & 0xffff_ffff).unwrap_or(0),
                hops: byte(32),
            },
            hop: byte(40),
            epoch: u32::try_from(w[1] & 0xffff_ffff).unwrap_or(0),
            phase: u8::try_from((w[1] >> 32) & 0xff).unwrap_or(0),
            tx_ns: w[2],
            tail_ns: w[3],
            flag: match byte(48) {
                1 => DataFlag::Init,
                2 => DataFlag::Tail,
                _ => DataFlag::Data,
            },
        })
    }
}

/// A REPLY's content: which request (INIT or TAIL), epoch, phase.
fn reply_tag(tail: bool, epoch: u32, phase: u8) -> LbTag {
    LbTag::new([
        u64::from(tail) | TAG_REPLY << 56,
        u64::from(epoch) | u64::from(phase) << 32,
        0,
        0,
        0,
    ])
}

fn notify_tag(path: PathId) -> LbTag {
    LbTag::new([
        u64::from(path.id) | u64::from(path.hops) << 32 | TAG_NOTIFY << 56,
        0,
        0,
        0,
        0,
    ])
}

/// Source-ToR state of one flow.
#[derive(Debug, Clone, Copy)]
struct TxEntry {
    active: SimTime,
    /// `None` = no deadline (the reference's "infinite").
    reply_deadline: Option<SimTime>,
    epoch: u32,
    phase: u8,
    path: Option<PathId>,
    tail: SimTime,
    stabilized: bool,
}

impl TxEntry {
    const NEW: TxEntry = TxEntry {
        active: SimTime::ZERO,
        reply_deadline: None,
        epoch: 0,
        phase: 0,
        path: None,
        tail: SimTime::ZERO,
        stabilized: true,
    };
}

/// Destination-ToR state of one flow.
#[derive(Debug, Clone, Copy)]
struct RxEntry {
    active: SimTime,
    epoch: u32,
    phase: u8,
    phase0_tx_ns: u64,
    phase0_rx: SimTime,
    phase0_cache: bool,
    tail_ns: u64,
    reordering: bool,
}

impl RxEntry {
    const NEW: RxEntry = RxEntry {
        active: SimTime::ZERO,
        epoch: 1,
        phase: 0,
        phase0_tx_ns: 0,
        phase0_rx: SimTime::ZERO,
        phase0_cache: false,
        tail_ns: 0,
        reordering: false,
    };
}

/// One reordering queue: the flow it holds and when it is flushed.
#[derive(Debug, Clone, Copy)]
struct Voq {
    flow: u64,
    flush_at: SimTime,
    /// Order of creation or rescheduling (ties at one instant flush in this order).
    seq: u64,
}

/// The reference's printed statistics (summed over switches by the caller).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConWeaveStats {
    /// REPLY(INIT) sent by destination ToRs.
    pub init_replies_sent: u64,
    /// REPLY(INIT) that arrived before the deadline.
    pub init_replies_timely: u64,
    /// REPLY(TAIL) sent.
    pub tail_replies_sent: u64,
    /// REPLY(TAIL) that matched the flow's epoch and phase.
    pub tail_replies_timely: u64,
    /// NOTIFY sent (one per CE-marked data packet at its destination ToR).
    pub notifies_sent: u64,
    /// Flows moved to another path (not counting new flows).
    pub reroutes: u64,
    /// Data packets held in a reordering queue.
    pub ooo_queued: u64,
    /// Reordering queues flushed.
    pub voq_flushes: u64,
    /// Flushes brought forward by the TAIL's arrival.
    pub voq_flushes_by_tail: u64,
    /// Path hops that were not live candidates (ECMP taken instead).
    pub path_fallbacks: u64,
}

/// One switch's ConWeave.
#[derive(Debug, Clone)]
pub struct ConWeave {
    config: ConWeaveConfig,
    ecmp: EcmpHash,
    /// Ports, hosts' ToRs and the sorted paths to every other ToR.
    fabric: Fabric,
    /// Paths paused by a NOTIFY, until the time given.
    paused: HashMap<PathId, SimTime, TableHasher>,
    tx: HashMap<u64, TxEntry, TableHasher>,
    rx: HashMap<u64, RxEntry, TableHasher>,
    voqs: Vec<Voq>,
    voq_seq: u64,
    next_aging: Option<SimTime>,
    releases: VecDeque<u64>,
    outbox: VecDeque<ControlPacket>,
    stats: ConWeaveStats,
    /// The run's shared glibc `rand()` stream (quirk `glibc-rand`), else `None`.
    reference_rand: Option<SharedGlibcRand>,
}

/// The reference's 64-bit flow key: [src node | sport << 16] << 32 | [dst node | dport << 16],
/// node id = address bits 8-23 (host i has the address 11.(i / 256).(i % 256).1).
fn flow_key(sip: u32, dip: u32, sport: u16, dport: u16) -> u64 {
    let node = |ip: u32| u64::from((ip >> 8) & 0xffff);
    (node(sip) | u64::from(sport) << 16) << 32 | node(dip) | u64::from(dport) << 16
}

fn micros(us: u64) -> SimDuration {
    SimDuration::from_us(us)
}

impl ConWeave {
    /// ConWeave of switch `switch_id` (its ECMP hash seed and its ToR id).
    #[must_use]
    pub fn new(config: &ConWeaveConfig, switch_id: u32) -> Self {
        ConWeave {
            config: *config,
            ecmp: EcmpHash::new(switch_id),
            fabric: Fabric::new(switch_id),
            paused: HashMap::default(),
            tx: HashMap::default(),
            rx: HashMap::default(),
            voqs: Vec::new(),
            voq_seq: 0,
            next_aging: None,
            releases: VecDeque::new(),
            outbox: VecDeque::new(),
            stats: ConWeaveStats::default(),
            reference_rand: None,
        }
    }

    /// Draws the source ToR's paths as `rand() % n` from `rand`, which other switches share,
    /// three per data packet as the reference, instead of the switch's own generator (quirk
    /// `glibc-rand`).
    pub fn share_reference_rand(&mut self, rand: SharedGlibcRand) {
        self.reference_rand = Some(rand);
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> ConWeaveStats {
        self.stats
    }

    fn ecmp(&self, pkt: &PacketMeta, candidates: &[EgressCandidate]) -> Verdict {
        Verdict::at(self.ecmp.index(pkt, candidates.len()))
    }

    /// Forward on hop `hop` of `path`, or ECMP if that port is not a live candidate.
    fn on_path(
        &mut self,
        path: PathId,
        hop: u8,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
    ) -> Verdict {
        match path
            .port_at(u32::from(hop))
            .and_then(|p| candidate_index(candidates, p))
        {
            Some(i) => Verdict::at(i),
            None => {
                self.stats.path_fallbacks += 1;
                self.ecmp(pkt, candidates)
            }
        }
    }

    fn is_paused(&self, path: PathId, now: SimTime) -> bool {
        self.paused.get(&path).is_some_and(|&until| until > now)
    }

    fn base_rtt(&self, dst: usize) -> SimDuration {
        let hops = self
            .fabric
            .paths(dst)
            .first()
            .map_or(2, |p| u64::from(p.hops));
        SimDuration::from_ns(2 * hops * HOP_DELAY_NS)
    }

    /// Source ToR: the INIT / TAIL / DATA logic of one data packet, step by step as the
    /// reference's source ToR (expiry, deadline, epoch and phase, path draws, path update, tail
    /// time, tag).
    fn tx_data(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        tag: &mut LbTag,
        dst: usize,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> Verdict {
        // Two random paths; the good one is the first not paused by a NOTIFY. With the
        // reference's stream, its unused initial-path draw comes first.
        let set = self.fabric.paths(dst);
        let shared = self.reference_rand.as_ref();
        let drawn = u32::try_from(set.len())
            .ok()
            .filter(|&n| n > 0)
            .and_then(|n| {
                let mut pick = || {
                    let i = below_or_shared(shared, rng, n);
                    set.get(usize::try_from(i).unwrap_or(0)).copied()
                };
                if shared.is_some() {
                    pick()?; // initPath: drawn and never used
                }
                Some((pick()?, pick()?))
            });
        let Some((p1, p2)) = drawn else {
            return self.ecmp(pkt, candidates);
        };
        let base_rtt = self.base_rtt(dst);
        let good = if !self.is_paused(p1, now) {
            Some(p1)
        } else if !self.is_paused(p2, now) {
            Some(p2)
        } else {
            None
        };
        let key = flow_key(pkt.sip, pkt.dip, pkt.sport.0, pkt.dport);
        let cfg = self.config;
        let (is_new, e) = match self.tx.entry(key) {
            Entry::Occupied(o) => (false, o.into_mut()),
            Entry::Vacant(v) => (true, v.insert(TxEntry::NEW)),
        };
        let expired = e.active + micros(cfg.tx_expiry_us) < now;
        let stabilized = !expired && e.stabilized;
        e.stabilized = false;
        e.active = now;
        let mut reply_timeout = false;
        if expired || stabilized {
            e.reply_deadline = Some(now + base_rtt + micros(cfg.reply_timeout_extra_us));
        } else if e.reply_deadline.is_some_and(|d| d < now) {
            e.reply_deadline = None;
            reply_timeout = true;
        }
        let phase = if expired || stabilized {
            e.epoch += 1;
            e.phase = 0;
            0
        } else if reply_timeout {
            e.phase = 1;
            0
        } else {
            e.phase
        };
        if e.path.is_none() {
            e.path = Some(good.unwrap_or(p1));
        }
        let mut moved = false;
        let current = if expired {
            if let Some(g) = good {
                moved = !is_new;
                e.path = Some(g);
            }
            e.path
        } else if reply_timeout {
            let old = e.path;
            if let Some(g) = good {
                moved = !is_new;
                e.path = Some(g);
            }
            old // the TAIL goes on the old path
        } else {
            e.path
        };
        if expired || stabilized {
            e.tail = SimTime::ZERO;
        } else if reply_timeout {
            e.tail = now;
        }
        let data = DataTag {
            path: current.unwrap_or(p1),
            hop: 0,
            epoch: e.epoch,
            phase,
            tx_ns: now.as_ns(),
            tail_ns: e.tail.as_ns(),
            flag: if expired || stabilized {
                DataFlag::Init
            } else if reply_timeout {
                DataFlag::Tail
            } else {
                DataFlag::Data
            },
        };
        if moved {
            self.stats.reroutes += 1;
        }
        *tag = data.encode();
        self.on_path(data.path, 0, pkt, candidates)
    }

    /// Destination ToR: reordering of one tagged data packet, step by step as the reference's
    /// destination ToR (epoch, phase-0 times, new or current epoch, tail time, predicted gap
    /// and flush time, reorder actions, NOTIFY, replies, enqueue or forward).
    fn rx_data(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        data: DataTag,
        tag: &mut LbTag,
    ) -> Verdict {
        *tag = LbTag::NONE; // the tag ends at the destination ToR
        let key = flow_key(pkt.sip, pkt.dip, pkt.sport.0, pkt.dport);
        let cfg = self.config;
        let e = self.rx.entry(key).or_insert(RxEntry::NEW);
        e.active = now;
        let new_epoch = data.epoch > e.epoch;
        if data.epoch < e.epoch {
            return Verdict::at(0); // an older epoch: straight to the host
        }
        if new_epoch {
            e.epoch = data.epoch;
        }
        if data.phase == 0 {
            e.phase0_tx_ns = data.tx_ns;
            e.phase0_rx = now;
        }
        let is_tail = data.flag == DataFlag::Tail;
        let mut out_of_order = false;
        if new_epoch {
            e.phase = u8::from(is_tail);
            out_of_order = data.phase > e.phase;
            e.phase0_cache = data.phase == 0;
        } else {
            if is_tail {
                if !e.reordering {
                    e.phase = 1;
                }
            } else if e.phase < data.phase {
                out_of_order = true;
            }
            if data.phase == 0 {
                e.phase0_cache = true;
            }
        }
        if is_tail || data.phase == 1 {
            e.tail_ns = data.tail_ns;
        }
        let gap_ns = if e.phase0_cache {
            e.tail_ns.saturating_sub(e.phase0_tx_ns)
        } else {
            cfg.default_voq_wait_us * 1_000
        };
        let extra = micros(cfg.extra_voq_flush_us);
        let flush_at = if data.phase == 1 {
            let from = if e.phase0_cache { e.phase0_rx } else { now };
            from + SimDuration::from_ns(gap_ns) + extra
        } else if is_tail {
            now + SimDuration::from_ns(1)
        } else {
            now + SimDuration::from_ns(gap_ns) + extra
        };
        let reordering = e.reordering;
        let mut hold = false;
        if data.phase == 0 {
            if reordering {
                if is_tail {
                    self.stats.voq_flushes_by_tail += 1;
                }
                self.schedule_flush(key, flush_at.max(now));
            }
        } else if out_of_order {
            hold = true;
            if !reordering {
                e.reordering = true;
                self.schedule_flush(key, flush_at.max(now));
            }
        }
        let reply = |tail: bool, phase: u8| ControlPacket {
            kind: ControlKind::LbControl,
            sip: pkt.dip,
            dip: pkt.sip,
            sport: pkt.dport,
            dport: pkt.sport.0,
            qpn: pkt.qpn,
            pg: pkt.pg,
            epsn: Psn(0),
            echo_seq_bytes: 0,
            ts_ns: 0,
            size_bytes: CONTROL_BYTES,
            from_port: pkt.ingress_port,
            tag: reply_tag(tail, data.epoch, phase),
        };
        if pkt.ecn_ce {
            self.stats.notifies_sent += 1;
            self.outbox.push_back(ControlPacket {
                tag: notify_tag(data.path),
                ..reply(false, 0)
            });
        }
        match data.flag {
            DataFlag::Init => {
                self.stats.init_replies_sent += 1;
                self.outbox.push_back(reply(false, 0));
            }
            DataFlag::Tail => {
                self.stats.tail_replies_sent += 1;
                self.outbox.push_back(reply(true, 1));
            }
            DataFlag::Data => {}
        }
        if hold {
            self.stats.ooo_queued += 1;
            return Verdict::Hold { queue: key };
        }
        Verdict::at(0) // the destination ToR's single host port
    }

    /// Arms (or re-arms) the flush of `flow`'s queue at `at`.
    fn schedule_flush(&mut self, flow: u64, at: SimTime) {
        self.voq_seq += 1;
        let seq = self.voq_seq;
        match self.voqs.iter_mut().find(|v| v.flow == flow) {
            Some(v) => {
                v.flush_at = at;
                v.seq = seq;
            }
            None => self.voqs.push(Voq {
                flow,
                flush_at: at,
                seq,
            }),
        }
    }

    /// Source ToR: a REPLY or NOTIFY for one of its flows (consumed).
    fn tx_control(&mut self, now: SimTime, pkt: &PacketMeta, tag: &LbTag) {
        let w = tag.words;
        match w[0] >> 56 {
            TAG_REPLY => {
                let tail = w[0] & 1 == 1;
                let epoch = u32::try_from(w[1] & 0xffff_ffff).unwrap_or(0);
                let phase = u8::try_from((w[1] >> 32) & 0xff).unwrap_or(0);
                // The reply travels back: its ports are the data's, reversed.
                let key = flow_key(pkt.dip, pkt.sip, pkt.dport, pkt.sport.0);
                let e = self.tx.entry(key).or_insert(TxEntry::NEW);
                if e.epoch != epoch || e.phase != phase {
                    return;
                }
                if tail {
                    e.stabilized = true;
                    e.reply_deadline = None;
                    self.stats.tail_replies_timely += 1;
                } else if e.reply_deadline.is_some_and(|d| now < d) {
                    e.stabilized = true;
                    e.reply_deadline = None;
                    self.stats.init_replies_timely += 1;
                }
            }
            TAG_NOTIFY => {
                let path = PathId {
                    id: u32::try_from(w[0] & 0xffff_ffff).unwrap_or(0),
                    hops: u8::try_from((w[0] >> 32) & 0xff).unwrap_or(0),
                };
                let until = now + micros(self.config.path_pause_us);
                self.paused.insert(path, until);
            }
            _ => {}
        }
    }

    fn age(&mut self, now: SimTime) {
        let limit = micros(self.config.aging_us);
        self.tx
            .retain(|_, e| now.saturating_since(e.active) <= limit);
        self.rx
            .retain(|_, e| now.saturating_since(e.active) <= limit);
        self.paused.retain(|_, until| *until > now);
    }
}

impl SwitchAgent for ConWeave {
    fn add_port(&mut self, port: PortInfo) {
        self.fabric.add_port(port);
    }

    fn add_host(&mut self, host_ip: u32, tor: u32) {
        self.fabric.add_host(host_ip, tor);
    }

    fn add_path(&mut self, dst_tor: u32, path: PathId) {
        self.fabric.add_path(dst_tor, path);
    }

    fn sees_every_packet(&self) -> bool {
        true
    }

    fn on_ingress(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        tag: &mut LbTag,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> Verdict {
        if self.next_aging.is_none() {
            self.next_aging = Some(now + micros(self.config.aging_us));
        }
        // Unknown hosts, intra-ToR traffic and a source ToR without paths: ECMP.
        let role = self.fabric.role(pkt.sip, pkt.dip);
        match (pkt.kind, role) {
            (_, Role::Bypass) => return self.ecmp(pkt, candidates),
            (PacketKind::Data, _) => {}
            (PacketKind::LbControl, Role::DestinationTor { .. }) if !pkt.local => {
                self.tx_control(now, pkt, tag);
                return Verdict::Drop;
            }
            _ => return self.ecmp(pkt, candidates),
        }
        match (DataTag::decode(tag), role) {
            (None, Role::SourceTor { dst }) => self.tx_data(now, pkt, tag, dst, candidates, rng),
            (Some(d), Role::DestinationTor { .. }) => self.rx_data(now, pkt, d, tag),
            (Some(mut d), _) => {
                d.hop = d.hop.saturating_add(1);
                *tag = d.encode();
                self.on_path(d.path, d.hop, pkt, candidates)
            }
            (None, _) => self.ecmp(pkt, candidates),
        }
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<ControlPacket> {
        self.outbox.pop_front()
    }

    fn poll_release(&mut self, _now: SimTime) -> Option<u64> {
        self.releases.pop_front()
    }

    fn poll_at(&self) -> Option<SimTime> {
        let flush = self.voqs.iter().map(|v| v.flush_at).min();
        match (flush, self.next_aging) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_timer(&mut self, now: SimTime, _rng: &mut SimRng) {
        // Due queues flush in the order of their deadlines (then of arming).
        while let Some(i) = self
            .voqs
            .iter()
            .enumerate()
            .filter(|(_, v)| v.flush_at <= now)
            .min_by_key(|(_, v)| (v.flush_at, v.seq))
            .map(|(i, _)| i)
        {
            let v = self.voqs.swap_remove(i);
            self.stats.voq_flushes += 1;
            if let Some(e) = self.rx.get_mut(&v.flow) {
                e.reordering = false;
                e.phase = 1;
            }
            self.releases.push_back(v.flow);
        }
        if self.next_aging.is_some_and(|t| t <= now) {
            self.age(now);
            self.next_aging = Some(now + micros(self.config.aging_us));
        }
    }

    fn counters(&self, out: &mut dyn FnMut(&'static str, u64)) {
        let s = self.stats;
        out("conweave_init_replies_sent", s.init_replies_sent);
        out("conweave_init_replies_timely", s.init_replies_timely);
        out("conweave_tail_replies_sent", s.tail_replies_sent);
        out("conweave_tail_replies_timely", s.tail_replies_timely);
        out("conweave_notifies_sent", s.notifies_sent);
        out("conweave_reroutes", s.reroutes);
        out("conweave_ooo_queued", s.ooo_queued);
        out("conweave_voq_flushes", s.voq_flushes);
        out("conweave_voq_flushes_by_tail", s.voq_flushes_by_tail);
        out("conweave_path_fallbacks", s.path_fallbacks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Entropy;

    const A: u32 = 0x0b00_0001; // host 0, under ToR 10
    const C: u32 = 0x0b00_0201; // host 2, under ToR 11
    const SRC_TOR: u32 = 10;
    const DST_TOR: u32 = 11;

    fn path(uplink: u32) -> PathId {
        PathId::from_ports(&[uplink, 0]).unwrap()
    }

    /// A ToR of the 2-leaf fabric: ports 0-1 hosts, 2-3 uplinks; paths via uplinks 2 and 3.
    fn tor(id: u32) -> (ConWeave, SimRng) {
        let mut cw = ConWeave::new(&ConWeaveConfig::default(), id);
        for port in 0..4 {
            cw.add_port(PortInfo {
                port,
                rate_bps: 100_000_000_000,
                delay_ns: 1_000,
                faces_host: port < 2,
            });
        }
        for (h, t) in [(0, SRC_TOR), (1, SRC_TOR), (2, DST_TOR), (3, DST_TOR)] {
            cw.add_host(0x0b00_0001 + (h << 8), t);
        }
        let other = if id == SRC_TOR { DST_TOR } else { SRC_TOR };
        cw.add_path(other, path(2));
        cw.add_path(other, path(3));
        (cw, SimRng::new(7))
    }

    fn uplinks() -> Vec<EgressCandidate> {
        crate::switch::test_support::cands(&[0, 0, 0, 0])[2..].to_vec()
    }

    fn host_port() -> Vec<EgressCandidate> {
        crate::switch::test_support::cands(&[0])
    }

    fn data(psn: u32) -> PacketMeta {
        PacketMeta {
            kind: PacketKind::Data,
            sip: A,
            dip: C,
            sport: Entropy(10_000),
            dport: 100,
            psn: Psn(psn),
            ingress_port: 0,
            size_bytes: 1048,
            pg: 3,
            ..PacketMeta::default()
        }
    }

    fn at_us(us: u64) -> SimTime {
        SimTime::from_ns(2_000_000_000 + us * 1_000)
    }

    /// Sends one packet from the source ToR; returns its tag and the uplink taken.
    fn send(cw: &mut ConWeave, rng: &mut SimRng, now: SimTime, psn: u32) -> (DataTag, u32) {
        let mut tag = LbTag::NONE;
        let c = uplinks();
        let Verdict::Forward { index, .. } = cw.on_ingress(now, &data(psn), &mut tag, &c, rng)
        else {
            panic!("data is forwarded at the source ToR")
        };
        (DataTag::decode(&tag).unwrap(), c[index].port)
    }

    /// The control packet the destination ToR sends for `tag`, delivered at the source ToR.
    fn deliver(cw: &mut ConWeave, rng: &mut SimRng, now: SimTime, ctrl: &ControlPacket) {
        let pkt = PacketMeta {
            kind: PacketKind::LbControl,
            sip: ctrl.sip,
            dip: ctrl.dip,
            sport: Entropy(ctrl.sport),
            dport: ctrl.dport,
            ingress_port: 2,
            size_bytes: ctrl.size_bytes,
            ..PacketMeta::default()
        };
        let mut tag = ctrl.tag;
        let v = cw.on_ingress(now, &pkt, &mut tag, &host_port(), rng);
        assert_eq!(v, Verdict::Drop, "control is consumed by the source ToR");
    }

    #[test]
    fn first_packet_is_an_init_and_the_flow_keeps_its_path_until_the_deadline() {
        let (mut cw, mut rng) = tor(SRC_TOR);
        let (t0, up0) = send(&mut cw, &mut rng, at_us(0), 0);
        assert_eq!(
            (t0.flag, t0.epoch, t0.phase, t0.hop),
            (DataFlag::Init, 1, 0, 0)
        );
        assert_eq!(t0.path.port_at(0), Some(up0));
        // Within the 8 µs deadline (4 µs base RTT + 4 µs): plain data, same path and epoch.
        let (t1, up1) = send(&mut cw, &mut rng, at_us(7), 1);
        assert_eq!(
            (t1.flag, t1.epoch, t1.phase, up1),
            (DataFlag::Data, 1, 0, up0)
        );
        assert_eq!(cw.stats().reroutes, 0);
    }

    #[test]
    fn a_timely_reply_starts_a_new_epoch_on_the_same_path() {
        let (mut src, mut rng) = tor(SRC_TOR);
        let (mut dst, _) = tor(DST_TOR);
        let (t0, up0) = send(&mut src, &mut rng, at_us(0), 0);
        let mut tag = t0.encode();
        let mut at_dst = data(0);
        at_dst.ingress_port = 2;
        let v = dst.on_ingress(at_us(3), &at_dst, &mut tag, &host_port(), &mut rng);
        assert_eq!(v, Verdict::at(0));
        assert!(!tag.present, "the destination ToR removes the tag");
        let reply = dst.poll_transmit(at_us(3)).unwrap();
        assert_eq!((reply.size_bytes, reply.sip, reply.dip), (64, C, A));
        assert_eq!(dst.stats().init_replies_sent, 1);
        deliver(&mut src, &mut rng, at_us(6), &reply);
        assert_eq!(src.stats().init_replies_timely, 1);
        let (t1, up1) = send(&mut src, &mut rng, at_us(7), 1);
        assert_eq!((t1.flag, t1.epoch, up1), (DataFlag::Init, 2, up0));
    }

    #[test]
    fn after_a_missed_deadline_the_tail_takes_the_old_path_and_the_next_packet_the_new_one() {
        let (mut cw, mut rng) = tor(SRC_TOR);
        let (t0, up0) = send(&mut cw, &mut rng, at_us(0), 0);
        // Pause the current path, so the only good path is the other one.
        let notify = ControlPacket {
            kind: ControlKind::LbControl,
            sip: C,
            dip: A,
            sport: 100,
            dport: 10_000,
            qpn: 0,
            pg: 3,
            epsn: Psn(0),
            echo_seq_bytes: 0,
            ts_ns: 0,
            size_bytes: 64,
            from_port: 0,
            tag: notify_tag(t0.path),
        };
        deliver(&mut cw, &mut rng, at_us(5), &notify);
        // 9 µs > the 8 µs deadline: this packet is the TAIL, still on the old path.
        let (tail, up_tail) = send(&mut cw, &mut rng, at_us(9), 1);
        assert_eq!((tail.flag, tail.phase, up_tail), (DataFlag::Tail, 0, up0));
        assert_eq!(tail.tail_ns, at_us(9).as_ns());
        let (next, up_next) = send(&mut cw, &mut rng, at_us(10), 2);
        assert_eq!((next.flag, next.phase, next.epoch), (DataFlag::Data, 1, 1));
        assert_ne!(up_next, up0, "phase 1 moved off the paused path");
        assert_eq!(
            next.tail_ns,
            at_us(9).as_ns(),
            "phase-1 packets carry the TAIL's time"
        );
        assert_eq!(cw.stats().reroutes, 1);
        // The NOTIFY's pause ends after 16 µs.
        assert!(cw.is_paused(t0.path, at_us(20)) && !cw.is_paused(t0.path, at_us(21)));
    }

    #[test]
    fn phase_one_waits_in_the_voq_until_the_predicted_time_then_flushes_in_order() {
        let (mut dst, mut rng) = tor(DST_TOR);
        let tagged = |phase: u8, flag: DataFlag, tx_us: u64| DataTag {
            path: path(2),
            hop: 1,
            epoch: 1,
            phase,
            tx_ns: at_us(tx_us).as_ns(),
            tail_ns: if phase == 1 || flag == DataFlag::Tail {
                at_us(9).as_ns()
            } else {
                0
            },
            flag,
        };
        let mut arrival_rng = SimRng::new(3);
        let mut arrive = |cw: &mut ConWeave, now: SimTime, t: DataTag| {
            let mut tag = t.encode();
            let mut p = data(0);
            p.ingress_port = 2;
            cw.on_ingress(now, &p, &mut tag, &host_port(), &mut arrival_rng)
        };
        // Phase 0 sent at 0 µs arrives at 5 µs; phase 1 (TAIL sent at 9 µs) overtakes the TAIL.
        assert_eq!(
            arrive(&mut dst, at_us(5), tagged(0, DataFlag::Init, 0)),
            Verdict::at(0)
        );
        let key = flow_key(A, C, 10_000, 100);
        let v = arrive(&mut dst, at_us(12), tagged(1, DataFlag::Data, 10));
        assert_eq!(v, Verdict::Hold { queue: key });
        // Predicted flush: phase-0 RX 5 µs + (TAIL tx 9 - phase-0 tx 0) + 16 µs = 30 µs.
        assert_eq!(dst.poll_at(), Some(at_us(30)));
        assert_eq!(dst.stats().ooo_queued, 1);
        // A second phase-1 packet joins the same queue.
        let v = arrive(&mut dst, at_us(13), tagged(1, DataFlag::Data, 11));
        assert_eq!(v, Verdict::Hold { queue: key });
        dst.on_timer(at_us(29), &mut rng);
        assert_eq!(
            dst.poll_release(at_us(29)),
            None,
            "not before the predicted time"
        );
        dst.on_timer(at_us(30), &mut rng);
        assert_eq!(dst.poll_release(at_us(30)), Some(key));
        assert_eq!(dst.stats().voq_flushes, 1);
        // After the flush the flow is in phase 1: later phase-1 packets go straight through.
        assert_eq!(
            arrive(&mut dst, at_us(31), tagged(1, DataFlag::Data, 20)),
            Verdict::at(0)
        );
    }

    #[test]
    fn the_tail_flushes_the_voq_one_nanosecond_later() {
        let (mut dst, mut rng) = tor(DST_TOR);
        let mk = |phase: u8, flag: DataFlag| DataTag {
            path: path(2),
            hop: 1,
            epoch: 1,
            phase,
            tx_ns: at_us(0).as_ns(),
            tail_ns: at_us(9).as_ns(),
            flag,
        };
        let mut p = data(0);
        p.ingress_port = 2;
        let mut tag = mk(0, DataFlag::Init).encode();
        dst.on_ingress(at_us(5), &p, &mut tag, &host_port(), &mut rng);
        let mut tag = mk(1, DataFlag::Data).encode();
        let v = dst.on_ingress(at_us(12), &p, &mut tag, &host_port(), &mut rng);
        assert!(matches!(v, Verdict::Hold { .. }));
        let mut tag = mk(0, DataFlag::Tail).encode();
        let v = dst.on_ingress(at_us(14), &p, &mut tag, &host_port(), &mut rng);
        assert_eq!(v, Verdict::at(0), "the TAIL itself goes to the host first");
        assert_eq!(dst.poll_at(), Some(at_us(14) + SimDuration::from_ns(1)));
        assert_eq!(dst.stats().voq_flushes_by_tail, 1);
        let reply = std::iter::from_fn(|| dst.poll_transmit(at_us(14)))
            .last()
            .unwrap();
        assert_eq!(
            reply.tag.words[0] & 1,
            1,
            "the last control is a REPLY(TAIL) = CLEAR"
        );
    }

    #[test]
    fn a_ce_marked_packet_sends_a_notify_naming_its_path() {
        let (mut dst, mut rng) = tor(DST_TOR);
        let t = DataTag {
            path: path(3),
            hop: 1,
            epoch: 1,
            phase: 0,
            tx_ns: 0,
            tail_ns: 0,
            flag: DataFlag::Data,
        };
        let mut tag = t.encode();
        let mut p = data(0);
        p.ingress_port = 3;
        p.ecn_ce = true;
        dst.on_ingress(at_us(1), &p, &mut tag, &host_port(), &mut rng);
        let n = dst.poll_transmit(at_us(1)).unwrap();
        assert_eq!(n.tag, notify_tag(path(3)));
        assert_eq!((n.size_bytes, n.kind), (64, ControlKind::LbControl));
        assert_eq!(dst.stats().notifies_sent, 1);
    }

    #[test]
    fn a_spine_follows_the_path_and_control_takes_ecmp() {
        let mut spine = ConWeave::new(&ConWeaveConfig::default(), 20);
        for (h, t) in [(0, SRC_TOR), (2, DST_TOR)] {
            spine.add_host(0x0b00_0001 + (h << 8), t);
        }
        let mut rng = SimRng::new(1);
        let cands = crate::switch::test_support::cands(&[0, 0, 0]);
        let t = DataTag {
            path: PathId::from_ports(&[2, 1]).unwrap(),
            hop: 0,
            epoch: 1,
            phase: 0,
            tx_ns: 0,
            tail_ns: 0,
            flag: DataFlag::Data,
        };
        let mut tag = t.encode();
        let v = spine.on_ingress(at_us(1), &data(0), &mut tag, &cands, &mut rng);
        assert_eq!(v, Verdict::at(1), "hop 1 of the path is port 1");
        assert_eq!(DataTag::decode(&tag).unwrap().hop, 1);
        let mut ctrl = data(0);
        ctrl.kind = PacketKind::LbControl;
        let mut none = LbTag::NONE;
        let v = spine.on_ingress(at_us(1), &ctrl, &mut none, &cands, &mut rng);
        let ecmp = EcmpHash::new(20).index(&ctrl, 3);
        assert_eq!(v, Verdict::at(ecmp));
    }

    #[test]
    fn aging_forgets_idle_flows_after_two_milliseconds() {
        let (mut cw, mut rng) = tor(SRC_TOR);
        send(&mut cw, &mut rng, at_us(0), 0);
        assert_eq!(cw.poll_at(), Some(at_us(2_000)));
        cw.on_timer(at_us(2_000), &mut rng);
        assert_eq!(cw.tx.len(), 1, "idle for exactly 2 ms: kept");
        cw.on_timer(at_us(4_000), &mut rng);
        assert!(cw.tx.is_empty());
    }

    #[test]
    fn shared_reference_rand_draws_three_paths_per_packet_across_switches() {
        // Both ToRs (2 paths each, uplinks 2 and 3) share one stream after srand(1): glibc's
        // values 1804289383, 846930886, 1681692777 | 1714636915, 1957747793, 424238335 |
        // 719885386, 1649760492, 596516649 | 1189641421. Each data packet at a source ToR
        // draws the unused initial path, then paths 1 and 2 (value % 2 into [uplink 2, 3]).
        let shared = crate::rng::GlibcRand::shared(1);
        let (mut src, mut rng) = tor(SRC_TOR);
        let (mut other, _) = tor(DST_TOR);
        src.share_reference_rand(std::sync::Arc::clone(&shared));
        other.share_reference_rand(std::sync::Arc::clone(&shared));
        // src: path 1 = 846930886 % 2 = 0 (uplink 2), not paused: taken.
        let (t0, up0) = send(&mut src, &mut rng, at_us(0), 0);
        assert_eq!((t0.flag, up0), (DataFlag::Init, 2));
        // the other ToR, a flow towards host A: path 1 = 1957747793 % 2 = 1 (uplink 3).
        let back = PacketMeta {
            sip: C,
            dip: A,
            ..data(0)
        };
        let mut tag = LbTag::NONE;
        let c = uplinks();
        let Verdict::Forward { index, .. } =
            other.on_ingress(at_us(1), &back, &mut tag, &c, &mut rng)
        else {
            panic!("data is forwarded at the source ToR")
        };
        assert_eq!(c[index].port, 3);
        // src again: three more draws, the flow keeps uplink 2.
        let (t1, up1) = send(&mut src, &mut rng, at_us(2), 1);
        assert_eq!((t1.flag, up1), (DataFlag::Data, 2));
        assert_eq!(
            shared.lock().map(|mut g| g.next_rand()).ok(),
            Some(1_189_641_421)
        );
    }
}
