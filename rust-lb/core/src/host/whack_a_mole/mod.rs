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
//!   packets declared lost and is whacked with `loss_factor` -- or declared dead (next).
//! * **Dead paths** (`dead_probe_interval_ns`, default 100 us; 0 = off, the rule before).
//!   **Deviation from the paper**, whose profile keeps every path and whose whacks only
//!   shrink a path's share: a path that stalls is declared dead. It loses all its balls (below
//!   the floor `min_balls`), which go evenly to the live paths; no update gives it any back
//!   (the embodiments' spreads, the severity objective, a schedule step and recovery all skip
//!   it: what an embodiment spread onto it goes on to the live paths); one 64 B probe per
//!   `dead_probe_interval_ns` goes on it instead ([`PathSelector::take_probe`]). The first
//!   answer on it -- a probe's, or a late answer to data sent before -- revives it with the
//!   floor (`min_balls`, at least 1) taken from the path holding the most balls; from there the
//!   recovery rule returns it to its target share on evidence like any path. The last live
//!   path is never declared dead (it is whacked instead). Why: before, a black-holed path
//!   kept ~3 % of the packets (rdma-lb-host-feedback: 2.8 % of the post-bound packets into the
//!   dead link): ECN and RTT whacks of the live paths spread their balls over every path not
//!   whacked in the interval, the dead one included (embodiment 3), and the floor kept it in
//!   the profile; a path whose packets never come back now regains nothing without evidence.
//!   **Bound**: black hole at t0; every packet sent on the path from t0 on goes unanswered, so
//!   the last answer on it comes by t0 + R (R: the largest RTT) and the oldest unanswered
//!   packet the stall test knows of was sent by then (if the path carried nothing then, it
//!   is its next packet, and the bound counts from that one); the test runs at the first send 2 us
//!   after the previous one and fires once that packet is older than `stall_factor` × the
//!   average RTT (≤ R). So no data packet enters the dead path after
//!   t0 + (1 + `stall_factor`) R + 2 us (5 RTTs + 2 us with the default), whatever the other
//!   paths report. A live but slow path is not declared dead while it answers within
//!   `stall_factor` × the average RTT; one declared dead by mistake (every packet it carried
//!   in 4 average RTTs lost to overflow) answers its first probe and is back at the floor within
//!   `dead_probe_interval_ns` + its RTT. With `profile_scope = "queue-pair"` each new queue
//!   pair starts from the uniform profile and finds a dead path again by its own stall test.
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

mod config;
mod counter;
mod loss;
mod profile;
mod state;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_dead;

pub use config::{
    Objective, PathRouting, ProfileScope, ProfileStep, RecoveryRule, Redistribution, Shuffle,
    WhackAMoleConfig, MAX_SCHEDULE_STEPS,
};
pub use counter::{bit_reverse, SprayCounter};
pub use profile::{balls_from_weights, Profile};
pub use state::{whack_amount, PathState, SharedPathState};

use loss::PathSeqs;

use super::selector::{Feedback, PathSelector, SendCx};
use crate::error::ParamError;
use crate::rng::SimRng;
use crate::scheme::{HostRole, Scheme};
use crate::time::SimTime;
use crate::units::Entropy;

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
        seqs.check_stalls(cx.now, s.rtt_avg(), |path| s.path_stalled(cx.now, path));
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

    fn take_probe(&mut self, now: SimTime) -> Option<Entropy> {
        self.with_state(None, |s| s.take_probe(now))
            .map(|path| Entropy(u16::try_from(path).unwrap_or(0)))
    }
}

impl Scheme for WhackAMole {
    type Config = WhackAMoleConfig;
    const SPRAYS_ON_FEEDBACK: bool = true;

    fn validate(config: &WhackAMoleConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl HostRole for WhackAMole {
    type Selector = WhackAMole;

    fn selector(config: &WhackAMoleConfig, rng: &mut SimRng) -> WhackAMole {
        WhackAMole::new(config, rng)
    }
}
