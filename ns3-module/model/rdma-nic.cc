/*
 * rdma-lb: RdmaNic (the reference's RdmaHw, as behaviour).
 */
#include "rdma-nic.h"

#include "rdma-header.h"
#include "rdma-channel.h"
#include "rdma-lb-enums.h"
#include "rdma-net-device.h"
#include "rdma-recovery.h"
#include "rdma-switch.h"
#include "rdma-time.h"

#include "rdma-lb-bridge/src/scenario.rs.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/node-list.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaNic");
NS_OBJECT_ENSURE_REGISTERED(RdmaNic);

namespace
{
Time
Ns(uint64_t ns)
{
    return NanoSeconds(static_cast<int64_t>(ns));
}
} // namespace

// Congestion control, loss recovery and transport by name: the names are Rust's
// (rdma_lb_scenario::Cc, Recovery, TransportKind), the values cross the bridge typed
// (rdma-lb-enums.h). The fatal errors leave the catch blocks first, so that std::terminate
// has no exception to report besides the message.

std::string
RdmaNic::GetCcModeName(CcMode cc)
{
    std::string error;
    try
    {
        return std::string(rdmalb::bridge::cc_name(rdmalbenums::ToBridge(cc)));
    }
    catch (const rust::Error& e)
    {
        error = e.what();
    }
    NS_FATAL_ERROR("rdma-lb: " << error);
}

RdmaNic::CcMode
RdmaNic::GetCcModeByName(const std::string& name)
{
    std::string error;
    try
    {
        return rdmalbenums::FromBridge(rdmalb::bridge::cc_from_name(name));
    }
    catch (const rust::Error& e)
    {
        error = e.what();
    }
    NS_FATAL_ERROR("RdmaNic::CcMode: " << error);
}

std::string
RdmaNic::GetLossRecoveryName(LossRecovery recovery)
{
    std::string error;
    try
    {
        return std::string(rdmalb::bridge::recovery_name(rdmalbenums::ToBridge(recovery)));
    }
    catch (const rust::Error& e)
    {
        error = e.what();
    }
    NS_FATAL_ERROR("rdma-lb: " << error);
}

std::string
RdmaNic::GetTransportName(Transport kind)
{
    std::string error;
    try
    {
        return std::string(rdmalb::bridge::transport_kind_name(rdmalbenums::ToBridge(kind)));
    }
    catch (const rust::Error& e)
    {
        error = e.what();
    }
    NS_FATAL_ERROR("rdma-lb: " << error);
}

void
RdmaNic::SetCcModeAttribute(std::string name)
{
    m_ccMode = GetCcModeByName(name);
}

std::string
RdmaNic::GetCcModeAttribute() const
{
    return GetCcModeName(m_ccMode);
}

TypeId
RdmaNic::GetTypeId()
{
    // Attribute defaults: the transport defaults defined once in Rust (RdmaDefaultTransport).
    const rdmalb::scenario::Transport& d = RdmaDefaultTransport();
    static TypeId tid =
        TypeId("ns3::RdmaNic")
            .SetParent<Object>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaNic>()
            .AddAttribute("Transport",
                          "Wire protocol: roce (LossRecovery, CcMode, the reference's) or uet "
                          "(REPS's Ultra-Ethernet-style transport: per-packet ACK with SACK, "
                          "ECN-driven window, NACK on trimmed packets, timeout from the base "
                          "RTT; rdma-uet.h)",
                          EnumValue(rdmalbenums::FromBridge(d.kind)),
                          MakeEnumAccessor(&RdmaNic::m_transport),
                          MakeEnumChecker(RdmaNic::ROCE,
                                          GetTransportName(RdmaNic::ROCE),
                                          RdmaNic::UET,
                                          GetTransportName(RdmaNic::UET)))
            .AddAttribute("UetHeaderSize",
                          "uet: wire bytes of a data packet beyond its payload (htsim 64)",
                          UintegerValue(d.uet_header_bytes),
                          MakeUintegerAccessor(&RdmaNic::m_uetHeaderBytes),
                          MakeUintegerChecker<uint32_t>(RdmaHeader::DATA_HEADER_BYTES, 512))
            .AddAttribute("UetBaseRtt",
                          "uet: base RTT of the queue pairs (window cap; must be set)",
                          TimeValue(NanoSeconds(static_cast<int64_t>(d.uet_base_rtt_ns))),
                          MakeTimeAccessor(&RdmaNic::m_uetBaseRtt),
                          MakeTimeChecker())
            .AddAttribute("UetMaxWindowBdp",
                          "uet: window cap in base BDPs (UetBaseRtt x line rate; htsim 1.5)",
                          DoubleValue(d.uet_max_window_bdp),
                          MakeDoubleAccessor(&RdmaNic::m_uetMaxWindowBdp),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("UetInitialWindow",
                          "uet: initial window in wire bytes (0 = the cap; clamped to it)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RdmaNic::m_uetInitialWindow),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("UetRto",
                          "uet: retransmission timeout of the oldest outstanding packet (must "
                          "be set; the scenario program: base RTT + 4 queue drain times)",
                          TimeValue(NanoSeconds(static_cast<int64_t>(d.uet_rto_ns))),
                          MakeTimeAccessor(&RdmaNic::m_uetRto),
                          MakeTimeChecker())
            .AddAttribute("PayloadSize",
                          "Payload bytes per data packet (PACKET_PAYLOAD_SIZE)",
                          UintegerValue(d.payload_bytes),
                          MakeUintegerAccessor(&RdmaNic::m_payloadBytes),
                          MakeUintegerChecker<uint32_t>(1, 9000))
            .AddAttribute("LossRecovery",
                          "Loss recovery: gbn = Go-Back-N (ENABLE_IRN 0), irn = "
                          "the reference's IRN (ENABLE_IRN 1), nic-sr = commodity NIC "
                          "selective repeat (one NACK per expected PSN, resend only that packet)",
                          EnumValue(rdmalbenums::FromBridge(d.recovery)),
                          MakeEnumAccessor(&RdmaNic::m_recovery),
                          MakeEnumChecker(RdmaNic::GBN,
                                          GetLossRecoveryName(RdmaNic::GBN),
                                          RdmaNic::IRN,
                                          GetLossRecoveryName(RdmaNic::IRN),
                                          RdmaNic::NIC_SR,
                                          GetLossRecoveryName(RdmaNic::NIC_SR)))
            .AddAttribute("CcMode",
                          "Congestion control (CC_MODE): dcqcn (1), hpcc (3), "
                          "timely (7), dctcp (8), none (0: line rate, feedback "
                          "ignored). Any other name is a fatal error",
                          StringValue(GetCcModeName(rdmalbenums::FromBridge(d.cc))),
                          MakeStringAccessor(&RdmaNic::SetCcModeAttribute,
                                             &RdmaNic::GetCcModeAttribute),
                          MakeStringChecker())
            .AddAttribute("TimeTruncation",
                          "Reference quirk time-truncation: ns-3.19's truncating conversions -- "
                          "pacing intervals truncated to whole ns and DCQCN's "
                          "(rate + target) / 2 as two truncated halves. false = this ns-3's "
                          "DataRate::CalculateBytesTxTime and one division",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaNic::m_timeTruncation),
                          MakeBooleanChecker())
            .AddAttribute("PacingWakeupQuirk",
                          "Reference quirk pacing-wakeup: when no queue pair may "
                          "send, schedule a wake-up at the earliest future next-send time of the "
                          "queue pairs with bytes left (paused ones included), only if none is "
                          "pending. false = always wake at the earliest time a blocked queue "
                          "pair becomes eligible",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaNic::m_pacingWakeupQuirk),
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
                          MakeBooleanAccessor(&RdmaNic::m_irnReferenceSender),
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
                          MakeBooleanAccessor(&RdmaNic::m_eventOrderQuirk),
                          MakeBooleanChecker())
            .AddAttribute("RateBound",
                          "Pace each queue pair at its current rate (RATE_BOUND); false paces "
                          "at the line rate",
                          BooleanValue(d.rate_bound),
                          MakeBooleanAccessor(&RdmaNic::m_rateBound),
                          MakeBooleanChecker())
            .AddAttribute("L2AckInterval",
                          "ACK milestone in packets (L2_ACK_INTERVAL). Reference quirk: the "
                          "milestone is reset every packet, so every in-order packet is ACKed "
                          "unless AckMilestoneFix is set",
                          UintegerValue(d.ack_interval_packets),
                          MakeUintegerAccessor(&RdmaNic::m_ackInterval),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("L2ChunkSize",
                          "An ACK is also sent when the expected byte is a multiple of this "
                          "(L2_CHUNK_SIZE, bytes; 0 = off)",
                          UintegerValue(d.l2_chunk_bytes),
                          MakeUintegerAccessor(&RdmaNic::m_chunkSize),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("AckMilestoneFix",
                          "Fix of the milestone quirk (every in-order packet ACKed): ACK once per "
                          "L2AckInterval packets instead of every packet",
                          BooleanValue(d.ack_milestone_fix),
                          MakeBooleanAccessor(&RdmaNic::m_ackMilestoneFix),
                          MakeBooleanChecker())
            .AddAttribute("NackCarriesCnp",
                          "Reference quirk: an out-of-order NACK always "
                          "carries the CNP flag (rate cut). false = only ECN-marked packets",
                          BooleanValue(d.nack_carries_cnp),
                          MakeBooleanAccessor(&RdmaNic::m_nackCarriesCnp),
                          MakeBooleanChecker())
            .AddAttribute("NackInterval",
                          "NACK generation interval (NACKGenerationInterval): no second NACK "
                          "for the same expected byte within it (GBN, IRN)",
                          TimeValue(Ns(d.nack_interval_ns)),
                          MakeTimeAccessor(&RdmaNic::m_nackInterval),
                          MakeTimeChecker())
            .AddAttribute("L2Timeout",
                          "Retransmission timeout of Go-Back-N and NIC-SR (L2Timeout)",
                          TimeValue(Ns(d.l2_timeout_ns)),
                          MakeTimeAccessor(&RdmaNic::m_l2Timeout),
                          MakeTimeChecker())
            .AddAttribute("IrnRtoLow",
                          "IRN RTO with at most 3 packets in flight (IrnRtoLow; driver value)",
                          TimeValue(Ns(d.irn_rto_low_ns)),
                          MakeTimeAccessor(&RdmaNic::m_irnRtoLow),
                          MakeTimeChecker())
            .AddAttribute("IrnRtoHigh",
                          "IRN RTO with more than 3 packets in flight (IrnRtoHigh; driver value)",
                          TimeValue(Ns(d.irn_rto_high_ns)),
                          MakeTimeAccessor(&RdmaNic::m_irnRtoHigh),
                          MakeTimeChecker())
            .AddAttribute("IrnBdp",
                          "IRN sender BDP cap in bytes (IrnBdp; 104000 for leaf_spine_128_100G)",
                          UintegerValue(d.irn_bdp_bytes),
                          MakeUintegerAccessor(&RdmaNic::m_irnBdp),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("IrnOooThreshold",
                          "IRN option: go back only when SACKed data reaches more than this "
                          "many packets beyond the first hole (0 = reference: any SACK)",
                          UintegerValue(d.irn_ooo_threshold),
                          MakeUintegerAccessor(&RdmaNic::m_irnOooThreshold),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("IrnRtoWithPfc",
                          "IRN: keep the retransmission timeouts when the port is lossless "
                          "(PFC obeyed here and generated by the peer switch). false = the "
                          "reference: IRN timeouts are ignored with PFC on",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaNic::m_irnRtoWithPfc),
                          MakeBooleanChecker())
            .AddAttribute("AlphaResumeInterval",
                          "DCQCN alpha update period (ALPHA_RESUME_INTERVAL; run.py 1 us)",
                          TimeValue(Ns(d.alpha_resume_interval_ns)),
                          MakeTimeAccessor(&RdmaNic::m_alphaResumeInterval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RateDecreaseInterval",
                          "DCQCN rate-decrease check period (RATE_DECREASE_INTERVAL; 4 us)",
                          TimeValue(Ns(d.rate_decrease_interval_ns)),
                          MakeTimeAccessor(&RdmaNic::m_rateDecreaseInterval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RpTimer",
                          "DCQCN rate-increase timer (RP_TIMER; 300 us)",
                          TimeValue(Ns(d.rp_timer_ns)),
                          MakeTimeAccessor(&RdmaNic::m_rpTimer),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("FastRecoveryTimes",
                          "DCQCN fast-recovery stages (FAST_RECOVERY_TIMES; 1)",
                          UintegerValue(d.fast_recovery_times),
                          MakeUintegerAccessor(&RdmaNic::m_fastRecoveryTimes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EwmaGain",
                          "DCQCN alpha EWMA gain g (EWMA_GAIN; run.py 1/256)",
                          DoubleValue(d.ewma_gain),
                          MakeDoubleAccessor(&RdmaNic::m_g),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("RateAI",
                          "DCQCN additive increase (RATE_AI; run.py 40Mb/s at 100G)",
                          DataRateValue(DataRate(d.rate_ai_bps)),
                          MakeDataRateAccessor(&RdmaNic::m_rateAi),
                          MakeDataRateChecker())
            .AddAttribute("RateHAI",
                          "DCQCN hyper increase (RATE_HAI; run.py 100Mb/s at 100G)",
                          DataRateValue(DataRate(d.rate_hai_bps)),
                          MakeDataRateAccessor(&RdmaNic::m_rateHai),
                          MakeDataRateChecker())
            .AddAttribute("MinRate",
                          "DCQCN minimum rate (MIN_RATE; 100Mb/s)",
                          DataRateValue(DataRate(d.min_rate_bps)),
                          MakeDataRateAccessor(&RdmaNic::m_minRate),
                          MakeDataRateChecker())
            .AddAttribute("ClampTargetRate",
                          "DCQCN: every decrease sets the target to the current rate "
                          "(CLAMP_TARGET_RATE; 0)",
                          BooleanValue(d.clamp_target_rate),
                          MakeBooleanAccessor(&RdmaNic::m_clampTargetRate),
                          MakeBooleanChecker())
            .AddAttribute("RateOnFirstCnp",
                          "DCQCN: fraction of the rate kept on a queue pair's first CNP "
                          "(attribute RateOnFirstCnp; 1.0)",
                          DoubleValue(d.rate_on_first_cnp),
                          MakeDoubleAccessor(&RdmaNic::m_rateOnFirstCnp),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("Window",
                          "Sending window in bytes, 0 = none (HAS_WIN: the reference gives "
                          "every queue pair the largest BDP of the fabric, GLOBAL_T 1); also "
                          "HPCC's W in its queue term",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RdmaNic::m_window),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("VarWin",
                          "VAR_WIN: the window scales with the current rate over the line rate "
                          "(at least 1 B)",
                          BooleanValue(d.var_win),
                          MakeBooleanAccessor(&RdmaNic::m_varWin),
                          MakeBooleanChecker())
            .AddAttribute("BaseRtt",
                          "HPCC's base RTT T (the reference's largest RTT of the fabric, "
                          "GLOBAL_T 1; 8320 ns on ConWeave's leaf-spine)",
                          TimeValue(NanoSeconds(8320)),
                          MakeTimeAccessor(&RdmaNic::m_baseRtt),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("TargetUtil",
                          "HPCC target utilisation eta (U_TARGET)",
                          DoubleValue(d.u_target),
                          MakeDoubleAccessor(&RdmaNic::m_targetUtil),
                          MakeDoubleChecker<double>(0.01, 10))
            .AddAttribute("MiThresh",
                          "HPCC: additive steps before a multiplicative one (MI_THRESH)",
                          UintegerValue(d.mi_thresh),
                          MakeUintegerAccessor(&RdmaNic::m_miThresh),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("FastReact",
                          "HPCC: react to every ACK between per-RTT updates (FAST_REACT)",
                          BooleanValue(d.fast_react),
                          MakeBooleanAccessor(&RdmaNic::m_fastReact),
                          MakeBooleanChecker())
            .AddAttribute("MultiRate",
                          "HPCC: one reference rate per hop (MULTI_RATE); false = one rate "
                          "from the most utilised hop",
                          BooleanValue(d.multi_rate),
                          MakeBooleanAccessor(&RdmaNic::m_multiRate),
                          MakeBooleanChecker())
            .AddAttribute("SampleFeedback",
                          "HPCC: fast reactions skip hops with an empty queue "
                          "(SAMPLE_FEEDBACK)",
                          BooleanValue(d.sample_feedback),
                          MakeBooleanAccessor(&RdmaNic::m_sampleFeedback),
                          MakeBooleanChecker())
            .AddAttribute("IntMulti",
                          "INT_MULTI: INT byte and queue units multiplier (as the switches')",
                          UintegerValue(d.int_multi),
                          MakeUintegerAccessor(&RdmaNic::m_intMulti),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("TimelyAlpha",
                          "TIMELY: EWMA weight of a new RTT difference",
                          DoubleValue(0.875),
                          MakeDoubleAccessor(&RdmaNic::m_timelyAlpha),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("TimelyBeta",
                          "TIMELY: multiplicative decrease factor",
                          DoubleValue(0.8),
                          MakeDoubleAccessor(&RdmaNic::m_timelyBeta),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("TimelyTLow",
                          "TIMELY: RTT below which the rate always increases",
                          TimeValue(MicroSeconds(50)),
                          MakeTimeAccessor(&RdmaNic::m_timelyTLow),
                          MakeTimeChecker())
            .AddAttribute("TimelyTHigh",
                          "TIMELY: RTT above which the rate decreases",
                          TimeValue(MicroSeconds(500)),
                          MakeTimeAccessor(&RdmaNic::m_timelyTHigh),
                          MakeTimeChecker())
            .AddAttribute("TimelyMinRtt",
                          "TIMELY: the RTT that normalises the gradient",
                          TimeValue(MicroSeconds(20)),
                          MakeTimeAccessor(&RdmaNic::m_timelyMinRtt),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("DctcpRateAI",
                          "DCTCP: additive increase per window without a mark "
                          "(DCTCP_RATE_AI)",
                          DataRateValue(DataRate(d.dctcp_rate_ai_bps)),
                          MakeDataRateAccessor(&RdmaNic::m_dctcpRateAi),
                          MakeDataRateChecker())
            .AddTraceSource("FlowComplete",
                            "A flow was completely acknowledged",
                            MakeTraceSourceAccessor(&RdmaNic::m_flowComplete),
                            "ns3::RdmaNic::FlowCompleteTracedCallback")
            .AddTraceSource("FlowRecord",
                            "A flow was completely acknowledged: all its counters",
                            MakeTraceSourceAccessor(&RdmaNic::m_flowRecord),
                            "ns3::RdmaNic::FlowRecordTracedCallback")
            .AddTraceSource("FlowDelivered",
                            "Receiver: the last byte of a flow arrived in order (fires once "
                            "per flow; the flow must have been started with StartFlow)",
                            MakeTraceSourceAccessor(&RdmaNic::m_flowDelivered),
                            "ns3::RdmaNic::FlowDeliveredTracedCallback")
            .AddTraceSource("DataSent",
                            "A data packet left the NIC: flow id, byte offset, entropy",
                            MakeTraceSourceAccessor(&RdmaNic::m_dataSent),
                            "ns3::RdmaNic::DataSentTracedCallback")
            .AddTraceSource("LbFeedback",
                            "Feedback handed to the load balancer: flow id, kind "
                            "(LbFeedbackKind as an integer), the entropy it names",
                            MakeTraceSourceAccessor(&RdmaNic::m_lbFeedback),
                            "ns3::RdmaNic::LbFeedbackTracedCallback")
            .AddTraceSource("NackSent",
                            "The receiver sent a NACK: source, sender's qpn, expected byte",
                            MakeTraceSourceAccessor(&RdmaNic::m_nackSent),
                            "ns3::RdmaNic::NackSentTracedCallback")
            .AddTraceSource("RateChange",
                            "A queue pair's sending rate changed (congestion control): flow "
                            "id, old, new (bit/s)",
                            MakeTraceSourceAccessor(&RdmaNic::m_rateChange),
                            "ns3::RdmaNic::RateChangeTracedCallback")
            .AddTraceSource("UetWindow",
                            "uet: a queue pair's window after an ACK, NACK or timeout: flow id, "
                            "window, cap (wire bytes)",
                            MakeTraceSourceAccessor(&RdmaNic::m_uetWindow),
                            "ns3::RdmaNic::UetWindowTracedCallback");
    return tid;
}

RdmaNic::RdmaNic()
    : m_rng(CreateObject<UniformRandomVariable>())
{
}

RdmaNic::~RdmaNic() = default;

void
RdmaNic::DoDispose()
{
    for (auto& [qpn, qp] : m_qps)
    {
        (void)qpn;
        if (qp.cc)
        {
            m_cc->Stop(qp);
        }
        qp.rtoEvent.Cancel();
        qp.lbEvent.Cancel();
    }
    m_wakeEvent.Cancel();
    m_qps.clear();
    m_cc.reset();
    m_rx.clear();
    m_dev = nullptr;
    m_lbConfig = nullptr;
    m_lbGroup = nullptr;
    Object::DoDispose();
}

void
RdmaNic::Setup(Ptr<RdmaNetDevice> dev, uint32_t address)
{
    m_dev = dev;
    m_address = address;
    dev->SetReceiveHandler(MakeCallback(&RdmaNic::Receive, this));
    dev->SetDataSource(MakeCallback(&RdmaNic::NextPacket, this));
}

void
RdmaNic::SetLoadBalancer(Ptr<LbConfig> cfg)
{
    m_lbConfig = cfg;
    m_lbGroup = cfg ? cfg->CreateHostGroup() : nullptr;
}

uint32_t
RdmaNic::GetAddress() const
{
    return m_address;
}

uint64_t
RdmaNic::GetCnpsSent() const
{
    return m_cnpsSent;
}

uint32_t
RdmaNic::GetActiveFlows() const
{
    return static_cast<uint32_t>(m_qps.size());
}

DataRate
RdmaNic::GetFlowRate(uint32_t flowId) const
{
    for (const auto& [qpn, qp] : m_qps)
    {
        (void)qpn;
        if (qp.flowId == flowId)
        {
            return DataRate(qp.rate);
        }
    }
    return DataRate(0);
}

RdmaFlowRecord
RdmaNic::GetFlowRecord(uint32_t flowId) const
{
    for (const auto& [qpn, qp] : m_qps)
    {
        (void)qpn;
        if (qp.flowId == flowId)
        {
            return qp.rec;
        }
    }
    RdmaFlowRecord none;
    none.flowId = 0xffffffff;
    return none;
}

void
RdmaNic::SetUetBaseRttOf(Callback<Time, uint32_t> baseRttOfDestination)
{
    m_uetBaseRttOf = baseRttOfDestination;
}

int64_t
RdmaNic::AssignStreams(int64_t stream)
{
    m_rng->SetStream(stream);
    return 1;
}

void
RdmaNic::StartFlow(uint32_t flowId, uint32_t dip, uint64_t size, uint32_t pg)
{
    DoStartFlow(flowId, dip, size, pg, std::nullopt, std::nullopt);
}

void
RdmaNic::StartFlowOnPorts(uint32_t flowId,
                          uint32_t dip,
                          uint64_t size,
                          uint32_t pg,
                          uint16_t sport,
                          uint16_t dport)
{
    DoStartFlow(flowId, dip, size, pg, sport, dport);
}

void
RdmaNic::StartFlowWithEntropy(uint32_t flowId,
                              uint32_t dip,
                              uint64_t size,
                              uint32_t pg,
                              uint16_t entropy)
{
    DoStartFlow(flowId, dip, size, pg, entropy, std::nullopt);
}

void
RdmaNic::DoStartFlow(uint32_t flowId,
                     uint32_t dip,
                     uint64_t size,
                     uint32_t pg,
                     std::optional<uint16_t> sport,
                     std::optional<uint16_t> dport)
{
    NS_ABORT_MSG_IF(!m_lbConfig, "RdmaNic: no load balancer installed");
    NS_ABORT_MSG_IF(size == 0, "RdmaNic: flow " << flowId << " has size 0");
    NS_ABORT_MSG_IF(size > UINT32_MAX, "RdmaNic: flow " << flowId << " exceeds 4 GiB");
    NS_ABORT_MSG_IF(m_qps.size() >= 65535, "RdmaNic: more than 65535 concurrent flows");
    while (m_nextQpn == 0 || m_qps.count(m_nextQpn) != 0)
    {
        ++m_nextQpn;
    }
    RdmaQueuePair& qp = m_qps[m_nextQpn];
    qp.flowId = flowId;
    qp.qpn = m_nextQpn++;
    qp.dport = dport.value_or(qp.qpn);
    qp.dip = dip;
    qp.size = size;
    qp.start = Simulator::Now();
    qp.pg = pg;
    qp.nextAvail = Simulator::Now();
    qp.rate = m_dev->GetDataRate().GetBitRate();
    Cc().Start(qp);
    qp.rtoDeadline = Time::Max();
    qp.rec.flowId = flowId;
    qp.rec.sip = m_address;
    qp.rec.dip = dip;
    qp.rec.size = size;
    qp.rec.start = qp.start;
    qp.lb = m_lbGroup->CreateQpSelector(dip, DrawLbSeed(m_rng), sport);
    m_lossless = PortIsLossless();
    uint32_t dstNode = RdmaHostId(dip);
    if (dstNode < NodeList::GetNNodes())
    {
        Ptr<RdmaNic> peer = NodeList::GetNode(dstNode)->GetObject<RdmaNic>();
        if (peer && peer->m_address == dip)
        {
            peer->ExpectFlow(m_address, qp.qpn, flowId, size);
        }
    }
    NS_LOG_INFO("flow " << flowId << " qpn " << qp.qpn << " to " << dip << " size " << size);
    ArmLbTimer(qp);
    m_dev->TriggerTransmit();
}

bool
RdmaNic::PortIsLossless() const
{
    if (!m_dev || !m_dev->GetPfcEnabled())
    {
        return false;
    }
    Ptr<RdmaChannel> ch = m_dev->GetRdmaChannel();
    Ptr<RdmaNetDevice> peer = ch ? ch->GetPeer(m_dev) : nullptr;
    Ptr<Node> node = peer ? peer->GetNode() : nullptr;
    Ptr<RdmaSwitch> sw = node ? node->GetObject<RdmaSwitch>() : nullptr;
    if (!sw)
    {
        return false; // hosts never send PFC
    }
    BooleanValue pfc(false);
    return sw->GetAttributeFailSafe("PfcEnabled", pfc) && pfc.Get();
}

void
RdmaNic::ExpectFlow(uint32_t sip, uint16_t qpn, uint32_t flowId, uint64_t size)
{
    RxState& rx = m_rx[{sip, qpn}];
    rx = RxState{};
    rx.milestone = uint64_t(m_ackInterval) * m_payloadBytes;
    rx.flowId = flowId;
    rx.size = size;
}

void
RdmaNic::CheckDelivered(RxState& rx, uint32_t sip)
{
    if (rx.size != 0 && !rx.delivered && rx.expected >= rx.size)
    {
        rx.delivered = true;
        m_flowDelivered(rx.flowId, sip, m_address, rx.size, Simulator::Now());
    }
}

// ---- Sender: scheduling and pacing --------------------------------------------------------

void
RdmaNic::Wake()
{
    if (m_dev)
    {
        m_dev->TriggerTransmit();
    }
}

bool
RdmaNic::TimeToSend(const RdmaQueuePair& qp, Time now, Time* wake) const
{
    if (qp.nextAvail > now)
    {
        *wake = std::min(*wake, qp.nextAvail);
        return false;
    }
    Time hold = qp.lb->GetSendAfter();
    if (hold > now)
    {
        *wake = std::min(*wake, hold);
        return false;
    }
    return true;
}

RdmaHeader
RdmaNic::DataHeader(RdmaQueuePair& qp, uint64_t seq, const LbSendContext& cx)
{
    RdmaHeader h;
    h.type = RdmaHeader::DATA;
    h.sip = m_address;
    h.dip = qp.dip;
    h.sport = qp.lb->NextEntropy(cx);
    h.dport = qp.dport;
    h.qpn = qp.qpn;
    h.pg = static_cast<uint16_t>(qp.pg);
    h.seq = static_cast<uint32_t>(seq);
    h.tsNs = static_cast<uint64_t>(cx.now.GetNanoSeconds());
    return h;
}

void
RdmaNic::RecordDataSent(RdmaQueuePair& qp,
                        uint64_t seq,
                        uint32_t payload,
                        uint16_t entropy,
                        bool retransmission)
{
    ++qp.rec.dataPkts;
    if (retransmission)
    {
        ++qp.rec.retxPkts;
    }
    qp.highSent = std::max(qp.highSent, seq + payload);
    qp.maxSentSeq = std::max(qp.maxSentSeq, seq);
    qp.lastEntropy = entropy;
    qp.sentEntropy[(seq / m_payloadBytes) % RdmaQueuePair::ENTROPY_WINDOW] = entropy;
}

Ptr<Packet>
RdmaNic::NextPacket(Ptr<RdmaNetDevice> /*dev*/)
{
    if (m_qps.empty())
    {
        return nullptr;
    }
    return Recovery().NextPacket(Simulator::Now());
}

void
RdmaNic::ScheduleWake(Time now, Time wake)
{
    if (m_pacingWakeupQuirk)
    {
        ScheduleWakeAsReference(now);
    }
    else if (wake != Time::Max() && (!m_wakeEvent.IsRunning() ||
                                     m_wakeEvent.GetTs() > static_cast<uint64_t>(wake.GetTimeStep())))
    {
        m_wakeEvent.Cancel();
        m_wakeEvent = Simulator::Schedule(wake - now, &RdmaNic::Wake, this);
    }
}

RdmaLossRecovery&
RdmaNic::CreateRecovery()
{
    m_lossRecovery = CreateRdmaLossRecovery(*this, m_transport, m_recovery);
    return *m_lossRecovery;
}

void
RdmaNic::ScheduleWakeAsReference(Time now)
{
    // Quirk pacing-wakeup (the reference's NIC scheduling): the earliest future next-send time over
    // every queue pair with bytes left -- paused ones included -- and only if no wake-up is pending
    // (a pending one is never moved earlier). A stalled queue pair then waits for the pending
    // wake-up or the next feedback.
    Time t = Time::Max();
    for (const auto& [qpn, qp] : m_qps)
    {
        (void)qpn;
        const Time ready = std::max(qp.nextAvail, qp.lb->GetSendAfter());
        if ((qp.sndNxt < qp.size || !qp.srRetx.empty()) && ready > now)
        {
            t = std::min(t, ready);
        }
    }
    if (!m_wakeEvent.IsRunning() && t != Time::Max())
    {
        m_wakeEvent = Simulator::Schedule(t - now, &RdmaNic::Wake, this);
    }
}

// ---- Receiver --------------------------------------------------------------------------------

void
RdmaNic::Receive(Ptr<RdmaNetDevice> /*dev*/, Ptr<Packet> p)
{
    RdmaHeader h;
    h.PeekFrom(*p);
    switch (h.type)
    {
    case RdmaHeader::DATA:
        ReceiveData(p);
        break;
    case RdmaHeader::ACK:
    case RdmaHeader::NACK:
        if ((h.flags & RdmaHeader::FLAG_LB_CONTROL) == 0)
        {
            ReceiveAck(p); // a load balancer's control packet is for a ToR, not for us
        }
        break;
    case RdmaHeader::PFC:
        break;
    }
}

void
RdmaNic::SendFeedback(const RdmaHeader& h,
                      RxState& rx,
                      uint8_t type,
                      uint16_t flags,
                      uint64_t sackSeq,
                      uint64_t sackLen)
{
    RdmaHeader a;
    a.type = static_cast<RdmaHeader::Type>(type);
    a.sip = m_address;
    a.dip = h.sip;
    a.sport = h.dport; // the reverse direction of the data packet
    a.dport = h.sport; // echo the entropy
    a.qpn = h.qpn;
    a.pg = h.pg;
    a.tsNs = h.tsNs;
    a.echoSeq = h.seq;
    a.flags = flags | (h.ecn != 0 ? FLAG_ECN_ECHO : 0);
    a.seq = static_cast<uint32_t>(rx.expected);
    a.sackSeq = static_cast<uint32_t>(sackSeq);
    a.sackLen = static_cast<uint16_t>(sackLen);
    // The INT of the data packet goes back in the ACK/NACK (HPCC's records, TIMELY's time).
    a.intMode = h.intMode;
    if (h.intMode == RdmaHeader::INT_HPCC)
    {
        a.intNHop = h.intNHop;
        std::copy(std::begin(h.intHop), std::end(h.intHop), std::begin(a.intHop));
    }
    if (flags & RdmaHeader::FLAG_CNP)
    {
        ++rx.cnpsSent;
        ++m_cnpsSent;
    }
    Ptr<Packet> ack = Create<Packet>();
    ack->AddHeader(a);
    m_dev->Enqueue(ack, 0);
}

void
RdmaNic::AnswerProbe(const RdmaHeader& h)
{
    RdmaHeader a;
    a.type = RdmaHeader::ACK;
    a.sip = m_address;
    a.dip = h.sip;
    a.sport = h.dport; // the reverse direction of the probe
    a.dport = h.sport; // the probed entropy
    a.qpn = h.qpn;
    a.pg = h.pg;
    a.tsNs = h.tsNs;
    a.flags = RdmaHeader::FLAG_PROBE;
    Ptr<Packet> ack = Create<Packet>();
    ack->AddHeader(a);
    m_dev->Enqueue(ack, 0);
}

uint16_t
RdmaNic::SentEntropy(const RdmaQueuePair& qp, uint64_t seq) const
{
    const uint64_t psn = seq / m_payloadBytes;
    const uint64_t highPsn = (qp.highSent + m_payloadBytes - 1) / m_payloadBytes;
    if (seq >= qp.highSent || highPsn - psn > RdmaQueuePair::ENTROPY_WINDOW)
    {
        return qp.lastEntropy; // never sent, or overwritten by a packet ENTROPY_WINDOW later
    }
    return qp.sentEntropy[psn % RdmaQueuePair::ENTROPY_WINDOW];
}

void
RdmaNic::LbFeedbackAndProbes(RdmaQueuePair& qp, const LbFeedback& fb)
{
    m_lbFeedback(qp.flowId, static_cast<uint8_t>(fb.kind), fb.entropy);
    qp.lb->OnFeedback(fb);
    qp.rec.pathSwitches = qp.lb->GetPathSwitches();
    uint16_t entropy = 0;
    Time now = Simulator::Now();
    while (qp.lb->TakeProbe(now, &entropy))
    {
        // A probe is a small data packet (64 B on the wire) in the flow's priority group, so it
        // queues behind the same data the flow's own packets would.
        RdmaHeader h;
        h.type = RdmaHeader::DATA;
        h.flags = RdmaHeader::FLAG_PROBE;
        h.sip = m_address;
        h.dip = qp.dip;
        h.sport = entropy;
        h.dport = qp.dport;
        h.qpn = qp.qpn;
        h.pg = static_cast<uint16_t>(qp.pg);
        h.tsNs = static_cast<uint64_t>(now.GetNanoSeconds());
        Ptr<Packet> probe = Create<Packet>(64 - RdmaHeader::DATA_HEADER_BYTES);
        probe->AddHeader(h);
        ++qp.rec.probes;
        m_dev->Enqueue(probe, qp.pg);
    }
}

void
RdmaNic::ReceiveData(Ptr<Packet> p)
{
    RdmaHeader h;
    p->RemoveHeader(h);
    if (h.flags & RdmaHeader::FLAG_PROBE)
    {
        AnswerProbe(h);
        return;
    }
    Recovery().ReceiveData(h, p);
}

// ---- Sender: feedback -----------------------------------------------------------------------

void
RdmaNic::ReceiveAck(Ptr<Packet> p)
{
    RdmaHeader h;
    p->RemoveHeader(h);
    auto it = m_qps.find(h.qpn);
    if (it == m_qps.end())
    {
        return; // late feedback for a finished queue pair
    }
    RdmaQueuePair& qp = it->second;
    if (h.flags & RdmaHeader::FLAG_PROBE)
    {
        LbFeedback pf;
        pf.kind = LbFeedbackKind::PROBE_ACK;
        pf.now = Simulator::Now();
        pf.entropy = h.dport;
        pf.rtt = Simulator::Now() - NanoSeconds(static_cast<int64_t>(h.tsNs));
        pf.hasRtt = true;
        LbFeedbackAndProbes(qp, pf);
        return;
    }
    Recovery().ReceiveAck(it, h);
}

void
RdmaNic::NotifyCnp(uint32_t flowId)
{
    for (auto& [qpn, qp] : m_qps)
    {
        (void)qpn;
        if (qp.flowId != flowId)
        {
            continue;
        }
        ++qp.rec.cnpsRx;
        LbFeedback fb;
        fb.kind = LbFeedbackKind::CNP;
        fb.now = Simulator::Now();
        // An external CNP names no packet: it is charged to the oldest outstanding one.
        fb.entropy = SentEntropy(qp, qp.sndUna);
        fb.psn = static_cast<uint32_t>(qp.sndUna / m_payloadBytes);
        fb.ecn = true;
        LbFeedbackAndProbes(qp, fb);
        Cc().OnCnp(qp);
        ArmLbTimer(qp);
        return;
    }
}

void
RdmaNic::Complete(std::map<uint16_t, RdmaQueuePair>::iterator it)
{
    RdmaQueuePair& qp = it->second;
    m_cc->Stop(qp);
    qp.rtoEvent.Cancel();
    qp.lbEvent.Cancel();
    qp.rec.finish = Simulator::Now();
    // The receiver's counters; its RX state is deleted, as the reference's completion does.
    uint32_t dstNode = RdmaHostId(qp.dip);
    if (dstNode < NodeList::GetNNodes())
    {
        Ptr<RdmaNic> peer = NodeList::GetNode(dstNode)->GetObject<RdmaNic>();
        if (peer && peer->m_address == qp.dip)
        {
            auto rx = peer->m_rx.find({m_address, qp.qpn});
            if (rx != peer->m_rx.end())
            {
                qp.rec.nacksSent = rx->second.nacksSent;
                qp.rec.cnpsSent = rx->second.cnpsSent;
                peer->m_rx.erase(rx);
            }
        }
    }
    NS_LOG_INFO("flow " << qp.flowId << " complete: fct " << (qp.rec.finish - qp.start).As(Time::US)
                        << " retx " << qp.rec.retxPkts << " nacks " << qp.rec.nacksRx << " cnps "
                        << qp.rec.cnpsRx << " timeouts " << qp.rec.timeouts);
    m_flowComplete(qp.flowId, m_address, qp.dip, qp.size, qp.start, qp.rec.finish, qp.rec.retxPkts);
    m_flowRecord(qp.rec);
    m_qps.erase(it);
}

// ---- The selector's timer -------------------------------------------------------------------

void
RdmaNic::ArmLbTimer(RdmaQueuePair& qp)
{
    Time at = qp.lb->PollAt();
    if (at == Time::Max())
    {
        qp.lbEvent.Cancel();
        return;
    }
    if (qp.lbEvent.IsRunning() && qp.lbEvent.GetTs() == static_cast<uint64_t>(at.GetTimeStep()))
    {
        return;
    }
    qp.lbEvent.Cancel();
    Time delay = std::max(at - Simulator::Now(), Time(0));
    qp.lbEvent = Simulator::Schedule(delay, &RdmaNic::LbTimer, this, qp.qpn);
}

void
RdmaNic::LbTimer(uint16_t qpn)
{
    auto it = m_qps.find(qpn);
    if (it == m_qps.end())
    {
        return;
    }
    it->second.lb->OnTimer(Simulator::Now());
    ArmLbTimer(it->second);
    m_dev->TriggerTransmit();
}

// ---- Congestion control (rdma-cc.h) ------------------------------------------------------

RdmaCongestionControl&
RdmaNic::Cc()
{
    if (m_cc)
    {
        return *m_cc;
    }
    RdmaCcParams p;
    p.minRateBps = m_minRate.GetBitRate();
    p.rateAiBps = m_rateAi.GetBitRate();
    p.rateHaiBps = m_rateHai.GetBitRate();
    p.g = m_g;
    p.mtu = m_payloadBytes;
    p.timeTruncation = m_timeTruncation;
    p.eventOrderQuirk = m_eventOrderQuirk;
    if (m_eventOrderQuirk && m_dev)
    {
        Ptr<RdmaChannel> ch = m_dev->GetRdmaChannel();
        p.feedbackLead =
            (ch ? ch->GetDelay() : Time(0)) +
            RdmaTxTime(m_dev->GetDataRate(), RdmaHeader::ACK_BYTES, m_timeTruncation);
    }
    p.alphaResumeInterval = m_alphaResumeInterval;
    p.rateDecreaseInterval = m_rateDecreaseInterval;
    p.rpTimer = m_rpTimer;
    p.fastRecoveryTimes = m_fastRecoveryTimes;
    p.clampTargetRate = m_clampTargetRate;
    p.rateOnFirstCnp = m_rateOnFirstCnp;
    p.targetUtil = m_targetUtil;
    p.miThresh = m_miThresh;
    p.fastReact = m_fastReact;
    p.multiRate = m_multiRate;
    p.sampleFeedback = m_sampleFeedback;
    p.intMulti = m_intMulti;
    p.baseRttNs = static_cast<uint64_t>(m_baseRtt.GetNanoSeconds());
    p.windowBytes = m_window;
    p.timelyAlpha = m_timelyAlpha;
    p.timelyBeta = m_timelyBeta;
    p.timelyTLowNs = static_cast<uint64_t>(m_timelyTLow.GetNanoSeconds());
    p.timelyTHighNs = static_cast<uint64_t>(m_timelyTHigh.GetNanoSeconds());
    p.timelyMinRttNs = static_cast<uint64_t>(m_timelyMinRtt.GetNanoSeconds());
    p.dctcpRateAiBps = m_dctcpRateAi.GetBitRate();
    m_cc = CreateRdmaCongestionControl(static_cast<RdmaCcMode>(m_ccMode), p, *this);
    m_intMode = m_cc->DataIntMode();
    return *m_cc;
}

void
RdmaNic::SetRate(RdmaQueuePair& qp, uint64_t rate)
{
    if (rate != qp.rate)
    {
        m_rateChange(qp.flowId, qp.rate, rate);
        qp.rate = rate;
    }
}

uint64_t
RdmaNic::Window(const RdmaQueuePair& qp) const
{
    if (!m_varWin)
    {
        return m_window;
    }
    return RdmaVarWindow(m_window, qp.rate, m_dev->GetDataRate().GetBitRate());
}

uint64_t
RdmaNic::CcLineRate() const
{
    return m_dev->GetDataRate().GetBitRate();
}

RdmaQueuePair*
RdmaNic::CcFindQp(uint16_t qpn)
{
    auto it = m_qps.find(qpn);
    return it == m_qps.end() ? nullptr : &it->second;
}

void
RdmaNic::CcSetRate(RdmaQueuePair& qp, uint64_t bps, bool shiftPacing)
{
    if (shiftPacing)
    {
        // The reference's ChangeRate: the last packet's gap is re-timed at the new rate, and
        // the port's pending wake-up moves earlier if the queue pair may now send sooner (it
        // does so even when the rate is unchanged).
        const Time before = RdmaTxTime(DataRate(qp.rate), qp.lastPktSize, m_timeTruncation);
        const Time after = RdmaTxTime(DataRate(bps), qp.lastPktSize, m_timeTruncation);
        qp.nextAvail = qp.nextAvail + after - before;
        if (m_wakeEvent.IsRunning() &&
            static_cast<uint64_t>(qp.nextAvail.GetTimeStep()) < m_wakeEvent.GetTs())
        {
            const Time now = Simulator::Now();
            m_wakeEvent.Cancel();
            m_wakeEvent = Simulator::Schedule(qp.nextAvail > now ? qp.nextAvail - now : Time(0),
                                              &RdmaNic::Wake, this);
        }
    }
    SetRate(qp, bps);
}

} // namespace ns3
