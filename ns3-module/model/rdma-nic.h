/*
 * rdma-lb: the RDMA NIC of the fabric model (the reference's RdmaHw, as behaviour;
 * doc/rdma-lb.rst, "NIC").
 *
 * Queue pairs (one per flow) served round-robin by the host port, each paced at its own rate
 * (as the reference: after a data packet of on-wire size S, nextAvail = now + S*8/rate; when no
 * queue pair is eligible the NIC schedules one wake-up at the earliest nextAvail, so an idle NIC
 * has no events). The entropy of every data packet is chosen by the run's load balancer (Rust);
 * every ACK/NACK/CNP/timeout is fed back to it, naming the entropy of the packet it is about (a
 * timeout: the oldest unacknowledged packet, from a fixed per-queue-pair window), and its timer
 * (PollAt/OnTimer) is honoured.
 *
 * Receiver (as the reference): ACK per in-order packet (L2_ACK_INTERVAL / L2_CHUNK_SIZE
 * milestones), one NACK per gap within NACK_INTERVAL, CNP flag on the ACK/NACK of an ECN-marked
 * packet. Sender and timeouts as the reference's. Congestion control (attribute
 * CongestionControl: a factory of ns3::RdmaDcqcn, RdmaHpcc, RdmaTimely, RdmaDctcp or the no-op
 * RdmaCongestionControl) is one RdmaCongestionControl per NIC (rdma-cc.h, one file per
 * algorithm); the NIC adds the window of HAS_WIN / VAR_WIN (attributes Window, VarWin) and the
 * INT the algorithm's data packets carry (RdmaCongestionControl::DataIntMode).
 *
 * Loss recovery is one RdmaLossRecovery per NIC (rdma-recovery.h, one file per scheme, the uet
 * transport's sender and receiver beside them): the NIC serves its queue pairs round-robin
 * and hands each send opportunity, data packet, ACK/NACK to it. The recovery sees the NIC
 * through its queue-pair context, RdmaRecoveryHost (rdma-recovery-host.h: the settings, queue
 * pairs, receiver state and the steps both transports share), a private base of the NIC.
 *
 * The loss recovery and the congestion control are ns3::Objects with their own attributes
 * (e.g. ns3::RdmaGoBackN::L2ChunkSize, ns3::RdmaDcqcn::RateDecreaseInterval), chosen by their
 * TypeIds as ns-3's TCP chooses its congestion control: the NIC's attributes LossRecovery and
 * CongestionControl are ObjectFactories (ObjectFactoryValue, or a string such as
 * "ns3::RdmaIrn[IrnBdp=52000]"), and the NIC creates each component at its first use with its
 * factory. A value set on a NIC's factory is that NIC's own; an attribute left unset takes its
 * default, which Config::SetDefault changes for every NIC (on the TypeId that declares it,
 * e.g. ns3::RdmaRoceRecovery::NackInterval).
 *
 * PFC (as the reference): a queue pair whose priority group is paused at the NIC's port is not
 * eligible (other groups keep sending); the port's resume re-offers the link. In IRN mode the
 * retransmission timer is not armed while the port is lossless -- the port obeys PFC and the
 * switch at the other end generates it -- as the reference ignores IRN timeouts with PFC on
 * (IrnRtoWithPfc keeps them).
 *
 * Loss recovery ("LossRecovery" attribute, a factory of one of):
 *  - ns3::RdmaGoBackN (gbn): Go-Back-N, the reference's default;
 *  - ns3::RdmaIrn (irn): the reference's simplified IRN: SACK list, BDP cap, RTO low/high,
 *            plus an optional out-of-order threshold before going back
 *            (RdmaIrn::IrnOooThreshold, 0 = reference);
 *  - ns3::RdmaNicSr (nic-sr): commodity selective repeat (the Themis paper, §2.2): the
 *            receiver keeps the expected PSN and a bitmap of out-of-order arrivals; the first
 *            out-of-order arrival for an ePSN triggers exactly one NACK carrying only the ePSN;
 *            the sender resends only that packet and treats the NACK as congestion (DCQCN rate
 *            decrease);
 *  - ns3::RdmaUetRecovery: the uet transport (rdma-recovery-uet.h).
 *
 * Reference quirks reproduced by default, each with its fix as an attribute:
 *  - every in-order packet is ACKed (the milestone is reset each packet):
 *    RdmaGoBackN::AckMilestoneFix;
 *  - an out-of-order NACK always carries the CNP flag: RdmaRoceRecovery::NackCarriesCnp.
 *
 * Packets: data carries sport = entropy and dport = the flow's destination port (the
 * reference's per-destination port when the flow was started with its ports, quirk
 * flow-ports; else the queue pair's number); ACK/NACK carry them reversed (sport = the data's
 * dport, dport = the entropy echo), as the reference, whose ECMP hashes them. Both carry the
 * sender's queue-pair number as model metadata (RdmaHeader::qpn); the receiver keys its state
 * by (source address, qpn) and the sender finds the queue pair by it, so the entropy may change
 * per packet.
 */
#ifndef RDMA_NIC_H
#define RDMA_NIC_H

#include "rdma-cc.h"
#include "rdma-frame.h"
#include "rdma-lb-bridge.h"
#include "rdma-recovery-host.h"
#include "rdma-uet.h"

#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"
#include "ns3/packet.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <set>
#include <string>
#include <vector>

namespace ns3
{

class RdmaNetDevice;
class RdmaHeader;
class Packet;
class RdmaSwitch;
class RdmaLossRecovery;

/**
 * \ingroup rdma-lb
 * Per-host RDMA NIC; aggregate it to a host Node with one RdmaNetDevice (or several: AddPort),
 * or to a switch that is also an endpoint (SetupOnSwitch).
 */
class RdmaNic : public Object, private RdmaCcHost, private RdmaRecoveryHost
{
  public:
    /// SimAI's first per-pair source port (common.h: portNumber[i][j] = 10000)
    static constexpr uint16_t SIMAI_FIRST_SPORT = 10000;
    /// SimAI's destination port (entry.h SendFlow: dport = 100)
    static constexpr uint16_t SIMAI_DPORT = 100;
    /// ACK/NACK flag set by the receiver when the answered data packet arrived CE-marked
    /// (RdmaRecoveryHost::FLAG_ECN_ECHO)
    static constexpr uint16_t FLAG_ECN_ECHO = RdmaRecoveryHost::FLAG_ECN_ECHO;

    /// \return the TypeId
    static TypeId GetTypeId();
    RdmaNic();
    ~RdmaNic() override;

    /// Binds the NIC to its port and gives it its address.
    void Setup(Ptr<RdmaNetDevice> dev, uint32_t address);
    /**
     * Adds a port after Setup's (SimAI's multi-homed GPU: one RdmaHw over several NIC
     * devices; doc/rdma-lb.rst, "SimAI inputs"). Every port has the rate of the first (else a
     * fatal error). Each port serves its own queue pairs round-robin with its own pacing
     * wake-up; a queue pair's port is chosen at its start and kept (ChoosePort), an ACK/NACK's
     * by the receiver's hash (RdmaRecoveryHost::FeedbackDevice). \return the port's index
     */
    uint8_t AddPort(Ptr<RdmaNetDevice> dev);
    /**
     * Binds the NIC to switch \p sw as an RDMA endpoint beside it (SimAI's NVSwitch, which
     * ends and starts NVLS flows; doc/rdma-lb.rst, "SimAI inputs"): the switch hands it the
     * frames addressed to \p address (RdmaSwitch::SetEndpoint), and it sends on \p ports (the
     * switch's own, of one rate; its queued frames go first, as for any port) by SetPortRoutes.
     */
    void SetupOnSwitch(Ptr<RdmaSwitch> sw,
                       const std::vector<Ptr<RdmaNetDevice>>& ports,
                       uint32_t address);
    /**
     * A NIC of several ports: per destination host id, the indices of its ports on a shortest
     * path to that host, in SimAI's route order (RdmaFabricHelper::Finish). A destination
     * without an entry is reached through port 0.
     */
    void SetPortRoutes(std::vector<std::vector<uint8_t>> routes);
    /// \return the number of ports (1 unless AddPort was called)
    uint32_t GetNPorts() const;
    /// \return the port index of active flow \p flowId (0 if unknown)
    uint8_t GetFlowPort(uint32_t flowId) const;
    /// Installs the run's load balancer: the NIC keeps one HostLbGroup, from which every new
    /// queue pair gets its selector.
    void SetLoadBalancer(Ptr<LbConfig> cfg);
    /// Starts a flow of \p size bytes to \p dip now.
    void StartFlow(uint32_t flowId, uint32_t dip, uint64_t size, uint32_t pg = 3);
    /**
     * Starts a flow whose packets carry the given UDP ports (reference quirk flow-ports: the
     * reference's per-host \p sport and per-destination \p dport). A host side
     * that keeps one entropy per flow (ecmp, the switch-side schemes) uses \p sport as it, so
     * ECMP hashes the reference's inputs; other host algorithms choose their entropies.
     */
    void StartFlowOnPorts(uint32_t flowId,
                          uint32_t dip,
                          uint64_t size,
                          uint32_t pg,
                          uint16_t sport,
                          uint16_t dport);
    /**
     * Starts a flow whose one-entropy-per-flow host side (ecmp, the switch-side schemes) uses
     * \p entropy (the REPS authors' simulator: the connection's number); the destination
     * port is the queue pair's number, as with StartFlow.
     */
    void StartFlowWithEntropy(uint32_t flowId,
                              uint32_t dip,
                              uint64_t size,
                              uint32_t pg,
                              uint16_t entropy);
    /**
     * Receiver side: announces the flow \p flowId of \p size bytes that the NIC at \p sip
     * sends on its queue pair \p qpn, so that this NIC fires FlowDelivered when the flow's
     * last byte arrives in order. StartFlow calls it on the destination NIC. On a NIC of
     * several ports, \p pairSport (SimAI's per-pair source port of the flow, given when either
     * end has several ports) chooses the port of its ACKs/NACKs as SimAI's receive queue pair
     * does; without it they take the port their own fields hash to.
     */
    void ExpectFlow(uint32_t sip,
                    uint16_t qpn,
                    uint32_t flowId,
                    uint64_t size,
                    std::optional<uint16_t> pairSport = std::nullopt);
    /**
     * Receiver side: deletes the state of the flow from \p sip on its queue pair \p qpn,
     * firing RxReleased with its counts (the sender's completion does this after
     * ReceiverReleaseDelay, when that is not 0).
     */
    void ReleaseRx(uint32_t sip, uint16_t qpn);
    /// \return this NIC's address
    uint32_t GetAddress() const;
    /**
     * The uet transport: gives each queue pair the base RTT to its destination address (its
     * window cap; htsim's per-pair base RTT) instead of the attribute UetBaseRtt, which stays
     * the fallback when the callback returns 0.
     */
    void SetUetBaseRttOf(Callback<Time, uint32_t> baseRttOfDestination);
    /// \return the loss recovery (created now from the attributes if it does not exist yet)
    Ptr<RdmaLossRecovery> GetLossRecovery();
    /// \return the congestion control (created now from the attributes if it does not exist
    /// yet)
    Ptr<RdmaCongestionControl> GetCongestionControl();
    /// \return the number of flows not yet completed
    uint32_t GetActiveFlows() const;
    /// \return the CNP-flagged ACKs/NACKs this NIC sent as a receiver, over every flow and
    /// including feedback for packets that arrive after their flow completed (what the
    /// reference's CNP monitor counts)
    uint64_t GetCnpsSent() const;
    /// \return the current sending rate of active flow \p flowId (0 bps if unknown)
    DataRate GetFlowRate(uint32_t flowId) const;
    /// \return the counters of active flow \p flowId so far (flowId 0xffffffff if unknown)
    RdmaFlowRecord GetFlowRecord(uint32_t flowId) const;
    /// \return the flow id of active queue pair \p qpn (0xffffffff if none: unknown or done)
    uint32_t GetFlowIdOfQpn(uint16_t qpn) const;
    /**
     * Handles a congestion notification for active flow \p flowId as a CNP-flagged ACK would
     * (DCQCN). For external CNP sources and unit tests.
     */
    void NotifyCnp(uint32_t flowId);
    /**
     * Assigns a fixed stream number to the random variables used by this NIC.
     * \param stream first stream index to use
     * \return the number of stream indices assigned
     */
    int64_t AssignStreams(int64_t stream);

    /// Trace signature of FlowComplete: flow id, sip, dip, size, start, finish, retransmitted packets.
    typedef void (*FlowCompleteTracedCallback)(uint32_t flowId,
                                               uint32_t sip,
                                               uint32_t dip,
                                               uint64_t size,
                                               Time start,
                                               Time finish,
                                               uint64_t retxPkts);
    /// Trace signature of FlowRecord: all counters of a completed flow.
    typedef void (*FlowRecordTracedCallback)(const RdmaFlowRecord& record);
    /// RxReleased: a flow's receiver state was deleted, with the NACKs and CNPs it sent
    typedef void (*RxReleasedTracedCallback)(uint32_t flowId, uint64_t nacksSent, uint64_t cnpsSent);
    /// Trace signature of FlowDelivered (receiver): flow id, sip, dip, size, delivery time.
    typedef void (*FlowDeliveredTracedCallback)(uint32_t flowId,
                                                uint32_t sip,
                                                uint32_t dip,
                                                uint64_t size,
                                                Time delivered);
    /// Trace signature of FlowSent (sender): flow id, the end of its last byte's first
    /// serialisation.
    typedef void (*FlowSentTracedCallback)(uint32_t flowId, Time sent);
    /// Trace signature of DataSent: flow id, byte offset, entropy.
    typedef void (*DataSentTracedCallback)(uint32_t flowId, uint32_t seq, uint16_t entropy);
    /// Trace signature of LbFeedback: flow id, kind (LbFeedbackKind), entropy named.
    typedef void (*LbFeedbackTracedCallback)(uint32_t flowId, uint8_t kind, uint16_t entropy);
    /// Trace signature of NackSent (receiver): source address, sender's qpn, expected byte.
    typedef void (*NackSentTracedCallback)(uint32_t sip, uint16_t qpn, uint32_t expected);
    /// Trace signature of UetWindow: flow id, window and its cap (wire bytes).
    typedef void (*UetWindowTracedCallback)(uint32_t flowId, uint64_t window, uint64_t cap);
    /// Trace signature of UetRtt: flow id, the RTT of the data packet an ACK acknowledges
    /// (ACK arrival minus that packet's send time, which the ACK echoes).
    typedef void (*UetRttTracedCallback)(uint32_t flowId, Time rtt);
    /// Trace signature of RateChange: flow id, old rate, new rate (bit/s).
    typedef void (*RateChangeTracedCallback)(uint32_t flowId, uint64_t oldRate, uint64_t newRate);

  protected:
    void DoDispose() override;

  private:
    /// Binds this NIC's hooks on port \p dev: it takes its packets from NextPacket, and, if
    /// \p receives, its frames go to Receive (a NIC on a switch gets them from the switch)
    void BindPort(const Ptr<RdmaNetDevice>& dev, bool receives);
    /// Attribute LossRecovery: a factory of an RdmaLossRecovery, set before the NIC's first
    /// flow (else a fatal error)
    void SetRecoveryFactory(ObjectFactory factory);
    /// Attribute CongestionControl: a factory of an RdmaCongestionControl, set before the NIC's
    /// first flow (else a fatal error)
    void SetCcFactory(ObjectFactory factory);
    /// Attribute LossRecovery: the factory of the loss recovery
    ObjectFactory GetRecoveryFactory() const;
    /// Attribute CongestionControl: the factory of the congestion control
    ObjectFactory GetCcFactory() const;
    void DoStartFlow(uint32_t flowId,
                     uint32_t dip,
                     uint64_t size,
                     uint32_t pg,
                     std::optional<uint16_t> sport,
                     std::optional<uint16_t> dport);
    RdmaFramePtr NextPacket(RdmaNetDevice& dev);
    /// \return the loss recovery (created at its first use by the LossRecovery factory)
    RdmaLossRecovery& Recovery()
    {
        return m_lossRecovery ? *m_lossRecovery : CreateRecovery();
    }
    /// Creates the loss recovery with its factory. \return it
    RdmaLossRecovery& CreateRecovery();
    void Receive(RdmaNetDevice& dev, RdmaFramePtr& f);
    void ReceiveData(const RdmaFrame& f);
    void ReceiveAck(const RdmaHeader& h);
    void Complete(QpIterator it) override;
    /// \return whether the port is lossless: it obeys PFC and its peer switch generates PFC
    bool PortIsLossless() const;
    /// Answers a probe packet at once (no receiver state).
    void AnswerProbe(const RdmaHeader& h);
    // Congestion control (rdma-cc.h).
    void SetRate(RdmaQueuePair& qp, uint64_t rate);
    /// Creates the congestion control with its factory (at the first flow).
    RdmaCongestionControl& Cc();
    uint64_t CcLineRate() const override;
    void CcSetRate(RdmaQueuePair& qp, uint64_t bps, bool shiftPacing) override;
    RdmaQueuePair* CcFindQp(uint16_t qpn) override;
    /// \return the active queue pair of flow \p flowId, or nullptr
    const RdmaQueuePair* FindQpOfFlow(uint32_t flowId) const;
    /**
     * \return \p member of a private base (RdmaNicSettings, RdmaRecoveryHost: the state the
     * NIC shares with its loss recovery) as a member of RdmaNic, for the attribute and trace
     * accessors (they cast the object to the member's class; rdma-nic-attributes.cc)
     */
    template <class U, class Base>
    static U RdmaNic::*Own(U Base::*member)
    {
        return member;
    }

    // Attributes (defaults: GetTypeId, from RdmaTransportDefault); those a loss recovery reads
    // are RdmaNicSettings' (rdma-recovery-host.h).
    ObjectFactory m_recoveryFactory; //!< LossRecovery: of the loss recovery
    ObjectFactory m_ccFactory;       //!< CongestionControl: of the congestion control
    Time m_baseRtt;
    Ptr<RdmaLossRecovery> m_lossRecovery; //!< created at its first use

    Ptr<LbConfig> m_lbConfig;
    Ptr<HostLbGroup> m_lbGroup; //!< state shared by the queue pairs (per-destination profiles)
    /// Per destination address: SimAI's next per-pair source port (kept only when this NIC or
    /// the destination's has several ports; the port-choice hash's input)
    std::map<uint32_t, uint16_t> m_pairSport;
    Ptr<UniformRandomVariable> m_rng;
    uint16_t m_nextQpn{1};
    TracedCallback<uint32_t, uint32_t, uint32_t, uint64_t, Time, Time, uint64_t> m_flowComplete;
    TracedCallback<const RdmaFlowRecord&> m_flowRecord;
    /// ReceiverReleaseDelay: 0 = the sender's completion deletes the receiver's state at once
    Time m_rxReleaseDelay;
    TracedCallback<uint32_t, uint64_t, uint64_t> m_rxReleased; //!< RxReleased
    TracedCallback<uint32_t, uint64_t, uint64_t> m_rateChange;
};

} // namespace ns3

#endif /* RDMA_NIC_H */
