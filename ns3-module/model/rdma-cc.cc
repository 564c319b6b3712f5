/*
 * rdma-lb: RdmaCongestionControl, the no-op base (CC_MODE 0) and the factory.
 */
#include "rdma-cc.h"

#include "rdma-cc-dcqcn.h"
#include "rdma-cc-dctcp.h"
#include "rdma-cc-hpcc.h"
#include "rdma-cc-timely.h"

#include "ns3/abort.h"

#include <algorithm>

namespace ns3
{

RdmaCongestionControl::RdmaCongestionControl(const RdmaCcParams& p, RdmaCcHost& host)
    : m_p(p),
      m_host(host)
{
}

RdmaCongestionControl::~RdmaCongestionControl() = default;

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

std::unique_ptr<RdmaCongestionControl>
CreateRdmaCongestionControl(RdmaCcMode mode, const RdmaCcParams& p, RdmaCcHost& host)
{
    switch (mode)
    {
    case RDMA_CC_NONE:
        return std::make_unique<RdmaCongestionControl>(p, host);
    case RDMA_CC_DCQCN:
        return std::make_unique<RdmaDcqcn>(p, host);
    case RDMA_CC_HPCC:
        return std::make_unique<RdmaHpcc>(p, host);
    case RDMA_CC_TIMELY:
        return std::make_unique<RdmaTimely>(p, host);
    case RDMA_CC_DCTCP:
        return std::make_unique<RdmaDctcp>(p, host);
    }
    NS_ABORT_MSG("RdmaCongestionControl: unknown mode " << static_cast<int>(mode));
    return nullptr;
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
