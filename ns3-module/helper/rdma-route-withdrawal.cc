/*
 * rdma-lb: the fabric's routing after link faults (rdma-route-withdrawal.h).
 */
#include "rdma-route-withdrawal.h"

#include "ns3/log.h"
#include "ns3/rdma-channel.h"
#include "ns3/rdma-header.h"
#include "ns3/rdma-switch.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaRouteWithdrawal");

RdmaRouteWithdrawal::RdmaRouteWithdrawal(NodeContainer nodes,
                                         std::vector<bool> isSwitch,
                                         std::vector<uint32_t> hosts,
                                         std::vector<Link> links)
    : m_nodes(nodes),
      m_isSwitch(std::move(isSwitch)),
      m_hosts(std::move(hosts)),
      m_links(std::move(links)),
      m_ports(m_nodes.GetN())
{
    for (size_t i = 0; i < m_links.size(); ++i)
    {
        const Link& l = m_links[i];
        for (auto [node, port, other] : {std::make_tuple(l.a, l.portA, l.b),
                                         std::make_tuple(l.b, l.portB, l.a)})
        {
            auto& ports = m_ports[node];
            if (ports.size() <= port)
            {
                ports.resize(port + 1, {SIZE_MAX, 0});
            }
            ports[port] = {i, other};
        }
    }
}

size_t
RdmaRouteWithdrawal::GetNLinks() const
{
    return m_links.size();
}

std::vector<bool>
RdmaRouteWithdrawal::Reachable(uint32_t h) const
{
    // Monotone fixpoint: a switch reaches h if one of its next hops towards h is live and
    // reaches h. The next hops are one step closer to h, so diameter-many passes suffice.
    const uint32_t dip = RdmaHostAddress(h);
    const uint32_t n = m_nodes.GetN();
    std::vector<bool> reach(n, false);
    reach[h] = true;
    for (bool changed = true; changed;)
    {
        changed = false;
        for (uint32_t s = 0; s < n; ++s)
        {
            if (!m_isSwitch[s] || reach[s])
            {
                continue;
            }
            for (uint32_t port : m_nodes.Get(s)->GetObject<RdmaSwitch>()->GetRoutes(dip))
            {
                const auto& [link, next] = m_ports[s].at(port);
                if (!m_links[link].channel->IsDown() && reach[next])
                {
                    reach[s] = true;
                    changed = true;
                    break;
                }
            }
        }
    }
    return reach;
}

std::vector<RdmaRouteWithdrawal::Route>
RdmaRouteWithdrawal::DeadRoutes(uint32_t s) const
{
    return AllDeadRoutes().at(s);
}

std::vector<std::vector<RdmaRouteWithdrawal::Route>>
RdmaRouteWithdrawal::AllDeadRoutes() const
{
    std::vector<std::vector<Route>> dead(m_nodes.GetN());
    for (uint32_t h : m_hosts)
    {
        const uint32_t dip = RdmaHostAddress(h);
        const std::vector<bool> reach = Reachable(h);
        for (uint32_t s = 0; s < m_nodes.GetN(); ++s)
        {
            if (!m_isSwitch[s])
            {
                continue;
            }
            for (uint32_t port : m_nodes.Get(s)->GetObject<RdmaSwitch>()->GetRoutes(dip))
            {
                const auto& [link, next] = m_ports[s].at(port);
                if (m_links[link].channel->IsDown() || !reach[next])
                {
                    dead[s].emplace_back(dip, port);
                }
            }
        }
    }
    return dead;
}

void
RdmaRouteWithdrawal::Update() const
{
    const std::vector<std::vector<Route>> dead = AllDeadRoutes();
    for (uint32_t s = 0; s < m_nodes.GetN(); ++s)
    {
        if (m_isSwitch[s])
        {
            NS_LOG_INFO("switch " << s << ": " << dead[s].size() << " dead routes");
            m_nodes.Get(s)->GetObject<RdmaSwitch>()->NotifyDeadRoutes(dead[s]);
        }
    }
}

} // namespace ns3
