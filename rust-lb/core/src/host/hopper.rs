//! Hopper: RTT-driven path switching with power-of-two probing and an out-of-order-avoiding
//! switch delay (Nosrati & Ghaderi, "Predictive Load Balancing for RDMA Traffic", arXiv
//! 2506.08132, §3 and Table 1).
//!
//! One queue pair sends on one entropy (one ECMP path) at a time. Per control epoch of one RTT
//! it averages the per-packet RTTs of ACKs on that path (§3.1):
//! * above `th_prob` × base RTT it probes two random paths it has not explored within
//!   `ttl_prob` × base RTT (§3.2, power of two choices): the NIC sends a small probe packet on
//!   each entropy ([`PathSelector::take_probe`]) and the answer comes back as
//!   [`FeedbackKind::ProbeAck`] with its RTT;
//! * above `th_cong` × base RTT it switches to the better probed path, but only if that path's
//!   RTT is below `margin` × the current one (§3.3);
//! * before the first packet on the new path it holds the queue pair
//!   ([`PathSelector::send_after`]) for the RTT the in-flight packets on the old path are
//!   expected to see minus the new path's RTT (§3.3, Fig. 1): a least-squares line of RTT
//!   against packet index over the epoch, extrapolated over the packets in flight.
//!
//! Reconstructions (the paper's text we have lacks its formulas and Table 1's first row; these
//! are our choices):
//! * The epoch average is the mean of the epoch's RTT samples, folded into the running estimate
//!   with gain `alpha` (default 1: the estimate is the last epoch's mean; Table 1 lists "1").
//! * An epoch lasts max(base RTT, current estimate) and closes on the first ACK after that.
//! * The switch decision is taken when a probe answer arrives (as well as when an epoch closes):
//!   under heavy queueing an epoch lasts far longer than a probe answer stays fresh.
//! * The hold is max(0, predicted old-path RTT − new-path RTT), optionally capped by
//!   `max_hold_ns` (0, the default, means no cap, as in the paper).
//! * Loss counts as congestion of the current path: a retransmission timeout, or
//!   a stall -- packets outstanding and no RTT sample from the current path for `stall_rtts`
//!   × base RTT -- raises a floor under the current path's RTT estimate (a timeout: infinite,
//!   the path is presumed dead; a stall: the time without a sample, a lower bound on the RTT of
//!   what is outstanding). The usual rule then applies: probe if no round is under way, and
//!   switch to the best answered probe below `margin` × the estimate, at once and without a
//!   hold when the path is presumed dead (its in-flight packets will not arrive). A dead path
//!   returns no RTT samples, so without this `th_cong` would never be reached on it. Any RTT
//!   sample from the current path clears the floor.
//! * Probe answers stay usable until the next probe round replaces them or the queue pair
//!   switches (§3.2-3.3: the answers inform the decision of the epoch they were gathered in;
//!   the paper's `ttl_probe` only stops a path from being probed again). A round is under way
//!   while a probe is unsent, or sent, unanswered and younger than max(`ttl_prob` × base RTT,
//!   the current estimate): an answer slower than the ttl but faster than the current path is
//!   still used. (Answers used to expire at `ttl_prob`, ~33 us, so a timeout 100 us
//!   after the answers found none, and under heavy queueing no answer was ever used.)
//! * Base RTT defaults to 8,320 ns, the reference's leaf-spine inter-rack RTT (`rdma-lb.rst`,
//!   "Routing and ECMP").

use serde::Deserialize;

use super::selector::{Feedback, FeedbackKind, PathSelector, SendCx};
use crate::error::{check_int, check_real, ParamError};
use crate::rng::SimRng;
use crate::scheme::{HostRole, Scheme};
use crate::time::{SimDuration, SimTime};
use crate::units::Entropy;

/// Probes sent per round (the paper's power of two choices).
const PROBES: usize = 2;
/// Recently explored paths remembered (a ring; older entries are overwritten).
const EXPLORED: usize = 16;

/// Parameters of Hopper (the Hopper paper, Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HopperConfig {
    /// Base (unloaded) RTT of the fabric, ns.
    pub base_rtt_ns: u64,
    /// Gain of the moving average of per-epoch RTT (1 = last epoch only).
    pub alpha: f64,
    /// Probing starts when the average RTT exceeds this multiple of the base RTT.
    pub th_prob: f64,
    /// Switching is considered when the average RTT exceeds this multiple of the base RTT.
    pub th_cong: f64,
    /// A probed path is not probed again within this multiple of the base RTT.
    pub ttl_prob: f64,
    /// Switch only to a path whose RTT is below `margin` × the current path's.
    pub margin: f64,
    /// Size of the entropy space probes are drawn from.
    pub num_entropies: u32,
    /// Upper bound on the hold before the first packet on a new path, ns (0 = none).
    pub max_hold_ns: u64,
    /// Packets outstanding and no RTT sample from the current path for this multiple of the
    /// base RTT count as congestion of that path (0 = only timeouts do).
    pub stall_rtts: f64,
}

impl Default for HopperConfig {
    fn default() -> Self {
        HopperConfig {
            base_rtt_ns: 8_320,
            alpha: 1.0,
            th_prob: 1.5,
            th_cong: 2.5,
            ttl_prob: 4.0,
            margin: 0.8,
            num_entropies: 1 << 16,
            max_hold_ns: 0,
            stall_rtts: 8.0,
        }
    }
}

impl HopperConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// The first parameter out of range, with its allowed range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int("base_rtt_ns", self.base_rtt_ns, 1, 1_000_000_000)?;
        check_real("alpha", self.alpha, f64::MIN_POSITIVE, 1.0)?;
        check_real("th_prob", self.th_prob, 1.0, 1_000.0)?;
        check_real("th_cong", self.th_cong, self.th_prob, 1_000.0)?;
        check_real("ttl_prob", self.ttl_prob, 0.0, 1_000_000.0)?;
        check_real("margin", self.margin, f64::MIN_POSITIVE, 1.0)?;
        check_int("num_entropies", self.num_entropies.into(), 3, 1 << 16)?;
        check_int("max_hold_ns", self.max_hold_ns, 0, 1_000_000_000)?;
        check_real("stall_rtts", self.stall_rtts, 0.0, 1_000_000.0)?;
        Ok(())
    }
}

/// A probe of one path: sent, and possibly answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Probe {
    entropy: Entropy,
    /// `None` until the NIC has taken it for sending.
    sent_at: Option<SimTime>,
    rtt: Option<SimDuration>,
}

/// Running least-squares sums of RTT against packet index within one epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct EpochStats {
    n: f64,
    sum_k: f64,
    sum_kk: f64,
    sum_r: f64,
    sum_kr: f64,
    last_rtt: f64,
}

impl EpochStats {
    fn add(&mut self, rtt_ns: f64) {
        let k = self.n;
        self.n += 1.0;
        self.sum_k += k;
        self.sum_kk += k * k;
        self.sum_r += rtt_ns;
        self.sum_kr += k * rtt_ns;
        self.last_rtt = rtt_ns;
    }

    fn mean(&self) -> Option<f64> {
        (self.n > 0.0).then(|| self.sum_r / self.n)
    }

    /// RTT predicted for the packet `ahead` indices after the last sample (at least the last
    /// sample when the trend is flat or falling).
    fn predict(&self, ahead: f64) -> f64 {
        let denom = self.n * self.sum_kk - self.sum_k * self.sum_k;
        if self.n < 2.0 || denom <= 0.0 {
            return self.last_rtt;
        }
        let slope = (self.n * self.sum_kr - self.sum_k * self.sum_r) / denom;
        let intercept = (self.sum_r - slope * self.sum_k) / self.n;
        let at = (self.n - 1.0) + ahead;
        (intercept + slope * at).max(self.last_rtt)
    }
}

/// Hopper's per-queue-pair state.
#[derive(Debug, Clone, PartialEq)]
pub struct Hopper {
    cfg: HopperConfig,
    current: Entropy,
    /// Running RTT estimate of the current path (ns), from closed epochs.
    rtt_avg_ns: Option<f64>,
    epoch_start: Option<SimTime>,
    epoch: EpochStats,
    /// The last closed epoch, for prediction while the open one has too few samples.
    prev_epoch: EpochStats,
    probes: [Option<Probe>; PROBES],
    explored: [Option<(Entropy, SimTime)>; EXPLORED],
    explored_next: usize,
    hold_until: SimTime,
    inflight_pkts: u32,
    switches: u64,
    /// Lower bound on the current path's RTT from loss evidence (ns; infinite after a
    /// timeout), cleared by the path's next RTT sample.
    rtt_floor_ns: f64,
    /// Start of the current stretch without an RTT sample from the current path.
    stall_clock: SimTime,
    /// Highest sequence number sent and highest answered: packets are outstanding while the
    /// first is above the second.
    high_sent: Option<u32>,
    high_answered: Option<u32>,
    /// Nothing sent on the current path yet (after a switch, during the hold): no stall.
    fresh_path: bool,
}

impl Hopper {
    /// A selector starting on a random path.
    pub fn new(cfg: &HopperConfig, rng: &mut SimRng) -> Self {
        Hopper {
            cfg: *cfg,
            current: Entropy(u16::try_from(rng.below(cfg.num_entropies)).unwrap_or(0)),
            rtt_avg_ns: None,
            epoch_start: None,
            epoch: EpochStats::default(),
            prev_epoch: EpochStats::default(),
            probes: [None; PROBES],
            explored: [None; EXPLORED],
            explored_next: 0,
            hold_until: SimTime::ZERO,
            inflight_pkts: 0,
            switches: 0,
            rtt_floor_ns: 0.0,
            stall_clock: SimTime::ZERO,
            high_sent: None,
            high_answered: None,
            fresh_path: true,
        }
    }

    /// The entropy (path) in use.
    #[must_use]
    pub fn current(&self) -> Entropy {
        self.current
    }

    /// Path switches so far.
    #[must_use]
    pub fn switches(&self) -> u64 {
        self.switches
    }

    /// The running RTT estimate of the current path.
    #[must_use]
    pub fn rtt_estimate(&self) -> Option<SimDuration> {
        self.rtt_avg_ns
            .map(|r| SimDuration::from_ns(r.round() as u64))
    }

    fn base(&self) -> f64 {
        self.cfg.base_rtt_ns as f64
    }

    fn ttl(&self) -> SimDuration {
        SimDuration::from_ns((self.cfg.ttl_prob * self.base()).round() as u64)
    }

    fn recently_explored(&self, e: Entropy, now: SimTime) -> bool {
        let ttl = self.ttl();
        self.explored
            .iter()
            .flatten()
            .any(|&(x, at)| x == e && now - at < ttl)
    }

    /// A probe round is under way while a probe is unsent, or sent, unanswered and younger
    /// than max(ttl, the current estimate) (an answer slower than that cannot win the margin).
    fn probing(&self, now: SimTime) -> bool {
        let est = self.estimate_now().unwrap_or(0.0);
        let wait = if est.is_finite() {
            self.ttl().max(SimDuration::from_ns(est.round() as u64))
        } else {
            self.ttl()
        };
        self.probes
            .iter()
            .flatten()
            .any(|p| p.sent_at.is_none_or(|t| p.rtt.is_none() && now - t < wait))
    }

    fn start_probes(&mut self, now: SimTime, rng: &mut SimRng) {
        if self.probing(now) {
            return;
        }
        let mut chosen = [Entropy(0); PROBES];
        let mut n = 0;
        // Bounded rejection sampling: distinct, not current, not recently explored.
        for _ in 0..64 {
            if n == PROBES {
                break;
            }
            let e = Entropy(u16::try_from(rng.below(self.cfg.num_entropies)).unwrap_or(0));
            if e == self.current
                || chosen.iter().take(n).any(|&c| c == e)
                || self.recently_explored(e, now)
            {
                continue;
            }
            if let Some(slot) = chosen.get_mut(n) {
                *slot = e;
            }
            n += 1;
        }
        for (slot, &e) in self.probes.iter_mut().zip(chosen.iter().take(n)) {
            *slot = Some(Probe {
                entropy: e,
                sent_at: None,
                rtt: None,
            });
        }
        for &e in chosen.iter().take(n) {
            if let Some(slot) = self.explored.get_mut(self.explored_next) {
                *slot = Some((e, now));
            }
            self.explored_next = (self.explored_next + 1) % EXPLORED;
        }
    }

    /// The answered probe of the current round with the lowest RTT.
    fn best_probe(&self) -> Option<(Entropy, SimDuration)> {
        self.probes
            .iter()
            .flatten()
            .filter_map(|p| p.rtt.map(|r| (p.entropy, r)))
            .min_by_key(|&(_, r)| r)
    }

    fn switch_to(&mut self, e: Entropy, hold: SimDuration, now: SimTime) {
        self.current = e;
        self.hold_until = now + hold;
        self.switches += 1;
        self.probes = [None; PROBES];
        self.rtt_avg_ns = None;
        self.epoch_start = None;
        self.epoch = EpochStats::default();
        self.prev_epoch = EpochStats::default();
        self.rtt_floor_ns = 0.0;
        self.stall_clock = now;
        self.fresh_path = true;
    }

    /// The RTT estimate including the open epoch's samples (what closing it now would give),
    /// raised to the loss floor.
    fn estimate_now(&self) -> Option<f64> {
        let est = match (self.rtt_avg_ns, self.epoch.mean()) {
            (Some(prev), Some(mean)) => Some((1.0 - self.cfg.alpha) * prev + self.cfg.alpha * mean),
            (prev, mean) => mean.or(prev),
        };
        if self.rtt_floor_ns > 0.0 {
            Some(est.unwrap_or(0.0).max(self.rtt_floor_ns))
        } else {
            est
        }
    }

    fn outstanding(&self) -> bool {
        match (self.high_sent, self.high_answered) {
            (Some(s), Some(a)) => s > a,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    fn stall_after(&self) -> SimDuration {
        SimDuration::from_ns((self.cfg.stall_rtts * self.base()).round() as u64)
    }

    /// Loss evidence on the current path (§3.1 extended to losses): raise the floor under its
    /// estimate to `floor_ns`, then switch to the best answered probe if it wins the margin,
    /// else probe.
    fn on_loss(&mut self, now: SimTime, floor_ns: f64, rng: &mut SimRng) {
        self.rtt_floor_ns = self.rtt_floor_ns.max(floor_ns);
        if !self.try_switch(now) {
            self.start_probes(now, rng);
        }
    }

    /// Switches to the best fresh probe if the current path is congested (above `th_cong`) and
    /// the probe is below `margin` × its RTT; returns whether it switched (§3.3).
    fn try_switch(&mut self, now: SimTime) -> bool {
        let Some(avg) = self.estimate_now() else {
            return false;
        };
        if avg <= self.cfg.th_cong * self.base() {
            return false;
        }
        let Some((e, r)) = self.best_probe() else {
            return false;
        };
        let r_ns = r.as_ns() as f64;
        if r_ns >= self.cfg.margin * avg {
            return false;
        }
        if self.rtt_floor_ns.is_infinite() {
            // The old path is presumed dead: nothing in flight on it will arrive to be overtaken.
            self.switch_to(e, SimDuration::ZERO, now);
            return true;
        }
        let trend = if self.epoch.n >= 2.0 {
            &self.epoch
        } else {
            &self.prev_epoch
        };
        let predicted = trend.predict(f64::from(self.inflight_pkts));
        let mut hold = (predicted - r_ns).max(0.0);
        if self.cfg.max_hold_ns > 0 {
            hold = hold.min(self.cfg.max_hold_ns as f64);
        }
        self.switch_to(e, SimDuration::from_ns(hold.round() as u64), now);
        true
    }

    /// Closes the epoch: updates the estimate, then probes and/or switches (§3.1-3.3).
    fn close_epoch(&mut self, now: SimTime, rng: &mut SimRng) {
        if self.try_switch(now) {
            return;
        }
        let Some(avg) = self.estimate_now() else {
            return;
        };
        self.rtt_avg_ns = Some(avg);
        if avg > self.cfg.th_prob * self.base() {
            self.start_probes(now, rng);
        }
        self.epoch_start = Some(now);
        self.prev_epoch = std::mem::take(&mut self.epoch);
    }
}

impl PathSelector for Hopper {
    fn next_entropy(&mut self, cx: &SendCx, _rng: &mut SimRng) -> Entropy {
        self.inflight_pkts = cx.inflight_pkts;
        if self.fresh_path || !self.outstanding() {
            // The first packet on this path, or nothing was outstanding: the clock starts now.
            self.stall_clock = cx.now;
            self.fresh_path = false;
        }
        self.high_sent = Some(self.high_sent.map_or(cx.psn.0, |h| h.max(cx.psn.0)));
        self.current
    }

    fn on_feedback(&mut self, fb: &Feedback, rng: &mut SimRng) {
        match fb.kind {
            FeedbackKind::ProbeAck => {
                for p in self.probes.iter_mut().flatten() {
                    if p.entropy == fb.entropy && p.sent_at.is_some() && p.rtt.is_none() {
                        p.rtt = fb.rtt;
                    }
                }
                self.try_switch(fb.now);
            }
            FeedbackKind::Ack => {
                self.high_answered = Some(self.high_answered.map_or(fb.psn.0, |h| h.max(fb.psn.0)));
                let (Some(rtt), true) = (fb.rtt, fb.entropy == self.current) else {
                    return;
                };
                self.rtt_floor_ns = 0.0;
                self.stall_clock = fb.now;
                let start = *self.epoch_start.get_or_insert(fb.now);
                self.epoch.add(rtt.as_ns() as f64);
                let len = self.rtt_avg_ns.unwrap_or(0.0).max(self.base());
                if (fb.now - start).as_ns() as f64 >= len {
                    self.close_epoch(fb.now, rng);
                }
            }
            // A timeout about a packet on another path (sent before a switch) says nothing
            // about the current one.
            FeedbackKind::Timeout if fb.entropy == self.current => {
                self.stall_clock = fb.now;
                self.on_loss(fb.now, f64::INFINITY, rng);
            }
            FeedbackKind::Nack => {
                self.high_answered = Some(self.high_answered.map_or(fb.psn.0, |h| h.max(fb.psn.0)));
            }
            FeedbackKind::Timeout | FeedbackKind::Cnp => {}
        }
    }

    fn poll_at(&self) -> Option<SimTime> {
        (self.cfg.stall_rtts > 0.0 && !self.fresh_path && self.outstanding())
            .then(|| self.stall_clock + self.stall_after())
    }

    fn on_timer(&mut self, now: SimTime, rng: &mut SimRng) {
        if self.cfg.stall_rtts <= 0.0 || self.fresh_path || !self.outstanding() {
            return;
        }
        let stalled = now - self.stall_clock;
        if stalled < self.stall_after() {
            return;
        }
        self.stall_clock = now; // fires again after another stall_rtts x base RTT
        self.on_loss(now, stalled.as_ns() as f64, rng);
    }

    fn send_after(&self) -> SimTime {
        self.hold_until
    }

    fn take_probe(&mut self, now: SimTime) -> Option<Entropy> {
        let p = self
            .probes
            .iter_mut()
            .flatten()
            .find(|p| p.sent_at.is_none())?;
        p.sent_at = Some(now);
        Some(p.entropy)
    }

    fn path_switches(&self) -> u64 {
        self.switches
    }
}

impl Scheme for Hopper {
    type Config = HopperConfig;
    const MOVES_ON_FEEDBACK: bool = true;

    fn validate(config: &HopperConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl HostRole for Hopper {
    type Selector = Box<Hopper>;

    fn selector(config: &HopperConfig, rng: &mut SimRng) -> Box<Hopper> {
        Box::new(Hopper::new(config, rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Psn;

    const BASE: u64 = 8_320;

    fn hopper(seed: u64) -> (Hopper, SimRng) {
        let mut rng = SimRng::new(seed);
        (Hopper::new(&HopperConfig::default(), &mut rng), rng)
    }

    fn ack(h: &Hopper, now: u64, rtt: u64) -> Feedback {
        Feedback {
            kind: FeedbackKind::Ack,
            now: SimTime::from_ns(now),
            entropy: h.current(),
            psn: Psn(0),
            rtt: Some(SimDuration::from_ns(rtt)),
            ecn: false,
            last_hop: false,
        }
    }

    fn probe_ack(e: Entropy, now: u64, rtt: u64) -> Feedback {
        Feedback {
            kind: FeedbackKind::ProbeAck,
            now: SimTime::from_ns(now),
            entropy: e,
            psn: Psn(0),
            rtt: Some(SimDuration::from_ns(rtt)),
            ecn: false,
            last_hop: false,
        }
    }

    /// Feeds ACKs with `rtt` every 100 ns from `t0` for `epochs` base RTTs; returns the time.
    fn feed(h: &mut Hopper, rng: &mut SimRng, t0: u64, rtt: u64, epochs: u64) -> u64 {
        let mut t = t0;
        while t < t0 + epochs * BASE.max(rtt) + 1 {
            let fb = ack(h, t, rtt);
            h.on_feedback(&fb, rng);
            t += 100;
        }
        t
    }

    #[test]
    fn never_probes_or_switches_below_th_prob() {
        // 1.4 x base < th_prob = 1.5 x base: no probe, no switch, ever.
        let (mut h, mut rng) = hopper(1);
        let e0 = h.current();
        feed(&mut h, &mut rng, 0, BASE * 14 / 10, 50);
        assert_eq!(h.take_probe(SimTime::from_ns(1)), None);
        assert_eq!(h.current(), e0);
        assert_eq!(h.switches(), 0);
    }

    #[test]
    fn probes_two_distinct_other_paths_above_th_prob() {
        let (mut h, mut rng) = hopper(2);
        let t = feed(&mut h, &mut rng, 0, BASE * 2, 3); // 2.0 x base: probe, no switch
        let p1 = h.take_probe(SimTime::from_ns(t)).unwrap();
        let p2 = h.take_probe(SimTime::from_ns(t)).unwrap();
        assert_eq!(
            h.take_probe(SimTime::from_ns(t)),
            None,
            "exactly two probes"
        );
        assert_ne!(p1, p2);
        assert_ne!(p1, h.current());
        assert_ne!(p2, h.current());
        // Below th_cong the answers do not cause a switch however good they are.
        h.on_feedback(&probe_ack(p1, t + 10, BASE), &mut rng);
        feed(&mut h, &mut rng, t + 20, BASE * 2, 3);
        assert_eq!(h.switches(), 0);
    }

    #[test]
    fn switches_above_th_cong_only_to_a_path_below_margin() {
        let (mut h, mut rng) = hopper(3);
        let cur = BASE * 3; // 3.0 x base > th_cong
        let t = feed(&mut h, &mut rng, 0, cur, 2);
        let p1 = h.take_probe(SimTime::from_ns(t)).unwrap();
        let p2 = h.take_probe(SimTime::from_ns(t)).unwrap();
        // Both answers at 0.85 x current: not below the 0.8 margin, so no switch.
        h.on_feedback(&probe_ack(p1, t + 10, cur * 85 / 100), &mut rng);
        h.on_feedback(&probe_ack(p2, t + 10, cur * 85 / 100), &mut rng);
        let e0 = h.current();
        let t = feed(&mut h, &mut rng, t + 20, cur, 2);
        assert_eq!(h.current(), e0, "no switch to a path >= 0.8 x current");
        // Next round, one answer at 0.5 x current: switch to it.
        let t = feed(&mut h, &mut rng, t, cur, 5); // the old probes expire (4 x base)
        let q1 = h.take_probe(SimTime::from_ns(t)).unwrap();
        let q2 = h.take_probe(SimTime::from_ns(t)).unwrap();
        h.on_feedback(&probe_ack(q1, t + 10, cur / 2), &mut rng);
        h.on_feedback(&probe_ack(q2, t + 10, cur * 9 / 10), &mut rng);
        feed(&mut h, &mut rng, t + 20, cur, 2);
        assert_eq!(h.current(), q1);
        assert_eq!(h.switches(), 1);
    }

    #[test]
    fn regression_extrapolates_over_the_packets_in_flight() {
        // r_k = 1000 + 10 k for k = 0..99: the packet 50 after the last is predicted at
        // 1000 + 10 (99 + 50) = 2490; a flat or falling trend predicts the last sample.
        let mut st = EpochStats::default();
        (0..100).for_each(|k| st.add(1000.0 + 10.0 * f64::from(k)));
        assert!(
            (st.predict(50.0) - 2490.0).abs() < 1e-6,
            "{}",
            st.predict(50.0)
        );
        let mut falling = EpochStats::default();
        (0..10).for_each(|k| falling.add(2000.0 - 10.0 * f64::from(k)));
        assert_eq!(falling.predict(50.0), 1910.0);
    }

    #[test]
    fn hold_is_the_extrapolated_rtt_gap() {
        // Congested at 3 x base until the epoch closes and probes go out; then 100 RTT samples
        // rising 10 ns each (10 us, within the probe TTL); then the probe answers at base RTT
        // and the queue pair switches. With 50 packets in flight the regression predicts the
        // last one at start + 10 (99 + 50): hold = that - base RTT.
        let (mut h, mut rng) = hopper(4);
        let cx = SendCx {
            now: SimTime::ZERO,
            psn: Psn(0),
            retransmission: false,
            inflight_pkts: 50,
            every_arrival_answered: false,
        };
        h.next_entropy(&cx, &mut rng);
        let start = BASE * 3;
        let mut now = 0;
        let probe = loop {
            let fb = ack(&h, now, start);
            h.on_feedback(&fb, &mut rng);
            now += 100;
            if let Some(p) = h.take_probe(SimTime::from_ns(now)) {
                break p;
            }
            assert!(now < 1_000_000);
        };
        h.take_probe(SimTime::from_ns(now)).unwrap();
        for k in 0..100 {
            now += 100;
            let fb = ack(&h, now, start + 10 * k);
            h.on_feedback(&fb, &mut rng);
        }
        assert_eq!(h.switches(), 0, "no switch before the answer");
        now += 100;
        h.on_feedback(&probe_ack(probe, now, BASE), &mut rng);
        assert_eq!(h.switches(), 1);
        assert_eq!(h.current(), probe);
        let hold = h.send_after().as_ns() - now;
        let expected = start + 10 * (99 + 50) - BASE;
        assert!(
            hold.abs_diff(expected) <= 2,
            "hold {hold} expected {expected}"
        );
    }

    /// The NIC's retransmission timeouts (rdma-nic.cc attributes): IRN's RTO with more than 3
    /// packets in flight (`IrnRtoHigh`) and with fewer (`IrnRtoLow`), Go-Back-N's `L2Timeout`.
    const IRN_RTO_HIGH: u64 = 320_000;
    const IRN_RTO_LOW: u64 = 100_000;
    const GBN_RTO: u64 = 4_000_000;

    fn send(h: &mut Hopper, rng: &mut SimRng, now: u64, psn: u32) -> Entropy {
        let cx = SendCx {
            now: SimTime::from_ns(now),
            psn: Psn(psn),
            retransmission: false,
            inflight_pkts: 10,
            every_arrival_answered: false,
        };
        h.next_entropy(&cx, rng)
    }

    fn timeout(now: u64, entropy: Entropy) -> Feedback {
        Feedback {
            kind: FeedbackKind::Timeout,
            now: SimTime::from_ns(now),
            entropy,
            psn: Psn(0),
            rtt: None,
            ecn: false,
            last_hop: false,
        }
    }

    /// A queue pair at line rate (a packet every 84 ns) whose path answers at `rtt` until
    /// `dies_at`, then black-holes; sends until `until`. Returns the next PSN.
    fn run_path(h: &mut Hopper, rng: &mut SimRng, rtt: u64, dies_at: u64, until: u64) -> u32 {
        let mut psn = 0;
        let mut t = 0;
        let mut pending = std::collections::VecDeque::new();
        while t < until {
            // The answers due by now, in time order, before the next send.
            while pending.front().is_some_and(|&(at, _)| at <= t) {
                if let Some((at, p)) = pending.pop_front() {
                    let fb = Feedback {
                        psn: Psn(p),
                        ..ack(h, at, rtt)
                    };
                    h.on_feedback(&fb, rng);
                }
            }
            let e = send(h, rng, t, psn);
            if t + rtt < dies_at && e == h.current() {
                pending.push_back((t + rtt, psn));
            }
            psn += 1;
            t += 84;
        }
        psn
    }

    #[test]
    fn a_timeout_at_the_real_irn_rto_leaves_a_dead_path() {
        // Stall detection off: only the NIC's timeout tells Hopper. The path carries traffic at
        // base RTT (no probing) and dies at 50 us; IRN's timer, re-armed by every send, fires
        // IrnRtoHigh after the last one (the BDP cap stops sends ~8.4 us after the death).
        let cfg = HopperConfig {
            stall_rtts: 0.0,
            ..HopperConfig::default()
        };
        let mut rng = SimRng::new(7);
        let mut h = Hopper::new(&cfg, &mut rng);
        let dead = h.current();
        run_path(&mut h, &mut rng, BASE, 50_000, 58_400);
        assert_eq!(h.poll_at(), None, "no stall timer when stall_rtts = 0");
        let t_to = 58_400 + IRN_RTO_HIGH;
        h.on_feedback(&timeout(t_to, dead), &mut rng);
        let p = h.take_probe(SimTime::from_ns(t_to)).unwrap();
        let q = h.take_probe(SimTime::from_ns(t_to)).unwrap();
        assert_eq!(h.switches(), 0, "nothing answered yet");
        // The first answer (one base RTT later) wins against a dead path: switch, no hold.
        h.on_feedback(&probe_ack(p, t_to + BASE, BASE), &mut rng);
        assert_eq!(h.current(), p);
        assert_eq!(h.send_after(), SimTime::from_ns(t_to + BASE));
        // The late answer of the other probe changes nothing; a timeout naming the dead path
        // (a packet sent before the switch) is not charged to the new one.
        h.on_feedback(&probe_ack(q, t_to + BASE + 10, BASE / 2), &mut rng);
        h.on_feedback(&timeout(t_to + IRN_RTO_LOW, dead), &mut rng);
        assert_eq!((h.current(), h.switches()), (p, 1));
    }

    #[test]
    fn answers_gathered_before_a_go_back_n_timeout_are_still_used() {
        // Congested at 3 x base: probes go out, one answers at base RTT but (margin) only just
        // misses ... then the path dies. The Go-Back-N timeout 4 ms later finds the answers of
        // that round (ttl_prob = 33 us gates re-probing only) and switches at once to the best.
        let cfg = HopperConfig {
            stall_rtts: 0.0,
            ..HopperConfig::default()
        };
        let mut rng = SimRng::new(8);
        let mut h = Hopper::new(&cfg, &mut rng);
        let dead = h.current();
        let t = feed(&mut h, &mut rng, 0, BASE * 3, 2);
        let p1 = h.take_probe(SimTime::from_ns(t)).unwrap();
        let p2 = h.take_probe(SimTime::from_ns(t)).unwrap();
        h.on_feedback(&probe_ack(p1, t + 20_000, BASE * 3 * 85 / 100), &mut rng);
        h.on_feedback(&probe_ack(p2, t + 21_000, BASE * 3 * 9 / 10), &mut rng);
        assert_eq!(h.switches(), 0, "0.85 x current misses the 0.8 margin");
        let t_to = t + GBN_RTO;
        h.on_feedback(&timeout(t_to, dead), &mut rng);
        assert_eq!(h.current(), p1, "the better answer, 4 ms old");
        assert_eq!(
            h.send_after(),
            SimTime::from_ns(t_to),
            "no hold after a timeout"
        );
        assert_eq!(
            h.take_probe(SimTime::from_ns(t_to)),
            None,
            "no new round needed"
        );
    }

    #[test]
    fn a_stall_of_stall_rtts_leaves_a_dead_path_before_the_first_rto() {
        // Default stall_rtts = 8: the path dies at 50 us; the last sample arrives at 50 us, so
        // at 50 + 8 x 8.32 = 116.56 us the stall counts as congestion (RTT >= 66.56 us >
        // th_cong x base = 20.8 us): probe, and switch on an answer below 0.8 x 66.56 us.
        let (mut h, mut rng) = hopper(9);
        let dead = h.current();
        run_path(&mut h, &mut rng, BASE, 50_000, 58_400);
        let last_sample = (50_000 - BASE) / 84 * 84 + BASE; // the last ACK before the death
        let due = h.poll_at().unwrap();
        assert_eq!(due, SimTime::from_ns(last_sample + 8 * BASE));
        h.on_timer(SimTime::from_ns(due.as_ns() - 1), &mut rng);
        assert_eq!(h.take_probe(due), None, "not before the stall time");
        h.on_timer(due, &mut rng);
        let p = h.take_probe(due).unwrap();
        h.take_probe(due).unwrap();
        // The probe crosses a queue: 40 us < 0.8 x 66.56 us.
        h.on_feedback(&probe_ack(p, due.as_ns() + 40_000, 40_000), &mut rng);
        assert_eq!(h.current(), p);
        assert_ne!(p, dead);
        let switched_at = due.as_ns() + 40_000;
        assert!(
            switched_at < 58_400 + IRN_RTO_LOW,
            "left at {switched_at} ns, before IRN's first timeout"
        );
    }

    #[test]
    fn an_answer_slower_than_ttl_prob_still_switches_under_congestion() {
        // Current path at 100 us RTT (12 x base); the alternative answers 50 us after its
        // probe (> ttl_prob x base = 33.3 us), below 0.8 x 100 us: Hopper switches.
        let (mut h, mut rng) = hopper(10);
        let cur = 100_000;
        let t = feed(&mut h, &mut rng, 0, cur, 1);
        let p1 = h.take_probe(SimTime::from_ns(t)).unwrap();
        let p2 = h.take_probe(SimTime::from_ns(t)).unwrap();
        // ACKs keep coming for 50 us (the epoch, 100 us long, stays open).
        let t2 = feed(&mut h, &mut rng, t + 100, cur, 0).min(t + 49_900);
        assert!(t2 > t);
        h.on_feedback(&probe_ack(p1, t + 50_000, 50_000), &mut rng);
        assert_eq!(h.current(), p1);
        assert_ne!(p1, p2);
    }

    #[test]
    fn a_probed_path_is_not_probed_again_within_ttl() {
        // 4 entropies: start on c, probe {a, b}, switch to a at once (timeout). Congestion on a
        // starts a new round within the TTL: b (probed) and a (current) are excluded, so the
        // probes are drawn from {c, d}.
        let cfg = HopperConfig {
            num_entropies: 4,
            ..HopperConfig::default()
        };
        let mut rng = SimRng::new(6);
        let mut h = Hopper::new(&cfg, &mut rng);
        let c = h.current();
        let t = feed(&mut h, &mut rng, 0, BASE * 2, 2);
        let a = h.take_probe(SimTime::from_ns(t)).unwrap();
        let b = h.take_probe(SimTime::from_ns(t)).unwrap();
        h.on_feedback(&probe_ack(a, t + 1, BASE), &mut rng);
        h.on_feedback(&probe_ack(b, t + 2, BASE * 2), &mut rng);
        let timeout = Feedback {
            kind: FeedbackKind::Timeout,
            now: SimTime::from_ns(t + 3),
            entropy: c,
            psn: Psn(0),
            rtt: None,
            ecn: false,
            last_hop: false,
        };
        h.on_feedback(&timeout, &mut rng);
        assert_eq!(h.current(), a);
        let t2 = feed(&mut h, &mut rng, t + 4, BASE * 2, 1);
        assert!(t2 - t < 4 * BASE, "still within the TTL");
        let again: Vec<Entropy> = [
            h.take_probe(SimTime::from_ns(t2)),
            h.take_probe(SimTime::from_ns(t2)),
        ]
        .into_iter()
        .flatten()
        .collect();
        assert_eq!(again.len(), 2, "{again:?}");
        assert!(
            again.iter().all(|&x| x != a && x != b),
            "{again:?} vs a={a:?} b={b:?}"
        );
        assert!(again.contains(&c));
    }

    #[test]
    fn config_ranges_name_the_parameter() {
        let bad = HopperConfig {
            margin: 1.5,
            ..HopperConfig::default()
        };
        let e = bad.validate().unwrap_err();
        assert_eq!(e.parameter, "margin");
        let bad = HopperConfig {
            th_cong: 1.2,
            ..HopperConfig::default()
        };
        assert_eq!(bad.validate().unwrap_err().parameter, "th_cong");
    }
}
