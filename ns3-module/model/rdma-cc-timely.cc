/*
 * rdma-lb: RdmaTimely (TIMELY as the reference runs it).
 */
#include "rdma-cc-timely.h"

#include "rdma-nic.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaTimely");
NS_OBJECT_ENSURE_REGISTERED(RdmaTimely);

TypeId
RdmaTimely::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaTimely")
                            .SetParent<RdmaCongestionControl>()
                            .SetGroupName("RdmaLb")
                            .AddConstructor<RdmaTimely>()
                            .AddAttribute("TimelyAlpha",
                                          "TIMELY: EWMA weight of a new RTT difference",
                                          DoubleValue(0.875),
                                          MakeDoubleAccessor(&RdmaTimely::m_alpha),
                                          MakeDoubleChecker<double>(0, 1))
                            .AddAttribute("TimelyBeta",
                                          "TIMELY: multiplicative decrease factor",
                                          DoubleValue(0.8),
                                          MakeDoubleAccessor(&RdmaTimely::m_beta),
                                          MakeDoubleChecker<double>(0, 1))
                            .AddAttribute("TimelyTLow",
                                          "TIMELY: RTT below which the rate always increases",
                                          TimeValue(MicroSeconds(50)),
                                          MakeTimeAccessor(&RdmaTimely::m_tLow),
                                          MakeTimeChecker())
                            .AddAttribute("TimelyTHigh",
                                          "TIMELY: RTT above which the rate decreases",
                                          TimeValue(MicroSeconds(500)),
                                          MakeTimeAccessor(&RdmaTimely::m_tHigh),
                                          MakeTimeChecker())
                            .AddAttribute("TimelyMinRtt",
                                          "TIMELY: the RTT that normalises the gradient",
                                          TimeValue(MicroSeconds(20)),
                                          MakeTimeAccessor(&RdmaTimely::m_minRtt),
                                          MakeTimeChecker(NanoSeconds(1)));
    return tid;
}

void
RdmaTimely::Setup(const RdmaCcContext& cx, RdmaCcHost& host)
{
    RdmaCongestionControl::Setup(cx, host);
    m_tLowNs = static_cast<uint64_t>(m_tLow.GetNanoSeconds());
    m_tHighNs = static_cast<uint64_t>(m_tHigh.GetNanoSeconds());
    m_minRttNs = static_cast<uint64_t>(m_minRtt.GetNanoSeconds());
}

RdmaHeader::IntMode
RdmaTimely::DataIntMode() const
{
    return RdmaHeader::INT_TS;
}

void
RdmaTimely::Start(RdmaQueuePair& qp)
{
    auto s = std::make_unique<State>();
    s->curRate = qp.rate;
    qp.cc = std::move(s);
}

void
RdmaTimely::OnAck(RdmaQueuePair& qp, const RdmaHeader& ack)
{
    State& s = static_cast<State&>(*qp.cc);
    if (ack.seq <= s.lastUpdateSeq)
    {
        return; // no fast reaction in TIMELY
    }
    const uint64_t nextSeq = qp.sndNxt;
    const uint64_t rtt = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds()) - ack.tsNs;
    if (s.lastUpdateSeq != 0)
    {
        const auto newDiff = static_cast<double>(static_cast<int64_t>(rtt) -
                                                 static_cast<int64_t>(s.lastRtt));
        // Fused multiply-adds where the reference's -march=native build fuses them.
        const double diff = std::fma(1 - m_alpha, s.rttDiff, m_alpha * newDiff);
        const double gradient = diff / static_cast<double>(m_minRttNs);
        bool inc = false;
        double c = 0;
        if (rtt < m_tLowNs)
        {
            inc = true;
        }
        else if (rtt > m_tHighNs)
        {
            c = std::fma(-(1 - static_cast<double>(m_tHighNs) / static_cast<double>(rtt)),
                         m_beta,
                         1.0);
        }
        else if (gradient <= 0)
        {
            inc = true;
        }
        else
        {
            c = std::max(0.0, std::fma(-gradient, m_beta, 1.0));
        }
        uint64_t rate;
        if (inc)
        {
            rate = s.curRate + (s.incStage < 5 ? m_rateAiBps : m_rateHaiBps);
            rate = std::min(rate, m_host->CcLineRate());
            ++s.incStage;
        }
        else
        {
            rate = std::max(m_minRateBps, RdmaScaleRate(s.curRate, c));
            s.incStage = 0;
            ++qp.rec.rateCuts;
        }
        s.curRate = rate;
        s.rttDiff = diff;
        NS_LOG_LOGIC("flow " << qp.flowId << " TIMELY rtt " << rtt << " gradient " << gradient
                             << (inc ? " up " : " down ") << rate);
        m_host->CcSetRate(qp, rate, false);
    }
    if (nextSeq > s.lastUpdateSeq)
    {
        s.lastUpdateSeq = nextSeq;
        s.lastRtt = rtt;
    }
}

} // namespace ns3
