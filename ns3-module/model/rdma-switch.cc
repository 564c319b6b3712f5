/*
 * rdma-lb: RdmaSwitch (spec/rdma-model.md §5.1-5.2).
 */
#include "rdma-switch.h"

#include "rdma-header.h"
#include "rdma-net-device.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaSwitch");
NS_OBJECT_ENSURE_REGISTERED(RdmaSwitch);

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
            .AddTraceSource("Drop",
                            "A packet was dropped (no route)",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_dropTrace),
                            "ns3::Packet::TracedCallback");
    return tid;
}

RdmaSwitch::RdmaSwitch()
    : m_rng(CreateObject<UniformRandomVariable>())
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
    Object::DoDispose();
}

uint32_t
RdmaSwitch::AddPort(Ptr<RdmaNetDevice> dev)
{
    uint32_t i = static_cast<uint32_t>(m_ports.size());
    m_ports.push_back(dev);
    m_portIndex[dev] = i;
    dev->SetReceiveHandler(MakeCallback(&RdmaSwitch::Receive, this));
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
    m_chooser = cfg->CreateSwitchChooser(switchId, DrawLbSeed(m_rng));
}

int64_t
RdmaSwitch::AssignStreams(int64_t stream)
{
    m_rng->SetStream(stream);
    if (m_lbConfig)
    {
        // Re-seed the chooser from the newly assigned stream.
        m_chooser = m_lbConfig->CreateSwitchChooser(m_switchId, DrawLbSeed(m_rng));
    }
    return 1;
}

void
RdmaSwitch::Receive(Ptr<RdmaNetDevice> dev, Ptr<Packet> p)
{
    RdmaHeader h;
    p->PeekHeader(h);
    uint32_t in = m_portIndex.at(dev);
    const std::vector<uint32_t>& routes = GetRoutes(h.dip);
    if (routes.empty())
    {
        NS_LOG_WARN("switch " << m_switchId << ": no route to " << h.dip << ", dropped");
        m_dropTrace(p);
        return;
    }
    uint32_t out = routes.front();
    if (routes.size() > 1)
    {
        NS_ABORT_MSG_IF(!m_chooser, "RdmaSwitch: no load balancer installed");
        LbPacketInfo info;
        info.kind = h.type == RdmaHeader::DATA  ? LbPacketKind::DATA
                    : h.type == RdmaHeader::ACK ? LbPacketKind::ACK
                                                : LbPacketKind::NACK;
        info.sip = h.sip;
        info.dip = h.dip;
        info.sport = h.sport;
        info.dport = h.dport;
        info.psn = h.seq;
        info.ingressPort = in;
        info.sizeBytes = p->GetSize();
        m_candidates.clear();
        for (uint32_t port : routes)
        {
            Ptr<RdmaNetDevice> d = m_ports[port];
            m_candidates.push_back({port, d->GetTotalQueueBytes(), d->GetTxBytes()});
        }
        out = routes[m_chooser->Choose(Simulator::Now(), info, m_candidates)];
    }
    m_forwardTrace(p, in, out);
    uint32_t queue = (h.type == RdmaHeader::DATA) ? h.pg : 0;
    m_ports[out]->Enqueue(p, queue);
}

} // namespace ns3
