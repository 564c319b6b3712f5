//! CONGA (Alizadeh et al., "CONGA: Distributed Congestion-Aware Load Balancing for
//! Datacenters", SIGCOMM 2014), as the reference simulator models it (its
//! `conga-routing`, `LB_MODE 3`; path tables as in [`super::fabric`]): the source ToR sends each
//! new flowlet on the least congested of a few sampled paths, judging a path by the larger of its
//! own uplink's load and the path's congestion as last fed back by the destination ToR.
//!
//! * Only data packets are balanced; every other packet (ACK, NACK, CNP, control) and
//!   intra-ToR data (single-path in the reference) take the switch's flow ECMP hash
//!   ([`EcmpHash`]).
//! * **DRE** (paper §3.2) per egress port: `X += size` for each data packet CONGA routes to
//!   the port; every `dre_period_ns` (τ), `X := X·(1−α)`, truncated to whole bytes as the
//!   reference's integer register. Quantised congestion
//!   `CE = floor(X·8 / (C·τ/α) · 2^Q)`, not capped at `2^Q − 1` (the reference's).
//! * **Source ToR**: the packet carries one uniformly random entry (path, CE) of
//!   `FromLeaf[dstToR]` as feedback, or none. Flowlet key = the reference's
//!   ([`flowlet_key`]); an active flowlet (gap ≤ `flowlet_timeout_ns`) keeps its path, else a
//!   window of `path_samples` consecutive paths (sorted path-id order) starting at a uniformly
//!   random offset in `[0, n − samples]` is scanned; a path's congestion is
//!   `max(local CE of its first port, ToLeaf[dstToR][path] (0 if unknown))`; the minimum wins,
//!   ties uniformly at random. The packet's DRE is added to the first port, and the tag
//!   carries (path, hop 0, CE = that port's CE after the packet, feedback).
//! * **Transit**: hop += 1; egress = the path's port at that hop; the packet's DRE is added to
//!   it; `CE := max(CE, local CE of the port)`.
//! * **Destination ToR**: `ToLeaf[srcToR][fbPath] := fbMetric` (if the tag had feedback),
//!   `FromLeaf[srcToR][path] := CE`, then the tag is removed and the packet takes its (single)
//!   candidate.
//! * **Aging**, every `aging_ns`: ToLeaf entries not updated for more than `aging_ns` get CE 0;
//!   FromLeaf entries as old are erased; flowlets idle as long are erased.
//! * Timers as in the reference: the DRE decay and the aging both start at the first data
//!   packet the switch routes (`now + τ`, `now + aging`) and then repeat with their period.
//!
//! Deviations from the reference (`conga-routing.cc`) and from the paper:
//! * As the reference and unlike the paper (whose feedback is round-robin over changed
//!   entries, §3.3), feedback is a uniformly random FromLeaf entry, sent whether it changed or
//!   not; flowlets are tracked per flow key in an unbounded table (the paper: a hashed table
//!   of 64K entries) and congestion is read over a window of paths (the paper: all uplinks).
//! * Roles come from the host→ToR map rather than from whether the packet carries a tag; on
//!   shortest-path fabrics these are the same.
//! * If the path's port at this hop is not a live candidate, or a transit switch sees an
//!   untagged data packet, the packet takes the ECMP hash and leaves untagged (the reference
//!   would send on the dead port or abort); its size still counts in the DRE of the port it
//!   takes. Counted as `conga_fallbacks`.
//! * Feedback about a path this ToR does not have (possible only with asymmetric setup) is
//!   not stored; the reference stores it in a ToLeaf entry that no decision ever reads.
//! * Random draws use the switch's [`SimRng`], not C `rand()`, unless
//!   [`Conga::share_reference_rand`] gave the agent a glibc `rand()` stream shared by every
//!   switch of the run (quirk `glibc-rand`). Then each data packet at the source ToR draws as
//!   the reference does, in its order: `rand() % |FromLeaf|` for the feedback entry (only if
//!   FromLeaf is not empty); for a new or expired flowlet, the window start
//!   `rand() % (n − samples + 1)` (only if `n ≥ path_samples`: with fewer paths the reference
//!   draws nothing and scans them all, while our own generator still draws `below(1)`), then
//!   `rand() % ties` among the least congested paths (also with one tie).

use serde::Deserialize;

use super::agent::{candidate_index, LbTag, PathId, PortInfo, SwitchAgent, Verdict, TAG_WORDS};
use super::ecmp::EcmpHash;
use super::fabric::{flowlet_key, path_word, word_path, Fabric, FlowletState, Flowlets, Role};
use super::packet::{EgressCandidate, PacketKind, PacketMeta};
use crate::error::{check_int, check_real, ParamError};
use crate::rng::{below_or_shared, SharedGlibcRand, SimRng};
use crate::scheme::{Scheme, SwitchRole};
use crate::time::{SimDuration, SimTime};

/// Parameters of CONGA (defaults: the reference driver's constants).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CongaConfig {
    /// A gap longer than this starts a new flowlet, in ns.
    pub flowlet_timeout_ns: u64,
    /// DRE decay period τ, in ns.
    pub dre_period_ns: u64,
    /// Period of the table aging and the age after which entries are stale, in ns.
    pub aging_ns: u64,
    /// Quantisation bits Q of the congestion metric.
    pub quantize_bits: u32,
    /// DRE decay factor α.
    pub alpha: f64,
    /// Paths sampled per new flowlet.
    pub path_samples: u32,
}

impl Default for CongaConfig {
    fn default() -> Self {
        CongaConfig {
            flowlet_timeout_ns: 100_000,
            dre_period_ns: 50_000,
            aging_ns: 500_000,
            quantize_bits: 3,
            alpha: 0.2,
            path_samples: 4,
        }
    }
}

impl CongaConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// `flowlet_timeout_ns` outside 1 ns..=1 s, `dre_period_ns` outside 100 ns..=1 s,
    /// `aging_ns` outside 1 us..=10 s, `quantize_bits` outside `1..=16`, `alpha` outside
    /// `[0.001, 1]`, `path_samples` outside `1..=256`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int(
            "flowlet_timeout_ns",
            self.flowlet_timeout_ns,
            1,
            1_000_000_000,
        )?;
        check_int("dre_period_ns", self.dre_period_ns, 100, 1_000_000_000)?;
        check_int("aging_ns", self.aging_ns, 1_000, 10_000_000_000)?;
        check_int("quantize_bits", u64::from(self.quantize_bits), 1, 16)?;
        check_real("alpha", self.alpha, 0.001, 1.0)?;
        check_int("path_samples", u64::from(self.path_samples), 1, 256)
    }
}

/// Tag layout.
const W_PATH: usize = 0;
const W_HOP: usize = 1;
const W_CE: usize = 2;
const W_FB_PATH: usize = 3;
const W_FB_CE: usize = 4;
/// "No feedback" in the feedback words.
const NO_FEEDBACK: u64 = u64::MAX;

/// Counters of one switch (all sum-able across switches).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CongaStats {
    /// Flowlets started at this (source) ToR: new flows and flowlet timeouts.
    pub flowlets: u64,
    /// Of those, restarts of a known flowlet after a gap (the reference's `nFlowletTimeout`).
    pub flowlet_timeouts: u64,
    /// Restarts that chose a different path than the flowlet had.
    pub path_changes: u64,
    /// Data packets that left the source ToR carrying a FromLeaf entry as feedback.
    pub feedback_sent: u64,
    /// Feedback entries stored into ToLeaf at the destination ToR.
    pub feedback_received: u64,
    /// Data packets tagged at the source ToR.
    pub tagged_pkts: u64,
    /// Tagged data packets forwarded along their path by a transit switch.
    pub transit_pkts: u64,
    /// Tags read and removed at the destination ToR.
    pub untagged_pkts: u64,
    /// Data packets sent by ECMP because their path was not usable here.
    pub fallbacks: u64,
    /// Flowlets erased by aging.
    pub aged_flowlets: u64,
}

/// A congestion value and when it was last written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Metric {
    ce: u32,
    updated: SimTime,
}

/// CONGA's switch agent.
#[derive(Debug, Clone)]
pub struct Conga {
    config: CongaConfig,
    ecmp: EcmpHash,
    fabric: Fabric,
    /// DRE register per port, in bytes.
    dre: Vec<u64>,
    /// `C·τ/α` per port, in bits (0: rate unknown, CE 0).
    dre_scale: Vec<f64>,
    /// `2^Q`.
    levels: f64,
    /// Per destination ToR slot, parallel to the fabric's sorted paths: the remote CE fed back.
    to_leaf: Vec<Vec<Option<Metric>>>,
    /// Per source ToR slot, sorted by path: CE of that ToR's paths to us, to feed back.
    from_leaf: Vec<Vec<(PathId, Metric)>>,
    flowlets: Flowlets,
    next_dre: Option<SimTime>,
    next_aging: Option<SimTime>,
    stats: CongaStats,
    /// The run's shared glibc `rand()` stream (quirk `glibc-rand`), else `None`.
    reference_rand: Option<SharedGlibcRand>,
}

impl Conga {
    /// The agent of switch `switch_id`; `ecmp` routes what CONGA does not.
    #[must_use]
    pub fn new(config: &CongaConfig, switch_id: u32, ecmp: EcmpHash) -> Self {
        Conga {
            config: *config,
            ecmp,
            fabric: Fabric::new(switch_id),
            dre: Vec::new(),
            dre_scale: Vec::new(),
            levels: f64::from(1u32 << config.quantize_bits.min(31)),
            to_leaf: Vec::new(),
            from_leaf: Vec::new(),
            flowlets: Flowlets::default(),
            next_dre: None,
            next_aging: None,
            stats: CongaStats::default(),
            reference_rand: None,
        }
    }

    /// Makes every random draw `rand() % n` from `rand`, which other switches share, in the
    /// reference's order, instead of the switch's own generator (quirk `glibc-rand`).
    pub fn share_reference_rand(&mut self, rand: SharedGlibcRand) {
        self.reference_rand = Some(rand);
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> CongaStats {
        self.stats
    }

    /// The DRE register of `port`, in bytes.
    #[must_use]
    pub fn dre_bytes(&self, port: u32) -> u64 {
        usize::try_from(port)
            .ok()
            .and_then(|p| self.dre.get(p))
            .copied()
            .unwrap_or(0)
    }

    /// The quantised congestion of `port` now.
    #[must_use]
    pub fn local_ce(&self, port: u32) -> u32 {
        self.quantize(port, self.dre_bytes(port))
    }

    /// `floor(x·8 / (C·τ/α) · 2^Q)` for `port` (the reference's floating-point order).
    #[must_use]
    pub fn quantize(&self, port: u32, x_bytes: u64) -> u32 {
        let scale = usize::try_from(port)
            .ok()
            .and_then(|p| self.dre_scale.get(p))
            .copied()
            .unwrap_or(0.0);
        if scale <= 0.0 {
            return 0;
        }
        #[allow(
            clippy::cast_precision_loss,
            reason = "DRE registers stay far below 2^53 bytes"
        )]
        let ratio = (x_bytes.saturating_mul(8)) as f64 / scale;
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "floor of a non-negative value, saturating as the reference's cast"
        )]
        let ce = (ratio * self.levels) as u32;
        ce
    }

    /// The CE the destination ToR `dst_tor` last fed back for `path` (`None`: never).
    #[must_use]
    pub fn remote_ce(&self, dst_tor: u32, path: PathId) -> Option<u32> {
        let slot = self.fabric.slot_of(dst_tor)?;
        let i = self.fabric.paths(slot).binary_search(&path).ok()?;
        Some(self.to_leaf.get(slot)?.get(i).copied().flatten()?.ce)
    }

    /// The FromLeaf table of source ToR `src_tor`: (path, CE) in path order.
    pub fn from_leaf(&self, src_tor: u32) -> impl Iterator<Item = (PathId, u32)> + '_ {
        self.fabric
            .slot_of(src_tor)
            .and_then(|s| self.from_leaf.get(s))
            .into_iter()
            .flatten()
            .map(|&(p, m)| (p, m.ce))
    }

    /// Flowlets in the table.
    #[must_use]
    pub fn flowlet_entries(&self) -> usize {
        self.flowlets.len()
    }

    fn ecmp_index(&self, pkt: &PacketMeta, candidates: &[EgressCandidate]) -> usize {
        self.ecmp.index(pkt, candidates.len())
    }

    /// Adds a packet to `port`'s DRE; returns the port's CE after it.
    fn add_to_dre(&mut self, port: u32, size_bytes: u32) -> u32 {
        if let Some(x) = usize::try_from(port).ok().and_then(|p| self.dre.get_mut(p)) {
            *x = x.saturating_add(u64::from(size_bytes));
        }
        self.local_ce(port)
    }

    /// The path for a new flowlet to the ToR in `dst` (the reference's `GetBestPath`).
    fn best_path(&self, dst: usize, rng: &mut SimRng) -> Option<PathId> {
        let paths = self.fabric.paths(dst);
        let n = paths.len();
        let samples = usize::try_from(self.config.path_samples)
            .unwrap_or(usize::MAX)
            .min(n);
        let span = u32::try_from(n - samples + 1).unwrap_or(u32::MAX);
        let shared = self.reference_rand.as_ref();
        // The reference draws the window start only when there are at least `path_samples`
        // paths; our own generator always drew (kept, so runs without the quirk are unchanged).
        let draws_start = shared.is_none()
            || n >= usize::try_from(self.config.path_samples).unwrap_or(usize::MAX);
        let offset = if draws_start {
            usize::try_from(below_or_shared(shared, rng, span)).unwrap_or(0)
        } else {
            0
        };
        let window = paths.get(offset..offset + samples)?;
        let remote = self.to_leaf.get(dst);
        let congestion = |k: usize, path: &PathId| {
            let local = path.port_at(0).map_or(0, |p| self.local_ce(p));
            let remote = remote
                .and_then(|r| r.get(offset + k))
                .copied()
                .flatten()
                .map_or(0, |m| m.ce);
            local.max(remote)
        };
        let best = window
            .iter()
            .enumerate()
            .map(|(k, p)| congestion(k, p))
            .min()?;
        let ties = window
            .iter()
            .enumerate()
            .filter(|&(k, p)| congestion(k, p) == best)
            .count();
        let ties = u32::try_from(ties).unwrap_or(u32::MAX);
        let pick = usize::try_from(below_or_shared(shared, rng, ties)).ok()?;
        window
            .iter()
            .enumerate()
            .filter(|&(k, p)| congestion(k, p) == best)
            .nth(pick)
            .map(|(_, p)| *p)
    }

    /// Source ToR: the flowlet's path.
    fn source_path(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        dst: usize,
        rng: &mut SimRng,
    ) -> Option<PathId> {
        let key = flowlet_key(pkt);
        let previous = match self
            .flowlets
            .lookup(key, now, self.config.flowlet_timeout_ns)
        {
            FlowletState::Active(p) => return Some(p),
            FlowletState::Expired(p) => Some(p),
            FlowletState::New => None,
        };
        let path = self.best_path(dst, rng)?;
        self.flowlets.start(key, path, now);
        self.stats.flowlets += 1;
        if let Some(p) = previous {
            self.stats.flowlet_timeouts += 1;
            if p != path {
                self.stats.path_changes += 1;
            }
        }
        Some(path)
    }

    /// Source ToR: a uniformly random FromLeaf entry of the ToR in `dst`, as tag words.
    fn feedback(&mut self, dst: usize, rng: &mut SimRng) -> (u64, u64) {
        let Some(entries) = self.from_leaf.get(dst).filter(|e| !e.is_empty()) else {
            return (NO_FEEDBACK, NO_FEEDBACK);
        };
        let n = u32::try_from(entries.len()).unwrap_or(u32::MAX);
        let i = usize::try_from(below_or_shared(self.reference_rand.as_ref(), rng, n)).unwrap_or(0);
        match entries.get(i) {
            Some(&(path, m)) => {
                self.stats.feedback_sent += 1;
                (path_word(path), u64::from(m.ce))
            }
            None => (NO_FEEDBACK, NO_FEEDBACK),
        }
    }

    /// Destination ToR: records the tag's feedback and CE, coming from the ToR in `src`.
    fn record(&mut self, now: SimTime, tag: &LbTag, src: usize) {
        let word = |w: usize| tag.words.get(w).copied().unwrap_or(NO_FEEDBACK);
        let (fb_path, fb_ce) = (word(W_FB_PATH), word(W_FB_CE));
        if fb_path != NO_FEEDBACK && fb_ce != NO_FEEDBACK {
            let path = word_path(fb_path);
            if let Ok(i) = self.fabric.paths(src).binary_search(&path) {
                if let Some(e) = self.to_leaf.get_mut(src).and_then(|v| v.get_mut(i)) {
                    *e = Some(Metric {
                        ce: u32::try_from(fb_ce).unwrap_or(u32::MAX),
                        updated: now,
                    });
                    self.stats.feedback_received += 1;
                }
            }
        }
        let path = word_path(word(W_PATH));
        let metric = Metric {
            ce: u32::try_from(word(W_CE)).unwrap_or(u32::MAX),
            updated: now,
        };
        if let Some(entries) = self.from_leaf.get_mut(src) {
            match entries.binary_search_by_key(&path, |&(p, _)| p) {
                Ok(i) => {
                    if let Some(e) = entries.get_mut(i) {
                        e.1 = metric;
                    }
                }
                Err(i) => entries.insert(i, (path, metric)),
            }
        }
    }

    fn tag_words(path: PathId, hop: u32, ce: u32, fb: (u64, u64)) -> LbTag {
        let mut words = [0; TAG_WORDS];
        for (w, v) in [
            (W_PATH, path_word(path)),
            (W_HOP, u64::from(hop)),
            (W_CE, u64::from(ce)),
            (W_FB_PATH, fb.0),
            (W_FB_CE, fb.1),
        ] {
            if let Some(x) = words.get_mut(w) {
                *x = v;
            }
        }
        LbTag::new(words)
    }

    fn decay(&mut self) {
        let keep = 1.0 - self.config.alpha;
        for x in &mut self.dre {
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss,
                reason = "truncation to whole bytes is the reference's; X < 2^53"
            )]
            {
                *x = (*x as f64 * keep) as u64;
            }
        }
    }

    fn age(&mut self, at: SimTime) {
        let aging = self.config.aging_ns;
        let stale = |m: &Metric| at.saturating_since(m.updated).as_ns() > aging;
        for m in self.to_leaf.iter_mut().flatten().flatten() {
            if stale(m) {
                m.ce = 0;
            }
        }
        for entries in &mut self.from_leaf {
            entries.retain(|(_, m)| !stale(m));
        }
        let erased = self.flowlets.age(at, aging);
        self.stats.aged_flowlets += erased as u64;
    }
}

impl SwitchAgent for Conga {
    fn reads_port_load(&self) -> bool {
        false
    }
    fn add_port(&mut self, port: PortInfo) {
        self.fabric.add_port(port);
        let n = self.fabric.num_ports();
        self.dre.resize(n, 0);
        self.dre_scale.resize(n, 0.0);
        if let Some(s) = usize::try_from(port.port)
            .ok()
            .and_then(|p| self.dre_scale.get_mut(p))
        {
            #[allow(
                clippy::cast_precision_loss,
                reason = "line rates and periods are far below 2^53"
            )]
            let tau_s = self.config.dre_period_ns as f64 / 1e9;
            #[allow(clippy::cast_precision_loss, reason = "line rates are below 2^53")]
            let rate = port.rate_bps as f64;
            *s = rate * tau_s / self.config.alpha;
        }
    }

    fn add_host(&mut self, host_ip: u32, tor: u32) {
        self.fabric.add_host(host_ip, tor);
    }

    fn uses_fabric_map(&self) -> bool {
        true
    }

    fn add_path(&mut self, dst_tor: u32, path: PathId) {
        if let Some((slot, i)) = self.fabric.add_path(dst_tor, path) {
            let slots = self.fabric.slots();
            self.to_leaf.resize_with(slots, Vec::new);
            self.from_leaf.resize_with(slots, Vec::new);
            if let Some(v) = self.to_leaf.get_mut(slot) {
                v.insert(i.min(v.len()), None);
            }
        }
    }

    fn sees_every_packet(&self) -> bool {
        true // the destination ToR reads every tag; single-candidate hops still count DRE
    }

    fn on_ingress(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        tag: &mut LbTag,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> Verdict {
        if pkt.kind != PacketKind::Data {
            return Verdict::at(self.ecmp_index(pkt, candidates));
        }
        if self.next_dre.is_none() {
            self.next_dre = Some(now + SimDuration::from_ns(self.config.dre_period_ns));
            self.next_aging = Some(now + SimDuration::from_ns(self.config.aging_ns));
        }
        let routed = match self.fabric.role(pkt.sip, pkt.dip) {
            Role::Bypass => return Verdict::at(self.ecmp_index(pkt, candidates)),
            Role::DestinationTor { src } => {
                if tag.present {
                    if let Some(src) = src {
                        self.record(now, tag, src);
                    }
                    self.stats.untagged_pkts += 1;
                }
                *tag = LbTag::NONE;
                return Verdict::at(self.ecmp_index(pkt, candidates));
            }
            Role::SourceTor { dst } => {
                let fb = self.feedback(dst, rng);
                self.source_path(now, pkt, dst, rng).and_then(|path| {
                    let index = path
                        .port_at(0)
                        .and_then(|p| candidate_index(candidates, p))?;
                    let port = path.port_at(0)?;
                    let ce = self.add_to_dre(port, pkt.size_bytes);
                    *tag = Self::tag_words(path, 0, ce, fb);
                    self.stats.tagged_pkts += 1;
                    Some(index)
                })
            }
            Role::Transit if tag.present => {
                let word = |w: usize| tag.words.get(w).copied().unwrap_or(0);
                let path = word_path(word(W_PATH));
                let (ce_in, fb) = (word(W_CE), (word(W_FB_PATH), word(W_FB_CE)));
                u32::try_from(word(W_HOP).saturating_add(1))
                    .ok()
                    .and_then(|hop| {
                        let port = path.port_at(hop)?;
                        let index = candidate_index(candidates, port)?;
                        let local = self.add_to_dre(port, pkt.size_bytes);
                        let ce = u32::try_from(ce_in).unwrap_or(u32::MAX).max(local);
                        *tag = Self::tag_words(path, hop, ce, fb);
                        self.stats.transit_pkts += 1;
                        Some(index)
                    })
            }
            Role::Transit => None,
        };
        let index = routed.unwrap_or_else(|| {
            self.stats.fallbacks += 1;
            *tag = LbTag::NONE;
            let i = self.ecmp_index(pkt, candidates);
            if let Some(c) = candidates.get(i) {
                self.add_to_dre(c.port, pkt.size_bytes);
            }
            i
        });
        Verdict::at(index)
    }

    fn poll_at(&self) -> Option<SimTime> {
        match (self.next_dre, self.next_aging) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_timer(&mut self, now: SimTime, _rng: &mut SimRng) {
        let tau = SimDuration::from_ns(self.config.dre_period_ns);
        while let Some(at) = self.next_dre.filter(|&t| t <= now) {
            self.decay();
            self.next_dre = Some(at + tau);
        }
        let period = SimDuration::from_ns(self.config.aging_ns);
        while let Some(at) = self.next_aging.filter(|&t| t <= now) {
            self.age(at);
            self.next_aging = Some(at + period);
        }
    }

    fn counters(&self, out: &mut dyn FnMut(&'static str, u64)) {
        let s = self.stats;
        out("conga_flowlets", s.flowlets);
        out("conga_flowlet_timeouts", s.flowlet_timeouts);
        out("conga_path_changes", s.path_changes);
        out("conga_feedback_sent", s.feedback_sent);
        out("conga_feedback_received", s.feedback_received);
        out("conga_tagged_pkts", s.tagged_pkts);
        out("conga_transit_pkts", s.transit_pkts);
        out("conga_untagged_pkts", s.untagged_pkts);
        out("conga_fallbacks", s.fallbacks);
        out("conga_aged_flowlets", s.aged_flowlets);
        out("conga_flowlet_entries", self.flowlets.len() as u64);
    }
}

#[cfg(test)]
mod tests;

impl Scheme for Conga {
    type Config = CongaConfig;

    fn validate(config: &CongaConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl SwitchRole for Conga {
    type Agent = Box<Conga>;

    fn agent(config: &CongaConfig, switch_id: u32, ecmp: EcmpHash) -> Box<Conga> {
        Box::new(Conga::new(config, switch_id, ecmp))
    }

    fn share_reference_rand(agent: &mut Box<Conga>, rand: SharedGlibcRand) {
        agent.share_reference_rand(rand);
    }
}
