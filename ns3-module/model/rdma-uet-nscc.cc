/*
 * rdma-lb: NSCC (rdma-uet-nscc.h): the rule, the arithmetic and the source it follows.
 */
#include "rdma-uet-nscc.h"

#include <algorithm>

namespace ns3
{

namespace
{

constexpr uint64_t PS_PER_US = 1000000;
constexpr uint64_t REFERENCE_RTT_PS = 12 * PS_PER_US; //!< htsim's reference: 12 us at 100 Gbps
constexpr double REFERENCE_BDP_BYTES = 150000;        //!< 12 us x 100 Gbps / 8

/// A double stored into htsim's 32-bit accumulator (truncated, modulo 2^32 as x86 does).
uint32_t
ToU32(double v)
{
    return static_cast<uint32_t>(static_cast<int64_t>(v));
}

/// BDP in bytes of \p rttPs at \p bps: htsim's timeAsSec(rtt) x (linkspeed / 8), truncated.
int64_t
BdpBytes(uint64_t rttPs, uint64_t bps)
{
    return static_cast<int64_t>(static_cast<double>(rttPs) / 1e12 *
                                static_cast<double>(bps / 8));
}

} // namespace

RdmaUetNsccParams
RdmaUetNsccParams::Derive(uint64_t networkRttPs,
                          uint64_t lineRateBps,
                          int64_t mtuBytes,
                          int64_t mssBytes,
                          uint64_t targetPs,
                          bool trimming,
                          uint32_t qaGate)
{
    RdmaUetNsccParams p;
    p.networkRttPs = networkRttPs;
    p.lineRateBps = lineRateBps;
    p.mtuBytes = mtuBytes;
    p.targetPs = targetPs > 0 ? targetPs
                 : trimming   ? static_cast<uint64_t>(static_cast<double>(networkRttPs) * 0.75)
                              : networkRttPs;
    p.qaGate = qaGate;
    p.qaThresholdPs = 4 * p.targetPs;
    const auto networkBdp = static_cast<double>(BdpBytes(networkRttPs, lineRateBps));
    const double a = networkBdp / REFERENCE_BDP_BYTES;
    const double b = static_cast<double>(p.targetPs) / static_cast<double>(REFERENCE_RTT_PS);
    const auto mss = static_cast<double>(mssBytes);
    p.alpha = 4.0 * mss * a * b / static_cast<double>(p.targetPs);
    p.fi = 5 * mss * a;
    p.eta = 0.15 * mss * a;
    p.fiScale = 0.25 * a;
    p.adjustBytes = 8 * mtuBytes;
    return p;
}

RdmaUetNscc::RdmaUetNscc(const RdmaUetNsccParams& p, int64_t initialBytes)
    : m_baseRttPs(p.networkRttPs)
{
    m_maxWnd = static_cast<int64_t>(1.5 * static_cast<double>(BdpBytes(m_baseRttPs, p.lineRateBps)));
    m_cwnd = initialBytes > 0 ? initialBytes : m_maxWnd;
}

void
RdmaUetNscc::Bound(const RdmaUetNsccParams& p)
{
    m_cwnd = std::min(std::max(m_cwnd, p.mtuBytes), m_maxWnd);
}

void
RdmaUetNscc::UpdateBaseRtt(const RdmaUetNsccParams& p, uint64_t rawRttPs)
{
    if (m_baseRttPs > rawRttPs)
    {
        m_baseRttPs = rawRttPs;
        // htsim: timeAsUs(raw) x linkspeed / 8e6, truncated; the cap 1.5 x that.
        const auto bdp = static_cast<int64_t>(static_cast<double>(rawRttPs) / 1e6 *
                                              static_cast<double>(p.lineRateBps) / 8000000.0);
        m_maxWnd = static_cast<int64_t>(1.5 * static_cast<double>(bdp));
    }
}

void
RdmaUetNscc::UpdateDelay(const RdmaUetNsccParams& p, uint64_t rawRttPs, bool ecn)
{
    const uint64_t delay = rawRttPs - m_baseRttPs;
    const auto avg = static_cast<double>(m_avgDelayPs);
    if (!ecn && delay > p.targetPs)
    {
        // A high delay without a mark pulls the average towards a quarter of the base RTT.
        m_avgDelayPs = static_cast<uint64_t>(p.delayAlpha * static_cast<double>(m_baseRttPs) * 0.25 +
                                             (1 - p.delayAlpha) * avg);
    }
    else
    {
        m_avgDelayPs = static_cast<uint64_t>(p.delayAlpha * static_cast<double>(delay) +
                                             (1 - p.delayAlpha) * avg);
    }
}

bool
RdmaUetNscc::QuickAdapt(const RdmaUetNsccParams& p,
                        uint64_t nowPs,
                        bool isLoss,
                        bool skip,
                        uint64_t delayPs,
                        int64_t inflightBytes)
{
    bool doneOrIgnore = false;
    if (m_bytesIgnored < m_bytesToIgnore && skip)
    {
        doneOrIgnore = true;
    }
    else if (nowPs > m_qaEndPs)
    {
        if (m_qaEndPs != 0 && (m_triggerQa || isLoss || delayPs > p.qaThresholdPs) &&
            m_achievedBytes < (m_maxWnd >> p.qaGate))
        {
            m_cwnd = std::max(m_achievedBytes, p.mtuBytes);
            m_bytesToIgnore = static_cast<uint32_t>(inflightBytes);
            m_bytesIgnored = 0;
            m_triggerQa = false;
            doneOrIgnore = true;
        }
        m_achievedBytes = 0;
        m_qaEndPs = nowPs + m_baseRttPs + p.targetPs;
    }
    if (doneOrIgnore)
    {
        m_incBytes = 0;
        m_receivedBytes = 0;
    }
    return doneOrIgnore;
}

void
RdmaUetNscc::FastIncrease(const RdmaUetNsccParams& p, int64_t newly, uint64_t delayPs)
{
    if (delayPs < PS_PER_US)
    {
        m_fiCount += static_cast<uint32_t>(newly);
        if (static_cast<int64_t>(m_fiCount) > m_cwnd || m_increase)
        {
            m_cwnd = static_cast<int64_t>(static_cast<double>(m_cwnd) +
                                          static_cast<double>(newly) * p.fiScale);
            m_increase = true;
            return;
        }
    }
    else
    {
        m_fiCount = 0;
    }
    m_increase = false;
}

void
RdmaUetNscc::ProportionalIncrease(const RdmaUetNsccParams& p, int64_t newly, uint64_t delayPs)
{
    FastIncrease(p, newly, delayPs);
    if (m_increase)
    {
        return;
    }
    m_incBytes = ToU32(static_cast<double>(m_incBytes) + p.alpha * static_cast<double>(newly) *
                                                             static_cast<double>(p.targetPs - delayPs));
}

void
RdmaUetNscc::MultiplicativeDecrease(const RdmaUetNsccParams& p, uint64_t nowPs)
{
    m_increase = false;
    m_fiCount = 0;
    if (m_avgDelayPs > p.targetPs && nowPs - m_lastDecPs > m_baseRttPs)
    {
        const double cut = p.gamma * static_cast<double>(m_avgDelayPs - p.targetPs) /
                           static_cast<double>(m_avgDelayPs);
        m_cwnd = static_cast<int64_t>(static_cast<double>(m_cwnd) * std::max(1 - cut, 0.5));
        m_cwnd = std::max(m_cwnd, p.mtuBytes);
        m_lastDecPs = nowPs;
    }
}

void
RdmaUetNscc::Fulfill(const RdmaUetNsccParams& p, uint64_t nowPs)
{
    m_cwnd += static_cast<int64_t>(m_incBytes) / m_cwnd;
    if (nowPs - m_lastAdjustPs >= p.networkRttPs)
    {
        m_cwnd = static_cast<int64_t>(static_cast<double>(m_cwnd) + p.eta);
        m_lastAdjustPs = nowPs;
    }
    m_incBytes = 0;
    m_receivedBytes = 0;
}

void
RdmaUetNscc::OnAck(const RdmaUetNsccParams& p,
                   uint64_t nowPs,
                   int64_t newlyBytes,
                   uint64_t rawRttPs,
                   bool ecn,
                   int64_t inflightBytes)
{
    if (newlyBytes > 0)
    {
        m_achievedBytes += newlyBytes;
        m_receivedBytes += newlyBytes;
        m_bytesIgnored += static_cast<uint32_t>(newlyBytes);
    }
    uint64_t delay = m_avgDelayPs;
    if (rawRttPs > 0)
    {
        UpdateBaseRtt(p, rawRttPs);
        if (rawRttPs >= m_baseRttPs)
        {
            UpdateDelay(p, rawRttPs, ecn);
            delay = rawRttPs - m_baseRttPs;
        }
    }
    if (QuickAdapt(p, nowPs, false, ecn, delay, inflightBytes))
    {
        return;
    }
    if (!ecn && delay >= p.targetPs)
    {
        m_incBytes = ToU32(static_cast<double>(m_incBytes) + p.fi * static_cast<double>(newlyBytes));
    }
    else if (!ecn)
    {
        ProportionalIncrease(p, newlyBytes, delay);
    }
    else if (delay >= p.targetPs)
    {
        MultiplicativeDecrease(p, nowPs);
    }
    // ECN below the target: nothing (the load balancer moves the flow).
    Bound(p);
    if (m_receivedBytes > p.adjustBytes || nowPs - m_lastAdjustPs > p.networkRttPs)
    {
        Fulfill(p, nowPs);
    }
    Bound(p);
}

void
RdmaUetNscc::OnNack(const RdmaUetNsccParams& p,
                    uint64_t nowPs,
                    int64_t bytes,
                    uint64_t rawRttPs,
                    int64_t inflightBytes,
                    bool cutWindow)
{
    UpdateBaseRtt(p, rawRttPs);
    m_bytesIgnored += static_cast<uint32_t>(bytes);
    // A trim stands for a delay of one network RTT (htsim's estimate of the trimming point).
    UpdateDelay(p, m_baseRttPs + p.networkRttPs, true);
    m_triggerQa = true;
    if (QuickAdapt(p, nowPs, true, true, 0, inflightBytes))
    {
        return;
    }
    if (cutWindow)
    {
        m_cwnd -= bytes;
        Bound(p);
    }
}

void
RdmaUetNscc::OnTimeout(const RdmaUetNsccParams& p, int64_t bytes)
{
    m_cwnd = std::max(m_cwnd - bytes, p.mtuBytes);
}

} // namespace ns3
