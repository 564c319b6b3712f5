//! PLB, Protective Load Balancing (Qureshi et al., "PLB: Congestion Signals are Simple and
//! Effective for Network Load Balancing", SIGCOMM 2022, the design section), with the rules
//! and defaults of its Linux implementation (`net/ipv4/tcp_plb.c` and its call sites in
//! `tcp_dctcp.c`, Linux 6.2): keep a flow on one entropy (one ECMP path) and move it to a new
//! random one after sustained congestion, preferably when it has nothing in flight.
//!
//! * Per round trip the sender counts the ACKs (and NACKs) of the flow and how many echo an
//!   ECN mark; the round is congested when marked / counted ≥ `cong_threshold` (Linux
//!   `tcp_plb_cong_thresh`, default 128 / 256 = 0.5). A congested round adds one to the run of
//!   consecutive congested rounds (capped at `rehash_rounds`), an uncongested one resets it to
//!   0, and a round with nothing counted leaves it as it is (Linux updates PLB only when the
//!   round delivered something).
//! * Repath (a new random entropy) when either (a) the flow has no packet in flight and the
//!   run is at least `idle_rehash_rounds` (Linux `tcp_plb_idle_rehash_rounds`, default 3; 0
//!   turns the idle rule off), or (b) the run is at least `rehash_rounds` (Linux
//!   `tcp_plb_rehash_rounds`, default 12) whatever is in flight. A repath resets the run.
//! * A retransmission timeout repaths at once and suspends the congestion-triggered repaths of
//!   (a) and (b) for a random time in [S, 2S), S = `suspend_rto_ns` (Linux
//!   `tcp_plb_suspend_rto_sec`, default 60 s); it also resets the run. Timeouts during the
//!   suspension still repath (and start a new suspension). A repath refused by the suspension
//!   leaves the run (capped) as it is, so the first check after the suspension repaths.
//!
//! Reconstructions and deviations, all documented choices:
//! * **Rounds** are FlowBender's self-clocked windows ([`super::flowbender`], DCTCP's rule, as
//!   Linux's DCTCP uses for PLB): a round ends when feedback arrives for a PSN at or past the
//!   first PSN sent after the round began, and that feedback counts in the round it closes.
//!   PSNs are compared modulo 2^32. A repath starts a new round (its partial counts were about
//!   the old path).
//! * **When the rules are checked.** Linux checks both rules when a round ends and when the
//!   sender starts transmitting with nothing in flight. Here rule (b) is checked when a round
//!   closes, so the next data packet already leaves on the new path, and both rules are
//!   checked at every data packet sent with [`SendCx::inflight_pkts`] = 0 (the NIC tells the
//!   selector what is in flight only then). A round that closes with nothing in flight
//!   therefore repaths at the next data packet rather than at its ACK: the same packets take
//!   the new path.
//! * **Only feedback for the current entropy is counted** (as FlowBender here): Linux counts
//!   every delivered packet; after a repath the ACKs of packets still in flight on the old
//!   path would be charged to the new one. The echoed entropy lets us avoid that. Rounds still
//!   close on any ACK or NACK. A NACK counts as a delivery (it answers a packet that arrived,
//!   as Linux counts SACKed packets as delivered).
//! * **Threshold.** Linux compares `(marked << 8) / counted` with an integer threshold out of
//!   256; marked ≥ `cong_threshold` × counted is the same test for every threshold Linux can
//!   express (a multiple of 1/256) and extends it to any real threshold.
//! * **Ranges** are Linux's sysctl ranges (both round counts at most 31: a 5-bit counter;
//!   the threshold in [0, 256] / 256), except that `rehash_rounds` must be at least 1 (Linux
//!   accepts 0, which repaths at every round).
//! * Every timeout repaths, whatever entropy it names (Linux rehashes at every RTO).
//! * The new entropy is drawn uniformly from the other `num_entropies - 1` values (default the
//!   whole 16-bit space, Linux's `sk_rethink_txhash` draws a fresh random hash), so a repath
//!   always changes the hash input; the switches may still map it to the same port.
//! * The suspension is S + (a uniform 64-bit draw mod S) ns, Linux's
//!   `S + get_random_u32_below(S)` in nanoseconds instead of jiffies (bias below 2^-24 for
//!   S ≤ 10^12 ns).
//! * CNPs are ignored (they would double-count marks the ACKs already echo); probe answers
//!   too (PLB sends no probes).

use serde::Deserialize;

use super::selector::{Feedback, FeedbackKind, PathSelector, SendCx};
use crate::error::{check_int, check_real, ParamError};
use crate::rng::SimRng;
use crate::scheme::{HostRole, Scheme};
use crate::time::{SimDuration, SimTime};
use crate::units::{Entropy, Psn};

/// Largest round count Linux accepts (`tcp_plb_max_rounds`: the counter has 5 bits).
const MAX_ROUNDS: u64 = 31;

/// Parameters of PLB; defaults are Linux's (`tcp_sk_init`, Linux 6.2).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlbConfig {
    /// Size of the entropy space new entropies are drawn from.
    pub num_entropies: u32,
    /// ECN-marked fraction of a round at or above which the round is congested (Linux
    /// `tcp_plb_cong_thresh` / 256).
    pub cong_threshold: f64,
    /// Consecutive congested rounds after which a flow with nothing in flight repaths (Linux
    /// `tcp_plb_idle_rehash_rounds`; 0: never for this reason).
    pub idle_rehash_rounds: u32,
    /// Consecutive congested rounds after which the flow repaths whatever is in flight (Linux
    /// `tcp_plb_rehash_rounds`).
    pub rehash_rounds: u32,
    /// After a retransmission timeout, congestion-triggered repaths are suspended for a random
    /// time in [this, 2 × this), ns (Linux `tcp_plb_suspend_rto_sec`; 0: no suspension).
    pub suspend_rto_ns: u64,
}

impl Default for PlbConfig {
    fn default() -> Self {
        PlbConfig {
            num_entropies: 1 << 16,
            // tcp_plb_cong_thresh = (1 << TCP_PLB_SCALE) / 2 = 128 of 256
            cong_threshold: 0.5,
            // tcp_plb_idle_rehash_rounds = 3
            idle_rehash_rounds: 3,
            // tcp_plb_rehash_rounds = 12
            rehash_rounds: 12,
            // tcp_plb_suspend_rto_sec = 60
            suspend_rto_ns: 60_000_000_000,
        }
    }
}

impl PlbConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// The first parameter out of range, with its allowed range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int("num_entropies", self.num_entropies.into(), 2, 1 << 16)?;
        check_real("cong_threshold", self.cong_threshold, 0.0, 1.0)?;
        check_int(
            "idle_rehash_rounds",
            self.idle_rehash_rounds.into(),
            0,
            MAX_ROUNDS,
        )?;
        check_int("rehash_rounds", self.rehash_rounds.into(), 1, MAX_ROUNDS)?;
        check_int("suspend_rto_ns", self.suspend_rto_ns, 0, 1_000_000_000_000)?;
        Ok(())
    }
}

/// Whether `a` is at or after `b` in sequence space (modulo 2^32).
fn at_or_after(a: Psn, b: Psn) -> bool {
    a.0.wrapping_sub(b.0) < 1 << 31
}

/// PLB for one queue pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Plb {
    num_entropies: u32,
    cong_threshold: f64,
    idle_rehash_rounds: u32,
    rehash_rounds: u32,
    suspend_rto: SimDuration,
    entropy: Entropy,
    /// Highest PSN sent so far.
    highest_sent: Option<Psn>,
    /// Feedback for this PSN or later ends the round.
    round_end: Option<Psn>,
    /// Feedback counted in this round (for the current entropy).
    delivered: u32,
    /// Of which ECN-marked.
    delivered_ce: u32,
    /// Congested rounds in a row, at most `rehash_rounds`.
    consec_cong_rounds: u32,
    /// Congestion-triggered repaths are refused before this time (after a timeout).
    suspended_until: SimTime,
    repaths: u64,
}

impl Plb {
    /// A flow on a random entropy.
    pub fn new(config: &PlbConfig, rng: &mut SimRng) -> Self {
        let num_entropies = config.num_entropies.clamp(2, 1 << 16);
        Plb {
            num_entropies,
            cong_threshold: config.cong_threshold,
            idle_rehash_rounds: config.idle_rehash_rounds,
            rehash_rounds: config.rehash_rounds.max(1),
            suspend_rto: SimDuration::from_ns(config.suspend_rto_ns),
            entropy: Entropy(u16::try_from(rng.below(num_entropies)).unwrap_or(0)),
            highest_sent: None,
            round_end: None,
            delivered: 0,
            delivered_ce: 0,
            consec_cong_rounds: 0,
            suspended_until: SimTime::ZERO,
            repaths: 0,
        }
    }

    /// The entropy the flow uses now.
    #[must_use]
    pub fn entropy(&self) -> Entropy {
        self.entropy
    }

    /// How many times the flow has been repathed (congestion and timeouts).
    #[must_use]
    pub fn repaths(&self) -> u64 {
        self.repaths
    }

    /// Congested rounds in a row so far.
    #[must_use]
    pub fn consecutive_congested_rounds(&self) -> u32 {
        self.consec_cong_rounds
    }

    /// The end of the suspension after the last timeout ([`SimTime::ZERO`] if none).
    #[must_use]
    pub fn suspended_until(&self) -> SimTime {
        self.suspended_until
    }

    /// The first PSN after the highest sent.
    fn mark(&self) -> Option<Psn> {
        self.highest_sent.map(|p| Psn(p.0.wrapping_add(1)))
    }

    fn start_round(&mut self) {
        self.delivered = 0;
        self.delivered_ce = 0;
        self.round_end = self.mark();
    }

    /// Linux's `tcp_plb_update_state` then `tcp_plb_check_rehash` (rule (b) only: the NIC says
    /// what is in flight only when it sends).
    fn close_round(&mut self, now: SimTime, rng: &mut SimRng) {
        if self.delivered > 0 {
            let congested =
                f64::from(self.delivered_ce) >= self.cong_threshold * f64::from(self.delivered);
            if congested {
                self.consec_cong_rounds = self
                    .consec_cong_rounds
                    .saturating_add(1)
                    .min(self.rehash_rounds);
            } else {
                self.consec_cong_rounds = 0;
            }
            self.check_rehash(now, false, rng);
        }
        self.start_round();
    }

    /// Repaths if rule (b) holds, or rule (a) with `idle` (nothing in flight), unless
    /// suspended by a recent timeout.
    fn check_rehash(&mut self, now: SimTime, idle: bool, rng: &mut SimRng) {
        let forced = self.consec_cong_rounds >= self.rehash_rounds;
        let idle_rehash = idle
            && self.idle_rehash_rounds > 0
            && self.consec_cong_rounds >= self.idle_rehash_rounds;
        if (forced || idle_rehash) && now >= self.suspended_until {
            self.repath(rng);
        }
    }

    fn repath(&mut self, rng: &mut SimRng) {
        let old = u32::from(self.entropy.0);
        let new = if old < self.num_entropies {
            let mut new = rng.below(self.num_entropies - 1);
            if new >= old {
                new += 1;
            }
            new
        } else {
            rng.below(self.num_entropies)
        };
        self.entropy = Entropy(u16::try_from(new).unwrap_or(0));
        self.repaths = self.repaths.saturating_add(1);
        self.consec_cong_rounds = 0;
        self.start_round();
    }

    /// Linux's RTO path: `sk_rethink_txhash` then `tcp_plb_update_state_upon_rto`.
    fn on_timeout(&mut self, now: SimTime, rng: &mut SimRng) {
        self.repath(rng);
        let s = self.suspend_rto.as_ns();
        if s > 0 {
            let extra = rng.next_u64().checked_rem(s).unwrap_or(0);
            self.suspended_until = now + SimDuration::from_ns(s.saturating_add(extra));
        }
    }
}

impl PathSelector for Plb {
    fn next_entropy(&mut self, cx: &SendCx, rng: &mut SimRng) -> Entropy {
        if cx.inflight_pkts == 0 {
            self.check_rehash(cx.now, true, rng);
        }
        match self.highest_sent {
            Some(h) if !at_or_after(cx.psn, h) => {}
            _ => self.highest_sent = Some(cx.psn),
        }
        self.entropy
    }

    fn on_feedback(&mut self, fb: &Feedback, rng: &mut SimRng) {
        match fb.kind {
            FeedbackKind::Timeout => self.on_timeout(fb.now, rng),
            FeedbackKind::Cnp | FeedbackKind::ProbeAck => {}
            FeedbackKind::Ack | FeedbackKind::Nack => {
                if fb.entropy == self.entropy {
                    self.delivered = self.delivered.saturating_add(1);
                    self.delivered_ce = self.delivered_ce.saturating_add(u32::from(fb.ecn));
                }
                match self.round_end {
                    None => self.round_end = self.mark(),
                    Some(end) if at_or_after(fb.psn, end) => self.close_round(fb.now, rng),
                    Some(_) => {}
                }
            }
        }
    }

    fn path_switches(&self) -> u64 {
        self.repaths
    }
}

impl Scheme for Plb {
    type Config = PlbConfig;
    const MOVES_ON_FEEDBACK: bool = true;

    fn validate(config: &PlbConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl HostRole for Plb {
    type Selector = Plb;

    fn selector(config: &PlbConfig, rng: &mut SimRng) -> Plb {
        Plb::new(config, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packets in flight of the test flow (its window): a round is W ACKs.
    const W: u32 = 100;
    /// Linux's default suspension after a timeout, 60 s.
    const SUSPEND_NS: u64 = 60_000_000_000;

    /// A queue pair as the NIC drives it: data packets stamped with the selector's entropy,
    /// answered in order by ACKs that echo the packet's entropy, PSN, RTT and ECN mark.
    struct Flow {
        plb: Plb,
        rng: SimRng,
        now_ns: u64,
        /// The entropy each PSN was sent on (index = PSN).
        sent: Vec<Entropy>,
        /// PSNs below this are answered.
        acked: u32,
    }

    impl Flow {
        fn new(cfg: &PlbConfig, seed: u64) -> Self {
            let mut rng = SimRng::new(seed);
            let plb = Plb::new(cfg, &mut rng);
            Flow {
                plb,
                rng,
                now_ns: 0,
                sent: Vec::new(),
                acked: 0,
            }
        }

        fn inflight(&self) -> u32 {
            u32::try_from(self.sent.len()).unwrap() - self.acked
        }

        /// Sends the next new packet; the NIC reports what is in flight before it.
        fn send(&mut self) -> Entropy {
            let cx = SendCx {
                now: SimTime::from_ns(self.now_ns),
                psn: Psn(u32::try_from(self.sent.len()).unwrap()),
                retransmission: false,
                inflight_pkts: self.inflight(),
                every_arrival_answered: true,
            };
            let e = self.plb.next_entropy(&cx, &mut self.rng);
            assert_eq!(e, self.plb.entropy());
            self.sent.push(e);
            e
        }

        /// Answers the oldest packet in flight, 100 ns after the previous event.
        fn ack(&mut self, ecn: bool) {
            self.now_ns += 100;
            let psn = self.acked;
            self.acked += 1;
            let fb = Feedback {
                kind: FeedbackKind::Ack,
                now: SimTime::from_ns(self.now_ns),
                entropy: self.sent[usize::try_from(psn).unwrap()],
                psn: Psn(psn),
                rtt: Some(SimDuration::from_ns(8_320)),
                ecn,
                last_hop: false,
            };
            self.plb.on_feedback(&fb, &mut self.rng);
        }

        fn timeout(&mut self) {
            let fb = Feedback {
                kind: FeedbackKind::Timeout,
                now: SimTime::from_ns(self.now_ns),
                entropy: self.sent[usize::try_from(self.acked).unwrap()],
                psn: Psn(self.acked),
                rtt: None,
                ecn: false,
                last_hop: false,
            };
            self.plb.on_feedback(&fb, &mut self.rng);
        }

        /// Sends a window of W packets, then one round of W + 1 unmarked ACKs, each answered
        /// by a new packet (ACK clocking). The round closes on ACK W, after which the round
        /// ends are PSNs 2W, 3W, ...: every later round is exactly W ACKs.
        fn start(cfg: &PlbConfig, seed: u64) -> Self {
            let mut f = Flow::new(cfg, seed);
            for _ in 0..W {
                f.send();
            }
            for _ in 0..=W {
                f.ack(false);
                f.send();
            }
            assert_eq!(f.plb.consecutive_congested_rounds(), 0);
            f
        }

        /// One round: W ACKs, the first `marked` of them ECN-marked, each answered by a new
        /// packet (W - 1 in flight at each send); the last ACK closes the round.
        fn round(&mut self, marked: u32) {
            for i in 0..W {
                self.ack(i < marked);
                self.send();
            }
        }

        /// One round whose last ACK is not answered (the source has no more data), then the
        /// W - 1 packets left in flight are answered, with ECN marks if `drain_ecn`. When the
        /// rounds end on the last ACK of a batch (as after [`Flow::start`]), these do not end
        /// the next round.
        fn last_round_then_idle(&mut self, marked: u32, drain_ecn: bool) {
            for i in 0..W {
                self.ack(i < marked);
                if i + 1 < W {
                    self.send();
                }
            }
            while self.inflight() > 0 {
                self.ack(drain_ecn);
            }
        }
    }

    #[test]
    fn defaults_are_linux_sysctls() {
        let d = PlbConfig::default();
        assert_eq!(
            (d.cong_threshold, d.idle_rehash_rounds, d.rehash_rounds),
            (128.0 / 256.0, 3, 12),
            "tcp_plb_cong_thresh, tcp_plb_idle_rehash_rounds, tcp_plb_rehash_rounds"
        );
        assert_eq!(d.suspend_rto_ns, SUSPEND_NS, "tcp_plb_suspend_rto_sec = 60");
        assert_eq!(d.num_entropies, 65_536);
        assert_eq!(d.validate(), Ok(()));
    }

    #[test]
    fn a_round_is_congested_from_half_of_its_acks_marked() {
        // 49 of 100 marked: (49 << 8) / 100 = 125 < 128; 50 of 100: 128 >= 128.
        let mut f = Flow::start(&PlbConfig::default(), 1);
        f.round(49);
        assert_eq!(f.plb.consecutive_congested_rounds(), 0);
        f.round(50);
        assert_eq!(f.plb.consecutive_congested_rounds(), 1);
        f.round(100);
        assert_eq!(f.plb.consecutive_congested_rounds(), 2);
        f.round(49);
        assert_eq!(
            f.plb.consecutive_congested_rounds(),
            0,
            "an uncongested round resets the run"
        );
        assert_eq!(f.plb.repaths(), 0);
    }

    #[test]
    fn three_congested_rounds_repath_only_when_idle() {
        // Two congested rounds, then idle: no repath (2 < idle_rehash_rounds = 3).
        let mut f = Flow::start(&PlbConfig::default(), 2);
        let e0 = f.plb.entropy();
        f.round(50);
        f.last_round_then_idle(50, false);
        assert_eq!(f.plb.consecutive_congested_rounds(), 2);
        assert_eq!(f.send(), e0, "2 congested rounds: no repath");
        assert_eq!(f.plb.repaths(), 0);

        // Three, busy (W - 1 in flight at every send): no repath.
        let mut f = Flow::start(&PlbConfig::default(), 3);
        let e0 = f.plb.entropy();
        for _ in 0..3 {
            f.round(50);
        }
        assert_eq!(f.plb.consecutive_congested_rounds(), 3);
        assert_eq!(f.send(), e0, "3 congested rounds, packets in flight");
        assert_eq!(f.plb.repaths(), 0);

        // The same three, then idle: the first packet sent with nothing in flight leaves on a
        // new entropy.
        let mut f = Flow::start(&PlbConfig::default(), 4);
        let e0 = f.plb.entropy();
        f.round(50);
        f.round(50);
        f.last_round_then_idle(50, false);
        assert_eq!(f.plb.consecutive_congested_rounds(), 3);
        let e1 = f.send();
        assert_ne!(e1, e0, "idle after 3 congested rounds: repath");
        assert_eq!((f.plb.repaths(), f.plb.path_switches()), (1, 1));
        assert_eq!(
            f.plb.consecutive_congested_rounds(),
            0,
            "a repath resets the run"
        );
        assert_eq!(f.send(), e1);

        // idle_rehash_rounds = 0 turns the idle rule off.
        let cfg = PlbConfig {
            idle_rehash_rounds: 0,
            ..PlbConfig::default()
        };
        let mut f = Flow::start(&cfg, 5);
        let e0 = f.plb.entropy();
        f.round(50);
        f.round(50);
        f.last_round_then_idle(50, false);
        assert_eq!(f.send(), e0);
        assert_eq!(f.plb.repaths(), 0);
    }

    #[test]
    fn twelve_congested_rounds_repath_while_busy() {
        let mut f = Flow::start(&PlbConfig::default(), 4);
        let e0 = f.plb.entropy();
        // Eleven congested rounds, an uncongested one, eleven more: never 12 in a row.
        for _ in 0..11 {
            f.round(100);
        }
        f.round(49);
        for _ in 0..11 {
            f.round(100);
        }
        assert_eq!(f.plb.consecutive_congested_rounds(), 11);
        assert_eq!(f.plb.entropy(), e0);
        // The 12th closes on its last ACK; the packet sent right after is on the new path.
        for _ in 0..W - 1 {
            f.ack(true);
            assert_eq!(f.send(), e0);
        }
        f.ack(true);
        let e1 = f.send();
        assert_ne!(e1, e0);
        assert_eq!(f.plb.repaths(), 1);
        // The next round holds the W - 1 ACKs of packets sent on e0 (all marked here) and one
        // for e1, unmarked: only that one counts, so the round is not congested.
        f.round(W - 1);
        assert_eq!(f.plb.consecutive_congested_rounds(), 0);
        assert_eq!(f.plb.entropy(), e1);
    }

    #[test]
    fn the_run_is_capped_at_rehash_rounds_and_an_empty_round_changes_nothing() {
        // Timeout first (suspends congestion repaths for >= 60 s); then 20 congested rounds in
        // 0.3 ms: the run stops at rehash_rounds = 12.
        let mut f = Flow::start(&PlbConfig::default(), 5);
        f.timeout();
        for _ in 0..20 {
            f.round(100);
        }
        assert_eq!(f.plb.consecutive_congested_rounds(), 12);
        assert_eq!(f.plb.repaths(), 1, "the timeout's only");
        // Feedback for another entropy up to one past the highest PSN sent: it closes the
        // open round (whose ACKs so far were marked) and then a round with nothing counted,
        // which keeps the run (FlowBender's empty window would reset it).
        let other = Entropy(f.plb.entropy().0 ^ 1);
        let end = u32::try_from(f.sent.len()).unwrap();
        assert!(f.plb.round_end < Some(Psn(end)));
        for psn in f.acked..=end {
            let fb = Feedback {
                kind: FeedbackKind::Ack,
                now: SimTime::from_ns(f.now_ns),
                entropy: other,
                psn: Psn(psn),
                rtt: None,
                ecn: false,
                last_hop: false,
            };
            f.plb.on_feedback(&fb, &mut f.rng);
        }
        assert_eq!((f.plb.round_end, f.plb.delivered), (Some(Psn(end)), 0));
        assert_eq!(f.plb.consecutive_congested_rounds(), 12);
    }

    #[test]
    fn a_timeout_repaths_and_suspends_congestion_repaths_for_60_to_120_s() {
        let mut f = Flow::start(&PlbConfig::default(), 6);
        let e0 = f.plb.entropy();
        let t = f.now_ns;
        f.timeout();
        let e1 = f.plb.entropy();
        assert_ne!(e1, e0);
        assert_eq!(f.plb.path_switches(), 1);
        let until = f.plb.suspended_until().as_ns();
        assert!(
            (t + SUSPEND_NS..t + 2 * SUSPEND_NS).contains(&until),
            "{until}"
        );
        // Twelve congested rounds (and an idle packet) during the suspension: no repath.
        // (The timeout moved the round ends to the first ACK of each batch, so the drained
        // ACKs close a round and share the next one: all marked.)
        for _ in 0..12 {
            f.round(100);
        }
        f.last_round_then_idle(100, true);
        assert_eq!(f.plb.consecutive_congested_rounds(), 12, "kept, capped");
        assert_eq!(f.send(), e1);
        // One packet in flight now, so each ACK closes a round. At 1 ns before the end the
        // repath is still refused, at the ACK (and the idle packet) as before ...
        f.now_ns = until - 101;
        f.ack(true);
        assert_eq!(f.now_ns, until - 1);
        assert_eq!((f.send(), f.plb.repaths()), (e1, 1));
        // ... and the first round that closes after it repaths (the run was kept).
        f.ack(true);
        assert!(f.now_ns >= until);
        assert_ne!(f.plb.entropy(), e1);
        assert_eq!(f.plb.repaths(), 2);

        // A timeout during a suspension still repaths, and suspends anew from its own time
        // (a new draw replaces the old end, as Linux overwrites pause_until).
        let mut f = Flow::start(&PlbConfig::default(), 7);
        f.timeout();
        let e = f.plb.entropy();
        f.now_ns += 1_000_000;
        let t2 = f.now_ns;
        f.timeout();
        assert_ne!(f.plb.entropy(), e);
        assert_eq!(f.plb.repaths(), 2);
        let until = f.plb.suspended_until().as_ns();
        assert!(
            (t2 + SUSPEND_NS..t2 + 2 * SUSPEND_NS).contains(&until),
            "{until}"
        );
    }

    #[test]
    fn suspensions_are_uniform_in_s_to_2s() {
        // 300 draws in [60, 120) s: all in range, and (each with probability 1 - (55/60)^300,
        // about 1 - 5e-12) one within 5 s of each end.
        let lengths: Vec<u64> = (0..300)
            .map(|seed| {
                let mut f = Flow::start(&PlbConfig::default(), seed);
                let t = f.now_ns;
                f.timeout();
                f.plb.suspended_until().as_ns() - t
            })
            .collect();
        assert!(lengths
            .iter()
            .all(|l| (SUSPEND_NS..2 * SUSPEND_NS).contains(l)));
        assert!(lengths.iter().any(|&l| l < 65_000_000_000));
        assert!(lengths.iter().any(|&l| l >= 115_000_000_000));
        // suspend_rto_ns = 0: no suspension, congestion repaths go on.
        let cfg = PlbConfig {
            suspend_rto_ns: 0,
            ..PlbConfig::default()
        };
        let mut f = Flow::start(&cfg, 8);
        f.timeout();
        // The rounds now close on the first ACK of each batch: the 12th closes in the 13th.
        for _ in 0..12 {
            f.round(100);
        }
        assert_eq!(f.plb.consecutive_congested_rounds(), 11);
        f.round(100);
        assert_eq!(f.plb.repaths(), 2);
    }

    fn feed(f: &mut Flow, kind: FeedbackKind, psn: u32, ecn: bool) {
        let fb = Feedback {
            kind,
            now: SimTime::from_ns(f.now_ns),
            entropy: f.plb.entropy(),
            psn: Psn(psn),
            rtt: None,
            ecn,
            last_hop: false,
        };
        f.plb.on_feedback(&fb, &mut f.rng);
    }

    #[test]
    fn cnps_are_ignored_and_nacks_count() {
        let mut f = Flow::start(&PlbConfig::default(), 9);
        // The open round ends at PSN 2W; CNPs never end it nor count.
        for p in 0..3 * W {
            feed(&mut f, FeedbackKind::Cnp, p, true);
        }
        assert_eq!(f.plb.consecutive_congested_rounds(), 0);
        // A marked NACK closes it (1 of 1 marked).
        feed(&mut f, FeedbackKind::Nack, 2 * W, true);
        assert_eq!(f.plb.consecutive_congested_rounds(), 1);
    }

    #[test]
    fn rounds_work_across_psn_wraparound() {
        let mut rng = SimRng::new(10);
        let mut p = Plb::new(&PlbConfig::default(), &mut rng);
        let e = p.entropy();
        let cx = |psn: u32| SendCx {
            now: SimTime::ZERO,
            psn: Psn(psn),
            retransmission: false,
            inflight_pkts: 1,
            every_arrival_answered: true,
        };
        let ack = |psn: u32, ecn: bool| Feedback {
            kind: FeedbackKind::Ack,
            now: SimTime::ZERO,
            entropy: e,
            psn: Psn(psn),
            rtt: None,
            ecn,
            last_hop: false,
        };
        for psn in [u32::MAX - 1, u32::MAX] {
            p.next_entropy(&cx(psn), &mut rng);
        }
        p.on_feedback(&ack(u32::MAX - 1, true), &mut rng);
        assert_eq!(p.round_end, Some(Psn(0)), "round end wrapped past 2^32");
        p.next_entropy(&cx(0), &mut rng);
        p.on_feedback(&ack(u32::MAX, false), &mut rng);
        assert_eq!(p.consecutive_congested_rounds(), 0, "not closed yet");
        p.on_feedback(&ack(0, false), &mut rng);
        assert_eq!(p.consecutive_congested_rounds(), 0, "1 of 3 marked");
        p.next_entropy(&cx(1), &mut rng);
        p.on_feedback(&ack(1, true), &mut rng);
        assert_eq!(p.consecutive_congested_rounds(), 1, "1 of 1 marked");
    }

    #[test]
    fn same_seed_same_decisions() {
        let cfg = PlbConfig {
            suspend_rto_ns: 1_000,
            ..PlbConfig::default()
        };
        let run = |seed: u64| {
            let mut f = Flow::start(&cfg, seed);
            for i in 0..60 {
                f.round(if i % 13 == 12 { 0 } else { 60 });
                if i == 20 || i == 40 {
                    f.timeout();
                }
            }
            (f.sent, f.plb.repaths())
        };
        let (a, b, c) = (run(11), run(11), run(12));
        assert_eq!(a, b);
        assert_ne!(a.0, c.0);
        assert!(a.1 >= 3, "2 timeouts and congestion repaths: {}", a.1);
    }

    #[test]
    fn config_ranges_name_the_parameter() {
        // The parameter and message; the registry names the algorithm (below).
        let err = |c: PlbConfig| {
            let e = c.validate().unwrap_err();
            (e.parameter, e.message)
        };
        let d = PlbConfig::default();
        let cases = [
            (
                PlbConfig {
                    num_entropies: 1,
                    ..d
                },
                "num_entropies",
                "must be in 2..=65536, got 1",
            ),
            (
                PlbConfig {
                    cong_threshold: 1.5,
                    ..d
                },
                "cong_threshold",
                "must be in [0, 1], got 1.5",
            ),
            (
                PlbConfig {
                    cong_threshold: f64::NAN,
                    ..d
                },
                "cong_threshold",
                "must be in [0, 1], got NaN",
            ),
            (
                PlbConfig {
                    idle_rehash_rounds: 32,
                    ..d
                },
                "idle_rehash_rounds",
                "must be in 0..=31, got 32",
            ),
            (
                PlbConfig {
                    rehash_rounds: 0,
                    ..d
                },
                "rehash_rounds",
                "must be in 1..=31, got 0",
            ),
            (
                PlbConfig {
                    suspend_rto_ns: 2_000_000_000_000,
                    ..d
                },
                "suspend_rto_ns",
                "must be in 0..=1000000000000, got 2000000000000",
            ),
        ];
        for (c, parameter, message) in cases {
            assert_eq!(err(c), (parameter.to_owned(), message.to_owned()));
        }
        let e = crate::config::LbConfig::parse("plb", "rehash_rounds = 0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `plb`, parameter `rehash_rounds`: must be in 1..=31, got 0"
        );
        // Edges accepted; unknown keys refused, missing keys defaulted.
        let edges = PlbConfig {
            num_entropies: 2,
            cong_threshold: 0.0,
            idle_rehash_rounds: 0,
            rehash_rounds: 31,
            suspend_rto_ns: 0,
        };
        assert_eq!(edges.validate(), Ok(()));
        let c: PlbConfig = toml::from_str("rehash_rounds = 5").unwrap();
        assert_eq!(
            c,
            PlbConfig {
                rehash_rounds: 5,
                ..d
            }
        );
        assert!(toml::from_str::<PlbConfig>("rehash = 5").is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]

        /// Over random event streams the entropy stays in range, every send uses the current
        /// entropy, every timeout changes it, and the run never exceeds rehash_rounds.
        #[test]
        fn random_event_streams(
            num_entropies in 2u32..300,
            rehash_rounds in 1u32..32,
            events in proptest::collection::vec(
                (0u8..5, 0u32..64, proptest::bool::ANY, 0u32..3), 0..400),
            seed: u64,
        ) {
            let mut rng = SimRng::new(seed);
            let cfg = PlbConfig {
                num_entropies,
                rehash_rounds,
                suspend_rto_ns: 1_000,
                ..PlbConfig::default()
            };
            let mut p = Plb::new(&cfg, &mut rng);
            let mut timeouts = 0u64;
            let mut now = 0;
            for (kind, psn, ecn, inflight) in events {
                now += 100;
                let e = p.entropy();
                let fb = |kind| Feedback {
                    kind,
                    now: SimTime::from_ns(now),
                    entropy: e,
                    psn: Psn(psn),
                    rtt: None,
                    ecn,
                    last_hop: false,
                };
                match kind {
                    0 | 1 => {
                        let cx = SendCx {
                            now: SimTime::from_ns(now),
                            psn: Psn(psn),
                            retransmission: false,
                            inflight_pkts: inflight,
                            every_arrival_answered: true,
                        };
                        let sent = p.next_entropy(&cx, &mut rng);
                        proptest::prop_assert_eq!(sent, p.entropy());
                        if inflight > 0 {
                            proptest::prop_assert_eq!(sent, e, "only idle packets repath");
                        }
                    }
                    2 => p.on_feedback(&fb(FeedbackKind::Ack), &mut rng),
                    3 => p.on_feedback(&fb(FeedbackKind::Nack), &mut rng),
                    _ => {
                        timeouts += 1;
                        p.on_feedback(&fb(FeedbackKind::Timeout), &mut rng);
                        proptest::prop_assert_ne!(p.entropy(), e);
                    }
                }
                proptest::prop_assert!(u32::from(p.entropy().0) < num_entropies);
                proptest::prop_assert!(p.consecutive_congested_rounds() <= rehash_rounds);
            }
            proptest::prop_assert!(p.repaths() >= timeouts);
        }
    }

    #[test]
    fn new_entropies_are_different_and_in_range() {
        let mut rng = SimRng::new(13);
        let cfg = PlbConfig {
            num_entropies: 2,
            ..PlbConfig::default()
        };
        let mut p = Plb::new(&cfg, &mut rng);
        for _ in 0..20 {
            let before = p.entropy();
            p.repath(&mut rng);
            assert_ne!(p.entropy(), before);
            assert!(p.entropy().0 < 2);
        }
    }
}
