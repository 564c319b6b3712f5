//! The bridge between `rdma-lb-core` and the ns-3 module: only the `#[cxx::bridge]`, newtype
//! wrappers and conversions; the logic lives in the core.
//!
//! Rules (spec/style-models.md §4.3):
//! * One-way: Rust exports functions; it never calls back into C++.
//! * Plain data in, plain data out; units in field names (`*_ns`, `*_bytes`).
//! * Only constructors return `Result` (a `rust::Error` in C++, raised by the ns-3 side as a
//!   fatal error with the message).
//! * **No panic crosses the bridge.** Every exported call runs inside [`guard`], which catches
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
        /// The algorithm failed (a caught panic): stop the simulation with `last_error()`.
        failed: bool,
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
        /// A selector for one queue pair.
        fn new_host_lb(self: &LbConfig, seed: u64) -> Result<Box<HostLb>>;
        /// A chooser for one switch (`switch_id` seeds the ECMP hash, as in the reference).
        fn new_switch_lb(self: &LbConfig, switch_id: u32, seed: u64) -> Result<Box<SwitchLb>>;

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

/// See [`ffi::LbConfig`].
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

    fn new_switch_lb(&self, switch_id: u32, seed: u64) -> Result<Box<SwitchLb>, String> {
        guard(|| {
            Box::new(SwitchLb {
                lb: sw::SwitchLb::new(&self.0.switch, switch_id, seed),
                failure: None,
                scratch: Vec::new(),
            })
        })
    }
}

/// See [`ffi::HostLb`]. Poisoned (every call reports failure) after a caught panic.
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

/// See [`ffi::SwitchLb`]. Poisoned after a caught panic.
pub struct SwitchLb {
    lb: sw::SwitchLb,
    failure: Option<String>,
    scratch: Vec<sw::EgressCandidate>,
}

impl SwitchLb {
    fn choose_egress(
        &mut self,
        now_ns: u64,
        pkt: &ffi::PacketInfo,
        candidates: &[ffi::EgressCandidate],
    ) -> ffi::EgressDecision {
        let failed = ffi::EgressDecision {
            index: 0,
            failed: true,
        };
        if self.failure.is_some() {
            return failed;
        }
        let kind = match pkt.kind {
            ffi::PacketKind::Data => sw::PacketKind::Data,
            ffi::PacketKind::Ack => sw::PacketKind::Ack,
            ffi::PacketKind::Nack => sw::PacketKind::Nack,
            ffi::PacketKind::Cnp => sw::PacketKind::Cnp,
            _ => {
                self.failure = Some("unknown packet kind from C++".to_owned());
                return failed;
            }
        };
        let meta = sw::PacketMeta {
            kind,
            sip: pkt.sip,
            dip: pkt.dip,
            sport: Entropy(pkt.sport),
            dport: pkt.dport,
            psn: Psn(pkt.psn),
            ingress_port: pkt.ingress_port,
            size_bytes: pkt.size_bytes,
        };
        let (lb, scratch) = (&mut self.lb, &mut self.scratch);
        match guard(|| {
            // Candidates are converted into a buffer kept across calls: after the first packets
            // it has the capacity of the largest equal-cost set and never allocates again.
            scratch.clear();
            scratch.extend(candidates.iter().map(|c| sw::EgressCandidate {
                port: c.port,
                queue_bytes: c.queue_bytes,
                tx_bytes: c.tx_bytes,
            }));
            lb.choose(SimTime::from_ns(now_ns), &meta, scratch)
        }) {
            Ok(i) => ffi::EgressDecision {
                index: u32::try_from(i).unwrap_or(0),
                failed: false,
            },
            Err(msg) => {
                self.failure = Some(msg);
                failed
            }
        }
    }

    fn last_error(&self) -> String {
        self.failure.clone().unwrap_or_default()
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
}
