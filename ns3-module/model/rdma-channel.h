/*
 * rdma-lb: a full-duplex point-to-point link between two RdmaNetDevices
 * (the reference's link model: store-and-forward, delivery after transmission time +
 * propagation delay, no processing delay). A link can be taken down and brought back up;
 * packets that start or are in flight on a down link are lost. One direction alone can be
 * taken down too (SetDirectionDown: a one-way black hole, as the failed aggregation-core
 * pipes of the REPS paper, §4), the other keeps delivering.
 *
 * Under ns-3's distributed simulator (an MPI build, NS3_MPI), a link whose ends are on
 * different ranks (Node::GetSystemId) is remote after EnableRemote: the sending rank hands its
 * frames (data, ACK/NACK/CNP, PFC, load balancers' control packets: every frame, with its tag)
 * to MpiInterface::SendPacket, serialised field by field, for arrival txTime + delay later; the
 * receiving rank's MpiReceiver puts each in this channel's in-flight queue and delivers it at
 * once, under the sender's tie key when the scheduler orders ties partition-invariantly
 * (RdmaWheelScheduler). Each rank holds a copy of every link; only the ends it owns are used.
 * Up/down state is per rank: the scenario refuses link faults on remote links.
 */
#ifndef RDMA_CHANNEL_H
#define RDMA_CHANNEL_H

#include "rdma-fifo.h"
#include "rdma-frame.h"

#include "ns3/channel.h"
#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"


namespace ns3
{

class RdmaNetDevice;
class Packet;
struct RdmaRemoteFrame;

class RdmaChannel;

/**
 * \ingroup rdma-lb
 * One direction of an RdmaChannel: the frames in flight towards one end, in sending order (a
 * link delivers in sending order: the sender serialises and the delay is constant), and the
 * event of their arrivals. The object is that event itself, scheduled once per frame (the
 * scheduler keeps one reference per pending arrival, as RdmaReusableEvent; never cancelled),
 * and what a send and an arrival read lies in its first cache line: an arrival reads the
 * object the scheduler fetches ahead of it (RdmaWheelScheduler) and not the channel
 * (doc/performance.md, "Sixth round").
 */
class alignas(64) RdmaLinkDirection : public EventImpl
{
  public:
    /// \param channel the link; \param dstIndex the end it delivers to (0 or 1)
    RdmaLinkDirection(RdmaChannel* channel, uint32_t dstIndex);

    /**
     * Sends \p f; it reaches the end after \p txTime + the link's delay.
     * \return false if the link or this direction is down (the frame is lost)
     */
    bool TransmitStart(RdmaFramePtr f, Time txTime);

    /// \return whether the end is on another rank (RdmaChannel::EnableRemote made it remote;
    /// the per-packet form of RdmaChannel::IsCrossRank, which reads both nodes)
    bool IsRemote() const
    {
        return m_remote;
    }

  private:
    friend class RdmaChannel;

    /// The oldest frame in flight arrives.
    void Notify() override;
    /// Puts \p f in flight and schedules its arrival \p delay from now.
    void Launch(RdmaFramePtr f, const Time& delay);

    /// A frame in flight and the epoch of the direction when it was sent.
    struct InFlight
    {
        RdmaFramePtr frame;
        uint32_t epoch{0};
    };

    // First line: the EventImpl (16 bytes; these two flags fill its tail) and what a hop reads.
    bool m_blocked{false}; //!< the link or this direction is down: sends are lost
    bool m_remote{false};  //!< the end is on another rank (RdmaChannel::EnableRemote)
    RdmaFifo<InFlight> m_inFlight;
    RdmaNetDevice* m_dst{nullptr}; //!< the end (the channel holds its Ptr)
    Time m_delay;                  //!< the link's propagation delay
    /// Incremented when the link or this direction goes down: frames in flight from an older
    /// epoch are lost on arrival.
    uint32_t m_epoch{0};
    uint32_t m_context{UINT32_MAX}; //!< the end's node id (its arrivals' context), at first use
    // Second line: the rest.
    RdmaChannel* m_channel; //!< the link (it outlives every arrival)
    uint32_t m_dstIndex;    //!< the end's index on the link
};

/**
 * \ingroup rdma-lb
 * Point-to-point channel with a propagation delay and an up/down state.
 */
class RdmaChannel : public Channel
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    RdmaChannel();

    /// Connects \p device as one of the two ends.
    void Attach(Ptr<RdmaNetDevice> device);
    /// \return the direction in which \p src (an end) sends; the device sends through it
    RdmaLinkDirection* GetDirectionFrom(const RdmaNetDevice* src) const;
    /**
     * Sends \p f from \p src; it reaches the other end after \p txTime + delay. The channel
     * holds the frame while it is in flight and hands it on to the receiver.
     * \return false if the link is down (the packet is lost)
     */
    bool TransmitStart(RdmaFramePtr f, const RdmaNetDevice* src, Time txTime);
    /// Takes the link down (true) or up (false).
    void SetDown(bool down);
    /// \return whether the link is down
    bool IsDown() const;
    /**
     * Takes down (true) or brings back (false) one direction only: what \p sender sends is lost
     * (also what it sent that is still in flight when the direction goes down); the other
     * direction is unaffected. Independent of SetDown (a down link loses both directions).
     */
    void SetDirectionDown(Ptr<const RdmaNetDevice> sender, bool down);
    /// \return whether what \p sender sends is lost (the link or that direction is down)
    bool IsDirectionDown(Ptr<const RdmaNetDevice> sender) const;
    /// \return the propagation delay
    Time GetDelay() const;
    /// Sets the propagation delay (attribute Delay).
    void SetDelay(Time delay);
    /// \return the device at the other end from \p d
    Ptr<RdmaNetDevice> GetPeer(Ptr<const RdmaNetDevice> d) const;

    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

    /// \return whether the two ends are on different ranks (Node::GetSystemId differ)
    bool IsCrossRank() const;
#ifdef NS3_MPI
    /**
     * Makes a cross-rank link remote (no-op otherwise): frames towards the end this rank does
     * not own go through MPI, and the end it owns receives the other rank's frames (an
     * MpiReceiver aggregated to its device). Call once both ends are attached.
     */
    void EnableRemote();
#endif

#ifdef NS3_MPI
    /// A frame from the other rank for end \p dst arrives now (a FRAME message of rdma-remote.h).
    void ReceiveRemote(Ptr<const RdmaNetDevice> dst, Ptr<Packet> p);
    /// Frame \p m from the other rank for end \p dst arrives at \p arrival (not before now).
    void ReceiveRemoteFrame(Ptr<const RdmaNetDevice> dst, const RdmaRemoteFrame& m, Time arrival);
#endif

  private:
    friend class RdmaLinkDirection;

    /// Sends \p f towards end \p dst, owned by another rank, through MPI.
    bool SendRemote(RdmaFramePtr f, uint32_t dst, Time txTime);
    /// Recomputes each direction's m_blocked (after an up/down change).
    void UpdateBlocked();

    Ptr<RdmaNetDevice> m_dev[2];
    uint32_t m_nDevices{0};
    bool m_down{false};
    bool m_dirDown[2]{false, false}; //!< the direction towards end i is down (SetDirectionDown)
    /// The directions towards end 0 and end 1.
    Ptr<RdmaLinkDirection> m_dir[2];
    RdmaFrameTrace<> m_lossTrace;
};

} // namespace ns3

#endif /* RDMA_CHANNEL_H */
