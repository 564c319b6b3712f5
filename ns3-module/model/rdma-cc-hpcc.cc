/*
 * rdma-lb: RdmaHpcc (HPCC as the reference runs it).
 */
#include "rdma-cc-hpcc.h"

#include "rdma-lb-bridge.h"
#include "rdma-nic.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaHpcc");
NS_OBJECT_ENSURE_REGISTERED(RdmaHpcc);

TypeId
RdmaHpcc::GetTypeId()
{
    // Defaults: the table of transport parameters' (RdmaTransportDefault).
    static TypeId tid =
        TypeId("ns3::RdmaHpcc")
            .SetParent<RdmaCongestionControl>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaHpcc>()
            .AddAttribute("TargetUtil",
                          "HPCC target utilisation eta (U_TARGET)",
                          *RdmaTransportDefault("ns3::RdmaHpcc", "TargetUtil"),
                          MakeDoubleAccessor(&RdmaHpcc::m_targetUtil),
                          MakeDoubleChecker<double>(0.01, 10))
            .AddAttribute("MiThresh",
                          "HPCC: additive steps before a multiplicative one (MI_THRESH)",
                          *RdmaTransportDefault("ns3::RdmaHpcc", "MiThresh"),
                          MakeUintegerAccessor(&RdmaHpcc::m_miThresh),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("FastReact",
                          "HPCC: react to every ACK between per-RTT updates (FAST_REACT)",
                          *RdmaTransportDefault("ns3::RdmaHpcc", "FastReact"),
                          MakeBooleanAccessor(&RdmaHpcc::m_fastReact),
                          MakeBooleanChecker())
            .AddAttribute("MultiRate",
                          "HPCC: one reference rate per hop (MULTI_RATE); false = one rate "
                          "from the most utilised hop",
                          *RdmaTransportDefault("ns3::RdmaHpcc", "MultiRate"),
                          MakeBooleanAccessor(&RdmaHpcc::m_multiRate),
                          MakeBooleanChecker())
            .AddAttribute("SampleFeedback",
                          "HPCC: fast reactions skip hops with an empty queue "
                          "(SAMPLE_FEEDBACK)",
                          *RdmaTransportDefault("ns3::RdmaHpcc", "SampleFeedback"),
                          MakeBooleanAccessor(&RdmaHpcc::m_sampleFeedback),
                          MakeBooleanChecker())
            .AddAttribute("IntMulti",
                          "INT_MULTI: INT byte and queue units multiplier (as the switches')",
                          *RdmaTransportDefault("ns3::RdmaHpcc", "IntMulti"),
                          MakeUintegerAccessor(&RdmaHpcc::m_intMulti),
                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

RdmaHeader::IntMode
RdmaHpcc::DataIntMode() const
{
    return RdmaHeader::INT_HPCC;
}

void
RdmaHpcc::Start(RdmaQueuePair& qp)
{
    auto s = std::make_unique<State>();
    s->curRate = qp.rate;
    if (m_multiRate)
    {
        for (Hop& h : s->hops)
        {
            h.rc = qp.rate;
        }
    }
    qp.cc = std::move(s);
}

void
RdmaHpcc::OnAck(RdmaQueuePair& qp, const RdmaHeader& ack)
{
    State& s = static_cast<State&>(*qp.cc);
    if (ack.seq > s.lastUpdateSeq)
    {
        Update(qp, s, ack, false); // a full RTT of feedback: reference update
    }
    else if (m_fastReact)
    {
        Update(qp, s, ack, true);
    }
}

void
RdmaHpcc::Update(RdmaQueuePair& qp, State& s, const RdmaHeader& ack, bool fastReact)
{
    constexpr uint32_t MAX = RdmaIntHop::MAX_HOPS;
    const uint64_t nextSeq = qp.sndNxt;
    const uint32_t nhop = ack.intMode == RdmaHeader::INT_HPCC ? ack.intNHop : 0;
    if (s.lastUpdateSeq == 0)
    {
        // First ACK: record the INT only.
        s.lastUpdateSeq = nextSeq;
        std::copy(ack.intHop, ack.intHop + std::min(nhop, MAX), s.hop);
        return;
    }
    if (nhop <= MAX)
    {
        const uint64_t T = m_cx.baseRttNs;
        const double maxRate = static_cast<double>(m_host->CcLineRate());
        double U = 0;
        uint64_t dt = 0;
        bool updated[MAX] = {};
        bool updatedAny = false;
        for (uint32_t i = 0; i < nhop; ++i)
        {
            const uint64_t now = ack.intHop[i];
            if (m_sampleFeedback && fastReact && RdmaIntHop::Qlen(now, m_intMulti) == 0)
            {
                continue;
            }
            updated[i] = updatedAny = true;
            uint64_t tau = RdmaIntHop::TimeDelta(now, s.hop[i]);
            const double duration = static_cast<double>(tau) * 1e-9;
            const double txRate =
                static_cast<double>(RdmaIntHop::BytesDelta(now, s.hop[i], m_intMulti) * 8) /
                duration;
            const auto c = static_cast<double>(RdmaIntHop::LineRate(now));
            const auto qlen = static_cast<double>(std::min(RdmaIntHop::Qlen(now, m_intMulti),
                                                           RdmaIntHop::Qlen(s.hop[i], m_intMulti)));
            // W = 0 (no window) divides by zero, as in the reference.
            const double u =
                txRate / c + qlen * maxRate / c / static_cast<double>(m_cx.windowBytes);
            if (!m_multiRate)
            {
                if (u > U)
                {
                    U = u;
                    dt = tau;
                }
            }
            else
            {
                tau = std::min(tau, T);
                Hop& h = s.hops[i];
                h.u = std::fma(h.u, static_cast<double>(T - tau), u * static_cast<double>(tau)) /
                      static_cast<double>(T);
            }
            s.hop[i] = now;
        }
        uint64_t newRate = 0;
        uint32_t newStage = 0;
        uint64_t hopRate[MAX] = {};
        uint32_t hopStage[MAX] = {};
        const uint64_t line = m_host->CcLineRate();
        auto bound = [&](uint64_t r) { return std::min(std::max(r, m_minRateBps), line); };
        if (!m_multiRate)
        {
            if (updatedAny)
            {
                dt = std::min(dt, T);
                s.u = std::fma(s.u, static_cast<double>(T - dt), U * static_cast<double>(dt)) /
                      static_cast<double>(T);
                const double maxC = s.u / m_targetUtil;
                if (maxC >= 1 || s.incStage >= m_miThresh)
                {
                    newRate = RdmaDivideRate(s.curRate, maxC) + m_rateAiBps;
                    newStage = 0;
                }
                else
                {
                    newRate = s.curRate + m_rateAiBps;
                    newStage = s.incStage + 1;
                }
                newRate = bound(newRate);
            }
        }
        else
        {
            newRate = line;
            for (uint32_t i = 0; i < nhop; ++i)
            {
                Hop& h = s.hops[i];
                if (updated[i])
                {
                    const double c = h.u / m_targetUtil;
                    if (c >= 1 || h.incStage >= m_miThresh)
                    {
                        hopRate[i] = RdmaDivideRate(h.rc, c) + m_rateAiBps;
                        hopStage[i] = 0;
                    }
                    else
                    {
                        hopRate[i] = h.rc + m_rateAiBps;
                        hopStage[i] = h.incStage + 1;
                    }
                    hopRate[i] = bound(hopRate[i]);
                    newRate = std::min(newRate, hopRate[i]);
                }
                else
                {
                    newRate = std::min(newRate, h.rc);
                }
            }
        }
        if (updatedAny)
        {
            if (newRate < qp.rate)
            {
                ++qp.rec.rateCuts;
            }
            NS_LOG_LOGIC("flow " << qp.flowId << (fastReact ? " HPCC fast " : " HPCC update ")
                                 << "U " << s.u << " rate " << qp.rate << " -> " << newRate);
            m_host->CcSetRate(qp, newRate, true);
        }
        if (!fastReact)
        {
            if (updatedAny)
            {
                s.curRate = newRate;
                s.incStage = newStage;
            }
            if (m_multiRate)
            {
                for (uint32_t i = 0; i < nhop; ++i)
                {
                    if (updated[i])
                    {
                        s.hops[i].rc = hopRate[i];
                        s.hops[i].incStage = hopStage[i];
                    }
                }
            }
        }
    }
    if (!fastReact && nextSeq > s.lastUpdateSeq)
    {
        s.lastUpdateSeq = nextSeq;
    }
}

} // namespace ns3
