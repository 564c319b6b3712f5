/*
 * rdma-lb: test suite "rdma-lb-nic" for the NIC half of the fabric model (doc/rdma-lb.rst,
 * "NIC"): pacing and ideal FCT, loss recovery (gbn, irn, nic-sr) under injected losses, NIC-SR's
 * one NACK per expected PSN, and DCQCN's rate cut after one CNP.
 *
 * Fabric: host 0 -- switch 2 -- host 1, 100 Gbps, 1 us links; flows from host 0 to host 1.
 * Losses are injected on host 1's port (RdmaNetDevice::ReceiveErrorModel), so only data is lost.
 */
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/rdma-lb-module.h"

#include "rdma-lb-test-util.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

using namespace ns3;

namespace
{

/// What one run recorded.
struct NicRun
{
    std::map<uint32_t, RdmaFlowRecord> recs; //!< completed flows
    std::vector<uint32_t> nackE;             //!< expected byte of every NACK sent
    uint64_t drops{0};                       //!< packets lost by the error model
};

/// The three-node fabric with both NICs in \p mode.
struct SmallFabric
{
    RdmaFabricHelper fabric;
    NicRun run;

    explicit SmallFabric(TypeId mode, const std::string& lb = "ecmp")
    {
        RngSeedManager::SetSeed(1);
        RngSeedManager::SetRun(1);
        fabric.SetLoadBalancer(lb);
        fabric.CreateNodes(3, {2});
        fabric.Link(0, 2, DataRate("100Gbps"), MicroSeconds(1));
        fabric.Link(1, 2, DataRate("100Gbps"), MicroSeconds(1));
        fabric.Finish();
        fabric.AssignStreams(0);
        for (uint32_t h : {0u, 1u})
        {
            Ptr<RdmaNic> nic = fabric.GetNic(h);
            nic->SetAttribute("LossRecovery", StringValue(mode.GetName()));
        }
        // IRN runs lossy (ConWeave's "IRN RDMA" setting: PFC off); with PFC on its timeouts are
        // ignored (as in the reference) and a lost tail packet would never be resent.
        fabric.GetSwitch(2)->SetAttribute("PfcEnabled", BooleanValue(mode != RdmaIrn::GetTypeId()));
        fabric.GetNic(0)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](NicRun* r, const RdmaFlowRecord& rec) { r->recs[rec.flowId] = rec; },
                              &run));
        fabric.GetNic(1)->TraceConnectWithoutContext(
            "NackSent",
            MakeBoundCallback(+[](NicRun* r, uint32_t, uint16_t, uint32_t e) { r->nackE.push_back(e); },
                              &run));
        fabric.GetNode(1)->GetDevice(0)->TraceConnectWithoutContext(
            "RxDrop",
            MakeBoundCallback(+[](NicRun* r, Ptr<const Packet>) { ++r->drops; }, &run));
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

    void SetLoss(Ptr<ErrorModel> em)
    {
        fabric.GetNode(1)->GetDevice(0)->SetAttribute("ReceiveErrorModel", PointerValue(em));
    }

    NicRun& Run(Time stop = MilliSeconds(50))
    {
        Simulator::Stop(stop);
        Simulator::Run();
        Simulator::Destroy();
        return run;
    }
};

} // namespace

/// One 10 MB flow through one switch completes within 2 % of the reference's ideal FCT.
class IdealFctTestCase : public TestCase
{
  public:
    IdealFctTestCase()
        : TestCase("a 10 MB flow across one switch at 100 Gbps is within 2% of the ideal FCT")
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t size = 10000000;
        SmallFabric f(RdmaGoBackN::GetTypeId());
        f.fabric.AddFlow(0, 0, 1, size, MicroSeconds(1));
        NicRun& r = f.Run();
        NS_TEST_ASSERT_MSG_EQ(r.recs.count(0), 1u, "flow completed");
        const RdmaFlowRecord& rec = r.recs[0];
        // The reference's ideal FCT: base RTT = 2 x (2 hops x 1 us) + one 1000 B transmission; then
        // the bytes with 48 B of headers per packet at the bottleneck.
        const double bw = 100e9;
        const uint64_t pkts = (size + 999) / 1000;
        const double baseRttNs = 2 * 2 * 1000.0 + 1000 * 8 / bw * 1e9;
        const double idealNs = baseRttNs + (size + 48.0 * pkts) * 8 / bw * 1e9;
        const double fctNs = static_cast<double>((rec.finish - rec.start).GetNanoSeconds());
        std::cout << "ideal FCT " << idealNs << " ns, measured " << fctNs << " ns (ratio "
                  << fctNs / idealNs << ")" << std::endl;
        NS_TEST_EXPECT_MSG_LT(std::abs(fctNs / idealNs - 1), 0.02, "FCT " << fctNs << " vs " << idealNs);
        NS_TEST_EXPECT_MSG_EQ(rec.nacksRx, 0u, "no NACKs");
        NS_TEST_EXPECT_MSG_EQ(rec.nacksSent, 0u, "no NACKs sent");
        NS_TEST_EXPECT_MSG_EQ(rec.retxPkts, 0u, "no retransmissions");
        NS_TEST_EXPECT_MSG_EQ(rec.timeouts, 0u, "no timeouts");
        NS_TEST_EXPECT_MSG_EQ(rec.dataPkts, pkts, "each packet once");
    }
};

/// The channel hands a receiver the sent packet itself unless someone else still holds it: a
/// trace sink that keeps the packets it saw must find them as they were sent after the switch
/// has ECN-marked them (every queued packet here: a 100 G sender into a 10 G receiver, marking
/// thresholds 0), and keeping them must not change the run.
class KeptPacketsUnchangedTestCase : public TestCase
{
  public:
    KeptPacketsUnchangedTestCase()
        : TestCase("packets a Tx trace sink keeps are not changed by the switch's ECN marking")
    {
    }

  private:
    struct Kept
    {
        std::vector<Ptr<const Packet>> pkts; //!< every packet host 0 sent
    };

    struct Result
    {
        Time fct{-1};
        uint64_t marks{0};
    };

    static Result RunOnce(Kept* kept)
    {
        RngSeedManager::SetSeed(1);
        RngSeedManager::SetRun(1);
        RdmaFabricHelper fabric;
        fabric.SetLoadBalancer("ecmp");
        fabric.CreateNodes(3, {2});
        fabric.Link(0, 2, DataRate("100Gbps"), MicroSeconds(1));
        fabric.Link(1, 2, DataRate("10Gbps"), MicroSeconds(1));
        fabric.Finish();
        fabric.AssignStreams(0);
        fabric.GetSwitch(2)->SetAttribute("EcnKmin", UintegerValue(0));
        fabric.GetSwitch(2)->SetAttribute("EcnKmax", UintegerValue(0));
        Result res;
        fabric.GetNic(0)->TraceConnectWithoutContext(
            "FlowRecord",
            MakeBoundCallback(+[](Result* r, const RdmaFlowRecord& rec) { r->fct = rec.finish - rec.start; },
                              &res));
        fabric.GetSwitch(2)->TraceConnectWithoutContext(
            "EcnMark",
            MakeBoundCallback(+[](Result* r, uint32_t, uint32_t, uint64_t) { ++r->marks; }, &res));
        if (kept)
        {
            fabric.GetNode(0)->GetDevice(0)->TraceConnectWithoutContext(
                "Tx",
                MakeBoundCallback(+[](Kept* k, Ptr<const Packet> p) { k->pkts.push_back(p); }, kept));
        }
        fabric.AddFlow(0, 0, 1, 100000, MicroSeconds(1));
        Simulator::Stop(MilliSeconds(50));
        Simulator::Run();
        Simulator::Destroy();
        return res;
    }

    void DoRun() override
    {
        const Result plain = RunOnce(nullptr);
        Kept kept;
        const Result traced = RunOnce(&kept);
        NS_TEST_ASSERT_MSG_GT(plain.fct, Time(0), "flow completed");
        NS_TEST_EXPECT_MSG_EQ(traced.fct, plain.fct, "keeping packets does not change the run");
        NS_TEST_EXPECT_MSG_EQ(traced.marks, plain.marks, "same marks");
        NS_TEST_ASSERT_MSG_GT(traced.marks, 50u, "the switch marked most of the 100 packets");
        NS_TEST_ASSERT_MSG_EQ(kept.pkts.size(), 100u, "100 data packets of 1000 B sent");
        for (const Ptr<const Packet>& p : kept.pkts)
        {
            RdmaHeader h;
            NS_TEST_EXPECT_MSG_EQ(h.PeekFrom(*p), RdmaHeader::DATA_HEADER_BYTES, "header intact");
            NS_TEST_EXPECT_MSG_NE(uint32_t(h.ecn), 3u, "a kept packet was marked by the switch");
        }
    }
};

/// Every recovery scheme completes every flow under random (1 %) loss.
class RandomLossTestCase : public TestCase
{
  public:
    explicit RandomLossTestCase(TypeId recovery)
        : TestCase(recovery.GetName() +
                   " recovers from 1% random data loss and completes every flow"),
          m_recovery(recovery),
          m_mode(recovery.GetName())
    {
    }

  private:
    void DoRun() override
    {
        SmallFabric f(m_recovery);
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetAttribute("ErrorRate", DoubleValue(0.01));
        em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
        em->AssignStreams(11);
        f.SetLoss(em);
        for (uint32_t i = 0; i < 3; ++i)
        {
            f.fabric.AddFlow(i, 0, 1, 1000000, MicroSeconds(1 + 5 * i));
        }
        NicRun& r = f.Run();
        NS_TEST_EXPECT_MSG_GT(r.drops, 10u, m_mode << ": losses were injected");
        uint64_t retx = 0;
        for (uint32_t i = 0; i < 3; ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(r.recs.count(i), 1u, m_mode << ": flow " << i << " completed");
            retx += r.recs[i].retxPkts;
            std::cout << m_mode << " flow " << i << ": fct "
                      << (r.recs[i].finish - r.recs[i].start).As(Time::US) << " retx "
                      << r.recs[i].retxPkts << " nacks " << r.recs[i].nacksSent << " timeouts "
                      << r.recs[i].timeouts << std::endl;
        }
        NS_TEST_EXPECT_MSG_GT_OR_EQ(retx, r.drops, m_mode << ": every lost packet was resent");
    }

    TypeId m_recovery; //!< the recovery scheme under test
    std::string m_mode;               //!< its name
};

/// Deterministic losses, including the tail packet (only a timeout recovers it).
class ListedLossTestCase : public TestCase
{
  public:
    explicit ListedLossTestCase(TypeId recovery)
        : TestCase(recovery.GetName() +
                   " recovers from listed losses incl. the tail (timeout)"),
          m_recovery(recovery),
          m_mode(recovery.GetName())
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t size = 1000000;
        SmallFabric f(m_recovery);
        const std::set<uint32_t> lost{10000, 300000, 301000, 600000, uint32_t(size - 1000)};
        f.SetLoss(Create<rdmalbtest::DropSeqOnceErrorModel>(lost));
        f.fabric.AddFlow(0, 0, 1, size, MicroSeconds(1));
        NicRun& r = f.Run();
        NS_TEST_ASSERT_MSG_EQ(r.recs.count(0), 1u, m_mode << ": flow completed");
        const RdmaFlowRecord& rec = r.recs[0];
        std::cout << m_mode << ": fct " << (rec.finish - rec.start).As(Time::US) << " retx "
                  << rec.retxPkts << " nacks sent " << rec.nacksSent << " rx " << rec.nacksRx
                  << " timeouts " << rec.timeouts << " rate cuts " << rec.rateCuts << std::endl;
        NS_TEST_EXPECT_MSG_EQ(r.drops, lost.size(), "every listed packet was lost once");
        NS_TEST_EXPECT_MSG_EQ(rec.timeouts, 1u, m_mode << ": the tail loss needs one timeout");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(rec.retxPkts, lost.size(), m_mode);
        if (m_recovery == RdmaNicSr::GetTypeId())
        {
            // One NACK per ePSN, carrying it; the sender resends only those packets (and the
            // tail after the timeout).
            std::vector<uint32_t> expect{10000, 300000, 301000, 600000};
            NS_TEST_EXPECT_MSG_EQ((r.nackE == expect), true, "one NACK per ePSN, in order");
            NS_TEST_EXPECT_MSG_EQ(rec.nacksSent, 4u, "NACKs sent");
            NS_TEST_EXPECT_MSG_EQ(rec.nacksRx, 4u, "NACKs received");
            NS_TEST_EXPECT_MSG_EQ(rec.retxPkts, 5u, "only the lost packets were resent");
            NS_TEST_EXPECT_MSG_GT_OR_EQ(rec.rateCuts, 1u, "a NACK cuts the DCQCN rate");
        }
        else
        {
            // Go-back resends 300000 and 301000 together: NACKs name 10000, 300000, 600000 (and,
            // IRN, possibly 301000 while the resent packets are in flight).
            std::set<uint32_t> distinct(r.nackE.begin(), r.nackE.end());
            for (uint32_t e : {10000u, 300000u, 600000u})
            {
                NS_TEST_EXPECT_MSG_EQ(distinct.count(e), 1u, m_mode << ": a NACK for gap " << e);
            }
            for (uint32_t e : distinct)
            {
                NS_TEST_EXPECT_MSG_EQ(lost.count(e), 1u, m_mode << ": NACK names a lost packet");
            }
        }
    }

    TypeId m_recovery; //!< the recovery scheme under test
    std::string m_mode;               //!< its name
};

/// DCQCN as the reference: after one CNP the rate is rate x (1 - alpha/2), alpha = (1-g)^4.
class DcqcnCnpTestCase : public TestCase
{
  public:
    DcqcnCnpTestCase()
        : TestCase("DCQCN cuts the rate after one CNP per the spec's formula, then recovers")
    {
    }

  private:
    void DoRun() override
    {
        SmallFabric f(RdmaGoBackN::GetTypeId());
        f.fabric.AddFlow(0, 0, 1, 10000000, MicroSeconds(0));
        Ptr<RdmaNic> nic = f.fabric.GetNic(0);
        std::vector<uint64_t> rates;
        // A function pointer, not a capturing lambda: waf-era ns-3 (3.35) schedules only those.
        auto sample = +[](std::vector<uint64_t>* v, Ptr<RdmaNic> n) {
            v->push_back(n->GetFlowRate(0).GetBitRate());
        };
        const Time cnpAt = MicroSeconds(20);
        Simulator::Schedule(cnpAt, &RdmaNic::NotifyCnp, nic, 0);
        Simulator::Schedule(cnpAt + NanoSeconds(1), sample, &rates, nic);   // first CNP: no cut
        Simulator::Schedule(cnpAt + MicroSeconds(4), sample, &rates, nic);  // before the check
        Simulator::Schedule(cnpAt + MicroSeconds(4) + NanoSeconds(2), sample, &rates, nic); // cut
        Simulator::Schedule(cnpAt + MicroSeconds(304) + NanoSeconds(2), sample, &rates, nic); // FR
        std::vector<Time> sent;
        nic->TraceConnectWithoutContext(
            "DataSent",
            MakeBoundCallback(+[](std::vector<Time>* v, uint32_t, uint32_t, uint16_t) {
                                  v->push_back(Simulator::Now());
                              },
                              &sent));
        f.Run();
        NS_TEST_ASSERT_MSG_EQ(rates.size(), 4u, "samples");
        const double line = 100e9;
        const double g = 1.0 / 256;
        // First CNP: alpha = 1 and the alpha-CNP flag cleared; four alpha periods without a CNP.
        const double alpha = std::pow(1 - g, 4);
        const uint64_t cut = static_cast<uint64_t>(line * (1 - alpha / 2));
        std::cout << "rate after one CNP: " << rates[2] << " bps (expected " << cut
                  << "), after one increase: " << rates[3] << std::endl;
        NS_TEST_EXPECT_MSG_EQ(rates[0], uint64_t(line), "RateOnFirstCnp = 1 keeps the rate");
        NS_TEST_EXPECT_MSG_EQ(rates[1], uint64_t(line), "no cut before the decrease check");
        NS_TEST_EXPECT_MSG_EQ(rates[2], cut, "rate x (1 - alpha/2)");
        // Stage 0 without clamping keeps target = line rate; fast recovery halves the gap.
        NS_TEST_EXPECT_MSG_EQ(rates[3], (cut + uint64_t(line)) / 2, "fast recovery");
        // Pacing (as the reference): before the cut packets leave back to back at the line rate;
        // after it, one 1048 B packet per 1048 x 8 / rate.
        const Time cutAt = cnpAt + MicroSeconds(4) + NanoSeconds(1);
        auto gapAfter = [&sent](Time t) {
            auto it = std::lower_bound(sent.begin(), sent.end(), t);
            return (it != sent.end() && it + 1 != sent.end()) ? *(it + 1) - *it : Time(0);
        };
        Time before = gapAfter(MicroSeconds(10));
        Time after = gapAfter(cutAt + MicroSeconds(1));
        std::cout << "send gap before the cut " << before.GetNanoSeconds() << " ns, after "
                  << after.GetNanoSeconds() << " ns" << std::endl;
        NS_TEST_EXPECT_MSG_EQ(before, RdmaTxTime(DataRate(uint64_t(line)), 1048, RdmaTxArithmetic::ROUNDED), "line rate");
        NS_TEST_EXPECT_MSG_EQ(after, RdmaTxTime(DataRate(cut), 1048, RdmaTxArithmetic::ROUNDED), "paced at the cut rate");
    }
};

/// An idle NIC costs no events: after a flow (with a CNP, so DCQCN timers ran) completes, a
/// long idle period adds nothing.
class IdleNoEventsTestCase : public TestCase
{
  public:
    IdleNoEventsTestCase()
        : TestCase("no periodic per-QP timers: an idle second costs no events")
    {
    }

  private:
    void DoRun() override
    {
        SmallFabric f(RdmaGoBackN::GetTypeId());
        f.fabric.AddFlow(0, 0, 1, 100000, MicroSeconds(0));
        Ptr<RdmaNic> nic = f.fabric.GetNic(0);
        Simulator::Schedule(MicroSeconds(2), &RdmaNic::NotifyCnp, nic, 0);
        uint64_t atEnd = 0;
        f.fabric.GetNic(0)->TraceConnectWithoutContext(
            "FlowComplete",
            MakeBoundCallback(+[](uint64_t* n, uint32_t, uint32_t, uint32_t, uint64_t, Time, Time,
                                 uint64_t) { *n = Simulator::GetEventCount(); },
                              &atEnd));
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        uint64_t total = Simulator::GetEventCount();
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(f.run.recs.count(0), 1u, "flow completed");
        NS_TEST_EXPECT_MSG_EQ(f.run.recs[0].rateCuts, 1u, "the CNP cut the rate once");
        std::cout << "events until completion " << atEnd << ", in total " << total << std::endl;
        // At most the already pending one-shot events (an RTO check, a wake-up) after the end.
        NS_TEST_EXPECT_MSG_LT_OR_EQ(total - atEnd, 4u, "idle events");
    }
};

/// The quirks' fixes: AckMilestoneFix thins the ACKs; NackCarriesCnp=false stops OOO rate cuts.
class QuirkFixesTestCase : public TestCase
{
  public:
    QuirkFixesTestCase()
        : TestCase("quirk fixes: ACK milestone interval; NACK without the CNP flag")
    {
    }

    struct Counts
    {
        uint64_t acks{0};
        RdmaFlowRecord rec;
    };

    static Counts Run(bool fix, bool loss)
    {
        SmallFabric f(RdmaGoBackN::GetTypeId());
        if (fix)
        {
            f.SetNicComponents("ns3::RdmaGoBackN", "AckMilestoneFix", BooleanValue(true));
            f.SetNics("L2AckInterval", UintegerValue(8));
            f.SetNicComponents("ns3::RdmaGoBackN", "L2ChunkSize", UintegerValue(0));
            f.SetNicComponents("ns3::RdmaRoceRecovery", "NackCarriesCnp", BooleanValue(false));
        }
        // 96 packets: a multiple of the interval, so the last packet is ACKed.
        if (loss)
        {
            f.SetLoss(Create<rdmalbtest::DropSeqOnceErrorModel>(std::set<uint32_t>{30000}));
        }
        f.fabric.AddFlow(0, 0, 1, 96000, MicroSeconds(0));
        Counts c;
        f.fabric.GetNode(0)->GetDevice(0)->TraceConnectWithoutContext(
            "Rx",
            MakeBoundCallback(+[](Counts* c, Ptr<const Packet> p) {
                                  RdmaHeader h;
                                  p->PeekHeader(h);
                                  c->acks += h.type == RdmaHeader::ACK;
                              },
                              &c));
        NicRun& r = f.Run();
        c.rec = r.recs[0];
        return c;
    }

  private:
    void DoRun() override
    {
        Counts refClean = Run(false, false);
        Counts fixedClean = Run(true, false);
        Counts ref = Run(false, true);
        Counts fixed = Run(true, true);
        std::cout << "ACKs without loss: reference " << refClean.acks << ", fixed "
                  << fixedClean.acks << "; CNPs with one loss: " << ref.rec.cnpsRx << " / "
                  << fixed.rec.cnpsRx << std::endl;
        NS_TEST_EXPECT_MSG_EQ(refClean.rec.finish.IsStrictlyPositive(), true, "completed");
        NS_TEST_EXPECT_MSG_EQ(fixedClean.rec.finish.IsStrictlyPositive(), true, "completed");
        NS_TEST_EXPECT_MSG_EQ(ref.rec.finish.IsStrictlyPositive(), true, "reference completed");
        NS_TEST_EXPECT_MSG_EQ(fixed.rec.finish.IsStrictlyPositive(), true, "fixed completed");
        NS_TEST_EXPECT_MSG_EQ(refClean.acks, 96u, "reference: every in-order packet ACKed");
        NS_TEST_EXPECT_MSG_EQ(fixedClean.acks, 12u, "fixed: one ACK per 8 packets");
        NS_TEST_EXPECT_MSG_EQ(fixedClean.rec.timeouts, 0u, "fixed: the last packet is ACKed");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(ref.rec.cnpsRx, 1u, "reference: the OOO NACK carries CNP");
        NS_TEST_EXPECT_MSG_EQ(fixed.rec.cnpsRx, 0u, "fixed: no CNP without ECN");
        NS_TEST_EXPECT_MSG_EQ(fixed.rec.rateCuts, 0u, "fixed: no rate cut");
    }
};

/// IRN's out-of-order threshold: under spraying (reordering without loss) a threshold avoids
/// spurious go-backs that the reference's IRN makes.
class IrnOooThresholdTestCase : public TestCase
{
  public:
    IrnOooThresholdTestCase()
        : TestCase("irn: an out-of-order threshold cuts spurious retransmissions under spraying")
    {
    }

    static uint64_t Retx(uint32_t threshold, uint32_t* completed, bool qpPerPath = false)
    {
        RngSeedManager::SetSeed(1);
        RngSeedManager::SetRun(1);
        RdmaFabricHelper fabric;
        fabric.SetLoadBalancer("spray");
        fabric.BuildLeafSpine(2, 4, 4, DataRate("100Gbps"), DataRate("100Gbps"), MicroSeconds(1));
        fabric.Finish();
        fabric.AssignStreams(0);
        NicRun run;
        for (uint32_t h = 0; h < 8; ++h)
        {
            fabric.GetNic(h)->SetAttribute("LossRecovery", StringValue("ns3::RdmaIrn"));
            rdmalbtest::SetComponent(fabric.GetNic(h), "ns3::RdmaIrn",
                                                    "IrnOooThreshold",
                                                    UintegerValue(threshold));
            rdmalbtest::SetComponent(fabric.GetNic(h), "ns3::RdmaIrn",
                                                    "IrnQpPerPath",
                                                    BooleanValue(qpPerPath));
        }
        for (uint32_t i = 0; i < 4; ++i)
        {
            fabric.AddFlow(i, i, 4 + i, 500000, MicroSeconds(1));
            fabric.GetNic(i)->TraceConnectWithoutContext(
                "FlowRecord",
                MakeBoundCallback(+[](NicRun* r, const RdmaFlowRecord& rec) {
                                      r->recs[rec.flowId] = rec;
                                  },
                                  &run));
        }
        Simulator::Stop(MilliSeconds(50));
        Simulator::Run();
        Simulator::Destroy();
        uint64_t retx = 0;
        for (const auto& [id, rec] : run.recs)
        {
            (void)id;
            retx += rec.retxPkts;
        }
        *completed = static_cast<uint32_t>(run.recs.size());
        return retx;
    }

  private:
    void DoRun() override
    {
        uint32_t done0 = 0;
        uint32_t done8 = 0;
        uint64_t retx0 = Retx(0, &done0);
        uint64_t retx8 = Retx(8, &done8);
        std::cout << "irn under spray: retransmissions threshold 0: " << retx0
                  << ", threshold 8: " << retx8 << std::endl;
        NS_TEST_EXPECT_MSG_EQ(done0, 4u, "threshold 0: all flows completed");
        NS_TEST_EXPECT_MSG_EQ(done8, 4u, "threshold 8: all flows completed");
        NS_TEST_EXPECT_MSG_LT(retx8, retx0, "fewer spurious retransmissions");
    }
};

/// IrnQpPerPath (the Hopper paper, §3.3: data after a path change in the PSN space of the queue
/// pair that probed the path): packets overtaking the old path's are not reordering, a queue
/// pair that never changes path is unchanged, and losses are still recovered.
class IrnQpPerPathTestCase : public TestCase
{
  public:
    IrnQpPerPathTestCase()
        : TestCase("irn: a PSN space per path ends reordering across path changes, not recovery")
    {
    }

  private:
    static const std::set<uint32_t>& Lost()
    {
        static const std::set<uint32_t> lost{10000, 300000, 301000, 600000, 999000};
        return lost;
    }

    /// One 1 MB flow over one switch (one path: \p lb changes only the entropy), the listed
    /// packets lost once.
    static NicRun LossRun(const std::string& lb, bool qpPerPath)
    {
        SmallFabric f(RdmaIrn::GetTypeId(), lb);
        f.SetNicComponents("ns3::RdmaIrn", "IrnQpPerPath", BooleanValue(qpPerPath));
        f.SetLoss(Create<rdmalbtest::DropSeqOnceErrorModel>(Lost()));
        f.fabric.AddFlow(0, 0, 1, 1000000, MicroSeconds(1));
        return f.Run();
    }

    void DoRun() override
    {
        // 1. One path for the whole flow (ECMP): nothing changes, losses included.
        NicRun off = LossRun("ecmp", false);
        NicRun on = LossRun("ecmp", true);
        NS_TEST_ASSERT_MSG_EQ(off.recs.count(0) + on.recs.count(0), 2u, "ecmp: both completed");
        const RdmaFlowRecord& a = off.recs[0];
        const RdmaFlowRecord& b = on.recs[0];
        NS_TEST_EXPECT_MSG_EQ(b.finish, a.finish, "ecmp: the same completion");
        NS_TEST_EXPECT_MSG_EQ(b.retxPkts, a.retxPkts, "ecmp: the same retransmissions");
        NS_TEST_EXPECT_MSG_EQ(b.nacksSent, a.nacksSent, "ecmp: the same NACKs");
        NS_TEST_EXPECT_MSG_EQ((on.nackE == off.nackE), true, "ecmp: NACKs for the same gaps");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(a.nacksSent, 3u, "ecmp: the gaps are NACKed");

        // 2. Per-packet spraying over 4 spines, no loss, IRN going back on any SACK: every
        // packet opens a space and is in order in it, so nothing is resent.
        uint32_t doneOff = 0;
        uint32_t doneOn = 0;
        uint64_t retxOff = IrnOooThresholdTestCase::Retx(0, &doneOff, false);
        uint64_t retxOn = IrnOooThresholdTestCase::Retx(0, &doneOn, true);
        std::cout << "irn under spray: retransmissions, one PSN space: " << retxOff
                  << ", a space per path: " << retxOn << std::endl;
        NS_TEST_EXPECT_MSG_EQ(doneOff, 4u, "spray, one space: all flows completed");
        NS_TEST_EXPECT_MSG_EQ(doneOn, 4u, "spray, a space per path: all flows completed");
        NS_TEST_EXPECT_MSG_GT(retxOff, 100u, "spray, one space: reordering is taken for loss");
        NS_TEST_EXPECT_MSG_EQ(retxOn, 0u, "spray, a space per path: no spurious resend");

        // 3. Spraying with losses: a gap is never inside a one-packet space, so no NACK; the
        // timeout finds the losses and every lost packet is resent.
        NicRun spray = LossRun("spray", true);
        NS_TEST_ASSERT_MSG_EQ(spray.recs.count(0), 1u, "spray with losses: completed");
        const RdmaFlowRecord& c = spray.recs[0];
        std::cout << "irn, a space per path, spray with losses: fct "
                  << (c.finish - c.start).As(Time::US) << " retx " << c.retxPkts
                  << " timeouts " << c.timeouts << std::endl;
        NS_TEST_EXPECT_MSG_EQ(spray.drops, Lost().size(), "every listed packet lost once");
        NS_TEST_EXPECT_MSG_EQ(c.nacksSent, 0u, "no NACK: no gap inside a space");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(c.timeouts, 1u, "the timeout finds the losses");
        NS_TEST_EXPECT_MSG_EQ(c.retxPkts, Lost().size(), "the lost packets resent, only they");
    }
};

/// The rdma-lb-nic test suite.
class RdmaLbNicTestSuite : public TestSuite
{
  public:
    RdmaLbNicTestSuite()
        : TestSuite("rdma-lb-nic", UNIT)
    {
        AddTestCase(new IdealFctTestCase, TestCase::QUICK);
        AddTestCase(new KeptPacketsUnchangedTestCase, TestCase::QUICK);
        for (TypeId mode : {RdmaGoBackN::GetTypeId(), RdmaIrn::GetTypeId(), RdmaNicSr::GetTypeId()})
        {
            AddTestCase(new RandomLossTestCase(mode), TestCase::QUICK);
            AddTestCase(new ListedLossTestCase(mode), TestCase::QUICK);
        }
        AddTestCase(new DcqcnCnpTestCase, TestCase::QUICK);
        AddTestCase(new IdleNoEventsTestCase, TestCase::QUICK);
        AddTestCase(new QuirkFixesTestCase, TestCase::QUICK);
        AddTestCase(new IrnOooThresholdTestCase, TestCase::QUICK);
        AddTestCase(new IrnQpPerPathTestCase, TestCase::QUICK);
    }
};

/// Static instance registering the suite.
static RdmaLbNicTestSuite g_rdmaLbNicTestSuite;
