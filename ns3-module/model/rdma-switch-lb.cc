/*
 * rdma-lb: RdmaSwitch's load-balancer role (see rdma-switch.h and ns3-module/doc/rdma-lb.rst,
 * "Switch-side load balancers"): installing the SwitchLb agent (ports, hosts' ToRs, paths between
 * ToRs), the packet view it reads, serving it (timers, held-queue releases, control packets)
 * and its counters. The packet path that asks it for a verdict (Route, Dequeued) and acts on
 * it is rdma-switch.cc's.
 */
#include "rdma-switch.h"

#include "rdma-channel.h"
#include "rdma-header.h"
#include "rdma-net-device.h"
#include "rdma-node-role.h"

#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaSwitchLb");

void
RdmaSwitch::SetLoadBalancer(Ptr<LbConfig> cfg, uint32_t switchId)
{
    m_lbConfig = cfg;
    m_switchId = switchId;
    InstallAgent(DrawLbSeed(m_rng));
}

Ptr<RdmaSwitch>
RdmaSwitch::FindTor(uint32_t dip) const
{
    Ptr<const RdmaSwitch> at = this;
    for (uint32_t hop = 0; hop < 8; ++hop)
    {
        const std::vector<uint32_t>& routes = at->GetRoutes(dip);
        if (routes.empty())
        {
            return nullptr;
        }
        Ptr<RdmaNetDevice> dev = at->m_ports[routes.front()];
        Ptr<RdmaChannel> ch = dev->GetRdmaChannel();
        Ptr<RdmaNetDevice> peer = ch ? ch->GetPeer(dev) : nullptr;
        if (!peer || !peer->GetNode())
        {
            return nullptr;
        }
        if (RdmaNodeIsHost(peer->GetNode()))
        {
            return const_cast<RdmaSwitch*>(PeekPointer(at));
        }
        at = peer->GetNode()->GetObject<RdmaSwitch>();
        if (!at)
        {
            return nullptr;
        }
    }
    return nullptr;
}

void
RdmaSwitch::FindPaths(Ptr<const RdmaSwitch> at,
                      Ptr<const RdmaSwitch> dst,
                      uint32_t dip,
                      std::vector<uint32_t>& ports,
                      std::vector<std::vector<uint32_t>>& out) const
{
    if (ports.size() >= 4)
    {
        return; // the reference names paths of at most 4 switch hops
    }
    for (uint32_t port : at->GetRoutes(dip))
    {
        Ptr<RdmaNetDevice> dev = at->m_ports[port];
        Ptr<RdmaChannel> ch = dev->GetRdmaChannel();
        Ptr<RdmaNetDevice> peer = ch ? ch->GetPeer(dev) : nullptr;
        Ptr<RdmaSwitch> next = peer && peer->GetNode() ? peer->GetNode()->GetObject<RdmaSwitch>()
                                                       : nullptr;
        if (!next)
        {
            continue;
        }
        ports.push_back(port);
        if (next == dst)
        {
            out.push_back(ports);
        }
        else
        {
            FindPaths(next, dst, dip, ports, out);
        }
        ports.pop_back();
    }
}

void
RdmaSwitch::InstallAgent(uint64_t seed)
{
    Simulator::Cancel(m_lbTimer);
    m_lbTimerAt = Time::Max();
    m_agent = m_lbConfig->CreateSwitchAgent(m_switchId, seed);
    bool tor = false;
    for (uint32_t i = 0; i < m_ports.size(); ++i)
    {
        Ptr<RdmaChannel> ch = m_ports[i]->GetRdmaChannel();
        Ptr<RdmaNetDevice> peer = ch ? ch->GetPeer(m_ports[i]) : nullptr;
        m_hostPort[i] = peer && RdmaNodeIsHost(peer->GetNode());
        tor = tor || m_hostPort[i];
        m_agent->AddPort(i,
                         m_ports[i]->GetDataRate().GetBitRate(),
                         ch ? ch->GetDelay() : Time(0),
                         m_hostPort[i]);
    }
    m_agentAll = m_agent->SeesEveryPacket();
    m_agentEgress = m_agent->SeesEgress();
    m_agentLoad = m_agent->ReadsPortLoad();
    if (!m_agent->UsesFabricMap())
    {
        ServeAgent(true);
        return;
    }
    // Every host's ToR, and (at a ToR) every path to every other ToR, in ascending host order.
    std::map<uint32_t, uint32_t> firstHostOfTor; // ToR id -> its lowest host address
    std::map<uint32_t, Ptr<RdmaSwitch>> tors;
    ForEachRouteDestination([&](uint32_t dip) {
        Ptr<RdmaSwitch> t = FindTor(dip);
        if (!t)
        {
            return;
        }
        m_agent->AddHost(dip, t->GetSwitchId());
        firstHostOfTor.emplace(t->GetSwitchId(), dip);
        tors.emplace(t->GetSwitchId(), t);
    });
    if (tor)
    {
        for (const auto& [id, dip] : firstHostOfTor)
        {
            if (tors[id] == this)
            {
                continue;
            }
            std::vector<uint32_t> ports;
            std::vector<std::vector<uint32_t>> paths;
            FindPaths(this, tors[id], dip, ports, paths);
            for (const auto& path : paths)
            {
                uint32_t pathId = 0;
                bool fits = true;
                for (size_t k = 0; k < path.size(); ++k)
                {
                    fits = fits && path[k] < 255;
                    pathId |= (path[k] + 1) << (8 * k);
                }
                if (fits)
                {
                    m_agent->AddPath(id, pathId, static_cast<uint8_t>(path.size()));
                }
            }
        }
    }
    ServeAgent(true);
}

bool
RdmaSwitch::IsHostPort(uint32_t port) const
{
    return m_hostPort.at(port);
}

uint64_t
RdmaSwitch::GetLbMemoryBytes() const
{
    return m_agent ? m_agent->GetMemoryBytes() : 0;
}

std::vector<std::pair<std::string, uint64_t>>
RdmaSwitch::GetLbCounters() const
{
    return m_agent ? m_agent->GetCounters() : std::vector<std::pair<std::string, uint64_t>>{};
}

uint64_t
RdmaSwitch::GetHeldPackets() const
{
    return m_heldPackets;
}

void
RdmaSwitch::ApplyLbLinkState(uint32_t port, bool remote, bool down)
{
    if (m_agent)
    {
        m_agent->OnLinkState(port, remote, down);
        ServeAgent(false);
    }
}

LbPacketInfo
RdmaSwitch::MakeInfo(const RdmaHeader& h, uint32_t in, uint32_t size, bool local) const
{
    LbPacketInfo info;
    switch (h.type)
    {
    case RdmaHeader::DATA:
        info.kind = LbPacketKind::DATA;
        break;
    case RdmaHeader::ACK:
        info.kind = LbPacketKind::ACK;
        break;
    default:
        info.kind = (h.flags & RdmaHeader::FLAG_LB_CONTROL) ? LbPacketKind::LB_CONTROL
                                                            : LbPacketKind::NACK;
        break;
    }
    info.sip = h.sip;
    info.dip = h.dip;
    info.sport = h.sport;
    info.dport = h.dport;
    info.psn = h.seq / m_payloadBytes;
    info.ingressPort = in;
    info.sizeBytes = size;
    info.ecnCe = h.ecn == 3;
    info.pg = h.pg;
    info.qpn = h.qpn;
    info.seqBytes = h.seq;
    info.tsNs = h.tsNs;
    info.local = local;
    return info;
}

void
RdmaSwitch::ServeAgent(bool deferTransmit)
{
    if (!m_agent)
    {
        return;
    }
    const Time now = Simulator::Now();
    uint64_t queue = 0;
    while (m_agent->PollRelease(now, &queue))
    {
        ReleaseHeld(queue);
    }
    // A control packet sent inline is routed through the agent too; a call made while it is
    // routed leaves the rest of the queue to this loop, so control packets leave in the order
    // the agent made them (a NOTIFY before the REPLY made with it, as the reference sends them).
    LbControlPacket c;
    while (!m_sendingControl && m_agent->PollTransmit(now, &c))
    {
        if (deferTransmit)
        {
            Simulator::ScheduleNow(&RdmaSwitch::SendControl, this, c);
        }
        else
        {
            m_sendingControl = true;
            SendControl(c);
            m_sendingControl = false;
        }
    }
    const Time at = m_agent->PollAt();
    if (at < m_lbTimerAt)
    {
        Simulator::Cancel(m_lbTimer);
        m_lbTimerAt = at;
        m_lbTimer = Simulator::Schedule(std::max(at, now) - now, &RdmaSwitch::LbTimerFired, this);
    }
}

void
RdmaSwitch::LbTimerFired()
{
    m_lbTimerAt = Time::Max();
    m_agent->OnTimer(Simulator::Now());
    ServeAgent(false);
}

void
RdmaSwitch::ReleaseHeld(uint64_t queue)
{
    auto it = m_held.find(queue);
    if (it == m_held.end())
    {
        return;
    }
    std::deque<std::pair<RdmaFramePtr, uint32_t>> packets = std::move(it->second);
    m_held.erase(it);
    NS_LOG_LOGIC("switch " << m_switchId << ": release " << packets.size() << " held packets");
    m_heldPackets -= packets.size();
    for (auto& [p, in] : packets)
    {
        Route(std::move(p), in, false, false);
    }
}

void
RdmaSwitch::SendControl(LbControlPacket c)
{
    RdmaHeader a;
    a.type = RdmaHeader::NACK;
    a.sip = c.sip;
    a.dip = c.dip;
    a.sport = c.sport;
    a.dport = c.dport;
    a.qpn = c.qpn;
    a.pg = c.pg;
    uint32_t payload = 0;
    if (c.kind == LbControlKind::NACK)
    {
        // The NACK the receiver NIC would have sent (RdmaNic::SendFeedback under nic-sr).
        a.tsNs = c.tsNs;
        a.echoSeq = c.echoSeqBytes;
        a.seq = c.epsn * m_payloadBytes;
        NS_LOG_LOGIC("switch " << m_switchId << ": compensation NACK to " << c.dip << " qpn "
                               << c.sport << " ePSN " << c.epsn);
        m_compensationTrace(c.dip, c.sip, c.sport, c.epsn);
    }
    else
    {
        // The reference's 0xFD control format: sequence 0, padded to the scheme's size.
        a.flags = RdmaHeader::FLAG_LB_CONTROL;
        const uint32_t header = RdmaHeader::ACK_BYTES;
        payload = c.sizeBytes > header ? c.sizeBytes - header : 0;
    }
    RdmaFramePtr f = RdmaFrame::Make(a, payload);
    if (c.tag.present)
    {
        f->lbTag = c.tag;
    }
    Route(std::move(f), c.fromPort, true);
}

} // namespace ns3
