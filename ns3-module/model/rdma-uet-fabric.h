/*
 * rdma-lb: the uet transport's fabric-wide settings whose 0 means "derived from the fabric"
 * (the switches' data queue and ECN thresholds, the base RTT, the retransmission timeout):
 * the attributes of one object, and the one place their derived values are computed and set
 * on the switches and NICs. The rules are those of the REPS artifact's scripts (htsim
 * run_symmetric.py getBDP, main_uec.cpp; the REPS paper, §4) as doc/rdma-lb.rst, "The UET
 * transport (REPS's)", states them:
 *
 *   wire      = payload + UetHeaderSize; ACK wire = max(RdmaHeader::ACK_BYTES, UetHeaderSize)
 *   tx        = diameter (hops) x (wire + ACK wire) x 8 / host rate (htsim
 *               base_rtt_bw_two_points' serialization part)
 *   BaseRtt   0 = 2 x the largest one-way propagation + tx (htsim network_max_unloaded_rtt;
 *               each pair's own 2 x propagation + tx for its window cap); else that, for
 *               every pair
 *   QueuePackets   0 = max(1, BDP / wire), BDP = BaseRtt x host rate
 *   EcnKminPackets 0 = queue / 4;  EcnKmaxPackets 0 = 3 x queue / 4 (htsim
 *               CompositeQueue::decide_ECN; marking probability rising to 1 at kmax)
 *   Rto       0 = BaseRtt + 4 x queue x wire x 8 / host rate
 *
 * Integer arithmetic (ns, bytes, bits/s), each division truncating, as the scenario program
 * has always computed them. The scenario program (RdmaScenarioRunner::ConfigureUet) sets the
 * attributes from the table of transport parameters (transport_params/uet.rs) and calls
 * Derive with the fabric's shape, then ConfigureSwitch and ConfigureNic.
 */
#ifndef RDMA_UET_FABRIC_H
#define RDMA_UET_FABRIC_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{

class RdmaNic;
class RdmaSwitch;

/// \ingroup rdma-lb
/// What the derivation reads of the fabric.
struct RdmaUetFabricShape
{
    uint32_t payloadBytes{0}; //!< RdmaNic::PayloadSize
    uint32_t headerBytes{0};  //!< RdmaNic::UetHeaderSize
    uint64_t maxDelayNs{0};   //!< the largest one-way propagation delay of a host pair
    uint64_t maxHops{0};      //!< the largest hop count of a host pair (the diameter)
    uint64_t hostBps{0};      //!< the largest host pair bottleneck rate (unless SizingRate)
};

/// \ingroup rdma-lb
/// The settings in effect: the attributes' values, or where 0 their derived values.
struct RdmaUetDerived
{
    uint64_t sizingBps{0};      //!< the rate the derived values are sized for
    uint64_t wireBytes{0};      //!< a full data packet on the wire
    uint64_t txNs{0};           //!< the serialization part of an unloaded RTT
    uint64_t baseRttNs{0};      //!< BaseRtt in effect
    bool baseRttPerPair{false}; //!< BaseRtt was 0: each pair's window cap reads its own RTT
    uint64_t queuePackets{0};   //!< QueuePackets in effect
    uint64_t ecnKminPackets{0}; //!< EcnKminPackets in effect
    uint64_t ecnKmaxPackets{0}; //!< EcnKmaxPackets in effect
    uint64_t rtoNs{0};          //!< Rto in effect
};

/**
 * \ingroup rdma-lb
 * The uet transport's fabric-wide settings (see the file comment): attributes QueuePackets,
 * EcnKminPackets, EcnKmaxPackets, BaseRtt and Rto, each 0 = derived; Derive computes the
 * values in effect, ConfigureSwitch and ConfigureNic set them.
 */
class RdmaUetFabric : public Object
{
  public:
    /// \return the TypeId (defaults: the uet table of transport parameters')
    static TypeId GetTypeId();

    /// \return the settings in effect on a fabric of shape \p shape
    RdmaUetDerived Derive(const RdmaUetFabricShape& shape) const;

    /// Sets switch \p sw's data queue limit, ECN thresholds and payload (\p payloadBytes) for
    /// \p d, and its MMU: no egress dynamic threshold, and a buffer of at least
    /// \p bufferBytes with room for every port's full queue (htsim's queues are per port: the
    /// shared buffer must never refuse first).
    static void ConfigureSwitch(Ptr<RdmaSwitch> sw,
                                const RdmaUetDerived& d,
                                uint32_t payloadBytes,
                                uint64_t bufferBytes);

    /// Sets NIC \p nic's base RTT and retransmission timeout for \p d (its per-pair base RTT,
    /// when \p d says so, is the caller's: RdmaNic::SetUetBaseRttOf).
    static void ConfigureNic(Ptr<RdmaNic> nic, const RdmaUetDerived& d);

  private:
    uint32_t m_queuePackets{0};   //!< QueuePackets (0 = one BDP)
    uint32_t m_ecnKminPackets{0}; //!< EcnKminPackets (0 = queue / 4)
    uint32_t m_ecnKmaxPackets{0}; //!< EcnKmaxPackets (0 = 3 x queue / 4)
    Time m_baseRtt;               //!< BaseRtt (0 = the fabric's largest unloaded RTT)
    Time m_rto;                   //!< Rto (0 = base RTT + 4 queue drains)
    DataRate m_sizingRate;        //!< SizingRate (0 = the largest host pair bottleneck)
};

} // namespace ns3

#endif /* RDMA_UET_FABRIC_H */
