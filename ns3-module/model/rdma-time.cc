/*
 * rdma-lb: time conversions of the reference simulator (see rdma-time.h).
 */
#include "rdma-time.h"

#include <cmath>
#include <limits>

namespace ns3
{

namespace
{

/**
 * Seconds to ns the way int64x64_t converts them: the integer part, and the fraction
 * truncated to 64 bits, multiplied by 10^9; \p halfNs = 0 truncates the result (ns-3.19 and
 * every waf-era tree), 2^63 rounds it to the nearest ns (ns-3.36 and later).
 */
uint64_t
FixedPointSecondsToNs(double seconds, uint64_t halfNs)
{
    if (!std::isfinite(seconds) || seconds <= 0)
    {
        return 0;
    }
    const double whole = std::floor(seconds);
    if (whole >= 1.8e10)
    {
        return std::numeric_limits<uint64_t>::max(); // beyond uint64 nanoseconds
    }
    const auto fractionBits = static_cast<uint64_t>((seconds - whole) * 18446744073709551616.0);
    const auto fractionNs = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(fractionBits) * 1000000000U + halfNs) >> 64);
    return static_cast<uint64_t>(whole) * 1000000000U + fractionNs;
}

} // namespace

uint64_t
RdmaNs319SecondsToNs(double seconds)
{
    return FixedPointSecondsToNs(seconds, 0);
}

RdmaTxArithmetic
RdmaTxArithmeticOf(bool timeTruncation, bool integerTxTime, RdmaTxClock clock)
{
    if (clock == TX_CLOCK_PS)
    {
        return RdmaTxArithmetic::PICOSECOND;
    }
    if (!timeTruncation)
    {
        return RdmaTxArithmetic::ROUNDED;
    }
    return integerTxTime ? RdmaTxArithmetic::INTEGER : RdmaTxArithmetic::NS319;
}

uint64_t
RdmaTxPicoseconds(const DataRate& rate, uint32_t bytes)
{
    const uint64_t bps = rate.GetBitRate();
    if (bps == 0)
    {
        return 0;
    }
    return static_cast<uint64_t>(static_cast<unsigned __int128>(bytes) * 8 * 1000000000000ULL /
                                 bps);
}

Time
RdmaTxTime(const DataRate& rate, uint32_t bytes, RdmaTxArithmetic arithmetic)
{
    const uint64_t bps = rate.GetBitRate();
    if (arithmetic == RdmaTxArithmetic::PICOSECOND)
    {
        return NanoSeconds(static_cast<int64_t>(RdmaTxPicoseconds(rate, bytes) / 1000));
    }
    if (arithmetic == RdmaTxArithmetic::INTEGER)
    {
        if (bps == 0)
        {
            return Time(0); // as the double paths (an infinite time converts to 0)
        }
        const unsigned __int128 ns = static_cast<unsigned __int128>(bytes) * 8 * 1000000000U / bps;
        return NanoSeconds(static_cast<int64_t>(ns));
    }
    const double seconds = static_cast<double>(bytes) * 8 / static_cast<double>(bps);
    if (arithmetic == RdmaTxArithmetic::NS319)
    {
        return NanoSeconds(static_cast<int64_t>(RdmaNs319SecondsToNs(seconds)));
    }
#ifdef RDMA_LB_NS3_TIME_ROUNDS
    return rate.CalculateBytesTxTime(bytes);
#else
    // Version guard: waf-era trees (ns-3 <= 3.35) convert seconds to a Time by truncation, as
    // ns-3.19 does; the model's own behaviour is ns-3.37's rounding, computed here.
    return NanoSeconds(static_cast<int64_t>(FixedPointSecondsToNs(seconds, uint64_t{1} << 63)));
#endif
}

} // namespace ns3
