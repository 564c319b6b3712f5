//! LetFlow (Vanini, Pan, Alizadeh, Edsall, "Let It Flow: Resilient Asymmetric Load Balancing
//! with Flowlet Switching", NSDI 2017), as the reference simulator models it
//! (its `letflow-routing`, `LB_MODE 6`; path tables as in [`super::fabric`]): the source ToR sends
//! each new flowlet of a flow on a uniformly random path to the destination ToR and pins the path
//! in a packet tag that the next switches follow.
//!
//! * Data packets only; every other packet (ACK, NACK, CNP, control) takes the switch's flow
//!   ECMP hash ([`EcmpHash`]).
//! * **Source ToR**: flowlet key = the reference's ([`flowlet_key`]). A flowlet whose last
//!   packet is at most `flowlet_timeout_ns` old keeps its path; otherwise (new flow, or gap >
//!   the timeout) a path is drawn uniformly among all paths to the destination ToR. The packet
//!   is tagged (path, hop 0) and leaves on the path's first port.
//! * **Transit**: hop += 1, egress = the path's port at that hop.
//! * **Destination ToR**: the tag is removed; the packet takes its (single) candidate.
//! * **Intra-ToR** traffic is single-path (as in the reference), with no LetFlow state.
//! * Every `aging_ns` flowlets idle for more than `aging_ns` are erased (table size only; an
//!   erased flowlet behaves as an expired one). As in the reference, the aging timer starts at
//!   the first data packet LetFlow handles and then runs with period `aging_ns`.
//!
//! Deviations from the reference (`letflow-routing.cc`):
//! * Roles come from the host→ToR map (source ToR = the source host's ToR) rather than from
//!   whether the packet carries a tag; on shortest-path fabrics these are the same.
//! * Failed links (the reference never fails one): a new flowlet is drawn among the live paths
//!   only (first hop still a route to the destination, [`Fabric::live_paths`]), and an active
//!   flowlet whose path died is drawn again at once (counted as `letflow_dead_path_draws`), as
//!   a switch picks among its working ports. If the path's port at a later hop is
//!   not among the live candidates (the routing reaction still under way), or a transit switch
//!   sees an untagged data packet, the packet takes the ECMP hash and leaves untagged (the
//!   reference would send on the dead port or abort); counted as `letflow_fallbacks`.
//! * "Uniformly random" uses the switch's [`SimRng`], not C `rand()`, unless
//!   [`LetFlow::share_reference_rand`] gave the agent a glibc `rand()` stream shared by every
//!   switch of the run (quirk `glibc-rand`): then the draw is `rand() % n` in the order the
//!   switches ask, as the reference after `srand(RANDOM_SEED)`.

use serde::Deserialize;

use super::agent::{candidate_index, LbTag, PathId, PortInfo, SwitchAgent, Verdict};
use super::ecmp::EcmpHash;
use super::fabric::{flowlet_key, path_word, word_path, Fabric, FlowletState, Flowlets, Role};
use super::packet::{EgressCandidate, PacketKind, PacketMeta};
use crate::error::{check_int, ParamError};
use crate::rng::{SharedGlibcRand, SimRng};
use crate::scheme::{Scheme, SwitchRole};
use crate::time::{SimDuration, SimTime};

/// Parameters of LetFlow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LetFlowConfig {
    /// A gap longer than this starts a new flowlet, in ns.
    pub flowlet_timeout_ns: u64,
    /// Period of the table aging and the idle time after which a flowlet is erased, in ns.
    pub aging_ns: u64,
}

impl Default for LetFlowConfig {
    fn default() -> Self {
        LetFlowConfig {
            flowlet_timeout_ns: 100_000,
            aging_ns: 2_000_000,
        }
    }
}

impl LetFlowConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// `flowlet_timeout_ns` outside 1 ns..=1 s, `aging_ns` outside 1 us..=10 s.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int(
            "flowlet_timeout_ns",
            self.flowlet_timeout_ns,
            1,
            1_000_000_000,
        )?;
        check_int("aging_ns", self.aging_ns, 1_000, 10_000_000_000)
    }
}

/// Tag layout: word 0 = path, word 1 = hop.
const W_PATH: usize = 0;
const W_HOP: usize = 1;

/// Counters of one switch (all sum-able across switches).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LetFlowStats {
    /// Flowlets started at this (source) ToR: new flows and flowlet timeouts.
    pub flowlets: u64,
    /// Of those, restarts of a known flowlet after a gap (the reference's `nFlowletTimeout`).
    pub flowlet_timeouts: u64,
    /// Restarts that drew a different path than the flowlet had.
    pub path_changes: u64,
    /// Data packets tagged at the source ToR.
    pub tagged_pkts: u64,
    /// Tagged data packets forwarded along their path by a transit switch.
    pub transit_pkts: u64,
    /// Tags removed at the destination ToR.
    pub untagged_pkts: u64,
    /// Data packets sent by ECMP because their path was not usable here.
    pub fallbacks: u64,
    /// Active flowlets drawn again because routing withdrew their path's first hop.
    pub dead_path_draws: u64,
    /// Flowlets erased by aging.
    pub aged_flowlets: u64,
}

/// LetFlow's switch agent.
#[derive(Debug, Clone)]
pub struct LetFlow {
    config: LetFlowConfig,
    ecmp: EcmpHash,
    fabric: Fabric,
    flowlets: Flowlets,
    next_aging: Option<SimTime>,
    stats: LetFlowStats,
    /// The run's shared glibc `rand()` stream (quirk `glibc-rand`), else `None`.
    reference_rand: Option<SharedGlibcRand>,
}

impl LetFlow {
    /// The agent of switch `switch_id`; `ecmp` routes what LetFlow does not.
    #[must_use]
    pub fn new(config: &LetFlowConfig, switch_id: u32, ecmp: EcmpHash) -> Self {
        LetFlow {
            config: *config,
            ecmp,
            fabric: Fabric::new(switch_id),
            flowlets: Flowlets::default(),
            next_aging: None,
            stats: LetFlowStats::default(),
            reference_rand: None,
        }
    }

    /// Draws new flowlets' paths as `rand() % n` from `rand`, which other switches share,
    /// instead of the switch's own generator (quirk `glibc-rand`).
    pub fn share_reference_rand(&mut self, rand: SharedGlibcRand) {
        self.reference_rand = Some(rand);
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> LetFlowStats {
        self.stats
    }

    /// Flowlets in the table.
    #[must_use]
    pub fn flowlet_entries(&self) -> usize {
        self.flowlets.len()
    }

    fn ecmp_verdict(&self, pkt: &PacketMeta, candidates: &[EgressCandidate]) -> Verdict {
        Verdict::at(self.ecmp.index(pkt, candidates.len()))
    }

    /// Source ToR: the flowlet's path.
    fn source_path(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        dst: usize,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> PathId {
        let key = flowlet_key(pkt);
        let paths = self.fabric.live_paths(dst, candidates);
        let mut dead = false;
        let previous = match self
            .flowlets
            .lookup(key, now, self.config.flowlet_timeout_ns)
        {
            FlowletState::Active(p) if paths.contains(p) => return p,
            FlowletState::Active(p) => {
                self.stats.dead_path_draws += 1;
                dead = true;
                Some(p)
            }
            FlowletState::Expired(p) => Some(p),
            FlowletState::New => None,
        };
        let n = u32::try_from(paths.len()).unwrap_or(u32::MAX);
        let draw = match &self.reference_rand {
            Some(shared) => shared.lock().map_or(0, |mut g| g.below(n)),
            None => rng.below(n),
        };
        let i = usize::try_from(draw).unwrap_or(0);
        let Some(path) = paths.get(i) else {
            // `Role::SourceTor` guarantees paths; keep the old path if that ever changes.
            return previous.unwrap_or(PathId { id: 0, hops: 0 });
        };
        self.flowlets.start(key, path, now);
        self.stats.flowlets += 1;
        if let Some(p) = previous {
            self.stats.flowlet_timeouts += u64::from(!dead);
            if p != path {
                self.stats.path_changes += 1;
            }
        }
        path
    }

    /// The candidate of `path`'s port at `hop`, with the tag set to (path, hop); `None` if
    /// that port is not a live candidate.
    fn follow(
        tag: &mut LbTag,
        candidates: &[EgressCandidate],
        path: PathId,
        hop: u32,
    ) -> Option<Verdict> {
        let port = path.port_at(hop)?;
        let index = candidate_index(candidates, port)?;
        let mut words = [0; super::agent::TAG_WORDS];
        if let Some(w) = words.get_mut(W_PATH) {
            *w = path_word(path);
        }
        if let Some(w) = words.get_mut(W_HOP) {
            *w = u64::from(hop);
        }
        *tag = LbTag::new(words);
        Some(Verdict::at(index))
    }

    fn age(&mut self, at: SimTime) {
        let erased = self.flowlets.age(at, self.config.aging_ns);
        self.stats.aged_flowlets += erased as u64;
    }
}

impl SwitchAgent for LetFlow {
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
        true // transit hops with one candidate still advance the hop; the destination untags
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
            return self.ecmp_verdict(pkt, candidates);
        }
        let role = self.fabric.role(pkt.sip, pkt.dip);
        if role == Role::Bypass {
            return self.ecmp_verdict(pkt, candidates);
        }
        if self.next_aging.is_none() {
            self.next_aging = Some(now + SimDuration::from_ns(self.config.aging_ns));
        }
        let routed = match role {
            Role::SourceTor { dst } => {
                let path = self.source_path(now, pkt, dst, candidates, rng);
                let v = Self::follow(tag, candidates, path, 0);
                if v.is_some() {
                    self.stats.tagged_pkts += 1;
                }
                v
            }
            Role::Transit if tag.present => {
                let path = tag.words.get(W_PATH).map_or(0, |&w| w);
                let hop = tag.words.get(W_HOP).map_or(0, |&w| w).saturating_add(1);
                let v = u32::try_from(hop)
                    .ok()
                    .and_then(|hop| Self::follow(tag, candidates, word_path(path), hop));
                if v.is_some() {
                    self.stats.transit_pkts += 1;
                }
                v
            }
            Role::DestinationTor { .. } => {
                if tag.present {
                    self.stats.untagged_pkts += 1;
                }
                *tag = LbTag::NONE;
                return self.ecmp_verdict(pkt, candidates);
            }
            Role::Transit | Role::Bypass => None,
        };
        routed.unwrap_or_else(|| {
            self.stats.fallbacks += 1;
            *tag = LbTag::NONE;
            self.ecmp_verdict(pkt, candidates)
        })
    }

    fn poll_at(&self) -> Option<SimTime> {
        self.next_aging
    }

    fn on_timer(&mut self, now: SimTime, _rng: &mut SimRng) {
        let period = SimDuration::from_ns(self.config.aging_ns);
        while let Some(at) = self.next_aging.filter(|&t| t <= now) {
            self.age(at);
            self.next_aging = Some(at + period);
        }
    }

    fn counters(&self, out: &mut dyn FnMut(&'static str, u64)) {
        let s = self.stats;
        out("letflow_flowlets", s.flowlets);
        out("letflow_flowlet_timeouts", s.flowlet_timeouts);
        out("letflow_path_changes", s.path_changes);
        out("letflow_tagged_pkts", s.tagged_pkts);
        out("letflow_transit_pkts", s.transit_pkts);
        out("letflow_untagged_pkts", s.untagged_pkts);
        out("letflow_fallbacks", s.fallbacks);
        out("letflow_dead_path_draws", s.dead_path_draws);
        out("letflow_aged_flowlets", s.aged_flowlets);
        out("letflow_flowlet_entries", self.flowlets.len() as u64);
    }
}

impl Scheme for LetFlow {
    type Config = LetFlowConfig;

    fn validate(config: &LetFlowConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl SwitchRole for LetFlow {
    type Agent = Box<LetFlow>;

    fn agent(config: &LetFlowConfig, switch_id: u32, ecmp: EcmpHash) -> Box<LetFlow> {
        Box::new(LetFlow::new(config, switch_id, ecmp))
    }

    fn share_reference_rand(agent: &mut Box<LetFlow>, rand: SharedGlibcRand) {
        agent.share_reference_rand(rand);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LbConfig, SwitchLbConfig};
    use crate::switch::fabric::test_fabric::{
        data, path, setup_leaf, setup_spine, single, uplinks, HOSTS, SPINES,
    };

    fn leaf(id: u32) -> LetFlow {
        let mut lf = LetFlow::new(&LetFlowConfig::default(), id, EcmpHash::new(id));
        setup_leaf(&mut lf, id);
        lf
    }

    fn us(n: u64) -> SimTime {
        SimTime::from_ns(n * 1_000)
    }

    /// Sends `pkt` through the source leaf 0 at `now`; returns (uplink port, tag).
    fn send(lf: &mut LetFlow, now: SimTime, pkt: &PacketMeta, rng: &mut SimRng) -> (u32, LbTag) {
        let c = uplinks();
        let mut tag = LbTag::NONE;
        let Verdict::Forward { index, .. } = lf.on_ingress(now, pkt, &mut tag, &c, rng) else {
            unreachable!("LetFlow never holds or drops")
        };
        (c[index].port, tag)
    }

    #[test]
    fn config_defaults_and_errors_name_the_parameter() {
        let c = LbConfig::parse("letflow", "").unwrap();
        assert_eq!(
            c.switch,
            SwitchLbConfig::LetFlow(LetFlowConfig {
                flowlet_timeout_ns: 100_000,
                aging_ns: 2_000_000
            })
        );
        let c = LbConfig::parse("letflow", "flowlet_timeout_ns = 50000").unwrap();
        assert_eq!(
            c.switch,
            SwitchLbConfig::LetFlow(LetFlowConfig {
                flowlet_timeout_ns: 50_000,
                ..LetFlowConfig::default()
            })
        );
        let e = LbConfig::parse("letflow", "flowlet_timeout_ns = 0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `letflow`, parameter `flowlet_timeout_ns`: must be in 1..=1000000000, got 0"
        );
        let e = LbConfig::parse("letflow", "aging_ns = -1").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("aging_ns"), "{e}");
        let e = LbConfig::parse("letflow", "samples = 2").unwrap_err();
        assert_eq!(e.parameter.as_deref(), Some("samples"), "{e}");
    }

    #[test]
    fn source_tor_tags_the_path_and_leaves_on_its_first_port() {
        let mut lf = leaf(0);
        let mut rng = SimRng::new(1);
        let (port, tag) = send(&mut lf, us(0), &data((0, 0), (1, 0), 7), &mut rng);
        assert!(tag.present);
        let p = word_path(tag.words[W_PATH]);
        assert_eq!(tag.words[W_HOP], 0);
        assert_eq!(p.port_at(0), Some(port));
        assert!((0..SPINES).any(|s| path(1, s) == p), "{p:?}");
        assert_eq!(lf.stats().flowlets, 1);
        assert_eq!(lf.stats().tagged_pkts, 1);
    }

    #[test]
    fn a_gap_of_100us_keeps_the_path_and_a_longer_one_redraws() {
        let mut lf = leaf(0);
        let mut rng = SimRng::new(2);
        let pkt = data((0, 0), (1, 1), 9);
        let (first, _) = send(&mut lf, us(0), &pkt, &mut rng);
        // Gaps of 99 us and exactly 100 us: same flowlet, same path (the reference's `<=`).
        let mut t = us(99);
        for _ in 0..50 {
            assert_eq!(send(&mut lf, t, &pkt, &mut rng).0, first);
            t = t + SimDuration::from_us(100);
        }
        assert_eq!(lf.stats().flowlets, 1);
        assert_eq!(lf.stats().flowlet_timeouts, 0);
        // A gap of 100 us + 1 ns starts a new flowlet: a fresh uniform draw every time, so
        // over 200 flowlets the path changes in about 3/4 of them.
        let mut changes = 0;
        let mut prev = first;
        for _ in 0..200 {
            t = t + SimDuration::from_ns(100_001);
            let (p, _) = send(&mut lf, t, &pkt, &mut rng);
            changes += u32::from(p != prev);
            prev = p;
        }
        let s = lf.stats();
        assert_eq!((s.flowlets, s.flowlet_timeouts), (201, 200));
        assert_eq!(u64::from(changes), s.path_changes);
        assert!((120..180).contains(&changes), "{changes}");
    }

    #[test]
    fn new_flowlets_spread_uniformly_over_the_paths() {
        // 8000 flows, 4 paths: chi-square with 3 degrees of freedom at p = 0.01 is 11.34.
        let mut lf = leaf(0);
        let mut rng = SimRng::new(3);
        let mut counts = [0u32; 4];
        for f in 0..8000u16 {
            let (port, _) = send(&mut lf, us(1), &data((0, 1), (1, 0), f), &mut rng);
            counts[(port - HOSTS) as usize] += 1;
        }
        let chi2: f64 = counts
            .iter()
            .map(|&c| (f64::from(c) - 2000.0).powi(2) / 2000.0)
            .sum();
        assert!(chi2 < 11.34, "chi2 = {chi2}, {counts:?}");
        assert_eq!(lf.flowlet_entries(), 8000);
    }

    #[test]
    fn transit_follows_the_path_bytes_and_the_destination_untags() {
        let mut rng = SimRng::new(4);
        let mut src = leaf(0);
        let mut dst = leaf(1);
        let mut spines: Vec<LetFlow> = (0..SPINES)
            .map(|s| {
                let mut a =
                    LetFlow::new(&LetFlowConfig::default(), 100 + s, EcmpHash::new(100 + s));
                setup_spine(&mut a);
                a
            })
            .collect();
        for f in 0..64u16 {
            let pkt = data((0, 0), (1, 1), f);
            let (up, mut tag) = send(&mut src, us(0), &pkt, &mut rng);
            let spine = &mut spines[(up - HOSTS) as usize];
            // The spine is offered both its ports (as if it had two routes): it must take the
            // path's byte 1 (port 1, towards leaf 1), and advance the hop.
            let both = [single(0)[0], single(1)[0]];
            let v = spine.on_ingress(us(1), &pkt, &mut tag, &both, &mut rng);
            assert_eq!(v, Verdict::at(1));
            assert_eq!(tag.words[W_HOP], 1);
            let v = dst.on_ingress(us(2), &pkt, &mut tag, &single(1), &mut rng);
            assert_eq!(v, Verdict::at(0));
            assert_eq!(tag, LbTag::NONE);
        }
        let transit: u64 = spines.iter().map(|s| s.stats().transit_pkts).sum();
        assert_eq!(transit, 64);
        assert_eq!(dst.stats().untagged_pkts, 64);
        assert_eq!(dst.flowlet_entries(), 0, "no state at the destination");
    }

    #[test]
    fn intra_tor_and_non_data_take_ecmp_without_state() {
        let mut lf = leaf(0);
        let mut rng = SimRng::new(5);
        let ecmp = EcmpHash::new(0);
        let intra = data((0, 0), (0, 1), 3);
        let mut tag = LbTag::NONE;
        assert_eq!(
            lf.on_ingress(us(0), &intra, &mut tag, &single(1), &mut rng),
            Verdict::at(0)
        );
        let ack = PacketMeta {
            kind: PacketKind::Ack,
            ..data((0, 0), (1, 0), 3)
        };
        let c = uplinks();
        assert_eq!(
            lf.on_ingress(us(0), &ack, &mut tag, &c, &mut rng),
            Verdict::at(ecmp.index(&ack, c.len()))
        );
        assert_eq!(tag, LbTag::NONE);
        assert_eq!(lf.flowlet_entries(), 0);
        assert_eq!(
            lf.poll_at(),
            None,
            "timer starts with the first inter-ToR data"
        );
    }

    #[test]
    fn a_flowlet_whose_uplink_is_withdrawn_is_drawn_again_among_the_live_paths() {
        let mut lf = leaf(0);
        let mut rng = SimRng::new(6);
        let pkt = data((0, 0), (1, 0), 11);
        let (dead, _) = send(&mut lf, us(0), &pkt, &mut rng);
        let live: Vec<EgressCandidate> = uplinks().into_iter().filter(|c| c.port != dead).collect();
        // Within the flowlet timeout: the active flowlet moves; then new flows never draw it.
        for (k, sport) in (11..75).enumerate() {
            let pkt = data((0, 0), (1, 0), sport);
            let mut tag = LbTag::NONE;
            let Verdict::Forward { index, .. } =
                lf.on_ingress(us(1 + k as u64), &pkt, &mut tag, &live, &mut rng)
            else {
                unreachable!("LetFlow never holds or drops")
            };
            let path = word_path(tag.words[W_PATH]);
            assert_eq!(path.port_at(0), Some(live[index].port));
            assert_ne!(live[index].port, dead);
        }
        assert_eq!((lf.stats().dead_path_draws, lf.stats().fallbacks), (1, 0));
    }

    #[test]
    fn a_transit_hop_whose_port_is_down_falls_back_to_ecmp_untagged() {
        let mut lf = leaf(0);
        let mut rng = SimRng::new(6);
        let pkt = data((0, 0), (1, 0), 11);
        let (_, mut tag) = send(&mut lf, us(0), &pkt, &mut rng);
        let mut spine = LetFlow::new(&LetFlowConfig::default(), 100, EcmpHash::new(100));
        setup_spine(&mut spine);
        // The path's port at hop 1 is not among the spine's candidates.
        let hop1 = word_path(tag.words[W_PATH]).port_at(1).unwrap();
        let others = single(hop1 + 1);
        let v = spine.on_ingress(us(1), &pkt, &mut tag, &others, &mut rng);
        assert_eq!(v, Verdict::at(EcmpHash::new(100).index(&pkt, others.len())));
        assert_eq!(tag, LbTag::NONE);
        assert_eq!(spine.stats().fallbacks, 1);
    }

    #[test]
    fn aging_runs_every_2ms_from_the_first_packet_and_erases_idle_flowlets() {
        let mut lf = leaf(0);
        let mut rng = SimRng::new(7);
        send(&mut lf, us(10), &data((0, 0), (1, 0), 1), &mut rng);
        send(&mut lf, us(1_500), &data((0, 0), (1, 0), 2), &mut rng);
        assert_eq!(lf.poll_at(), Some(us(2_010)));
        lf.on_timer(us(2_010), &mut rng);
        // Flow 1 idle for 2000 us (not more): kept; next sweep at 4010 us.
        assert_eq!(lf.flowlet_entries(), 2);
        assert_eq!(lf.poll_at(), Some(us(4_010)));
        lf.on_timer(us(4_010), &mut rng);
        assert_eq!(lf.flowlet_entries(), 0);
        assert_eq!(lf.stats().aged_flowlets, 2);
    }

    #[test]
    fn shared_reference_rand_draws_rand_mod_n_across_switches_in_call_order() {
        // Two source ToRs (leaves 0 and 1, 4 paths each) share one stream after srand(1):
        // glibc's first values are 1804289383, 846930886, 1681692777, 1714636915,
        // 1957747793, i.e. 3, 2, 1, 3, 1 modulo 4. New flows alternate between the ToRs;
        // each takes path (value % 4) of its sorted path list, i.e. spine value % 4.
        let shared = crate::rng::GlibcRand::shared(1);
        let mut a = leaf(0);
        let mut b = leaf(1);
        a.share_reference_rand(std::sync::Arc::clone(&shared));
        b.share_reference_rand(std::sync::Arc::clone(&shared));
        let mut rng = SimRng::new(9);
        let mut spines = Vec::new();
        for (i, sport) in (0..5_u16).enumerate() {
            let (lf, pkt, dst) = if i % 2 == 0 {
                (&mut a, data((0, 0), (1, 0), 100 + sport), 1)
            } else {
                (&mut b, data((1, 0), (0, 0), 100 + sport), 0)
            };
            let (_, tag) = send(lf, us(0), &pkt, &mut rng);
            let p = word_path(tag.words[W_PATH]);
            let s = (0..SPINES).find(|&s| path(dst, s) == p);
            spines.push(s);
            // the flow's next packet keeps its path and draws nothing
            let (_, again) = send(lf, us(1), &pkt, &mut rng);
            assert_eq!(again.words[W_PATH], tag.words[W_PATH]);
        }
        assert_eq!(spines, [Some(3), Some(2), Some(1), Some(3), Some(1)]);
        // 5 draws taken: the stream's next value is glibc's sixth (424238335).
        assert_eq!(
            shared.lock().map(|mut g| g.next_rand()).ok(),
            Some(424_238_335)
        );
    }
}
