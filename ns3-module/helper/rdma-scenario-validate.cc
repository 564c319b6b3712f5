/*
 * rdma-lb: RdmaScenarioRunner::Validate (see rdma-scenario.h and ns3-module/doc/rdma-lb.rst,
 * "Scenarios"): what only the fabric can check in a scenario -- the topology, ports, link
 * rates against the ECN map, flow endpoints and dependencies, collectives, the run's seed and
 * times, link events -- each reported as one line naming the field. The transport's settings
 * and the load balancer's parameters are validated in Rust when the scenario is loaded.
 */
#include "rdma-scenario.h"

#include "ns3/rdma-nic.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace ns3
{

std::string
RdmaScenarioRunner::Validate(const RdmaScenarioSpec& spec)
{
    const uint32_t n = spec.nodeCount;
    if (n == 0)
    {
        return "topology: no nodes";
    }
    std::vector<bool> isSwitch(n, false);
    for (size_t i = 0; i < spec.switchIds.size(); ++i)
    {
        uint32_t s = spec.switchIds[i];
        if (s >= n)
        {
            return Fmt("topology.switch_ids[%zu]: node %u >= node count %u", i, s, n);
        }
        if (isSwitch[s])
        {
            return Fmt("topology.switch_ids[%zu]: switch %u listed twice", i, s);
        }
        isSwitch[s] = true;
    }
    std::vector<bool> endpoint(n, false);
    for (size_t i = 0; i < spec.endpointSwitchIds.size(); ++i)
    {
        const uint32_t s = spec.endpointSwitchIds[i];
        if (s >= n || !isSwitch[s])
        {
            return Fmt("topology.endpoint_switch_ids[%zu]: node %u is not a switch", i, s);
        }
        endpoint[s] = true;
    }
    std::vector<uint32_t> degree(n, 0);
    std::vector<uint64_t> hostRate(n, 0);  // a host's first link's rate
    std::vector<bool> hostToHost(n, false); // a host's first link is to a host
    std::set<std::pair<uint32_t, uint32_t>> linked;
    for (size_t i = 0; i < spec.links.size(); ++i)
    {
        const RdmaScenarioLink& l = spec.links[i];
        if (l.a >= n || l.b >= n)
        {
            return Fmt("topology.links[%zu]: node %u >= node count %u", i, std::max(l.a, l.b), n);
        }
        if (l.a == l.b)
        {
            return Fmt("topology.links[%zu]: links node %u to itself", i, l.a);
        }
        if (l.rateBps == 0)
        {
            return Fmt("topology.links[%zu]: rate must be > 0", i);
        }
        if (!(l.errorRate >= 0.0 && l.errorRate <= 1.0))
        {
            return Fmt("topology.links[%zu]: error rate must be in [0, 1], got %g", i, l.errorRate);
        }
        if (l.delayNs > uint64_t(INT64_MAX))
        {
            return Fmt("topology.links[%zu]: delay too large", i);
        }
        ++degree[l.a];
        ++degree[l.b];
        linked.insert({std::min(l.a, l.b), std::max(l.a, l.b)});
        for (uint32_t end : {l.a, l.b})
        {
            // A host of several links is one NIC of several ports (SimAI's multi-homed GPU):
            // every link to a switch, all of one rate (RdmaNic::AddPort).
            const uint32_t other = end == l.a ? l.b : l.a;
            if (isSwitch[end])
            {
                continue;
            }
            if (degree[end] == 1)
            {
                hostRate[end] = l.rateBps;
                hostToHost[end] = !isSwitch[other];
                continue;
            }
            if (hostToHost[end] || !isSwitch[other])
            {
                return Fmt("topology.links[%zu]: host %u has more than one link and not all to "
                           "switches",
                           i,
                           end);
            }
            if (l.rateBps != hostRate[end])
            {
                return Fmt("topology.links[%zu]: host %u has links of different rates (%" PRIu64
                           " and %" PRIu64 " bps): the ports of a NIC have one rate",
                           i,
                           end,
                           hostRate[end],
                           l.rateBps);
            }
        }
    }
    // The transport's settings and the load-balancing configuration are Rust's to validate
    // (rdma_lb_scenario::validate, LbConfig::Parse); what only the fabric knows is checked here.
    const RdmaScenarioTransport& t = spec.transport;
    const std::vector<RdmaScenarioEcnEntry> ecn =
        t.ecn.empty() ? RdmaScenarioSpec::DefaultEcnMap() : t.ecn;
    if (t.EcnEnabled() && !t.Uet()) // uet: thresholds in packets ([transport.uet])
    {
        for (size_t i = 0; i < spec.links.size(); ++i)
        {
            const RdmaScenarioLink& l = spec.links[i];
            if (!isSwitch[l.a] && !isSwitch[l.b])
            {
                continue;
            }
            bool found = std::any_of(ecn.begin(), ecn.end(), [&](const RdmaScenarioEcnEntry& e) {
                return e.rateBps == l.rateBps;
            });
            if (!found)
            {
                return Fmt("transport.ecn: no KMIN/KMAX/PMAX entry for rate %" PRIu64
                           " bps (topology.links[%zu])",
                           l.rateBps, i);
            }
        }
    }
    if (!spec.lb)
    {
        return "lb: no load-balancing configuration (RdmaScenarioSpec::lb)";
    }
    for (size_t i = 0; i < spec.flows.size(); ++i)
    {
        const RdmaScenarioFlow& f = spec.flows[i];
        if (f.id != i)
        {
            return Fmt("flows[%zu].id: must be %zu, got %u", i, i, f.id);
        }
        for (auto [name, node] : {std::make_pair("src", f.src), std::make_pair("dst", f.dst)})
        {
            if (node >= n || (isSwitch[node] && !endpoint[node]))
            {
                return Fmt("flows[%zu].%s: node %u is not a host", i, name, node);
            }
            if (degree[node] == 0)
            {
                return Fmt("flows[%zu].%s: host %u has no link", i, name, node);
            }
        }
        if (f.src == f.dst)
        {
            return Fmt("flows[%zu]: source and destination are both host %u", i, f.src);
        }
        if (f.sizeBytes == 0 || f.sizeBytes > UINT32_MAX)
        {
            return Fmt("flows[%zu].size_bytes: must be in 1..4294967295, got %" PRIu64, i, f.sizeBytes);
        }
        if (f.pg < 1 || f.pg > 7)
        {
            return Fmt("flows[%zu].pg: must be in 1..7, got %u", i, f.pg);
        }
        if (f.startNs > uint64_t(INT64_MAX))
        {
            return Fmt("flows[%zu].start_ns: too large", i);
        }
        for (uint32_t a : f.after)
        {
            if (a >= f.id)
            {
                return Fmt("flows[%zu].after: flow %u is not an earlier flow", i, a);
            }
        }
        for (uint32_t a : f.computeAfter)
        {
            if (a >= f.id)
            {
                return Fmt("flows[%zu].compute_after: flow %u is not an earlier flow", i, a);
            }
        }
        for (const auto& [ids, key] : {std::make_pair(&f.afterSent, "after_sent"),
                                       std::make_pair(&f.afterReady, "after_ready")})
        {
            for (uint32_t a : *ids)
            {
                if (a >= f.id || spec.flows[a].src != f.src)
                {
                    return Fmt("flows[%zu].%s: flow %u is not an earlier flow of its sender",
                               i,
                               key,
                               a);
                }
            }
        }
        if (f.sendLatencyNs > f.latencyNs)
        {
            return Fmt("flows[%zu].send_latency_ns: more than its latency_ns", i);
        }
        if (f.computeNs > uint64_t(INT64_MAX) / 4 || f.latencyNs > uint64_t(INT64_MAX) / 4)
        {
            return Fmt("flows[%zu].compute_ns / latency_ns: too large", i);
        }
    }
    for (size_t i = 0; i < spec.collectives.size(); ++i)
    {
        const RdmaScenarioCollective& c = spec.collectives[i];
        if (c.flowIds.empty())
        {
            return Fmt("collectives[%zu]: no flows", i);
        }
        for (uint32_t id : c.flowIds)
        {
            if (id >= spec.flows.size())
            {
                return Fmt("collectives[%zu].flow_ids: flow %u does not exist", i, id);
            }
        }
    }
    const RdmaScenarioRun& r = spec.run;
    if (r.seed == 0 || r.seed > UINT32_MAX)
    {
        return Fmt("run.seed: must be in 1..4294967295, got %" PRIu64, r.seed);
    }
    if (r.hardStopNs == 0 || r.hardStopNs > uint64_t(INT64_MAX))
    {
        return "run.hard_stop_ns: must be > 0";
    }
    for (size_t i = 0; i < r.linkEvents.size(); ++i)
    {
        const RdmaScenarioLinkEvent& e = r.linkEvents[i];
        if (e.byPort)
        {
            if (e.a >= n || !isSwitch[e.a])
            {
                return Fmt("run.link_events[%zu]: node %u is not a switch", i, e.a);
            }
            if (e.port >= degree[e.a])
            {
                return Fmt("run.link_events[%zu]: switch %u has no port %u", i, e.a, e.port);
            }
        }
        else if (linked.count({std::min(e.a, e.b), std::max(e.a, e.b)}) == 0)
        {
            return Fmt("run.link_events[%zu]: no link between nodes %u and %u", i, e.a, e.b);
        }
    }
    return ValidateRanks(spec);
}

} // namespace ns3
