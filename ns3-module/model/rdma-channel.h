/*
 * rdma-lb: a full-duplex point-to-point link between two RdmaNetDevices
 * (the reference's link model: store-and-forward, delivery after transmission time +
 * propagation delay, no processing delay). A link can be taken down and brought back up;
 * packets that start or are in flight on a down link are lost.
 */
#ifndef RDMA_CHANNEL_H
#define RDMA_CHANNEL_H

#include "ns3/channel.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <deque>

namespace ns3
{

class RdmaNetDevice;
class Packet;

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
     * Sends \p p from \p src; it reaches the other end after \p txTime + delay. The channel
     * holds the packet while it is in flight and hands the same object to the receiver unless
     * someone else (a trace sink) still holds it, in which case the receiver gets a copy.
     * \return false if the link is down (the packet is lost)
     */
    bool TransmitStart(Ptr<Packet> p, Ptr<RdmaNetDevice> src, Time txTime);
    /// Takes the link down (true) or up (false).
    void SetDown(bool down);
    /// \return whether the link is down
    bool IsDown() const;
    /// \return the propagation delay
    Time GetDelay() const;
    /// \return the device at the other end from \p d
    Ptr<RdmaNetDevice> GetPeer(Ptr<const RdmaNetDevice> d) const;

    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  private:
    void Deliver(uint32_t dstIndex, uint64_t epoch);

    Time m_delay;
    Ptr<RdmaNetDevice> m_dev[2];
    uint32_t m_nDevices{0};
    bool m_down{false};
    uint64_t m_epoch{0}; //!< incremented when the link goes down: in-flight packets are lost
    /// Packets in flight towards end i, in arrival order (a link delivers in sending order: the
    /// sender serialises and the delay is constant), so an arrival event needs no packet.
    std::deque<Ptr<Packet>> m_inFlight[2];
    TracedCallback<Ptr<const Packet>> m_lossTrace;
};

} // namespace ns3

#endif /* RDMA_CHANNEL_H */
