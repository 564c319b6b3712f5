/*
 * rdma-lb: the sender and receiver of the NIC's UET transport (Transport uet), beside the RoCE
 * loss recoveries: REPS's Ultra-Ethernet-style transport as its authors' simulator runs it
 * (the REPS paper, §4; doc/rdma-lb.rst, "The UET transport (REPS's)"). The rules, their
 * sources and the deviations are in rdma-uet.h.
 */
#ifndef RDMA_RECOVERY_UET_H
#define RDMA_RECOVERY_UET_H

#include "rdma-recovery.h"
#include "rdma-uet.h"

namespace ns3
{

/**
 * \ingroup rdma-lb
 * The UET transport's sender (window, outstanding packets, retransmission queue and timer)
 * and receiver (per-packet ACK with SACK, NACK of a trimmed packet); see rdma-uet.h.
 */
class RdmaUetRecovery final : public RdmaLossRecovery
{
  public:
    /// \return the TypeId: the window rule's options (the transport's other settings, Uet*,
    /// are the NIC's)
    static TypeId GetTypeId();

    RdmaFramePtr NextPacket(Time now) override;
    void ReceiveData(const RdmaHeader& h, uint32_t payloadBytes) override;
    void ReceiveAck(std::map<uint16_t, RdmaQueuePair>::iterator it, const RdmaHeader& h) override;

    /// \return whether \p qp may send at \p now: data or a resend, window above the bytes in
    /// flight, pacing (else \p wake is lowered to when pacing will let it).
    /// RdmaNic::ServeQueuePairs
    bool Eligible(RdmaQueuePair& qp, Time now, Time* wake);
    /// \return the data packet of eligible \p qp (a resend first), sent;
    /// RdmaNic::ServeQueuePairs
    RdmaFramePtr Send(RdmaQueuePair& qp, Time now);

  private:
    using RxState = RdmaNic::RxState; //!< receiver state of one incoming flow

    /// Creates the queue pair's UET sender state at its first send opportunity.
    RdmaUetSender& Sender(RdmaQueuePair& qp);
    /// Sends the ACK/NACK of UET data packet \p h (padded to UetHeaderSize).
    void SendFeedback(const RdmaHeader& h, const RxState& rx, RdmaHeader::Type type,
                      uint64_t sackLen);
    /// Removes the outstanding packet at offset \p seq after its loss (NACK or timeout): window cut,
    /// queued for retransmission. \return its entropy
    uint16_t Lose(RdmaQueuePair& qp, uint64_t seq);
    /// (Re)arms the timer of \p qp on its oldest outstanding packet (sent + UetRto).
    void ArmRto(RdmaQueuePair& qp);
    /// The retransmission timer of queue pair \p qpn.
    void RtoCheck(uint16_t qpn);

    double m_waitToDecrease{0}; //!< WaitToDecrease: threshold of the ECN average (0 = off)
    double m_wtdAlpha{0.05};    //!< WtdAlpha: gain of the ECN average per ACK
};

} // namespace ns3

#endif /* RDMA_RECOVERY_UET_H */
