/*
 * rdma-lb: test suite "rdma-lb-host-feedback": the host load balancers are fed and
 * wired as their papers assume. Each case prints its numbers.
 *  (a) a leaf-spine link that black-holes at 1 ms: ECMP's flows on it stall; FlowBender,
 *      Hopper and REPS move every affected flow off it and complete (Whack-a-Mole: (d));
 *  (b) a timeout after losses is charged to the path of the oldest lost packet, not to the
 *      path of the last packet sent;
 *  (c) Hopper switches under congestion when the alternative answers 50 us after its probe
 *      (later than ttl_prob x base RTT = 33 us);
 *  (d) Whack-a-Mole declares the black-holed path of (a) dead: no data packet enters it later
 *      than (1 + stall_factor) RTTs + one stall-check period after the black hole; (d') with
 *      IRN's out-of-order threshold at 64, resends included (only its probes go in later).
 * Fixed seeds (RngSeedManager seed 1, run 1, AssignStreams(0)); deterministic.
 */

#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/rdma-lb-module.h"

#include "rdma-lb-test-util.h"

#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace ns3;

namespace
{

const DataRate G100("100Gbps");

void
FixSeed()
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
}

void
SetSwitches(RdmaFabricHelper& f, const std::string& name, const AttributeValue& v)
{
    for (uint32_t i = 0; i < f.GetNNodes(); ++i)
    {
        if (f.IsSwitch(i))
        {
            f.GetSwitch(i)->SetAttribute(name, v);
        }
    }
}

void
CollectRecords(RdmaFabricHelper& f, std::map<uint32_t, RdmaFlowRecord>* out)
{
    for (uint32_t h : f.GetHosts())
    {
        f.GetNic(h)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](std::map<uint32_t, RdmaFlowRecord>* m,
                                  const RdmaFlowRecord& r) { (*m)[r.flowId] = r; },
                              out));
    }
}

/// Drops every packet when on (a silent black hole: the link stays up, routes stay).
class BlackHole : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::RdmaLbTestBlackHole")
                                .SetParent<ErrorModel>()
                                .AddConstructor<BlackHole>();
        return tid;
    }

  private:
    bool DoCorrupt(Ptr<Packet>) override
    {
        return true;
    }

    void DoReset() override
    {
    }
};

/// Drops the first transmission of every data packet at or beyond byte offset `from`.
class TailLoss : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::RdmaLbTestTailLoss")
                                .SetParent<ErrorModel>()
                                .AddConstructor<TailLoss>();
        return tid;
    }

    uint32_t from{0};             //!< first byte offset dropped
    std::set<uint32_t> dropped;   //!< offsets dropped once

  private:
    bool DoCorrupt(Ptr<Packet> p) override
    {
        RdmaHeader h;
        p->PeekHeader(h);
        if (h.type != RdmaHeader::DATA || (h.flags & RdmaHeader::FLAG_PROBE) || h.seq < from)
        {
            return false;
        }
        return dropped.insert(h.seq).second;
    }

    void DoReset() override
    {
    }
};

// ==== (a) A black-holed fabric link ===========================================================

/**
 * 2 leaves x 8 hosts, 4 spines, 100 Gbps, 1 us links; IRN without PFC and without the CNP on
 * out-of-order NACKs (the sprayers' transport, as in rdma-lb-fabric's slow-spine case), DCQCN.
 * A permutation: host i of rack 0 sends 16 MiB to host i of rack 1 and back (16 flows). At
 * 1 ms the link leaf 16 - spine 18 starts dropping everything in both directions; the
 * switches keep routing into it.
 *
 * The bound: a sender learns of the black hole at its first timeout. IRN arms IrnRtoHigh =
 * 320 us while more than 3 packets are in flight, re-armed by every send, and sends stop ~one
 * BDP cap (104 KB = 8.3 us) after the first loss, so the first timeout fires by 1 ms + 8.3 us
 * + 320 us; one more RTO covers a first reaction that goes wrong. Bound = 1 ms + 2 x 320 us +
 * 8.3 us = 1.648 ms. What each scheme can promise by then differs with its mechanism:
 *  - Hopper probes before it moves and treats a stall (8 base RTTs without an RTT sample) or
 *    a timeout as congestion: every affected flow sends its last packet into the dead link
 *    before the bound (measured 1.372 ms).
 *  - FlowBender reroutes at random (a reroute lands on the dead link again with probability
 *    1/4, and each miss costs one more RTO) and REPS keeps exploring fresh entropies, some of
 *    which hash onto the dead link: neither ever "leaves" for sure, so what is asserted is that
 *    at most 2 % of the affected flows' packets sent after the bound go into the dead link
 *    (measured 1.03 % and 0.32 %).
 *  - Whack-a-Mole declares the path dead at its stall test and sends nothing into it after
 *    its own, shorter bound: case (d), WhackAMoleDeadPathTestCase.
 * Every scheme must complete every flow by 40 ms; before these fixes Hopper (timeouts charged to
 * the last packet's path, probe answers expired at 33 us) and Whack-a-Mole (timeouts charged
 * to the last packet's path, ECMP-hashed paths) left flows stuck at 40 ms, as ECMP does.
 */
class BlackHoleTestCase : public TestCase
{
  public:
    BlackHoleTestCase()
        : TestCase("a leaf-spine link black-holes at 1 ms: ecmp stalls; hopper leaves it within two "
                   "RTOs; flowbender and reps send <= 2 % into it; all complete")
    {
    }

    struct Outcome
    {
        uint32_t completed{0};
        uint32_t affected{0};        //!< flows that lost packets in the black hole
        double lastFinishMs{0};      //!< latest completion
        double lastDeadMs{0};        //!< latest send into the dead link of any flow
        uint64_t deadAfterBound{0};  //!< data packets into the dead link after the bound
        uint64_t sentAfterBound{0};  //!< data packets sent by affected flows after the bound
        uint64_t timeouts{0};
        uint64_t switches{0};
        uint64_t mmuDrops{0};        //!< buffer drops (the black hole's are not counted)
        double maxRttUs{0};          //!< largest RTT of any ACK / NACK a host received
        uint64_t resendsDead{0};     //!< of the data packets into the dead link, resends
        double lastResendDeadMs{0};  //!< latest resend into the dead link (0 = none)
        uint64_t probesDead{0};      //!< probes into the dead link (not data)
    };

    /// Runs the black hole with `lb` (parameters `params`); counts sends into it after `boundMs`.
    /// `oooThreshold`: IRN goes back only past that many out-of-order packets (0 = any SACK).
    static Outcome Run(const std::string& lb,
                       double boundMs,
                       const std::string& params = "",
                       uint32_t oooThreshold = 0)
    {
        FixSeed();
        RdmaFabricHelper f;
        f.SetLoadBalancer(lb, params);
        f.BuildLeafSpine(2, 8, 4, G100, G100, MicroSeconds(1));
        f.Finish();
        for (const std::string& note : f.GetNotes())
        {
            std::cout << lb << ": " << note << std::endl;
        }
        f.AssignStreams(0);
        rdmalbtest::SetNics(f, "LossRecovery", StringValue("ns3::RdmaIrn"));
        rdmalbtest::SetNicComponents(f, "ns3::RdmaRoceRecovery", "NackCarriesCnp", BooleanValue(false));
        rdmalbtest::SetNicComponents(f, "ns3::RdmaIrn", "IrnOooThreshold", UintegerValue(oooThreshold));
        SetSwitches(f, "PfcEnabled", BooleanValue(false));
        std::map<uint32_t, RdmaFlowRecord> recs;
        CollectRecords(f, &recs);
        struct Seen
        {
            std::map<uint32_t, Time> lastDead; // per flow (= source host here)
            std::map<uint32_t, uint64_t> deadAfter;
            Time bound;
            std::map<uint32_t, uint32_t> highSent;           // per flow, highest offset sent
            std::set<std::pair<uint32_t, uint32_t>> resent;  // (flow, offset) last sent again
            uint64_t resendsDead{0};
            Time lastResendDead;
            uint64_t probesDead{0};
        } seen;
        seen.bound = MicroSeconds(static_cast<int64_t>(boundMs * 1000));
        Ptr<RdmaChannel> ch = f.GetChannel(16, 18);
        for (size_t d = 0; d < ch->GetNDevices(); ++d)
        {
            Ptr<NetDevice> dev = ch->GetDevice(d);
            dev->TraceConnectWithoutContext(
                "RxDrop",
                MakeBoundCallback(+[](Seen* s, Ptr<const Packet> p) {
                                      RdmaHeader h;
                                      p->PeekHeader(h);
                                      if (h.type != RdmaHeader::DATA)
                                      {
                                          return;
                                      }
                                      if (h.flags & RdmaHeader::FLAG_PROBE)
                                      {
                                          ++s->probesDead;
                                          return;
                                      }
                                      const uint32_t flow = RdmaHostId(h.sip);
                                      s->lastDead[flow] = Simulator::Now();
                                      if (s->resent.count({flow, h.seq}) != 0)
                                      {
                                          ++s->resendsDead;
                                          s->lastResendDead = Simulator::Now();
                                      }
                                      if (Simulator::Now() > s->bound)
                                      {
                                          ++s->deadAfter[flow];
                                      }
                                  },
                                  &seen));
            Simulator::Schedule(
                MilliSeconds(1),
                +[](Ptr<NetDevice> d) {
                    d->SetAttribute("ReceiveErrorModel", PointerValue(CreateObject<BlackHole>()));
                },
                dev);
        }
        // The RTT of every answer: a host's ACK / NACK echoes its data packet's send time.
        double maxRttNs = 0;
        for (uint32_t h : f.GetHosts())
        {
            f.GetNode(h)->GetDevice(0)->TraceConnectWithoutContext(
                "Rx",
                MakeBoundCallback(+[](double* m, Ptr<const Packet> p) {
                                      RdmaHeader h;
                                      p->PeekHeader(h);
                                      if ((h.type == RdmaHeader::ACK || h.type == RdmaHeader::NACK) &&
                                          h.tsNs > 0)
                                      {
                                          const double rtt =
                                              static_cast<double>(Simulator::Now().GetNanoSeconds()) -
                                              static_cast<double>(h.tsNs);
                                          *m = std::max(*m, rtt);
                                      }
                                  },
                                  &maxRttNs));
        }
        std::map<uint32_t, uint64_t> sentAfter;
        // Outlives the simulation (a heap copy per host leaked: found by LeakSanitizer).
        std::pair<std::map<uint32_t, uint64_t>*, Time> sentCtx(&sentAfter, seen.bound);
        for (uint32_t h : f.GetHosts())
        {
            f.GetNic(h)->TraceConnectWithoutContext(
                "DataSent",
                MakeBoundCallback(+[](std::pair<std::map<uint32_t, uint64_t>*, Time>* c,
                                      uint32_t flow, uint32_t, uint16_t) {
                                      if (Simulator::Now() > c->second)
                                      {
                                          ++(*c->first)[flow];
                                      }
                                  },
                                  &sentCtx));
        }
        // Resends: a data packet at an offset its flow sent before (the NIC's DataSent trace;
        // flow i is host i's).
        for (uint32_t h : f.GetHosts())
        {
            f.GetNic(h)->TraceConnectWithoutContext(
                "DataSent",
                MakeBoundCallback(+[](Seen* s, uint32_t flow, uint32_t seq, uint16_t) {
                                      auto [it, fresh] = s->highSent.try_emplace(flow, seq);
                                      if (!fresh && seq <= it->second)
                                      {
                                          s->resent.emplace(flow, seq);
                                      }
                                      it->second = std::max(it->second, seq);
                                  },
                                  &seen));
        }
        for (uint32_t i = 0; i < 16; ++i)
        {
            f.AddFlow(i, i, (i + 8) % 16, 16u << 20, MicroSeconds(1));
        }
        Simulator::Stop(MilliSeconds(40));
        Simulator::Run();
        Outcome o;
        for (uint32_t i = 0; i < f.GetNNodes(); ++i)
        {
            if (f.IsSwitch(i))
            {
                o.mmuDrops += f.GetSwitch(i)->GetTotalDrops();
            }
        }
        Simulator::Destroy();
        o.completed = static_cast<uint32_t>(recs.size());
        o.maxRttUs = maxRttNs / 1e3;
        o.resendsDead = seen.resendsDead;
        o.lastResendDeadMs = seen.lastResendDead.GetSeconds() * 1e3;
        o.probesDead = seen.probesDead;
        for (const auto& [id, r] : recs)
        {
            o.lastFinishMs = std::max(o.lastFinishMs, r.finish.GetSeconds() * 1e3);
            o.timeouts += r.timeouts;
            o.switches += r.pathSwitches;
        }
        for (const auto& [flow, t] : seen.lastDead)
        {
            if (t >= MilliSeconds(1))
            {
                ++o.affected;
                o.lastDeadMs = std::max(o.lastDeadMs, t.GetSeconds() * 1e3);
                o.deadAfterBound += seen.deadAfter[flow];
                o.sentAfterBound += sentAfter[flow];
            }
        }
        return o;
    }

  private:
    void DoRun() override
    {
        const double rtoHighMs = 0.320;
        const double boundMs = 1.0 + 2 * rtoHighMs + 104000.0 * 8 / 100e9 * 1e3;
        std::ostringstream table;
        table << std::fixed << std::setprecision(3)
              << "algorithm     completed affected last_send_into_dead_ms last_finish_ms "
                 "dead_pkts_after_bound/sent timeouts path_switches mmu_drops\n";
        std::map<std::string, Outcome> out;
        for (const char* a : {"ecmp", "flowbender", "hopper", "reps"})
        {
            Outcome o = Run(a, boundMs);
            out[a] = o;
            table << std::left << std::setw(14) << a << std::right << o.completed << "/16      "
                  << o.affected << "        " << o.lastDeadMs << "                  "
                  << (o.completed == 16 ? o.lastFinishMs : 40.0) << "          "
                  << o.deadAfterBound << "/" << o.sentAfterBound << "  " << o.timeouts << " "
                  << o.switches << " " << o.mmuDrops << "\n";
        }
        std::cout << "black hole on leaf 16 - spine 18 from 1 ms, 16 x 16 MiB permutation, IRN, "
                     "bound 1 ms + 2 x 320 us + 8.3 us = "
                  << boundMs << " ms:\n"
                  << table.str() << std::endl;
        NS_TEST_EXPECT_MSG_GT(out["ecmp"].affected, 0u, "ecmp hashed flows onto the link");
        NS_TEST_EXPECT_MSG_LT(out["ecmp"].completed, 16u, "ecmp's flows on it stall");
        // (algorithm, moves every flow off the link by the bound; else the % of its post-bound
        // packets it may still send into the link)
        const std::vector<std::tuple<std::string, bool, double>> movers = {
            {"flowbender", false, 2.0},
            {"hopper", true, 0.0},
            {"reps", false, 2.0}};
        for (const auto& [a, leavesByBound, limit] : movers)
        {
            const Outcome& o = out[a];
            NS_TEST_EXPECT_MSG_GT(o.affected, 0u, a << ": some flow used the link at 1 ms");
            NS_TEST_EXPECT_MSG_EQ(o.completed, 16u, a << ": every flow completes");
            const double share = o.sentAfterBound
                                     ? 100.0 * o.deadAfterBound / o.sentAfterBound
                                     : 0.0;
            if (leavesByBound)
            {
                NS_TEST_EXPECT_MSG_LT_OR_EQ(o.lastDeadMs, boundMs,
                                            a << ": every flow left the link by the bound");
            }
            else
            {
                NS_TEST_EXPECT_MSG_LT_OR_EQ(share, limit,
                                            a << ": % of post-bound packets into the dead link");
            }
        }
    }
};

// ==== (d) Whack-a-Mole declares a black-holed path dead ======================================

/**
 * The black hole of (a) under Whack-a-Mole (defaults: stall_factor F = 4, a 2 us stall-check
 * period, dead_probe_interval_ns = 100 us). Its path i is spine i (path-index routing), so
 * every affected flow has one dead path.
 *
 * The bound, from the stall rule (whack_a_mole/mod.rs, "Dead paths"): every packet sent on the
 * dead path from t0 = 1 ms on goes unanswered. The last answer on it comes by t0 + R (R: the
 * largest RTT of the run, measured here from every ACK / NACK's echoed send time), so the oldest
 * unanswered packet the stall test knows of was sent by then. The test fires at the first send
 * at least 2 us after the previous test, once that packet is older than F x A (A: the average
 * RTT, an EWMA of samples, so A <= R); the sender then declares the path dead and moves all its
 * balls to the live paths, and nothing gives them back without an answer on it. So no data
 * packet enters the dead link after
 *   bound = t0 + R + F x R + 2 us = 1 ms + 5 R + 2 us,
 * i.e. the share it receives after the bound is exactly 0. (Probes, 64 B, one per dead path per
 * 100 us, are not data and are not counted.) Before the dead-path rule Whack-a-Mole kept ~2.8 %
 * of its post-bound packets on the dead link: whacks of the live paths handed balls back to
 * it (embodiment 3) and the floor min_balls = 1 kept it in the profile.
 */
class WhackAMoleDeadPathTestCase : public TestCase
{
  public:
    WhackAMoleDeadPathTestCase()
        : TestCase("whack-a-mole sends no data into a black-holed path later than 1 ms + "
                   "(1 + stall_factor) x max RTT + 2 us; every flow completes")
    {
    }

  private:
    void DoRun() override
    {
        const double stallFactor = 4;
        // Count sends after the old fixed bound too (2 RTOs + a BDP cap), for the record.
        const double fixedBoundMs = 1.0 + 2 * 0.320 + 104000.0 * 8 / 100e9 * 1e3;
        const BlackHoleTestCase::Outcome o = BlackHoleTestCase::Run("whack-a-mole", fixedBoundMs);
        const double boundMs = 1.0 + (1 + stallFactor) * o.maxRttUs / 1e3 + 0.002;
        std::cout << std::fixed << std::setprecision(3)
                  << "whack-a-mole, black hole on leaf 16 - spine 18 from 1 ms: completed "
                  << o.completed << "/16, affected " << o.affected << ", max RTT " << o.maxRttUs
                  << " us, bound 1 ms + 5 x max RTT + 2 us = " << boundMs
                  << " ms, last data packet into the dead link at " << o.lastDeadMs
                  << " ms, data packets into it after " << fixedBoundMs << " ms: "
                  << o.deadAfterBound << "/" << o.sentAfterBound << ", last flow done at "
                  << o.lastFinishMs << " ms, timeouts " << o.timeouts << std::endl;
        NS_TEST_EXPECT_MSG_GT(o.affected, 0u, "some flow used the link at 1 ms");
        NS_TEST_EXPECT_MSG_EQ(o.completed, 16u, "every flow completes");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(o.lastDeadMs, boundMs,
                                    "no data packet enters the dead link after the bound");
        NS_TEST_EXPECT_MSG_EQ(o.deadAfterBound, 0u,
                              "no data packet enters the dead link after 2 RTOs either");
    }
};

/**
 * (d') The black hole of (d) with IRN going back only past 64 out-of-order packets
 * (IrnOooThreshold = 64; experiments/dead-paths). The resends of what the black hole took are
 * data too: no data packet, first transmission or resend, may enter the dead link after the
 * bound of (d). A resend's entropy comes from the balancer like a new packet's, so once the
 * path is dead its resends go elsewhere. The dead path's 64 B probes (one per 100 us until
 * its flows end) do enter it; they are not data and are counted apart.
 */
class WhackAMoleDeadPathResendsTestCase : public TestCase
{
  public:
    WhackAMoleDeadPathResendsTestCase()
        : TestCase("whack-a-mole with IRN out-of-order threshold 64: no data, resends included, "
                   "enters a black-holed path after the bound; only its probes do")
    {
    }

  private:
    void DoRun() override
    {
        const double stallFactor = 4;
        const BlackHoleTestCase::Outcome o =
            BlackHoleTestCase::Run("whack-a-mole", 1.0, "", 64);
        const double boundMs = 1.0 + (1 + stallFactor) * o.maxRttUs / 1e3 + 0.002;
        std::cout << std::fixed << std::setprecision(3)
                  << "whack-a-mole, IRN ooo 64, black hole from 1 ms: completed " << o.completed
                  << "/16, affected " << o.affected << ", bound " << boundMs
                  << " ms, last data packet into the dead link at " << o.lastDeadMs
                  << " ms, resends into it " << o.resendsDead << " (last at "
                  << o.lastResendDeadMs << " ms), probes into it " << o.probesDead << std::endl;
        NS_TEST_EXPECT_MSG_GT(o.affected, 0u, "some flow used the link at 1 ms");
        NS_TEST_EXPECT_MSG_EQ(o.completed, 16u, "every flow completes");
        NS_TEST_EXPECT_MSG_GT(o.resendsDead, 0u, "resends went in before the path was dead");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(o.lastDeadMs, boundMs, "no data after the bound");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(o.lastResendDeadMs, boundMs, "no resend after the bound");
        NS_TEST_EXPECT_MSG_GT(o.probesDead, 0u, "the dead path is probed");
    }
};

// ==== (b) A timeout names the oldest lost packet's path =======================================

/**
 * One 100 KB flow (100 packets) sprayed by `spray` over 256 entropies across a 2 x 1 x 4
 * leaf-spine (ECMP hashing), IRN. The receiver's port drops the first transmission of every
 * packet from byte 90,000 on: the last 10 packets are lost, no later packet arrives to SACK
 * them, so the loss is repaired by a timeout. The timeout must name the entropy of packet
 * 90,000 (the oldest unacknowledged: its path is the one that lost it), not that of packet
 * 99,000 (the last one sent). Before these fixes the NIC named the last one.
 */
class TimeoutEntropyTestCase : public TestCase
{
  public:
    TimeoutEntropyTestCase()
        : TestCase("a timeout after tail losses names the entropy of the oldest lost packet")
    {
    }

  private:
    void DoRun() override
    {
        FixSeed();
        RdmaFabricHelper f;
        f.SetLoadBalancer("spray", "num_entropies = 256");
        f.BuildLeafSpine(2, 1, 4, G100, G100, MicroSeconds(1));
        f.Finish();
        f.AssignStreams(0);
        rdmalbtest::SetNics(f, "LossRecovery", StringValue("ns3::RdmaIrn"));
        SetSwitches(f, "PfcEnabled", BooleanValue(false));
        Ptr<TailLoss> em = CreateObject<TailLoss>();
        em->from = 90000;
        Ptr<NetDevice> rxPort = f.GetNode(1)->GetDevice(0);
        rxPort->SetAttribute("ReceiveErrorModel", PointerValue(em));
        std::map<uint32_t, uint16_t> firstEntropy; // byte offset -> entropy of its first send
        f.GetNic(0)->TraceConnectWithoutContext(
            "DataSent",
            MakeBoundCallback(+[](std::map<uint32_t, uint16_t>* m, uint32_t, uint32_t seq,
                                  uint16_t e) { m->emplace(seq, e); },
                              &firstEntropy));
        std::vector<uint16_t> timeoutEntropies;
        f.GetNic(0)->TraceConnectWithoutContext(
            "LbFeedback",
            MakeBoundCallback(+[](std::vector<uint16_t>* v, uint32_t, uint8_t kind, uint16_t e) {
                                  if (kind == static_cast<uint8_t>(LbFeedbackKind::TIMEOUT))
                                  {
                                      v->push_back(e);
                                  }
                              },
                              &timeoutEntropies));
        std::map<uint32_t, RdmaFlowRecord> recs;
        CollectRecords(f, &recs);
        f.AddFlow(0, 0, 1, 100000, MicroSeconds(1));
        Simulator::Stop(MilliSeconds(10));
        Simulator::Run();
        Simulator::Destroy();
        const uint16_t oldest = firstEntropy[90000];
        const uint16_t last = firstEntropy[99000];
        std::cout << "tail loss of bytes 90000-99999 (10 packets): entropy of the oldest lost "
                  << oldest << ", of the last sent " << last << ", timeouts "
                  << timeoutEntropies.size() << ", first timeout names "
                  << (timeoutEntropies.empty() ? -1 : timeoutEntropies[0]) << ", dropped "
                  << em->dropped.size() << ", completed " << recs.size() << "/1" << std::endl;
        NS_TEST_ASSERT_MSG_NE(oldest, last, "the setup needs two different paths");
        NS_TEST_ASSERT_MSG_EQ(em->dropped.size(), 10u, "10 packets lost");
        NS_TEST_ASSERT_MSG_GT(timeoutEntropies.size(), 0u, "the loss is repaired by a timeout");
        NS_TEST_EXPECT_MSG_EQ(timeoutEntropies[0], oldest, "charged to the lost packet's path");
        NS_TEST_EXPECT_MSG_EQ(recs.size(), 1u, "the flow completes");
    }
};

// ==== (c) Hopper and a late probe answer ======================================================

/**
 * 2 leaves x 1 host, 4 spines under path-index routing (entropy e leaves on uplink e mod 4;
 * Hopper draws from num_entropies = 4, so entropies are paths); leaf-spine links 11.5 us, host
 * links 1 us: every path's RTT is 2 x (1 + 11.5 + 11.5 + 1) us = 50 us plus serialization,
 * 6 x Hopper's base RTT (8.32 us, so ttl_prob = 33.3 us): a probe answers ~50 us after it is
 * sent. One 30 MB flow, IRN with a 1 MB BDP cap, no congestion control, PFC off. At 300 us the
 * uplink the flow uses drops to 10 Gbps: its queue (up to 1 MB) pushes the RTT far past
 * 50 us / margin 0.8 = 62.5 us. Hopper must switch to a path whose probe answered in ~50 us
 * (> ttl_prob), and the flow must finish within 2x of the 100 Gbps transfer time.
 */
class HopperLateAnswerTestCase : public TestCase
{
  public:
    HopperLateAnswerTestCase()
        : TestCase("hopper switches under congestion when the alternative answers 50 us after "
                   "its probe")
    {
    }

  private:
    void DoRun() override
    {
        FixSeed();
        RdmaFabricHelper f;
        f.SetLoadBalancer("hopper", "num_entropies = 4");
        // Hosts 0, 1; leaves 2, 3; spines 4-7.
        std::vector<uint32_t> sw{2, 3, 4, 5, 6, 7};
        f.CreateNodes(8, sw);
        f.Link(0, 2, G100, MicroSeconds(1));
        f.Link(1, 3, G100, MicroSeconds(1));
        for (uint32_t l = 2; l < 4; ++l)
        {
            for (uint32_t s = 4; s < 8; ++s)
            {
                f.Link(l, s, G100, NanoSeconds(11500));
            }
        }
        f.Finish();
        f.AssignStreams(0);
        rdmalbtest::SetNics(f, "LossRecovery", StringValue("ns3::RdmaIrn"));
        rdmalbtest::SetNicComponents(f, "ns3::RdmaIrn", "IrnBdp", UintegerValue(1000000));
        rdmalbtest::SetNics(f, "CongestionControl", StringValue("ns3::RdmaCongestionControl"));
        SetSwitches(f, "PfcEnabled", BooleanValue(false));
        SetSwitches(f, "PathIndexRouting", BooleanValue(true));
        struct Log
        {
            uint16_t entropyAt300{0xffff};
            uint16_t last{0};
            Time firstOther;     // first data packet on another path after 300 us
            Time switchedAt;     // when the load balancer first switched after 300 us
            uint32_t probeAnswers{0};
            double maxAnswerUs{0};
        } log;
        f.GetNic(0)->TraceConnectWithoutContext(
            "DataSent",
            MakeBoundCallback(+[](Log* l, uint32_t, uint32_t, uint16_t e) {
                                  l->last = e;
                                  if (Simulator::Now() >= MicroSeconds(300) &&
                                      l->entropyAt300 != 0xffff && e != l->entropyAt300 &&
                                      l->firstOther.IsZero())
                                  {
                                      l->firstOther = Simulator::Now();
                                  }
                              },
                              &log));
        // Captureless lambdas (+[], function pointers) with arguments: ns-3 <= 3.35 schedules
        // no capturing ones.
        Simulator::Schedule(
            MicroSeconds(300),
            +[](RdmaFabricHelper* fh, Log* l) {
                l->entropyAt300 = l->last;
                // The leaf's uplink to the spine the flow uses (leaf ports: 0 host, 1-4 spines).
                Ptr<RdmaNetDevice> up = fh->GetSwitch(2)->GetPort(1 + l->entropyAt300 % 4);
                up->SetAttribute("DataRate", DataRateValue(DataRate("10Gbps")));
            },
            &f,
            &log);
        // The switch decision (the path_switches counter), polled every microsecond; the first
        // packet on the new path follows after Hopper's hold (§3.3: the predicted RTT of what
        // is in flight on the old path minus the new path's RTT).
        Ptr<RdmaNic> nic = f.GetNic(0);
        for (int64_t us = 300; us < 5000; ++us)
        {
            Simulator::Schedule(
                MicroSeconds(us),
                +[](Ptr<RdmaNic> n, Log* l) {
                    if (l->switchedAt.IsZero() && n->GetFlowRecord(0).pathSwitches > 0)
                    {
                        l->switchedAt = Simulator::Now();
                    }
                },
                nic,
                &log);
        }
        std::map<uint32_t, RdmaFlowRecord> recs;
        CollectRecords(f, &recs);
        const uint64_t size = 30000000;
        f.AddFlow(0, 0, 1, size, MicroSeconds(1));
        Simulator::Stop(MilliSeconds(50));
        Simulator::Run();
        Simulator::Destroy();
        const double idealMs = size * 1.048 * 8 / 100e9 * 1e3;
        const RdmaFlowRecord r = recs.count(0) ? recs[0] : RdmaFlowRecord{};
        const double fctMs = recs.count(0) ? (r.finish - r.start).GetSeconds() * 1e3 : 50.0;
        std::cout << "hopper, 50 us paths, uplink " << log.entropyAt300
                  << " slowed to 10 Gbps at 300 us: switched at " << log.switchedAt.GetMicroSeconds()
                  << " us, first packet on the new path (after the hold) at "
                  << log.firstOther.GetMicroSeconds() << " us, path switches " << r.pathSwitches
                  << ", probes " << r.probes << ", FCT " << fctMs << " ms (100 Gbps ideal "
                  << idealMs << " ms, all at 10 Gbps " << idealMs * 10 << " ms)" << std::endl;
        NS_TEST_ASSERT_MSG_EQ(recs.size(), 1u, "the flow completes");
        NS_TEST_EXPECT_MSG_EQ(log.switchedAt.IsZero(), false, "hopper switched");
        NS_TEST_EXPECT_MSG_LT(log.switchedAt, MicroSeconds(600), "within 300 us of the slowdown");
        NS_TEST_EXPECT_MSG_EQ(log.firstOther.IsZero(), false, "hopper left the slowed path");
        NS_TEST_EXPECT_MSG_LT(fctMs, 2 * idealMs, "the flow runs at near 100 Gbps");
    }
};

} // namespace

/**
 * The rdma-lb-host-feedback test suite. RDMA_LB_HOST_FEEDBACK_CASES=text in the environment
 * keeps only the cases whose name contains it (ns-3's runner stops a suite at its first
 * failing case).
 */
class RdmaLbHostFeedbackTestSuite : public rdmalbtest::FilteredTestSuite
{
  public:
    RdmaLbHostFeedbackTestSuite()
        : FilteredTestSuite("rdma-lb-host-feedback", "RDMA_LB_HOST_FEEDBACK_CASES")
    {
        AddTestCase(new TimeoutEntropyTestCase, TestCase::QUICK);
        AddTestCase(new HopperLateAnswerTestCase, TestCase::QUICK);
        AddTestCase(new BlackHoleTestCase, TestCase::QUICK);
        AddTestCase(new WhackAMoleDeadPathTestCase, TestCase::QUICK);
        AddTestCase(new WhackAMoleDeadPathResendsTestCase, TestCase::QUICK);
    }
};

/// Static instance registering the suite.
static RdmaLbHostFeedbackTestSuite g_rdmaLbHostFeedbackTestSuite;
