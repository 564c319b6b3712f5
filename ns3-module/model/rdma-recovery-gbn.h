/*
 * rdma-lb: Go-Back-N loss recovery of the NIC (LossRecovery gbn), the reference's default
 * (RdmaHw with ENABLE_IRN 0; doc/rdma-lb.rst, "NIC").
 *
 * Receiver: an in-order packet advances the expected byte E and is ACKed at the ACK milestones
 * (L2AckInterval packets; L2ChunkSize boundaries; the reference resets the milestone every
 * packet unless AckMilestoneFix); an out-of-order packet (beyond E) gets one NACK carrying E
 * per NackInterval (a new E may be NACKed at once), with the CNP flag if NackCarriesCnp; a
 * duplicate is ACKed. Sender: a NACK sends the queue pair back to the cumulative ACK; the
 * retransmission timer (L2Timeout) does the same.
 */
#ifndef RDMA_RECOVERY_GBN_H
#define RDMA_RECOVERY_GBN_H

#include "rdma-recovery.h"

namespace ns3
{

/**
 * \ingroup rdma-lb
 * Go-Back-N (see the file comment).
 */
class RdmaGoBackN final : public RdmaRoceRecovery
{
  public:
    using RdmaRoceRecovery::RdmaRoceRecovery;

    Ptr<Packet> NextPacket(Time now) override;
    void ReceiveData(const RdmaHeader& h, Ptr<Packet> p) override;
    void ReceiveAck(QpIterator it, const RdmaHeader& h) override;

    /// \return whether \p qp may send at \p now (else \p wake is lowered to when pacing will
    /// let it); RdmaNic::ServeQueuePairs
    bool Eligible(RdmaQueuePair& qp, Time now, Time* wake);
    /// \return the data packet of eligible \p qp, sent; RdmaNic::ServeQueuePairs
    Ptr<Packet> Send(RdmaQueuePair& qp, Time now);

  private:
    /// (Re)arms the retransmission timer of \p qp: L2Timeout.
    void ArmRto(RdmaQueuePair& qp) override;
};

} // namespace ns3

#endif /* RDMA_RECOVERY_GBN_H */
