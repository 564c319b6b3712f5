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
#include "rdma-reusable-event.h"

#include "ns3/channel.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"


namespace ns3
{

class RdmaNetDevice;
class Packet;
struct RdmaRemoteFrame;

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
    /// Sends \p f towards end \p dst, owned by another rank, through MPI.
    bool SendRemote(RdmaFramePtr f, uint32_t dst, Time txTime);

    /// The packet at the head of m_inFlight[dstIndex] arrives.
    void Deliver(uint32_t dstIndex);
    /// Deliver(0) and Deliver(1), as the two directions' reusable events call them.
    void DeliverTo0();
    void DeliverTo1();
    /// \return the epoch of the direction towards end \p dstIndex: changes when the link or
    /// that direction goes down (in-flight packets of older epochs are lost)
    uint64_t Epoch(uint32_t dstIndex) const;

    Time m_delay;
    Ptr<RdmaNetDevice> m_dev[2];
    /// The node id of end i (the context of its arrival events), read at its first arrival.
    uint32_t m_context[2]{UINT32_MAX, UINT32_MAX};
    uint32_t m_nDevices{0};
    bool m_down{false};
    bool m_remote[2]{false, false}; //!< end i is on another rank (EnableRemote)
    uint64_t m_epoch{0}; //!< incremented when the link goes down: in-flight packets are lost
    bool m_dirDown[2]{false, false};  //!< the direction towards end i is down (SetDirectionDown)
    uint64_t m_dirEpoch[2]{0, 0};     //!< incremented when the direction towards end i goes down
    /// A packet in flight and the epoch of its direction when it was sent.
    struct InFlight
    {
        RdmaFramePtr frame;
        uint64_t epoch{0};
    };
    /// Packets in flight towards end i, in arrival order (a link delivers in sending order: the
    /// sender serialises and the delay is constant), so an arrival event needs no argument.
    RdmaFifo<InFlight> m_inFlight[2];
    /// The arrival events towards end 0 and end 1, one object each, scheduled once per packet.
    Ptr<RdmaReusableEvent<RdmaChannel, &RdmaChannel::DeliverTo0>> m_deliverTo0;
    Ptr<RdmaReusableEvent<RdmaChannel, &RdmaChannel::DeliverTo1>> m_deliverTo1;
    RdmaFrameTrace<> m_lossTrace;
};

} // namespace ns3

#endif /* RDMA_CHANNEL_H */
