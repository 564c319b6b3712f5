//! Flowcut switching, NIC-only variant (Bonato, De Sensi, Di Girolamo, Bataineh, Hewson,
//! Roweth, Hoefler, "Flowcut Switching: High-Performance Adaptive Routing with In-Order
//! Delivery Guarantees", arXiv 2506.21406, 2025): a flow changes path only when that cannot
//! reorder its packets.
//!
//! From the paper:
//! * A flowcut is a run of consecutive packets of a flow on one path. A flow takes a new path
//!   only when it has no packet in flight, so no packet can overtake an earlier one: delivery
//!   stays in order.
//! * Drainage: a flow whose path is congested, as RTT signals tell, ends its flowcut by
//!   pausing until its packets in flight have drained to zero, then moves to another path.
//!
//! Our reconstruction of a NIC-only variant (the rules below are ours, not the paper's):
//! * The queue pair keeps one entropy (one ECMP path), drawn uniformly from `num_entropies`
//!   ([`Flowcut::new`]) or given ([`Flowcut::with`], a flow whose source port is fixed).
//! * **Congestion signal.** An ACK for the current entropy whose RTT exceeds
//!   `congested_rtt_factor` × `base_rtt_ns` (defaults 2.0 and 8,320 ns, Hopper's base RTT: the
//!   reference's leaf-spine inter-rack RTT, `rdma-lb.rst`, "Routing and ECMP"), or, with
//!   `ecn_signal` (default true), that echoes an ECN mark, marks the path congested. The mark
//!   stays until the flowcut ends; later good ACKs do not clear it.
//! * **Drain** (`drain`, default true). When the path is marked while packets newer than the
//!   one the signal is about are in flight, the selector holds the queue pair
//!   ([`PathSelector::send_after`]) for an estimate of the drain time: the last RTT sample of
//!   the current entropy (the base RTT before the first), capped at `max_drain_ns` (default
//!   100 µs). The NIC asks for an entropy only when it sends, after the hold; at that packet,
//!   if packets are still in flight, it keeps the current entropy (in order) and the hold is
//!   re-armed from now. A draining queue pair therefore sends at most one packet per drain
//!   estimate: drainage costs throughput, as in the paper. When the signal is about the newest
//!   packet sent, nothing newer is known to be in flight and there is no hold; the next packet
//!   checks.
//! * **New flowcut.** At the first data packet sent with [`SendCx::inflight_pkts`] = 0 after
//!   the path was marked, the queue pair takes a new entropy, uniformly from the other
//!   `num_entropies - 1` values, and the mark is cleared. Without a mark an idle packet keeps
//!   the entropy: no signal, no switch. Without drain no hold is ever set, so only a natural
//!   idle gap (nothing in flight) ends a marked flowcut.
//! * A retransmission is chosen as any packet: it never changes the entropy while packets are
//!   in flight, with one exception. **A retransmission timeout ends the flowcut at once**: the
//!   transport takes every unanswered packet for lost and resends them all, so the first
//!   resend takes a new entropy (and so do the others, and new data, until the next signal).
//!   The NIC still counts the lost packets as in flight until they are answered; waiting for
//!   zero would keep a flow on a path that loses every packet (a black hole) for good. Only a
//!   packet the timeout wrongly took for lost (still queued on the old path) can then arrive
//!   after its resend: a duplicate, not a reordering of data the receiver lacks.
//! * NACKs, CNPs and probe answers are ignored: the signals are the ACKs' RTT and ECN echo.
//! * [`PathSelector::path_switches`] counts the new flowcuts (each on another entropy).

use serde::Deserialize;

use super::selector::{Feedback, FeedbackKind, PathSelector, SendCx};
use crate::error::{check_int, check_real, ParamError};
use crate::rng::SimRng;
use crate::scheme::{HostRole, Scheme};
use crate::time::{SimDuration, SimTime};
use crate::units::{Entropy, Psn};

/// Parameters of Flowcut switching (our NIC-only reconstruction).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlowcutConfig {
    /// Size of the entropy space new entropies are drawn from.
    pub num_entropies: u32,
    /// Base (unloaded) RTT of the fabric, ns.
    pub base_rtt_ns: u64,
    /// An ACK whose RTT exceeds this multiple of the base RTT marks the path congested.
    pub congested_rtt_factor: f64,
    /// Whether an ACK echoing an ECN mark marks the path congested.
    pub ecn_signal: bool,
    /// Whether a congested flowcut holds the queue pair until its packets drain.
    pub drain: bool,
    /// Upper bound on one hold (the drain-time estimate), ns.
    pub max_drain_ns: u64,
}

impl Default for FlowcutConfig {
    fn default() -> Self {
        FlowcutConfig {
            num_entropies: 1 << 16,
            base_rtt_ns: 8_320,
            congested_rtt_factor: 2.0,
            ecn_signal: true,
            drain: true,
            max_drain_ns: 100_000,
        }
    }
}

impl FlowcutConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// The first parameter out of range, with its allowed range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int("num_entropies", self.num_entropies.into(), 2, 1 << 16)?;
        check_int("base_rtt_ns", self.base_rtt_ns, 1, 1_000_000_000)?;
        check_real(
            "congested_rtt_factor",
            self.congested_rtt_factor,
            1.0,
            1_000.0,
        )?;
        check_int("max_drain_ns", self.max_drain_ns, 1, 1_000_000_000)?;
        Ok(())
    }
}

/// Whether `a` is at or after `b` in sequence space (modulo 2^32).
fn at_or_after(a: Psn, b: Psn) -> bool {
    a.0.wrapping_sub(b.0) < 1 << 31
}

/// Flowcut switching for one queue pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Flowcut {
    cfg: FlowcutConfig,
    entropy: Entropy,
    /// The current flowcut's path was signalled congested: the next idle packet moves.
    congested: bool,
    /// A retransmission timeout ended the flowcut: the next packet moves, idle or not.
    timed_out: bool,
    hold_until: SimTime,
    /// The last RTT sample of the current entropy.
    last_rtt: Option<SimDuration>,
    /// Highest PSN sent so far.
    highest_sent: Option<Psn>,
    switches: u64,
}

impl Flowcut {
    /// A queue pair on a random entropy.
    pub fn new(config: &FlowcutConfig, rng: &mut SimRng) -> Self {
        let num_entropies = config.num_entropies.clamp(2, 1 << 16);
        Self::with(
            config,
            Entropy(u16::try_from(rng.below(num_entropies)).unwrap_or(0)),
        )
    }

    /// A queue pair that starts on `entropy` (a flow whose source port is given).
    #[must_use]
    pub fn with(config: &FlowcutConfig, entropy: Entropy) -> Self {
        Flowcut {
            cfg: FlowcutConfig {
                num_entropies: config.num_entropies.clamp(2, 1 << 16),
                ..*config
            },
            entropy,
            congested: false,
            timed_out: false,
            hold_until: SimTime::ZERO,
            last_rtt: None,
            highest_sent: None,
            switches: 0,
        }
    }

    /// The entropy of the current flowcut.
    #[must_use]
    pub fn entropy(&self) -> Entropy {
        self.entropy
    }

    /// Whether the current flowcut's path was signalled congested (it ends at the next packet
    /// sent with nothing in flight).
    #[must_use]
    pub fn congested(&self) -> bool {
        self.congested
    }

    /// New flowcuts so far.
    #[must_use]
    pub fn switches(&self) -> u64 {
        self.switches
    }

    /// The drain-time estimate: the last RTT sample (the base RTT before any), capped.
    fn drain_time(&self) -> SimDuration {
        let estimate = self
            .last_rtt
            .unwrap_or(SimDuration::from_ns(self.cfg.base_rtt_ns));
        estimate.min(SimDuration::from_ns(self.cfg.max_drain_ns))
    }

    fn rtt_congested(&self, rtt: SimDuration) -> bool {
        rtt.as_ns() as f64 > self.cfg.congested_rtt_factor * self.cfg.base_rtt_ns as f64
    }

    /// Marks the path congested on a signal about the packet `psn`; with drain, holds the
    /// queue pair if newer packets are in flight.
    fn mark(&mut self, now: SimTime, psn: Psn) {
        if self.congested {
            return;
        }
        self.congested = true;
        let newer_in_flight = self.highest_sent.is_some_and(|h| !at_or_after(psn, h));
        if self.cfg.drain && newer_in_flight {
            self.hold_until = self.hold_until.max(now + self.drain_time());
        }
    }

    fn new_flowcut(&mut self, rng: &mut SimRng) {
        let n = self.cfg.num_entropies;
        let old = u32::from(self.entropy.0);
        let new = if old < n {
            let mut new = rng.below(n - 1);
            if new >= old {
                new += 1;
            }
            new
        } else {
            rng.below(n)
        };
        self.entropy = Entropy(u16::try_from(new).unwrap_or(0));
        self.congested = false;
        self.timed_out = false;
        self.switches = self.switches.saturating_add(1);
    }
}

impl PathSelector for Flowcut {
    fn next_entropy(&mut self, cx: &SendCx, rng: &mut SimRng) -> Entropy {
        if self.congested {
            if cx.inflight_pkts == 0 || self.timed_out {
                self.new_flowcut(rng);
            } else if self.cfg.drain {
                self.hold_until = cx.now + self.drain_time();
            }
        }
        match self.highest_sent {
            Some(h) if !at_or_after(cx.psn, h) => {}
            _ => self.highest_sent = Some(cx.psn),
        }
        self.entropy
    }

    fn on_feedback(&mut self, fb: &Feedback, _rng: &mut SimRng) {
        match fb.kind {
            FeedbackKind::Ack if fb.entropy == self.entropy => {
                if let Some(rtt) = fb.rtt {
                    self.last_rtt = Some(rtt);
                }
                let signal = fb.rtt.is_some_and(|r| self.rtt_congested(r))
                    || (self.cfg.ecn_signal && fb.ecn);
                if signal {
                    self.mark(fb.now, fb.psn);
                }
            }
            FeedbackKind::Timeout => {
                self.congested = true;
                self.timed_out = true;
                self.hold_until = SimTime::ZERO;
            }
            FeedbackKind::Ack | FeedbackKind::Nack | FeedbackKind::Cnp | FeedbackKind::ProbeAck => {
            }
        }
    }

    fn send_after(&self) -> SimTime {
        self.hold_until
    }

    fn path_switches(&self) -> u64 {
        self.switches
    }
}

impl Scheme for Flowcut {
    type Config = FlowcutConfig;
    const MOVES_ON_FEEDBACK: bool = true;

    fn validate(config: &FlowcutConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl HostRole for Flowcut {
    type Selector = Flowcut;

    fn selector(config: &FlowcutConfig, rng: &mut SimRng) -> Flowcut {
        Flowcut::new(config, rng)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;

    /// The default base RTT and the RTT above which an ACK signals congestion (2 × base).
    const BASE: u64 = 8_320;
    const CONGESTED_RTT: u64 = 2 * BASE;

    /// A queue pair as the NIC drives it: it sends only once the selector's hold is over,
    /// reports the packets sent and not yet answered (a resend's own included), and answers
    /// packets in order with ACKs echoing their entropy, PSN, RTT and ECN mark. After a
    /// timeout it resends every unanswered PSN, which stays in flight until answered.
    struct Qp {
        fc: Flowcut,
        rng: SimRng,
        now_ns: u64,
        next_psn: u32,
        /// Sent and unanswered, oldest first: PSN, last send time, entropy.
        inflight: VecDeque<(u32, u64, Entropy)>,
        /// PSNs to resend, oldest first.
        resend: VecDeque<u32>,
    }

    impl Qp {
        fn new(cfg: &FlowcutConfig, seed: u64) -> Self {
            let mut rng = SimRng::new(seed);
            let fc = Flowcut::new(cfg, &mut rng);
            Qp {
                fc,
                rng,
                now_ns: 0,
                next_psn: 0,
                inflight: VecDeque::new(),
                resend: VecDeque::new(),
            }
        }

        fn inflight(&self) -> u32 {
            u32::try_from(self.inflight.len()).unwrap()
        }

        /// Sends the next packet (a resend first) as soon as the hold allows.
        fn send(&mut self) -> Entropy {
            self.now_ns = self.now_ns.max(self.fc.send_after().as_ns());
            let (psn, retransmission) = match self.resend.pop_front() {
                Some(p) => (p, true),
                None => {
                    self.next_psn += 1;
                    (self.next_psn - 1, false)
                }
            };
            let cx = SendCx {
                now: SimTime::from_ns(self.now_ns),
                psn: Psn(psn),
                retransmission,
                inflight_pkts: self.inflight(),
                every_arrival_answered: true,
            };
            let e = self.fc.next_entropy(&cx, &mut self.rng);
            if retransmission {
                let entry = self.inflight.iter_mut().find(|x| x.0 == psn).unwrap();
                *entry = (psn, self.now_ns, e);
            } else {
                self.inflight.push_back((psn, self.now_ns, e));
            }
            e
        }

        /// Answers the oldest packet in flight `rtt_ns` after it was sent (or now, if later).
        fn ack(&mut self, rtt_ns: u64, ecn: bool) {
            let (psn, sent_ns, entropy) = self.inflight.pop_front().unwrap();
            self.resend.retain(|&p| p != psn);
            self.now_ns = self.now_ns.max(sent_ns + rtt_ns);
            let fb = Feedback {
                kind: FeedbackKind::Ack,
                now: SimTime::from_ns(self.now_ns),
                entropy,
                psn: Psn(psn),
                rtt: Some(SimDuration::from_ns(rtt_ns)),
                ecn,
                last_hop: false,
            };
            self.fc.on_feedback(&fb, &mut self.rng);
        }

        /// The retransmission timer fires for the oldest packet in flight; every unanswered
        /// PSN is to be resent.
        fn timeout(&mut self, after_ns: u64) {
            self.now_ns += after_ns;
            let &(psn, _, entropy) = self.inflight.front().unwrap();
            let fb = Feedback {
                kind: FeedbackKind::Timeout,
                now: SimTime::from_ns(self.now_ns),
                entropy,
                psn: Psn(psn),
                rtt: None,
                ecn: false,
                last_hop: false,
            };
            self.fc.on_feedback(&fb, &mut self.rng);
            self.resend = self.inflight.iter().map(|x| x.0).collect();
        }

        fn feedback(&mut self, kind: FeedbackKind, entropy: Entropy, psn: u32, rtt_ns: u64) {
            let fb = Feedback {
                kind,
                now: SimTime::from_ns(self.now_ns),
                entropy,
                psn: Psn(psn),
                rtt: Some(SimDuration::from_ns(rtt_ns)),
                ecn: true,
                last_hop: false,
            };
            self.fc.on_feedback(&fb, &mut self.rng);
        }
    }

    #[test]
    fn no_switch_without_a_signal() {
        // Bursts of 1 to 8 packets answered at base RTT up to exactly 2 x base (not above),
        // unmarked, with idle gaps between: one entropy throughout, never a hold.
        let mut q = Qp::new(&FlowcutConfig::default(), 1);
        let e0 = q.fc.entropy();
        for burst in 0..500_u64 {
            for _ in 0..=burst % 8 {
                assert_eq!(q.send(), e0);
            }
            while q.inflight() > 0 {
                q.ack(BASE + (burst * 997) % (CONGESTED_RTT - BASE + 1), false);
            }
            q.now_ns += 50_000;
            assert_eq!(q.fc.send_after(), SimTime::ZERO);
        }
        assert_eq!((q.fc.path_switches(), q.fc.congested()), (0, false));
    }

    #[test]
    fn switches_at_the_first_idle_packet_after_a_signal() {
        let mut q = Qp::new(&FlowcutConfig::default(), 2);
        let e0 = q.fc.entropy();
        for _ in 0..4 {
            assert_eq!(q.send(), e0);
        }
        // PSN 0 answered at base RTT with an ECN mark: the path is congested, 3 newer packets
        // are in flight, so the queue pair is held for the last RTT sample.
        q.ack(BASE, true);
        assert!(q.fc.congested());
        assert_eq!(q.fc.send_after().as_ns(), q.now_ns + BASE);
        // The next packet leaves at the end of the hold, still on e0 (3 in flight): in order.
        let t = q.fc.send_after().as_ns();
        assert_eq!(q.send(), e0);
        assert_eq!(q.now_ns, t);
        assert_eq!(q.fc.path_switches(), 0);
        // Everything answered (unmarked: the mark stays); the next packet starts a flowcut.
        while q.inflight() > 0 {
            q.ack(BASE, false);
        }
        let e1 = q.send();
        assert_ne!(e1, e0);
        assert_eq!((q.fc.path_switches(), q.fc.congested()), (1, false));
        // No new signal: the new flowcut goes on, busy or idle.
        assert_eq!(q.send(), e1);
        while q.inflight() > 0 {
            q.ack(BASE, false);
        }
        assert_eq!(q.send(), e1);
        assert_eq!(q.fc.path_switches(), 1);
    }

    #[test]
    fn the_hold_is_the_last_rtt_sample_capped_at_max_drain() {
        let mut q = Qp::new(&FlowcutConfig::default(), 3);
        for _ in 0..5 {
            q.send();
        }
        // A 30 us sample (> 16.64 us) at 30 us: held until 60 us.
        q.ack(30_000, false);
        assert_eq!(q.now_ns, 30_000);
        assert_eq!(q.fc.send_after(), SimTime::from_ns(60_000));
        // The packet at 60 us re-arms it for the same 30 us.
        q.send();
        assert_eq!(q.fc.send_after(), SimTime::from_ns(90_000));
        // A 250 us sample (at 250 us): the next hold is capped at max_drain = 100 us.
        q.ack(250_000, false);
        assert_eq!(
            q.fc.send_after(),
            SimTime::from_ns(90_000),
            "already marked"
        );
        q.send();
        assert_eq!(q.now_ns, 250_000);
        assert_eq!(q.fc.send_after(), SimTime::from_ns(350_000));

        // Before any RTT sample (an ECN echo without a send time first) the estimate is the
        // base RTT.
        let mut q = Qp::new(&FlowcutConfig::default(), 4);
        for _ in 0..3 {
            q.send();
        }
        q.now_ns = 100_000;
        let fb = Feedback {
            kind: FeedbackKind::Ack,
            now: SimTime::from_ns(q.now_ns),
            entropy: q.fc.entropy(),
            psn: Psn(0),
            rtt: None,
            ecn: true,
            last_hop: false,
        };
        q.fc.on_feedback(&fb, &mut q.rng);
        assert!(q.fc.congested());
        assert_eq!(q.fc.send_after(), SimTime::from_ns(100_000 + BASE));
    }

    #[test]
    fn a_signal_about_the_newest_packet_sets_no_hold_but_the_next_busy_packet_does() {
        // PSNs 0..3 sent; PSN 2 (the newest) answered first, marked (a SACK past a hole):
        // nothing newer is known to be in flight, so no hold ...
        let mut q = Qp::new(&FlowcutConfig::default(), 5);
        let e0 = q.fc.entropy();
        for _ in 0..3 {
            q.send();
        }
        q.now_ns = 9_000;
        q.feedback(FeedbackKind::Ack, e0, 2, 9_000);
        assert!(q.fc.congested());
        assert_eq!(q.fc.send_after(), SimTime::ZERO);
        // ... but PSNs 0 and 1 still are: the next packet keeps e0 and arms the hold.
        assert_eq!(q.send(), e0);
        assert_eq!(q.fc.send_after(), SimTime::from_ns(18_000));
    }

    #[test]
    fn a_timeout_moves_the_resends_at_once() {
        // 4 packets lost in a black hole on e0; the timeout at 100 us ends the flowcut: the
        // first resend leaves at once (no hold) on a new entropy, the other 3 and new data
        // follow it; one switch, and the next flowcut needs a new signal.
        let mut q = Qp::new(&FlowcutConfig::default(), 6);
        let e0 = q.fc.entropy();
        for _ in 0..4 {
            q.send();
        }
        q.timeout(100_000);
        let e1 = q.send();
        assert_ne!(e1, e0);
        assert_eq!(q.now_ns, 100_000, "no hold after a timeout");
        for _ in 0..4 {
            assert_eq!(q.send(), e1);
        }
        assert_eq!(q.now_ns, 100_000);
        assert_eq!((q.fc.path_switches(), q.fc.congested()), (1, false));
        while q.inflight() > 0 {
            q.ack(BASE, false);
        }
        assert_eq!(q.send(), e1);
        assert_eq!(q.fc.path_switches(), 1);
    }

    #[test]
    fn without_drain_only_an_idle_gap_ends_a_flowcut() {
        let cfg = FlowcutConfig {
            drain: false,
            ..FlowcutConfig::default()
        };
        let mut q = Qp::new(&cfg, 7);
        let e0 = q.fc.entropy();
        for _ in 0..4 {
            q.send();
        }
        q.ack(40_000, false);
        assert!(q.fc.congested());
        // Busy for a long while: never held, never moved.
        for _ in 0..100 {
            assert_eq!(q.send(), e0);
            q.ack(40_000, false);
            assert_eq!(q.fc.send_after(), SimTime::ZERO);
        }
        while q.inflight() > 0 {
            q.ack(BASE, false);
        }
        assert_ne!(q.send(), e0);
        assert_eq!(q.fc.path_switches(), 1);
    }

    #[test]
    fn what_signals_congestion() {
        // RTT: exactly 2 x base is not above it; 1 ns more is.
        let mut q = Qp::new(&FlowcutConfig::default(), 8);
        let e0 = q.fc.entropy();
        q.send();
        q.send();
        q.ack(CONGESTED_RTT, false);
        assert!(!q.fc.congested());
        q.ack(CONGESTED_RTT + 1, false);
        assert!(q.fc.congested());
        // ECN: a mark at base RTT signals, unless ecn_signal is off (RTT still does).
        let cfg = FlowcutConfig {
            ecn_signal: false,
            ..FlowcutConfig::default()
        };
        let mut q = Qp::new(&cfg, 8);
        q.send();
        q.send();
        q.ack(BASE, true);
        assert!(!q.fc.congested());
        q.ack(CONGESTED_RTT + 1, true);
        assert!(q.fc.congested());
        // Feedback about another entropy, NACKs and CNPs (marked, slow) do not signal; a
        // timeout does, whatever entropy it names.
        let mut q = Qp::new(&FlowcutConfig::default(), 8);
        assert_eq!(q.fc.entropy(), e0);
        q.send();
        let other = Entropy(e0.0 ^ 1);
        q.feedback(FeedbackKind::Ack, other, 0, 10 * BASE);
        q.feedback(FeedbackKind::Nack, e0, 0, 10 * BASE);
        q.feedback(FeedbackKind::Cnp, e0, 0, 10 * BASE);
        q.feedback(FeedbackKind::ProbeAck, e0, 0, 10 * BASE);
        assert!(!q.fc.congested());
        let fb = Feedback {
            kind: FeedbackKind::Timeout,
            now: SimTime::ZERO,
            entropy: other,
            psn: Psn(0),
            rtt: None,
            ecn: false,
            last_hop: false,
        };
        q.fc.on_feedback(&fb, &mut q.rng);
        assert!(q.fc.congested());
    }

    #[test]
    fn a_given_entropy_is_kept_and_new_ones_differ_and_stay_in_range() {
        let cfg = FlowcutConfig {
            num_entropies: 2,
            ..FlowcutConfig::default()
        };
        let mut rng = SimRng::new(9);
        let mut fc = Flowcut::with(&cfg, Entropy(1));
        assert_eq!(fc.entropy(), Entropy(1));
        for _ in 0..20 {
            let before = fc.entropy();
            fc.new_flowcut(&mut rng);
            assert_ne!(fc.entropy(), before);
            assert!(fc.entropy().0 < 2);
        }
        // A given entropy outside the space: the next is drawn from the whole space.
        let mut fc = Flowcut::with(&cfg, Entropy(7));
        fc.new_flowcut(&mut rng);
        assert!(fc.entropy().0 < 2);
    }

    #[test]
    fn config_ranges_name_the_parameter() {
        let d = FlowcutConfig::default();
        assert_eq!(
            (
                d.num_entropies,
                d.base_rtt_ns,
                d.congested_rtt_factor,
                d.ecn_signal,
                d.drain,
                d.max_drain_ns
            ),
            (65_536, 8_320, 2.0, true, true, 100_000)
        );
        // The parameter and message; the registry names the algorithm (below).
        let err = |c: FlowcutConfig| {
            let e = c.validate().unwrap_err();
            (e.parameter, e.message)
        };
        let cases = [
            (
                FlowcutConfig {
                    num_entropies: 1,
                    ..d
                },
                "num_entropies",
                "must be in 2..=65536, got 1",
            ),
            (
                FlowcutConfig {
                    base_rtt_ns: 0,
                    ..d
                },
                "base_rtt_ns",
                "must be in 1..=1000000000, got 0",
            ),
            (
                FlowcutConfig {
                    congested_rtt_factor: 0.5,
                    ..d
                },
                "congested_rtt_factor",
                "must be in [1, 1000], got 0.5",
            ),
            (
                FlowcutConfig {
                    congested_rtt_factor: f64::NAN,
                    ..d
                },
                "congested_rtt_factor",
                "must be in [1, 1000], got NaN",
            ),
            (
                FlowcutConfig {
                    max_drain_ns: 0,
                    ..d
                },
                "max_drain_ns",
                "must be in 1..=1000000000, got 0",
            ),
        ];
        for (c, parameter, message) in cases {
            assert_eq!(err(c), (parameter.to_owned(), message.to_owned()));
        }
        let e = crate::config::LbConfig::parse("flowcut", "max_drain_ns = 0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `flowcut`, parameter `max_drain_ns`: must be in 1..=1000000000, got 0"
        );
        assert_eq!(d.validate(), Ok(()));
        let c: FlowcutConfig = toml::from_str("drain = false\nmax_drain_ns = 5000").unwrap();
        assert_eq!(
            c,
            FlowcutConfig {
                drain: false,
                max_drain_ns: 5_000,
                ..d
            }
        );
        assert!(toml::from_str::<FlowcutConfig>("drain_ns = 5").is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]

        /// A long random life of a queue pair (sends, in-order ACKs with random RTTs and ECN
        /// marks, idle gaps, timeouts and resends) against the rules: while packets are in
        /// flight every packet, new or resent, takes the entropy of all of them; the first
        /// packet with nothing in flight after a signal takes another entropy, and without a
        /// signal it keeps it; a draining queue pair is held for the last RTT sample, capped.
        #[test]
        fn never_changes_entropy_while_packets_are_in_flight(
            num_entropies in 2u32..300,
            drain: bool,
            ecn_signal: bool,
            max_drain_ns in 1u64..200_000,
            events in proptest::collection::vec((0u8..6, BASE / 2..5 * BASE, 0u8..8), 0..3000),
            seed: u64,
        ) {
            let cfg = FlowcutConfig {
                num_entropies,
                drain,
                ecn_signal,
                max_drain_ns,
                ..FlowcutConfig::default()
            };
            let mut q = Qp::new(&cfg, seed);
            let mut marked = false;
            let mut timed_out = false;
            let mut last_rtt = None;
            let mut switches = 0;
            for (kind, rtt, mark) in events {
                let ecn = mark == 0;
                match kind {
                    0..=2 => {
                        let before = q.fc.entropy();
                        let busy = q.inflight() > 0;
                        let e = q.send();
                        let now = SimTime::from_ns(q.now_ns);
                        if timed_out {
                            // The timeout ended the flowcut: this packet moves, idle or not.
                            proptest::prop_assert_ne!(e, before);
                            (marked, timed_out) = (false, false);
                            switches += 1;
                        } else if busy {
                            proptest::prop_assert_eq!(e, before);
                            // Every packet in flight not waiting for its resend is on it.
                            proptest::prop_assert!(q
                                .inflight
                                .iter()
                                .filter(|x| !q.resend.contains(&x.0))
                                .all(|x| x.2 == e));
                            if marked && drain {
                                let est = last_rtt.unwrap_or(BASE).min(max_drain_ns);
                                proptest::prop_assert_eq!(
                                    q.fc.send_after(), now + SimDuration::from_ns(est));
                            }
                        } else if marked {
                            proptest::prop_assert_ne!(e, before);
                            marked = false;
                            switches += 1;
                        } else {
                            proptest::prop_assert_eq!(e, before);
                        }
                    }
                    3 | 4 if q.inflight() > 0 => {
                        // One ACK, or (4) all of them: an idle gap follows.
                        let n = if kind == 3 { 1 } else { q.inflight() };
                        for _ in 0..n {
                            let &(psn, _, e) = q.inflight.front().unwrap();
                            let on_path = e == q.fc.entropy();
                            // Only a packet the last timeout left for resending is elsewhere.
                            proptest::prop_assert!(on_path || q.resend.contains(&psn));
                            q.ack(rtt, ecn);
                            if on_path {
                                last_rtt = Some(rtt);
                                marked |= rtt > CONGESTED_RTT || (ecn_signal && ecn);
                            }
                        }
                    }
                    5 if q.inflight() > 0 => {
                        q.timeout(u64::from(mark) * 10_000);
                        (marked, timed_out) = (true, true);
                    }
                    _ => q.now_ns += rtt,
                }
                proptest::prop_assert_eq!(q.fc.congested(), marked);
                proptest::prop_assert_eq!(q.fc.path_switches(), switches);
                proptest::prop_assert!(u32::from(q.fc.entropy().0) < num_entropies);
            }
        }
    }
}
