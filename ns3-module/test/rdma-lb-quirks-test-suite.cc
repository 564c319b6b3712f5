/*
 * rdma-lb: test suite "rdma-lb-quirks" -- every reference quirk of the lock-step work
 * (rdma_lb_scenario::Quirk; doc/rdma-lb.rst, "Lock-step with the reference simulator") shows its
 * effect with the quirk on and disappears with it off, with numbers derived from first principles:
 *  - time-truncation: a one-packet flow's FCT is 4174 ns (ns-3.19: 83 + 4 ns per hop) against
 *    4178 ns (ns-3.37: 84 + 5 ns); under a SimAI workload (IntegerTxTime) SimAI's integer
 *    division: a 1000 B packet 80 ns where ns-3.19's doubles give 79;
 *  - flow-ports: the reference's sport/dport of a host's first three flows on the wire;
 *  - pacing-wakeup: a throttled queue pair stalls behind a slower one's pending wake-up;
 *  - irn-sender: a NACK whose SACK block leaves nothing beyond snd_una still goes back;
 *  - ecn-shared-stream: two identical switches make identical marking draws;
 *  - event-order: a flow starting when its NIC's port completes a packet goes after it.
 * Beside them, SimAI's data headers (RdmaNic::RoceHeaderSize 52, its 64-bit sequence number):
 * a three-packet flow's packets take 84 ns, not 83, and the receiver counts only the payload.
 *
 * Fabric (unless said otherwise): host 0 -- switch 2 -- host 1, 100 Gbps, 1 us links.
 */
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/rdma-lb-module.h"

#include "rdma-lb-test-util.h"

#include <iostream>
#include <vector>

using namespace ns3;

namespace
{

/// host 0 -- switch 2 -- host 1, every attribute in \p attrs set on both NICs and every port.
struct Star
{
    RdmaFabricHelper fabric;

    explicit Star(bool truncate,
                  TypeId recovery = RdmaGoBackN::GetTypeId(),
                  bool integerTimes = false)
    {
        RngSeedManager::SetSeed(1);
        RngSeedManager::SetRun(1);
        fabric.SetLoadBalancer("ecmp");
        fabric.CreateNodes(3, {2});
        for (uint32_t h : {0U, 1U})
        {
            Ptr<RdmaChannel> ch = fabric.Link(h, 2, DataRate("100Gbps"), MicroSeconds(1));
            for (size_t d = 0; d < ch->GetNDevices(); ++d)
            {
                ch->GetDevice(d)->SetAttribute("TimeTruncation", BooleanValue(truncate));
                ch->GetDevice(d)->SetAttribute("IntegerTxTime", BooleanValue(integerTimes));
            }
            fabric.GetNic(h)->SetAttribute("TimeTruncation", BooleanValue(truncate));
            fabric.GetNic(h)->SetAttribute("IntegerTxTime", BooleanValue(integerTimes));
            fabric.GetNic(h)->SetAttribute("LossRecovery", StringValue(recovery.GetName()));
        }
        fabric.GetSwitch(2)->SetAttribute("PfcEnabled", BooleanValue(recovery != RdmaIrn::GetTypeId()));
        fabric.Finish();
        fabric.AssignStreams(0);
    }

    void SetNics(const std::string& name, const AttributeValue& v)
    {
        fabric.GetNic(0)->SetAttribute(name, v);
        fabric.GetNic(1)->SetAttribute(name, v);
    }

    /// Sets attribute \p name of both NICs' loss recoveries / congestion controls of \p typeId.
    void SetNicComponents(const std::string& typeId, const std::string& name, const AttributeValue& v)
    {
        rdmalbtest::SetComponent(fabric.GetNic(0), typeId, name, v);
        rdmalbtest::SetComponent(fabric.GetNic(1), typeId, name, v);
    }

    /// Runs until \p stop; \return the FCT of every completed flow of host 0, by flow id
    std::map<uint32_t, Time> Run(Time stop = MilliSeconds(5))
    {
        std::map<uint32_t, Time> fct;
        fabric.GetNic(0)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](std::map<uint32_t, Time>* m, const RdmaFlowRecord& r) {
                                  (*m)[r.flowId] = r.finish - r.start;
                              },
                              &fct));
        Simulator::Stop(stop);
        Simulator::Run();
        Simulator::Destroy();
        return fct;
    }
};

} // namespace

/// time-truncation: one 1000 B flow = one 1048 B packet and one 60 B ACK over two hops each.
class TimeTruncationTestCase : public TestCase
{
  public:
    TimeTruncationTestCase()
        : TestCase("time-truncation: one packet's FCT 4174 ns as ns-3.19, 4178 ns as ns-3.37")
    {
    }

  private:
    void DoRun() override
    {
        std::map<bool, int64_t> fct;
        for (bool truncate : {true, false})
        {
            Star s(truncate);
            s.fabric.AddFlow(0, 0, 1, 1000, MicroSeconds(1));
            fct[truncate] = s.Run()[0].GetNanoSeconds();
        }
        // 1048 B: 1048 x 8 / 1e11 s = 83.84 ns (83 truncated, 84 rounded); 60 B: 4.8 ns (4 / 5).
        std::cout << "one-packet FCT: truncated " << fct[true] << " ns, rounded " << fct[false]
                  << " ns" << std::endl;
        NS_TEST_EXPECT_MSG_EQ(fct[true], 2 * (83 + 1000) + 2 * (4 + 1000), "ns-3.19 times");
        NS_TEST_EXPECT_MSG_EQ(fct[false], 2 * (84 + 1000) + 2 * (5 + 1000), "ns-3.37 times");
        NS_TEST_EXPECT_MSG_EQ(RdmaNs319SecondsToNs(1000 * 8 / 1e11), 79u, "8e-8 s lies above 80 ns");
        NS_TEST_EXPECT_MSG_EQ(RdmaNs319SecondsToNs(2.000000041), 2000000040u, "a flow start");
    }
};

/// IntegerTxTime: time-truncation under a SimAI workload divides integers, as SimAI's ns-3 does
/// (Seconds(bytes x 8) / bps); ns-3.19 divides doubles, whose 8e-8 s for 1000 B at 100 Gbps
/// truncates to 79 ns.
class IntegerTxTimeTestCase : public TestCase
{
  public:
    IntegerTxTimeTestCase()
        : TestCase("time-truncation under SimAI: a 1000 B packet takes 80 ns, not ns-3.19's 79")
    {
    }

  private:
    void DoRun() override
    {
        const DataRate g100("100Gbps");
        NS_TEST_EXPECT_MSG_EQ(RdmaTxTime(g100, 1000, RdmaTxArithmetic::INTEGER).GetNanoSeconds(),
                              80,
                              "8000 x 1e9 / 1e11 exactly");
        NS_TEST_EXPECT_MSG_EQ(RdmaTxTime(g100, 1000, RdmaTxArithmetic::NS319).GetNanoSeconds(),
                              79,
                              "ns-3.19's double");
        NS_TEST_EXPECT_MSG_EQ(RdmaTxTime(g100, 1000, RdmaTxArithmetic::ROUNDED).GetNanoSeconds(),
                              80,
                              "ns-3.37 rounds");
        for (auto a : {RdmaTxArithmetic::INTEGER, RdmaTxArithmetic::NS319})
        {
            NS_TEST_EXPECT_MSG_EQ(RdmaTxTime(g100, 1048, a).GetNanoSeconds(), 83, "83.84 truncated");
            NS_TEST_EXPECT_MSG_EQ(RdmaTxTime(DataRate("400Gbps"), 9052, a).GetNanoSeconds(),
                                  181,
                                  "181.04 truncated");
        }
        const bool roundedWithoutTruncation =
            RdmaTxArithmeticOf(false, true) == RdmaTxArithmetic::ROUNDED;
        NS_TEST_EXPECT_MSG_EQ(roundedWithoutTruncation, true, "IntegerTxTime only with TimeTruncation");
        // In the fabric: a 952 B flow is one 1000 B packet (48 B of headers), and its ACK 60 B
        // (4.8 ns: 4 either way), over two 1 us hops each way.
        std::map<bool, int64_t> fct;
        for (bool integer : {true, false})
        {
            Star s(true, RdmaGoBackN::GetTypeId(), integer);
            s.fabric.AddFlow(0, 0, 1, 952, MicroSeconds(1));
            fct[integer] = s.Run()[0].GetNanoSeconds();
        }
        NS_TEST_EXPECT_MSG_EQ(fct[true], 2 * (80 + 1000) + 2 * (4 + 1000), "SimAI's times");
        NS_TEST_EXPECT_MSG_EQ(fct[false], 2 * (79 + 1000) + 2 * (4 + 1000), "ns-3.19's times");
    }
};

/// RoceHeaderSize: SimAI's 52 B of data headers make each packet 4 B longer on the wire only.
class RoceHeaderSizeTestCase : public TestCase
{
  public:
    RoceHeaderSizeTestCase()
        : TestCase("RoceHeaderSize 52 (SimAI): a 3-packet flow's FCT 4344 ns against 4340 with 48")
    {
    }

  private:
    void DoRun() override
    {
        for (uint32_t header : {48U, 52U})
        {
            Star s(true);
            s.SetNics("RoceHeaderSize", UintegerValue(header));
            s.fabric.AddFlow(0, 0, 1, 3000, MicroSeconds(1));
            const std::map<uint32_t, Time> fct = s.Run();
            NS_TEST_ASSERT_MSG_EQ(fct.count(0), 1u, "the flow completes");
            // Truncated times: a packet of 1000 + header B takes 83 ns (1048 B: 83.84) or 84 ns
            // (1052 B: 84.16); an ACK (60 B) 4 ns. The last of 3 packets leaves 2 packet times
            // after the first, crosses two hops, and its ACK crosses two back. A receiver that
            // counted the 4 B as payload would see the next packet out of order: Go-Back-N.
            const int64_t pkt = header == 48 ? 83 : 84;
            NS_TEST_EXPECT_MSG_EQ(fct.at(0).GetNanoSeconds(),
                                  2 * pkt + 2 * (pkt + 1000) + 2 * (4 + 1000),
                                  "header " << header << " B");
        }
    }
};

/// flow-ports: StartFlowOnPorts puts the given ports on the data and reverses them on the ACKs.
class FlowPortsTestCase : public TestCase
{
  public:
    FlowPortsTestCase()
        : TestCase("flow-ports: a host's first three flows carry sport 10000.. and dport 100..")
    {
    }

  private:
    void DoRun() override
    {
        for (bool reference : {true, false})
        {
            Star s(false);
            Ptr<RdmaNic> nic = s.fabric.GetNic(0);
            const uint32_t dip = RdmaHostAddress(1);
            for (uint32_t k = 0; k < 3; ++k)
            {
                if (reference)
                {
                    Simulator::Schedule(MicroSeconds(1), &RdmaNic::StartFlowOnPorts, nic, k, dip,
                                        5000, 3, uint16_t(10000 + k), uint16_t(100 + k));
                }
                else
                {
                    Simulator::Schedule(MicroSeconds(1), &RdmaNic::StartFlow, nic, k, dip, 5000, 3);
                }
            }
            // Per flow (by qpn = creation order 1, 2, 3): the data ports and the ACK ports seen.
            std::map<uint16_t, std::set<std::pair<uint16_t, uint16_t>>> data;
            std::map<uint16_t, std::set<std::pair<uint16_t, uint16_t>>> acks;
            s.fabric.GetSwitch(2)->TraceConnectWithoutContext(
                "Forward",
                MakeBoundCallback(
                    +[](decltype(data)* d, decltype(acks)* a, Ptr<const Packet> p, uint32_t, uint32_t) {
                        RdmaHeader h;
                        p->PeekHeader(h);
                        (h.type == RdmaHeader::DATA ? *d : *a)[h.qpn].insert({h.sport, h.dport});
                    },
                    &data,
                    &acks));
            std::map<uint32_t, Time> fct = s.Run();
            NS_TEST_ASSERT_MSG_EQ(fct.size(), 3u, "three flows complete");
            for (uint16_t qpn : {1, 2, 3})
            {
                NS_TEST_ASSERT_MSG_EQ(data[qpn].size(), 1u, "one port pair per flow (ecmp)");
                auto [sport, dport] = *data[qpn].begin();
                std::cout << (reference ? "reference" : "model") << " ports, flow " << qpn - 1
                          << ": sport " << sport << " dport " << dport << std::endl;
                if (reference)
                {
                    NS_TEST_EXPECT_MSG_EQ(sport, 10000 + qpn - 1, "sport = the reference's");
                    NS_TEST_EXPECT_MSG_EQ(dport, 100 + qpn - 1, "dport = the reference's");
                }
                else
                {
                    NS_TEST_EXPECT_MSG_EQ(dport, qpn, "dport = the queue pair's number");
                }
                NS_TEST_EXPECT_MSG_EQ((acks[qpn] == std::set<std::pair<uint16_t, uint16_t>>{
                                                        {dport, sport}}),
                                      true,
                                      "ACKs carry the ports reversed");
            }
        }
    }
};

/// pacing-wakeup: queue pair A is throttled to 100 Mbps (a wake-up ~84 us ahead pending);
/// B starts right after one of A's packets and is halved at once (RateOnFirstCnp 0.5). Under
/// the reference's rule B's paced packets find A's wake-up pending and wait for ACKs (about
/// one packet per RTT) until A's wake-up; with the fix B paces at its rate.
class PacingWakeupTestCase : public TestCase
{
  public:
    PacingWakeupTestCase()
        : TestCase("pacing-wakeup: a throttled queue pair stalls behind a slower one's wake-up")
    {
    }

    static Time BFct(bool quirk)
    {
        Star s(false);
        s.SetNics("PacingWakeupQuirk", BooleanValue(quirk));
        s.SetNicComponents("ns3::RdmaDcqcn", "RateOnFirstCnp", DoubleValue(0.5));
        Ptr<RdmaNic> nic = s.fabric.GetNic(0);
        const uint32_t dip = RdmaHostAddress(1);
        const uint32_t flowA = 0;
        const uint32_t flowB = 1;
        s.fabric.AddFlow(flowA, 0, 1, 10000000, Time(0));
        // A: one CNP every 4 us for 48 us: each decrease check about halves its rate, down to
        // the 100 Mbps floor (one 1048 B packet per 83.84 us).
        for (int k = 0; k < 12; ++k)
        {
            Simulator::Schedule(MicroSeconds(1 + 4 * k), &RdmaNic::NotifyCnp, nic, flowA);
        }
        // B starts 1 us after A's first packet sent after 60 us, and gets its first CNP at once.
        struct Ctx
        {
            Ptr<RdmaNic> nic;
            uint32_t dip;
            bool started{false};
        } ctx{nic, dip};
        nic->TraceConnectWithoutContext(
            "DataSent",
            MakeBoundCallback(+[](Ctx* c, uint32_t flow, uint32_t, uint16_t) {
                                  if (flow != 0 || c->started || Simulator::Now() < MicroSeconds(60))
                                  {
                                      return;
                                  }
                                  c->started = true;
                                  Simulator::Schedule(MicroSeconds(1), &RdmaNic::StartFlow, c->nic,
                                                      1, c->dip, 100000, 3);
                                  Simulator::Schedule(MicroSeconds(1), &RdmaNic::NotifyCnp, c->nic, 1);
                              },
                              &ctx));
        return s.Run(MilliSeconds(2))[flowB];
    }

  private:
    void DoRun() override
    {
        Time quirk = BFct(true);
        Time fix = BFct(false);
        // B: 100 packets at >= 25 Gbps (50 Gbps, then the first decrease check's cut) plus one
        // base RTT (4.2 us): at most 100 x 1048 x 8 / 25e9 + 4.2 us = 37.7 us when paced.
        std::cout << "B's FCT: reference wake-up " << quirk.As(Time::US) << ", fixed "
                  << fix.As(Time::US) << std::endl;
        NS_TEST_ASSERT_MSG_EQ(fix.IsStrictlyPositive() && quirk.IsStrictlyPositive(), true, "done");
        NS_TEST_EXPECT_MSG_LT(fix, MicroSeconds(38), "paced at its own rate");
        NS_TEST_EXPECT_MSG_GT(quirk, fix * 2, "stalled behind A's wake-up");
    }
};

/// irn-sender: after 12 packets, a NACK that SACKs [0, 1000) with cumulative ACK 0 moves
/// snd_una to 1000 and leaves no SACKed byte beyond it. The reference goes back anyway (any
/// SACK outside recovery): packets 1000.. are sent again; our sender does not.
class IrnSenderTestCase : public TestCase
{
  public:
    IrnSenderTestCase()
        : TestCase("irn-sender: a SACK outside recovery goes back even with nothing beyond snd_una")
    {
    }

    static uint64_t Retx(bool quirk)
    {
        Star s(false, RdmaIrn::GetTypeId());
        s.SetNics("IrnReferenceSender", BooleanValue(quirk));
        s.fabric.AddFlow(0, 0, 1, 100000, Time(0));
        Ptr<NetDevice> dev = s.fabric.GetNode(0)->GetDevice(0);
        // At 1 us the NIC has sent 12 packets (83.84 ns each) and nothing is ACKed yet.
        Simulator::Schedule(MicroSeconds(1), +[](Ptr<NetDevice> d) {
            RdmaHeader h;
            h.type = RdmaHeader::NACK;
            h.sip = RdmaHostAddress(1);
            h.dip = RdmaHostAddress(0);
            h.qpn = 1;
            h.seq = 0;
            h.sackSeq = 0;
            h.sackLen = 1000;
            Ptr<Packet> p = Create<Packet>();
            p->AddHeader(h);
            DynamicCast<RdmaNetDevice>(d)->Receive(p);
        }, dev);
        uint64_t retx = 0;
        s.fabric.GetNic(0)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](uint64_t* n, const RdmaFlowRecord& r) { *n = r.retxPkts; }, &retx));
        std::map<uint32_t, Time> fct = s.Run();
        NS_ABORT_MSG_IF(fct.count(0) == 0, "the flow did not complete");
        return retx;
    }

  private:
    void DoRun() override
    {
        uint64_t quirk = Retx(true);
        uint64_t fix = Retx(false);
        std::cout << "packets resent after the crafted SACK: reference " << quirk << ", fixed "
                  << fix << std::endl;
        NS_TEST_EXPECT_MSG_GT_OR_EQ(quirk, 11u, "went back to byte 1000: 11 packets again");
        NS_TEST_EXPECT_MSG_EQ(fix, 0u, "no go-back");
    }
};

/// ecn-shared-stream: two copies of one 2:1 incast (hosts 0, 1 -> 2 via switch 6 and hosts
/// 3, 4 -> 5 via switch 7) evolve identically; only the ECN draws could differ. With the
/// reference's stream at every switch they do not.
class EcnSharedStreamTestCase : public TestCase
{
  public:
    EcnSharedStreamTestCase()
        : TestCase("ecn-shared-stream: two identical switches mark identically on one stream")
    {
    }

    using Marks = std::map<uint32_t, std::vector<std::pair<int64_t, uint64_t>>>;

    static Marks Run(bool quirk)
    {
        RngSeedManager::SetSeed(1);
        RngSeedManager::SetRun(1);
        RdmaFabricHelper fabric;
        fabric.SetLoadBalancer("ecmp");
        fabric.CreateNodes(8, {6, 7});
        for (uint32_t h = 0; h < 6; ++h)
        {
            fabric.Link(h, h < 3 ? 6 : 7, DataRate("100Gbps"), MicroSeconds(1));
        }
        for (uint32_t sw : {6U, 7U})
        {
            fabric.GetSwitch(sw)->SetAttribute("EcnSharedStream", BooleanValue(quirk));
        }
        fabric.Finish();
        fabric.AssignStreams(0);
        Marks marks;
        for (uint32_t sw : {6U, 7U})
        {
            fabric.GetSwitch(sw)->TraceConnectWithoutContext(
                "EcnMark",
                MakeBoundCallback(+[](Marks* m, uint32_t sw, uint32_t, uint32_t, uint64_t shared) {
                                      (*m)[sw].push_back({Simulator::Now().GetNanoSeconds(), shared});
                                  },
                                  &marks,
                                  sw));
        }
        for (uint32_t base : {0U, 3U})
        {
            fabric.AddFlow(base, base, base + 2, 2000000, Time(0));
            fabric.AddFlow(base + 1, base + 1, base + 2, 2000000, Time(0));
        }
        Simulator::Stop(MilliSeconds(2));
        Simulator::Run();
        Simulator::Destroy();
        return marks;
    }

  private:
    void DoRun() override
    {
        Marks shared = Run(true);
        Marks own = Run(false);
        std::cout << "ECN marks at the two switches: shared stream " << shared[6].size() << " / "
                  << shared[7].size() << ", own streams " << own[6].size() << " / "
                  << own[7].size() << std::endl;
        NS_TEST_ASSERT_MSG_GT(shared[6].size(), 10u, "the incast is marked");
        NS_TEST_EXPECT_MSG_EQ((shared[6] == shared[7]), true, "same draws, same marks");
        NS_TEST_EXPECT_MSG_EQ((own[6] == own[7]), false, "own streams, other marks");
    }
};

/// event-order: flow C (20 packets) starts at 0; flow B (one packet) at 840 ns = 10 x 84 ns,
/// exactly when C's 10th packet leaves the port. In the reference B's queue pair appears
/// after that transmit-complete event, so C's 11th packet goes first and B waits 84 ns.
class EventOrderTestCase : public TestCase
{
  public:
    EventOrderTestCase()
        : TestCase("event-order: a flow starting as its port frees goes after the current flow")
    {
    }

    static uint64_t BFct(bool quirk)
    {
        RdmaScenarioSpec s;
        s.name = "event-order";
        s.lb = LbConfig::ParseOrAbort("ecmp", "");
        s.nodeCount = 3;
        s.switchIds = {2};
        s.links = {{0, 2, 100000000000ULL, 1000, 0.0}, {1, 2, 100000000000ULL, 1000, 0.0}};
        s.flows.push_back({0, 0, 1, 3, 20000, 0, {}, {}, 0, 0, false, {}, {}, 0});
        s.flows.push_back({1, 0, 1, 3, 1000, 840, {}, {}, 0, 0, false, {}, {}, 0});
        s.transport.quirks.eventOrder = quirk;
        RdmaScenarioRunner runner(s);
        std::string error;
        NS_ABORT_MSG_IF(!runner.Run(&error), error);
        return runner.GetFlowResults().at(1).fctNs;
    }

  private:
    void DoRun() override
    {
        uint64_t quirk = BFct(true);
        uint64_t fix = BFct(false);
        std::cout << "B's FCT: reference start order " << quirk << " ns, fixed " << fix << " ns"
                  << std::endl;
        // Alone: 2 x (84 + 1000) + 2 x (5 + 1000) = 4178 ns; behind one of C's packets: + 84.
        NS_TEST_EXPECT_MSG_EQ(fix, 4178u, "B's packet leaves at its start");
        NS_TEST_EXPECT_MSG_EQ(quirk, 4178u + 84u, "B's packet waits for C's");
    }
};

/// The suite.
class RdmaLbQuirksTestSuite : public TestSuite
{
  public:
    RdmaLbQuirksTestSuite()
        : TestSuite("rdma-lb-quirks", UNIT)
    {
        AddTestCase(new TimeTruncationTestCase, TestCase::QUICK);
        AddTestCase(new IntegerTxTimeTestCase, TestCase::QUICK);
        AddTestCase(new FlowPortsTestCase, TestCase::QUICK);
        AddTestCase(new PacingWakeupTestCase, TestCase::QUICK);
        AddTestCase(new IrnSenderTestCase, TestCase::QUICK);
        AddTestCase(new EcnSharedStreamTestCase, TestCase::QUICK);
        AddTestCase(new EventOrderTestCase, TestCase::QUICK);
        AddTestCase(new RoceHeaderSizeTestCase, TestCase::QUICK);
    }
};

/// The suite instance.
static RdmaLbQuirksTestSuite g_rdmaLbQuirksTestSuite;
