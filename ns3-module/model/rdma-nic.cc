/*
 * rdma-lb: RdmaNic (spec/rdma-model.md §3).
 */
#include "rdma-nic.h"

#include "rdma-header.h"
#include "rdma-net-device.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaNic");
NS_OBJECT_ENSURE_REGISTERED(RdmaNic);

TypeId
RdmaNic::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaNic")
            .SetParent<Object>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaNic>()
            .AddAttribute("PayloadSize",
                          "Payload bytes per data packet (PACKET_PAYLOAD_SIZE; spec §3.2)",
                          UintegerValue(1000),
                          MakeUintegerAccessor(&RdmaNic::m_payloadBytes),
                          MakeUintegerChecker<uint32_t>(1, 9000))
            .AddTraceSource("FlowComplete",
                            "A flow was completely acknowledged",
                            MakeTraceSourceAccessor(&RdmaNic::m_flowComplete),
                            "ns3::RdmaNic::FlowCompleteTracedCallback")
            .AddTraceSource("DataSent",
                            "A data packet left the NIC: flow id, byte offset, entropy",
                            MakeTraceSourceAccessor(&RdmaNic::m_dataSent),
                            "ns3::RdmaNic::DataSentTracedCallback");
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
    m_qps.clear();
    m_dev = nullptr;
    m_lbConfig = nullptr;
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
}

uint32_t
RdmaNic::GetAddress() const
{
    return m_address;
}

uint32_t
RdmaNic::GetActiveFlows() const
{
    return static_cast<uint32_t>(m_qps.size());
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
    NS_ABORT_MSG_IF(!m_lbConfig, "RdmaNic: no load balancer installed");
    NS_ABORT_MSG_IF(size == 0, "RdmaNic: flow " << flowId << " has size 0");
    NS_ABORT_MSG_IF(m_qps.size() >= 65535, "RdmaNic: more than 65535 concurrent flows");
    while (m_nextQpn == 0 || m_qps.count(m_nextQpn) != 0)
    {
        ++m_nextQpn;
    }
    RdmaQueuePair& qp = m_qps[m_nextQpn];
    qp.flowId = flowId;
    qp.qpn = m_nextQpn++;
    qp.dip = dip;
    qp.size = size;
    qp.start = Simulator::Now();
    qp.pg = pg;
    qp.lb = m_lbConfig->CreateQpSelector(DrawLbSeed(m_rng));
    NS_LOG_INFO("flow " << flowId << " qpn " << qp.qpn << " to " << dip << " size " << size);
    m_dev->TriggerTransmit();
}

Ptr<Packet>
RdmaNic::NextPacket(Ptr<RdmaNetDevice> /*dev*/)
{
    if (m_qps.empty())
    {
        return nullptr;
    }
    // Round-robin: the first queue pair after the last one served that has data to send.
    auto it = m_qps.upper_bound(m_lastServed);
    for (std::size_t k = 0; k < m_qps.size(); ++k, ++it)
    {
        if (it == m_qps.end())
        {
            it = m_qps.begin();
        }
        RdmaQueuePair& qp = it->second;
        if (qp.sndNxt >= qp.size)
        {
            continue;
        }
        m_lastServed = qp.qpn;
        uint32_t payload =
            static_cast<uint32_t>(std::min<uint64_t>(m_payloadBytes, qp.size - qp.sndNxt));
        LbSendContext cx;
        cx.now = Simulator::Now();
        cx.psn = static_cast<uint32_t>(qp.sndNxt / m_payloadBytes);
        cx.inflightPkts = static_cast<uint32_t>((qp.sndNxt - qp.sndUna + m_payloadBytes - 1) /
                                                m_payloadBytes);
        RdmaHeader h;
        h.type = RdmaHeader::DATA;
        h.sip = m_address;
        h.dip = qp.dip;
        h.sport = qp.lb->NextEntropy(cx);
        h.dport = qp.qpn;
        h.pg = static_cast<uint16_t>(qp.pg);
        h.seq = static_cast<uint32_t>(qp.sndNxt);
        h.tsNs = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
        Ptr<Packet> p = Create<Packet>(payload);
        p->AddHeader(h);
        m_dataSent(qp.flowId, h.seq, h.sport);
        qp.sndNxt += payload;
        return p;
    }
    return nullptr;
}

void
RdmaNic::Receive(Ptr<RdmaNetDevice> /*dev*/, Ptr<Packet> p)
{
    RdmaHeader h;
    p->PeekHeader(h);
    switch (h.type)
    {
    case RdmaHeader::DATA:
        ReceiveData(p);
        break;
    case RdmaHeader::ACK:
    case RdmaHeader::NACK:
        ReceiveAck(p);
        break;
    case RdmaHeader::PFC:
        break;
    }
}

void
RdmaNic::ReceiveData(Ptr<Packet> p)
{
    RdmaHeader h;
    p->RemoveHeader(h);
    RxState& rx = m_rx[{h.sip, h.dport}];
    RdmaHeader a;
    a.sip = m_address;
    a.dip = h.sip;
    a.sport = h.dport; // the sender's queue-pair number
    a.dport = h.sport; // echo the entropy
    a.pg = h.pg;
    a.tsNs = h.tsNs;
    a.echoSeq = h.seq;
    a.flags = (h.ecn == 3) ? RdmaHeader::FLAG_CNP : 0;
    if (h.seq == rx.expected)
    {
        rx.expected += p->GetSize();
        rx.nacked = false;
        a.type = RdmaHeader::ACK;
    }
    else if (h.seq > rx.expected)
    {
        // A gap: Go-Back-N asks once for the expected byte.
        if (rx.nacked)
        {
            return;
        }
        rx.nacked = true;
        a.type = RdmaHeader::NACK;
    }
    else
    {
        // A duplicate: acknowledge what we have.
        a.type = RdmaHeader::ACK;
    }
    a.seq = static_cast<uint32_t>(rx.expected);
    Ptr<Packet> ack = Create<Packet>();
    ack->AddHeader(a);
    m_dev->Enqueue(ack, 0);
}

void
RdmaNic::ReceiveAck(Ptr<Packet> p)
{
    RdmaHeader h;
    p->RemoveHeader(h);
    auto it = m_qps.find(h.sport);
    if (it == m_qps.end())
    {
        return; // late feedback for a finished queue pair
    }
    RdmaQueuePair& qp = it->second;
    LbFeedback fb;
    fb.kind = h.type == RdmaHeader::ACK ? LbFeedbackKind::ACK : LbFeedbackKind::NACK;
    fb.now = Simulator::Now();
    fb.entropy = h.dport;
    fb.psn = h.echoSeq / m_payloadBytes;
    fb.rtt = Simulator::Now() - NanoSeconds(static_cast<int64_t>(h.tsNs));
    fb.hasRtt = true;
    fb.ecn = (h.flags & RdmaHeader::FLAG_CNP) != 0;
    qp.lb->OnFeedback(fb);
    if (h.seq > qp.sndUna)
    {
        qp.sndUna = h.seq;
    }
    if (h.type == RdmaHeader::NACK)
    {
        ++qp.nacks;
        if (qp.sndNxt > h.seq)
        {
            qp.retxPkts += (qp.sndNxt - h.seq + m_payloadBytes - 1) / m_payloadBytes;
            qp.sndNxt = h.seq; // go back
            m_dev->TriggerTransmit();
        }
    }
    if (qp.sndUna >= qp.size)
    {
        m_flowComplete(qp.flowId, m_address, qp.dip, qp.size, qp.start, Simulator::Now(), qp.retxPkts);
        m_qps.erase(it);
    }
}

} // namespace ns3
