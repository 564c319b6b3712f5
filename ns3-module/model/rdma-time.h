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
 * Serialization time of \p bytes at \p rate.
 * \param truncate true: as ns-3.19 (whole ns, truncated); false: this ns-3's
 * DataRate::CalculateBytesTxTime
 */
Time RdmaTxTime(const DataRate& rate, uint32_t bytes, bool truncate);

} // namespace ns3

#endif /* RDMA_TIME_H */
