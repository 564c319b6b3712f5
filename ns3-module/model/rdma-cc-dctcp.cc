/*
 * rdma-lb: RdmaDctcp (rate-based DCTCP as the reference runs it).
 */
#include "rdma-cc-dctcp.h"

#include "rdma-lb-bridge.h"
#include "rdma-nic.h"

#include "ns3/log.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaDctcp");
NS_OBJECT_ENSURE_REGISTERED(RdmaDctcp);

TypeId
RdmaDctcp::GetTypeId()
{
    // Default: the table of transport parameters' (RdmaTransportDefault).
    static TypeId tid =
        TypeId("ns3::RdmaDctcp")
            .SetParent<RdmaCongestionControl>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaDctcp>()
            .AddAttribute("DctcpRateAI",
                          "DCTCP: additive increase per window without a mark "
                          "(DCTCP_RATE_AI)",
                          *RdmaTransportDefault("ns3::RdmaDctcp", "DctcpRateAI"),
                          MakeDataRateAccessor(&RdmaDctcp::m_dctcpRateAi),
                          MakeDataRateChecker());
    return tid;
}

void
RdmaDctcp::Setup(const RdmaCcContext& cx, RdmaCcHost& host)
{
    RdmaCongestionControl::Setup(cx, host);
    m_dctcpRateAiBps = m_dctcpRateAi.GetBitRate();
}

void
RdmaDctcp::Start(RdmaQueuePair& qp)
{
    qp.cc = std::make_unique<State>();
}

void
RdmaDctcp::OnAck(RdmaQueuePair& qp, const RdmaHeader& ack)
{
    State& s = static_cast<State&>(*qp.cc);
    const bool cnp = (ack.flags & RdmaHeader::FLAG_CNP) != 0;
    const uint64_t ackSeq = ack.seq;
    bool newBatch = false;
    s.ecnCount += cnp ? 1 : 0;
    if (ackSeq > s.lastUpdateSeq)
    {
        newBatch = true;
        if (s.lastUpdateSeq == 0)
        {
            s.lastUpdateSeq = qp.sndNxt;
            s.batch = qp.sndNxt / m_cx.mtu + 1;
        }
        else
        {
            const double frac =
                std::min(1.0, static_cast<double>(s.ecnCount) / static_cast<double>(s.batch));
            // One fused multiply-add, as the reference's -march=native build computes it.
            s.alpha = std::fma(1 - m_g, s.alpha, m_g * frac);
            s.lastUpdateSeq = qp.sndNxt;
            s.ecnCount = 0;
            s.batch = (qp.sndNxt - ackSeq) / m_cx.mtu + 1;
        }
    }
    if (s.cwr && ackSeq > s.highSeq)
    {
        s.cwr = false;
    }
    uint64_t rate = qp.rate;
    if (cnp && !s.cwr)
    {
        rate = std::max(m_minRateBps, RdmaScaleRate(rate, 1 - s.alpha / 2));
        s.cwr = true;
        s.highSeq = qp.sndNxt;
        ++qp.rec.rateCuts;
        NS_LOG_LOGIC("flow " << qp.flowId << " DCTCP cut to " << rate << " alpha " << s.alpha);
    }
    if (!s.cwr && newBatch)
    {
        rate = std::min(m_host->CcLineRate(), rate + m_dctcpRateAiBps);
    }
    m_host->CcSetRate(qp, rate, false);
}

} // namespace ns3
