/*
 * rdma-lb: in-band network telemetry (INT) records of HPCC, as the reference's switches push
 * them (doc/rdma-lb.rst, "Congestion control").
 *
 * A switch egress appends one record per data packet it dequeues (HPCC only): the time, the
 * port's cumulative transmitted bytes before this packet, the port's queued bytes over all
 * classes after it left, and the port's line rate. A record is one 64-bit slot with the
 * reference's field widths and units, so the same truncations and wrap-arounds happen:
 *   rate code 3 bits {25, 50, 100, 200, 400, 40 Gbps}, time 24 bits (ns, wraps every 16.8 ms),
 *   bytes 20 bits in units of 128 x IntMulti B, queue 17 bits in units of 80 x IntMulti B.
 * A packet holds 5 slots and a 16-bit hop count (42 B on the wire); a sixth hop overwrites
 * slot 0 and the sender then ignores the feedback (hop count > 5), as in the reference.
 */
#ifndef RDMA_INT_H
#define RDMA_INT_H

#include <cstdint>

namespace ns3
{

/**
 * \ingroup rdma-lb
 * One INT record, packed as the reference packs it (see the file comment).
 */
class RdmaIntHop
{
  public:
    static constexpr uint32_t TIME_BITS = 24;   //!< timestamp width
    static constexpr uint32_t BYTES_BITS = 20;  //!< transmitted-bytes width
    static constexpr uint32_t QLEN_BITS = 17;   //!< queue-length width
    static constexpr uint64_t BYTE_UNIT = 128;  //!< bytes per unit of the bytes field
    static constexpr uint64_t QLEN_UNIT = 80;   //!< bytes per unit of the queue field
    static constexpr uint32_t MAX_HOPS = 5;     //!< slots per packet
    static constexpr uint32_t WIRE_BYTES = MAX_HOPS * 8 + 2; //!< 42 B on a data packet

    /**
     * \return the record of a port at \p timeNs that has sent \p txBytes and holds
     * \p qlenBytes, at line rate \p rateBps; \p multi is INT_MULTI. A rate outside the code
     * table leaves the code 0 (25 Gbps), as the reference leaves the field unset.
     */
    static uint64_t Pack(uint64_t timeNs, uint64_t txBytes, uint64_t qlenBytes, uint64_t rateBps,
                         uint32_t multi);
    /// \return the line rate of record \p v (bit/s; 0 for the two unused codes)
    static uint64_t LineRate(uint64_t v);
    /// \return the queued bytes of record \p v (in units of 80 x multi)
    static uint64_t Qlen(uint64_t v, uint32_t multi);
    /// \return the time field of record \p v (ns modulo 2^24)
    static uint64_t Time(uint64_t v);
    /// \return the ns from record \p older to record \p newer (one wrap of 2^24 allowed)
    static uint64_t TimeDelta(uint64_t newer, uint64_t older);
    /// \return the bytes sent from record \p older to \p newer (one wrap of 2^20 units allowed)
    static uint64_t BytesDelta(uint64_t newer, uint64_t older, uint32_t multi);
};

} // namespace ns3

#endif /* RDMA_INT_H */
