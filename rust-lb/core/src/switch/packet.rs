//! What a switch shows its load balancer about a packet: the header fields a scheme may read
//! ([`PacketMeta`], of kind [`PacketKind`]) and the equal-cost egress ports it may choose
//! from ([`EgressCandidate`]). Plain data, shared by every scheme.

use crate::units::{Entropy, Psn};

/// What a packet is, as far as load balancing cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PacketKind {
    /// RDMA data.
    #[default]
    Data,
    /// Acknowledgement.
    Ack,
    /// Negative acknowledgement.
    Nack,
    /// Congestion notification.
    Cnp,
    /// A load balancer's own control packet ([`ControlKind::LbControl`](super::ControlKind::LbControl)).
    LbControl,
}

/// The fields of a packet a switch algorithm may read (C++ parses headers; Rust never does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
    /// Data: whether the packet carries ECN CE (marked by an upstream switch).
    pub ecn_ce: bool,
    /// Priority group (the switch queue of data).
    pub pg: u16,
    /// The sender's queue-pair number (model metadata, carried in bytes the reference leaves
    /// zero).
    pub qpn: u16,
    /// Data: byte offset of the first payload byte.
    pub seq_bytes: u32,
    /// Data: send time (ACK/NACK: the echoed one).
    pub ts_ns: u64,
    /// The packet was made by this switch's own agent ([`SwitchAgent::poll_transmit`](super::SwitchAgent::poll_transmit)), not
    /// received from a port.
    pub local: bool,
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
