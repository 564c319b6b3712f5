/*
 * rdma-lb: time conversions of the reference simulator (ConWeave's ns-3.19 tree).
 *
 * ns-3.19 turns a duration computed in seconds as a double into a Time by converting the
 * double to 64.64 fixed point (the fraction truncated to 64 bits), multiplying by 10^9
 * truncating and keeping the integer part. DataRate::CalculateTxTime(bytes) is bytes x 8 / bps
 * as a double, so a 1048 B packet at 100 Gbps takes 83 ns there (83.84 truncated) and 1000 B
 * take 79 ns (the double of 8e-8 s lies 1.7e-24 s above 80 ns, less than the truncated
 * fraction bits lose), where ns-3.37's DataRate::CalculateBytesTxTime gives 84 and 80 ns. Quirk
 * `time-truncation` (doc/rdma-lb.rst, "Lock-step with the reference simulator"; the Rust twin for
 * flow start times is rdma_lb_scenario::units::ns3_19_seconds_to_ns).
 *
 * SimAI's ns-3 (SimAI, NSDI '25; its network backend ns-3-alibabacloud) truncates too, in
 * integers: DataRate::CalculateBytesTxTime is Seconds(bytes x 8) / bps, a Time divided by an
 * integer, so 1000 B at 100 Gbps take 80 ns there and 1048 B 83 ns. The quirk under a SimAI
 * workload (RdmaNetDevice/RdmaNic::IntegerTxTime).
 *
 * htsim (the UEC's and the REPS authors') keeps time in picoseconds: a packet of B bytes takes
 * B x 8 x 10^12 / bps ps, truncated (network.cpp / uec.cpp), so 64 B at 400 Gb/s take 1.28 ns
 * where a Time of whole ns gives 1 (rounded). On a host link that carries 4,150 B data and
 * 64 B control packets that is 0.3 % more room for data, which decides whether RCCC's senders
 * outrun their 0.99 x line-rate credit. The ps clock (attribute TxTime "ps" of
 * RdmaNetDevice and RdmaNic; `[transport.uet] tx_time`, the default under htsim inputs)
 * computes htsim's ps and lets a port carry the fraction of a ns to the next frame it sends
 * back to back, so that its rate is exact while events stay on whole ns.
 */
#ifndef RDMA_TIME_H
#define RDMA_TIME_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup rdma-lb
 * \return the nanoseconds ns-3.19 makes of \p seconds (see above); 0 for values <= 0 or not
 * finite
 */
uint64_t RdmaNs319SecondsToNs(double seconds);

/**
 * \ingroup rdma-lb
 * How serialization and pacing times are computed (see above).
 */
enum class RdmaTxArithmetic : uint8_t
{
    ROUNDED, //!< this ns-3's DataRate::CalculateBytesTxTime (the model's own)
    NS319,   //!< ns-3.19's: a double of seconds, truncated to whole ns (time-truncation)
    INTEGER, //!< SimAI's: bytes x 8 x 10^9 / bps in integers, truncated (time-truncation, SimAI)
    PICOSECOND, //!< htsim's ps, truncated to whole ns (a port carries the fraction: TxTime ps)
};

/**
 * \ingroup rdma-lb
 * The clock of a port's serialization times (attribute TxTime of RdmaNetDevice and RdmaNic).
 */
enum RdmaTxClock
{
    TX_CLOCK_NS = 0, //!< whole ns, as the arithmetic of TimeTruncation / IntegerTxTime gives
    TX_CLOCK_PS = 1, //!< htsim's whole ps; a port carries the fraction of a ns (see above)
};

/**
 * \ingroup rdma-lb
 * \return the arithmetic of a device's or NIC's TimeTruncation, IntegerTxTime and TxTime
 * attributes (IntegerTxTime matters only with TimeTruncation; the ps clock wins over both)
 */
RdmaTxArithmetic RdmaTxArithmeticOf(bool timeTruncation,
                                    bool integerTxTime,
                                    RdmaTxClock clock = TX_CLOCK_NS);

/**
 * \ingroup rdma-lb
 * \return htsim's serialization time of \p bytes at \p rate in ps: bytes x 8 x 10^12 / bps,
 * truncated (0 at rate 0)
 */
uint64_t RdmaTxPicoseconds(const DataRate& rate, uint32_t bytes);

/**
 * \ingroup rdma-lb
 * \return the serialization time of \p bytes at \p rate, computed as \p arithmetic says
 */
Time RdmaTxTime(const DataRate& rate, uint32_t bytes, RdmaTxArithmetic arithmetic);

} // namespace ns3

#endif /* RDMA_TIME_H */
