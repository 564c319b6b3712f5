//! Whack-a-Mole: deterministic packet spraying over a discrete path profile (M. Luby and
//! J. Byers, "Whack-a-Mole: Deterministic Packet Spraying Across Multiple Network Paths",
//! arXiv:2509.18519).
//!
//! * **Profile** (paper §3): n paths ("bins") share m = 2^ℓ balls; path i holds b(i) balls,
//!   Σ b(i) = m, and gets the share b(i)/m of the packets. The cumulative counts
//!   c(i) = b(0) + … + b(i) are kept alongside ([`Profile`]).
//! * **Spray counter** (paper §4): an ℓ-bit counter j advances by one per packet sent; the packet
//!   goes to the path whose interval [c(i−1), c(i)) holds the ball x = θ(j), θ being the
//!   reversal of the ℓ low bits of j. Over any window of consecutive packets each path's count
//!   stays within ℓ = log2 m of its expected share ([`SprayCounter`]).
//! * **Shuffles with a per-source seed** (s_a, s_b), s_a ∈ [0, m), s_b odd (paper §4): method 1
//!   applies the linear map before the reversal, x = θ((s_a + s_b·j) mod m); method 2 after it,
//!   x = (s_a + s_b·θ(j)) mod m. Each source draws its seed from its own generator.
//! * **Whack** (paper §5–6): feedback on path i (an ECN mark, an RTT above the average, a loss)
//!   removes r = ⌊f·b(i)⌋ balls from it, f growing with the severity; the freed balls go to
//!   the other paths by one of the four update embodiments of the paper's §7 ([`Redistribution`]),
//!   with a persistent residual index ρ so that leftover balls rotate across updates.
//!
//! **Paths are entropies: path i is sent with entropy i** (`0 ≤ i < num_paths`). The paper's
//! paths are real paths, so by default (`routing = "path-index"`) the ns-3 fabric
//! helper turns on path-index routing and, on a fabric whose only multipath stage is at the
//! ToRs (a leaf-spine), sets `num_paths` to the number of equal-cost uplinks unless it is
//! given: path i is then uplink i, and a uniform profile is uniform on the links. We chose
//! this over discovering one entropy per distinct path under ECMP: discovery costs probes per
//! destination, and ECMP with a per-switch seed gives a different entropy-to-link map at each
//! ToR, while path-index routing names the path exactly and for free. On fabrics with more
//! than one multipath stage (a 3-tier fat-tree) the helper leaves ECMP hashing on and says
//! so; `routing = "ecmp"` keeps ECMP hashing everywhere (entropy i is then merely one of n
//! distinct hash inputs, as before).
//!
//! Reconstructions (the paper's text we have lacks its formulas; each is our documented,
//! tested choice):
//! * Shuffle formulas: the two maps above (with s_b odd, any 2^k consecutive counter values
//!   cover every residue mod 2^k, so method 1 keeps the plain counter's bound; method 2
//!   rotates each path's interval, which may split it in two, hence 2ℓ); the multiplier of
//!   method 2 follows the paper's wording ("a reverse binary operation … then a linear
//!   sequence generator"). Tested bounds: window deviation ≤ log2 m with no shuffle and
//!   method 1, ≤ 2·log2 m with method 2.
//! * The four embodiments (the paper's §7 as we have it keeps only their headings):
//!   1. [`Redistribution::EvenEach`]: each whacked bin in turn; its r balls are spread evenly
//!      over all n bins **including itself**, ⌊r/n⌋ each, the r mod n leftovers one each
//!      round-robin from ρ.
//!   2. [`Redistribution::EvenAll`]: all whacked bins at once; R = Σ r(i) spread evenly over
//!      all bins, leftovers round-robin from ρ.
//!   3. [`Redistribution::EvenOthers`]: R spread evenly over the bins **not** whacked (S'),
//!      leftovers round-robin from ρ skipping whacked bins. If every bin was whacked, as 2.
//!   4. [`Redistribution::Proportional`]: R spread over all bins in proportion to their
//!      counts after removal, ⌊R·b'(j)/(m−R)⌋ each; what rounding leaves is spread evenly over
//!      S' with leftovers round-robin from ρ. If S' is empty, over all bins.
//! * The whack amount is r = max(1, ⌊f·b(i)⌋), capped so that b(i) never drops below the floor
//!   `min_balls` (the "at least one ball" keeps a path probed); f = 0 removes nothing.
//! * Severities: `ecn_factor` for an ECN-marked ACK or a CNP, `rtt_factor` for an RTT sample
//!   above (1 + `rtt_margin`) × the running average RTT over all paths (EWMA, gain 1/8),
//!   `loss_factor` for a timeout (which names the oldest unacknowledged packet's path), for a
//!   gap in a path's sequence numbers and for a stalled path (below), `nack_factor` (default
//!   0) for a NACK: with spraying a NACK mostly reports reordering.
//! * **Per-path sequence numbers** (paper §5, `path_seq_loss`): the paper puts a path id and a
//!   per-path sequence number in each packet's header so that the destination can report
//!   "packets sent on this path before this one were lost". We keep the number at the sender
//!   instead (same information, no header change, wire sizes unchanged): each first
//!   transmission on path i takes the next number of path i, remembered in a 256-PSN window
//!   with its send time; an answer echoes PSN and send time, which name the transmission.
//!   Packets on one path arrive in order, so an answer for number k while numbers below k on
//!   that path are unanswered is a loss on path i. Only where every arrival is answered
//!   ([`super::SendCx::every_arrival_answered`]: IRN); retransmissions are not numbered (IRN
//!   leaves a second copy of a SACKed packet unanswered), and a transmission whose PSN is sent
//!   again before its answer is resolved as unknown, never as a loss.
//! * **Stalls** (`stall_factor`, default 4): a black-holed path returns nothing, so no gap is
//!   ever seen on it; a path whose oldest unanswered numbered packet is older than
//!   `stall_factor` × the average RTT (tested every 2 us, at a send) has its outstanding
//!   packets declared lost and is whacked with `loss_factor`.
//! * **Severity objective** (paper §6, `objective = "severity"`, off by default): per path a
//!   severity weight w(i), the moving average (gain 1/8) of the whack factor of each piece of
//!   feedback about it (0 for a clean answer); the paper's objective is to minimise
//!   Σ p(i)·w(i), "removing balls from paths with higher severity weights and redistributing
//!   them to lower-cost paths": freed balls go only to the paths below the profile-weighted
//!   mean weight (not whacked now), evenly, else by the embodiment. Measured on the fabric
//!   suites it concentrated traffic on one or two paths and was worse (rdma-lb.rst, open
//!   item), hence off.
//! * Batching: feedback within one `update_interval_ns` is gathered (per path, the most severe
//!   factor) and applied as one multi-bin update when the interval ends, so a burst of marks
//!   costs a path one whack per interval; 0 applies each feedback at once as a single-bin
//!   update. Intervals end lazily, at the first send or feedback at or after their end.
//! * Recovery (our addition): the paper's profile only moves when paths are whacked, so a
//!   healed path would never win its balls back. Every `recovery_interval_ns` the profile
//!   moves toward the target (uniform) profile: each bin above target gives
//!   ⌈g·excess⌉ balls, spread over the bins below target in proportion to their deficit,
//!   never past the target (g = `recovery_gain`). Which bins below target may receive is
//!   `recovery_rule`:
//!   - `"evidence"` (default): only a bin that, during the interval just ended, drew at least
//!     one clean acknowledgement (an ACK whose severity is 0: no ECN mark, RTT within the
//!     margin) and no whacking feedback. "Healed" is judged from what the path reports, not
//!     from elapsed time: a path still marked gets nothing back, and a path that carried no
//!     packets gives no evidence either way, so its share stays as learned. The floor
//!     `min_balls` (≥ 1, checked) is the probe share that keeps a drained path measured:
//!     with m = 1024 one ball is one packet in 1024. The excess given is capped at the
//!     receivers' deficit (the givers in index order).
//!   - `"periodic"`: every bin below target, whatever it reported (the rule before; a path
//!     whose feedback stops returns exactly to its target share, but so does a path that is
//!     still congested, between its whacks). Measured on the `rdma-lb-fabric` slow-spine
//!     table it kept the 25 Gbps path in every flow (p99 slowdown 35.7 vs 29.0 with
//!     `"evidence"`, ECMP 33.9; `experiments/whack-a-mole`).
//! * Profile scope (`profile_scope`): `"queue-pair"` (default) gives each queue pair its own
//!   profile, forgotten when it ends; `"destination"` shares one [`PathState`] (profile,
//!   target, pending whacks, RTT average) among a NIC's queue pairs to one destination and
//!   keeps it across them, the paper's "sender's view of its paths to a destination". Each
//!   queue pair keeps its own spray counter and seed. The NIC owns the shared states through a
//!   [`super::HostLbGroup`]. Measured, sharing did not help: on the slow-spine table most
//!   (source, destination) pairs see one or two flows, and under ECMP hashing an entropy
//!   names a different spine for each destination, so nothing carries across destinations;
//!   `experiments/whack-a-mole` has the numbers. Hence the default.
//! * The counter advances once per packet sent, retransmissions included (paper §4: "with each
//!   packet transmission"); it is never reset by profile updates (the rule is memoryless).
//!
//! * **Time-varying profiles** (paper §8; its two-path example's inputs, which its text lacks,
//!   are reconstructed from its results in the test
//!   `time_varying_profile_beats_every_fixed_one_in_the_two_path_example`): an
//!   optional `schedule` of steps `{ at_ns, weights }`, times measured from the queue pair's
//!   first data packet. When a step comes due, the profile becomes its weights rounded to m
//!   balls (largest remainder, ties to the lower index; a weight of 0 gives 0 balls), and that
//!   profile becomes the recovery target, so recovery returns to the schedule's current
//!   profile rather than to the uniform one. Whacks still apply between steps; the embodiments
//!   that spread over all bins may give balls to a bin the schedule set to 0 until recovery
//!   takes them back, and the floor `min_balls` limits whacks only, not the schedule. Steps
//!   apply lazily, at the first send or feedback at or after their time; ρ restarts at 0.
//!
//! Not implemented: periodic reseeding of (s_a, s_b).

use std::cell::RefCell;
use std::rc::Rc;

use serde::Deserialize;

use super::selector::{Feedback, FeedbackKind, PathSelector, SendCx};
use crate::algorithm::Algorithm;
use crate::error::{check_int, check_real, ConfigError};
use crate::rng::SimRng;
use crate::time::{SimDuration, SimTime};
use crate::units::Entropy;

/// Most steps a profile schedule may have.
pub const MAX_SCHEDULE_STEPS: usize = 64;

/// One step of a time-varying profile (paper §8): from `at_ns` after the queue pair's first
/// data packet, send over the paths in proportion to `weights` (one per path).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileStep {
    /// When the step starts, in ns after the first data packet.
    pub at_ns: u64,
    /// Relative share of each path (non-negative, not all zero).
    pub weights: Vec<f64>,
}

/// `weights` rounded to `m` balls: ⌊m·w/Σw⌋ each, then one more for the bins with the largest
/// remainders (ties to the lower index).
#[must_use]
pub fn balls_from_weights(weights: &[f64], log2_m: u32) -> Vec<u32> {
    let m = 1u32 << log2_m.clamp(0, 31);
    let sum: f64 = weights.iter().map(|w| w.max(0.0)).sum();
    if weights.is_empty() || sum <= 0.0 {
        return Profile::uniform(weights.len(), log2_m).balls().to_vec();
    }
    let exact: Vec<f64> = weights
        .iter()
        .map(|w| f64::from(m) * w.max(0.0) / sum)
        .collect();
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "each share lies in [0, m] and m ≤ 2^31"
    )]
    let mut balls: Vec<u32> = exact.iter().map(|e| e.floor() as u32).collect();
    let given: u64 = balls.iter().map(|&b| u64::from(b)).sum();
    let mut order: Vec<usize> = (0..balls.len()).collect();
    let rem = |i: usize| exact.get(i).map_or(0.0, |e| e - e.floor());
    order.sort_by(|&a, &b| rem(b).total_cmp(&rem(a)).then(a.cmp(&b)));
    let short = usize::try_from(u64::from(m).saturating_sub(given)).unwrap_or(0);
    for &i in order.iter().take(short) {
        if let Some(b) = balls.get_mut(i) {
            *b += 1;
        }
    }
    balls
}

/// How the spray counter is shuffled with the source's seed (s_a, s_b) (paper §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Shuffle {
    /// x = θ(j): the plain bit-reversal counter.
    #[serde(rename = "none")]
    None,
    /// Shuffle method 1: x = θ((s_a + s_b·j) mod m).
    #[serde(rename = "method-1")]
    Method1,
    /// Shuffle method 2: x = (s_a + s_b·θ(j)) mod m.
    #[serde(rename = "method-2")]
    Method2,
}

/// Where whacked balls go: the four profile-update embodiments of the paper's §7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Redistribution {
    /// Embodiment 1: each whacked bin in turn, its balls spread evenly over all bins
    /// (itself included), leftovers round-robin.
    EvenEach,
    /// Embodiment 2: all whacked balls at once, spread evenly over all bins.
    EvenAll,
    /// Embodiment 3: all whacked balls spread evenly over the bins not whacked.
    EvenOthers,
    /// Embodiment 4: all whacked balls spread over all bins in proportion to their counts,
    /// the rounding remainder evenly over the bins not whacked.
    Proportional,
}

/// Where whacked balls may go (paper §6, "Dynamic adjustment of path profiles").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Objective {
    /// Only the `redistribution` embodiment decides.
    None,
    /// The paper's §6 objective, minimise Σ p(i)·w(i) with w(i) a per-path severity weight: the
    /// freed balls go only to paths whose weight is below the profile-weighted mean
    /// W̄ = Σ p(j)·w(j) (and, with `even-others`, not whacked now), evenly; if no path is
    /// below the mean, `redistribution` decides.
    Severity,
}

/// Whose view of the paths a profile is (see the module doc, "Profile scope").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileScope {
    /// One profile per queue pair, forgotten when the queue pair ends.
    QueuePair,
    /// One profile per (sender NIC, destination), shared by the NIC's queue pairs to that
    /// destination and kept across them.
    Destination,
}

/// Which bins recovery hands balls back to (see the module doc, "Recovery").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryRule {
    /// Every bin below target, every recovery interval.
    Periodic,
    /// Only the bins below target that drew no whacking feedback and at least one clean
    /// acknowledgement during the last recovery interval: no traffic is no evidence.
    Evidence,
}

/// How the fabric routes path i (read by the ns-3 fabric helper, not by the selector).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathRouting {
    /// Path-index routing: on a fabric with one multipath stage (a leaf-spine) the ToR sends
    /// entropy i on its equal-cost uplink i, and `num_paths` defaults to their number.
    PathIndex,
    /// ECMP hashing: entropy i is one of `num_paths` hash inputs.
    Ecmp,
}

/// Parameters of Whack-a-Mole.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WhackAMoleConfig {
    /// n: paths, sent with entropies `0..num_paths`.
    pub num_paths: u32,
    /// ℓ: the profile has m = 2^ℓ balls (m ≥ n).
    pub log2_balls: u32,
    /// Counter shuffle.
    pub shuffle: Shuffle,
    /// Profile-update embodiment.
    pub redistribution: Redistribution,
    /// Floor: a whack never leaves a path with fewer balls.
    pub min_balls: u32,
    /// Whack factor for an ECN-marked ACK or a CNP.
    pub ecn_factor: f64,
    /// Whack factor for an RTT above (1 + `rtt_margin`) × the average.
    pub rtt_factor: f64,
    /// Margin over the average RTT that counts as "above average".
    pub rtt_margin: f64,
    /// Whack factor for a retransmission timeout.
    pub loss_factor: f64,
    /// Whack factor for a NACK.
    pub nack_factor: f64,
    /// Feedback is gathered over this interval and applied as one update; 0 = at once.
    pub update_interval_ns: u64,
    /// The profile moves toward the target once per this interval; 0 = never.
    pub recovery_interval_ns: u64,
    /// Fraction of each path's excess over target given back per recovery step.
    pub recovery_gain: f64,
    /// Which bins recovery gives balls back to.
    pub recovery_rule: RecoveryRule,
    /// Whether each queue pair has its own profile or shares its NIC's profile for the
    /// destination.
    pub profile_scope: ProfileScope,
    /// Time-varying profile (paper §8): steps in strictly increasing `at_ns`; empty = the
    /// uniform profile throughout.
    pub schedule: Vec<ProfileStep>,
    /// How the fabric routes path i (the ns-3 fabric helper wires it; see [`PathRouting`]).
    pub routing: PathRouting,
    /// Per-path sequence numbers (paper §5): a gap in what a path delivered is a loss on that
    /// path, whacked with `loss_factor`. Only on a transport that answers every arrival.
    pub path_seq_loss: bool,
    /// A path whose oldest unanswered packet is older than this multiple of the average RTT
    /// has stalled (a black hole returns nothing to count gaps from): a loss on that path.
    /// 0 = off. Only on a transport that answers every arrival.
    pub stall_factor: f64,
    /// Where whacked balls may go (paper §6).
    pub objective: Objective,
}

impl Default for WhackAMoleConfig {
    fn default() -> Self {
        WhackAMoleConfig {
            num_paths: 8,
            log2_balls: 10,
            shuffle: Shuffle::Method1,
            redistribution: Redistribution::EvenOthers,
            min_balls: 1,
            ecn_factor: 0.125,
            rtt_factor: 0.0625,
            rtt_margin: 0.5,
            loss_factor: 0.5,
            nack_factor: 0.0,
            update_interval_ns: 10_000,
            recovery_interval_ns: 100_000,
            recovery_gain: 0.25,
            recovery_rule: RecoveryRule::Evidence,
            profile_scope: ProfileScope::QueuePair,
            schedule: Vec::new(),
            routing: PathRouting::PathIndex,
            path_seq_loss: true,
            stall_factor: 4.0,
            objective: Objective::None,
        }
    }
}

impl WhackAMoleConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// The first parameter out of range, with its allowed range.
    pub fn validate(&self, algorithm: Algorithm) -> Result<(), ConfigError> {
        check_int(algorithm, "num_paths", self.num_paths.into(), 1, 1024)?;
        check_int(algorithm, "log2_balls", self.log2_balls.into(), 1, 16)?;
        let m = 1u64 << self.log2_balls;
        if m < u64::from(self.num_paths) {
            return Err(ConfigError::parameter(
                algorithm,
                "log2_balls",
                format!(
                    "2^log2_balls = {m} balls must be at least num_paths = {}",
                    self.num_paths
                ),
            ));
        }
        let per_path = m / u64::from(self.num_paths);
        check_int(algorithm, "min_balls", self.min_balls.into(), 0, per_path)?;
        if self.recovery_rule == RecoveryRule::Evidence
            && self.recovery_interval_ns > 0
            && self.min_balls == 0
        {
            return Err(ConfigError::parameter(
                algorithm,
                "min_balls",
                "must be at least 1 with recovery_rule = \"evidence\" (a path with no balls \
                 carries no packets, so it could never show the clean ACKs that recover it)"
                    .to_owned(),
            ));
        }
        for (name, f) in [
            ("ecn_factor", self.ecn_factor),
            ("rtt_factor", self.rtt_factor),
            ("loss_factor", self.loss_factor),
            ("nack_factor", self.nack_factor),
            ("recovery_gain", self.recovery_gain),
        ] {
            check_real(algorithm, name, f, 0.0, 1.0)?;
        }
        check_real(algorithm, "rtt_margin", self.rtt_margin, 0.0, 100.0)?;
        check_real(algorithm, "stall_factor", self.stall_factor, 0.0, 1_000.0)?;
        check_int(
            algorithm,
            "update_interval_ns",
            self.update_interval_ns,
            0,
            u64::MAX / 4,
        )?;
        check_int(
            algorithm,
            "recovery_interval_ns",
            self.recovery_interval_ns,
            0,
            u64::MAX / 4,
        )?;
        self.validate_schedule(algorithm)
    }

    fn validate_schedule(&self, algorithm: Algorithm) -> Result<(), ConfigError> {
        let bad = |msg: String| Err(ConfigError::parameter(algorithm, "schedule", msg));
        if self.schedule.len() > MAX_SCHEDULE_STEPS {
            return bad(format!(
                "at most {MAX_SCHEDULE_STEPS} steps, got {}",
                self.schedule.len()
            ));
        }
        let mut last: Option<u64> = None;
        for (k, step) in self.schedule.iter().enumerate() {
            if last.is_some_and(|t| step.at_ns <= t) {
                return bad(format!(
                    "step {k}: at_ns = {} must be after the previous step's",
                    step.at_ns
                ));
            }
            last = Some(step.at_ns);
            if step.at_ns > u64::MAX / 4 {
                return bad(format!("step {k}: at_ns = {} is too large", step.at_ns));
            }
            if step.weights.len() != self.num_paths as usize {
                return bad(format!(
                    "step {k}: {} weights for num_paths = {}",
                    step.weights.len(),
                    self.num_paths
                ));
            }
            if step.weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
                return bad(format!("step {k}: weights must be finite and >= 0"));
            }
            if step.weights.iter().all(|w| *w == 0.0) {
                return bad(format!("step {k}: weights are all 0"));
            }
        }
        Ok(())
    }
}

/// θ(j, ℓ): the ℓ low bits of `j`, reversed (1 ≤ ℓ ≤ 32).
#[must_use]
pub fn bit_reverse(j: u32, log2_m: u32) -> u32 {
    j.reverse_bits()
        .checked_shr(32u32.saturating_sub(log2_m))
        .unwrap_or(0)
}

/// The spray counter and the source's seed (paper §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SprayCounter {
    log2_m: u32,
    mask: u32,
    shuffle: Shuffle,
    s_a: u32,
    s_b: u32,
    j: u32,
}

impl SprayCounter {
    /// A counter at 0 with the seed (s_a, s_b); `s_a` is reduced mod m and `s_b` made odd.
    #[must_use]
    pub fn with_seed(log2_m: u32, shuffle: Shuffle, s_a: u32, s_b: u32) -> Self {
        let log2_m = log2_m.clamp(1, 31);
        let mask = (1u32 << log2_m) - 1;
        SprayCounter {
            log2_m,
            mask,
            shuffle,
            s_a: s_a & mask,
            s_b: (s_b | 1) & mask,
            j: 0,
        }
    }

    /// A counter with a seed drawn uniformly: s_a ∈ [0, m), s_b odd in [1, m).
    pub fn random(log2_m: u32, shuffle: Shuffle, rng: &mut SimRng) -> Self {
        let m = 1u32 << log2_m.clamp(1, 31);
        let s_a = rng.below(m);
        let s_b = 2 * rng.below(m / 2) + 1;
        SprayCounter::with_seed(log2_m, shuffle, s_a, s_b)
    }

    /// The ball that counter value `j` selects.
    #[must_use]
    pub fn ball(&self, j: u32) -> u32 {
        let m = self.mask;
        match self.shuffle {
            Shuffle::None => bit_reverse(j & m, self.log2_m),
            Shuffle::Method1 => bit_reverse(
                self.s_a.wrapping_add(self.s_b.wrapping_mul(j)) & m,
                self.log2_m,
            ),
            Shuffle::Method2 => {
                self.s_a
                    .wrapping_add(self.s_b.wrapping_mul(bit_reverse(j & m, self.log2_m)))
                    & m
            }
        }
    }

    /// The ball for the next packet; advances the counter.
    pub fn next_ball(&mut self) -> u32 {
        let x = self.ball(self.j);
        self.j = (self.j + 1) & self.mask;
        x
    }
}

/// A discrete path profile: n bins sharing m = 2^ℓ balls, with the cumulative counts and the
/// persistent residual index ρ (paper §3 and §7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    balls: Vec<u32>,
    cum: Vec<u32>,
    m: u32,
    residual: usize,
}

impl Profile {
    /// m = 2^`log2_m` balls over `n` bins as evenly as possible: ⌊m/n⌋ each, one more for
    /// each of the first m mod n bins.
    #[must_use]
    pub fn uniform(n: usize, log2_m: u32) -> Self {
        let n = n.max(1);
        let m = 1u32 << log2_m.clamp(0, 31);
        let n32 = u32::try_from(n).unwrap_or(u32::MAX);
        let (q, rem) = (m / n32, m % n32);
        let balls = (0..n32).map(|i| q + u32::from(i < rem)).collect();
        Profile::from_balls(balls, log2_m).unwrap_or_else(|| Profile {
            balls: vec![m],
            cum: vec![m],
            m,
            residual: 0,
        })
    }

    /// A profile with the given counts, or `None` if there are none or they do not sum to
    /// 2^`log2_m`.
    #[must_use]
    pub fn from_balls(balls: Vec<u32>, log2_m: u32) -> Option<Self> {
        let m = 1u32.checked_shl(log2_m)?;
        if balls.is_empty() || balls.iter().map(|&b| u64::from(b)).sum::<u64>() != u64::from(m) {
            return None;
        }
        let mut p = Profile {
            cum: vec![0; balls.len()],
            balls,
            m,
            residual: 0,
        };
        p.recompute();
        Some(p)
    }

    /// b(i) for every bin.
    #[must_use]
    pub fn balls(&self) -> &[u32] {
        &self.balls
    }

    /// c(i) = b(0) + … + b(i) for every bin.
    #[must_use]
    pub fn cumulative(&self) -> &[u32] {
        &self.cum
    }

    /// m.
    #[must_use]
    pub fn total(&self) -> u32 {
        self.m
    }

    /// ρ, the next bin to receive a leftover ball.
    #[must_use]
    pub fn residual_index(&self) -> usize {
        self.residual
    }

    /// The smallest i with c(i−1) ≤ x < c(i).
    #[must_use]
    pub fn path_of(&self, x: u32) -> usize {
        self.cum
            .partition_point(|&c| c <= x)
            .min(self.balls.len().saturating_sub(1))
    }

    /// Replaces the counts by `balls` (same length, summing to m) without allocating;
    /// returns whether it did (false leaves the profile as it was). ρ restarts at 0.
    pub fn set_balls(&mut self, balls: &[u32]) -> bool {
        let sum: u64 = balls.iter().map(|&b| u64::from(b)).sum();
        if balls.len() != self.balls.len() || sum != u64::from(self.m) {
            return false;
        }
        self.balls.copy_from_slice(balls);
        self.residual = 0;
        self.recompute();
        true
    }

    fn recompute(&mut self) {
        let mut acc = 0u32;
        for (c, &b) in self.cum.iter_mut().zip(&self.balls) {
            acc = acc.saturating_add(b);
            *c = acc;
        }
    }

    /// Removes `r` balls (at most all) from bin `i`; returns how many were removed.
    fn take_one(&mut self, i: usize, r: u32) -> u64 {
        self.balls.get_mut(i).map_or(0, |b| {
            let r = r.min(*b);
            *b -= r;
            u64::from(r)
        })
    }

    /// Removes `removal[i]` (at most all) from every bin; returns the total removed.
    fn take(&mut self, removal: &[u32]) -> u64 {
        self.balls
            .iter_mut()
            .zip(removal)
            .map(|(b, &r)| {
                let r = r.min(*b);
                *b -= r;
                u64::from(r)
            })
            .sum()
    }

    /// Gives `left` balls one at a time to bins round-robin from ρ, skipping bins for which
    /// `eligible(index, current count)` is false; ρ ends after the last bin served.
    fn round_robin(&mut self, mut left: u64, mut eligible: impl FnMut(usize, u32) -> bool) {
        let n = self.balls.len();
        if n == 0 {
            return;
        }
        // Callers guarantee enough eligible room; the step bound only rules out a hang.
        let mut steps = (left + 1).saturating_mul(n as u64);
        while left > 0 && steps > 0 {
            let i = self.residual % n;
            if let Some(b) = self.balls.get_mut(i) {
                if eligible(i, *b) {
                    *b += 1;
                    left -= 1;
                }
            }
            self.residual = (i + 1) % n;
            steps -= 1;
        }
        if left > 0 {
            debug_assert!(false, "whack-a-mole: {left} balls found no bin");
            if let Some(b) = self.balls.get_mut(self.residual % n) {
                *b += u32::try_from(left).unwrap_or(0);
            }
        }
    }

    /// Spreads `total` balls evenly over the bins `eligible(i)` selects (over all bins if it
    /// selects none): the quotient to each, the remainder round-robin from ρ.
    fn spread_even(&mut self, total: u64, eligible: impl Fn(usize) -> bool) {
        let k = (0..self.balls.len()).filter(|&i| eligible(i)).count() as u64;
        let all = k == 0;
        let k = if all { self.balls.len() as u64 } else { k };
        if k == 0 {
            return;
        }
        let q = u32::try_from(total / k).unwrap_or(0);
        for (i, b) in self.balls.iter_mut().enumerate() {
            if all || eligible(i) {
                *b += q;
            }
        }
        self.round_robin(total % k, |i, _| all || eligible(i));
    }

    /// Removes `removal[i]` balls from each bin i (at most all it has) and redistributes them
    /// by embodiment `how`. Keeps Σ b = m; bins only lose what `removal` says.
    pub fn apply(&mut self, removal: &[u32], how: Redistribution) {
        let r_of = |i: usize| removal.get(i).copied().unwrap_or(0);
        match how {
            Redistribution::EvenEach => {
                for (i, &r) in removal.iter().enumerate() {
                    if r > 0 {
                        let taken = self.take_one(i, r);
                        self.spread_even(taken, |_| true);
                    }
                }
            }
            Redistribution::EvenAll => {
                let total = self.take(removal);
                self.spread_even(total, |_| true);
            }
            Redistribution::EvenOthers => {
                let total = self.take(removal);
                self.spread_even(total, |j| r_of(j) == 0);
            }
            Redistribution::Proportional => {
                let total = self.take(removal);
                // m − R balls remain; if none do, nothing is proportional: all go evenly.
                let rest = u64::from(self.m).saturating_sub(total);
                let mut given = 0u64;
                for b in &mut self.balls {
                    let add = (total * u64::from(*b)).checked_div(rest).unwrap_or(0);
                    given += add;
                    *b += u32::try_from(add).unwrap_or(0);
                }
                let none_left = rest == 0;
                self.spread_even(total.saturating_sub(given), |j| !none_left && r_of(j) == 0);
            }
        }
        self.recompute();
    }

    /// One recovery step toward `target` (same length and total): every bin above target
    /// gives ⌈gain·excess⌉ balls, which go to the bins below target in proportion to their
    /// deficit, never past the target. Returns whether anything moved.
    pub fn relax_toward(&mut self, target: &[u32], gain: f64) -> bool {
        self.relax_toward_where(target, gain, |_| true)
    }

    /// [`Profile::relax_toward`] giving only to the bins `receives(i)` selects: the bins above
    /// target give ⌈gain·excess⌉ each (in index order, at most the selected bins' total
    /// deficit), spread over the selected bins below target in proportion to their deficit.
    pub fn relax_toward_where(
        &mut self,
        target: &[u32],
        gain: f64,
        receives: impl Fn(usize) -> bool,
    ) -> bool {
        let gain = gain.clamp(0.0, 1.0);
        let give_of = |b: u32, t: u32| -> u32 {
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "gain in [0, 1] keeps the product in [0, excess]"
            )]
            let g = ((gain * f64::from(b - t)).ceil() as u32).min(b - t);
            g
        };
        let mut deficit = 0u64;
        for (i, (&b, &t)) in self.balls.iter().zip(target).enumerate() {
            if b < t && receives(i) {
                deficit += u64::from(t - b);
            }
        }
        let mut budget = deficit;
        let mut moved = 0u64;
        for (b, &t) in self.balls.iter_mut().zip(target) {
            if *b > t && budget > 0 {
                let give = u64::from(give_of(*b, t)).min(budget);
                *b -= u32::try_from(give).unwrap_or(0);
                budget -= give;
                moved += give;
            }
        }
        if moved == 0 {
            return false;
        }
        let mut given = 0u64;
        for (i, (b, &t)) in self.balls.iter_mut().zip(target).enumerate() {
            if *b < t && receives(i) {
                let room = u64::from(t - *b);
                let add = (moved * room).checked_div(deficit).unwrap_or(0).min(room);
                given += add;
                *b += u32::try_from(add).unwrap_or(0);
            }
        }
        self.round_robin(moved.saturating_sub(given), |i, b| {
            receives(i) && target.get(i).is_some_and(|&t| b < t)
        });
        self.recompute();
        true
    }
}

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
/// NIC's queue pairs to the destination ([`ProfileScope`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PathState {
    profile: Profile,
    target: Vec<u32>,
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
                        let moved = match self.recovery_rule {
                            RecoveryRule::Periodic => {
                                self.profile.relax_toward(&self.target, self.recovery_gain)
                            }
                            RecoveryRule::Evidence => {
                                let (fed, clean) = (&self.fed_back, &self.clean);
                                self.profile.relax_toward_where(
                                    &self.target,
                                    self.recovery_gain,
                                    |i| {
                                        !fed.get(i).copied().unwrap_or(false)
                                            && clean.get(i).copied().unwrap_or(false)
                                    },
                                )
                            }
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
                return;
            }
        }
        self.profile.apply(&self.removal, self.redistribution);
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
    fn path_for(&mut self, now: SimTime, ball: u32) -> usize {
        if self.started.is_none() {
            self.started = Some(now);
        }
        self.advance(now);
        self.profile.path_of(ball)
    }

    /// Learns from feedback about a packet sent on `fb.entropy`.
    fn feedback(&mut self, fb: &Feedback) {
        self.advance(fb.now);
        let f = self.severity(fb);
        let path = usize::from(fb.entropy.0);
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
    fn path_loss(&mut self, now: SimTime, path: usize) {
        self.advance(now);
        self.weigh(path, self.loss_factor);
        self.whack(path, self.loss_factor);
    }

    /// The running average RTT over all paths.
    fn rtt_avg(&self) -> Option<f64> {
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

/// A queue pair's path state: its own (boxed: one allocation per queue pair, none per packet),
/// or its NIC's for the destination.
#[derive(Debug, Clone, PartialEq)]
enum StateCell {
    Own(Box<PathState>),
    Shared(SharedPathState),
}

/// Whack-a-Mole for one queue pair: its own spray counter (seeded per queue pair) over a
/// profile that is its own or shared ([`ProfileScope`]).
#[derive(Debug, Clone, PartialEq)]
pub struct WhackAMole {
    counter: SprayCounter,
    state: StateCell,
    /// Boxed, so that it does not widen every algorithm's [`super::HostSelector`] (one allocation per
    /// queue pair, none per packet).
    seqs: Box<PathSeqs>,
}

/// Packets remembered by PSN for the per-path sequence numbers (IRN's default BDP cap is 104
/// packets; an answer whose packet has left the window is not matched).
const SEQ_WINDOW: usize = 256;
/// Send times remembered per path (by per-path sequence number), for the stall test.
const SEND_TIMES: usize = 32;
/// How often the stall test runs over the paths.
const STALL_CHECK: SimDuration = SimDuration::from_ns(2_000);

/// One transmission: its PSN, send time, path and per-path sequence number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct SentRec {
    psn: u32,
    sent: SimTime,
    path: u16,
    seq: u32,
    valid: bool,
    answered: bool,
}

/// Per-path sequence numbers (paper §5), kept by the sender: each transmission on path i gets
/// the next number of path i, remembered with its PSN and send time; the receiver's answer
/// echoes PSN and send time, which name the transmission. Packets on one path arrive in the
/// order they were sent, so an answer for number k on path i while numbers below k on path i
/// are unanswered is a loss on path i. Only valid where every arrival is answered
/// ([`SendCx::every_arrival_answered`]). Allocated once per queue pair.
#[derive(Debug, Clone, PartialEq)]
struct PathSeqs {
    window: Vec<SentRec>,
    next_seq: Vec<u32>,
    /// Per path, the first number not resolved (answered, declared lost, or hidden by a
    /// retransmission of its PSN).
    expected: Vec<u32>,
    /// Per path, bit j: number `expected + j` is resolved.
    resolved: Vec<u64>,
    /// Per path, SEND_TIMES send times by number modulo SEND_TIMES.
    send_times: Vec<SimTime>,
    /// Per path, the send time of number `expected` (exact while it is unanswered and was
    /// sent when nothing else was outstanding; else from `send_times`, or the oldest time
    /// still there, which errs towards a younger packet: never a false stall).
    oldest_sent: Vec<SimTime>,
    next_check: SimTime,
    active: bool,
    path_seq_loss: bool,
    stall_factor: f64,
    losses: u64,
    stalls: u64,
}

impl PathSeqs {
    fn new(config: &WhackAMoleConfig) -> Self {
        let n = usize::try_from(config.num_paths.clamp(1, 1 << 16)).unwrap_or(1);
        PathSeqs {
            window: vec![SentRec::default(); SEQ_WINDOW],
            next_seq: vec![0; n],
            expected: vec![0; n],
            resolved: vec![0; n],
            send_times: vec![SimTime::ZERO; n * SEND_TIMES],
            oldest_sent: vec![SimTime::ZERO; n],
            next_check: SimTime::ZERO,
            active: false,
            path_seq_loss: config.path_seq_loss,
            stall_factor: config.stall_factor,
            losses: 0,
            stalls: 0,
        }
    }

    fn sent(&mut self, cx: &SendCx, path: usize) {
        self.active = cx.every_arrival_answered && (self.path_seq_loss || self.stall_factor > 0.0);
        if !self.active || cx.retransmission {
            // Retransmissions are not numbered: IRN leaves a second copy of a SACKed packet
            // unanswered (within its NACK interval), which would read as a gap. The original's
            // record stays, so its answer, if it comes, still counts.
            return;
        }
        let Some(next) = self.next_seq.get_mut(path) else {
            return;
        };
        let seq = *next;
        *next = next.wrapping_add(1);
        if self.expected.get(path) == Some(&seq) {
            if let Some(t) = self.oldest_sent.get_mut(path) {
                *t = cx.now; // nothing was outstanding on this path
            }
        }
        if let Some(t) = self
            .send_times
            .get_mut(path * SEND_TIMES + seq as usize % SEND_TIMES)
        {
            *t = cx.now;
        }
        let slot = cx.psn.0 as usize % SEQ_WINDOW;
        let old = self.window.get(slot).copied().unwrap_or_default();
        if old.valid && !old.answered && old.psn == cx.psn.0 {
            // A new transmission of this PSN (a go-back) hides the old one's answer: resolve
            // the old one as unknown, never as a loss. (A different PSN in the slot is the
            // window wrapping, SEQ_WINDOW packets later: its number stays unresolved.)
            self.resolve(usize::from(old.path), old.seq, false);
        }
        if let Some(rec) = self.window.get_mut(slot) {
            *rec = SentRec {
                psn: cx.psn.0,
                sent: cx.now,
                path: u16::try_from(path).unwrap_or(u16::MAX),
                seq,
                valid: true,
                answered: false,
            };
        }
    }

    /// Marks number `seq` of `path` resolved; with `answer`, the numbers below it still
    /// unresolved are lost (packets on one path arrive in order). Returns how many were lost.
    fn resolve(&mut self, path: usize, seq: u32, answer: bool) -> u64 {
        let (Some(exp), Some(bits)) = (
            self.expected.get(path).copied(),
            self.resolved.get(path).copied(),
        ) else {
            return 0;
        };
        if seq < exp {
            return 0;
        }
        let mut lost = 0u64;
        let mut exp = exp;
        let mut bits = bits;
        if answer {
            // Everything below seq not yet resolved is lost.
            let below = seq - exp;
            if below >= 64 {
                lost += u64::from(below - 64) + u64::from(64 - bits.count_ones());
                exp = seq;
                bits = 0;
            } else {
                let mask = (1u64 << below) - 1;
                lost += u64::from(below - (bits & mask).count_ones());
                bits |= mask;
            }
        }
        let off = seq - exp;
        if off >= 64 {
            // Far ahead (a go-back resolving a stale number): slide the window up to it.
            exp = seq - 63;
            bits = 0;
        }
        bits |= 1u64 << (seq - exp);
        // Advance over the resolved prefix.
        let run = bits.trailing_ones();
        if run == 64 {
            exp += 64;
            bits = 0;
        } else if run > 0 {
            exp += run;
            bits >>= run;
        }
        if let (Some(e), Some(b)) = (self.expected.get_mut(path), self.resolved.get_mut(path)) {
            *e = exp;
            *b = bits;
        }
        let next = self.next_seq.get(path).copied().unwrap_or(0);
        if exp < next {
            let known = if next - exp <= SEND_TIMES as u32 {
                exp
            } else {
                next - SEND_TIMES as u32
            };
            if let (Some(o), Some(&t)) = (
                self.oldest_sent.get_mut(path),
                self.send_times
                    .get(path * SEND_TIMES + known as usize % SEND_TIMES),
            ) {
                *o = t;
            }
        }
        lost
    }

    /// The path that lost packets according to this answer, if any.
    fn answered(&mut self, fb: &Feedback) -> Option<usize> {
        if !self.active || !matches!(fb.kind, FeedbackKind::Ack | FeedbackKind::Nack) {
            return None;
        }
        let rtt = fb.rtt?;
        let slot = fb.psn.0 as usize % SEQ_WINDOW;
        let rec = *self.window.get(slot)?;
        if !rec.valid
            || rec.answered
            || rec.psn != fb.psn.0
            || rec.sent + rtt != fb.now
            || rec.path != fb.entropy.0
        {
            return None; // another transmission of that PSN, a duplicate, or out of the window
        }
        if let Some(r) = self.window.get_mut(slot) {
            r.answered = true;
        }
        let path = usize::from(rec.path);
        let lost = self.resolve(path, rec.seq, true);
        (self.path_seq_loss && lost > 0).then(|| {
            self.losses += lost;
            path
        })
    }

    /// Paths whose oldest unanswered packet is older than `stall_factor` × `rtt_avg_ns`; each
    /// found has its outstanding numbers declared lost. Calls `lost` per path.
    fn check_stalls(&mut self, now: SimTime, rtt_avg_ns: Option<f64>, mut lost: impl FnMut(usize)) {
        if !self.active || self.stall_factor <= 0.0 || now < self.next_check {
            return;
        }
        self.next_check = now + STALL_CHECK;
        let Some(avg) = rtt_avg_ns else {
            return;
        };
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a positive RTT multiple far below 2^64 ns"
        )]
        let limit = SimDuration::from_ns((self.stall_factor * avg).round() as u64);
        for (path, (exp, &next)) in self.expected.iter_mut().zip(&self.next_seq).enumerate() {
            if *exp >= next {
                continue;
            }
            let sent = self.oldest_sent.get(path).copied().unwrap_or(now);
            if now.saturating_since(sent) > limit {
                self.stalls += 1;
                *exp = next;
                if let Some(b) = self.resolved.get_mut(path) {
                    *b = 0;
                }
                lost(path);
            }
        }
    }
}

impl WhackAMole {
    /// A uniform profile of its own and a counter seeded from `rng`.
    pub fn new(config: &WhackAMoleConfig, rng: &mut SimRng) -> Self {
        WhackAMole {
            counter: SprayCounter::random(config.log2_balls.clamp(1, 16), config.shuffle, rng),
            state: StateCell::Own(Box::new(PathState::new(config))),
            seqs: Box::new(PathSeqs::new(config)),
        }
    }

    /// A counter seeded from `rng` over the shared `state` (made by [`PathState::new`] from
    /// the same `config`).
    pub fn with_shared(
        config: &WhackAMoleConfig,
        state: SharedPathState,
        rng: &mut SimRng,
    ) -> Self {
        WhackAMole {
            counter: SprayCounter::random(config.log2_balls.clamp(1, 16), config.shuffle, rng),
            state: StateCell::Shared(state),
            seqs: Box::new(PathSeqs::new(config)),
        }
    }

    /// Runs `f` on the path state. A shared state is never borrowed twice (one call at a
    /// time, no re-entry); if it were, `fallback` is returned and nothing changes.
    fn with_state<T>(&mut self, fallback: T, f: impl FnOnce(&mut PathState) -> T) -> T {
        match &mut self.state {
            StateCell::Own(s) => f(s),
            StateCell::Shared(s) => match s.try_borrow_mut() {
                Ok(mut s) => f(&mut s),
                Err(_) => fallback,
            },
        }
    }

    /// The stall test, then the path of the packet that draws `ball`, recorded with its
    /// per-path sequence number.
    fn send_on(s: &mut PathState, seqs: &mut PathSeqs, cx: &SendCx, ball: u32) -> usize {
        seqs.check_stalls(cx.now, s.rtt_avg(), |path| s.path_loss(cx.now, path));
        let path = s.path_for(cx.now, ball);
        seqs.sent(cx, path);
        path
    }

    /// Losses found by the per-path sequence numbers, and stalls, so far.
    #[must_use]
    pub fn path_losses(&self) -> (u64, u64) {
        (self.seqs.losses, self.seqs.stalls)
    }

    /// A copy of the current profile.
    #[must_use]
    pub fn profile(&self) -> Profile {
        match &self.state {
            StateCell::Own(s) => s.profile.clone(),
            StateCell::Shared(s) => s.borrow().profile.clone(),
        }
    }

    /// The profile recovery returns to.
    #[must_use]
    pub fn target(&self) -> Vec<u32> {
        match &self.state {
            StateCell::Own(s) => s.target.clone(),
            StateCell::Shared(s) => s.borrow().target.clone(),
        }
    }
}

impl PathSelector for WhackAMole {
    fn next_entropy(&mut self, cx: &SendCx, _rng: &mut SimRng) -> Entropy {
        let ball = self.counter.next_ball();
        let seqs = &mut self.seqs;
        let path = match &mut self.state {
            StateCell::Own(s) => Self::send_on(s, seqs, cx, ball),
            StateCell::Shared(s) => match s.try_borrow_mut() {
                Ok(mut s) => Self::send_on(&mut s, seqs, cx, ball),
                Err(_) => 0,
            },
        };
        Entropy(u16::try_from(path).unwrap_or(0))
    }

    fn on_feedback(&mut self, fb: &Feedback, _rng: &mut SimRng) {
        let lost = self.seqs.answered(fb);
        self.with_state((), |s| {
            s.feedback(fb);
            if let Some(path) = lost {
                s.path_loss(fb.now, path);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Psn;
    use proptest::prelude::*;

    const ALL_HOW: [Redistribution; 4] = [
        Redistribution::EvenEach,
        Redistribution::EvenAll,
        Redistribution::EvenOthers,
        Redistribution::Proportional,
    ];

    fn profile(balls: &[u32], log2_m: u32) -> Profile {
        Profile::from_balls(balls.to_vec(), log2_m).unwrap()
    }

    #[test]
    fn bit_reversal_of_the_low_bits() {
        assert_eq!(bit_reverse(0b001, 3), 0b100);
        assert_eq!(bit_reverse(0b110, 3), 0b011);
        assert_eq!(bit_reverse(0b0001, 4), 0b1000);
        assert_eq!(bit_reverse(0b1011, 4), 0b1101);
        assert_eq!(bit_reverse(1, 16), 1 << 15);
        // The plain counter visits balls in van der Corput order: 0, 4, 2, 6, 1, 5, 3, 7.
        let c = SprayCounter::with_seed(3, Shuffle::None, 0, 1);
        let order: Vec<u32> = (0..8).map(|j| c.ball(j)).collect();
        assert_eq!(order, vec![0, 4, 2, 6, 1, 5, 3, 7]);
    }

    #[test]
    fn every_shuffle_is_a_permutation_of_the_balls() {
        let mut rng = SimRng::new(1);
        for shuffle in [Shuffle::None, Shuffle::Method1, Shuffle::Method2] {
            for log2_m in 1..=10 {
                let c = SprayCounter::random(log2_m, shuffle, &mut rng);
                let mut seen: Vec<u32> = (0..1 << log2_m).map(|j| c.ball(j)).collect();
                seen.sort_unstable();
                assert_eq!(seen, (0..1 << log2_m).collect::<Vec<u32>>(), "{shuffle:?}");
            }
        }
    }

    #[test]
    fn seeds_are_in_range_and_differ_across_sources() {
        let mut rng = SimRng::new(2);
        let seeds: Vec<(u32, u32)> = (0..32)
            .map(|_| {
                let c = SprayCounter::random(10, Shuffle::Method1, &mut rng);
                assert!(c.s_a < 1024 && c.s_b < 1024 && c.s_b % 2 == 1);
                (c.s_a, c.s_b)
            })
            .collect();
        let mut d = seeds.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), seeds.len());
        // m = 2: s_b can only be 1.
        let c = SprayCounter::random(1, Shuffle::Method1, &mut rng);
        assert_eq!(c.s_b, 1);
    }

    #[test]
    fn path_of_uses_the_cumulative_counts() {
        let p = profile(&[2, 3, 3], 3);
        assert_eq!(p.cumulative(), &[2, 5, 8]);
        let paths: Vec<usize> = (0..8).map(|x| p.path_of(x)).collect();
        assert_eq!(paths, vec![0, 0, 1, 1, 1, 2, 2, 2]);
        // Empty bins are never chosen.
        let p = profile(&[0, 4, 0, 4], 3);
        let paths: Vec<usize> = (0..8).map(|x| p.path_of(x)).collect();
        assert_eq!(paths, vec![1, 1, 1, 1, 3, 3, 3, 3]);
    }

    #[test]
    fn uniform_profile_spreads_the_remainder_over_the_first_bins() {
        let p = Profile::uniform(3, 4);
        assert_eq!(p.balls(), &[6, 5, 5]);
        assert_eq!(p.total(), 16);
        assert!(
            Profile::from_balls(vec![1, 2], 2).is_none(),
            "sums to 3, not 4"
        );
    }

    #[test]
    fn one_period_sends_exactly_the_profile() {
        let p = profile(&[5, 0, 8, 3], 4);
        let mut rng = SimRng::new(3);
        for shuffle in [Shuffle::None, Shuffle::Method1, Shuffle::Method2] {
            let mut c = SprayCounter::random(4, shuffle, &mut rng);
            // Any 16 consecutive packets (here from counter 5) match the profile exactly.
            for _ in 0..5 {
                c.next_ball();
            }
            let mut counts = [0u32; 4];
            for _ in 0..16 {
                counts[p.path_of(c.next_ball())] += 1;
            }
            assert_eq!(counts, [5, 0, 8, 3], "{shuffle:?}");
        }
    }

    #[test]
    fn embodiment_1_spreads_over_all_with_rotating_residuals() {
        let mut p = profile(&[4, 4, 4, 4], 4);
        // Whack bin 1 by 3: ⌊3/4⌋ = 0 each, 3 leftovers to bins 0, 1, 2 from ρ = 0.
        p.apply(&[0, 3, 0, 0], Redistribution::EvenEach);
        assert_eq!(p.balls(), &[5, 2, 5, 4]);
        assert_eq!(p.residual_index(), 3);
        // Again by 1: the leftover goes to bin 3 (ρ persists), then ρ wraps to 0.
        p.apply(&[0, 1, 0, 0], Redistribution::EvenEach);
        assert_eq!(p.balls(), &[5, 1, 5, 5]);
        assert_eq!(p.residual_index(), 0);
        // 5 balls from bin 0: 1 to each (itself included), 1 leftover at ρ = 0.
        p.apply(&[5, 0, 0, 0], Redistribution::EvenEach);
        assert_eq!(p.balls(), &[2, 2, 6, 6]);
        assert_eq!(p.cumulative(), &[2, 4, 10, 16]);
    }

    #[test]
    fn embodiment_1_takes_bins_one_at_a_time() {
        let mut p = profile(&[4, 4, 4, 4], 4);
        // Bin 0 first: 2 balls → +0 each, leftovers to 0, 1 (ρ → 2) = [3, 5, 4, 4];
        // then bin 2 (3 balls) → leftovers to 2, 3, 0 (ρ → 1) = [4, 5, 2, 5].
        p.apply(&[2, 0, 3, 0], Redistribution::EvenEach);
        assert_eq!(p.balls(), &[4, 5, 2, 5]);
        assert_eq!(p.residual_index(), 1);
    }

    #[test]
    fn embodiment_2_spreads_the_total_over_all() {
        let mut p = profile(&[4, 4, 4, 4], 4);
        // R = 5: 1 each, 1 leftover at ρ = 0.
        p.apply(&[2, 0, 3, 0], Redistribution::EvenAll);
        assert_eq!(p.balls(), &[4, 5, 2, 5]);
        assert_eq!(p.residual_index(), 1);
    }

    #[test]
    fn embodiment_3_spreads_over_the_bins_not_whacked() {
        let mut p = profile(&[4, 4, 4, 4], 4);
        // R = 5 over S' = {1, 3}: 2 each, the leftover skips bin 0 and lands on bin 1.
        p.apply(&[2, 0, 3, 0], Redistribution::EvenOthers);
        assert_eq!(p.balls(), &[2, 7, 1, 6]);
        assert_eq!(p.residual_index(), 2);
        // Every bin whacked: as embodiment 2.
        let mut p = profile(&[4, 4, 4, 4], 4);
        p.apply(&[1, 1, 1, 1], Redistribution::EvenOthers);
        assert_eq!(p.balls(), &[4, 4, 4, 4]);
    }

    #[test]
    fn embodiment_4_spreads_in_proportion() {
        let mut p = profile(&[8, 4, 4, 0], 4);
        // R = 4 from bin 0: b' = (4, 4, 4, 0), m − R = 12, ⌊4·4/12⌋ = 1 to bins 0..2;
        // the 1 left over goes evenly over S' = {1, 2, 3}: round-robin from ρ = 0, skipping 0.
        p.apply(&[4, 0, 0, 0], Redistribution::Proportional);
        assert_eq!(p.balls(), &[5, 6, 5, 0]);
        assert_eq!(p.residual_index(), 2);
        // Scaling shape: removing half of every bin gives it all back proportionally.
        let mut p = profile(&[8, 4, 4, 0], 4);
        p.apply(&[4, 2, 2, 0], Redistribution::Proportional);
        assert_eq!(p.balls(), &[8, 4, 4, 0]);
    }

    #[test]
    fn whack_amount_respects_factor_and_floor() {
        assert_eq!(whack_amount(64, 0.125, 1), 8);
        assert_eq!(whack_amount(64, 0.5, 1), 32);
        assert_eq!(whack_amount(5, 0.125, 1), 1, "at least one ball");
        assert_eq!(whack_amount(2, 1.0, 1), 1, "never below the floor");
        assert_eq!(whack_amount(1, 1.0, 1), 0);
        assert_eq!(whack_amount(3, 1.0, 0), 3);
        assert_eq!(whack_amount(64, 0.0, 1), 0);
    }

    #[test]
    fn relax_moves_toward_target_without_overshoot() {
        let mut p = profile(&[1, 7, 4, 4], 4);
        let target = [4, 4, 4, 4];
        // Excess 3 on bin 1: ⌈0.5·3⌉ = 2 moved to bin 0 (the only deficit).
        assert!(p.relax_toward(&target, 0.5));
        assert_eq!(p.balls(), &[3, 5, 4, 4]);
        assert!(p.relax_toward(&target, 0.5));
        assert_eq!(p.balls(), &[4, 4, 4, 4]);
        assert!(!p.relax_toward(&target, 0.5), "at target nothing moves");
    }

    // ---- the selector ----------------------------------------------------------------------

    /// The embodiments' mechanics, without the §6 objective (tested on its own).
    fn cfg() -> WhackAMoleConfig {
        WhackAMoleConfig {
            num_paths: 4,
            log2_balls: 6,
            objective: Objective::None,
            ..WhackAMoleConfig::default()
        }
    }

    fn send_at(w: &mut WhackAMole, rng: &mut SimRng, now_ns: u64) -> usize {
        let cx = SendCx {
            now: SimTime::from_ns(now_ns),
            psn: Psn(0),
            retransmission: false,
            inflight_pkts: 0,
            every_arrival_answered: false,
        };
        usize::from(w.next_entropy(&cx, rng).0)
    }

    fn feedback(
        kind: FeedbackKind,
        now_ns: u64,
        path: u16,
        ecn: bool,
        rtt_ns: Option<u64>,
    ) -> Feedback {
        Feedback {
            kind,
            now: SimTime::from_ns(now_ns),
            entropy: Entropy(path),
            psn: Psn(0),
            rtt: rtt_ns.map(SimDuration::from_ns),
            ecn,
        }
    }

    /// Sends `n` packets 100 ns apart from PSN `psn0` at `t0` under IRN (every arrival
    /// answered, or not); returns (psn, send time, path) of each.
    fn send_irn(
        w: &mut WhackAMole,
        rng: &mut SimRng,
        t0: u64,
        psn0: u32,
        n: u32,
        answered: bool,
    ) -> Vec<(u32, u64, u16)> {
        (0..n)
            .map(|k| {
                let now = t0 + 100 * u64::from(k);
                let cx = SendCx {
                    now: SimTime::from_ns(now),
                    psn: Psn(psn0 + k),
                    retransmission: false,
                    inflight_pkts: k,
                    every_arrival_answered: answered,
                };
                (psn0 + k, now, w.next_entropy(&cx, rng).0)
            })
            .collect()
    }

    /// The answer (an ACK, RTT `rtt`) to one transmission.
    fn answer(sent: (u32, u64, u16), rtt: u64) -> Feedback {
        Feedback {
            kind: FeedbackKind::Ack,
            now: SimTime::from_ns(sent.1 + rtt),
            entropy: Entropy(sent.2),
            psn: Psn(sent.0),
            rtt: Some(SimDuration::from_ns(rtt)),
            ecn: false,
        }
    }

    #[test]
    fn a_gap_in_one_paths_sequence_is_a_loss_on_that_path() {
        // 4 paths x 16 of 64 balls, whacks applied at once. 64 packets, one of them on path 2
        // lost: the next answer from path 2 reveals the gap and path 2 alone loses
        // loss_factor x 16 = 8 balls, spread over the 3 others (EvenOthers: 3, 3, 2 from rho).
        for answered in [true, false] {
            let config = WhackAMoleConfig {
                update_interval_ns: 0,
                recovery_interval_ns: 0,
                ..cfg()
            };
            let mut rng = SimRng::new(3);
            let mut w = WhackAMole::new(&config, &mut rng);
            let sent = send_irn(&mut w, &mut rng, 0, 0, 64, answered);
            let lost = sent.iter().position(|s| s.2 == 2).unwrap_or(0);
            for (k, &s) in sent.iter().enumerate() {
                if k != lost {
                    w.on_feedback(&answer(s, 8_000), &mut rng);
                }
            }
            let balls = w.profile().balls().to_vec();
            if answered {
                assert_eq!(w.path_losses(), (1, 0));
                assert_eq!(balls[2], 8, "{balls:?}");
                assert_eq!(balls.iter().sum::<u32>(), 64);
                assert!(
                    balls.iter().enumerate().all(|(i, &b)| i == 2 || b > 16),
                    "{balls:?}"
                );
            } else {
                // Go-Back-N / NIC-SR: a missing answer is no evidence.
                assert_eq!(w.path_losses(), (0, 0));
                assert_eq!(balls, vec![16; 4]);
            }
        }
    }

    #[test]
    fn a_path_that_answers_nothing_stalls_and_is_whacked() {
        // Path 3 black-holed: every packet on it goes unanswered; the others answer at 8 us.
        // Once path 3's oldest packet is older than stall_factor (4) x the average RTT (8 us)
        // = 32 us, the stall test (every 2 us, at a send) whacks it by loss_factor.
        let config = WhackAMoleConfig {
            update_interval_ns: 0,
            recovery_interval_ns: 0,
            ..cfg()
        };
        let mut rng = SimRng::new(4);
        let mut w = WhackAMole::new(&config, &mut rng);
        let mut psn = 0;
        let mut first_dead = None;
        let mut whacked_at = None;
        let mut t = 0;
        while t < 100_000 && whacked_at.is_none() {
            let batch = send_irn(&mut w, &mut rng, t, psn, 10, true);
            psn += 10;
            for s in batch {
                if s.2 == 3 {
                    first_dead.get_or_insert(s.1);
                } else {
                    w.on_feedback(&answer(s, 8_000), &mut rng);
                }
            }
            if w.profile().balls()[3] < 16 {
                whacked_at = Some(t);
            }
            t += 1_000;
        }
        let (first_dead, whacked_at) = (first_dead.unwrap_or(0), whacked_at.unwrap_or(0));
        assert_eq!(w.path_losses().1, 1);
        assert_eq!(w.profile().balls()[3], 8);
        // Detected between 32 us and 32 us + the check period + one batch after the send.
        let age = whacked_at + 1_000 - first_dead;
        assert!(
            (32_000..=36_000).contains(&age),
            "stall found after {age} ns"
        );
    }

    #[test]
    fn the_severity_objective_never_feeds_a_worse_than_average_path() {
        // 4 paths x 16 of 64 balls, whacks at once. Path 3 times out twice (16 -> 8 -> 4;
        // w3 = 0.5/8 + 7/8 x 0.5/8 = 0.117), the others answer cleanly (w = 0). Then an ECN
        // mark on path 1 frees max(1, 0.125 x b1) balls. Under the §6 objective they go only
        // to paths below the mean weight Σ p·w (paths 0 and 2); under the embodiment alone
        // (even-others) the drained path 3 gets its share back.
        let run = |objective| {
            let config = WhackAMoleConfig {
                update_interval_ns: 0,
                recovery_interval_ns: 0,
                objective,
                ..cfg()
            };
            let mut rng = SimRng::new(5);
            let mut w = WhackAMole::new(&config, &mut rng);
            for p in 0..3 {
                w.on_feedback(&feedback(FeedbackKind::Ack, 10, p, false, None), &mut rng);
            }
            for t in [20, 30] {
                w.on_feedback(
                    &feedback(FeedbackKind::Timeout, t, 3, false, None),
                    &mut rng,
                );
            }
            let before = w.profile().balls().to_vec();
            w.on_feedback(&feedback(FeedbackKind::Ack, 40, 1, true, None), &mut rng);
            (before, w.profile().balls().to_vec())
        };
        let (before, after) = run(Objective::Severity);
        assert_eq!(before[3], 4, "{before:?}");
        assert_eq!(after[3], 4, "the drained path gets nothing back: {after:?}");
        assert_eq!(after[1] + 2, before[1], "{before:?} -> {after:?}");
        assert_eq!(after[0] + after[2], before[0] + before[2] + 2);
        let (_, plain) = run(Objective::None);
        assert!(
            plain[3] > 4,
            "even-others feeds the drained path: {plain:?}"
        );
    }

    #[test]
    fn weights_round_to_m_balls_by_largest_remainder() {
        assert_eq!(balls_from_weights(&[2.0, 1.0], 10), vec![683, 341]);
        assert_eq!(balls_from_weights(&[0.0, 1.0], 10), vec![0, 1024]);
        assert_eq!(balls_from_weights(&[1.0, 1.0, 1.0], 4), vec![6, 5, 5]);
        // 16·(0.1, 0.2, 0.7) = (1.6, 3.2, 11.2): floors 1+3+11 = 15, the largest remainder
        // (0.6, bin 0) gets the 16th ball.
        assert_eq!(balls_from_weights(&[0.1, 0.2, 0.7], 4), vec![2, 3, 11]);
    }

    #[test]
    fn schedule_is_validated() {
        let step = |at_ns, weights: &[f64]| ProfileStep {
            at_ns,
            weights: weights.to_vec(),
        };
        let with = |schedule| WhackAMoleConfig {
            num_paths: 2,
            schedule,
            ..WhackAMoleConfig::default()
        };
        let a = Algorithm::WhackAMole;
        assert!(with(vec![step(0, &[2.0, 1.0]), step(5, &[0.0, 1.0])])
            .validate(a)
            .is_ok());
        for (bad, what) in [
            (
                vec![step(5, &[1.0, 1.0]), step(5, &[0.0, 1.0])],
                "after the previous",
            ),
            (
                vec![step(0, &[1.0, 1.0, 1.0])],
                "3 weights for num_paths = 2",
            ),
            (vec![step(0, &[-1.0, 1.0])], ">= 0"),
            (vec![step(0, &[0.0, 0.0])], "all 0"),
        ] {
            let e = with(bad).validate(a).unwrap_err();
            assert_eq!(e.parameter.as_deref(), Some("schedule"));
            assert!(e.message.contains(what), "{e}");
        }
    }

    #[test]
    fn schedule_parses_from_the_parameter_text() {
        use crate::config::{HostLbConfig, LbConfig};
        let c = LbConfig::parse(
            "whack-a-mole",
            "num_paths = 2, schedule = [{ at_ns = 0, weights = [2, 1] }, \
             { at_ns = 36700000, weights = [0, 1] }]",
        )
        .unwrap();
        let HostLbConfig::WhackAMole(w) = c.host else {
            panic!("not whack-a-mole: {c:?}");
        };
        assert_eq!(w.schedule.len(), 2);
        assert_eq!(w.schedule[1].at_ns, 36_700_000);
        assert_eq!(w.schedule[1].weights, vec![0.0, 1.0]);
        let e = LbConfig::parse("whack-a-mole", "schedule = [{ at_ns = 0, weights = [1] }]")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `whack-a-mole`, parameter `schedule`: step 0: 1 weights for num_paths = 8"
        );
    }

    #[test]
    fn schedule_steps_apply_from_the_first_packet_and_set_the_target() {
        let config = WhackAMoleConfig {
            num_paths: 2,
            log2_balls: 4,
            schedule: vec![
                ProfileStep {
                    at_ns: 0,
                    weights: vec![3.0, 1.0],
                },
                ProfileStep {
                    at_ns: 1_000,
                    weights: vec![0.0, 1.0],
                },
            ],
            ..WhackAMoleConfig::default()
        };
        let mut rng = SimRng::new(1);
        let mut w = WhackAMole::new(&config, &mut rng);
        assert_eq!(
            w.profile().balls(),
            &[8, 8],
            "uniform before the first packet"
        );
        let first = 50_000;
        let mut on_0 = 0;
        for _ in 0..16 {
            on_0 += u32::from(send_at(&mut w, &mut rng, first) == 0);
        }
        assert_eq!(w.profile().balls(), &[12, 4]);
        assert_eq!(w.target(), &[12, 4]);
        assert_eq!(
            on_0, 12,
            "one period of 16 packets follows the profile exactly"
        );
        send_at(&mut w, &mut rng, first + 999);
        assert_eq!(
            w.profile().balls(),
            &[12, 4],
            "offsets count from the first packet"
        );
        for _ in 0..32 {
            assert_eq!(send_at(&mut w, &mut rng, first + 1_000), 1);
        }
        assert_eq!(w.target(), &[0, 16]);
    }

    /// The paper's §8 two-path example, its inputs reconstructed from its results:
    /// path 0 at 100 Mb/s with 100 ms latency, path 1 at 50 Mb/s with 10 ms; a 10 Mbit
    /// message in 1000 packets of 10 kbit. The sender paces at the summed bandwidth of the
    /// paths its profile uses; each path is a FIFO at its bandwidth. Completion times
    /// (first principles): all on path 0: 100 + 100 = 200 ms; all on path 1: 200 + 10 =
    /// 210 ms; (2/3, 1/3) throughout: 10/150 s + 100 ms = 166.7 ms; (2/3, 1/3) for the first
    /// x = 36.7 ms, then path 1 only: max(x + 100, 210 − 2x) = 136.7 ms (the paper's 137 ms).
    fn two_path_completion_ms(schedule: Vec<ProfileStep>) -> f64 {
        const BW_BPS: [f64; 2] = [100e6, 50e6];
        const LATENCY_S: [f64; 2] = [0.100, 0.010];
        const PKT_BITS: f64 = 10_000.0;
        let config = WhackAMoleConfig {
            num_paths: 2,
            log2_balls: 10,
            schedule,
            ..WhackAMoleConfig::default()
        };
        let mut rng = SimRng::new(7);
        let mut w = WhackAMole::new(&config, &mut rng);
        let (mut now_s, mut free_s, mut done_s) = (0.0f64, [0.0f64; 2], 0.0f64);
        for _ in 0..1000 {
            let now_ns = (now_s * 1e9).round() as u64;
            let p = send_at(&mut w, &mut rng, now_ns);
            let rate: f64 = w
                .profile()
                .balls()
                .iter()
                .zip(BW_BPS)
                .filter(|(&b, _)| b > 0)
                .map(|(_, bw)| bw)
                .sum();
            let depart = now_s.max(free_s[p]);
            free_s[p] = depart + PKT_BITS / BW_BPS[p];
            done_s = done_s.max(free_s[p] + LATENCY_S[p]);
            now_s += PKT_BITS / rate;
        }
        done_s * 1e3
    }

    #[test]
    fn time_varying_profile_beats_every_fixed_one_in_the_two_path_example() {
        let fixed = |w: [f64; 2]| {
            two_path_completion_ms(vec![ProfileStep {
                at_ns: 0,
                weights: w.to_vec(),
            }])
        };
        let close = |got: f64, want: f64| (got - want).abs() <= 0.01 * want;
        let only_0 = fixed([1.0, 0.0]);
        let only_1 = fixed([0.0, 1.0]);
        let both = fixed([2.0, 1.0]);
        let hybrid = two_path_completion_ms(vec![
            ProfileStep {
                at_ns: 0,
                weights: vec![2.0, 1.0],
            },
            ProfileStep {
                at_ns: 36_700_000,
                weights: vec![0.0, 1.0],
            },
        ]);
        assert!(close(only_0, 200.0), "{only_0}");
        assert!(close(only_1, 210.0), "{only_1}");
        assert!(close(both, 166.7), "{both}");
        assert!(close(hybrid, 136.7), "{hybrid}");
        assert!(hybrid < both && both < only_0 && only_0 < only_1);
    }

    #[test]
    fn path_i_is_entropy_i_and_sends_follow_the_profile() {
        let mut rng = SimRng::new(4);
        let mut w = WhackAMole::new(&cfg(), &mut rng);
        let mut counts = [0u32; 4];
        for _ in 0..64 {
            counts[send_at(&mut w, &mut rng, 0)] += 1;
        }
        assert_eq!(counts, [16; 4]);
    }

    #[test]
    fn ecn_feedback_whacks_the_path_when_the_interval_ends() {
        let mut rng = SimRng::new(5);
        let mut w = WhackAMole::new(&cfg(), &mut rng);
        send_at(&mut w, &mut rng, 0); // opens the 10 µs interval
        for t in 1..5 {
            w.on_feedback(&feedback(FeedbackKind::Ack, t, 2, true, None), &mut rng);
        }
        assert_eq!(w.profile().balls(), &[16; 4], "gathered, not yet applied");
        send_at(&mut w, &mut rng, 10_000);
        // One whack for the interval: ⌊16/8⌋ = 2 balls, 1 to each of 2 of the other paths
        // (2 over 3 others: 0 each, leftovers round-robin from ρ = 0 skipping path 2).
        assert_eq!(w.profile().balls(), &[17, 17, 14, 16]);
    }

    #[test]
    fn severity_sets_the_factor() {
        let mut rng = SimRng::new(6);
        let mut w = WhackAMole::new(
            &WhackAMoleConfig {
                redistribution: Redistribution::EvenAll,
                ..cfg()
            },
            &mut rng,
        );
        send_at(&mut w, &mut rng, 0);
        // Path 0: RTT above 1.5 × average (f = 1/16 → 1 ball); path 1: ECN (1/8 → 2);
        // path 2: timeout (1/2 → 8); path 3: a NACK (factor 0: nothing).
        w.on_feedback(
            &feedback(FeedbackKind::Ack, 1, 3, false, Some(10_000)),
            &mut rng,
        );
        w.on_feedback(
            &feedback(FeedbackKind::Ack, 2, 0, false, Some(16_000)),
            &mut rng,
        );
        w.on_feedback(&feedback(FeedbackKind::Ack, 3, 1, true, None), &mut rng);
        w.on_feedback(
            &feedback(FeedbackKind::Timeout, 4, 2, false, None),
            &mut rng,
        );
        w.on_feedback(&feedback(FeedbackKind::Nack, 5, 3, false, None), &mut rng);
        send_at(&mut w, &mut rng, 10_000);
        // Removed 1 + 2 + 8 = 11, spread evenly over all 4: 2 each, 3 leftovers to 0, 1, 2.
        assert_eq!(
            w.profile().balls(),
            &[16 - 1 + 3, 16 - 2 + 3, 16 - 8 + 3, 16 + 2]
        );
        // The most severe feedback of an interval wins: ECN then timeout on path 3 → 1/2.
        w.on_feedback(
            &feedback(FeedbackKind::Ack, 10_001, 3, true, None),
            &mut rng,
        );
        w.on_feedback(
            &feedback(FeedbackKind::Timeout, 10_002, 3, false, None),
            &mut rng,
        );
        send_at(&mut w, &mut rng, 20_000);
        // 9 balls spread over all 4: 2 each, the leftover at ρ = 3.
        assert_eq!(w.profile().balls()[3], 18 - 9 + 2 + 1);
    }

    #[test]
    fn an_rtt_at_or_below_the_margin_is_not_whacked() {
        let mut rng = SimRng::new(7);
        let mut w = WhackAMole::new(
            &WhackAMoleConfig {
                update_interval_ns: 0,
                ..cfg()
            },
            &mut rng,
        );
        w.on_feedback(
            &feedback(FeedbackKind::Ack, 1, 0, false, Some(10_000)),
            &mut rng,
        );
        w.on_feedback(
            &feedback(FeedbackKind::Ack, 2, 1, false, Some(15_000)),
            &mut rng,
        );
        assert_eq!(
            w.profile().balls(),
            &[16; 4],
            "15,000 = 1.5 × 10,000 is not above"
        );
    }

    #[test]
    fn immediate_mode_whacks_each_feedback_and_ignores_unknown_paths() {
        let mut rng = SimRng::new(8);
        let mut w = WhackAMole::new(
            &WhackAMoleConfig {
                update_interval_ns: 0,
                ..cfg()
            },
            &mut rng,
        );
        w.on_feedback(&feedback(FeedbackKind::Ack, 1, 9, true, None), &mut rng);
        assert_eq!(w.profile().balls(), &[16; 4], "entropy 9 names no path");
        w.on_feedback(&feedback(FeedbackKind::Cnp, 1, 0, false, None), &mut rng);
        w.on_feedback(&feedback(FeedbackKind::Ack, 2, 0, true, None), &mut rng);
        // 16 → 14 → 14 − ⌊14/8⌋ = 13; 3 balls to the others.
        assert_eq!(w.profile().balls()[0], 13);
        assert_eq!(w.profile().balls().iter().sum::<u32>(), 64);
    }

    #[test]
    fn a_whacked_path_drains_to_its_floor_and_recovers_when_feedback_stops() {
        let mut rng = SimRng::new(9);
        let periodic = WhackAMoleConfig {
            recovery_rule: RecoveryRule::Periodic,
            ..cfg()
        };
        let mut w = WhackAMole::new(&periodic, &mut rng);
        let mut t = 0;
        // Marks on path 1 every 10 µs for 2 ms; recovery every 100 µs fights back.
        while t < 2_000_000 {
            send_at(&mut w, &mut rng, t);
            w.on_feedback(&feedback(FeedbackKind::Ack, t, 1, true, None), &mut rng);
            t += 10_000;
        }
        // Under sustained marks the path hovers near its floor of 1: recovery returns
        // ⌈0.25·15⌉ = 4 balls per 100 µs, and the 10 whacks per 100 µs take them again.
        // Measured within the last update interval (before recovery's next step at 2 ms).
        let b1 = w.profile().balls()[1];
        assert!(b1 <= 4, "{:?}", w.profile().balls());
        let sent_on_1 = (0..64)
            .filter(|_| send_at(&mut w, &mut rng, t - 10_000) == 1)
            .count();
        assert!(sent_on_1 <= 4, "{sent_on_1}");
        // Feedback stops: within ~15 recovery intervals the profile is back at target.
        for _ in 0..20 {
            t += 100_000;
            send_at(&mut w, &mut rng, t);
        }
        assert_eq!(w.profile().balls(), w.target());
    }

    /// Drives `w` for `until_ns` from `t`: a packet every 10 µs and, for each, the feedback
    /// `fb(path)` gives (marked or clean ACKs), or none. Returns the time reached.
    fn drive_paths(
        w: &mut WhackAMole,
        rng: &mut SimRng,
        mut t: u64,
        until_ns: u64,
        marked: impl Fn(usize) -> Option<bool>,
    ) -> u64 {
        while t < until_ns {
            let path = send_at(w, rng, t);
            if let Some(ecn) = marked(path) {
                let fb = feedback(FeedbackKind::Ack, t, path as u16, ecn, None);
                w.on_feedback(&fb, rng);
            }
            t += 10_000;
        }
        t
    }

    #[test]
    fn evidence_recovery_waits_for_clean_acks_on_the_path() {
        let mut rng = SimRng::new(9);
        let mut w = WhackAMole::new(&cfg(), &mut rng);
        assert_eq!(w.target(), vec![16, 16, 16, 16]);
        // Every packet on path 1 comes back marked, the others clean, for 2 ms: path 1 is
        // whacked whenever it carries a packet and never recovers (no clean ACK from it).
        let t = drive_paths(&mut w, &mut rng, 0, 2_000_000, |p| Some(p == 1));
        assert_eq!(w.profile().balls()[1], 1, "{:?}", w.profile().balls());
        // Nothing is sent for 5 ms: no evidence either way, so the profile stays (the periodic
        // rule would have handed path 1 its 15 balls back: 64 intervals at gain 1/4).
        let t = t + 5_000_000;
        send_at(&mut w, &mut rng, t);
        assert_eq!(w.profile().balls()[1], 1, "{:?}", w.profile().balls());
        // Path 1 heals: its (rare, 1 in 64) packets come back clean. Each interval with a
        // clean ACK from it returns ⌈1/4⌉ of the others' excess; back at target within 4 ms.
        let t = drive_paths(&mut w, &mut rng, t, t + 4_000_000, |_| Some(false));
        assert_eq!(w.profile().balls(), &[16, 16, 16, 16][..], "at {t} ns");
    }

    #[test]
    fn evidence_recovery_gives_nothing_back_to_a_path_still_marked() {
        let mut rng = SimRng::new(11);
        let mut w = WhackAMole::new(&cfg(), &mut rng);
        // Path 2 is marked at every packet. Once drained (2 ms), 1 ball of 64 (its floor) is all
        // it keeps for the next 8 ms, whereas the periodic rule keeps handing it balls back
        // (see the test above: up to 4 after each recovery step).
        let mut t = drive_paths(&mut w, &mut rng, 0, 2_000_000, |p| Some(p == 2));
        let mut worst = 0;
        while t < 10_000_000 {
            t = drive_paths(&mut w, &mut rng, t, t + 100_000, |p| Some(p == 2));
            worst = worst.max(w.profile().balls()[2]);
        }
        assert_eq!(worst, 1, "path 2 held {worst} balls");
        assert_eq!(w.profile().balls()[2], 1);
    }

    #[test]
    fn recovery_rule_and_profile_scope_parse_by_name() {
        use crate::config::{HostLbConfig, LbConfig};
        let parse = |text: &str| match LbConfig::parse("whack-a-mole", text).map(|c| c.host) {
            Ok(HostLbConfig::WhackAMole(w)) => Ok((w.recovery_rule, w.profile_scope)),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e.to_string()),
        };
        assert_eq!(
            parse(""),
            Ok((RecoveryRule::Evidence, ProfileScope::QueuePair))
        );
        assert_eq!(
            parse("recovery_rule = \"periodic\", profile_scope = \"destination\""),
            Ok((RecoveryRule::Periodic, ProfileScope::Destination))
        );
        assert!(parse("recovery_rule = \"quiet\"")
            .unwrap_err()
            .contains("recovery_rule"));
        assert!(parse("profile_scope = \"nic\"")
            .unwrap_err()
            .contains("profile_scope"));
    }

    #[test]
    fn evidence_needs_a_floor_of_one_ball() {
        let bad = WhackAMoleConfig {
            min_balls: 0,
            ..WhackAMoleConfig::default()
        };
        let e = bad.validate(Algorithm::WhackAMole).unwrap_err();
        assert!(e.to_string().contains("min_balls"), "{e}");
        for ok in [
            WhackAMoleConfig {
                recovery_rule: RecoveryRule::Periodic,
                ..bad.clone()
            },
            WhackAMoleConfig {
                recovery_interval_ns: 0,
                ..bad.clone()
            },
        ] {
            ok.validate(Algorithm::WhackAMole).unwrap();
        }
    }

    #[test]
    fn relax_toward_where_gives_only_to_the_selected_bins() {
        // Excess 8 on bin 0; deficits 4 (bin 1, not selected) and 4 (bin 2).
        let mut p = profile(&[16, 4, 4, 8], 5);
        let target = [8, 8, 8, 8];
        assert!(p.relax_toward_where(&target, 1.0, |i| i != 1));
        // Bin 0 gives only what bin 2 can take.
        assert_eq!(p.balls(), &[12, 4, 8, 8]);
        assert!(!p.relax_toward_where(&target, 1.0, |i| i != 1));
        // Gain 1/4: bin 0 gives ⌈0.25·4⌉ = 1 to bin 1.
        assert!(p.relax_toward_where(&target, 0.25, |_| true));
        assert_eq!(p.balls(), &[11, 5, 8, 8]);
        assert_eq!(p.cumulative(), &[11, 16, 24, 32]);
    }

    #[test]
    fn without_recovery_a_whacked_path_sits_at_its_floor() {
        for how in ALL_HOW {
            let mut rng = SimRng::new(10);
            let mut w = WhackAMole::new(
                &WhackAMoleConfig {
                    recovery_interval_ns: 0,
                    redistribution: how,
                    min_balls: 2,
                    ..cfg()
                },
                &mut rng,
            );
            for i in 0..200 {
                let t = i * 10_000;
                send_at(&mut w, &mut rng, t);
                w.on_feedback(&feedback(FeedbackKind::Ack, t, 3, true, None), &mut rng);
            }
            assert_eq!(
                w.profile().balls()[3],
                2,
                "{how:?}: {:?}",
                w.profile().balls()
            );
        }
    }

    #[test]
    fn same_seed_same_sequence() {
        let run = |seed| {
            let mut rng = SimRng::new(seed);
            let mut w = WhackAMole::new(&WhackAMoleConfig::default(), &mut rng);
            (0..256)
                .map(|t| send_at(&mut w, &mut rng, t))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2), "different seeds shuffle differently");
    }

    // ---- properties ------------------------------------------------------------------------

    /// A random profile: ℓ in 4..=12, n in 1..=16, ball counts from sorted cut points (zero
    /// counts allowed).
    fn arb_profile() -> impl Strategy<Value = (u32, Vec<u32>)> {
        (4u32..=12, 1usize..=16).prop_flat_map(|(l, n)| {
            let m = 1u32 << l;
            (Just(l), proptest::collection::vec(0..=m, n - 1)).prop_map(move |(l, mut cuts)| {
                cuts.sort_unstable();
                let mut prev = 0;
                let mut balls: Vec<u32> = cuts
                    .iter()
                    .map(|&c| {
                        let b = c - prev;
                        prev = c;
                        b
                    })
                    .collect();
                balls.push(m - prev);
                (l, balls)
            })
        })
    }

    /// The largest |actual − expected| count of any path over any window of consecutive
    /// packets, in units of 1/m packet. The selection is periodic in m, so with
    /// D(t) = m·count(0..t) − t·b the worst window is max D − min D over one period.
    fn worst_window_deviation(p: &Profile, c: &SprayCounter) -> i64 {
        let m = i64::from(p.total());
        let n = p.balls().len();
        let mut count = vec![0i64; n];
        let mut lo = vec![0i64; n];
        let mut hi = vec![0i64; n];
        for t in 0..p.total() {
            count[p.path_of(c.ball(t))] += 1;
            for i in 0..n {
                let d = m * count[i] - i64::from(t + 1) * i64::from(p.balls()[i]);
                lo[i] = lo[i].min(d);
                hi[i] = hi[i].max(d);
            }
        }
        (0..n).map(|i| hi[i] - lo[i]).max().unwrap_or(0)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn selective_recovery_keeps_m_balls_and_spares_the_unselected(
            (l, balls) in arb_profile(),
            mask in proptest::collection::vec(any::<bool>(), 16),
            gain in 0.0f64..=1.0,
        ) {
            let n = balls.len();
            let mut p = profile(&balls, l);
            let target = Profile::uniform(n, l).balls().to_vec();
            let before = p.balls().to_vec();
            p.relax_toward_where(&target, gain, |i| mask[i]);
            let after = p.balls();
            prop_assert_eq!(after.iter().sum::<u32>(), 1u32 << l);
            for i in 0..n {
                let (b, a, t) = (before[i], after[i], target[i]);
                if b > t {
                    // A giver gives at most its excess and never drops below target.
                    prop_assert!(a <= b && a >= t, "bin {i}: {b} -> {a}, target {t}");
                } else if mask[i] {
                    // A selected bin below target gains, never past target.
                    prop_assert!(a >= b && a <= t, "bin {i}: {b} -> {a}, target {t}");
                } else {
                    prop_assert_eq!(a, b, "unselected bin {} moved", i);
                }
            }
        }

        #[test]
        fn spray_deviation_is_bounded_by_log2_m(
            (l, balls) in arb_profile(),
            s_a: u32,
            s_b: u32,
        ) {
            let p = Profile::from_balls(balls, l).unwrap();
            let m = i64::from(p.total());
            let l64 = i64::from(l);
            for (shuffle, bound) in
                [(Shuffle::None, l64), (Shuffle::Method1, l64), (Shuffle::Method2, 2 * l64)]
            {
                let c = SprayCounter::with_seed(l, shuffle, s_a, s_b);
                let dev = worst_window_deviation(&p, &c);
                prop_assert!(
                    dev <= bound * m,
                    "{:?}: deviation {} > {} (profile {:?})",
                    shuffle, dev as f64 / m as f64, bound, p.balls()
                );
            }
        }

        #[test]
        fn updates_keep_m_balls_and_the_floor(
            (l, balls) in arb_profile(),
            floor in 0u32..3,
            ops in proptest::collection::vec(
                (0usize..16, 0.0f64..=1.0, 0usize..4, proptest::bool::ANY), 1..60),
        ) {
            // Lift every bin to the floor first (taking from the largest) to start valid.
            let mut balls = balls;
            let m = 1u32 << l;
            let n = balls.len();
            prop_assume!(u64::from(floor) * n as u64 <= u64::from(m));
            for i in 0..n {
                while balls[i] < floor {
                    let j = (0..n).max_by_key(|&j| balls[j]).unwrap();
                    balls[j] -= 1;
                    balls[i] += 1;
                }
            }
            let mut p = Profile::from_balls(balls, l).unwrap();
            let target = Profile::uniform(n, l).balls().to_vec();
            for (path, f, how, multi) in ops {
                let how = ALL_HOW[how];
                if multi {
                    // A batched update: every bin whacked by f.
                    let removal: Vec<u32> =
                        p.balls().iter().map(|&b| whack_amount(b, f, floor)).collect();
                    p.apply(&removal, how);
                } else if path < n {
                    let mut removal = vec![0; n];
                    removal[path] = whack_amount(p.balls()[path], f, floor);
                    p.apply(&removal, how);
                } else {
                    p.relax_toward(&target, f);
                }
                prop_assert_eq!(p.balls().iter().sum::<u32>(), m);
                prop_assert!(p.balls().iter().all(|&b| b >= floor), "{:?}", p.balls());
                prop_assert_eq!(p.cumulative().last().copied(), Some(m));
                prop_assert!(p.residual_index() < n);
                let mut acc = 0;
                for (c, b) in p.cumulative().iter().zip(p.balls()) {
                    acc += b;
                    prop_assert_eq!(*c, acc);
                }
            }
        }

        #[test]
        fn a_repeatedly_whacked_path_drains_to_its_floor_and_recovers(
            l in 4u32..=12,
            n in 2usize..=16,
            floor in 0u32..=2,
            path in 0usize..16,
            f in 0.03f64..=1.0,
            gain in 0.05f64..=1.0,
            how in 0usize..4,
        ) {
            let path = path % n;
            let how = ALL_HOW[how];
            let mut p = Profile::uniform(n, l);
            let target = p.balls().to_vec();
            prop_assume!(target.iter().all(|&b| b >= floor));
            let mut whacks = 0;
            while p.balls()[path] > floor {
                let mut removal = vec![0; n];
                removal[path] = whack_amount(p.balls()[path], f, floor);
                p.apply(&removal, how);
                whacks += 1;
                prop_assert!(whacks < 20_000, "not drained: {:?}", p.balls());
            }
            prop_assert_eq!(p.balls()[path], floor);
            let mut steps = 0;
            while p.relax_toward(&target, gain) {
                steps += 1;
                prop_assert!(steps < 2_000, "not recovered: {:?}", p.balls());
            }
            prop_assert_eq!(p.balls(), &target[..]);
        }
    }
}
