//! FlowBender (Kabbani et al., CoNEXT 2014): keep a flow on one
//! entropy (one ECMP path) and re-hash it when that path is congested or broken.
//!
//! * Per RTT window the sender counts the ACKs (and NACKs) of the flow and how many of them
//!   echo an ECN mark; F = marked / counted, as in DCTCP.
//! * If F > T (`threshold`, default 0.05) for N (`consecutive_rtts`, default 1) windows in a
//!   row, the flow takes a new random entropy (FlowBender's "V changes"). A window with
//!   F ≤ T, or with nothing counted, resets the run.
//! * A retransmission timeout reroutes at once (recovery from a failed link within one RTO).
//!
//! Reconstructions and deviations, all documented choices:
//! * **RTT window** (as the ns-3 FlowBender of `snowzjx/ns3-load-balance`): a window ends when
//!   feedback arrives for a PSN at or past the high-transmit mark, i.e. the first PSN sent after
//!   the window began (DCTCP's rule), so windows are self-clocked and need no RTT estimate. The
//!   feedback that crosses the mark counts in the window it closes. This needs the PSNs of
//!   [`SendCx`] and [`Feedback`] in the same unit; they are compared modulo 2^32.
//! * **Only feedback for the current entropy is counted.** Kernel FlowBender counts every
//!   ACK; after a reroute the ACKs of packets still in flight on the old path would then be
//!   charged to the new one and could trigger a second, spurious reroute. The echoed entropy
//!   lets us avoid that. Windows still close on any feedback.
//! * The new entropy is drawn uniformly from the other `num_entropies - 1` values (default
//!   the whole 16-bit space), so a reroute always changes the hash input; the switch may
//!   still map it to the same port, as with FlowBender's V.
//! * CNPs are ignored (they would double-count marks the ACKs already echo). The 80 µs pause
//!   of the ns-3 port is not modelled.

use serde::Deserialize;

use super::selector::{Feedback, FeedbackKind, PathSelector, SendCx};
use crate::error::{check_int, check_real, ParamError};
use crate::rng::SimRng;
use crate::scheme::{HostRole, Scheme};
use crate::units::{Entropy, Psn};

/// Parameters of FlowBender.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlowBenderConfig {
    /// Size of the entropy space new entropies are drawn from.
    pub num_entropies: u32,
    /// T: the ECN fraction per RTT above which the RTT counts as congested.
    pub threshold: f64,
    /// N: congested RTTs in a row that trigger a reroute.
    pub consecutive_rtts: u32,
}

impl Default for FlowBenderConfig {
    fn default() -> Self {
        FlowBenderConfig {
            num_entropies: 1 << 16,
            threshold: 0.05,
            consecutive_rtts: 1,
        }
    }
}

impl FlowBenderConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// The first parameter out of range, with its allowed range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int("num_entropies", self.num_entropies.into(), 2, 1 << 16)?;
        check_real("threshold", self.threshold, 0.0, 1.0)?;
        check_int(
            "consecutive_rtts",
            self.consecutive_rtts.into(),
            1,
            1_000_000,
        )?;
        Ok(())
    }
}

/// Whether `a` is at or after `b` in sequence space (modulo 2^32).
fn at_or_after(a: Psn, b: Psn) -> bool {
    a.0.wrapping_sub(b.0) < 1 << 31
}

/// FlowBender for one queue pair.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowBender {
    num_entropies: u32,
    threshold: f64,
    consecutive_rtts: u32,
    entropy: Entropy,
    /// Highest PSN sent so far.
    highest_sent: Option<Psn>,
    /// The high-transmit mark: feedback for this PSN or later ends the window.
    window_end: Option<Psn>,
    /// Feedback counted in this window (for the current entropy).
    counted: u32,
    /// Of which ECN-marked.
    marked: u32,
    /// Congested windows in a row.
    congested_rtts: u32,
    reroutes: u64,
}

impl FlowBender {
    /// A flow on a random entropy.
    pub fn new(config: &FlowBenderConfig, rng: &mut SimRng) -> Self {
        let num_entropies = config.num_entropies.clamp(2, 1 << 16);
        FlowBender {
            num_entropies,
            threshold: config.threshold,
            consecutive_rtts: config.consecutive_rtts.max(1),
            entropy: Entropy(u16::try_from(rng.below(num_entropies)).unwrap_or(0)),
            highest_sent: None,
            window_end: None,
            counted: 0,
            marked: 0,
            congested_rtts: 0,
            reroutes: 0,
        }
    }

    /// The entropy the flow uses now.
    #[must_use]
    pub fn entropy(&self) -> Entropy {
        self.entropy
    }

    /// How many times the flow has been rerouted.
    #[must_use]
    pub fn reroutes(&self) -> u64 {
        self.reroutes
    }

    /// The next high-transmit mark: one past the highest PSN sent.
    fn mark(&self) -> Option<Psn> {
        self.highest_sent.map(|p| Psn(p.0.wrapping_add(1)))
    }

    fn start_window(&mut self) {
        self.counted = 0;
        self.marked = 0;
        self.window_end = self.mark();
    }

    fn close_window(&mut self, rng: &mut SimRng) {
        // F > T without dividing; an empty window is not congested.
        let congested =
            self.counted > 0 && f64::from(self.marked) > self.threshold * f64::from(self.counted);
        if congested {
            self.congested_rtts = self.congested_rtts.saturating_add(1);
            if self.congested_rtts >= self.consecutive_rtts {
                self.reroute(rng);
                return;
            }
        } else {
            self.congested_rtts = 0;
        }
        self.start_window();
    }

    fn reroute(&mut self, rng: &mut SimRng) {
        let old = u32::from(self.entropy.0);
        let mut new = rng.below(self.num_entropies - 1);
        if new >= old {
            new += 1;
        }
        self.entropy = Entropy(u16::try_from(new).unwrap_or(0));
        self.reroutes = self.reroutes.saturating_add(1);
        self.congested_rtts = 0;
        self.start_window();
    }
}

impl PathSelector for FlowBender {
    fn next_entropy(&mut self, cx: &SendCx, _rng: &mut SimRng) -> Entropy {
        match self.highest_sent {
            Some(h) if !at_or_after(cx.psn, h) => {}
            _ => self.highest_sent = Some(cx.psn),
        }
        self.entropy
    }

    fn path_switches(&self) -> u64 {
        self.reroutes
    }

    fn on_feedback(&mut self, fb: &Feedback, rng: &mut SimRng) {
        match fb.kind {
            FeedbackKind::Timeout => self.reroute(rng),
            FeedbackKind::Cnp | FeedbackKind::ProbeAck => {}
            FeedbackKind::Ack | FeedbackKind::Nack => {
                if fb.entropy == self.entropy {
                    self.counted = self.counted.saturating_add(1);
                    self.marked = self.marked.saturating_add(u32::from(fb.ecn));
                }
                match self.window_end {
                    None => self.window_end = self.mark(),
                    Some(end) if at_or_after(fb.psn, end) => self.close_window(rng),
                    Some(_) => {}
                }
            }
        }
    }
}

impl Scheme for FlowBender {
    type Config = FlowBenderConfig;
    const MOVES_ON_FEEDBACK: bool = true;

    fn validate(config: &FlowBenderConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl HostRole for FlowBender {
    type Selector = FlowBender;

    fn selector(config: &FlowBenderConfig, rng: &mut SimRng) -> FlowBender {
        FlowBender::new(config, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    fn cx(psn: u32) -> SendCx {
        SendCx {
            now: SimTime::ZERO,
            psn: Psn(psn),
            retransmission: false,
            inflight_pkts: 0,
            every_arrival_answered: false,
        }
    }

    fn fb(kind: FeedbackKind, psn: u32, entropy: Entropy, ecn: bool) -> Feedback {
        Feedback {
            kind,
            now: SimTime::ZERO,
            entropy,
            psn: Psn(psn),
            rtt: None,
            ecn,
            last_hop: false,
        }
    }

    struct Flow {
        fb: FlowBender,
        rng: SimRng,
    }

    impl Flow {
        fn new(threshold: f64, n: u32) -> Self {
            let mut rng = SimRng::new(1);
            let fb = FlowBender::new(
                &FlowBenderConfig {
                    threshold,
                    consecutive_rtts: n,
                    ..FlowBenderConfig::default()
                },
                &mut rng,
            );
            Flow { fb, rng }
        }

        /// Sends `psns` and returns the entropies used.
        fn send(&mut self, psns: std::ops::Range<u32>) -> Vec<Entropy> {
            psns.map(|p| self.fb.next_entropy(&cx(p), &mut self.rng))
                .collect()
        }

        /// ACKs `psn` on the current entropy.
        fn ack(&mut self, psn: u32, ecn: bool) {
            let e = self.fb.entropy();
            self.fb
                .on_feedback(&fb(FeedbackKind::Ack, psn, e, ecn), &mut self.rng);
        }

        /// Sends one window of `n` packets from `first` and ACKs them, `marked` of them with
        /// ECN; the window then closes on the next window's first ACK.
        fn round(&mut self, first: u32, n: u32, marked: u32) {
            self.send(first..first + n);
            for p in first..first + n {
                self.ack(p, p - first < marked);
            }
        }
    }

    #[test]
    fn reroutes_after_an_rtt_with_ecn_fraction_above_t_and_not_before() {
        let mut f = Flow::new(0.05, 1);
        let e0 = f.fb.entropy();
        // Window 1 = PSNs 0..10 (mark 10 set by the first ACK); 1 of 10 marked: F = 0.1 > 0.05.
        f.round(0, 10, 1);
        assert_eq!(f.fb.entropy(), e0, "the window has not ended yet");
        assert_eq!(f.fb.reroutes(), 0);
        f.send(10..11);
        f.ack(10, false);
        assert_ne!(f.fb.entropy(), e0, "rerouted when the RTT closed");
        assert_eq!(f.fb.reroutes(), 1);
        assert_eq!(
            f.fb.path_switches(),
            1,
            "a reroute is a path switch in the per-flow output"
        );
        assert!(f.send(11..20).iter().all(|&e| e == f.fb.entropy()));
    }

    #[test]
    fn f_equal_to_t_is_not_congested() {
        // 1 marked of 20 (the 21st ACK closes the window): F = 1/21 < 0.05, no reroute;
        // 2 of 21 > 0.05, reroute.
        let mut f = Flow::new(0.05, 1);
        let e0 = f.fb.entropy();
        f.round(0, 20, 1);
        f.round(20, 20, 0);
        assert_eq!(f.fb.entropy(), e0);
        // Exactly T: T = 0.25 and 1 of 4 (3 from the round + the closing ACK).
        let mut f = Flow::new(0.25, 1);
        let e0 = f.fb.entropy();
        f.round(0, 3, 1);
        f.round(3, 3, 0);
        assert_eq!(f.fb.entropy(), e0, "F = T = 0.25 is not above T");
        let mut f = Flow::new(0.25, 1);
        f.round(0, 3, 2);
        f.round(3, 3, 0);
        assert_eq!(f.fb.reroutes(), 1, "F = 0.5 > T");
    }

    #[test]
    fn needs_n_congested_rtts_in_a_row() {
        // T = 0.2: a window of 10 ACKs with 4 or 5 marked is congested, with 1 marked not.
        // Window k closes at the first ACK of the next round, which it also counts.
        let mut f = Flow::new(0.2, 3);
        f.round(0, 10, 5); // window 1: 6 of 11 (with ACK 10 below)
        f.round(10, 10, 5); // window 2: 4 of 10
        f.round(20, 10, 0); // window 3: 1 of 10 (ACK 30 below is marked): the run resets
        f.round(30, 10, 5);
        f.round(40, 10, 5);
        assert_eq!(f.fb.reroutes(), 0, "runs of 2 and 2 congested RTTs");
        f.round(50, 10, 5);
        f.round(60, 10, 0); // ACK 60 closes window 6, the third congested in a row
        assert_eq!(f.fb.reroutes(), 1);
    }

    #[test]
    fn a_timeout_reroutes_at_once() {
        let mut f = Flow::new(0.05, 5);
        let e0 = f.fb.entropy();
        f.send(0..3);
        f.fb.on_feedback(&fb(FeedbackKind::Timeout, 0, e0, false), &mut f.rng);
        assert_ne!(f.fb.entropy(), e0);
        assert_eq!(f.fb.reroutes(), 1);
    }

    #[test]
    fn feedback_for_the_old_entropy_is_not_charged_to_the_new_one() {
        let mut f = Flow::new(0.05, 1);
        let e0 = f.fb.entropy();
        f.send(0..10);
        f.fb.on_feedback(&fb(FeedbackKind::Timeout, 0, e0, false), &mut f.rng);
        let e1 = f.fb.entropy();
        f.send(10..20);
        // Marked ACKs of packets sent on e0 arrive; windows close at ACKs 10 and 20.
        for p in 0..10 {
            f.fb.on_feedback(&fb(FeedbackKind::Ack, p, e0, true), &mut f.rng);
        }
        for p in 10..21 {
            f.ack(p, false);
        }
        assert_eq!(f.fb.entropy(), e1);
        assert_eq!(f.fb.reroutes(), 1);
    }

    #[test]
    fn cnps_are_ignored_and_nacks_count() {
        let mut f = Flow::new(0.05, 1);
        let e0 = f.fb.entropy();
        f.send(0..4);
        for p in 0..4 {
            f.fb.on_feedback(&fb(FeedbackKind::Cnp, p, e0, true), &mut f.rng);
        }
        f.send(4..8);
        for p in 4..8 {
            f.fb.on_feedback(&fb(FeedbackKind::Cnp, p, e0, true), &mut f.rng);
        }
        assert_eq!(f.fb.reroutes(), 0);
        f.fb.on_feedback(&fb(FeedbackKind::Nack, 0, e0, true), &mut f.rng); // window to 8
        f.fb.on_feedback(&fb(FeedbackKind::Nack, 8, e0, false), &mut f.rng); // closes: 1/2
        assert_eq!(f.fb.reroutes(), 1);
    }

    #[test]
    fn windows_work_across_psn_wraparound() {
        let mut f = Flow::new(0.05, 1);
        let start = u32::MAX - 4;
        f.send(start..u32::MAX);
        let _ = f.fb.next_entropy(&cx(u32::MAX), &mut f.rng);
        for p in [start, start + 1] {
            f.ack(p, true);
        }
        assert_eq!(f.fb.window_end, Some(Psn(0)), "mark wrapped past 2^32");
        f.send(0..2);
        f.ack(u32::MAX, false);
        assert_eq!(f.fb.reroutes(), 0);
        f.ack(0, false);
        assert_eq!(f.fb.reroutes(), 1, "2 of 4 marked");
    }

    #[test]
    fn retransmissions_do_not_move_the_mark_back() {
        let mut f = Flow::new(0.05, 1);
        f.send(0..10);
        f.send(2..3); // a retransmission of PSN 2
        f.ack(0, false);
        assert_eq!(f.fb.window_end, Some(Psn(10)));
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]

        /// Over random event streams the entropy stays in range, every send uses the current
        /// entropy, and every timeout changes it.
        #[test]
        fn random_event_streams(
            num_entropies in 2u32..300,
            events in proptest::collection::vec((0u8..4, 0u32..64, proptest::bool::ANY), 0..400),
            seed: u64,
        ) {
            let mut rng = SimRng::new(seed);
            let cfg = FlowBenderConfig { num_entropies, ..FlowBenderConfig::default() };
            let mut f = FlowBender::new(&cfg, &mut rng);
            let mut timeouts = 0u64;
            for (kind, psn, ecn) in events {
                let e = f.entropy();
                match kind {
                    0 => {
                        let sent = f.next_entropy(&cx(psn), &mut rng);
                        proptest::prop_assert_eq!(sent, e);
                    }
                    1 => f.on_feedback(&fb(FeedbackKind::Ack, psn, e, ecn), &mut rng),
                    2 => f.on_feedback(&fb(FeedbackKind::Nack, psn, e, ecn), &mut rng),
                    _ => {
                        timeouts += 1;
                        f.on_feedback(&fb(FeedbackKind::Timeout, psn, e, ecn), &mut rng);
                        proptest::prop_assert_ne!(f.entropy(), e);
                    }
                }
                proptest::prop_assert!(u32::from(f.entropy().0) < num_entropies);
            }
            proptest::prop_assert!(f.reroutes() >= timeouts);
        }
    }

    #[test]
    fn new_entropies_are_different_and_in_range() {
        let mut rng = SimRng::new(9);
        let mut fb1 = FlowBender::new(
            &FlowBenderConfig {
                num_entropies: 2,
                ..FlowBenderConfig::default()
            },
            &mut rng,
        );
        for _ in 0..20 {
            let before = fb1.entropy();
            fb1.reroute(&mut rng);
            assert_ne!(fb1.entropy(), before);
            assert!(fb1.entropy().0 < 2);
        }
    }
}
