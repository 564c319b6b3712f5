//! Whack-a-Mole's parameters and their validation (M. Luby and J. Byers, "Whack-a-Mole:
//! Deterministic Packet Spraying Across Multiple Network Paths", arXiv:2509.18519): the profile's
//! size (§3), the shuffle of the spray counter (§4), the whack severities (§5–6), the update
//! embodiments (§7) and the time-varying schedule (§8), plus our additions (batching, recovery,
//! profile scope, path routing, stalls); the parent module says what each does.

use serde::Deserialize;

use crate::error::{check_int, check_real, ParamError};

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
    /// Dead paths (our addition): a stalled path is declared dead, loses all its balls (below
    /// the `min_balls` floor) and receives none until an answer on it shows that it delivers
    /// again; meanwhile one probe is sent on it per this interval. 0 = off: a stall is only a
    /// whack by `loss_factor` (the behaviour before). Only where stalls are tested.
    pub dead_probe_interval_ns: u64,
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
            dead_probe_interval_ns: 100_000,
        }
    }
}

impl WhackAMoleConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// The first parameter out of range, with its allowed range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int("num_paths", self.num_paths.into(), 1, 1024)?;
        check_int("log2_balls", self.log2_balls.into(), 1, 16)?;
        let m = 1u64 << self.log2_balls;
        if m < u64::from(self.num_paths) {
            return Err(ParamError::new(
                "log2_balls",
                format!(
                    "2^log2_balls = {m} balls must be at least num_paths = {}",
                    self.num_paths
                ),
            ));
        }
        let per_path = m / u64::from(self.num_paths);
        check_int("min_balls", self.min_balls.into(), 0, per_path)?;
        if self.recovery_rule == RecoveryRule::Evidence
            && self.recovery_interval_ns > 0
            && self.min_balls == 0
        {
            return Err(ParamError::new(
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
            check_real(name, f, 0.0, 1.0)?;
        }
        check_real("rtt_margin", self.rtt_margin, 0.0, 100.0)?;
        check_real("stall_factor", self.stall_factor, 0.0, 1_000.0)?;
        check_int(
            "update_interval_ns",
            self.update_interval_ns,
            0,
            u64::MAX / 4,
        )?;
        check_int(
            "recovery_interval_ns",
            self.recovery_interval_ns,
            0,
            u64::MAX / 4,
        )?;
        check_int(
            "dead_probe_interval_ns",
            self.dead_probe_interval_ns,
            0,
            u64::MAX / 4,
        )?;
        self.validate_schedule()
    }

    fn validate_schedule(&self) -> Result<(), ParamError> {
        let bad = |msg: String| Err(ParamError::new("schedule", msg));
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
