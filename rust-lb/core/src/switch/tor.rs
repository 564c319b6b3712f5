//! The ToR role ([`TorAgent`]): hooks on the host-facing ports of a top-of-rack switch (data
//! leaving towards a host, NACKs arriving from one), with the NACK filtering and compensation
//! of Themis-D (the Themis paper, §3.3–3.4) as their users. Themis' agent is built on it.

use super::packet::PacketMeta;
use crate::time::SimTime;
use crate::units::Psn;

/// What a ToR does with a NACK that a host sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NackVerdict {
    /// Let it go on to the sender.
    Forward,
    /// Drop it: it was caused by reordering, not by a loss.
    Block,
}

/// A NACK the ToR must send on the receiver's behalf (Themis NACK compensation, the Themis
/// paper, §3.4). The C++ side builds it like the receiver NIC would: from `receiver` to `sender`,
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
}
