//! What a sender NIC and its path selectors say to each other: the state of the NIC at each
//! data packet ([`SendCx`]), the feedback that comes back ([`Feedback`]), and the trait every
//! host algorithm implements ([`PathSelector`]). The algorithms depend on this module only;
//! the dispatch over them and their construction from a config are in [`super`].

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
    /// Whether the receiver answers every arrival with its own feedback (IRN: an ACK or a
    /// SACK per packet). Go-Back-N (ACK milestones, out-of-order packets discarded) and NIC-SR
    /// (unmarked out-of-order arrivals unanswered) do not: a missing answer is then no loss.
    pub every_arrival_answered: bool,
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
    /// A NACK of a packet trimmed at its last hop, the switch port facing the receiver (the
    /// uet transport's trims; the UEC htsim's `last_hop`): the path up to there delivered it.
    pub last_hop: bool,
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
