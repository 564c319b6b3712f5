/*
 * rdma-lb: RdmaTimely (TIMELY as the reference runs it).
 */
#include "rdma-cc-timely.h"

#include "rdma-nic.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaTimely");

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
        const double diff = std::fma(1 - m_p.timelyAlpha, s.rttDiff, m_p.timelyAlpha * newDiff);
        const double gradient = diff / static_cast<double>(m_p.timelyMinRttNs);
        bool inc = false;
        double c = 0;
        if (rtt < m_p.timelyTLowNs)
        {
            inc = true;
        }
        else if (rtt > m_p.timelyTHighNs)
        {
            c = std::fma(-(1 - static_cast<double>(m_p.timelyTHighNs) / static_cast<double>(rtt)),
                         m_p.timelyBeta,
                         1.0);
        }
        else if (gradient <= 0)
        {
            inc = true;
        }
        else
        {
            c = std::max(0.0, std::fma(-gradient, m_p.timelyBeta, 1.0));
        }
        uint64_t rate;
        if (inc)
        {
            rate = s.curRate + (s.incStage < 5 ? m_p.rateAiBps : m_p.rateHaiBps);
            rate = std::min(rate, m_host.CcLineRate());
            ++s.incStage;
        }
        else
        {
            rate = std::max(m_p.minRateBps, RdmaScaleRate(s.curRate, c));
            s.incStage = 0;
            ++qp.rec.rateCuts;
        }
        s.curRate = rate;
        s.rttDiff = diff;
        NS_LOG_LOGIC("flow " << qp.flowId << " TIMELY rtt " << rtt << " gradient " << gradient
                             << (inc ? " up " : " down ") << rate);
        m_host.CcSetRate(qp, rate, false);
    }
    if (nextSeq > s.lastUpdateSeq)
    {
        s.lastUpdateSeq = nextSeq;
        s.lastRtt = rtt;
    }
}

} // namespace ns3
