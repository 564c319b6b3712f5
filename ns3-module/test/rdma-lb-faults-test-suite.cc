/*
 * rdma-lb-faults: faults in the middle of a run, on a 100G leaf-spine of 2 leaves x
 * 8 hosts and 4 spines, 1 us links (hosts 0-15, leaves 16-17, spines 18-21; leaf 16's port 8
 * is its link to spine 18, spine 18's port 0 its link to leaf 16). The link leaf 16 - spine 18
 * fails at 1 ms and comes back at 3 ms (a flap):
 *  - ECMP, routes not withdrawn: every flow completes, but those whose data or ACKs were
 *    hashed onto the dead link wait for its return (GBN: the 4 ms timeout); the others do not;
 *  - ECMP, routes withdrawn (WithdrawFailedPorts; the switch port form of the fault): nothing
 *    enters the dead link after the WithdrawDelay, no flow waits for the return, and a second
 *    wave of flows after the return uses the link again;
 *  - ConWeave and LetFlow, routes withdrawn: the source leaf draws live paths only and moves the
 *    flows whose path died; only packets already past it at the withdrawal take the per-hop
 *    ECMP fallback; no flow waits for the return, and the path is drawn again after it;
 *  - Themis sprays over 4 uplinks, falls back to ECMP on one live uplink while the link is
 *    down, and sprays over 4 again once it is back (the Themis paper, §6);
 *  - the scenario runner lists every flow of the workload exactly once -- fct.txt the
 *    completed ones, flows.csv all, incomplete ones with empty FCT -- when a host's link fails
 *    for good; a switch-port fault and the same link's fault give identical outputs;
 *  - a one-way fault (the REPS paper's black-holed pipe, §4) drops only its direction: on a
 *    2-leaf x 2-host x 1-spine fabric with leaf 4 -> spine 6 down at 20 us, the data of
 *    host 0 -> host 2 is lost there (failed_drops.csv: that flow only, from the fault on),
 *    while host 2 -> host 0's data (sent at 30 us, after the fault; one window) crosses
 *    spine 6 -> leaf 4 and is delivered (its ACKs, on the dead direction, are lost: it never
 *    completes); the same fault two-way loses both (the check that fails if the reverse
 *    direction drops too).
 */
#include "rdma-lb-test-util.h"

#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/rdma-lb-module.h"

#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

const DataRate G100("100Gbps");
const uint32_t LEAF = 16;      //!< the leaf at the failing link
const uint32_t SPINE = 18;     //!< the spine at the failing link
const uint32_t LEAF_PORT = 8;  //!< leaf 16's port to spine 18
const uint32_t SPINE_PORT = 0; //!< spine 18's port to leaf 16
const Time DOWN = MilliSeconds(1);
const Time UP = MilliSeconds(3);
const Time REACT = MicroSeconds(10); //!< RdmaSwitch::WithdrawDelay (default)

/// Per flow (sender host): completion, and whether its data or ACKs entered the dead link.
struct FlapObservation
{
    std::map<uint32_t, Time> finish;  //!< by flow id
    std::set<uint32_t> blackholed;    //!< flow ids (data or ACK forwarded into the dead link)
    uint64_t intoDeadLinkAfterReact{0}; //!< packets forwarded into it after DOWN + REACT
    uint64_t onLinkAfterReturn{0};      //!< data packets on leaf 16 -> spine 18 after UP + REACT
    std::map<std::string, uint64_t> lbCounters; //!< the load balancers', summed over switches
};

/// \return \p text cut at every \p sep (no empty last part for a trailing separator)
std::vector<std::string>
Split(const std::string& text, char sep)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string part;
    while (std::getline(in, part, sep))
    {
        out.push_back(part);
    }
    return out;
}

/// \return the lines of \p text
std::vector<std::string>
Lines(const std::string& text)
{
    return Split(text, '\n');
}

/// The sender host of a packet's flow: data from it, ACKs/NACKs to it.
uint32_t
FlowOf(const RdmaHeader& h)
{
    return h.type == RdmaHeader::DATA ? RdmaHostId(h.sip) : RdmaHostId(h.dip);
}

void
OnForward(FlapObservation* o, Ptr<const Packet> p, uint32_t, uint32_t out, uint32_t deadPort)
{
    if (out != deadPort)
    {
        return;
    }
    RdmaHeader h;
    p->PeekHeader(h);
    const Time now = Simulator::Now();
    if (now >= DOWN && now < UP)
    {
        if (h.type == RdmaHeader::DATA || h.type == RdmaHeader::ACK || h.type == RdmaHeader::NACK)
        {
            o->blackholed.insert(FlowOf(h));
        }
        if (now > DOWN + REACT)
        {
            ++o->intoDeadLinkAfterReact;
        }
    }
    else if (now > UP + REACT && h.type == RdmaHeader::DATA && deadPort == LEAF_PORT)
    {
        ++o->onLinkAfterReturn;
    }
}

/**
 * Load balancer \p lb on the leaf-spine, 16 flows of 3 MB between the leaves (host h <-> h + 8)
 * starting at 0.9 ms, so that all are sending when the link fails; with \p withdraw, routes are
 * withdrawn and the fault is given as leaf 16's port 8, and 8 more flows start at 3.5 ms.
 */
FlapObservation
RunFlap(const std::string& lb, bool withdraw)
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    Config::SetDefault("ns3::RdmaSwitch::WithdrawFailedPorts", BooleanValue(withdraw));
    RdmaFabricHelper f;
    f.SetLoadBalancer(lb);
    f.BuildLeafSpine(2, 8, 4, G100, G100, MicroSeconds(1));
    f.Finish();
    f.AssignStreams(0);
    FlapObservation o;
    // Flow id = sender host in the first wave (FlowOf), 16 + h in the second.
    for (uint32_t h = 0; h < 8; ++h)
    {
        f.AddFlow(h, h, h + 8, 3000000, MicroSeconds(900));
        f.AddFlow(h + 8, h + 8, h, 3000000, MicroSeconds(900));
    }
    if (withdraw)
    {
        for (uint32_t h = 0; h < 8; ++h)
        {
            f.AddFlow(16 + h, h, h + 8, 1000000, MicroSeconds(3500));
        }
    }
    for (uint32_t h = 0; h < 16; ++h)
    {
        f.GetNic(h)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](FlapObservation* w, const RdmaFlowRecord& r) {
                w->finish[r.flowId] = r.finish;
            },
            &o));
    }
    for (auto [sw, port] : {std::make_pair(LEAF, LEAF_PORT), std::make_pair(SPINE, SPINE_PORT)})
    {
        f.GetSwitch(sw)->TraceConnectWithoutContext(
            "Forward",
            MakeBoundCallback(+[](FlapObservation* w, uint32_t dead, Ptr<const Packet> p,
                                  uint32_t in, uint32_t out) { OnForward(w, p, in, out, dead); },
                              &o,
                              port));
    }
    if (withdraw)
    {
        f.ScheduleSwitchPortState(LEAF, LEAF_PORT, DOWN, true);
        f.ScheduleSwitchPortState(LEAF, LEAF_PORT, UP, false);
    }
    else
    {
        f.ScheduleLinkFailure(LEAF, SPINE, DOWN, UP);
    }
    Simulator::Stop(MilliSeconds(40));
    Simulator::Run();
    for (uint32_t sw = LEAF; sw < LEAF + 6; ++sw)
    {
        for (const auto& [name, value] : f.GetSwitch(sw)->GetLbCounters())
        {
            o.lbCounters[name] += value;
        }
    }
    Simulator::Destroy();
    Config::Reset();
    return o;
}

/// ECMP flows over a link that fails at 1 ms and returns at 3 ms, routes not withdrawn.
class EcmpFlapTestCase : public TestCase
{
  public:
    EcmpFlapTestCase()
        : TestCase("ECMP, link down 1-3 ms, routes kept: all complete, the hashed-on ones after the "
                   "return")
    {
    }

  private:
    void DoRun() override
    {
        const FlapObservation o = RunFlap("ecmp", false);
        uint32_t late = 0;
        double lastOthers = 0;
        double firstBlackholed = 1e9;
        for (const auto& [flow, t] : o.finish)
        {
            if (o.blackholed.count(flow))
            {
                ++late;
                firstBlackholed = std::min(firstBlackholed, t.GetMicroSeconds() / 1e3);
                NS_TEST_EXPECT_MSG_GT(t, UP, "flow " << flow << " waited for the return");
            }
            else
            {
                lastOthers = std::max(lastOthers, t.GetMicroSeconds() / 1e3);
                NS_TEST_EXPECT_MSG_LT(t, UP, "flow " << flow << " never used the dead link");
            }
        }
        std::printf("\nrdma-lb-faults: ECMP, routes kept: %zu/16 flows complete; %u used the dead "
                    "link (first done at %.3f ms), the others done by %.3f ms\n",
                    o.finish.size(), late, firstBlackholed, lastOthers);
        NS_TEST_EXPECT_MSG_EQ(o.finish.size(), 16u, "every flow completes after the return");
        NS_TEST_EXPECT_MSG_GT(late, 0u, "some flows were hashed onto the link");
        NS_TEST_EXPECT_MSG_LT(late, 16u, "not all of them");
        NS_TEST_EXPECT_MSG_GT(o.intoDeadLinkAfterReact, 0u, "routes kept: packets keep going in");
    }
};

/// The same flap with routes withdrawn (given as a switch port fault): none stall.
class EcmpFlapWithdrawnTestCase : public TestCase
{
  public:
    EcmpFlapWithdrawnTestCase()
        : TestCase("ECMP, port down 1-3 ms, routes withdrawn: none stalls, the link is used again "
                   "after the return")
    {
    }

  private:
    void DoRun() override
    {
        const FlapObservation o = RunFlap("ecmp", true);
        Time last;
        for (uint32_t flow = 0; flow < 16; ++flow)
        {
            auto it = o.finish.find(flow);
            NS_TEST_ASSERT_MSG_EQ((it != o.finish.end()), true, "flow " << flow << " completes");
            last = Max(last, it->second);
        }
        std::printf("\nrdma-lb-faults: ECMP, routes withdrawn: %zu/24 flows complete, the 16 "
                    "crossing the outage by %.3f ms (%zu had packets lost in it); %" PRIu64
                    " packets into the dead link after the withdrawal; %" PRIu64
                    " data packets on it after the return\n",
                    o.finish.size(), last.GetMicroSeconds() / 1e3, o.blackholed.size(),
                    o.intoDeadLinkAfterReact, o.onLinkAfterReturn);
        NS_TEST_EXPECT_MSG_EQ(o.finish.size(), 24u, "every flow completes");
        NS_TEST_EXPECT_MSG_LT(last, UP, "no flow waits for the link's return");
        NS_TEST_EXPECT_MSG_GT(o.blackholed.size(), 0u, "the failure did hit flows");
        NS_TEST_EXPECT_MSG_EQ(o.intoDeadLinkAfterReact, 0u, "withdrawn at both ends and upstream");
        NS_TEST_EXPECT_MSG_GT(o.onLinkAfterReturn, 0u, "routes restored after the return");
    }
};

/**
 * The path-drawing schemes (ConWeave, LetFlow) under the withdrawn flap: the source leaf draws
 * only live paths and moves the flows whose path died, so hardly a packet needs the per-hop ECMP
 * fallback (only those already past the source leaf when routes were withdrawn), and none stall.
 */
class PathSchemeFlapTestCase : public TestCase
{
  public:
    /// \param lb "conweave" or "letflow"
    /// \param fallbackCounter its counter of packets sent on the per-hop ECMP fallback
    /// \param movedCounter its counter of flows (or flowlets) moved off a dead path
    PathSchemeFlapTestCase(std::string lb, std::string fallbackCounter, std::string movedCounter)
        : TestCase(lb + ", port down 1-3 ms, routes withdrawn: live paths only, flows moved, "
                        "none stalls"),
          m_lb(std::move(lb)),
          m_fallbackCounter(std::move(fallbackCounter)),
          m_movedCounter(std::move(movedCounter))
    {
    }

  private:
    void DoRun() override
    {
        const FlapObservation o = RunFlap(m_lb, true);
        Time last;
        for (uint32_t flow = 0; flow < 16; ++flow)
        {
            auto it = o.finish.find(flow);
            NS_TEST_ASSERT_MSG_EQ((it != o.finish.end()), true, "flow " << flow << " completes");
            last = Max(last, it->second);
        }
        auto counter = [&o](const std::string& name) {
            auto it = o.lbCounters.find(name);
            return it == o.lbCounters.end() ? uint64_t{0} : it->second;
        };
        const uint64_t fallbacks = counter(m_fallbackCounter);
        const uint64_t moved = counter(m_movedCounter);
        std::printf("\nrdma-lb-faults: %s, routes withdrawn: %zu/24 flows complete, the 16 "
                    "crossing the outage by %.3f ms; %" PRIu64 " moved off the dead path, %" PRIu64
                    " packets on the ECMP fallback, %" PRIu64 " into the dead link after the "
                    "withdrawal\n",
                    m_lb.c_str(), o.finish.size(), last.GetMicroSeconds() / 1e3, moved, fallbacks,
                    o.intoDeadLinkAfterReact);
        NS_TEST_EXPECT_MSG_EQ(o.finish.size(), 24u, "every flow completes");
        NS_TEST_EXPECT_MSG_LT(last, UP, "no flow waits for the link's return");
        NS_TEST_EXPECT_MSG_GT(moved, 0u, "flows on the dead path were moved");
        // Drawing dead paths would send every packet of those flows on the fallback for 2 ms.
        NS_TEST_EXPECT_MSG_LT(fallbacks, 100u, "only packets in flight at the withdrawal");
        NS_TEST_EXPECT_MSG_EQ(o.intoDeadLinkAfterReact, 0u, "withdrawn at both ends and upstream");
        NS_TEST_EXPECT_MSG_GT(o.onLinkAfterReturn, 0u, "the path is drawn again after the return");
    }

    std::string m_lb;              //!< the load balancer
    std::string m_fallbackCounter; //!< its ECMP-fallback counter
    std::string m_movedCounter;    //!< its dead-path-move counter
};

/// Themis: sprays, falls back to ECMP while the link is down, sprays again after the return.
class ThemisFlapTestCase : public TestCase
{
  public:
    ThemisFlapTestCase()
        : TestCase("Themis falls back to ECMP while the link is down and sprays again after the "
                   "return")
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
        f.BuildLeafSpine(2, 8, 4, G100, G100, MicroSeconds(1));
        for (uint32_t h = 0; h < 16; ++h)
        {
            f.GetNic(h)->SetAttribute("LossRecovery", StringValue("ns3::RdmaNicSr"));
        }
        f.Finish();
        f.AssignStreams(0);
        // Uplinks of leaf 16 used per flow (sender host) in each phase.
        struct Phases
        {
            std::map<uint32_t, std::set<uint32_t>> before, during, after;
        } u;
        uint32_t done = 0;
        for (uint32_t h = 0; h < 4; ++h)
        {
            f.AddFlow(h, h, 8 + h, 60000000, MicroSeconds(1)); // 60 MB: sending until > 4 ms
            f.GetNic(h)->TraceConnectWithoutContext(
                "FlowRecord",
                MakeBoundCallback(+[](uint32_t* d, const RdmaFlowRecord&) { ++*d; }, &done));
        }
        f.GetSwitch(LEAF)->TraceConnectWithoutContext(
            "Forward",
            MakeBoundCallback(+[](Phases* w, Ptr<const Packet> p, uint32_t, uint32_t out) {
                                  RdmaHeader h;
                                  p->PeekHeader(h);
                                  if (h.type != RdmaHeader::DATA || out < 8)
                                  {
                                      return;
                                  }
                                  const Time now = Simulator::Now();
                                  const uint32_t flow = RdmaHostId(h.sip);
                                  if (now < DOWN)
                                  {
                                      w->before[flow].insert(out);
                                  }
                                  else if (now > DOWN + REACT && now < UP)
                                  {
                                      w->during[flow].insert(out);
                                  }
                                  else if (now > UP + REACT)
                                  {
                                      w->after[flow].insert(out);
                                  }
                              },
                              &u));
        f.ScheduleLinkFailure(LEAF, SPINE, DOWN, UP);
        bool fallbackDuring = false;
        Simulator::Schedule(MilliSeconds(2), +[](RdmaFabricHelper* fh, bool* fb) {
            *fb = rdmalbtest::GetThemisCounters(fh->GetSwitch(LEAF)).ecmpFallback;
        }, &f, &fallbackDuring);
        Simulator::Stop(MilliSeconds(40));
        Simulator::Run();
        const bool fallbackEnd = rdmalbtest::GetThemisCounters(f.GetSwitch(LEAF)).ecmpFallback;
        Simulator::Destroy();
        Config::Reset();
        std::printf("\nrdma-lb-faults: Themis, link down 1-3 ms: uplinks per flow before / during "
                    "/ after:");
        for (uint32_t h = 0; h < 4; ++h)
        {
            std::printf(" %zu/%zu/%zu", u.before[h].size(), u.during[h].size(), u.after[h].size());
        }
        std::printf("; %u/4 flows complete\n", done);
        NS_TEST_EXPECT_MSG_EQ(fallbackDuring, true, "ECMP fallback while the link is down");
        NS_TEST_EXPECT_MSG_EQ(fallbackEnd, false, "spraying again after the return");
        NS_TEST_EXPECT_MSG_EQ(done, 4u, "all flows complete");
        for (uint32_t h = 0; h < 4; ++h)
        {
            NS_TEST_EXPECT_MSG_EQ(u.before[h].size(), 4u, "flow " << h << " sprayed over 4");
            NS_TEST_EXPECT_MSG_EQ(u.during[h].size(), 1u, "flow " << h << " on one ECMP uplink");
            NS_TEST_EXPECT_MSG_EQ(u.during[h].count(LEAF_PORT), 0u, "not on the dead uplink");
            NS_TEST_EXPECT_MSG_EQ(u.after[h].size(), 4u, "flow " << h << " sprayed over 4 again");
        }
    }
};

/// The scenario runner's accounting under faults (see the file comment).
class FlowAccountingTestCase : public TestCase
{
  public:
    FlowAccountingTestCase()
        : TestCase("every flow appears once in flows.csv, completed ones once in fct.txt; port and "
                   "link faults agree")
    {
    }

  private:
    /// 40 flows between random hosts (fixed list), host 5's link dead from 1 ms on, the
    /// leaf-16 - spine-18 link down 1-3 ms given as a port (\p byPort) or as the link.
    static RdmaScenarioSpec Spec(bool byPort)
    {
        RdmaScenarioSpec s = rdmalbtest::LeafSpineSpec(2, 8, 4, 100000000000ULL, 1000);
        s.lb = LbConfig::ParseOrAbort("ecmp", "");
        s.run.hardStopNs = 30000000;
        for (uint32_t i = 0; i < 40; ++i)
        {
            const uint32_t src = (i * 7) % 16;
            const uint32_t dst = (src + 1 + (i * 5) % 15) % 16;
            rdmalbtest::AddSpecFlow(s, src, dst, 200000 + 50000 * (i % 7), 800000 + 20000 * i);
        }
        if (byPort)
        {
            s.run.linkEvents.push_back({1000000, LEAF, SPINE, true, true, LEAF_PORT});
            s.run.linkEvents.push_back({3000000, LEAF, SPINE, false, true, LEAF_PORT});
            s.run.linkEvents.push_back({1000000, 16, 5, true, true, 5}); // leaf 16 port 5: host 5
        }
        else
        {
            s.run.linkEvents.push_back({1000000, LEAF, SPINE, true});
            s.run.linkEvents.push_back({3000000, LEAF, SPINE, false});
            s.run.linkEvents.push_back({1000000, 5, 16, true});
        }
        return s;
    }

    void DoRun() override
    {
        RdmaScenarioRunner byPort(Spec(true));
        std::string err;
        NS_TEST_ASSERT_MSG_EQ(byPort.Run(&err), true, err);
        const std::vector<std::string> fct = Lines(byPort.FctText());
        const std::vector<std::string> csv = Lines(byPort.FlowsCsv());
        const RdmaScenarioSpec spec = Spec(true);
        // flows.csv: header + one row per flow, ids 0..39 in order; fct.txt: the completed.
        NS_TEST_ASSERT_MSG_EQ(csv.size(), 41u, "header + every flow once");
        uint32_t incomplete = 0;
        std::multiset<std::string> completedKeys;
        for (uint32_t i = 0; i < 40; ++i)
        {
            std::vector<std::string> c = Split(csv[i + 1], ',');
            NS_TEST_ASSERT_MSG_EQ(c.size(), 12u, csv[i + 1]);
            NS_TEST_EXPECT_MSG_EQ(c[0], std::to_string(i), "flow ids in order, each once");
            const bool touches5 = spec.flows[i].src == 5 || spec.flows[i].dst == 5;
            if (c[5].empty())
            {
                ++incomplete;
                NS_TEST_EXPECT_MSG_EQ(c[7], "", "no slowdown for an incomplete flow");
                NS_TEST_EXPECT_MSG_EQ(touches5, true, "only host 5's flows are cut off");
            }
            else
            {
                // src dst size start fct: the fct.txt key of the same flow.
                completedKeys.insert(c[1] + " " + c[2] + " " + c[3] + " " + c[4] + " " + c[5]);
            }
        }
        std::multiset<std::string> fctKeys;
        for (const std::string& line : fct)
        {
            std::vector<std::string> c = Split(line, ' ');
            NS_TEST_ASSERT_MSG_EQ(c.size(), 8u, line);
            fctKeys.insert(c[0] + " " + c[1] + " " + c[4] + " " + c[5] + " " + c[6]);
        }
        uint32_t flowsOf5 = 0;
        for (const RdmaScenarioFlow& fl : spec.flows)
        {
            flowsOf5 += (fl.src == 5 || fl.dst == 5) ? 1 : 0;
        }
        std::printf("\nrdma-lb-faults: accounting: %zu flows in flows.csv (%u incomplete, all of "
                    "host 5's %u), %zu in fct.txt, %u completed\n",
                    csv.size() - 1, incomplete, flowsOf5, fct.size(),
                    byPort.GetCompletedFlows());
        NS_TEST_EXPECT_MSG_EQ(fct.size() + incomplete, 40u, "completed + incomplete = all");
        NS_TEST_EXPECT_MSG_EQ(byPort.GetCompletedFlows(), fct.size(), "summary agrees");
        NS_TEST_EXPECT_MSG_EQ((fctKeys == completedKeys), true, "the same completed flows, once");
        NS_TEST_EXPECT_MSG_GT(incomplete, 0u, "host 5's later flows cannot complete");
        NS_TEST_EXPECT_MSG_LT(incomplete, flowsOf5 + 1, "only host 5's flows");

        RdmaScenarioRunner byLink(Spec(false));
        NS_TEST_ASSERT_MSG_EQ(byLink.Run(&err), true, err);
        NS_TEST_EXPECT_MSG_EQ(byLink.FctText(), byPort.FctText(), "port fault = link fault");
        NS_TEST_EXPECT_MSG_EQ(byLink.FlowsCsv(), byPort.FlowsCsv(), "port fault = link fault");
    }
};

/// A one-way fault drops one direction only (see the file comment).
class OneWayFaultTestCase : public TestCase
{
  public:
    OneWayFaultTestCase()
        : TestCase("a one-way fault loses only its direction; failed_drops.csv names the flows")
    {
    }

  private:
    static constexpr uint64_t FAULT_NS = 20000;

    /// uet, hosts 0-3, leaves 4-5, spine 6; flow 0: host 0 -> 2, 1 MB, flow 1: host 2 -> 0,
    /// 40 KB at 30 us (10 packets: within the first window, so its data can all arrive
    /// although its ACKs, leaf 4 -> spine 6, are lost); link leaf 4 - spine 6 down at 20 us,
    /// one way (4 -> 6) or both.
    static RdmaScenarioSpec Spec(bool oneWay)
    {
        RdmaScenarioSpec s = rdmalbtest::LeafSpineSpec(2, 2, 1, 100000000000ULL, 1000);
        rdmalbtest::UseUet(s);
        s.transport.Get("ns3::RdmaSwitch", "PfcEnabled").uint = 0;
        s.transport.Get("ns3::RdmaNic", "PayloadSize").uint = 4086;
        s.run.hardStopNs = 2000000;
        s.run.failedLinkDrops = true;
        rdmalbtest::AddSpecFlow(s, 0, 2, 1000000, 0);
        rdmalbtest::AddSpecFlow(s, 2, 0, 40000, 30000);
        RdmaScenarioLinkEvent e;
        e.atNs = FAULT_NS;
        e.a = 4;
        e.b = 6;
        e.oneWay = oneWay;
        s.run.linkEvents.push_back(e);
        return s;
    }

    void DoRun() override
    {
        RdmaScenarioRunner oneWay(Spec(true));
        std::string err;
        NS_TEST_ASSERT_MSG_EQ(oneWay.Run(&err), true, err);
        const std::vector<RdmaScenarioFlowResult>& r = oneWay.GetFlowResults();
        const std::string drops = oneWay.FailedDropsCsv();
        std::printf("\nrdma-lb-faults: one-way 4 -> 6 at 20 us: flow 0 delivered %d, flow 1 "
                    "delivered %d; failed_drops.csv:\n%s",
                    int(r[0].delivered), int(r[1].delivered), drops.c_str());
        NS_TEST_EXPECT_MSG_EQ(r[0].delivered, false, "0 -> 2 crosses the dead direction");
        NS_TEST_EXPECT_MSG_EQ(r[1].delivered, true, "2 -> 0 crosses the live direction");
        // Only flow 0 lost data, from the fault on: the first loss is a packet on the link at
        // 20 us (lost when it would have arrived, within one delay + one 4150 B packet time).
        std::vector<std::string> rows = Lines(drops);
        NS_TEST_ASSERT_MSG_EQ(rows.size(), 2u, "header + one flow");
        NS_TEST_EXPECT_MSG_EQ(rows[0],
                              "flow_id,src,dst,drops,first_drop_ns,last_drop_ns,resend_drops,"
                              "last_resend_drop_ns,probe_drops,last_probe_drop_ns",
                              "header");
        std::vector<std::string> c = Split(rows[1], ',');
        NS_TEST_ASSERT_MSG_EQ(c.size(), 10u, rows[1]);
        NS_TEST_EXPECT_MSG_EQ(c[0] + "," + c[1] + "," + c[2], "0,0,2", "flow 0, host 0 -> 2");
        const uint64_t first = std::stoull(c[4]);
        NS_TEST_EXPECT_MSG_GT_OR_EQ(first, FAULT_NS, "no loss before the fault");
        NS_TEST_EXPECT_MSG_LT(first, FAULT_NS + 1000 + 332, "first loss: in flight at the fault");
        NS_TEST_EXPECT_MSG_GT(std::stoull(c[3]), 1u, "retransmissions are lost too");
        // ECMP keeps the flow on its one path: its resends follow into the dead direction, and
        // the last packet lost there is a resend (the timer's); ECMP sends no probes.
        NS_TEST_EXPECT_MSG_GT(std::stoull(c[6]), 0u, "resends lost, and counted as such");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(std::stoull(c[6]), std::stoull(c[3]), "resends are data");
        NS_TEST_EXPECT_MSG_EQ(c[7], c[5], "the last data packet lost is a resend");
        NS_TEST_EXPECT_MSG_EQ(c[8] + "," + c[9], "0,0", "no probes");

        RdmaScenarioRunner twoWay(Spec(false));
        NS_TEST_ASSERT_MSG_EQ(twoWay.Run(&err), true, err);
        const std::vector<RdmaScenarioFlowResult>& r2 = twoWay.GetFlowResults();
        NS_TEST_EXPECT_MSG_EQ(r2[1].delivered, false, "two-way: 2 -> 0 is cut off too");
        NS_TEST_EXPECT_MSG_EQ(Lines(twoWay.FailedDropsCsv()).size(), 3u, "two-way: both flows");
    }
};

} // namespace

/// The suite.
class RdmaLbFaultsTestSuite : public TestSuite
{
  public:
    RdmaLbFaultsTestSuite()
        : TestSuite("rdma-lb-faults", UNIT)
    {
        AddTestCase(new EcmpFlapTestCase, TestCase::QUICK);
        AddTestCase(new EcmpFlapWithdrawnTestCase, TestCase::QUICK);
        AddTestCase(new PathSchemeFlapTestCase("conweave",
                                               "conweave_path_fallbacks",
                                               "conweave_dead_path_moves"), TestCase::QUICK);
        AddTestCase(new PathSchemeFlapTestCase("letflow",
                                               "letflow_fallbacks",
                                               "letflow_dead_path_draws"), TestCase::QUICK);
        AddTestCase(new ThemisFlapTestCase, TestCase::QUICK);
        AddTestCase(new FlowAccountingTestCase, TestCase::QUICK);
        AddTestCase(new OneWayFaultTestCase, TestCase::QUICK);
    }
};

/// Static instance registering the suite.
static RdmaLbFaultsTestSuite g_rdmaLbFaultsTestSuite;
