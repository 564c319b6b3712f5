/*
 * rdma-lb: RdmaNic (the reference's RdmaHw, as behaviour). Its TypeId -- attributes and trace
 * sources -- is rdma-nic-attributes.cc's.
 */
#include "rdma-nic.h"

#include "rdma-switch.h"

#include "rdma-remote.h"

#include "rdma-header.h"
#include "rdma-channel.h"
#include "rdma-net-device.h"
#include "rdma-recovery.h"
#include "rdma-node-role.h"
#include "rdma-time.h"

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
    for (PortState& p : m_portState)
    {
        p.wakeEvent.Cancel();
    }
    m_portState.clear();
    m_ports.clear();
    m_qps.clear();
    m_cc = nullptr;
    m_rx.clear();
    m_dev = nullptr;
    m_lbConfig = nullptr;
    m_lbGroup = nullptr;
    Object::DoDispose();
}

void
RdmaNic::BindPort(const Ptr<RdmaNetDevice>& dev, bool receives)
{
    if (receives)
    {
        dev->SetFrameReceiveHook(
            RdmaNetDevice::FrameReceiveHook::Of<RdmaNic, &RdmaNic::Receive>(this));
    }
    dev->SetDataSourceHook(RdmaNetDevice::DataSourceHook::Of<RdmaNic, &RdmaNic::NextPacket>(this));
}

void
RdmaNic::Setup(Ptr<RdmaNetDevice> dev, uint32_t address)
{
    m_dev = dev;
    m_address = address;
    BindPort(dev, true);
}

uint8_t
RdmaNic::AddPort(Ptr<RdmaNetDevice> dev)
{
    NS_ABORT_MSG_IF(!m_dev, "RdmaNic: AddPort before Setup");
    NS_ABORT_MSG_IF(dev->GetDataRate() != m_dev->GetDataRate(),
                    "RdmaNic: a port of rate " << dev->GetDataRate() << " beside one of "
                                               << m_dev->GetDataRate()
                                               << ": the ports of a NIC have one rate");
    NS_ABORT_MSG_IF(m_ports.size() >= 255, "RdmaNic: more than 255 ports");
    if (m_ports.empty())
    {
        m_ports.push_back(m_dev);
    }
    m_ports.push_back(dev);
    m_portState.emplace_back();
    BindPort(dev, true);
    return static_cast<uint8_t>(m_ports.size() - 1);
}

void
RdmaNic::SetupOnSwitch(Ptr<RdmaSwitch> sw,
                       const std::vector<Ptr<RdmaNetDevice>>& ports,
                       uint32_t address)
{
    NS_ABORT_MSG_IF(ports.empty(), "RdmaNic::SetupOnSwitch: a switch without ports");
    m_dev = ports.front();
    m_address = address;
    for (size_t i = 1; i < ports.size(); ++i)
    {
        NS_ABORT_MSG_IF(ports[i]->GetDataRate() != m_dev->GetDataRate(),
                        "RdmaNic::SetupOnSwitch: a port of rate "
                            << ports[i]->GetDataRate() << " beside one of " << m_dev->GetDataRate()
                            << ": the ports of a NIC have one rate");
    }
    NS_ABORT_MSG_IF(ports.size() > 255, "RdmaNic::SetupOnSwitch: more than 255 ports");
    if (ports.size() > 1)
    {
        m_ports = ports;
        m_portState.resize(ports.size() - 1);
    }
    for (const Ptr<RdmaNetDevice>& dev : ports)
    {
        BindPort(dev, false); // the switch receives; it hands this NIC its frames
    }
    sw->SetEndpoint(RdmaNetDevice::FrameReceiveHook::Of<RdmaNic, &RdmaNic::Receive>(this), address);
}

void
RdmaNic::SetPortRoutes(std::vector<std::vector<uint8_t>> routes)
{
    m_portRoutes = std::move(routes);
}

uint32_t
RdmaNic::GetNPorts() const
{
    return m_ports.empty() ? 1 : static_cast<uint32_t>(m_ports.size());
}

const RdmaQueuePair*
RdmaNic::FindQpOfFlow(uint32_t flowId) const
{
    for (const auto& [qpn, qp] : m_qps)
    {
        (void)qpn;
        if (qp.flowId == flowId)
        {
            return &qp;
        }
    }
    return nullptr;
}

uint8_t
RdmaNic::GetFlowPort(uint32_t flowId) const
{
    const RdmaQueuePair* qp = FindQpOfFlow(flowId);
    return qp ? qp->port : 0;
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
    const RdmaQueuePair* qp = FindQpOfFlow(flowId);
    return DataRate(qp ? qp->rate : 0);
}

RdmaFlowRecord
RdmaNic::GetFlowRecord(uint32_t flowId) const
{
    if (const RdmaQueuePair* qp = FindQpOfFlow(flowId))
    {
        return qp->rec;
    }
    RdmaFlowRecord none;
    none.flowId = 0xffffffff;
    return none;
}

uint32_t
RdmaNic::GetFlowIdOfQpn(uint16_t qpn) const
{
    auto it = m_qps.find(qpn);
    return it == m_qps.end() ? 0xffffffff : it->second.flowId;
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
    uint32_t dstNode = RdmaHostId(dip);
    Ptr<RdmaNic> peer;
    Ptr<Node> peerNode;
    if (dstNode < NodeList::GetNNodes())
    {
        peerNode = NodeList::GetNode(dstNode);
        peer = peerNode->GetObject<RdmaNic>();
        if (peer && peer->m_address != dip)
        {
            peer = nullptr;
        }
    }
    // A NIC of several ports (either end): SimAI's GetNicIdxOfQp hashes the queue pair's (sip,
    // dip, sport, dport) over the sender's ports on a shortest path to dip, where sport is
    // SimAI's per-pair port (portNumber[src][dst]++ from 10000, in start order: entry.h
    // SendFlow) and dport its 100; the receiver's ACKs take the port its receive queue pair
    // hashes to (ExpectFlow). These are the hash's inputs whatever the packets carry (their
    // entropy is the load balancer's, within the port).
#ifndef NS3_MPI
    (void)peerNode;
#endif
    std::optional<uint16_t> pairSport;
    if (m_ports.size() > 1 || (peer && peer->m_ports.size() > 1))
    {
        pairSport = m_pairSport.emplace(dip, SIMAI_FIRST_SPORT).first->second++;
        qp.port = PortByHash(dip, *pairSport, SIMAI_DPORT);
    }
    qp.rate = Device(qp)->GetDataRate().GetBitRate();
    Cc().Start(qp);
    qp.rtoDeadline = Time::Max();
    qp.rec.flowId = flowId;
    qp.rec.sip = m_address;
    qp.rec.dip = dip;
    qp.rec.size = size;
    qp.rec.start = qp.start;
    qp.lb = m_lbGroup->CreateQpSelector(dip, DrawLbSeed(m_rng), sport);
    m_lossless = PortIsLossless();
    if (peer)
    {
#ifdef NS3_MPI
        if (peerNode->GetSystemId() != m_dev->GetNode()->GetSystemId())
        {
            // A receiver on another rank of a distributed run (rdma-remote.h; its ACK port, on
            // a NIC of several ports, hashes the ACK's own fields).
            RdmaRemoteSendExpectFlow(dstNode, m_address, qp.qpn, flowId, size);
            peer = nullptr;
        }
#endif
        if (peer)
        {
            peer->ExpectFlow(m_address, qp.qpn, flowId, size, pairSport);
        }
    }
    NS_LOG_INFO("flow " << flowId << " qpn " << qp.qpn << " to " << dip << " size " << size);
    ArmLbTimer(qp);
    Device(qp)->TriggerTransmit();
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
    return RdmaNodeIsPfcSwitch(peer ? peer->GetNode() : nullptr);
}

void
RdmaNic::ExpectFlow(uint32_t sip,
                    uint16_t qpn,
                    uint32_t flowId,
                    uint64_t size,
                    std::optional<uint16_t> pairSport)
{
    RdmaRxState& rx = m_rx[{sip, qpn}];
    rx = RdmaRxState{};
    rx.milestone = uint64_t(m_ackInterval) * m_payloadBytes;
    rx.flowId = flowId;
    rx.size = size;
    if (pairSport && m_ports.size() > 1)
    {
        // SimAI's receive queue pair (GetNicIdxOfRxQp): sip = this NIC, dip = the sender,
        // sport = the data's dport (100), dport = the data's sport.
        rx.feedbackPort = PortByHash(sip, SIMAI_DPORT, *pairSport);
    }
}

void
RdmaNic::ReleaseRx(uint32_t sip, uint16_t qpn)
{
    auto rx = m_rx.find({sip, qpn});
    if (rx != m_rx.end())
    {
        m_rxReleased(rx->second.flowId, rx->second.nacksSent, rx->second.cnpsSent);
        m_rx.erase(rx);
    }
}

// ---- Sender: the send opportunity and the components ------------------------------------

RdmaFramePtr
RdmaNic::NextPacket(RdmaNetDevice& dev)
{
    if (m_qps.empty())
    {
        return nullptr;
    }
    if (!m_ports.empty())
    {
        // A NIC of several ports: the asking port serves its own queue pairs.
        m_servingPort = static_cast<uint8_t>(
            std::find_if(m_ports.begin(),
                         m_ports.end(),
                         [&dev](const Ptr<RdmaNetDevice>& p) { return PeekPointer(p) == &dev; }) -
            m_ports.begin());
    }
    return Recovery().NextPacket(Simulator::Now());
}

RdmaLossRecovery&
RdmaNic::CreateRecovery()
{
    m_lossRecovery = m_recoveryFactory.Create<RdmaLossRecovery>();
    m_lossRecovery->Setup(*this);
    return *m_lossRecovery;
}

Ptr<RdmaLossRecovery>
RdmaNic::GetLossRecovery()
{
    Recovery();
    return m_lossRecovery;
}

Ptr<RdmaCongestionControl>
RdmaNic::GetCongestionControl()
{
    Cc();
    return m_cc;
}

// ---- Receiver --------------------------------------------------------------------------------

void
RdmaNic::Receive(RdmaNetDevice& /*dev*/, RdmaFramePtr& f)
{
    const RdmaHeader& h = f->header;
    switch (h.type)
    {
    case RdmaHeader::DATA:
        ReceiveData(*f);
        break;
    case RdmaHeader::ACK:
    case RdmaHeader::NACK:
        if ((h.flags & RdmaHeader::FLAG_LB_CONTROL) == 0)
        {
            ReceiveAck(h); // a load balancer's control packet is for a ToR, not for us
        }
        break;
    case RdmaHeader::PFC:
        break;
    }
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
    FeedbackDevice(a)->Enqueue(RdmaFrame::Make(a, 0), 0);
}

void
RdmaNic::ReceiveData(const RdmaFrame& f)
{
    const RdmaHeader& h = f.header;
    if (h.flags & RdmaHeader::FLAG_PROBE)
    {
        AnswerProbe(h);
        return;
    }
    Recovery().ReceiveData(h, f.sizeBytes - h.GetSerializedSize());
}

// ---- Sender: feedback -----------------------------------------------------------------------

void
RdmaNic::ReceiveAck(const RdmaHeader& h)
{
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
RdmaNic::Complete(QpIterator it)
{
    RdmaQueuePair& qp = it->second;
    m_cc->Stop(qp);
    qp.rtoEvent.Cancel();
    qp.lbEvent.Cancel();
    qp.rec.finish = Simulator::Now();
    // The receiver's counters; its RX state is deleted, as the reference's completion does.
    uint32_t dstNode = RdmaHostId(qp.dip);
    if (dstNode < NodeList::GetNNodes() && m_rxReleaseDelay.IsStrictlyPositive())
    {
        // ... or, later, by a message (ReceiverReleaseDelay).
        Ptr<Node> peerNode = NodeList::GetNode(dstNode);
        Ptr<RdmaNic> peer = peerNode->GetObject<RdmaNic>();
        if (peer && peer->m_address == qp.dip)
        {
#ifdef NS3_MPI
            if (peerNode->GetSystemId() != m_dev->GetNode()->GetSystemId())
            {
                RdmaRemoteSendReleaseRx(dstNode, m_address, qp.qpn, m_rxReleaseDelay);
            }
            else
#endif
            {
                Simulator::ScheduleWithContext(dstNode,
                                               m_rxReleaseDelay,
                                               &RdmaNic::ReleaseRx,
                                               peer,
                                               m_address,
                                               qp.qpn);
            }
        }
    }
    else if (dstNode < NodeList::GetNNodes())
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

// ---- Congestion control (rdma-cc.h) ------------------------------------------------------

RdmaCongestionControl&
RdmaNic::Cc()
{
    if (m_cc)
    {
        return *m_cc;
    }
    RdmaCcContext cx;
    cx.mtu = m_payloadBytes;
    cx.timeTruncation = m_timeTruncation;
    cx.eventOrderQuirk = m_eventOrderQuirk;
    if (m_eventOrderQuirk && m_dev)
    {
        Ptr<RdmaChannel> ch = m_dev->GetRdmaChannel();
        cx.feedbackLead =
            (ch ? ch->GetDelay() : Time(0)) +
            RdmaTxTime(m_dev->GetDataRate(), RdmaHeader::ACK_BYTES, TxArithmetic());
    }
    cx.baseRttNs = static_cast<uint64_t>(m_baseRtt.GetNanoSeconds());
    cx.windowBytes = m_window;
    m_cc = m_ccFactory.Create<RdmaCongestionControl>();
    m_cc->Setup(cx, *this);
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
        const Time before = RdmaTxTime(DataRate(qp.rate), qp.lastPktSize, TxArithmetic());
        const Time after = RdmaTxTime(DataRate(bps), qp.lastPktSize, TxArithmetic());
        qp.nextAvail = qp.nextAvail + after - before;
        AdvancePendingWake(qp.nextAvail, qp.port);
    }
    SetRate(qp, bps);
}

} // namespace ns3
