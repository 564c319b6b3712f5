/*
 * rdma-lb: RdmaScenarioRunner (see rdma-scenario.h): builds and runs a scenario's fabric. Its
 * checks of the spec are rdma-scenario-validate.cc's, its run-time state (trace sinks, flow
 * starts, monitors, progress) rdma-scenario-state.h's, the output files and traces
 * rdma-scenario-output.cc's.
 */
#include "rdma-scenario.h"

#include "rdma-fabric-helper.h"
#include "rdma-rate-trace.h"
#include "rdma-scenario-output.h"
#include "rdma-scenario-state.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/error-model.h"
#include "ns3/log.h"
#include "ns3/node-list.h"
#include "ns3/object-factory.h"
#include "ns3/pointer.h"
#include "ns3/rdma-channel.h"
#include "ns3/rdma-header.h"
#include "ns3/rdma-lb-bridge.h"
#include "ns3/rdma-net-device.h"
#include "ns3/rdma-nic.h"
#include "ns3/rdma-recovery-gbn.h"
#include "ns3/rdma-recovery-nicsr.h"
#include "ns3/rdma-recovery-uet.h"
#include "ns3/rdma-switch.h"
#include "ns3/rdma-wheel-scheduler.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#ifdef NS3_MPI
#include "ns3/mpi-interface.h"

#include <mpi.h>
#endif

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
    const PairInfo p = t->pairs->Get((*t->hostIndex)[dst], src);
    return p.bwBps == 0 ? Time(0) : NanoSeconds(static_cast<int64_t>(2 * p.delayNs + t->txNs));
}

} // namespace

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
    const uint64_t payload = m_spec.transport.PayloadBytes();
    std::vector<PairInfo> info(n);
    std::vector<bool> seen(n);
    // The reference's BFS from node `start` (its per-pair values: the first path found, in
    // link order; hosts other than the start are never transit).
    auto bfs = [&](uint32_t start) {
        std::fill(seen.begin(), seen.end(), false);
        std::fill(info.begin(), info.end(), PairInfo{});
        std::deque<uint32_t> q;
        seen[start] = true;
        info[start].bwBps = NO_VALUE;
        q.push_back(start);
        while (!q.empty())
        {
            uint32_t m = q.front();
            q.pop_front();
            if (m != start && !s.isSwitch[m])
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
    };
    auto tooLong = [](uint32_t src, uint32_t dst, const PairInfo& p) {
        return Fmt("the path from host %u to host %u: a one-way delay or serialisation "
                   "sum of %llu ns or %u hops is beyond what the pair table holds "
                   "(4.29 s, 65,535 hops)",
                   src, dst,
                   static_cast<unsigned long long>(std::max(p.delayNs, p.txNs)),
                   p.hops);
    };
    // Factored when every host has one link, to a switch (PairTable): one BFS per such switch.
    const bool factored = std::all_of(s.hosts.begin(), s.hosts.end(), [&](uint32_t h) {
        return adj[h].size() == 1 && s.isSwitch[adj[h][0].first];
    });
    if (factored)
    {
        std::vector<uint32_t> switches; // slot -> node, in order of first host
        std::vector<uint32_t> slotOf(n, UINT32_MAX);
        for (uint32_t h : s.hosts)
        {
            const uint32_t sw = adj[h][0].first;
            if (slotOf[sw] == UINT32_MAX)
            {
                slotOf[sw] = static_cast<uint32_t>(switches.size());
                switches.push_back(sw);
            }
        }
        s.pairs.ResetFactored(s.hosts.size(), switches.size());
        PairInfo bound; // twice the largest link values: with a switch pair's, what no pair exceeds
        for (size_t hi = 0; hi < s.hosts.size(); ++hi)
        {
            const auto& [sw, li] = adj[s.hosts[hi]][0];
            const RdmaScenarioLink& l = m_spec.links[li];
            const PairInfo link{l.delayNs, payload * 8000000000ULL / l.rateBps, l.rateBps, 1};
            s.pairs.SetHostLink(hi, slotOf[sw], link);
            bound.delayNs = std::max(bound.delayNs, 2 * link.delayNs);
            bound.txNs = std::max(bound.txNs, 2 * link.txNs);
        }
        PairInfo widest;
        for (size_t d = 0; d < switches.size(); ++d)
        {
            bfs(switches[d]);
            for (size_t from = 0; from < switches.size(); ++from)
            {
                if (seen[switches[from]])
                {
                    const PairInfo& p = info[switches[from]];
                    s.pairs.SetSwitchPair(d, from, p);
                    widest.delayNs = std::max(widest.delayNs, p.delayNs);
                    widest.txNs = std::max(widest.txNs, p.txNs);
                    widest.hops = std::max(widest.hops, p.hops);
                }
            }
        }
        // The limits of the full form hold here too (a delay or serialisation sum below
        // 4.29 s, 65,535 hops): only when the bound exceeds them, find the first pair that does.
        if (bound.delayNs + widest.delayNs > UINT32_MAX || bound.txNs + widest.txNs > UINT32_MAX ||
            widest.hops + 2 > UINT16_MAX)
        {
            for (size_t hi = 0; hi < s.hosts.size(); ++hi)
            {
                for (size_t si = 0; si < s.hosts.size(); ++si)
                {
                    const PairInfo p = s.pairs.Get(hi, si);
                    if (p.bwBps != 0 &&
                        (p.delayNs > UINT32_MAX || p.txNs > UINT32_MAX || p.hops > UINT16_MAX))
                    {
                        return tooLong(s.hosts[si], s.hosts[hi], p);
                    }
                }
            }
        }
        return "";
    }
    s.pairs.Reset(s.hosts.size());
    for (size_t hi = 0; hi < s.hosts.size(); ++hi)
    {
        const uint32_t h = s.hosts[hi];
        bfs(h);
        for (size_t si = 0; si < s.hosts.size(); ++si)
        {
            uint32_t src = s.hosts[si];
            if (seen[src] && src != h && !s.pairs.Set(hi, si, info[src]))
            {
                return tooLong(src, h, info[src]);
            }
        }
    }
    return "";
}

uint64_t
RdmaScenarioRunner::GetPairRttNs(uint32_t src, uint32_t dst) const
{
    if (!m_state || src >= m_state->hostIndex.size() || dst >= m_state->hostIndex.size() ||
        m_state->hostIndex[src] == UINT32_MAX || m_state->hostIndex[dst] == UINT32_MAX)
    {
        return 0;
    }
    const PairInfo p = m_state->pairs.Get(m_state->hostIndex[dst], m_state->hostIndex[src]);
    return p.bwBps == 0 ? 0 : p.RttNs();
}

uint64_t
RdmaScenarioRunner::GetPairBottleneckBps(uint32_t src, uint32_t dst) const
{
    if (!m_state || src >= m_state->hostIndex.size() || dst >= m_state->hostIndex.size() ||
        m_state->hostIndex[src] == UINT32_MAX || m_state->hostIndex[dst] == UINT32_MAX)
    {
        return 0;
    }
    return m_state->pairs.Get(m_state->hostIndex[dst], m_state->hostIndex[src]).bwBps;
}

uint64_t
RdmaScenarioRunner::GetIdealFctNs(uint32_t src, uint32_t dst, uint64_t size) const
{
    uint64_t bw = GetPairBottleneckBps(src, dst);
    if (bw == 0)
    {
        return 0;
    }
    const uint64_t payload = m_spec.transport.PayloadBytes();
    const uint64_t packets = (size + payload - 1) / payload;
    const uint64_t header =
        m_spec.transport.Uet() ? m_spec.transport.UetHeaderBytes() : IDEAL_HEADER_BYTES;
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
    const auto wallStart = std::chrono::steady_clock::now();
    bad = ComputePairs();
    if (!bad.empty())
    {
        return fail(bad);
    }
    State& s = *m_state;
    s.out = m_output.get();
    s.wallStart = wallStart;
    const RdmaScenarioSpec& spec = m_spec;
    const size_t nFlows = spec.flows.size();

    // Reachability of every flow's pair (the BFS above only goes through switches). An
    // endpoint switch's NIC reaches only the hosts linked to it (RdmaFabricHelper::Finish).
    std::vector<bool> isEndpoint(spec.nodeCount, false);
    for (uint32_t e : spec.endpointSwitchIds)
    {
        isEndpoint[e] = true;
    }
    std::set<std::pair<uint32_t, uint32_t>> endpointLinks; // (endpoint switch, peer)
    for (const RdmaScenarioLink& l : spec.links)
    {
        if (isEndpoint[l.a] || isEndpoint[l.b])
        {
            endpointLinks.emplace(isEndpoint[l.a] ? l.a : l.b, isEndpoint[l.a] ? l.b : l.a);
        }
    }
    for (size_t i = 0; i < nFlows; ++i)
    {
        const RdmaScenarioFlow& f = spec.flows[i];
        if (isEndpoint[f.src] || isEndpoint[f.dst])
        {
            const bool linked = isEndpoint[f.src] ? endpointLinks.count({f.src, f.dst}) != 0
                                                  : endpointLinks.count({f.dst, f.src}) != 0;
            if (!linked)
            {
                return fail(Fmt("flows[%zu]: %u and %u are not linked (an endpoint switch's NIC "
                                "reaches only the hosts linked to it)",
                                i,
                                f.src,
                                f.dst));
            }
            continue;
        }
        if (GetPairBottleneckBps(spec.flows[i].src, spec.flows[i].dst) == 0)
        {
            return fail(Fmt("flows[%zu]: host %u cannot reach host %u", i, spec.flows[i].src,
                            spec.flows[i].dst));
        }
    }
#ifdef NS3_MPI
    if (spec.run.ranks > 1)
    {
        s.myRank = MpiInterface::GetSystemId();
        s.rankOf = PartitionNodes(spec, spec.run.ranks);
    }
#endif
    // Several ranks: rank 0 writes the merged outputs, the others only send theirs.
    std::string e =
        s.myRank == 0
            ? m_output->Open(m_outDir,
                             spec.run,
                             spec.simaiReport ? spec.simaiReport->GetFileName() : std::string())
            : std::string();
#ifdef NS3_MPI
    if (!e.empty() && spec.run.ranks > 1)
    {
        // The other ranks would wait for rank 0 at the first synchronisation.
        std::cerr << "rdma-lb-scenario: " << e << std::endl;
        MPI_Abort(MpiInterface::GetCommunicator(), 1);
    }
#endif
    if (e.empty())
    {
        BuildFabric();
        ScheduleTraffic();
        s.setupWallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart)
                           .count();
        Simulate();
        if (spec.run.ranks > 1)
        {
            MergeRanks();
        }
        SummarizeCollectives();
        if (s.myRank == 0)
        {
            e = WriteOutputs();
        }
    }
    return e.empty() ? true : fail(e);
}

/// The uet transport (rdma-uet.h): the settings the config leaves at 0 derived from the fabric
/// (RdmaUetFabric::Derive, rdma-uet-fabric.h, the one place of the rules) and set on the NICs
/// and switches. The fabric's shape: the largest one-way propagation, hop count and bottleneck
/// rate over the host pairs. With a derived base RTT each NIC's window cap reads its pair's
/// own (2 x its propagation + the fabric's serialization part; htsim base_rtt_bw_two_points).
void
RdmaScenarioRunner::ConfigureUet()
{
    State& s = *m_state;
    RdmaFabricHelper& fabric = *s.fabric;
    const RdmaScenarioTransport& t = m_spec.transport;
    RdmaUetFabricShape shape;
    shape.payloadBytes = t.PayloadBytes();
    shape.headerBytes = t.UetHeaderBytes();
    s.pairs.ForEachPairValue([&](const PairInfo& p) {
        shape.maxDelayNs = std::max(shape.maxDelayNs, p.delayNs);
        shape.maxHops = std::max<uint64_t>(shape.maxHops, p.hops);
        shape.hostBps = std::max(shape.hostBps, p.bwBps);
    });
    const RdmaUetDerived d = s.uetFabric->Derive(shape);
    s.uetPairRtt = UetPairRtt{&s.pairs, &s.hostIndex, d.txNs};
    for (uint32_t h : fabric.GetNicNodes())
    {
        Ptr<RdmaNic> nic = fabric.GetNic(h);
        RdmaUetFabric::ConfigureNic(nic, d);
        if (d.baseRttPerPair)
        {
            // (The bound types must be the function's exactly: ns-3 casts the callback to them.)
            const UetPairRtt* table = &s.uetPairRtt;
            const uint32_t src = s.hostIndex.at(h);
            if (src != UINT32_MAX) // not an endpoint switch
            {
                nic->SetUetBaseRttOf(MakeBoundCallback(&UetPairBaseRtt, table, src));
            }
        }
    }
    for (uint32_t id : m_spec.switchIds)
    {
        RdmaUetFabric::ConfigureSwitch(fabric.GetSwitch(id), d, t.PayloadBytes(), t.BufferBytes());
    }
    const bool trimming = t.Get("ns3::RdmaSwitch", "TrimEnabled").uint != 0;
    std::ostringstream o;
    o << "{\"payload_bytes\": " << t.PayloadBytes() << ", \"header_bytes\": " << shape.headerBytes
      << ", \"trimming\": " << (trimming ? "true" : "false") << ", \"base_rtt_ns\": " << d.baseRttNs
      << ", \"base_rtt_per_pair\": " << (d.baseRttPerPair ? "true" : "false")
      << ", \"queue_packets\": " << d.queuePackets << ", \"ecn_kmin_packets\": " << d.ecnKminPackets
      << ", \"ecn_kmax_packets\": " << d.ecnKmaxPackets << ", \"sizing_rate_bps\": " << d.sizingBps
      << ", \"max_window_bdp\": "
      << t.Get("ns3::RdmaUetRecovery", "MaxWindowBdp").real << ", \"initial_window_packets\": "
      << t.Get("ns3::RdmaUetRecovery", "InitialWindowPackets").uint << ", \"rto_ns\": " << d.rtoNs
      << ", \"switch_hash\": \"" << (t.uetHtsimSwitches ? "htsim" : "five-tuple") << "\"}";
    s.uetSummary = o.str();
}

/// Creates the nodes and links, sets the transport attributes, fixes the random streams and
/// connects the trace sinks, one role per step.
void
RdmaScenarioRunner::BuildFabric()
{
    CreateFabric();
    ConfigureNodes();
    ApplyTransportTable();
    CreateLinks();
    ConfigurePortsAndEcn();
    if (m_spec.transport.Uet())
    {
        ConfigureUet();
    }
    m_state->fabric->Finish();
#ifdef NS3_MPI
    if (m_spec.run.ranks > 1)
    {
        m_state->fabric->EnableRemoteLinks();
    }
#endif
    for (const std::string& note : m_state->fabric->GetNotes())
    {
        std::cerr << "note: " << note << std::endl;
        m_spec.notes.push_back(note);
    }
    WarnStarvedBalancer();
    AssignStreams();
    ConnectTraces();
}

/// The fabric helper with the run's seed and load balancer, and its nodes.
void
RdmaScenarioRunner::CreateFabric()
{
    State& s = *m_state;
    const RdmaScenarioSpec& spec = m_spec;
    const RdmaScenarioTransport& t = spec.transport;
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
    fabric.CreateNodes(spec.nodeCount, spec.switchIds, s.rankOf);
    fabric.SetEndpointSwitches(spec.endpointSwitchIds);
}

/// The NICs' window, base RTT and quirk attributes; the switches' INT and ECN stream.
void
RdmaScenarioRunner::ConfigureNodes()
{
    State& s = *m_state;
    const RdmaScenarioSpec& spec = m_spec;
    const RdmaScenarioTransport& t = spec.transport;
    RdmaFabricHelper& fabric = *s.fabric;
    // The reference gives every queue pair the largest RTT and BDP of the fabric (GLOBAL_T 1,
    // as the reference): HPCC's T and, with HAS_WIN, the window and HPCC's W.
    uint64_t maxRttNs = 0;
    uint64_t maxBdpBytes = 0;
    s.pairs.ForEachPairValue([&](const PairInfo& p) {
        const uint64_t rtt = p.RttNs();
        if (rtt == 0)
        {
            return;
        }
        maxRttNs = std::max(maxRttNs, rtt);
        const auto bdp = static_cast<uint64_t>(static_cast<unsigned __int128>(rtt) * p.bwBps /
                                               1000000000 / 8);
        maxBdpBytes = std::max(maxBdpBytes, bdp);
    });
    for (uint32_t h : fabric.GetNicNodes())
    {
        Ptr<RdmaNic> nic = fabric.GetNic(h);
        nic->SetAttribute("Window", UintegerValue(t.hasWin ? maxBdpBytes : 0));
        if (maxRttNs != 0)
        {
            nic->SetAttribute("BaseRtt", TimeValue(NanoSeconds(static_cast<int64_t>(maxRttNs))));
        }
        nic->SetAttribute("TimeTruncation", BooleanValue(t.quirks.timeTruncation));
        nic->SetAttribute("IntegerTxTime", BooleanValue(t.quirks.simai));
        nic->SetAttribute("PacingWakeupQuirk", BooleanValue(t.quirks.pacingWakeup));
        nic->SetAttribute("IrnReferenceSender", BooleanValue(t.quirks.irnSender));
        nic->SetAttribute("EventOrderQuirk", BooleanValue(t.quirks.eventOrder));
    }
    // The switches push INT records when the congestion control's data packets carry them
    // (HPCC; the reference: CC_MODE 3), as the algorithm says.
    ObjectFactory cc;
    cc.SetTypeId(t.Cc());
    const bool intEnabled =
        cc.Create<RdmaCongestionControl>()->DataIntMode() == RdmaHeader::INT_HPCC;
    for (uint32_t id : spec.switchIds)
    {
        Ptr<RdmaSwitch> sw = fabric.GetSwitch(id);
        sw->SetAttribute("IntEnabled", BooleanValue(intEnabled));
        sw->SetAttribute("EcnSharedStream", BooleanValue(t.quirks.ecnSharedStream));
    }
}

/// The table of transport parameters, applied to every switch, MMU and NIC.
void
RdmaScenarioRunner::ApplyTransportTable()
{
    State& s = *m_state;
    const RdmaScenarioSpec& spec = m_spec;
    const RdmaScenarioTransport& t = spec.transport;
    RdmaFabricHelper& fabric = *s.fabric;
    // The table of transport parameters: every setting on every object of its TypeId -- a
    // switch or its MMU, or a NIC. The NIC's loss recovery and congestion control are its
    // factory attributes (COMPONENT settings: the TypeId the table chose); the setting of an
    // attribute of a component goes to the factory of that TypeId or of a type derived from
    // it (a TypeId inherits its parent's attributes), and is left out when this run creates
    // no such component.
    const std::string switchType = RdmaSwitch::GetTypeId().GetName();
    const std::string mmuType = SwitchMmu::GetTypeId().GetName();
    const std::string nicType = RdmaNic::GetTypeId().GetName();
    std::map<std::string, ObjectFactory> components; // NIC attribute -> its factory
    for (const RdmaTransportSetting& a : t.attributes)
    {
        if (a.kind == RdmaTransportSetting::COMPONENT)
        {
            NS_ABORT_MSG_UNLESS(a.typeId == nicType,
                                "transport: " << a.typeId << " has no component " << a.name);
            components[a.name].SetTypeId(t.Component(a.name));
        }
    }
    // The uet table's settings follow the table's when the NICs run the uet transport; those
    // of ns3::RdmaUetFabric go to the run's one such object (ConfigureUet derives from it).
    std::vector<const RdmaTransportSetting*> settings;
    for (const RdmaTransportSetting& a : t.attributes)
    {
        settings.push_back(&a);
    }
    if (t.Uet())
    {
        s.uetFabric = CreateObject<RdmaUetFabric>();
        for (const RdmaTransportSetting& a : t.uetAttributes)
        {
            settings.push_back(&a);
        }
    }
    const std::string uetFabricType = RdmaUetFabric::GetTypeId().GetName();
    const std::string deviceType = RdmaNetDevice::GetTypeId().GetName();
    for (const RdmaTransportSetting* setting : settings)
    {
        const RdmaTransportSetting& a = *setting;
        if (a.kind == RdmaTransportSetting::COMPONENT)
        {
            continue;
        }
        if (a.typeId == deviceType)
        {
            s.deviceSettings.push_back(&a); // the ports exist once CreateLinks made them
            continue;
        }
        const Ptr<AttributeValue> v = a.Value();
        if (a.typeId == uetFabricType)
        {
            s.uetFabric->SetAttribute(a.name, *v);
            continue;
        }
        if (a.typeId == switchType || a.typeId == mmuType)
        {
            for (uint32_t id : spec.switchIds)
            {
                Ptr<RdmaSwitch> sw = fabric.GetSwitch(id);
                if (a.typeId == switchType)
                {
                    sw->SetAttribute(a.name, *v);
                }
                else
                {
                    sw->GetMmu()->SetAttribute(a.name, *v);
                }
            }
            continue;
        }
        if (a.typeId == nicType)
        {
            for (uint32_t h : fabric.GetNicNodes())
            {
                fabric.GetNic(h)->SetAttribute(a.name, *v);
            }
            continue;
        }
        TypeId owner;
        NS_ABORT_MSG_UNLESS(TypeId::LookupByNameFailSafe(a.typeId, &owner),
                            "transport: no TypeId " << a.typeId);
        TypeId::AttributeInformation info;
        NS_ABORT_MSG_UNLESS(owner.LookupAttributeByName(a.name, &info),
                            "transport: " << a.typeId << " has no attribute " << a.name);
        for (auto& [attribute, factory] : components)
        {
            if (factory.GetTypeId() == owner || factory.GetTypeId().IsChildOf(owner))
            {
                factory.Set(a.name, *v);
            }
        }
    }
    for (uint32_t h : fabric.GetNicNodes())
    {
        for (const auto& [attribute, factory] : components)
        {
            fabric.GetNic(h)->SetAttribute(attribute, ObjectFactoryValue(factory));
        }
    }
}

/// The links, with their loss traces and error models.
void
RdmaScenarioRunner::CreateLinks()
{
    State& s = *m_state;
    const RdmaScenarioSpec& spec = m_spec;
    const RdmaScenarioTransport& t = spec.transport;
    RdmaFabricHelper& fabric = *s.fabric;
    for (const RdmaScenarioLink& l : spec.links)
    {
        Ptr<RdmaChannel> ch = fabric.Link(l.a, l.b, DataRate(l.rateBps),
                                          NanoSeconds(static_cast<int64_t>(l.delayNs)));
        for (size_t d = 0; d < ch->GetNDevices(); ++d)
        {
            ch->GetDevice(d)->SetAttribute("TimeTruncation",
                                           BooleanValue(t.quirks.timeTruncation));
            ch->GetDevice(d)->SetAttribute("IntegerTxTime", BooleanValue(t.quirks.simai));
            for (const RdmaTransportSetting* a : s.deviceSettings)
            {
                ch->GetDevice(d)->SetAttribute(a->name, *a->Value());
            }
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
                s.errorModels.push_back(em);
            }
        }
    }
}

/// Per-port rates and queue scales, and the switches' ECN thresholds.
void
RdmaScenarioRunner::ConfigurePortsAndEcn()
{
    State& s = *m_state;
    const RdmaScenarioSpec& spec = m_spec;
    const RdmaScenarioTransport& t = spec.transport;
    RdmaFabricHelper& fabric = *s.fabric;
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
}

/// Warns when the transport starves the host load balancer of feedback.
void
RdmaScenarioRunner::WarnStarvedBalancer()
{
    const RdmaScenarioSpec& spec = m_spec;
    const RdmaScenarioTransport& t = spec.transport;
    // Host algorithms that learn per packet from ECN/RTT echoes are starved by transports that
    // do not answer every arrival. Say so, and name the key that fixes it.
    // The sprayers (LbConfig::SpraysOnFeedback: reps, whack-a-mole) reorder by design:
    // Go-Back-N discards what arrives out of order and NIC-SR leaves it unanswered. The
    // one-path-at-a-time schemes (LbConfig::MovesOnFeedback: hopper, flowbender) rarely
    // reorder; they starve only when Go-Back-N's ACKs are thinned to milestones.
    // (The uet transport answers every arrival.)
    const bool sprayer = !t.Uet() && spec.lb->SpraysOnFeedback();
    const bool onePath = !t.Uet() && spec.lb->MovesOnFeedback();
    const TypeId recovery = t.Recovery();
    const bool gbn = recovery == RdmaGoBackN::GetTypeId();
    const bool nicSr = recovery == RdmaNicSr::GetTypeId();
    const uint64_t ackInterval = t.Get("ns3::RdmaNic", "L2AckInterval").uint;
    const bool thinAcks = t.Get("ns3::RdmaGoBackN", "AckMilestoneFix").uint != 0 && ackInterval > 1;
    std::string why;
    if (sprayer && gbn)
    {
        why = "Go-Back-N discards every out-of-order packet unanswered (and with "
              "AckMilestoneFix acknowledges only at milestones), so the ECN marks and RTTs of "
              "most sprayed packets never reach it";
    }
    else if (sprayer && nicSr)
    {
        why = "NIC-SR answers an out-of-order arrival only when it is ECN-marked (plus one NACK "
              "per expected PSN), so most sprayed packets give it no ECN or RTT feedback";
    }
    else if (onePath && gbn && thinAcks)
    {
        why = "Go-Back-N acknowledges only every " + std::to_string(ackInterval) +
              " packets (L2AckInterval with AckMilestoneFix), so it sees that share of the "
              "ECN marks and RTTs";
    }
    if (!why.empty())
    {
        const std::string note = "warning: " + spec.lb->GetAlgorithmName() +
                                 " runs on recovery = \"" +
                                 t.Get("ns3::RdmaNic", "LossRecovery").summaryText +
                                 "\", which starves it of signal: " + why +
                                 "; set [transport] recovery = \"irn\" (--recovery=irn), "
                                 "which answers every arrival";
        std::cerr << note << std::endl;
        m_spec.notes.push_back(note);
    }
}

/// Fixes the random streams of the fabric and the error models.
void
RdmaScenarioRunner::AssignStreams()
{
    State& s = *m_state;
    RdmaFabricHelper& fabric = *s.fabric;
    int64_t stream = fabric.AssignStreams(0);
    for (Ptr<RateErrorModel> em : s.errorModels)
    {
        stream += em->AssignStreams(stream);
    }

}

/// Connects the trace sinks of the NICs and ports.
void
RdmaScenarioRunner::ConnectTraces()
{
    State& s = *m_state;
    const RdmaScenarioSpec& spec = m_spec;
    RdmaFabricHelper& fabric = *s.fabric;
    for (uint32_t h : fabric.GetNicNodes())
    {
        Ptr<RdmaNic> nic = fabric.GetNic(h);
        nic->TraceConnectWithoutContext("FlowRecord", MakeCallback(&State::OnRecord, &s));
        nic->TraceConnectWithoutContext("FlowDelivered", MakeCallback(&State::OnDelivered, &s));
        nic->TraceConnectWithoutContext("FlowSent", MakeCallback(&State::OnSent, &s));
        if (spec.run.partitionInvariant)
        {
            // The receiver's state goes, and its NACK count is read, one message after the
            // sender's completion (the longest link delay + 1 ns, more than any lookahead), on
            // 1 rank as on N: a receiver on another rank cannot be reached at once.
            uint64_t maxDelayNs = 0;
            for (const RdmaScenarioLink& l : spec.links)
            {
                maxDelayNs = std::max(maxDelayNs, l.delayNs);
            }
            nic->SetAttribute("ReceiverReleaseDelay",
                              TimeValue(NanoSeconds(static_cast<int64_t>(maxDelayNs + 1))));
            nic->TraceConnectWithoutContext("RxReleased", MakeCallback(&State::OnRxReleased, &s));
        }
        if (spec.run.failedLinkDrops)
        {
            nic->TraceConnectWithoutContext("DataSent",
                                            MakeBoundCallback(&State::OnDataSentForDrops, &s));
        }
    }
    if (spec.run.rttHistogramNs != 0)
    {
        for (uint32_t h : fabric.GetNicNodes())
        {
            fabric.GetNic(h)->TraceConnectWithoutContext("UetRtt",
                                                         MakeBoundCallback(&State::OnUetRtt, &s));
        }
    }
    if (spec.run.rateTraceNs != 0)
    {
        std::vector<Ptr<RdmaNic>> nics;
        for (uint32_t h : fabric.GetNicNodes())
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
    s.computeDependents.assign(nFlows, {});
    s.sentDependents.assign(nFlows, {});
    s.readyDependents.assign(nFlows, {});
    s.earliest.assign(nFlows, Time(0));
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
        std::set<uint32_t> computePreds(f.computeAfter.begin(), f.computeAfter.end());
        std::set<uint32_t> sentPreds(f.afterSent.begin(), f.afterSent.end());
        std::set<uint32_t> readyPreds(f.afterReady.begin(), f.afterReady.end());
        s.pending[i] = static_cast<uint32_t>(preds.size() + computePreds.size() +
                                             sentPreds.size() + readyPreds.size());
        for (uint32_t p : readyPreds)
        {
            s.readyDependents[p].push_back(static_cast<uint32_t>(i));
        }
        for (uint32_t p : sentPreds)
        {
            s.sentDependents[p].push_back(static_cast<uint32_t>(i));
        }
        for (uint32_t p : preds)
        {
            s.dependents[p].push_back(static_cast<uint32_t>(i));
        }
        for (uint32_t p : computePreds)
        {
            s.computeDependents[p].push_back(static_cast<uint32_t>(i));
        }
        if (s.pending[i] == 0)
        {
            s.ordinary.push_back(static_cast<uint32_t>(i));
        }
    }
    std::stable_sort(s.ordinary.begin(), s.ordinary.end(), [&](uint32_t a, uint32_t b) {
        return spec.flows[a].startNs < spec.flows[b].startNs;
    });
    if (spec.run.ranks > 1)
    {
        // Each rank starts the flows of its own hosts (a receiver on another rank learns of its
        // flow by an EXPECT_FLOW message, model/rdma-remote.h).
        std::vector<uint32_t> own;
        for (uint32_t id : s.ordinary)
        {
            if (s.rankOf[spec.flows[id].src] == s.myRank)
            {
                own.push_back(id);
            }
        }
        s.ordinary = own;
    }
    if (spec.run.partitionInvariant)
    {
        // Each start its own event, scheduled now: a chain (each start scheduling the next)
        // would give a start the key of the flow before it, which on N ranks is another one
        // (RdmaWheelScheduler::PartitionInvariantTies orders ties by who scheduled them).
        for (uint32_t id : s.ordinary)
        {
            const RdmaScenarioFlow& f = spec.flows[id];
            Simulator::ScheduleWithContext(f.src,
                                           NanoSeconds(static_cast<int64_t>(f.startNs)),
                                           &State::StartFlow,
                                           &s,
                                           id);
        }
    }
    else
    {
        s.ScheduleNextOrdinary();
    }
    for (const RdmaScenarioLinkEvent& e : spec.run.linkEvents)
    {
        const Time at = NanoSeconds(static_cast<int64_t>(e.atNs));
        if (e.oneWay)
        {
            fabric.ScheduleOneWayState(e.a,
                                       e.b,
                                       at,
                                       e.down,
                                       e.byPort ? std::optional<uint32_t>(e.port) : std::nullopt);
        }
        else if (e.byPort)
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
    // (Simulator::Now creates the simulator, and with it the scheduler, if not yet done.)
    NS_ABORT_MSG_IF(spec.run.partitionInvariant &&
                        (Simulator::Now().IsStrictlyNegative() ||
                         !RdmaWheelScheduler::InvariantTiesActive()),
                    "rdma-lb: partition-invariant mode needs ns3::RdmaWheelScheduler with "
                    "PartitionInvariantTies (was --SchedulerType changed, or the simulator "
                    "created before the option was set?)");
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
    // Several ranks: each counts its own nodes (the others' copies ran no event).
    auto mine = [&s](uint32_t node) { return s.rankOf.empty() || s.rankOf[node] == s.myRank; };
    for (uint32_t h : fabric.GetNicNodes())
    {
        if (mine(h))
        {
            s.counters.cnpsSent += fabric.GetNic(h)->GetCnpsSent();
            if (spec.transport.Uet())
            {
                const Ptr<RdmaUetRecovery> uet =
                    DynamicCast<RdmaUetRecovery>(fabric.GetNic(h)->GetLossRecovery());
                if (uet)
                {
                    s.counters.ackRequests += uet->GetCounts().ackRequests;
                    s.counters.uetAcks += uet->GetCounts().acks;
                    s.counters.pulls += uet->GetCounts().pulls;
                }
            }
        }
    }
    for (uint32_t id : spec.switchIds)
    {
        if (!mine(id))
        {
            continue;
        }
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
    for (auto node = NodeList::Begin(); node != NodeList::End(); ++node)
    {
        if (!mine((*node)->GetId()))
        {
            continue;
        }
        for (uint32_t i = 0; i < (*node)->GetNDevices(); ++i)
        {
            if (Ptr<RdmaNetDevice> d = DynamicCast<RdmaNetDevice>((*node)->GetDevice(i)))
            {
                s.counters.packetHops += d->GetTxPackets();
            }
        }
    }
    if (spec.run.portBytes)
    {
        // port_bytes.csv: read before the fabric goes.
        for (uint32_t id : spec.switchIds)
        {
            Ptr<RdmaSwitch> sw = fabric.GetSwitch(id);
            for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
            {
                Ptr<RdmaNetDevice> dev = sw->GetPort(p);
                Ptr<RdmaNetDevice> peer = dev->GetRdmaChannel()->GetPeer(dev);
                const uint32_t peerId = peer ? peer->GetNode()->GetId() : 0;
                // ... and every port towards a host of several NIC ports (SimAI's multi-homed
                // GPUs): what the host receives on each of its ports.
                Ptr<RdmaNic> peerNic =
                    peer && !s.isSwitch[peerId] ? peer->GetNode()->GetObject<RdmaNic>() : nullptr;
                if (peer && (s.isSwitch[peerId] || (peerNic && peerNic->GetNPorts() > 1)))
                {
                    s.portBytes += Fmt("%u,%u,%u,%" PRIu64 "\n", id, p + 1,
                                       peer->GetNode()->GetId(), dev->GetTxBytes());
                }
            }
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

std::string
RdmaScenarioRunner::FailedDropsCsv() const
{
    std::string out = "flow_id,src,dst,drops,first_drop_ns,last_drop_ns,resend_drops,"
                      "last_resend_drop_ns,probe_drops,last_probe_drop_ns\n";
    if (!m_state)
    {
        return out;
    }
    for (const auto& [flow, d] : m_state->failedDrops)
    {
        if (flow < m_state->results.size())
        {
            const RdmaScenarioFlowResult& r = m_state->results[flow];
            out += Fmt("%u,%u,%u,", flow, r.src, r.dst);
        }
        else
        {
            out += ",,,";
        }
        out += Fmt("%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                   ",%" PRIu64 "\n",
                   d.count,
                   d.firstNs,
                   d.lastNs,
                   d.resends,
                   d.lastResendNs,
                   d.probes,
                   d.lastProbeNs);
    }
    return out;
}

std::string
RdmaScenarioRunner::RttHistCsv() const
{
    std::string out = "bin_start_ns,bin_end_ns,acks\n";
    const uint64_t w = m_spec.run.rttHistogramNs;
    if (!m_state || w == 0)
    {
        return out;
    }
    for (size_t i = 0; i < m_state->rttHist.size(); ++i)
    {
        out += Fmt("%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", i * w, (i + 1) * w, m_state->rttHist[i]);
    }
    return out;
}

std::string
RdmaScenarioRunner::PortBytesCsv() const
{
    return "switch,port,peer,tx_bytes\n" + (m_state ? m_state->portBytes : std::string());
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

double
RdmaScenarioRunner::GetSetupWallSeconds() const
{
    return m_state ? m_state->setupWallS : 0;
}

} // namespace ns3
