/*
 * rdma-lb: RdmaCongestionControl, the no-op base (CC_MODE 0) with the attributes several
 * algorithms share, and the rate arithmetic they share (rdma-cc.h).
 */
#include "rdma-cc.h"

#include "rdma-lb-bridge.h"

#include "ns3/double.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaCongestionControl);

TypeId
RdmaCongestionControl::GetTypeId()
{
    // Defaults: the table of transport parameters' (RdmaTransportDefault).
    static TypeId tid =
        TypeId("ns3::RdmaCongestionControl")
            .SetParent<Object>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaCongestionControl>()
            .AddAttribute("EwmaGain",
                          "DCQCN and DCTCP alpha EWMA gain g (EWMA_GAIN; run.py 1/256)",
                          *RdmaTransportDefault("ns3::RdmaCongestionControl", "EwmaGain"),
                          MakeDoubleAccessor(&RdmaCongestionControl::m_g),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("RateAI",
                          "Additive increase (RATE_AI; run.py 40Mb/s at 100G): DCQCN's step, "
                          "HPCC's W_AI, TIMELY's increase",
                          *RdmaTransportDefault("ns3::RdmaCongestionControl", "RateAI"),
                          MakeDataRateAccessor(&RdmaCongestionControl::m_rateAi),
                          MakeDataRateChecker())
            .AddAttribute("RateHAI",
                          "Hyper increase (RATE_HAI; run.py 100Mb/s at 100G): DCQCN's hyper "
                          "step, TIMELY's after 5 increases",
                          *RdmaTransportDefault("ns3::RdmaCongestionControl", "RateHAI"),
                          MakeDataRateAccessor(&RdmaCongestionControl::m_rateHai),
                          MakeDataRateChecker())
            .AddAttribute("MinRate",
                          "Minimum rate of every algorithm (MIN_RATE; 100Mb/s)",
                          *RdmaTransportDefault("ns3::RdmaCongestionControl", "MinRate"),
                          MakeDataRateAccessor(&RdmaCongestionControl::m_minRate),
                          MakeDataRateChecker());
    return tid;
}

RdmaCongestionControl::RdmaCongestionControl() = default;

RdmaCongestionControl::~RdmaCongestionControl() = default;

void
RdmaCongestionControl::Setup(const RdmaCcContext& cx, RdmaCcHost& host)
{
    m_cx = cx;
    m_host = &host;
    m_minRateBps = m_minRate.GetBitRate();
    m_rateAiBps = m_rateAi.GetBitRate();
    m_rateHaiBps = m_rateHai.GetBitRate();
}

RdmaHeader::IntMode
RdmaCongestionControl::DataIntMode() const
{
    return RdmaHeader::INT_NONE;
}

void
RdmaCongestionControl::Start(RdmaQueuePair& /*qp*/)
{
}

void
RdmaCongestionControl::OnCnp(RdmaQueuePair& /*qp*/)
{
}

void
RdmaCongestionControl::OnAck(RdmaQueuePair& /*qp*/, const RdmaHeader& /*ack*/)
{
}

void
RdmaCongestionControl::Stop(RdmaQueuePair& /*qp*/)
{
}

namespace
{
/// ns-3.19 builds DataRate(uint64_t(x)); on x86-64 a NaN or a value of 2^64 and above (a
/// division by 0) converts to 0. Made explicit here (C++ leaves it undefined).
uint64_t
RateOf(double x)
{
    if (!(x < 18446744073709551616.0))
    {
        return 0;
    }
    return x <= 0 ? 0 : static_cast<uint64_t>(x);
}
} // namespace

uint64_t
RdmaVarWindow(uint64_t window, uint64_t rate, uint64_t lineRate)
{
    return std::max<uint64_t>(window * rate / lineRate, 1);
}

uint64_t
RdmaScaleRate(uint64_t rate, double c)
{
    return RateOf(static_cast<double>(rate) * c);
}

uint64_t
RdmaDivideRate(uint64_t rate, double c)
{
    return RateOf(static_cast<double>(rate) / c);
}

} // namespace ns3
