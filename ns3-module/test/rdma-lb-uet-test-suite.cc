/*
 * rdma-lb: tests of the UET transport (rdma-uet.h for the rules and their source,
 * htsim's UEC sender in tommasobo/REPS_EuroSys_Artifact).
 *
 *  - window rule: RdmaUetWindowOnAck / OnLoss against hand-computed numbers; wait-to-decrease
 *    (RdmaUetWindowOnAckWtd) holds the window for the marks below its threshold;
 *  - NSCC: the UEC htsim's derived settings and one ACK of each cell of its rule;
 *  - NSCC wired: its cap follows the smallest RTT sampled, mprdma's does not;
 *  - coalesced ACKs: the SACK bitmap on the wire, one ACK per 16 KiB, the same completion;
 *  - one flow alone reaches line rate: its FCT is the first-principles value to the ns;
 *  - trimming turns a drop into a NACK at the sender within one base RTT of the trim, one
 *    NACK per trimmed packet, and nothing is lost or timed out;
 *  - a trimmed header keeps the highest priority at later busy hops;
 *  - QueueRelease: "end" (the UEC htsim's queue) trims one packet earlier than "start" and
 *    decides a packet's ECN mark when its last bit leaves, from the packets behind it;
 *  - TrimNewestProbability (the UEC htsim's queue: 0.5): a full queue trims its newest
 *    packet, not the arrival;
 *  - the window never exceeds its cap (UetWindow trace, every ACK/NACK/timeout) and moves;
 *  - wait-to-decrease set on the NIC holds windows an incast would cut;
 *  - a per-destination base RTT sets that queue pair's cap;
 *  - the RTT histogram (rtt_hist.csv): one flow alone under one switch, every ACK's RTT is
 *    the pair's base RTT, 4168.56 ns at 400 Gbps (4169 ns at the clock's resolution), all
 *    1027 in bin [4100, 4200);
 *  - determinism and the scenario path: same seed, byte-identical fct.txt (REPS + trimming,
 *    with either switch hash);
 *  - a degraded port (SetPortRate, htsim's -failed): one direction at half speed, its queue
 *    limit halved with it;
 *  - uec-bitmap and uec-mixed (the UEC htsim's load balancers) send less into a degraded
 *    spine than oblivious rounds: the feedback reaches them;
 *  - htsim's switches (UseHtsimSwitches) put ECMP flows on the uplinks the REPS artifact's
 *    hash and shuffles give (expected counts from its rules, checked against its own run);
 *  - RCCC: pacer rate, credit, pull targets, grants and RTS from single signals; and wired end
 *    to end in an incast (pulls, speculative credit, last-hop trims, no ECN to hosts).
 *
 * Cases can be narrowed with RDMA_LB_UET_CASES=<part of a case name>.
 */
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/rdma-lb-module.h"
#include "ns3/rdma-uet-fabric.h"

#include "rdma-lb-test-util.h"

#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

const DataRate G400("400Gbps");
const uint32_t PAYLOAD = 4086; //!< htsim: 4150 B packets, 64 B header
const uint32_t HEADER = 64;
const uint64_t WIRE = PAYLOAD + HEADER;

/// Puts every NIC of \p f on the uet transport (base RTT \p baseRtt, RTO \p rto) and gives
/// every switch a data queue of \p queuePkts packets, ECN from a quarter to three quarters of
/// it (probability up to 1) and trimming \p trim.
void
ConfigureUetFabric(RdmaFabricHelper& f, Time baseRtt, Time rto, uint64_t queuePkts, bool trim)
{
    for (uint32_t h : f.GetHosts())
    {
        Ptr<RdmaNic> nic = f.GetNic(h);
        nic->SetAttribute("LossRecovery", StringValue("ns3::RdmaUetRecovery"));
        nic->SetAttribute("CongestionControl", StringValue("ns3::RdmaCongestionControl"));
        nic->SetAttribute("PayloadSize", UintegerValue(PAYLOAD));
        nic->SetAttribute("UetHeaderSize", UintegerValue(HEADER));
        nic->SetAttribute("UetBaseRtt", TimeValue(baseRtt));
        nic->SetAttribute("UetRto", TimeValue(rto));
    }
    for (uint32_t i = 0; i < f.GetNNodes(); ++i)
    {
        if (!f.IsSwitch(i))
        {
            continue;
        }
        Ptr<RdmaSwitch> sw = f.GetSwitch(i);
        sw->SetAttribute("PfcEnabled", BooleanValue(false));
        sw->SetAttribute("DataQueueLimit", UintegerValue(queuePkts * WIRE));
        sw->SetAttribute("TrimEnabled", BooleanValue(trim));
        sw->SetAttribute("TrimmedSize", UintegerValue(HEADER));
        sw->SetAttribute("EcnKmin", UintegerValue(queuePkts / 4 * WIRE));
        sw->SetAttribute("EcnKmax", UintegerValue(queuePkts * 3 / 4 * WIRE));
        sw->SetAttribute("EcnPmax", DoubleValue(1.0));
    }
}

/// Star: hosts 0..n-1 on switch n, 400 Gbps, 1 us links, the uet transport
/// (ConfigureUetFabric).
void
BuildUetStar(RdmaFabricHelper& f,
             uint32_t nHosts,
             Time baseRtt,
             Time rto,
             uint64_t queuePkts,
             bool trim,
             const std::string& lb = "spray")
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    f.SetLoadBalancer(lb);
    f.CreateNodes(nHosts + 1, {nHosts});
    for (uint32_t h = 0; h < nHosts; ++h)
    {
        f.Link(h, nHosts, G400, MicroSeconds(1));
    }
    ConfigureUetFabric(f, baseRtt, rto, queuePkts, trim);
    f.Finish();
    f.AssignStreams(0);
}

/// The star's (n-1)-to-1 incast: \p setup(h) for each sender h < n - 1 (its traces and
/// attributes), then its flow of \p bytes to host n - 1 at t = 0; runs until \p stop. The
/// caller reads the fabric, then calls Simulator::Destroy.
template <typename Setup>
void
RunStarIncast(RdmaFabricHelper& f, uint32_t nHosts, uint64_t bytes, Time stop, Setup setup)
{
    for (uint32_t h = 0; h + 1 < nHosts; ++h)
    {
        setup(h);
        f.AddFlow(h, h, nHosts - 1, bytes, Time(0));
    }
    Simulator::Stop(stop);
    Simulator::Run();
}

/// Leaf-spine (RdmaFabricHelper::BuildLeafSpine) at 400 Gbps, 1 us links, on the uet transport
/// (ConfigureUetFabric); with \p htsim = (seed, flows), htsim's switches (UseHtsimSwitches);
/// \p lbParams the load balancer's parameters.
void
BuildUetLeafSpine(RdmaFabricHelper& f,
                  const std::string& lb,
                  uint32_t leaves,
                  uint32_t hostsPerLeaf,
                  uint32_t spines,
                  Time baseRtt,
                  Time rto,
                  uint64_t queuePkts,
                  bool trim,
                  std::optional<std::pair<uint32_t, uint32_t>> htsim = std::nullopt,
                  const std::string& lbParams = "")
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    f.SetLoadBalancer(lb, lbParams);
    f.BuildLeafSpine(leaves, hostsPerLeaf, spines, G400, G400, MicroSeconds(1));
    ConfigureUetFabric(f, baseRtt, rto, queuePkts, trim);
    if (htsim)
    {
        f.UseHtsimSwitches(htsim->first, htsim->second);
    }
    f.Finish();
    f.AssignStreams(0);
}

/// Base RTT of the star (2 links each way): 2 x 2 us + 2 x (data + ACK) serialization.
Time
StarBaseRtt()
{
    return MicroSeconds(4) + G400.CalculateBytesTxTime(2 * (WIRE + HEADER));
}

/**
 * The window rule (htsim UecSrc::updateCwndOnAck_MPRDMA / updateCwndOnNack_MPRDMA) on
 * hand-computed numbers.
 */
class UetWindowRuleTestCase : public TestCase
{
  public:
    UetWindowRuleTestCase()
        : TestCase("uet window rule: plus A x MTU over W unmarked, minus A over 4 marked, minus lost, cap and floor")
    {
    }

  private:
    void DoRun() override
    {
        // Unmarked: 100000 + 4150 * 4150 / 100000 = 100000 + 172 (integer division).
        NS_TEST_EXPECT_MSG_EQ(RdmaUetWindowOnAck(100000, 200000, WIRE, WIRE, false), 100172u, "");
        // Two packets acknowledged at once: 100000 + 8300 * 4150 / 100000 = 100344.
        NS_TEST_EXPECT_MSG_EQ(RdmaUetWindowOnAck(100000, 200000, WIRE, 2 * WIRE, false), 100344u, "");
        // At the cap it stays there.
        NS_TEST_EXPECT_MSG_EQ(RdmaUetWindowOnAck(199990, 200000, WIRE, WIRE, false), 200000u, "");
        // Marked: 100000 - 4150 / 4 = 100000 - 1037.
        NS_TEST_EXPECT_MSG_EQ(RdmaUetWindowOnAck(100000, 200000, WIRE, WIRE, true), 98963u, "");
        // Never below one packet.
        NS_TEST_EXPECT_MSG_EQ(RdmaUetWindowOnAck(WIRE + 100, 200000, WIRE, WIRE, true), WIRE, "");
        // A duplicate ACK (nothing new) leaves the window alone, marked or not.
        NS_TEST_EXPECT_MSG_EQ(RdmaUetWindowOnAck(100000, 200000, WIRE, 0, true), 100000u, "");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetWindowOnAck(100000, 200000, WIRE, 0, false), 100000u, "");
        // Loss (NACK of a trimmed packet, or timeout): minus its bytes, at least one packet.
        NS_TEST_EXPECT_MSG_EQ(RdmaUetWindowOnLoss(100000, WIRE, WIRE), 95850u, "");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetWindowOnLoss(WIRE + 10, WIRE, WIRE), WIRE, "");
    }
};

/**
 * SMaRTT's wait-to-decrease (RdmaUetWindowOnAckWtd; the REPS paper, §3.0.1) at the paper's
 * threshold 0.25 and the artifact's gain 0.05: from an average of 0, k consecutive marks give
 * 1 - 0.95^k, below 0.25 for k <= 5 (0.2262) and above from k = 6 (0.2649), so the first five
 * marked ACKs leave the window alone and the sixth cuts it by A / 4; an unmarked ACK grows it
 * as without the option and decays the average by 0.95.
 */
class UetWaitToDecreaseRuleTestCase : public TestCase
{
  public:
    UetWaitToDecreaseRuleTestCase()
        : TestCase("uet wait-to-decrease: five marks hold the window, the sixth cuts it")
    {
    }

  private:
    void DoRun() override
    {
        double avg = 0;
        uint64_t w = 100000;
        for (int k = 1; k <= 5; ++k)
        {
            w = RdmaUetWindowOnAckWtd(w, 200000, WIRE, WIRE, true, 0.25, 0.05, &avg);
            NS_TEST_EXPECT_MSG_EQ(w, 100000u, "mark " << k << " below the threshold");
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(avg, 1 - std::pow(0.95, 5), 1e-12, "average after five");
        w = RdmaUetWindowOnAckWtd(w, 200000, WIRE, WIRE, true, 0.25, 0.05, &avg);
        NS_TEST_EXPECT_MSG_EQ(w, 98963u, "the sixth mark cuts A / 4 = 1037");
        const double before = avg;
        w = RdmaUetWindowOnAckWtd(w, 200000, WIRE, WIRE, false, 0.25, 0.05, &avg);
        NS_TEST_EXPECT_MSG_EQ(w, 98963u + WIRE * WIRE / 98963u, "unmarked: the plain increase");
        NS_TEST_EXPECT_MSG_EQ_TOL(avg, 0.95 * before, 1e-12, "and the average decays");
        // Above the threshold every mark cuts, as without the option.
        avg = 0.5;
        NS_TEST_EXPECT_MSG_EQ(RdmaUetWindowOnAckWtd(100000, 200000, WIRE, WIRE, true, 0.25, 0.05, &avg),
                              98963u,
                              "");
    }
};

/**
 * NSCC (rdma-uet-nscc.h) on the UEC htsim's default 3-tier fabric (100 Gbps, 1 us links,
 * trimming), against the numbers that simulator prints for it (data/uec-htsim/
 * perm128_ft100_nscc/stdout.txt: network RTT 14,022,720 ps, BDP 175,284 B, target 10,517,040
 * ps, a = 1.16856, b = 0.87642, alpha = 0.00159158, Fi = 23873.7, Eta = 716.21, FiScale =
 * 0.29214, maxWindow 262,926 B), then one ACK of each cell of the rule, hand-computed:
 *  - unmarked, no queuing delay, window 100,000 B at 20 us: a proportional increase of
 *    alpha x 4150 x target = 69,465,592 accumulated; the first fulfill (more than a network RTT
 *    since time 0) adds 69,465,592 / 100,000 = 694 and Eta: 100,000 + 694 + 716.21 -> 101,410;
 *  - unmarked at the target delay: a fair increase, Fi x 4150 = 99,075,775 accumulated, not
 *    applied before 8 MTU or a network RTT;
 *  - marked, delay 10 x target (after the first ACK's fulfill, + Eta): the average delay is
 *    10 T (1 - 0.9875^n), below T for n <= 8 (the window holds) and 1.0704 T at n = 9: the window x (1 - 0.8 x 0.0704 / 1.0704)
 *    = x 0.9474, once per base RTT;
 *  - marked below the target: nothing (but the first ACK's Eta);
 *  - a NACK after a quiet window: quick adapt sets the window to the bytes delivered in it.
 */
class UetNsccTestCase : public TestCase
{
  public:
    UetNsccTestCase()
        : TestCase("uet nscc: htsim's derived settings, and each cell of the rule")
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t rtt = 14022720;
        const auto p = RdmaUetNsccParams::Derive(rtt, 100000000000ULL, 4150, 4086, 0, true, 3);
        NS_TEST_EXPECT_MSG_EQ(p.targetPs, 10517040u, "target = 0.75 x network RTT");
        NS_TEST_EXPECT_MSG_EQ_TOL(p.alpha, 0.00159158, 1e-8, "alpha");
        NS_TEST_EXPECT_MSG_EQ_TOL(p.fi, 23873.7, 0.05, "Fi");
        NS_TEST_EXPECT_MSG_EQ_TOL(p.eta, 716.21, 0.005, "Eta");
        NS_TEST_EXPECT_MSG_EQ_TOL(p.fiScale, 0.29214, 1e-5, "FiScale");
        NS_TEST_EXPECT_MSG_EQ(p.qaThresholdPs, 4 * 10517040u, "quick adapt above 4 x target");
        NS_TEST_EXPECT_MSG_EQ(p.adjustBytes, 33200, "fulfill every 8 MTU");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetNscc(p, 0).Window(), 262926, "starts at maxWindow");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetNscc(p, 0).MaxWindow(), 262926, "1.5 x BDP");

        // Proportional increase, then the first fulfill with Eta.
        RdmaUetNscc n(p, 100000);
        n.OnAck(p, 20000000, 4150, rtt, false, 0);
        NS_TEST_EXPECT_MSG_EQ(n.Window(), 101410, "100,000 + 694 + 716.21");
        NS_TEST_EXPECT_MSG_EQ(n.AvgDelayPs(), 0u, "no queuing delay");

        // Fair increase: accumulated, not yet applied (1 us after the fulfill, 4150 B < 8 MTU).
        n.OnAck(p, 21000000, 4150, rtt + p.targetPs, false, 0);
        NS_TEST_EXPECT_MSG_EQ(n.Window(), 101410, "fair increase waits for the fulfill");

        // Multiplicative decrease: the ninth marked ACK at 10 x target cuts by 0.9474. (The
        // first ACK of a queue pair also runs the first fulfill: + Eta, 200,000 -> 200,716.)
        RdmaUetNscc md(p, 200000);
        for (int k = 1; k <= 8; ++k)
        {
            md.OnAck(p, 20000000 + k * 1000, 4150, rtt + 10 * p.targetPs, true, 0);
            NS_TEST_EXPECT_MSG_EQ(md.Window(), 200716, "average below the target, ACK " << k);
        }
        md.OnAck(p, 20009000, 4150, rtt + 10 * p.targetPs, true, 0);
        NS_TEST_EXPECT_MSG_EQ(md.AvgDelayPs(), 11257018u, "10 T (1 - 0.9875^9), truncated");
        NS_TEST_EXPECT_MSG_EQ(md.Window(), static_cast<int64_t>(200716 * (1 - 0.8 * (11257018.0 - 10517040) / 11257018.0)),
                              "x 0.9474");
        const int64_t once = md.Window();
        md.OnAck(p, 20010000, 4150, rtt + 10 * p.targetPs, true, 0);
        NS_TEST_EXPECT_MSG_EQ(md.Window(), once, "at most once per base RTT");

        // Marked below the target: the window holds.
        RdmaUetNscc path(p, 150000);
        path.OnAck(p, 20000000, 4150, rtt + p.targetPs / 2, true, 0);
        NS_TEST_EXPECT_MSG_EQ(path.Window(), 150716, "only the first fulfill's Eta: the path's "
                                                     "congestion, not the flow's");

        // Quick adapt: 8300 B delivered in the window opened at 20 us (it ends at 20 us +
        // base RTT + target = 44.54 us), under maxWindow / 8; a NACK after it sets the window
        // to those bytes.
        RdmaUetNscc qa(p, 200000);
        qa.OnAck(p, 20000000, 4150, rtt, false, 50000);
        qa.OnAck(p, 30000000, 4150, rtt, false, 50000);
        qa.OnAck(p, 40000000, 4150, rtt, false, 50000);
        qa.OnNack(p, 50000000, 4150, rtt, 50000);
        NS_TEST_EXPECT_MSG_EQ(qa.Window(), 8300, "the bytes delivered in the window");
    }
};

/**
 * NSCC fed as the UEC htsim feeds it (RdmaUetRecovery::NsccFeedback "htsim"):
 *  - the RTT-sample rule of its validateSendTs, cell by cell: a packet sent once gives a sample
 *    while outstanding; resent once, only its resend's ACK does (the original's late ACK echoes
 *    an older send time); resent twice, none; nor does a packet a cumulative ACK already took;
 *  - NSCC without a sample (RTT 0) keeps its delay average, where a sample moves it;
 *  - wired: a trimming 3-to-1 incast under NSCC (16-packet queue) completes under both rules and
 *    ends differently (resends are answered there, so the rule decides samples);
 *  - and with bytes in flight counted as htsim counts them (Inflight "received-bytes": the
 *    receiver's byte count in each ACK; a NACK takes out only its trimmed packet) it completes
 *    too (UetScenarioDeterminismTestCase has the sprayed case, where the two counts differ).
 */
class UetHtsimFeedbackTestCase : public TestCase
{
  public:
    UetHtsimFeedbackTestCase()
        : TestCase("uet nscc feedback: htsim's RTT-sample rule, cell by cell, and wired")
    {
    }

  private:
    struct Run
    {
        uint64_t trimmed{0};
        uint32_t completed{0};
        std::vector<int64_t> fctNs;
    };

    static Run Incast(const std::string& feedback, const std::string& inflight = "named-packets")
    {
        Run r;
        RdmaFabricHelper f;
        const uint32_t n = 4;
        BuildUetStar(f, n, StarBaseRtt(), MicroSeconds(40), 16, true);
        f.GetSwitch(n)->TraceConnectWithoutContext(
            "Trim",
            MakeBoundCallback(+[](Run* run, Ptr<const Packet>, uint32_t) { ++run->trimmed; }, &r));
        RunStarIncast(f, n, 2 * 1024 * 1024, MilliSeconds(20), [&](uint32_t h) {
            rdmalbtest::SetComponent(f.GetNic(h), "ns3::RdmaUetRecovery", "Cc", StringValue("nscc"));
            rdmalbtest::SetComponent(f.GetNic(h),
                                     "ns3::RdmaUetRecovery",
                                     "NsccFeedback",
                                     StringValue(feedback));
            rdmalbtest::SetComponent(f.GetNic(h),
                                     "ns3::RdmaUetRecovery",
                                     "Inflight",
                                     StringValue(inflight));
            f.GetNic(h)->TraceConnectWithoutContext(
                "FlowRecord",
                MakeBoundCallback(+[](Run* run, const RdmaFlowRecord& rec) {
                    ++run->completed;
                    run->fctNs.push_back((rec.finish - rec.start).GetNanoSeconds());
                },
                                  &r));
        });
        Simulator::Destroy();
        return r;
    }

    void DoRun() override
    {
        NS_TEST_EXPECT_MSG_EQ(RdmaUetHtsimRttSample(true, 0, 500, 500), true, "sent once");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetHtsimRttSample(false, 0, 500, 500), false, "already acknowledged");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetHtsimRttSample(true, 1, 900, 900), true, "resent once: the resend's ACK");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetHtsimRttSample(true, 1, 900, 500), false, "resent once: the original's late ACK");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetHtsimRttSample(true, 2, 900, 900), false, "resent twice");

        const uint64_t rtt = 14022720;
        const auto p = RdmaUetNsccParams::Derive(rtt, 100000000000ULL, 4150, 4086, 0, true, 3);
        RdmaUetNscc sampled(p, 100000);
        RdmaUetNscc unsampled(p, 100000);
        sampled.OnAck(p, 20000000, 4150, rtt + 10 * p.targetPs, false, 0);
        unsampled.OnAck(p, 20000000, 4150, 0, false, 0);
        NS_TEST_EXPECT_MSG_GT(sampled.AvgDelayPs(), 0u, "a sample moves the delay average");
        NS_TEST_EXPECT_MSG_EQ(unsampled.AvgDelayPs(), 0u, "no sample: the average stays");

        const Run ours = Incast("every-ack");
        const Run htsim = Incast("htsim");
        NS_TEST_ASSERT_MSG_EQ(ours.completed, 3u, "every-ack: every flow completes");
        NS_TEST_ASSERT_MSG_EQ(htsim.completed, 3u, "htsim: every flow completes");
        NS_TEST_EXPECT_MSG_GT(ours.trimmed, 10u, "the incast trims (resends happen)");
        NS_TEST_EXPECT_MSG_EQ((ours.fctNs != htsim.fctNs), true, "the attribute reaches the sender");
        // In order on one path, with trims: both ways of counting bytes in flight agree here.
        const Run counted = Incast("htsim", "received-bytes");
        NS_TEST_ASSERT_MSG_EQ(counted.completed, 3u, "received-bytes: every flow completes");
        NS_TEST_EXPECT_MSG_GT(counted.trimmed, 10u, "received-bytes: the incast trims");
    }
};

/**
 * The sender's outstanding packets (RdmaUetOutstanding: a ring by offset and a FIFO of send
 * times) against the ordered map and set they replaced, on a random life of sends, resends,
 * cumulative and selective ACKs and losses: the same size, lowest offset, lookups and oldest
 * (send time, offset) after every step.
 */
class UetOutstandingTestCase : public TestCase
{
  public:
    UetOutstandingTestCase()
        : TestCase("uet outstanding packets: ring + send-time FIFO match an ordered map and set")
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t unit = 4086;
        RdmaUetOutstanding ring;
        ring.SetUnit(unit);
        std::map<uint64_t, Time> byOffset;               // offset -> send time
        std::set<std::pair<Time, uint64_t>> bySendTime; // the order the timer reads
        Ptr<UniformRandomVariable> rng = CreateObject<UniformRandomVariable>();
        rng->SetStream(7);
        uint64_t next = 0; // next new offset
        std::vector<uint64_t> lost;
        int64_t now = 0;
        auto remove = [&](uint64_t off) {
            bySendTime.erase({byOffset[off], off});
            byOffset.erase(off);
            ring.Erase(off);
        };
        for (int step = 0; step < 20000; ++step)
        {
            now += 1 + rng->GetInteger(0, 50);
            const uint32_t op = rng->GetInteger(0, 9);
            if (op <= 3 || byOffset.empty())
            {
                // Send: a lost packet again first, else new data.
                uint64_t off = next;
                if (!lost.empty() && op == 0)
                {
                    off = lost.back();
                    lost.pop_back();
                }
                else
                {
                    next += unit;
                }
                ring.Insert(off, RdmaUetSent{NanoSeconds(now), 4150, 1});
                byOffset[off] = NanoSeconds(now);
                bySendTime.emplace(NanoSeconds(now), off);
            }
            else if (op <= 5)
            {
                // Cumulative ACK past a random number of the lowest packets.
                const uint32_t k = rng->GetInteger(1, 3);
                for (uint32_t i = 0; i < k && !byOffset.empty(); ++i)
                {
                    NS_TEST_ASSERT_MSG_EQ(ring.Lowest(), byOffset.begin()->first, "lowest");
                    remove(byOffset.begin()->first);
                }
            }
            else if (op <= 7)
            {
                // SACK (or loss, op 7) of a random outstanding packet.
                auto it = byOffset.begin();
                std::advance(it, rng->GetInteger(0, static_cast<uint32_t>(byOffset.size() - 1)));
                const uint64_t off = it->first;
                remove(off);
                if (op == 7)
                {
                    lost.push_back(off);
                }
            }
            else
            {
                // Timeout of the oldest.
                const uint64_t off = bySendTime.begin()->second;
                NS_TEST_ASSERT_MSG_EQ(ring.Oldest().second, off, "oldest at a timeout");
                remove(off);
                lost.push_back(off);
            }
            NS_TEST_ASSERT_MSG_EQ(ring.Size(), byOffset.size(), "size at step " << step);
            NS_TEST_ASSERT_MSG_EQ(ring.Empty(), byOffset.empty(), "empty");
            if (!byOffset.empty())
            {
                NS_TEST_ASSERT_MSG_EQ(ring.Lowest(), byOffset.begin()->first, "lowest");
                NS_TEST_ASSERT_MSG_EQ(ring.Oldest().first, bySendTime.begin()->first, "oldest time");
                NS_TEST_ASSERT_MSG_EQ(ring.Oldest().second, bySendTime.begin()->second, "oldest");
            }
            const uint64_t probe = rng->GetInteger(0, static_cast<uint32_t>(next / unit + 2)) * unit;
            const bool found = ring.Find(probe) != nullptr;
            const bool inMap = byOffset.count(probe) == 1;
            NS_TEST_ASSERT_MSG_EQ(found, inMap, "find " << probe);
        }
    }
};

/**
 * One 4 MiB flow alone on the star at 400 Gbps reaches line rate. First principles:
 * N = ceil(4194304 / 4086) = 1027 packets, 4194304 + 1027 x 64 = 4260032 B on the wire:
 * 4260032 x 8 / 400e9 = 85.20064 us at the host. The switch stores and forwards: it sends each
 * packet one full-packet time (4150 B: 83 ns) after the host did, the short last one (2068 +
 * 64 B, 42.64 ns) included, since it arrives while the full one before it is still going out.
 * Two 1 us links out, then the 64 B ACK: 1.28 ns + 1 us + 1.28 ns + 1 us back.
 * FCT = 85.20064 + 0.083 + 2 + 0.00256 + 2 = 89.28620 us. No ECN mark, no trim, no
 * retransmission; the window never stops the sender (cap 1.5 BDP > BDP).
 */
class UetLineRateTestCase : public TestCase
{
  public:
    UetLineRateTestCase()
        : TestCase("uet: one 4 MiB flow alone at 400G: FCT = wire bytes at line rate + path latency")
    {
    }

  private:
    void DoRun() override
    {
        RdmaFabricHelper f;
        BuildUetStar(f, 2, StarBaseRtt(), MicroSeconds(40), 101, true);
        RdmaFlowRecord rec;
        f.GetNic(0)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](RdmaFlowRecord* out, const RdmaFlowRecord& r) { *out = r; },
                              &rec));
        const uint64_t size = 4194304;
        f.AddFlow(1, 0, 1, size, Time(0));
        Simulator::Stop(MilliSeconds(1));
        Simulator::Run();
        const uint64_t marks = f.GetSwitch(2)->GetTotalEcnMarks();
        const uint64_t trims = f.GetSwitch(2)->GetTotalTrims();
        Simulator::Destroy();
        const uint64_t packets = (size + PAYLOAD - 1) / PAYLOAD;
        NS_TEST_ASSERT_MSG_EQ(packets, 1027u, "packet count");
        const Time expected = G400.CalculateBytesTxTime(size + packets * HEADER) + MicroSeconds(4) +
                              G400.CalculateBytesTxTime(WIRE) + G400.CalculateBytesTxTime(2 * HEADER);
        NS_TEST_ASSERT_MSG_EQ(rec.flowId, 1u, "the flow completed");
        const Time fct = rec.finish - rec.start;
        NS_TEST_EXPECT_MSG_EQ_TOL(fct.GetPicoSeconds(),
                                  expected.GetPicoSeconds(),
                                  1000,
                                  "FCT " << fct.As(Time::NS) << " vs " << expected.As(Time::NS));
        NS_TEST_EXPECT_MSG_EQ(rec.dataPkts, packets, "every packet sent once");
        NS_TEST_EXPECT_MSG_EQ(rec.retxPkts + rec.timeouts + rec.nacksRx, 0u, "no loss");
        NS_TEST_EXPECT_MSG_EQ(marks + trims, 0u, "no queue: no ECN mark, no trim");
    }
};

/**
 * NSCC wired through the NIC (RdmaUetRecovery::Cc = nscc): its cap follows the smallest RTT it
 * samples (htsim update_base_rtt), where mprdma's stays at the configured base RTT's. A lone
 * flow of 256 full packets on the star, UetBaseRtt set to 10 us while the path's unloaded RTT
 * is 4,168.56 ns (2 x 2 us + 2 x 4150 B + 2 x 64 B at 400 Gbps; the first packet's RTT, sent
 * at 0; sampled as 4,168 ns, the time stamps' nanoseconds): mprdma's cap is 1.5 x 10 us x
 * 400 Gbps / 8 = 750,000 B throughout; NSCC ends at 1.5 x 208,400 B = 312,600 B (the BDP of
 * the sampled 4,168 ns).
 */
class UetNsccWiringTestCase : public TestCase
{
  public:
    UetNsccWiringTestCase()
        : TestCase("uet nscc: the NIC attribute selects it; its cap follows the smallest RTT")
    {
    }

  private:
    static std::pair<uint64_t, uint64_t> Caps(const std::string& cc)
    {
        std::pair<uint64_t, uint64_t> firstLast{0, 0};
        RdmaFabricHelper f;
        BuildUetStar(f, 2, MicroSeconds(10), MicroSeconds(40), 101, true);
        rdmalbtest::SetComponent(f.GetNic(1), "ns3::RdmaUetRecovery", "Cc", StringValue(cc));
        f.GetNic(1)->TraceConnectWithoutContext(
            "UetWindow",
            MakeBoundCallback(+[](std::pair<uint64_t, uint64_t>* fl, uint32_t, uint64_t, uint64_t cap) {
                if (fl->first == 0)
                {
                    fl->first = cap;
                }
                fl->second = cap;
            },
                              &firstLast));
        f.AddFlow(1, 1, 0, 256 * PAYLOAD, Time(0));
        Simulator::Stop(MilliSeconds(1));
        Simulator::Run();
        Simulator::Destroy();
        return firstLast;
    }

    void DoRun() override
    {
        const auto mprdma = Caps("mprdma");
        const auto nscc = Caps("nscc");
        NS_TEST_EXPECT_MSG_EQ(mprdma.first, 750000u, "mprdma: 1.5 x 10 us x 400 Gbps");
        NS_TEST_EXPECT_MSG_EQ(mprdma.second, 750000u, "and it stays");
        NS_TEST_EXPECT_MSG_EQ(nscc.second, 312600u, "nscc: 1.5 x the BDP of the sampled 4,168 ns");
    }
};

/**
 * Coalesced ACKs (RdmaUetRecovery::AckBytes, htsim's -sack_threshold 16384):
 *  - the header: an ACK with FLAG_ACK_REQUEST carries its 64-bit SACK bitmap through
 *    Serialize / Deserialize in 62 B;
 *  - a lone 1 MiB flow (257 packets, 4150 B on the wire, never window-bound): the first packet
 *    is answered at once, then one ACK per 4 packets accepted (16,600 B >= 16,384 B), the last
 *    (AR) at once: 1 + 64 = 65 ACKs, against 257 with every packet answered, and the same FCT
 *    (the last packet's ACK leaves at once either way);
 *  - four 2 MiB flows sprayed over 4 spines (reordering) under a window below the path's BDP:
 *    the bitmaps take the packets received out of order out of the window, so the last flow
 *    ends within 2 % of the ACK-per-packet run (87.95 vs 86.29 us; without the bitmaps,
 *    89.03 us, 3.2 % behind), with no timeout and fewer ACKs (1,415 vs 2,056: window-bound,
 *    most packets carry the AR bit).
 */
class UetCoalescedAckTestCase : public TestCase
{
  public:
    UetCoalescedAckTestCase()
        : TestCase("uet coalesced ACKs: one per 16 KiB, SACK bitmaps, same completion")
    {
    }

  private:
    struct Seen
    {
        uint64_t acks{0};
        RdmaFlowRecord rec;
    };

    static Seen Lone(uint32_t ackBytes)
    {
        Seen s;
        RdmaFabricHelper f;
        BuildUetStar(f, 2, StarBaseRtt(), MicroSeconds(40), 101, true);
        rdmalbtest::SetComponent(f.GetNic(1), "ns3::RdmaUetRecovery", "AckBytes", UintegerValue(ackBytes));
        rdmalbtest::SetComponent(f.GetNic(0), "ns3::RdmaUetRecovery", "AckBytes", UintegerValue(ackBytes));
        f.GetNic(1)->TraceConnectWithoutContext(
            "UetRtt",
            MakeBoundCallback(+[](Seen* s, uint32_t, Time) { ++s->acks; }, &s));
        f.GetNic(1)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](Seen* s, const RdmaFlowRecord& r) { s->rec = r; }, &s));
        f.AddFlow(1, 1, 0, 1048576, Time(0));
        Simulator::Stop(MilliSeconds(1));
        Simulator::Run();
        Simulator::Destroy();
        return s;
    }

    void DoRun() override
    {
        RdmaHeader a;
        a.type = RdmaHeader::ACK;
        a.flags = RdmaHeader::FLAG_ACK_REQUEST;
        a.sackSeq = 40860;
        a.sackBitmap = 0x8000000000000005ULL;
        Ptr<Packet> p = Create<Packet>();
        p->AddHeader(a);
        RdmaHeader b;
        p->RemoveHeader(b);
        NS_TEST_EXPECT_MSG_EQ(a.GetSerializedSize(), 62u, "ACK with a bitmap: 62 B");
        NS_TEST_EXPECT_MSG_EQ(b.sackBitmap, a.sackBitmap, "the bitmap crosses the wire");
        NS_TEST_EXPECT_MSG_EQ(a.OnTheWire().sackBitmap, a.sackBitmap, "and OnTheWire keeps it");

        const Seen every = Lone(0);
        const Seen coalesced = Lone(16384);
        NS_TEST_ASSERT_MSG_EQ(every.rec.flowId, 1u, "completed");
        NS_TEST_ASSERT_MSG_EQ(coalesced.rec.flowId, 1u, "completed");
        NS_TEST_EXPECT_MSG_EQ(every.acks, 257u, "an ACK per packet");
        NS_TEST_EXPECT_MSG_EQ(coalesced.acks, 65u, "first + one per 4 packets (the last AR)");
        NS_TEST_EXPECT_MSG_EQ(coalesced.rec.finish - coalesced.rec.start,
                              every.rec.finish - every.rec.start,
                              "same completion");

        // Reordering under a tight window: packets held out of order must leave the window
        // through the bitmaps, so the sprayed flows finish as fast as with an ACK per packet.
        const Sprayed e = Spray(0);
        const Sprayed c = Spray(16384);
        NS_TEST_EXPECT_MSG_EQ(c.done, 4u, "every flow completes");
        NS_TEST_EXPECT_MSG_EQ(c.timeouts, 0u, "no timeout");
        // Window-bound, most packets carry the AR bit and are answered at once: fewer ACKs
        // all the same.
        NS_TEST_EXPECT_MSG_LT(c.acks, e.acks, "fewer ACKs");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(c.lastFinish.GetPicoSeconds(),
                                    e.lastFinish.GetPicoSeconds() * 102 / 100,
                                    "within 2 % of an ACK per packet: " << c.lastFinish.As(Time::US)
                                                                         << " vs "
                                                                         << e.lastFinish.As(Time::US));
    }

    struct Sprayed
    {
        uint64_t acks{0};
        uint64_t done{0};
        uint64_t timeouts{0};
        Time lastFinish;
    };

    /// 4 flows of 2 MiB from leaf 0 to leaf 1 sprayed over 4 spines, the window's cap 1.5 x
    /// 3 us x 400 Gbps = 225 kB (under the path's BDP: window-bound).
    static Sprayed Spray(uint32_t ackBytes)
    {
        Sprayed s;
        RdmaFabricHelper f;
        BuildUetLeafSpine(f, "spray", 2, 4, 4, MicroSeconds(3), MicroSeconds(60), 32, true);
        for (uint32_t h = 0; h < 8; ++h)
        {
            rdmalbtest::SetComponent(f.GetNic(h), "ns3::RdmaUetRecovery",
                                               "AckBytes",
                                               UintegerValue(ackBytes));
        }
        for (uint32_t h = 0; h < 4; ++h)
        {
            f.GetNic(h)->TraceConnectWithoutContext(
                "UetRtt",
                MakeBoundCallback(+[](Sprayed* s, uint32_t, Time) { ++s->acks; }, &s));
            f.GetNic(h)->TraceConnectWithoutContext(
                "FlowRecord",
                MakeBoundCallback(+[](Sprayed* s, const RdmaFlowRecord& r) {
                    ++s->done;
                    s->timeouts += r.timeouts;
                    s->lastFinish = std::max(s->lastFinish, r.finish);
                },
                                  &s));
            f.AddFlow(h + 1, h, h + 4, 2 * 1048576, Time(0));
        }
        Simulator::Stop(MilliSeconds(5));
        Simulator::Run();
        Simulator::Destroy();
        return s;
    }
};

/**
 * The REPS artifact's ACKs under one-way black holes (issue 40): its every ACK carries a
 * 64-packet SACK bitmap (-sack_threshold 4000: AckBytes 4000) and its AR bit marks the packet
 * that fills the window (AckRequest "reps", RdmaUetAckRequest).
 *  - the AR rule on hand-computed cells (window 10 packets; UEC's rule one packet earlier);
 *  - 4 flows of 2 MiB sprayed from leaf 0 to leaf 1 over 8 spines, leaf 0 -> spine 0 (data)
 *    and leaf 1 -> spine 1 (ACKs) black-holed one way from t = 0 (1 in 8 of each lost), the
 *    signals the NICs really get: with a SACK of the answered packet only (AckBytes 0), a lost
 *    ACK of a packet held beyond a hole leaves it outstanding, and it times out although
 *    delivered (timeouts beyond the data packets lost); with the artifact's ACKs the next ACK's
 *    bitmap reports it: under half as many such timeouts (the bitmap reaches 63 packets back,
 *    so a hole older than that still leaves some), and the flows finish sooner. Measured:
 *    466 timeouts for 280 data packets lost, last flow done at 1672 us; with the artifact's
 *    ACKs 277 for 265, at 736 us (287 and 267 ACKs lost).
 */
class UetRepsAcksBlackHoleTestCase : public TestCase
{
  public:
    UetRepsAcksBlackHoleTestCase()
        : TestCase("uet: the REPS artifact's ACKs (a bitmap on every ACK, its AR rule) under "
                   "one-way black holes")
    {
    }

  private:
    struct Run
    {
        uint64_t done{0};
        uint64_t timeouts{0};
        uint64_t dataLost{0};
        uint64_t acksLost{0};
        Time lastFinish;
    };

    static Run Spray(uint32_t ackBytes, const std::string& ackRequest)
    {
        Run r;
        RdmaFabricHelper f;
        BuildUetLeafSpine(f, "spray", 2, 4, 8, MicroSeconds(3), MicroSeconds(60), 32, true);
        for (uint32_t h = 0; h < 8; ++h)
        {
            rdmalbtest::SetComponent(f.GetNic(h),
                                     "ns3::RdmaUetRecovery",
                                     "AckBytes",
                                     UintegerValue(ackBytes));
            rdmalbtest::SetComponent(f.GetNic(h),
                                     "ns3::RdmaUetRecovery",
                                     "AckRequest",
                                     StringValue(ackRequest));
        }
        // Hosts 0-7, leaves 8-9, spines 10-17: data from leaf 0 via spine 10 and ACKs from
        // leaf 1 via spine 11 are lost.
        f.ScheduleOneWayState(8, 10, Time(0), true);
        f.ScheduleOneWayState(9, 11, Time(0), true);
        Config::ConnectWithoutContext(
            "/ChannelList/*/$ns3::RdmaChannel/Loss",
            MakeBoundCallback(+[](Run* r, Ptr<const Packet> p) {
                ++(p->GetSize() > 1000 ? r->dataLost : r->acksLost);
            },
                              &r));
        for (uint32_t h = 0; h < 4; ++h)
        {
            f.GetNic(h)->TraceConnectWithoutContext(
                "FlowRecord",
                MakeBoundCallback(+[](Run* r, const RdmaFlowRecord& rec) {
                    ++r->done;
                    r->timeouts += rec.timeouts;
                    r->lastFinish = std::max(r->lastFinish, rec.finish);
                },
                                  &r));
            f.AddFlow(h + 1, h, h + 4, 2 * 1048576, Time(0));
        }
        Simulator::Stop(MilliSeconds(20));
        Simulator::Run();
        Simulator::Destroy();
        return r;
    }

    void DoRun() override
    {
        // Window of 10 packets; in flight before the packet: 7, 8, 9 packets (and a byte more).
        const uint64_t w = WIRE;
        auto ar = [w](uint64_t inflight, bool reps, bool resend = false, bool last = false) {
            return RdmaUetAckRequest(inflight, w, 10 * w, resend, last, reps);
        };
        NS_TEST_EXPECT_MSG_EQ(ar(7 * w, false), false, "uec: room for 2 more");
        NS_TEST_EXPECT_MSG_EQ(ar(8 * w, false), true, "uec: no room for another after it");
        NS_TEST_EXPECT_MSG_EQ(ar(8 * w, true), false, "reps: it does not fill the window");
        NS_TEST_EXPECT_MSG_EQ(ar(9 * w, true), true, "reps: it fills the window");
        NS_TEST_EXPECT_MSG_EQ(ar(9 * w + 1, true), true, "reps: beyond it");
        NS_TEST_EXPECT_MSG_EQ(ar(0, true, true), true, "a resend always");
        NS_TEST_EXPECT_MSG_EQ(ar(0, true, false, true), true, "the last packet always");
        NS_TEST_EXPECT_MSG_EQ(ar(0, false), false, "uec: an empty window");

        const Run single = Spray(0, "uec");
        const Run reps = Spray(4000, "reps");
        NS_TEST_ASSERT_MSG_EQ(single.done, 4u, "single SACK: every flow completes");
        NS_TEST_ASSERT_MSG_EQ(reps.done, 4u, "artifact's ACKs: every flow completes");
        NS_TEST_EXPECT_MSG_GT(single.acksLost, 0u, "ACKs are lost in the hole");
        NS_TEST_EXPECT_MSG_GT(reps.acksLost, 0u, "ACKs are lost in the hole");
        NS_TEST_ASSERT_MSG_GT_OR_EQ(reps.timeouts, reps.dataLost, "every lost packet times out");
        NS_TEST_EXPECT_MSG_GT(single.timeouts, single.dataLost, "single SACK: spurious timeouts");
        NS_TEST_EXPECT_MSG_LT(2 * (reps.timeouts - reps.dataLost),
                              single.timeouts - single.dataLost,
                              "the bitmaps: under half as many timeouts of delivered packets");
        NS_TEST_EXPECT_MSG_LT(reps.lastFinish, single.lastFinish, "and the flows finish sooner");
    }
};

/**
 * Trimming: 3 senders x 2 MiB into one receiver through a 16-packet queue. Every trimmed
 * packet reaches its sender's load balancer as a NACK (LbFeedback kind NACK) naming the
 * trimmed packet's entropy, within one base RTT of the trim -- the header and the NACK travel
 * at the highest priority -- and is resent: one NACK
 * per trim, no drop, no timeout, every flow completes. The same incast without trimming
 * drops packets and recovers by timeouts only.
 */
class UetTrimNackTestCase : public TestCase
{
  public:
    UetTrimNackTestCase()
        : TestCase("uet: a trimmed packet becomes a NACK at its sender within one RTT")
    {
    }

  private:
    struct Run
    {
        std::map<uint32_t, std::deque<std::pair<Time, uint16_t>>> trims; //!< (time, entropy)
                                                                         //!< by sender, in order
        uint64_t trimmed{0};
        uint64_t nacks{0};
        uint64_t lateNacks{0};
        uint64_t unmatchedNacks{0};
        uint64_t wrongEntropy{0};
        Time worstDelay;
        uint64_t drops{0};
        uint64_t timeouts{0};
        uint64_t completed{0};
    };

    static Run Incast(bool trim)
    {
        Run r;
        RdmaFabricHelper f;
        const uint32_t n = 4;
        BuildUetStar(f, n, StarBaseRtt(), MicroSeconds(40), 16, trim);
        f.GetSwitch(n)->TraceConnectWithoutContext(
            "Trim",
            MakeBoundCallback(+[](Run* run, Ptr<const Packet> p, uint32_t) {
                RdmaHeader h;
                p->PeekHeader(h);
                run->trims[h.sip].emplace_back(Simulator::Now(), h.sport);
                ++run->trimmed;
            },
                              &r));
        RunStarIncast(f, n, 2 * 1024 * 1024, MilliSeconds(20), [&](uint32_t h) {
            const uint32_t sip = RdmaHostAddress(h);
            f.GetNic(h)->TraceConnectWithoutContext(
                "LbFeedback",
                MakeBoundCallback(+[](Run* run, uint32_t sip, uint32_t, uint8_t kind, uint16_t ev) {
                    if (kind != static_cast<uint8_t>(LbFeedbackKind::NACK))
                    {
                        return;
                    }
                    ++run->nacks;
                    auto& q = run->trims[sip];
                    if (q.empty())
                    {
                        ++run->unmatchedNacks;
                        return;
                    }
                    const Time d = Simulator::Now() - q.front().first;
                    run->wrongEntropy += ev != q.front().second ? 1 : 0;
                    q.pop_front();
                    run->worstDelay = std::max(run->worstDelay, d);
                    if (d > StarBaseRtt())
                    {
                        ++run->lateNacks;
                    }
                },
                                  &r,
                                  sip));
            f.GetNic(h)->TraceConnectWithoutContext(
                "FlowRecord",
                MakeBoundCallback(+[](Run* run, const RdmaFlowRecord& rec) {
                    ++run->completed;
                    run->timeouts += rec.timeouts;
                },
                                  &r));
        });
        r.drops = f.GetSwitch(n)->GetTotalDrops();
        Simulator::Destroy();
        return r;
    }

    void DoRun() override
    {
        const Run t = Incast(true);
        NS_TEST_ASSERT_MSG_EQ(t.completed, 3u, "every flow completes");
        NS_TEST_ASSERT_MSG_GT(t.trimmed, 10u, "the incast overflows the 16-packet queue");
        NS_TEST_EXPECT_MSG_EQ(t.nacks, t.trimmed, "one NACK per trimmed packet");
        NS_TEST_EXPECT_MSG_EQ(t.unmatchedNacks, 0u, "no NACK without a trim");
        NS_TEST_EXPECT_MSG_EQ(t.wrongEntropy,
                              0u,
                              "the load balancer's NACK names the trimmed packet's entropy");
        NS_TEST_EXPECT_MSG_EQ(t.lateNacks,
                              0u,
                              "every NACK within one base RTT (" << StarBaseRtt().As(Time::NS)
                                                                 << "); worst "
                                                                 << t.worstDelay.As(Time::NS));
        NS_TEST_EXPECT_MSG_EQ(t.drops, 0u, "trimming: nothing dropped");
        NS_TEST_EXPECT_MSG_EQ(t.timeouts, 0u, "trimming: no timeout");

        const Run d = Incast(false);
        NS_TEST_ASSERT_MSG_EQ(d.completed, 3u, "without trimming every flow completes too");
        NS_TEST_EXPECT_MSG_EQ(d.trimmed + d.nacks, 0u, "no trim, no NACK");
        NS_TEST_EXPECT_MSG_GT(d.drops, 0u, "without trimming the overflow is dropped");
        NS_TEST_EXPECT_MSG_GT(d.timeouts, 0u, "and recovered by timeouts");
    }
};

/**
 * A trimmed header keeps the highest priority at every later hop. Leaf-spine, 3 leaves x 4
 * hosts, 1 spine, 400 Gbps, 1 us links, 16-packet queues, trimming: hosts 0-2 send 1 MiB each
 * to hosts 4-6 (trimmed at leaf 0's uplink), while hosts 8-11 send 1 MiB each into host 7,
 * filling the spine's port to leaf 1 with data. A header trimmed at leaf 0 crosses that busy
 * port: at the highest priority it waits at most for the packet being sent at each of its
 * three hops (3 x 83 ns) plus the control packets ahead of it, so its NACK reaches the sender
 * within the 7 us of links from leaf 0's uplink to the receiver and back plus 0.5 us. Behind
 * the spine's data queue it would wait up to 16 x 83 ns = 1.3 us more.
 */
class UetTrimPriorityTestCase : public TestCase
{
  public:
    UetTrimPriorityTestCase()
        : TestCase("uet: a trimmed header crosses later busy hops at the highest priority")
    {
    }

  private:
    struct Run
    {
        std::map<uint32_t, std::deque<Time>> trims; //!< leaf 0's trims by sender address
        uint64_t matched{0};
        uint64_t late{0};
        Time worst;
    };

    void DoRun() override
    {
        Run r;
        RdmaFabricHelper f;
        BuildUetLeafSpine(f, "spray", 3, 4, 1, MicroSeconds(9), MicroSeconds(60), 16, true);
        const uint32_t leaf0 = 12;
        f.GetSwitch(leaf0)->TraceConnectWithoutContext(
            "Trim",
            MakeBoundCallback(+[](Run* run, Ptr<const Packet> p, uint32_t) {
                RdmaHeader h;
                p->PeekHeader(h);
                run->trims[h.sip].push_back(Simulator::Now());
            },
                              &r));
        for (uint32_t h = 0; h < 3; ++h)
        {
            f.GetNic(h)->TraceConnectWithoutContext(
                "LbFeedback",
                MakeBoundCallback(+[](Run* run, uint32_t sip, uint32_t, uint8_t kind, uint16_t) {
                    std::deque<Time>& q = run->trims[sip];
                    if (kind != static_cast<uint8_t>(LbFeedbackKind::NACK) || q.empty())
                    {
                        return;
                    }
                    const Time d = Simulator::Now() - q.front();
                    q.pop_front();
                    ++run->matched;
                    run->worst = std::max(run->worst, d);
                    run->late += d > MicroSeconds(7) + NanoSeconds(500) ? 1 : 0;
                },
                                  &r,
                                  RdmaHostAddress(h)));
            f.AddFlow(h, h, 4 + h, 1024 * 1024, Time(0));
        }
        for (uint32_t h = 8; h < 12; ++h)
        {
            f.AddFlow(h, h, 7, 1024 * 1024, Time(0));
        }
        Simulator::Stop(MilliSeconds(20));
        Simulator::Run();
        const uint64_t spineTrims = f.GetSwitch(14)->GetTotalTrims();
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_GT(r.matched, 10u, "leaf 0 trims, and the NACKs come back");
        NS_TEST_ASSERT_MSG_GT(spineTrims, 10u, "the spine's port to leaf 1 is full too");
        NS_TEST_EXPECT_MSG_EQ(r.late,
                              0u,
                              "every NACK within 7.5 us of its trim; worst " << r.worst.As(Time::NS));
    }
};

/**
 * QueueRelease (RdmaSwitch; the UEC htsim's CompositeQueue) on one switch port, from first
 * principles. A source sends a burst of K = 20 data packets of 4150 B at 400 Gbps (83 ns
 * each, 1.66 us in all) through a switch whose port to the sink runs at 10 Gbps (3.32 us per
 * packet), its data queue N = 8 packets, trimming on: the whole burst arrives while the first
 * packet is being sent. "start" releases that packet when its transmission starts, so N more
 * fit behind it: N + 1 = 9 packets go on, K - N - 1 = 11 are trimmed. "end" keeps it in the
 * occupancy until its last bit has left: N = 8 go on, 12 are trimmed (the trim one packet
 * earlier). ECN with EcnKmin = EcnKmax = 2 x 4150 B (a mark when the bytes beyond the MMU's
 * 1049 B queue reservation exceed it: 3 or more packets waiting): "start" decides when a
 * packet starts, from the packets behind it then -- packet 0 starts on an empty queue (no
 * mark), packet i >= 1 starts with N - i behind it: packets 1-5 marked; "end" decides when it
 * has left -- packet i leaves N - 1 - i behind it: packets 0-4 marked, the first mark at
 * packet 0's end, 83 ns + 1 us + 3.32 us = 4.403 us. Both release every byte in the end.
 */
class UetQueueReleaseTestCase : public TestCase
{
  public:
    UetQueueReleaseTestCase()
        : TestCase("uet: queue release at the end of transmission trims one packet earlier and "
                   "marks ECN at completion")
    {
    }

  private:
    struct Result
    {
        std::vector<uint32_t> delivered; //!< data packets at the sink, by index, in order
        std::vector<uint32_t> marked;    //!< those carrying CE
        uint64_t trims{0};
        uint64_t headersDelivered{0}; //!< trimmed headers at the sink
        Time firstMark{Time::Max()};  //!< the switch's first EcnMark
        uint64_t bytesLeft{1};        //!< MMU egress bytes of the port at the end
    };

    static Result Run(const std::string& release, double trimNewest = 0.0)
    {
        const uint32_t nPackets = 20;
        const uint64_t queuePkts = 8;
        Result r;
        NodeContainer nodes;
        nodes.Create(3); // 0 source, 1 switch, 2 sink
        Ptr<RdmaSwitch> sw = CreateObject<RdmaSwitch>();
        nodes.Get(1)->AggregateObject(sw);
        sw->SetAttribute("QueueRelease", StringValue(release));
        sw->SetAttribute("TrimNewestProbability", DoubleValue(trimNewest));
        sw->SetAttribute("PfcEnabled", BooleanValue(false));
        sw->SetAttribute("EcnEnabled", BooleanValue(true));
        sw->SetAttribute("DataQueueLimit", UintegerValue(queuePkts * WIRE));
        sw->SetAttribute("TrimEnabled", BooleanValue(true));
        sw->SetAttribute("TrimmedSize", UintegerValue(HEADER));
        sw->SetAttribute("EcnKmin", UintegerValue(2 * WIRE));
        sw->SetAttribute("EcnKmax", UintegerValue(2 * WIRE));
        sw->SetAttribute("EcnPmax", DoubleValue(1.0));
        std::vector<Ptr<RdmaNetDevice>> hostDev;
        uint32_t sinkPort = 0;
        for (uint32_t host : {0u, 2u})
        {
            Ptr<RdmaChannel> ch = CreateObject<RdmaChannel>();
            ch->SetAttribute("Delay", TimeValue(MicroSeconds(1)));
            const DataRate rate(host == 0 ? "400Gbps" : "10Gbps");
            Ptr<RdmaNetDevice> h = CreateObject<RdmaNetDevice>();
            Ptr<RdmaNetDevice> p = CreateObject<RdmaNetDevice>();
            h->SetAttribute("DataRate", DataRateValue(rate));
            p->SetAttribute("DataRate", DataRateValue(rate));
            nodes.Get(host)->AddDevice(h);
            nodes.Get(1)->AddDevice(p);
            h->Attach(ch);
            p->Attach(ch);
            const uint32_t port = sw->AddPort(p);
            if (host == 2)
            {
                sinkPort = port;
            }
            hostDev.push_back(h);
        }
        sw->AddRoute(RdmaHostAddress(2), sinkPort);
        hostDev[1]->SetFrameReceiveHandler(MakeBoundCallback(
            +[](Result* res, Ptr<RdmaNetDevice>, RdmaFramePtr& f) {
                const RdmaHeader& h = f->header;
                if ((h.flags & RdmaHeader::FLAG_TRIMMED) != 0)
                {
                    ++res->headersDelivered;
                    return;
                }
                res->delivered.push_back(h.seq / PAYLOAD);
                if (h.ecn == 3)
                {
                    res->marked.push_back(h.seq / PAYLOAD);
                }
            },
            &r));
        sw->TraceConnectWithoutContext(
            "EcnMark",
            MakeBoundCallback(
                +[](Result* res, uint32_t, uint32_t, uint64_t) {
                    res->firstMark = std::min(res->firstMark, Simulator::Now());
                },
                &r));
        for (uint32_t k = 0; k < nPackets; ++k)
        {
            RdmaHeader h;
            h.type = RdmaHeader::DATA;
            h.sip = RdmaHostAddress(0);
            h.dip = RdmaHostAddress(2);
            h.pg = 1;
            h.seq = k * PAYLOAD;
            hostDev[0]->Enqueue(RdmaFrame::Make(h, WIRE - RdmaHeader::DATA_HEADER_BYTES), 1);
        }
        Simulator::Stop(MilliSeconds(1));
        Simulator::Run();
        r.trims = sw->GetTotalTrims();
        r.bytesLeft = sw->GetMmu()->GetEgressBytes(sinkPort, 1) + sw->GetMmu()->GetTotalBytes();
        Simulator::Destroy();
        return r;
    }

    static std::vector<uint32_t> Range(uint32_t from, uint32_t to)
    {
        std::vector<uint32_t> v;
        for (uint32_t i = from; i <= to; ++i)
        {
            v.push_back(i);
        }
        return v;
    }

    void DoRun() override
    {
        const Result start = Run("start");
        NS_TEST_EXPECT_MSG_EQ(start.trims, 11u, "start: N + 1 = 9 of 20 go on");
        NS_TEST_EXPECT_MSG_EQ(start.headersDelivered, 11u, "start: every trimmed header arrives");
        NS_TEST_EXPECT_MSG_EQ((start.delivered == Range(0, 8)), true, "start: packets 0-8");
        NS_TEST_EXPECT_MSG_EQ((start.marked == Range(1, 5)), true,
                              "start: packet 0 starts on an empty queue, 1-5 marked");
        NS_TEST_EXPECT_MSG_EQ(start.bytesLeft, 0u, "start: all released");

        const Result end = Run("end");
        NS_TEST_EXPECT_MSG_EQ(end.trims, 12u, "end: the packet in service counts, N = 8 go on");
        NS_TEST_EXPECT_MSG_EQ(end.headersDelivered, 12u, "end: every trimmed header arrives");
        NS_TEST_EXPECT_MSG_EQ((end.delivered == Range(0, 7)), true, "end: packets 0-7");
        NS_TEST_EXPECT_MSG_EQ((end.marked == Range(0, 4)), true,
                              "end: marked from the packets behind each at its end: 0-4");
        NS_TEST_EXPECT_MSG_EQ(end.firstMark,
                              NanoSeconds(83 + 1000 + 3320),
                              "end: packet 0's mark is decided when its last bit leaves");
        NS_TEST_EXPECT_MSG_EQ(end.bytesLeft, 0u, "end: all released");

        // TrimNewestProbability (htsim's CompositeQueue: 0.5): a full queue trims its newest
        // packet instead of the arrival and queues the arrival. At 1 every arrival 8-19 takes
        // the place of the one before it: packets 0-6 and 19 go on, 7-18 are trimmed.
        const Result newest = Run("end", 1.0);
        NS_TEST_EXPECT_MSG_EQ(newest.trims, 12u, "newest: as many trims, N = 8 go on");
        NS_TEST_EXPECT_MSG_EQ(newest.headersDelivered, 12u, "newest: every header arrives");
        std::vector<uint32_t> want = Range(0, 6);
        want.push_back(19);
        NS_TEST_EXPECT_MSG_EQ((newest.delivered == want), true, "newest: packets 0-6 and 19");
        NS_TEST_EXPECT_MSG_EQ(newest.bytesLeft, 0u, "newest: the trimmed ones' charge released");
        // At 0.5 (a fixed coin: no streams assigned) the same counts, and some arrival after
        // the queue filled goes on where 0 trims them all.
        const Result half = Run("end", 0.5);
        NS_TEST_EXPECT_MSG_EQ(half.trims, 12u, "half: as many trims");
        NS_TEST_EXPECT_MSG_EQ(half.delivered.size(), 8u, "half: N = 8 go on");
        NS_TEST_EXPECT_MSG_EQ((!half.delivered.empty() && half.delivered.back() >= 8), true,
                              "half: a later arrival took a queued packet's place");
        NS_TEST_EXPECT_MSG_EQ(half.bytesLeft, 0u, "half: all released");
    }
};

/**
 * The window never exceeds its cap: 8 senders x 1 MiB into one receiver (ECN marks,
 * trimming on), the UetWindow trace checked at every ACK, NACK and timeout. The cap is
 * 1.5 x base RTT x 400 Gbps; the window also falls below it (the rule acts) and never below
 * one packet.
 */
class UetWindowCapTestCase : public TestCase
{
  public:
    UetWindowCapTestCase()
        : TestCase("uet: the window never exceeds 1.5 BDP, at every ACK, NACK and timeout")
    {
    }

  private:
    struct Seen
    {
        uint64_t events{0};
        uint64_t overCap{0};
        uint64_t underMtu{0};
        uint64_t minWindow{UINT64_MAX};
        uint64_t maxWindow{0};
        uint64_t cap{0};
        uint64_t capChanges{0};
    };

    void DoRun() override
    {
        Seen s;
        RdmaFabricHelper f;
        const uint32_t n = 9;
        BuildUetStar(f, n, StarBaseRtt(), MicroSeconds(40), 32, true);
        RunStarIncast(f, n, 1024 * 1024, MilliSeconds(20), [&](uint32_t h) {
            f.GetNic(h)->TraceConnectWithoutContext(
                "UetWindow",
                MakeBoundCallback(+[](Seen* s, uint32_t, uint64_t w, uint64_t cap) {
                    ++s->events;
                    s->overCap += w > cap ? 1 : 0;
                    s->underMtu += w < WIRE ? 1 : 0;
                    s->minWindow = std::min(s->minWindow, w);
                    s->maxWindow = std::max(s->maxWindow, w);
                    s->capChanges += (s->cap != 0 && s->cap != cap) ? 1 : 0;
                    s->cap = cap;
                },
                                  &s));
        });
        Simulator::Destroy();
        // cap = 1.5 x (4168.56 ns x 400 Gbps / 8 = 208428 B) = 312642 B.
        const uint64_t expectedCap = 3 * (StarBaseRtt().GetPicoSeconds() * 400 / 8000) / 2;
        NS_TEST_ASSERT_MSG_GT(s.events, 1000u, "the trace fired at every feedback");
        NS_TEST_EXPECT_MSG_EQ(s.cap, expectedCap, "cap = 1.5 BDP");
        NS_TEST_EXPECT_MSG_EQ(s.capChanges, 0u, "one cap");
        NS_TEST_EXPECT_MSG_EQ(s.overCap, 0u, "window <= cap at every event");
        NS_TEST_EXPECT_MSG_EQ(s.underMtu, 0u, "window >= one packet at every event");
        NS_TEST_EXPECT_MSG_LT(s.minWindow, expectedCap / 4, "ECN marks and NACKs cut it");
        NS_TEST_EXPECT_MSG_EQ(s.maxWindow, expectedCap, "and it grows back to the cap");
    }
};

/**
 * Wait-to-decrease wired through the NIC (RdmaUetRecovery's WaitToDecrease, set as the
 * scenario program sets it): the 8:1 incast of the cap test, once without and once with the
 * option at 0.25. Without it the window changes at every ACK between one packet and the cap
 * (a mark cuts, an unmarked ACK grows it by at least 4150 x 4150 / 312642 = 55 B); with it, the
 * marks below the threshold hold it, so some windows strictly between the floor and the cap
 * repeat, and the senders cut less often: the mean window is higher.
 */
class UetWaitToDecreaseWiringTestCase : public TestCase
{
  public:
    UetWaitToDecreaseWiringTestCase()
        : TestCase("uet wait-to-decrease: the NIC attribute holds the window on isolated marks")
    {
    }

  private:
    struct Seen
    {
        std::map<uint32_t, uint64_t> last; //!< previous window per flow
        uint64_t held{0};    //!< events leaving a window strictly inside (MTU, cap) unchanged
        uint64_t events{0};
        double sum{0};
    };

    static Seen Run(double wtd)
    {
        Seen s;
        RdmaFabricHelper f;
        const uint32_t n = 9;
        BuildUetStar(f, n, StarBaseRtt(), MicroSeconds(40), 32, true);
        RunStarIncast(f, n, 1024 * 1024, MilliSeconds(20), [&](uint32_t h) {
            rdmalbtest::SetComponent(f.GetNic(h), "ns3::RdmaUetRecovery",
                                               "WaitToDecrease",
                                               DoubleValue(wtd));
            f.GetNic(h)->TraceConnectWithoutContext(
                "UetWindow",
                MakeBoundCallback(+[](Seen* s, uint32_t flow, uint64_t w, uint64_t cap) {
                    auto it = s->last.find(flow);
                    if (it != s->last.end() && it->second == w && w > WIRE && w < cap)
                    {
                        ++s->held;
                    }
                    s->last[flow] = w;
                    ++s->events;
                    s->sum += static_cast<double>(w);
                },
                                  &s));
        });
        Simulator::Destroy();
        return s;
    }

    void DoRun() override
    {
        const Seen off = Run(0.0);
        const Seen on = Run(0.25);
        NS_TEST_ASSERT_MSG_GT(off.events, 1000u, "feedback seen");
        NS_TEST_EXPECT_MSG_EQ(off.held, 0u, "without the option every ACK moves the window");
        NS_TEST_EXPECT_MSG_GT(on.held, 0u, "with it, marks below the threshold hold it");
        NS_TEST_EXPECT_MSG_GT(on.sum / on.events, off.sum / off.events, "fewer cuts");
    }
};

/**
 * A per-destination base RTT (RdmaNic::SetUetBaseRttOf, htsim's per-pair base RTT) sets that
 * queue pair's cap: 1.5 x 10 us x 400 Gbps / 8 = 750,000 B for host 1, while host 2 (the
 * callback answers 0) keeps UetBaseRtt's 312,642 B.
 */
class UetPerPairBaseRttTestCase : public TestCase
{
  public:
    UetPerPairBaseRttTestCase()
        : TestCase("uet: a per-destination base RTT sets that queue pair's window cap")
    {
    }

  private:
    void DoRun() override
    {
        RdmaFabricHelper f;
        BuildUetStar(f, 3, StarBaseRtt(), MicroSeconds(40), 101, true);
        f.GetNic(0)->SetUetBaseRttOf(
            MakeBoundCallback(+[](uint32_t toHost1, uint32_t dip) {
                return dip == toHost1 ? MicroSeconds(10) : Time(0);
            },
                              RdmaHostAddress(1)));
        std::map<uint32_t, uint64_t> caps;
        f.GetNic(0)->TraceConnectWithoutContext(
            "UetWindow",
            MakeBoundCallback(+[](std::map<uint32_t, uint64_t>* m, uint32_t flow, uint64_t,
                                  uint64_t cap) { (*m)[flow] = cap; },
                              &caps));
        f.AddFlow(1, 0, 1, 100000, Time(0));
        f.AddFlow(2, 0, 2, 100000, Time(0));
        Simulator::Stop(MilliSeconds(1));
        Simulator::Run();
        Simulator::Destroy();
        NS_TEST_EXPECT_MSG_EQ(caps[1], 750000u, "10 us x 400 Gbps x 1.5");
        const uint64_t fallback = 3 * (StarBaseRtt().GetPicoSeconds() * 400 / 8000) / 2;
        NS_TEST_EXPECT_MSG_EQ(caps[2], fallback, "UetBaseRtt when the callback answers 0");
    }
};

/**
 * The per-packet RTT histogram (RdmaNic UetRtt trace, the scenario's rtt_hist.csv): one 4 MiB
 * flow alone between two hosts of one leaf at 400 Gbps meets no queue, so every ACK's RTT is
 * the pair's base RTT: 2 x 2 links x 1 us + 2 hops x (4150 B data + 64 B ACK) at 400 Gbps
 * = 4168.56 ns, in bin [4100, 4200) of width 100 ns, once per packet (1027 ACKs).
 */
class UetRttHistogramTestCase : public TestCase
{
  public:
    UetRttHistogramTestCase()
        : TestCase("uet scenario: rtt_hist.csv of a lone flow: every ACK in its base RTT's bin")
    {
    }

  private:
    void DoRun() override
    {
        RdmaScenarioSpec s = rdmalbtest::LeafSpineSpec(2, 2, 1, 400000000000ULL, 1000);
        rdmalbtest::UseUet(s);
        s.transport.Get("ns3::RdmaSwitch", "PfcEnabled").uint = 0;
        s.transport.Get("ns3::RdmaNic", "PayloadSize").uint = PAYLOAD;
        s.run.rttHistogramNs = 100;
        rdmalbtest::AddSpecFlow(s, 0, 1, 4194304, 0);
        RdmaScenarioRunner runner(s);
        std::string error;
        NS_TEST_ASSERT_MSG_EQ(runner.Run(&error), true, error);
        NS_TEST_ASSERT_MSG_EQ(runner.GetCompletedFlows(), 1u, "the flow completes");
        const Time base = MicroSeconds(4) + G400.CalculateBytesTxTime(2 * (WIRE + HEADER));
        // 4168.56 ns; the simulator's clock has ns resolution: 4169 ns, bin 41 either way.
        NS_TEST_ASSERT_MSG_EQ(base.GetNanoSeconds() / 100, 41, "base RTT from first principles");
        std::string expected = "bin_start_ns,bin_end_ns,acks\n";
        for (uint64_t b = 0; b <= 41; ++b)
        {
            expected += std::to_string(b * 100) + "," + std::to_string(b * 100 + 100) + "," +
                        (b == 41 ? "1027" : "0") + "\n";
        }
        NS_TEST_EXPECT_MSG_EQ(runner.RttHistCsv(), expected, "every ACK in bin [4100, 4200)");
        s.run.rttHistogramNs = 0;
        RdmaScenarioRunner off(s);
        NS_TEST_ASSERT_MSG_EQ(off.Run(&error), true, error);
        NS_TEST_EXPECT_MSG_EQ(off.FctText(), runner.FctText(), "the histogram changes nothing");
    }
};

/**
 * The scenario path (RdmaScenarioRunner, ConfigureUet: derived base RTT, queue, ECN, RTO)
 * with REPS and trimming on a 2:1 leaf-spine permutation: every flow completes, trims
 * happen, and the same seed gives byte-identical fct.txt and flows.csv.
 */
class UetScenarioDeterminismTestCase : public TestCase
{
  public:
    UetScenarioDeterminismTestCase()
        : TestCase("uet scenario: reps + trimming completes; same seed, identical fct.txt")
    {
    }

  private:
    static RdmaScenarioSpec Spec()
    {
        // 2 leaves x 4 hosts, 1 spine at 400 Gbps: 4 flows cross a 1:4 oversubscribed core.
        RdmaScenarioSpec s = rdmalbtest::LeafSpineSpec(2, 4, 2, 400000000000ULL, 1000);
        s.links.back().rateBps = 100000000000ULL;
        s.lb = LbConfig::ParseOrAbort("reps", "");
        s.run.seed = 3;
        rdmalbtest::UseUet(s);
        s.transport.Get("ns3::RdmaSwitch", "PfcEnabled").uint = 0;
        s.transport.Get("ns3::RdmaNic", "PayloadSize").uint = PAYLOAD;
        s.transport.Get("ns3::RdmaSwitch", "TrimEnabled").uint = 1;
        for (uint32_t h = 0; h < 8; ++h)
        {
            rdmalbtest::AddSpecFlow(s, h, (h + 4) % 8, 512 * 1024, 0);
        }
        return s;
    }

    void DoRun() override
    {
        // Both switch hashes: the five-tuple one and htsim's (its salts and shuffles come from
        // one stream shared by the switches of a run).
        for (bool htsim : {false, true})
        {
            std::string fct[2];
            std::string csv[2];
            for (int i = 0; i < 2; ++i)
            {
                RdmaScenarioSpec spec = Spec();
                spec.transport.uetHtsimSwitches = htsim;
                RdmaScenarioRunner runner(spec);
                std::string error;
                NS_TEST_ASSERT_MSG_EQ(runner.Run(&error), true, error);
                NS_TEST_ASSERT_MSG_EQ(runner.GetCompletedFlows(), 8u, "every flow completes");
                fct[i] = runner.FctText();
                csv[i] = runner.FlowsCsv();
            }
            NS_TEST_EXPECT_MSG_EQ(fct[0], fct[1], "same seed: identical fct.txt, htsim " << htsim);
            if (htsim)
            {
                // Sprayed over two spines of unequal rates under NSCC with coalesced ACKs,
                // packets arrive out of order and an ECN-marked one is ACKed at once, naming
                // only itself: with the receiver's byte count (Inflight received-bytes, htsim's
                // UecSrc::processAck) the others received leave flight then too, so the
                // senders run otherwise; every flow still completes.
                std::string runs[2];
                for (const char* inflight : {"named-packets", "received-bytes"})
                {
                    RdmaScenarioSpec spec = Spec();
                    // The second spine's links at 25 Gbps both ways: its packets come late.
                    spec.links[spec.links.size() - 3].rateBps = 25000000000ULL;
                    spec.links.back().rateBps = 25000000000ULL;
                    spec.transport.uetHtsimSwitches = true;
                    spec.transport.Get("ns3::RdmaUetRecovery", "Cc").text = "nscc";
                    spec.transport.Get("ns3::RdmaUetRecovery", "AckBytes").uint = 16384;
                    spec.transport.Get("ns3::RdmaUetRecovery", "Inflight").text = inflight;
                    RdmaScenarioRunner runner(spec);
                    std::string error;
                    NS_TEST_ASSERT_MSG_EQ(runner.Run(&error), true, error);
                    NS_TEST_ASSERT_MSG_EQ(runner.GetCompletedFlows(), 8u, inflight);
                    runs[inflight[0] == 'r'] = runner.FctText();
                }
                NS_TEST_EXPECT_MSG_NE(runs[1], runs[0], "Inflight reaches the senders");
            }
            NS_TEST_EXPECT_MSG_EQ(csv[0], csv[1], "same seed: identical flows.csv, htsim " << htsim);
            NS_TEST_EXPECT_MSG_NE(fct[0].find(" "), std::string::npos, "fct.txt has lines");
        }
    }
};

/**
 * A degraded port (RdmaFabricHelper::SetPortRate, htsim's reduced-speed links): in a star of
 * two hosts (16-packet queues, trimming), the switch's port towards host 1 sends at 200 Gbps.
 * A 4 MiB flow 0 -> 1 then takes at least its wire bytes at 200 Gbps (170.4 us, twice the
 * 400 Gbps time), and the port's queue, fed at 400 Gbps, never holds more than its limit:
 * 16 packets as configured, 8 when the port's queue is scaled by 0.5 (sampled every 50 ns;
 * one packet of slack for trimmed headers).
 */
class UetDegradedPortTestCase : public TestCase
{
  public:
    UetDegradedPortTestCase()
        : TestCase("uet: a degraded port sends at its own rate with its queue limit scaled")
    {
    }

  private:
    static void Sample(Ptr<RdmaNetDevice> port, uint64_t* maxQ)
    {
        *maxQ = std::max(*maxQ, port->GetTotalQueueBytes());
        if (Simulator::Now() < MicroSeconds(400))
        {
            Simulator::Schedule(NanoSeconds(50), &Sample, port, maxQ);
        }
    }

    /// The flow's FCT and the port's largest queue, with queue scale \p scale.
    static std::pair<Time, uint64_t> Run(double scale)
    {
        RdmaFabricHelper f;
        BuildUetStar(f, 2, StarBaseRtt(), MicroSeconds(40), 16, true);
        const DataRate g200("200Gbps");
        f.SetPortRate(2, 1, g200, scale);
        RdmaFlowRecord rec;
        f.GetNic(0)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](RdmaFlowRecord* out, const RdmaFlowRecord& r) { *out = r; },
                              &rec));
        uint64_t maxQ = 0;
        Ptr<RdmaNetDevice> port = f.GetSwitch(2)->GetPort(1);
        Simulator::Schedule(Time(0), &Sample, port, &maxQ);
        f.AddFlow(1, 0, 1, 4194304, Time(0));
        Simulator::Stop(MilliSeconds(2));
        Simulator::Run();
        const DataRate rate = port->GetDataRate();
        Simulator::Destroy();
        NS_ABORT_MSG_IF(rate != g200, "the port's rate");
        return {rec.flowId == 1 ? rec.finish - rec.start : Time::Max(), maxQ};
    }

    void DoRun() override
    {
        const uint64_t packets = 1027;
        const Time atHalfSpeed =
            DataRate("200Gbps").CalculateBytesTxTime(4194304 + packets * HEADER);
        NS_TEST_ASSERT_MSG_EQ(atHalfSpeed.GetNanoSeconds(), 170401, "4,260,032 B at 200 Gbps");
        const auto [fctFull, qFull] = Run(1.0);
        const auto [fctHalf, qHalf] = Run(0.5);
        NS_TEST_EXPECT_MSG_GT(fctFull, atHalfSpeed, "no faster than 200 Gbps");
        NS_TEST_EXPECT_MSG_LT(fctFull, atHalfSpeed * 1.25, "completes near 200 Gbps");
        NS_TEST_EXPECT_MSG_GT(fctHalf, atHalfSpeed, "no faster than 200 Gbps, half queue");
        NS_TEST_EXPECT_MSG_LT(fctHalf, atHalfSpeed * 1.5, "completes, half queue");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(qFull, 17 * WIRE, "16-packet limit");
        NS_TEST_EXPECT_MSG_GT(qFull, 12 * WIRE, "the queue fills up to it");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(qHalf, 9 * WIRE, "8-packet limit when scaled by 0.5");
        NS_TEST_EXPECT_MSG_GT(qHalf, 5 * WIRE, "the queue fills up to it");
    }
};

/**
 * The UEC htsim's bitmap and mixed load balancers hear the fabric (htsim's -failed, on a
 * small leaf-spine): 2 leaves x 8 hosts, 4 spines, 400 Gbps, 1 us links, 32-packet queues
 * with trimming; leaf 0's links to spine 0 run at 100 Gbps both ways with a quarter of the
 * queue. Each host of leaf 0 sends 2 MiB to its peer on leaf 1 and back. Oblivious spraying
 * over 128 entropies in rounds (spray, cycle = true) puts its share on spine 0 whatever
 * happens there (the switches hash 128 entropies onto 4 spines: about a quarter); the bitmap
 * penalises the entropies that come back ECN-marked or trimmed before their last hop and
 * skips them, so less of its data enters leaf 0's slow uplink; mixed recycles the entropies
 * that came back clean, which are rarely spine 0's. Measured: 0.176 / 0.121 / 0.070 (spray /
 * bitmap / mixed). Without the feedback (both selectors' on_feedback made a no-op) the bitmap
 * and mixed walk as the spray does, draw for draw: 0.176 all three, and the test fails.
 */
class UetBitmapFeedbackTestCase : public TestCase
{
  public:
    UetBitmapFeedbackTestCase()
        : TestCase("uet: uec-bitmap and uec-mixed move data off a degraded spine")
    {
    }

  private:
    /// Share of leaf 0's uplink bytes sent to spine 0, and the flows completed.
    static std::pair<double, uint32_t> Run(const std::string& lb, const std::string& params)
    {
        RdmaFabricHelper f;
        const uint32_t leaves = 2;
        const uint32_t perLeaf = 8;
        const uint32_t spines = 4;
        const uint32_t hosts = leaves * perLeaf;
        BuildUetLeafSpine(f,
                          lb,
                          leaves,
                          perLeaf,
                          spines,
                          MicroSeconds(9),
                          MicroSeconds(100),
                          32,
                          true,
                          std::nullopt,
                          params);
        const uint32_t leaf0 = hosts;
        const uint32_t spine0 = hosts + leaves;
        f.SetPortRate(leaf0, spine0, DataRate("100Gbps"), 0.25);
        f.SetPortRate(spine0, leaf0, DataRate("100Gbps"), 0.25);
        uint32_t completed = 0;
        for (uint32_t h = 0; h < hosts; ++h)
        {
            f.GetNic(h)->TraceConnectWithoutContext(
                "FlowRecord",
                MakeBoundCallback(+[](uint32_t* n, const RdmaFlowRecord&) { ++*n; }, &completed));
            f.AddFlow(h, h, (h + perLeaf) % hosts, 2 * 1024 * 1024, Time(0));
        }
        Simulator::Stop(MilliSeconds(5));
        Simulator::Run();
        uint64_t total = 0;
        uint64_t slow = 0;
        for (uint32_t s = 0; s < spines; ++s)
        {
            const uint64_t b = f.GetSwitch(leaf0)->GetPort(perLeaf + s)->GetTxBytes();
            total += b;
            slow += s == 0 ? b : 0;
        }
        Simulator::Destroy();
        return {total ? double(slow) / double(total) : 1.0, completed};
    }

    void DoRun() override
    {
        const auto [spray, sprayDone] = Run("spray", "num_entropies = 128, cycle = true");
        const auto [bitmap, bitmapDone] = Run("uec-bitmap", "num_entropies = 128");
        const auto [mixed, mixedDone] = Run("uec-mixed", "num_entropies = 128");
        std::cout << "share of leaf 0's uplink bytes on the slow spine: spray (cycle) " << spray
                  << ", uec-bitmap " << bitmap << ", uec-mixed " << mixed << std::endl;
        NS_TEST_ASSERT_MSG_EQ(sprayDone, 16u, "spray: every flow completes");
        NS_TEST_ASSERT_MSG_EQ(bitmapDone, 16u, "uec-bitmap: every flow completes");
        NS_TEST_ASSERT_MSG_EQ(mixedDone, 16u, "uec-mixed: every flow completes");
        NS_TEST_EXPECT_MSG_GT(spray, 0.15, "oblivious rounds keep sending into the slow spine");
        NS_TEST_EXPECT_MSG_LT(bitmap, 0.8 * spray, "the bitmap skips the penalised entropies");
        NS_TEST_EXPECT_MSG_LT(mixed, 0.8 * spray, "mixed recycles the clean ones");
    }
};

/**
 * htsim's switches: 4 leaves x 4 hosts, 4 spines at 400 Gbps, the permutation h -> h + 4
 * (mod 16) of 64 KiB ECMP flows, flow i on entropy i, stream seed 42. The artifact's rules
 * (rust-lb switch/htsim_ecmp.rs; their Python transcription reproduces the artifact's own
 * shuffles and choices on its 1,024-host run) give these flows per leaf uplink:
 * leaf 0: spines 2, 3 two each; leaf 1: spines 1, 3 two each; leaf 2: spine 2 three, spine 0
 * one; leaf 3: spine 2 three, spine 3 one. Each flow is 16 packets of 4,150 B and one of
 * 224 B on the wire (66,624 B); the ACKs going up add less than one flow per port.
 */
class UetHtsimEcmpTestCase : public TestCase
{
  public:
    UetHtsimEcmpTestCase()
        : TestCase("uet: htsim switches put ECMP flows on the REPS artifact's uplinks")
    {
    }

  private:
    void DoRun() override
    {
        RdmaFabricHelper f;
        BuildUetLeafSpine(f,
                          "ecmp",
                          4,
                          4,
                          4,
                          MicroSeconds(9),
                          MicroSeconds(200),
                          1000,
                          false,
                          std::make_pair(42u, 16u));
        const uint64_t flowBytes = 64 * 1024;
        for (uint32_t h = 0; h < 16; ++h)
        {
            f.GetNic(h)->StartFlowWithEntropy(h, RdmaHostAddress((h + 4) % 16), flowBytes, 3, h);
        }
        Simulator::Stop(MilliSeconds(2));
        Simulator::Run();
        const uint64_t wirePerFlow = 16 * WIRE + (flowBytes - 16 * PAYLOAD) + HEADER;
        NS_TEST_ASSERT_MSG_EQ(wirePerFlow, 66624u, "16 full packets and a 160 B one");
        const uint32_t expected[4][4] = {{0, 0, 2, 2}, {0, 2, 0, 2}, {1, 0, 3, 0}, {0, 0, 3, 1}};
        for (uint32_t leaf = 0; leaf < 4; ++leaf)
        {
            for (uint32_t spine = 0; spine < 4; ++spine)
            {
                const uint64_t tx = f.GetSwitch(16 + leaf)->GetPort(4 + spine)->GetTxBytes();
                NS_TEST_EXPECT_MSG_EQ(tx / wirePerFlow,
                                      expected[leaf][spine],
                                      "leaf " << leaf << " -> spine " << spine << ": " << tx
                                              << " B");
            }
        }
        Simulator::Destroy();
    }
};

/**
 * RCCC's credit arithmetic, one signal at a time, against htsim's rules (rdma-uet-rccc.h;
 * htsim UecPullPacer / UecSrc / UecSink) and first principles, at 100 Gbps with htsim's
 * 4150 B packets and the 14.02 us fat tree's cap of 1.5 BDP = 262,926 B:
 *  - pacer rate: 8 x 256 B / 100 Gbps = 20,480 ps per quantum, / 0.99 = 20,686 ps (integer ps,
 *    as htsim's simtime): a 16 KiB grant every 64 x 20,686 = 1,323,904 ps, 0.99 x 100 Gbps;
 *  - the sender starts with the cap of speculative credit, may go below zero with its last
 *    packet, and drops only a positive remainder when it stops speculating;
 *  - a pull adds the quanta beyond the last pull number, at most up to the cap;
 *  - the pull target: the bytes still wanted minus the credit, one MTU while speculating,
 *    window + MTU with NSCC, rounded up to 256 B;
 *  - the receiver grants 64 quanta a time up to the target, round robin, then slow pulls of
 *    64 quanta until each idle flow holds floor(cap / 256) = 1,027 of them: 17 each;
 *  - an empty grant still spaces the pacer by 4 quanta (1,024 B);
 *  - an RTS after a timeout when resends were queued, or when credit (or NSCC's window) keeps
 *    the resend back; at most one per network RTT with NSCC.
 */
class UetRcccRuleTestCase : public TestCase
{
  public:
    UetRcccRuleTestCase()
        : TestCase("uet rccc: pacer rate, credit, pull target, grants and RTS from single signals")
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t init = RdmaUetRcccParams::INIT_PULL;
        const int64_t cap = 262926;
        const RdmaUetRcccParams p = RdmaUetRcccParams::Derive(100000000000ULL, 0.99, 16384, cap, 4150);
        NS_TEST_EXPECT_MSG_EQ(p.creditPerPullQuanta, 64u, "16 KiB = 64 quanta of 256 B");
        NS_TEST_EXPECT_MSG_EQ(p.timePerQuantumPs, 20686u, "20,480 ps / 0.99, truncated");
        const double rate = 16384.0 * 8 / (64 * p.timePerQuantumPs * 1e-12);
        NS_TEST_EXPECT_MSG_EQ_TOL(rate / 0.99e11, 1.0, 1e-4, "credit at 0.99 x line rate");
        const RdmaUetRcccParams p400 =
            RdmaUetRcccParams::Derive(400000000000ULL, 0.99, 16384, cap, 4150);
        NS_TEST_EXPECT_MSG_EQ(p400.timePerQuantumPs, 5171u, "400 Gbps: 5,120 ps / 0.99");

        // Speculative credit.
        RdmaUetRcccSender a(p);
        NS_TEST_EXPECT_MSG_EQ(a.Credit(), cap, "speculative credit: the cap");
        NS_TEST_EXPECT_MSG_EQ(a.Speculating(), true, "speculating");
        a.Spend(63 * 4150);
        NS_TEST_EXPECT_MSG_EQ(a.Credit(), 1476, "63 packets spent");
        NS_TEST_EXPECT_MSG_EQ(a.CanSend(), true, "any credit left lets a packet go");
        a.Spend(4150);
        NS_TEST_EXPECT_MSG_EQ(a.Credit(), -2674, "the 64th takes it below zero");
        NS_TEST_EXPECT_MSG_EQ(a.CanSend(), false, "no credit, no packet");
        a.StopSpeculating();
        NS_TEST_EXPECT_MSG_EQ(a.Credit(), -2674, "a debt is kept");
        RdmaUetRcccSender b(p);
        b.Spend(4150);
        b.StopSpeculating();
        NS_TEST_EXPECT_MSG_EQ(b.Credit(), 0, "the first ACK drops the speculative remainder");
        NS_TEST_EXPECT_MSG_EQ(b.Speculating(), false, "and ends the speculation");
        b.OnPull(p, init + 64);
        NS_TEST_EXPECT_MSG_EQ(b.Credit(), 16384, "a pull of 64 quanta: 16 KiB");
        b.OnPull(p, init + 64);
        NS_TEST_EXPECT_MSG_EQ(b.Credit(), 16384, "the same pull number again: nothing");
        b.OnPull(p, init + 64 + 2000);
        NS_TEST_EXPECT_MSG_EQ(b.Credit(), cap, "credit never above the cap");

        // Pull targets.
        RdmaUetRcccSender c(p);
        NS_TEST_EXPECT_MSG_EQ(c.PullTarget(p, 2032640, 0, false, 0),
                              init + 17,
                              "speculating with data left: one MTU, 4150 B -> 17 quanta");
        c.StopSpeculating();
        NS_TEST_EXPECT_MSG_EQ(c.PullTarget(p, 2032640, 0, false, 0),
                              init + 1028,
                              "no credit: the cap, 262,926 B -> 1,028 quanta");
        NS_TEST_EXPECT_MSG_EQ(c.PullTarget(p, 2032640, 0, true, 50000),
                              init + 212,
                              "with NSCC: window + MTU = 54,150 B -> 212 quanta");
        NS_TEST_EXPECT_MSG_EQ(c.PullTarget(p, 0, 8300, false, 0),
                              init + 33,
                              "two resends: 8,300 B -> 33 quanta");
        NS_TEST_EXPECT_MSG_EQ(c.LastPullTarget(), init + 33, "kept for an RTS");
        c.OnPull(p, init + 40);
        NS_TEST_EXPECT_MSG_EQ(c.PullTarget(p, 0, 8300, false, 0),
                              init + 33,
                              "10,240 B of credit cover the 8,300 B: 40 - 7.6 -> 33 quanta, "
                              "below the 40 pulled (no new grant)");

        // The receiver's grants.
        RdmaUetRcccSink s;
        NS_TEST_EXPECT_MSG_EQ(s.OnPullTarget(init + 150), true, "a new target: join the pacer");
        NS_TEST_EXPECT_MSG_EQ(s.OnPullTarget(init + 160), false, "already in it");
        NS_TEST_EXPECT_MSG_EQ(s.OnPullTarget(init + 120), false, "a lower target: nothing");
        NS_TEST_EXPECT_MSG_EQ(s.highestTarget, init + 160, "the highest target kept");
        NS_TEST_EXPECT_MSG_EQ(s.Grant(p, 0), 64u, "grant 1: 64 quanta");
        NS_TEST_EXPECT_MSG_EQ(s.Grant(p, 0), 64u, "grant 2");
        NS_TEST_EXPECT_MSG_EQ(s.Grant(p, 0), 32u, "grant 3: up to the target only");
        NS_TEST_EXPECT_MSG_EQ(s.Grant(p, 0), 0u, "target met: nothing");
        NS_TEST_EXPECT_MSG_EQ(s.Grant(p, 64), 64u, "a slow pull ignores the target");
        NS_TEST_EXPECT_MSG_EQ(s.SlowCredit(), 64u, "64 quanta beyond it");
        NS_TEST_EXPECT_MSG_EQ(s.Repull(), false, "a trim while in the list: no second entry");

        // The pacer: A wants 128 quanta, B 64, then both idle.
        using Key = uint32_t;
        std::map<Key, RdmaUetRcccSink> sinks;
        RdmaUetPullPacer<Key> pacer;
        sinks[1].OnPullTarget(init + 128);
        sinks[2].OnPullTarget(init + 64);
        NS_TEST_EXPECT_MSG_EQ(pacer.Request(1), true, "an idle pacer starts");
        NS_TEST_EXPECT_MSG_EQ(pacer.Request(2), false, "a running one does not");
        auto sinkOf = [&sinks](const Key& k) -> RdmaUetRcccSink& { return sinks[k]; };
        std::vector<std::tuple<Key, uint64_t, bool, uint64_t>> pulls;
        while (!pacer.Empty())
        {
            const auto g = pacer.NextPull(p, sinkOf);
            pulls.emplace_back(g.flow, g.pullNo, g.slow, g.gapPs);
        }
        NS_TEST_ASSERT_MSG_EQ(pulls.size(), 3u + 2 * 17, "3 grants, then 17 slow pulls each");
        NS_TEST_EXPECT_MSG_EQ(std::get<0>(pulls[0]), 1u, "round robin: A");
        NS_TEST_EXPECT_MSG_EQ(std::get<0>(pulls[1]), 2u, "B");
        NS_TEST_EXPECT_MSG_EQ(std::get<0>(pulls[2]), 1u, "A again");
        NS_TEST_EXPECT_MSG_EQ(std::get<1>(pulls[2]), init + 128, "A's target reached");
        NS_TEST_EXPECT_MSG_EQ(std::get<3>(pulls[0]), 64u * 20686, "64 quanta of pacer time");
        NS_TEST_EXPECT_MSG_EQ(std::get<2>(pulls[3]), true, "then slow pulls");
        NS_TEST_EXPECT_MSG_EQ(std::get<0>(pulls[3]), 2u, "B met its demand first");
        NS_TEST_EXPECT_MSG_EQ(sinks[1].SlowCredit(), 17u * 64, "17 x 64 = 1,088 >= 1,027");
        NS_TEST_EXPECT_MSG_EQ(sinks[2].SlowCredit(), 17u * 64, "the same for B");
        pacer.Stop();
        NS_TEST_EXPECT_MSG_EQ(sinks[1].Repull(), true, "a trim after it left the lists");
        NS_TEST_EXPECT_MSG_EQ(pacer.Request(1), true, "the stopped pacer starts again");
        const auto empty = pacer.NextPull(p, sinkOf);
        NS_TEST_EXPECT_MSG_EQ(empty.pullNo, sinks[1].latestPull, "nothing new granted");
        NS_TEST_EXPECT_MSG_EQ(empty.gapPs, 4u * 20686, "an empty grant spaces by 1,024 B");

        // RTS after a timeout.
        NS_TEST_EXPECT_MSG_EQ(RdmaUetRcccRtsOnTimeout(true, false, 0, 4150, 0, 1), false,
                              "credit left: the resend goes");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetRcccRtsOnTimeout(true, false, 0, 4150, 0, 0), true,
                              "no credit: RTS");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetRcccRtsOnTimeout(true, false, 0, 4150, 0, -10), true,
                              "a debt: RTS");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetRcccRtsOnTimeout(false, false, 0, 4150, 0, 100000), true,
                              "resends already queued: RTS whatever the credit");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetRcccRtsOnTimeout(true, true, 10000, 4150, 8300, 100000),
                              true,
                              "NSCC's window keeps it back: RTS");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetRcccRtsOnTimeout(true, true, 20000, 4150, 8300, 100000),
                              false,
                              "window and credit let it go");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetRcccRtsAllowed(false, 0, 0, 14000000), true, "the first");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetRcccRtsAllowed(true, 1000, 1000 + 13999999, 14000000),
                              false,
                              "within a network RTT of the last");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetRcccRtsAllowed(true, 1000, 1000 + 14000000, 14000000),
                              true,
                              "one network RTT later");
        NS_TEST_EXPECT_MSG_EQ(RdmaUetRcccRtsAllowed(true, 1000, 1000, 0), true,
                              "without NSCC no limit (htsim's _network_rtt 0)");
    }
};

/**
 * RCCC wired end to end: an 8 -> 1 incast of 1 MiB flows on the 400 Gbps star (1 us links,
 * 16-packet queues, trimming), every NIC's Cc = rccc and the switch's EcnHostPorts false (what
 * a config with cc = "rccc" sets):
 *  - every flow completes, the receiver's pacer pulls (Pull trace) and the senders take credit;
 *  - the speculative credit: each sender sends at most 1.5 BDP (cap / 4150 B + 1 packets)
 *    before its first ACK, NACK or pull, and no more than the credit granted afterwards:
 *    data sent <= cap + 16 KiB x (non-slow pulls it got) + one packet;
 *  - every trim is at the star's last hop (the port to the receiver; the trimmed header carries
 *    FLAG_LAST_HOP), the senders' load balancer hears each as the NACK it is (with last_hop:
 *    each algorithm decides what it means, e.g. htsim's PATH_GOOD for uec-mixed), and the
 *    switch marks nothing on the host port;
 *  - the last flow ends no earlier than the bytes through the receiver's link at line rate, and
 *    the credit rate, 0.99 x line rate, bounds the bytes after the speculative phase;
 *  - under nscc the same incast is reported to the load balancer as NACKs (one per trim) too:
 *    the NIC reports the same under every Cc.
 */
class UetRcccWiringTestCase : public TestCase
{
  public:
    UetRcccWiringTestCase()
        : TestCase("uet rccc: pulls, speculative credit, last-hop trims and ECN wired end to end")
    {
    }

  private:
    struct Run
    {
        uint64_t pulls{0};
        uint64_t slowPulls{0};
        std::map<uint32_t, uint64_t> sent;      //!< data packets by sender address
        std::map<uint32_t, uint64_t> pullsTo;   //!< non-slow pulls by sender address
        std::map<uint32_t, bool> heard;          //!< the sender heard feedback
        std::map<uint32_t, uint64_t> beforeHeard; //!< data packets before that
        uint64_t nacks{0};
        uint64_t completed{0};
        Time last;
        uint64_t trims{0};
        uint64_t lastHopTrims{0}; //!< trimmed headers carrying FLAG_LAST_HOP
        uint64_t hostMarks{0};
        RdmaUetRecovery::Counts receiver; //!< the receiver's counters (summary.json's)
        uint64_t ackRequests{0};          //!< the senders' AR packets (summary.json's)
    };

    static Run Incast(const std::string& cc)
    {
        Run r;
        RdmaFabricHelper f;
        const uint32_t n = 9;
        BuildUetStar(f, n, StarBaseRtt(), MicroSeconds(40), 16, true);
        rdmalbtest::SetNicComponents(f, "ns3::RdmaUetRecovery", "Cc", StringValue(cc));
        rdmalbtest::SetNicComponents(f, "ns3::RdmaUetRecovery", "AckBytes", UintegerValue(16384));
        f.GetSwitch(n)->SetAttribute("EcnHostPorts", BooleanValue(cc == "nscc"));
        f.GetSwitch(n)->TraceConnectWithoutContext(
            "Trim",
            MakeBoundCallback(+[](Run* run, Ptr<const Packet> p, uint32_t) {
                RdmaHeader h;
                p->PeekHeader(h);
                run->lastHopTrims += (h.flags & RdmaHeader::FLAG_LAST_HOP) != 0 ? 1 : 0;
            },
                              &r));
        Ptr<RdmaUetRecovery> rx = DynamicCast<RdmaUetRecovery>(f.GetNic(n - 1)->GetLossRecovery());
        rx->TraceConnectWithoutContext(
            "Pull",
            MakeBoundCallback(+[](Run* run, uint32_t sip, uint16_t, uint64_t, bool slow) {
                ++run->pulls;
                run->slowPulls += slow ? 1 : 0;
                run->pullsTo[sip] += slow ? 0 : 1;
                run->heard[sip] = true;
            },
                              &r));
        RunStarIncast(f, n, 1024 * 1024, MilliSeconds(5), [&](uint32_t h) {
            const uint32_t sip = RdmaHostAddress(h);
            f.GetNic(h)->TraceConnectWithoutContext(
                "LbFeedback",
                MakeBoundCallback(+[](Run* run, uint32_t sip, uint32_t, uint8_t kind, uint16_t) {
                    run->nacks += kind == static_cast<uint8_t>(LbFeedbackKind::NACK) ? 1 : 0;
                    run->heard[sip] = true;
                },
                                  &r,
                                  sip));
            f.GetNic(h)->TraceConnectWithoutContext(
                "DataSent",
                MakeBoundCallback(+[](Run* run, uint32_t sip, uint32_t, uint32_t, uint16_t) {
                    ++run->sent[sip];
                    run->beforeHeard[sip] += run->heard[sip] ? 0 : 1;
                },
                                  &r,
                                  sip));
            f.GetNic(h)->TraceConnectWithoutContext(
                "FlowRecord",
                MakeBoundCallback(+[](Run* run, const RdmaFlowRecord&) {
                    ++run->completed;
                    run->last = Simulator::Now();
                },
                                  &r));
        });
        r.trims = f.GetSwitch(n)->GetTotalTrims();
        r.hostMarks = f.GetSwitch(n)->GetTotalEcnMarks();
        r.receiver = rx->GetCounts();
        for (uint32_t h = 0; h + 1 < n; ++h)
        {
            r.ackRequests +=
                DynamicCast<RdmaUetRecovery>(f.GetNic(h)->GetLossRecovery())->GetCounts().ackRequests;
        }
        Simulator::Destroy();
        return r;
    }

    void DoRun() override
    {
        const Run r = Incast("rccc");
        NS_TEST_ASSERT_MSG_EQ(r.completed, 8u, "every flow completes");
        NS_TEST_EXPECT_MSG_GT(r.pulls, 8u * 1024 * 1024 / 16384 / 2, "the receiver pulls");
        NS_TEST_EXPECT_MSG_EQ(r.receiver.pulls, r.pulls, "the counter counts each pull traced");
        NS_TEST_EXPECT_MSG_GT(r.receiver.acks, 0u, "the receiver ACKs");
        // Each flow's last packet asks for an ACK, as does each resend of a trimmed one.
        NS_TEST_EXPECT_MSG_GT_OR_EQ(r.ackRequests, 8u + r.trims, "AR: last packets, resends");
        // The cap: 1.5 x BDP of the star's base RTT at 400 Gbps.
        const double cap = 1.5 * StarBaseRtt().GetSeconds() * 400e9 / 8;
        for (const auto& [sip, sent] : r.sent)
        {
            const auto before = r.beforeHeard.count(sip) ? r.beforeHeard.at(sip) : 0;
            NS_TEST_EXPECT_MSG_LT_OR_EQ(double(before),
                                        std::ceil(cap / WIRE),
                                        "speculation: at most the cap before any feedback");
            const uint64_t granted = r.pullsTo.count(sip) ? r.pullsTo.at(sip) : 0;
            NS_TEST_EXPECT_MSG_LT_OR_EQ(double(sent) * WIRE,
                                        cap + 16384.0 * granted + 2 * WIRE,
                                        "afterwards only on granted credit");
        }
        NS_TEST_EXPECT_MSG_GT(r.trims, 0u, "the speculative burst is trimmed at the last hop");
        NS_TEST_EXPECT_MSG_EQ(r.lastHopTrims, r.trims, "every trim is at the last hop");
        NS_TEST_EXPECT_MSG_EQ(r.nacks,
                              r.trims,
                              "each last-hop trim is a NACK to the load balancer (it decides)");
        NS_TEST_EXPECT_MSG_EQ(r.hostMarks, 0u, "no ECN on the port to the host");
        const uint64_t packets = (1024 * 1024 + PAYLOAD - 1) / PAYLOAD;
        const Time wire = G400.CalculateBytesTxTime(8 * packets * WIRE);
        NS_TEST_EXPECT_MSG_GT(r.last, wire, "no faster than the receiver's link");
        // After the speculative phase, the rest comes at 0.99 x line rate at most.
        NS_TEST_EXPECT_MSG_LT(r.last.GetSeconds(),
                              wire.GetSeconds() / 0.99 + 4 * StarBaseRtt().GetSeconds(),
                              "paced by credit at 0.99 x line rate (plus a few RTTs)");

        const Run s = Incast("nscc");
        NS_TEST_ASSERT_MSG_EQ(s.completed, 8u, "nscc: every flow completes");
        NS_TEST_EXPECT_MSG_EQ(s.pulls, 0u, "nscc: no pulls");
        NS_TEST_EXPECT_MSG_EQ(s.nacks, s.trims, "nscc: one NACK to the load balancer per trim");
    }
};

/**
 * RdmaUetFabric::Derive, the one place of the "0 = derived" rules (rdma-uet-fabric.h), by
 * hand on a k = 8 fat tree's shape: 4086 + 64 B packets (ACK wire 64 B), 6 hops, 6 us of
 * one-way propagation, 100 Gbps hosts. tx = 6 x (4150 + 64) x 8 / 100 G = 2,022.72 ns -> 2,022;
 * base RTT = 2 x 6,000 + 2,022 = 14,022 ns; BDP = 14,022 ns x 100 G / 8 = 175,275 B; queue =
 * 175,275 / 4,150 = 42 packets (htsim's 42 for this fabric); ECN 42 / 4 = 10 and
 * 3 x 42 / 4 = 31; RTO = 14,022 + 4 x 42 x 4,150 x 8 / 100 G = 14,022 + 55,776 = 69,798 ns.
 * Given values win, and feed the rest: base RTT 8,337 ns gives a 104,212 B BDP, 25 packets,
 * ECN 6 / 18; a given RTO and queue are kept. The defaults are the uet table's (all 0), and
 * the window's settings are the uet transport's attributes with the table's defaults.
 */
class UetFabricDeriveTestCase : public TestCase
{
  public:
    UetFabricDeriveTestCase()
        : TestCase("uet: the derived queue, ECN thresholds, base RTT and RTO, by hand")
    {
    }

  private:
    /// A fabric of 4,086 B payloads and 64 B headers with \p delayNs of propagation one way
    /// over \p hops hops at \p bps.
    static RdmaUetFabricShape Shape(uint64_t delayNs, uint64_t hops, uint64_t bps)
    {
        RdmaUetFabricShape shape;
        shape.payloadBytes = 4086;
        shape.headerBytes = 64;
        shape.maxDelayNs = delayNs;
        shape.maxHops = hops;
        shape.hostBps = bps;
        return shape;
    }

    void DoRun() override
    {
        RdmaUetFabricShape shape = Shape(6000, 6, 100000000000ULL);
        Ptr<RdmaUetFabric> f = CreateObject<RdmaUetFabric>();
        RdmaUetDerived d = f->Derive(shape);
        NS_TEST_EXPECT_MSG_EQ(d.wireBytes, 4150u, "wire");
        NS_TEST_EXPECT_MSG_EQ(d.txNs, 2022u, "serialization part of the RTT");
        NS_TEST_EXPECT_MSG_EQ(d.baseRttNs, 14022u, "derived base RTT");
        NS_TEST_EXPECT_MSG_EQ(d.baseRttPerPair, true, "each pair's own for its cap");
        NS_TEST_EXPECT_MSG_EQ(d.queuePackets, 42u, "one BDP of packets");
        NS_TEST_EXPECT_MSG_EQ(d.ecnKminPackets, 10u, "queue / 4");
        NS_TEST_EXPECT_MSG_EQ(d.ecnKmaxPackets, 31u, "3 queue / 4");
        NS_TEST_EXPECT_MSG_EQ(d.rtoNs, 69798u, "base RTT + 4 queue drains");

        f->SetAttribute("BaseRtt", TimeValue(NanoSeconds(8337)));
        d = f->Derive(shape);
        NS_TEST_EXPECT_MSG_EQ(d.baseRttNs, 8337u, "given base RTT");
        NS_TEST_EXPECT_MSG_EQ(d.baseRttPerPair, false, "one base RTT for every pair");
        NS_TEST_EXPECT_MSG_EQ(d.queuePackets, 25u, "104,212 B / 4,150 B");
        NS_TEST_EXPECT_MSG_EQ(d.ecnKminPackets, 6u, "25 / 4");
        NS_TEST_EXPECT_MSG_EQ(d.ecnKmaxPackets, 18u, "75 / 4");
        NS_TEST_EXPECT_MSG_EQ(d.rtoNs, 8337u + 4 * 25 * 4150 * 8 / 100, "RTO from the given RTT");

        f->SetAttribute("QueuePackets", UintegerValue(101));
        f->SetAttribute("EcnKmaxPackets", UintegerValue(76));
        f->SetAttribute("Rto", TimeValue(MicroSeconds(42)));
        d = f->Derive(shape);
        NS_TEST_EXPECT_MSG_EQ(d.queuePackets, 101u, "given queue");
        NS_TEST_EXPECT_MSG_EQ(d.ecnKminPackets, 25u, "derived from the given queue");
        NS_TEST_EXPECT_MSG_EQ(d.ecnKmaxPackets, 76u, "given kmax");
        NS_TEST_EXPECT_MSG_EQ(d.rtoNs, 42000u, "given RTO");

        // A header below an ACK's 60 B: the ACK's wire is its own.
        shape.headerBytes = 48;
        f = CreateObject<RdmaUetFabric>();
        NS_TEST_EXPECT_MSG_EQ(f->Derive(shape).txNs,
                              6 * (4134 + RdmaHeader::ACK_BYTES) * 8 / 100,
                              "ACK wire = max(ACK_BYTES, header)");

        // A SimAI fabric: NIC paths of 4 hops and 2,000 ns one way at 400 G, NVLink pairs at
        // 2,880 G (the largest pair bottleneck). Sized for NVLink: tx 4 x 4,214 B x 8 / 2,880 G
        // = 46 ns, RTT 4,046 ns, queue 1,456,560 B / 4,150 = 350 packets, RTO 4,046 + 4 x 350
        // x 4,150 x 8 / 2,880 = 20,184 ns, while 350 packets take 29 us to leave a 400 G port.
        // SizingRate 400 G: tx 337 ns, RTT 4,337 ns, BDP 216,850 B = 52 packets, ECN 13 / 39,
        // RTO 4,337 + 4 x 52 x 4,150 x 8 / 400 = 21,601 ns.
        const RdmaUetFabricShape simai = Shape(2000, 4, 2880000000000ULL);
        f = CreateObject<RdmaUetFabric>();
        d = f->Derive(simai);
        NS_TEST_EXPECT_MSG_EQ(d.sizingBps, 2880000000000ULL, "the largest pair bottleneck");
        NS_TEST_EXPECT_MSG_EQ(d.queuePackets, 350u, "one BDP at NVLink's rate");
        NS_TEST_EXPECT_MSG_EQ(d.rtoNs, 20184u, "four drains at NVLink's rate");
        f->SetAttribute("SizingRate", DataRateValue(DataRate("400Gbps")));
        d = f->Derive(simai);
        NS_TEST_EXPECT_MSG_EQ(d.sizingBps, 400000000000ULL, "the given rate");
        NS_TEST_EXPECT_MSG_EQ(d.txNs, 337u, "serialization at 400 G");
        NS_TEST_EXPECT_MSG_EQ(d.baseRttNs, 4337u, "base RTT at 400 G");
        NS_TEST_EXPECT_MSG_EQ(d.queuePackets, 52u, "one BDP at 400 G");
        NS_TEST_EXPECT_MSG_EQ(d.ecnKminPackets, 13u, "52 / 4");
        NS_TEST_EXPECT_MSG_EQ(d.ecnKmaxPackets, 39u, "3 x 52 / 4");
        NS_TEST_EXPECT_MSG_EQ(d.rtoNs, 21601u, "four drains at 400 G");

        // The defaults come from the uet table (transport_params/uet.rs).
        UintegerValue u;
        TimeValue t;
        f->GetAttribute("QueuePackets", u);
        f->GetAttribute("Rto", t);
        NS_TEST_EXPECT_MSG_EQ(u.Get() + static_cast<uint64_t>(t.Get().GetNanoSeconds()), 0u,
                              "0 = derived by default");
        DataRateValue rate;
        f = CreateObject<RdmaUetFabric>();
        f->GetAttribute("SizingRate", rate);
        NS_TEST_EXPECT_MSG_EQ(rate.Get().GetBitRate(), 0u, "0 = the largest pair bottleneck");
        ObjectFactory uet;
        uet.SetTypeId("ns3::RdmaUetRecovery");
        Ptr<Object> r = uet.Create();
        DoubleValue bdp;
        r->GetAttribute("MaxWindowBdp", bdp);
        NS_TEST_EXPECT_MSG_EQ(bdp.Get(), 1.5, "htsim's 1.5 BDP cap, the table's default");
        r->GetAttribute("InitialWindowPackets", u);
        NS_TEST_EXPECT_MSG_EQ(u.Get(), 0u, "initial window: the cap");
    }
};

class RdmaLbUetTestSuite : public rdmalbtest::FilteredTestSuite
{
  public:
    RdmaLbUetTestSuite()
        : FilteredTestSuite("rdma-lb-uet", "RDMA_LB_UET_CASES")
    {
        AddTestCase(new UetWindowRuleTestCase, TestCase::QUICK);
        AddTestCase(new UetWaitToDecreaseRuleTestCase, TestCase::QUICK);
        AddTestCase(new UetNsccTestCase, TestCase::QUICK);
        AddTestCase(new UetHtsimFeedbackTestCase, TestCase::QUICK);
        AddTestCase(new UetOutstandingTestCase, TestCase::QUICK);
        AddTestCase(new UetLineRateTestCase, TestCase::QUICK);
        AddTestCase(new UetNsccWiringTestCase, TestCase::QUICK);
        AddTestCase(new UetCoalescedAckTestCase, TestCase::QUICK);
        AddTestCase(new UetRepsAcksBlackHoleTestCase, TestCase::QUICK);
        AddTestCase(new UetTrimNackTestCase, TestCase::QUICK);
        AddTestCase(new UetTrimPriorityTestCase, TestCase::QUICK);
        AddTestCase(new UetQueueReleaseTestCase, TestCase::QUICK);
        AddTestCase(new UetWindowCapTestCase, TestCase::QUICK);
        AddTestCase(new UetWaitToDecreaseWiringTestCase, TestCase::QUICK);
        AddTestCase(new UetPerPairBaseRttTestCase, TestCase::QUICK);
        AddTestCase(new UetRttHistogramTestCase, TestCase::QUICK);
        AddTestCase(new UetFabricDeriveTestCase, TestCase::QUICK);
        AddTestCase(new UetScenarioDeterminismTestCase, TestCase::QUICK);
        AddTestCase(new UetDegradedPortTestCase, TestCase::QUICK);
        AddTestCase(new UetBitmapFeedbackTestCase, TestCase::QUICK);
        AddTestCase(new UetHtsimEcmpTestCase, TestCase::QUICK);
        AddTestCase(new UetRcccRuleTestCase, TestCase::QUICK);
        AddTestCase(new UetRcccWiringTestCase, TestCase::QUICK);
    }
};

RdmaLbUetTestSuite g_rdmaLbUetTestSuite;

} // namespace
