/*
 * rdma-lb: RdmaSwitch (spec/rdma-model.md §5.1-5.2).
 */
#include "rdma-switch.h"

#include "rdma-header.h"
#include "rdma-net-device.h"
#include "rdma-nic.h"

#include "rdma-channel.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/tag.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm> // std::find, std::upper_bound (ns-3.35 headers do not bring it in)

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaSwitch");
NS_OBJECT_ENSURE_REGISTERED(RdmaSwitch);

/**
 * \ingroup rdma-lb
 * The ingress port of a packet inside a switch (spec §2: added on receive, removed at dequeue;
 * no bytes on the wire).
 */
class RdmaIngressTag : public Tag
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::RdmaIngressTag")
                                .SetParent<Tag>()
                                .SetGroupName("RdmaLb")
                                .AddConstructor<RdmaIngressTag>();
        return tid;
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return 4;
    }

    void Serialize(TagBuffer i) const override
    {
        i.WriteU32(port);
    }

    void Deserialize(TagBuffer i) override
    {
        port = i.ReadU32();
    }

    void Print(std::ostream& os) const override
    {
        os << "ingress=" << port;
    }

    uint32_t port{0}; //!< ingress port index
};

NS_OBJECT_ENSURE_REGISTERED(RdmaIngressTag);

TypeId
RdmaSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaSwitch")
            .SetParent<Object>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaSwitch>()
            .AddTraceSource("Forward",
                            "A packet was forwarded: packet, ingress port, egress port",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_forwardTrace),
                            "ns3::RdmaSwitch::ForwardTracedCallback")
            .AddAttribute("Mmu",
                          "The shared-buffer MMU (spec §5.3)",
                          PointerValue(),
                          MakePointerAccessor(&RdmaSwitch::m_mmu),
                          MakePointerChecker<SwitchMmu>())
            .AddAttribute("PfcEnabled",
                          "Generate PFC pause/resume frames (ENABLE_PFC, spec §5.4); off, the "
                          "egress dynamic threshold drops packets",
                          BooleanValue(true),
                          MakeBooleanAccessor(&RdmaSwitch::m_pfcEnabled),
                          MakeBooleanChecker())
            .AddAttribute("PauseTime",
                          "Pause time carried by PFC pause frames (PAUSE_TIME, whole "
                          "microseconds)",
                          TimeValue(MicroSeconds(5)),
                          MakeTimeAccessor(&RdmaSwitch::m_pauseTime),
                          MakeTimeChecker(MicroSeconds(1)))
            .AddAttribute("EcnEnabled",
                          "ECN marking at dequeue (ENABLE_QCN, spec §5.5)",
                          BooleanValue(true),
                          MakeBooleanAccessor(&RdmaSwitch::m_ecnEnabled),
                          MakeBooleanChecker())
            .AddAttribute("EcnKmin",
                          "Egress shared bytes above which packets may be marked (KMIN; "
                          "100 KB for 100 Gbps ports)",
                          UintegerValue(100000),
                          MakeUintegerAccessor(&RdmaSwitch::m_kmin),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("EcnKmax",
                          "Egress shared bytes above which every packet is marked (KMAX; "
                          "400 KB for 100 Gbps ports)",
                          UintegerValue(400000),
                          MakeUintegerAccessor(&RdmaSwitch::m_kmax),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("EcnPmax",
                          "Marking probability reached at EcnKmax (PMAX; 0.2 for 100 Gbps)",
                          DoubleValue(0.2),
                          MakeDoubleAccessor(&RdmaSwitch::m_pmax),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("EcnSharedStream",
                          "Reference quirk ecn-shared-stream (spec §5.5): AssignStreams gives "
                          "the ECN-marking variable ns-3's user stream 0 at every switch, as the "
                          "reference's MMU does, so every switch draws the same sequence. "
                          "false = a stream of its own per switch",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaSwitch::m_ecnSharedStream),
                          MakeBooleanChecker())
            .AddAttribute("WithdrawFailedPorts",
                          "Withdraw a port whose link is down from the candidate lists "
                          "(WithdrawDelay after the failure; restored the same delay after "
                          "repair). Off: routing does not react to link faults",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaSwitch::m_withdrawFailed),
                          MakeBooleanChecker())
            .AddAttribute("WithdrawDelay",
                          "Delay between a link state change and the routing reaction",
                          TimeValue(MicroSeconds(10)),
                          MakeTimeAccessor(&RdmaSwitch::m_withdrawDelay),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("PayloadSize",
                          "Payload bytes per data packet: the load balancer sees PSN = byte "
                          "offset / PayloadSize (must equal the NICs' PayloadSize)",
                          UintegerValue(1000),
                          MakeUintegerAccessor(&RdmaSwitch::m_payloadBytes),
                          MakeUintegerChecker<uint32_t>(1, 9000))
            .AddAttribute("PathIndexRouting",
                          "Deterministic path-index routing: with n equal-cost candidates take "
                          "candidate (entropy / PathIndexDivisor) mod n instead of asking the "
                          "load balancer, so an entropy names a path (DESIGN.md decision 4; "
                          "the upper tiers of a 3-tier Themis fabric)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaSwitch::m_pathIndexRouting),
                          MakeBooleanChecker())
            .AddAttribute("PathIndexDivisor",
                          "Divisor of the entropy under PathIndexRouting (1 at the first tier "
                          "that reads the entropy; the product of the fan-outs of the tiers "
                          "below it above that)",
                          UintegerValue(1),
                          MakeUintegerAccessor(&RdmaSwitch::m_pathIndexDivisor),
                          MakeUintegerChecker<uint32_t>(1))
            .AddTraceSource("NackBlocked",
                            "The load balancer blocked a NACK from a host (Themis-D): the NACK, "
                            "the host port",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_nackBlockedTrace),
                            "ns3::RdmaSwitch::NackBlockedTracedCallback")
            .AddTraceSource("NackCompensation",
                            "The switch sent a NACK on a receiver's behalf (Themis NACK "
                            "compensation): sender, receiver, queue pair, ePSN",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_compensationTrace),
                            "ns3::RdmaSwitch::NackCompensationTracedCallback")
            .AddTraceSource("Drop",
                            "A packet was dropped (no route, or refused by the MMU)",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_dropTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("BufferDrop",
                            "The MMU refused a packet: packet, ingress port, egress port, queue",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_bufferDropTrace),
                            "ns3::RdmaSwitch::BufferDropTracedCallback")
            .AddTraceSource("EcnMark",
                            "A data packet was ECN-marked at dequeue: egress port, queue, egress "
                            "shared bytes of the queue",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_ecnMarkTrace),
                            "ns3::RdmaSwitch::EcnMarkTracedCallback");
    return tid;
}

RdmaSwitch::RdmaSwitch()
    : m_rng(CreateObject<UniformRandomVariable>()),
      m_mmu(CreateObject<SwitchMmu>()),
      m_ecnRng(CreateObject<UniformRandomVariable>())
{
}

RdmaSwitch::~RdmaSwitch() = default;

void
RdmaSwitch::DoDispose()
{
    m_ports.clear();
    m_portIndex.clear();
    m_chooser.reset();
    m_lbConfig = nullptr;
    m_mmu = nullptr;
    Object::DoDispose();
}

uint32_t
RdmaSwitch::AddPort(Ptr<RdmaNetDevice> dev)
{
    uint32_t i = static_cast<uint32_t>(m_ports.size());
    m_ports.push_back(dev);
    m_portIndex[dev] = i;
    m_drops.push_back(0);
    m_ecnMarks.push_back(0);
    m_remotePaused.push_back({});
    m_withdrawn.push_back(false);
    m_hostPort.push_back(false);
    dev->SetReceiveHandler(MakeCallback(&RdmaSwitch::Receive, this));
    dev->SetDequeueHandler(MakeCallback(&RdmaSwitch::Dequeued, this));
    return i;
}

Ptr<RdmaNetDevice>
RdmaSwitch::GetPort(uint32_t i) const
{
    return m_ports.at(i);
}

uint32_t
RdmaSwitch::GetNPorts() const
{
    return static_cast<uint32_t>(m_ports.size());
}

void
RdmaSwitch::AddRoute(uint32_t dip, uint32_t port)
{
    auto& v = m_routes[dip];
    if (std::find(v.begin(), v.end(), port) == v.end())
    {
        v.insert(std::upper_bound(v.begin(), v.end(), port), port);
    }
}

const std::vector<uint32_t>&
RdmaSwitch::GetRoutes(uint32_t dip) const
{
    static const std::vector<uint32_t> none;
    auto it = m_routes.find(dip);
    return it == m_routes.end() ? none : it->second;
}

void
RdmaSwitch::SetLoadBalancer(Ptr<LbConfig> cfg, uint32_t switchId)
{
    m_lbConfig = cfg;
    m_switchId = switchId;
    InstallChooser(DrawLbSeed(m_rng));
}

void
RdmaSwitch::InstallChooser(uint64_t seed)
{
    m_chooser = m_lbConfig->CreateSwitchChooser(m_switchId, seed);
    m_torHooks = m_chooser->WantsTorHooks();
    for (uint32_t i = 0; i < m_ports.size(); ++i)
    {
        Ptr<RdmaChannel> ch = m_ports[i]->GetRdmaChannel();
        Ptr<RdmaNetDevice> peer = ch ? ch->GetPeer(m_ports[i]) : nullptr;
        m_hostPort[i] = peer && peer->GetNode() && peer->GetNode()->GetObject<RdmaNic>();
        if (m_hostPort[i])
        {
            m_chooser->AddHostPort(i, m_ports[i]->GetDataRate().GetBitRate(), ch->GetDelay());
        }
    }
}

bool
RdmaSwitch::IsHostPort(uint32_t port) const
{
    return m_hostPort.at(port);
}

uint64_t
RdmaSwitch::GetLbMemoryBytes() const
{
    return m_chooser ? m_chooser->GetMemoryBytes() : 0;
}

LbThemisCounters
RdmaSwitch::GetThemisCounters() const
{
    return m_chooser ? m_chooser->GetThemisCounters() : LbThemisCounters{};
}

int64_t
RdmaSwitch::AssignStreams(int64_t stream)
{
    m_rng->SetStream(stream);
    // Quirk ecn-shared-stream: the reference's MMU draws from user stream 0 at every switch
    // (spec §5.5), so all switches see the same sequence of numbers, each advancing its own.
    m_ecnRng->SetStream(m_ecnSharedStream ? 0 : stream + 1);
    if (m_lbConfig)
    {
        // Re-seed the chooser from the newly assigned stream.
        InstallChooser(DrawLbSeed(m_rng));
    }
    return 2;
}

Ptr<SwitchMmu>
RdmaSwitch::GetMmu() const
{
    return m_mmu;
}

void
RdmaSwitch::ConfigureMmu()
{
    std::vector<uint64_t> headroom;
    for (const auto& dev : m_ports)
    {
        Ptr<RdmaChannel> ch = dev->GetRdmaChannel();
        Time delay = ch ? ch->GetDelay() : Time(0);
        headroom.push_back(SwitchMmu::ComputeHeadroom(dev->GetDataRate().GetBitRate(), delay));
    }
    m_mmu->Configure(headroom);
}

uint64_t
RdmaSwitch::GetPortDrops(uint32_t port) const
{
    return m_drops.at(port);
}

uint64_t
RdmaSwitch::GetPortEcnMarks(uint32_t port) const
{
    return m_ecnMarks.at(port);
}

uint64_t
RdmaSwitch::GetTotalDrops() const
{
    uint64_t s = 0;
    for (uint64_t d : m_drops)
    {
        s += d;
    }
    return s;
}

uint64_t
RdmaSwitch::GetTotalEcnMarks() const
{
    uint64_t s = 0;
    for (uint64_t m : m_ecnMarks)
    {
        s += m;
    }
    return s;
}

uint64_t
RdmaSwitch::GetTotalPausesSent() const
{
    uint64_t s = 0;
    for (const auto& dev : m_ports)
    {
        s += dev->GetPfcPausesSent();
    }
    return s;
}

bool
RdmaSwitch::IsPortWithdrawn(uint32_t port) const
{
    return m_withdrawn.at(port);
}

void
RdmaSwitch::NotifyLinkState(uint32_t port, bool down)
{
    NS_LOG_INFO("switch " << m_switchId << ": link of port " << port << (down ? " down" : " up"));
    if (m_withdrawFailed)
    {
        Simulator::Schedule(m_withdrawDelay, &RdmaSwitch::SetPortWithdrawn, this, port, down);
    }
    Simulator::Schedule(m_withdrawDelay, &RdmaSwitch::ApplyLbLinkState, this, port, false, down);
}

void
RdmaSwitch::NotifyRemoteLinkState(bool down)
{
    NS_LOG_INFO("switch " << m_switchId << ": a remote link went " << (down ? "down" : "up"));
    Simulator::Schedule(m_withdrawDelay, &RdmaSwitch::ApplyLbLinkState, this, 0, true, down);
}

void
RdmaSwitch::ApplyLbLinkState(uint32_t port, bool remote, bool down)
{
    if (m_chooser)
    {
        m_chooser->OnLinkState(port, remote, down);
    }
}

void
RdmaSwitch::SetPortWithdrawn(uint32_t port, bool withdrawn)
{
    if (m_withdrawn.at(port) == withdrawn)
    {
        return;
    }
    NS_LOG_INFO("switch " << m_switchId << ": port " << port
                          << (withdrawn ? " withdrawn from" : " restored to")
                          << " the candidate lists");
    m_withdrawn[port] = withdrawn;
    m_nWithdrawn += withdrawn ? 1 : static_cast<uint32_t>(-1);
}

void
RdmaSwitch::CheckPfc(uint32_t in, uint32_t arrivingCls)
{
    for (uint32_t k = 1; k < RdmaNetDevice::N_QUEUES; ++k)
    {
        if (m_mmu->ShouldPause(in, k, arrivingCls))
        {
            NS_LOG_LOGIC("switch " << m_switchId << ": pause port " << in << " class " << k);
            m_ports[in]->SendPfc(k,
                                 static_cast<uint32_t>(m_pauseTime.GetMicroSeconds()),
                                 static_cast<uint32_t>(m_mmu->GetIngressBytes(in, k)));
            m_mmu->SetPaused(in, k, m_pauseTime);
            m_remotePaused[in][k] = true;
        }
    }
    for (uint32_t k = 1; k < RdmaNetDevice::N_QUEUES; ++k)
    {
        CheckResume(in, k);
    }
}

void
RdmaSwitch::CheckResume(uint32_t in, uint32_t k)
{
    if (!m_remotePaused[in][k])
    {
        return;
    }
    if (!m_mmu->IsPaused(in, k))
    {
        m_remotePaused[in][k] = false; // the pause expired by itself
        return;
    }
    if (m_mmu->ShouldResume(in, k))
    {
        NS_LOG_LOGIC("switch " << m_switchId << ": resume port " << in << " class " << k);
        m_ports[in]->SendPfc(k, 0, static_cast<uint32_t>(m_mmu->GetIngressBytes(in, k)));
        m_mmu->ClearPaused(in, k);
        m_remotePaused[in][k] = false;
    }
}

void
RdmaSwitch::Dequeued(Ptr<RdmaNetDevice> dev, Ptr<Packet> p, uint32_t q)
{
    if (q == 0)
    {
        return; // control traffic bypasses the MMU
    }
    RdmaIngressTag tag;
    if (!p->RemovePacketTag(tag))
    {
        return; // not admitted by this switch's MMU
    }
    const uint32_t out = m_portIndex.at(dev);
    const uint32_t size = p->GetSize();
    m_mmu->RemoveFromIngressAdmission(tag.port, q, size);
    m_mmu->RemoveFromEgressAdmission(out, q, size);
    if (m_torHooks && m_hostPort[out])
    {
        RdmaHeader h;
        p->PeekHeader(h);
        if (h.type == RdmaHeader::DATA && (h.flags & RdmaHeader::FLAG_PROBE) == 0)
        {
            LbCompensation c;
            if (m_chooser->OnDataToHost(Simulator::Now(), MakeInfo(h, tag.port, size), out, &c))
            {
                // Sent as its own event: this runs inside the port's transmit path.
                Simulator::ScheduleNow(&RdmaSwitch::SendCompensation, this, out, c, h);
            }
        }
    }
    if (m_ecnEnabled)
    {
        const uint64_t shared = m_mmu->GetEgressSharedBytes(out, q);
        bool mark = false;
        if (shared > m_kmax)
        {
            mark = true;
        }
        else if (shared > m_kmin && m_kmin != m_kmax)
        {
            const double prob = static_cast<double>(shared - m_kmin) /
                                static_cast<double>(m_kmax - m_kmin) * m_pmax;
            mark = m_ecnRng->GetValue() < prob;
        }
        if (mark)
        {
            RdmaHeader h;
            p->RemoveHeader(h);
            if (h.type == RdmaHeader::DATA)
            {
                h.ecn = 3;
                ++m_ecnMarks[out];
                m_ecnMarkTrace(out, q, shared);
            }
            p->AddHeader(h);
        }
    }
    if (m_pfcEnabled)
    {
        CheckResume(tag.port, q);
    }
}

LbPacketInfo
RdmaSwitch::MakeInfo(const RdmaHeader& h, uint32_t in, uint32_t size) const
{
    LbPacketInfo info;
    info.kind = h.type == RdmaHeader::DATA  ? LbPacketKind::DATA
                : h.type == RdmaHeader::ACK ? LbPacketKind::ACK
                                            : LbPacketKind::NACK;
    info.sip = h.sip;
    info.dip = h.dip;
    info.sport = h.sport;
    info.dport = h.dport;
    info.psn = h.seq / m_payloadBytes;
    info.ingressPort = in;
    info.sizeBytes = size;
    return info;
}

void
RdmaSwitch::SendCompensation(uint32_t hostPort, LbCompensation c, RdmaHeader data)
{
    // The NACK the receiver NIC would have sent (RdmaNic::SendFeedback under nic-sr).
    RdmaHeader a;
    a.type = RdmaHeader::NACK;
    a.sip = c.receiver;
    a.dip = c.sender;
    a.sport = data.dport; // the reverse direction of the data packet
    a.dport = data.sport; // echo the entropy
    a.qpn = data.qpn; // the NACK is about the flow of the data packet that triggered it
    a.pg = data.pg;
    a.tsNs = data.tsNs;
    a.echoSeq = data.seq;
    a.seq = c.epsn * m_payloadBytes;
    Ptr<Packet> nack = Create<Packet>();
    nack->AddHeader(a);
    NS_LOG_LOGIC("switch " << m_switchId << ": compensation NACK to " << c.sender << " qpn "
                           << c.qpn << " ePSN " << c.epsn);
    m_compensationTrace(c.sender, c.receiver, c.qpn, c.epsn);
    Route(nack, hostPort, false);
}

void
RdmaSwitch::Receive(Ptr<RdmaNetDevice> dev, Ptr<Packet> p)
{
    Route(p, m_portIndex.at(dev), true);
}

void
RdmaSwitch::Route(Ptr<Packet> p, uint32_t in, bool filterNacks)
{
    RdmaHeader h;
    p->PeekHeader(h);
    const std::vector<uint32_t>* candidates = &GetRoutes(h.dip);
    if (m_nWithdrawn != 0)
    {
        m_liveRoutes.clear();
        for (uint32_t port : *candidates)
        {
            if (!m_withdrawn[port])
            {
                m_liveRoutes.push_back(port);
            }
        }
        candidates = &m_liveRoutes;
    }
    const std::vector<uint32_t>& routes = *candidates;
    if (routes.empty())
    {
        NS_LOG_WARN("switch " << m_switchId << ": no route to " << h.dip << ", dropped");
        m_dropTrace(p);
        return;
    }
    if (filterNacks && m_torHooks && h.type == RdmaHeader::NACK && m_hostPort[in])
    {
        NS_ABORT_MSG_IF(!m_chooser, "RdmaSwitch: no load balancer installed");
        if (m_chooser->OnNackFromHost(Simulator::Now(),
                                      MakeInfo(h, in, p->GetSize()),
                                      static_cast<uint32_t>(routes.size())))
        {
            NS_LOG_LOGIC("switch " << m_switchId << ": NACK from port " << in << " blocked");
            m_nackBlockedTrace(p, in);
            return;
        }
    }
    uint32_t out = routes.front();
    if (routes.size() > 1)
    {
        if (m_pathIndexRouting)
        {
            out = routes[(h.sport / m_pathIndexDivisor) % routes.size()];
        }
        else
        {
            NS_ABORT_MSG_IF(!m_chooser, "RdmaSwitch: no load balancer installed");
            m_candidates.clear();
            for (uint32_t port : routes)
            {
                Ptr<RdmaNetDevice> d = m_ports[port];
                m_candidates.push_back({port, d->GetTotalQueueBytes(), d->GetTxBytes()});
            }
            LbEgressChoice c =
                m_chooser->Decide(Simulator::Now(), MakeInfo(h, in, p->GetSize()), m_candidates);
            out = routes[c.index];
            if (c.rewriteEntropy && h.type == RdmaHeader::DATA)
            {
                p->RemoveHeader(h);
                h.sport = c.entropy;
                p->AddHeader(h);
            }
        }
    }
    uint32_t queue = (h.type == RdmaHeader::DATA) ? h.pg : 0;
    if (queue != 0)
    {
        if (!m_mmu->IsConfigured())
        {
            ConfigureMmu();
        }
        const uint32_t size = p->GetSize();
        if (!m_mmu->CheckEgressAdmission(out, queue, size) ||
            !m_mmu->CheckIngressAdmission(in, queue, size))
        {
            NS_LOG_LOGIC("switch " << m_switchId << ": MMU drop, in " << in << " out " << out
                                   << " queue " << queue);
            ++m_drops[out];
            m_bufferDropTrace(p, in, out, queue);
            m_dropTrace(p);
            return;
        }
        m_mmu->UpdateIngressAdmission(in, queue, size);
        m_mmu->UpdateEgressAdmission(out, queue, size);
        RdmaIngressTag tag;
        tag.port = in;
        p->AddPacketTag(tag);
        if (m_pfcEnabled)
        {
            CheckPfc(in, queue);
        }
    }
    m_forwardTrace(p, in, out);
    m_ports[out]->Enqueue(p, queue);
}

} // namespace ns3
