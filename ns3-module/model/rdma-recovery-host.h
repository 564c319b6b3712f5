/*
 * rdma-lb: what a loss recovery sees of its NIC (doc/rdma-lb.rst, "NIC"): the queue-pair
 * context RdmaRecoveryHost, as ns-3's TcpRecoveryOps sees only TcpSocketState and the NIC's
 * congestion controls see RdmaCcHost (rdma-cc.h).
 *
 * The context holds the state the NIC shares with its loss recovery -- the NIC's settings
 * (RdmaNicSettings: its attributes, read by reference), the queue pairs (RdmaQueuePair), the
 * receiver state of the incoming flows (RdmaRxState), the port, the congestion control -- and
 * the steps both transports share: the round-robin over the queue pairs (ServeQueuePairs,
 * instantiated per scheme, so that asking a queue pair whether it may send is a direct call),
 * pacing and the port's wake-up, the data header and its accounting, the load balancer's
 * feedback, probes and timer, the receiver's ACK/NACK and delivery, and the trace sources a
 * recovery fires. Every call is direct but Complete (once per flow), which is the NIC's.
 * RdmaNic derives from it privately and hands it to its loss recovery (RdmaLossRecovery::Setup);
 * the NIC's own machinery (flow start, its components, the public API) stays the NIC's.
 */
#ifndef RDMA_RECOVERY_HOST_H
#define RDMA_RECOVERY_HOST_H

#include "rdma-cc.h"
#include "rdma-frame.h"
#include "rdma-lb-bridge.h"
#include "rdma-time.h"
#include "rdma-uet.h"

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/simulator.h"
#include "ns3/traced-callback.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

namespace ns3
{

class RdmaNetDevice;

/**
 * \ingroup rdma-lb
 * Per-flow counters, reported by the FlowRecord trace when a flow completes and queryable
 * while it runs (RdmaNic::GetFlowRecord).
 */
struct RdmaFlowRecord
{
    uint32_t flowId{0};     //!< the flow's id
    uint32_t sip{0};        //!< source address
    uint32_t dip{0};        //!< destination address
    uint64_t size{0};       //!< bytes
    Time start;             //!< flow start
    Time finish;            //!< completion (zero while running)
    uint64_t dataPkts{0};   //!< data packets sent, retransmissions included
    uint64_t retxPkts{0};   //!< data packets sent again (offset below the highest sent)
    uint64_t nacksRx{0};    //!< NACKs received by the sender (IRN: NACKs carrying a SACK)
    uint64_t nacksSent{0};  //!< NACKs sent by the receiver for this flow
    uint64_t cnpsRx{0};     //!< CNP-flagged feedback received by the sender
    uint64_t cnpsSent{0};   //!< CNP-flagged feedback sent by the receiver
    uint64_t timeouts{0};   //!< retransmission timeouts
    uint64_t rateCuts{0};   //!< DCQCN rate decreases
    uint64_t probes{0};     //!< path probes sent for the load balancer (Hopper)
    uint64_t pathSwitches{0}; //!< times the load balancer moved the flow to another path
};

/**
 * \ingroup rdma-lb
 * A queue pair's retransmission-timer event and whether it is pending, kept beside its id so
 * that re-arming reads no event object (EventId::IsRunning does: a cache miss per ACK). The
 * loss recovery calls Fired first thing when the event runs.
 */
struct RdmaRtoTimer
{
    EventId event;        //!< the last scheduled check
    bool pending{false};  //!< it has neither run nor been cancelled

    /// Schedules the check: Simulator::Schedule(\p delay, \p args...).
    template <typename... Args>
    void Schedule(const Time& delay, Args&&... args)
    {
        event = Simulator::Schedule(delay, std::forward<Args>(args)...);
        pending = true;
    }

    /// Cancels a pending check.
    void Cancel()
    {
        event.Cancel();
        pending = false;
    }

    /// The check runs now.
    void Fired()
    {
        pending = false;
    }

    /// \return the pending check's time step
    uint64_t GetTs() const
    {
        return event.GetTs();
    }
};

/**
 * \ingroup rdma-lb
 * A sender-side queue pair: one flow.
 */
struct RdmaQueuePair
{
    uint32_t flowId{0};    //!< the flow's id (from the flow file)
    uint16_t qpn{0};       //!< queue-pair number at the sender (RdmaHeader::qpn)
    uint16_t dport{0};     //!< UDP destination port of its data (the reference's, or qpn)
    uint32_t dip{0};       //!< destination address
    uint64_t size{0};      //!< bytes to send
    uint64_t sndNxt{0};    //!< next byte to send
    uint64_t sndUna{0};    //!< bytes cumulatively acknowledged
    uint64_t highSent{0};  //!< end of the highest byte sent (retransmission detection)
    uint64_t maxSentSeq{0}; //!< start offset of the highest packet sent (IRN)
    uint64_t highestAck{0}; //!< highest cumulative ACK received (IRN, quirk irn-sender)
    Time start;            //!< creation time (= flow start)
    uint32_t pg{3};        //!< priority group
    Time nextAvail;        //!< pacing: earliest time of the next data packet
    uint16_t lastEntropy{0}; //!< entropy of the last data packet sent
    /// The NIC port that sends its data (index into the NIC's ports; 0 on a single-port NIC),
    /// chosen once at its start (RdmaNic::ChoosePort, SimAI's GetNicIdxOfQp)
    uint8_t port{0};
    /**
     * Entropy of the last transmission of each outstanding packet, indexed by PSN modulo
     * ENTROPY_WINDOW (a fixed array: no allocation per packet). The entry of PSN p is valid
     * while fewer than ENTROPY_WINDOW packets past p have been sent
     * (RdmaRecoveryHost::SentEntropy); feedback that names a packet (timeout: the oldest
     * unacknowledged one) reads it here.
     */
    static constexpr uint32_t ENTROPY_WINDOW = 2048; //!< packets (2 MB at 1000 B payload)
    std::array<uint16_t, ENTROPY_WINDOW> sentEntropy{}; //!< see above

    // Rate control (DCQCN, HPCC, TIMELY, DCTCP); rates in bit/s.
    uint64_t rate{0};       //!< current sending rate
    uint32_t lastPktSize{0}; //!< on-wire bytes of the last data packet (HPCC's rate change)
    std::unique_ptr<RdmaCcState> cc; //!< the congestion control's state
    // Loss recovery.
    Time rtoDeadline;            //!< retransmission deadline (Time::Max() = none)
    RdmaRtoTimer rtoEvent;       //!< the event checking rtoDeadline
    std::map<uint64_t, uint64_t> sack; //!< IRN: SACKed blocks, start -> end
    bool irnRecovery{false};     //!< IRN: in recovery
    uint64_t irnRecoverySeq{0};  //!< IRN: leave recovery when sndUna reaches this
    /// IRN with IrnQpPerPath: the starts (bytes, ascending) of the PSN spaces from the one
    /// sndUna is in to the newest; a fresh packet on a new entropy opens one
    std::vector<uint64_t> irnSpaces;
    uint64_t irnSpaceAcked{0}; //!< IRN, IrnQpPerPath: end of the newest space's in-order SACKs
    uint16_t irnSpaceEntropy{0}; //!< IRN, IrnQpPerPath: entropy of the newest space
    std::set<uint64_t> srRetx;   //!< NIC-SR: offsets to resend (one packet each)
    EventId lbEvent;             //!< the selector's timer (PollAt)
    RdmaFlowRecord rec;          //!< counters
    std::unique_ptr<QpPathSelector> lb; //!< the load balancer's selector
    std::unique_ptr<RdmaUetSender> uet; //!< UET transport: window, outstanding packets
};

/**
 * \ingroup rdma-lb
 * Receiver state of one incoming flow, kept by the receiving NIC per (source address,
 * sender's queue-pair number) from the flow's announcement (RdmaNic::ExpectFlow) or first
 * data packet until the sender completes the flow. The loss recovery decides what the fields
 * mean for its scheme (the comments name the schemes that use them).
 */
struct RdmaRxState
{
    uint64_t expected{0};      //!< next expected byte (E)
    uint64_t milestone{0};     //!< ACK milestone (bytes)
    Time nackDeadline;         //!< GBN/IRN: no new NACK for the same E before this
    uint64_t lastNacked{UINT64_MAX}; //!< E of the last NACK
    std::map<uint64_t, uint64_t> ooo; //!< IRN SACK list / NIC-SR bitmap / UET: start -> end
    /// IRN with IrnQpPerPath: PSN spaces starting beyond E: start -> next byte in order
    std::map<uint64_t, uint64_t> spaceNext;
    uint64_t nacksSent{0};     //!< NACKs sent
    uint64_t cnpsSent{0};      //!< CNP-flagged feedback sent
    uint32_t flowId{0};        //!< the flow's id (known once ExpectFlow ran)
    uint64_t size{0};          //!< the flow's bytes (0 = not announced)
    bool delivered{false};     //!< FlowDelivered has fired
    uint32_t uetAccepted{0};   //!< UET coalesced ACKs: wire bytes accepted since the last ACK
    uint32_t uetRecvdBytes{0}; //!< UET: wire bytes of the new data received (mod 2^32)
    bool uetAckRequest{false}; //!< UET: an AR packet arrived; ACK again once in order
    /// A NIC of several ports: the port of this flow's ACKs/NACKs (RdmaNic::ExpectFlow), -1 =
    /// the port the reply's own fields hash to (RdmaRecoveryHost::FeedbackDevice)
    int16_t feedbackPort{-1};
};

/**
 * \ingroup rdma-lb
 * The NIC's settings its loss recovery reads: the NIC's attributes of those names (ns3::RdmaNic,
 * rdma-nic-attributes.cc, defaults from the table of transport parameters), public members
 * as ns-3's TcpSocketState's.
 */
struct RdmaNicSettings
{
    uint32_t m_payloadBytes{};      //!< PayloadSize: payload bytes per data packet
    uint32_t m_roceHeaderBytes{};   //!< RoceHeaderSize: a RoCE data packet's header bytes
    uint32_t m_ackInterval{};       //!< L2AckInterval: ACK milestone in packets
    uint64_t m_window{};            //!< Window: HAS_WIN's bytes (0 = none)
    bool m_varWin{};                //!< VarWin: the window scales with the rate
    bool m_rateBound{};             //!< RateBound: pace at the queue pair's rate
    bool m_timeTruncation{};        //!< TimeTruncation: quirk time-truncation
    bool m_integerTxTime{};         //!< IntegerTxTime: its SimAI arithmetic
    RdmaTxClock m_txClock{};        //!< TxTime: ns, or htsim's ps
    bool m_pacingWakeupQuirk{};     //!< PacingWakeupQuirk: quirk pacing-wakeup
    bool m_irnReferenceSender{};    //!< IrnReferenceSender: quirk irn-sender
    bool m_eventOrderQuirk{};       //!< EventOrderQuirk: quirk event-order
    uint32_t m_uetHeaderBytes{};    //!< UetHeaderSize: uet's wire bytes beyond the payload
    Time m_uetBaseRtt;              //!< UetBaseRtt: uet's base RTT (window cap)
    /// uet's base RTT per destination (RdmaNic::SetUetBaseRttOf; null = UetBaseRtt)
    Callback<Time, uint32_t> m_uetBaseRttOf;
    Time m_uetRto;                  //!< UetRto: uet's retransmission timeout

    /// \return how pacing intervals are computed (TimeTruncation, IntegerTxTime, TxTime)
    RdmaTxArithmetic TxArithmetic() const
    {
        return RdmaTxArithmeticOf(m_timeTruncation, m_integerTxTime, m_txClock);
    }

    /// \return the bytes a RoCE data packet carries beyond RdmaHeader's (RoceHeaderSize - 48:
    /// SimAI's 64-bit sequence number); the sender adds them, the receiver strips them
    uint32_t RoceHeaderPad() const
    {
        return m_roceHeaderBytes - RdmaHeader::DATA_HEADER_BYTES;
    }
};

/**
 * \ingroup rdma-lb
 * The queue-pair context of a NIC's loss recovery (see the file comment).
 */
class RdmaRecoveryHost : protected RdmaNicSettings
{
  public:
    /// The active queue pairs, by number.
    using QpMap = std::map<uint16_t, RdmaQueuePair>;
    /// An active queue pair.
    using QpIterator = QpMap::iterator;
    /// The receiver states, by (source address, sender's queue-pair number).
    using RxMap = std::map<std::pair<uint32_t, uint16_t>, RdmaRxState>;

    /**
     * ACK/NACK flag set by the receiver when the answered data packet arrived CE-marked (model
     * metadata in a flags bit the reference leaves zero; bit 0 is CNP, bit 1 probe). The CNP
     * flag alone cannot tell the load balancer which path was marked: with NackCarriesCnp an
     * out-of-order NACK carries CNP too, and it echoes the entropy of the packet that arrived
     * early -- a fast path, not a congested one.
     */
    static constexpr uint16_t FLAG_ECN_ECHO = 4;

    virtual ~RdmaRecoveryHost();
    RdmaRecoveryHost(const RdmaRecoveryHost&) = delete;
    RdmaRecoveryHost& operator=(const RdmaRecoveryHost&) = delete;

    // ---- State ----
    /// \return the NIC's settings (its attributes)
    const RdmaNicSettings& Settings() const
    {
        return *this;
    }
    /// \return the NIC's address
    uint32_t Address() const
    {
        return m_address;
    }
    /// \return the NIC's (first) port
    const Ptr<RdmaNetDevice>& Device() const
    {
        return m_dev;
    }
    /// \return the port that sends the data of \p qp (RdmaQueuePair::port)
    const Ptr<RdmaNetDevice>& Device(const RdmaQueuePair& qp) const
    {
        return qp.port == 0 ? m_dev : m_ports[qp.port];
    }
    /**
     * \return the port that sends the ACK/NACK \p reply: on a NIC of several ports, SimAI's
     * receive queue pair's choice (GetNicIdxOfRxQp: its hash over the routes back to the
     * sender; RdmaRecoveryHost::PortByHash), else the NIC's port
     */
    const Ptr<RdmaNetDevice>& FeedbackDevice(const RdmaHeader& reply) const;
    /**
     * \return the index of the port a packet from this NIC to \p dip with the UDP ports
     * \p sport, \p dport takes on a NIC of several ports (SimAI's RdmaHw::GetNicIdxOfQp):
     * ns-3's Hash32 (Murmur3) of the 12 bytes (sip, dip, sport, dport) modulo the number of
     * this NIC's ports on a shortest path to \p dip, indexing them in SimAI's route order
     * (RdmaNic::SetPortRoutes); 0 on a single-port NIC or without routes to \p dip
     */
    uint8_t PortByHash(uint32_t dip, uint16_t sport, uint16_t dport) const;
    /// \return the active queue pairs
    QpMap& QueuePairs()
    {
        return m_qps;
    }
    /// \return the receiver states of the incoming flows
    RxMap& RxStates()
    {
        return m_rx;
    }
    /// \return the congestion control (it exists once the NIC's first flow started)
    RdmaCongestionControl& CongestionControl() const
    {
        return *m_cc;
    }
    /// \return the INT the RoCE data packets carry (the congestion control's)
    RdmaHeader::IntMode DataIntMode() const
    {
        return m_intMode;
    }
    /// \return whether the port is lossless (it obeys PFC and its peer switch generates PFC),
    /// as of the last flow start
    bool PortLossless() const
    {
        return m_lossless;
    }

    // ---- Sender ----
    /**
     * Round-robin: the packet \p scheme sends for the first queue pair after the last one
     * served that it finds eligible (Scheme::Eligible, Scheme::Send: direct calls, one
     * instantiation per loss recovery), else null after scheduling the port's wake-up at the
     * earliest time pacing lets a queue pair send (or as the reference, quirk pacing-wakeup).
     */
    template <class Scheme>
    RdmaFramePtr ServeQueuePairs(Scheme& scheme, Time now);
    /// Whether pacing (nextAvail) and the selector's hold let \p qp send at \p now; if not,
    /// lowers \p wake to the time they will (both transports).
    bool TimeToSend(const RdmaQueuePair& qp, Time now, Time* wake) const;
    /// \return the window of \p qp now (bytes; 0 = none): HAS_WIN's BDP, scaled by the rate
    /// over the line rate with VarWin (at least 1 B)
    uint64_t Window(const RdmaQueuePair& qp) const;
    /// The header of the data packet at byte offset \p seq, its entropy drawn from the queue
    /// pair's selector for \p cx (both transports).
    RdmaHeader DataHeader(RdmaQueuePair& qp, uint64_t seq, const LbSendContext& cx);
    /// A data packet of \p payload bytes at offset \p seq, \p wireBytes on the wire, was just
    /// sent: counters, highest offsets, the entropy window, FlowSent after the flow's last byte.
    void RecordDataSent(RdmaQueuePair& qp,
                        uint64_t seq,
                        uint32_t payload,
                        uint32_t wireBytes,
                        uint16_t entropy,
                        bool retransmission);
    /**
     * \return the entropy of the last transmission of the packet at byte offset \p seq, if it
     * is still in the queue pair's window (else the entropy of the last packet sent)
     */
    uint16_t SentEntropy(const RdmaQueuePair& qp, uint64_t seq) const;
    /// Delivers feedback to the queue pair's load balancer, then sends the probes it asks for.
    void LbFeedbackAndProbes(RdmaQueuePair& qp, const LbFeedback& fb);
    /// (Re)arms the selector's timer of \p qp at its PollAt.
    void ArmLbTimer(RdmaQueuePair& qp);
    /// The flow of the active queue pair at \p it is completely acknowledged: its records are
    /// reported and it is removed (the NIC's; once per flow).
    virtual void Complete(QpIterator it) = 0;

    // ---- Receiver ----
    /// \return the header of an ACK/NACK (\p type) answering data packet \p h: addressed back
    /// to its sender on the reverse ports (the entropy echoed), its qpn, pg, send time and
    /// offset echoed, the cumulative ACK rx.expected, FLAG_ECN_ECHO if it carried CE
    RdmaHeader ReplyHeader(const RdmaHeader& h,
                           const RdmaRxState& rx,
                           RdmaHeader::Type type) const;
    /// Sends the ACK/NACK (\p type) of data packet \p h: cumulative ACK rx.expected, \p flags
    /// (a CNP flag is counted), the SACK block \p sackSeq / \p sackLen, the data's INT.
    void SendFeedback(const RdmaHeader& h,
                      RdmaRxState& rx,
                      uint8_t type,
                      uint16_t flags,
                      uint64_t sackSeq,
                      uint64_t sackLen);
    /// Counts an ECN-echoing feedback the receiver sent outside SendFeedback (uet).
    void CountCnpSent()
    {
        ++m_cnpsSent;
    }
    /// Fires FlowDelivered once the announced flow's bytes all arrived in order.
    void CheckDelivered(RdmaRxState& rx, uint32_t sip);

    // ---- Trace sources a recovery fires (RdmaNic's, of the same names) ----
    /// DataSent: flow id, byte offset, entropy.
    void NotifyDataSent(uint32_t flowId, uint32_t seq, uint16_t entropy)
    {
        m_dataSent(flowId, seq, entropy);
    }
    /// NackSent: source address, sender's qpn, expected byte.
    void NotifyNackSent(uint32_t sip, uint16_t qpn, uint32_t expected)
    {
        m_nackSent(sip, qpn, expected);
    }
    /// UetWindow: flow id, window, cap (wire bytes).
    void NotifyUetWindow(uint32_t flowId, uint64_t window, uint64_t cap)
    {
        m_uetWindow(flowId, window, cap);
    }
    /// UetRtt: flow id, RTT of the acknowledged data packet.
    void NotifyUetRtt(uint32_t flowId, Time rtt)
    {
        m_uetRtt(flowId, rtt);
    }

  protected:
    RdmaRecoveryHost();

    /// Nothing may send at \p now: schedules the port's wake-up at \p wake, the earliest time
    /// pacing lets a queue pair send (or as the reference, quirk pacing-wakeup).
    void ScheduleWake(Time now, Time wake);
    /// Quirk pacing-wakeup: the reference's wake-up rule when nothing may send.
    void ScheduleWakeAsReference(Time now);
    /// Moves a pending wake-up of port \p port to \p at if that is earlier (HPCC's rate
    /// change).
    void AdvancePendingWake(Time at, uint8_t port = 0);
    /// The wake-up of port \p port: kicks it.
    void Wake(uint8_t port);
    /// \return the queue pair served last on port \p port (round-robin)
    uint16_t& LastServed(uint8_t port)
    {
        return port == 0 ? m_lastServed : m_portState[port - 1].lastServed;
    }
    /// \return the pacing wake-up of port \p port
    EventId& WakeEvent(uint8_t port)
    {
        return port == 0 ? m_wakeEvent : m_portState[port - 1].wakeEvent;
    }
    /// The selector's timer of queue pair \p qpn.
    void LbTimer(uint16_t qpn);

    Ptr<RdmaNetDevice> m_dev;        //!< the port (RdmaNic::Setup)
    uint32_t m_address{0};           //!< the NIC's address
    Ptr<RdmaCongestionControl> m_cc; //!< created at the first flow
    RdmaHeader::IntMode m_intMode{}; //!< INT of the data packets
    bool m_lossless{};               //!< PortIsLossless(), refreshed at every flow start
    uint64_t m_cnpsSent{0};          //!< CNP-flagged feedback sent as a receiver
    QpMap m_qps;                     //!< active queue pairs by number
    uint16_t m_lastServed{0};        //!< the queue pair served last (round-robin)
    EventId m_wakeEvent;             //!< pacing wake-up of the port (at most one)
    /**
     * A NIC of several ports (SimAI's multi-homed GPU: one RdmaHw over several NIC devices,
     * each serving its own queue pairs round-robin): every port, m_dev first; empty on a
     * single-port NIC (RdmaNic::AddPort).
     */
    std::vector<Ptr<RdmaNetDevice>> m_ports;
    /// The round-robin and wake-up of ports 1, 2, ... (port 0's are m_lastServed, m_wakeEvent).
    struct PortState
    {
        uint16_t lastServed{0}; //!< the queue pair served last
        EventId wakeEvent;      //!< pacing wake-up
    };
    std::vector<PortState> m_portState;
    /// Per destination host id: this NIC's ports on a shortest path to it, in SimAI's route
    /// order (RdmaNic::SetPortRoutes; only on a NIC of several ports).
    std::vector<std::vector<uint8_t>> m_portRoutes;
    uint8_t m_servingPort{0}; //!< the port asking for a packet (RdmaNic::NextPacket)
    RxMap m_rx;                      //!< receiver states
    TracedCallback<uint32_t, uint32_t, uint32_t, uint64_t, Time> m_flowDelivered; //!< FlowDelivered
    TracedCallback<uint32_t, uint32_t, uint16_t> m_dataSent;       //!< DataSent
    TracedCallback<uint32_t, Time> m_flowSent;                     //!< FlowSent
    TracedCallback<uint32_t, uint16_t, uint32_t> m_nackSent;       //!< NackSent
    TracedCallback<uint32_t, uint8_t, uint16_t> m_lbFeedback;      //!< LbFeedback
    TracedCallback<uint32_t, uint64_t, uint64_t> m_uetWindow;      //!< UetWindow
    TracedCallback<uint32_t, Time> m_uetRtt;                       //!< UetRtt
};

template <class Scheme>
RdmaFramePtr
RdmaRecoveryHost::ServeQueuePairs(Scheme& scheme, Time now)
{
    Time wake = Time::Max();
    // Round-robin: the first eligible queue pair after the last one served, among those of the
    // port asking (a NIC of several ports: each port serves its own, as SimAI's per-device
    // queue-pair groups).
    const uint8_t port = m_servingPort;
    uint16_t& lastServed = LastServed(port);
    auto it = m_qps.upper_bound(lastServed);
    for (std::size_t k = 0; k < m_qps.size(); ++k, ++it)
    {
        if (it == m_qps.end())
        {
            it = m_qps.begin();
        }
        RdmaQueuePair& qp = it->second;
        if (qp.port != port || !scheme.Eligible(qp, now, &wake))
        {
            continue;
        }
        lastServed = qp.qpn;
        return scheme.Send(qp, now);
    }
    ScheduleWake(now, wake);
    return nullptr;
}

} // namespace ns3

#endif /* RDMA_RECOVERY_HOST_H */
