//! Sender-NIC path selection: one selector per queue pair chooses the entropy of each data
//! packet and learns from the feedback (ACK, NACK, CNP, timeout) that echoes it.
//!
//! Dispatch is static: [`HostSelector`] is an enum over the concrete selectors, so the
//! per-packet call is a `match`, never a virtual call (a `Box<dyn>` would add an indirect call
//! and an allocation per queue pair for no flexibility we need: the set of algorithms is
//! closed and known at compile time).

pub mod ecmp;
pub mod flowbender;
pub mod hopper;
pub mod reps;
pub mod spray;
pub mod whack_a_mole;

use crate::config::HostLbConfig;
use crate::rng::SimRng;
use crate::time::{SimDuration, SimTime};
use crate::units::{Entropy, Psn};

/// What the NIC knows when it is about to send a data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendCx {
    /// Now.
    pub now: SimTime,
    /// Sequence number of the packet about to be sent.
    pub psn: Psn,
    /// Whether it is a retransmission.
    pub retransmission: bool,
    /// Packets sent and not yet acknowledged.
    pub inflight_pkts: u32,
}

/// The kind of feedback the NIC received about a packet it sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedbackKind {
    /// A (cumulative or selective) acknowledgement.
    Ack,
    /// A negative acknowledgement (a gap or an out-of-order arrival at the receiver).
    Nack,
    /// A congestion notification packet.
    Cnp,
    /// The retransmission timer fired.
    Timeout,
    /// The answer to a probe packet the selector asked for ([`PathSelector::take_probe`]).
    ProbeAck,
}

/// Feedback about a packet sent on `entropy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feedback {
    /// What kind of feedback.
    pub kind: FeedbackKind,
    /// Now.
    pub now: SimTime,
    /// The entropy of the packet the feedback answers (echoed by the receiver).
    pub entropy: Entropy,
    /// The sequence number the feedback answers.
    pub psn: Psn,
    /// Round-trip time of that packet, when the feedback carries its send time.
    pub rtt: Option<SimDuration>,
    /// Whether the answered packet arrived ECN-marked.
    pub ecn: bool,
}

/// One queue pair's path selector. Implementations are pure: time and randomness are arguments.
pub trait PathSelector {
    /// Fires before each data packet is sent: returns the entropy to stamp on it.
    fn next_entropy(&mut self, cx: &SendCx, rng: &mut SimRng) -> Entropy;
    /// Fires on each ACK, NACK, CNP or timeout of this queue pair.
    fn on_feedback(&mut self, _fb: &Feedback, _rng: &mut SimRng) {}
    /// The time the selector wants [`PathSelector::on_timer`] called, if any.
    fn poll_at(&self) -> Option<SimTime> {
        None
    }
    /// Fires at (or after) the time [`PathSelector::poll_at`] asked for.
    fn on_timer(&mut self, _now: SimTime, _rng: &mut SimRng) {}
    /// The earliest time the next data packet may leave (a selector may hold the queue pair
    /// while it switches paths, e.g. Hopper).
    fn send_after(&self) -> SimTime {
        SimTime::ZERO
    }
    /// Fires when the NIC may send a probe: returns the entropy of a small probe packet to send
    /// now, if the selector wants one; its answer comes back as [`FeedbackKind::ProbeAck`].
    fn take_probe(&mut self, _now: SimTime) -> Option<Entropy> {
        None
    }
    /// How many times the selector has moved the queue pair to another path (for the per-flow
    /// output; per-packet sprayers report 0).
    fn path_switches(&self) -> u64 {
        0
    }
}

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
        let mut rng = SimRng::new(seed);
        let selector = match config {
            HostLbConfig::FixedPerFlow => HostSelector::Ecmp(ecmp::FixedEntropy::new(&mut rng)),
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
