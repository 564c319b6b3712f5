//! The bridge between `rdma-lb-core` and the ns-3 module: only the `#[cxx::bridge]`, newtype
//! wrappers and conversions; the logic lives in the core.
//!
//! Rules (spec/style-models.md §4.3):
//! * One-way: Rust exports functions; it never calls back into C++.
//! * Plain data in, plain data out; units in field names (`*_ns`, `*_bytes`).
//! * Only constructors return `Result` (a `rust::Error` in C++, raised by the ns-3 side as a
//!   fatal error with the message).
//! * **No panic crosses the bridge.** Every exported call runs inside `guard`, which catches
//!   a panic (the release profile keeps `panic = "unwind"` for this). A constructor turns it
//!   into an error; a per-packet call returns a safe decision flagged `failed`, poisons the
//!   object and keeps the message for `last_error()`, and the C++ caller stops the simulation
//!   with that message. The core is written not to panic at all; the guard is the backstop.
#![allow(
    unsafe_code,
    reason = "only the code cxx generates is unsafe; this file writes none"
)]

mod scenario;

use std::panic::{catch_unwind, AssertUnwindSafe};

use rdma_lb_core::host::{self, SendCx};
use rdma_lb_core::switch::{self as sw};
use rdma_lb_core::{config, Algorithm, Entropy, Psn, SimDuration, SimTime};

#[cxx::bridge(namespace = "rdmalb::bridge")]
mod ffi {
    // ---- Shared plain-data types --------------------------------------------------------

    /// What the NIC received about a packet it sent.
    #[derive(Debug)]
    enum FeedbackKind {
        /// Acknowledgement.
        Ack,
        /// Negative acknowledgement.
        Nack,
        /// Congestion notification.
        Cnp,
        /// Retransmission timeout.
        Timeout,
        /// Answer to a probe packet the selector asked for (`take_probe`).
        ProbeAck,
    }

    /// What a packet at a switch is.
    #[derive(Debug)]
    enum PacketKind {
        /// RDMA data.
        Data,
        /// Acknowledgement.
        Ack,
        /// Negative acknowledgement.
        Nack,
        /// Congestion notification.
        Cnp,
    }

    /// The NIC's state when it is about to send a data packet.
    #[derive(Debug)]
    struct SendContext {
        now_ns: u64,
        psn: u32,
        retransmission: bool,
        inflight_pkts: u32,
        every_arrival_answered: bool,
    }

    /// Feedback for a packet sent on `entropy`.
    #[derive(Debug)]
    struct FeedbackEvent {
        kind: FeedbackKind,
        now_ns: u64,
        entropy: u16,
        psn: u32,
        /// Round-trip time of the answered packet; meaningful when `has_rtt`.
        rtt_ns: u64,
        has_rtt: bool,
        ecn: bool,
    }

    /// The entropy to stamp on the next data packet.
    #[derive(Debug)]
    struct EntropyDecision {
        entropy: u16,
        /// The algorithm failed (a caught panic): stop the simulation with `last_error()`.
        failed: bool,
    }

    /// The packet fields a switch algorithm reads.
    #[derive(Debug)]
    struct PacketInfo {
        kind: PacketKind,
        sip: u32,
        dip: u32,
        sport: u16,
        dport: u16,
        psn: u32,
        ingress_port: u32,
        size_bytes: u32,
    }

    /// One equal-cost egress port and its state.
    #[derive(Debug)]
    struct EgressCandidate {
        port: u32,
        queue_bytes: u64,
        tx_bytes: u64,
    }

    /// The chosen candidate (an index into the list passed in).
    #[derive(Debug)]
    struct EgressDecision {
        index: u32,
        /// Write `entropy` into the packet's UDP source port before it leaves (Themis-S in a
        /// 3-tier fabric steers the next tiers this way).
        rewrite_entropy: bool,
        entropy: u16,
        /// The algorithm failed (a caught panic): stop the simulation with `last_error()`.
        failed: bool,
    }

    /// A NACK a ToR must send on a receiver's behalf (Themis NACK compensation): from
    /// `receiver` to `sender`, UDP source port `qpn`, expected sequence number `epsn`.
    #[derive(Debug)]
    struct CompensationDecision {
        send: bool,
        sender: u32,
        receiver: u32,
        qpn: u16,
        epsn: u32,
        /// The algorithm failed (a caught panic): stop the simulation with `last_error()`.
        failed: bool,
    }

    /// What to do with a NACK a host sent.
    #[derive(Debug)]
    struct NackDecision {
        /// Drop it (an invalid NACK).
        block: bool,
        /// The algorithm failed (a caught panic): stop the simulation with `last_error()`.
        failed: bool,
    }

    /// Themis counters of one ToR (all zero, `enabled` false, for other algorithms).
    #[derive(Debug)]
    struct ThemisCounters {
        enabled: bool,
        sprayed_pkts: u64,
        data_observed: u64,
        nacks_seen: u64,
        nacks_blocked: u64,
        nacks_forwarded: u64,
        nacks_unresolved: u64,
        compensations: u64,
        cancellations: u64,
        already_passed: u64,
        ring_overwrites: u64,
        flows: u64,
        ecmp_fallback: bool,
    }

    // ---- Rust types and functions exposed to C++ ---------------------------------------

    extern "Rust" {
        /// A validated load-balancing configuration, shared by every NIC and switch of a run.
        type LbConfig;
        /// Parses and validates; the error message names the parameter at fault.
        fn new_lb_config(algorithm: &str, params: &str) -> Result<Box<LbConfig>>;
        /// Every algorithm name, in table order.
        fn algorithm_names() -> Vec<String>;
        /// The configured algorithm's name.
        fn algorithm_name(self: &LbConfig) -> &'static str;
        /// A selector for one queue pair, with state of its own.
        fn new_host_lb(self: &LbConfig, seed: u64) -> Result<Box<HostLb>>;
        /// One sender NIC's load-balancing state across its queue pairs.
        fn new_host_lb_group(self: &LbConfig) -> Result<Box<HostLbGroup>>;
        /// A chooser for one switch (`switch_id` seeds the ECMP hash, as in the reference).
        fn new_switch_lb(self: &LbConfig, switch_id: u32, seed: u64) -> Result<Box<SwitchLb>>;

        /// One sender NIC's state shared by its queue pairs (Whack-a-Mole's per-destination
        /// profiles).
        type HostLbGroup;
        /// A selector for one of the NIC's queue pairs, to `destination` (an address);
        /// `flow_sport` is the flow's own source port (0..=65535; quirk `flow-ports`: a
        /// host side keeping one entropy per flow keeps this one), or -1 for none.
        fn new_qp_lb(
            self: &mut HostLbGroup,
            destination: u32,
            seed: u64,
            flow_sport: i32,
        ) -> Result<Box<HostLb>>;

        /// One queue pair's path selector.
        type HostLb;
        fn next_entropy(self: &mut HostLb, cx: &SendContext) -> EntropyDecision;
        /// Returns false if the algorithm failed (see `last_error`).
        fn on_feedback(self: &mut HostLb, fb: &FeedbackEvent) -> bool;
        /// Next time `on_timer` is wanted, or `u64::MAX` for none.
        fn poll_at_ns(self: &HostLb) -> u64;
        /// Returns false if the algorithm failed (see `last_error`).
        fn on_timer(self: &mut HostLb, now_ns: u64) -> bool;
        fn last_error(self: &HostLb) -> String;
        /// Earliest time the next data packet may leave (ns since the start).
        fn send_after_ns(self: &HostLb) -> u64;
        /// Entropy of a probe packet to send now, or -1 for none.
        fn take_probe(self: &mut HostLb, now_ns: u64) -> i32;
        /// Path switches so far.
        fn path_switches(self: &HostLb) -> u64;
        /// Makes the next call panic inside the guard (for the test that proves the guard).
        fn arm_test_panic(self: &mut HostLb);

        /// One switch's egress chooser.
        type SwitchLb;
        fn choose_egress(
            self: &mut SwitchLb,
            now_ns: u64,
            pkt: &PacketInfo,
            candidates: &[EgressCandidate],
        ) -> EgressDecision;
        fn last_error(self: &SwitchLb) -> String;
        /// Whether the ToR hooks below do anything (the algorithm has a ToR role).
        fn wants_tor_hooks(self: &SwitchLb) -> bool;
        /// Declares `port` as facing a host (last-hop bandwidth and one-way delay).
        fn add_host_port(self: &mut SwitchLb, port: u32, bandwidth_bps: u64, delay_ns: u64);
        /// A data packet leaves towards a host through `port` (at dequeue).
        fn on_data_to_host(
            self: &mut SwitchLb,
            now_ns: u64,
            pkt: &PacketInfo,
            port: u32,
        ) -> CompensationDecision;
        /// A NACK arrived from a host; `num_uplinks` = candidates towards its destination.
        fn on_nack_from_host(
            self: &mut SwitchLb,
            now_ns: u64,
            pkt: &PacketInfo,
            num_uplinks: u32,
        ) -> NackDecision;
        /// A link went down or up: one of this switch's (`remote` false, `port`), or one
        /// elsewhere (`remote` true). Returns false if the algorithm failed.
        fn on_link_state(self: &mut SwitchLb, port: u32, remote: bool, down: bool) -> bool;
        /// Switch memory of the algorithm's state, by its paper's accounting.
        fn memory_bytes(self: &SwitchLb) -> u64;
        fn themis_counters(self: &SwitchLb) -> ThemisCounters;
        /// Makes the next call panic inside the guard (for the test that proves the guard).
        fn arm_test_panic(self: &mut SwitchLb);
    }
}

/// Runs `f`, turning a panic into its message.
fn guard<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".to_owned());
        format!("internal error in rdma-lb (caught panic): {msg}")
    })
}

/// See `ffi::LbConfig`.
pub struct LbConfig(config::LbConfig);

fn new_lb_config(algorithm: &str, params: &str) -> Result<Box<LbConfig>, String> {
    guard(|| config::LbConfig::parse(algorithm, params))?
        .map(|c| Box::new(LbConfig(c)))
        .map_err(|e| e.to_string())
}

fn algorithm_names() -> Vec<String> {
    Algorithm::ALL.iter().map(|a| a.name().to_owned()).collect()
}

impl LbConfig {
    fn algorithm_name(&self) -> &'static str {
        self.0.algorithm.name()
    }

    fn new_host_lb(&self, seed: u64) -> Result<Box<HostLb>, String> {
        guard(|| {
            Box::new(HostLb {
                lb: host::HostLb::new(&self.0.host, seed),
                failure: None,
                armed: false,
            })
        })
    }

    fn new_host_lb_group(&self) -> Result<Box<HostLbGroup>, String> {
        guard(|| Box::new(HostLbGroup(host::HostLbGroup::new(&self.0.host))))
    }

    fn new_switch_lb(&self, switch_id: u32, seed: u64) -> Result<Box<SwitchLb>, String> {
        guard(|| {
            Box::new(SwitchLb {
                lb: sw::SwitchLb::new(&self.0.switch, switch_id, seed),
                failure: None,
                armed: false,
                scratch: Vec::new(),
            })
        })
    }
}

/// See `ffi::HostLbGroup`.
pub struct HostLbGroup(host::HostLbGroup);

impl HostLbGroup {
    fn new_qp_lb(
        &mut self,
        destination: u32,
        seed: u64,
        flow_sport: i32,
    ) -> Result<Box<HostLb>, String> {
        let group = &mut self.0;
        let flow_entropy = u16::try_from(flow_sport).ok().map(Entropy);
        guard(|| {
            Box::new(HostLb {
                lb: group.new_lb(destination, seed, flow_entropy),
                failure: None,
                armed: false,
            })
        })
    }
}

/// See `ffi::HostLb`. Poisoned (every call reports failure) after a caught panic.
pub struct HostLb {
    lb: host::HostLb,
    failure: Option<String>,
    armed: bool,
}

impl HostLb {
    /// Runs `f` on the selector unless poisoned; a panic poisons.
    fn call<T>(&mut self, fallback: T, f: impl FnOnce(&mut host::HostLb) -> T) -> (T, bool) {
        if self.failure.is_some() {
            return (fallback, false);
        }
        let armed = std::mem::take(&mut self.armed);
        let lb = &mut self.lb;
        match guard(|| {
            assert!(!armed, "injected test panic");
            f(lb)
        }) {
            Ok(v) => (v, true),
            Err(msg) => {
                self.failure = Some(msg);
                (fallback, false)
            }
        }
    }

    fn next_entropy(&mut self, cx: &ffi::SendContext) -> ffi::EntropyDecision {
        let cx = SendCx {
            now: SimTime::from_ns(cx.now_ns),
            psn: Psn(cx.psn),
            retransmission: cx.retransmission,
            inflight_pkts: cx.inflight_pkts,
            every_arrival_answered: cx.every_arrival_answered,
        };
        let (e, ok) = self.call(Entropy(0), |lb| lb.next_entropy(&cx));
        ffi::EntropyDecision {
            entropy: e.0,
            failed: !ok,
        }
    }

    fn on_feedback(&mut self, fb: &ffi::FeedbackEvent) -> bool {
        let kind = match fb.kind {
            ffi::FeedbackKind::Ack => host::FeedbackKind::Ack,
            ffi::FeedbackKind::Nack => host::FeedbackKind::Nack,
            ffi::FeedbackKind::Cnp => host::FeedbackKind::Cnp,
            ffi::FeedbackKind::Timeout => host::FeedbackKind::Timeout,
            ffi::FeedbackKind::ProbeAck => host::FeedbackKind::ProbeAck,
            _ => return self.fail("unknown feedback kind from C++"),
        };
        let fb = host::Feedback {
            kind,
            now: SimTime::from_ns(fb.now_ns),
            entropy: Entropy(fb.entropy),
            psn: Psn(fb.psn),
            rtt: fb.has_rtt.then_some(SimDuration::from_ns(fb.rtt_ns)),
            ecn: fb.ecn,
        };
        self.call((), |lb| lb.on_feedback(&fb)).1
    }

    fn poll_at_ns(&self) -> u64 {
        self.lb.poll_at().map_or(u64::MAX, SimTime::as_ns)
    }

    fn on_timer(&mut self, now_ns: u64) -> bool {
        self.call((), |lb| lb.on_timer(SimTime::from_ns(now_ns))).1
    }

    fn last_error(&self) -> String {
        self.failure.clone().unwrap_or_default()
    }

    fn send_after_ns(&self) -> u64 {
        self.lb.send_after().as_ns()
    }

    fn take_probe(&mut self, now_ns: u64) -> i32 {
        let (probe, _) = self.call(None, |lb| lb.take_probe(SimTime::from_ns(now_ns)));
        probe.map_or(-1, |e| i32::from(e.0))
    }

    fn path_switches(&self) -> u64 {
        self.lb.path_switches()
    }

    fn arm_test_panic(&mut self) {
        self.armed = true;
    }

    fn fail(&mut self, msg: &str) -> bool {
        self.failure = Some(msg.to_owned());
        false
    }
}

/// See `ffi::SwitchLb`. Poisoned after a caught panic.
pub struct SwitchLb {
    lb: sw::SwitchLb,
    failure: Option<String>,
    armed: bool,
    scratch: Vec<sw::EgressCandidate>,
}

/// The core's view of a packet from the bridge's; `None` for an unknown kind.
fn packet_meta(pkt: &ffi::PacketInfo) -> Option<sw::PacketMeta> {
    let kind = match pkt.kind {
        ffi::PacketKind::Data => sw::PacketKind::Data,
        ffi::PacketKind::Ack => sw::PacketKind::Ack,
        ffi::PacketKind::Nack => sw::PacketKind::Nack,
        ffi::PacketKind::Cnp => sw::PacketKind::Cnp,
        _ => return None,
    };
    Some(sw::PacketMeta {
        kind,
        sip: pkt.sip,
        dip: pkt.dip,
        sport: Entropy(pkt.sport),
        dport: pkt.dport,
        psn: Psn(pkt.psn),
        ingress_port: pkt.ingress_port,
        size_bytes: pkt.size_bytes,
    })
}

impl SwitchLb {
    /// Runs `f` on the load balancer unless poisoned; a panic poisons. `None` on failure.
    fn call<T>(
        &mut self,
        f: impl FnOnce(&mut sw::SwitchLb, &mut Vec<sw::EgressCandidate>) -> T,
    ) -> Option<T> {
        if self.failure.is_some() {
            return None;
        }
        let armed = std::mem::take(&mut self.armed);
        let (lb, scratch) = (&mut self.lb, &mut self.scratch);
        match guard(|| {
            assert!(!armed, "injected test panic");
            f(lb, scratch)
        }) {
            Ok(v) => Some(v),
            Err(msg) => {
                self.failure = Some(msg);
                None
            }
        }
    }

    /// Like [`SwitchLb::call`] for a call taking a packet; an unknown packet kind poisons.
    fn call_pkt<T>(
        &mut self,
        pkt: &ffi::PacketInfo,
        f: impl FnOnce(&mut sw::SwitchLb, &mut Vec<sw::EgressCandidate>, &sw::PacketMeta) -> T,
    ) -> Option<T> {
        let Some(meta) = packet_meta(pkt) else {
            if self.failure.is_none() {
                self.failure = Some("unknown packet kind from C++".to_owned());
            }
            return None;
        };
        self.call(|lb, scratch| f(lb, scratch, &meta))
    }

    fn choose_egress(
        &mut self,
        now_ns: u64,
        pkt: &ffi::PacketInfo,
        candidates: &[ffi::EgressCandidate],
    ) -> ffi::EgressDecision {
        let now = SimTime::from_ns(now_ns);
        let choice = self.call_pkt(pkt, |lb, scratch, meta| {
            // Candidates are converted into a buffer kept across calls: after the first packets
            // it has the capacity of the largest equal-cost set and never allocates again.
            scratch.clear();
            scratch.extend(candidates.iter().map(|c| sw::EgressCandidate {
                port: c.port,
                queue_bytes: c.queue_bytes,
                tx_bytes: c.tx_bytes,
            }));
            lb.choose(now, meta, scratch)
        });
        match choice {
            Some(c) => ffi::EgressDecision {
                index: u32::try_from(c.index).unwrap_or(0),
                rewrite_entropy: c.rewrite_entropy.is_some(),
                entropy: c.rewrite_entropy.map_or(0, |e| e.0),
                failed: false,
            },
            None => ffi::EgressDecision {
                index: 0,
                rewrite_entropy: false,
                entropy: 0,
                failed: true,
            },
        }
    }

    fn last_error(&self) -> String {
        self.failure.clone().unwrap_or_default()
    }

    fn wants_tor_hooks(&self) -> bool {
        self.lb.wants_tor_hooks()
    }

    fn add_host_port(&mut self, port: u32, bandwidth_bps: u64, delay_ns: u64) {
        // Setup, not the hot path; a failure poisons and shows at the next per-packet call.
        let _ = self.call(|lb, _| lb.add_host_port(port, bandwidth_bps, delay_ns));
    }

    fn on_data_to_host(
        &mut self,
        now_ns: u64,
        pkt: &ffi::PacketInfo,
        port: u32,
    ) -> ffi::CompensationDecision {
        let now = SimTime::from_ns(now_ns);
        let r = self.call_pkt(pkt, |lb, _, meta| lb.on_data_to_host(now, meta, port));
        let c = r.flatten();
        ffi::CompensationDecision {
            send: c.is_some(),
            sender: c.map_or(0, |c| c.sender),
            receiver: c.map_or(0, |c| c.receiver),
            qpn: c.map_or(0, |c| c.qpn),
            epsn: c.map_or(0, |c| c.epsn.0),
            failed: r.is_none(),
        }
    }

    fn on_nack_from_host(
        &mut self,
        now_ns: u64,
        pkt: &ffi::PacketInfo,
        num_uplinks: u32,
    ) -> ffi::NackDecision {
        let now = SimTime::from_ns(now_ns);
        let n = usize::try_from(num_uplinks).unwrap_or(usize::MAX);
        match self.call_pkt(pkt, |lb, _, meta| lb.on_nack_from_host(now, meta, n)) {
            Some(v) => ffi::NackDecision {
                block: v == sw::NackVerdict::Block,
                failed: false,
            },
            None => ffi::NackDecision {
                block: false,
                failed: true,
            },
        }
    }

    fn on_link_state(&mut self, port: u32, remote: bool, down: bool) -> bool {
        let scope = if remote {
            sw::LinkScope::Remote
        } else {
            sw::LinkScope::Local { port }
        };
        self.call(|lb, _| lb.on_link_state(scope, down)).is_some()
    }

    fn memory_bytes(&self) -> u64 {
        self.lb.memory_bytes()
    }

    fn themis_counters(&self) -> ffi::ThemisCounters {
        let s = self.lb.themis_stats();
        let t = s.unwrap_or_default();
        ffi::ThemisCounters {
            enabled: s.is_some(),
            sprayed_pkts: t.sprayed_pkts,
            data_observed: t.data_observed,
            nacks_seen: t.nacks_seen,
            nacks_blocked: t.nacks_blocked,
            nacks_forwarded: t.nacks_forwarded,
            nacks_unresolved: t.nacks_unresolved,
            compensations: t.compensations,
            cancellations: t.cancellations,
            already_passed: t.already_passed,
            ring_overwrites: t.ring_overwrites,
            flows: t.flows,
            ecmp_fallback: t.ecmp_fallback,
        }
    }

    fn arm_test_panic(&mut self) {
        self.armed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx(psn: u32) -> ffi::SendContext {
        ffi::SendContext {
            now_ns: 0,
            psn,
            retransmission: false,
            inflight_pkts: 0,
            every_arrival_answered: false,
        }
    }

    #[test]
    fn bad_parameter_is_an_error_naming_it() {
        let Err(e) = new_lb_config("spray", "num_entropies = 0") else {
            panic!("accepted")
        };
        assert!(e.contains("parameter `num_entropies`"), "{e}");
    }

    #[test]
    fn injected_panic_is_caught_and_poisons() {
        let cfg = new_lb_config("ecmp", "").unwrap();
        let mut lb = cfg.new_host_lb(1).unwrap();
        assert!(!lb.next_entropy(&cx(0)).failed);
        lb.arm_test_panic();
        let d = lb.next_entropy(&cx(1));
        assert!(d.failed);
        assert!(
            lb.last_error().contains("injected test panic"),
            "{}",
            lb.last_error()
        );
        assert!(lb.next_entropy(&cx(2)).failed, "stays poisoned");
    }

    #[test]
    fn switch_choice_is_within_candidates() {
        let cfg = new_lb_config("ecmp", "").unwrap();
        let mut lb = cfg.new_switch_lb(3, 0).unwrap();
        let cands: Vec<ffi::EgressCandidate> = (0..4)
            .map(|p| ffi::EgressCandidate {
                port: p,
                queue_bytes: 0,
                tx_bytes: 0,
            })
            .collect();
        for sport in 0..100 {
            let pkt = ffi::PacketInfo {
                kind: ffi::PacketKind::Data,
                sip: 1,
                dip: 2,
                sport,
                dport: 100,
                psn: 0,
                ingress_port: 0,
                size_bytes: 1048,
            };
            let d = lb.choose_egress(0, &pkt, &cands);
            assert!(!d.failed && d.index < 4);
        }
    }

    fn pkt(
        kind: ffi::PacketKind,
        sip: u32,
        dip: u32,
        sport: u16,
        dport: u16,
        psn: u32,
        ingress: u32,
    ) -> ffi::PacketInfo {
        ffi::PacketInfo {
            kind,
            sip,
            dip,
            sport,
            dport,
            psn,
            ingress_port: ingress,
            size_bytes: 1048,
        }
    }

    #[test]
    fn themis_tor_hooks_block_and_compensate_through_the_bridge() {
        let cfg = new_lb_config("themis", "").unwrap();
        let mut lb = cfg.new_switch_lb(8, 0).unwrap();
        assert!(lb.wants_tor_hooks());
        lb.add_host_port(0, 100_000_000_000, 1_000);
        for psn in [0, 1, 3] {
            let d = lb.on_data_to_host(0, &pkt(ffi::PacketKind::Data, 1, 2, 99, 7, psn, 4), 0);
            assert!(!d.failed && !d.send);
        }
        let n = lb.on_nack_from_host(0, &pkt(ffi::PacketKind::Nack, 2, 1, 7, 99, 2, 0), 2);
        assert!(!n.failed && n.block);
        let d = lb.on_data_to_host(0, &pkt(ffi::PacketKind::Data, 1, 2, 99, 7, 4, 4), 0);
        assert!(d.send && !d.failed);
        assert_eq!((d.sender, d.receiver, d.qpn, d.epsn), (1, 2, 7, 2));
        let c = lb.themis_counters();
        assert!(c.enabled);
        assert_eq!((c.nacks_blocked, c.compensations, c.flows), (1, 1, 1));
        assert_eq!(lb.memory_bytes(), 20 + 38);
        assert!(lb.on_link_state(5, false, true));
        assert!(lb.themis_counters().ecmp_fallback);
    }

    #[test]
    fn switch_panic_is_caught_and_poisons() {
        let cfg = new_lb_config("plts-random", "").unwrap();
        let mut lb = cfg.new_switch_lb(1, 0).unwrap();
        assert!(!lb.wants_tor_hooks());
        assert!(!lb.themis_counters().enabled);
        lb.arm_test_panic();
        let p = pkt(ffi::PacketKind::Nack, 2, 1, 7, 99, 2, 0);
        assert!(lb.on_nack_from_host(0, &p, 2).failed);
        assert!(
            lb.last_error().contains("injected test panic"),
            "{}",
            lb.last_error()
        );
        let cands = [ffi::EgressCandidate {
            port: 0,
            queue_bytes: 0,
            tx_bytes: 0,
        }];
        assert!(lb.choose_egress(0, &p, &cands).failed, "stays poisoned");
    }
}
