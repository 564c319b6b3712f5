/*
 * rdma-lb: test suite "rdma-lb-fabric": the fabric model's end-to-end "must show" items, each
 * asserted with numbers derived (in the comments) from the reference simulator's behaviour
 * (doc/rdma-lb.rst, "The reference simulator"), the papers or first principles:
 *  1. DCQCN, two flows into one 100 Gbps port: ECN marks, CNPs, the flows' rates converge to
 *     within 20 % of each other and the bottleneck stays above 90 % busy;
 *  2. 16:1 incast through one switch under Go-Back-N and IRN: with PFC (lossless MMU
 *     configuration), pauses and no drop -- IRN's BDP cap alone keeps it lossless; with DCQCN
 *     no drop; without PFC, drops at the egress threshold and every flow still completes; and
 *     the reference MMU, which drops despite PFC without congestion control;
 *  3. loss on a fabric link (not the receiver's port, which rdma-lb-nic covers) under ECMP:
 *     Go-Back-N, IRN and NIC-SR complete every flow; NIC-SR sends exactly one NACK per ePSN,
 *     and only for lost packets;
 *  4. random packet spraying with NIC-SR on the Themis paper's 8-host two-ring setup: spurious
 *     retransmissions, NACK-driven rate cuts and the throughput lost against the ideal;
 *  5. ECMP spreads 1000 flows over a leaf's 8 uplinks (chi-square at p = 0.01);
 *  6. PFC at the NIC: a paused priority group is not scheduled while another keeps the link;
 *     IRN's two RTOs, and IRN timeouts ignored with PFC on (as the reference);
 *  7. host load balancers on a leaf-spine with one slow (25 Gbps) spine: mean and p99 FCT
 *     slowdown per algorithm for one fixed flow set (printed as a table);
 *  8. a NIC of two ports (SimAI's dual-ToR GPU): SimAI's per-queue-pair port hash, the bytes of
 *     each port and the last flow's end.
 * RDMA_LB_FABRIC_CASES=text in the environment keeps only the cases whose name contains text.
 * All runs use fixed seeds (RngSeedManager seed 1, run 1, AssignStreams(0)) and are
 * deterministic.
 */
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/rdma-lb-module.h"

#include "rdma-lb-test-util.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

const DataRate G100("100Gbps");
const double LINE_BPS = 100e9;
/// On-wire bytes of a full data packet (1000 B payload + 48 B headers, the reference's).
const uint32_t PKT_BYTES = 1048;

/// Seeds every run the same way.
void
FixSeed()
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
}

/// Builds and finishes, under the fixed seed, \p nHosts hosts on one ECMP switch (node
/// nHosts), 100 Gbps, 1 us links, host h on port h.
void
BuildStar(RdmaFabricHelper& f, uint32_t nHosts)
{
    FixSeed();
    f.SetLoadBalancer("ecmp");
    f.CreateNodes(nHosts + 1, {nHosts});
    for (uint32_t h = 0; h < nHosts; ++h)
    {
        f.Link(h, nHosts, G100, MicroSeconds(1));
    }
    f.Finish();
    f.AssignStreams(0);
}

/// Sets PfcEnabled on every switch.
void
SetPfc(RdmaFabricHelper& f, bool on)
{
    for (uint32_t i = 0; i < f.GetNNodes(); ++i)
    {
        if (f.IsSwitch(i))
        {
            f.GetSwitch(i)->SetAttribute("PfcEnabled", BooleanValue(on));
        }
    }
}

/// Collects the FlowRecord of every completed flow.
void
CollectRecords(RdmaFabricHelper& f, std::map<uint32_t, RdmaFlowRecord>* out)
{
    for (uint32_t h : f.GetNicNodes())
    {
        f.GetNic(h)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](std::map<uint32_t, RdmaFlowRecord>* m,
                                  const RdmaFlowRecord& r) { (*m)[r.flowId] = r; },
                              out));
    }
}

/// Switch-side totals of a run (read before Simulator::Destroy).
struct SwitchTotals
{
    uint64_t drops{0};   //!< MMU drops
    uint64_t marks{0};   //!< ECN marks
    uint64_t pauses{0};  //!< PFC pause frames sent
};

SwitchTotals
ReadSwitches(const RdmaFabricHelper& f)
{
    SwitchTotals t;
    for (uint32_t i = 0; i < f.GetNNodes(); ++i)
    {
        if (f.IsSwitch(i))
        {
            t.drops += f.GetSwitch(i)->GetTotalDrops();
            t.marks += f.GetSwitch(i)->GetTotalEcnMarks();
            t.pauses += f.GetSwitch(i)->GetTotalPausesSent();
        }
    }
    return t;
}

/// The reference's ideal FCT: base RTT (2 x per-hop delays + one 1000 B transmission
/// per hop counted once) + the bytes with 48 B of headers per packet at the bottleneck rate.
double
IdealFctNs(uint64_t size, uint32_t hops, double bottleneckBps)
{
    const uint64_t pkts = (size + 999) / 1000;
    const double baseRttNs = 2.0 * hops * 1000.0 + hops * 1000.0 * 8 / LINE_BPS * 1e9;
    return baseRttNs + (static_cast<double>(size) + 48.0 * pkts) * 8 / bottleneckBps * 1e9;
}

/// Time-weighted mean of a piecewise-constant rate over [t0, t1].
class RateLog
{
  public:
    void Set(Time t, uint64_t bps)
    {
        m_steps.emplace_back(t, bps);
    }

    double Mean(Time t0, Time t1) const
    {
        double acc = 0;
        for (std::size_t i = 0; i < m_steps.size(); ++i)
        {
            Time a = std::max(m_steps[i].first, t0);
            Time b = i + 1 < m_steps.size() ? std::min(m_steps[i + 1].first, t1) : t1;
            if (b > a)
            {
                acc += static_cast<double>(m_steps[i].second) * (b - a).GetSeconds();
            }
        }
        return acc / (t1 - t0).GetSeconds();
    }

    std::size_t Steps() const
    {
        return m_steps.size();
    }

  private:
    std::vector<std::pair<Time, uint64_t>> m_steps;
};

/// Connects a RateLog per flow to a NIC's RateChange trace (flows start at line rate).
void
LogRates(Ptr<RdmaNic> nic, std::map<uint32_t, RateLog>* logs)
{
    nic->TraceConnectWithoutContext(
        "RateChange",
        MakeBoundCallback(+[](std::map<uint32_t, RateLog>* l, uint32_t flow, uint64_t, uint64_t r) {
                              (*l)[flow].Set(Simulator::Now(), r);
                          },
                          logs));
}

/// Percentile (nearest rank) of \p v.
double
Percentile(std::vector<double> v, double p)
{
    if (v.empty())
    {
        return 0;
    }
    std::sort(v.begin(), v.end());
    std::size_t rank = static_cast<std::size_t>(std::ceil(p / 100.0 * v.size()));
    return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// ==== 1. DCQCN: two flows into one port ======================================================

/**
 * Two long DCQCN flows share one 100 Gbps port (run.py's DCQCN parameters, the reference's ECN).
 * Flow 0 starts alone at line rate, flow 1 joins at line rate 100 us later (an asymmetric
 * start, so that fairness has to be reached, not inherited).
 *  - Marks and CNPs: two line-rate senders into one port grow the queue at 100 Gbps, past
 *    Kmin = 100 KB within 8 us: marks, and (as the reference) one CNP-flagged ACK per marked
 *    packet.
 *  - Fairness: both flows see the same marking probability per packet (one shared queue), so
 *    the faster flow collects proportionally more CNPs and cuts proportionally more
 *    (rate x (1 - alpha/2)), while increases move each rate half-way to its target every
 *    RP_TIMER = 300 us: the rates converge. After 5 ms (~16 increase periods) the 100 us head
 *    start is gone; the test asks for |r0 - r1| / max(r0, r1) < 0.2 over [5, 10] ms (the
 *    task's acceptance bound), on the DCQCN rates (RateChange, time-weighted) and on the
 *    bytes each flow actually sent.
 *  - Utilisation: a cut needs a queue above Kmin = 100 KB, i.e. 8 us of work for the port,
 *    and the sum of the rates is cut by at most alpha/2 <= 1/2, so the port rarely drains:
 *    > 90 % of the line rate (wire bytes out of the bottleneck port over the window).
 */
class DcqcnTwoFlowTestCase : public TestCase
{
  public:
    DcqcnTwoFlowTestCase()
        : TestCase("DCQCN: two flows into one 100G port get marks and CNPs, converge within 20% "
                   "of each other, and keep the port above 90% busy")
    {
    }

  private:
    void DoRun() override
    {
        RdmaFabricHelper f;
        BuildStar(f, 3); // hosts 0, 1 send to host 2 through switch 3
        std::map<uint32_t, RateLog> rates;
        for (uint32_t h : {0u, 1u})
        {
            LogRates(f.GetNic(h), &rates);
        }
        for (uint32_t flow : {0u, 1u})
        {
            rates[flow].Set(flow == 0 ? Time(0) : m_secondStart, uint64_t(LINE_BPS));
        }
        // CNP-flagged feedback leaving the receiver.
        uint64_t cnpsSent = 0;
        f.GetNode(2)->GetDevice(0)->TraceConnectWithoutContext(
            "Tx",
            MakeBoundCallback(+[](uint64_t* n, Ptr<const Packet> p) {
                                  RdmaHeader h;
                                  p->PeekHeader(h);
                                  *n += (h.type != RdmaHeader::DATA &&
                                         (h.flags & RdmaHeader::FLAG_CNP))
                                            ? 1
                                            : 0;
                              },
                              &cnpsSent));
        // Data packets each flow sends inside the measurement window.
        std::map<uint32_t, uint64_t> sentInWindow;
        for (uint32_t h : {0u, 1u})
        {
            f.GetNic(h)->TraceConnectWithoutContext(
                "DataSent",
                MakeBoundCallback(
                    +[](std::map<uint32_t, uint64_t>* m, Time t0, uint32_t flow, uint32_t,
                        uint16_t) {
                        if (Simulator::Now() >= t0)
                        {
                            ++(*m)[flow];
                        }
                    },
                    &sentInWindow,
                    m_window0));
        }
        // Long flows: neither completes before the end of the run.
        f.AddFlow(0, 0, 2, 1000000000, Time(0));
        f.AddFlow(1, 1, 2, 1000000000, m_secondStart);
        Ptr<RdmaNetDevice> bottleneck = f.GetSwitch(3)->GetPort(2);
        uint64_t tx0 = 0;
        Simulator::Schedule(
            m_window0,
            +[](uint64_t* tx, Ptr<RdmaNetDevice> b) { *tx = b->GetTxBytes(); },
            &tx0,
            bottleneck);
        Simulator::Stop(m_window1);
        Simulator::Run();
        const uint64_t tx1 = bottleneck->GetTxBytes();
        SwitchTotals sw = ReadSwitches(f);
        RdmaFlowRecord r0 = f.GetNic(0)->GetFlowRecord(0);
        RdmaFlowRecord r1 = f.GetNic(1)->GetFlowRecord(1);
        Simulator::Destroy();

        const double win = (m_window1 - m_window0).GetSeconds();
        const double rate0 = rates[0].Mean(m_window0, m_window1);
        const double rate1 = rates[1].Mean(m_window0, m_window1);
        const double thr0 = sentInWindow[0] * PKT_BYTES * 8.0 / win;
        const double thr1 = sentInWindow[1] * PKT_BYTES * 8.0 / win;
        const double util = (tx1 - tx0) * 8.0 / win / LINE_BPS;
        std::cout << std::fixed << std::setprecision(2) << "DCQCN two flows, window ["
                  << m_window0.As(Time::MS) << ", " << m_window1.As(Time::MS) << "]: marks "
                  << sw.marks << ", CNPs sent " << cnpsSent << " (received " << r0.cnpsRx << " + "
                  << r1.cnpsRx << "), rate cuts " << r0.rateCuts << " + " << r1.rateCuts
                  << "; mean DCQCN rate " << rate0 / 1e9 << " / " << rate1 / 1e9
                  << " Gbps; sent " << thr0 / 1e9 << " / " << thr1 / 1e9
                  << " Gbps; bottleneck utilisation " << util * 100 << " %" << std::endl;
        NS_TEST_EXPECT_MSG_GT(sw.marks, 0u, "the shared queue passed Kmin: ECN marks");
        NS_TEST_EXPECT_MSG_GT(cnpsSent, 0u, "the receiver sent CNP-flagged ACKs");
        NS_TEST_EXPECT_MSG_EQ(cnpsSent, r0.cnpsRx + r1.cnpsRx, "every CNP reached its sender");
        NS_TEST_EXPECT_MSG_GT(r0.rateCuts, 0u, "flow 0 cut its rate");
        NS_TEST_EXPECT_MSG_GT(r1.rateCuts, 0u, "flow 1 cut its rate");
        NS_TEST_EXPECT_MSG_EQ(sw.drops, 0u, "no drop (PFC on)");
        // Fairness: |a - b| / max(a, b) < 0.2, on the DCQCN rates and on what was sent.
        NS_TEST_EXPECT_MSG_LT(std::abs(rate0 - rate1) / std::max(rate0, rate1), 0.2, "rates");
        NS_TEST_EXPECT_MSG_LT(std::abs(thr0 - thr1) / std::max(thr0, thr1), 0.2, "throughputs");
        // Utilisation: wire bytes out of the bottleneck port over the window / capacity.
        NS_TEST_EXPECT_MSG_GT(util, 0.9, "bottleneck utilisation after convergence");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(util, 1.0 + 1e-9, "never above the line rate");
    }

    const Time m_secondStart{MicroSeconds(100)};
    const Time m_window0{MilliSeconds(5)};
    const Time m_window1{MilliSeconds(10)};
};

// ==== 2. 16:1 incast with and without PFC ====================================================

/**
 * 16 senders into one receiver through one 17-port switch (100 Gbps, 1 us), 1 MB each, under
 * \p mode, with PFC on or off, congestion control \p cc and the MMU's egress dynamic
 * threshold on (the reference) or off.
 *
 * First principles (reference MMU, 17 ports, B = 9 MiB): L_in = 8,846,524 B, L_eg = 9,294,656 B.
 *  - Without congestion control the queue grows at 15 x 100 Gbps. With PFC each ingress port
 *    pauses when its usage (1/16 of the pool P) - 2096 > (L_in - P) / 16, i.e. at
 *    P = (L_in + 16 x 2096) / 2 = 4.44 MB; the egress threshold drops at P ~ L_eg / 2 = 4.65 MB.
 *    After the pauses each port still receives what is on its 1 us link plus what the host
 *    sends while the pause travels (~26 KB), 16 x 26 KB = 416 KB > 4.65 - 4.44 MB: the
 *    reference's egress threshold drops lossless traffic. Second, a 5 us pause is renewed
 *    only by arriving packets: a paused host is silent, so its pause expires and it sends
 *    ~2 us at line rate (until the renewed pause arrives) per ~7 us, 16 x 2/7 x 100 Gbps
 *    >> 100 Gbps of drain: the queue outgrows the pause point. The lossless configuration
 *    needs both fixes: no egress dynamic threshold (SwitchMmu EgressDynamicThreshold) and a
 *    pause time T with 16 x 2 / (T + 2) <= 1, i.e. T >= 30 us (50 us here; an explicit
 *    resume still ends a pause early). Then only the ingress headroom (27,096 B per port
 *    > 26 KB) bounds the queue: lossless, and the port never idles (ideal completion).
 *  - With DCQCN the rates halve every 4 us after the first decrease (alpha ~ 1): the queue
 *    peaks near 2 MB, below the 4.44 MB pause point: no drop (and no pause needed).
 *  - PFC off, no congestion control: 16 MB offered at 16x the drain rate cross the egress
 *    drop point 4.65 MB within ~25 us: drops.
 */
class IncastTestCase : public TestCase
{
  public:
    IncastTestCase(TypeId mode,
                   bool pfc,
                   TypeId cc,
                   bool egressDt,
                   uint32_t pauseUs = 5)
        : TestCase(std::string("16:1 incast through one switch, ") +
                   mode.GetName() + ", cc " + cc.GetName() +
                   (pfc ? ", PFC on" : ", PFC off") +
                   (!pfc && mode == RdmaIrn::GetTypeId() ? " (4 queue pairs per sender)" : "") +
                   (egressDt ? "" : ", no egress DT, 50 us pauses") +
                   (!pfc                       ? ": drops, every flow completes"
                    : cc == RdmaDcqcn::GetTypeId()  ? ": no drop"
                    : egressDt                 ? ": pauses, yet the reference MMU drops"
                    : mode == RdmaIrn::GetTypeId()     ? ": no drop (BDP cap)"
                                               : ": pauses, no drop")),
          m_mode(mode),
          m_pfc(pfc),
          m_cc(cc),
          m_egressDt(egressDt),
          m_pauseUs(pauseUs),
          m_qpsPerSender(!pfc && m_mode == RdmaIrn::GetTypeId() ? 4 : 1)
    {
    }

  private:
    void DoRun() override
    {
        RdmaFabricHelper f;
        BuildStar(f, 17); // hosts 0-15 send to host 16 through switch 17
        SetPfc(f, m_pfc);
        f.GetSwitch(17)->GetMmu()->SetAttribute("EgressDynamicThreshold", BooleanValue(m_egressDt));
        f.GetSwitch(17)->SetAttribute("PauseTime", TimeValue(MicroSeconds(m_pauseUs)));
        rdmalbtest::SetNics(f, "LossRecovery", StringValue(m_mode.GetName()));
        rdmalbtest::SetNics(f, "CongestionControl", StringValue(m_cc.GetName()));
        std::map<uint32_t, RdmaFlowRecord> recs;
        CollectRecords(f, &recs);
        uint64_t pausesAtHosts = 0;
        for (uint32_t h = 0; h < 16; ++h)
        {
            f.GetNode(h)->GetDevice(0)->TraceConnectWithoutContext(
                "PfcRx",
                MakeBoundCallback(+[](uint64_t* n, uint32_t, uint32_t us) { *n += us > 0; },
                                  &pausesAtHosts));
        }
        uint64_t maxQueue = 0;
        f.GetSwitch(17)->GetPort(16)->TraceConnectWithoutContext(
            "QueueLength",
            MakeBoundCallback(+[](uint64_t* m, uint32_t q, uint64_t bytes) {
                                  if (q != 0)
                                  {
                                      *m = std::max(*m, bytes);
                                  }
                              },
                              &maxQueue));
        for (uint32_t i = 0; i < 16 * m_qpsPerSender; ++i)
        {
            f.AddFlow(i, i % 16, 16, m_flowBytes / m_qpsPerSender, Time(0));
        }
        Simulator::Stop(MilliSeconds(100));
        Simulator::Run();
        SwitchTotals sw = ReadSwitches(f);
        Simulator::Destroy();
        uint64_t retx = 0;
        uint64_t timeouts = 0;
        Time last;
        for (const auto& [id, r] : recs)
        {
            (void)id;
            retx += r.retxPkts;
            timeouts += r.timeouts;
            last = std::max(last, r.finish);
        }
        // Ideal: 16 x size through one 100 Gbps port.
        const double idealUs = IdealFctNs(16 * m_flowBytes, 2, LINE_BPS) / 1000;
        std::cout << GetName() << ":\n  pauses sent " << sw.pauses << " (received by hosts "
                  << pausesAtHosts << "), drops " << sw.drops << ", max queue " << maxQueue
                  << " B, completed " << recs.size() << "/" << 16 * m_qpsPerSender << ", retx "
                  << retx << ", timeouts "
                  << timeouts << ", last completion " << last.As(Time::US)
                  << " (all bytes at line rate: " << idealUs << " us)" << std::endl;
        NS_TEST_EXPECT_MSG_EQ(recs.size(), 16u * m_qpsPerSender, "every flow completes");
        if (!m_pfc)
        {
            NS_TEST_EXPECT_MSG_GT(sw.drops, 0u, "drops at the egress threshold");
            NS_TEST_EXPECT_MSG_EQ(sw.pauses, 0u, "no pause without PFC");
            NS_TEST_EXPECT_MSG_LT_OR_EQ(maxQueue, 4700000u, "queue capped near L_eg / 2");
            NS_TEST_EXPECT_MSG_GT_OR_EQ(retx, sw.drops, "every dropped packet was resent");
            return;
        }
        if (m_cc == RdmaDcqcn::GetTypeId())
        {
            NS_TEST_EXPECT_MSG_EQ(sw.drops, 0u, "DCQCN keeps the queue below the drop point");
            NS_TEST_EXPECT_MSG_LT(maxQueue, 4440000u, "and below the pause point");
            NS_TEST_EXPECT_MSG_EQ(retx, 0u, "nothing to resend");
            return;
        }
        if (m_mode == RdmaIrn::GetTypeId())
        {
            // IRN's BDP cap (the reference's): at most IrnBdp / 1000 + 1 = 105 packets of 1048 B
            // outstanding per flow, 16 x 110,040 B = 1.76 MB < the 4.44 MB pause point: IRN
            // alone keeps this incast lossless, no pause is needed.
            NS_TEST_EXPECT_MSG_EQ(sw.drops, 0u, "lossless");
            NS_TEST_EXPECT_MSG_LT_OR_EQ(maxQueue, 16u * 110040u, "queue bounded by the BDP cap");
            NS_TEST_EXPECT_MSG_EQ(retx, 0u, "nothing to resend");
            return;
        }
        NS_TEST_EXPECT_MSG_GT(sw.pauses, 0u, "pause frames sent");
        NS_TEST_EXPECT_MSG_GT(pausesAtHosts, 0u, "pause frames reached the senders");
        if (m_egressDt)
        {
            NS_TEST_EXPECT_MSG_GT(sw.drops, 0u, "the reference's egress DT drops despite PFC");
            NS_TEST_EXPECT_MSG_GT(maxQueue, 4440000u, "the queue passed the pause point");
        }
        else
        {
            NS_TEST_EXPECT_MSG_EQ(sw.drops, 0u, "lossless");
            NS_TEST_EXPECT_MSG_EQ(retx, 0u, "nothing to resend");
            // The pause point plus at most one headroom (27,096 B) per port.
            NS_TEST_EXPECT_MSG_LT(maxQueue, 4440000u + 16 * 27096u, "queue bounded by PFC");
        }
    }

    TypeId m_mode;
    bool m_pfc;
    TypeId m_cc;
    bool m_egressDt;
    uint64_t m_flowBytes{1000000};
    uint32_t m_pauseUs;
    /// IRN without PFC: 4 queue pairs per sender (250 KB each). IRN's BDP cap bounds each
    /// queue pair's outstanding bytes by 105 x 1048 = 110,040 B, so 16 of them (1.76 MB) can
    /// never reach the 4.65 MB drop point; 64 of them (7.0 MB) can.
    uint32_t m_qpsPerSender{1};
};

// ==== 3. Loss on a fabric link ===============================================================

/// Drops seen on one device: per (source address, sender's qpn), the lost byte offsets.
using LossMap = std::map<std::pair<uint32_t, uint16_t>, std::multiset<uint32_t>>;

/// Loss on the uplink leaf 0 -> spine 0 of a 2 x 4 x 4 leaf-spine; ECMP; 8 flows cross it.
class FabricLinkLossTestCase : public TestCase
{
  public:
    explicit FabricLinkLossTestCase(TypeId mode)
        : TestCase(mode.GetName() +
                   " recovers from 1% loss on a leaf-to-spine link and completes every flow" +
                   (mode == RdmaNicSr::GetTypeId()
                        ? std::string("; one NACK per ePSN, each for a lost packet")
                        : std::string())),
          m_mode(mode)
    {
    }

  private:
    void DoRun() override
    {
        FixSeed();
        RdmaFabricHelper f;
        f.SetLoadBalancer("ecmp");
        // Hosts 0-7 (four per leaf), leaves 8-9, spines 10-13.
        f.BuildLeafSpine(2, 4, 4, G100, G100, MicroSeconds(1));
        f.Finish();
        f.AssignStreams(0);
        rdmalbtest::SetNics(f, "LossRecovery", StringValue(m_mode.GetName()));
        // The reference's two settings (ConWeave's published runs): IRN runs lossy (PFC off);
        // Go-Back-N and the commodity NIC's selective repeat run over PFC.
        SetPfc(f, m_mode != RdmaIrn::GetTypeId());
        std::map<uint32_t, RdmaFlowRecord> recs;
        CollectRecords(f, &recs);
        // Spine 10's device 0 is its link to leaf 8: data from rack 0 to rack 1 arrives there.
        Ptr<NetDevice> lossy = f.GetNode(10)->GetDevice(0);
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetAttribute("ErrorRate", DoubleValue(0.01));
        em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
        em->AssignStreams(7);
        lossy->SetAttribute("ReceiveErrorModel", PointerValue(em));
        LossMap lost;
        lossy->TraceConnectWithoutContext(
            "RxDrop",
            MakeBoundCallback(+[](LossMap* m, Ptr<const Packet> p) {
                                  RdmaHeader h;
                                  p->PeekHeader(h);
                                  if (h.type == RdmaHeader::DATA)
                                  {
                                      (*m)[{h.sip, h.qpn}].insert(h.seq);
                                  }
                              },
                              &lost));
        LossMap nacks; // per (sip, qpn): the ePSN (expected byte) of every NACK sent
        for (uint32_t h = 4; h < 8; ++h)
        {
            f.GetNic(h)->TraceConnectWithoutContext(
                "NackSent",
                MakeBoundCallback(+[](LossMap* m, uint32_t sip, uint16_t qpn, uint32_t e) {
                                      (*m)[{sip, qpn}].insert(e);
                                  },
                                  &nacks));
        }
        // Four flows from each host of rack 0, one to each host of rack 1: 16 ECMP flows over
        // four uplinks.
        for (uint32_t i = 0; i < m_flows; ++i)
        {
            f.AddFlow(i, i % 4, 4 + (i + i / 4) % 4, 250000, MicroSeconds(1));
        }
        Simulator::Stop(MilliSeconds(100));
        Simulator::Run();
        SwitchTotals sw = ReadSwitches(f);
        Simulator::Destroy();
        uint64_t drops = 0;
        for (const auto& [k, v] : lost)
        {
            (void)k;
            drops += v.size();
        }
        uint64_t retx = 0;
        uint64_t nacksRx = 0;
        uint64_t timeouts = 0;
        for (const auto& [id, r] : recs)
        {
            (void)id;
            retx += r.retxPkts;
            nacksRx += r.nacksRx;
            timeouts += r.timeouts;
        }
        std::cout << m_mode.GetName()
                  << " with 1% loss on leaf 8 -> spine 10: lost " << drops
                  << " data packets of " << lost.size() << " flows, completed " << recs.size()
                  << "/" << m_flows << ", retx " << retx << ", NACKs received " << nacksRx
                  << ", timeouts "
                  << timeouts << ", MMU drops " << sw.drops << std::endl;
        NS_TEST_EXPECT_MSG_GT(drops, 0u, "the error model lost data on the fabric link");
        NS_TEST_EXPECT_MSG_EQ(recs.size(), m_flows, "every flow completes");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(retx, drops, "every lost packet was resent");
        if (m_mode != RdmaNicSr::GetTypeId())
        {
            return;
        }
        // Themis §2.2: each ePSN triggers at most one NACK, the NACK carries the ePSN, and
        // without reordering (ECMP) an out-of-order arrival means the ePSN packet was lost.
        uint64_t nackCount = 0;
        for (const auto& [k, es] : nacks)
        {
            std::set<uint32_t> distinct(es.begin(), es.end());
            NS_TEST_EXPECT_MSG_EQ(distinct.size(), es.size(), "one NACK per ePSN");
            for (uint32_t e : distinct)
            {
                const bool wasLost = lost[k].count(e) > 0;
                NS_TEST_EXPECT_MSG_EQ(wasLost, true, "the NACK for ePSN " << e << " names a loss");
            }
            nackCount += es.size();
        }
        NS_TEST_EXPECT_MSG_GT(nackCount, 0u, "NACKs were sent");
        NS_TEST_EXPECT_MSG_EQ(nacksRx, nackCount, "every NACK reached its sender");
        // Each loss is repaired by one NACK or (a lost tail or a lost resend) one timeout, and
        // NIC-SR resends only what it is asked for.
        NS_TEST_EXPECT_MSG_EQ(retx, nackCount + timeouts, "one resend per NACK or timeout");
    }

    TypeId m_mode;
    const uint32_t m_flows{16};
};

// ==== 4. Random spraying with NIC-SR: the Themis paper's Fig. 1 ===============================

/// The Themis paper's §2.2 / Fig. 1: two rings of four hosts on a 100 G leaf-spine, random packet
/// spraying, NIC-SR, DCQCN, no loss.
class SprayNicSrRingTestCase : public TestCase
{
  public:
    SprayNicSrRingTestCase()
        : TestCase("spray + NIC-SR on the Themis paper's two 4-host rings: no loss, yet spurious "
                   "retransmissions, NACK rate cuts and lost throughput")
    {
    }

  private:
    void DoRun() override
    {
        FixSeed();
        RdmaFabricHelper f;
        f.SetLoadBalancer("spray");
        // The Themis paper's Fig. 1a: eight hosts, all links 100 Gbps; its leaf/spine counts are
        // not given. Here four leaves of two hosts (host h on leaf h/2) and two spines: no
        // oversubscription, and every ring hop crosses the spine layer (2 paths).
        f.BuildLeafSpine(4, 2, 2, G100, G100, MicroSeconds(1));
        f.Finish();
        f.AssignStreams(0);
        rdmalbtest::SetNics(f, "LossRecovery", StringValue("ns3::RdmaNicSr"));
        std::map<uint32_t, RdmaFlowRecord> recs;
        CollectRecords(f, &recs);
        std::map<uint32_t, RateLog> rates;
        uint64_t hostDrops = 0;
        for (uint32_t h : f.GetHosts())
        {
            LogRates(f.GetNic(h), &rates);
            f.GetNode(h)->GetDevice(0)->TraceConnectWithoutContext(
                "RxDrop",
                MakeBoundCallback(+[](uint64_t* n, Ptr<const Packet>) { ++*n; }, &hostDrops));
        }
        // Rings {0, 2, 4, 6} and {1, 3, 5, 7}: each host sends to the next in its ring. Seed
        // 001 sends 100 MB per flow; scaled down 25x to 4 MB so the test takes seconds (each
        // flow still spans ~100 base RTTs and many DCQCN rate-increase periods).
        for (uint32_t h = 0; h < 8; ++h)
        {
            rates[h].Set(Time(0), uint64_t(LINE_BPS));
            f.AddFlow(h, h, (h + 2) % 8, m_size, Time(0));
        }
        Simulator::Stop(MilliSeconds(200));
        Simulator::Run();
        SwitchTotals sw = ReadSwitches(f);
        Simulator::Destroy();

        // Per flow: spurious retransmission ratio (every retransmission is spurious: nothing
        // is lost), mean DCQCN sending rate over the flow's life / line rate, and throughput
        // = ideal FCT / FCT (ideal: the reference's, over 4 hops at 100 Gbps).
        const double idealNs = IdealFctNs(m_size, 4, LINE_BPS);
        double sumRetx = 0;
        double sumRate = 0;
        double sumThr = 0;
        uint64_t nacks = 0;
        uint64_t cuts = 0;
        uint64_t retxTotal = 0;
        std::ostringstream table;
        table << std::fixed << std::setprecision(3)
              << "flow  fct_us   data_pkts retx  spurious_ratio nacks rate_cuts mean_rate/line "
                 "throughput/ideal\n";
        for (const auto& [id, r] : recs)
        {
            const double fctNs = static_cast<double>((r.finish - r.start).GetNanoSeconds());
            const double ratio = static_cast<double>(r.retxPkts) / r.dataPkts;
            const double rate = rates[id].Mean(r.start, r.finish) / LINE_BPS;
            const double thr = idealNs / fctNs;
            sumRetx += ratio;
            sumRate += rate;
            sumThr += thr;
            nacks += r.nacksRx;
            cuts += r.rateCuts;
            retxTotal += r.retxPkts;
            table << id << "     " << fctNs / 1000 << "  " << r.dataPkts << "      "
                  << r.retxPkts << "  " << ratio << "          " << r.nacksRx << "   "
                  << r.rateCuts << "      " << rate << "          " << thr << "\n";
        }
        const double n = static_cast<double>(recs.size());
        table << "mean: spurious retransmission ratio " << sumRetx / n << " (Themis paper: 0.16), "
              << "sending rate " << sumRate / n << " of line (Themis paper: 0.86), throughput "
              << sumThr / n << " of ideal (Themis paper: 0.71); ideal FCT " << idealNs / 1000
              << " us; MMU drops " << sw.drops << ", ECN marks " << sw.marks << ", pauses "
              << sw.pauses;
        std::cout << "spray + NIC-SR, 2 rings x 4 hosts, " << m_size / 1000000 << " MB per flow\n"
                  << table.str() << std::endl;
        NS_TEST_ASSERT_MSG_EQ(recs.size(), 8u, "every flow completes");
        NS_TEST_EXPECT_MSG_EQ(sw.drops + hostDrops, 0u, "no loss: every NACK is spurious");
        NS_TEST_EXPECT_MSG_GT(retxTotal, 0u, "spurious retransmissions");
        NS_TEST_EXPECT_MSG_GT(nacks, 0u, "NACKs from reordering alone");
        NS_TEST_EXPECT_MSG_GT(cuts, 0u, "NACK-driven DCQCN rate cuts");
        NS_TEST_EXPECT_MSG_LT(sumRate / n, m_rateBound, "mean sending rate below line rate");
        // Throughput loss: a resent packet occupies the bottleneck like a new one, so goodput
        // <= (1 - spurious ratio) x the sending rate; the test asserts the loss is at least
        // 5 % of the ideal (a margin well above the 0.1 % the ideal formula's rounding allows).
        NS_TEST_EXPECT_MSG_LT(sumThr / n, 0.95, "throughput lost against the ideal");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(sumThr / n, 1 - sumRetx / n + 0.01,
                                    "goodput bounded by the useful fraction");
    }

    const uint64_t m_size{4000000};
    const double m_rateBound{0.99};
};

// ==== 5. ECMP spreads flows evenly ============================================================

/// 1000 ECMP flows out of one leaf: chi-square test of uniformity over its 8 uplinks.
class EcmpChiSquareTestCase : public TestCase
{
  public:
    EcmpChiSquareTestCase()
        : TestCase("ECMP spreads 1000 flows over a leaf's 8 uplinks (chi-square, p = 0.01)")
    {
    }

  private:
    void DoRun() override
    {
        FixSeed();
        RdmaFabricHelper f;
        f.SetLoadBalancer("ecmp");
        // Hosts 0-31 (16 per leaf), leaves 32-33, spines 34-41: leaf 32's ports 0-15 are its
        // hosts, 16-23 its uplinks (the reference's 8 x 8 leaf-spine rack).
        f.BuildLeafSpine(2, 16, 8, G100, G100, MicroSeconds(1));
        f.Finish();
        f.AssignStreams(0);
        using PathMap = std::map<std::pair<uint32_t, uint16_t>, std::set<uint32_t>>;
        PathMap paths; // per flow (sip, qpn): the uplinks its data took
        f.GetSwitch(32)->TraceConnectWithoutContext(
            "Forward",
            MakeBoundCallback(+[](PathMap* m, Ptr<const Packet> p, uint32_t, uint32_t out) {
                                  RdmaHeader h;
                                  p->PeekHeader(h);
                                  if (h.type == RdmaHeader::DATA && out >= 16)
                                  {
                                      (*m)[{h.sip, h.qpn}].insert(out);
                                  }
                              },
                              &paths));
        std::map<uint32_t, RdmaFlowRecord> recs;
        CollectRecords(f, &recs);
        // 1000 flows of 3 packets, rack 0 -> rack 1, one every 100 ns.
        for (uint32_t i = 0; i < m_flows; ++i)
        {
            f.AddFlow(i, i % 16, 16 + (i * 7 + i / 16) % 16, 3000, NanoSeconds(100 * i));
        }
        Simulator::Stop(MilliSeconds(10));
        Simulator::Run();
        Simulator::Destroy();
        std::vector<double> count(8, 0);
        bool pinned = true;
        for (const auto& [k, ports] : paths)
        {
            (void)k;
            pinned = pinned && ports.size() == 1;
            count[*ports.begin() - 16] += 1;
        }
        // Uniform expectation E = 1000 / 8 = 125 per uplink; X^2 = sum (O - E)^2 / E with
        // 8 - 1 = 7 degrees of freedom; the 0.99 quantile of chi-square(7) is 18.475.
        const double expect = static_cast<double>(m_flows) / 8;
        double chi2 = 0;
        std::ostringstream os;
        for (double c : count)
        {
            chi2 += (c - expect) * (c - expect) / expect;
            os << c << " ";
        }
        std::cout << "ECMP, 1000 flows over 8 uplinks: " << os.str() << "-> chi-square " << chi2
                  << " (critical value 18.475 at p = 0.01, 7 d.o.f.)" << std::endl;
        NS_TEST_ASSERT_MSG_EQ(paths.size(), m_flows, "every flow seen at the leaf");
        NS_TEST_EXPECT_MSG_EQ(recs.size(), m_flows, "every flow completes");
        NS_TEST_EXPECT_MSG_EQ(pinned, true, "each flow keeps one uplink");
        NS_TEST_EXPECT_MSG_LT(chi2, 18.475, "uniform at p = 0.01");
    }

    const uint32_t m_flows{1000};
};

// ==== 8. A NIC of several ports (SimAI's multi-homed GPU) ======================================

/**
 * Two hosts, each linked to two ToRs (nodes 2 and 3; 100 Gbps, 1 us): SimAI's dual-ToR GPU.
 * Host 0 starts 8 flows of 200 packets (1000 B) to host 1 at once. SimAI's GetNicIdxOfQp: flow
 * i's port is Hash32 (ns-3's Murmur3) of the 12 bytes {sip, dip, sport = 10000 + i, dport = 100},
 * little-endian, modulo 2, indexing host 0's routes to host 1 in SimAI's BFS order (ToR 2 first:
 * port 0, the link to it, then port 1); host 1 sends flow i's ACKs on the port the same hash of
 * {dip, sip, 100, 10000 + i} picks. So: host 0's port p sends exactly n_p x 200 x 1048 B (its
 * flows' data, nothing else); host 1's ports split its ACK bytes m_0 : m_1 by flows; both ports
 * carry data; and the last flow ends when the busier port has sent its n_p flows back to back
 * (round-robin at line rate), plus one packet's store-and-forward at the ToR, 2 us of
 * propagation and the last ACK's 2 us back: within 1 %.
 */
class DualHomedNicTestCase : public TestCase
{
  public:
    DualHomedNicTestCase()
        : TestCase("NIC of two ports: SimAI's per-queue-pair port hash, per-port bytes and time")
    {
    }

  private:
    static uint32_t SimAiPort(uint32_t sipNode, uint32_t dipNode, uint16_t sport, uint16_t dport)
    {
        uint8_t key[12];
        const uint32_t w[2] = {RdmaHostAddress(sipNode), RdmaHostAddress(dipNode)};
        for (int i = 0; i < 8; ++i)
        {
            key[i] = static_cast<uint8_t>(w[i / 4] >> (8 * (i % 4)));
        }
        key[8] = static_cast<uint8_t>(sport);
        key[9] = static_cast<uint8_t>(sport >> 8);
        key[10] = static_cast<uint8_t>(dport);
        key[11] = static_cast<uint8_t>(dport >> 8);
        return Hash32(reinterpret_cast<const char*>(key), sizeof(key)) % 2;
    }

    void DoRun() override
    {
        RdmaFabricHelper f;
        FixSeed();
        f.SetLoadBalancer("ecmp");
        f.CreateNodes(4, {2, 3});
        f.Link(0, 2, G100, MicroSeconds(1));
        f.Link(0, 3, G100, MicroSeconds(1));
        f.Link(1, 2, G100, MicroSeconds(1));
        f.Link(1, 3, G100, MicroSeconds(1));
        f.Finish();
        f.AssignStreams(0);
        NS_TEST_ASSERT_MSG_EQ(f.GetNic(0)->GetNPorts(), 2u, "two ports");
        std::map<uint32_t, RdmaFlowRecord> rec;
        CollectRecords(f, &rec);
        const uint32_t flows = 8;
        const uint64_t pkts = 200;
        uint32_t n[2] = {0, 0};
        uint32_t m[2] = {0, 0};
        for (uint32_t i = 0; i < flows; ++i)
        {
            f.AddFlow(i, 0, 1, pkts * 1000, Time(0));
            ++n[SimAiPort(0, 1, static_cast<uint16_t>(10000 + i), 100)];
            ++m[SimAiPort(1, 0, 100, static_cast<uint16_t>(10000 + i))];
        }
        Simulator::Stop(MilliSeconds(10));
        Simulator::Run();
        uint64_t tx0[2];
        uint64_t tx1[2];
        for (uint32_t p = 0; p < 2; ++p)
        {
            tx0[p] = DynamicCast<RdmaNetDevice>(f.GetNode(0)->GetDevice(p))->GetTxBytes();
            tx1[p] = DynamicCast<RdmaNetDevice>(f.GetNode(1)->GetDevice(p))->GetTxBytes();
        }
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(rec.size(), flows, "every flow completes");
        NS_TEST_EXPECT_MSG_GT(n[0], 0u, "flows on port 0");
        NS_TEST_EXPECT_MSG_GT(n[1], 0u, "flows on port 1");
        for (uint32_t p = 0; p < 2; ++p)
        {
            NS_TEST_EXPECT_MSG_EQ(tx0[p], n[p] * pkts * PKT_BYTES, "sender port " << p);
        }
        // The ACKs: equal per flow, so the receiver's ports hold m_0 : m_1 of them.
        NS_TEST_EXPECT_MSG_EQ(tx1[0] * m[1], tx1[1] * m[0], "ACK bytes split by the rx hash");
        NS_TEST_EXPECT_MSG_GT(tx1[0] + tx1[1], 0u, "ACKs sent");
        Time last;
        for (const auto& [id, r] : rec)
        {
            (void)id;
            last = std::max(last, r.finish);
        }
        const double expectNs = std::max(n[0], n[1]) * pkts * PKT_BYTES * 8 / LINE_BPS * 1e9 +
                                PKT_BYTES * 8 / LINE_BPS * 1e9 + 2000 + 2000;
        const double lastNs = static_cast<double>(last.GetNanoSeconds());
        NS_TEST_EXPECT_MSG_LT(std::abs(lastNs / expectNs - 1), 0.01,
                              "last flow at " << lastNs << " ns, expected " << expectNs);
    }
};

/**
 * A switch that is also an RDMA endpoint (SimAI's NVSwitch under NVLS;
 * RdmaFabricHelper::SetEndpointSwitches): hosts 0 and 1 on switch 2 (100 Gbps, 1 us). Flow 0
 * goes from host 0 to the switch's own NIC and flow 1 from that NIC to host 1, both at 0; flow 2
 * from host 1 to host 0 through the switch at 50 us, once they are done (so that no flow's data
 * shares a link direction with another's ACKs); 200 packets each. First principles: each flow
 * alone on its link direction sends its 200 packets back to back at line rate, so its last
 * byte leaves its sender (FlowSent) 200 x 84 ns (1048 B at 100 Gbps, 83.84 ns, in whole ns)
 * after its start; flows 0 and 1
 * complete 1 us later at their receiver plus the last ACK's 1 us back (and its few ns of
 * serialisation); flow 2 crosses two links (one packet's store-and-forward and 1 us more each
 * way). The switch's port towards host 1 carries flow 1's data (from the switch's NIC) and
 * flow 2's ACKs (forwarded), nothing else.
 */
class EndpointSwitchTestCase : public TestCase
{
  public:
    EndpointSwitchTestCase()
        : TestCase("a switch that is an RDMA endpoint: its flows, their sends and completions")
    {
    }

  private:
    void DoRun() override
    {
        RdmaFabricHelper f;
        FixSeed();
        f.SetLoadBalancer("ecmp");
        f.CreateNodes(3, {2});
        f.SetEndpointSwitches({2});
        f.Link(0, 2, G100, MicroSeconds(1));
        f.Link(1, 2, G100, MicroSeconds(1));
        f.Finish();
        f.AssignStreams(0);
        NS_TEST_ASSERT_MSG_EQ((f.GetNicNodes() == std::vector<uint32_t>{0, 1, 2}), true,
                              "the hosts, then the endpoint switch");
        std::map<uint32_t, RdmaFlowRecord> rec;
        CollectRecords(f, &rec);
        std::map<uint32_t, Time> sent;
        for (uint32_t n : f.GetNicNodes())
        {
            f.GetNic(n)->TraceConnectWithoutContext(
                "FlowSent",
                MakeBoundCallback(+[](std::map<uint32_t, Time>* m, uint32_t id, Time at) {
                    (*m)[id] = at;
                },
                                  &sent));
        }
        const uint64_t pkts = 200;
        f.AddFlow(0, 0, 2, pkts * 1000, Time(0));
        f.AddFlow(1, 2, 1, pkts * 1000, Time(0));
        f.AddFlow(2, 1, 0, pkts * 1000, MicroSeconds(50));
        Simulator::Stop(MilliSeconds(1));
        Simulator::Run();
        const uint64_t toHost1 = f.GetSwitch(2)->GetPort(1)->GetTxBytes();
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(rec.size(), 3u, "every flow completes");
        const Time pkt = G100.CalculateBytesTxTime(PKT_BYTES);
        for (uint32_t id = 0; id < 3; ++id)
        {
            const Time lastByte = 200 * pkt + (id == 2 ? MicroSeconds(50) : Time(0));
            NS_TEST_EXPECT_MSG_EQ(sent[id], lastByte, "flow " << id << ": its last byte sent");
            const Time want = id < 2 ? lastByte + MicroSeconds(2) : lastByte + pkt + MicroSeconds(4);
            const Time late = rec[id].finish - want;
            NS_TEST_EXPECT_MSG_EQ((late >= Time(0) && late < NanoSeconds(20)), true,
                                  "flow " << id << " completes at " << rec[id].finish.As(Time::NS)
                                          << ", expected " << want.As(Time::NS) << " + ACKs");
        }
        // Towards host 1: flow 1's 200 data packets and flow 2's ACKs (at most one per packet).
        NS_TEST_EXPECT_MSG_GT(toHost1, pkts * PKT_BYTES, "flow 1's data and flow 2's ACKs");
        NS_TEST_EXPECT_MSG_LT(toHost1, pkts * PKT_BYTES + pkts * 64 + 1, "nothing else");
    }
};

// ==== 6. PFC at the NIC; IRN timeouts =========================================================

/// As the reference: a queue pair whose priority group is paused is not scheduled; others are.
class PausedPgNotScheduledTestCase : public TestCase
{
  public:
    PausedPgNotScheduledTestCase()
        : TestCase("a paused priority group's queue pairs are not scheduled; another group "
                   "takes the whole link meanwhile")
    {
    }

  private:
    void DoRun() override
    {
        RdmaFabricHelper f;
        BuildStar(f, 2);
        rdmalbtest::SetNics(f, "CongestionControl", StringValue("ns3::RdmaCongestionControl"));
        std::map<uint32_t, std::vector<Time>> sent;
        f.GetNic(0)->TraceConnectWithoutContext(
            "DataSent",
            MakeBoundCallback(+[](std::map<uint32_t, std::vector<Time>>* m, uint32_t flow,
                                  uint32_t, uint16_t) { (*m)[flow].push_back(Simulator::Now()); },
                              &sent));
        // Flow 0 in priority group 3, flow 1 in group 4, both host 0 -> host 1.
        f.AddFlow(0, 0, 1, 10000000, Time(0), 3);
        f.AddFlow(1, 0, 1, 10000000, Time(0), 4);
        // At 20 us host 0's port receives a PFC pause of class 3 for 50 us (as if from the
        // switch; as the reference, the receiving port obeys it and resumes by itself).
        Ptr<RdmaNetDevice> dev = DynamicCast<RdmaNetDevice>(f.GetNode(0)->GetDevice(0));
        Simulator::Schedule(m_pauseAt, +[](Ptr<RdmaNetDevice> d) {
            RdmaHeader h;
            h.type = RdmaHeader::PFC;
            h.dip = 0xFFFFFFFF;
            h.pfcClass = 3;
            h.pauseUs = 50;
            Ptr<Packet> p = Create<Packet>();
            p->AddHeader(h);
            d->Receive(p);
        }, dev);
        Simulator::Stop(MicroSeconds(100));
        Simulator::Run();
        Simulator::Destroy();
        auto count = [&sent](uint32_t flow, Time a, Time b) {
            const auto& v = sent[flow];
            return static_cast<uint64_t>(std::lower_bound(v.begin(), v.end(), b) -
                                         std::lower_bound(v.begin(), v.end(), a));
        };
        const Time pkt = RdmaTxTime(G100, PKT_BYTES, RdmaTxArithmetic::ROUNDED); // 83.84 ns -> 84 ns
        const Time resume = m_pauseAt + MicroSeconds(50);
        const uint64_t before0 = count(0, MicroSeconds(10), m_pauseAt);
        const uint64_t before1 = count(1, MicroSeconds(10), m_pauseAt);
        const uint64_t during0 = count(0, m_pauseAt + pkt, resume);
        const uint64_t during1 = count(1, m_pauseAt + pkt, resume);
        auto firstAfter = std::lower_bound(sent[0].begin(), sent[0].end(), resume);
        std::cout << "pause of group 3 for 50 us at 20 us: packets in [10, 20) us " << before0
                  << " (group 3) / " << before1 << " (group 4); during the pause " << during0
                  << " / " << during1 << "; group 3 resumes "
                  << (firstAfter != sent[0].end() ? (*firstAfter - resume).GetNanoSeconds() : -1)
                  << " ns after the pause ends" << std::endl;
        // Before: round-robin, each group half of 10 us / 84 ns = 119 packets: >= 59 each.
        NS_TEST_EXPECT_MSG_GT_OR_EQ(before0, 59u, "group 3 sent half the link before");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(before1, 59u, "group 4 sent half the link before");
        // During: nothing from group 3 after the packet already on the wire; group 4 gets
        // the whole link: one packet per transmission time (83.84 ns, which ns-3's 1 ns time
        // resolution makes 84 ns), (50 us - 1 packet) / 84 ns = 594.2 -> 594 packets.
        const uint64_t fullLink =
            static_cast<uint64_t>((resume - m_pauseAt - pkt).GetNanoSeconds() / pkt.GetNanoSeconds());
        NS_TEST_EXPECT_MSG_EQ(during0, 0u, "paused group not scheduled");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(during1, fullLink, "the other group keeps the whole link");
        // After: group 3 is back within one packet time (round-robin with group 4).
        const bool resumed = firstAfter != sent[0].end();
        NS_TEST_ASSERT_MSG_EQ(resumed, true, "group 3 resumed");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(*firstAfter - resume, pkt, "resumed at once");
    }

    const Time m_pauseAt{MicroSeconds(20)};
};

/// What an IRN timeout run records.
struct IrnRtoResult
{
    bool completed{false};   //!< the flow completed
    uint64_t timeouts{0};    //!< timeouts of the flow (0 if it did not complete)
    Time lastFeedback;       //!< arrival of the last ACK/NACK before the first retransmission
    Time firstRetx;          //!< first retransmission (Time::Max() if none)
};

/// Watches a sender for its first retransmission.
struct RetxProbe
{
    IrnRtoResult* r{nullptr}; //!< where to record
    Time lastFeedback;        //!< arrival of the latest ACK/NACK
    uint32_t highest{0};      //!< highest offset sent so far
    bool any{false};          //!< whether anything was sent
};

/// As the reference: IRN's RTO is 100 us with at most 3 packets in flight, else 320 us; with PFC
/// on, IRN timeouts are ignored.
class IrnTimeoutTestCase : public TestCase
{
  public:
    IrnTimeoutTestCase()
        : TestCase("IRN RTO: 100 us with <= 3 packets in flight, 320 us above; ignored with PFC "
                   "on (reference), kept with IrnRtoWithPfc")
    {
    }

  private:
    /// One flow of \p pkts packets host 0 -> host 1 whose last \p lostTail packets are lost once.
    static IrnRtoResult Run(uint32_t pkts, uint32_t lostTail, bool pfc, bool rtoWithPfc)
    {
        RdmaFabricHelper f;
        BuildStar(f, 2);
        SetPfc(f, pfc);
        rdmalbtest::SetNics(f, "LossRecovery", StringValue("ns3::RdmaIrn"));
        rdmalbtest::SetNicComponents(f, "ns3::RdmaIrn", "IrnRtoWithPfc", BooleanValue(rtoWithPfc));
        std::set<uint32_t> lose;
        for (uint32_t k = pkts - lostTail; k < pkts; ++k)
        {
            lose.insert(k * 1000);
        }
        // Lose the first arrival of each listed packet at the receiver's port.
        f.GetNode(1)->GetDevice(0)->SetAttribute("ReceiveErrorModel",
                                                 PointerValue(Create<rdmalbtest::DropSeqOnceErrorModel>(lose)));
        IrnRtoResult r;
        r.firstRetx = Time::Max();
        RetxProbe probe;
        probe.r = &r;
        f.GetNode(0)->GetDevice(0)->TraceConnectWithoutContext(
            "Rx",
            MakeBoundCallback(+[](RetxProbe* pr, Ptr<const Packet> p) {
                                  RdmaHeader h;
                                  p->PeekHeader(h);
                                  if (h.type == RdmaHeader::ACK || h.type == RdmaHeader::NACK)
                                  {
                                      pr->lastFeedback = Simulator::Now();
                                  }
                              },
                              &probe));
        f.GetNic(0)->TraceConnectWithoutContext(
            "DataSent",
            MakeBoundCallback(+[](RetxProbe* pr, uint32_t, uint32_t seq, uint16_t) {
                                  if (pr->any && seq <= pr->highest &&
                                      pr->r->firstRetx == Time::Max())
                                  {
                                      pr->r->firstRetx = Simulator::Now();
                                      pr->r->lastFeedback = pr->lastFeedback;
                                  }
                                  pr->highest = std::max(pr->highest, seq);
                                  pr->any = true;
                              },
                              &probe));
        std::map<uint32_t, RdmaFlowRecord> recs;
        CollectRecords(f, &recs);
        f.AddFlow(0, 0, 1, uint64_t(pkts) * 1000, MicroSeconds(1));
        Simulator::Stop(MilliSeconds(10));
        Simulator::Run();
        Simulator::Destroy();
        r.completed = recs.count(0) == 1;
        r.timeouts = r.completed ? recs[0].timeouts : 0;
        return r;
    }

    void DoRun() override
    {
        // PFC off (the reference's IRN setting). 3 packets, the last lost: when the last ACK
        // arrives, max-sent-seq - highest-ack = 0 <= 3 x MTU -> RtoLow = 100 us.
        IrnRtoResult low = Run(3, 1, false, false);
        // 100 packets, the last 5 lost: the last ACK (for packet 94) arrives ~12 us after the
        // start, when all 100 were sent (8.4 us at line rate): in flight 99000 - 95000 = 4000 B
        // > 3 x 1000 -> RtoHigh = 320 us.
        IrnRtoResult high = Run(100, 5, false, false);
        // PFC on, the reference: IRN timeouts ignored -> the lost tail is never resent.
        IrnRtoResult ignored = Run(3, 1, true, false);
        // PFC on with IrnRtoWithPfc: the timeout is back.
        IrnRtoResult kept = Run(3, 1, true, true);
        auto gap = [](const IrnRtoResult& r) {
            return r.firstRetx == Time::Max() ? -1.0
                                              : (r.firstRetx - r.lastFeedback).GetMicroSeconds() * 1.0;
        };
        std::cout << "IRN RTO: 3 pkts, tail lost: resent " << gap(low)
                  << " us after the last feedback (timeouts " << low.timeouts
                  << "); 100 pkts, 5 lost: " << gap(high) << " us (timeouts " << high.timeouts
                  << "); PFC on: completed " << ignored.completed << ", resent "
                  << (ignored.firstRetx != Time::Max()) << "; PFC on + IrnRtoWithPfc: "
                  << gap(kept) << " us, completed " << kept.completed << std::endl;
        NS_TEST_EXPECT_MSG_EQ(low.completed, true, "low: completed");
        NS_TEST_EXPECT_MSG_EQ(low.timeouts, 1u, "low: one timeout");
        NS_TEST_EXPECT_MSG_EQ(low.firstRetx - low.lastFeedback, MicroSeconds(100), "RtoLow");
        NS_TEST_EXPECT_MSG_EQ(high.completed, true, "high: completed");
        NS_TEST_EXPECT_MSG_EQ(high.timeouts, 1u, "high: one timeout");
        NS_TEST_EXPECT_MSG_EQ(high.firstRetx - high.lastFeedback, MicroSeconds(320), "RtoHigh");
        NS_TEST_EXPECT_MSG_EQ(ignored.completed, false, "PFC on: no timeout, the tail stays lost");
        NS_TEST_EXPECT_MSG_EQ(ignored.firstRetx, Time::Max(), "PFC on: nothing resent");
        NS_TEST_EXPECT_MSG_EQ(kept.completed, true, "IrnRtoWithPfc: completed");
        NS_TEST_EXPECT_MSG_EQ(kept.firstRetx - kept.lastFeedback, MicroSeconds(100),
                              "IrnRtoWithPfc: RtoLow");
    }
};

// ==== 7. Host load balancers around a slow spine ==============================================

/// One flow of the fixed flow set.
struct HostLbFlow
{
    uint32_t src;  //!< source host
    uint32_t dst;  //!< destination host
    uint64_t size; //!< bytes
    Time start;    //!< start time
};

/// Mean and p99 FCT slowdown of one algorithm.
struct HostLbOutcome
{
    uint32_t completed{0}; //!< flows completed
    double mean{0};        //!< mean slowdown
    double p99{0};         //!< 99th percentile slowdown
    uint64_t retx{0};      //!< retransmitted packets
    uint64_t timeouts{0};  //!< timeouts
    uint64_t drops{0};     //!< MMU drops
    uint64_t marks{0};     //!< ECN marks
    double slowShare{0};   //!< share of inter-rack data bytes the leaves sent to the slow spine
};

/**
 * Whack-a-Mole, REPS and Hopper against spraying and ECMP on a leaf-spine with one slow spine:
 * 2 leaves x 8 hosts, 4 spines, all links 100 Gbps except both links of spine 0 (25 Gbps).
 */
class HostLbSlowSpineTestCase : public TestCase
{
  public:
    HostLbSlowSpineTestCase()
        : TestCase("host load balancers around a 25G spine: whack-a-mole, reps and hopper beat "
                   "spray and ecmp on p99 FCT slowdown")
    {
    }

    static constexpr uint32_t HOSTS = 16; //!< 8 per leaf
    static constexpr uint32_t LEAF0 = 16; //!< leaves 16, 17; spines 18-21 (18 is slow)

    /// The fixed flow set: \p n flows, random source, destination in the other rack, sizes
    /// from a four-point heavy-tailed set, Poisson arrivals offering \p loadBps per direction.
    static std::vector<HostLbFlow> FlowSet(uint32_t n, double loadBps)
    {
        FixSeed();
        Ptr<UniformRandomVariable> u = CreateObject<UniformRandomVariable>();
        u->SetStream(4242);
        // 50 % 20 KB, 30 % 200 KB, 15 % 1 MB, 5 % 3 MB: mean 370 KB.
        const double meanBytes = 0.5 * 20e3 + 0.3 * 200e3 + 0.15 * 1e6 + 0.05 * 3e6;
        // Both directions together offer 2 x loadBps.
        const double meanGapNs = meanBytes * 8 / (2 * loadBps) * 1e9;
        std::vector<HostLbFlow> flows;
        double t = 0;
        for (uint32_t i = 0; i < n; ++i)
        {
            t += -std::log(1 - u->GetValue()) * meanGapNs;
            const uint32_t src = u->GetInteger(0, HOSTS - 1);
            const uint32_t dst = (src < 8 ? 8 : 0) + u->GetInteger(0, 7);
            const double x = u->GetValue();
            const uint64_t size = x < 0.5 ? 20000 : x < 0.8 ? 200000 : x < 0.95 ? 1000000 : 3000000;
            flows.push_back({src, dst, size, NanoSeconds(static_cast<int64_t>(t))});
        }
        return flows;
    }

    static HostLbOutcome Run(const std::string& algorithm,
                             const std::string& recovery,
                             const std::vector<HostLbFlow>& flows)
    {
        FixSeed();
        RdmaFabricHelper f;
        f.SetLoadBalancer(algorithm);
        std::vector<uint32_t> switches;
        for (uint32_t s = LEAF0; s < LEAF0 + 6; ++s)
        {
            switches.push_back(s);
        }
        f.CreateNodes(LEAF0 + 6, switches);
        for (uint32_t h = 0; h < HOSTS; ++h)
        {
            f.Link(h, LEAF0 + h / 8, G100, MicroSeconds(1));
        }
        for (uint32_t l = 0; l < 2; ++l)
        {
            for (uint32_t s = 0; s < 4; ++s)
            {
                f.Link(LEAF0 + l, LEAF0 + 2 + s, s == 0 ? DataRate("25Gbps") : G100,
                       MicroSeconds(1));
            }
        }
        f.Finish();
        f.AssignStreams(0);
        // The recovery mode (see DoRun): IRN without PFC, and without the reference's CNP on
        // out-of-order NACKs.
        rdmalbtest::SetNics(f, "LossRecovery", StringValue(recovery));
        rdmalbtest::SetNicComponents(f, "ns3::RdmaRoceRecovery", "NackCarriesCnp", BooleanValue(false));
        SetPfc(f, false);
        std::map<uint32_t, RdmaFlowRecord> recs;
        CollectRecords(f, &recs);
        for (uint32_t i = 0; i < flows.size(); ++i)
        {
            f.AddFlow(i, flows[i].src, flows[i].dst, flows[i].size, flows[i].start);
        }
        Simulator::Stop(MilliSeconds(200));
        Simulator::Run();
        HostLbOutcome o;
        SwitchTotals sw = ReadSwitches(f);
        o.drops = sw.drops;
        o.marks = sw.marks;
        // Leaf ports 8-11 are the uplinks, port 8 the one to the slow spine.
        double up = 0;
        double slow = 0;
        for (uint32_t l = 0; l < 2; ++l)
        {
            for (uint32_t port = 8; port < 12; ++port)
            {
                Ptr<RdmaNetDevice> dev = f.GetSwitch(LEAF0 + l)->GetPort(port);
                const double b = static_cast<double>(dev->GetTxBytes());
                up += b;
                slow += port == 8 ? b : 0;
            }
        }
        o.slowShare = up > 0 ? slow / up : 0;
        Simulator::Destroy();
        std::vector<double> sd;
        double sum = 0;
        for (const auto& [id, r] : recs)
        {
            // The reference's slowdown: FCT / ideal FCT over the 4-hop 100 Gbps path, at least 1.
            const double fct = static_cast<double>((r.finish - r.start).GetNanoSeconds());
            const double s = std::max(1.0, fct / IdealFctNs(r.size, 4, LINE_BPS));
            sd.push_back(s);
            sum += s;
            o.retx += r.retxPkts;
            o.timeouts += r.timeouts;
        }
        o.completed = static_cast<uint32_t>(recs.size());
        o.mean = sd.empty() ? 0 : sum / sd.size();
        o.p99 = Percentile(sd, 99);
        return o;
    }

  private:
    /*
     * Recovery mode: IRN (the reference's) with PFC off, the reference's "IRN RDMA" setting, and
     * NackCarriesCnp = false. Why: the per-packet schemes (spray, whack-a-mole, reps) reorder
     * by design. Go-Back-N discards every out-of-order packet; NIC-SR cuts the DCQCN rate on
     * every NACK (Themis §2.2: the problem Themis exists to fix); the reference's OOO-NACK CNP
     * does the same for IRN, an artefact of the simulator that IRN NICs do not have.
     * IRN keeps what arrives (SACK) for everyone, and without PFC the slow spine's queue does
     * not pause the fast paths (head-of-line blocking would hit every scheme alike). What
     * remains against the per-packet schemes is the reference IRN's go-back to the first hole
     * (the reference's simplified IRN), which reordering triggers: that cost is theirs to bear, and
     * the table shows it in the retransmission column.
     *
     * Measured (seed 1, 200 flows; mean / p99 slowdown): ecmp 4.38 / 33.90, spray 12.49 /
     * 43.12, whack-a-mole 4.83 / 16.35 (6.31 / 22.85 before a stalled path was declared dead),
     * reps 6.90 / 22.81, hopper 2.06 / 6.70 (since the host
     * load balancers were wired as their papers assume: whack-a-mole on path-index routing with
     * 4 paths and per-path sequence numbers, 7.23 / 28.98 before; hopper with timeouts and stalls
     * as congestion, 2.07 / 7.85 before). Whack-a-Mole
     * with the periodic recovery (recovery_rule = "periodic", the default before) measured
     * 9.40 / 35.74 and did not beat ecmp: it handed balls back to the slow path every 100 us
     * whatever that path reported, so the path stayed in every flow with a standing queue.
     * With evidence recovery (the default) a path regains balls only after a clean ACK from it
     * (rdma-lb.rst, Whack-a-Mole); slow-spine share 0.19 -> 0.15.
     * Honest caveat: p99 of 200 flows is set by the two slowest flows. Over five other flow
     * sets (streams 1-5) evidence recovery lowered whack-a-mole's p99 in every one (38.2 ->
     * 28.6, 50.8 -> 33.3, 25.2 -> 23.5, 52.5 -> 32.1, 37.6 -> 29.2) and beat spray in every
     * one, but beat ecmp in two of five (as did reps); the ordering against ecmp asserted here
     * holds for this flow set, not in general (the Poisson experiment in
     * experiments/whack-a-mole has ecmp ahead).
     */
    void DoRun() override
    {
        const std::vector<HostLbFlow> flows = FlowSet(m_flows, m_loadBps);
        std::map<std::string, HostLbOutcome> out;
        std::ostringstream table;
        table << std::fixed << std::setprecision(2) << "algorithm     completed mean_slowdown "
              << "p99_slowdown retx timeouts drops ecn_marks slow_spine_share\n";
        for (const char* a : {"ecmp", "spray", "whack-a-mole", "reps", "hopper"})
        {
            HostLbOutcome o = Run(a, m_recovery, flows);
            out[a] = o;
            table << std::left << std::setw(14) << a << std::right << o.completed << "/"
                  << flows.size() << "   " << o.mean << "          " << o.p99 << "        "
                  << o.retx << " " << o.timeouts << " " << o.drops << " " << o.marks << " "
                  << o.slowShare << "\n";
        }
        std::cout << "host load balancers, 2 x 8 hosts, 4 spines (spine 0 at 25 Gbps), "
                  << m_flows << " flows, " << m_recovery
                  << " (PFC off, no CNP on OOO NACKs), DCQCN, seed 1:\n"
                  << table.str() << std::endl;
        for (const auto& [a, o] : out)
        {
            NS_TEST_EXPECT_MSG_EQ(o.completed, m_flows, a << ": every flow completes");
        }
        // The slow spine is 25/325 = 7.7 % of the uplink capacity. Spray gives it a quarter
        // of every flow, so every large flow runs at the slow path's pace (4x slower); ECMP
        // gives it a quarter of the flows, whose slowdown is then >= 4 plus queueing. A
        // scheme that follows the paths' state moves traffic off it: reps and hopper beat
        // both baselines at the tail; whack-a-mole beats spray (see above for ecmp).
        for (const char* a : {"reps", "hopper"})
        {
            for (const char* b : {"spray", "ecmp"})
            {
                NS_TEST_EXPECT_MSG_LT(out[a].p99, out[b].p99, a << " vs " << b << " (p99)");
            }
        }
        NS_TEST_EXPECT_MSG_LT(out["whack-a-mole"].slowShare, out["spray"].slowShare,
                              "whack-a-mole sends less over the slow spine than spray");
        // ECMP's tail: the large flows hashed onto the 25 Gbps path see slowdown >= 4.
        NS_TEST_EXPECT_MSG_GT(out["ecmp"].p99, 4.0, "ecmp's tail is on the slow path");
        NS_TEST_EXPECT_MSG_EQ(out["ecmp"].retx, 0u, "ecmp does not reorder");
    }

    const uint32_t m_flows{200};
    const double m_loadBps{120e9};
    const std::string m_recovery{"ns3::RdmaIrn"};
};

} // namespace

// ==== The suite ================================================================================

/**
 * The rdma-lb-fabric test suite. The environment variable RDMA_LB_FABRIC_CASES, if set, keeps
 * only the cases whose name contains it (ns-3's runner stops a suite at its first failing case).
 */
class RdmaLbFabricTestSuite : public rdmalbtest::FilteredTestSuite
{
  public:
    RdmaLbFabricTestSuite()
        : FilteredTestSuite("rdma-lb-fabric", "RDMA_LB_FABRIC_CASES")
    {
        AddTestCase(new DcqcnTwoFlowTestCase, TestCase::QUICK);
        for (TypeId mode : {RdmaGoBackN::GetTypeId(), RdmaIrn::GetTypeId()})
        {
            AddTestCase(new IncastTestCase(mode, true, RdmaCongestionControl::GetTypeId(), false, 50),
                        TestCase::QUICK);
            AddTestCase(new IncastTestCase(mode, true, RdmaDcqcn::GetTypeId(), true), TestCase::QUICK);
            AddTestCase(new IncastTestCase(mode, false, RdmaCongestionControl::GetTypeId(), true), TestCase::QUICK);
        }
        // The reference's MMU with PFC on and no congestion control (Go-Back-N only: IRN runs
        // lossy in the reference, and with PFC on its timeouts are off).
        AddTestCase(new IncastTestCase(RdmaGoBackN::GetTypeId(), true, RdmaCongestionControl::GetTypeId(), true),
                    TestCase::QUICK);
        for (TypeId mode : {RdmaGoBackN::GetTypeId(), RdmaIrn::GetTypeId(), RdmaNicSr::GetTypeId()})
        {
            AddTestCase(new FabricLinkLossTestCase(mode), TestCase::QUICK);
        }
        AddTestCase(new SprayNicSrRingTestCase, TestCase::QUICK);
        AddTestCase(new EcmpChiSquareTestCase, TestCase::QUICK);
        AddTestCase(new PausedPgNotScheduledTestCase, TestCase::QUICK);
        AddTestCase(new IrnTimeoutTestCase, TestCase::QUICK);
        AddTestCase(new HostLbSlowSpineTestCase, TestCase::QUICK);
        AddTestCase(new DualHomedNicTestCase, TestCase::QUICK);
        AddTestCase(new EndpointSwitchTestCase, TestCase::QUICK);
    }
};

/// Static instance registering the suite.
static RdmaLbFabricTestSuite g_rdmaLbFabricTestSuite;
