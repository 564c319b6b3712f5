//! The registry: the one list of load-balancing schemes.
//!
//! Each row names a scheme's enum variant, its one name (kebab-case, as configs, ns-3
//! attributes, command lines, result folders and plot legends spell it) and the type that
//! implements its roles ([`crate::scheme`]). From the rows the [`registry!`] macro generates:
//!
//! * [`Algorithm`]: the enum, [`Algorithm::ALL`] (row order), names, sides and capabilities;
//! * [`HostLbConfig`] and [`SwitchLbConfig`], and the parsing of a scheme's parameters into them
//!   (`configure`, which names the algorithm in every error its `validate` returns);
//! * [`HostSelector`] and [`SwitchScheme`] (re-exported by [`crate::host`] and
//!   [`crate::switch`]), the static dispatch over the schemes' deciders: a `match`, never a
//!   virtual call.
//!
//! ECMP is the base row: the NICs keep one entropy per flow ([`HostLbConfig::FixedPerFlow`])
//! and the switches hash it ([`SwitchLbConfig::EcmpHash`]). A host scheme replaces the NIC side
//! and keeps ECMP switches; a switch scheme replaces the switch side and keeps the NICs'
//! fixed entropies. Adding a scheme is its file (the scheme and its `Scheme` impls) and one
//! row here (see "Adding a load balancer" in `ns3-module/doc/rdma-lb.rst`).

use crate::error::ConfigError;
use crate::host::ecmp::FixedEntropy;
use crate::host::selector::{Feedback, PathSelector, SendCx};
use crate::host::{
    flowbender, flowcut, hopper, plb, reps, spray, uec_bitmap, uec_mixed, whack_a_mole,
};
use crate::params::{decode, Table};
use crate::rng::{SharedGlibcRand, SimRng};
use crate::scheme::{HostRole, NoParams, Scheme, Side, SwitchRole};
use crate::switch::agent::{
    ControlPacket, LbTag, LinkScope, PathId, PortInfo, SwitchAgent, Verdict,
};
use crate::switch::chooser::Chooser;
use crate::switch::ecmp::EcmpHash;
use crate::switch::htsim_ecmp::HtsimEcmp;
use crate::switch::packet::{EgressCandidate, PacketMeta};
use crate::switch::{
    adaptive, conga, conweave, drill, letflow, plts_counter, plts_random, plts_rr, themis,
};
use crate::time::SimTime;
use crate::units::Entropy;

/// Decodes `table` as scheme `S`'s parameters and checks them; errors name `algorithm`.
fn validated<S: Scheme>(algorithm: &str, table: Table) -> Result<S::Config, ConfigError> {
    let config = decode::<S::Config>(algorithm, table)?;
    S::validate(&config).map_err(|e| ConfigError::of(algorithm, e))?;
    Ok(config)
}

/// Generates the registry's items from its rows (see the module documentation).
macro_rules! registry {
    (
        $(#[$bm:meta])* base: $bv:ident = $bname:literal;
        host: [ $( $(#[$hm:meta])* $hv:ident = $hname:literal => $ht:ty, )* ]
        switch: [ $( $(#[$sm:meta])* $sv:ident = $sname:literal => $st:ty, )* ]
    ) => {
        /// A load-balancing scheme a run can select.
        ///
        /// A run names one scheme; the scheme decides both what the NICs do (the entropy of
        /// each data packet) and what the switches do (the egress among equal-cost
        /// candidates). Host schemes run over switch ECMP; switch schemes run over NICs that
        /// keep one entropy per flow (the host side of `ecmp`), so under a switch scheme every
        /// flow's entropy is fixed and any spreading is the switches' doing.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Algorithm {
            $(#[$bm])* $bv,
            $( $(#[$hm])* $hv, )*
            $( $(#[$sm])* $sv, )*
        }

        impl Algorithm {
            /// Every algorithm, in the order tables and legends list them (the rows' order).
            pub const ALL: &'static [Algorithm] =
                &[Algorithm::$bv, $(Algorithm::$hv,)* $(Algorithm::$sv,)*];

            /// The algorithm's one name (kebab-case), as used everywhere.
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    Algorithm::$bv => $bname,
                    $(Algorithm::$hv => $hname,)*
                    $(Algorithm::$sv => $sname,)*
                }
            }

            /// Where the algorithm's own decisions are made.
            #[must_use]
            pub const fn side(self) -> Side {
                match self {
                    Algorithm::$bv $(| Algorithm::$hv)* => Side::Host,
                    $(Algorithm::$sv => Side::Switch,)*
                }
            }

            /// See [`Scheme::SPRAYS_ON_FEEDBACK`].
            #[must_use]
            pub const fn sprays_on_feedback(self) -> bool {
                match self {
                    Algorithm::$bv => false,
                    $(Algorithm::$hv => <$ht as Scheme>::SPRAYS_ON_FEEDBACK,)*
                    $(Algorithm::$sv => <$st as Scheme>::SPRAYS_ON_FEEDBACK,)*
                }
            }

            /// See [`Scheme::MOVES_ON_FEEDBACK`].
            #[must_use]
            pub const fn moves_on_feedback(self) -> bool {
                match self {
                    Algorithm::$bv => false,
                    $(Algorithm::$hv => <$ht as Scheme>::MOVES_ON_FEEDBACK,)*
                    $(Algorithm::$sv => <$st as Scheme>::MOVES_ON_FEEDBACK,)*
                }
            }
        }

        /// Configuration of the sender-NIC path selector.
        #[derive(Debug, Clone, PartialEq)]
        pub enum HostLbConfig {
            /// One random entropy per queue pair, kept for the flow's life (ECMP's NIC side,
            /// and every switch scheme's).
            FixedPerFlow,
            $( $(#[$hm])* $hv(<$ht as Scheme>::Config), )*
        }

        /// Configuration of the per-switch agent.
        #[derive(Debug, Clone, PartialEq)]
        pub enum SwitchLbConfig {
            /// The reference simulator's flow ECMP hash over the 5-tuple (entropy = UDP source
            /// port): ECMP's switch side, and every host scheme's.
            EcmpHash,
            $( $(#[$sm])* $sv(<$st as Scheme>::Config), )*
        }

        /// Decodes and validates `table` as `algorithm`'s parameters: its NIC side and its
        /// switch side.
        pub(crate) fn configure(
            algorithm: Algorithm,
            table: Table,
        ) -> Result<(HostLbConfig, SwitchLbConfig), ConfigError> {
            let name = algorithm.name();
            Ok(match algorithm {
                Algorithm::$bv => {
                    decode::<NoParams>(name, table)?;
                    (HostLbConfig::FixedPerFlow, SwitchLbConfig::EcmpHash)
                }
                $(Algorithm::$hv => {
                    (HostLbConfig::$hv(validated::<$ht>(name, table)?), SwitchLbConfig::EcmpHash)
                })*
                $(Algorithm::$sv => {
                    (HostLbConfig::FixedPerFlow, SwitchLbConfig::$sv(validated::<$st>(name, table)?))
                })*
            })
        }

        /// The NIC-side selectors, dispatched statically.
        #[derive(Debug, Clone)]
        pub enum HostSelector {
            /// One entropy per flow (see [`FixedEntropy`]).
            Ecmp(FixedEntropy),
            $( $(#[$hm])* $hv(<$ht as HostRole>::Selector), )*
        }

        impl HostSelector {
            /// The selector `config` asks for; a fixed-entropy one keeps `flow_entropy` when
            /// given, else draws it from `rng`.
            pub(crate) fn new(
                config: &HostLbConfig,
                rng: &mut SimRng,
                flow_entropy: Option<Entropy>,
            ) -> Self {
                match config {
                    HostLbConfig::FixedPerFlow => HostSelector::Ecmp(match flow_entropy {
                        Some(e) => FixedEntropy::with(e),
                        None => FixedEntropy::new(rng),
                    }),
                    $(HostLbConfig::$hv(c) => {
                        HostSelector::$hv(<$ht as HostRole>::selector(c, rng))
                    })*
                }
            }
        }

        impl PathSelector for HostSelector {
            fn next_entropy(&mut self, cx: &SendCx, rng: &mut SimRng) -> Entropy {
                match self {
                    HostSelector::Ecmp(s) => s.next_entropy(cx, rng),
                    $(HostSelector::$hv(s) => s.next_entropy(cx, rng),)*
                }
            }
            fn on_feedback(&mut self, fb: &Feedback, rng: &mut SimRng) {
                match self {
                    HostSelector::Ecmp(s) => s.on_feedback(fb, rng),
                    $(HostSelector::$hv(s) => s.on_feedback(fb, rng),)*
                }
            }
            fn poll_at(&self) -> Option<SimTime> {
                match self {
                    HostSelector::Ecmp(s) => s.poll_at(),
                    $(HostSelector::$hv(s) => s.poll_at(),)*
                }
            }
            fn on_timer(&mut self, now: SimTime, rng: &mut SimRng) {
                match self {
                    HostSelector::Ecmp(s) => s.on_timer(now, rng),
                    $(HostSelector::$hv(s) => s.on_timer(now, rng),)*
                }
            }
            fn send_after(&self) -> SimTime {
                match self {
                    HostSelector::Ecmp(s) => s.send_after(),
                    $(HostSelector::$hv(s) => s.send_after(),)*
                }
            }
            fn take_probe(&mut self, now: SimTime) -> Option<Entropy> {
                match self {
                    HostSelector::Ecmp(s) => s.take_probe(now),
                    $(HostSelector::$hv(s) => s.take_probe(now),)*
                }
            }
            fn path_switches(&self) -> u64 {
                match self {
                    HostSelector::Ecmp(s) => s.path_switches(),
                    $(HostSelector::$hv(s) => s.path_switches(),)*
                }
            }
        }

        /// The switch-side agents, dispatched statically.
        #[derive(Debug, Clone)]
        pub enum SwitchScheme {
            /// See [`EcmpHash`].
            Ecmp(Chooser<EcmpHash>),
            /// See [`HtsimEcmp`].
            HtsimEcmp(Chooser<HtsimEcmp>),
            $( $(#[$sm])* $sv(<$st as SwitchRole>::Agent), )*
        }

        impl SwitchScheme {
            /// The agent `config` asks for at switch `switch_id` (its ECMP hash seed, as in
            /// the reference).
            pub(crate) fn new(config: &SwitchLbConfig, switch_id: u32) -> Self {
                let ecmp = EcmpHash::new(switch_id);
                match config {
                    SwitchLbConfig::EcmpHash => SwitchScheme::Ecmp(Chooser(ecmp)),
                    $(SwitchLbConfig::$sv(c) => {
                        SwitchScheme::$sv(<$st as SwitchRole>::agent(c, switch_id, ecmp))
                    })*
                }
            }

            /// See [`SwitchRole::share_reference_rand`].
            pub(crate) fn share_reference_rand(&mut self, rand: SharedGlibcRand) {
                match self {
                    SwitchScheme::Ecmp(_) | SwitchScheme::HtsimEcmp(_) => {}
                    $(SwitchScheme::$sv(a) => <$st as SwitchRole>::share_reference_rand(a, rand),)*
                }
            }
        }

        impl SwitchAgent for SwitchScheme {
            fn add_port(&mut self, port: PortInfo) {
                match self {
                    SwitchScheme::Ecmp(a) => a.add_port(port),
                    SwitchScheme::HtsimEcmp(a) => a.add_port(port),
                    $(SwitchScheme::$sv(a) => a.add_port(port),)*
                }
            }
            fn add_host(&mut self, host_ip: u32, tor: u32) {
                match self {
                    SwitchScheme::Ecmp(a) => a.add_host(host_ip, tor),
                    SwitchScheme::HtsimEcmp(a) => a.add_host(host_ip, tor),
                    $(SwitchScheme::$sv(a) => a.add_host(host_ip, tor),)*
                }
            }
            fn add_path(&mut self, dst_tor: u32, path: PathId) {
                match self {
                    SwitchScheme::Ecmp(a) => a.add_path(dst_tor, path),
                    SwitchScheme::HtsimEcmp(a) => a.add_path(dst_tor, path),
                    $(SwitchScheme::$sv(a) => a.add_path(dst_tor, path),)*
                }
            }
            fn uses_fabric_map(&self) -> bool {
                match self {
                    SwitchScheme::Ecmp(a) => a.uses_fabric_map(),
                    SwitchScheme::HtsimEcmp(a) => a.uses_fabric_map(),
                    $(SwitchScheme::$sv(a) => a.uses_fabric_map(),)*
                }
            }
            fn sees_every_packet(&self) -> bool {
                match self {
                    SwitchScheme::Ecmp(a) => a.sees_every_packet(),
                    SwitchScheme::HtsimEcmp(a) => a.sees_every_packet(),
                    $(SwitchScheme::$sv(a) => a.sees_every_packet(),)*
                }
            }
            fn sees_egress(&self) -> bool {
                match self {
                    SwitchScheme::Ecmp(a) => a.sees_egress(),
                    SwitchScheme::HtsimEcmp(a) => a.sees_egress(),
                    $(SwitchScheme::$sv(a) => a.sees_egress(),)*
                }
            }
            fn reads_port_load(&self) -> bool {
                match self {
                    SwitchScheme::Ecmp(a) => a.reads_port_load(),
                    SwitchScheme::HtsimEcmp(a) => a.reads_port_load(),
                    $(SwitchScheme::$sv(a) => a.reads_port_load(),)*
                }
            }
            fn on_ingress(
                &mut self,
                now: SimTime,
                pkt: &PacketMeta,
                tag: &mut LbTag,
                candidates: &[EgressCandidate],
                rng: &mut SimRng,
            ) -> Verdict {
                match self {
                    SwitchScheme::Ecmp(a) => a.on_ingress(now, pkt, tag, candidates, rng),
                    SwitchScheme::HtsimEcmp(a) => a.on_ingress(now, pkt, tag, candidates, rng),
                    $(SwitchScheme::$sv(a) => a.on_ingress(now, pkt, tag, candidates, rng),)*
                }
            }
            fn on_egress(&mut self, now: SimTime, pkt: &PacketMeta, tag: &LbTag, port: u32) {
                match self {
                    SwitchScheme::Ecmp(a) => a.on_egress(now, pkt, tag, port),
                    SwitchScheme::HtsimEcmp(a) => a.on_egress(now, pkt, tag, port),
                    $(SwitchScheme::$sv(a) => a.on_egress(now, pkt, tag, port),)*
                }
            }
            fn poll_transmit(&mut self, now: SimTime) -> Option<ControlPacket> {
                match self {
                    SwitchScheme::Ecmp(a) => a.poll_transmit(now),
                    SwitchScheme::HtsimEcmp(a) => a.poll_transmit(now),
                    $(SwitchScheme::$sv(a) => a.poll_transmit(now),)*
                }
            }
            fn poll_release(&mut self, now: SimTime) -> Option<u64> {
                match self {
                    SwitchScheme::Ecmp(a) => a.poll_release(now),
                    SwitchScheme::HtsimEcmp(a) => a.poll_release(now),
                    $(SwitchScheme::$sv(a) => a.poll_release(now),)*
                }
            }
            fn poll_at(&self) -> Option<SimTime> {
                match self {
                    SwitchScheme::Ecmp(a) => a.poll_at(),
                    SwitchScheme::HtsimEcmp(a) => a.poll_at(),
                    $(SwitchScheme::$sv(a) => a.poll_at(),)*
                }
            }
            fn on_timer(&mut self, now: SimTime, rng: &mut SimRng) {
                match self {
                    SwitchScheme::Ecmp(a) => a.on_timer(now, rng),
                    SwitchScheme::HtsimEcmp(a) => a.on_timer(now, rng),
                    $(SwitchScheme::$sv(a) => a.on_timer(now, rng),)*
                }
            }
            fn on_link_state(&mut self, scope: LinkScope, down: bool) {
                match self {
                    SwitchScheme::Ecmp(a) => a.on_link_state(scope, down),
                    SwitchScheme::HtsimEcmp(a) => a.on_link_state(scope, down),
                    $(SwitchScheme::$sv(a) => a.on_link_state(scope, down),)*
                }
            }
            fn memory_bytes(&self) -> u64 {
                match self {
                    SwitchScheme::Ecmp(a) => a.memory_bytes(),
                    SwitchScheme::HtsimEcmp(a) => a.memory_bytes(),
                    $(SwitchScheme::$sv(a) => a.memory_bytes(),)*
                }
            }
            fn counters(&self, out: &mut dyn FnMut(&'static str, u64)) {
                match self {
                    SwitchScheme::Ecmp(a) => a.counters(out),
                    SwitchScheme::HtsimEcmp(a) => a.counters(out),
                    $(SwitchScheme::$sv(a) => a.counters(out),)*
                }
            }
        }
    };
}

registry! {
    /// Flow-level ECMP: one entropy per flow, hashed by every switch.
    base: Ecmp = "ecmp";
    host: [
        /// Oblivious packet spraying: a uniformly random entropy for every data packet.
        Spray = "spray" => spray::Spray,
        /// REPS: recycle the entropies of un-marked ACKs, explore otherwise, freeze on
        /// failures (the REPS paper, §3, and the authors' artifact).
        Reps = "reps" => reps::Reps,
        /// FlowBender: one entropy per flow, re-drawn after congested RTTs or a timeout
        /// (Kabbani et al., CoNEXT 2014).
        FlowBender = "flowbender" => flowbender::FlowBender,
        /// Whack-a-Mole: deterministic bit-reversal spraying over a discrete path profile that
        /// congestion feedback whacks down (the Whack-a-Mole paper).
        WhackAMole = "whack-a-mole" => whack_a_mole::WhackAMole,
        /// Hopper: RTT-driven path switching with two-path probing and an OOO-avoiding hold
        /// (the Hopper paper, "Predictive Load Balancing for RDMA Traffic", §3).
        Hopper = "hopper" => hopper::Hopper,
        /// PLB: repath (a new entropy) after a run of congested rounds (ECN-marked fraction
        /// above a threshold), preferring idle moments; repath on a timeout (Qureshi et al.,
        /// "PLB: Congestion Signals are Simple and Effective for Network Load Balancing",
        /// SIGCOMM 2022).
        Plb = "plb" => plb::Plb,
        /// Flowcut switching, NIC-only: a new path only when the flow has no packet in flight,
        /// after draining a congested path (Bonato et al., "Flowcut Switching", 2025).
        Flowcut = "flowcut" => flowcut::Flowcut,
        /// The UEC htsim's bitmap: XOR-permuted rounds over the entropies, skipping those
        /// penalised by ECN, NACKs and timeouts (Ultra Ethernet Consortium htsim, uec_mp.cpp,
        /// UecMpBitmap, commit 40ccb05).
        UecBitmap = "uec-bitmap" => uec_bitmap::UecBitmap,
        /// The UEC htsim's default, "mixed": recycle every good entropy first (REPS-legacy),
        /// else the bitmap's pick (Ultra Ethernet Consortium htsim, uec_mp.cpp, UecMpMixed,
        /// commit 40ccb05).
        UecMixed = "uec-mixed" => uec_mixed::UecMixed,
    ]
    switch: [
        /// Themis: PSN-based spraying at the source ToR, invalid-NACK blocking and NACK
        /// compensation at the destination ToR (the Themis paper, §3).
        Themis = "themis" => themis::Themis,
        /// PLTS-Random: a uniformly random equal-cost port per packet (the PLTS paper,
        /// §III-A.1).
        PltsRandom = "plts-random" => plts_random::PltsRandom,
        /// PLTS-Counter: the equal-cost port with the fewest bytes sent (the PLTS paper,
        /// §III-A.2).
        PltsCounter = "plts-counter" => plts_counter::PltsCounter,
        /// PLTS-RR: per-flow round robin over the equal-cost ports (the PLTS paper, §III-A.3).
        PltsRr = "plts-rr" => plts_rr::PltsRr,
        /// Adaptive routing: the equal-cost port with the shortest queue, per packet (the "AR"
        /// baseline of the Themis paper, §5).
        Adaptive = "adaptive" => adaptive::Adaptive,
        /// DRILL(d, m): shortest of d random ports and m remembered ones (ConWeave's baseline;
        /// Ghorbani et al., SIGCOMM 2017).
        Drill = "drill" => drill::Drill,
        /// CONGA: flowlets on the least congested of sampled paths, by DRE feedback between
        /// ToRs (as the reference simulator runs it).
        Conga = "conga" => conga::Conga,
        /// LetFlow: flowlets on uniformly random paths (as the reference simulator runs it).
        LetFlow = "letflow" => letflow::LetFlow,
        /// ConWeave: flowcut rerouting at the source ToR with in-network reordering at the
        /// destination ToR (SIGCOMM 2023; as the reference simulator runs it).
        ConWeave = "conweave" => conweave::ConWeave,
    ]
}
