//! REPS, Recycled Entropy Packet Spraying (Bonato et al., "REPS: Recycling Entropies for Packet
//! Spraying to Adaptively Explore Paths and Mitigate Failures", §3, Algorithm 1; freezing mode
//! as in the authors' EuroSys artifact, `tommasobo/REPS_EuroSys_Artifact`, `htsim/sim/uec.cpp`
//! and `buffer_reps.cpp`).
//!
//! Every data packet gets an entropy (EV). ACKs echo the EV of the packet they answer; an ACK
//! that is **not** ECN-marked says that EV's path is good, and the EV is written into a
//! circular buffer of `buffer_size` entries (default 8). Sending reuses the **oldest** fresh
//! cached EV, once; when none is fresh it draws a random EV from `num_entropies` (default 256).
//! ECN-marked ACKs, NACKs and CNPs are never cached: REPS learns only from good news (a NACK
//! of a packet trimmed at its last hop is good news as an option: below).
//!
//! Modes ([`RepsMode`], one transition function [`RepsMode::on`]):
//! * **Exploring** for the first `explore_pkts` packets (the paper's "first bdp of packets";
//!   default 104 = the reference leaf-spine's BDP of 104,000 B over 1,000 B packets): every
//!   packet gets a random EV. ACKs are cached meanwhile.
//! * **Recycling** (normal mode): oldest fresh cached EV, else random.
//! * **Freezing** (failure mode, the artifact's): entered on a retransmission timeout while
//!   recycling. The buffer is then re-used round-robin over all its written slots, fresh or
//!   not, so the last known-good set keeps carrying the traffic. On the first feedback after
//!   `freeze_ns` (default 10 ms, the artifact's `exit_freeze_after`) the buffer is reset and
//!   REPS explores `explore_pkts` packets again.
//!
//! Deviations and reconstructions, all documented choices:
//! * Exploration draws **random** EVs (as the artifact and the UEC htsim do); Algorithm 1 of the
//!   paper's v1 walks `next_entropy++ % num_entropies` instead. The fallback on an empty buffer
//!   is random for the same reason.
//! * The RTT guard (artifact, trimming disabled): without trimming, a timeout may be plain
//!   congestion, so freezing is entered only if the largest RTT sample of the current guard
//!   window is below `rtt_guard_factor × base_rtt_ns` (1.65 × base RTT in the artifact). The
//!   window is tumbling, as in the artifact: the first sample after it ends starts a new one
//!   of `rtt_guard_window_ns` (the artifact uses 2 × RTO; default 640 µs = 2 × the IRN
//!   RtoHigh of 320 µs). With `trimming = true` every timeout while recycling freezes (the UEC
//!   code).
//! * A NACK of a packet trimmed at its **last hop** (the switch port facing the receiver;
//!   [`Feedback::last_hop`], set by the uet transport's trims): Algorithm 1 caches only unmarked
//!   ACKs, and the artifact's sender reports every NACK as a NACK (`UecSrc::processNack`,
//!   `PATH_NACK`), so by default such a NACK is never cached (`last_hop_trim = "nack"`). The
//!   UEC htsim (`ultraethernet/uet-htsim` 40ccb05, `uec.cpp` `UecSrc::processNack`) reports it
//!   to its REPS (`uec_mp.cpp` `UecMpReps::processEv`) as `PATH_GOOD` or `PATH_ECN` by the
//!   NACK's ECN echo, under every congestion control: the path delivered the packet up to the
//!   receiver's downlink, where the congestion is. `last_hop_trim = "ack"` does the same: an
//!   unmarked last-hop NACK is cached like an unmarked ACK (a marked one is not). It is the
//!   default of a scenario on htsim's inputs (`rdma_lb_scenario`, `htsim_topo` with the uet
//!   transport); a NACK trimmed before the last hop is never cached either way.
//! * A timeout while exploring or already freezing changes nothing (artifact).
//! * The "compressed ACK" reuse lifetime of the artifact is not modelled (lifetime 1).

use serde::Deserialize;

use super::selector::{Feedback, FeedbackKind, PathSelector, SendCx};
use crate::error::{check_int, check_real, ParamError};
use crate::rng::SimRng;
use crate::scheme::{HostRole, Scheme};
use crate::time::{SimDuration, SimTime};
use crate::units::Entropy;

/// Parameters of REPS.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RepsConfig {
    /// Size of the entropy space random EVs are drawn from (paper: 256).
    pub num_entropies: u32,
    /// Entries of the circular buffer of good EVs (paper: 8).
    pub buffer_size: u32,
    /// Packets explored at the start and after leaving freezing mode (the BDP in packets).
    pub explore_pkts: u32,
    /// Whether timeouts may enter freezing mode at all.
    pub freezing: bool,
    /// How long freezing mode lasts at least, in ns (artifact: 10 ms).
    pub freeze_ns: u64,
    /// Whether the fabric trims packets; without trimming the RTT guard applies.
    pub trimming: bool,
    /// Base (unloaded) RTT of the fabric in ns, for the RTT guard.
    pub base_rtt_ns: u64,
    /// A timeout freezes only if the window's largest RTT is below this × the base RTT.
    pub rtt_guard_factor: f64,
    /// Length of the RTT guard's tumbling window in ns (artifact: 2 × RTO).
    pub rtt_guard_window_ns: u64,
    /// What a NACK of a packet trimmed at its last hop is (paper and artifact: a NACK).
    pub last_hop_trim: LastHopTrim,
}

/// What REPS makes of a NACK of a packet trimmed at its last hop ([`Feedback::last_hop`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LastHopTrim {
    /// A NACK like any other: never cached (the paper's Algorithm 1, the REPS artifact).
    Nack,
    /// An ACK with the NACK's ECN echo: cached when unmarked (the UEC htsim's
    /// `UecMpReps`, which hears it as `PATH_GOOD` / `PATH_ECN`).
    Ack,
}

impl Default for RepsConfig {
    fn default() -> Self {
        RepsConfig {
            num_entropies: 256,
            buffer_size: 8,
            explore_pkts: 104,
            freezing: true,
            freeze_ns: 10_000_000,
            trimming: false,
            base_rtt_ns: 8_320,
            rtt_guard_factor: 1.65,
            rtt_guard_window_ns: 640_000,
            last_hop_trim: LastHopTrim::Nack,
        }
    }
}

impl RepsConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// The first parameter out of range, with its allowed range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_int("num_entropies", self.num_entropies.into(), 1, 1 << 16)?;
        check_int("buffer_size", self.buffer_size.into(), 1, 1024)?;
        check_int("explore_pkts", self.explore_pkts.into(), 0, 1 << 20)?;
        check_int("freeze_ns", self.freeze_ns, 1, u64::MAX / 4)?;
        check_int("base_rtt_ns", self.base_rtt_ns, 1, 1 << 40)?;
        check_real("rtt_guard_factor", self.rtt_guard_factor, 1.0, 100.0)?;
        check_int(
            "rtt_guard_window_ns",
            self.rtt_guard_window_ns,
            1,
            u64::MAX / 4,
        )?;
        Ok(())
    }
}

/// The mode REPS is in (named as in the paper and the artifact).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepsMode {
    /// Random EVs for `remaining` more packets (always > 0).
    Exploring {
        /// Packets still to explore.
        remaining: u32,
    },
    /// Normal mode: reuse the oldest fresh cached EV, else a random one.
    Recycling,
    /// Failure mode: re-use the buffer round-robin until feedback arrives after `until`.
    Freezing {
        /// The earliest time the mode can be left (strictly after it).
        until: SimTime,
    },
}

/// What can happen to REPS, as far as its mode is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepsEvent {
    /// A packet was sent with an exploration EV.
    ExploreSent,
    /// The retransmission timer fired at `now`; `may_freeze` is the RTT guard's verdict
    /// (always true with trimming; false when freezing is disabled).
    Timeout {
        /// Now.
        now: SimTime,
        /// Whether the timeout may enter freezing mode.
        may_freeze: bool,
    },
    /// Some feedback arrived at this time (the moment freezing mode is checked for exit).
    FeedbackAt(SimTime),
}

/// What a transition asks the selector to do besides changing mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepsAction {
    /// Nothing.
    None,
    /// Forget every cached EV (leaving freezing mode).
    ResetBuffer,
}

impl RepsMode {
    /// The mode a fresh connection (or one leaving freezing) starts in.
    #[must_use]
    pub const fn explore(explore_pkts: u32) -> Self {
        if explore_pkts == 0 {
            RepsMode::Recycling
        } else {
            RepsMode::Exploring {
                remaining: explore_pkts,
            }
        }
    }

    /// The one transition function: the next mode and the action that goes with it.
    ///
    /// `ExploreSent` outside exploring is an invalid transition: debug-asserted, and ignored in
    /// release builds.
    #[must_use]
    pub fn on(
        self,
        event: RepsEvent,
        freeze: SimDuration,
        explore_pkts: u32,
    ) -> (Self, RepsAction) {
        use RepsEvent as E;
        use RepsMode as M;
        match (self, event) {
            (M::Exploring { remaining }, E::ExploreSent) => (
                if remaining > 1 {
                    M::Exploring {
                        remaining: remaining - 1,
                    }
                } else {
                    M::Recycling
                },
                RepsAction::None,
            ),
            (M::Recycling | M::Freezing { .. }, E::ExploreSent) => {
                debug_assert!(false, "REPS: exploration packet sent in mode {self:?}");
                (self, RepsAction::None)
            }
            (
                M::Recycling,
                E::Timeout {
                    now,
                    may_freeze: true,
                },
            ) => (
                M::Freezing {
                    until: now + freeze,
                },
                RepsAction::None,
            ),
            (M::Freezing { until }, E::FeedbackAt(now)) if now > until => {
                (RepsMode::explore(explore_pkts), RepsAction::ResetBuffer)
            }
            (M::Exploring { .. } | M::Recycling | M::Freezing { .. }, E::Timeout { .. })
            | (M::Exploring { .. } | M::Recycling | M::Freezing { .. }, E::FeedbackAt(_)) => {
                (self, RepsAction::None)
            }
        }
    }
}

impl std::fmt::Display for RepsMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RepsMode::Exploring { remaining } => write!(f, "exploring ({remaining} left)"),
            RepsMode::Recycling => f.write_str("recycling"),
            RepsMode::Freezing { until } => write!(f, "freezing (until {until})"),
        }
    }
}

/// One slot of the circular buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Slot {
    entropy: Entropy,
    /// Fresh: cached and not yet used (in recycling mode each EV is used once).
    valid: bool,
}

/// The circular buffer of good EVs (artifact `CircularBufferREPS`, lifetime 1).
///
/// Invariant outside freezing mode: the fresh entries are the `fresh` most recently written
/// slots, `head - fresh .. head` (mod size), so the oldest fresh one is at `head - fresh`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct EntropyRing {
    slots: Vec<Slot>,
    /// Next slot to write.
    head: usize,
    /// Number of fresh (valid) slots.
    fresh: usize,
    /// Number of slots written since the last reset (at most the size).
    written: usize,
    /// Next slot to read in freezing mode.
    frozen_head: usize,
}

impl EntropyRing {
    fn new(size: usize) -> Self {
        EntropyRing {
            slots: vec![Slot::default(); size.max(1)],
            head: 0,
            fresh: 0,
            written: 0,
            frozen_head: 0,
        }
    }

    fn size(&self) -> usize {
        self.slots.len()
    }

    /// Caches a good EV at `head`, overwriting the oldest entry when full.
    fn add(&mut self, entropy: Entropy) {
        let size = self.size();
        if let Some(slot) = self.slots.get_mut(self.head) {
            if !slot.valid {
                self.fresh = (self.fresh + 1).min(size);
            }
            *slot = Slot {
                entropy,
                valid: true,
            };
        }
        self.head = (self.head + 1) % size;
        self.written = (self.written + 1).min(size);
    }

    /// The oldest fresh EV, used up; `None` when no entry is fresh.
    fn take_oldest_fresh(&mut self) -> Option<Entropy> {
        if self.fresh == 0 {
            return None;
        }
        let size = self.size();
        let idx = (self.head + size - self.fresh % size) % size;
        let slot = self.slots.get_mut(idx)?;
        debug_assert!(
            slot.valid,
            "REPS ring: oldest fresh slot {idx} is not valid"
        );
        slot.valid = false;
        self.fresh -= 1;
        Some(slot.entropy)
    }

    /// Freezing mode: the next written slot round-robin, fresh or not; `None` when empty.
    fn take_frozen(&mut self) -> Option<Entropy> {
        if self.written == 0 {
            return None;
        }
        let idx = self.frozen_head % self.written;
        let slot = self.slots.get_mut(idx)?;
        if slot.valid {
            slot.valid = false;
            self.fresh = self.fresh.saturating_sub(1);
        }
        self.frozen_head = (idx + 1) % self.written;
        Some(slot.entropy)
    }

    fn reset(&mut self) {
        self.slots.fill(Slot::default());
        self.head = 0;
        self.fresh = 0;
        self.written = 0;
        self.frozen_head = 0;
    }
}

/// The largest RTT sample of a tumbling window (the artifact's `_last_rto_max_rtt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RttWindowMax {
    window: SimDuration,
    ends: SimTime,
    max: SimDuration,
}

impl RttWindowMax {
    fn sample(&mut self, now: SimTime, rtt: SimDuration) {
        if now > self.ends {
            self.max = SimDuration::ZERO;
            self.ends = now + self.window;
        }
        self.max = self.max.max(rtt);
    }
}

/// REPS for one queue pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Reps {
    num_entropies: u32,
    explore_pkts: u32,
    freezing: bool,
    trimming: bool,
    /// Whether an unmarked last-hop NACK is cached ([`LastHopTrim::Ack`]).
    last_hop_is_ack: bool,
    freeze: SimDuration,
    /// A timeout freezes (without trimming) only if the window's max RTT is below this.
    rtt_guard: SimDuration,
    mode: RepsMode,
    ring: EntropyRing,
    rtt_max: RttWindowMax,
}

impl Reps {
    /// REPS in exploring mode with an empty buffer.
    #[must_use]
    pub fn new(config: &RepsConfig) -> Self {
        // Validated: factor in [1, 100] and base RTT below 2^40 ns, so the product fits.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "validated ranges keep the product positive and below 2^47"
        )]
        let guard_ns = (config.rtt_guard_factor * config.base_rtt_ns as f64).round() as u64;
        Reps {
            num_entropies: config.num_entropies,
            explore_pkts: config.explore_pkts,
            freezing: config.freezing,
            trimming: config.trimming,
            last_hop_is_ack: config.last_hop_trim == LastHopTrim::Ack,
            freeze: SimDuration::from_ns(config.freeze_ns),
            rtt_guard: SimDuration::from_ns(guard_ns),
            mode: RepsMode::explore(config.explore_pkts),
            ring: EntropyRing::new(usize::try_from(config.buffer_size).unwrap_or(8)),
            rtt_max: RttWindowMax {
                window: SimDuration::from_ns(config.rtt_guard_window_ns),
                ends: SimTime::ZERO,
                max: SimDuration::ZERO,
            },
        }
    }

    /// The current mode.
    #[must_use]
    pub fn mode(&self) -> RepsMode {
        self.mode
    }

    fn step(&mut self, event: RepsEvent) {
        let (mode, action) = self.mode.on(event, self.freeze, self.explore_pkts);
        self.mode = mode;
        match action {
            RepsAction::None => {}
            RepsAction::ResetBuffer => self.ring.reset(),
        }
    }

    fn random(&self, rng: &mut SimRng) -> Entropy {
        // `below` returns < num_entropies <= 65536, so the value fits in 16 bits.
        Entropy(u16::try_from(rng.below(self.num_entropies)).unwrap_or(u16::MAX))
    }
}

impl PathSelector for Reps {
    fn next_entropy(&mut self, _cx: &SendCx, rng: &mut SimRng) -> Entropy {
        match self.mode {
            RepsMode::Exploring { .. } => {
                self.step(RepsEvent::ExploreSent);
                self.random(rng)
            }
            RepsMode::Recycling => self
                .ring
                .take_oldest_fresh()
                .unwrap_or_else(|| self.random(rng)),
            RepsMode::Freezing { .. } => {
                self.ring.take_frozen().unwrap_or_else(|| self.random(rng))
            }
        }
    }

    fn on_feedback(&mut self, fb: &Feedback, _rng: &mut SimRng) {
        if let Some(rtt) = fb.rtt {
            self.rtt_max.sample(fb.now, rtt);
        }
        if fb.kind == FeedbackKind::Timeout {
            let may_freeze = self.freezing && (self.trimming || self.rtt_max.max < self.rtt_guard);
            self.step(RepsEvent::Timeout {
                now: fb.now,
                may_freeze,
            });
        }
        self.step(RepsEvent::FeedbackAt(fb.now));
        let delivered = match fb.kind {
            FeedbackKind::Ack => true,
            FeedbackKind::Nack => fb.last_hop && self.last_hop_is_ack,
            FeedbackKind::Cnp | FeedbackKind::Timeout | FeedbackKind::ProbeAck => false,
        };
        if delivered && !fb.ecn {
            self.ring.add(fb.entropy);
        }
    }
}

impl Scheme for Reps {
    type Config = RepsConfig;
    const SPRAYS_ON_FEEDBACK: bool = true;

    fn validate(config: &RepsConfig) -> Result<(), ParamError> {
        config.validate()
    }
}

impl HostRole for Reps {
    type Selector = Reps;

    fn selector(config: &RepsConfig, _rng: &mut SimRng) -> Reps {
        Reps::new(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Psn;

    fn cx() -> SendCx {
        SendCx {
            now: SimTime::ZERO,
            psn: Psn(0),
            retransmission: false,
            inflight_pkts: 0,
            every_arrival_answered: false,
        }
    }

    fn fb(kind: FeedbackKind, now_ns: u64, entropy: u16, ecn: bool) -> Feedback {
        Feedback {
            kind,
            now: SimTime::from_ns(now_ns),
            entropy: Entropy(entropy),
            psn: Psn(0),
            rtt: None,
            ecn,
            last_hop: false,
        }
    }

    fn ack(now_ns: u64, entropy: u16) -> Feedback {
        fb(FeedbackKind::Ack, now_ns, entropy, false)
    }

    /// REPS with `explore` exploration packets and otherwise default parameters.
    fn reps(explore: u32) -> Reps {
        Reps::new(&RepsConfig {
            explore_pkts: explore,
            ..RepsConfig::default()
        })
    }

    /// Sends `n` packets and returns their entropies.
    fn send(r: &mut Reps, rng: &mut SimRng, n: usize) -> Vec<u16> {
        (0..n).map(|_| r.next_entropy(&cx(), rng).0).collect()
    }

    #[test]
    fn explores_the_first_bdp_then_recycles() {
        let mut r = reps(104);
        let mut rng = SimRng::new(1);
        assert_eq!(r.mode(), RepsMode::Exploring { remaining: 104 });
        let evs = send(&mut r, &mut rng, 103);
        assert_eq!(r.mode(), RepsMode::Exploring { remaining: 1 });
        // Random over 256 EVs: 103 draws hit many distinct values (expected ~84).
        let mut distinct = evs.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() > 60, "{}", distinct.len());
        assert!(evs.iter().all(|&e| e < 256));
        // Caching during exploration does not shorten it.
        r.on_feedback(&ack(1, 7), &mut rng);
        assert_eq!(r.mode(), RepsMode::Exploring { remaining: 1 });
        send(&mut r, &mut rng, 1);
        assert_eq!(r.mode(), RepsMode::Recycling);
        assert_eq!(
            send(&mut r, &mut rng, 1),
            vec![7],
            "the EV cached while exploring"
        );
    }

    #[test]
    fn good_ack_is_cached_and_reused_once_oldest_first() {
        let mut r = reps(0);
        let mut rng = SimRng::new(2);
        for (t, e) in [(1, 10), (2, 11), (3, 12)] {
            r.on_feedback(&ack(t, e), &mut rng);
        }
        assert_eq!(send(&mut r, &mut rng, 3), vec![10, 11, 12]);
        // Used up: the next one is random (and the buffer stays empty of fresh EVs).
        assert_eq!(r.ring.fresh, 0);
        r.on_feedback(&ack(4, 13), &mut rng);
        assert_eq!(send(&mut r, &mut rng, 1), vec![13]);
    }

    #[test]
    fn an_ecn_marked_ack_is_never_cached_nor_a_nack_cnp_or_timeout() {
        let mut r = reps(0);
        let mut rng = SimRng::new(3);
        r.on_feedback(&fb(FeedbackKind::Ack, 1, 42, true), &mut rng);
        r.on_feedback(&fb(FeedbackKind::Nack, 2, 43, false), &mut rng);
        r.on_feedback(&fb(FeedbackKind::Cnp, 3, 44, true), &mut rng);
        assert_eq!(r.ring.fresh, 0);
        assert_eq!(r.ring.written, 0);
        r.on_feedback(&fb(FeedbackKind::Timeout, 4, 45, false), &mut rng);
        assert_eq!(r.ring.written, 0);
    }

    /// What the uet NIC hands the load balancer for a trimmed packet
    /// (`RdmaUetRecovery::ReceiveAck`): a NACK naming the packet's entropy and ECN echo, with
    /// `last_hop` when the trim was at the port facing the receiver, under NSCC, RCCC and both
    /// alike (the congestion control changes the window, not what the NIC reports).
    fn uet_nack(now_ns: u64, entropy: u16, ecn: bool, last_hop: bool) -> Feedback {
        Feedback {
            last_hop,
            rtt: Some(SimDuration::from_ns(20_000)),
            ..fb(FeedbackKind::Nack, now_ns, entropy, ecn)
        }
    }

    #[test]
    fn a_last_hop_nack_is_cached_as_htsim_does_under_every_cc() {
        // The UEC htsim's rule (uec.cpp UecSrc::processNack -> uec_mp.cpp
        // UecMpReps::processEv): a last-hop trim is PATH_GOOD (cached) or PATH_ECN (not) by the
        // NACK's ECN echo; any other trim is PATH_NACK (not cached); the same under every CC.
        for cc in ["nscc", "rccc", "nscc+rccc"] {
            let mut r = Reps::new(&RepsConfig {
                explore_pkts: 0,
                trimming: true,
                last_hop_trim: LastHopTrim::Ack,
                ..RepsConfig::default()
            });
            let mut rng = SimRng::new(21);
            r.on_feedback(&uet_nack(1, 31, false, true), &mut rng); // cached
            r.on_feedback(&uet_nack(2, 32, true, true), &mut rng); // marked: PATH_ECN
            r.on_feedback(&uet_nack(3, 33, false, false), &mut rng); // before the last hop
            r.on_feedback(&uet_nack(4, 34, true, false), &mut rng);
            assert_eq!((r.ring.fresh, r.ring.written), (1, 1), "{cc}");
            assert_eq!(send(&mut r, &mut rng, 1), vec![31], "{cc}");
        }
    }

    #[test]
    fn by_default_a_last_hop_nack_is_a_nack_as_in_the_paper() {
        // Algorithm 1 and the REPS artifact (every NACK is PATH_NACK): never cached.
        let mut r = Reps::new(&RepsConfig {
            explore_pkts: 0,
            trimming: true,
            ..RepsConfig::default()
        });
        let mut rng = SimRng::new(22);
        r.on_feedback(&uet_nack(1, 31, false, true), &mut rng);
        r.on_feedback(&uet_nack(2, 32, false, false), &mut rng);
        assert_eq!((r.ring.fresh, r.ring.written), (0, 0));
        // An unmarked ACK that says last_hop (no NIC sends one) is an ACK either way.
        r.on_feedback(
            &Feedback {
                last_hop: true,
                ..ack(3, 35)
            },
            &mut rng,
        );
        assert_eq!(send(&mut r, &mut rng, 1), vec![35]);
    }

    #[test]
    fn last_hop_nacks_while_freezing_join_the_rotation_with_ack() {
        // htsim caches PATH_GOOD while frozen too, and a last-hop NACK is PATH_GOOD there.
        let mut r = Reps::new(&RepsConfig {
            explore_pkts: 0,
            trimming: true,
            last_hop_trim: LastHopTrim::Ack,
            ..RepsConfig::default()
        });
        let mut rng = SimRng::new(23);
        r.on_feedback(&ack(1, 40), &mut rng);
        r.on_feedback(&fb(FeedbackKind::Timeout, 2, 0, false), &mut rng);
        assert!(matches!(r.mode(), RepsMode::Freezing { .. }));
        r.on_feedback(&uet_nack(3, 41, false, true), &mut rng);
        assert_eq!(send(&mut r, &mut rng, 3), vec![40, 41, 40]);
    }

    #[test]
    fn last_hop_trim_is_a_parameter() {
        let parse = |p: &str| crate::config::LbConfig::parse("reps", p);
        assert!(parse("last_hop_trim = \"ack\"").is_ok());
        assert!(parse("last_hop_trim = \"nack\"").is_ok());
        assert!(parse("last_hop_trim = \"good\"").is_err());
    }

    #[test]
    fn the_buffer_keeps_the_newest_n_good_evs() {
        let mut r = reps(0);
        let mut rng = SimRng::new(4);
        // 11 good ACKs into an 8-entry buffer: the oldest 3 are overwritten.
        for e in 0..11u16 {
            r.on_feedback(&ack(u64::from(e), 100 + e), &mut rng);
        }
        assert_eq!(r.ring.fresh, 8);
        let got = send(&mut r, &mut rng, 8);
        assert_eq!(got, (103..111).collect::<Vec<u16>>());
    }

    #[test]
    fn buffer_size_is_configurable() {
        let mut r = Reps::new(&RepsConfig {
            explore_pkts: 0,
            buffer_size: 2,
            ..RepsConfig::default()
        });
        let mut rng = SimRng::new(5);
        for e in [1, 2, 3] {
            r.on_feedback(&ack(1, e), &mut rng);
        }
        assert_eq!(send(&mut r, &mut rng, 2), vec![2, 3]);
    }

    #[test]
    fn empty_buffer_gives_random_evs_in_the_entropy_space() {
        let mut r = Reps::new(&RepsConfig {
            explore_pkts: 0,
            num_entropies: 4,
            ..RepsConfig::default()
        });
        let mut rng = SimRng::new(6);
        let evs = send(&mut r, &mut rng, 400);
        let mut seen = [0u32; 4];
        for e in evs {
            seen[usize::from(e)] += 1;
        }
        // 400 uniform draws over 4 values: each ~100, all well above 50.
        assert!(seen.iter().all(|&c| c > 50), "{seen:?}");
    }

    #[test]
    fn a_timeout_enters_freezing_with_trimming() {
        let mut r = Reps::new(&RepsConfig {
            explore_pkts: 0,
            trimming: true,
            ..RepsConfig::default()
        });
        let mut rng = SimRng::new(7);
        r.on_feedback(&fb(FeedbackKind::Timeout, 1_000, 0, false), &mut rng);
        assert_eq!(
            r.mode(),
            RepsMode::Freezing {
                until: SimTime::from_ns(1_000 + 10_000_000)
            }
        );
    }

    #[test]
    fn without_trimming_the_rtt_guard_decides() {
        let mut rng = SimRng::new(8);
        let with_rtt = |now_ns, rtt_ns| Feedback {
            rtt: Some(SimDuration::from_ns(rtt_ns)),
            ..ack(now_ns, 1)
        };
        // Base RTT 8,320 ns × 1.65 = 13,728 ns.
        let mut calm = reps(0);
        calm.on_feedback(&with_rtt(100, 13_000), &mut rng);
        calm.on_feedback(&fb(FeedbackKind::Timeout, 200, 0, false), &mut rng);
        assert!(
            matches!(calm.mode(), RepsMode::Freezing { .. }),
            "{}",
            calm.mode()
        );

        let mut congested = reps(0);
        congested.on_feedback(&with_rtt(100, 13_728), &mut rng);
        congested.on_feedback(&fb(FeedbackKind::Timeout, 200, 0, false), &mut rng);
        assert_eq!(congested.mode(), RepsMode::Recycling, "a congested timeout");

        // The window is tumbling: 640 µs after its first sample a new sample starts afresh.
        congested.on_feedback(&with_rtt(640_101, 9_000), &mut rng);
        congested.on_feedback(&fb(FeedbackKind::Timeout, 640_200, 0, false), &mut rng);
        assert!(matches!(congested.mode(), RepsMode::Freezing { .. }));
    }

    #[test]
    fn freezing_can_be_disabled() {
        let mut r = Reps::new(&RepsConfig {
            explore_pkts: 0,
            freezing: false,
            trimming: true,
            ..RepsConfig::default()
        });
        let mut rng = SimRng::new(9);
        r.on_feedback(&fb(FeedbackKind::Timeout, 1, 0, false), &mut rng);
        assert_eq!(r.mode(), RepsMode::Recycling);
    }

    #[test]
    fn no_freezing_while_exploring() {
        let mut r = reps(10);
        let mut rng = SimRng::new(10);
        r.on_feedback(&fb(FeedbackKind::Timeout, 1, 0, false), &mut rng);
        assert_eq!(r.mode(), RepsMode::Exploring { remaining: 10 });
    }

    #[test]
    fn freezing_reuses_the_buffer_round_robin_then_exits_with_reset_and_exploration() {
        let mut r = Reps::new(&RepsConfig {
            explore_pkts: 3,
            freeze_ns: 1_000,
            ..RepsConfig::default()
        });
        let mut rng = SimRng::new(11);
        send(&mut r, &mut rng, 3);
        for e in [20, 21, 22] {
            r.on_feedback(&ack(10, e), &mut rng);
        }
        // One fresh EV used before the failure: it stays in the frozen rotation.
        assert_eq!(send(&mut r, &mut rng, 1), vec![20]);
        r.on_feedback(&fb(FeedbackKind::Timeout, 100, 0, false), &mut rng);
        assert_eq!(
            r.mode(),
            RepsMode::Freezing {
                until: SimTime::from_ns(1_100)
            }
        );
        assert_eq!(send(&mut r, &mut rng, 7), vec![20, 21, 22, 20, 21, 22, 20]);
        // Good ACKs while frozen are still cached and join the rotation.
        r.on_feedback(&ack(500, 23), &mut rng);
        assert_eq!(send(&mut r, &mut rng, 4), vec![21, 22, 23, 20]);
        // Feedback at exactly `until` does not exit; strictly after does.
        r.on_feedback(&fb(FeedbackKind::Ack, 1_100, 24, true), &mut rng);
        assert!(matches!(r.mode(), RepsMode::Freezing { .. }));
        r.on_feedback(&fb(FeedbackKind::Ack, 1_101, 25, true), &mut rng);
        assert_eq!(r.mode(), RepsMode::Exploring { remaining: 3 });
        assert_eq!(r.ring, EntropyRing::new(8), "buffer reset on exit");
        send(&mut r, &mut rng, 3);
        assert_eq!(r.mode(), RepsMode::Recycling);
    }

    #[test]
    fn frozen_with_an_empty_buffer_sprays_randomly() {
        let mut r = Reps::new(&RepsConfig {
            explore_pkts: 0,
            trimming: true,
            num_entropies: 256,
            ..RepsConfig::default()
        });
        let mut rng = SimRng::new(12);
        r.on_feedback(&fb(FeedbackKind::Timeout, 1, 0, false), &mut rng);
        let evs = send(&mut r, &mut rng, 50);
        let mut d = evs.clone();
        d.sort_unstable();
        d.dedup();
        assert!(d.len() > 30, "{}", d.len());
    }

    #[test]
    fn transition_table() {
        let f = SimDuration::from_ns(10);
        let t = SimTime::from_ns(100);
        let frozen = RepsMode::Freezing {
            until: SimTime::from_ns(110),
        };
        let ex = |r| RepsMode::Exploring { remaining: r };
        let timeout = |may_freeze| RepsEvent::Timeout { now: t, may_freeze };
        let cases = [
            (ex(2), RepsEvent::ExploreSent, ex(1), RepsAction::None),
            (
                ex(1),
                RepsEvent::ExploreSent,
                RepsMode::Recycling,
                RepsAction::None,
            ),
            (ex(2), timeout(true), ex(2), RepsAction::None),
            (ex(2), RepsEvent::FeedbackAt(t), ex(2), RepsAction::None),
            (RepsMode::Recycling, timeout(true), frozen, RepsAction::None),
            (
                RepsMode::Recycling,
                timeout(false),
                RepsMode::Recycling,
                RepsAction::None,
            ),
            (
                RepsMode::Recycling,
                RepsEvent::FeedbackAt(t),
                RepsMode::Recycling,
                RepsAction::None,
            ),
            (frozen, timeout(true), frozen, RepsAction::None),
            (
                frozen,
                RepsEvent::FeedbackAt(SimTime::from_ns(110)),
                frozen,
                RepsAction::None,
            ),
            (
                frozen,
                RepsEvent::FeedbackAt(SimTime::from_ns(111)),
                ex(5),
                RepsAction::ResetBuffer,
            ),
        ];
        for (from, event, to, action) in cases {
            assert_eq!(from.on(event, f, 5), (to, action), "{from} on {event:?}");
        }
        assert_eq!(
            frozen.on(RepsEvent::FeedbackAt(SimTime::from_ns(111)), f, 0),
            (RepsMode::Recycling, RepsAction::ResetBuffer),
            "no exploration configured"
        );
    }

    /// One step of a random scenario.
    #[derive(Debug, Clone)]
    enum Op {
        Send,
        Ack { entropy: u16, ecn: bool },
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            Just(Op::Send),
            (0u16..64, any::<bool>()).prop_map(|(entropy, ecn)| Op::Ack { entropy, ecn }),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]

        /// Differential test of recycling mode against a plain FIFO of the newest `size` good
        /// EVs: every cached EV is used once, oldest first; an empty FIFO means a random EV.
        #[test]
        fn recycling_matches_a_fifo_of_the_newest_good_evs(
            size in 1u32..12,
            ops in proptest::collection::vec(op(), 0..300),
            seed: u64,
        ) {
            let mut r = Reps::new(&RepsConfig {
                explore_pkts: 0,
                buffer_size: size,
                num_entropies: 64,
                ..RepsConfig::default()
            });
            let mut rng = SimRng::new(seed);
            let mut fifo = std::collections::VecDeque::new();
            for (t, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Ack { entropy, ecn } => {
                        r.on_feedback(&fb(FeedbackKind::Ack, t as u64, entropy, ecn), &mut rng);
                        if !ecn {
                            fifo.push_back(entropy);
                            if fifo.len() > size as usize {
                                fifo.pop_front();
                            }
                        }
                    }
                    Op::Send => {
                        let e = r.next_entropy(&cx(), &mut rng).0;
                        proptest::prop_assert!(e < 64);
                        if let Some(want) = fifo.pop_front() {
                            proptest::prop_assert_eq!(e, want);
                        }
                    }
                }
                proptest::prop_assert_eq!(r.ring.fresh, fifo.len());
                proptest::prop_assert_eq!(r.mode(), RepsMode::Recycling);
            }
        }
    }

    #[test]
    fn same_seed_same_decisions() {
        let run = |seed| {
            let mut r = reps(8);
            let mut rng = SimRng::new(seed);
            let mut out = Vec::new();
            for i in 0..64u16 {
                out.push(r.next_entropy(&cx(), &mut rng).0);
                r.on_feedback(
                    &fb(
                        FeedbackKind::Ack,
                        u64::from(i),
                        out[usize::from(i)],
                        i % 3 == 0,
                    ),
                    &mut rng,
                );
            }
            out
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }
}
