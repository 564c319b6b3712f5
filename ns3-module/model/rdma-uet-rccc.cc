/*
 * rdma-lb: RCCC's credit arithmetic (rdma-uet-rccc.h; htsim UecSrc / UecSink / UecPullPacer).
 */
#include "rdma-uet-rccc.h"

#include <algorithm>

namespace ns3
{

RdmaUetRcccParams
RdmaUetRcccParams::Derive(uint64_t lineRateBps,
                          double pullRate,
                          uint64_t creditPerPullBytes,
                          int64_t maxWindowBytes,
                          int64_t mtuBytes)
{
    RdmaUetRcccParams p;
    p.creditPerPullQuanta = creditPerPullBytes / QUANTUM_BYTES;
    // htsim: (8 x 256 x 1e12 / linkspeed) / pull_rate_modifier, stored as integer ps.
    p.timePerQuantumPs = static_cast<uint64_t>(
        (8.0 * static_cast<double>(QUANTUM_BYTES) * 1e12 / static_cast<double>(lineRateBps)) /
        pullRate);
    p.maxWindowBytes = maxWindowBytes;
    p.mtuBytes = mtuBytes;
    return p;
}

RdmaUetRcccSender::RdmaUetRcccSender(const RdmaUetRcccParams& p)
    : m_credit(p.maxWindowBytes)
{
}

void
RdmaUetRcccSender::StopSpeculating()
{
    if (m_speculating)
    {
        m_speculating = false;
        m_credit = std::min<int64_t>(m_credit, 0);
    }
}

void
RdmaUetRcccSender::OnPull(const RdmaUetRcccParams& p, uint64_t pullNo)
{
    if (pullNo > m_pull)
    {
        m_credit += static_cast<int64_t>(pullNo - m_pull) * RdmaUetRcccParams::QUANTUM_BYTES;
        m_credit = std::min(m_credit, p.maxWindowBytes);
        m_pull = pullNo;
    }
}

uint64_t
RdmaUetRcccSender::PullTarget(const RdmaUetRcccParams& p,
                              int64_t backlogBytes,
                              int64_t rtxBytes,
                              bool nscc,
                              int64_t windowBytes)
{
    int64_t want = backlogBytes + rtxBytes;
    if (nscc)
    {
        want = std::min(want, windowBytes + p.mtuBytes);
    }
    want = std::min(want, p.maxWindowBytes);
    want -= m_credit;
    if (m_speculating && want < p.mtuBytes && backlogBytes > 0)
    {
        want = p.mtuBytes; // always ask for an MTU while speculating with data left
    }
    want += static_cast<int64_t>(m_pull) * RdmaUetRcccParams::QUANTUM_BYTES;
    m_pullTarget = static_cast<uint64_t>(RdmaUetRcccParams::QuantizeCeil(want));
    return m_pullTarget;
}

bool
RdmaUetRcccSink::OnPullTarget(uint64_t pt)
{
    if (pt <= highestTarget)
    {
        return false;
    }
    highestTarget = pt;
    if (inPull)
    {
        return false;
    }
    inPull = true;
    return true;
}

uint64_t
RdmaUetRcccSink::Grant(const RdmaUetRcccParams& p, uint64_t slowQuanta)
{
    if (slowQuanta > 0)
    {
        latestPull += slowQuanta; // a slow pull ignores the target
        return slowQuanta;
    }
    const uint64_t prev = latestPull;
    latestPull += p.creditPerPullQuanta;
    if (latestPull > highestTarget)
    {
        latestPull = std::max(highestTarget, prev); // not above the target, never backwards
    }
    return latestPull - prev;
}

bool
RdmaUetRcccRtsOnTimeout(bool rtxWasEmpty,
                        bool nscc,
                        int64_t windowBytes,
                        int64_t wireBytes,
                        int64_t inflightBytes,
                        int64_t credit)
{
    if (!rtxWasEmpty)
    {
        return true;
    }
    return (nscc && windowBytes < wireBytes + inflightBytes) || credit <= 0;
}

bool
RdmaUetRcccRtsAllowed(bool hasLast, uint64_t lastPs, uint64_t nowPs, uint64_t limitPs)
{
    return !hasLast || nowPs - lastPs >= limitPs;
}

} // namespace ns3
