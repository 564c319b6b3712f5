/*
 * rdma-lb: RdmaScenarioRunner (see rdma-scenario.h): validates a scenario, builds and runs its
 * fabric; the output files and traces are rdma-scenario-output.cc's.
 */
#include "rdma-scenario.h"

#include "rdma-fabric-helper.h"
#include "rdma-rate-trace.h"
#include "rdma-scenario-output.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/error-model.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/rdma-channel.h"
#include "ns3/rdma-header.h"
#include "ns3/rdma-lb-bridge.h"
#include "ns3/rdma-net-device.h"
#include "ns3/rdma-nic.h"
#include "ns3/rdma-switch.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <iostream>
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdlib>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaScenario");

namespace
{

constexpr uint64_t NO_VALUE = std::numeric_limits<uint64_t>::max();

/// Bytes of headers per data packet counted by the reference's ideal FCT (14+20+8+6).
constexpr uint64_t IDEAL_HEADER_BYTES = 48;

/// The reference's per-pair values, from a BFS at the destination host.
struct PairInfo
{
    uint64_t delayNs{0}; //!< one-way propagation
    uint64_t txNs{0};    //!< one payload packet's serialization, summed over hops
    uint64_t bwBps{0};   //!< bottleneck (0 = unreachable)
    uint32_t hops{0};    //!< links on the path
};

/// What the uet transport's per-pair base RTT reads (RdmaScenarioRunner::ConfigureUet).
struct UetPairRtt
{
    const std::vector<std::vector<PairInfo>>* pairs{nullptr}; //!< [dst host idx][src host idx]
    const std::vector<uint32_t>* hostIndex{nullptr};          //!< node -> host index
    uint64_t txNs{0}; //!< the fabric's diameter x (data + ACK) serialization at the host rate
};

/// \return the base RTT from host index \p src to address \p dip: 2 x propagation + txNs (0
/// when \p dip is not a reachable host: the NIC then uses its UetBaseRtt)
Time
UetPairBaseRtt(const UetPairRtt* t, uint32_t src, uint32_t dip)
{
    const uint32_t dst = RdmaHostId(dip);
    if (dst >= t->hostIndex->size() || (*t->hostIndex)[dst] == UINT32_MAX)
    {
        return Time(0);
    }
    const PairInfo& p = (*t->pairs)[(*t->hostIndex)[dst]][src];
    return p.bwBps == 0 ? Time(0) : NanoSeconds(static_cast<int64_t>(2 * p.delayNs + t->txNs));
}

} // namespace

/// Run-time state: the fabric, the trace sinks and the results.
struct RdmaScenarioRunner::State
{
    const RdmaScenarioSpec* spec{nullptr};
    std::unique_ptr<RdmaFabricHelper> fabric;
    std::vector<bool> isSwitch;
    std::vector<uint32_t> hostIndex;               //!< node -> index among hosts (or max)
    std::vector<uint32_t> hosts;                   //!< host node ids, ascending
    std::vector<std::vector<PairInfo>> pairs;      //!< [dst host idx][src host idx]
    std::string uetSummary; //!< transport uet: its derived parameters (JSON), else empty
    UetPairRtt uetPairRtt;  //!< transport uet: what the NICs' per-pair base RTT reads
    std::vector<RdmaScenarioFlowResult> results;
    std::vector<RdmaScenarioCollectiveResult> collectives;
    std::vector<std::vector<uint32_t>> dependents; //!< flow -> flows waiting for it
    std::vector<uint32_t> pending;                 //!< flow -> predecessors not delivered
    std::vector<uint32_t> ordinary;                //!< flows without deps, by (start, id)
    size_t nextOrdinary{0};
    uint32_t completed{0};
    uint32_t started{0};
    uint32_t delivered{0};
    uint64_t events{0};
    uint64_t simTimeNs{0};
    double wallSeconds{0};
    // Counters.
    RdmaScenarioCounters counters; //!< the run's totals
    std::map<std::string, uint64_t> lbCounters; //!< summed over the switches
    // Traces: where they go (pfc.txt, queue.txt, uplink.txt, rate.txt, retx.txt; the runner's).
    RdmaScenarioOutput* out{nullptr};
    // Rate trace (rate.txt, retx.txt; sampled every rate-trace interval).
    RdmaRateTrace rateTrace;
    std::vector<uint32_t> tors;  //!< switches with a host link, ascending
    Time monitorPeriod;
    Time monitorEnd;
    // Progress.
    bool progress{false};
    bool progressPrinted{false};
    std::chrono::steady_clock::time_point wallStart;
    double lastPrintWall{0};
    Time progressPeriod;
    uint64_t lastTickEvents{0};
    uint64_t endEstimateNs{0};
    uint64_t firstStartNs{0};  //!< simulated time of the first flow start (ETA reference)
    double firstStartWall{-1}; //!< wall seconds at the first flow start
    uint32_t previousSeed{1};  //!< RngSeedManager seed before the run (restored after)

    void StartFlow(uint32_t id)
    {
        RdmaScenarioFlowResult& r = results[id];
        const RdmaScenarioFlow& f = spec->flows[id];
        r.started = true;
        r.startNs = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
        if (started++ == 0 && progress)
        {
            firstStartNs = r.startNs;
            firstStartWall = WallNow();
        }
        Ptr<RdmaNic> nic = fabric->GetNic(f.src);
        if (spec->transport.quirks.flowPorts)
        {
            nic->StartFlowOnPorts(id, RdmaHostAddress(f.dst), f.sizeBytes, f.pg, r.sport, r.dport);
        }
        else if (spec->transport.uetHtsimSwitches)
        {
            // htsim's ECMP path id: the connection's number modulo its 65,535 paths.
            nic->StartFlowWithEntropy(id,
                                      RdmaHostAddress(f.dst),
                                      f.sizeBytes,
                                      f.pg,
                                      static_cast<uint16_t>(id % 65535));
        }
        else
        {
            nic->StartFlow(id, RdmaHostAddress(f.dst), f.sizeBytes, f.pg);
        }
    }

    void ScheduleNextOrdinary()
    {
        if (nextOrdinary >= ordinary.size())
        {
            return;
        }
        const RdmaScenarioFlow& f = spec->flows[ordinary[nextOrdinary]];
        Time at = NanoSeconds(static_cast<int64_t>(f.startNs));
        Simulator::ScheduleWithContext(f.src, at - Simulator::Now(), &State::OrdinaryStep, this);
    }

    void OrdinaryStep()
    {
        if (!spec->transport.quirks.eventOrder)
        {
            StartFlow(ordinary[nextOrdinary++]);
            ScheduleNextOrdinary();
            return;
        }
        // Quirk event-order: the reference's flow-input event takes every flow of this start
        // time; each queue pair appears two zero-delay events later (application start, then
        // StartApplication), after the events already due now, in flow order.
        const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
        while (nextOrdinary < ordinary.size() && spec->flows[ordinary[nextOrdinary]].startNs == now)
        {
            Simulator::ScheduleNow(&State::StartApplication, this, ordinary[nextOrdinary++]);
        }
        ScheduleNextOrdinary();
    }

    void StartApplication(uint32_t id)
    {
        Simulator::ScheduleNow(&State::StartFlow, this, id);
    }

    void OnDelivered(uint32_t flowId, uint32_t, uint32_t, uint64_t, Time at)
    {
        if (flowId >= results.size() || results[flowId].delivered)
        {
            return;
        }
        RdmaScenarioFlowResult& r = results[flowId];
        r.delivered = true;
        r.deliveredNs = static_cast<uint64_t>(at.GetNanoSeconds());
        ++delivered;
        for (uint32_t d : dependents[flowId])
        {
            if (pending[d] > 0 && --pending[d] == 0)
            {
                const RdmaScenarioFlow& f = spec->flows[d];
                Time startAt = NanoSeconds(static_cast<int64_t>(f.startNs));
                Time delay = startAt > at ? startAt - at : Time(0);
                Simulator::ScheduleWithContext(f.src, delay, &State::StartFlow, this, d);
            }
        }
    }

    void OnRecord(const RdmaFlowRecord& rec)
    {
        if (rec.flowId >= results.size() || results[rec.flowId].completed)
        {
            return;
        }
        RdmaScenarioFlowResult& r = results[rec.flowId];
        r.completed = true;
        r.fctNs = static_cast<uint64_t>((rec.finish - rec.start).GetNanoSeconds());
        r.retxPkts = rec.retxPkts;
        r.nacks = rec.nacksSent;
        r.cnps = rec.cnpsRx;
        r.timeouts = rec.timeouts;
        r.rateCuts = rec.rateCuts;
        r.pathSwitches = rec.pathSwitches;
        r.probes = rec.probes;
        if (++completed == results.size())
        {
            Simulator::Stop();
        }
    }

    /// A PFC frame received at a port: node type and port come packed in one bound argument
    /// (type << 16 | port), because ns-3 before 3.36 (waf era) binds at most 3 arguments.
    static void OnPfcRx(State* s, uint32_t node, uint32_t typePort, uint32_t, uint32_t pauseUs)
    {
        (pauseUs != 0 ? s->counters.pfcPausesRx : s->counters.pfcResumesRx)++;
        if (std::ostream* pfc = s->out->Pfc())
        {
            *pfc << Simulator::Now().GetNanoSeconds() << ' ' << node << ' ' << (typePort >> 16)
                       << ' ' << (typePort & 0xffff) << ' ' << (pauseUs != 0 ? 1 : 0) << '\n';
        }
    }

    static void OnLoss(State* s, Ptr<const Packet>)
    {
        ++s->counters.linkLoss;
    }

    static void OnErrorDrop(State* s, Ptr<const Packet>)
    {
        ++s->counters.errorDrops;
    }

    /// queue.txt: every switch port with queued bytes; uplink.txt: ConWeave's ToR-uplink
    /// monitor, cumulative bytes sent on every ToR port towards a switch.
    void MonitorTick()
    {
        const int64_t t = Simulator::Now().GetNanoSeconds();
        for (uint32_t id : spec->switchIds)
        {
            Ptr<RdmaSwitch> sw = fabric->GetSwitch(id);
            for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
            {
                uint64_t q = sw->GetPort(p)->GetTotalQueueBytes();
                if (q != 0)
                {
                    *out->Queue() << t << ' ' << id << ' ' << p + 1 << ' ' << q << '\n';
                }
            }
        }
        for (uint32_t id : tors)
        {
            Ptr<RdmaSwitch> sw = fabric->GetSwitch(id);
            for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
            {
                Ptr<RdmaNetDevice> dev = sw->GetPort(p);
                Ptr<RdmaNetDevice> peer = dev->GetRdmaChannel()->GetPeer(dev);
                if (peer && isSwitch[peer->GetNode()->GetId()])
                {
                    *out->Uplink() << t << ',' << id << ',' << p + 1 << ',' << dev->GetTxBytes()
                                   << '\n';
                }
            }
        }
        if (Simulator::Now() + monitorPeriod <= monitorEnd)
        {
            Simulator::Schedule(monitorPeriod, &State::MonitorTick, this);
        }
    }

    double WallNow() const
    {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    }

    void PrintProgress(bool final)
    {
        double wall = WallNow();
        uint64_t now = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
        std::string eta = "?";
        if (firstStartWall >= 0 && now > firstStartNs && now < endEstimateNs &&
            wall > firstStartWall)
        {
            // Simulated ns per wall second since the traffic began.
            double rate = static_cast<double>(now - firstStartNs) / (wall - firstStartWall);
            eta = Fmt("%.0f s", static_cast<double>(endEstimateNs - now) / rate);
        }
        else if (now >= endEstimateNs)
        {
            eta = "draining";
        }
        std::fprintf(stderr,
                     "\r[rdma-lb] sim %.3f ms / %.3f ms | flows %u/%zu done | %.1f s wall | ETA %s   %s",
                     static_cast<double>(now) / 1e6, static_cast<double>(endEstimateNs) / 1e6, completed,
                     results.size(), wall, eta.c_str(), final ? "\n" : "");
        std::fflush(stderr);
        progressPrinted = true;
        lastPrintWall = wall;
    }

    void ProgressTick()
    {
        double wall = WallNow();
        if (wall >= 2.0 && wall - lastPrintWall >= 0.5)
        {
            PrintProgress(false);
        }
        // Back off (up to 1 ms) while nothing else happens, so that an idle stretch costs few
        // ticks; the tick never changes the model's events or their order.
        uint64_t ev = Simulator::GetEventCount();
        progressPeriod = (ev - lastTickEvents <= 1) ? std::min(progressPeriod * 2, MilliSeconds(1))
                                                    : MicroSeconds(10);
        lastTickEvents = ev;
        Simulator::Schedule(progressPeriod, &State::ProgressTick, this);
    }
};

RdmaScenarioRunner::RdmaScenarioRunner(RdmaScenarioSpec spec)
    : m_spec(std::move(spec))
{
}

RdmaScenarioRunner::~RdmaScenarioRunner() = default;

void
RdmaScenarioRunner::SetOutputDirectory(const std::string& dir)
{
    m_outDir = dir;
}

void
RdmaScenarioRunner::SetProgress(Progress mode)
{
    m_progress = mode;
}

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
    std::vector<uint32_t> degree(n, 0);
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
            if (!isSwitch[end] && degree[end] > 1)
            {
                return Fmt("topology.links[%zu]: host %u has more than one link", i, end);
            }
        }
    }
    // The transport's settings and the load-balancing configuration are Rust's to validate
    // (rdma_lb_scenario::validate, LbConfig::Parse); what only the fabric knows is checked here.
    const RdmaScenarioTransport& t = spec.transport;
    const std::vector<RdmaScenarioEcnEntry> ecn =
        t.ecn.empty() ? RdmaScenarioSpec::DefaultEcnMap() : t.ecn;
    if (t.ecnEnabled && t.kind != RdmaNic::UET) // uet: thresholds in packets ([transport.uet])
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
            if (node >= n || isSwitch[node])
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
    return "";
}

void
RdmaScenarioRunner::ComputePairs()
{
    if (!m_state)
    {
        m_state = std::make_unique<State>();
        m_state->spec = &m_spec;
    }
    State& s = *m_state;
    const uint32_t n = m_spec.nodeCount;
    s.isSwitch.assign(n, false);
    for (uint32_t id : m_spec.switchIds)
    {
        if (id < n)
        {
            s.isSwitch[id] = true;
        }
    }
    s.hosts.clear();
    s.hostIndex.assign(n, UINT32_MAX);
    for (uint32_t i = 0; i < n; ++i)
    {
        if (!s.isSwitch[i])
        {
            s.hostIndex[i] = static_cast<uint32_t>(s.hosts.size());
            s.hosts.push_back(i);
        }
    }
    // Adjacency in link order: (neighbour, link index).
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> adj(n);
    for (uint32_t i = 0; i < m_spec.links.size(); ++i)
    {
        const RdmaScenarioLink& l = m_spec.links[i];
        if (l.a < n && l.b < n)
        {
            adj[l.a].emplace_back(l.b, i);
            adj[l.b].emplace_back(l.a, i);
        }
    }
    const uint64_t payload = m_spec.transport.payloadBytes;
    s.pairs.assign(s.hosts.size(), {});
    std::vector<PairInfo> info(n);
    std::vector<bool> seen(n);
    for (size_t hi = 0; hi < s.hosts.size(); ++hi)
    {
        const uint32_t h = s.hosts[hi];
        std::fill(seen.begin(), seen.end(), false);
        std::fill(info.begin(), info.end(), PairInfo{});
        std::deque<uint32_t> q;
        seen[h] = true;
        info[h].bwBps = NO_VALUE;
        q.push_back(h);
        while (!q.empty())
        {
            uint32_t m = q.front();
            q.pop_front();
            if (m != h && !s.isSwitch[m])
            {
                continue; // hosts are never transit (as in the reference)
            }
            for (const auto& [nb, li] : adj[m])
            {
                if (seen[nb])
                {
                    continue;
                }
                const RdmaScenarioLink& l = m_spec.links[li];
                seen[nb] = true;
                info[nb].delayNs = info[m].delayNs + l.delayNs;
                info[nb].txNs = info[m].txNs + payload * 8000000000ULL / l.rateBps;
                info[nb].bwBps = std::min(info[m].bwBps, l.rateBps);
                info[nb].hops = info[m].hops + 1;
                q.push_back(nb);
            }
        }
        std::vector<PairInfo>& row = s.pairs[hi];
        row.resize(s.hosts.size());
        for (size_t si = 0; si < s.hosts.size(); ++si)
        {
            uint32_t src = s.hosts[si];
            row[si] = (seen[src] && src != h) ? info[src] : PairInfo{};
        }
    }
}

uint64_t
RdmaScenarioRunner::GetPairRttNs(uint32_t src, uint32_t dst) const
{
    if (!m_state || src >= m_state->hostIndex.size() || dst >= m_state->hostIndex.size() ||
        m_state->hostIndex[src] == UINT32_MAX || m_state->hostIndex[dst] == UINT32_MAX)
    {
        return 0;
    }
    const PairInfo& p = m_state->pairs[m_state->hostIndex[dst]][m_state->hostIndex[src]];
    return p.bwBps == 0 ? 0 : 2 * p.delayNs + p.txNs;
}

uint64_t
RdmaScenarioRunner::GetPairBottleneckBps(uint32_t src, uint32_t dst) const
{
    if (!m_state || src >= m_state->hostIndex.size() || dst >= m_state->hostIndex.size() ||
        m_state->hostIndex[src] == UINT32_MAX || m_state->hostIndex[dst] == UINT32_MAX)
    {
        return 0;
    }
    return m_state->pairs[m_state->hostIndex[dst]][m_state->hostIndex[src]].bwBps;
}

uint64_t
RdmaScenarioRunner::GetIdealFctNs(uint32_t src, uint32_t dst, uint64_t size) const
{
    uint64_t bw = GetPairBottleneckBps(src, dst);
    if (bw == 0)
    {
        return 0;
    }
    const uint64_t payload = m_spec.transport.payloadBytes;
    const uint64_t packets = (size + payload - 1) / payload;
    const uint64_t header =
        m_spec.transport.kind == RdmaNic::UET ? m_spec.transport.uetHeaderBytes : IDEAL_HEADER_BYTES;
    const unsigned __int128 wireBits =
        static_cast<unsigned __int128>(size + packets * header) * 8000000000ULL;
    return GetPairRttNs(src, dst) + static_cast<uint64_t>(wireBits / bw);
}

bool
RdmaScenarioRunner::Run(std::string* error)
{
    auto fail = [&](const std::string& msg) {
        if (error)
        {
            *error = msg;
        }
        return false;
    };
    std::string bad = Validate(m_spec);
    if (!bad.empty())
    {
        return fail(bad);
    }
    m_state.reset();
    m_output = std::make_unique<RdmaScenarioOutput>();
    ComputePairs();
    State& s = *m_state;
    s.out = m_output.get();
    s.wallStart = std::chrono::steady_clock::now();
    const RdmaScenarioSpec& spec = m_spec;
    const size_t nFlows = spec.flows.size();

    // Reachability of every flow's pair (the BFS above only goes through switches).
    for (size_t i = 0; i < nFlows; ++i)
    {
        if (GetPairBottleneckBps(spec.flows[i].src, spec.flows[i].dst) == 0)
        {
            return fail(Fmt("flows[%zu]: host %u cannot reach host %u", i, spec.flows[i].src,
                            spec.flows[i].dst));
        }
    }
    std::string e = m_output->Open(m_outDir, spec.run);
    if (e.empty())
    {
        BuildFabric();
        ScheduleTraffic();
        Simulate();
        SummarizeCollectives();
        e = WriteOutputs();
    }
    return e.empty() ? true : fail(e);
}

/// The uet transport (rdma-uet.h): derives what the config leaves at 0 from the fabric, as the
/// REPS artifact's scripts do (htsim run_symmetric.py getBDP, main_uec.cpp), and sets the
/// NICs' and switches' attributes. Base RTT of a pair: 2 x its propagation + the fabric's
/// diameter (hops) x one data and one ACK packet's serialization at the host rate (htsim
/// base_rtt_bw_two_points; the window cap of each queue pair); the fabric's: the largest
/// (htsim network_max_unloaded_rtt). Queue: one BDP at the fabric's RTT in packets; ECN from
/// queue / 4 to 3 queue / 4 packets with probability rising to 1 (htsim
/// CompositeQueue::decide_ECN); RTO: the fabric's RTT + 4 queue drain times. An explicit
/// base_rtt replaces both the fabric's and every pair's.
void
RdmaScenarioRunner::ConfigureUet()
{
    State& s = *m_state;
    RdmaFabricHelper& fabric = *s.fabric;
    const RdmaScenarioTransport& t = m_spec.transport;
    const uint64_t wire = uint64_t(t.payloadBytes) + t.uetHeaderBytes;
    const uint64_t ackWire = std::max<uint64_t>(RdmaHeader::ACK_BYTES, t.uetHeaderBytes);
    uint64_t maxDelayNs = 0;
    uint64_t maxHops = 0;
    uint64_t hostBps = 0;
    for (const std::vector<PairInfo>& row : s.pairs)
    {
        for (const PairInfo& p : row)
        {
            if (p.bwBps == 0)
            {
                continue;
            }
            maxDelayNs = std::max(maxDelayNs, p.delayNs);
            maxHops = std::max<uint64_t>(maxHops, p.hops);
            hostBps = std::max(hostBps, p.bwBps);
        }
    }
    const uint64_t txNs = hostBps == 0 ? 0 : maxHops * (wire + ackWire) * 8000000000ULL / hostBps;
    const uint64_t rttNs = t.uetBaseRttNs != 0 ? t.uetBaseRttNs : 2 * maxDelayNs + txNs;
    s.uetPairRtt = UetPairRtt{&s.pairs, &s.hostIndex, txNs};
    const auto bdpBytes = static_cast<uint64_t>(static_cast<unsigned __int128>(rttNs) * hostBps /
                                                8000000000ULL);
    const uint64_t queue = t.uetQueuePackets != 0 ? t.uetQueuePackets : std::max<uint64_t>(1, bdpBytes / wire);
    const uint64_t kmin = t.uetEcnKminPackets != 0 ? t.uetEcnKminPackets : queue / 4;
    const uint64_t kmax = t.uetEcnKmaxPackets != 0 ? t.uetEcnKmaxPackets : queue * 3 / 4;
    const uint64_t rtoNs = t.uetRtoNs != 0 ? t.uetRtoNs
                                           : rttNs + (hostBps == 0 ? 0 : 4 * queue * wire * 8000000000ULL / hostBps);
    for (uint32_t h : fabric.GetHosts())
    {
        Ptr<RdmaNic> nic = fabric.GetNic(h);
        nic->SetAttribute("Transport", EnumValue(RdmaNic::UET));
        nic->SetAttribute("UetHeaderSize", UintegerValue(t.uetHeaderBytes));
        nic->SetAttribute("UetBaseRtt", TimeValue(NanoSeconds(static_cast<int64_t>(rttNs))));
        nic->SetAttribute("UetMaxWindowBdp", DoubleValue(t.uetMaxWindowBdp));
        nic->SetAttribute("UetInitialWindow", UintegerValue(t.uetInitialWindowPackets * wire));
        nic->SetAttribute("UetRto", TimeValue(NanoSeconds(static_cast<int64_t>(rtoNs))));
        if (t.uetBaseRttNs == 0)
        {
            // (The bound types must be the function's exactly: ns-3 casts the callback to them.)
            const UetPairRtt* table = &s.uetPairRtt;
            const uint32_t src = s.hostIndex.at(h);
            nic->SetUetBaseRttOf(MakeBoundCallback(&UetPairBaseRtt, table, src));
        }
    }
    for (uint32_t id : m_spec.switchIds)
    {
        Ptr<RdmaSwitch> sw = fabric.GetSwitch(id);
        sw->SetAttribute("PayloadSize", UintegerValue(t.payloadBytes));
        sw->SetAttribute("DataQueueLimit", UintegerValue(queue * wire));
        sw->SetAttribute("TrimEnabled", BooleanValue(t.uetTrimming));
        sw->SetAttribute("TrimmedSize", UintegerValue(t.uetHeaderBytes));
        sw->SetAttribute("EcnKmin", UintegerValue(kmin * wire));
        sw->SetAttribute("EcnKmax", UintegerValue(kmax * wire));
        sw->SetAttribute("EcnPmax", DoubleValue(1.0));
        // htsim's queues are per port; the shared buffer must never refuse first: no egress
        // dynamic threshold, and room for every port's full queue (plus headroom).
        const uint64_t room = sw->GetNPorts() * (queue * wire + (1u << 20));
        sw->GetMmu()->SetAttribute("EgressDynamicThreshold", BooleanValue(false));
        sw->GetMmu()->SetAttribute("BufferSize", UintegerValue(std::max(t.bufferBytes, room)));
    }
    std::ostringstream o;
    o << "{\"payload_bytes\": " << t.payloadBytes << ", \"header_bytes\": " << t.uetHeaderBytes
      << ", \"trimming\": " << (t.uetTrimming ? "true" : "false") << ", \"base_rtt_ns\": " << rttNs
      << ", \"base_rtt_per_pair\": " << (t.uetBaseRttNs == 0 ? "true" : "false")
      << ", \"queue_packets\": " << queue << ", \"ecn_kmin_packets\": " << kmin
      << ", \"ecn_kmax_packets\": " << kmax << ", \"max_window_bdp\": " << t.uetMaxWindowBdp
      << ", \"initial_window_packets\": " << t.uetInitialWindowPackets << ", \"rto_ns\": " << rtoNs
      << ", \"switch_hash\": \"" << (t.uetHtsimSwitches ? "htsim" : "five-tuple") << "\"}";
    s.uetSummary = o.str();
}

/// Creates the nodes and links, sets the transport attributes, fixes the random streams and
/// connects the trace sinks.
void
RdmaScenarioRunner::BuildFabric()
{
    State& s = *m_state;
    const RdmaScenarioSpec& spec = m_spec;
    const RdmaScenarioTransport& t = spec.transport;
    // ---- Fabric ----------------------------------------------------------------------------
    s.previousSeed = RngSeedManager::GetSeed();
    RngSeedManager::SetSeed(static_cast<uint32_t>(spec.run.seed));
    s.fabric = std::make_unique<RdmaFabricHelper>();
    RdmaFabricHelper& fabric = *s.fabric;
    fabric.SetLoadBalancer(spec.lb);
    if (t.quirks.glibcRand)
    {
        // Quirk glibc-rand: the reference's srand(RANDOM_SEED); LetFlow's, CONGA's and
        // ConWeave's switches then draw rand() % n from this one stream.
        fabric.GetLoadBalancer()->ShareReferenceRand(static_cast<uint32_t>(spec.run.seed));
    }
    if (t.uetHtsimSwitches)
    {
        fabric.UseHtsimSwitches(static_cast<uint32_t>(spec.run.seed),
                                static_cast<uint32_t>(spec.flows.size()));
    }
    fabric.CreateNodes(spec.nodeCount, spec.switchIds);
    // The reference gives every queue pair the largest RTT and BDP of the fabric (GLOBAL_T 1,
    // as the reference): HPCC's T and, with HAS_WIN, the window and HPCC's W.
    uint64_t maxRttNs = 0;
    uint64_t maxBdpBytes = 0;
    for (uint32_t a : s.hosts)
    {
        for (uint32_t b : s.hosts)
        {
            const uint64_t rtt = GetPairRttNs(a, b);
            const uint64_t bw = GetPairBottleneckBps(a, b);
            if (a == b || rtt == 0 || bw == 0)
            {
                continue;
            }
            maxRttNs = std::max(maxRttNs, rtt);
            const auto bdp = static_cast<uint64_t>(static_cast<unsigned __int128>(rtt) * bw /
                                                   1000000000 / 8);
            maxBdpBytes = std::max(maxBdpBytes, bdp);
        }
    }
    for (uint32_t h : fabric.GetHosts())
    {
        Ptr<RdmaNic> nic = fabric.GetNic(h);
        nic->SetAttribute("Window", UintegerValue(t.hasWin ? maxBdpBytes : 0));
        nic->SetAttribute("VarWin", BooleanValue(t.varWin));
        if (maxRttNs != 0)
        {
            nic->SetAttribute("BaseRtt", TimeValue(NanoSeconds(static_cast<int64_t>(maxRttNs))));
        }
        nic->SetAttribute("TargetUtil", DoubleValue(t.uTarget));
        nic->SetAttribute("MiThresh", UintegerValue(t.miThresh));
        nic->SetAttribute("FastReact", BooleanValue(t.fastReact));
        nic->SetAttribute("MultiRate", BooleanValue(t.multiRate));
        nic->SetAttribute("SampleFeedback", BooleanValue(t.sampleFeedback));
        nic->SetAttribute("IntMulti", UintegerValue(t.intMulti));
        nic->SetAttribute("DctcpRateAI", DataRateValue(DataRate(t.dctcpRateAiBps)));
        nic->SetAttribute("PayloadSize", UintegerValue(t.payloadBytes));
        nic->SetAttribute("LossRecovery", EnumValue(t.recovery));
        nic->SetAttribute("CcMode", StringValue(RdmaNic::GetCcModeName(t.cc)));
        nic->SetAttribute("RateBound", BooleanValue(t.rateBound));
        nic->SetAttribute("L2AckInterval", UintegerValue(t.ackIntervalPackets));
        nic->SetAttribute("L2ChunkSize", UintegerValue(t.l2ChunkBytes));
        nic->SetAttribute("AckMilestoneFix", BooleanValue(t.ackMilestoneFix));
        nic->SetAttribute("NackCarriesCnp", BooleanValue(t.nackCarriesCnp));
        nic->SetAttribute("NackInterval", TimeValue(NanoSeconds(t.nackIntervalNs)));
        nic->SetAttribute("L2Timeout", TimeValue(NanoSeconds(t.l2TimeoutNs)));
        nic->SetAttribute("IrnRtoLow", TimeValue(NanoSeconds(t.irnRtoLowNs)));
        nic->SetAttribute("IrnRtoHigh", TimeValue(NanoSeconds(t.irnRtoHighNs)));
        nic->SetAttribute("IrnBdp", UintegerValue(t.irnBdpBytes));
        nic->SetAttribute("IrnOooThreshold", UintegerValue(t.irnOooThreshold));
        nic->SetAttribute("AlphaResumeInterval", TimeValue(NanoSeconds(t.alphaResumeIntervalNs)));
        nic->SetAttribute("RateDecreaseInterval", TimeValue(NanoSeconds(t.rateDecreaseIntervalNs)));
        nic->SetAttribute("RpTimer", TimeValue(NanoSeconds(t.rpTimerNs)));
        nic->SetAttribute("FastRecoveryTimes", UintegerValue(t.fastRecoveryTimes));
        nic->SetAttribute("EwmaGain", DoubleValue(t.ewmaGain));
        nic->SetAttribute("RateAI", DataRateValue(DataRate(t.rateAiBps)));
        nic->SetAttribute("RateHAI", DataRateValue(DataRate(t.rateHaiBps)));
        nic->SetAttribute("MinRate", DataRateValue(DataRate(t.minRateBps)));
        nic->SetAttribute("ClampTargetRate", BooleanValue(t.clampTargetRate));
        nic->SetAttribute("RateOnFirstCnp", DoubleValue(t.rateOnFirstCnp));
        nic->SetAttribute("TimeTruncation", BooleanValue(t.quirks.timeTruncation));
        nic->SetAttribute("PacingWakeupQuirk", BooleanValue(t.quirks.pacingWakeup));
        nic->SetAttribute("IrnReferenceSender", BooleanValue(t.quirks.irnSender));
        nic->SetAttribute("EventOrderQuirk", BooleanValue(t.quirks.eventOrder));
    }
    for (uint32_t id : spec.switchIds)
    {
        Ptr<RdmaSwitch> sw = fabric.GetSwitch(id);
        sw->SetAttribute("PfcEnabled", BooleanValue(t.pfcEnabled));
        sw->SetAttribute("PauseTime", TimeValue(NanoSeconds(t.pauseTimeNs)));
        sw->SetAttribute("EcnEnabled", BooleanValue(t.ecnEnabled));
        sw->SetAttribute("IntEnabled", BooleanValue(t.cc == RdmaNic::CC_HPCC));
        sw->SetAttribute("IntMulti", UintegerValue(t.intMulti));
        sw->SetAttribute("WithdrawFailedPorts", BooleanValue(t.withdrawFailedPorts));
        sw->SetAttribute("EcnSharedStream", BooleanValue(t.quirks.ecnSharedStream));
        sw->GetMmu()->SetAttribute("BufferSize", UintegerValue(t.bufferBytes));
        sw->GetMmu()->SetAttribute("HeadroomSumQuirk", BooleanValue(t.headroomSumQuirk));
    }
    std::vector<Ptr<RateErrorModel>> errorModels;
    for (const RdmaScenarioLink& l : spec.links)
    {
        Ptr<RdmaChannel> ch = fabric.Link(l.a, l.b, DataRate(l.rateBps),
                                          NanoSeconds(static_cast<int64_t>(l.delayNs)));
        for (size_t d = 0; d < ch->GetNDevices(); ++d)
        {
            ch->GetDevice(d)->SetAttribute("TimeTruncation",
                                           BooleanValue(t.quirks.timeTruncation));
        }
        ch->TraceConnectWithoutContext("Loss", MakeBoundCallback(&State::OnLoss, &s));
        if (l.errorRate > 0)
        {
            for (size_t d = 0; d < ch->GetNDevices(); ++d)
            {
                Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
                em->SetAttribute("ErrorRate", DoubleValue(l.errorRate));
                em->SetAttribute("ErrorUnit", EnumValue(RateErrorModel::ERROR_UNIT_PACKET));
                Ptr<NetDevice> dev = ch->GetDevice(d);
                dev->SetAttribute("ReceiveErrorModel", PointerValue(em));
                dev->TraceConnectWithoutContext("RxDrop", MakeBoundCallback(&State::OnErrorDrop, &s));
                errorModels.push_back(em);
            }
        }
    }
    for (const RdmaScenarioPortRate& pr : spec.portRates)
    {
        fabric.SetPortRate(pr.node, pr.peer, DataRate(pr.rateBps), pr.queueScale);
    }
    // ECN thresholds by port rate (KMIN_MAP / KMAX_MAP / PMAX_MAP). The switch holds one set:
    // that of its fastest port (the reference sets them per port; equal on uniform switches).
    const std::vector<RdmaScenarioEcnEntry> ecn =
        t.ecn.empty() ? RdmaScenarioSpec::DefaultEcnMap() : t.ecn;
    for (uint32_t id : spec.switchIds)
    {
        Ptr<RdmaSwitch> sw = fabric.GetSwitch(id);
        uint64_t fastest = 0;
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            fastest = std::max(fastest, sw->GetPort(p)->GetDataRate().GetBitRate());
        }
        for (const RdmaScenarioEcnEntry& e : ecn)
        {
            if (e.rateBps == fastest)
            {
                sw->SetAttribute("EcnKmin", UintegerValue(e.kminBytes));
                sw->SetAttribute("EcnKmax", UintegerValue(e.kmaxBytes));
                sw->SetAttribute("EcnPmax", DoubleValue(e.pmax));
            }
        }
    }
    if (t.kind == RdmaNic::UET)
    {
        ConfigureUet();
    }
    fabric.Finish();
    for (const std::string& note : fabric.GetNotes())
    {
        std::cerr << "note: " << note << std::endl;
        m_spec.notes.push_back(note);
    }
    // Host algorithms that learn per packet from ECN/RTT echoes are starved by transports that
    // do not answer every arrival. Say so, and name the key that fixes it.
    // The sprayers (LbConfig::SpraysOnFeedback: reps, whack-a-mole) reorder by design:
    // Go-Back-N discards what arrives out of order and NIC-SR leaves it unanswered. The
    // one-path-at-a-time schemes (LbConfig::MovesOnFeedback: hopper, flowbender) rarely
    // reorder; they starve only when Go-Back-N's ACKs are thinned to milestones.
    // (The uet transport answers every arrival.)
    const bool sprayer = t.kind == RdmaNic::ROCE && spec.lb->SpraysOnFeedback();
    const bool onePath = t.kind == RdmaNic::ROCE && spec.lb->MovesOnFeedback();
    const bool thinAcks = t.ackMilestoneFix && t.ackIntervalPackets > 1;
    std::string why;
    if (sprayer && t.recovery == RdmaNic::GBN)
    {
        why = "Go-Back-N discards every out-of-order packet unanswered (and with "
              "AckMilestoneFix acknowledges only at milestones), so the ECN marks and RTTs of "
              "most sprayed packets never reach it";
    }
    else if (sprayer && t.recovery == RdmaNic::NIC_SR)
    {
        why = "NIC-SR answers an out-of-order arrival only when it is ECN-marked (plus one NACK "
              "per expected PSN), so most sprayed packets give it no ECN or RTT feedback";
    }
    else if (onePath && t.recovery == RdmaNic::GBN && thinAcks)
    {
        why = "Go-Back-N acknowledges only every " + std::to_string(t.ackIntervalPackets) +
              " packets (L2AckInterval with AckMilestoneFix), so it sees that share of the "
              "ECN marks and RTTs";
    }
    if (!why.empty())
    {
        const std::string note = "warning: " + spec.lb->GetAlgorithmName() +
                                 " runs on recovery = \"" + RdmaNic::GetLossRecoveryName(t.recovery) +
                                 "\", which starves it of signal: " + why +
                                 "; set [transport] recovery = \"irn\" (--recovery=irn), "
                                 "which answers every arrival";
        std::cerr << note << std::endl;
        m_spec.notes.push_back(note);
    }
    int64_t stream = fabric.AssignStreams(0);
    for (Ptr<RateErrorModel> em : errorModels)
    {
        stream += em->AssignStreams(stream);
    }

    // ---- Traces ----------------------------------------------------------------------------
    for (uint32_t h : fabric.GetHosts())
    {
        Ptr<RdmaNic> nic = fabric.GetNic(h);
        nic->TraceConnectWithoutContext("FlowRecord", MakeCallback(&State::OnRecord, &s));
        nic->TraceConnectWithoutContext("FlowDelivered", MakeCallback(&State::OnDelivered, &s));
    }
    if (spec.run.rateTraceNs != 0)
    {
        std::vector<Ptr<RdmaNic>> nics;
        for (uint32_t h : fabric.GetHosts())
        {
            nics.push_back(fabric.GetNic(h));
        }
        s.rateTrace.Start(nics,
                          NanoSeconds(static_cast<int64_t>(spec.run.flowgenStartNs)),
                          NanoSeconds(static_cast<int64_t>(spec.run.rateTraceNs)),
                          m_output->Rate(),
                          m_output->Retx());
    }
    for (uint32_t i = 0; i < fabric.GetNNodes(); ++i)
    {
        Ptr<Node> node = fabric.GetNode(i);
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            // Ports as the reference numbers them (1-based; its port 0 is a loopback).
            NS_ABORT_MSG_IF(d + 1 > 0xffff, "rdma-lb: more than 65535 ports on node " << i);
            const uint32_t typePort = (fabric.IsSwitch(i) ? 1U : 0U) << 16 | (d + 1);
            node->GetDevice(d)->TraceConnectWithoutContext(
                "PfcRx",
                MakeBoundCallback(&State::OnPfcRx, &s, i, typePort));
        }
    }
}

/// Schedules the flows (ordinary ones chained by start time, dependent ones from the delivery
/// sink), the link events and the monitors.
void
RdmaScenarioRunner::ScheduleTraffic()
{
    State& s = *m_state;
    const RdmaScenarioSpec& spec = m_spec;
    RdmaFabricHelper& fabric = *s.fabric;
    const size_t nFlows = spec.flows.size();
    // ---- Flows -----------------------------------------------------------------------------
    s.results.assign(nFlows, {});
    s.dependents.assign(nFlows, {});
    s.pending.assign(nFlows, 0);
    std::map<uint32_t, uint16_t> nextSport;
    std::map<uint32_t, uint16_t> nextDport;
    for (size_t i = 0; i < nFlows; ++i)
    {
        const RdmaScenarioFlow& f = spec.flows[i];
        RdmaScenarioFlowResult& r = s.results[i];
        r.id = f.id;
        r.src = f.src;
        r.dst = f.dst;
        r.sizeBytes = f.sizeBytes;
        r.sport = nextSport.emplace(f.src, 10000).first->second++;
        r.dport = nextDport.emplace(f.dst, 100).first->second++;
        r.idealNs = GetIdealFctNs(f.src, f.dst, f.sizeBytes);
        std::set<uint32_t> preds(f.after.begin(), f.after.end());
        s.pending[i] = static_cast<uint32_t>(preds.size());
        for (uint32_t p : preds)
        {
            s.dependents[p].push_back(static_cast<uint32_t>(i));
        }
        if (preds.empty())
        {
            s.ordinary.push_back(static_cast<uint32_t>(i));
        }
    }
    std::stable_sort(s.ordinary.begin(), s.ordinary.end(), [&](uint32_t a, uint32_t b) {
        return spec.flows[a].startNs < spec.flows[b].startNs;
    });
    s.ScheduleNextOrdinary();
    for (const RdmaScenarioLinkEvent& e : spec.run.linkEvents)
    {
        const Time at = NanoSeconds(static_cast<int64_t>(e.atNs));
        if (e.byPort)
        {
            fabric.ScheduleSwitchPortState(e.a, e.port, at, e.down);
        }
        else
        {
            fabric.ScheduleLinkState(e.a, e.b, at, e.down);
        }
    }
    s.collectives.clear();
    for (const RdmaScenarioCollective& c : spec.collectives)
    {
        RdmaScenarioCollectiveResult cr;
        cr.group = c.group;
        cr.kind = c.kind;
        s.collectives.push_back(cr);
    }

    if (spec.run.queueTrace)
    {
        // ToRs: switches with a host link (as the reference). Samples from FLOWGEN_START_TIME every
        // monitor interval until FLOWGEN_STOP_TIME + 50 ms, as the reference's monitors.
        std::set<uint32_t> tors;
        for (const RdmaScenarioLink& l : spec.links)
        {
            if (s.isSwitch[l.a] != s.isSwitch[l.b])
            {
                tors.insert(s.isSwitch[l.a] ? l.a : l.b);
            }
        }
        s.tors.assign(tors.begin(), tors.end());
        s.monitorPeriod = NanoSeconds(static_cast<int64_t>(std::max<uint64_t>(spec.run.monitorIntervalNs, 1)));
        s.monitorEnd = NanoSeconds(static_cast<int64_t>(spec.run.flowgenStopNs)) + MilliSeconds(50);
        Time first = NanoSeconds(static_cast<int64_t>(spec.run.flowgenStartNs));
        if (first <= s.monitorEnd)
        {
            Simulator::Schedule(first, &State::MonitorTick, &s);
        }
    }
}

/// Runs the simulation to completion or the hard stop, reads the switch counters, destroys it.
void
RdmaScenarioRunner::Simulate()
{
    State& s = *m_state;
    const RdmaScenarioSpec& spec = m_spec;
    RdmaFabricHelper& fabric = *s.fabric;
    const size_t nFlows = spec.flows.size();
    // ---- Run ---------------------------------------------------------------------------------
    s.endEstimateNs = spec.run.flowgenStopNs;
    for (uint32_t id : s.ordinary)
    {
        s.endEstimateNs = std::max(s.endEstimateNs, spec.flows[id].startNs);
    }
    s.progress = m_progress == Progress::ON ||
                 (m_progress == Progress::AUTO && isatty(fileno(stderr)) != 0);
    if (s.progress && nFlows > 0)
    {
        s.progressPeriod = MicroSeconds(10);
        Simulator::Schedule(s.progressPeriod, &State::ProgressTick, &s);
    }
    Simulator::Stop(NanoSeconds(static_cast<int64_t>(spec.run.hardStopNs)));
    if (nFlows == 0)
    {
        Simulator::Stop();
    }
    Simulator::Run();
    s.events = Simulator::GetEventCount();
    s.simTimeNs = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
    if (s.progressPrinted)
    {
        s.PrintProgress(true);
    }
    // Flows still running at the stop: their counters so far, so that summary.json's totals
    // cover every started flow (fct.txt lists completed flows only, flows.csv every flow). A running
    // flow's receiver-side NACK count is only copied into its record at completion.
    for (RdmaScenarioFlowResult& r : s.results)
    {
        if (r.started && !r.completed)
        {
            RdmaFlowRecord rec = fabric.GetNic(r.src)->GetFlowRecord(r.id);
            if (rec.flowId == r.id)
            {
                r.retxPkts = rec.retxPkts;
                r.nacks = rec.nacksSent;
                r.cnps = rec.cnpsRx;
                r.timeouts = rec.timeouts;
                r.rateCuts = rec.rateCuts;
                r.pathSwitches = rec.pathSwitches;
                r.probes = rec.probes;
            }
        }
    }
    for (uint32_t h : fabric.GetHosts())
    {
        s.counters.cnpsSent += fabric.GetNic(h)->GetCnpsSent();
    }
    for (uint32_t id : spec.switchIds)
    {
        Ptr<RdmaSwitch> sw = fabric.GetSwitch(id);
        s.counters.ecnMarks += sw->GetTotalEcnMarks();
        s.counters.mmuDrops += sw->GetTotalDrops();
        s.counters.forwarded += sw->GetForwardedPackets();
        s.counters.trims += sw->GetTotalTrims();
        s.counters.pfcPausesSent += sw->GetTotalPausesSent();
        for (const auto& [name, value] : sw->GetLbCounters())
        {
            s.lbCounters[name] += value;
        }
    }
    Simulator::Destroy();
    s.fabric.reset();
    RngSeedManager::SetSeed(s.previousSeed);
    s.wallSeconds = s.WallNow();
}

/// Per collective: first actual start .. last delivery, complete only if all were delivered.
void
RdmaScenarioRunner::SummarizeCollectives()
{
    State& s = *m_state;
    const RdmaScenarioSpec& spec = m_spec;
    // Collectives: first start .. last delivery, complete only if every flow was delivered.
    for (size_t i = 0; i < spec.collectives.size(); ++i)
    {
        RdmaScenarioCollectiveResult& cr = s.collectives[i];
        cr.complete = true;
        cr.startNs = NO_VALUE;
        cr.finishNs = 0;
        for (uint32_t id : spec.collectives[i].flowIds)
        {
            const RdmaScenarioFlowResult& r = s.results[id];
            if (!r.delivered)
            {
                cr.complete = false;
                continue;
            }
            cr.startNs = std::min(cr.startNs, r.startNs);
            cr.finishNs = std::max(cr.finishNs, r.deliveredNs);
        }
        if (!cr.complete)
        {
            cr.startNs = 0;
            cr.finishNs = 0;
        }
    }
}

const std::vector<RdmaScenarioFlowResult>&
RdmaScenarioRunner::GetFlowResults() const
{
    static const std::vector<RdmaScenarioFlowResult> none;
    return m_state ? m_state->results : none;
}

const std::vector<RdmaScenarioCollectiveResult>&
RdmaScenarioRunner::GetCollectiveResults() const
{
    static const std::vector<RdmaScenarioCollectiveResult> none;
    return m_state ? m_state->collectives : none;
}

uint32_t
RdmaScenarioRunner::GetCompletedFlows() const
{
    return m_state ? m_state->completed : 0;
}

std::map<std::string, uint64_t>
RdmaScenarioRunner::GetLbCounters() const
{
    return m_state ? m_state->lbCounters : std::map<std::string, uint64_t>{};
}

RdmaScenarioCounters
RdmaScenarioRunner::GetCounters() const
{
    return m_state ? m_state->counters : RdmaScenarioCounters{};
}

const std::string&
RdmaScenarioRunner::GetUetSummary() const
{
    static const std::string none;
    return m_state ? m_state->uetSummary : none;
}

uint64_t
RdmaScenarioRunner::GetEventCount() const
{
    return m_state ? m_state->events : 0;
}

uint64_t
RdmaScenarioRunner::GetSimTimeNs() const
{
    return m_state ? m_state->simTimeNs : 0;
}

double
RdmaScenarioRunner::GetWallTimeSeconds() const
{
    return m_state ? m_state->wallSeconds : 0;
}

} // namespace ns3
