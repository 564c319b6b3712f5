//! Sender-NIC path selection: one selector per queue pair chooses the entropy of each data
//! packet and learns from the feedback (ACK, NACK, CNP, timeout) that echoes it.
//!
//! Dispatch is static: [`HostSelector`] is an enum over the concrete selectors, so the
//! per-packet call is a `match`, never a virtual call (a `Box<dyn>` would add an indirect call
//! and an allocation per queue pair for no flexibility we need: the set of algorithms is
//! closed and known at compile time).
//!
//! The interface the algorithms implement ([`PathSelector`], with [`SendCx`] and [`Feedback`])
//! lives in its own module, which is all the algorithms depend on; this module dispatches over
//! them and builds them from a [`HostLbConfig`].

pub mod ecmp;
pub mod flowbender;
pub mod hopper;
pub mod reps;
mod selector;
pub mod spray;
pub mod whack_a_mole;

pub use selector::{Feedback, FeedbackKind, PathSelector, SendCx};

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::config::HostLbConfig;
use crate::rng::SimRng;
use crate::time::SimTime;
use crate::units::Entropy;

/// The selectors we have, dispatched statically.
#[derive(Debug, Clone)]
pub enum HostSelector {
    /// See [`ecmp::FixedEntropy`].
    Ecmp(ecmp::FixedEntropy),
    /// See [`spray::Spray`].
    Spray(spray::Spray),
    /// See [`reps::Reps`].
    Reps(reps::Reps),
    /// See [`flowbender::FlowBender`].
    FlowBender(flowbender::FlowBender),
    /// See [`whack_a_mole::WhackAMole`].
    WhackAMole(whack_a_mole::WhackAMole),
    /// See [`hopper::Hopper`]. Boxed: its probe and explored-path tables would otherwise make
    /// every queue pair's selector, whatever the algorithm, ~630 bytes (one allocation per
    /// queue pair, none per packet).
    Hopper(Box<hopper::Hopper>),
}

/// Forwards a call to the selector inside any [`HostSelector`] (static dispatch).
macro_rules! dispatch {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            HostSelector::Ecmp($s) => $call,
            HostSelector::Spray($s) => $call,
            HostSelector::Reps($s) => $call,
            HostSelector::FlowBender($s) => $call,
            HostSelector::WhackAMole($s) => $call,
            HostSelector::Hopper($s) => $call,
        }
    };
}

impl PathSelector for HostSelector {
    fn next_entropy(&mut self, cx: &SendCx, rng: &mut SimRng) -> Entropy {
        dispatch!(self, s => s.next_entropy(cx, rng))
    }

    fn on_feedback(&mut self, fb: &Feedback, rng: &mut SimRng) {
        dispatch!(self, s => s.on_feedback(fb, rng));
    }

    fn poll_at(&self) -> Option<SimTime> {
        dispatch!(self, s => s.poll_at())
    }

    fn on_timer(&mut self, now: SimTime, rng: &mut SimRng) {
        dispatch!(self, s => s.on_timer(now, rng));
    }

    fn send_after(&self) -> SimTime {
        dispatch!(self, s => s.send_after())
    }

    fn take_probe(&mut self, now: SimTime) -> Option<Entropy> {
        dispatch!(self, s => s.take_probe(now))
    }

    fn path_switches(&self) -> u64 {
        dispatch!(self, s => s.path_switches())
    }
}

/// A queue pair's load balancer: its selector and its own seeded generator.
#[derive(Debug, Clone)]
pub struct HostLb {
    selector: HostSelector,
    rng: SimRng,
}

impl HostLb {
    /// A selector for one queue pair; `seed` makes it deterministic.
    #[must_use]
    pub fn new(config: &HostLbConfig, seed: u64) -> Self {
        Self::for_flow(config, seed, None)
    }

    /// A selector for one queue pair whose flow has its own source port `flow_entropy` (the
    /// reference simulator's per-host port, quirk `flow-ports`): a selector that keeps one
    /// entropy per flow ([`HostLbConfig::FixedPerFlow`]) keeps that one instead of drawing it;
    /// every other selector chooses its entropies as with [`HostLb::new`].
    #[must_use]
    pub fn for_flow(config: &HostLbConfig, seed: u64, flow_entropy: Option<Entropy>) -> Self {
        let mut rng = SimRng::new(seed);
        let selector = match config {
            HostLbConfig::FixedPerFlow => HostSelector::Ecmp(match flow_entropy {
                Some(e) => ecmp::FixedEntropy::with(e),
                None => ecmp::FixedEntropy::new(&mut rng),
            }),
            HostLbConfig::Spray(c) => HostSelector::Spray(spray::Spray::new(c)),
            HostLbConfig::Reps(c) => HostSelector::Reps(reps::Reps::new(c)),
            HostLbConfig::FlowBender(c) => {
                HostSelector::FlowBender(flowbender::FlowBender::new(c, &mut rng))
            }
            HostLbConfig::WhackAMole(c) => {
                HostSelector::WhackAMole(whack_a_mole::WhackAMole::new(c, &mut rng))
            }
            HostLbConfig::Hopper(c) => {
                HostSelector::Hopper(Box::new(hopper::Hopper::new(c, &mut rng)))
            }
        };
        HostLb { selector, rng }
    }

    /// See [`PathSelector::next_entropy`].
    pub fn next_entropy(&mut self, cx: &SendCx) -> Entropy {
        self.selector.next_entropy(cx, &mut self.rng)
    }

    /// See [`PathSelector::on_feedback`].
    pub fn on_feedback(&mut self, fb: &Feedback) {
        self.selector.on_feedback(fb, &mut self.rng);
    }

    /// See [`PathSelector::poll_at`].
    #[must_use]
    pub fn poll_at(&self) -> Option<SimTime> {
        self.selector.poll_at()
    }

    /// See [`PathSelector::on_timer`].
    pub fn on_timer(&mut self, now: SimTime) {
        self.selector.on_timer(now, &mut self.rng);
    }

    /// See [`PathSelector::send_after`].
    #[must_use]
    pub fn send_after(&self) -> SimTime {
        self.selector.send_after()
    }

    /// See [`PathSelector::take_probe`].
    pub fn take_probe(&mut self, now: SimTime) -> Option<Entropy> {
        self.selector.take_probe(now)
    }

    /// See [`PathSelector::path_switches`].
    #[must_use]
    pub fn path_switches(&self) -> u64 {
        self.selector.path_switches()
    }
}

/// The load-balancing state one sender NIC keeps across its queue pairs: the per-destination
/// profiles of Whack-a-Mole with `profile_scope = "destination"` (empty otherwise). The NIC
/// creates each queue pair's selector from it.
#[derive(Debug, Clone)]
pub struct HostLbGroup {
    config: HostLbConfig,
    /// Per destination address, the profile the NIC's queue pairs to it share.
    shared: BTreeMap<u32, whack_a_mole::SharedPathState>,
}

impl HostLbGroup {
    /// A NIC's group with nothing learned yet.
    #[must_use]
    pub fn new(config: &HostLbConfig) -> Self {
        HostLbGroup {
            config: config.clone(),
            shared: BTreeMap::new(),
        }
    }

    /// A selector for a queue pair to `destination`; `seed` makes it deterministic (the same
    /// draws as [`HostLb::for_flow`], which also says what `flow_entropy` does). Allocates
    /// the destination's shared profile on first use.
    pub fn new_lb(&mut self, destination: u32, seed: u64, flow_entropy: Option<Entropy>) -> HostLb {
        match &self.config {
            HostLbConfig::WhackAMole(c)
                if c.profile_scope == whack_a_mole::ProfileScope::Destination =>
            {
                let state = self
                    .shared
                    .entry(destination)
                    .or_insert_with(|| Rc::new(RefCell::new(whack_a_mole::PathState::new(c))))
                    .clone();
                let mut rng = SimRng::new(seed);
                let selector = HostSelector::WhackAMole(whack_a_mole::WhackAMole::with_shared(
                    c, state, &mut rng,
                ));
                HostLb { selector, rng }
            }
            config => HostLb::for_flow(config, seed, flow_entropy),
        }
    }

    /// Destinations with a shared profile.
    #[must_use]
    pub fn shared_profiles(&self) -> usize {
        self.shared.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;
    use crate::config::LbConfig;
    use crate::time::SimDuration;
    use crate::units::Psn;

    fn send(lb: &mut HostLb, now_ns: u64) -> Entropy {
        lb.next_entropy(&SendCx {
            now: SimTime::from_ns(now_ns),
            psn: Psn(0),
            retransmission: false,
            inflight_pkts: 0,
            every_arrival_answered: false,
        })
    }

    fn ack(lb: &mut HostLb, now_ns: u64, entropy: Entropy, ecn: bool) {
        lb.on_feedback(&Feedback {
            kind: FeedbackKind::Ack,
            now: SimTime::from_ns(now_ns),
            entropy,
            psn: Psn(0),
            rtt: None,
            ecn,
        });
    }

    /// Packets out of 64 (one counter period) that `lb` sends on entropy 1.
    fn on_path_1(lb: &mut HostLb, now_ns: u64) -> usize {
        (0..64).filter(|_| send(lb, now_ns) == Entropy(1)).count()
    }

    /// Marks every packet `lb` sends on entropy 1 for 5 ms (a packet every 10 µs).
    fn whack_path_1(lb: &mut HostLb) -> u64 {
        let mut t = 0;
        while t < 5_000_000 {
            let e = send(lb, t);
            ack(lb, t, e, e == Entropy(1));
            t += 10_000;
        }
        t
    }

    fn wam(scope: &str) -> HostLbConfig {
        let params = format!(
            "num_paths = 4, log2_balls = 6, objective = \"none\", profile_scope = \"{scope}\""
        );
        LbConfig::parse("whack-a-mole", &params).unwrap().host
    }

    #[test]
    fn destination_scope_shares_one_profile_per_destination() {
        let mut nic = HostLbGroup::new(&wam("destination"));
        let mut first = nic.new_lb(5, 1, None);
        let t = whack_path_1(&mut first);
        // The first queue pair learned that path 1 is bad: 1 ball of 64 left.
        assert_eq!(on_path_1(&mut first, t), 1);
        drop(first);
        // A later queue pair to the same destination starts from what was learned ...
        let mut second = nic.new_lb(5, 2, None);
        assert_eq!(on_path_1(&mut second, t), 1);
        // ... one to another destination from the uniform profile (16 of 64).
        let mut other = nic.new_lb(6, 3, None);
        assert_eq!(on_path_1(&mut other, t), 16);
        assert_eq!(nic.shared_profiles(), 2);
    }

    #[test]
    fn queue_pair_scope_forgets_and_matches_a_lone_selector() {
        let cfg = wam("queue-pair");
        let mut nic = HostLbGroup::new(&cfg);
        let mut first = nic.new_lb(5, 1, None);
        let t = whack_path_1(&mut first);
        assert_eq!(on_path_1(&mut first, t), 1);
        let mut second = nic.new_lb(5, 2, None);
        assert_eq!(on_path_1(&mut second, t), 16);
        assert_eq!(nic.shared_profiles(), 0);
        // Same seed, same decisions as a selector made without a group.
        let (mut a, mut b) = (nic.new_lb(7, 9, None), HostLb::new(&cfg, 9));
        for t in 0..256 {
            assert_eq!(send(&mut a, t * 1_000), send(&mut b, t * 1_000));
        }
    }

    #[test]
    fn other_algorithms_ignore_the_group() {
        let cfg = LbConfig::parse("spray", "").unwrap().host;
        let mut nic = HostLbGroup::new(&cfg);
        let (mut a, mut b) = (nic.new_lb(5, 4, None), HostLb::new(&cfg, 4));
        for t in 0..64 {
            assert_eq!(send(&mut a, t), send(&mut b, t));
        }
        assert_eq!(nic.shared_profiles(), 0);
    }

    /// What an IRN NIC does around a loss, in the order it does it: data packets sprayed one
    /// per 100 ns, each answered 8 us later with its entropy, RTT and PSN echoed, except those
    /// sent on entropy `dead` from 20 us on (a black hole); at 340 us the retransmission
    /// timeout names the oldest unanswered packet's entropy; then the go-back resends every
    /// unanswered PSN (`retransmission`: its offset is below the highest sent) before new data.
    /// At every resend a clone of the selector is asked the same question as a new packet
    /// (`retransmission: false`): the answers must be equal -- a resend's entropy is chosen
    /// exactly as a new packet's, never copied from its original. Returns, per resend, the
    /// original's entropy and the resend's.
    fn resends_of(name: &str, params: &str) -> (Entropy, Vec<(Entropy, Entropy)>) {
        let cfg = LbConfig::parse(name, params).unwrap().host;
        let mut lb = HostLb::for_flow(&cfg, 11, Some(Entropy(7)));
        let cx = |t: u64, psn: u32, retransmission: bool, inflight: u32| SendCx {
            now: SimTime::from_ns(t),
            psn: Psn(psn),
            retransmission,
            inflight_pkts: inflight,
            every_arrival_answered: true,
        };
        let answer = |lb: &mut HostLb, at: u64, sent: u64, psn: u32, e: Entropy| {
            lb.on_feedback(&Feedback {
                kind: FeedbackKind::Ack,
                now: SimTime::from_ns(at),
                entropy: e,
                psn: Psn(psn),
                rtt: Some(SimDuration::from_ns(at - sent)),
                ecn: false,
            });
        };
        let mut sent: Vec<(u64, Entropy)> = Vec::new(); // per PSN: send time, entropy
        let mut answered: Vec<bool> = Vec::new();
        // The black-holed entropy: the first one sent from 20 us on.
        let mut dead = None;
        let mut t = 0;
        while t < 348_000 {
            // Answers due (8 us after their send), then one new packet (none in the last 8 us,
            // so that what is unanswered at the timeout is what the black hole took).
            for (psn, &(at, e)) in sent.iter().enumerate() {
                let lost = Some(e) == dead && at >= 20_000;
                if !lost && !answered[psn] && at + 8_000 <= t {
                    answered[psn] = true;
                    answer(&mut lb, at + 8_000, at, u32::try_from(psn).unwrap(), e);
                }
            }
            if t < 340_000 {
                let psn = u32::try_from(sent.len()).unwrap();
                let inflight = u32::try_from(answered.iter().filter(|&&a| !a).count()).unwrap();
                let e = lb.next_entropy(&cx(t, psn, false, inflight));
                if t >= 20_000 && dead.is_none() {
                    dead = Some(e);
                }
                sent.push((t, e));
                answered.push(false);
            }
            t += 100;
        }
        let dead = dead.unwrap();
        let oldest = answered.iter().position(|&a| !a).unwrap();
        lb.on_feedback(&Feedback {
            kind: FeedbackKind::Timeout,
            now: SimTime::from_ns(t),
            entropy: sent[oldest].1,
            psn: Psn(u32::try_from(oldest).unwrap()),
            rtt: None,
            ecn: false,
        });
        let mut resends = Vec::new();
        for psn in (0..sent.len()).filter(|&p| !answered[p]) {
            let p = u32::try_from(psn).unwrap();
            let inflight = u32::try_from(answered.iter().filter(|&&a| !a).count()).unwrap();
            let as_new = lb.clone().next_entropy(&cx(t, p, false, inflight));
            let e = lb.next_entropy(&cx(t, p, true, inflight));
            assert_eq!(
                e, as_new,
                "{name}: PSN {p}'s resend chosen unlike a new packet"
            );
            resends.push((sent[psn].1, e));
            t += 100;
        }
        assert!(!resends.is_empty(), "{name}: the black hole lost packets");
        assert!(
            resends.iter().all(|&(orig, _)| orig == dead),
            "{name}: only the dead entropy lost"
        );
        (dead, resends)
    }

    #[test]
    fn a_resend_asks_the_balancer_as_a_new_packet_does() {
        // ECMP: the flow's one entropy, for resends too.
        let (dead, r) = resends_of("ecmp", "");
        assert_eq!(dead, Entropy(7));
        assert!(r.iter().all(|&(_, e)| e == Entropy(7)), "{r:?}");
        // The sprayers and FlowBender (which reroutes on the timeout): a fresh choice, so
        // resends leave the lost packets' entropy. Hopper moves only once its probes answer
        // (not modelled here), so its resends stay, like its new packets would.
        for (name, params) in [
            ("spray", ""),
            ("reps", ""),
            ("flowbender", ""),
            ("whack-a-mole", "num_paths = 4"),
        ] {
            let (dead, r) = resends_of(name, params);
            let moved = r.iter().filter(|&&(_, e)| e != dead).count();
            assert!(
                moved > 0,
                "{name}: all {} resends followed their originals",
                r.len()
            );
        }
        let _ = resends_of("hopper", "");
        // Whack-a-Mole declared the black-holed path dead (stall test, 5 RTTs): no resend
        // goes back into it.
        let (dead, r) = resends_of("whack-a-mole", "num_paths = 4");
        assert!(
            r.iter().all(|&(_, e)| e != dead),
            "a resend on the dead path"
        );
    }
}
