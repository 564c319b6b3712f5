//! Switch-side load balancing. Every scheme plays one role, [`SwitchAgent`] (see
//! [`agent`]): the switch shows it each packet it routes, with the equal-cost candidates of
//! the routing table, and pulls from it the control packets, queue releases and timers it
//! wants. Dispatch is a `match` over [`SwitchScheme`] (static dispatch).
//!
//! Two smaller traits serve the schemes that need less:
//! * [`EgressChooser`]: picks one candidate per packet with more than one candidate; wrapped
//!   in [`Chooser`], it is a whole agent (ECMP, PLTS, adaptive routing, DRILL).
//! * [`TorAgent`]: Themis' hooks on the host-facing ports of a ToR (data leaving towards a
//!   host, NACKs arriving from one, link state); Themis' agent is built on it.
//!
//! The roles and what they are shown (the packet's fields and the candidates) are defined in
//! modules of their own, which are all the schemes depend on; this module dispatches over
//! the schemes and builds them from a [`SwitchLbConfig`].
//!
//! The algorithms (each module names its paper and section):
//! * [`ecmp`]: flow ECMP hash (the reference simulator); [`htsim_ecmp`]: the REPS authors'
//!   simulator's flow ECMP (the REPS paper's Fig. 2 setup).
//! * [`themis`]: Themis-S PSN-based spraying + Themis-D NACK filtering (the Themis paper).
//! * [`plts_random`], [`plts_counter`], [`plts_rr`]: PLTS (the PLTS paper, §III-A).
//! * [`adaptive`]: per-packet least-queue adaptive routing (the "AR" baseline of the Themis paper,
//!   §5).
//! * [`drill`]: DRILL(d, m) (Ghorbani et al., SIGCOMM 2017).
//! * [`conga`]: CONGA; [`letflow`]: LetFlow (both as the reference simulator runs them); both on
//!   [`fabric`] (paths, host→ToR map, flowlets).
//! * [`conweave`]: ConWeave (SIGCOMM 2023, as the reference simulator runs it).

pub mod adaptive;
pub mod agent;
pub mod conga;
pub mod conweave;
pub mod drill;
pub mod ecmp;
pub mod fabric;
pub mod htsim_ecmp;
pub mod letflow;
pub mod plts_counter;
pub mod plts_random;
pub mod plts_rr;
pub mod themis;

mod chooser;
mod packet;
mod tor;

pub use agent::{
    candidate_index, ControlKind, ControlPacket, LbTag, LinkScope, PathId, PortInfo, SwitchAgent,
    Verdict,
};
pub use chooser::{chosen_verdict, Chooser, EgressChoice, EgressChooser};
pub use packet::{EgressCandidate, PacketKind, PacketMeta};
pub use tor::{Compensation, NackVerdict, TorAgent};

use crate::config::SwitchLbConfig;
use crate::rng::SimRng;
use crate::time::SimTime;

/// The schemes we have, dispatched statically.
#[derive(Debug, Clone)]
pub enum SwitchScheme {
    /// See [`ecmp::EcmpHash`].
    Ecmp(Chooser<ecmp::EcmpHash>),
    /// See [`htsim_ecmp::HtsimEcmp`].
    HtsimEcmp(Chooser<htsim_ecmp::HtsimEcmp>),
    /// See [`themis::Themis`]. Boxed: it carries flow tables.
    Themis(Box<themis::Themis>),
    /// See [`plts_random::PltsRandom`].
    PltsRandom(Chooser<plts_random::PltsRandom>),
    /// See [`plts_counter::PltsCounter`].
    PltsCounter(Chooser<plts_counter::PltsCounter>),
    /// See [`plts_rr::PltsRr`].
    PltsRr(Chooser<plts_rr::PltsRr>),
    /// See [`adaptive::Adaptive`].
    Adaptive(Chooser<adaptive::Adaptive>),
    /// See [`drill::Drill`].
    Drill(Chooser<drill::Drill>),
    /// See [`conga::Conga`]. Boxed: it carries flow tables.
    Conga(Box<conga::Conga>),
    /// See [`letflow::LetFlow`]. Boxed: it carries flow tables.
    LetFlow(Box<letflow::LetFlow>),
    /// See [`conweave::ConWeave`]. Boxed: it carries flow tables.
    ConWeave(Box<conweave::ConWeave>),
}

/// Forwards a call to the agent inside any [`SwitchScheme`] (static dispatch).
macro_rules! dispatch {
    ($self:expr, $c:ident => $call:expr) => {
        match $self {
            SwitchScheme::Ecmp($c) => $call,
            SwitchScheme::HtsimEcmp($c) => $call,
            SwitchScheme::Themis($c) => $call,
            SwitchScheme::PltsRandom($c) => $call,
            SwitchScheme::PltsCounter($c) => $call,
            SwitchScheme::PltsRr($c) => $call,
            SwitchScheme::Adaptive($c) => $call,
            SwitchScheme::Drill($c) => $call,
            SwitchScheme::Conga($c) => $call,
            SwitchScheme::LetFlow($c) => $call,
            SwitchScheme::ConWeave($c) => $call,
        }
    };
}

impl SwitchAgent for SwitchScheme {
    fn add_port(&mut self, port: PortInfo) {
        dispatch!(self, c => c.add_port(port));
    }
    fn add_host(&mut self, host_ip: u32, tor: u32) {
        dispatch!(self, c => c.add_host(host_ip, tor));
    }
    fn add_path(&mut self, dst_tor: u32, path: PathId) {
        dispatch!(self, c => c.add_path(dst_tor, path));
    }
    fn sees_every_packet(&self) -> bool {
        dispatch!(self, c => c.sees_every_packet())
    }
    fn sees_egress(&self) -> bool {
        dispatch!(self, c => c.sees_egress())
    }
    fn reads_port_load(&self) -> bool {
        dispatch!(self, c => c.reads_port_load())
    }
    fn on_ingress(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        tag: &mut LbTag,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> Verdict {
        dispatch!(self, c => c.on_ingress(now, pkt, tag, candidates, rng))
    }
    fn on_egress(&mut self, now: SimTime, pkt: &PacketMeta, tag: &LbTag, port: u32) {
        dispatch!(self, c => c.on_egress(now, pkt, tag, port));
    }
    fn poll_transmit(&mut self, now: SimTime) -> Option<ControlPacket> {
        dispatch!(self, c => c.poll_transmit(now))
    }
    fn poll_release(&mut self, now: SimTime) -> Option<u64> {
        dispatch!(self, c => c.poll_release(now))
    }
    fn poll_at(&self) -> Option<SimTime> {
        dispatch!(self, c => c.poll_at())
    }
    fn on_timer(&mut self, now: SimTime, rng: &mut SimRng) {
        dispatch!(self, c => c.on_timer(now, rng));
    }
    fn on_link_state(&mut self, scope: LinkScope, down: bool) {
        dispatch!(self, c => c.on_link_state(scope, down));
    }
    fn memory_bytes(&self) -> u64 {
        dispatch!(self, c => c.memory_bytes())
    }
    fn counters(&self, out: &mut dyn FnMut(&'static str, u64)) {
        dispatch!(self, c => c.counters(out));
    }
}

/// A switch's load balancer: its scheme's agent and its own seeded generator. The switch
/// calls it as [`SwitchAgent`] describes; indices it returns are always within the
/// candidates passed in.
#[derive(Debug, Clone)]
pub struct SwitchLb {
    scheme: SwitchScheme,
    rng: SimRng,
}

impl SwitchLb {
    /// The agent of switch `switch_id` (the ECMP hash seed, as in the reference); `seed`
    /// seeds its random draws.
    #[must_use]
    pub fn new(config: &SwitchLbConfig, switch_id: u32, seed: u64) -> Self {
        let ecmp = ecmp::EcmpHash::new(switch_id);
        let scheme = match config {
            SwitchLbConfig::EcmpHash => SwitchScheme::Ecmp(Chooser(ecmp)),
            SwitchLbConfig::Themis(c) => {
                SwitchScheme::Themis(Box::new(themis::Themis::new(c, ecmp)))
            }
            SwitchLbConfig::PltsRandom => {
                SwitchScheme::PltsRandom(Chooser(plts_random::PltsRandom))
            }
            SwitchLbConfig::PltsCounter => {
                SwitchScheme::PltsCounter(Chooser(plts_counter::PltsCounter::new()))
            }
            SwitchLbConfig::PltsRr(c) => {
                SwitchScheme::PltsRr(Chooser(plts_rr::PltsRr::new(ecmp, c)))
            }
            SwitchLbConfig::Adaptive(c) => {
                SwitchScheme::Adaptive(Chooser(adaptive::Adaptive::new(c)))
            }
            SwitchLbConfig::Drill(c) => SwitchScheme::Drill(Chooser(drill::Drill::new(c))),
            SwitchLbConfig::Conga(c) => {
                SwitchScheme::Conga(Box::new(conga::Conga::new(c, switch_id, ecmp)))
            }
            SwitchLbConfig::LetFlow(c) => {
                SwitchScheme::LetFlow(Box::new(letflow::LetFlow::new(c, switch_id, ecmp)))
            }
            SwitchLbConfig::ConWeave(c) => {
                SwitchScheme::ConWeave(Box::new(conweave::ConWeave::new(c, switch_id)))
            }
        };
        SwitchLb {
            scheme,
            rng: SimRng::new(seed),
        }
    }

    /// The plain ECMP switch of the REPS authors' simulator (see [`htsim_ecmp`]), for the host
    /// algorithms (`config` must be [`SwitchLbConfig::EcmpHash`]; `None` otherwise): `salt`
    /// is the switch's draw from htsim's stream, `is_tor` whether it has host ports.
    #[must_use]
    pub fn htsim_ecmp(
        config: &SwitchLbConfig,
        salt: u32,
        is_tor: bool,
        stream: crate::rng::SharedHtsimRand,
        seed: u64,
    ) -> Option<Self> {
        (*config == SwitchLbConfig::EcmpHash).then(|| SwitchLb {
            scheme: SwitchScheme::HtsimEcmp(Chooser(htsim_ecmp::HtsimEcmp::new(
                salt, is_tor, stream,
            ))),
            rng: SimRng::new(seed),
        })
    }

    /// LetFlow, CONGA and ConWeave draw from `rand`, a glibc `rand()` stream shared by every
    /// switch of the run, as the reference's `rand()` (quirk `glibc-rand`); the other schemes
    /// keep their own generator.
    pub fn share_reference_rand(&mut self, rand: crate::rng::SharedGlibcRand) {
        match &mut self.scheme {
            SwitchScheme::LetFlow(l) => l.share_reference_rand(rand),
            SwitchScheme::Conga(c) => c.share_reference_rand(rand),
            SwitchScheme::ConWeave(c) => c.share_reference_rand(rand),
            _ => {}
        }
    }

    /// See [`SwitchAgent::add_port`].
    pub fn add_port(&mut self, port: PortInfo) {
        self.scheme.add_port(port);
    }
    /// See [`SwitchAgent::add_host`].
    pub fn add_host(&mut self, host_ip: u32, tor: u32) {
        self.scheme.add_host(host_ip, tor);
    }
    /// See [`SwitchAgent::add_path`].
    pub fn add_path(&mut self, dst_tor: u32, path: PathId) {
        self.scheme.add_path(dst_tor, path);
    }
    /// See [`SwitchAgent::sees_every_packet`].
    #[must_use]
    pub fn sees_every_packet(&self) -> bool {
        self.scheme.sees_every_packet()
    }
    /// See [`SwitchAgent::sees_egress`].
    #[must_use]
    pub fn sees_egress(&self) -> bool {
        self.scheme.sees_egress()
    }
    /// See [`SwitchAgent::reads_port_load`].
    #[must_use]
    pub fn reads_port_load(&self) -> bool {
        self.scheme.reads_port_load()
    }

    /// The verdict for one packet (see [`SwitchAgent::on_ingress`]). With no candidate the
    /// verdict is [`Verdict::Drop`]; a forward index is clamped into the candidates.
    pub fn on_ingress(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        tag: &mut LbTag,
        candidates: &[EgressCandidate],
    ) -> Verdict {
        if candidates.is_empty() {
            return Verdict::Drop;
        }
        match self
            .scheme
            .on_ingress(now, pkt, tag, candidates, &mut self.rng)
        {
            Verdict::Forward {
                index,
                rewrite_entropy,
            } => {
                debug_assert!(index < candidates.len());
                Verdict::Forward {
                    index: index.min(candidates.len() - 1),
                    rewrite_entropy,
                }
            }
            v => v,
        }
    }

    /// See [`SwitchAgent::on_egress`].
    pub fn on_egress(&mut self, now: SimTime, pkt: &PacketMeta, tag: &LbTag, port: u32) {
        self.scheme.on_egress(now, pkt, tag, port);
    }
    /// See [`SwitchAgent::poll_transmit`].
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<ControlPacket> {
        self.scheme.poll_transmit(now)
    }
    /// See [`SwitchAgent::poll_release`].
    pub fn poll_release(&mut self, now: SimTime) -> Option<u64> {
        self.scheme.poll_release(now)
    }
    /// See [`SwitchAgent::poll_at`].
    #[must_use]
    pub fn poll_at(&self) -> Option<SimTime> {
        self.scheme.poll_at()
    }
    /// See [`SwitchAgent::on_timer`].
    pub fn on_timer(&mut self, now: SimTime) {
        self.scheme.on_timer(now, &mut self.rng);
    }
    /// See [`SwitchAgent::on_link_state`].
    pub fn on_link_state(&mut self, scope: LinkScope, down: bool) {
        self.scheme.on_link_state(scope, down);
    }
    /// See [`SwitchAgent::memory_bytes`].
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        self.scheme.memory_bytes()
    }
    /// See [`SwitchAgent::counters`].
    pub fn counters(&self, out: &mut dyn FnMut(&'static str, u64)) {
        self.scheme.counters(out);
    }
    /// The counters as a list (allocates; for reports, not the packet path).
    #[must_use]
    pub fn counter_list(&self) -> Vec<(&'static str, u64)> {
        let mut v = Vec::new();
        self.counters(&mut |name, value| v.push((name, value)));
        v
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Small builders shared by the choosers' tests.
    use super::{EgressCandidate, PacketKind, PacketMeta};
    use crate::units::{Entropy, Psn};

    /// Candidates on ports 0.. with the given queue lengths.
    pub fn cands(queues: &[u64]) -> Vec<EgressCandidate> {
        (0u32..)
            .zip(queues)
            .map(|(port, &q)| EgressCandidate {
                port,
                queue_bytes: q,
                tx_bytes: 0,
            })
            .collect()
    }

    /// A 1048-byte data packet of flow `flow` (its entropy) with sequence number `psn`.
    pub fn data(flow: u32, psn: u32) -> PacketMeta {
        PacketMeta {
            kind: PacketKind::Data,
            sip: 0x0b00_0001,
            dip: 0x0b00_0101,
            sport: Entropy(u16::try_from(flow).unwrap()),
            dport: 1,
            psn: Psn(psn),
            ingress_port: 9,
            size_bytes: 1048,
            ..PacketMeta::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::data;
    use super::*;
    use crate::algorithm::Algorithm;
    use crate::config::LbConfig;
    use crate::units::{Entropy, Psn};

    /// A ToR (switch 3) with uplinks 0-3, host port 9 and one 2-hop path to ToR 5 over each
    /// uplink; the packets of `test_support::data` go from a host under it to one under ToR 5.
    fn tor(config: &LbConfig) -> SwitchLb {
        let mut lb = SwitchLb::new(&config.switch, 3, 7);
        for (port, faces_host) in [(0, false), (1, false), (2, false), (3, false), (9, true)] {
            lb.add_port(PortInfo {
                port,
                rate_bps: 100_000_000_000,
                delay_ns: 1_000,
                faces_host,
            });
        }
        lb.add_host(0x0b00_0001, 3);
        lb.add_host(0x0b00_0101, 5);
        for up in 0..4 {
            lb.add_path(5, PathId::from_ports(&[up, 1]).unwrap());
        }
        lb
    }

    /// Verdicts of `lb` on a fixed stream of packets towards four candidates, whose loads are
    /// drawn at random (`loaded`) or all zero.
    fn verdicts(mut lb: SwitchLb, loaded: bool) -> Vec<Verdict> {
        let mut loads = SimRng::new(11);
        let mut out = Vec::new();
        for i in 0..2_000u32 {
            let mut pkt = data(i % 37, i / 37);
            pkt.sport = Entropy(u16::try_from(i % 37).unwrap() * 97);
            pkt.psn = Psn(i);
            let cands: Vec<EgressCandidate> = (0..4u32)
                .map(|port| EgressCandidate {
                    port,
                    queue_bytes: if loaded {
                        u64::from(loads.below(200_000))
                    } else {
                        0
                    },
                    tx_bytes: if loaded { loads.next_u64() >> 20 } else { 0 },
                })
                .collect();
            let now = SimTime::from_ns(u64::from(i) * 90);
            out.push(lb.on_ingress(now, &pkt, &mut LbTag::default(), &cands));
        }
        out
    }

    #[test]
    fn reads_port_load_only_where_declared() {
        let mut readers = Vec::new();
        for a in Algorithm::ALL {
            let config = LbConfig::parse(a.name(), "").unwrap();
            let lb = tor(&config);
            let loaded = verdicts(lb.clone(), true);
            let same = loaded == verdicts(lb.clone(), false);
            assert!(
                loaded.iter().any(|v| *v != loaded[0]),
                "{}: one verdict for every packet",
                a.name()
            );
            if lb.reads_port_load() {
                if !same {
                    readers.push(a.name());
                }
            } else {
                assert!(
                    same,
                    "{}: says it ignores port loads, but its verdicts depend on them",
                    a.name()
                );
            }
        }
        // The schemes that choose by queue length; the comparison above sees them read.
        assert_eq!(readers, ["adaptive", "drill"]);
    }
}
