//! Switch-side load balancing: one chooser per switch picks, for each packet, one egress port
//! among the equal-cost candidates of the routing table; top-of-rack (ToR) switches may also
//! act on the traffic of their host-facing ports (Themis-D).
//!
//! As on the host side, dispatch is a `match` over [`SwitchChooser`] (static dispatch).
//!
//! Two small traits, one per role:
//! * [`EgressChooser`]: every switch, every packet with more than one candidate.
//! * [`TorAgent`]: ToR switches only; sees data leaving towards a host, NACKs arriving from a
//!   host and link-state changes. Every method has a do-nothing default, so only the
//!   algorithms that need the role (Themis) implement it.
//!
//! The algorithms (each module names its paper and section):
//! * [`ecmp`]: flow ECMP hash (the reference simulator).
//! * [`themis`]: Themis-S PSN-based spraying + Themis-D NACK filtering (seed 001).
//! * [`plts_random`], [`plts_counter`], [`plts_rr`]: PLTS (seed 003 §III-A).
//! * [`adaptive`]: per-packet least-queue adaptive routing (the "AR" baseline of seed 001 §5).
//! * [`drill`]: DRILL(d, m) (spec/algorithms.md §5).

pub mod adaptive;
pub mod drill;
pub mod ecmp;
pub mod plts_counter;
pub mod plts_random;
pub mod plts_rr;
pub mod themis;

use crate::config::SwitchLbConfig;
use crate::rng::SimRng;
use crate::time::SimTime;
use crate::units::{Entropy, Psn};

/// What a packet is, as far as load balancing cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketKind {
    /// RDMA data.
    Data,
    /// Acknowledgement.
    Ack,
    /// Negative acknowledgement.
    Nack,
    /// Congestion notification.
    Cnp,
}

/// The fields of a packet a switch algorithm may read (C++ parses headers; Rust never does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketMeta {
    /// Packet kind.
    pub kind: PacketKind,
    /// Source IPv4 address.
    pub sip: u32,
    /// Destination IPv4 address.
    pub dip: u32,
    /// UDP source port: the entropy of data packets; for ACK/NACK, the sender's queue-pair
    /// number.
    pub sport: Entropy,
    /// UDP destination port: the sender's queue-pair number on data; for ACK/NACK, the
    /// echoed entropy.
    pub dport: u16,
    /// Data: the packet's sequence number; ACK/NACK: the receiver's expected sequence number
    /// (ePSN). Counted in packets.
    pub psn: Psn,
    /// Port the packet arrived on.
    pub ingress_port: u32,
    /// Size on the wire.
    pub size_bytes: u32,
}

/// One equal-cost egress port and its current state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EgressCandidate {
    /// The port's index on the switch.
    pub port: u32,
    /// Bytes queued at the port (all classes).
    pub queue_bytes: u64,
    /// Bytes the port has sent so far.
    pub tx_bytes: u64,
}

/// The decision for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EgressChoice {
    /// Index into the candidates passed in.
    pub index: usize,
    /// A new entropy (UDP source port) to write into the packet before it leaves, when the
    /// algorithm steers the next tiers through the header (Themis-S in a 3-tier fabric).
    pub rewrite_entropy: Option<Entropy>,
}

impl EgressChoice {
    /// Candidate `index`, header unchanged.
    #[must_use]
    pub const fn at(index: usize) -> Self {
        EgressChoice {
            index,
            rewrite_entropy: None,
        }
    }
}

/// One switch's egress chooser. Implementations are pure: time and randomness are arguments.
pub trait EgressChooser {
    /// Fires for each packet with at least two candidates; the returned index must be
    /// `< candidates.len()`.
    fn choose(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> EgressChoice;
}

/// What a ToR does with a NACK that a host sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NackVerdict {
    /// Let it go on to the sender.
    Forward,
    /// Drop it: it was caused by reordering, not by a loss.
    Block,
}

/// A NACK the ToR must send on the receiver's behalf (Themis NACK compensation, seed 001
/// §3.4). The C++ side builds it like the receiver NIC would: from `receiver` to `sender`,
/// source port = `qpn`, expected sequence number = `epsn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compensation {
    /// The data sender's address (the NACK's destination).
    pub sender: u32,
    /// The receiving host's address (the NACK's source).
    pub receiver: u32,
    /// The sender's queue-pair number.
    pub qpn: u16,
    /// The expected sequence number the NACK carries (the blocked ePSN).
    pub epsn: Psn,
}

/// Which link a link-state notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkScope {
    /// The link of one of this switch's ports.
    Local {
        /// The port.
        port: u32,
    },
    /// A link elsewhere in the fabric, reported by the monitoring system (seed 001 §6).
    Remote,
}

/// The ToR role: hooks on the host-facing ports. Defaults do nothing.
pub trait TorAgent {
    /// Declares `port` as facing a host, with the last hop's bandwidth and one-way delay.
    fn add_host_port(&mut self, _port: u32, _bandwidth_bps: u64, _delay_ns: u64) {}
    /// A data packet leaves towards a host through `port` (at dequeue). May ask for a
    /// compensation NACK.
    fn on_data_to_host(
        &mut self,
        _now: SimTime,
        _pkt: &PacketMeta,
        _port: u32,
    ) -> Option<Compensation> {
        None
    }
    /// A NACK arrived from a host; `num_uplinks` is the number of equal-cost candidates the
    /// switch has towards the NACK's destination (the data sender).
    fn on_nack_from_host(
        &mut self,
        _now: SimTime,
        _pkt: &PacketMeta,
        _num_uplinks: usize,
    ) -> NackVerdict {
        NackVerdict::Forward
    }
    /// A link went down (`down`) or came back.
    fn on_link_state(&mut self, _scope: LinkScope, _down: bool) {}
    /// Bytes of switch memory the algorithm's state needs, by the paper's accounting (0 for
    /// algorithms without per-flow switch state).
    fn memory_bytes(&self) -> u64 {
        0
    }
}

/// The choosers we have, dispatched statically.
#[derive(Debug, Clone)]
pub enum SwitchChooser {
    /// See [`ecmp::EcmpHash`].
    Ecmp(ecmp::EcmpHash),
    /// See [`themis::Themis`]. Boxed: it carries flow tables.
    Themis(Box<themis::Themis>),
    /// See [`plts_random::PltsRandom`].
    PltsRandom(plts_random::PltsRandom),
    /// See [`plts_counter::PltsCounter`].
    PltsCounter(plts_counter::PltsCounter),
    /// See [`plts_rr::PltsRr`].
    PltsRr(plts_rr::PltsRr),
    /// See [`adaptive::Adaptive`].
    Adaptive(adaptive::Adaptive),
    /// See [`drill::Drill`].
    Drill(drill::Drill),
}

/// Forwards a call to the chooser inside any [`SwitchChooser`] (static dispatch).
macro_rules! dispatch {
    ($self:expr, $c:ident => $call:expr) => {
        match $self {
            SwitchChooser::Ecmp($c) => $call,
            SwitchChooser::Themis($c) => $call,
            SwitchChooser::PltsRandom($c) => $call,
            SwitchChooser::PltsCounter($c) => $call,
            SwitchChooser::PltsRr($c) => $call,
            SwitchChooser::Adaptive($c) => $call,
            SwitchChooser::Drill($c) => $call,
        }
    };
}

impl EgressChooser for SwitchChooser {
    fn choose(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> EgressChoice {
        dispatch!(self, c => c.choose(now, pkt, candidates, rng))
    }
}

impl TorAgent for SwitchChooser {
    fn add_host_port(&mut self, port: u32, bandwidth_bps: u64, delay_ns: u64) {
        if let SwitchChooser::Themis(t) = self {
            t.add_host_port(port, bandwidth_bps, delay_ns);
        }
    }

    fn on_data_to_host(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        port: u32,
    ) -> Option<Compensation> {
        match self {
            SwitchChooser::Themis(t) => t.on_data_to_host(now, pkt, port),
            _ => None,
        }
    }

    fn on_nack_from_host(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        num_uplinks: usize,
    ) -> NackVerdict {
        match self {
            SwitchChooser::Themis(t) => t.on_nack_from_host(now, pkt, num_uplinks),
            _ => NackVerdict::Forward,
        }
    }

    fn on_link_state(&mut self, scope: LinkScope, down: bool) {
        if let SwitchChooser::Themis(t) = self {
            t.on_link_state(scope, down);
        }
    }

    fn memory_bytes(&self) -> u64 {
        match self {
            SwitchChooser::Themis(t) => t.memory_bytes(),
            _ => 0,
        }
    }
}

/// A switch's load balancer: its chooser and its own seeded generator.
#[derive(Debug, Clone)]
pub struct SwitchLb {
    chooser: SwitchChooser,
    rng: SimRng,
}

impl SwitchLb {
    /// The chooser of switch `switch_id` (the ECMP hash seed, as in the reference); `seed`
    /// seeds its random draws.
    #[must_use]
    pub fn new(config: &SwitchLbConfig, switch_id: u32, seed: u64) -> Self {
        let ecmp = ecmp::EcmpHash::new(switch_id);
        let chooser = match config {
            SwitchLbConfig::EcmpHash => SwitchChooser::Ecmp(ecmp),
            SwitchLbConfig::Themis(c) => {
                SwitchChooser::Themis(Box::new(themis::Themis::new(c, ecmp)))
            }
            SwitchLbConfig::PltsRandom => SwitchChooser::PltsRandom(plts_random::PltsRandom),
            SwitchLbConfig::PltsCounter => {
                SwitchChooser::PltsCounter(plts_counter::PltsCounter::new())
            }
            SwitchLbConfig::PltsRr(c) => SwitchChooser::PltsRr(plts_rr::PltsRr::new(ecmp, c)),
            SwitchLbConfig::Adaptive => SwitchChooser::Adaptive(adaptive::Adaptive),
            SwitchLbConfig::Drill(c) => SwitchChooser::Drill(drill::Drill::new(c)),
        };
        SwitchLb {
            chooser,
            rng: SimRng::new(seed),
        }
    }

    /// The decision for one packet; candidate 0, header unchanged, if there are fewer than two
    /// candidates. The index is always `< candidates.len()` (or 0 for an empty list, which the
    /// caller never passes).
    pub fn choose(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
    ) -> EgressChoice {
        if candidates.len() <= 1 {
            return EgressChoice::at(0);
        }
        let mut c = self.chooser.choose(now, pkt, candidates, &mut self.rng);
        debug_assert!(c.index < candidates.len());
        c.index = c.index.min(candidates.len() - 1);
        c
    }

    /// See [`TorAgent::add_host_port`].
    pub fn add_host_port(&mut self, port: u32, bandwidth_bps: u64, delay_ns: u64) {
        self.chooser.add_host_port(port, bandwidth_bps, delay_ns);
    }

    /// See [`TorAgent::on_data_to_host`].
    pub fn on_data_to_host(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        port: u32,
    ) -> Option<Compensation> {
        self.chooser.on_data_to_host(now, pkt, port)
    }

    /// See [`TorAgent::on_nack_from_host`].
    pub fn on_nack_from_host(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        num_uplinks: usize,
    ) -> NackVerdict {
        self.chooser.on_nack_from_host(now, pkt, num_uplinks)
    }

    /// See [`TorAgent::on_link_state`].
    pub fn on_link_state(&mut self, scope: LinkScope, down: bool) {
        self.chooser.on_link_state(scope, down);
    }

    /// See [`TorAgent::memory_bytes`].
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        self.chooser.memory_bytes()
    }

    /// Themis counters, if the switch runs Themis.
    #[must_use]
    pub fn themis_stats(&self) -> Option<themis::ThemisStats> {
        match &self.chooser {
            SwitchChooser::Themis(t) => Some(t.stats()),
            _ => None,
        }
    }

    /// Whether the switch wants the ToR hooks called (it has a [`TorAgent`] role).
    #[must_use]
    pub fn wants_tor_hooks(&self) -> bool {
        matches!(self.chooser, SwitchChooser::Themis(_))
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Small builders shared by the choosers' tests.
    use super::{EgressCandidate, PacketKind, PacketMeta};
    use crate::units::{Entropy, Psn};

    /// Candidates on ports 0.. with the given queue lengths.
    pub fn cands(queues: &[u64]) -> Vec<EgressCandidate> {
        (0u32..)
            .zip(queues)
            .map(|(port, &q)| EgressCandidate {
                port,
                queue_bytes: q,
                tx_bytes: 0,
            })
            .collect()
    }

    /// A 1048-byte data packet of flow `flow` (its entropy) with sequence number `psn`.
    pub fn data(flow: u32, psn: u32) -> PacketMeta {
        PacketMeta {
            kind: PacketKind::Data,
            sip: 0x0b00_0001,
            dip: 0x0b00_0101,
            sport: Entropy(u16::try_from(flow).unwrap()),
            dport: 1,
            psn: Psn(psn),
            ingress_port: 9,
            size_bytes: 1048,
        }
    }
}
