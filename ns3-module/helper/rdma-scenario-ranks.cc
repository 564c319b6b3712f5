/*
 * rdma-lb: a scenario over several MPI ranks under a conservative distributed simulator
 * (rdma-lb's RdmaMpiSimulatorImpl or ns-3's DistributedSimulatorImpl; lookahead = the smallest
 * delay of a link between ranks). ns3-module/doc/performance.md, "Distributed runs (MPI)", gives the design and what
 * was measured. Here: the partition (PartitionNodes), what such a run refuses (ValidateRanks)
 * and the merge of the ranks' results on rank 0 (MergeRanks).
 *
 * Every rank builds the whole fabric (ns-3's way: each creates every node and runs the events
 * of its own); links between ranks are remote (RdmaChannel::EnableRemote); a rank starts the
 * flows of its own hosts. Nothing but packets crosses ranks during the run, so what a node
 * does only depends on the packets it receives: with partition-invariant ties
 * (RdmaWheelScheduler::PartitionInvariantTies) the outputs equal the one-rank run's with the
 * same option.
 */
#include "rdma-fabric-helper.h"
#include "rdma-scenario-state.h"
#include "rdma-scenario.h"

#include "ns3/abort.h"
#include "ns3/rdma-header.h"
#include "ns3/rdma-nic.h"

#ifdef NS3_MPI
#include "ns3/mpi-interface.h"

#include <mpi.h>
#endif

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace ns3
{

std::vector<uint32_t>
RdmaScenarioRunner::PartitionNodes(const RdmaScenarioSpec& spec, uint32_t ranks)
{
    const uint32_t n = spec.nodeCount;
    std::vector<bool> isSwitch(n, false);
    for (uint32_t id : spec.switchIds)
    {
        isSwitch[id] = true;
    }
    std::vector<uint32_t> torOf(n, UINT32_MAX); // host -> its switch
    std::set<uint32_t> tors;
    for (const RdmaScenarioLink& l : spec.links)
    {
        if (isSwitch[l.a] != isSwitch[l.b])
        {
            const uint32_t sw = isSwitch[l.a] ? l.a : l.b;
            const uint32_t host = isSwitch[l.a] ? l.b : l.a;
            tors.insert(sw);
            torOf[host] = sw;
        }
    }
    std::vector<uint32_t> rank(n, 0);
    const std::vector<uint32_t> torList(tors.begin(), tors.end());
    for (size_t k = 0; k < torList.size(); ++k)
    {
        rank[torList[k]] = static_cast<uint32_t>(k * ranks / torList.size());
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        if (!isSwitch[i] && torOf[i] != UINT32_MAX)
        {
            rank[i] = rank[torOf[i]];
        }
    }
    // A switch above the ToRs goes with its ToRs when more than half of them are on one rank
    // (a fat tree's aggregation switch with its pod: none of the pod's ToR links then crosses
    // ranks, and every packet leaving a ToR would cross one); every other such switch (a
    // leaf-spine's spines, a fat tree's cores: no majority) round-robin in id order.
    std::vector<std::map<uint32_t, uint32_t>> torRanks(n); // switch -> rank -> its ToR links
    std::vector<uint32_t> torLinks(n, 0);
    for (const RdmaScenarioLink& l : spec.links)
    {
        for (const auto& [up, down] : {std::make_pair(l.a, l.b), std::make_pair(l.b, l.a)})
        {
            if (isSwitch[up] && tors.count(up) == 0 && tors.count(down) != 0)
            {
                ++torRanks[up][rank[down]];
                ++torLinks[up];
            }
        }
    }
    uint32_t other = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        if (!isSwitch[i] || tors.count(i) != 0)
        {
            continue;
        }
        bool placed = false;
        for (const auto& [r, links] : torRanks[i])
        {
            if (2 * links > torLinks[i])
            {
                rank[i] = r;
                placed = true;
            }
        }
        if (!placed)
        {
            rank[i] = other++ % ranks;
        }
    }
    return rank;
}

std::string
RdmaScenarioRunner::ValidateRanks(const RdmaScenarioSpec& spec)
{
    const RdmaScenarioRun& run = spec.run;
    if (run.partitionInvariant && spec.transport.quirks.eventOrder)
    {
        return "quirks: event-order reproduces the reference's global event order; it cannot be "
               "combined with the partition-invariant order (--partitionInvariant, --ranks)";
    }
    if (run.ranks <= 1)
    {
        return "";
    }
    const std::string why = " across MPI ranks is not supported (--ranks > 1)";
    const std::vector<uint32_t> rank = PartitionNodes(spec, run.ranks);
    for (const RdmaScenarioFlow& f : spec.flows)
    {
        // A dependency is met where it is observed (the predecessor's receiver, or its sender
        // with after-completion) and starts the flow on its sender at once: fine on one rank,
        // state shared outside packets across two (a ring collective's next step starts on the
        // host that received the last one: same rank).
        for (const std::vector<uint32_t>* preds : {&f.after, &f.computeAfter})
        {
            for (uint32_t p : *preds)
            {
                if (p >= spec.flows.size())
                {
                    continue; // Validate reports it
                }
                const RdmaScenarioFlow& pf = spec.flows[p];
                const uint32_t observer = f.afterCompletion ? pf.src : pf.dst;
                if (rank[observer] != rank[f.src])
                {
                    return "flows[" + std::to_string(f.id) + "]: depends on flow " +
                           std::to_string(p) + ", observed at host " + std::to_string(observer) +
                           " (rank " + std::to_string(rank[observer]) + "), but starts at host " +
                           std::to_string(f.src) + " (rank " + std::to_string(rank[f.src]) +
                           "): a flow dependency" + why;
                }
            }
        }
    }
    if (!run.linkEvents.empty())
    {
        return "link_events: link faults" + why;
    }
    if (!spec.endpointSwitchIds.empty())
    {
        return "topology: switches that end flows (SimAI's NVLS)" + why;
    }
    if (run.pfcTrace || run.queueTrace || run.rateTraceNs != 0 || run.failedLinkDrops ||
        run.rttHistogramNs != 0 || run.portBytes)
    {
        return "run: traces (pfc_trace, queue_trace, rate_trace, failed_drops, rtt_histogram, "
               "port_bytes)" +
               why;
    }
    const RdmaScenarioQuirks& q = spec.transport.quirks;
    if (q.glibcRand || q.ecnSharedStream)
    {
        return "quirks: glibc-rand and ecn-shared-stream draw one stream shared by every "
               "switch," +
               why;
    }
    if (spec.transport.uetHtsimSwitches)
    {
        // Measured: the REPS Fig. 2 setup diverged between 1 and 2 ranks (ECN marks).
        return "transport.uet.switch_hash: htsim's switches draw from one random stream shared "
               "by every switch (htsim's global random())," +
               why;
    }
    if (spec.transport.Uet() &&
        spec.transport.Get("ns3::RdmaSwitch", "QueueRelease").text == "end")
    {
        // RdmaNetDevice's transmit-end handler marks the frame on the link, which a link
        // between ranks has already sent to the other rank.
        return "transport.uet.queue_release: \"end\" (the default under htsim inputs; "
               "\"start\" runs) marks a packet when its last bit has left, which a link between "
               "ranks has already sent on," +
               why;
    }
    std::map<uint32_t, uint32_t> perSource;
    for (const RdmaScenarioFlow& f : spec.flows)
    {
        if (++perSource[f.src] > 65535)
        {
            return "flows: more than 65535 flows from host " + std::to_string(f.src) + why;
        }
    }
    return "";
}

#ifdef NS3_MPI

namespace
{
template <typename T>
void
Put(std::vector<uint8_t>& b, const T& v)
{
    static_assert(std::is_trivially_copyable<T>::value, "plain data only");
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof(T));
}

template <typename T>
T
Take(const uint8_t* b, size_t* pos)
{
    T v;
    std::memcpy(&v, b + *pos, sizeof(T));
    *pos += sizeof(T);
    return v;
}
} // namespace

void
RdmaScenarioRunner::MergeRanks()
{
    State& s = *m_state;
    const RdmaScenarioSpec& spec = m_spec;
    const size_t nFlows = spec.flows.size();
    // This rank's part: its flows' results (all of them; rank 0 takes each field from the rank
    // that owns it), its counters, event count and end time, its receivers' counts of the
    // flows sent from other ranks, and its load balancers' counters.
    std::vector<uint8_t> mine;
    for (const RdmaScenarioFlowResult& r : s.results)
    {
        Put(mine, r);
    }
    Put(mine, s.counters);
    Put(mine, s.events);
    Put(mine, s.simTimeNs);
    Put(mine, static_cast<uint64_t>(s.lbCounters.size()));
    for (const auto& [name, value] : s.lbCounters)
    {
        Put(mine, static_cast<uint64_t>(name.size()));
        mine.insert(mine.end(), name.begin(), name.end());
        Put(mine, value);
    }

    const int ranks = static_cast<int>(spec.run.ranks);
    // (ns-3's MPI interface is destroyed with the simulator by now; MPI itself is not.)
    MPI_Comm comm = MPI_COMM_WORLD;
    int size = static_cast<int>(mine.size());
    std::vector<int> sizes(ranks, 0);
    MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, comm);
    std::vector<int> offsets(ranks, 0);
    int total = 0;
    for (int r = 0; r < ranks; ++r)
    {
        offsets[r] = total;
        total += sizes[r];
    }
    std::vector<uint8_t> all(s.myRank == 0 ? static_cast<size_t>(total) : 0);
    MPI_Gatherv(mine.data(),
                size,
                MPI_BYTE,
                all.data(),
                sizes.data(),
                offsets.data(),
                MPI_BYTE,
                0,
                comm);
    if (s.myRank != 0)
    {
        return;
    }
    // Rank 0: merge.
    std::vector<RdmaScenarioFlowResult> merged = s.results;
    RdmaScenarioCounters counters{};
    std::map<std::string, uint64_t> lb;
    uint64_t events = 0;
    uint64_t simTimeNs = 0;
    static_assert(sizeof(RdmaScenarioCounters) % sizeof(uint64_t) == 0, "counters are uint64_t");
    constexpr size_t nCounters = sizeof(RdmaScenarioCounters) / sizeof(uint64_t);
    for (int r = 0; r < ranks; ++r)
    {
        const uint8_t* b = all.data() + offsets[r];
        size_t pos = 0;
        for (size_t i = 0; i < nFlows; ++i)
        {
            const auto res = Take<RdmaScenarioFlowResult>(b, &pos);
            const RdmaScenarioFlow& f = spec.flows[i];
            RdmaScenarioFlowResult& m = merged[i];
            if (s.rankOf[f.src] == static_cast<uint32_t>(r))
            {
                // Sender side: all but the delivery and the receiver's NACK count.
                const bool delivered = m.delivered;
                const uint64_t deliveredNs = m.deliveredNs;
                const uint64_t nacks = m.nacks;
                m = res;
                m.delivered = delivered;
                m.deliveredNs = deliveredNs;
                m.nacks = nacks;
            }
            if (s.rankOf[f.dst] == static_cast<uint32_t>(r))
            {
                // Receiver side: set by its release (State::OnRxReleased, partition-invariant
                // mode: the sender's record carries none).
                m.delivered = res.delivered;
                m.deliveredNs = res.deliveredNs;
                m.nacks = res.nacks;
            }
        }
        const auto c = Take<RdmaScenarioCounters>(b, &pos);
        uint64_t* dst = reinterpret_cast<uint64_t*>(&counters);
        const uint64_t* src = reinterpret_cast<const uint64_t*>(&c);
        for (size_t k = 0; k < nCounters; ++k)
        {
            dst[k] += src[k];
        }
        events += Take<uint64_t>(b, &pos);
        simTimeNs = std::max(simTimeNs, Take<uint64_t>(b, &pos));
        const auto nLb = Take<uint64_t>(b, &pos);
        for (uint64_t k = 0; k < nLb; ++k)
        {
            const auto len = Take<uint64_t>(b, &pos);
            std::string name(reinterpret_cast<const char*>(b + pos), len);
            pos += len;
            lb[name] += Take<uint64_t>(b, &pos);
        }
        NS_ABORT_MSG_IF(pos != static_cast<size_t>(sizes[r]),
                        "MergeRanks: rank " << r << " sent " << sizes[r] << " bytes, read " << pos);
    }
    s.results = merged;
    s.counters = counters;
    s.lbCounters = lb;
    s.events = events;
    s.simTimeNs = simTimeNs;
    s.started = 0;
    s.completed = 0;
    s.delivered = 0;
    for (const RdmaScenarioFlowResult& r : s.results)
    {
        s.started += r.started ? 1 : 0;
        s.completed += r.completed ? 1 : 0;
        s.delivered += r.delivered ? 1 : 0;
    }
}

#else

void
RdmaScenarioRunner::MergeRanks()
{
    NS_ABORT_MSG("rdma-lb: a run over several ranks needs ns-3 built with MPI (NS3_MPI)");
}

#endif

} // namespace ns3
