/*
 * rdma-lb: IRN loss recovery of the NIC (ns3::RdmaIrn, config "irn"), the reference's
 * simplified IRN (RdmaHw with ENABLE_IRN 1; "Revisiting Network Support for RDMA", SIGCOMM
 * 2018, §3; doc/rdma-lb.rst, "NIC").
 *
 * Receiver: every data packet is answered by a NACK-typed feedback: in order, an "ACK-like
 * NACK" (no SACK block while nothing is held out of order, else the packet's own block); out of
 * order, a NACK with the packet's SACK block (a block SACKed before is NACKed again only after
 * NackInterval), with the CNP flag if NackCarriesCnp. Sender: a SACK list skipped when
 * sending, a BDP cap on the bytes in flight (IrnBdp), recovery entered on a SACK beyond the
 * hole (IrnOooThreshold packets past it; the reference: any SACK, quirk irn-sender) and left
 * when the cumulative ACK passes the point of entry, and the RTO low/high by the bytes in
 * flight (IrnRtoLow, IrnRtoHigh), not armed while the port is lossless unless IrnRtoWithPfc.
 *
 * Option IrnQpPerPath (off by default; the Hopper paper, "Predictive Load Balancing for RDMA
 * Traffic", §3.3: "Hopper simply starts using the corresponding QP that was used to probe the
 * path"): the data a queue pair sends after its load balancer changes the path travels in a
 * PSN space of its own, as in a second queue pair. A fresh packet on a new entropy opens a
 * space at its byte; data packets carry their space's start (RdmaHeader::echoSeq). The
 * receiver keeps the next byte in order of every space beyond its cumulative point: a packet
 * that is next in its own space is held and SACKed with FLAG_IN_ORDER_SACK (no CNP, no loss
 * signal), so packets overtaking the old path's do not count as reordering; a gap inside a
 * space is NACKed as usual. The sender goes back only to the space of the SACK, and counts in
 * flight from the newest space's in-order point once the space runs ahead of the cumulative
 * ACK (each queue pair has its own BDP cap). Resends take the load balancer's current path, as
 * new packets do (our choice: a second queue pair would resend on the old one). Meant for
 * schemes that change path rarely (Hopper, FlowBender): under per-packet spraying every packet
 * opens a space, and a lost packet is found by the timeout only.
 *
 * Attributes (ns3::RdmaIrn): its own IrnRtoLow, IrnRtoHigh, IrnBdp, IrnOooThreshold,
 * IrnRtoWithPfc and IrnQpPerPath; NackInterval and NackCarriesCnp of RdmaRoceRecovery.
 */
#ifndef RDMA_RECOVERY_IRN_H
#define RDMA_RECOVERY_IRN_H

#include "rdma-recovery.h"

namespace ns3
{

/**
 * \ingroup rdma-lb
 * IRN (see the file comment).
 */
class RdmaIrn final : public RdmaRoceRecovery
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();

    RdmaFramePtr NextPacket(Time now) override;
    void ReceiveData(const RdmaHeader& h, uint32_t payloadBytes) override;
    void ReceiveAck(QpIterator it, const RdmaHeader& h) override;

    /// \return whether \p qp may send at \p now (else \p wake is lowered to when pacing will
    /// let it); first skips what the receiver SACKed. RdmaRecoveryHost::ServeQueuePairs
    bool Eligible(RdmaQueuePair& qp, Time now, Time* wake);
    /// \return the data packet of eligible \p qp, sent; RdmaRecoveryHost::ServeQueuePairs
    RdmaFramePtr Send(RdmaQueuePair& qp, Time now);

  private:
    void OnTimeout(RdmaQueuePair& qp) override;
    /// (Re)arms the retransmission timer of \p qp: IrnRtoHigh above 3 packets in flight, else
    /// IrnRtoLow; none while the port is lossless (unless IrnRtoWithPfc).
    void ArmRto(RdmaQueuePair& qp) override;
    /// \return the bytes in flight for the BDP cap and the RTO choice
    uint64_t Inflight(const RdmaQueuePair& qp) const;
    /// IrnQpPerPath, sender: opens a PSN space at \p seq when a fresh packet leaves on a new
    /// \p entropy (the first packet opens the space at 0)
    static void OpenSpace(RdmaQueuePair& qp, uint64_t seq, uint16_t entropy, bool fresh);
    /// IrnQpPerPath, sender: \return the start of the PSN space byte \p seq is in
    static uint64_t SpaceStart(const RdmaQueuePair& qp, uint64_t seq);
    /// IrnQpPerPath, receiver: \return whether data \p s of \p len bytes is the next in order
    /// of its own PSN space, which starts at \p spaceStart beyond the cumulative point (then
    /// it is held as received)
    bool InOrderInItsSpace(RxState& rx, uint64_t spaceStart, uint64_t s, uint64_t len);

    // Attributes (defaults: the table's, RdmaTransportDefault; IrnRtoWithPfc: false).
    Time m_rtoLow;            //!< IrnRtoLow: RTO with at most 3 packets in flight
    Time m_rtoHigh;           //!< IrnRtoHigh: RTO otherwise
    uint64_t m_bdp{};         //!< IrnBdp: cap on the bytes in flight
    uint32_t m_oooThreshold{}; //!< IrnOooThreshold: packets SACKed past the hole before going back
    bool m_rtoWithPfc{};      //!< IrnRtoWithPfc: keep the timeouts on a lossless port
    bool m_qpPerPath{};       //!< IrnQpPerPath: a path change opens a new PSN space
};

} // namespace ns3

#endif /* RDMA_RECOVERY_IRN_H */
