/*
 * rdma-lb: RdmaFabricHelper.
 */
#include "rdma-fabric-helper.h"

#include "rdma-route-withdrawal.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/rdma-channel.h"
#include "ns3/rdma-header.h"
#include "ns3/rdma-net-device.h"
#include "ns3/rdma-nic.h"
#include "ns3/rdma-switch.h"
#include "ns3/simulator.h"

#ifdef NS3_MPI
#include "ns3/mpi-interface.h"
#include "ns3/rdma-remote.h"
#endif

#include <algorithm>
#include <functional>
#include <deque>
#include <limits>
#include <map>
#include <memory>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaFabricHelper");

RdmaFabricHelper::RdmaFabricHelper() = default;

void
RdmaFabricHelper::SetLoadBalancer(const std::string& algorithm, const std::string& params)
{
    m_lb = LbConfig::ParseOrAbort(algorithm, params);
}

void
RdmaFabricHelper::SetLoadBalancer(Ptr<const LbConfig> cfg)
{
    NS_ABORT_MSG_IF(!cfg, "RdmaFabricHelper: SetLoadBalancer without a configuration");
    m_lb = cfg->Copy();
}

const std::vector<std::string>&
RdmaFabricHelper::GetNotes() const
{
    return m_notes;
}

void
RdmaFabricHelper::WireWhackAMole(
    const std::vector<std::vector<std::pair<uint32_t, uint32_t>>>& adj)
{
    if (m_lb->GetPathIndexRouting() == LbPathIndexRouting::OFF)
    {
        m_notes.push_back("whack-a-mole: routing = \"ecmp\": path i is ECMP hash input i, not "
                          "equal-cost path i");
        return;
    }
    // The multipath stage: a switch with more than one next hop towards some host. Path-index
    // routing names paths exactly when that happens only at ToRs (switches with hosts) and
    // every switch beyond has one next hop; then path i leaves the ToR on candidate i mod n.
    uint32_t paths = 1;
    bool singleStage = true;
    for (uint32_t s = 0; s < m_nodes.GetN(); ++s)
    {
        if (!m_isSwitch[s])
        {
            continue;
        }
        bool tor = false;
        for (const auto& [nb, port] : adj[s])
        {
            (void)port;
            tor = tor || !m_isSwitch[nb];
        }
        Ptr<RdmaSwitch> sw = m_nodes.Get(s)->GetObject<RdmaSwitch>();
        for (uint32_t h : m_hosts)
        {
            const uint32_t r = static_cast<uint32_t>(sw->GetRoutes(RdmaHostAddress(h)).size());
            if (r > 1)
            {
                singleStage = singleStage && tor;
                paths = std::max(paths, r);
            }
        }
    }
    if (!singleStage || paths < 2)
    {
        m_notes.push_back("whack-a-mole: the fabric has " +
                          std::string(singleStage ? "no multipath stage"
                                                  : "more than one multipath stage") +
                          "; path-index routing left off, so path i is ECMP hash input i");
        return;
    }
    for (uint32_t s = 0; s < m_nodes.GetN(); ++s)
    {
        if (m_isSwitch[s])
        {
            m_nodes.Get(s)->GetObject<RdmaSwitch>()->SetAttribute("PathIndexRouting",
                                                                  BooleanValue(true));
        }
    }
    std::string note = "whack-a-mole: path-index routing on, profile path i = the ToR's "
                       "equal-cost uplink i";
    if (!m_lb->IsNumPathsGiven())
    {
        m_lb = m_lb->WithNumPaths(paths);
        note += "; num_paths = " + std::to_string(paths) + " (the equal-cost paths)";
    }
    m_notes.push_back(note + " (routing = \"ecmp\" in the parameters turns this off)");
}

Ptr<LbConfig>
RdmaFabricHelper::GetLoadBalancer() const
{
    return m_lb;
}

void
RdmaFabricHelper::CreateNodes(uint32_t n, const std::vector<uint32_t>& switchIds)
{
    CreateNodes(n, switchIds, {});
}

void
RdmaFabricHelper::CreateNodes(uint32_t n,
                              const std::vector<uint32_t>& switchIds,
                              const std::vector<uint32_t>& systemIds)
{
    NS_ABORT_MSG_IF(m_nodes.GetN() != 0, "RdmaFabricHelper: nodes already created");
    NS_ABORT_MSG_IF(!systemIds.empty() && systemIds.size() != n,
                    "RdmaFabricHelper: " << systemIds.size() << " system ids for " << n << " nodes");
    if (systemIds.empty())
    {
        m_nodes.Create(n);
    }
    else
    {
        for (uint32_t i = 0; i < n; ++i)
        {
            m_nodes.Create(1, systemIds[i]);
        }
    }
    m_isSwitch.assign(n, false);
    for (uint32_t s : switchIds)
    {
        NS_ABORT_MSG_IF(s >= n, "RdmaFabricHelper: switch id " << s << " >= node count " << n);
        m_isSwitch[s] = true;
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        if (m_isSwitch[i])
        {
            m_nodes.Get(i)->AggregateObject(CreateObject<RdmaSwitch>());
        }
        else
        {
            m_hosts.push_back(i);
            m_nodes.Get(i)->AggregateObject(CreateObject<RdmaNic>());
        }
    }
    m_nicNodes = m_hosts;
}

void
RdmaFabricHelper::SetEndpointSwitches(const std::vector<uint32_t>& ids)
{
    for (uint32_t s : ids)
    {
        NS_ABORT_MSG_IF(s >= m_nodes.GetN() || !m_isSwitch[s],
                        "RdmaFabricHelper: endpoint switch " << s << " is not a switch");
    }
    m_endpointSwitches = ids;
    m_nicNodes = m_hosts;
    m_nicNodes.insert(m_nicNodes.end(), ids.begin(), ids.end());
    for (uint32_t s : ids)
    {
        m_nodes.Get(s)->AggregateObject(CreateObject<RdmaNic>()); // set up by Finish
    }
}

const std::vector<uint32_t>&
RdmaFabricHelper::GetNicNodes() const
{
    return m_nicNodes;
}

Ptr<RdmaChannel>
RdmaFabricHelper::Link(uint32_t a, uint32_t b, DataRate rate, Time delay)
{
    NS_ABORT_MSG_IF(a >= m_nodes.GetN() || b >= m_nodes.GetN(),
                    "RdmaFabricHelper: link " << a << "-" << b << " names an unknown node");
    Ptr<RdmaChannel> ch = CreateObject<RdmaChannel>();
    ch->SetAttribute("Delay", TimeValue(delay));
    LinkRec rec{a, b, 0, 0, ch};
    for (int end = 0; end < 2; ++end)
    {
        uint32_t n = end == 0 ? a : b;
        Ptr<Node> node = m_nodes.Get(n);
        Ptr<RdmaNetDevice> dev = CreateObject<RdmaNetDevice>();
        dev->SetAttribute("DataRate", DataRateValue(rate));
        node->AddDevice(dev);
        dev->Attach(ch);
        uint32_t port = 0;
        if (m_isSwitch[n])
        {
            port = node->GetObject<RdmaSwitch>()->AddPort(dev);
        }
        else if (node->GetNDevices() == 1)
        {
            node->GetObject<RdmaNic>()->Setup(dev, RdmaHostAddress(n));
        }
        else
        {
            // A host of several links (SimAI's multi-homed GPU): one NIC of several ports.
            NS_ABORT_MSG_IF(!m_isSwitch[end == 0 ? b : a],
                            "RdmaFabricHelper: host node " << n
                                                           << " has a second link, not to a switch");
            port = node->GetObject<RdmaNic>()->AddPort(dev);
        }
        (end == 0 ? rec.portA : rec.portB) = port;
    }
    m_links.push_back(rec);
    return ch;
}

#ifdef NS3_MPI
uint32_t
RdmaFabricHelper::EnableRemoteLinks()
{
    uint32_t n = 0;
    for (const LinkRec& l : m_links)
    {
        if (l.channel->IsCrossRank())
        {
            l.channel->EnableRemote();
            ++n;
        }
    }
    // Every host of this rank may be told of a flow from another rank (EXPECT_FLOW).
    for (uint32_t h : m_hosts)
    {
        Ptr<Node> node = m_nodes.Get(h);
        if (node->GetSystemId() == MpiInterface::GetSystemId() && node->GetNDevices() > 0)
        {
            RdmaRemoteAttach(DynamicCast<RdmaNetDevice>(node->GetDevice(0)));
        }
    }
    return n;
}
#endif

void
RdmaFabricHelper::Finish()
{
    NS_ABORT_MSG_IF(!m_lb, "RdmaFabricHelper: call SetLoadBalancer before Finish");
    uint32_t n = m_nodes.GetN();
    // Adjacency: per node, (neighbour, local port).
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> adj(n);
    for (const auto& l : m_links)
    {
        adj[l.a].emplace_back(l.b, l.portA);
        adj[l.b].emplace_back(l.a, l.portB);
    }
    // The distances of a BFS from node `start`, expanding only through switches (as the
    // reference's driver: hosts are never transit).
    std::vector<uint32_t> dist(n);
    constexpr uint32_t FAR = std::numeric_limits<uint32_t>::max();
    auto bfs = [&](uint32_t start) {
        std::fill(dist.begin(), dist.end(), FAR);
        std::deque<uint32_t> q;
        dist[start] = 0;
        q.push_back(start);
        while (!q.empty())
        {
            uint32_t m = q.front();
            q.pop_front();
            if (m != start && !m_isSwitch[m])
            {
                continue; // hosts are never transit
            }
            for (const auto& [nb, port] : adj[m])
            {
                (void)port;
                if (dist[nb] == FAR)
                {
                    dist[nb] = dist[m] + 1;
                    q.push_back(nb);
                }
            }
        }
    };
    // Every switch's next hops towards a host: its neighbours one step closer (the host itself,
    // or a switch). When every host has one link, to a switch, a host's distances are its
    // switch's plus one everywhere but at the host: one BFS per such switch gives the next hops
    // of all its hosts (the same routes as one BFS per host).
    const bool singleHomed = std::all_of(m_hosts.begin(), m_hosts.end(), [&](uint32_t h) {
        return adj[h].size() == 1 && m_isSwitch[adj[h][0].first];
    });
    if (singleHomed)
    {
        std::map<uint32_t, std::vector<uint32_t>> hostsOf; // switch -> its hosts
        std::map<uint32_t, std::vector<uint32_t>> dipsOf;  // switch -> its hosts' addresses
        for (uint32_t h : m_hosts)
        {
            hostsOf[adj[h][0].first].push_back(h);
            dipsOf[adj[h][0].first].push_back(RdmaHostAddress(h));
        }
        std::vector<uint32_t> ports;
        for (const auto& [t, hosts] : hostsOf)
        {
            bfs(t);
            for (uint32_t s = 0; s < n; ++s)
            {
                if (!m_isSwitch[s] || dist[s] == FAR)
                {
                    continue;
                }
                Ptr<RdmaSwitch> sw = m_nodes.Get(s)->GetObject<RdmaSwitch>();
                if (s == t)
                {
                    for (const auto& [nb, port] : adj[s])
                    {
                        if (!m_isSwitch[nb] &&
                            std::find(hosts.begin(), hosts.end(), nb) != hosts.end())
                        {
                            sw->AddRoute(RdmaHostAddress(nb), port);
                        }
                    }
                    continue;
                }
                ports.clear();
                for (const auto& [nb, port] : adj[s])
                {
                    if (m_isSwitch[nb] && dist[nb] + 1 == dist[s])
                    {
                        ports.push_back(port);
                    }
                }
                sw->AddRoutes(dipsOf[t], ports);
            }
        }
    }
    else
    {
        for (uint32_t h : m_hosts)
        {
            uint32_t dip = RdmaHostAddress(h);
            bfs(h);
            for (uint32_t s = 0; s < n; ++s)
            {
                if (!m_isSwitch[s] || dist[s] == FAR)
                {
                    continue;
                }
                Ptr<RdmaSwitch> sw = m_nodes.Get(s)->GetObject<RdmaSwitch>();
                for (const auto& [nb, port] : adj[s])
                {
                    if (dist[nb] + 1 == dist[s] && (nb == h || m_isSwitch[nb]))
                    {
                        sw->AddRoute(dip, port);
                    }
                }
            }
        }
    }
    SetHostPortRoutes(adj);
    if (m_lb->GetPathIndexRouting() != LbPathIndexRouting::NOT_USED)
    {
        WireWhackAMole(adj);
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        if (m_isSwitch[i])
        {
            Ptr<RdmaSwitch> sw = m_nodes.Get(i)->GetObject<RdmaSwitch>();
            sw->CompactRoutes();
            sw->SetSwitchId(i); // before path discovery
        }
    }
    if (m_htsim)
    {
        InstallHtsimSwitches(adj);
    }
    for (uint32_t s : m_endpointSwitches)
    {
        // Its NIC sends on every port; to a host it is linked to, on that link's port.
        Ptr<RdmaSwitch> sw = m_nodes.Get(s)->GetObject<RdmaSwitch>();
        std::vector<Ptr<RdmaNetDevice>> ports;
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            ports.push_back(sw->GetPort(p));
        }
        std::vector<std::vector<uint8_t>> routes(n);
        for (const auto& [nb, port] : adj[s])
        {
            if (!m_isSwitch[nb])
            {
                routes[nb] = {static_cast<uint8_t>(port)};
            }
        }
        Ptr<RdmaNic> nic = m_nodes.Get(s)->GetObject<RdmaNic>();
        nic->SetupOnSwitch(sw, ports, RdmaHostAddress(s));
        nic->SetPortRoutes(std::move(routes));
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        if (m_isSwitch[i])
        {
            m_nodes.Get(i)->GetObject<RdmaSwitch>()->SetLoadBalancer(m_lb, i);
        }
        else
        {
            m_nodes.Get(i)->GetObject<RdmaNic>()->SetLoadBalancer(m_lb);
        }
    }
    for (uint32_t s : m_endpointSwitches)
    {
        m_nodes.Get(s)->GetObject<RdmaNic>()->SetLoadBalancer(m_lb);
    }
}

void
RdmaFabricHelper::SetHostPortRoutes(
    const std::vector<std::vector<std::pair<uint32_t, uint32_t>>>& adj)
{
    std::vector<uint32_t> multi; // the hosts of several links
    for (uint32_t h : m_hosts)
    {
        if (adj[h].size() > 1)
        {
            multi.push_back(h);
        }
    }
    if (multi.empty())
    {
        return;
    }
    // SimAI's CalculateRoute: one BFS per destination host, expanding through switches only;
    // a host's routes to the destination are its neighbours one step closer, in the order the
    // BFS dequeues them. SimAI visits a node's neighbours in the order of its map keyed by
    // Ptr<Node>, i.e. by the nodes' heap addresses; ascending node id (the nodes' creation
    // order) is read here as that order.
    const uint32_t n = m_nodes.GetN();
    std::vector<std::vector<uint32_t>> sorted(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        for (const auto& [nb, port] : adj[i])
        {
            (void)port;
            sorted[i].push_back(nb);
        }
        std::sort(sorted[i].begin(), sorted[i].end());
        sorted[i].erase(std::unique(sorted[i].begin(), sorted[i].end()), sorted[i].end());
    }
    constexpr uint32_t FAR = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> dist(n);
    std::vector<uint32_t> rank(n); // BFS dequeue order
    std::vector<std::vector<std::vector<uint8_t>>> routes(
        multi.size(),
        std::vector<std::vector<uint8_t>>(n));
    std::vector<std::pair<uint32_t, uint8_t>> cand;
    for (uint32_t d : m_hosts)
    {
        std::fill(dist.begin(), dist.end(), FAR);
        std::deque<uint32_t> q;
        dist[d] = 0;
        q.push_back(d);
        uint32_t next = 0;
        while (!q.empty())
        {
            uint32_t m = q.front();
            q.pop_front();
            rank[m] = next++;
            if (m != d && !m_isSwitch[m])
            {
                continue; // hosts are never transit
            }
            for (uint32_t nb : sorted[m])
            {
                if (dist[nb] == FAR)
                {
                    dist[nb] = dist[m] + 1;
                    q.push_back(nb);
                }
            }
        }
        for (std::size_t k = 0; k < multi.size(); ++k)
        {
            const uint32_t h = multi[k];
            if (h == d || dist[h] == FAR)
            {
                continue;
            }
            cand.clear();
            for (std::size_t p = 0; p < adj[h].size(); ++p)
            {
                const auto& [nb, port] = adj[h][p];
                if (m_isSwitch[nb] && dist[nb] + 1 == dist[h])
                {
                    cand.emplace_back(rank[nb], static_cast<uint8_t>(port));
                }
            }
            std::sort(cand.begin(), cand.end());
            for (const auto& [r, p] : cand)
            {
                (void)r;
                routes[k][d].push_back(p);
            }
        }
    }
    for (std::size_t k = 0; k < multi.size(); ++k)
    {
        m_nodes.Get(multi[k])->GetObject<RdmaNic>()->SetPortRoutes(std::move(routes[k]));
    }
}

void
RdmaFabricHelper::SetPortRate(uint32_t node, uint32_t peer, DataRate rate, double queueScale)
{
    for (const LinkRec& l : m_links)
    {
        if ((l.a != node || l.b != peer) && (l.b != node || l.a != peer))
        {
            continue;
        }
        const bool isA = l.a == node;
        // Link attaches end a's device first.
        l.channel->GetDevice(isA ? 0 : 1)->SetAttribute("DataRate", DataRateValue(rate));
        if (m_isSwitch[node] && queueScale != 1.0)
        {
            GetSwitch(node)->SetPortQueueScale(isA ? l.portA : l.portB, queueScale);
        }
        return;
    }
    NS_FATAL_ERROR("RdmaFabricHelper: SetPortRate: no link " << node << "-" << peer);
}

void
RdmaFabricHelper::UseHtsimSwitches(uint32_t seed, uint32_t flows)
{
    m_htsim = std::make_pair(seed, flows);
}

void
RdmaFabricHelper::InstallHtsimSwitches(
    const std::vector<std::vector<std::pair<uint32_t, uint32_t>>>& adj)
{
    // Hops from the nearest host, through switches only: 1 = ToR, 2 = second tier, ...
    const uint32_t far = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> dist(m_nodes.GetN(), far);
    std::deque<uint32_t> q;
    for (uint32_t h : m_hosts)
    {
        dist[h] = 0;
        q.push_back(h);
    }
    while (!q.empty())
    {
        uint32_t m = q.front();
        q.pop_front();
        for (const auto& [nb, port] : adj[m])
        {
            (void)port;
            if (m_isSwitch[nb] && dist[nb] == far)
            {
                dist[nb] = dist[m] + 1;
                q.push_back(nb);
            }
        }
    }
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < m_nodes.GetN(); ++i)
    {
        if (m_isSwitch[i])
        {
            order.push_back(i);
        }
    }
    std::stable_sort(order.begin(), order.end(), [&dist](uint32_t a, uint32_t b) {
        return dist[a] < dist[b];
    });
    const auto tier = [&](uint32_t d) {
        return static_cast<uint32_t>(
            std::count_if(order.begin(), order.end(), [&](uint32_t s) { return dist[s] == d; }));
    };
    m_lb->UseHtsimSwitches(m_htsim->first,
                           order,
                           tier(1),
                           tier(2),
                           static_cast<uint32_t>(m_hosts.size()),
                           m_htsim->second);
}

void
RdmaFabricHelper::BuildLeafSpine(uint32_t leaves,
                                 uint32_t hostsPerLeaf,
                                 uint32_t spines,
                                 DataRate hostRate,
                                 DataRate fabricRate,
                                 Time delay)
{
    uint32_t nHosts = leaves * hostsPerLeaf;
    std::vector<uint32_t> switches;
    for (uint32_t s = nHosts; s < nHosts + leaves + spines; ++s)
    {
        switches.push_back(s);
    }
    CreateNodes(nHosts + leaves + spines, switches);
    for (uint32_t h = 0; h < nHosts; ++h)
    {
        Link(h, nHosts + h / hostsPerLeaf, hostRate, delay);
    }
    for (uint32_t l = 0; l < leaves; ++l)
    {
        for (uint32_t s = 0; s < spines; ++s)
        {
            Link(nHosts + l, nHosts + leaves + s, fabricRate, delay);
        }
    }
}

Ptr<Node>
RdmaFabricHelper::GetNode(uint32_t i) const
{
    return m_nodes.Get(i);
}

uint32_t
RdmaFabricHelper::GetNNodes() const
{
    return m_nodes.GetN();
}

bool
RdmaFabricHelper::IsSwitch(uint32_t i) const
{
    return m_isSwitch.at(i);
}

const std::vector<uint32_t>&
RdmaFabricHelper::GetHosts() const
{
    return m_hosts;
}

Ptr<RdmaNic>
RdmaFabricHelper::GetNic(uint32_t i) const
{
    return m_nodes.Get(i)->GetObject<RdmaNic>();
}

Ptr<RdmaSwitch>
RdmaFabricHelper::GetSwitch(uint32_t i) const
{
    return m_nodes.Get(i)->GetObject<RdmaSwitch>();
}

Ptr<RdmaChannel>
RdmaFabricHelper::GetChannel(uint32_t a, uint32_t b) const
{
    for (const auto& l : m_links)
    {
        if ((l.a == a && l.b == b) || (l.a == b && l.b == a))
        {
            return l.channel;
        }
    }
    return nullptr;
}

void
RdmaFabricHelper::AddFlow(uint32_t flowId, uint32_t src, uint32_t dst, uint64_t size, Time start, uint32_t pg)
{
    auto endpoint = [this](uint32_t n) {
        return n < m_nodes.GetN() && (!m_isSwitch[n] || std::count(m_endpointSwitches.begin(),
                                                                   m_endpointSwitches.end(),
                                                                   n) != 0);
    };
    NS_ABORT_MSG_IF(!endpoint(src),
                    "RdmaFabricHelper: flow " << flowId << ": source " << src << " is not a host");
    NS_ABORT_MSG_IF(!endpoint(dst),
                    "RdmaFabricHelper: flow " << flowId << ": destination " << dst
                                              << " is not a host");
    Ptr<RdmaNic> nic = GetNic(src);
    uint32_t dip = RdmaHostAddress(dst);
    Simulator::ScheduleWithContext(src, start, &RdmaNic::StartFlow, nic, flowId, dip, size, pg);
}

namespace
{

/// Applies a link state change to the channel, tells the switches at its ends and the
/// \p remote ones.
void
ApplyLinkState(Ptr<RdmaChannel> ch,
               Ptr<RdmaSwitch> swA,
               uint32_t portA,
               Ptr<RdmaSwitch> swB,
               uint32_t portB,
               const std::vector<Ptr<RdmaSwitch>>& remote,
               bool down)
{
    ch->SetDown(down);
    if (swA)
    {
        swA->NotifyLinkState(portA, down);
    }
    if (swB)
    {
        swB->NotifyLinkState(portB, down);
    }
    for (const auto& sw : remote)
    {
        sw->NotifyRemoteLinkState(down);
    }
}

} // namespace

/// Runs a scheduled callable (see ScheduleLinkState).
static void
RunScheduled(std::shared_ptr<std::function<void()>> f)
{
    (*f)();
}

void
RdmaFabricHelper::ScheduleLinkRecState(const LinkRec& l, Time at, bool down)
{
    Ptr<RdmaSwitch> swA = m_isSwitch[l.a] ? GetSwitch(l.a) : nullptr;
    Ptr<RdmaSwitch> swB = m_isSwitch[l.b] ? GetSwitch(l.b) : nullptr;
    std::vector<Ptr<RdmaSwitch>> remote;
    if (m_notifyRemoteLinkState && swA && swB)
    {
        for (uint32_t i = 0; i < m_nodes.GetN(); ++i)
        {
            if (m_isSwitch[i] && i != l.a && i != l.b)
            {
                remote.push_back(GetSwitch(i));
            }
        }
    }
    if (!m_routing || m_routing->GetNLinks() != m_links.size())
    {
        std::vector<RdmaRouteWithdrawal::Link> links;
        for (const auto& r : m_links)
        {
            links.push_back({r.a, r.b, r.portA, r.portB, r.channel});
        }
        m_routing = std::make_shared<RdmaRouteWithdrawal>(m_nodes, m_isSwitch, m_hosts, links);
    }
    std::shared_ptr<const RdmaRouteWithdrawal> routing = m_routing;
    const LinkRec& rec = l;
    // A lambda through a function pointer: ns-3 before 3.36 (waf era) schedules only
    // function pointers with arguments, not callables.
    auto apply = std::make_shared<std::function<void()>>([rec, swA, swB, remote, down, routing]() {
        ApplyLinkState(rec.channel, swA, rec.portA, swB, rec.portB, remote, down);
        routing->Update(); // the switches with WithdrawFailedPorts withdraw dead routes
    });
    Simulator::Schedule(at, &RunScheduled, apply);
}

void
RdmaFabricHelper::ScheduleLinkState(uint32_t a, uint32_t b, Time at, bool down)
{
    for (const auto& l : m_links)
    {
        if ((l.a == a && l.b == b) || (l.a == b && l.b == a))
        {
            ScheduleLinkRecState(l, at, down);
            return;
        }
    }
    NS_FATAL_ERROR("RdmaFabricHelper: no link between nodes " << a << " and " << b);
}

void
RdmaFabricHelper::ScheduleSwitchPortState(uint32_t sw, uint32_t port, Time at, bool down)
{
    NS_ABORT_MSG_IF(sw >= m_nodes.GetN() || !m_isSwitch[sw],
                    "RdmaFabricHelper: node " << sw << " is not a switch");
    for (const auto& l : m_links)
    {
        if ((l.a == sw && l.portA == port) || (l.b == sw && l.portB == port))
        {
            NS_LOG_INFO("switch " << sw << " port " << port << " (link " << l.a << "-" << l.b
                                  << ") scheduled " << (down ? "down" : "up") << " at " << at);
            ScheduleLinkRecState(l, at, down);
            return;
        }
    }
    NS_FATAL_ERROR("RdmaFabricHelper: switch " << sw << " has no port " << port);
}

void
RdmaFabricHelper::ScheduleOneWayState(uint32_t from,
                                      uint32_t to,
                                      Time at,
                                      bool down,
                                      std::optional<uint32_t> port)
{
    for (const auto& l : m_links)
    {
        bool match = port ? ((l.a == from && l.portA == *port) || (l.b == from && l.portB == *port))
                          : ((l.a == from && l.b == to) || (l.a == to && l.b == from));
        if (!match)
        {
            continue;
        }
        Ptr<RdmaChannel> ch = l.channel;
        Ptr<RdmaNetDevice> sender;
        for (size_t d = 0; d < ch->GetNDevices(); ++d)
        {
            Ptr<RdmaNetDevice> dev = DynamicCast<RdmaNetDevice>(ch->GetDevice(d));
            if (dev && dev->GetNode()->GetId() == from)
            {
                sender = dev;
            }
        }
        NS_ABORT_MSG_IF(!sender, "RdmaFabricHelper: no device of node " << from << " on link");
        NS_LOG_INFO("link " << l.a << "-" << l.b << ": direction " << from << " -> "
                            << (l.a == from ? l.b : l.a) << " scheduled "
                            << (down ? "down" : "up") << " at " << at << " (one way)");
        Simulator::Schedule(at, &RdmaChannel::SetDirectionDown, ch, sender, down);
        return;
    }
    if (port)
    {
        NS_FATAL_ERROR("RdmaFabricHelper: node " << from << " has no port " << *port);
    }
    NS_FATAL_ERROR("RdmaFabricHelper: no link between nodes " << from << " and " << to);
}

void
RdmaFabricHelper::SetNotifyRemoteLinkState(bool notify)
{
    m_notifyRemoteLinkState = notify;
}

void
RdmaFabricHelper::ScheduleLinkFailure(uint32_t a, uint32_t b, Time downAt, Time upAt)
{
    ScheduleLinkState(a, b, downAt, true);
    if (upAt > downAt)
    {
        ScheduleLinkState(a, b, upAt, false);
    }
}

int64_t
RdmaFabricHelper::AssignStreams(int64_t stream)
{
    int64_t s = stream;
    for (uint32_t i = 0; i < m_nodes.GetN(); ++i)
    {
        s += m_isSwitch[i] ? GetSwitch(i)->AssignStreams(s) : GetNic(i)->AssignStreams(s);
    }
    return s - stream;
}

} // namespace ns3
