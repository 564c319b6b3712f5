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
    const double seconds =
        static_cast<double>(bytes) * 8 / static_cast<double>(rate.GetBitRate());
    if (truncate)
    {
        return NanoSeconds(static_cast<int64_t>(RdmaNs319SecondsToNs(seconds)));
    }
#ifdef RDMA_LB_NS3_TIME_ROUNDS
    return rate.CalculateBytesTxTime(bytes);
#else
    // Version guard: waf-era trees (ns-3 <= 3.35) convert seconds to a Time by truncation, as
    // ns-3.19 does; the model's own behaviour is ns-3.37's rounding, computed here: the same
    // 64-bit fraction, x 10^9, rounded to the nearest ns.
    const double whole = std::floor(seconds);
    const auto fractionBits = static_cast<uint64_t>((seconds - whole) * 18446744073709551616.0);
    const auto fractionNs = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(fractionBits) * 1000000000U + (uint64_t{1} << 63)) >> 64);
    return NanoSeconds(static_cast<int64_t>(whole) * 1000000000 + static_cast<int64_t>(fractionNs));
#endif
}

} // namespace ns3
