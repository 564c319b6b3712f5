/*
 * rdma-lb: test suite "rdma-lb-cc": the congestion controls of the NIC (rdma-cc*.h) and the
 * INT they ride on, with numbers computed by hand in the comments from the reference's wire
 * sizes and formulas (doc/rdma-lb.rst, "Congestion control"):
 *  1. INT: wire sizes of data and ACK/NACK per congestion control; record packing, units and
 *     wrap-around;
 *  2. HPCC: the rate and window after one INT-laden ACK at a given queue and utilisation;
 *  3. DCTCP: alpha and the rate after a marked window;
 *  4. TIMELY: the rate after a rising RTT gradient, then after a flat one;
 *  5. HPCC fabric: two flows into one 100 Gbps port converge within 5 % of each other with
 *     the queue below one BDP;
 *  6. 16:1 incast: PFC pauses under HPCC against DCQCN (and DCTCP, TIMELY complete it);
 *  7. every load balancer completes its flows under HPCC, TIMELY and DCTCP.
 * RDMA_LB_CC_CASES=text in the environment keeps only the cases whose name contains text.
 */
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/rdma-cc-dctcp.h"
#include "ns3/rdma-cc-hpcc.h"
#include "ns3/rdma-cc-timely.h"
#include "ns3/rdma-int.h"
#include "ns3/rdma-lb-module.h"

#include "rdma-lb-test-util.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

const uint64_t LINE = 100000000000ULL; // 100 Gbps

/// A NIC stand-in: records what the algorithm asks.
class FakeHost : public RdmaCcHost
{
  public:
    uint64_t CcLineRate() const override
    {
        return LINE;
    }

    void CcSetRate(RdmaQueuePair& qp, uint64_t bps, bool shiftPacing) override
    {
        qp.rate = bps;
        lastShift = shiftPacing;
        ++sets;
    }

    RdmaQueuePair* CcFindQp(uint16_t /*qpn*/) override
    {
        return nullptr;
    }

    bool lastShift{false}; //!< the last change re-timed the pending send
    uint32_t sets{0};      //!< rate changes asked
};

/**
 * \return algorithm \p T bound to \p host with the run.py parameters at 100 Gbps shared by
 * the algorithms (MIN_RATE 100 Mb/s, RATE_AI 40 Mb/s, RATE_HAI 100 Mb/s, g = 1/16), set as its
 * attributes, and the NIC's MTU 1000 B, T = 8320 ns, W = 104,000 B; \p own sets its own
 * attributes (HPCC's, DCTCP's, TIMELY's)
 */
template <class T>
Ptr<T>
RunPyCc(RdmaCcHost& host, void (*own)(Ptr<T>))
{
    Ptr<T> cc = CreateObject<T>();
    cc->SetAttribute("MinRate", DataRateValue(DataRate(100000000)));
    cc->SetAttribute("RateAI", DataRateValue(DataRate(40000000)));
    cc->SetAttribute("RateHAI", DataRateValue(DataRate(100000000)));
    cc->SetAttribute("EwmaGain", DoubleValue(1.0 / 16));
    own(cc);
    RdmaCcContext cx;
    cx.mtu = 1000;
    cx.baseRttNs = 8320;
    cx.windowBytes = 104000;
    cc->Setup(cx, host);
    return cc;
}

/// HPCC as run.py runs it: eta 0.95, MI_THRESH 0, INT_MULTI 1, FAST_REACT 0.
void
RunPyHpcc(Ptr<RdmaHpcc> cc)
{
    cc->SetAttribute("TargetUtil", DoubleValue(0.95));
    cc->SetAttribute("MiThresh", UintegerValue(0));
    cc->SetAttribute("IntMulti", UintegerValue(1));
    cc->SetAttribute("FastReact", BooleanValue(false));
}

/// DCTCP as run.py runs it: DCTCP_RATE_AI 1 Gb/s.
void
RunPyDctcp(Ptr<RdmaDctcp> cc)
{
    cc->SetAttribute("DctcpRateAI", DataRateValue(DataRate(1000000000)));
}

/// TIMELY's parameters of the reference: a 0.875, b 0.8, T_low 50 us, T_high 500 us, minRTT 20 us.
void
ReferenceTimely(Ptr<RdmaTimely> cc)
{
    cc->SetAttribute("TimelyAlpha", DoubleValue(0.875));
    cc->SetAttribute("TimelyBeta", DoubleValue(0.8));
    cc->SetAttribute("TimelyTLow", TimeValue(MicroSeconds(50)));
    cc->SetAttribute("TimelyTHigh", TimeValue(MicroSeconds(500)));
    cc->SetAttribute("TimelyMinRtt", TimeValue(MicroSeconds(20)));
}

/// An ACK carrying \p hops HPCC records.
RdmaHeader
HpccAck(uint32_t seq, const std::vector<uint64_t>& hops)
{
    RdmaHeader a;
    a.type = RdmaHeader::ACK;
    a.seq = seq;
    a.intMode = RdmaHeader::INT_HPCC;
    for (uint64_t h : hops)
    {
        a.intHop[a.intNHop++] = h;
    }
    return a;
}

/// Size on the wire of a packet with header \p h and \p payload bytes.
uint32_t
WireSize(const RdmaHeader& h, uint32_t payload)
{
    Ptr<Packet> p = Create<Packet>(payload);
    p->AddHeader(h);
    return p->GetSize();
}

// ==== 1. INT: sizes and records ==============================================================

/**
 * The reference's sizes: a data packet is 48 B of headers + INT + payload: DCQCN/DCTCP 1048 B,
 * HPCC 1090 B (5 x 8 B records + 2 B hop count), TIMELY 1056 B (8 B timestamp). An ACK/NACK is
 * 14 + 20 + 18 B + the data's INT, padded to 60 B: 60 B, 94 B (HPCC), 60 B (TIMELY: 52 + 8 = 60).
 * The header round-trips through its bytes with the records and the qpn.
 * Records (as the reference encodes them): time 24 bits (wraps at 16,777,216 ns), bytes in 128 B
 * units over 20 bits, queue in 80 B units over 17 bits, rate code. 1,000,000 B sent = 7812 units
 * = 999,936 B; a queue of 1000 B = 12 units = 960 B; INT_MULTI 2 doubles both units.
 */
class IntTestCase : public TestCase
{
  public:
    IntTestCase()
        : TestCase("INT: wire sizes per congestion control, record units and wrap-around")
    {
    }

  private:
    void DoRun() override
    {
        RdmaHeader d;
        d.type = RdmaHeader::DATA;
        NS_TEST_EXPECT_MSG_EQ(WireSize(d, 1000), 1048u, "DCQCN/DCTCP data");
        d.intMode = RdmaHeader::INT_HPCC;
        NS_TEST_EXPECT_MSG_EQ(WireSize(d, 1000), 1090u, "HPCC data");
        d.intMode = RdmaHeader::INT_TS;
        NS_TEST_EXPECT_MSG_EQ(WireSize(d, 1000), 1056u, "TIMELY data");
        RdmaHeader a;
        a.type = RdmaHeader::ACK;
        NS_TEST_EXPECT_MSG_EQ(WireSize(a, 0), 60u, "DCQCN ACK");
        a.intMode = RdmaHeader::INT_HPCC;
        NS_TEST_EXPECT_MSG_EQ(WireSize(a, 0), 94u, "HPCC ACK");
        a.intMode = RdmaHeader::INT_TS;
        NS_TEST_EXPECT_MSG_EQ(WireSize(a, 0), 60u, "TIMELY ACK");

        // Round trip of an HPCC NACK with two records and its qpn.
        RdmaHeader n = HpccAck(5000, {RdmaIntHop::Pack(123, 4096, 800, LINE, 1),
                                      RdmaIntHop::Pack(456, 8192, 1600, 400000000000ULL, 1)});
        n.type = RdmaHeader::NACK;
        n.qpn = 77;
        Ptr<Packet> p = Create<Packet>();
        p->AddHeader(n);
        RdmaHeader r;
        p->RemoveHeader(r);
        NS_TEST_EXPECT_MSG_EQ(r.intNHop, 2u, "hop count");
        NS_TEST_EXPECT_MSG_EQ(r.qpn, 77u, "qpn survives without padding");
        NS_TEST_EXPECT_MSG_EQ(r.seq, 5000u, "seq");
        NS_TEST_EXPECT_MSG_EQ(RdmaIntHop::LineRate(r.intHop[1]), 400000000000ULL, "rate code");
        NS_TEST_EXPECT_MSG_EQ(RdmaIntHop::Qlen(r.intHop[1], 1), 1600u, "queue");

        const uint64_t a0 = RdmaIntHop::Pack(16777000, 0, 1000, LINE, 1);
        const uint64_t a1 = RdmaIntHop::Pack(16777216 + 500, 1000000, 0, LINE, 1);
        NS_TEST_EXPECT_MSG_EQ(RdmaIntHop::TimeDelta(a1, a0), 716u, "time wraps at 2^24 ns");
        NS_TEST_EXPECT_MSG_EQ(RdmaIntHop::BytesDelta(a1, a0, 1), 999936u, "7812 x 128 B");
        NS_TEST_EXPECT_MSG_EQ(RdmaIntHop::Qlen(a0, 1), 960u, "12 x 80 B");
        NS_TEST_EXPECT_MSG_EQ(RdmaIntHop::Qlen(RdmaIntHop::Pack(0, 0, 1000, LINE, 2), 2), 960u,
                              "6 x 160 B");
        const uint64_t w0 = RdmaIntHop::Pack(0, (uint64_t(1) << 20) * 128 - 128, 0, LINE, 1);
        const uint64_t w1 = RdmaIntHop::Pack(0, (uint64_t(1) << 20) * 128 + 256, 0, LINE, 1);
        NS_TEST_EXPECT_MSG_EQ(RdmaIntHop::BytesDelta(w1, w0, 1), 384u, "bytes wrap at 2^20");
    }
};

// ==== 2. HPCC: one INT-laden ACK =============================================================

/**
 * One queue pair at 100 Gbps, run.py's HPCC (MULTI_RATE 0, MI_THRESH 0, eta 0.95, W_AI =
 * RATE_AI 40 Mb/s), T = 8320 ns, W = 104,000 B (ConWeave leaf-spine), one hop.
 *  - ACK 1 (seq 1000 > 0): the first, only records the hop: t = 10,000 ns, 0 B sent, queue
 *    41,600 B (520 x 80). snd_nxt = 50,000 becomes the update sequence.
 *  - ACK 2 (seq 60,000 > 50,000): t = 18,000 ns (tau = 8000 ns), 96,000 B sent (750 x 128),
 *    queue 20,800 B (260 x 80):
 *      txRate = 96,000 x 8 / 8 us = 96 Gbps -> 0.96 of the line;
 *      queue term = min(20,800, 41,600) x 100G / 100G / 104,000 = 0.2;  u = 1.16;
 *      U_qp = (1 x (8320 - 8000) + 1.16 x 8000) / 8320 = 9600 / 8320 = 1.153846;
 *      c = U_qp / 0.95 = 1.214575 >= 1 -> R = 100G / c + 40M = 82,333,333,333 + 40,000,000
 *        = 82,373,333,333 b/s (100G x 0.95 x 8320 / 9600 = 82.333 Gbps, truncated);
 *      window (VAR_WIN) = 104,000 x 82,373,333,333 / 100G = 85,668 B.
 *    The change re-times the pending send (the reference's ChangeRate).
 *  - ACK 3 (seq 55,000 <= the new update sequence 70,000) with FAST_REACT 0: no change.
 */
class HpccAckTestCase : public TestCase
{
  public:
    HpccAckTestCase()
        : TestCase("HPCC: rate and window after one INT-laden ACK at 0.96 utilisation and a "
                   "20.8 KB queue (hand-computed)")
    {
    }

  private:
    void DoRun() override
    {
        FakeHost host;
        Ptr<RdmaHpcc> algorithm = RunPyCc<RdmaHpcc>(host, &RunPyHpcc);
        RdmaHpcc& cc = *algorithm;
        RdmaQueuePair qp;
        qp.rate = LINE;
        cc.Start(qp);
        NS_TEST_EXPECT_MSG_EQ(cc.DataIntMode(), RdmaHeader::INT_HPCC, "HPCC data carry INT");

        qp.sndNxt = 50000;
        cc.OnAck(qp, HpccAck(1000, {RdmaIntHop::Pack(10000, 0, 41600, LINE, 1)}));
        NS_TEST_EXPECT_MSG_EQ(qp.rate, LINE, "the first ACK only records the INT");
        NS_TEST_EXPECT_MSG_EQ(host.sets, 0u, "no rate change on the first ACK");

        qp.sndNxt = 70000;
        cc.OnAck(qp, HpccAck(60000, {RdmaIntHop::Pack(18000, 96000, 20800, LINE, 1)}));
        NS_TEST_EXPECT_MSG_EQ(qp.rate, 82373333333ULL, "R = Rc / c + W_AI");
        NS_TEST_EXPECT_MSG_EQ(host.lastShift, true, "HPCC re-times the pending send");
        const auto& s = static_cast<const RdmaHpcc::State&>(*qp.cc);
        NS_TEST_EXPECT_MSG_EQ_TOL(s.u, 9600.0 / 8320.0, 1e-12, "U_qp");
        NS_TEST_EXPECT_MSG_EQ(s.curRate, 82373333333ULL, "Rc committed on a full update");
        NS_TEST_EXPECT_MSG_EQ(s.lastUpdateSeq, 70000u, "next update after snd_nxt");
        NS_TEST_EXPECT_MSG_EQ(RdmaVarWindow(104000, qp.rate, LINE), 85668u, "window");

        cc.OnAck(qp, HpccAck(55000, {RdmaIntHop::Pack(19000, 200000, 80000, LINE, 1)}));
        NS_TEST_EXPECT_MSG_EQ(qp.rate, 82373333333ULL, "no fast reaction with FAST_REACT 0");
    }
};

// ==== 3. DCTCP: a marked window ==============================================================

/**
 * Rate-based DCTCP at 100 Gbps, g = 1/16, MTU 1000 B, DCTCP_RATE_AI 1 Gbps; alpha starts at 1.
 *  - ACK 1000 (unmarked; snd_nxt 4000): first window: update sequence 4000, batch 4000/1000 +
 *    1 = 5; a new window outside CWR: + 1 Gbps, capped at the line: 100 Gbps.
 *  - ACK 2000 marked (snd_nxt 6000): outside CWR -> rate = 100G x (1 - 1/2) = 50 Gbps, CWR
 *    until an ACK passes 6000. ACKs 3000 and 4000 marked: in CWR, counted only (3 marks).
 *  - ACK 5000 (unmarked; snd_nxt 8000) passes 4000: alpha = (15/16) x 1 + (1/16) x 3/5 =
 *    0.975; batch = (8000 - 5000)/1000 + 1 = 4; still in CWR (5000 <= 6000): no increase.
 *  - ACK 7000 (unmarked) passes 6000: CWR ends. ACK 8000 marked: rate = 50G x (1 - 0.975/2)
 *    = 25.625 Gbps (1 b/s of tolerance: rates are truncated to whole bit/s).
 */
class DctcpWindowTestCase : public TestCase
{
  public:
    DctcpWindowTestCase()
        : TestCase("DCTCP: alpha 0.975 and rate 25.625 Gbps after a window with 3 of 5 marked "
                   "(hand-computed)")
    {
    }

  private:
    void DoRun() override
    {
        FakeHost host;
        Ptr<RdmaDctcp> algorithm = RunPyCc<RdmaDctcp>(host, &RunPyDctcp);
        RdmaDctcp& cc = *algorithm;
        RdmaQueuePair qp;
        qp.rate = LINE;
        cc.Start(qp);
        NS_TEST_EXPECT_MSG_EQ(cc.DataIntMode(), RdmaHeader::INT_NONE, "DCTCP: no INT");
        auto ack = [&](uint32_t seq, bool marked, uint64_t sndNxt) {
            qp.sndNxt = sndNxt;
            RdmaHeader a;
            a.type = RdmaHeader::ACK;
            a.seq = seq;
            a.flags = marked ? RdmaHeader::FLAG_CNP : 0;
            cc.OnAck(qp, a);
        };
        const auto& s = static_cast<const RdmaDctcp::State&>(*qp.cc);
        ack(1000, false, 4000);
        NS_TEST_EXPECT_MSG_EQ(qp.rate, LINE, "increase capped at the line rate");
        NS_TEST_EXPECT_MSG_EQ(s.batch, 5u, "first batch");
        ack(2000, true, 6000);
        NS_TEST_EXPECT_MSG_EQ(qp.rate, 50000000000ULL, "cut with alpha 1");
        ack(3000, true, 6000);
        ack(4000, true, 6000);
        NS_TEST_EXPECT_MSG_EQ(qp.rate, 50000000000ULL, "one cut per window (CWR)");
        ack(5000, false, 8000);
        NS_TEST_EXPECT_MSG_EQ_TOL(s.alpha, 0.975, 1e-12, "alpha after 3 of 5 marked");
        NS_TEST_EXPECT_MSG_EQ(s.batch, 4u, "next batch");
        NS_TEST_EXPECT_MSG_EQ(qp.rate, 50000000000ULL, "no increase inside CWR");
        ack(7000, false, 8000);
        ack(8000, true, 9000);
        // 0.975 is not exact in binary: the truncation may land 1 b/s below.
        NS_TEST_EXPECT_MSG_EQ_TOL(double(qp.rate), 25.625e9, 1.0, "50G x (1 - 0.975 / 2)");
        NS_TEST_EXPECT_MSG_EQ(qp.rec.rateCuts, 2u, "two cuts");
    }
};

// ==== 4. TIMELY: a rising gradient ===========================================================

/**
 * TIMELY at 100 Gbps (a 0.875, b 0.8, T_low 50 us, T_high 500 us, minRTT 20 us).
 *  - ACK 1 at RTT 60 us: the first only records RTT and snd_nxt (5000).
 *  - ACK 2 (seq 6000) at RTT 80 us: diff = 0.125 x 0 + 0.875 x 20,000 = 17,500 ns, gradient
 *    = 17,500 / 20,000 = 0.875 > 0 within [T_low, T_high]: rate = 100G x (1 - 0.8 x 0.875)
 *    = 30 Gbps.
 *  - ACK 3 (seq 12,000) at RTT 80 us again: diff = 0.125 x 17,500 = 2187.5, gradient
 *    0.109375: rate = 30G x (1 - 0.0875) = 27.375 Gbps (the EWMA still sees a rise).
 *  - ACK 4 (seq 20,000) at RTT 40 us < T_low: + RATE_AI 40 Mb/s = 27.415 Gbps.
 * Rates are truncated to whole bit/s (DataRate x double), hence 1 b/s of tolerance.
 */
class TimelyGradientTestCase : public TestCase
{
  public:
    TimelyGradientTestCase()
        : TestCase("TIMELY: 30 Gbps after an RTT rise of 20 us, 27.375 Gbps after a flat "
                   "sample, +RATE_AI below T_low (hand-computed)")
    {
    }

  private:
    void DoRun() override
    {
        FakeHost host;
        Ptr<RdmaTimely> algorithm = RunPyCc<RdmaTimely>(host, &ReferenceTimely);
        RdmaTimely& cc = *algorithm;
        RdmaQueuePair qp;
        qp.rate = LINE;
        cc.Start(qp);
        NS_TEST_EXPECT_MSG_EQ(cc.DataIntMode(), RdmaHeader::INT_TS, "TIMELY data carry a time");
        std::vector<uint64_t> rates;
        // An ACK sent rtt ago, fed at the current time; the rate after it is recorded. A member
        // function, not a lambda: ns-3 <= 3.35 schedules no lambdas (scripts/check-ns3-api).
        struct Acks
        {
            RdmaTimely* cc;
            RdmaQueuePair* qp;
            std::vector<uint64_t>* rates;

            void Ack(uint32_t seq, uint64_t sndNxt, Time rtt)
            {
                qp->sndNxt = sndNxt;
                RdmaHeader a;
                a.type = RdmaHeader::ACK;
                a.seq = seq;
                a.tsNs = static_cast<uint64_t>((Simulator::Now() - rtt).GetNanoSeconds());
                cc->OnAck(*qp, a);
                rates->push_back(qp->rate);
            }
        } acks{&cc, &qp, &rates};
        Simulator::Schedule(MicroSeconds(100), &Acks::Ack, &acks, 1000, 5000, MicroSeconds(60));
        Simulator::Schedule(MicroSeconds(200), &Acks::Ack, &acks, 6000, 12000, MicroSeconds(80));
        Simulator::Schedule(MicroSeconds(300), &Acks::Ack, &acks, 12001, 20000, MicroSeconds(80));
        Simulator::Schedule(MicroSeconds(400), &Acks::Ack, &acks, 20001, 30000, MicroSeconds(40));
        Simulator::Run();
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(rates.size(), 4u, "four ACKs");
        NS_TEST_EXPECT_MSG_EQ(rates[0], LINE, "the first ACK only records");
        NS_TEST_EXPECT_MSG_EQ_TOL(double(rates[1]), 30e9, 1.0, "rising gradient 0.875");
        NS_TEST_EXPECT_MSG_EQ_TOL(double(rates[2]), 27.375e9, 1.0, "EWMA gradient 0.109375");
        NS_TEST_EXPECT_MSG_EQ_TOL(double(rates[3]), 27.415e9, 1.0, "below T_low: + 40 Mb/s");
        NS_TEST_EXPECT_MSG_EQ(host.lastShift, false, "TIMELY sets the rate directly");
    }
};

// ==== Fabric helpers ===========================================================================

/// \p n hosts on one switch (node n), 100 Gbps, 1 us; congestion control \p cc with run.py's
/// window rule and the fabric's RTT/BDP (2 hops: 4160 ns, 52,000 B).
void
BuildStar(RdmaFabricHelper& f, uint32_t n, const std::string& cc)
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    f.SetLoadBalancer("ecmp");
    f.CreateNodes(n + 1, {n});
    for (uint32_t h = 0; h < n; ++h)
    {
        f.Link(h, n, DataRate("100Gbps"), MicroSeconds(1));
    }
    f.Finish();
    f.AssignStreams(0);
    const bool win = cc == "ns3::RdmaHpcc" || cc == "ns3::RdmaDctcp";
    for (uint32_t h : f.GetHosts())
    {
        Ptr<RdmaNic> nic = f.GetNic(h);
        nic->SetAttribute("CongestionControl", StringValue(cc));
        nic->SetAttribute("Window", UintegerValue(win ? 52000 : 0));
        nic->SetAttribute("VarWin", BooleanValue(win));
        nic->SetAttribute("BaseRtt", TimeValue(NanoSeconds(4160)));
        rdmalbtest::SetComponent(nic, "ns3::RdmaCongestionControl", "EwmaGain", DoubleValue(1.0 / 256));
    }
    f.GetSwitch(n)->SetAttribute("IntEnabled", BooleanValue(cc == "ns3::RdmaHpcc"));
}

// ==== 5. HPCC: two flows into one port =======================================================

/**
 * Two long HPCC flows share one 100 Gbps port; flow 1 joins 100 us after flow 0, both at
 * line rate. HPCC drives the port's utilisation to eta = 0.95 with the queue term pushing the
 * queue towards zero, and both senders read the same INT of the same port, so their rates
 * converge (the HPCC paper's fairness and near-zero queue). Convergence is slow with run.py's
 * W_AI = 40 Mb/s: at U ~ eta each reference update divides both rates by the same c and adds
 * W_AI to each, so sum/c + 2 W_AI = sum and a rate gap shrinks by 1/c = 1 - 2 W_AI / sum ~
 * 1 - 8.4e-4 per update (one per RTT, ~4.5 us): a time constant of ~5.4 ms. The gap is
 * measured over [15, 20] ms (~3 time constants): the two flows' sent bytes within 5 % of each
 * other; the bottleneck queue sampled every 1 us stays below one BDP (52,000 B: 2 hops, RTT
 * 4160 ns at 100 Gbps), its mean below 10 % of it; the port busy at >= 90 % (eta = 0.95).
 */
class HpccTwoFlowTestCase : public TestCase
{
  public:
    HpccTwoFlowTestCase()
        : TestCase("HPCC: two flows into one 100G port converge within 5% with the queue below "
                   "1 BDP")
    {
    }

  private:
    void DoRun() override
    {
        RdmaFabricHelper f;
        BuildStar(f, 3, "ns3::RdmaHpcc");
        std::map<uint32_t, uint64_t> sent;
        for (uint32_t h : {0u, 1u})
        {
            f.GetNic(h)->TraceConnectWithoutContext(
                "DataSent",
                MakeBoundCallback(+[](std::map<uint32_t, uint64_t>* m, Time t0, Time t1,
                                      uint32_t flow, uint32_t, uint16_t) {
                                      const Time now = Simulator::Now();
                                      if (now >= t0 && now < t1)
                                      {
                                          ++(*m)[flow];
                                      }
                                  },
                                  &sent,
                                  m_t0,
                                  m_t1));
        }
        f.AddFlow(0, 0, 2, 1000000000, Time(0));
        f.AddFlow(1, 1, 2, 1000000000, MicroSeconds(100));
        Ptr<RdmaNetDevice> port = f.GetSwitch(3)->GetPort(2);
        std::vector<double> q;
        for (Time t = m_t0; t < m_t1; t += MicroSeconds(1))
        {
            Simulator::Schedule(
                t,
                +[](std::vector<double>* qs, Ptr<RdmaNetDevice> p) {
                    qs->push_back(static_cast<double>(p->GetTotalQueueBytes()));
                },
                &q,
                port);
        }
        // Captureless (+[], a function pointer), as ns-3 <= 3.35 schedules no lambdas.
        const auto readTx = +[](uint64_t* tx, Ptr<RdmaNetDevice> p) { *tx = p->GetTxBytes(); };
        uint64_t tx0 = 0;
        Simulator::Schedule(m_t0, readTx, &tx0, port);
        uint64_t tx1 = 0;
        Simulator::Schedule(m_t1, readTx, &tx1, port);
        uint64_t pauses = 0;
        Simulator::Stop(m_t1 + NanoSeconds(1));
        Simulator::Run();
        pauses = f.GetSwitch(3)->GetTotalPausesSent();
        Simulator::Destroy();

        const double win = (m_t1 - m_t0).GetSeconds();
        const double thr0 = sent[0] * 1090.0 * 8 / win;
        const double thr1 = sent[1] * 1090.0 * 8 / win;
        const double maxQ = *std::max_element(q.begin(), q.end());
        double meanQ = 0;
        for (double v : q)
        {
            meanQ += v / static_cast<double>(q.size());
        }
        const double util = (tx1 - tx0) * 8.0 / win / 1e11;
        std::cout << std::fixed << std::setprecision(3) << "HPCC two flows over ["
                  << m_t0.As(Time::MS) << ", " << m_t1.As(Time::MS) << "]: " << thr0 / 1e9
                  << " / " << thr1 / 1e9 << " Gbps, queue max " << maxQ << " B mean " << meanQ
                  << " B (1 BDP = 52000 B), port busy " << util * 100 << " %, PFC pauses "
                  << pauses << std::endl;
        NS_TEST_EXPECT_MSG_LT(std::abs(thr0 - thr1) / std::max(thr0, thr1), 0.05, "fairness");
        NS_TEST_EXPECT_MSG_LT(maxQ, 52000.0, "queue below one BDP");
        NS_TEST_EXPECT_MSG_LT(meanQ, 5200.0, "mean queue below 10 % of a BDP");
        NS_TEST_EXPECT_MSG_GT(util, 0.9, "port utilisation");
        NS_TEST_EXPECT_MSG_EQ(pauses, 0u, "no PFC");
    }

    const Time m_t0{MilliSeconds(15)};
    const Time m_t1{MilliSeconds(20)};
};

// ==== 6. 16:1 incast ===========================================================================

/**
 * 16 senders x 1 MB into one receiver through one switch (100 Gbps, 1 us, PFC on, ECN as
 * run.py), all starting at once at line rate, with a 3 MiB shared buffer (a shallow-buffer
 * switch; with 9 MiB DCQCN's ~2 MB peak queue stays below the pause point, see rdma-lb-fabric)
 * and the lossless MMU configuration (no egress dynamic threshold, which drops despite PFC).
 * First principles (reference MMU, 17 ports): L_in = 3,145,728 - 17 x 27,096 - 17 x 8 x 1048
 * = 2,542,568 B; with 16 equally loaded ingress ports each pauses when P / 16 - 2096 >
 * (L_in - P) / 16, i.e. at a pool of P = (L_in + 16 x 2096) / 2 = 1,288,052 B.
 *  - DCQCN reacts only after the queue passes Kmin = 100 KB and a CNP returns, then halves at
 *    most every 4 us: its queue peaks near 2 MB (rdma-lb-fabric), past the pause point: pauses.
 *  - HPCC's window (one BDP, 52 KB, scaled by the rate) caps what each sender has in flight:
 *    the queue cannot exceed 16 x 52 KB = 832 KB < 1.29 MB: no pause at all.
 *  - DCTCP has the same window: no pause either. TIMELY has no window and reacts to RTTs only
 *    above T_low = 50 us (a 625 KB queue), once per RTT: it pauses, and the 5 us pauses renewed
 *    only by arriving packets overflow the headroom (rdma-lb-fabric's no-CC case): drops; its
 *    flows complete by Go-Back-N.
 * Asserted: DCQCN > 0 pauses, HPCC and DCTCP 0, every flow completes under each, no drop but
 * under TIMELY; the counts are printed.
 */
class IncastTestCase : public TestCase
{
  public:
    IncastTestCase()
        : TestCase("16:1 incast, 3 MiB buffer: HPCC and DCTCP send no PFC pause where DCQCN "
                   "sends many; TIMELY completes it")
    {
    }

  private:
    struct Result
    {
        uint64_t pauses{0};
        uint64_t drops{0};
        uint32_t done{0};
        double lastFctUs{0};
    };

    Result Run(const std::string& cc)
    {
        RdmaFabricHelper f;
        BuildStar(f, 17, cc);
        Ptr<SwitchMmu> mmu = f.GetSwitch(17)->GetMmu();
        mmu->SetAttribute("BufferSize", UintegerValue(3 * 1024 * 1024));
        mmu->SetAttribute("EgressDynamicThreshold", BooleanValue(false)); // lossless MMU
        Result r;
        for (uint32_t h = 0; h < 16; ++h)
        {
            f.GetNic(h)->TraceConnectWithoutContext(
                "FlowRecord",
                MakeBoundCallback(+[](Result* res, const RdmaFlowRecord& rec) {
                                      ++res->done;
                                      res->lastFctUs = std::max(
                                          res->lastFctUs, (rec.finish - rec.start).GetMicroSeconds() * 1.0);
                                  },
                                  &r));
            f.AddFlow(h, h, 16, 1000000, Time(0));
        }
        Simulator::Stop(MilliSeconds(100));
        Simulator::Run();
        r.pauses = f.GetSwitch(17)->GetTotalPausesSent();
        r.drops = f.GetSwitch(17)->GetTotalDrops();
        Simulator::Destroy();
        return r;
    }

    void DoRun() override
    {
        std::map<std::string, Result> res;
        for (const std::string cc :
             {"ns3::RdmaDcqcn", "ns3::RdmaHpcc", "ns3::RdmaDctcp", "ns3::RdmaTimely"})
        {
            const std::string& name = cc;
            res[cc] = Run(cc);
            std::cout << "16:1 incast, " << name << ": PFC pauses " << res[cc].pauses << ", drops "
                      << res[cc].drops << ", flows done " << res[cc].done << "/16, last FCT "
                      << res[cc].lastFctUs << " us" << std::endl;
            NS_TEST_EXPECT_MSG_EQ(res[cc].done, 16u, name << ": every flow completes");
            if (cc != "ns3::RdmaTimely")
            {
                NS_TEST_EXPECT_MSG_EQ(res[cc].drops, 0u, name << ": no drop (PFC)");
            }
        }
        NS_TEST_EXPECT_MSG_GT(res["ns3::RdmaDcqcn"].pauses, 0u, "DCQCN: PFC pauses");
        NS_TEST_EXPECT_MSG_EQ(res["ns3::RdmaHpcc"].pauses, 0u,
                              "HPCC: the window prevents every pause");
        NS_TEST_EXPECT_MSG_EQ(res["ns3::RdmaDctcp"].pauses, 0u,
                              "DCTCP: the window prevents every pause");
        NS_TEST_EXPECT_MSG_GT(res["ns3::RdmaTimely"].pauses, 0u, "TIMELY reacts too late: pauses");
        // 16 MB through one 100 Gbps port: >= 1.395 ms (16,000 HPCC packets of 1090 B).
        NS_TEST_EXPECT_MSG_GT(res["ns3::RdmaHpcc"].lastFctUs, 1395.0, "no faster than the line");
        NS_TEST_EXPECT_MSG_LT(res["ns3::RdmaHpcc"].lastFctUs, 1395.0 / 0.9,
                              "HPCC keeps the port >90 % busy");
    }
};

// ==== 7. Every load balancer under every congestion control ===================================

/**
 * The host and switch load balancers keep working under HPCC, TIMELY and DCTCP: on a 2-leaf,
 * 2-spine fabric (100 Gbps, 1 us; 4 hops between racks: RTT 8320 ns, BDP 104,000 B) four
 * 200 KB flows between the racks complete under every algorithm name and every congestion
 * control, with INT on the switches for HPCC and run.py's window for HPCC and DCTCP. (What the
 * ECN readers, REPS and FlowBender, see under each: rdma-lb.rst, "Congestion control".)
 */
class EveryLbUnderEveryCcTestCase : public TestCase
{
  public:
    EveryLbUnderEveryCcTestCase()
        : TestCase("every load balancer completes its flows under HPCC, TIMELY and DCTCP")
    {
    }

  private:
    void DoRun() override
    {
        for (const std::string cc : {"ns3::RdmaHpcc", "ns3::RdmaTimely", "ns3::RdmaDctcp"})
        {
            for (const std::string& lb : LbConfig::AlgorithmNames())
            {
                RngSeedManager::SetSeed(1);
                RngSeedManager::SetRun(1);
                RdmaFabricHelper f;
                f.SetLoadBalancer(lb, "");
                f.CreateNodes(8, {4, 5, 6, 7});
                const DataRate g100("100Gbps");
                for (uint32_t h = 0; h < 4; ++h)
                {
                    f.Link(h, 4 + h / 2, g100, MicroSeconds(1));
                }
                for (uint32_t leaf : {4u, 5u})
                {
                    for (uint32_t spine : {6u, 7u})
                    {
                        f.Link(leaf, spine, g100, MicroSeconds(1));
                    }
                }
                f.Finish();
                f.AssignStreams(0);
                const bool win = cc != "ns3::RdmaTimely";
                for (uint32_t h : f.GetHosts())
                {
                    Ptr<RdmaNic> nic = f.GetNic(h);
                    nic->SetAttribute("CongestionControl", StringValue(cc));
                    nic->SetAttribute("Window", UintegerValue(win ? 104000 : 0));
                    nic->SetAttribute("VarWin", BooleanValue(win));
                }
                for (uint32_t sw = 4; sw < 8; ++sw)
                {
                    f.GetSwitch(sw)->SetAttribute("IntEnabled",
                                                  BooleanValue(cc == "ns3::RdmaHpcc"));
                }
                uint32_t done = 0;
                for (uint32_t h = 0; h < 4; ++h)
                {
                    f.GetNic(h)->TraceConnectWithoutContext(
                        "FlowRecord",
                        MakeBoundCallback(+[](uint32_t* n, const RdmaFlowRecord&) { ++*n; },
                                          &done));
                    f.AddFlow(h, h, (h + 2) % 4, 200000, Time(0));
                }
                Simulator::Stop(MilliSeconds(50));
                Simulator::Run();
                Simulator::Destroy();
                NS_TEST_EXPECT_MSG_EQ(done,
                                      4u,
                                      lb << " under " << cc
                                         << ": every flow completes");
            }
        }
    }
};

// ==== 8. The CongestionControl attribute: by TypeId, and no default for a wrong one =========

/// Runs \p f in a child process with its stderr captured (NS_FATAL_ERROR ends the process).
/// \return whether the child failed (a signal or a non-zero exit status) and its stderr
std::pair<bool, std::string>
RunInChild(void (*f)())
{
    int fds[2];
    if (pipe(fds) != 0)
    {
        return {false, "pipe() failed"};
    }
    std::cout.flush();
    std::cerr.flush();
    const pid_t pid = fork();
    if (pid == 0)
    {
        const rlimit noCore{0, 0};
        setrlimit(RLIMIT_CORE, &noCore);
        close(fds[0]);
        dup2(fds[1], STDERR_FILENO);
        close(fds[1]);
        f();
        _exit(0);
    }
    close(fds[1]);
    std::string err;
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0)
    {
        err.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
    {
        return {false, "fork() or waitpid() failed"};
    }
    return {WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0), err};
}

/**
 * RdmaNic's CongestionControl attribute is a factory chosen by the algorithm's TypeId (the
 * names Rust's rdma_lb_scenario::Cc::type_id gives), each read back as set; its default is the
 * table of transport parameters' (RdmaTransportDefault). A type that is no congestion control
 * is not turned into some congestion control: the program stops with one message naming the
 * attribute and the type, also when it comes from Config::SetDefault.
 */
class CongestionControlAttributeTestCase : public TestCase
{
  public:
    CongestionControlAttributeTestCase()
        : TestCase("CongestionControl: every congestion control by its TypeId; the table's "
                   "default; a type that is none is a fatal error")
    {
    }

  private:
    void DoRun() override
    {
        for (const std::string cc : {"ns3::RdmaCongestionControl",
                                     "ns3::RdmaDcqcn",
                                     "ns3::RdmaHpcc",
                                     "ns3::RdmaTimely",
                                     "ns3::RdmaDctcp"})
        {
            Ptr<RdmaNic> nic = CreateObject<RdmaNic>();
            nic->SetAttribute("CongestionControl", StringValue(cc));
            ObjectFactoryValue got;
            nic->GetAttribute("CongestionControl", got);
            NS_TEST_EXPECT_MSG_EQ(got.Get().GetTypeId().GetName(), cc, "reads back as set");
        }
        for (const std::string attribute : {"CongestionControl", "LossRecovery"})
        {
            Ptr<RdmaNic> nic = CreateObject<RdmaNic>();
            ObjectFactoryValue got;
            nic->GetAttribute(attribute, got);
            const auto table = DynamicCast<const ObjectFactoryValue>(
                RdmaTransportDefault("ns3::RdmaNic", attribute));
            NS_TEST_EXPECT_MSG_EQ(got.Get().GetTypeId(),
                                  table->Get().GetTypeId(),
                                  attribute << ": the table's default");
        }
        const auto [failed, err] = RunInChild(+[] {
            Ptr<RdmaNic> nic = CreateObject<RdmaNic>();
            nic->SetAttribute("CongestionControl", StringValue("ns3::RdmaIrn"));
        });
        NS_TEST_EXPECT_MSG_EQ(failed, true, "a type that is no congestion control stops the "
                                            "program: " << err);
        const std::string want =
            "RdmaNic::CongestionControl: ns3::RdmaIrn is no ns3::RdmaCongestionControl";
        NS_TEST_EXPECT_MSG_NE(err.find(want), std::string::npos, err);
        const auto [failedName, errName] = RunInChild(+[] {
            Ptr<RdmaNic> nic = CreateObject<RdmaNic>();
            nic->SetAttribute("CongestionControl", StringValue("ns3::Cubic"));
        });
        NS_TEST_EXPECT_MSG_EQ(failedName, true, "an unknown TypeId stops the program: " << errName);
        NS_TEST_EXPECT_MSG_NE(errName.find("CongestionControl"), std::string::npos, errName);
        const auto [failedDefault, errDefault] = RunInChild(+[] {
            Config::SetDefault("ns3::RdmaNic::CongestionControl", StringValue("ns3::RdmaGoBackN"));
            CreateObject<RdmaNic>();
        });
        NS_TEST_EXPECT_MSG_EQ(failedDefault, true, "a wrong default stops the program too");
        NS_TEST_EXPECT_MSG_NE(errDefault.find("ns3::RdmaGoBackN is no"),
                              std::string::npos,
                              errDefault);
    }
};

class RdmaLbCcTestSuite : public rdmalbtest::FilteredTestSuite
{
  public:
    RdmaLbCcTestSuite()
        : FilteredTestSuite("rdma-lb-cc", "RDMA_LB_CC_CASES")
    {
        AddTestCase(new IntTestCase, TestCase::QUICK);
        AddTestCase(new HpccAckTestCase, TestCase::QUICK);
        AddTestCase(new DctcpWindowTestCase, TestCase::QUICK);
        AddTestCase(new TimelyGradientTestCase, TestCase::QUICK);
        AddTestCase(new HpccTwoFlowTestCase, TestCase::QUICK);
        AddTestCase(new IncastTestCase, TestCase::QUICK);
        AddTestCase(new EveryLbUnderEveryCcTestCase, TestCase::QUICK);
        AddTestCase(new CongestionControlAttributeTestCase, TestCase::QUICK);
    }
};

RdmaLbCcTestSuite g_rdmaLbCcTestSuite;

} // namespace
