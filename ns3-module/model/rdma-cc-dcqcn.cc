/*
 * rdma-lb: RdmaDcqcn (DCQCN as the reference runs it).
 */
#include "rdma-cc-dcqcn.h"

#include "rdma-lb-bridge.h"
#include "rdma-nic.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaDcqcn");
NS_OBJECT_ENSURE_REGISTERED(RdmaDcqcn);

TypeId
RdmaDcqcn::GetTypeId()
{
    // Defaults: the table of transport parameters' (RdmaTransportDefault).
    static TypeId tid =
        TypeId("ns3::RdmaDcqcn")
            .SetParent<RdmaCongestionControl>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaDcqcn>()
            .AddAttribute("AlphaResumeInterval",
                          "DCQCN alpha update period (ALPHA_RESUME_INTERVAL; run.py 1 us)",
                          *RdmaTransportDefault("ns3::RdmaDcqcn", "AlphaResumeInterval"),
                          MakeTimeAccessor(&RdmaDcqcn::m_alphaResumeInterval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RateDecreaseInterval",
                          "DCQCN rate-decrease check period (RATE_DECREASE_INTERVAL; 4 us)",
                          *RdmaTransportDefault("ns3::RdmaDcqcn", "RateDecreaseInterval"),
                          MakeTimeAccessor(&RdmaDcqcn::m_rateDecreaseInterval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RpTimer",
                          "DCQCN rate-increase timer (RP_TIMER; 300 us)",
                          *RdmaTransportDefault("ns3::RdmaDcqcn", "RpTimer"),
                          MakeTimeAccessor(&RdmaDcqcn::m_rpTimer),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("FastRecoveryTimes",
                          "DCQCN fast-recovery stages (FAST_RECOVERY_TIMES; 1)",
                          *RdmaTransportDefault("ns3::RdmaDcqcn", "FastRecoveryTimes"),
                          MakeUintegerAccessor(&RdmaDcqcn::m_fastRecoveryTimes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("ClampTargetRate",
                          "DCQCN: every decrease sets the target to the current rate "
                          "(CLAMP_TARGET_RATE; 0)",
                          *RdmaTransportDefault("ns3::RdmaDcqcn", "ClampTargetRate"),
                          MakeBooleanAccessor(&RdmaDcqcn::m_clampTargetRate),
                          MakeBooleanChecker())
            .AddAttribute("RateOnFirstCnp",
                          "DCQCN: fraction of the rate kept on a queue pair's first CNP (1.0)",
                          *RdmaTransportDefault("ns3::RdmaDcqcn", "RateOnFirstCnp"),
                          MakeDoubleAccessor(&RdmaDcqcn::m_rateOnFirstCnp),
                          MakeDoubleChecker<double>(0, 1));
    return tid;
}

namespace
{
RdmaDcqcn::State&
StateOf(RdmaQueuePair& qp)
{
    return static_cast<RdmaDcqcn::State&>(*qp.cc);
}
} // namespace

void
RdmaDcqcn::Start(RdmaQueuePair& qp)
{
    auto s = std::make_unique<State>();
    s->targetRate = qp.rate;
    qp.cc = std::move(s);
}

void
RdmaDcqcn::Stop(RdmaQueuePair& qp)
{
    State& s = StateOf(qp);
    s.decreaseEvent.Cancel();
    s.increaseEvent.Cancel();
}

void
RdmaDcqcn::AdvanceAlpha(State& s, bool tickNowPending) const
{
    const int64_t period = m_alphaResumeInterval.GetTimeStep();
    int64_t elapsed = (Simulator::Now() - s.firstCnp).GetTimeStep();
    uint64_t ticks = static_cast<uint64_t>(elapsed / period);
    if (tickNowPending && ticks > 0 && elapsed % period == 0)
    {
        --ticks; // the tick of this instant runs after the caller
    }
    if (ticks <= s.alphaTicks)
    {
        return;
    }
    // The first pending period sees the flag; the rest only decay.
    s.alpha = (1 - m_g) * s.alpha + (s.alphaCnpSeen ? m_g : 0.0);
    s.alphaCnpSeen = false;
    uint64_t rest = ticks - s.alphaTicks - 1;
    if (rest > 0)
    {
        s.alpha *= std::pow(1 - m_g, static_cast<double>(rest));
    }
    s.alphaTicks = ticks;
}

void
RdmaDcqcn::OnCnp(RdmaQueuePair& qp)
{
    State& s = StateOf(qp);
    Time now = Simulator::Now();
    if (!s.firstCnpSeen)
    {
        s.firstCnpSeen = true;
        s.firstCnp = now;
        s.alphaTicks = 0;
        s.alpha = 1.0;
        s.alphaCnpSeen = false;
        s.decreaseCnpSeen = true;
        uint64_t r = static_cast<uint64_t>(static_cast<double>(qp.rate) * m_rateOnFirstCnp);
        s.targetRate = r;
        m_host->CcSetRate(qp, r, false);
        s.decreaseEvent = Simulator::Schedule(m_rateDecreaseInterval + NanoSeconds(1),
                                              &RdmaDcqcn::Decrease, this, qp.qpn);
        return;
    }
    // Quirk event-order: the reference's alpha tick of this very instant was scheduled one
    // alpha period earlier, this feedback's arrival one link delay plus one ACK serialization
    // earlier; the earlier-scheduled event runs first. (Its decrease checks are periodic
    // events, see Decrease.) Our own lazy grid counts a CNP at a tick after the tick.
    const bool tickNowPending =
        m_cx.eventOrderQuirk && m_cx.feedbackLead > m_alphaResumeInterval;
    AdvanceAlpha(s, tickNowPending);
    s.alphaCnpSeen = true;
    const bool pending = s.decreaseCnpSeen;
    s.decreaseCnpSeen = true;
    if (!pending && !m_cx.eventOrderQuirk) // under event-order the checks are periodic
    {
        // The next point of the grid firstCnp + interval + 1 ns + k * interval after now.
        Time t0 = s.firstCnp + m_rateDecreaseInterval + NanoSeconds(1);
        Time next = t0;
        if (now >= t0)
        {
            int64_t k =
                (now - t0).GetTimeStep() / m_rateDecreaseInterval.GetTimeStep() + 1;
            next = t0 + m_rateDecreaseInterval * k;
        }
        s.decreaseEvent = Simulator::Schedule(next - now, &RdmaDcqcn::Decrease, this, qp.qpn);
    }
}

void
RdmaDcqcn::Decrease(uint16_t qpn)
{
    RdmaQueuePair* qp = m_host->CcFindQp(qpn);
    if (!qp)
    {
        return;
    }
    State& s = StateOf(*qp);
    if (m_cx.eventOrderQuirk)
    {
        // Quirk event-order: the reference's check reschedules itself every period, forever,
        // so at its instant it runs before events scheduled less than a period earlier.
        s.decreaseEvent =
            Simulator::Schedule(m_rateDecreaseInterval, &RdmaDcqcn::Decrease, this, qpn);
    }
    AdvanceAlpha(s);
    if (!s.decreaseCnpSeen)
    {
        return;
    }
    if (m_clampTargetRate || s.stage != 0)
    {
        s.targetRate = qp->rate;
    }
    double cut = static_cast<double>(qp->rate) * (1 - s.alpha / 2);
    uint64_t r = std::max<uint64_t>(m_minRateBps, static_cast<uint64_t>(cut));
    m_host->CcSetRate(*qp, r, false);
    ++qp->rec.rateCuts;
    s.stage = 0;
    s.decreaseCnpSeen = false;
    s.increaseEvent.Cancel();
    s.increaseEvent = Simulator::Schedule(m_rpTimer, &RdmaDcqcn::Increase, this, qpn);
    NS_LOG_LOGIC("flow " << qp->flowId << " DCQCN cut to " << r << " alpha " << s.alpha);
}

void
RdmaDcqcn::Increase(uint16_t qpn)
{
    RdmaQueuePair* qp = m_host->CcFindQp(qpn);
    if (!qp)
    {
        return;
    }
    State& s = StateOf(*qp);
    const uint64_t line = m_host->CcLineRate();
    const uint64_t oldRate = qp->rate;
    const uint64_t oldTarget = s.targetRate;
    const uint32_t stage = s.stage;
    if (stage == m_fastRecoveryTimes)
    {
        s.targetRate = std::min(s.targetRate + m_rateAiBps, line);
    }
    else if (stage > m_fastRecoveryTimes)
    {
        s.targetRate = std::min(s.targetRate + m_rateHaiBps, line);
    }
    // Quirk time-truncation (ns-3.19's truncating arithmetic): the reference halves each rate
    // as a DataRate, truncating each half.
    m_host->CcSetRate(*qp,
                     m_cx.timeTruncation ? qp->rate / 2 + s.targetRate / 2
                                        : (qp->rate + s.targetRate) / 2,
                     false);
    ++s.stage;
    if (stage > m_fastRecoveryTimes && qp->rate == oldRate && s.targetRate == oldTarget)
    {
        return; // every further event would be this same no-op
    }
    s.increaseEvent = Simulator::Schedule(m_rpTimer, &RdmaDcqcn::Increase, this, qpn);
}

} // namespace ns3
