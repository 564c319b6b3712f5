/*
 * rdma-lb: RdmaIntHop (HPCC's INT records as the reference encodes them).
 */
#include "rdma-int.h"

namespace ns3
{

namespace
{
// Slot layout, low bits first: rate code (3), time (24), bytes (20), qlen (17).
constexpr uint32_t RATE_SHIFT = 0;
constexpr uint32_t TIME_SHIFT = 3;
constexpr uint32_t BYTES_SHIFT = TIME_SHIFT + RdmaIntHop::TIME_BITS;
constexpr uint32_t QLEN_SHIFT = BYTES_SHIFT + RdmaIntHop::BYTES_BITS;
constexpr uint64_t Mask(uint32_t bits)
{
    return (uint64_t(1) << bits) - 1;
}
constexpr uint64_t RATES[8] = {25000000000ULL,
                               50000000000ULL,
                               100000000000ULL,
                               200000000000ULL,
                               400000000000ULL,
                               40000000000ULL,
                               0,
                               0};
} // namespace

uint64_t
RdmaIntHop::Pack(uint64_t timeNs,
                 uint64_t txBytes,
                 uint64_t qlenBytes,
                 uint64_t rateBps,
                 uint32_t multi)
{
    uint64_t code = 0;
    for (uint64_t c = 0; c < 6; ++c)
    {
        if (RATES[c] == rateBps)
        {
            code = c;
        }
    }
    const uint64_t bytes = txBytes / (BYTE_UNIT * multi);
    const uint64_t qlen = qlenBytes / (QLEN_UNIT * multi);
    return (code << RATE_SHIFT) | ((timeNs & Mask(TIME_BITS)) << TIME_SHIFT) |
           ((bytes & Mask(BYTES_BITS)) << BYTES_SHIFT) | ((qlen & Mask(QLEN_BITS)) << QLEN_SHIFT);
}

uint64_t
RdmaIntHop::LineRate(uint64_t v)
{
    return RATES[(v >> RATE_SHIFT) & Mask(3)];
}

uint64_t
RdmaIntHop::Qlen(uint64_t v, uint32_t multi)
{
    return ((v >> QLEN_SHIFT) & Mask(QLEN_BITS)) * QLEN_UNIT * multi;
}

uint64_t
RdmaIntHop::Time(uint64_t v)
{
    return (v >> TIME_SHIFT) & Mask(TIME_BITS);
}

uint64_t
RdmaIntHop::TimeDelta(uint64_t newer, uint64_t older)
{
    const uint64_t a = Time(newer);
    const uint64_t b = Time(older);
    return a >= b ? a - b : a + (uint64_t(1) << TIME_BITS) - b;
}

uint64_t
RdmaIntHop::BytesDelta(uint64_t newer, uint64_t older, uint32_t multi)
{
    const uint64_t a = (newer >> BYTES_SHIFT) & Mask(BYTES_BITS);
    const uint64_t b = (older >> BYTES_SHIFT) & Mask(BYTES_BITS);
    const uint64_t units = a >= b ? a - b : a + (uint64_t(1) << BYTES_BITS) - b;
    return units * BYTE_UNIT * multi;
}

} // namespace ns3
