//! Switch-side egress choice: one chooser per switch picks, for each packet, one egress port
//! among the equal-cost candidates of the routing table.
//!
//! As on the host side, dispatch is a `match` over [`SwitchChooser`] (static dispatch).

pub mod ecmp;

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
    /// UDP source port: the entropy of data packets; for ACK/NACK, the data's source port.
    pub sport: Entropy,
    /// UDP destination port.
    pub dport: u16,
    /// Sequence number of data packets, or the acknowledged one.
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

/// One switch's egress chooser. Implementations are pure: time and randomness are arguments.
pub trait EgressChooser {
    /// Fires for each packet with at least one candidate; returns an index into `candidates`
    /// (which must be `< candidates.len()`).
    fn choose(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> usize;
}

/// The choosers we have, dispatched statically.
#[derive(Debug, Clone)]
pub enum SwitchChooser {
    /// See [`ecmp::EcmpHash`].
    Ecmp(ecmp::EcmpHash),
}

impl EgressChooser for SwitchChooser {
    fn choose(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> usize {
        match self {
            SwitchChooser::Ecmp(c) => c.choose(now, pkt, candidates, rng),
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
        let chooser = match config {
            SwitchLbConfig::EcmpHash => SwitchChooser::Ecmp(ecmp::EcmpHash::new(switch_id)),
        };
        SwitchLb {
            chooser,
            rng: SimRng::new(seed),
        }
    }

    /// Index of the chosen candidate; 0 if the list is empty (the caller never passes one).
    pub fn choose(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        candidates: &[EgressCandidate],
    ) -> usize {
        if candidates.len() <= 1 {
            return 0;
        }
        let i = self.chooser.choose(now, pkt, candidates, &mut self.rng);
        debug_assert!(i < candidates.len());
        i.min(candidates.len() - 1)
    }
}
