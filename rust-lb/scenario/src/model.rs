//! The plain-data scenario every input format is turned into (formats: `configs/README.md`).
//!
//! Units are in the field names: times in ns (`_ns`), rates in bits/s (`_bps`), sizes in bytes
//! (`_bytes`). Node ids are the topology file's ids (hosts and switches share one id space).

use serde::Serialize;

use crate::transport_params::uet::define_uet;
use crate::transport_params::{
    define_transport, Ns3Attribute, Ns3Component, Ns3Name, Ns3Object, Ns3Value,
};

/// One link of the topology, in file order (port numbers per node follow this order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    /// One end (node id).
    pub a: u32,
    /// The other end (node id).
    pub b: u32,
    /// Line rate, bits/s.
    pub rate_bps: u64,
    /// Propagation delay, ns.
    pub delay_ns: u64,
    /// Per-packet error (loss) probability, 0..=1.
    pub error_rate: f64,
}

/// Nodes and links.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Topology {
    /// Number of nodes; ids are `0..node_count`.
    pub node_count: u32,
    /// Switch ids in file order; every other id is a host.
    pub switch_ids: Vec<u32>,
    /// Links in file order.
    pub links: Vec<Link>,
    /// One direction of a link set apart (`[topology] link_rates` with `one_way` or
    /// `scale_queue`), applied after the links are built.
    pub port_rates: Vec<PortRate>,
    /// Switches that also end flows, as a host does (SimAI's NVSwitches under NVLS: an RDMA
    /// endpoint beside the switch, `crate::simai::nvls`); left out of the config echo when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub endpoint_switch_ids: Vec<u32>,
}

/// The sending end of one link direction: node `node`'s port towards `peer` sends at
/// `rate_bps`, and (uet transport) its data queue limit and ECN thresholds are multiplied by
/// `queue_scale` -- htsim's reduced-speed links (`-failed`, fat_tree_topology.cpp `alloc_queue`
/// with reduced speed) scale speed, queue and ECN thresholds by one ratio.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortRate {
    /// The sending node.
    pub node: u32,
    /// The node at the other end of the link.
    pub peer: u32,
    /// Its sending rate, bits/s.
    pub rate_bps: u64,
    /// Factor on its data queue limit and ECN thresholds (1 = as configured).
    pub queue_scale: f64,
}

impl Topology {
    /// Whether `id` is a switch.
    #[must_use]
    pub fn is_switch(&self, id: u32) -> bool {
        self.switch_ids.contains(&id)
    }

    /// Host ids, ascending.
    #[must_use]
    pub fn hosts(&self) -> Vec<u32> {
        let mut is_sw = vec![false; self.node_count as usize];
        for &s in &self.switch_ids {
            if let Some(f) = is_sw.get_mut(s as usize) {
                *f = true;
            }
        }
        (0..self.node_count)
            .filter(|&i| !is_sw.get(i as usize).copied().unwrap_or(false))
            .collect()
    }

    /// The rate of the first link that touches `node` (a host's NIC rate), if any.
    #[must_use]
    pub fn first_link_rate_bps(&self, node: u32) -> Option<u64> {
        self.links
            .iter()
            .find(|l| l.a == node || l.b == node)
            .map(|l| l.rate_bps)
    }

    /// The switch a host's first link goes to (its ToR), if any.
    #[must_use]
    pub fn tor_of(&self, host: u32) -> Option<u32> {
        self.links.iter().find_map(|l| {
            if l.a == host {
                Some(l.b)
            } else if l.b == host {
                Some(l.a)
            } else {
                None
            }
        })
    }
}

/// One flow (an RDMA write of `size_bytes` from `src` to `dst`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flow {
    /// Id = index in the scenario's flow list.
    pub id: u32,
    /// Sender host.
    pub src: u32,
    /// Receiver host.
    pub dst: u32,
    /// Priority group (queue) of its data packets (3 in ConWeave files).
    pub pg: u32,
    /// Bytes to send (≥ 1).
    pub size_bytes: u64,
    /// Earliest start, ns.
    pub start_ns: u64,
    /// Flows that must complete (last byte delivered) before this one starts; empty for
    /// ordinary flows. Every id is smaller than `id`.
    pub after: Vec<u32>,
    /// Flows after whose delivery the sender computes for `compute_ns` before this flow may
    /// start (its own previous collective, as SimAI's workloads interleave compute and
    /// communication); every id is smaller than `id`. The flow starts at the latest of
    /// `start_ns`, the deliveries of `after` and the last delivery of `compute_after` +
    /// `compute_ns`. Both are left out of the config echo when empty / 0.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compute_after: Vec<u32>,
    /// See `compute_after`, ns.
    #[serde(skip_serializing_if = "is_zero_ns")]
    pub compute_ns: u64,
    /// A delay after every dependency (of `after` and `compute_after`) before the flow starts,
    /// ns: SimAI's per-flow send latency (`AS_SEND_LAT`). Left out of the config echo at 0.
    #[serde(skip_serializing_if = "is_zero_ns")]
    pub latency_ns: u64,
    /// Its dependencies count when they complete at their sender (the last ACK), not when
    /// their last byte is delivered: SimAI's flow model, whose next step follows a flow's
    /// completion. Left out of the config echo when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub after_completion: bool,
    /// Flows that must have *sent* their last byte (its first transmission has left the
    /// sender's port; no acknowledgement awaited) before this one starts, `latency_ns` later:
    /// SimAI's per-pair send queue, in which NVLS' next chunk to the NVSwitch follows the
    /// previous one's send (`crate::simai::nvls`). Every id is smaller than `id`; each must
    /// have the same sender. Left out of the config echo when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after_sent: Vec<u32>,
    /// Flows whose hand-off (their start minus their `send_latency_ns`) must come first,
    /// `latency_ns` before this one starts: SimAI's ring steps in order (a rank posts the
    /// receive of a step's data only when it sends that step, `NcclFlowModel::ready`, so a
    /// step's data that overtakes the step before waits for the rank's send of that step;
    /// `crate::simai::nccl`). Every id is smaller than `id`; each must have the same sender.
    /// Left out of the config echo when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after_ready: Vec<u32>,
    /// The part of `latency_ns` between the flow's hand-off to the network and its start
    /// (SimAI's `AS_SEND_LAT`), ns; what `after_ready` dependents count from. Left out of the
    /// config echo at 0.
    #[serde(skip_serializing_if = "is_zero_ns")]
    pub send_latency_ns: u64,
}

#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if signature"
)]
fn is_zero_ns(v: &u64) -> bool {
    *v == 0
}

/// The collective patterns: those the workload generator expands into flows
/// ([`CollectiveKind::generated`]), and SimAI's NVLS all-reduce, which only a SimAI workload
/// issues (`simai::nvls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollectiveKind {
    /// Ring AllReduce: reduce-scatter then all-gather, 2(N−1) steps of size/N.
    AllreduceRing,
    /// Ring AllGather: N−1 steps of size/N.
    AllgatherRing,
    /// Ring ReduceScatter: N−1 steps of size/N.
    ReducescatterRing,
    /// AlltoAll: every rank sends size/N to every other rank at once.
    Alltoall,
    /// AlltoAll as N−1 pairwise-shifted permutation steps (as collective libraries issue it):
    /// in step `i` rank `r` sends size/N to rank `r+i`; a rank's next step starts when its
    /// send and its receive of the step have completed.
    AlltoallPairwise,
    /// Permutation: every rank sends `size` to one other rank, each rank receives once.
    Permutation,
    /// N:1 incast: ranks 1..N send `size` to rank 0.
    Incast,
    /// SimAI's NVLS all-reduce inside one server: each GPU sends its data to the NVSwitch, which
    /// reduces it and sends the result to every GPU (SimAI workloads only).
    AllreduceNvls,
}

impl CollectiveKind {
    /// Every kind, in documentation order.
    pub const ALL: &'static [CollectiveKind] = &[
        CollectiveKind::AllreduceRing,
        CollectiveKind::AllgatherRing,
        CollectiveKind::ReducescatterRing,
        CollectiveKind::Alltoall,
        CollectiveKind::AlltoallPairwise,
        CollectiveKind::Permutation,
        CollectiveKind::Incast,
        CollectiveKind::AllreduceNvls,
    ];

    /// The kind's one name, as configs and outputs spell it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            CollectiveKind::AllreduceRing => "allreduce-ring",
            CollectiveKind::AllgatherRing => "allgather-ring",
            CollectiveKind::ReducescatterRing => "reducescatter-ring",
            CollectiveKind::Alltoall => "alltoall",
            CollectiveKind::AlltoallPairwise => "alltoall-pairwise",
            CollectiveKind::Permutation => "permutation",
            CollectiveKind::Incast => "incast",
            CollectiveKind::AllreduceNvls => "allreduce-nvls",
        }
    }

    /// Whether the workload generator (`[[workload.collective]]`,
    /// [`crate::workload::expand_collective`]) expands this kind; SimAI's NVLS all-reduce comes
    /// only from a SimAI workload.
    #[must_use]
    pub const fn generated(self) -> bool {
        !matches!(self, CollectiveKind::AllreduceNvls)
    }

    /// Parses a name from [`CollectiveKind::name`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Whether the kind runs in ring steps (all-reduce, all-gather, reduce-scatter).
    #[must_use]
    pub const fn is_ring(self) -> bool {
        matches!(
            self,
            CollectiveKind::AllreduceRing
                | CollectiveKind::AllgatherRing
                | CollectiveKind::ReducescatterRing
        )
    }
}

/// One collective operation of one group; its completion time (CCT) is the last completion
/// minus the first start of its flows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Collective {
    /// Group number (0-based, unique in a scenario).
    pub group: u32,
    /// The pattern.
    pub kind: CollectiveKind,
    /// The group's flows (ids into the scenario's flow list).
    pub flow_ids: Vec<u32>,
}

/// NIC loss recovery (ns-3 attribute `RdmaNic::LossRecovery`: a factory of
/// [`Recovery::type_id`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Recovery {
    /// Go-Back-N (ConWeave `ENABLE_IRN 0`).
    Gbn,
    /// IRN selective retransmission (ConWeave `ENABLE_IRN 1`).
    Irn,
    /// NIC selective repeat (Themis' NIC-SR).
    NicSr,
}

impl Ns3Component for Recovery {
    fn type_id(self) -> &'static str {
        Recovery::type_id(self)
    }

    fn name(self) -> &'static str {
        Recovery::name(self)
    }
}

impl Recovery {
    /// The name configs and outputs use.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Recovery::Gbn => "gbn",
            Recovery::Irn => "irn",
            Recovery::NicSr => "nic-sr",
        }
    }

    /// The name of the scheme's ns-3 TypeId (`ns3-module/model/rdma-recovery-*.h`).
    #[must_use]
    pub const fn type_id(self) -> &'static str {
        match self {
            Recovery::Gbn => "ns3::RdmaGoBackN",
            Recovery::Irn => "ns3::RdmaIrn",
            Recovery::NicSr => "ns3::RdmaNicSr",
        }
    }

    /// Parses a name from [`Recovery::name`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        [Recovery::Gbn, Recovery::Irn, Recovery::NicSr]
            .into_iter()
            .find(|r| r.name() == name)
    }
}

/// The wire protocol of the NICs and switches (under uet the NICs' loss recovery is the uet
/// transport, [`TransportKind::UET_RECOVERY_TYPE_ID`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TransportKind {
    /// RoCEv2 as the reference models it: 1 KB payloads, GBN/IRN/NIC-SR, rate-based CC.
    Roce,
    /// The Ultra-Ethernet-style transport REPS was evaluated on (htsim's UEC sender with its
    /// MPRDMA-style window; the REPS paper, §4): 4 KiB packets, per-packet ACKs with SACK, a window
    /// driven by ECN, a timeout from the base RTT, optional packet trimming at switches.
    Uet,
}

impl TransportKind {
    /// The TypeId name of the uet transport's sender and receiver, the NICs' loss recovery
    /// under uet (`ns3-module/model/rdma-recovery-uet.h`).
    pub const UET_RECOVERY_TYPE_ID: &'static str = "ns3::RdmaUetRecovery";

    /// The name configs use.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            TransportKind::Roce => "roce",
            TransportKind::Uet => "uet",
        }
    }

    /// Whether this is RoCE (the default).
    #[must_use]
    pub fn is_roce(&self) -> bool {
        *self == TransportKind::Roce
    }

    /// Parses a name from [`TransportKind::name`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        [TransportKind::Roce, TransportKind::Uet]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

// `UetParams`: the rows of the uet table (`transport_params/uet.rs`).
crate::transport_params::uet::uet_params!(define_uet);

/// The AR bit's rule with coalesced ACKs (`[transport.uet] ack_request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UetAckRequest {
    /// The UEC htsim's (`UecSrc::sendNewPacket`): in flight + this packet's size >= window.
    Uec,
    /// The REPS artifact's (`UecSrc::sendNewPacket`): in flight >= window.
    Reps,
}

impl UetAckRequest {
    /// The name configs and the ns-3 attribute `AckRequest` use.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            UetAckRequest::Uec => "uec",
            UetAckRequest::Reps => "reps",
        }
    }

    fn is_uec(&self) -> bool {
        *self == UetAckRequest::Uec
    }
}

/// What NSCC learns from an ACK or NACK (`[transport.uet] nscc_feedback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UetNsccFeedback {
    /// Every ACK's echoed send time is an RTT sample, an ACK credits the packets it names, a
    /// NACK's cumulative ACK credits nothing (ours).
    EveryAck,
    /// The UEC htsim's `UecSrc::processAck`: an RTT sample only for a still-outstanding
    /// packet's first or (resent once) second transmission (`validateSendTs`), and a NACK's
    /// cumulatively acknowledged bytes credited at the next ACK.
    Htsim,
}

impl UetNsccFeedback {
    /// The name configs and the ns-3 attribute `NsccFeedback` use.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            UetNsccFeedback::EveryAck => "every-ack",
            UetNsccFeedback::Htsim => "htsim",
        }
    }

    fn is_every_ack(&self) -> bool {
        *self == UetNsccFeedback::EveryAck
    }
}

/// What takes bytes out of a uet sender's flight (`[transport.uet] inflight`; attribute
/// `ns3::RdmaUetRecovery::Inflight`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UetInflight {
    /// Each packet an ACK or NACK acknowledges, cumulatively or by its SACK (ours).
    NamedPackets,
    /// The growth of the receiver's count of new data bytes, which every ACK carries: packets
    /// received out of order leave with the next ACK, named or not; a NACK takes out only its
    /// trimmed packet (the UEC htsim's `UecSrc::processAck`).
    ReceivedBytes,
}

impl UetInflight {
    /// The name configs and the ns-3 attribute `Inflight` use.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            UetInflight::NamedPackets => "named-packets",
            UetInflight::ReceivedBytes => "received-bytes",
        }
    }

    fn is_named_packets(&self) -> bool {
        *self == UetInflight::NamedPackets
    }
}

/// When a uet switch port lets go of the data packet it sends (`[transport.uet]
/// queue_release`; attribute `ns3::RdmaSwitch::QueueRelease`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UetQueueRelease {
    /// When its transmission starts: it leaves the queue's occupancy then and is ECN-marked
    /// from the packets left behind it (the model's switch, the reference's).
    Start,
    /// When its last bit has left: it counts in the occupancy that trims, drops and marks until
    /// then, and its own mark is decided then from the packets waiting behind it (the UEC
    /// htsim's `CompositeQueue::completeService`).
    End,
}

impl UetQueueRelease {
    /// The name configs and the ns-3 attribute `QueueRelease` use.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            UetQueueRelease::Start => "start",
            UetQueueRelease::End => "end",
        }
    }

    fn is_start(&self) -> bool {
        *self == UetQueueRelease::Start
    }
}

impl Ns3Name for UetQueueRelease {
    fn ns3_name(self) -> &'static str {
        self.name()
    }
}

/// The clock of serialization times on every port and of the NICs' pacing (`[transport.uet]
/// tx_time`; attribute `TxTime` of `ns3::RdmaNetDevice` and `ns3::RdmaNic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UetTxTime {
    /// Whole ns, rounded (the model's ns-3 time): 64 B at 400 Gb/s take 1 ns.
    Ns,
    /// htsim's: bytes x 8 x 10^12 / rate in whole ps, each port carrying the fraction of a ns
    /// to the next frame it sends back to back, so that its rate is exact (64 B at 400 Gb/s
    /// take 1.28 ns; `ns3-module/model/rdma-time.h`).
    Ps,
}

impl UetTxTime {
    /// The name configs and the ns-3 attribute `TxTime` use.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            UetTxTime::Ns => "ns",
            UetTxTime::Ps => "ps",
        }
    }

    fn is_ns(&self) -> bool {
        *self == UetTxTime::Ns
    }
}

impl Ns3Name for UetTxTime {
    fn ns3_name(self) -> &'static str {
        self.name()
    }
}

/// The uet transport's congestion control (`[transport.uet] cc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UetCc {
    /// htsim's `mprdma` window, the REPS artifact's (`-sender_cc_algo mprdma`): +1 packet per
    /// window unmarked, -1/4 of the acknowledged bytes per mark.
    Mprdma,
    /// The Ultra Ethernet transport's NSCC as the UEC's htsim runs it (delay and ECN, quick
    /// adapt; `ns3-module/model/rdma-uet-nscc.h`; htsim `-sender_cc_only`, its default).
    Nscc,
    /// The Ultra Ethernet transport's RCCC alone: receiver credit, no window
    /// (`ns3-module/model/rdma-uet-rccc.h`; htsim `-receiver_cc_only`).
    Rccc,
    /// NSCC and RCCC together: a packet needs both window and credit (htsim
    /// `-sender_cc -receiver_cc`).
    NsccRccc,
}

impl UetCc {
    /// Every congestion control, in the order configs list them.
    pub const ALL: [UetCc; 4] = [UetCc::Mprdma, UetCc::Nscc, UetCc::Rccc, UetCc::NsccRccc];

    /// The name configs and the ns-3 attribute `Cc` use (the one place they are spelled).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            UetCc::Mprdma => "mprdma",
            UetCc::Nscc => "nscc",
            UetCc::Rccc => "rccc",
            UetCc::NsccRccc => "nscc+rccc",
        }
    }

    /// Parses a name from [`UetCc::name`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        UetCc::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether the receiver's credit (RCCC) runs: then the switches do not mark ECN on their
    /// ports to hosts (htsim turns ToR -> host marking off under `-receiver_cc`).
    #[must_use]
    pub const fn uses_rccc(self) -> bool {
        matches!(self, UetCc::Rccc | UetCc::NsccRccc)
    }

    fn is_mprdma(&self) -> bool {
        *self == UetCc::Mprdma
    }
}

impl Ns3Name for UetCc {
    fn ns3_name(self) -> &'static str {
        self.name()
    }
}

impl Ns3Name for UetAckRequest {
    fn ns3_name(self) -> &'static str {
        self.name()
    }
}

impl Ns3Name for UetNsccFeedback {
    fn ns3_name(self) -> &'static str {
        self.name()
    }
}

impl Ns3Name for UetInflight {
    fn ns3_name(self) -> &'static str {
        self.name()
    }
}

impl Serialize for UetCc {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The switches' ECMP on the uet transport (`[transport.uet] switch_hash`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwitchHash {
    /// The model's switches: MurmurHash3 of the 5-tuple, the entropy as source port, seeded
    /// by the switch id (the reference's flow ECMP); ECMP flows draw a random entropy.
    FiveTuple,
    /// The REPS authors' switches (htsim, `rdma_lb_core::switch::htsim_ecmp`): hash of the
    /// flow's host pair, the entropy and a per-switch salt, over ports shuffled at first use,
    /// all drawn from htsim's `mt19937(seed)` stream; ECMP flow i carries entropy i mod 65535
    /// (htsim's connection number). Host algorithms only.
    Htsim,
}

impl SwitchHash {
    /// The name configs use.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            SwitchHash::FiveTuple => "five-tuple",
            SwitchHash::Htsim => "htsim",
        }
    }
}

impl UetParams {
    /// Whether every parameter has its default value.
    #[must_use]
    pub fn is_default(&self) -> bool {
        *self == UetParams::default()
    }

    fn wtd_off(v: &f64) -> bool {
        *v == 0.0
    }

    fn default_wtd_alpha(v: &f64) -> bool {
        *v == UetParams::default().wtd_alpha
    }

    fn default_qa_gate(v: &u32) -> bool {
        *v == UetParams::default().nscc_qa_gate
    }

    fn default_pull_rate(v: &f64) -> bool {
        *v == UetParams::default().rccc_pull_rate
    }

    fn default_trim_newest(v: &f64) -> bool {
        *v == UetParams::default().trim_newest_probability
    }

    fn default_credit_per_pull(v: &u32) -> bool {
        *v == UetParams::default().rccc_credit_per_pull_bytes
    }

    /// The uet rows' attribute settings ([`UetParams::ns3_attributes`]) and what the window
    /// rule implies: with RCCC the switches do not mark ECN on their ports to hosts (htsim
    /// turns ToR -> host marking off under `-receiver_cc`). The scenario program applies them
    /// only when the NICs run the uet transport.
    #[must_use]
    pub fn ns3_settings(&self) -> Vec<Ns3Attribute> {
        let mut out = self.ns3_attributes();
        if self.cc.uses_rccc() {
            out.push(Ns3Attribute {
                object: Ns3Object::Switch,
                name: "EcnHostPorts",
                value: Ns3Value::flag(false),
                summary_key: None,
            });
        }
        out
    }
}

/// A behaviour of the reference simulator (ConWeave's ns-3.19 tree) that the fabric model
/// reproduces so that a ConWeave config gives the reference's results flow for flow.
/// ConWeave configs reproduce every one by default; our TOML scenarios reproduce none unless
/// `[transport] quirks` lists them (each one's fix is the better model, see
/// `ns3-module/doc/rdma-lb.rst`, "Lock-step with the reference simulator").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quirk {
    /// Data packets carry the reference's ports (sport 10000, 10001, ...
    /// per source host, dport 100, 101, ... per destination host, in flow order), and a
    /// host side that keeps one entropy per flow (`ecmp`, the switch-side schemes) uses
    /// that sport, so ECMP hashes exactly the reference's inputs. Under a SimAI workload the
    /// reference is SimAI: sport 10000, 10001, ... per (source, destination) pair in start
    /// order, dport 100 (its ns-3 frontend's `portNumber[src][dst]++` and `dport = 100`).
    /// Fix: a random entropy per flow and the sender's queue-pair number as dport.
    /// Default where the reference's own configuration is read: ConWeave's config file, and a
    /// TOML `[transport]` with `simai_conf` (SimAI's `SimAI.conf`).
    FlowPorts,
    /// ns-3.19 converts a time given in seconds (a double) to whole nanoseconds by
    /// truncation: serialization (1048 B at 100 Gbps: 83 ns, not 84), pacing intervals and
    /// flow start times from flow files; and it halves DCQCN's (rate + target) as two
    /// truncated halves. Under a SimAI workload the reference is SimAI, whose serialization
    /// and pacing times truncate an integer division (`Seconds(bits) / rate`: 1000 B at
    /// 100 Gbps take 80 ns there, 79 under ns-3.19's doubles). Fix: ns-3.37's conversion
    /// (rounding) and one division.
    TimeTruncation,
    /// When no queue pair may send, the NIC's port schedules a wake-up at the earliest
    /// next-send time only if none is pending, and never moves a pending one earlier.
    /// Fix: the wake-up always moves to the earliest next-send time.
    PacingWakeup,
    /// The reference's IRN sender: a timeout enters recovery without setting the recovery
    /// end; a NACK carrying a SACK block goes back whenever not in recovery; the BDP cap's
    /// in-flight is the highest sent offset minus the highest ACKed; the timer is restarted
    /// by feedback only while sent-but-unacknowledged bytes remain. Fix: our IRN sender.
    IrnSender,
    /// Every switch draws its ECN-marking random numbers from the same stream (ns-3's user
    /// stream 0 of the run's seed), so all switches see one sequence. Fix: a
    /// stream per switch.
    EcnSharedStream,
    /// Events of one instant run in the reference's order: a flow's queue pair is created two
    /// zero-delay events after its start event (the reference's application start path), after
    /// every event already due then, and one start event handles every flow of that start
    /// time; the ACK that completes a flow kicks the NIC's port at once (the next queue pair
    /// sends in that event). Fix: the queue pair is created in the flow's own start event, and
    /// the next queue pair sends from its own pending wake-up.
    EventOrder,
    /// LetFlow, CONGA and ConWeave draw as C `rand() % n` from glibc's generator after
    /// `srand(seed)`, one stream for every switch of the run, in the order the switches draw
    /// and with the reference's draws per packet (the reference's `srand(RANDOM_SEED)` and
    /// `rand()`; CONGA: feedback entry, window start, tie; ConWeave: three paths per data
    /// packet, the first unused). Fix: each switch's own generator.
    GlibcRand,
}

impl Quirk {
    /// Every quirk, in the order of their names in configs and summaries.
    pub const ALL: [Quirk; 7] = [
        Quirk::FlowPorts,
        Quirk::TimeTruncation,
        Quirk::PacingWakeup,
        Quirk::IrnSender,
        Quirk::EcnSharedStream,
        Quirk::EventOrder,
        Quirk::GlibcRand,
    ];

    /// The name configs, overrides and summaries use.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Quirk::FlowPorts => "flow-ports",
            Quirk::TimeTruncation => "time-truncation",
            Quirk::PacingWakeup => "pacing-wakeup",
            Quirk::IrnSender => "irn-sender",
            Quirk::EcnSharedStream => "ecn-shared-stream",
            Quirk::EventOrder => "event-order",
            Quirk::GlibcRand => "glibc-rand",
        }
    }

    /// Parses a name from [`Quirk::name`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Quirk::ALL.into_iter().find(|q| q.name() == name)
    }

    const fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of [`Quirk`]s the model reproduces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuirkSet(u8);

impl QuirkSet {
    /// No quirk: the model's own behaviour everywhere.
    pub const NONE: QuirkSet = QuirkSet(0);

    /// Every quirk: the reference's behaviour (ConWeave configs).
    #[must_use]
    pub fn all() -> Self {
        Quirk::ALL.into_iter().fold(Self::NONE, QuirkSet::with)
    }

    /// This set with `q` added.
    #[must_use]
    pub const fn with(self, q: Quirk) -> Self {
        QuirkSet(self.0 | q.bit())
    }

    /// Whether `q` is reproduced.
    #[must_use]
    pub const fn contains(self, q: Quirk) -> bool {
        self.0 & q.bit() != 0
    }

    /// The members, in [`Quirk::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Quirk> {
        Quirk::ALL.into_iter().filter(move |&q| self.contains(q))
    }

    /// Parses `all`, `none` or a comma-separated list of names. The error is a message
    /// without location.
    ///
    /// # Errors
    /// An unknown name.
    pub fn parse_list(text: &str) -> std::result::Result<Self, String> {
        match text.trim() {
            "all" => return Ok(Self::all()),
            "none" | "" => return Ok(Self::NONE),
            _ => {}
        }
        text.split(',')
            .map(str::trim)
            .try_fold(Self::NONE, |set, name| {
                Quirk::from_name(name).map(|q| set.with(q)).ok_or_else(|| {
                    let known: Vec<&str> = Quirk::ALL.iter().map(|q| q.name()).collect();
                    format!(
                        "unknown quirk `{name}` (all, none, or of: {})",
                        known.join(", ")
                    )
                })
            })
    }
}

impl Serialize for QuirkSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(Quirk::name))
    }
}

/// ECN marking thresholds for ports of one link rate (the reference's KMIN/KMAX/PMAX maps).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EcnEntry {
    /// Port rate these thresholds apply to.
    pub rate_bps: u64,
    /// Marking starts above this shared egress occupancy.
    pub kmin_bytes: u64,
    /// Every packet is marked above this.
    pub kmax_bytes: u64,
    /// Marking probability reached at `kmax_bytes`.
    pub pmax: f64,
}

impl EcnEntry {
    /// run.py's KMIN/KMAX/PMAX maps: 100 KB, 400 KB and 0.2 at every rate it lists.
    #[must_use]
    pub fn run_py_map() -> Vec<EcnEntry> {
        [20u64, 50, 100, 200, 250, 400]
            .into_iter()
            .map(|g| EcnEntry {
                rate_bps: g * 1_000_000_000,
                kmin_bytes: 100_000,
                kmax_bytes: 400_000,
                pmax: 0.2,
            })
            .collect()
    }
}

// `Transport`, its `Default` and `Transport::ns3_attributes`: one row per field in the table
// of transport parameters.
crate::transport_params::transport_params!(define_transport);

impl Transport {
    /// The ns-3 attribute settings of the table ([`Transport::ns3_attributes`]), where under
    /// uet the NICs' loss recovery is the uet transport
    /// ([`TransportKind::UET_RECOVERY_TYPE_ID`]; the summary keeps the `recovery` key's
    /// name). The uet transport's own settings are the uet table's
    /// ([`UetParams::ns3_settings`]), a list of their own that the scenario program applies
    /// after these when the NICs run the uet transport.
    #[must_use]
    pub fn ns3_settings(&self) -> Vec<Ns3Attribute> {
        let mut list = self.ns3_attributes();
        if self.kind == TransportKind::Uet {
            for a in &mut list {
                if a.object == Ns3Object::Nic && a.name == "LossRecovery" {
                    a.value = Ns3Value::Component {
                        type_id: TransportKind::UET_RECOVERY_TYPE_ID,
                        name: self.recovery.name(),
                    };
                }
            }
        }
        list
    }
}

/// Congestion control of the NICs (ns-3 attribute `RdmaNic::CongestionControl`: a factory of
/// [`Cc::type_id`]; ConWeave `CC_MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cc {
    /// DCQCN, Mellanox variant (`CC_MODE 1`).
    Dcqcn,
    /// HPCC (`CC_MODE 3`).
    Hpcc,
    /// TIMELY (`CC_MODE 7`).
    Timely,
    /// Rate-based DCTCP (`CC_MODE 8`).
    Dctcp,
    /// None: line rate, feedback ignored (`CC_MODE 0`, an extension).
    None,
}

impl Ns3Component for Cc {
    fn type_id(self) -> &'static str {
        Cc::type_id(self)
    }

    fn name(self) -> &'static str {
        Cc::name(self)
    }
}

impl Cc {
    /// Every congestion control, in documentation order.
    pub const ALL: &'static [Cc] = &[Cc::Dcqcn, Cc::Hpcc, Cc::Timely, Cc::Dctcp, Cc::None];

    /// The name configs and outputs use.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Cc::Dcqcn => "dcqcn",
            Cc::Hpcc => "hpcc",
            Cc::Timely => "timely",
            Cc::Dctcp => "dctcp",
            Cc::None => "none",
        }
    }

    /// The name of the algorithm's ns-3 TypeId (`ns3-module/model/rdma-cc-*.h`; none: the
    /// no-op base, `rdma-cc.h`).
    #[must_use]
    pub const fn type_id(self) -> &'static str {
        match self {
            Cc::Dcqcn => "ns3::RdmaDcqcn",
            Cc::Hpcc => "ns3::RdmaHpcc",
            Cc::Timely => "ns3::RdmaTimely",
            Cc::Dctcp => "ns3::RdmaDctcp",
            Cc::None => "ns3::RdmaCongestionControl",
        }
    }

    /// ConWeave's `CC_MODE` number.
    #[must_use]
    pub const fn conweave_mode(self) -> u32 {
        match self {
            Cc::Dcqcn => 1,
            Cc::Hpcc => 3,
            Cc::Timely => 7,
            Cc::Dctcp => 8,
            Cc::None => 0,
        }
    }

    /// Parses a name from [`Cc::name`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.name() == name)
    }

    /// The congestion control of ConWeave's `CC_MODE` number `mode`.
    #[must_use]
    pub fn from_conweave_mode(mode: u64) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|c| u64::from(c.conweave_mode()) == mode)
    }

    /// All names, comma-separated, for error messages.
    #[must_use]
    pub fn all_names() -> String {
        Self::ALL
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Transport {
    /// run.py's window rule: `HAS_WIN 1` and `VAR_WIN 1` for HPCC and DCTCP, 0 otherwise.
    #[must_use]
    pub fn run_py_window(cc: Cc) -> bool {
        matches!(cc, Cc::Hpcc | Cc::Dctcp)
    }
}

/// The load-balancing scheme, validated with `rdma_lb_core::config::LbConfig::parse`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LbSpec {
    /// A name from `rdma_lb_core::Algorithm`.
    pub name: String,
    /// `k = v, ...` (the body of a TOML inline table; may be empty).
    pub params: String,
}

/// A link going down (or back up) at a time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkEvent {
    /// When, ns since simulation start.
    pub at_ns: u64,
    /// One end.
    pub a: u32,
    /// The other end.
    pub b: u32,
    /// true = down, false = back up.
    pub down: bool,
    /// Set when the event was given as a port of a switch (`a` is the switch, this its port
    /// index: its links in file order, 0-based, as the fabric numbers them; `b` the node at the
    /// other end): the model takes that port's link down (RdmaFabricHelper::
    /// ScheduleSwitchPortState), which also tells parallel links apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u32>,
    /// Only `a`'s sending direction towards `b` goes down or up (a one-way black hole: the
    /// reverse direction keeps working, and no switch is told, so routing does not change);
    /// false (both directions, the switches told) is left out of the effective configuration.
    #[serde(skip_serializing_if = "is_false")]
    pub one_way: bool,
}

/// Run control and outputs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSpec {
    /// Seed of every random stream of the run.
    pub seed: u64,
    /// Start of the measured window (monitors and the completion check start here).
    pub flowgen_start_ns: u64,
    /// End of flow generation.
    pub flowgen_stop_ns: u64,
    /// The simulation stops here even if flows are left.
    pub hard_stop_ns: u64,
    /// Period of the periodic monitors.
    pub monitor_interval_ns: u64,
    /// Link failures.
    pub link_events: Vec<LinkEvent>,
    /// Output directory; empty = the scenario program's default (`out/<stem>-<lb>-s<seed>`).
    pub out_dir: String,
    /// Write `pfc.txt`.
    pub pfc_trace: bool,
    /// Write queue-length samples.
    pub queue_trace: bool,
    /// Sampling period of `rate.txt` / `retx.txt` (per-flow rate, cumulative retransmissions);
    /// 0 = off. Left out of the effective configuration when off, so that configs without it
    /// keep their sweep directories.
    #[serde(skip_serializing_if = "is_zero")]
    pub rate_trace_ns: u64,
    /// Write `failed_drops.csv`: per flow, the data packets lost on down links (count, first
    /// and last loss time; the resends among them and the last one's time), and apart from
    /// them a host load balancer's probes lost there (count, last time). Off (left out of the
    /// effective configuration) by default.
    #[serde(skip_serializing_if = "is_false")]
    pub failed_link_drops: bool,
    /// Width of the bins of `rtt_hist.csv`, the uet senders' per-packet RTT histogram (ACK
    /// arrival minus the send time of the packet it acknowledges); 0 = off (left out of the
    /// effective configuration).
    #[serde(skip_serializing_if = "is_zero")]
    pub rtt_histogram_ns: u64,
    /// Write `port_bytes.csv`: at the end of the run, the bytes sent on every switch port whose
    /// peer is a switch, every tier (`uplink.txt` covers the ToRs only). Off (left out of the
    /// effective configuration) by default.
    #[serde(skip_serializing_if = "is_false")]
    pub port_bytes: bool,
    /// Offered host load the workload was made for (informational, 0 if unknown).
    pub load: f64,
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            seed: 1,
            flowgen_start_ns: 0,
            flowgen_stop_ns: 0,
            hard_stop_ns: 10_000_000_000,
            monitor_interval_ns: 10_000,
            link_events: Vec::new(),
            out_dir: String::new(),
            pfc_trace: false,
            queue_trace: false,
            rate_trace_ns: 0,
            failed_link_drops: false,
            rtt_histogram_ns: 0,
            port_bytes: false,
            load: 0.0,
        }
    }
}

/// A complete, validated scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// The config file's stem (`leaf_spine_demo` for `configs/leaf_spine_demo.toml`).
    pub name: String,
    /// The config file as given.
    pub config_path: String,
    /// Nodes and links.
    pub topology: Topology,
    /// Every flow, ids `0..n`, sorted by nothing in particular except file/generation order.
    pub flows: Vec<Flow>,
    /// Collective groups (empty for plain flow workloads).
    pub collectives: Vec<Collective>,
    /// NIC and switch settings.
    pub transport: Transport,
    /// Load balancing.
    pub lb: LbSpec,
    /// Run control.
    pub run: RunSpec,
    /// Things accepted but not modelled (e.g. ConWeave monitor files); one line each, with
    /// file:line. Printed as warnings by the CLI and the scenario program.
    pub notes: Vec<String>,
    /// With a SimAI workload: what its per-layer report (`ncclFlowModel_EndToEnd.csv`) needs
    /// besides the flows' completions (`crate::simai::report`).
    #[serde(skip)]
    pub simai_report: Option<crate::simai::report::EndToEndPlan>,
    /// The UEC htsim's inputs: an htsim topology (`htsim_topo`) on the uet transport, where
    /// the load balancers' parameters left out take htsim's behaviour
    /// ([`crate::htsim_lb_defaults`]).
    #[serde(skip)]
    pub htsim_inputs: bool,
}

impl Scenario {
    /// The effective settings (everything but the flow list) as TOML text, for `summary.json`'s
    /// config echo and for hashing a sweep point.
    #[must_use]
    pub fn effective_config(&self) -> String {
        #[derive(Serialize)]
        struct Echo<'a> {
            name: &'a str,
            config_path: &'a str,
            flows: usize,
            flow_bytes: u64,
            collectives: usize,
            lb: &'a LbSpec,
            run: &'a RunSpec,
            transport: &'a Transport,
            topology: &'a Topology,
        }
        let echo = Echo {
            name: &self.name,
            config_path: &self.config_path,
            flows: self.flows.len(),
            flow_bytes: self.flows.iter().map(|f| f.size_bytes).sum(),
            collectives: self.collectives.len(),
            lb: &self.lb,
            run: &self.run,
            transport: &self.transport,
            topology: &self.topology,
        };
        toml::to_string(&echo).unwrap_or_else(|e| format!("# cannot render: {e}"))
    }
}

/// serde: leave a zero out of the effective configuration (an optional output that is off).
fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// serde: leave a false out of the effective configuration (an option that is off).
fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !*v
}
