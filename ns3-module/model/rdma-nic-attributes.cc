/*
 * rdma-lb: RdmaNic's TypeId (see rdma-nic.h): its attributes -- the NIC's own settings, with
 * defaults from the table of transport parameters (RdmaTransportDefault); the settings of one
 * loss recovery or congestion control are that object's attributes (rdma-recovery.h,
 * rdma-cc.h; the NIC chooses them by their TypeIds, its factory attributes LossRecovery and
 * CongestionControl) -- and trace sources (ns3-module/doc/rdma-lb.rst, "Source layout").
 * The NIC's behaviour is rdma-nic.cc's.
 */
#include "rdma-nic.h"

#include "rdma-cc-dcqcn.h"
#include "rdma-header.h"
#include "rdma-recovery-gbn.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaNic);

namespace
{
/// \return a factory of \p tid (an attribute default)
ObjectFactory
FactoryOf(TypeId tid)
{
    ObjectFactory f;
    f.SetTypeId(tid);
    return f;
}
} // namespace

void
RdmaNic::SetRecoveryFactory(ObjectFactory factory)
{
    const TypeId base = RdmaLossRecovery::GetTypeId();
    // (An unknown name reaches here as TypeId 0: this ns-3's LookupByName only asserts.)
    NS_ABORT_MSG_IF(factory.GetTypeId().GetUid() == 0, "RdmaNic::LossRecovery: no such TypeId");
    NS_ABORT_MSG_UNLESS(factory.GetTypeId().IsChildOf(base),
                        "RdmaNic::LossRecovery: " << factory.GetTypeId().GetName()
                                                  << " is no " << base.GetName());
    NS_ABORT_MSG_IF(m_lossRecovery,
                    "RdmaNic::LossRecovery: too late, the NIC's loss recovery exists");
    m_recoveryFactory = factory;
}

ObjectFactory
RdmaNic::GetRecoveryFactory() const
{
    return m_recoveryFactory;
}

ObjectFactory
RdmaNic::GetCcFactory() const
{
    return m_ccFactory;
}

void
RdmaNic::SetCcFactory(ObjectFactory factory)
{
    const TypeId base = RdmaCongestionControl::GetTypeId();
    NS_ABORT_MSG_IF(factory.GetTypeId().GetUid() == 0,
                    "RdmaNic::CongestionControl: no such TypeId");
    NS_ABORT_MSG_UNLESS(factory.GetTypeId() == base || factory.GetTypeId().IsChildOf(base),
                        "RdmaNic::CongestionControl: " << factory.GetTypeId().GetName()
                                                       << " is no " << base.GetName());
    NS_ABORT_MSG_IF(m_cc, "RdmaNic::CongestionControl: too late, the NIC's congestion control "
                          "exists");
    m_ccFactory = factory;
}

TypeId
RdmaNic::GetTypeId()
{
    // Defaults of the transport parameters: the table's (RdmaTransportDefault).
    static TypeId tid =
        TypeId("ns3::RdmaNic")
            .SetParent<Object>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaNic>()
            .AddAttribute("UetHeaderSize",
                          "uet: wire bytes of a data packet beyond its payload (htsim 64)",
                          *RdmaTransportDefault("ns3::RdmaNic", "UetHeaderSize"),
                          MakeUintegerAccessor(Own(&RdmaNic::m_uetHeaderBytes)),
                          MakeUintegerChecker<uint32_t>(RdmaHeader::DATA_HEADER_BYTES, 512))
            .AddAttribute("UetBaseRtt",
                          "uet: base RTT of the queue pairs (window cap; must be set; the "
                          "scenario program: RdmaUetFabric::BaseRtt or derived)",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(Own(&RdmaNic::m_uetBaseRtt)),
                          MakeTimeChecker())
            .AddAttribute("UetRto",
                          "uet: retransmission timeout of the oldest outstanding packet (must "
                          "be set; the scenario program: RdmaUetFabric::Rto or derived)",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(Own(&RdmaNic::m_uetRto)),
                          MakeTimeChecker())
            .AddAttribute("PayloadSize",
                          "Payload bytes per data packet (PACKET_PAYLOAD_SIZE)",
                          *RdmaTransportDefault("ns3::RdmaNic", "PayloadSize"),
                          MakeUintegerAccessor(Own(&RdmaNic::m_payloadBytes)),
                          MakeUintegerChecker<uint32_t>(1, 9000))
            .AddAttribute("RoceHeaderSize",
                          "Header bytes of a RoCE data packet on the wire (48: the HPCC lineage's, "
                          "ConWeave's; 52: SimAI's, whose sequence number is 64-bit)",
                          *RdmaTransportDefault("ns3::RdmaNic", "RoceHeaderSize"),
                          MakeUintegerAccessor(Own(&RdmaNic::m_roceHeaderBytes)),
                          MakeUintegerChecker<uint32_t>(RdmaHeader::DATA_HEADER_BYTES, 512))
            .AddAttribute("LossRecovery",
                          "Factory of the loss recovery, chosen by its TypeId (ns3::RdmaGoBackN: "
                          "Go-Back-N, ENABLE_IRN 0; ns3::RdmaIrn: the reference's IRN, "
                          "ENABLE_IRN 1; ns3::RdmaNicSr: commodity NIC selective repeat; "
                          "ns3::RdmaUetRecovery: the uet transport), with its attribute values. "
                          "Default: the table of transport parameters' (Go-Back-N)",
                          ObjectFactoryValue(FactoryOf(RdmaGoBackN::GetTypeId())),
                          MakeObjectFactoryAccessor(&RdmaNic::GetRecoveryFactory,
                                                    &RdmaNic::SetRecoveryFactory),
                          MakeObjectFactoryChecker())
            .AddAttribute("CongestionControl",
                          "Factory of the congestion control (CC_MODE), chosen by its TypeId "
                          "(ns3::RdmaDcqcn 1, ns3::RdmaHpcc 3, ns3::RdmaTimely 7, "
                          "ns3::RdmaDctcp 8, ns3::RdmaCongestionControl 0: line rate, feedback "
                          "ignored), with its attribute values. Default: the table of transport "
                          "parameters' (DCQCN)",
                          ObjectFactoryValue(FactoryOf(RdmaDcqcn::GetTypeId())),
                          MakeObjectFactoryAccessor(&RdmaNic::GetCcFactory,
                                                    &RdmaNic::SetCcFactory),
                          MakeObjectFactoryChecker())
            .AddAttribute("TimeTruncation",
                          "Reference quirk time-truncation: ns-3.19's truncating conversions -- "
                          "pacing intervals truncated to whole ns and DCQCN's "
                          "(rate + target) / 2 as two truncated halves. false = this ns-3's "
                          "DataRate::CalculateBytesTxTime and one division",
                          BooleanValue(false),
                          MakeBooleanAccessor(Own(&RdmaNic::m_timeTruncation)),
                          MakeBooleanChecker())
            .AddAttribute("IntegerTxTime",
                          "With TimeTruncation, SimAI's arithmetic for pacing intervals "
                          "(time-truncation under a SimAI workload): bytes x 8 x 10^9 / rate in "
                          "integers, truncated, where ns-3.19 divides doubles",
                          BooleanValue(false),
                          MakeBooleanAccessor(Own(&RdmaNic::m_integerTxTime)),
                          MakeBooleanChecker())
            .AddAttribute("TxTime",
                          "The clock of pacing intervals: ns, whole ns as TimeTruncation / "
                          "IntegerTxTime compute them; ps, htsim's bytes x 8 x 10^12 / rate in "
                          "whole ps, truncated to the ns (the ports carry the fraction: "
                          "RdmaNetDevice::TxTime)",
                          EnumValue(TX_CLOCK_NS),
                          MakeEnumAccessor(Own(&RdmaNic::m_txClock)),
                          MakeEnumChecker(TX_CLOCK_NS, "ns", TX_CLOCK_PS, "ps"))
            .AddAttribute("PacingWakeupQuirk",
                          "Reference quirk pacing-wakeup: when no queue pair may "
                          "send, schedule a wake-up at the earliest future next-send time of the "
                          "queue pairs with bytes left (paused ones included), only if none is "
                          "pending. false = always wake at the earliest time a blocked queue "
                          "pair becomes eligible",
                          BooleanValue(false),
                          MakeBooleanAccessor(Own(&RdmaNic::m_pacingWakeupQuirk)),
                          MakeBooleanChecker())
            .AddAttribute("IrnReferenceSender",
                          "Reference quirk irn-sender: a timeout enters recovery "
                          "without setting its end; any SACK outside recovery goes back; the "
                          "BDP cap and RTO use the highest packet start minus the highest "
                          "cumulative ACK (32 bits); resending jumps only over a SACKed block "
                          "that starts at the next byte; feedback restarts the timer, before "
                          "going back, only while snd_nxt > snd_una (also under gbn). false = "
                          "our IRN sender",
                          BooleanValue(false),
                          MakeBooleanAccessor(Own(&RdmaNic::m_irnReferenceSender)),
                          MakeBooleanChecker())
            .AddAttribute("EventOrderQuirk",
                          "Reference quirk event-order: the ACK that completes a "
                          "flow kicks the port at once, so another queue pair may send in that "
                          "same event; DCQCN's decrease check is a periodic event from the first "
                          "CNP to the end of the flow, so it runs before events of its instant "
                          "scheduled less than a period earlier. false = the next queue pair "
                          "sends from its own wake-up at that instant; checks are scheduled only "
                          "while a CNP is pending",
                          BooleanValue(false),
                          MakeBooleanAccessor(Own(&RdmaNic::m_eventOrderQuirk)),
                          MakeBooleanChecker())
            .AddAttribute("RateBound",
                          "Pace each queue pair at its current rate (RATE_BOUND); false paces "
                          "at the line rate",
                          *RdmaTransportDefault("ns3::RdmaNic", "RateBound"),
                          MakeBooleanAccessor(Own(&RdmaNic::m_rateBound)),
                          MakeBooleanChecker())
            .AddAttribute("L2AckInterval",
                          "ACK milestone in packets (L2_ACK_INTERVAL). Reference quirk: the "
                          "milestone is reset every packet, so every in-order packet is ACKed "
                          "unless RdmaGoBackN::AckMilestoneFix is set",
                          *RdmaTransportDefault("ns3::RdmaNic", "L2AckInterval"),
                          MakeUintegerAccessor(Own(&RdmaNic::m_ackInterval)),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("ReceiverReleaseDelay",
                          "0: a sender's completion reads its receiver's NACK count into the "
                          "flow record and deletes the receiver's state at once, as the "
                          "reference does. Otherwise both happen this long after, as a message "
                          "to the receiver (RxReleased gives the counts): what a distributed run "
                          "can do when the receiver is on another rank, so the partition-"
                          "invariant mode uses it on every rank count (doc/performance.md, "
                          "\"Distributed runs (MPI)\").",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&RdmaNic::m_rxReleaseDelay),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("Window",
                          "Sending window in bytes, 0 = none (HAS_WIN: the reference gives "
                          "every queue pair the largest BDP of the fabric, GLOBAL_T 1); also "
                          "HPCC's W in its queue term",
                          UintegerValue(0),
                          MakeUintegerAccessor(Own(&RdmaNic::m_window)),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("VarWin",
                          "VAR_WIN: the window scales with the current rate over the line rate "
                          "(at least 1 B)",
                          *RdmaTransportDefault("ns3::RdmaNic", "VarWin"),
                          MakeBooleanAccessor(Own(&RdmaNic::m_varWin)),
                          MakeBooleanChecker())
            .AddAttribute("BaseRtt",
                          "HPCC's base RTT T (the reference's largest RTT of the fabric, "
                          "GLOBAL_T 1; 8320 ns on ConWeave's leaf-spine)",
                          TimeValue(NanoSeconds(8320)),
                          MakeTimeAccessor(&RdmaNic::m_baseRtt),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddTraceSource("FlowComplete",
                            "A flow was completely acknowledged",
                            MakeTraceSourceAccessor(&RdmaNic::m_flowComplete),
                            "ns3::RdmaNic::FlowCompleteTracedCallback")
            .AddTraceSource("RxReleased",
                            "Receiver: a flow's state was deleted after its sender's "
                            "completion (flow id, NACKs and CNP-flagged feedback it sent)",
                            MakeTraceSourceAccessor(&RdmaNic::m_rxReleased),
                            "ns3::RdmaNic::RxReleasedTracedCallback")
            .AddTraceSource("FlowRecord",
                            "A flow was completely acknowledged: all its counters",
                            MakeTraceSourceAccessor(&RdmaNic::m_flowRecord),
                            "ns3::RdmaNic::FlowRecordTracedCallback")
            .AddTraceSource("FlowDelivered",
                            "Receiver: the last byte of a flow arrived in order (fires once "
                            "per flow; the flow must have been started with StartFlow)",
                            MakeTraceSourceAccessor(Own(&RdmaNic::m_flowDelivered)),
                            "ns3::RdmaNic::FlowDeliveredTracedCallback")
            .AddTraceSource("FlowSent",
                            "Sender: the last byte of a flow left the port for the first time "
                            "(fires once per flow, at the end of that packet's serialisation; "
                            "no acknowledgement awaited): flow id, that time",
                            MakeTraceSourceAccessor(Own(&RdmaNic::m_flowSent)),
                            "ns3::RdmaNic::FlowSentTracedCallback")
            .AddTraceSource("DataSent",
                            "A data packet left the NIC: flow id, byte offset, entropy",
                            MakeTraceSourceAccessor(Own(&RdmaNic::m_dataSent)),
                            "ns3::RdmaNic::DataSentTracedCallback")
            .AddTraceSource("LbFeedback",
                            "Feedback handed to the load balancer: flow id, kind "
                            "(LbFeedbackKind as an integer), the entropy it names",
                            MakeTraceSourceAccessor(Own(&RdmaNic::m_lbFeedback)),
                            "ns3::RdmaNic::LbFeedbackTracedCallback")
            .AddTraceSource("NackSent",
                            "The receiver sent a NACK: source, sender's qpn, expected byte",
                            MakeTraceSourceAccessor(Own(&RdmaNic::m_nackSent)),
                            "ns3::RdmaNic::NackSentTracedCallback")
            .AddTraceSource("RateChange",
                            "A queue pair's sending rate changed (congestion control): flow "
                            "id, old, new (bit/s)",
                            MakeTraceSourceAccessor(&RdmaNic::m_rateChange),
                            "ns3::RdmaNic::RateChangeTracedCallback")
            .AddTraceSource("UetWindow",
                            "uet: a queue pair's window after an ACK, NACK or timeout: flow id, "
                            "window, cap (wire bytes)",
                            MakeTraceSourceAccessor(Own(&RdmaNic::m_uetWindow)),
                            "ns3::RdmaNic::UetWindowTracedCallback")
            .AddTraceSource("UetRtt",
                            "uet: an ACK (not a NACK) arrived: flow id, the RTT of the data "
                            "packet it acknowledges (arrival minus its echoed send time)",
                            MakeTraceSourceAccessor(Own(&RdmaNic::m_uetRtt)),
                            "ns3::RdmaNic::UetRttTracedCallback");
    return tid;
}

} // namespace ns3
