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
use crate::algorithm::Algorithm;
use crate::error::{check_int, check_real, ConfigError};
use crate::rng::{below_or_shared, SharedGlibcRand, SimRng};
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
    pub fn validate(&self, algorithm: Algorithm) -> Result<(), ConfigError> {
        check_int(
            algorithm,
            "flowlet_timeout_ns",
            self.flowlet_timeout_ns,
            1,
            1_000_000_000,
        )?;
        check_int(
            algorithm,
            "dre_period_ns",
            self.dre_period_ns,
            100,
            1_000_000_000,
        )?;
        check_int(algorithm, "aging_ns", self.aging_ns, 1_000, 10_000_000_000)?;
        check_int(
            algorithm,
            "quantize_bits",
            u64::from(self.quantize_bits),
            1,
            16,
        )?;
        check_real(algorithm, "alpha", self.alpha, 0.001, 1.0)?;
        check_int(
            algorithm,
            "path_samples",
            u64::from(self.path_samples),
            1,
            256,
        )
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
mod tests {
    use super::*;
    use crate::config::{LbConfig, SwitchLbConfig};
    use crate::switch::fabric::test_fabric::{
        data, path, setup_leaf, setup_spine, single, uplinks, HOSTS, SPINES,
    };

    fn leaf(id: u32) -> Conga {
        let mut c = Conga::new(&CongaConfig::default(), id, EcmpHash::new(id));
        setup_leaf(&mut c, id);
        c
    }

    fn spine(s: u32) -> Conga {
        let mut c = Conga::new(&CongaConfig::default(), 100 + s, EcmpHash::new(100 + s));
        setup_spine(&mut c);
        c
    }

    fn us(n: u64) -> SimTime {
        SimTime::from_ns(n * 1_000)
    }

    /// At 100 Gbps, τ = 50 us, α = 0.2: `C·τ/α` = 25e6 bits, so `CE = floor(X · 64 / 25e6)`
    /// and X = 390625 B is one CE step. Sets `port`'s DRE to the middle of step `ce`.
    fn set_local_ce(c: &mut Conga, port: u32, ce: u64) {
        c.dre[port as usize] = ce * 390_625 + 195_312;
        assert_eq!(u64::from(c.local_ce(port)), ce);
    }

    fn set_remote_ce(c: &mut Conga, dst_tor: u32, k: usize, ce: u32) {
        let slot = c.fabric.slot_of(dst_tor).unwrap();
        c.to_leaf[slot][k] = Some(Metric {
            ce,
            updated: SimTime::ZERO,
        });
    }

    fn forward(
        c: &mut Conga,
        now: SimTime,
        pkt: &PacketMeta,
        tag: &mut LbTag,
        cands: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> u32 {
        let Verdict::Forward { index, .. } = c.on_ingress(now, pkt, tag, cands, rng) else {
            unreachable!("CONGA never holds or drops")
        };
        cands[index].port
    }

    /// Sends `pkt` out of its source leaf `c`; returns (uplink, tag).
    fn send(c: &mut Conga, now: SimTime, pkt: &PacketMeta, rng: &mut SimRng) -> (u32, LbTag) {
        let mut tag = LbTag::NONE;
        let port = forward(c, now, pkt, &mut tag, &uplinks(), rng);
        (port, tag)
    }

    #[test]
    fn config_defaults_are_the_reference_constants_and_errors_name_the_parameter() {
        let c = LbConfig::parse("conga", "").unwrap();
        assert_eq!(
            c.switch,
            SwitchLbConfig::Conga(CongaConfig {
                flowlet_timeout_ns: 100_000,
                dre_period_ns: 50_000,
                aging_ns: 500_000,
                quantize_bits: 3,
                alpha: 0.2,
                path_samples: 4,
            })
        );
        let c = LbConfig::parse("conga", "path_samples = 2, alpha = 0.5").unwrap();
        assert_eq!(
            c.switch,
            SwitchLbConfig::Conga(CongaConfig {
                path_samples: 2,
                alpha: 0.5,
                ..CongaConfig::default()
            })
        );
        let e = LbConfig::parse("conga", "alpha = 0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `conga`, parameter `alpha`: must be in [0.001, 1], got 0"
        );
        let e = LbConfig::parse("conga", "quantize_bits = 17").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("quantize_bits"), "{e}");
        let e = LbConfig::parse("conga", "path_samples = 0").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("path_samples"), "{e}");
        let e = LbConfig::parse("conga", "dre_period_ns = \"x\"").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("dre_period_ns"), "{e}");
    }

    #[test]
    fn quantisation_at_100gbps_matches_the_hand_computation() {
        let c = leaf(0);
        // floor(X * 64 / 25e6), not capped at 2^Q - 1 = 7.
        assert_eq!(c.quantize(2, 0), 0);
        assert_eq!(c.quantize(2, 1_048), 0);
        assert_eq!(c.quantize(2, 390_000), 0);
        assert_eq!(c.quantize(2, 400_000), 1); // 1.024
        assert_eq!(c.quantize(2, 1_000_000), 2); // 2.56
        assert_eq!(c.quantize(2, 3_200_000), 8); // 8.192
        assert_eq!(c.quantize(2, 10_000_000), 25); // 25.6
        assert_eq!(c.quantize(77, 10_000_000), 0, "unknown port");
    }

    #[test]
    fn dre_counts_routed_bytes_and_decays_by_0_8_per_period_from_the_first_packet() {
        let mut c = leaf(0);
        let mut rng = SimRng::new(1);
        assert_eq!(c.poll_at(), None);
        let (port, tag) = send(&mut c, us(10), &data((0, 0), (1, 0), 5), &mut rng);
        assert_eq!(c.dre_bytes(port), 1_048);
        assert_eq!(tag.words[W_CE], 0);
        assert_eq!(
            c.poll_at(),
            Some(us(60)),
            "first decay tau after the first data packet"
        );
        c.on_timer(us(60), &mut rng);
        assert_eq!(c.dre_bytes(port), 838); // 838.4, truncated
        assert_eq!(c.poll_at(), Some(us(110)));
        c.on_timer(us(110), &mut rng);
        assert_eq!(c.dre_bytes(port), 670); // 670.4
                                            // Called late, the missed periods all run: 160, 210, 260 us.
        c.on_timer(us(260), &mut rng);
        assert_eq!(c.dre_bytes(port), 342); // 536, 428, 342
        assert_eq!(c.poll_at(), Some(us(310)));
    }

    #[test]
    fn new_flowlet_takes_the_path_with_the_lowest_max_of_local_and_remote_ce() {
        let mut c = leaf(0);
        let mut rng = SimRng::new(2);
        // Spine k's path: (local, remote) = (5, 0), (0, 3), (2, 4), (1, 6) -> max 5, 3, 4, 6.
        for (k, (local, remote)) in [(5, 0), (0, 3), (2, 4), (1, 6)].into_iter().enumerate() {
            set_local_ce(&mut c, HOSTS + k as u32, local);
            set_remote_ce(&mut c, 1, k, remote);
        }
        for f in 0..100 {
            let (port, tag) = send(&mut c, us(1), &data((0, 0), (1, 0), f), &mut rng);
            assert_eq!(port, HOSTS + 1, "flow {f}");
            assert_eq!(word_path(tag.words[W_PATH]), path(1, 1));
        }
        assert_eq!(c.stats().flowlets, 100);
    }

    #[test]
    fn ties_are_broken_uniformly() {
        // No congestion anywhere: 4 equal paths, 8000 flowlets; chi-square (3 dof, p = 0.01)
        // below 11.34. DRE does not decay here, so keep the packets' local CE at 0 by
        // resetting it.
        let mut c = leaf(0);
        let mut rng = SimRng::new(3);
        let mut counts = [0u32; 4];
        for f in 0..8000u16 {
            let (port, _) = send(&mut c, us(1), &data((0, 1), (1, 1), f), &mut rng);
            counts[(port - HOSTS) as usize] += 1;
            c.dre.iter_mut().for_each(|x| *x = 0);
        }
        let chi2: f64 = counts
            .iter()
            .map(|&n| (f64::from(n) - 2000.0).powi(2) / 2000.0)
            .sum();
        assert!(chi2 < 11.34, "chi2 = {chi2}, {counts:?}");
    }

    #[test]
    fn only_a_window_of_consecutive_paths_is_sampled() {
        // 8 paths (uplinks 2..9), 4 samples: offsets 0..=4 are equally likely; only offset 0
        // sees nothing but the congested paths 0-3, so 1/5 of the flowlets land there.
        let mut c = Conga::new(&CongaConfig::default(), 0, EcmpHash::new(0));
        for port in 0..12 {
            c.add_port(PortInfo {
                port,
                rate_bps: 100_000_000_000,
                delay_ns: 1_000,
                faces_host: port < 2,
            });
        }
        c.add_host(data((0, 0), (1, 0), 0).sip, 0);
        c.add_host(data((0, 0), (1, 0), 0).dip, 1);
        for k in (0..8).rev() {
            c.add_path(1, PathId::from_ports(&[2 + k, 1]).unwrap());
        }
        for k in 0..4 {
            set_remote_ce(&mut c, 1, k, 7);
        }
        let cands: Vec<EgressCandidate> = (2..10).flat_map(single).collect();
        let mut rng = SimRng::new(4);
        let mut congested = 0;
        for f in 0..5000u16 {
            let mut tag = LbTag::NONE;
            let port = forward(
                &mut c,
                us(1),
                &data((0, 0), (1, 0), f),
                &mut tag,
                &cands,
                &mut rng,
            );
            congested += u32::from(port < 6);
            c.dre.iter_mut().for_each(|x| *x = 0);
        }
        // Binomial(5000, 0.2): mean 1000, sd 28.
        assert!((880..1120).contains(&congested), "{congested}");
    }

    #[test]
    fn flowlet_keeps_its_path_for_gaps_up_to_100us() {
        let mut c = leaf(0);
        let mut rng = SimRng::new(5);
        let pkt = data((0, 0), (1, 0), 21);
        let (first, _) = send(&mut c, us(0), &pkt, &mut rng);
        // Make every other path strictly better: an active flowlet must not move.
        for k in 0..SPINES {
            set_local_ce(&mut c, HOSTS + k, u64::from(HOSTS + k == first) * 5);
        }
        assert_eq!(send(&mut c, us(99), &pkt, &mut rng).0, first);
        assert_eq!(send(&mut c, us(199), &pkt, &mut rng).0, first);
        assert_eq!(c.stats().flowlets, 1);
        // 100 us + 1 ns after the last packet: a new flowlet, which leaves the congested port.
        let t = us(299) + SimDuration::from_ns(1);
        assert_ne!(send(&mut c, t, &pkt, &mut rng).0, first);
        let s = c.stats();
        assert_eq!((s.flowlets, s.flowlet_timeouts, s.path_changes), (2, 1, 1));
    }

    #[test]
    fn transit_follows_the_path_bytes_and_raises_ce() {
        let mut sp = spine(2);
        let mut rng = SimRng::new(6);
        set_local_ce(&mut sp, 1, 3);
        let pkt = data((0, 0), (1, 0), 1);
        let fb = (path_word(path(0, 3)), 4);
        let both: Vec<EgressCandidate> = (0..2).flat_map(single).collect();
        for (ce_in, ce_out) in [(1, 3), (5, 5)] {
            let mut tag = Conga::tag_words(path(1, 2), 0, ce_in, fb);
            assert_eq!(forward(&mut sp, us(1), &pkt, &mut tag, &both, &mut rng), 1);
            assert_eq!(tag.words[W_HOP], 1);
            assert_eq!(tag.words[W_CE], ce_out);
            assert_eq!((tag.words[W_FB_PATH], tag.words[W_FB_CE]), fb);
            assert_eq!(word_path(tag.words[W_PATH]), path(1, 2));
        }
        assert_eq!(sp.dre_bytes(1), 3 * 390_625 + 195_312 + 2 * 1_048);
        assert_eq!(sp.stats().transit_pkts, 2);
    }

    #[test]
    fn destination_records_feedback_and_ce_removes_the_tag_and_feeds_back_later() {
        let mut dst = leaf(1);
        let mut rng = SimRng::new(7);
        let pkt = data((0, 0), (1, 1), 1);
        let mut tag = Conga::tag_words(path(1, 2), 1, 6, (path_word(path(0, 3)), 4));
        assert_eq!(
            forward(&mut dst, us(1), &pkt, &mut tag, &single(1), &mut rng),
            1
        );
        assert_eq!(tag, LbTag::NONE);
        assert_eq!(dst.remote_ce(0, path(0, 3)), Some(4));
        assert_eq!(dst.remote_ce(0, path(0, 2)), None);
        assert_eq!(dst.from_leaf(0).collect::<Vec<_>>(), [(path(1, 2), 6)]);
        let s = dst.stats();
        assert_eq!((s.feedback_received, s.untagged_pkts), (1, 1));
        // Its next data packet to leaf 0 carries that FromLeaf entry.
        let (_, tag) = send(&mut dst, us(2), &data((1, 0), (0, 0), 9), &mut rng);
        assert_eq!(word_path(tag.words[W_FB_PATH]), path(1, 2));
        assert_eq!(tag.words[W_FB_CE], 6);
        assert_eq!(dst.stats().feedback_sent, 1);
        // A tag without feedback records only the CE.
        let mut tag = Conga::tag_words(path(1, 0), 1, 2, (NO_FEEDBACK, NO_FEEDBACK));
        forward(&mut dst, us(3), &pkt, &mut tag, &single(1), &mut rng);
        assert_eq!(dst.stats().feedback_received, 1);
        assert_eq!(dst.from_leaf(0).count(), 2);
    }

    #[test]
    fn aging_erases_from_leaf_and_zeroes_to_leaf_after_500us() {
        let mut dst = leaf(1);
        let mut rng = SimRng::new(8);
        let pkt = data((0, 0), (1, 1), 1);
        let mut tag = Conga::tag_words(path(1, 2), 1, 6, (path_word(path(0, 3)), 4));
        forward(&mut dst, us(10), &pkt, &mut tag, &single(1), &mut rng);
        // A flowlet at this ToR too (towards leaf 0), last packet at 10 us.
        send(&mut dst, us(10), &data((1, 0), (0, 0), 9), &mut rng);
        // Aging at 510 us: entries exactly 500 us old stay.
        assert_eq!(dst.next_aging, Some(us(510)));
        dst.on_timer(us(510), &mut rng);
        assert_eq!(dst.from_leaf(0).count(), 1);
        assert_eq!(dst.remote_ce(0, path(0, 3)), Some(4));
        assert_eq!(dst.flowlet_entries(), 1);
        dst.on_timer(us(1_010), &mut rng);
        assert_eq!(dst.from_leaf(0).count(), 0);
        assert_eq!(dst.remote_ce(0, path(0, 3)), Some(0));
        assert_eq!(dst.flowlet_entries(), 0);
        assert_eq!(dst.stats().aged_flowlets, 1);
    }

    #[test]
    fn intra_tor_and_non_data_take_ecmp_and_leave_no_state() {
        let mut c = leaf(0);
        let mut rng = SimRng::new(9);
        let intra = data((0, 0), (0, 1), 3);
        let mut tag = LbTag::NONE;
        assert_eq!(
            forward(&mut c, us(0), &intra, &mut tag, &single(1), &mut rng),
            1
        );
        let ack = PacketMeta {
            kind: PacketKind::Ack,
            ..data((1, 0), (0, 0), 3)
        };
        let up = uplinks();
        let v = c.on_ingress(us(0), &ack, &mut tag, &up, &mut rng);
        assert_eq!(v, Verdict::at(EcmpHash::new(0).index(&ack, up.len())));
        assert_eq!(tag, LbTag::NONE);
        assert!(c.dre.iter().all(|&x| x == 0));
        assert_eq!(c.flowlet_entries(), 0);
    }

    #[test]
    fn feedback_steers_new_flowlets_away_from_a_remotely_congested_path() {
        // Leaf 0 -> leaf 1 over 4 spines; spine 2's link to leaf 1 is congested (CE 6). Leaf 1
        // learns it in FromLeaf, feeds it back on its own data to leaf 0, and leaf 0's new
        // flowlets then avoid spine 2.
        let mut rng = SimRng::new(10);
        let mut leaves = [leaf(0), leaf(1)];
        let mut spines: Vec<Conga> = (0..SPINES).map(spine).collect();
        set_local_ce(&mut spines[2], 1, 6);
        let mut deliver = |leaves: &mut [Conga; 2], now: SimTime, pkt: &PacketMeta| {
            let (s, d) = if pkt.sip == data((0, 0), (1, 0), 0).sip
                || pkt.sip == data((0, 1), (1, 0), 0).sip
            {
                (0, 1)
            } else {
                (1, 0)
            };
            let (up, mut tag) = send(&mut leaves[s], now, pkt, &mut rng);
            let sp = &mut spines[(up - HOSTS) as usize];
            forward(sp, now, pkt, &mut tag, &single(d as u32), &mut rng);
            forward(&mut leaves[d], now, pkt, &mut tag, &single(0), &mut rng);
            up
        };
        // Leaf 0 sends on every path (64 flows), then leaf 1 answers with 64 data packets.
        for f in 0..64 {
            deliver(&mut leaves, us(1), &data((0, 0), (1, 0), f));
        }
        assert!(leaves[1]
            .from_leaf(0)
            .any(|(p, ce)| p == path(1, 2) && ce == 6));
        for f in 0..64 {
            deliver(&mut leaves, us(2), &data((1, 0), (0, 0), f));
        }
        assert_eq!(leaves[0].remote_ce(1, path(1, 2)), Some(6));
        leaves[0].dre.iter_mut().for_each(|x| *x = 0);
        for f in 1000..1100 {
            assert_ne!(
                deliver(&mut leaves, us(3), &data((0, 1), (1, 1), f)),
                HOSTS + 2
            );
        }
        assert!(leaves[0].stats().feedback_received > 0);
        assert!(leaves[1].stats().feedback_sent > 0);
    }

    /// The next value of a shared stream (to check how many draws were taken).
    fn next_value(shared: &SharedGlibcRand) -> Option<u32> {
        shared.lock().map(|mut g| g.next_rand()).ok()
    }

    #[test]
    fn shared_reference_rand_draws_feedback_window_and_tie_across_switches_in_call_order() {
        // Leaves 0 and 1 (4 paths each, 4 samples) share one stream after srand(1): glibc's
        // values 1804289383, 846930886, 1681692777, 1714636915, 1957747793, 424238335,
        // 719885386, 1649760492, 596516649. A new flowlet draws the window start (% 1, as
        // n >= samples) and the tie among the 4 idle paths (% 4); a packet whose FromLeaf
        // table is not empty first draws the feedback entry.
        let shared = crate::rng::GlibcRand::shared(1);
        let mut a = leaf(0);
        let mut b = leaf(1);
        a.share_reference_rand(std::sync::Arc::clone(&shared));
        b.share_reference_rand(std::sync::Arc::clone(&shared));
        let mut rng = SimRng::new(11);
        let spine_of = |tag: &LbTag, dst: u32| {
            let p = word_path(tag.words[W_PATH]);
            (0..SPINES).find(|&s| path(dst, s) == p)
        };
        // a: no feedback; start 1804289383 % 1, tie 846930886 % 4 = 2.
        let (_, t) = send(&mut a, us(1), &data((0, 0), (1, 0), 1), &mut rng);
        assert_eq!(spine_of(&t, 1), Some(2));
        assert_eq!(t.words[W_FB_PATH], NO_FEEDBACK);
        // b: start 1681692777 % 1, tie 1714636915 % 4 = 3.
        let (_, t) = send(&mut b, us(2), &data((1, 0), (0, 0), 2), &mut rng);
        assert_eq!(spine_of(&t, 0), Some(3));
        // a hears from leaf 1 on its paths 0, 1 and 3 (CE 5, 6, 7): FromLeaf has 3 entries.
        for (k, ce) in [(0, 5), (1, 6), (3, 7)] {
            let mut tag = Conga::tag_words(path(0, k), 1, ce, (NO_FEEDBACK, NO_FEEDBACK));
            forward(
                &mut a,
                us(3),
                &data((1, 1), (0, 1), 3),
                &mut tag,
                &single(0),
                &mut rng,
            );
        }
        a.dre.iter_mut().for_each(|x| *x = 0);
        // a, new flow: feedback 1957747793 % 3 = 2 (path 3, CE 7); start 424238335 % 1;
        // tie 719885386 % 4 = 2.
        let pkt = data((0, 1), (1, 1), 4);
        let (_, t) = send(&mut a, us(4), &pkt, &mut rng);
        assert_eq!(spine_of(&t, 1), Some(2));
        assert_eq!(
            (word_path(t.words[W_FB_PATH]), t.words[W_FB_CE]),
            (path(0, 3), 7)
        );
        // Its next packet keeps the flowlet: only the feedback, 1649760492 % 3 = 0 (path 0).
        let (_, t) = send(&mut a, us(5), &pkt, &mut rng);
        assert_eq!(spine_of(&t, 1), Some(2));
        assert_eq!(
            (word_path(t.words[W_FB_PATH]), t.words[W_FB_CE]),
            (path(0, 0), 5)
        );
        // 8 draws taken: the next value is glibc's ninth.
        assert_eq!(next_value(&shared), Some(596_516_649));
    }

    #[test]
    fn shared_reference_rand_draws_the_window_start_only_with_enough_paths() {
        // 2 samples of 4 paths: start % 3, then tie % ties (drawn even with one tie).
        // srand(1): 1804289383 % 3 = 1 -> window paths 1, 2; path 1 is remotely congested,
        // so path 2 alone: 846930886 % 1. Next flow: 1681692777 % 3 = 0 -> paths 0, 1: path 0;
        // 1714636915 % 1. Next: 1957747793 % 3 = 2 -> paths 2, 3 tie: 424238335 % 2 = 1.
        let shared = crate::rng::GlibcRand::shared(1);
        let two = CongaConfig {
            path_samples: 2,
            ..CongaConfig::default()
        };
        let mut c = Conga::new(&two, 0, EcmpHash::new(0));
        setup_leaf(&mut c, 0);
        c.share_reference_rand(std::sync::Arc::clone(&shared));
        set_remote_ce(&mut c, 1, 1, 3);
        let mut rng = SimRng::new(12);
        let mut spines = Vec::new();
        for f in 0..3 {
            let (_, t) = send(&mut c, us(1), &data((0, 0), (1, 0), f), &mut rng);
            let p = word_path(t.words[W_PATH]);
            spines.push((0..SPINES).find(|&s| path(1, s) == p));
            c.dre.iter_mut().for_each(|x| *x = 0);
        }
        assert_eq!(spines, [Some(2), Some(0), Some(3)]);
        assert_eq!(next_value(&shared), Some(719_885_386));
        // 8 samples of 4 paths: the reference draws no start, only the tie among all 4:
        // srand(1): 1804289383 % 4 = 3.
        let shared = crate::rng::GlibcRand::shared(1);
        let eight = CongaConfig {
            path_samples: 8,
            ..CongaConfig::default()
        };
        let mut c = Conga::new(&eight, 0, EcmpHash::new(0));
        setup_leaf(&mut c, 0);
        c.share_reference_rand(std::sync::Arc::clone(&shared));
        let (_, t) = send(&mut c, us(1), &data((0, 0), (1, 0), 0), &mut rng);
        assert_eq!(word_path(t.words[W_PATH]), path(1, 3));
        assert_eq!(next_value(&shared), Some(846_930_886));
    }
}
