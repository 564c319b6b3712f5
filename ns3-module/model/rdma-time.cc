/*
 * rdma-lb: time conversions of the reference simulator (see rdma-time.h).
 */
#include "rdma-time.h"

#include <cmath>
#include <limits>

namespace ns3
{

uint64_t
RdmaNs319SecondsToNs(double seconds)
{
    if (!std::isfinite(seconds) || seconds <= 0)
    {
        return 0;
    }
    // ns-3.19's int64x64_t(double): integer part, and the fraction truncated to 64 bits;
    // then x 10^9 truncating, and the integer part.
    const double whole = std::floor(seconds);
    if (whole >= 1.8e10)
    {
        return std::numeric_limits<uint64_t>::max(); // beyond uint64 nanoseconds
    }
    const auto fractionBits = static_cast<uint64_t>((seconds - whole) * 18446744073709551616.0);
    const auto fractionNs = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(fractionBits) * 1000000000U) >> 64);
    return static_cast<uint64_t>(whole) * 1000000000U + fractionNs;
}

Time
RdmaTxTime(const DataRate& rate, uint32_t bytes, bool truncate)
{
    if (!truncate)
    {
        return rate.CalculateBytesTxTime(bytes);
    }
    const double seconds =
        static_cast<double>(bytes) * 8 / static_cast<double>(rate.GetBitRate());
    return NanoSeconds(static_cast<int64_t>(RdmaNs319SecondsToNs(seconds)));
}

} // namespace ns3
