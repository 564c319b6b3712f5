//! The learned view of a set of paths in Whack-a-Mole (M. Luby and J. Byers, "Whack-a-Mole:
//! Deterministic Packet Spraying Across Multiple Network Paths", arXiv:2509.18519): the whack
//! amount and the severity of each piece of feedback (§5–6), the batched multi-bin updates (§7),
//! the time-varying schedule (§8), the severity objective (§6), and recovery and dead paths (our
//! additions; the parent module states both and the deviation). One [`PathState`] per queue
//! pair, or one shared per (NIC, destination).

use std::cell::RefCell;
use std::rc::Rc;

use super::config::{Objective, RecoveryRule, Redistribution, WhackAMoleConfig};
use super::profile::{balls_from_weights, Profile};
use crate::host::selector::{Feedback, FeedbackKind};
use crate::time::{SimDuration, SimTime};

/// The whack: r = max(1, ⌊f·b⌋) balls, leaving at least `floor`; none if f = 0.
#[must_use]
pub fn whack_amount(balls: u32, factor: f64, floor: u32) -> u32 {
    if factor <= 0.0 || balls <= floor {
        return 0;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "factor in (0, 1] keeps the product in [0, balls]"
    )]
    let r = (factor.min(1.0) * f64::from(balls)).floor() as u32;
    r.max(1).min(balls - floor)
}

/// The learned view of a set of paths: the profile, its recovery target, the pending whacks
/// and the RTT average. One per queue pair, or one per (NIC, destination) shared by that
/// NIC's queue pairs to the destination ([`ProfileScope`](super::ProfileScope)).
#[derive(Debug, Clone, PartialEq)]
pub struct PathState {
    pub(super) profile: Profile,
    pub(super) target: Vec<u32>,
    redistribution: Redistribution,
    floor: u32,
    ecn_factor: f64,
    rtt_factor: f64,
    rtt_margin: f64,
    loss_factor: f64,
    nack_factor: f64,
    /// Running average RTT over all paths, in ns.
    rtt_avg_ns: Option<f64>,
    update_interval: SimDuration,
    next_update: Option<SimTime>,
    recovery_interval: SimDuration,
    next_recovery: Option<SimTime>,
    recovery_gain: f64,
    recovery_rule: RecoveryRule,
    /// Per path, whether it drew whacking feedback since the last recovery step.
    fed_back: Vec<bool>,
    /// Per path, whether it drew a clean acknowledgement since the last recovery step.
    clean: Vec<bool>,
    /// Per path, the most severe factor seen in the current update interval.
    pending: Vec<f64>,
    /// Scratch for the removal vector of a batched update.
    removal: Vec<u32>,
    /// Time-varying profile: (offset from the first packet, balls), in order.
    schedule: Vec<(SimDuration, Vec<u32>)>,
    /// The next schedule step to apply.
    next_step: usize,
    /// When the first data packet was sent.
    started: Option<SimTime>,
    objective: Objective,
    /// Per path, the severity weight w(i) of the paper's §6: a moving average (gain 1/8) of the
    /// whack factor of each piece of feedback about it (0 for a clean answer).
    weight: Vec<f64>,
    /// Per path, whether it is dead: stalled, no balls, probed until it answers.
    dead: Vec<bool>,
    /// Per path, when the next probe of a dead path is due.
    next_probe: Vec<SimTime>,
    /// Probe period of a dead path; 0 = no dead paths (a stall is a whack).
    probe_interval: SimDuration,
}

/// Recovery steps applied at most per event (they converge well before this).
const MAX_RECOVERY_STEPS: u64 = 64;

impl PathState {
    /// A uniform profile (or the schedule's) with nothing learned yet.
    #[must_use]
    pub fn new(config: &WhackAMoleConfig) -> Self {
        let n = usize::try_from(config.num_paths.clamp(1, 1 << 16)).unwrap_or(1);
        let log2_m = config.log2_balls.clamp(1, 16);
        let profile = Profile::uniform(n, log2_m);
        PathState {
            target: profile.balls().to_vec(),
            profile,
            redistribution: config.redistribution,
            floor: config.min_balls,
            ecn_factor: config.ecn_factor,
            rtt_factor: config.rtt_factor,
            rtt_margin: config.rtt_margin,
            loss_factor: config.loss_factor,
            nack_factor: config.nack_factor,
            rtt_avg_ns: None,
            update_interval: SimDuration::from_ns(config.update_interval_ns),
            next_update: None,
            recovery_interval: SimDuration::from_ns(config.recovery_interval_ns),
            next_recovery: None,
            recovery_gain: config.recovery_gain,
            recovery_rule: config.recovery_rule,
            fed_back: vec![false; n],
            clean: vec![false; n],
            pending: vec![0.0; n],
            removal: vec![0; n],
            schedule: config
                .schedule
                .iter()
                .map(|s| {
                    (
                        SimDuration::from_ns(s.at_ns),
                        balls_from_weights(&s.weights, log2_m),
                    )
                })
                .collect(),
            next_step: 0,
            started: None,
            objective: config.objective,
            weight: vec![0.0; n],
            dead: vec![false; n],
            next_probe: vec![SimTime::ZERO; n],
            probe_interval: SimDuration::from_ns(config.dead_probe_interval_ns),
        }
    }

    /// The current profile.
    #[must_use]
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The profile recovery returns to.
    #[must_use]
    pub fn target(&self) -> &[u32] {
        &self.target
    }

    /// Applies the schedule steps due by `now` (the last one due wins).
    fn apply_schedule(&mut self, now: SimTime) {
        let Some(start) = self.started else {
            return;
        };
        let mut due = None;
        while let Some((at, balls)) = self.schedule.get(self.next_step) {
            if now < start + *at {
                break;
            }
            due = Some(balls);
            self.next_step += 1;
        }
        if let Some(balls) = due {
            if self.profile.set_balls(balls) {
                self.target.copy_from_slice(balls);
                self.profile.empty_bins(&self.dead);
            }
        }
    }

    /// Ends the update and recovery intervals that ended by `now`.
    fn advance(&mut self, now: SimTime) {
        self.apply_schedule(now);
        let interval = self.update_interval.as_ns();
        if interval > 0 {
            match self.next_update {
                None => self.next_update = Some(now + self.update_interval),
                Some(end) if now >= end => {
                    self.apply_pending();
                    let elapsed = now
                        .saturating_since(end)
                        .as_ns()
                        .checked_div(interval)
                        .unwrap_or(0)
                        .saturating_add(1);
                    self.next_update =
                        Some(end + SimDuration::from_ns(elapsed.saturating_mul(interval)));
                }
                Some(_) => {}
            }
        }
        let interval = self.recovery_interval.as_ns();
        if interval > 0 {
            match self.next_recovery {
                None => self.next_recovery = Some(now + self.recovery_interval),
                Some(end) if now >= end => {
                    let ticks = now
                        .saturating_since(end)
                        .as_ns()
                        .checked_div(interval)
                        .unwrap_or(0)
                        .saturating_add(1);
                    for _ in 0..ticks.min(MAX_RECOVERY_STEPS) {
                        let (fed, clean, dead) = (&self.fed_back, &self.clean, &self.dead);
                        let is = |v: &[bool], i: usize| v.get(i).copied().unwrap_or(false);
                        let moved = match self.recovery_rule {
                            RecoveryRule::Periodic => self.profile.relax_toward_where(
                                &self.target,
                                self.recovery_gain,
                                |i| !is(dead, i),
                            ),
                            RecoveryRule::Evidence => self.profile.relax_toward_where(
                                &self.target,
                                self.recovery_gain,
                                |i| !is(dead, i) && !is(fed, i) && is(clean, i),
                            ),
                        };
                        // Later ticks of a lazy catch-up covered intervals without feedback.
                        self.fed_back.fill(false);
                        self.clean.fill(false);
                        if !moved {
                            break;
                        }
                    }
                    self.fed_back.fill(false);
                    self.clean.fill(false);
                    self.next_recovery =
                        Some(end + SimDuration::from_ns(ticks.saturating_mul(interval)));
                }
                Some(_) => {}
            }
        }
    }

    /// Applies the whacks gathered in the interval that just ended, as one update.
    fn apply_pending(&mut self) {
        let mut any = false;
        for ((r, f), &b) in self
            .removal
            .iter_mut()
            .zip(self.pending.iter_mut())
            .zip(self.profile.balls())
        {
            *r = whack_amount(b, *f, self.floor);
            any |= *r > 0;
            *f = 0.0;
        }
        if any {
            self.redistribute();
        }
    }

    /// Moves `removal` out of the profile: by the embodiment, or to the paths below the mean
    /// severity weight (paper §6).
    fn redistribute(&mut self) {
        if self.objective == Objective::Severity {
            let balls = self.profile.balls();
            let m = f64::from(self.profile.total().max(1));
            let mean: f64 = balls
                .iter()
                .zip(&self.weight)
                .map(|(&b, &w)| f64::from(b) / m * w)
                .sum();
            let (weight, removal) = (&self.weight, &self.removal);
            let below = |j: usize| {
                weight.get(j).is_some_and(|&w| w < mean)
                    && removal.get(j).copied().unwrap_or(0) == 0
            };
            if (0..weight.len()).any(below) {
                let total = self.profile.take(removal);
                self.profile.spread_even(total, below);
                self.profile.empty_bins(&self.dead);
                return;
            }
        }
        self.profile.apply(&self.removal, self.redistribution);
        // The embodiments spread over every bin (or every bin not whacked): what a dead bin
        // received goes back to the live ones.
        self.profile.empty_bins(&self.dead);
    }

    /// Folds the factor `f` of one piece of feedback about `path` into its severity weight.
    fn weigh(&mut self, path: usize, f: f64) {
        if let Some(w) = self.weight.get_mut(path) {
            *w += (f - *w) / 8.0;
        }
    }

    /// The whack factor this feedback calls for (0 for none).
    fn severity(&mut self, fb: &Feedback) -> f64 {
        let mut f: f64 = 0.0;
        match fb.kind {
            FeedbackKind::Timeout => f = f.max(self.loss_factor),
            FeedbackKind::Nack => f = f.max(self.nack_factor),
            FeedbackKind::Cnp => f = f.max(self.ecn_factor),
            FeedbackKind::ProbeAck => {}
            FeedbackKind::Ack => {
                if fb.ecn {
                    f = f.max(self.ecn_factor);
                }
            }
        }
        if let (Some(rtt), FeedbackKind::Ack | FeedbackKind::Nack) = (fb.rtt, fb.kind) {
            #[allow(clippy::cast_precision_loss, reason = "RTTs are far below 2^52 ns")]
            let sample = rtt.as_ns() as f64;
            match self.rtt_avg_ns {
                None => self.rtt_avg_ns = Some(sample),
                Some(avg) => {
                    if sample > (1.0 + self.rtt_margin) * avg {
                        f = f.max(self.rtt_factor);
                    }
                    self.rtt_avg_ns = Some(avg + (sample - avg) / 8.0);
                }
            }
        }
        f
    }

    /// The path of the packet that draws `ball` at `now`.
    pub(super) fn path_for(&mut self, now: SimTime, ball: u32) -> usize {
        if self.started.is_none() {
            self.started = Some(now);
        }
        self.advance(now);
        self.profile.path_of(ball)
    }

    /// Learns from feedback about a packet sent on `fb.entropy`.
    pub(super) fn feedback(&mut self, fb: &Feedback) {
        self.advance(fb.now);
        let path = usize::from(fb.entropy.0);
        let answer = matches!(
            fb.kind,
            FeedbackKind::Ack | FeedbackKind::Nack | FeedbackKind::ProbeAck
        );
        if answer && self.is_dead(path) {
            self.revive(path);
        }
        let f = self.severity(fb);
        if matches!(
            fb.kind,
            FeedbackKind::Ack | FeedbackKind::Nack | FeedbackKind::Timeout | FeedbackKind::Cnp
        ) {
            self.weigh(path, f);
        }
        if f <= 0.0 {
            if fb.kind == FeedbackKind::Ack {
                if let Some(flag) = self.clean.get_mut(path) {
                    *flag = true;
                }
            }
            return;
        }
        self.whack(path, f);
    }

    /// A loss on `path` found by its sequence numbers or a stall (paper §5-6).
    pub(super) fn path_loss(&mut self, now: SimTime, path: usize) {
        self.advance(now);
        self.weigh(path, self.loss_factor);
        self.whack(path, self.loss_factor);
    }

    /// A stall on `path` (its oldest unanswered packet older than `stall_factor` × the
    /// average RTT). With dead paths on, it is declared dead: all its balls go to the live
    /// paths, evenly, and it gets none back until it answers ([`PathState::revive`]); its first
    /// probe is due one probe interval later. The last live path is never declared dead (it
    /// is whacked instead), nor is any path with dead paths off.
    pub(super) fn path_stalled(&mut self, now: SimTime, path: usize) {
        let others_live = self.dead.iter().enumerate().any(|(i, &d)| i != path && !d);
        if self.probe_interval.as_ns() == 0 || !others_live || path >= self.dead.len() {
            self.path_loss(now, path);
            return;
        }
        self.advance(now);
        self.weigh(path, self.loss_factor);
        if let Some(flag) = self.fed_back.get_mut(path) {
            *flag = true;
        }
        if let (Some(d), Some(p), Some(t)) = (
            self.dead.get_mut(path),
            self.pending.get_mut(path),
            self.next_probe.get_mut(path),
        ) {
            *d = true;
            *p = 0.0;
            *t = now + self.probe_interval;
        }
        self.profile.empty_bins(&self.dead);
    }

    /// An answer on dead `path` (a probe's, or a late one to data): it delivers again. It
    /// gets the floor (`min_balls`, at least 1) from the path holding the most balls (the
    /// lowest index among equals) and then recovers by the recovery rule like any path.
    fn revive(&mut self, path: usize) {
        if let Some(d) = self.dead.get_mut(path) {
            *d = false;
        }
        let balls = self.profile.balls();
        let richest = (0..balls.len())
            .max_by_key(|&i| (balls.get(i).copied().unwrap_or(0), std::cmp::Reverse(i)))
            .unwrap_or(0);
        if richest != path {
            self.profile.move_balls(richest, path, self.floor.max(1));
        }
    }

    /// The entropy of the next probe due on a dead path at `now`, if any (one per dead path
    /// per probe interval).
    pub(super) fn take_probe(&mut self, now: SimTime) -> Option<usize> {
        let interval = self.probe_interval;
        let due = self
            .dead
            .iter()
            .zip(&self.next_probe)
            .position(|(&d, &t)| d && t <= now)?;
        if let Some(t) = self.next_probe.get_mut(due) {
            *t = now + interval;
        }
        Some(due)
    }

    /// Whether `path` is dead.
    #[must_use]
    pub fn is_dead(&self, path: usize) -> bool {
        self.dead.get(path).copied().unwrap_or(false)
    }

    /// The running average RTT over all paths.
    pub(super) fn rtt_avg(&self) -> Option<f64> {
        self.rtt_avg_ns
    }

    /// Whacks `path` by factor `f` (> 0): at once, or gathered into the current interval.
    fn whack(&mut self, path: usize, f: f64) {
        if path >= self.pending.len() {
            return;
        }
        if let Some(flag) = self.fed_back.get_mut(path) {
            *flag = true;
        }
        if self.update_interval.as_ns() == 0 {
            let b = self.profile.balls().get(path).copied().unwrap_or(0);
            let r = whack_amount(b, f, self.floor);
            if r > 0 {
                self.removal.fill(0);
                if let Some(slot) = self.removal.get_mut(path) {
                    *slot = r;
                }
                self.redistribute();
            }
        } else if let Some(p) = self.pending.get_mut(path) {
            *p = p.max(f);
        }
    }
}

/// A [`PathState`] shared by the queue pairs of one NIC to one destination.
pub type SharedPathState = Rc<RefCell<PathState>>;
