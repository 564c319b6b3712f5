/*
 * rdma-lb: RdmaScenarioRunner's run-time state (RdmaScenarioRunner::State, see rdma-scenario.h
 * and ns3-module/doc/rdma-lb.rst, "Scenarios"): the fabric, the per-pair path values, the flow
 * starts and their dependencies, the trace sinks, the monitors and the progress indicator.
 * Module-private: only rdma-scenario.cc includes it.
 */
#ifndef RDMA_SCENARIO_STATE_H
#define RDMA_SCENARIO_STATE_H

#include "rdma-fabric-helper.h"
#include "rdma-rate-trace.h"
#include "rdma-scenario-output.h"
#include "rdma-scenario.h"

#include "ns3/rdma-channel.h"
#include "ns3/rdma-header.h"
#include "ns3/rdma-net-device.h"
#include "ns3/rdma-nic.h"
#include "ns3/rdma-switch.h"
#include "ns3/rdma-uet-fabric.h"
#include "ns3/error-model.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace ns3
{

// The per-pair tables. (A named namespace, not an anonymous one: State, defined in a header,
// holds them.)
namespace rdmascenario
{

/// The reference's per-pair values, from a BFS at the destination host.
struct PairInfo
{
    uint64_t delayNs{0}; //!< one-way propagation
    uint64_t txNs{0};    //!< one payload packet's serialization, summed over hops
    uint64_t bwBps{0};   //!< bottleneck (0 = unreachable)
    uint32_t hops{0};    //!< links on the path

    /// \return the reference's base RTT of the path: 2 x propagation + one packet's
    /// serialization per hop, once
    uint64_t RttNs() const
    {
        return 2 * delayNs + txNs;
    }
};

/**
 * PairInfo for every (destination, source) pair of hosts, in one of two forms.
 *
 * Factored (every host has one link, to a switch: every fabric of ConWeave's, htsim's and the
 * generators'): per host its link (PairInfo of one hop) and its switch's slot, and per pair of
 * those switches the values of the BFS from the destination's switch. A host is never transit,
 * so the BFS from a host reaches every other node through its own switch in the same order as
 * the BFS from that switch: the pair's values are the destination's link, the switch pair's
 * and the source's link, summed (delay, serialization, hops) and minimised (bottleneck).
 * Memory: hosts + switches^2 entries (8,192 hosts on 256 ToRs: 2 MiB).
 *
 * Full (any other fabric): every pair packed into 12 bytes, hosts^2 entries (12 MiB on 1,024
 * hosts). A delay or serialisation sum is kept in whole ns below 2^32 (4.29 s) and the
 * bottleneck as an index into the fabric's distinct rates; Set refuses what does not fit.
 */
class PairTable
{
  public:
    /// Sizes the full table for \p hosts hosts, every pair unreachable.
    void Reset(size_t hosts)
    {
        m_hosts = hosts;
        m_entries.assign(hosts * hosts, Entry{});
        m_rates.assign(1, 0);
        m_switches = 0;
        m_links.clear();
        m_switchOf.clear();
        m_switchPairs.clear();
    }

    /// Sizes the factored table for \p hosts hosts on \p switches switches, every pair
    /// unreachable.
    void ResetFactored(size_t hosts, size_t switches)
    {
        Reset(0);
        m_hosts = hosts;
        m_switches = switches;
        m_links.assign(hosts, PairInfo{});
        m_switchOf.assign(hosts, 0);
        m_switchPairs.assign(switches * switches, PairInfo{});
    }

    /// \return the number of hosts
    size_t Hosts() const
    {
        return m_hosts;
    }

    /// Factored: host \p host hangs off switch slot \p slot by a link of values \p link.
    void SetHostLink(size_t host, size_t slot, const PairInfo& link)
    {
        m_links[host] = link;
        m_switchOf[host] = slot;
    }

    /// Factored: \p p, the BFS from switch slot \p dst at switch slot \p src.
    void SetSwitchPair(size_t dst, size_t src, const PairInfo& p)
    {
        m_switchPairs[dst * m_switches + src] = p;
    }

    /// Full: stores \p p for the pair (\p dst, \p src). \return false (nothing stored) when
    /// a value does not fit its packed field
    bool Set(size_t dst, size_t src, const PairInfo& p)
    {
        const auto rate = std::find(m_rates.begin(), m_rates.end(), p.bwBps);
        const size_t rateIndex = static_cast<size_t>(rate - m_rates.begin());
        if (p.delayNs > UINT32_MAX || p.txNs > UINT32_MAX || p.hops > UINT16_MAX ||
            rateIndex > UINT16_MAX)
        {
            return false;
        }
        if (rate == m_rates.end())
        {
            m_rates.push_back(p.bwBps);
        }
        m_entries[dst * m_hosts + src] = Entry{static_cast<uint32_t>(p.delayNs),
                                               static_cast<uint32_t>(p.txNs),
                                               static_cast<uint16_t>(rateIndex),
                                               static_cast<uint16_t>(p.hops)};
        return true;
    }

    /// \return the values of the pair (\p dst, \p src) (bwBps 0: unreachable, and a host to
    /// itself)
    PairInfo Get(size_t dst, size_t src) const
    {
        if (m_switches == 0)
        {
            const Entry& e = m_entries[dst * m_hosts + src];
            return PairInfo{e.delayNs, e.txNs, m_rates[e.rate], e.hops};
        }
        if (dst == src)
        {
            return PairInfo{};
        }
        return Join(m_links[dst],
                    m_switchPairs[m_switchOf[dst] * m_switches + m_switchOf[src]],
                    m_links[src]);
    }

    /**
     * Calls \p fn with the values of every reachable pair of distinct hosts, or, factored, of
     * every distinct combination of a destination link, a switch pair and a source link that
     * some such pair has (hosts + switches^2 work instead of hosts^2): enough for a maximum
     * over the pairs, not for a count.
     */
    template <typename Fn>
    void ForEachPairValue(Fn fn) const
    {
        if (m_switches == 0)
        {
            for (size_t d = 0; d < m_hosts; ++d)
            {
                for (size_t s = 0; s < m_hosts; ++s)
                {
                    const PairInfo p = Get(d, s);
                    if (d != s && p.bwBps != 0)
                    {
                        fn(p);
                    }
                }
            }
            return;
        }
        // Per switch slot, its hosts' distinct links and how many hosts have each.
        std::vector<std::vector<std::pair<PairInfo, size_t>>> links(m_switches);
        for (size_t h = 0; h < m_hosts; ++h)
        {
            auto& group = links[m_switchOf[h]];
            const PairInfo& l = m_links[h];
            auto same = std::find_if(group.begin(), group.end(), [&](const auto& g) {
                return g.first.delayNs == l.delayNs && g.first.txNs == l.txNs &&
                       g.first.bwBps == l.bwBps && g.first.hops == l.hops;
            });
            if (same == group.end())
            {
                group.emplace_back(l, 1);
            }
            else
            {
                ++same->second;
            }
        }
        for (size_t ds = 0; ds < m_switches; ++ds)
        {
            for (size_t ss = 0; ss < m_switches; ++ss)
            {
                const PairInfo& m = m_switchPairs[ds * m_switches + ss];
                if (m.bwBps == 0)
                {
                    continue;
                }
                for (size_t i = 0; i < links[ds].size(); ++i)
                {
                    for (size_t j = 0; j < links[ss].size(); ++j)
                    {
                        if (ds == ss && i == j && links[ds][i].second < 2)
                        {
                            continue; // its only host, with itself
                        }
                        const PairInfo p = Join(links[ds][i].first, m, links[ss][j].first);
                        if (p.bwBps != 0)
                        {
                            fn(p);
                        }
                    }
                }
            }
        }
    }

  private:
    /// \return the path of link \p d, switch pair \p m and link \p s: sums and the smallest
    /// bottleneck (unreachable, bwBps 0, if any part is)
    static PairInfo Join(const PairInfo& d, const PairInfo& m, const PairInfo& s)
    {
        if (m.bwBps == 0 || d.bwBps == 0 || s.bwBps == 0)
        {
            return PairInfo{};
        }
        return PairInfo{d.delayNs + m.delayNs + s.delayNs,
                        d.txNs + m.txNs + s.txNs,
                        std::min({d.bwBps, m.bwBps, s.bwBps}),
                        d.hops + m.hops + s.hops};
    }

    /// One pair, packed.
    struct Entry
    {
        uint32_t delayNs{0}; //!< PairInfo::delayNs
        uint32_t txNs{0};    //!< PairInfo::txNs
        uint16_t rate{0};    //!< index into m_rates (0: unreachable)
        uint16_t hops{0};    //!< PairInfo::hops
    };

    size_t m_hosts{0};
    // Full form.
    std::vector<Entry> m_entries;     //!< [dst host idx * hosts + src host idx]
    std::vector<uint64_t> m_rates{0}; //!< the distinct bottleneck rates; [0] = 0, unreachable
    // Factored form (m_switches != 0).
    size_t m_switches{0};
    std::vector<PairInfo> m_links;       //!< [host idx]: its link, one hop
    std::vector<size_t> m_switchOf;      //!< [host idx]: its switch's slot
    std::vector<PairInfo> m_switchPairs; //!< [dst slot * switches + src slot]
};

/// What the uet transport's per-pair base RTT reads (RdmaScenarioRunner::ConfigureUet).
struct UetPairRtt
{
    const PairTable* pairs{nullptr};                 //!< the pair table
    const std::vector<uint32_t>* hostIndex{nullptr}; //!< node -> host index
    uint64_t txNs{0}; //!< the fabric's diameter x (data + ACK) serialization at the host rate
};

/// failed_drops.csv: one flow's packets lost on down links.
struct FailedDrops
{
    uint64_t count{0};        //!< data packets lost (resends included, probes not)
    uint64_t firstNs{0};      //!< time of the first data loss
    uint64_t lastNs{0};       //!< time of the last data loss
    uint64_t resends{0};      //!< of those, resends (an offset the flow had sent before)
    uint64_t lastResendNs{0}; //!< time of the last resend lost
    uint64_t probes{0};       //!< a host load balancer's 64 B probes lost (not data)
    uint64_t lastProbeNs{0};  //!< time of the last probe lost
};

} // namespace rdmascenario

using rdmascenario::FailedDrops;
using rdmascenario::PairInfo;
using rdmascenario::PairTable;
using rdmascenario::UetPairRtt;

/// Run-time state: the fabric, the trace sinks and the results.
struct RdmaScenarioRunner::State
{
    const RdmaScenarioSpec* spec{nullptr};
    std::unique_ptr<RdmaFabricHelper> fabric;
    std::vector<bool> isSwitch;
    std::vector<uint32_t> hostIndex;               //!< node -> index among hosts (or max)
    std::vector<uint32_t> hosts;                   //!< host node ids, ascending
    PairTable pairs;                               //!< [dst host idx][src host idx]
    std::string uetSummary; //!< transport uet: its derived parameters (JSON), else empty
    UetPairRtt uetPairRtt;  //!< transport uet: what the NICs' per-pair base RTT reads
    /// transport uet: its fabric-wide settings (the table's RdmaUetFabric attributes)
    Ptr<RdmaUetFabric> uetFabric;
    /// the table's ns3::RdmaNetDevice settings, set on every port as its link is created
    std::vector<const RdmaTransportSetting*> deviceSettings;
    std::vector<RdmaScenarioFlowResult> results;
    std::vector<RdmaScenarioCollectiveResult> collectives;
    std::vector<std::vector<uint32_t>> dependents; //!< flow -> flows waiting for it
    /// flow -> flows whose sender computes after it (RdmaScenarioFlow::computeAfter)
    std::vector<std::vector<uint32_t>> computeDependents;
    /// flow -> flows that wait for its last byte's send (RdmaScenarioFlow::afterSent)
    std::vector<std::vector<uint32_t>> sentDependents;
    /// flow -> flows that wait for its hand-off (RdmaScenarioFlow::afterReady)
    std::vector<std::vector<uint32_t>> readyDependents;
    std::vector<Time> earliest; //!< flow -> latest dependency delivery (+ compute) so far
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
    // failed_drops.csv (run.failedLinkDrops): data packets lost on down links, by flow id
    // (UINT32_MAX: a packet no flow could be found for).
    std::map<uint32_t, FailedDrops> failedDrops;
    // ... and which data packets are resends: per flow the highest offset sent so far, and the
    // (flow, offset) pairs whose last transmission was a resend (only with failedLinkDrops)
    std::map<uint32_t, uint64_t> failedDropsHighSent;
    std::set<std::pair<uint32_t, uint32_t>> failedDropsResent;
    // rtt_hist.csv (run.rttHistogramNs): uet ACKs by RTT, bin i = [i w, (i + 1) w).
    std::vector<uint64_t> rttHist;
    // port_bytes.csv rows (run.portBytes), read at the end of the run.
    std::string portBytes;
    Time monitorPeriod;
    Time monitorEnd;
    // Progress.
    bool progress{false};
    bool progressPrinted{false};
    std::chrono::steady_clock::time_point wallStart; //!< before the pair table (Run)
    double setupWallS{0}; //!< wall seconds from wallStart to the first event (tables, fabric, traffic)
    double lastPrintWall{0};
    Time progressPeriod;
    uint64_t lastTickEvents{0};
    uint64_t endEstimateNs{0};
    uint64_t firstStartNs{0};  //!< simulated time of the first flow start (ETA reference)
    double firstStartWall{-1}; //!< wall seconds at the first flow start
    uint32_t previousSeed{1};  //!< RngSeedManager seed before the run (restored after)
    // Runs over several MPI ranks (spec->run.ranks > 1).
    std::vector<uint32_t> rankOf; //!< node -> MPI rank (PartitionNodes)
    uint32_t myRank{0};           //!< this process's rank
    std::vector<Ptr<RateErrorModel>> errorModels; //!< the links' (CreateLinks; their streams fixed after the fabric's)
    //! quirks.flowPorts with quirks.simai: the next sport per (source, destination) host pair (StartFlow)
    std::map<std::pair<uint32_t, uint32_t>, uint16_t> simaiSport;

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
        // Its hand-off, sendLatencyNs before now: its dependents by afterReady have one
        // dependency less (their start is at least latencyNs after it).
        for (uint32_t d : readyDependents[id])
        {
            DependencyDelivered(d,
                                Simulator::Now() -
                                    NanoSeconds(static_cast<int64_t>(f.sendLatencyNs)) +
                                    NanoSeconds(static_cast<int64_t>(spec->flows[d].latencyNs)));
        }
        Ptr<RdmaNic> nic = fabric->GetNic(f.src);
        if (spec->transport.quirks.flowPorts)
        {
            if (spec->transport.quirks.simai)
            {
                // SimAI's ports (entry.h SendFlow): sport = portNumber[src][dst]++ from 10000,
                // counted per (source, destination) pair in start order; dport 100.
                uint16_t& next = simaiSport
                                     .emplace(std::make_pair(f.src, f.dst),
                                              RdmaNic::SIMAI_FIRST_SPORT)
                                     .first->second;
                r.sport = next++;
                r.dport = RdmaNic::SIMAI_DPORT;
            }
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
        DependenciesMet(flowId, at, false);
    }

    /// Flow \p flowId's last byte was sent (its serialisation ends at \p at): its dependents
    /// by RdmaScenarioFlow::afterSent have one dependency less.
    void OnSent(uint32_t flowId, Time at)
    {
        if (flowId >= sentDependents.size())
        {
            return;
        }
        for (uint32_t d : sentDependents[flowId])
        {
            const RdmaScenarioFlow& f = spec->flows[d];
            DependencyDelivered(d, at + NanoSeconds(static_cast<int64_t>(f.latencyNs)));
        }
    }

    /// Flow \p flowId was delivered (\p completion false) or completed at its sender (true) at
    /// \p at: its dependents that count this event have one dependency less.
    void DependenciesMet(uint32_t flowId, Time at, bool completion)
    {
        for (uint32_t d : dependents[flowId])
        {
            const RdmaScenarioFlow& f = spec->flows[d];
            if (f.afterCompletion == completion)
            {
                DependencyDelivered(d, at + NanoSeconds(static_cast<int64_t>(f.latencyNs)));
            }
        }
        for (uint32_t d : computeDependents[flowId])
        {
            const RdmaScenarioFlow& f = spec->flows[d];
            if (f.afterCompletion == completion)
            {
                DependencyDelivered(
                    d,
                    at + NanoSeconds(static_cast<int64_t>(f.computeNs + f.latencyNs)));
            }
        }
    }

    /// One dependency of flow \p d is met, letting it start at \p ready at the earliest; the
    /// last one starts it at the latest of those times and its own start time.
    void DependencyDelivered(uint32_t d, Time ready)
    {
        earliest[d] = std::max(earliest[d], ready);
        if (pending[d] > 0 && --pending[d] == 0)
        {
            const RdmaScenarioFlow& f = spec->flows[d];
            const Time now = Simulator::Now();
            const Time startAt = std::max(NanoSeconds(static_cast<int64_t>(f.startNs)), earliest[d]);
            Simulator::ScheduleWithContext(f.src,
                                           startAt > now ? startAt - now : Time(0),
                                           &State::StartFlow,
                                           this,
                                           d);
        }
    }

    /// Partition-invariant mode: a completed flow's receiver state was deleted (RdmaNic::
    /// ReceiverReleaseDelay after its completion): its NACK count.
    void OnRxReleased(uint32_t flowId, uint64_t nacksSent, uint64_t)
    {
        if (flowId < results.size())
        {
            results[flowId].nacks = nacksSent;
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
        DependenciesMet(rec.flowId, rec.finish, true);
        if (++completed == results.size() && !spec->run.partitionInvariant)
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

    static void OnLoss(State* s, Ptr<const Packet> p)
    {
        ++s->counters.linkLoss;
        if (s->spec->run.failedLinkDrops)
        {
            s->RecordFailedDrop(*p);
        }
    }

    /// failed_drops.csv: a data packet sent by a NIC (flow, byte offset); one at an offset
    /// the flow has sent before is a resend.
    static void OnDataSentForDrops(State* s, uint32_t flow, uint32_t seq, uint16_t)
    {
        auto [it, fresh] = s->failedDropsHighSent.try_emplace(flow, seq);
        if (!fresh && seq <= it->second)
        {
            s->failedDropsResent.emplace(flow, seq);
            return;
        }
        it->second = std::max<uint64_t>(it->second, seq);
    }

    /// failed_drops.csv: a packet lost on a down link; data packets and probes count for their
    /// flow (the sender's active queue pair, else the only flow between its two hosts).
    void RecordFailedDrop(const Packet& p)
    {
        RdmaHeader h;
        h.PeekFrom(p);
        if (h.type != RdmaHeader::DATA)
        {
            return;
        }
        const bool probe = (h.flags & RdmaHeader::FLAG_PROBE) != 0;
        const uint32_t src = RdmaHostId(h.sip);
        const uint32_t dst = RdmaHostId(h.dip);
        uint32_t flow = UINT32_MAX;
        if (src < isSwitch.size() && !isSwitch[src])
        {
            flow = fabric->GetNic(src)->GetFlowIdOfQpn(h.qpn);
        }
        if (flow >= results.size())
        {
            flow = UINT32_MAX;
            for (const RdmaScenarioFlowResult& r : results)
            {
                if (r.src == src && r.dst == dst)
                {
                    if (flow != UINT32_MAX)
                    {
                        flow = UINT32_MAX; // several: cannot tell which
                        break;
                    }
                    flow = r.id;
                }
            }
        }
        const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
        FailedDrops& d = failedDrops[flow];
        if (probe)
        {
            ++d.probes;
            d.lastProbeNs = now;
            return;
        }
        if (d.count++ == 0)
        {
            d.firstNs = now;
        }
        d.lastNs = now;
        if (failedDropsResent.count({flow, h.seq}) != 0)
        {
            ++d.resends;
            d.lastResendNs = now;
        }
    }

    /// rtt_hist.csv: one uet ACK's RTT.
    static void OnUetRtt(State* s, uint32_t, Time rtt)
    {
        const uint64_t width = s->spec->run.rttHistogramNs;
        const uint64_t bin = static_cast<uint64_t>(std::max<int64_t>(rtt.GetNanoSeconds(), 0)) / width;
        if (bin >= s->rttHist.size())
        {
            s->rttHist.resize(bin + 1, 0);
        }
        ++s->rttHist[bin];
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

} // namespace ns3

#endif /* RDMA_SCENARIO_STATE_H */
