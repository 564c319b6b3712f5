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
//! * Failed links (the reference never fails one): the source ToR draws only among live paths
//!   (first hop still a route to the destination, [`Fabric::live_paths`]), and a flow whose path
//!   died moves at its next packet, keeping its epoch and phase (counted). A later hop that is
//!   not a live candidate (the routing reaction still under way) falls back to ECMP (counted).

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
use crate::error::{check_int, ParamError};
use crate::rng::{below_or_shared, SharedGlibcRand, SimRng};
use crate::scheme::{Scheme, SwitchRole};
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
    pub fn validate(&self) -> Result<(), ParamError> {
        const S: u64 = 1_000_000;
        check_int("tx_expiry_us", self.tx_expiry_us, 1, S)?;
        check_int("reply_timeout_extra_us", self.reply_timeout_extra_us, 0, S)?;
        check_int("path_pause_us", self.path_pause_us, 0, S)?;
        check_int("extra_voq_flush_us", self.extra_voq_flush_us, 0, S)?;
        check_int("default_voq_wait_us", self.default_voq_wait_us, 1, S)?;
        check_int("aging_us", self.aging_us, 1, S)
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
    /// Flows moved because routing withdrew their path's first hop (a failed link).
    pub dead_path_moves: u64,
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
        // Only live paths are drawn (all of them on a healthy fabric, as the reference).
        let set = self.fabric.live_paths(dst, candidates);
        let shared = self.reference_rand.as_ref();
        let drawn = u32::try_from(set.len())
            .ok()
            .filter(|&n| n > 0)
            .and_then(|n| {
                let mut pick = || {
                    let i = below_or_shared(shared, rng, n);
                    set.get(usize::try_from(i).unwrap_or(0))
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
        let mut moved = false;
        if e.path.is_some_and(|p| !set.contains(p)) {
            // Its path lost a link: the flow moves now, within its epoch and phase.
            e.path = None;
            moved = true;
            self.stats.dead_path_moves += 1;
        }
        if e.path.is_none() {
            e.path = Some(good.unwrap_or(p1));
        }
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
    fn reads_port_load(&self) -> bool {
        false
    }
    fn add_port(&mut self, port: PortInfo) {
        self.fabric.add_port(port);
    }

    fn add_host(&mut self, host_ip: u32, tor: u32) {
        self.fabric.add_host(host_ip, tor);
    }

    fn uses_fabric_map(&self) -> bool {
        true
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
        out("conweave_dead_path_moves", s.dead_path_moves);
    }
}

#[cfg(test)]
mod tests;

impl Scheme for ConWeave {
    type Config = ConWeaveConfig;

    fn validate(config: &ConWeaveConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl SwitchRole for ConWeave {
    type Agent = Box<ConWeave>;

    fn agent(config: &ConWeaveConfig, switch_id: u32, _ecmp: EcmpHash) -> Box<ConWeave> {
        Box::new(ConWeave::new(config, switch_id))
    }

    fn share_reference_rand(agent: &mut Box<ConWeave>, rand: SharedGlibcRand) {
        agent.share_reference_rand(rand);
    }
}
