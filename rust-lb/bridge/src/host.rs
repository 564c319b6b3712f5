//! The NICs' side (`ffi::HostLbGroup`, `ffi::HostLb`): one sender NIC's state and one queue
//! pair's path selector, each call inside the panic guard.

use rdma_lb_core::host::{self, SendCx};
use rdma_lb_core::{Entropy, Psn, SimDuration, SimTime};

use crate::guard::guard;

/// The shared structs of the NICs' calls (header `rdma-lb-bridge/src/host.rs.h`; the
/// functions that take them are declared with the opaque types in the crate root's bridge).
#[cxx::bridge(namespace = "rdmalb::bridge")]
pub mod ffi {
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
        /// A NACK of a packet trimmed at its last hop (the port facing the receiver).
        last_hop: bool,
    }

    /// The entropy to stamp on the next data packet.
    #[derive(Debug)]
    struct EntropyDecision {
        entropy: u16,
        /// The algorithm failed (a caught panic): stop the simulation with `last_error()`.
        failed: bool,
    }
}

/// See `ffi::HostLbGroup`.
pub struct HostLbGroup(host::HostLbGroup);

impl HostLbGroup {
    pub(crate) fn new(group: host::HostLbGroup) -> Self {
        HostLbGroup(group)
    }

    pub(crate) fn new_qp_lb(
        &mut self,
        destination: u32,
        seed: u64,
        flow_sport: i32,
    ) -> Result<Box<HostLb>, String> {
        let group = &mut self.0;
        let flow_entropy = u16::try_from(flow_sport).ok().map(Entropy);
        guard(|| Box::new(HostLb::new(group.new_lb(destination, seed, flow_entropy))))
    }
}

/// See `ffi::HostLb`. Poisoned (every call reports failure) after a caught panic.
pub struct HostLb {
    lb: host::HostLb,
    failure: Option<String>,
    armed: bool,
}

impl HostLb {
    pub(crate) fn new(lb: host::HostLb) -> Self {
        HostLb {
            lb,
            failure: None,
            armed: false,
        }
    }

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

    pub(crate) fn next_entropy(&mut self, cx: &ffi::SendContext) -> ffi::EntropyDecision {
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

    pub(crate) fn on_feedback(&mut self, fb: &ffi::FeedbackEvent) -> bool {
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
            last_hop: fb.last_hop,
        };
        self.call((), |lb| lb.on_feedback(&fb)).1
    }

    pub(crate) fn poll_at_ns(&self) -> u64 {
        self.lb.poll_at().map_or(u64::MAX, SimTime::as_ns)
    }

    pub(crate) fn on_timer(&mut self, now_ns: u64) -> bool {
        self.call((), |lb| lb.on_timer(SimTime::from_ns(now_ns))).1
    }

    pub(crate) fn last_error(&self) -> String {
        self.failure.clone().unwrap_or_default()
    }

    pub(crate) fn send_after_ns(&self) -> u64 {
        self.lb.send_after().as_ns()
    }

    pub(crate) fn take_probe(&mut self, now_ns: u64) -> i32 {
        let (probe, _) = self.call(None, |lb| lb.take_probe(SimTime::from_ns(now_ns)));
        probe.map_or(-1, |e| i32::from(e.0))
    }

    pub(crate) fn path_switches(&self) -> u64 {
        self.lb.path_switches()
    }

    pub(crate) fn fixed_entropy(&self) -> i32 {
        match (&self.failure, self.lb.fixed_entropy()) {
            (None, Some(e)) => i32::from(e.0),
            _ => -1,
        }
    }

    pub(crate) fn arm_test_panic(&mut self) {
        self.armed = true;
    }

    fn fail(&mut self, msg: &str) -> bool {
        self.failure = Some(msg.to_owned());
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::new_lb_config;

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
    fn a_last_hop_nack_reaches_the_selector_as_such() {
        // uec-mixed recycles an unmarked NACK's entropy only when the trim was at the last
        // hop: the flag must cross the bridge. Entropy 77 is recycled next; a NACK without the
        // flag is not (the bitmap's pick over 128 entropies with upper bits is then another).
        let cfg = new_lb_config("uec-mixed", "num_entropies = 128").unwrap();
        let nack = |last_hop| ffi::FeedbackEvent {
            kind: ffi::FeedbackKind::Nack,
            now_ns: 1,
            entropy: 77,
            psn: 0,
            rtt_ns: 0,
            has_rtt: false,
            ecn: false,
            last_hop,
        };
        let mut lb = cfg.new_host_lb(3).unwrap();
        assert!(lb.on_feedback(&nack(true)));
        assert_eq!(lb.next_entropy(&cx(0)).entropy, 77);
        let mut lb = cfg.new_host_lb(3).unwrap();
        assert!(lb.on_feedback(&nack(false)));
        assert_ne!(lb.next_entropy(&cx(0)).entropy, 77);
    }
}
