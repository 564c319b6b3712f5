//! The switch agent: the one role every switch-side scheme plays, general enough for the
//! reference simulator's "hijacking" balancers too (its CONGA and ConWeave take every packet
//! before routing and forward it themselves; `rdma-lb.rst`, "Switch-side load balancers").
//!
//! A switch hands its agent every packet it routes (`on_ingress`, with the equal-cost
//! candidates towards the destination) and, when the agent asks for it, every packet it
//! dequeues (`on_egress`). The agent answers with a [`Verdict`]; everything else it wants
//! done is *pulled* by the switch afterwards, so the bridge stays one-way (C++ calls Rust,
//! never the reverse):
//! * [`SwitchAgent::poll_transmit`]: control packets to send (plain data; the switch builds the
//!   packet and routes it as if it had arrived on [`ControlPacket::from_port`]);
//! * [`SwitchAgent::poll_release`]: a held per-flow queue to release now, in FIFO order, through
//!   the normal forwarding path (MMU admission at release, as the reference's ConWeave queues);
//! * [`SwitchAgent::poll_at`] / [`SwitchAgent::on_timer`]: the agent's own timer.
//!
//! The switch owns the packets and the held queues; the agent owns its tables. A scheme keeps
//! per-packet state in an opaque [`LbTag`] that travels with the packet from switch to switch
//! (an ns-3 packet tag: no bytes on the wire, as the reference's LetFlow/CONGA/ConWeave tags).
//! Counters are reported as (name, value) pairs.

use crate::rng::SimRng;
use crate::time::SimTime;
use crate::units::{Entropy, Psn};

use super::packet::{EgressCandidate, PacketMeta};

/// Which link a link-state notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkScope {
    /// The link of one of this switch's ports.
    Local {
        /// The port.
        port: u32,
    },
    /// A link elsewhere in the fabric, reported by the monitoring system (the Themis paper, §6).
    Remote,
}

/// Words of an [`LbTag`].
pub const TAG_WORDS: usize = 5;

/// Opaque per-packet state of a switch scheme, carried from switch to switch with the packet.
/// Only the scheme that wrote it reads it; the switch copies it verbatim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LbTag {
    /// Whether the packet carries a tag.
    pub present: bool,
    /// The tag's content.
    pub words: [u64; TAG_WORDS],
}

impl LbTag {
    /// No tag.
    pub const NONE: LbTag = LbTag {
        present: false,
        words: [0; TAG_WORDS],
    };

    /// A tag with `words`.
    #[must_use]
    pub const fn new(words: [u64; TAG_WORDS]) -> Self {
        LbTag {
            present: true,
            words,
        }
    }
}

/// What to do with a packet at ingress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Send on candidate `index`, writing `rewrite_entropy` into the UDP source port first
    /// (Themis-S PathMap in 3-tier fabrics).
    Forward {
        /// Index into the candidates passed in.
        index: usize,
        /// A new entropy for the packet, if any.
        rewrite_entropy: Option<Entropy>,
    },
    /// Drop the packet: a blocked NACK, or a control packet the agent consumed.
    Drop,
    /// Hold the packet in the per-flow queue named `queue` until the agent releases it
    /// ([`SwitchAgent::poll_release`]). Held packets are outside the MMU.
    Hold {
        /// The queue's name (the scheme's flow key).
        queue: u64,
    },
}

impl Verdict {
    /// Candidate `index`, header unchanged.
    #[must_use]
    pub const fn at(index: usize) -> Self {
        Verdict::Forward {
            index,
            rewrite_entropy: None,
        }
    }
}

/// What kind of packet a [`ControlPacket`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlKind {
    /// An RDMA NACK as the receiver NIC would send it (Themis NACK compensation).
    Nack,
    /// A load-balancer control packet (ConWeave REPLY / NOTIFY): the NACK format with
    /// sequence 0, `size_bytes` on the wire, queue 0, consumed by the destination's ToR.
    LbControl,
}

/// A packet the agent wants sent, as plain data; the switch builds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlPacket {
    /// Kind.
    pub kind: ControlKind,
    /// Source address.
    pub sip: u32,
    /// Destination address.
    pub dip: u32,
    /// UDP source port.
    pub sport: u16,
    /// UDP destination port (a NACK echoes the data packet's entropy here).
    pub dport: u16,
    /// The queue pair the packet is about (model metadata, carried in bytes the reference
    /// leaves zero).
    pub qpn: u16,
    /// Priority group.
    pub pg: u16,
    /// NACK: the expected sequence number, in packets (the switch turns it into bytes with its
    /// payload size, as the receiver NIC would).
    pub epsn: Psn,
    /// NACK: the byte offset of the data packet that triggered it.
    pub echo_seq_bytes: u32,
    /// NACK: the echoed send time of that data packet.
    pub ts_ns: u64,
    /// Size on the wire ([`ControlKind::LbControl`]; a NACK has the NACK size).
    pub size_bytes: u32,
    /// The port the switch routes it from (its MMU ingress).
    pub from_port: u32,
    /// The tag it carries.
    pub tag: LbTag,
}

/// One port of the switch, as the agent learns it at setup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortInfo {
    /// The port's index.
    pub port: u32,
    /// Line rate.
    pub rate_bps: u64,
    /// One-way delay of its link.
    pub delay_ns: u64,
    /// Whether its peer is a host.
    pub faces_host: bool,
}

/// A path from a source ToR to a destination ToR, named as the reference names it:
/// byte `k` of `id` is the egress port at the `k`-th switch from the source ToR (port + 1, so
/// no byte of a used hop is 0); `hops` switches forward on it before the destination ToR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathId {
    /// The packed ports.
    pub id: u32,
    /// Switch hops on the path (2 in a leaf-spine).
    pub hops: u8,
}

impl PathId {
    /// Most hops a path id can name.
    pub const MAX_HOPS: u8 = 4;

    /// The egress port at hop `hop` (0 = the source ToR), if the path has that hop.
    #[must_use]
    pub fn port_at(self, hop: u32) -> Option<u32> {
        if hop >= u32::from(self.hops.min(Self::MAX_HOPS)) {
            return None;
        }
        let byte = (self.id >> (8 * hop)) & 0xff;
        byte.checked_sub(1)
    }

    /// The path through `ports` (egress port at each hop from the source ToR); `None` if a
    /// port does not fit a byte or there are too many hops.
    #[must_use]
    pub fn from_ports(ports: &[u32]) -> Option<Self> {
        if ports.is_empty() || ports.len() > usize::from(Self::MAX_HOPS) {
            return None;
        }
        let mut id = 0u32;
        for (k, &p) in ports.iter().enumerate() {
            let byte = p.checked_add(1).filter(|&b| b <= 0xff)?;
            id |= byte << (8 * k);
        }
        Some(PathId {
            id,
            hops: u8::try_from(ports.len()).ok()?,
        })
    }
}

/// The switch-side role of a load-balancing scheme. Implementations are pure: time and
/// randomness are arguments. Every method but `on_ingress` has a do-nothing default.
pub trait SwitchAgent {
    /// The fabric, learnt once before the first packet: one of this switch's ports.
    fn add_port(&mut self, _port: PortInfo) {}
    /// The fabric: host `host_ip` hangs off the ToR switch `tor`.
    fn add_host(&mut self, _host_ip: u32, _tor: u32) {}
    /// The fabric (ToRs only): one path from this ToR to ToR `dst_tor`.
    fn add_path(&mut self, _dst_tor: u32, _path: PathId) {}
    /// Whether it reads the fabric map (`add_host`, `add_path`): when it does not, the switch
    /// spares finding every host's ToR and every path to every other ToR (work that grows
    /// with hosts x switches).
    fn uses_fabric_map(&self) -> bool {
        false
    }

    /// Whether the switch must call `on_ingress` for packets with a single candidate too
    /// (schemes with state at the destination ToR, or control packets to consume).
    fn sees_every_packet(&self) -> bool {
        false
    }
    /// Whether the switch must call `on_egress`.
    fn sees_egress(&self) -> bool {
        false
    }
    /// Whether `on_ingress` reads the candidates' `queue_bytes` and `tx_bytes`. When it does
    /// not, the switch may pass zeros there and spare reading every candidate port's counters
    /// for each packet. Say `false` only for a scheme whose verdicts do not depend on them
    /// (`reads_port_load_only_where_declared` in this module's tests checks every scheme).
    fn reads_port_load(&self) -> bool {
        true
    }

    /// A packet is routed; `candidates` are the live equal-cost ports towards its destination
    /// (at least one). `tag` is the packet's tag, which the agent may change or remove.
    fn on_ingress(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        tag: &mut LbTag,
        candidates: &[EgressCandidate],
        rng: &mut SimRng,
    ) -> Verdict;

    /// A packet leaves through `port` (at dequeue).
    fn on_egress(&mut self, _now: SimTime, _pkt: &PacketMeta, _tag: &LbTag, _port: u32) {}

    /// A control packet to send now, if any (call until `None`).
    fn poll_transmit(&mut self, _now: SimTime) -> Option<ControlPacket> {
        None
    }
    /// A held queue to release now, if any (call until `None`).
    fn poll_release(&mut self, _now: SimTime) -> Option<u64> {
        None
    }
    /// When the agent wants `on_timer` called.
    fn poll_at(&self) -> Option<SimTime> {
        None
    }
    /// The agent's timer fires.
    fn on_timer(&mut self, _now: SimTime, _rng: &mut SimRng) {}

    /// A link went down (`down`) or came back.
    fn on_link_state(&mut self, _scope: LinkScope, _down: bool) {}
    /// Bytes of switch memory the scheme's state needs, by its paper's accounting.
    fn memory_bytes(&self) -> u64 {
        0
    }
    /// Reports every counter as (name, value); names are stable and snake_case.
    fn counters(&self, _out: &mut dyn FnMut(&'static str, u64)) {}
}

/// The index of `port` among `candidates`.
#[must_use]
pub fn candidate_index(candidates: &[EgressCandidate], port: u32) -> Option<usize> {
    candidates.iter().position(|c| c.port == port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_ids_pack_ports_plus_one_per_hop() {
        let p = PathId::from_ports(&[17, 3]).unwrap();
        assert_eq!(p.id, 18 | (4 << 8));
        assert_eq!(p.hops, 2);
        assert_eq!(p.port_at(0), Some(17));
        assert_eq!(p.port_at(1), Some(3));
        assert_eq!(p.port_at(2), None);
        assert_eq!(PathId::from_ports(&[255]), None);
        assert_eq!(PathId::from_ports(&[1, 2, 3, 4, 5]), None);
        assert_eq!(PathId::from_ports(&[]), None);
    }
}
