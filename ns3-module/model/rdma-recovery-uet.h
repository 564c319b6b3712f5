/*
 * rdma-lb: the sender and receiver of the NIC's UET transport (kind "uet"), beside the RoCE
 * loss recoveries: REPS's Ultra-Ethernet-style transport as its authors' simulator runs it
 * (the REPS paper, §4; doc/rdma-lb.rst, "The UET transport (REPS's)"). The rules, their
 * sources and the deviations are in rdma-uet.h.
 */
#ifndef RDMA_RECOVERY_UET_H
#define RDMA_RECOVERY_UET_H

#include "rdma-recovery.h"
#include "rdma-uet-nscc.h"
#include "rdma-uet-rccc.h"
#include "rdma-uet.h"

#include "ns3/event-id.h"
#include "ns3/traced-callback.h"

#include <map>
#include <utility>

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
    /// The sender's window rule (attribute Cc).
    enum Cc
    {
        MPRDMA, //!< htsim's mprdma window, the REPS artifact's (rdma-uet.h), the default
        NSCC,   //!< the Ultra Ethernet transport's NSCC (rdma-uet-nscc.h)
        RCCC,   //!< the Ultra Ethernet transport's RCCC alone (rdma-uet-rccc.h): no window
        NSCC_RCCC, //!< both: a packet needs NSCC's window and RCCC's credit
    };

    /// Which packets ask for an ACK at once with coalesced ACKs (attribute AckRequest;
    /// RdmaUetAckRequest).
    enum AckRequest
    {
        ACK_REQUEST_UEC,  //!< the UEC htsim's rule, the default
        ACK_REQUEST_REPS, //!< the REPS artifact's rule
    };

    /// What NSCC learns from an ACK or NACK (attribute NsccFeedback).
    enum NsccFeedback
    {
        /// "every-ack": every ACK's echoed send time is an RTT sample, an ACK credits NSCC with
        /// the packets it names, and a NACK's cumulative ACK credits nothing (ours, the
        /// default)
        NSCC_FEEDBACK_EVERY_ACK,
        /// "htsim": the UEC htsim's UecSrc::processAck: an RTT sample only for a packet still
        /// outstanding whose first transmission, or (resent once) second, this ACK answers
        /// (validateSendTs; else the delay average, neither it nor the base RTT updated); the
        /// bytes a NACK's cumulative ACK covers are credited at the next ACK (htsim counts
        /// them from the receiver's byte total, which only ACKs carry)
        NSCC_FEEDBACK_HTSIM,
    };

    /// What takes bytes out of flight (attribute Inflight).
    enum Inflight
    {
        /// "named-packets": each packet an ACK or NACK acknowledges, cumulatively or by its
        /// SACK (ours, the default)
        INFLIGHT_NAMED_PACKETS,
        /// "received-bytes": the growth of the receiver's count of new data bytes, which
        /// every ACK carries (RdmaHeader::recvdBytes): packets received out of order leave
        /// with the next ACK, named or not; a NACK takes out only its trimmed packet, and a
        /// packet waiting to be resent that an acknowledgement names comes back in (it left
        /// when it was found lost). The UEC htsim's UecSrc::processAck and handleAckno.
        INFLIGHT_RECEIVED_BYTES,
    };

    /// \return the TypeId: the window and its rule's options (the settings the NIC reads too,
    /// Uet*, are the NIC's; the fabric-derived ones RdmaUetFabric's)
    static TypeId GetTypeId();

    RdmaFramePtr NextPacket(Time now) override;
    void ReceiveData(const RdmaHeader& h, uint32_t payloadBytes) override;
    void ReceiveAck(std::map<uint16_t, RdmaQueuePair>::iterator it, const RdmaHeader& h) override;

    /// \return whether \p qp may send at \p now: data or a resend, window above the bytes in
    /// flight, pacing (else \p wake is lowered to when pacing will let it).
    /// RdmaRecoveryHost::ServeQueuePairs
    bool Eligible(RdmaQueuePair& qp, Time now, Time* wake);
    /// \return the data packet of eligible \p qp (a resend first), sent;
    /// RdmaRecoveryHost::ServeQueuePairs
    RdmaFramePtr Send(RdmaQueuePair& qp, Time now);

    /// What this NIC's transport sent (summary.json counters; ns-3's GetTotalTrims style).
    struct Counts
    {
        uint64_t ackRequests{0}; //!< data packets asking for an ACK at once (the AR bit)
        uint64_t acks{0};        //!< ACKs sent by its receiver
        uint64_t pulls{0};       //!< RCCC pulls sent by its receiver's pacer
    };

    /// \return what this NIC's transport sent so far
    const Counts& GetCounts() const
    {
        return m_counts;
    }

    /// Trace signature of Rts: flow id, the pull target carried (quanta).
    typedef void (*RtsTracedCallback)(uint32_t flowId, uint64_t pullTarget);
    /// Trace signature of Pull: sender address, queue pair, pull number (quanta), slow pull.
    typedef void (*PullTracedCallback)(uint32_t sip, uint16_t qpn, uint64_t pullNo, bool slow);

  private:
    using RxState = RdmaRxState; //!< receiver state of one incoming flow

    /// Creates the queue pair's UET sender state at its first send opportunity.
    RdmaUetSender& Sender(RdmaQueuePair& qp);
    /// Sends the ACK/NACK of UET data packet \p h (padded to UetHeaderSize).
    void SendFeedback(const RdmaHeader& h, const RxState& rx, RdmaHeader::Type type,
                      uint64_t sackLen);
    /// Enqueues feedback header \p a, padded to UetHeaderSize, at the highest priority.
    void SendHeader(const RdmaHeader& a);
    /// The in-order data now ends at \p end: takes the held blocks it reaches, then reports
    /// a delivered flow from \p sip.
    void Advance(RxState& rx, uint32_t sip, uint64_t end);
    /// AckBytes > 0: the receiver's rule for data packet \p h of \p len payload bytes.
    void ReceiveCoalesced(const RdmaHeader& h, RxState& rx, uint64_t len);
    /// Sends a coalesced ACK for \p h with the SACK bitmap from \p h's packet when
    /// \p toTrigger, else ending at it; restarts the byte count.
    void SendCoalescedAck(const RdmaHeader& h, RxState& rx, bool toTrigger);
    /// \return the bitmap of the 64 packets from byte offset \p base held out of order.
    uint64_t SackBitmap(const RxState& rx, uint64_t base) const;
    /// Removes the outstanding packet at offset \p seq after its loss (a NACK when \p nack,
    /// else a timeout) at \p now: window cut, queued for retransmission. \return its entropy
    uint16_t Lose(RdmaQueuePair& qp, uint64_t seq, bool nack, Time now, bool lastHop = false);
    /// (Re)arms the timer of \p qp on its oldest outstanding packet (sent + UetRto).
    void ArmRto(RdmaQueuePair& qp);
    /// The retransmission timer of queue pair \p qpn.
    void RtoCheck(uint16_t qpn);

    /// Cuts the window for the loss of the outstanding packet at \p seq (before it leaves the
    /// bytes in flight): by its bytes (mprdma, NSCC on a timeout), NSCC's NACK rule on a NACK.
    /// With RCCC a NACK of a trim at the last hop (\p lastHop) leaves NSCC's window.
    void CutOnLoss(RdmaQueuePair& qp, const RdmaUetSent& at, bool nack, bool lastHop, Time now);
    /// Copies NSCC's window and cap into \p u (what the send gate and the trace read).
    static void MirrorNscc(RdmaUetSender& u);
    /// \return the payload of \p qp's packet at byte offset \p seq (a full one, or the rest)
    uint32_t PayloadAt(const RdmaQueuePair& qp, uint64_t seq) const;
    /// \return the wire bytes of \p qp's packet at byte offset \p seq (its payload and the uet
    /// headers): what it counts in flight
    uint64_t WireAt(const RdmaQueuePair& qp, uint64_t seq) const;
    /// NSCC's settings (derived at the first queue pair from the NIC's; they are per fabric).
    const RdmaUetNsccParams& Nscc();
    /// RCCC's settings (derived at first use from the NIC's rate, base RTT and window cap).
    const RdmaUetRcccParams& Rccc();
    /// \return whether NSCC runs (Cc nscc or nscc+rccc)
    bool UsesNscc() const
    {
        return m_cc == NSCC || m_cc == NSCC_RCCC;
    }
    /// \return whether RCCC runs (Cc rccc or nscc+rccc)
    bool UsesRccc() const
    {
        return m_cc == RCCC || m_cc == NSCC_RCCC;
    }
    /// \return new bytes \p qp still has to send from \p next on, headers included (htsim's
    /// _backlog)
    int64_t BacklogBytes(const RdmaQueuePair& qp, uint64_t next) const;
    /// \return wire bytes of \p qp's queued resends (htsim's _rtx_backlog)
    int64_t RtxBytes(const RdmaQueuePair& qp) const;
    /// RCCC after the timeout of a packet of \p qp (htsim rtxTimerExpired): an RTS when no
    /// credit (or window) lets the resend go; \p rtxWasEmpty: no resend was queued before.
    void RcccOnTimeout(RdmaQueuePair& qp, bool rtxWasEmpty, uint32_t wireBytes, Time now);
    /// Sends an RTS of \p qp (at most one per network RTT with NSCC on; htsim sendRTS).
    void SendRts(RdmaQueuePair& qp, Time now);
    /// Receiver: the RCCC state of the flow of data header \p h (its reply template kept).
    RdmaUetRcccSink& RcccSink(const RdmaHeader& h, const RxState& rx);
    /// Receiver: flow \p key asks its NIC's pull pacer for credit.
    void RequestPull(const std::pair<uint32_t, uint16_t>& key);
    /// Receiver: the pull pacer's event (one grant, the next one scheduled).
    void PacerEvent();

    /// An incoming flow's RCCC state and the header its pulls answer.
    struct RcccFlow
    {
        RdmaUetRcccSink sink; //!< credit state
        RdmaHeader reply;     //!< a reply to its latest packet (addresses, ports, qpn)
    };

    double m_maxWindowBdp{1.5};         //!< MaxWindowBdp: the window's cap in base BDPs
    uint32_t m_initialWindowPackets{0}; //!< InitialWindowPackets (0 = the cap)
    uint32_t m_ackBytes{0};     //!< AckBytes: ACK coalescing (0 = every packet)
    AckRequest m_ackRequest{ACK_REQUEST_UEC}; //!< AckRequest: the AR bit's rule
    NsccFeedback m_nsccFeedback{NSCC_FEEDBACK_EVERY_ACK}; //!< NsccFeedback
    Inflight m_inflight{INFLIGHT_NAMED_PACKETS};            //!< Inflight
    Cc m_cc{MPRDMA};            //!< Cc: the window rule
    double m_waitToDecrease{0}; //!< WaitToDecrease: threshold of the ECN average (0 = off)
    double m_wtdAlpha{0.05};    //!< WtdAlpha: gain of the ECN average per ACK
    Time m_nsccTarget;          //!< NsccTargetDelay (0 = derived)
    uint32_t m_nsccQaGate{3};   //!< NsccQaGate
    bool m_nsccTrimming{false}; //!< NsccTrimming: the fabric trims (the derived target)
    bool m_nsccDerived{false};  //!< m_nscc holds the derived settings
    RdmaUetNsccParams m_nscc;   //!< NSCC's settings
    double m_rcccPullRate{0.99};         //!< RcccPullRate
    uint32_t m_rcccCreditPerPull{16384}; //!< RcccCreditPerPull
    bool m_rcccDerived{false};           //!< m_rccc holds the derived settings
    RdmaUetRcccParams m_rccc;            //!< RCCC's settings
    std::map<std::pair<uint32_t, uint16_t>, RcccFlow> m_rcccFlows; //!< by (sip, qpn)
    RdmaUetPullPacer<std::pair<uint32_t, uint16_t>> m_pacer;      //!< this NIC's pull pacer
    uint64_t m_pacerAtPs{0};             //!< the pacer event's ideal time (no rounding drift)
    Counts m_counts;                     //!< GetCounts
    TracedCallback<uint32_t, uint64_t> m_rtsTrace;                 //!< Rts
    TracedCallback<uint32_t, uint16_t, uint64_t, bool> m_pullTrace; //!< Pull
};

} // namespace ns3

#endif /* RDMA_RECOVERY_UET_H */
