/*
 * rdma-lb: Go-Back-N loss recovery of the NIC (ns3::RdmaGoBackN, config "gbn"), the
 * reference's default (RdmaHw with ENABLE_IRN 0; doc/rdma-lb.rst, "NIC").
 *
 * Receiver: an in-order packet advances the expected byte E and is ACKed at the ACK milestones
 * (L2AckInterval packets; L2ChunkSize boundaries; the reference resets the milestone every
 * packet unless AckMilestoneFix); an out-of-order packet (beyond E) gets one NACK carrying E
 * per NackInterval (a new E may be NACKed at once), with the CNP flag if NackCarriesCnp; a
 * duplicate is ACKed. Sender: a NACK sends the queue pair back to the cumulative ACK; the
 * retransmission timer (L2Timeout) does the same.
 *
 * Attributes (ns3::RdmaGoBackN): its own L2ChunkSize and AckMilestoneFix; NackInterval,
 * L2Timeout and NackCarriesCnp of RdmaRoceRecovery; L2AckInterval and PayloadSize are the NIC's.
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
    /// \return the TypeId
    static TypeId GetTypeId();

    RdmaFramePtr NextPacket(Time now) override;
    void ReceiveData(const RdmaHeader& h, uint32_t payloadBytes) override;
    void ReceiveAck(QpIterator it, const RdmaHeader& h) override;

    /// \return whether \p qp may send at \p now (else \p wake is lowered to when pacing will
    /// let it); RdmaRecoveryHost::ServeQueuePairs
    bool Eligible(RdmaQueuePair& qp, Time now, Time* wake);
    /// \return the data packet of eligible \p qp, sent; RdmaRecoveryHost::ServeQueuePairs
    RdmaFramePtr Send(RdmaQueuePair& qp, Time now);

  private:
    /// (Re)arms the retransmission timer of \p qp: L2Timeout.
    void ArmRto(RdmaQueuePair& qp) override;

    // Attributes (defaults: the table's, RdmaTransportDefault).
    uint32_t m_chunkSize{};   //!< L2ChunkSize: also ACK at multiples of it (bytes; 0 = off)
    bool m_ackMilestoneFix{}; //!< AckMilestoneFix: ACK once per L2AckInterval packets
};

} // namespace ns3

#endif /* RDMA_RECOVERY_GBN_H */
