/*
 * rdma-lb: the module's test suite (runs under ns-3's test runner: `test.py -s rdma-lb` or
 * `test-runner --suite=rdma-lb`, and under the out-of-tree build's ctest).
 *
 * Bridge tests: a bad parameter is refused with a message naming it; a panic inside Rust is
 * caught at the bridge and reported, never crossing into C++.
 * Fabric tests (a 2-leaf x 4-spine leaf-spine, 100 Gbps, 1 us links): under ECMP every flow
 * keeps one entropy and one uplink and different flows get different entropies; under
 * spraying a flow uses many; runs are deterministic under a fixed seed and differ across seeds;
 * every algorithm name runs end to end.
 */
#include "ns3/core-module.h"
#include "ns3/rdma-lb-module.h"

#include <map>
#include <set>
#include <vector>

using namespace ns3;

namespace
{

/// The result of one small leaf-spine run.
struct RunRecord
{
    std::map<uint32_t, std::vector<uint16_t>> entropies; //!< per flow, in send order
    std::map<uint32_t, std::set<uint32_t>> uplinks;      //!< per flow, leaf egress ports used
    std::map<uint32_t, Time> fct;                        //!< per completed flow
};

/**
 * Runs 8 cross-rack flows of \p size bytes on a 2-leaf, 4-host-per-leaf, 4-spine fabric.
 */
RunRecord
RunLeafSpine(const std::string& algorithm, const std::string& params, uint32_t run, uint64_t size)
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(run);
    RunRecord rec;
    RdmaFabricHelper fabric;
    fabric.SetLoadBalancer(algorithm, params);
    fabric.BuildLeafSpine(2, 4, 4, DataRate("100Gbps"), DataRate("100Gbps"), MicroSeconds(1));
    fabric.Finish();
    fabric.AssignStreams(0);
    const uint32_t leaf0 = 8; // hosts 0..7, leaves 8-9, spines 10-13
    for (uint32_t f = 0; f < 4; ++f)
    {
        fabric.AddFlow(f, f, 4 + f, size, MicroSeconds(1));
        fabric.GetNic(f)->TraceConnectWithoutContext(
            "DataSent",
            MakeBoundCallback(+[](RunRecord* r, uint32_t flow, uint32_t, uint16_t e) {
                                  r->entropies[flow].push_back(e);
                              },
                              &rec));
        fabric.GetNic(f)->TraceConnectWithoutContext(
            "FlowComplete",
            MakeBoundCallback(+[](RunRecord* r, uint32_t flow, uint32_t, uint32_t, uint64_t, Time s,
                                 Time e, uint64_t) { r->fct[flow] = e - s; },
                              &rec));
    }
    // Data leaving leaf 0 towards a spine (ports 4..7 are its uplinks).
    fabric.GetSwitch(leaf0)->TraceConnectWithoutContext(
        "Forward",
        MakeBoundCallback(+[](RunRecord* r, Ptr<const Packet> p, uint32_t, uint32_t out) {
                              RdmaHeader h;
                              p->PeekHeader(h);
                              if (h.type == RdmaHeader::DATA && out >= 4)
                              {
                                  r->uplinks[RdmaHostId(h.sip)].insert(out);
                              }
                          },
                          &rec));
    Simulator::Stop(MilliSeconds(10));
    Simulator::Run();
    Simulator::Destroy();
    return rec;
}

} // namespace

/// A bad parameter or algorithm name is refused, naming it.
class LbConfigErrorTestCase : public TestCase
{
  public:
    LbConfigErrorTestCase()
        : TestCase("bad algorithm parameters are refused with a message naming them")
    {
    }

  private:
    void DoRun() override
    {
        std::string err;
        NS_TEST_EXPECT_MSG_EQ(LbConfig::Parse("spray", "num_entropies = 0", &err), nullptr, "accepted");
        NS_TEST_EXPECT_MSG_EQ(err,
                              "algorithm `spray`, parameter `num_entropies`: must be in "
                              "1..=65536, got 0",
                              "message");
        err.clear();
        NS_TEST_EXPECT_MSG_EQ(LbConfig::Parse("ecmp", "bucket = 3", &err), nullptr, "accepted");
        NS_TEST_EXPECT_MSG_NE(err.find("parameter `bucket`"), std::string::npos, err);
        err.clear();
        NS_TEST_EXPECT_MSG_EQ(LbConfig::Parse("bogus", "", &err), nullptr, "accepted");
        NS_TEST_EXPECT_MSG_NE(err.find("unknown algorithm `bogus`"), std::string::npos, err);
        Ptr<LbConfig> ok = LbConfig::Parse("spray", "num_entropies = 256", &err);
        NS_TEST_ASSERT_MSG_NE(ok, nullptr, err);
        NS_TEST_EXPECT_MSG_EQ(ok->GetAlgorithmName(), "spray", "name");
        std::vector<std::string> names = LbConfig::AlgorithmNames();
        NS_TEST_EXPECT_MSG_EQ(names.at(0), "ecmp", "first name");
    }
};

/// A panic inside the Rust algorithm is caught at the bridge and reported as an error.
class PanicGuardTestCase : public TestCase
{
  public:
    PanicGuardTestCase()
        : TestCase("a panic in Rust is caught at the bridge and reported, not propagated")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<LbConfig> cfg = LbConfig::ParseOrAbort("ecmp", "");
        std::unique_ptr<QpPathSelector> sel = cfg->CreateQpSelector(42);
        LbSendContext cx;
        uint16_t e = 0;
        NS_TEST_ASSERT_MSG_EQ(sel->TryNextEntropy(cx, &e), true, "healthy selector");
        sel->ArmTestPanic();
        uint16_t e2 = 0;
        NS_TEST_EXPECT_MSG_EQ(sel->TryNextEntropy(cx, &e2), false, "panic reported as failure");
        NS_TEST_EXPECT_MSG_NE(sel->GetLastError().find("injected test panic"),
                              std::string::npos,
                              sel->GetLastError());
        NS_TEST_EXPECT_MSG_EQ(sel->TryNextEntropy(cx, &e2), false, "selector stays poisoned");
    }
};

/**
 * The per-NIC HostLbGroup through the bridge: with Whack-a-Mole's profile_scope =
 * "destination", what one queue pair learned about a path is what the next queue pair to the
 * same destination starts from; another destination, or the per-queue-pair scope, starts
 * from the uniform profile (4 paths, 64 balls: 16 packets of 64 on each path).
 */
class HostLbGroupTestCase : public TestCase
{
  public:
    HostLbGroupTestCase()
        : TestCase("HostLbGroup: whack-a-mole profiles shared per destination, or per queue pair")
    {
    }

  private:
    /// Packets of 64 (one counter period) that \p sel sends on entropy 1 at \p now.
    static uint32_t OnPath1(QpPathSelector& sel, Time now)
    {
        uint32_t n = 0;
        for (uint32_t i = 0; i < 64; ++i)
        {
            LbSendContext cx;
            cx.now = now;
            n += sel.NextEntropy(cx) == 1 ? 1 : 0;
        }
        return n;
    }

    /// Sends a packet every 10 us for 5 ms; every packet on entropy 1 comes back ECN-marked.
    static Time WhackPath1(QpPathSelector& sel)
    {
        Time t = Seconds(0);
        for (; t < MilliSeconds(5); t += MicroSeconds(10))
        {
            LbSendContext cx;
            cx.now = t;
            LbFeedback f;
            f.kind = LbFeedbackKind::ACK;
            f.now = t;
            f.entropy = sel.NextEntropy(cx);
            f.ecn = f.entropy == 1;
            sel.OnFeedback(f);
        }
        return t;
    }

    void DoRun() override
    {
        const uint32_t x = 0x0b000101;
        const uint32_t y = 0x0b000201;
        for (const std::string scope : {"destination", "queue-pair"})
        {
            Ptr<LbConfig> cfg = LbConfig::ParseOrAbort(
                "whack-a-mole",
                "num_paths = 4, log2_balls = 6, profile_scope = \"" + scope + "\"");
            Ptr<HostLbGroup> nic = cfg->CreateHostGroup();
            std::unique_ptr<QpPathSelector> first = nic->CreateQpSelector(x, 1);
            const Time t = WhackPath1(*first);
            NS_TEST_EXPECT_MSG_EQ(OnPath1(*first, t), 1u, scope << ": path 1 drained to 1 ball");
            first.reset();
            std::unique_ptr<QpPathSelector> again = nic->CreateQpSelector(x, 2);
            std::unique_ptr<QpPathSelector> other = nic->CreateQpSelector(y, 3);
            const uint32_t learned = scope == "destination" ? 1 : 16;
            NS_TEST_EXPECT_MSG_EQ(OnPath1(*again, t),
                                  learned,
                                  scope << ": the next queue pair to the same destination");
            NS_TEST_EXPECT_MSG_EQ(OnPath1(*other, t), 16u, scope << ": another destination");
        }
    }
};

/// ECMP: one entropy and one uplink per flow; different flows, different entropies.
class EcmpFlowStabilityTestCase : public TestCase
{
  public:
    EcmpFlowStabilityTestCase()
        : TestCase("ecmp keeps each flow on one entropy and one uplink; flows differ")
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t size = 100000; // 100 packets of 1000 B
        RunRecord r = RunLeafSpine("ecmp", "", 1, size);
        std::set<uint16_t> distinct;
        for (uint32_t f = 0; f < 4; ++f)
        {
            const auto& es = r.entropies[f];
            NS_TEST_ASSERT_MSG_EQ(es.size(), 100u, "flow " << f << " sent 100 packets once");
            for (uint16_t e : es)
            {
                NS_TEST_EXPECT_MSG_EQ(e, es.front(), "flow " << f << " changed entropy");
            }
            distinct.insert(es.front());
            NS_TEST_EXPECT_MSG_EQ(r.uplinks[f].size(), 1u, "flow " << f << " used one uplink");
            NS_TEST_EXPECT_MSG_EQ(r.fct.count(f), 1u, "flow " << f << " completed");
        }
        NS_TEST_EXPECT_MSG_EQ(distinct.size(), 4u, "flows drew distinct entropies");
    }
};

/// Spraying: a flow's packets use many entropies and every uplink.
class SprayUsesAllUplinksTestCase : public TestCase
{
  public:
    SprayUsesAllUplinksTestCase()
        : TestCase("spray gives a flow many entropies and all four uplinks")
    {
    }

  private:
    void DoRun() override
    {
        RunRecord r = RunLeafSpine("spray", "num_entropies = 256", 1, 100000);
        for (uint32_t f = 0; f < 4; ++f)
        {
            std::set<uint16_t> es(r.entropies[f].begin(), r.entropies[f].end());
            // 100 draws from 256 values: about 84 distinct are expected; fewer than 60 would
            // mean the entropy is not drawn per packet.
            NS_TEST_EXPECT_MSG_GT(es.size(), 60u, "flow " << f);
            NS_TEST_EXPECT_MSG_EQ(r.uplinks[f].size(), 4u, "flow " << f << " used all uplinks");
            NS_TEST_EXPECT_MSG_EQ(r.fct.count(f), 1u, "flow " << f << " completed");
        }
    }
};

/// Same seed, same decisions; a different run number, different decisions.
class DeterminismTestCase : public TestCase
{
  public:
    DeterminismTestCase()
        : TestCase("same seed gives identical decisions and FCTs; another run differs")
    {
    }

  private:
    void DoRun() override
    {
        RunRecord a = RunLeafSpine("spray", "", 3, 50000);
        RunRecord b = RunLeafSpine("spray", "", 3, 50000);
        RunRecord c = RunLeafSpine("spray", "", 4, 50000);
        NS_TEST_EXPECT_MSG_EQ((a.entropies == b.entropies), true, "same run, same entropies");
        NS_TEST_EXPECT_MSG_EQ((a.fct == b.fct), true, "same run, same FCTs");
        NS_TEST_EXPECT_MSG_EQ((a.entropies == c.entropies), false, "another run differs");
    }
};

/// Every algorithm the Rust side knows runs the fabric end to end: all flows complete and the
/// selector is called once per data packet.
class EveryAlgorithmRunsTestCase : public TestCase
{
  public:
    EveryAlgorithmRunsTestCase()
        : TestCase("every algorithm name drives the NIC end to end and all flows complete")
    {
    }

  private:
    void DoRun() override
    {
        std::vector<std::string> names = LbConfig::AlgorithmNames();
        NS_TEST_ASSERT_MSG_GT(names.size(), 1u, "algorithm list");
        for (const std::string& name : names)
        {
            RunRecord r = RunLeafSpine(name, "", 1, 50000);
            for (uint32_t f = 0; f < 4; ++f)
            {
                NS_TEST_EXPECT_MSG_EQ(r.fct.count(f), 1u, name << ": flow " << f << " completed");
                // 50 packets of 1000 B; Go-Back-N may resend some after reordering.
                NS_TEST_EXPECT_MSG_GT_OR_EQ(r.entropies[f].size(), 50u, name << ": flow " << f);
            }
        }
    }
};

namespace
{
/// Outcome of one flow over a fabric with one slow path.
struct AsymOutcome
{
    bool completed{false};
    uint64_t slowBytes{0}; //!< bytes leaf 0 sent on its 10 Gbps uplink
    RdmaFlowRecord rec;
};

/**
 * host 0 -- leaf 2 =(spine 4 at 100 Gbps, spine 5 at 10 Gbps)= leaf 3 -- host 1; one 2 MB flow
 * from host 0 to host 1 under \p algorithm, RngRun \p run.
 */
AsymOutcome
RunAsymmetric(const std::string& algorithm, uint32_t run)
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(run);
    RdmaFabricHelper fabric;
    fabric.SetLoadBalancer(algorithm, "");
    fabric.CreateNodes(6, {2, 3, 4, 5});
    const DataRate fast("100Gbps");
    const DataRate slow("10Gbps");
    fabric.Link(0, 2, fast, MicroSeconds(1));
    fabric.Link(1, 3, fast, MicroSeconds(1));
    fabric.Link(2, 4, fast, MicroSeconds(1));
    fabric.Link(2, 5, slow, MicroSeconds(1));
    fabric.Link(3, 4, fast, MicroSeconds(1));
    fabric.Link(3, 5, slow, MicroSeconds(1));
    fabric.Finish();
    fabric.AssignStreams(0);
    const uint64_t size = 2000000;
    fabric.AddFlow(0, 0, 1, size, MicroSeconds(1));
    AsymOutcome out;
    fabric.GetNic(0)->TraceConnectWithoutContext(
        "FlowRecord",
        MakeBoundCallback(+[](AsymOutcome* o, const RdmaFlowRecord& r) {
                              o->completed = true;
                              o->rec = r;
                          },
                          &out));
    Simulator::Stop(MilliSeconds(50));
    Simulator::Run();
    out.slowBytes = fabric.GetSwitch(2)->GetPort(2)->GetTxBytes(); // leaf 2's port to spine 5
    Simulator::Destroy();
    return out;
}
} // namespace

/// Hopper probes a second path when its RTT rises and moves off a slow path; ECMP stays on it.
class HopperEscapesSlowPathTestCase : public TestCase
{
  public:
    HopperEscapesSlowPathTestCase()
        : TestCase("hopper probes and leaves a 10x slower path that ecmp stays on")
    {
    }

  private:
    void DoRun() override
    {
        uint32_t ecmpStuck = 0;
        uint32_t hopperSwitched = 0;
        double ecmpFctUs = 0;
        double hopperFctUs = 0;
        for (uint32_t run = 1; run <= 6; ++run)
        {
            AsymOutcome e = RunAsymmetric("ecmp", run);
            AsymOutcome h = RunAsymmetric("hopper", run);
            NS_TEST_ASSERT_MSG_EQ(e.completed, true, "ecmp run " << run);
            NS_TEST_ASSERT_MSG_EQ(h.completed, true, "hopper run " << run);
            ecmpFctUs += (e.rec.finish - e.rec.start).GetMicroSeconds();
            hopperFctUs += (h.rec.finish - h.rec.start).GetMicroSeconds();
            // ECMP pins the flow: all of it (2 MB + headers) or none of it crosses the slow path.
            bool stuck = e.slowBytes > 2000000;
            NS_TEST_EXPECT_MSG_EQ((stuck || e.slowBytes < 1000), true, "ecmp run " << run);
            ecmpStuck += stuck ? 1 : 0;
            // Hopper leaves the slow path: less than half the flow ever crosses it.
            NS_TEST_EXPECT_MSG_LT(h.slowBytes, 1000000u, "hopper run " << run);
            if (h.rec.pathSwitches > 0)
            {
                ++hopperSwitched;
                NS_TEST_EXPECT_MSG_GT(h.rec.probes, 0u, "switched without probing, run " << run);
            }
        }
        // A 2 MB flow takes ~1.7 ms on the 10 Gbps path and ~0.18 ms on the 100 Gbps one.
        NS_TEST_EXPECT_MSG_LT(hopperFctUs, 0.7 * ecmpFctUs, "mean FCT, hopper vs ecmp");
        NS_TEST_EXPECT_MSG_GT(ecmpStuck, 0u, "some ECMP run hashed onto the slow path");
        NS_TEST_EXPECT_MSG_GT(hopperSwitched, 0u, "some Hopper run switched paths");
    }
};

/// The rdma-lb test suite.
class RdmaLbTestSuite : public TestSuite
{
  public:
    RdmaLbTestSuite()
        : TestSuite("rdma-lb", UNIT)
    {
        AddTestCase(new LbConfigErrorTestCase, TestCase::QUICK);
        AddTestCase(new PanicGuardTestCase, TestCase::QUICK);
        AddTestCase(new HostLbGroupTestCase, TestCase::QUICK);
        AddTestCase(new EcmpFlowStabilityTestCase, TestCase::QUICK);
        AddTestCase(new SprayUsesAllUplinksTestCase, TestCase::QUICK);
        AddTestCase(new DeterminismTestCase, TestCase::QUICK);
        AddTestCase(new EveryAlgorithmRunsTestCase, TestCase::QUICK);
        AddTestCase(new HopperEscapesSlowPathTestCase, TestCase::QUICK);
    }
};

/// Static instance registering the suite.
static RdmaLbTestSuite g_rdmaLbTestSuite;
