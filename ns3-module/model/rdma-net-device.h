/*
 * rdma-lb: the port device of hosts and switches (the reference's QbbNetDevice, as behaviour).
 *
 * Eight priority FIFOs; queue 0 is strict high priority (control: ACK/NACK/PFC), queues 1-7 are
 * served round-robin, one packet per turn. On a host the device also pulls data packets from
 * its NIC (the "data source") whenever the control queue is empty, as the reference's
 * RdmaEgressQueue does. Transmission time = size x 8 / rate; the channel adds the delay.
 *
 * PFC (as the reference's port): a received PFC frame is consumed by the port (never handed to the
 * switch or NIC): pause time > 0 pauses its class (1-7; queue 0 is never paused) and schedules an
 * automatic resume after that time, replacing any pending one; pause time 0 resumes at once. A
 * paused class is skipped by the round-robin. On a host, the data source (the NIC) is offered every
 * transmit opportunity the control queue leaves; the NIC itself skips the queue pairs whose
 * priority group is paused (as the reference's NIC scheduler), so a pause of one class never blocks
 * another. A resume re-offers the link. With PfcEnabled false (the reference's QbbEnabled off)
 * received frames are counted and traced but not obeyed. PFC events are traced at the receiving
 * port (PfcRx), as the reference logs them; frames sent by SendPfc are traced as PfcTx.
 */
#ifndef RDMA_NET_DEVICE_H
#define RDMA_NET_DEVICE_H

#include "rdma-fifo.h"
#include "rdma-frame.h"
#include "rdma-hook.h"
#include "rdma-reusable-event.h"
#include "rdma-time.h"

#include "ns3/callback.h"
#include "ns3/data-rate.h"
#include "ns3/error-model.h"
#include "ns3/event-id.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/traced-callback.h"

#include <array>

namespace ns3
{

class RdmaChannel;
class RdmaLinkDirection;
class RdmaHeader;

/**
 * \ingroup rdma-lb
 * A point-to-point port with eight priority queues.
 */
class alignas(64) RdmaNetDevice : public NetDevice
{
  public:
    /// Number of priority queues (classes).
    static constexpr uint32_t N_QUEUES = 8;

    /// Receives every packet that arrives at this port, as an ns-3 packet (made for it: a
    /// test's or a foreign user's handler; the fabric's own use the FrameReceiveHandler).
    using ReceiveHandler = Callback<void, Ptr<RdmaNetDevice>, Ptr<Packet>>;
    /// Receives every frame that arrives at this port (but PFC frames, which the port
    /// consumes); the handler may take it (move from the pointer) or change it.
    using FrameReceiveHandler = Callback<void, Ptr<RdmaNetDevice>, RdmaFramePtr&>;
    /// Returns the host's next data packet, or null when none may be sent now.
    using DataSource = Callback<RdmaFramePtr, Ptr<RdmaNetDevice>>;
    /// Called when a frame leaves queue `q` (before transmission), with the word it was
    /// queued with (Enqueue's \p meta); the handler may change the frame's header.
    using DequeueHandler = Callback<void, Ptr<RdmaNetDevice>, RdmaFrame&, uint32_t, uint32_t>;
    /// Called when the last bit of a frame taken from queue `q` has left (the end of its
    /// transmission), with the word it was queued with and its size in bytes. The frame is
    /// the one on the link, whose header the handler may still change before it arrives; null
    /// when the link lost it at the start (down). See SetTransmitEndHandler.
    using TransmitEndHandler =
        Callback<void, Ptr<RdmaNetDevice>, RdmaFrame*, uint32_t, uint32_t, uint32_t>;
    /// Enqueue's \p meta when the enqueuer gives none.
    static constexpr uint32_t NO_META = UINT32_MAX;
    /// The handlers above as hooks (rdma-hook.h), the port passed by reference: how the fabric's
    /// own switch and NIC bind them, so that a frame's hop reads no state outside the port.
    using FrameReceiveHook = RdmaHook<void(RdmaNetDevice&, RdmaFramePtr&)>;
    using DataSourceHook = RdmaHook<RdmaFramePtr(RdmaNetDevice&)>;
    using DequeueHook = RdmaHook<void(RdmaNetDevice&, RdmaFrame&, uint32_t, uint32_t)>;
    using TransmitEndHook =
        RdmaHook<void(RdmaNetDevice&, RdmaFrame*, uint32_t, uint32_t, uint32_t)>;

    /// \return the TypeId
    static TypeId GetTypeId();
    RdmaNetDevice();
    ~RdmaNetDevice() override;

    /// Connects the port to a link.
    void Attach(Ptr<RdmaChannel> channel);
    /**
     * Queues \p p in queue \p q and starts sending if idle. \p meta is kept beside the
     * packet and handed to the dequeue handler (a switch keeps the ingress port of the packets
     * its MMU admitted there, as the reference keeps it in a packet tag).
     */
    void Enqueue(RdmaFramePtr f, uint32_t q, uint32_t meta = NO_META);
    /// Queues an ns-3 packet that starts with an RdmaHeader (RdmaFrame::FromPacket).
    void Enqueue(Ptr<Packet> p, uint32_t q, uint32_t meta = NO_META);
    /**
     * Removes the newest frame waiting in queue \p q (not the one in transmission).
     * \param q the queue
     * \param[out] meta the word its enqueuer gave
     * \return the frame, null if queue \p q holds none
     */
    RdmaFramePtr PopNewest(uint32_t q, uint32_t& meta);
    /// Starts sending if idle (a host NIC calls this when data becomes eligible).
    void TriggerTransmit();
    /// Called by the channel when a frame arrives.
    void Receive(RdmaFramePtr f);
    /// A packet that starts with an RdmaHeader arrives (RdmaFrame::FromPacket).
    void Receive(Ptr<Packet> p);

    /// Sets who receives arriving packets.
    void SetReceiveHandler(ReceiveHandler h);
    /// Sets who receives arriving frames (instead of the ReceiveHandler, when set).
    void SetFrameReceiveHandler(FrameReceiveHandler h);
    /// Sets the host NIC's data source.
    void SetDataSource(DataSource s);
    /// Sets the dequeue hook (switch MMU, ECN marking).
    void SetDequeueHandler(DequeueHandler h);
    /**
     * Sets the transmit-end hook (a switch that releases and marks a packet when its last bit
     * has left: RdmaSwitch::QueueRelease "end"); a null callback removes it. While set, every
     * frame taken from the queues is reported again when its transmission ends (not those of
     * the DataSource). Links between ranks are not supported (the frame has left the rank).
     */
    void SetTransmitEndHandler(TransmitEndHandler h);
    /// As SetFrameReceiveHandler, SetDataSource, SetDequeueHandler and SetTransmitEndHandler,
    /// bound as hooks (an unbound hook removes the handler).
    void SetFrameReceiveHook(FrameReceiveHook h);
    void SetDataSourceHook(DataSourceHook h);
    void SetDequeueHook(DequeueHook h);
    void SetTransmitEndHook(TransmitEndHook h);

    /// \return the link rate
    DataRate GetDataRate() const;
    /// \return the serialisation time of a frame of \p bytes at this port (RdmaTxTime with
    /// its rate and TimeTruncation)
    Time GetTxTime(uint32_t bytes) const;
    /// \return bytes queued in queue \p q
    uint64_t GetQueueBytes(uint32_t q) const;
    /// \return bytes queued in all queues
    uint64_t GetTotalQueueBytes() const;
    /// \return bytes this port has started to transmit
    uint64_t GetTxBytes() const;
    /// \return packets this port has started to transmit (each is one packet-hop: a packet
    /// sent over one link, whether or not the link delivers it)
    uint64_t GetTxPackets() const;
    /// \return the channel as RdmaChannel
    Ptr<RdmaChannel> GetRdmaChannel() const;
    /// \return whether the port is transmitting
    bool IsBusy() const;

    /**
     * Sends a PFC frame (43 B) in queue 0.
     * \param cls the priority class
     * \param pauseUs pause time in microseconds (0 = resume)
     * \param qlen the queue length reported in the frame
     */
    void SendPfc(uint32_t cls, uint32_t pauseUs, uint32_t qlen);
    /// \return whether class \p q is paused by the peer
    bool IsPaused(uint32_t q) const;
    /// \return whether the port obeys received PFC frames (attribute PfcEnabled)
    bool GetPfcEnabled() const;
    /// \return PFC pause frames sent by this port
    uint64_t GetPfcPausesSent() const;
    /// \return PFC resume frames sent by this port
    uint64_t GetPfcResumesSent() const;
    /// \return PFC pause frames received by this port
    uint64_t GetPfcPausesReceived() const;
    /// \return PFC resume frames received by this port
    uint64_t GetPfcResumesReceived() const;

    /**
     * Trace signature of PfcTx / PfcRx.
     * \param cls priority class
     * \param pauseUs pause time in microseconds (0 = resume)
     */
    typedef void (*PfcTracedCallback)(uint32_t cls, uint32_t pauseUs);
    /**
     * Trace signature of QueueLength, fired whenever a queue's length changes.
     * \param q the queue
     * \param bytes its new length in bytes
     */
    typedef void (*QueueLengthTracedCallback)(uint32_t q, uint64_t bytes);

    // NetDevice
    void SetIfIndex(const uint32_t index) override;
    uint32_t GetIfIndex() const override;
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address address) override;
    Address GetAddress() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(Callback<void> callback) override;
    bool IsBroadcast() const override;
    Address GetBroadcast() const override;
    bool IsMulticast() const override;
    Address GetMulticast(Ipv4Address multicastGroup) const override;
    Address GetMulticast(Ipv6Address addr) const override;
    bool IsBridge() const override;
    bool IsPointToPoint() const override;
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet,
                  const Address& source,
                  const Address& dest,
                  uint16_t protocolNumber) override;
    Ptr<Node> GetNode() const override;
    void SetNode(Ptr<Node> node) override;
    bool NeedsArp() const override;
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override;

  protected:
    void DoDispose() override;

  private:
    void TransmitNext();
    /// Starts sending \p f (\p queued: it came from a queue, not from the data source).
    void Transmit(RdmaFramePtr f, bool queued);
    void TransmitComplete();
    /// \return the next queued frame, null if none may be sent
    RdmaFramePtr Dequeue();
    /// Accounts frame \p f of queue \p q as it leaves its queue (its bytes, the trace, the
    /// dequeue hook); Dequeue's part after it picked the frame.
    void Served(RdmaFrame& f, uint32_t q, uint32_t meta);
    void ReceivePfc(uint32_t cls, uint32_t pauseUs);
    void PauseExpired(uint32_t cls);

    /// \return the serialisation time of \p bytes at m_rate (RdmaTxTime, remembered)
    Time TxTime(uint32_t bytes);
    /// \return under the ps clock, the whole ns of the frame of \p bytes sent now, htsim's
    /// ps plus the fraction of a ns the last frame left if this one follows it back to back;
    /// keeps this frame's fraction and end
    Time CarriedTxTime(uint32_t bytes);
    /// The Callback setters' hooks: call the Callback kept below.
    void CallFrameReceiveHandler(RdmaNetDevice& dev, RdmaFramePtr& f);
    RdmaFramePtr CallDataSource(RdmaNetDevice& dev);
    void CallDequeueHandler(RdmaNetDevice& dev, RdmaFrame& f, uint32_t q, uint32_t meta);
    void CallTransmitEndHandler(RdmaNetDevice& dev,
                                RdmaFrame* f,
                                uint32_t sizeBytes,
                                uint32_t q,
                                uint32_t meta);

    /// A remembered serialisation time.
    struct TxTimeEntry
    {
        uint64_t bps{0};        //!< rate it was computed at
        uint32_t bytes{0};      //!< packet size (0: unused entry)
        RdmaTxArithmetic arithmetic{}; //!< how it was computed
        Time time;                     //!< RdmaTxTime(bps, bytes, arithmetic)
    };
    /// A queued frame and the word its enqueuer gave (Enqueue's meta).
    struct Queued
    {
        RdmaFramePtr frame;
        uint32_t meta{NO_META};
    };
    /// A priority queue: its frames and their bytes, on one half of a cache line.
    struct alignas(32) PortQueue
    {
        RdmaFifo<Queued> frames;
        uint64_t bytes{0};
    };
    /// The frame in transmission, for the TransmitEndHandler (set only while one is).
    struct InService
    {
        RdmaFrame* frame{nullptr}; //!< on the link (the channel holds it); null if lost
        uint32_t sizeBytes{0};     //!< its size
        uint32_t queue{0};         //!< the queue it came from
        uint32_t meta{NO_META};    //!< its enqueuer's word
        bool pending{false};       //!< a queued frame is in transmission
    };

    // The members a frame's hop touches come first, in the order it touches them, so that a
    // hop reads a few adjacent cache lines of the port (the class is aligned to a line):
    // receiving (after NetDevice's own members) ...
    FrameReceiveHook m_frameReceive;
    Ptr<ErrorModel> m_receiveErrorModel; //!< loss injection on arrival (optional)
    uint32_t m_ifIndex{0};
    bool m_busy{false};
    bool m_pfcEnabled{true};
    bool m_timeTruncation{false};
    bool m_integerTxTime{false};
    RdmaTxClock m_txClock{TX_CLOCK_NS}; //!< TxTime
    uint32_t m_txCarryPs{0};            //!< ps clock: the last frame's fraction of a ns
    Time m_txEnd{-1};                   //!< ps clock: when the last frame's whole ns ended
    uint32_t m_controlTurns{0};         //!< ControlTurns
    uint32_t m_turn{0};                 //!< ControlTurns: the turns since data's last
    RdmaFrameTrace<> m_rxTrace;
    RdmaFrameTrace<> m_txTrace;
    // ... queueing and sending ...
    DequeueHook m_dequeue;
    DataSourceHook m_dataSource;
    RdmaLinkDirection* m_txLink{nullptr}; //!< the direction of m_channel this port sends in
    /// The transmit-complete event (one pending at most: while m_busy), scheduled per packet.
    Ptr<RdmaReusableEvent<RdmaNetDevice, &RdmaNetDevice::TransmitComplete>> m_txComplete;
    /// bit q set: m_queues[q] holds a frame (one word to scan, not 8 queues)
    uint32_t m_nonEmpty{0};
    uint32_t m_lastRr{0};
    uint32_t m_lastQueue{0};      //!< Dequeue: the queue of the frame it returned
    uint32_t m_lastMeta{NO_META}; //!< Dequeue: that frame's meta
    std::array<bool, N_QUEUES> m_paused{}; //!< classes paused by the peer
    uint64_t m_txBytes{0};
    uint64_t m_txPackets{0};
    DataRate m_rate;
    uint32_t m_txTimeNext{0}; //!< entry of m_txTimes to replace next
    TracedCallback<uint32_t, uint64_t> m_queueLengthTrace;
    std::array<TxTimeEntry, 2> m_txTimes; //!< the last two sizes sent
    TransmitEndHook m_transmitEnd;
    std::array<PortQueue, N_QUEUES> m_queues;
    InService m_inService;
    // ... and the rest.
    Ptr<RdmaChannel> m_channel;
    Ptr<Node> m_node;
    Mac48Address m_address;
    uint16_t m_mtu{1500};
    RdmaFrameTrace<> m_rxDropTrace;
    ReceiveHandler m_receiveHandler;
    FrameReceiveHandler m_frameReceiveHandler;
    DataSource m_dataSourceHandler;
    DequeueHandler m_dequeueHandler;
    TransmitEndHandler m_transmitEndHandler;
    std::array<EventId, N_QUEUES> m_resumeEvent;  //!< automatic resumes
    uint64_t m_pfcPausesSent{0};
    uint64_t m_pfcResumesSent{0};
    uint64_t m_pfcPausesReceived{0};
    uint64_t m_pfcResumesReceived{0};
    TracedCallback<uint32_t, uint32_t> m_pfcTxTrace;
    TracedCallback<uint32_t, uint32_t> m_pfcRxTrace;
};

} // namespace ns3

#endif /* RDMA_NET_DEVICE_H */
