/*
 * rdma-lb-scenario: tests of RdmaScenarioRunner (helper/rdma-scenario.h) on hand-built specs.
 *
 *  - outputs: fct.txt has ConWeave's 8 columns, the pair base RTTs are the reference's
 *    (8320 ns inter-rack, 4160 ns intra-rack on a 100G leaf-spine with 1 us links), the ideal
 *    FCT is the reference's formula, lone flows finish within 1% of their first-principles FCT,
 *    the ports are the reference's, flows.csv has its documented header and slowdown =
 *    max(1, fct/ideal);
 *  - dependencies: a flow with `after` starts exactly when its last predecessor's last byte
 *    was delivered, or at its own start time if that is later;
 *  - determinism: same seed -> byte-identical fct.txt and flows.csv; spraying with another
 *    seed -> different outputs;
 *  - ring AllReduce of 16 ranks on a 16x16 leaf-spine at 400 Gbps (one rank per ToR, the
 *    Themis paper's §5): CCT within 10% of the first-principles time (formula at the test);
 *  - bad specs are reported as one line naming the field (no abort).
 */
#include "rdma-lb-test-util.h"

#include "ns3/rdma-cc-dcqcn.h"
#include "ns3/rdma-recovery-gbn.h"
#include "ns3/rdma-recovery-irn.h"
#include "ns3/rdma-recovery-nicsr.h"
#include "ns3/rdma-scenario.h"
#include "ns3/rdma-switch.h"
#include "ns3/string.h"
#include "ns3/switch-mmu.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace ns3;

namespace
{

using rdmalbtest::AddSpecFlow;
using rdmalbtest::LeafSpineSpec;

/// Wire bytes of a message of \p size bytes in 1000-byte payloads (48 B of headers each).
uint64_t
WireBytes(uint64_t size)
{
    return size + (size + 999) / 1000 * 48;
}

/// Serialization time in ns (double) of \p bytes at \p bps.
double
Ser(uint64_t bytes, uint64_t bps)
{
    return static_cast<double>(bytes) * 8e9 / static_cast<double>(bps);
}

std::vector<std::string>
Lines(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
    {
        out.push_back(line);
    }
    return out;
}

} // namespace

/**
 * fct.txt / flows.csv on a 100G leaf-spine (2 leaves x 4 hosts, 2 spines, 1 us links).
 */
class ScenarioOutputsTestCase : public TestCase
{
  public:
    ScenarioOutputsTestCase()
        : TestCase("fct.txt and flows.csv: the reference's base RTTs, ideal FCT and ports")
    {
    }

  private:
    void DoRun() override
    {
        RdmaScenarioSpec s = LeafSpineSpec(2, 4, 2, 100000000000ULL, 1000);
        // Spaced out so that each flow is alone in the fabric.
        AddSpecFlow(s, 0, 1, 1000, 0);          // intra-rack, one packet
        AddSpecFlow(s, 0, 4, 100000, 100000);   // inter-rack, 100 packets
        AddSpecFlow(s, 2, 4, 1, 200000);        // inter-rack, size 1 (one 49-byte packet)
        AddSpecFlow(s, 0, 5, 54321, 300000);    // inter-rack, last packet 321 B
        RdmaScenarioRunner runner(s);
        std::string error;
        NS_TEST_ASSERT_MSG_EQ(runner.Run(&error), true, error);

        // The reference's numbers.
        NS_TEST_EXPECT_MSG_EQ(runner.GetPairRttNs(0, 4), 8320, "inter-rack base RTT");
        NS_TEST_EXPECT_MSG_EQ(runner.GetPairRttNs(0, 1), 4160, "intra-rack base RTT");
        NS_TEST_EXPECT_MSG_EQ(runner.GetPairBottleneckBps(0, 4), 100000000000ULL, "bottleneck");
        // The reference's ideal = baseRTT + (size + ceil(size/1000) x 48) x 8e9 / bw, integer ns.
        NS_TEST_EXPECT_MSG_EQ(runner.GetIdealFctNs(0, 1, 1000), 4160 + 83, "1000 B intra");
        NS_TEST_EXPECT_MSG_EQ(runner.GetIdealFctNs(0, 4, 100000), 8320 + 8384, "100 KB inter");
        NS_TEST_EXPECT_MSG_EQ(runner.GetIdealFctNs(2, 4, 1), 8320 + 3, "1 B inter");

        const auto& res = runner.GetFlowResults();
        NS_TEST_ASSERT_MSG_EQ(runner.GetCompletedFlows(), 4, "every flow completes");
        // First principles for a lone flow over h store-and-forward hops of rate R and delay d:
        // the NIC serializes all packets; each of the h-1 switches adds one packet time of the
        // last packet or, if there are several, of the full packet it queues behind; the data
        // and its 60-byte ACK each cross h links.
        const uint64_t R = 100000000000ULL;
        for (uint32_t i = 0; i < res.size(); ++i)
        {
            const RdmaScenarioFlow& f = s.flows[i];
            uint32_t hops = (f.src / 4 == f.dst / 4) ? 2 : 4;
            uint64_t last = f.sizeBytes % 1000 == 0 ? 1000 : f.sizeBytes % 1000;
            uint64_t sf = f.sizeBytes > 1000 ? 1048 : last + 48;
            double expected = Ser(WireBytes(f.sizeBytes), R) + (hops - 1) * Ser(sf, R) +
                              hops * 1000.0 + hops * (1000.0 + Ser(60, R));
            NS_TEST_EXPECT_MSG_EQ_TOL(static_cast<double>(res[i].fctNs), expected, 0.01 * expected,
                                      "flow " << i << " FCT from first principles");
            NS_TEST_EXPECT_MSG_EQ(res[i].idealNs, runner.GetIdealFctNs(f.src, f.dst, f.sizeBytes),
                                  "ideal of flow " << i);
            NS_TEST_EXPECT_MSG_EQ(res[i].startNs, f.startNs, "start of flow " << i);
            NS_TEST_EXPECT_MSG_EQ(res[i].delivered, true, "delivered " << i);
            NS_TEST_EXPECT_MSG_LT(res[i].deliveredNs, res[i].startNs + res[i].fctNs,
                                  "delivery precedes the last ACK");
        }

        // fct.txt: 8 columns, ConWeave's ports (sport per source from 10000, dport per
        // destination from 100, in flow order).
        const uint32_t sport[] = {10000, 10001, 10000, 10002};
        const uint32_t dport[] = {100, 100, 101, 100};
        std::vector<std::string> fct = Lines(runner.FctText());
        NS_TEST_ASSERT_MSG_EQ(fct.size(), 4, "one fct.txt line per completed flow");
        for (uint32_t i = 0; i < fct.size(); ++i)
        {
            std::istringstream in(fct[i]);
            std::vector<uint64_t> cols;
            std::string tok;
            while (in >> tok)
            {
                cols.push_back(std::stoull(tok));
            }
            NS_TEST_ASSERT_MSG_EQ(cols.size(), 8, "fct.txt line " << i << ": " << fct[i]);
            NS_TEST_EXPECT_MSG_EQ(cols[0], s.flows[i].src, "src");
            NS_TEST_EXPECT_MSG_EQ(cols[1], s.flows[i].dst, "dst");
            NS_TEST_EXPECT_MSG_EQ(cols[2], sport[i], "sport");
            NS_TEST_EXPECT_MSG_EQ(cols[3], dport[i], "dport");
            NS_TEST_EXPECT_MSG_EQ(cols[4], s.flows[i].sizeBytes, "size");
            NS_TEST_EXPECT_MSG_EQ(cols[5], res[i].startNs, "start");
            NS_TEST_EXPECT_MSG_EQ(cols[6], res[i].fctNs, "fct");
            NS_TEST_EXPECT_MSG_EQ(cols[7], res[i].idealNs, "ideal");
        }
        // flows.csv: the contract's header; slowdown = max(1, fct / ideal).
        std::vector<std::string> csv = Lines(runner.FlowsCsv());
        NS_TEST_ASSERT_MSG_EQ(csv.size(), 5, "header + 4 flows");
        NS_TEST_EXPECT_MSG_EQ(csv[0],
                              "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,"
                              "retx_pkts,nacks,path_switches,algorithm",
                              "flows.csv header");
        for (uint32_t i = 0; i < 4; ++i)
        {
            std::vector<std::string> c;
            std::stringstream ss(csv[i + 1]);
            std::string cell;
            while (std::getline(ss, cell, ','))
            {
                c.push_back(cell);
            }
            NS_TEST_ASSERT_MSG_EQ(c.size(), 12, "flows.csv columns");
            double want = std::max(1.0, double(res[i].fctNs) / double(res[i].idealNs));
            NS_TEST_EXPECT_MSG_EQ_TOL(std::stod(c[7]), want, 1e-6 * want, "slowdown");
            NS_TEST_EXPECT_MSG_EQ(c[11], "ecmp", "algorithm");
        }
        std::string summary = runner.SummaryJson();
        NS_TEST_EXPECT_MSG_NE(summary.find("\"flows_completed\": 4,"), std::string::npos, summary);
        NS_TEST_EXPECT_MSG_NE(summary.find("\"algorithm\": \"ecmp\","), std::string::npos, summary);
    }
};

/**
 * Dependent flows start when their predecessors' last bytes arrive.
 */
class ScenarioDependenciesTestCase : public TestCase
{
  public:
    ScenarioDependenciesTestCase()
        : TestCase("flows with `after` start at max(start, predecessors' delivery)")
    {
    }

  private:
    void DoRun() override
    {
        RdmaScenarioSpec s = LeafSpineSpec(2, 4, 2, 100000000000ULL, 1000);
        uint32_t a = AddSpecFlow(s, 0, 4, 200000, 1000);
        uint32_t b = AddSpecFlow(s, 1, 5, 50000, 0, {a});        // start as soon as a is delivered
        uint32_t c = AddSpecFlow(s, 2, 6, 50000, 500000, {a});   // its own start is later
        uint32_t d = AddSpecFlow(s, 3, 7, 10000, 0, {b, c});     // waits for the later of b, c
        uint32_t e = AddSpecFlow(s, 4, 0, 10000, 0, {a, a});     // a duplicate predecessor
        RdmaScenarioCollective coll;
        coll.group = 0;
        coll.kind = "permutation";
        coll.flowIds = {a, b, c, d};
        s.collectives.push_back(coll);
        RdmaScenarioRunner runner(s);
        std::string error;
        NS_TEST_ASSERT_MSG_EQ(runner.Run(&error), true, error);
        const auto& r = runner.GetFlowResults();
        NS_TEST_ASSERT_MSG_EQ(runner.GetCompletedFlows(), 5, "every flow completes");
        // a needs at least its serialization + 4 links before its last byte arrives.
        NS_TEST_EXPECT_MSG_GT(r[a].deliveredNs, 1000 + uint64_t(Ser(WireBytes(200000), 100000000000ULL)) + 4000,
                              "a's delivery");
        NS_TEST_EXPECT_MSG_EQ(r[b].startNs, r[a].deliveredNs, "b starts at a's delivery");
        NS_TEST_EXPECT_MSG_LT(r[b].startNs, r[a].startNs + r[a].fctNs,
                              "b does not wait for a's last ACK");
        NS_TEST_EXPECT_MSG_EQ(r[c].startNs, 500000, "c starts at its own later start time");
        NS_TEST_EXPECT_MSG_EQ(r[d].startNs, std::max(r[b].deliveredNs, r[c].deliveredNs),
                              "d starts at the later of b's and c's deliveries");
        NS_TEST_EXPECT_MSG_EQ(r[e].startNs, r[a].deliveredNs, "duplicate predecessor counted once");
        // fct.txt measures from the actual start.
        NS_TEST_EXPECT_MSG_LT(r[d].fctNs, 50000, "d's FCT is measured from its actual start");
        const auto& cr = runner.GetCollectiveResults();
        NS_TEST_ASSERT_MSG_EQ(cr.size(), 1, "one group");
        NS_TEST_EXPECT_MSG_EQ(cr[0].complete, true, "group complete");
        NS_TEST_EXPECT_MSG_EQ(cr[0].startNs, 1000, "CCT starts at the first start");
        NS_TEST_EXPECT_MSG_EQ(cr[0].finishNs, r[d].deliveredNs, "CCT ends at the last delivery");
        std::vector<std::string> lines = Lines(runner.CollectivesCsv());
        NS_TEST_ASSERT_MSG_EQ(lines.size(), 2, "header + one group");
        NS_TEST_EXPECT_MSG_EQ(lines[0], "group,algorithm,start_ns,finish_ns", "header");
        NS_TEST_EXPECT_MSG_EQ(lines[1], "0,ecmp,1000," + std::to_string(r[d].deliveredNs), "row");
    }
};

/**
 * Same seed, same bytes; another seed with a random component, other bytes.
 */
class ScenarioDeterminismTestCase : public TestCase
{
  public:
    ScenarioDeterminismTestCase()
        : TestCase("same seed gives identical fct.txt and flows.csv; spray with another seed differs")
    {
    }

  private:
    static RdmaScenarioSpec Spec(uint64_t seed)
    {
        RdmaScenarioSpec s = LeafSpineSpec(2, 4, 2, 100000000000ULL, 1000);
        s.lb = LbConfig::ParseOrAbort("spray", "");
        s.run.seed = seed;
        // 2:1 incast-ish mix across the spines: reordering and queues depend on the paths.
        for (uint32_t h = 0; h < 4; ++h)
        {
            AddSpecFlow(s, h, 4 + h, 300000, 1000 * h);
            AddSpecFlow(s, 4 + h, (h + 1) % 4, 200000, 500 * h);
        }
        return s;
    }

    void DoRun() override
    {
        std::string fct[3];
        std::string csv[3];
        const uint64_t seeds[3] = {1, 1, 2};
        for (int i = 0; i < 3; ++i)
        {
            RdmaScenarioRunner runner(Spec(seeds[i]));
            std::string error;
            NS_TEST_ASSERT_MSG_EQ(runner.Run(&error), true, error);
            NS_TEST_ASSERT_MSG_EQ(runner.GetCompletedFlows(), 8, "every flow completes");
            fct[i] = runner.FctText();
            csv[i] = runner.FlowsCsv();
        }
        NS_TEST_EXPECT_MSG_EQ(fct[0], fct[1], "same seed: identical fct.txt");
        NS_TEST_EXPECT_MSG_EQ(csv[0], csv[1], "same seed: identical flows.csv");
        NS_TEST_EXPECT_MSG_NE(fct[0], fct[2], "other seed: different fct.txt");
        NS_TEST_EXPECT_MSG_NE(csv[0], csv[2], "other seed: different flows.csv");
    }
};

/**
 * Host algorithms starved of feedback: a sprayer on a transport that leaves most arrivals
 * unanswered is warned about in summary.json's notes, naming the key that fixes it; on IRN it
 * is not. Whack-a-Mole on a leaf-spine also notes its path-index wiring (num_paths = the 2
 * spines).
 */
class ScenarioStarvationWarningTestCase : public TestCase
{
  public:
    ScenarioStarvationWarningTestCase()
        : TestCase("reps and whack-a-mole on gbn or nic-sr: a warning naming recovery = irn")
    {
    }

  private:
    void DoRun() override
    {
        // (algorithm, warned on gbn and nic-sr, wires path-index routing)
        const std::vector<std::tuple<std::string, bool, bool>> algorithms = {
            {"reps", true, false},
            {"whack-a-mole", true, true},
            {"ecmp", false, false}};
        for (const auto& [lb, sprayer, isWam] : algorithms)
        {
            for (TypeId recovery :
                 {RdmaGoBackN::GetTypeId(), RdmaNicSr::GetTypeId(), RdmaIrn::GetTypeId()})
            {
                RdmaScenarioSpec s = LeafSpineSpec(2, 2, 2, 100000000000ULL, 1000);
                s.lb = LbConfig::ParseOrAbort(lb, "");
                RdmaTransportSetting& r = s.transport.Get("ns3::RdmaNic", "LossRecovery");
                r.text = recovery.GetName();
                r.summaryText = recovery.GetName();
                AddSpecFlow(s, 0, 2, 100000, 0);
                RdmaScenarioRunner runner(s);
                std::string error;
                NS_TEST_ASSERT_MSG_EQ(runner.Run(&error), true, error);
                const std::string json = runner.SummaryJson();
                const bool warned = json.find("starves it of signal") != std::string::npos &&
                                    json.find("recovery = \\\"irn\\\"") != std::string::npos;
                const bool expect = sprayer && recovery != RdmaIrn::GetTypeId();
                NS_TEST_EXPECT_MSG_EQ(warned,
                                      expect,
                                      lb << " on " << recovery.GetName());
                const bool wired = json.find("num_paths = 2 (the equal-cost paths)") !=
                                   std::string::npos;
                NS_TEST_EXPECT_MSG_EQ(wired, isWam, lb);
            }
        }
    }
};

/**
 * Ring AllReduce, 16 ranks, one per ToR of a 16x16 leaf-spine at 400 Gbps (Themis §5).
 *
 * The ring runs 2(N-1) steps (reduce-scatter then all-gather); in step k rank i sends a chunk
 * of size/N bytes to rank i+1 once it has received step k-1's chunk from rank i-1 (and its own
 * step k-1 send is through). Without contention every step takes, from first principles,
 *   T_step = W(c) x 8 / B      the NIC serializes the chunk's W(c) = c + ceil(c/1000) x 48 bytes
 *          + 3 x 1048 x 8 / B     its last packet is store-and-forwarded by the source ToR, the
 *                                  spine and the destination ToR, each adding the time of the
 *                                  full 1048-byte packet it queues behind
 *          + 4 x d                 and crosses 4 links of delay d,
 * so CCT = 2(N-1) x T_step = 2(N-1)/N x size x (1 + 48/1000) x 8 / B + 2(N-1) x (4d + 3 x 1048 x 8 / B).
 * (The receiver's ACK is not on the critical path: the next step starts on delivery.)
 */
class ScenarioRingAllReduceTestCase : public TestCase
{
  public:
    ScenarioRingAllReduceTestCase()
        : TestCase("ring AllReduce, 16 ranks on a 16x16 leaf-spine at 400G: CCT from first principles")
    {
    }

  private:
    void DoRun() override
    {
        const uint32_t N = 16;
        const uint64_t B = 400000000000ULL;
        const uint64_t d = 1000;
        const uint64_t size = 2 * 1024 * 1024; // scaled message: 2 MiB, chunks of 128 KiB
        const uint64_t chunk = size / N;
        RdmaScenarioSpec s = LeafSpineSpec(16, 16, 16, B, d);
        std::vector<std::vector<uint32_t>> id(2 * (N - 1), std::vector<uint32_t>(N));
        RdmaScenarioCollective coll;
        coll.group = 0;
        coll.kind = "allreduce-ring";
        for (uint32_t k = 0; k < 2 * (N - 1); ++k)
        {
            for (uint32_t i = 0; i < N; ++i)
            {
                std::vector<uint32_t> after;
                if (k > 0)
                {
                    after = {id[k - 1][(i + N - 1) % N], id[k - 1][i]};
                }
                // Rank i on the first host of leaf i.
                id[k][i] = AddSpecFlow(s, i * 16, ((i + 1) % N) * 16, chunk, 0, after);
                coll.flowIds.push_back(id[k][i]);
            }
        }
        s.collectives.push_back(coll);
        RdmaScenarioRunner runner(s);
        std::string error;
        NS_TEST_ASSERT_MSG_EQ(runner.Run(&error), true, error);
        NS_TEST_ASSERT_MSG_EQ(runner.GetCompletedFlows(), 2 * (N - 1) * N, "every flow completes");
        const auto& cr = runner.GetCollectiveResults();
        NS_TEST_ASSERT_MSG_EQ(cr.size(), 1, "one group");
        NS_TEST_ASSERT_MSG_EQ(cr[0].complete, true, "complete");
        double step = Ser(WireBytes(chunk), B) + 3 * Ser(1048, B) + 4.0 * d;
        double expected = 2.0 * (N - 1) * step;
        double cct = static_cast<double>(cr[0].finishNs - cr[0].startNs);
        std::printf("ring allreduce: CCT %.0f ns, first-principles %.0f ns (%+.2f%%)\n", cct,
                    expected, 100.0 * (cct - expected) / expected);
        NS_TEST_EXPECT_MSG_EQ_TOL(cct, expected, 0.10 * expected, "CCT within 10%");
        // Bandwidth term alone is a strict lower bound.
        NS_TEST_EXPECT_MSG_GT(cct, 2.0 * (N - 1) / N * Ser(WireBytes(size), B), "above the bandwidth bound");
    }
};

/// Comma-separated unsigned integers of one CSV line.
static std::vector<uint64_t>
CsvInts(const std::string& line)
{
    std::vector<uint64_t> c;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ','))
    {
        c.push_back(std::stoull(cell));
    }
    return c;
}

/**
 * rate.txt / retx.txt: a 4:1 incast at 100 Gbps under DCQCN. Every sample lists each flow that
 * has sent and not completed, at a rate between DCQCN's floor and the line rate; the incast's
 * ECN marks must cut some rate below the line rate; the run's data packets sent never decrease
 * and never exceed the workload's packets (no loss: PFC on, so no retransmission).
 */
class ScenarioRateTraceTestCase : public TestCase
{
  public:
    ScenarioRateTraceTestCase()
        : TestCase("rate.txt and retx.txt under a 4:1 incast")
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t lineBps = 100000000000ULL;
        RdmaScenarioSpec s = LeafSpineSpec(2, 4, 2, lineBps, 1000);
        s.run.rateTraceNs = 5000;
        for (uint32_t h = 4; h < 8; ++h)
        {
            AddSpecFlow(s, h, 0, 1000000, 0);
        }
        RdmaScenarioRunner runner(s);
        std::string error;
        NS_TEST_ASSERT_MSG_EQ(runner.Run(&error), true, error);
        NS_TEST_ASSERT_MSG_EQ(runner.GetCompletedFlows(), 4, "every flow completes");
        std::vector<std::string> rate = Lines(runner.RateText());
        NS_TEST_ASSERT_MSG_GT(rate.size(), 1, "rate samples");
        NS_TEST_EXPECT_MSG_EQ(rate[0], "time_ns,flow,rate_bps", "header");
        uint64_t lowest = lineBps;
        std::map<uint64_t, uint32_t> perSample;
        for (size_t i = 1; i < rate.size(); ++i)
        {
            std::vector<uint64_t> c = CsvInts(rate[i]);
            NS_TEST_ASSERT_MSG_EQ(c.size(), 3, rate[i]);
            NS_TEST_EXPECT_MSG_EQ(c[0] % 5000, 0, "sampled every 5 us: " << rate[i]);
            NS_TEST_EXPECT_MSG_LT(c[1], 4, "a flow of the workload: " << rate[i]);
            NS_TEST_EXPECT_MSG_LT_OR_EQ(c[2], lineBps, "at most the line rate: " << rate[i]);
            NS_TEST_EXPECT_MSG_GT_OR_EQ(c[2], s.transport.Get("ns3::RdmaCongestionControl", "MinRate").uint, "DCQCN's floor: " << rate[i]);
            lowest = std::min(lowest, c[2]);
            ++perSample[c[0]];
        }
        NS_TEST_EXPECT_MSG_LT(lowest, lineBps, "the incast's ECN marks cut a rate");
        for (const auto& [t, n] : perSample)
        {
            NS_TEST_EXPECT_MSG_LT_OR_EQ(n, 4, "at most the 4 flows at " << t);
        }
        std::vector<std::string> retx = Lines(runner.RetxText());
        NS_TEST_ASSERT_MSG_GT(retx.size(), 1, "retx samples");
        NS_TEST_EXPECT_MSG_EQ(retx[0], "time_ns,data_pkts,retx_pkts", "header");
        uint64_t prev = 0;
        for (size_t i = 1; i < retx.size(); ++i)
        {
            std::vector<uint64_t> c = CsvInts(retx[i]);
            NS_TEST_ASSERT_MSG_EQ(c.size(), 3, retx[i]);
            NS_TEST_EXPECT_MSG_GT_OR_EQ(c[1], prev, "cumulative: " << retx[i]);
            NS_TEST_EXPECT_MSG_LT_OR_EQ(c[1], 4 * 1000, "at most the workload's 4 x 1000 packets");
            NS_TEST_EXPECT_MSG_EQ(c[2], 0, "lossless: no retransmission");
            prev = c[1];
        }
        NS_TEST_EXPECT_MSG_GT(prev, 0, "packets were sent before the last sample");
    }
};

/**
 * pfc.txt: a 7:1 incast into a small buffer makes the switches pause; every line is ConWeave's
 * `time node type port pause|resume`, logged where the frame is received.
 */
class ScenarioPfcTraceTestCase : public TestCase
{
  public:
    ScenarioPfcTraceTestCase()
        : TestCase("pfc.txt, queue.txt and uplink.txt under a 7:1 incast")
    {
    }

  private:
    void DoRun() override
    {
        RdmaScenarioSpec s = LeafSpineSpec(2, 4, 2, 100000000000ULL, 1000);
        s.transport.Get("ns3::SwitchMmu", "BufferSize").uint = 1000000;
        s.run.pfcTrace = true;
        s.run.queueTrace = true;
        s.run.monitorIntervalNs = 10000;
        s.run.flowgenStopNs = 1000000;
        for (uint32_t h = 1; h < 8; ++h)
        {
            AddSpecFlow(s, h, 0, 500000, 0);
        }
        RdmaScenarioRunner runner(s);
        std::string error;
        NS_TEST_ASSERT_MSG_EQ(runner.Run(&error), true, error);
        NS_TEST_ASSERT_MSG_EQ(runner.GetCompletedFlows(), 7, "every flow completes (lossless)");
        std::vector<std::string> lines = Lines(runner.PfcText());
        NS_TEST_ASSERT_MSG_GT(lines.size(), 0, "the incast triggers PFC");
        uint64_t pauses = 0;
        uint64_t prev = 0;
        for (const std::string& line : lines)
        {
            std::istringstream in(line);
            std::vector<uint64_t> c;
            std::string tok;
            while (in >> tok)
            {
                c.push_back(std::stoull(tok));
            }
            NS_TEST_ASSERT_MSG_EQ(c.size(), 5, line);
            NS_TEST_EXPECT_MSG_GT_OR_EQ(c[0], prev, "time order");
            prev = c[0];
            bool isSwitch = c[1] >= 8;
            NS_TEST_EXPECT_MSG_EQ(c[2], (isSwitch ? 1 : 0), "node type of " << c[1]);
            NS_TEST_EXPECT_MSG_GT_OR_EQ(c[3], 1, "ports are 1-based");
            NS_TEST_EXPECT_MSG_LT_OR_EQ(c[3], (isSwitch ? 6 : 1), "port of node " << c[1]);
            NS_TEST_EXPECT_MSG_LT_OR_EQ(c[4], 1, "type");
            pauses += c[4];
        }
        // queue.txt: `time node port bytes` for ports with queued bytes; the incast's
        // bottleneck, leaf 8's port to host 0 (port 1), must show a standing queue.
        uint64_t maxQueue = 0;
        for (const std::string& line : Lines(runner.QueueText()))
        {
            std::istringstream in(line);
            uint64_t t = 0, node = 0, port = 0, bytes = 0;
            NS_TEST_ASSERT_MSG_EQ(bool(in >> t >> node >> port >> bytes), true, line);
            NS_TEST_EXPECT_MSG_EQ(t % 10000, 0, "sampled every 10 us");
            if (node == 8 && port == 1)
            {
                maxQueue = std::max(maxQueue, bytes);
            }
        }
        NS_TEST_EXPECT_MSG_GT(maxQueue, 10000, "queue at the incast's bottleneck");
        // uplink.txt (ConWeave's uplink monitor): `time,tor,port,cumulative_tx_bytes` for the ToR
        // ports towards the spines (ports 5 and 6 of leaves 8 and 9); cumulative, so never
        // decreasing.
        std::map<std::pair<uint64_t, uint64_t>, uint64_t> last;
        std::vector<std::string> up = Lines(runner.UplinkText());
        NS_TEST_ASSERT_MSG_GT(up.size(), 0, "uplink samples");
        for (const std::string& line : up)
        {
            std::vector<uint64_t> c;
            std::stringstream ss(line);
            std::string cell;
            while (std::getline(ss, cell, ','))
            {
                c.push_back(std::stoull(cell));
            }
            NS_TEST_ASSERT_MSG_EQ(c.size(), 4, line);
            NS_TEST_EXPECT_MSG_EQ((c[1] == 8 || c[1] == 9) && (c[2] == 5 || c[2] == 6), true, line);
            uint64_t& prevBytes = last[std::make_pair(c[1], c[2])];
            NS_TEST_EXPECT_MSG_GT_OR_EQ(c[3], prevBytes, "cumulative: " << line);
            prevBytes = c[3];
        }
        NS_TEST_EXPECT_MSG_EQ(last.size(), 4, "two uplinks on each of two leaves");
        // Leaf 9's uplinks carried the four remote senders' 2 MB of data (plus headers).
        uint64_t leaf9Up = last[std::make_pair(9, 5)] + last[std::make_pair(9, 6)];
        NS_TEST_EXPECT_MSG_GT(leaf9Up, 4 * 500000, "uplink bytes");
        std::string summary = runner.SummaryJson();
        NS_TEST_EXPECT_MSG_NE(summary.find("\"pfc_pauses_received\": " + std::to_string(pauses) + ","),
                              std::string::npos, "summary counts the pauses: " << pauses);
        NS_TEST_EXPECT_MSG_NE(summary.find("\"pfc_resumes_received\": " +
                                           std::to_string(lines.size() - pauses) + ","),
                              std::string::npos, "summary counts the resumes");
    }
};

/**
 * port_bytes.csv (run.portBytes): every switch-to-switch port once, by switch and port, with
 * the bytes it sent; on a lossless two-leaf fabric what one leaf sends up, the spines send down
 * to the other, byte for byte.
 */
class ScenarioPortBytesTestCase : public TestCase
{
  public:
    ScenarioPortBytesTestCase()
        : TestCase("port_bytes.csv: every switch-to-switch port, bytes conserved across the spines")
    {
    }

  private:
    void DoRun() override
    {
        // Hosts 0-3, leaves 4-5 (ports 1-2 to hosts, 3-4 to spines), spines 6-7 (port 1 to
        // leaf 4, port 2 to leaf 5); one flow each way between the leaves.
        RdmaScenarioSpec s = LeafSpineSpec(2, 2, 2, 100000000000ULL, 1000);
        s.run.flowgenStopNs = 1000000;
        AddSpecFlow(s, 0, 2, 200000, 0);
        AddSpecFlow(s, 3, 1, 100000, 0);
        {
            RdmaScenarioRunner off(s);
            std::string error;
            NS_TEST_ASSERT_MSG_EQ(off.Run(&error), true, error);
            NS_TEST_EXPECT_MSG_EQ(off.PortBytesCsv(), "switch,port,peer,tx_bytes\n",
                                  "off: header only");
        }
        s.run.portBytes = true;
        RdmaScenarioRunner runner(s);
        std::string error;
        NS_TEST_ASSERT_MSG_EQ(runner.Run(&error), true, error);
        NS_TEST_ASSERT_MSG_EQ(runner.GetCompletedFlows(), 2, "both flows complete");
        std::vector<std::string> lines = Lines(runner.PortBytesCsv());
        NS_TEST_ASSERT_MSG_EQ(lines.size(), 9u, "header + 2 leaves x 2 + 2 spines x 2 ports");
        NS_TEST_EXPECT_MSG_EQ(lines[0], "switch,port,peer,tx_bytes", "header");
        std::map<std::pair<uint64_t, uint64_t>, uint64_t> bytes; // (from, to) -> bytes
        std::vector<std::string> keys;
        for (size_t i = 1; i < lines.size(); ++i)
        {
            std::vector<uint64_t> c;
            std::stringstream ss(lines[i]);
            std::string cell;
            while (std::getline(ss, cell, ','))
            {
                c.push_back(std::stoull(cell));
            }
            NS_TEST_ASSERT_MSG_EQ(c.size(), 4u, lines[i]);
            bytes[std::make_pair(c[0], c[2])] += c[3];
            keys.push_back(std::to_string(c[0]) + ":" + std::to_string(c[1]) + ">" +
                           std::to_string(c[2]));
        }
        std::string order;
        for (const std::string& k : keys)
        {
            order += k + " ";
        }
        NS_TEST_EXPECT_MSG_EQ(order, "4:3>6 4:4>7 5:3>6 5:4>7 6:1>4 6:2>5 7:1>4 7:2>5 ",
                              "every switch-to-switch port once, by switch and port");
        const uint64_t up4 = bytes[std::make_pair(4, 6)] + bytes[std::make_pair(4, 7)];
        const uint64_t up5 = bytes[std::make_pair(5, 6)] + bytes[std::make_pair(5, 7)];
        NS_TEST_EXPECT_MSG_GT_OR_EQ(up4, WireBytes(200000), "leaf 4 sent flow 0's data up");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(up5, WireBytes(100000), "leaf 5 sent flow 1's data up");
        const uint64_t down5 = bytes[std::make_pair(6, 5)] + bytes[std::make_pair(7, 5)];
        const uint64_t down4 = bytes[std::make_pair(6, 4)] + bytes[std::make_pair(7, 4)];
        NS_TEST_EXPECT_MSG_EQ(down5, up4, "leaf 4's bytes reach leaf 5");
        NS_TEST_EXPECT_MSG_EQ(down4, up5, "leaf 5's bytes reach leaf 4");
    }
};

/**
 * Bad specs: one line naming the field, no abort.
 */
/**
 * The table of transport parameters (rust-lb/scenario/src/transport_params.rs) as the scenario
 * program receives it: every setting names an attribute of its TypeId (a NIC, switch or MMU,
 * or a loss recovery or congestion control a NIC creates), whose default is the setting's
 * value (the attribute defaults read the same table; the NIC's components are its factory
 * attributes, of the TypeId the table names), and a changed setting lands on the object
 * through the generic path (RdmaTransportSetting::Value, SetAttribute, or the NIC's factory of
 * that type or of a type derived from it) -- on that NIC's objects only.
 */
class ScenarioTransportTableTestCase : public TestCase
{
  public:
    ScenarioTransportTableTestCase()
        : TestCase("every transport setting is its object's attribute, with the table's default")
    {
    }

  private:
    void DoRun() override
    {
        RdmaScenarioTransport t;
        // 43 attribute settings: the 31 summary.json lists, and VarWin, TargetUtil, MiThresh,
        // FastReact, MultiRate, SampleFeedback, DctcpRateAI, IntMulti (HPCC and switch), the
        // MMU's IngressAlpha (pfc_alpha), IRN's IrnQpPerPath and the switch's AckHighPriority.
        NS_TEST_ASSERT_MSG_EQ(t.attributes.size(), 43u, "settings of the table");
        for (const RdmaTransportSetting& a : t.attributes)
        {
            TypeId tid;
            NS_TEST_ASSERT_MSG_EQ(TypeId::LookupByNameFailSafe(a.typeId, &tid),
                                  true,
                                  "no TypeId " << a.typeId);
            TypeId::AttributeInformation info;
            NS_TEST_ASSERT_MSG_EQ(tid.LookupAttributeByName(a.name, &info),
                                  true,
                                  a.typeId << " lacks " << a.name);
            NS_TEST_EXPECT_MSG_EQ(info.initialValue->SerializeToString(info.checker),
                                  a.Value()->SerializeToString(info.checker),
                                  "default of " << a.typeId << "::" << a.name);
            // The setting names the TypeId that declares the attribute, not one that inherits
            // it: what Config::SetDefault(typeId::name) needs.
            bool own = false;
            for (std::size_t i = 0; i < tid.GetAttributeN(); ++i)
            {
                own = own || tid.GetAttribute(i).name == a.name;
            }
            NS_TEST_EXPECT_MSG_EQ(own, true, a.typeId << " declares " << a.name);
        }
        // A knob of one scheme is that scheme's attribute alone.
        TypeId::AttributeInformation info;
        NS_TEST_EXPECT_MSG_EQ(RdmaNic::GetTypeId().LookupAttributeByName("L2ChunkSize", &info),
                              false,
                              "L2ChunkSize is Go-Back-N's, not the NIC's");
        NS_TEST_EXPECT_MSG_EQ(RdmaIrn::GetTypeId().LookupAttributeByName("L2ChunkSize", &info),
                              false,
                              "nor IRN's");
        NS_TEST_EXPECT_MSG_EQ(RdmaIrn::GetTypeId().LookupAttributeByName("NackInterval", &info),
                              true,
                              "NackInterval: RdmaRoceRecovery's, so IRN's too");

        RdmaTransportSetting& nack = t.Get("ns3::RdmaRoceRecovery", "NackInterval");
        NS_TEST_ASSERT_MSG_EQ(nack.kind, RdmaTransportSetting::TIME_NS, "a time in ns");
        NS_TEST_EXPECT_MSG_EQ(nack.uint, 4000u, "run.py's 4 us");
        nack.uint = 8000;
        RdmaTransportSetting& chunk = t.Get("ns3::RdmaGoBackN", "L2ChunkSize");
        chunk.uint = 2048;
        Ptr<RdmaNic> nic = CreateObject<RdmaNic>();
        Ptr<RdmaNic> other = CreateObject<RdmaNic>();
        rdmalbtest::SetComponent(nic, nack.typeId, nack.name, *nack.Value());
        rdmalbtest::SetComponent(nic, chunk.typeId, chunk.name, *chunk.Value());
        TimeValue v;
        nic->GetLossRecovery()->GetAttribute("NackInterval", v);
        NS_TEST_EXPECT_MSG_EQ(v.Get(), MicroSeconds(8), "the changed setting, on Go-Back-N");
        UintegerValue u;
        nic->GetLossRecovery()->GetAttribute("L2ChunkSize", u);
        NS_TEST_EXPECT_MSG_EQ(u.Get(), 2048u, "the changed Go-Back-N setting");
        other->GetLossRecovery()->GetAttribute("NackInterval", v);
        NS_TEST_EXPECT_MSG_EQ(v.Get(), MicroSeconds(4), "another NIC keeps the default");
        // The base class's setting reaches IRN too.
        Ptr<RdmaNic> irn = CreateObject<RdmaNic>();
        irn->SetAttribute("LossRecovery", StringValue("ns3::RdmaIrn"));
        rdmalbtest::SetComponent(irn, nack.typeId, nack.name, *nack.Value());
        NS_TEST_EXPECT_MSG_EQ(irn->GetLossRecovery()->GetInstanceTypeId(),
                              RdmaIrn::GetTypeId(),
                              "LossRecovery irn creates RdmaIrn");
        irn->GetLossRecovery()->GetAttribute("NackInterval", v);
        NS_TEST_EXPECT_MSG_EQ(v.Get(), MicroSeconds(8), "RdmaRoceRecovery's setting, on IRN");
        // A congestion-control knob lands on the algorithm the NIC creates.
        Ptr<RdmaNic> dcqcn = CreateObject<RdmaNic>();
        RdmaTransportSetting& rdi = t.Get("ns3::RdmaDcqcn", "RateDecreaseInterval");
        rdi.uint = 8000;
        rdmalbtest::SetComponent(dcqcn, rdi.typeId, rdi.name, *rdi.Value());
        NS_TEST_EXPECT_MSG_EQ(dcqcn->GetCongestionControl()->GetInstanceTypeId(),
                              RdmaDcqcn::GetTypeId(),
                              "CongestionControl's default creates RdmaDcqcn");
        dcqcn->GetCongestionControl()->GetAttribute("RateDecreaseInterval", v);
        NS_TEST_EXPECT_MSG_EQ(v.Get(), MicroSeconds(8), "the changed DCQCN setting");
        NS_TEST_EXPECT_MSG_EQ(t.Recovery(), RdmaGoBackN::GetTypeId(), "the table's default");
        NS_TEST_EXPECT_MSG_EQ(t.Get("ns3::RdmaNic", "LossRecovery").summaryText,
                              "gbn",
                              "summary.json's name of it");
        NS_TEST_EXPECT_MSG_EQ(t.Cc(), RdmaDcqcn::GetTypeId(), "the table's default");
        NS_TEST_EXPECT_MSG_EQ(t.Uet(), false, "RoCE");
        t.Get("ns3::RdmaNic", "LossRecovery").text = "ns3::RdmaIrn";
        NS_TEST_EXPECT_MSG_EQ(t.Recovery(), RdmaIrn::GetTypeId(), "a TypeId name Recovery reads");
        t.Get("ns3::RdmaNic", "LossRecovery").text = "ns3::RdmaUetRecovery";
        NS_TEST_EXPECT_MSG_EQ(t.Uet(), true, "the uet transport is its loss recovery");
        for (Ptr<RdmaNic> n : {nic, other, irn, dcqcn})
        {
            n->Dispose();
        }
    }
};

class ScenarioBadSpecTestCase : public TestCase
{
  public:
    ScenarioBadSpecTestCase()
        : TestCase("bad specs are reported naming the field")
    {
    }

  private:
    void Expect(RdmaScenarioSpec s, const std::string& needle)
    {
        RdmaScenarioRunner runner(s);
        std::string error;
        bool ok = runner.Run(&error);
        NS_TEST_EXPECT_MSG_EQ(ok, false, "must fail: " << needle);
        NS_TEST_EXPECT_MSG_NE(error.find(needle), std::string::npos, error);
        NS_TEST_EXPECT_MSG_EQ(error.find('\n'), std::string::npos, "one line: " << error);
    }

    void DoRun() override
    {
        RdmaScenarioSpec base = LeafSpineSpec(2, 2, 1, 100000000000ULL, 1000);
        AddSpecFlow(base, 0, 2, 1000, 0);
        {
            RdmaScenarioSpec s = base;
            s.flows[0].dst = 4; // a leaf
            Expect(s, "flows[0].dst: node 4 is not a host");
        }
        {
            RdmaScenarioSpec s = base;
            AddSpecFlow(s, 1, 3, 1000, 0, {5});
            Expect(s, "flows[1].after: flow 5 is not an earlier flow");
        }
        {
            RdmaScenarioSpec s = base;
            s.links.push_back({0, 5, 25000000000ULL, 1000, 0.0});
            Expect(s, "host 0 has links of different rates (100000000000 and 25000000000 bps)");
        }
        {
            RdmaScenarioSpec s = base;
            s.links.push_back({0, 1, 100000000000ULL, 1000, 0.0});
            Expect(s, "host 0 has more than one link and not all to switches");
        }
        {
            RdmaScenarioSpec s = base;
            s.links[5].rateBps = 123000000000ULL;
            Expect(s, "transport.ecn: no KMIN/KMAX/PMAX entry for rate 123000000000");
        }
        {
            RdmaScenarioSpec s = base;
            s.lb = nullptr;
            Expect(s, "lb: no load-balancing configuration");
        }
        {
            RdmaScenarioSpec s = base;
            s.run.linkEvents.push_back({10, 0, 4, true, true, 0});
            Expect(s, "run.link_events[0]: node 0 is not a switch");
        }
        {
            RdmaScenarioSpec s = base;
            s.flows[0].sizeBytes = 0;
            Expect(s, "flows[0].size_bytes");
        }
        {
            RdmaScenarioSpec s = base;
            s.run.linkEvents.push_back({10, 0, 3, true});
            Expect(s, "run.link_events[0]: no link between nodes 0 and 3");
        }
        {
            // The pair table keeps a path's one-way delay in 32-bit ns: 5 s on host 0's link
            // is more than it holds, and the run says so rather than wrapping the base RTT.
            RdmaScenarioSpec s = base;
            s.links[0].delayNs = 5000000000ULL;
            Expect(s, "to host 0: a one-way delay or serialisation sum of 5000001000 ns");
        }
    }
};

/// \ingroup rdma-lb
/// The partition of a run over MPI ranks (RdmaScenarioRunner::PartitionNodes): ToRs in
/// contiguous groups, hosts with their ToR, a fat tree's aggregation switches with their pod
/// (no ToR link crosses ranks), spines and cores round-robin. Counted on a k = 4 fat tree and a
/// leaf-spine, 2 ranks.
class ScenarioPartitionTestCase : public TestCase
{
  public:
    ScenarioPartitionTestCase()
        : TestCase("scenario: MPI partition keeps a fat tree's pods whole")
    {
    }

  private:
    static uint32_t CrossLinks(const RdmaScenarioSpec& s, const std::vector<uint32_t>& rank)
    {
        uint32_t n = 0;
        for (const RdmaScenarioLink& l : s.links)
        {
            n += rank[l.a] != rank[l.b] ? 1 : 0;
        }
        return n;
    }

    void DoRun() override
    {
        // k = 4: hosts 0..15, ToRs 16..23 (two per pod), aggregation 24..31 (two per pod),
        // cores 32..35; aggregation switch j of a pod links to cores 32 + 2j and 33 + 2j.
        RdmaScenarioSpec ft;
        ft.nodeCount = 36;
        for (uint32_t i = 16; i < 36; ++i)
        {
            ft.switchIds.push_back(i);
        }
        for (uint32_t h = 0; h < 16; ++h)
        {
            ft.links.push_back({h, 16 + h / 2, 100000000000ULL, 1000, 0.0});
        }
        for (uint32_t p = 0; p < 4; ++p)
        {
            for (uint32_t t = 0; t < 2; ++t)
            {
                for (uint32_t j = 0; j < 2; ++j)
                {
                    ft.links.push_back({16 + 2 * p + t, 24 + 2 * p + j, 100000000000ULL, 1000, 0.0});
                }
            }
            for (uint32_t j = 0; j < 2; ++j)
            {
                for (uint32_t c = 0; c < 2; ++c)
                {
                    ft.links.push_back({24 + 2 * p + j, 32 + 2 * j + c, 100000000000ULL, 1000, 0.0});
                }
            }
        }
        const std::vector<uint32_t> r = RdmaScenarioRunner::PartitionNodes(ft, 2);
        for (uint32_t i = 0; i < 32; ++i)
        {
            // Hosts 0..7, ToRs 16..19 and aggregation 24..27 are pods 0-1.
            const uint32_t pod = i < 16 ? i / 4 : (i < 24 ? (i - 16) / 2 : (i - 24) / 2);
            NS_TEST_ASSERT_MSG_EQ(r[i], pod / 2, "node " << i << " with its pod");
        }
        for (uint32_t c = 0; c < 4; ++c)
        {
            NS_TEST_ASSERT_MSG_EQ(r[32 + c], c % 2, "core " << c << " round-robin");
        }
        // Only aggregation-core links cross: each core reaches 2 pods per rank.
        NS_TEST_ASSERT_MSG_EQ(CrossLinks(ft, r), 8u, "8 of 16 aggregation-core links, no ToR link");
        // Leaf-spine (4 leaves, 4 spines): spines have no majority, round-robin as before.
        const RdmaScenarioSpec ls = rdmalbtest::LeafSpineSpec(4, 2, 4, 100000000000ULL, 1000);
        const std::vector<uint32_t> q = RdmaScenarioRunner::PartitionNodes(ls, 2);
        for (uint32_t l = 0; l < 4; ++l)
        {
            NS_TEST_ASSERT_MSG_EQ(q[8 + l], l / 2, "leaf " << l);
            NS_TEST_ASSERT_MSG_EQ(q[12 + l], l % 2, "spine " << l);
        }
        NS_TEST_ASSERT_MSG_EQ(CrossLinks(ls, q), 8u, "half of the 16 leaf-spine links");
    }
};

/// \ingroup rdma-lb
/// The rdma-lb-scenario suite.
class RdmaLbScenarioTestSuite : public TestSuite
{
  public:
    RdmaLbScenarioTestSuite()
        : TestSuite("rdma-lb-scenario", UNIT)
    {
        AddTestCase(new ScenarioOutputsTestCase, TestCase::QUICK);
        AddTestCase(new ScenarioDependenciesTestCase, TestCase::QUICK);
        AddTestCase(new ScenarioStarvationWarningTestCase, TestCase::QUICK);
        AddTestCase(new ScenarioDeterminismTestCase, TestCase::QUICK);
        AddTestCase(new ScenarioPfcTraceTestCase, TestCase::QUICK);
        AddTestCase(new ScenarioPortBytesTestCase, TestCase::QUICK);
        AddTestCase(new ScenarioRateTraceTestCase, TestCase::QUICK);
        AddTestCase(new ScenarioBadSpecTestCase, TestCase::QUICK);
        AddTestCase(new ScenarioRingAllReduceTestCase, TestCase::QUICK);
        AddTestCase(new ScenarioTransportTableTestCase, TestCase::QUICK);
        AddTestCase(new ScenarioPartitionTestCase, TestCase::QUICK);
    }
};

static RdmaLbScenarioTestSuite g_rdmaLbScenarioTestSuite; //!< the suite
