/*
 * rdma-lb: test suite "rdma-lb-themis" for the switch-side load balancers end to end
 * (Themis; PLTS; adaptive routing and DRILL: doc/rdma-lb.rst, "Papers").
 *
 *  - The Themis paper's §2.2 / Fig. 1: 8 hosts on a 100 Gbps leaf-spine (4 leaves x 2 hosts, 2
 *    spines, 1 us links), two rings of 4 hosts ({0,2,4,6}, {1,3,5,7}, each host sending to the next
 *    in its ring), NICs with NIC-SR and DCQCN (the NIC's defaults: T_D 4 us, T_I 300 us). The paper
 *    sends 100 MB per flow; we send RING_BYTES (4 MB, 4000 packets) so that the suite runs in
 *    seconds -- the statistics are per-packet ratios and settle well within that. Random spraying
 *    (host `spray`, switch `plts-random`) causes spurious retransmissions and NACK-driven rate cuts
 *    with no loss; Themis brings both to (near) zero and the throughput to >= 95% of the
 *    no-reordering ideal. The table is printed beside the paper's 16% / 86% / 71%.
 *  - Per-packet schemes balance uplinks: 8 flows of 4 MB across a 4-spine leaf-spine keep the
 *    uplink byte counts within 5% of each other (random spraying of ~32000 packets: one
 *    standard deviation is ~1% of a port's share); ECMP (fixed seed) does not.
 *  - Themis' memory at a ToR follows its paper's §4; a link failure reverts Themis to ECMP (§6);
 *    in a 3-tier fat tree (path-index routing above the ToRs) the PathMap spreads one flow
 *    evenly over the 4 core paths.
 */
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/rdma-lb-module.h"

#include "rdma-lb-test-util.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

const DataRate G100("100Gbps");
const uint64_t RING_BYTES = 4000000;
const uint32_t PAYLOAD = 1000;
const uint32_t DATA_WIRE = PAYLOAD + RdmaHeader::DATA_HEADER_BYTES;

/// What one ring run measured.
struct RingResult
{
    uint32_t completed{0};
    uint64_t dataPkts{0};
    uint64_t retxPkts{0};
    uint64_t nacksRx{0};
    uint64_t cnpsRx{0};
    uint64_t rateCuts{0};
    uint64_t timeouts{0};
    uint64_t drops{0};
    double sendRateFrac{0};   //!< mean over flows of (data bytes sent / FCT) / line rate
    double throughputFrac{0}; //!< mean over flows of ideal FCT / FCT
    rdmalbtest::ThemisCounters themis; //!< summed over the four ToRs
    uint64_t tor0MemoryBytes{0};
};

/// Ideal FCT of \p bytes in the ring: no reordering, so no NACK and no rate cut. Each host
/// port carries its own flow's data and the per-packet ACKs (60 B, the NIC's default ACK
/// interval of one packet) of the flow it receives, an equal number of packets; so the
/// serialisation of every packet plus one ACK at line rate, plus the first packet's
/// store-and-forward at 3 switches and 4 propagation delays of 1 us.
double
IdealFctSeconds(uint64_t bytes)
{
    const uint64_t pkts = (bytes + PAYLOAD - 1) / PAYLOAD;
    const double wire =
        static_cast<double>(bytes + pkts * (RdmaHeader::DATA_HEADER_BYTES + RdmaHeader::ACK_BYTES));
    return wire * 8 / 100e9 + 3 * DATA_WIRE * 8 / 100e9 + 4e-6;
}

/// The Themis paper's ring setup under \p algorithm (see the file comment).
RingResult
RunRing(const std::string& algorithm, const std::string& params, uint64_t bytes)
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    RdmaFabricHelper f;
    f.SetLoadBalancer(algorithm, params);
    f.BuildLeafSpine(4, 2, 2, G100, G100, MicroSeconds(1)); // hosts 0-7, leaves 8-11, spines 12-13
    for (uint32_t h = 0; h < 8; ++h)
    {
        f.GetNic(h)->SetAttribute("LossRecovery", StringValue("ns3::RdmaNicSr"));
    }
    f.Finish();
    f.AssignStreams(0);
    RingResult r;
    std::vector<RdmaFlowRecord> recs;
    for (uint32_t h = 0; h < 8; ++h)
    {
        const uint32_t dst = (h + 2) % 8; // next host of the same parity: two rings of 4
        f.AddFlow(h, h, dst, bytes, MicroSeconds(1));
        f.GetNic(h)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](std::vector<RdmaFlowRecord>* v, const RdmaFlowRecord& rec) {
                                  v->push_back(rec);
                              },
                              &recs));
    }
    Simulator::Stop(MilliSeconds(20));
    Simulator::Run();
    for (uint32_t s = 8; s < 14; ++s)
    {
        r.drops += f.GetSwitch(s)->GetTotalDrops();
    }
    for (uint32_t s = 8; s < 12; ++s)
    {
        rdmalbtest::ThemisCounters c = rdmalbtest::GetThemisCounters(f.GetSwitch(s));
        r.themis.enabled = c.enabled;
        r.themis.sprayedPkts += c.sprayedPkts;
        r.themis.nacksSeen += c.nacksSeen;
        r.themis.nacksBlocked += c.nacksBlocked;
        r.themis.nacksForwarded += c.nacksForwarded;
        r.themis.nacksUnresolved += c.nacksUnresolved;
        r.themis.compensations += c.compensations;
        r.themis.cancellations += c.cancellations;
        r.themis.ringOverwrites += c.ringOverwrites;
        r.themis.flows += c.flows;
    }
    r.tor0MemoryBytes = f.GetSwitch(8)->GetLbMemoryBytes();
    Simulator::Destroy();
    for (const RdmaFlowRecord& rec : recs)
    {
        ++r.completed;
        r.dataPkts += rec.dataPkts;
        r.retxPkts += rec.retxPkts;
        r.nacksRx += rec.nacksRx;
        r.cnpsRx += rec.cnpsRx;
        r.rateCuts += rec.rateCuts;
        r.timeouts += rec.timeouts;
        const double fct = (rec.finish - rec.start).GetSeconds();
        r.sendRateFrac += static_cast<double>(rec.dataPkts * DATA_WIRE) * 8 / fct / 100e9;
        r.throughputFrac += IdealFctSeconds(rec.size) / fct;
    }
    if (r.completed > 0)
    {
        r.sendRateFrac /= r.completed;
        r.throughputFrac /= r.completed;
    }
    return r;
}

} // namespace

/// The Themis paper's Fig. 1 and Themis' fix, end to end.
class ThemisRingTestCase : public TestCase
{
  public:
    ThemisRingTestCase()
        : TestCase("ring traffic: spraying causes spurious retransmissions and rate cuts "
                   "without loss; Themis removes them and reaches >= 95% of the ideal")
    {
    }

  private:
    void DoRun() override
    {
        const std::vector<std::string> algs = {"ecmp", "spray", "plts-random", "themis"};
        std::map<std::string, RingResult> res;
        for (const auto& a : algs)
        {
            res[a] = RunRing(a, "", RING_BYTES);
        }
        std::printf("\nrdma-lb-themis: Themis paper ring (8 x %.0f MB, 100G leaf-spine 4x2, 2 spines, "
                    "NIC-SR + DCQCN)\n",
                    RING_BYTES / 1e6);
        std::printf("%-12s %10s %7s %7s %9s %6s %10s %11s %9s %9s\n",
                    "algorithm", "spur.retx", "NACKs", "CNPs", "ratecuts", "drops", "send-rate",
                    "throughput", "blocked", "compens.");
        std::printf("%-12s %10s %7s %7s %9s %6s %10s %11s %9s %9s\n",
                    "paper(spray)", "16%", "-", "-", "-", "0", "86%", "71%", "-", "-");
        for (const auto& a : algs)
        {
            const RingResult& r = res[a];
            std::printf("%-12s %9.2f%% %7lu %7lu %9lu %6lu %9.1f%% %10.1f%% %9lu %9lu\n",
                        a.c_str(),
                        100.0 * r.retxPkts / std::max<uint64_t>(r.dataPkts, 1),
                        static_cast<unsigned long>(r.nacksRx),
                        static_cast<unsigned long>(r.cnpsRx),
                        static_cast<unsigned long>(r.rateCuts),
                        static_cast<unsigned long>(r.drops),
                        100 * r.sendRateFrac,
                        100 * r.throughputFrac,
                        static_cast<unsigned long>(r.themis.nacksBlocked),
                        static_cast<unsigned long>(r.themis.compensations));
        }
        std::fflush(stdout);

        for (const auto& a : algs)
        {
            const RingResult& r = res[a];
            NS_TEST_ASSERT_MSG_EQ(r.completed, 8u, a << ": every flow completes");
            // PFC keeps the fabric lossless, so every retransmission is spurious.
            NS_TEST_EXPECT_MSG_EQ(r.drops, 0u, a << ": no packet lost");
            NS_TEST_EXPECT_MSG_EQ(r.timeouts, 0u, a << ": no timeout");
        }
        for (const std::string a : {"spray", "plts-random"})
        {
            const RingResult& r = res[a];
            // Our DCQCN recovers slowly (AI 40 Mb/s, T_I 300 us), so the NACK-driven cuts
            // dominate: fewer packets in flight, less reordering, fewer spurious resends than
            // the paper's 16%, and a much lower throughput than its 71%.
            NS_TEST_EXPECT_MSG_GT(static_cast<double>(r.retxPkts) / r.dataPkts,
                                  0.005,
                                  a << ": spraying causes spurious retransmissions");
            NS_TEST_EXPECT_MSG_GT(r.nacksRx, 100u, a << ": reordering NACKs reach the sender");
            NS_TEST_EXPECT_MSG_GT(r.rateCuts, 30u, a << ": NACKs cut the rate");
            NS_TEST_EXPECT_MSG_LT(r.throughputFrac, 0.6, a << ": throughput far below ideal");
        }
        const RingResult& t = res["themis"];
        NS_TEST_EXPECT_MSG_EQ(t.themis.enabled, true, "themis counters");
        NS_TEST_EXPECT_MSG_EQ(t.themis.sprayedPkts, t.dataPkts, "Themis-S sprays every packet");
        NS_TEST_EXPECT_MSG_GT(t.themis.nacksSeen, 0u, "the RNICs did NACK reordering");
        NS_TEST_EXPECT_MSG_EQ(t.themis.nacksForwarded, 0u, "no loss: no valid NACK");
        NS_TEST_EXPECT_MSG_EQ(t.nacksRx, 0u, "no NACK reaches a sender");
        NS_TEST_EXPECT_MSG_EQ(t.rateCuts, 0u, "no rate cut: no NACK, and no congestion");
        NS_TEST_EXPECT_MSG_EQ(t.themis.compensations, 0u, "no loss: nothing to compensate");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(static_cast<double>(t.retxPkts) / t.dataPkts,
                                    0.001,
                                    "Themis: (near) zero spurious retransmissions");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(t.throughputFrac, 0.95, "Themis: >= 95% of the ideal");
        // The Themis paper's §4 at ToR 8: 2 paths x 2 B of PathMap; 2 incoming cross-rack QPs, each
        // 20 B of flow table + a 38-entry queue (100 Gbps x 2089 ns x 1.5 / 1048 B).
        NS_TEST_EXPECT_MSG_EQ(t.tor0MemoryBytes, 2u * 2 + 2 * (20 + 38), "memory (§4)");
    }
};

namespace
{
/// Data bytes leaf 16 sent on each of its 4 uplinks (ports 8-11) while 8 flows of \p bytes
/// (NIC-SR receivers)
/// go from its hosts 0-7 to hosts 8-15 of leaf 17 (2 leaves x 8 hosts, 4 spines, 100 Gbps).
std::vector<uint64_t>
RunUplinkBalance(const std::string& algorithm, uint64_t bytes, bool* allDone)
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    RdmaFabricHelper f;
    f.SetLoadBalancer(algorithm, "");
    f.BuildLeafSpine(2, 8, 4, G100, G100, MicroSeconds(1)); // hosts 0-15, leaves 16-17
    for (uint32_t h = 0; h < 16; ++h)
    {
        // Selective repeat: reordering resends single packets, not windows (GBN's go-back
        // bursts would add noise to the byte counts that is not the scheme's doing).
        f.GetNic(h)->SetAttribute("LossRecovery", StringValue("ns3::RdmaNicSr"));
    }
    f.Finish();
    f.AssignStreams(0);
    std::vector<uint64_t> up(4, 0);
    uint32_t done = 0;
    for (uint32_t h = 0; h < 8; ++h)
    {
        f.AddFlow(h, h, 8 + h, bytes, MicroSeconds(1));
        f.GetNic(h)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](uint32_t* d, const RdmaFlowRecord&) { ++*d; }, &done));
    }
    f.GetSwitch(16)->TraceConnectWithoutContext(
        "Forward",
        MakeBoundCallback(+[](std::vector<uint64_t>* u, Ptr<const Packet> p, uint32_t, uint32_t out) {
                              RdmaHeader h;
                              p->PeekHeader(h);
                              if (h.type == RdmaHeader::DATA && out >= 8)
                              {
                                  (*u)[out - 8] += p->GetSize();
                              }
                          },
                          &up));
    Simulator::Stop(MilliSeconds(20));
    Simulator::Run();
    Simulator::Destroy();
    *allDone = done == 8;
    return up;
}

/// (max - min) / mean of \p v.
double
Spread(const std::vector<uint64_t>& v)
{
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    double mean = 0;
    for (uint64_t x : v)
    {
        mean += static_cast<double>(x) / v.size();
    }
    return mean == 0 ? 1.0 : static_cast<double>(*hi - *lo) / mean;
}
} // namespace

/// Per-packet schemes spread 8 long flows evenly over 4 uplinks; ECMP collides.
class UplinkBalanceTestCase : public TestCase
{
  public:
    UplinkBalanceTestCase()
        : TestCase("per-packet switch schemes keep uplink bytes within 5%; ECMP does not")
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t bytes = 4000000;
        std::printf("\nrdma-lb-themis: uplink bytes, 8 x 4 MB over 4 spines (spread = (max-min)/mean)\n");
        // (algorithm, hashes whole flows: its 8 flows collide on the 4 uplinks)
        const std::vector<std::pair<std::string, bool>> algorithms = {{"ecmp", true},
                                                                      {"plts-random", false},
                                                                      {"plts-counter", false},
                                                                      {"plts-rr", false},
                                                                      {"adaptive", false},
                                                                      {"drill", false},
                                                                      {"themis", false}};
        for (const auto& [a, collides] : algorithms)
        {
            bool done = false;
            std::vector<uint64_t> up = RunUplinkBalance(a, bytes, &done);
            const double spread = Spread(up);
            std::printf("%-13s %10lu %10lu %10lu %10lu  spread %5.1f%%\n",
                        a.c_str(),
                        static_cast<unsigned long>(up[0]),
                        static_cast<unsigned long>(up[1]),
                        static_cast<unsigned long>(up[2]),
                        static_cast<unsigned long>(up[3]),
                        100 * spread);
            NS_TEST_EXPECT_MSG_EQ(done, true, a << ": all flows complete");
            if (collides)
            {
                NS_TEST_EXPECT_MSG_GT(spread, 0.05, a << "'s 8 flows collide on 4 uplinks");
            }
            else
            {
                NS_TEST_EXPECT_MSG_LT(spread, 0.05, a << ": uplinks within 5%");
            }
        }
        std::fflush(stdout);
    }
};

/// The Themis paper's §6: a failed uplink reverts Themis to ECMP at the ToRs; the flows still
/// complete. The helper tells the ToR not attached to the link unless \p notifyRemote is false.
class ThemisLinkFailureTestCase : public TestCase
{
  public:
    explicit ThemisLinkFailureTestCase(bool notifyRemote)
        : TestCase(std::string("a link failure reverts Themis to ECMP (Themis paper, §6), ") +
                   (notifyRemote ? "remote ToRs told" : "only the attached ToR told")),
          m_notifyRemote(notifyRemote)
    {
    }

  private:
    void DoRun() override
    {
        RngSeedManager::SetSeed(1);
        RngSeedManager::SetRun(1);
        Config::SetDefault("ns3::RdmaSwitch::WithdrawFailedPorts", BooleanValue(true));
        RdmaFabricHelper f;
        f.SetLoadBalancer("themis");
        f.SetNotifyRemoteLinkState(m_notifyRemote);
        f.BuildLeafSpine(2, 8, 4, G100, G100, MicroSeconds(1)); // hosts 0-15, leaves 16-17
        for (uint32_t h = 0; h < 16; ++h)
        {
            f.GetNic(h)->SetAttribute("LossRecovery", StringValue("ns3::RdmaNicSr"));
        }
        f.Finish();
        f.AssignStreams(0);
        // Uplinks used per flow (by sender) before and after the reaction to the failure.
        struct Uplinks
        {
            std::map<uint32_t, std::set<uint32_t>> before, after;
        } u;
        const Time failAt = MicroSeconds(60);
        const Time reactBy = failAt + MicroSeconds(10); // WithdrawDelay
        uint32_t done = 0;
        for (uint32_t h = 0; h < 4; ++h)
        {
            f.AddFlow(h, h, 8 + h, 2000000, MicroSeconds(1));
            f.GetNic(h)->TraceConnectWithoutContext(
                "FlowRecord",
                MakeBoundCallback(+[](uint32_t* d, const RdmaFlowRecord&) { ++*d; }, &done));
        }
        f.GetSwitch(16)->TraceConnectWithoutContext(
            "Forward",
            MakeBoundCallback(+[](Uplinks* w, Time t, Ptr<const Packet> p, uint32_t, uint32_t out) {
                                  RdmaHeader h;
                                  p->PeekHeader(h);
                                  if (h.type != RdmaHeader::DATA || out < 8)
                                  {
                                      return;
                                  }
                                  const Time now = Simulator::Now();
                                  if (now < MicroSeconds(60))
                                  {
                                      w->before[RdmaHostId(h.sip)].insert(out);
                                  }
                                  else if (now > t)
                                  {
                                      w->after[RdmaHostId(h.sip)].insert(out);
                                  }
                              },
                              &u,
                              reactBy));
        f.ScheduleLinkFailure(16, 18, failAt); // leaf 16 - spine 18, never repaired
        Simulator::Stop(MilliSeconds(20));
        Simulator::Run();
        const bool fallback16 = rdmalbtest::GetThemisCounters(f.GetSwitch(16)).ecmpFallback;
        const bool fallback17 = rdmalbtest::GetThemisCounters(f.GetSwitch(17)).ecmpFallback;
        Simulator::Destroy();
        Config::Reset();
        NS_TEST_EXPECT_MSG_EQ(fallback16, true, "the ToR at the failed link reverted");
        NS_TEST_EXPECT_MSG_EQ(fallback17, m_notifyRemote, "the remote ToR reverted iff told");
        NS_TEST_EXPECT_MSG_EQ(done, 4u, "all flows complete");
        for (uint32_t h = 0; h < 4; ++h)
        {
            NS_TEST_EXPECT_MSG_EQ(u.before[h].size(), 4u, "flow " << h << " sprayed over 4 uplinks");
            NS_TEST_EXPECT_MSG_EQ(u.after[h].size(), 1u, "flow " << h << " on one ECMP uplink");
            NS_TEST_EXPECT_MSG_EQ(u.after[h].count(8), 0u, "not on the failed uplink");
        }
    }

    bool m_notifyRemote;
};

namespace
{
/// Drops the first arrival of each listed PSN of the flow from one sender (a real loss).
class DropPsnsErrorModel : public ErrorModel
{
  public:
    DropPsnsErrorModel(uint32_t sip, std::set<uint32_t> psns)
        : m_sip(sip),
          m_psns(std::move(psns))
    {
    }

    uint32_t dropped{0}; //!< packets dropped so far

  private:
    bool DoCorrupt(Ptr<Packet> p) override
    {
        RdmaHeader h;
        p->PeekHeader(h);
        if (h.type != RdmaHeader::DATA || h.sip != m_sip || m_psns.erase(h.seq / PAYLOAD) == 0)
        {
            return false;
        }
        ++dropped;
        return true;
    }

    void DoReset() override
    {
    }

    uint32_t m_sip;
    std::set<uint32_t> m_psns;
};

/// What the loss run measured for the flow 0 -> 2.
struct LossResult
{
    bool done{false};
    RdmaFlowRecord rec;
    rdmalbtest::ThemisCounters dst; //!< the destination ToR's counters
    uint32_t dropped{0};
};

/// The ring under Themis with three data packets of flow 0 -> 2 lost at the destination ToR.
LossResult
RunRingWithLosses(const std::string& params)
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    RdmaFabricHelper f;
    f.SetLoadBalancer("themis", params);
    f.BuildLeafSpine(4, 2, 2, G100, G100, MicroSeconds(1));
    for (uint32_t h = 0; h < 8; ++h)
    {
        f.GetNic(h)->SetAttribute("LossRecovery", StringValue("ns3::RdmaNicSr"));
    }
    f.Finish();
    f.AssignStreams(0);
    Ptr<DropPsnsErrorModel> em =
        Create<DropPsnsErrorModel>(RdmaHostAddress(0), std::set<uint32_t>{100, 1001, 1502});
    for (uint32_t port : {2, 3}) // leaf 9's uplinks
    {
        f.GetSwitch(9)->GetPort(port)->SetAttribute("ReceiveErrorModel", PointerValue(em));
    }
    LossResult out;
    for (uint32_t h = 0; h < 8; ++h)
    {
        f.AddFlow(h, h, (h + 2) % 8, 2000000, MicroSeconds(1));
    }
    f.GetNic(0)->TraceConnectWithoutContext(
        "FlowRecord",
        MakeBoundCallback(+[](LossResult* o, const RdmaFlowRecord& r) {
                              o->done = true;
                              o->rec = r;
                          },
                          &out));
    Simulator::Stop(MilliSeconds(30));
    Simulator::Run();
    out.dst = rdmalbtest::GetThemisCounters(f.GetSwitch(9));
    out.dropped = em->dropped;
    Simulator::Destroy();
    return out;
}
} // namespace

/// The Themis paper's §3.3-3.4 with real losses: each loss is repaired by a forwarded valid NACK or
/// a compensation NACK, never by a timeout; without compensation a blocked loss waits for one.
class ThemisLossRecoveryTestCase : public TestCase
{
  public:
    ThemisLossRecoveryTestCase()
        : TestCase("real losses under Themis: valid or compensation NACKs repair them, no "
                   "timeout; without compensation, timeouts")
    {
    }

  private:
    void DoRun() override
    {
        LossResult with = RunRingWithLosses("");
        LossResult without = RunRingWithLosses("compensation = false");
        std::printf("\nrdma-lb-themis: 3 losses in flow 0->2: with compensation: fct %.1f us, "
                    "retx %lu, timeouts %lu, valid NACKs %lu, compensations %lu; without: fct "
                    "%.1f us, retx %lu, timeouts %lu\n",
                    (with.rec.finish - with.rec.start).GetMicroSeconds() + 0.0,
                    static_cast<unsigned long>(with.rec.retxPkts),
                    static_cast<unsigned long>(with.rec.timeouts),
                    static_cast<unsigned long>(with.dst.nacksForwarded),
                    static_cast<unsigned long>(with.dst.compensations),
                    (without.rec.finish - without.rec.start).GetMicroSeconds() + 0.0,
                    static_cast<unsigned long>(without.rec.retxPkts),
                    static_cast<unsigned long>(without.rec.timeouts));
        std::fflush(stdout);
        NS_TEST_ASSERT_MSG_EQ(with.done, true, "flow completes");
        NS_TEST_EXPECT_MSG_EQ(with.dropped, 3u, "three losses");
        NS_TEST_EXPECT_MSG_EQ(with.rec.timeouts, 0u, "no timeout with compensation");
        NS_TEST_EXPECT_MSG_EQ(with.dst.nacksForwarded + with.dst.compensations,
                              3u,
                              "one repairing NACK per loss");
        NS_TEST_EXPECT_MSG_EQ(with.rec.retxPkts, 3u, "only the lost packets are resent");
        NS_TEST_ASSERT_MSG_EQ(without.done, true, "flow completes without compensation");
        NS_TEST_EXPECT_MSG_EQ(without.dropped, 3u, "three losses");
        if (with.dst.compensations > 0)
        {
            NS_TEST_EXPECT_MSG_GT(without.rec.timeouts, 0u, "a blocked loss waits for a timeout");
        }
    }
};

/// The Themis paper's §3.2, 3-tier: the PathMap rewrite + path-index routing above the ToR spread
/// one flow over the 4 core paths of a k = 4 fat tree, one packet in four on each.
class ThemisThreeTierTestCase : public TestCase
{
  public:
    ThemisThreeTierTestCase()
        : TestCase("3-tier Themis: PathMap entropies reach 4 distinct core paths evenly")
    {
    }

  private:
    void DoRun() override
    {
        RngSeedManager::SetSeed(1);
        RngSeedManager::SetRun(1);
        RdmaFabricHelper f;
        f.SetLoadBalancer("themis", "remote_paths = 2");
        // host 0 - ToR 2 - aggs 4,5 (pod 0); host 1 - ToR 3 - aggs 6,7 (pod 1); cores 8-11:
        // cores 8,9 join aggs 4 and 6, cores 10,11 join aggs 5 and 7.
        f.CreateNodes(12, {2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
        const Time d = MicroSeconds(1);
        f.Link(0, 2, G100, d);
        f.Link(1, 3, G100, d);
        for (uint32_t a : {4, 5})
        {
            f.Link(2, a, G100, d);
        }
        for (uint32_t a : {6, 7})
        {
            f.Link(3, a, G100, d);
        }
        for (uint32_t c : {8, 9})
        {
            f.Link(4, c, G100, d);
            f.Link(6, c, G100, d);
        }
        for (uint32_t c : {10, 11})
        {
            f.Link(5, c, G100, d);
            f.Link(7, c, G100, d);
        }
        f.Finish();
        for (uint32_t s = 4; s < 12; ++s)
        {
            f.GetSwitch(s)->SetAttribute("PathIndexRouting", BooleanValue(true));
        }
        f.GetNic(0)->SetAttribute("LossRecovery", StringValue("ns3::RdmaNicSr"));
        f.GetNic(1)->SetAttribute("LossRecovery", StringValue("ns3::RdmaNicSr"));
        f.AssignStreams(0);
        std::vector<uint64_t> corePkts(4, 0);
        for (uint32_t c = 8; c < 12; ++c)
        {
            f.GetSwitch(c)->TraceConnectWithoutContext(
                "Forward",
                MakeBoundCallback(+[](uint64_t* n, Ptr<const Packet> p, uint32_t, uint32_t) {
                                      RdmaHeader h;
                                      p->PeekHeader(h);
                                      *n += h.type == RdmaHeader::DATA ? 1 : 0;
                                  },
                                  &corePkts[c - 8]));
        }
        RdmaFlowRecord rec;
        bool done = false;
        f.GetNic(0)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](std::pair<bool*, RdmaFlowRecord*> o, const RdmaFlowRecord& r) {
                                  *o.first = true;
                                  *o.second = r;
                              },
                              std::make_pair(&done, &rec)));
        f.AddFlow(0, 0, 1, 400000, MicroSeconds(1)); // 400 packets
        Simulator::Stop(MilliSeconds(5));
        Simulator::Run();
        const rdmalbtest::ThemisCounters src = rdmalbtest::GetThemisCounters(f.GetSwitch(2));
        const uint64_t mem = f.GetSwitch(2)->GetLbMemoryBytes();
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(done, true, "flow completes");
        NS_TEST_EXPECT_MSG_EQ(src.sprayedPkts, rec.dataPkts, "Themis-S sprayed every packet");
        for (uint32_t c = 0; c < 4; ++c)
        {
            NS_TEST_EXPECT_MSG_EQ(corePkts[c], rec.dataPkts / 4, "core " << 8 + c << ": 1/4");
        }
        NS_TEST_EXPECT_MSG_EQ(rec.retxPkts, 0u, "no spurious retransmission");
        NS_TEST_EXPECT_MSG_EQ(mem, 4u * 2, "source ToR: PathMap of 4 paths x 2 B (§4)");
    }
};

/// The suite.
class RdmaLbThemisTestSuite : public TestSuite
{
  public:
    RdmaLbThemisTestSuite()
        : TestSuite("rdma-lb-themis", UNIT)
    {
        AddTestCase(new ThemisRingTestCase, TestCase::QUICK);
        AddTestCase(new UplinkBalanceTestCase, TestCase::QUICK);
        AddTestCase(new ThemisLinkFailureTestCase(true), TestCase::QUICK);
        AddTestCase(new ThemisLinkFailureTestCase(false), TestCase::QUICK);
        AddTestCase(new ThemisLossRecoveryTestCase, TestCase::QUICK);
        AddTestCase(new ThemisThreeTierTestCase, TestCase::QUICK);
    }
};

/// The suite's one instance.
static RdmaLbThemisTestSuite g_rdmaLbThemisTestSuite;
