/*
 * rdma-lb: selective repeat of commodity RNICs (ns3::RdmaNicSr, config "nic-sr"), as the
 * Themis paper describes it ("Enabling Packet Spraying over Commodity RNICs with In-Network Support", §2.2;
 * doc/rdma-lb.rst, "NIC").
 *
 * Receiver: keeps the expected byte E and a bitmap of out-of-order arrivals; an in-order
 * packet is ACKed (and E jumps over the held packets), the first out-of-order arrival for an E
 * triggers exactly one NACK carrying only E (later ones for the same E: an ACK if ECN-marked,
 * else nothing). Sender: a NACK queues only the expected packet for resending (srRetx) and is
 * treated as congestion (the congestion control's OnCnp, DCQCN's rate decrease); a timeout
 * goes back to the cumulative ACK (L2Timeout).
 *
 * Attributes (ns3::RdmaNicSr): none of its own; L2Timeout of RdmaRoceRecovery.
 */
#ifndef RDMA_RECOVERY_NICSR_H
#define RDMA_RECOVERY_NICSR_H

#include "rdma-recovery.h"

namespace ns3
{

/**
 * \ingroup rdma-lb
 * NIC selective repeat (see the file comment).
 */
class RdmaNicSr final : public RdmaRoceRecovery
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();

    RdmaFramePtr NextPacket(Time now) override;
    void ReceiveData(const RdmaHeader& h, uint32_t payloadBytes) override;
    void ReceiveAck(QpIterator it, const RdmaHeader& h) override;

    /// \return whether \p qp may send at \p now (else \p wake is lowered to when pacing will
    /// let it); first forgets queued resends below the cumulative ACK.
    /// RdmaRecoveryHost::ServeQueuePairs
    bool Eligible(RdmaQueuePair& qp, Time now, Time* wake);
    /// \return the data packet of eligible \p qp (a queued resend first), sent;
    /// RdmaRecoveryHost::ServeQueuePairs
    RdmaFramePtr Send(RdmaQueuePair& qp, Time now);

  private:
    /// (Re)arms the retransmission timer of \p qp: L2Timeout.
    void ArmRto(RdmaQueuePair& qp) override;
};

} // namespace ns3

#endif /* RDMA_RECOVERY_NICSR_H */
