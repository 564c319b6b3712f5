/*
 * rdma-lb: loss recovery of the RDMA NIC, one class per scheme (doc/rdma-lb.rst, "NIC"; as
 * the reference's RdmaHw runs Go-Back-N and IRN).
 *
 * The NIC (RdmaNic) keeps what every scheme shares: queue pairs served round-robin with
 * pacing, the load balancer's entropy and feedback, probes, congestion control, completion and
 * the flow records. One RdmaLossRecovery per NIC, an ns3::Object created at its first use by
 * the NIC's factory attribute LossRecovery (its TypeId, and attribute values per NIC or from
 * Config::SetDefault), decides the rest:
 *  - RdmaGoBackN (rdma-recovery-gbn): Go-Back-N, the reference's default (ENABLE_IRN 0);
 *  - RdmaIrn (rdma-recovery-irn): the reference's simplified IRN (ENABLE_IRN 1);
 *  - RdmaNicSr (rdma-recovery-nicsr): commodity selective repeat (the Themis paper, §2.2);
 *  - RdmaUetRecovery (rdma-recovery-uet): the sender and receiver of the uet transport
 *    (rdma-uet.h for its rules and their sources).
 * A scheme decides which queue pair may send and what it sends (NextPacket), how the receiver
 * answers a data packet (ReceiveData), what the sender does with an ACK or NACK (ReceiveAck),
 * and when its retransmission timer fires and what that does. The NIC makes one virtual call
 * per event (a send opportunity, a data packet, an ACK/NACK; a timer event calls the scheme
 * directly); within a send opportunity the NIC's round-robin
 * (RdmaRecoveryHost::ServeQueuePairs) is instantiated per scheme, so that asking each queue
 * pair whether it may send is a direct call. Nothing is allocated per packet. A scheme sees
 * its NIC only through the queue-pair context RdmaRecoveryHost (rdma-recovery-host.h: the
 * NIC's settings by reference, the queue pairs, the receiver state, the shared steps, all
 * direct calls), as ns-3's TcpRecoveryOps sees TcpSocketState; its per-queue-pair state lives
 * in RdmaQueuePair (sack, irnRecovery, srRetx; uet) and the receiver's in RdmaRxState.
 *
 * Attributes: each scheme's TypeId holds the settings only it uses, as members in its own
 * header (e.g. RdmaGoBackN::L2ChunkSize); settings several RoCE schemes use are attributes of
 * RdmaRoceRecovery, which their TypeIds inherit (NackInterval, L2Timeout, NackCarriesCnp).
 * Their defaults are the table of transport parameters' (RdmaTransportDefault). Settings of
 * the NIC itself (PayloadSize, L2AckInterval, RateBound, Window, the quirks, the uet
 * transport's Uet*) stay the NIC's: the NIC reads them too.
 *
 * RdmaRoceRecovery holds the steps the three RoCE schemes share: the eligibility common to all
 * (data left, priority group not paused, window), building and accounting a data packet, the
 * receiver's NACK, the ACK's feedback and bookkeeping, and the retransmission timer.
 */
#ifndef RDMA_RECOVERY_H
#define RDMA_RECOVERY_H

#include "rdma-nic.h"

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <map>
#include <vector>

namespace ns3
{

class Packet;
class RdmaHeader;

/**
 * \ingroup rdma-lb
 * The loss recovery of a NIC (see the file comment): what the NIC hands over per event.
 */
class RdmaLossRecovery : public Object
{
  public:
    /// \return the TypeId (abstract: no attributes of its own)
    static TypeId GetTypeId();
    RdmaLossRecovery();
    ~RdmaLossRecovery() override;
    RdmaLossRecovery(const RdmaLossRecovery&) = delete;
    RdmaLossRecovery& operator=(const RdmaLossRecovery&) = delete;

    /// Binds the scheme to \p host, the queue-pair context of its NIC (rdma-recovery-host.h),
    /// whose queue pairs and receiver state it works on (once, before its first event; the
    /// NIC owns the scheme).
    void Setup(RdmaRecoveryHost& host);

    /**
     * The port may send and the NIC has queue pairs: the data packet of the first eligible
     * queue pair after the last one served (RdmaRecoveryHost::ServeQueuePairs with this scheme),
     * or null after scheduling the NIC's wake-up.
     */
    virtual RdmaFramePtr NextPacket(Time now) = 0;
    /// Receiver: data packet \p h with \p payloadBytes after its header, not a probe.
    virtual void ReceiveData(const RdmaHeader& h, uint32_t payloadBytes) = 0;
    /// Sender: ACK or NACK \p h for the active queue pair at \p it, not a probe's answer.
    virtual void ReceiveAck(std::map<uint16_t, RdmaQueuePair>::iterator it,
                            const RdmaHeader& h) = 0;

  protected:
    /// \return the NIC's settings (RdmaRecoveryHost::Settings)
    const RdmaNicSettings& Settings() const
    {
        return m_host->Settings();
    }

    RdmaRecoveryHost* m_host{nullptr}; //!< the NIC's queue-pair context (Setup)
};

/**
 * \ingroup rdma-lb
 * The steps the RoCE schemes (Go-Back-N, IRN, NIC-SR) share, on the NIC's state.
 */
class RdmaRoceRecovery : public RdmaLossRecovery
{
  public:
    /// \return the TypeId (abstract): the attributes the RoCE schemes share
    static TypeId GetTypeId();

  protected:
    using RxState = RdmaRxState; //!< receiver state of one incoming flow
    using QpIterator = RdmaRecoveryHost::QpIterator; //!< an active queue pair

    // ---- Sender ----
    /**
     * \return whether \p qp has data to send (the next byte, or an offset queued for resending
     * in srRetx), its priority group is not paused (the resume kicks the port) and the window
     * of HAS_WIN lets it send (an ACK kicks the port); pacing is RdmaRecoveryHost::TimeToSend's
     */
    bool HasDataAndRoom(const RdmaQueuePair& qp) const;
    /**
     * Builds the data packet of eligible \p qp -- the first offset queued in srRetx, else the
     * next byte -- and accounts it: DataSent, the next byte or the queue, the counters and
     * entropy window, the pacing of the next packet. The caller then arms its timer.
     * \param everyArrivalAnswered whether the receiver answers every data packet (the load
     * balancer's LbSendContext)
     */
    RdmaFramePtr SendData(RdmaQueuePair& qp, Time now, bool everyArrivalAnswered);
    /// (Re)arms the retransmission timer of \p qp to fire \p rto from now (one event per
    /// queue pair; it re-checks the lazily moved deadline when it fires).
    void ArmRtoIn(RdmaQueuePair& qp, Time rto);
    /// The retransmission timer of queue pair \p qpn: on its deadline with bytes outstanding,
    /// a timeout: the load balancer is told (the oldest unacknowledged packet's entropy),
    /// OnTimeout, then the queue pair goes back to its oldest unacknowledged byte.
    void RtoCheck(uint16_t qpn);
    /// A timeout of \p qp, before it goes back (IRN enters recovery). Default: nothing.
    virtual void OnTimeout(RdmaQueuePair& qp);

    // ---- Sender: ACK/NACK ----
    /**
     * The feedback \p h as the load balancer sees it: about the answered packet (its entropy,
     * RTT and ECN echo), a NACK if \p nack and not \p sacksAnswered; then counts a NACK and
     * advances the cumulative ACK.
     */
    void AckFeedback(RdmaQueuePair& qp, const RdmaHeader& h, bool nack, bool sacksAnswered);
    /**
     * \return whether the timer restarts after this ACK: with \p referenceRule (quirk
     * irn-sender) while sent-but-unacknowledged bytes remain (snd_nxt > snd_una, before any
     * going back), else while any byte sent is unacknowledged
     */
    static bool RestartsTimer(const RdmaQueuePair& qp, bool referenceRule);
    /**
     * The congestion control's part of ACK/NACK \p h (a CNP flag, or \p congestion: a NIC-SR
     * NACK), then completion: \return true when \p h acknowledged the flow's last byte (the
     * queue pair is gone), else the congestion control has seen the ACK (OnAck)
     */
    bool AckCompletes(QpIterator it, const RdmaHeader& h, bool congestion);
    /**
     * The tail every scheme's ACK/NACK \p h shares: AckCompletes (with \p congestion), then,
     * unless the flow completed, the scheme's retransmission timer (ArmRto) if
     * \p restartTimer, the load balancer's timer and a kick of the port
     */
    void FinishAck(QpIterator it, const RdmaHeader& h, bool congestion, bool restartTimer);
    /// (Re)arms the retransmission timer of \p qp with the scheme's timeout.
    virtual void ArmRto(RdmaQueuePair& qp) = 0;

    // ---- Receiver ----
    /// \return the receiver state of the flow of data packet \p h (created at its first packet)
    RxState& Rx(const RdmaHeader& h);
    /// Sends a NACK for data packet \p h: counted, traced (NackSent), expected byte rx.expected.
    void Nack(const RdmaHeader& h, RxState& rx, uint16_t flags, uint64_t sackSeq, uint64_t sackLen);

    // Attributes (defaults: the table's, RdmaTransportDefault).
    Time m_nackInterval;     //!< NackInterval: one NACK per expected byte within it (GBN, IRN)
    Time m_l2Timeout;        //!< L2Timeout: retransmission timeout (GBN, NIC-SR)
    bool m_nackCarriesCnp{}; //!< NackCarriesCnp: an out-of-order NACK cuts the rate (GBN, IRN)
};

} // namespace ns3

#endif /* RDMA_RECOVERY_H */
