//! LetFlow (Vanini, Pan, Alizadeh, Edsall, "Let It Flow: Resilient Asymmetric Load Balancing
//! with Flowlet Switching", NSDI 2017), as the reference simulator models it
//! (spec/rdma-model.md §6.2, lb 6; §5.1 for the path tables): the source ToR sends each new
//! flowlet of a flow on a uniformly random path to the destination ToR and pins the path in a
//! packet tag that the next switches follow.
//!
//! * Data packets only; every other packet (ACK, NACK, CNP, control) takes the switch's flow
//!   ECMP hash ([`EcmpHash`]).
//! * **Source ToR**: flowlet key = the reference's ([`flowlet_key`]). A flowlet whose last
//!   packet is at most `flowlet_timeout_ns` old keeps its path; otherwise (new flow, or gap >
//!   the timeout) a path is drawn uniformly among all paths to the destination ToR. The packet
//!   is tagged (path, hop 0) and leaves on the path's first port.
//! * **Transit**: hop += 1, egress = the path's port at that hop.
//! * **Destination ToR**: the tag is removed; the packet takes its (single) candidate.
//! * **Intra-ToR** traffic (spec §12 item 11) is single-path, with no LetFlow state.
//! * Every `aging_ns` flowlets idle for more than `aging_ns` are erased (table size only; an
//!   erased flowlet behaves as an expired one). As in the reference, the aging timer starts at
//!   the first data packet LetFlow handles and then runs with period `aging_ns`.
//!
//! Deviations from the reference (`letflow-routing.cc`):
//! * Roles come from the host→ToR map (source ToR = the source host's ToR) rather than from
//!   whether the packet carries a tag; on shortest-path fabrics these are the same.
//! * If the path's port at this hop is not among the live candidates (a failed link), or a
//!   transit switch sees an untagged data packet, the packet takes the ECMP hash and leaves
//!   untagged (the reference would send on the dead port or abort); counted as
//!   `letflow_fallbacks`.
//! * "Uniformly random" uses the switch's [`SimRng`], not C `rand()`.

use serde::Deserialize;

use super::ecmp::EcmpHash;
use super::fabric::{flowlet_key, path_word, word_path, Fabric, FlowletState, Flowlets, Role};
use super::{
    candidate_index, EgressCandidate, LbTag, PacketKind, PacketMeta, PathId, PortInfo, SwitchAgent,
    Verdict,
};
use crate::algorithm::Algorithm;
use crate::config::{check_int, ConfigError};
use crate::rng::SimRng;
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
    pub fn validate(&self, algorithm: Algorithm) -> Result<(), ConfigError> {
        check_int(
            algorithm,
            "flowlet_timeout_ns",
            self.flowlet_timeout_ns,
            1,
            1_000_000_000,
        )?;
        check_int(algorithm, "aging_ns", self.aging_ns, 1_000, 10_000_000_000)
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
        }
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
        rng: &mut SimRng,
    ) -> PathId {
        let key = flowlet_key(pkt);
        let previous = match self
            .flowlets
            .lookup(key, now, self.config.flowlet_timeout_ns)
        {
            FlowletState::Active(p) => return p,
            FlowletState::Expired(p) => Some(p),
            FlowletState::New => None,
        };
        let paths = self.fabric.paths(dst);
        let n = u32::try_from(paths.len()).unwrap_or(u32::MAX);
        let i = usize::try_from(rng.below(n)).unwrap_or(0);
        let Some(&path) = paths.get(i) else {
            // `Role::SourceTor` guarantees paths; keep the old path if that ever changes.
            return previous.unwrap_or(PathId { id: 0, hops: 0 });
        };
        self.flowlets.start(key, path, now);
        self.stats.flowlets += 1;
        if let Some(p) = previous {
            self.stats.flowlet_timeouts += 1;
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
                let path = self.source_path(now, pkt, dst, rng);
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
        out("letflow_aged_flowlets", s.aged_flowlets);
        out("letflow_flowlet_entries", self.flowlets.len() as u64);
    }
}
