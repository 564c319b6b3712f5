/*
 * rdma-lb: RdmaChannel.
 */
#include "rdma-channel.h"

#include "rdma-net-device.h"
#include "rdma-remote.h"
#include "rdma-wheel-scheduler.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

#ifdef NS3_MPI
#include "ns3/mpi-interface.h"
#include "ns3/mpi-receiver.h"
#endif

#include <typeinfo>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaChannel");
NS_OBJECT_ENSURE_REGISTERED(RdmaChannel);

TypeId
RdmaChannel::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaChannel")
            .SetParent<Channel>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaChannel>()
            .AddAttribute("Delay",
                          "One-way propagation delay of the link",
                          TimeValue(MicroSeconds(1)),
                          MakeTimeAccessor(&RdmaChannel::SetDelay, &RdmaChannel::GetDelay),
                          MakeTimeChecker())
            .AddTraceSource("Loss",
                            "A packet was lost because the link was (or went) down",
                            MakeTraceSourceAccessor(&RdmaChannel::m_lossTrace),
                            "ns3::Packet::TracedCallback");
    return tid;
}

RdmaLinkDirection::RdmaLinkDirection(RdmaChannel* channel, uint32_t dstIndex)
    : m_channel(channel),
      m_dstIndex(dstIndex)
{
}

bool
RdmaLinkDirection::TransmitStart(RdmaFramePtr f, Time txTime)
{
    if (m_blocked)
    {
        m_channel->m_lossTrace(*f);
        return false;
    }
    if (m_remote)
    {
        return m_channel->SendRemote(std::move(f), m_dstIndex, txTime);
    }
    Launch(std::move(f), txTime + m_delay);
    return true;
}

void
RdmaLinkDirection::Launch(RdmaFramePtr f, const Time& delay)
{
    m_inFlight.push_back({std::move(f), m_epoch});
    if (m_context == UINT32_MAX)
    {
        m_context = m_dst->GetNode()->GetId();
    }
    Ref(); // the scheduler's reference, released after the arrival
    Simulator::ScheduleWithContext(m_context, delay, this);
}

void
RdmaLinkDirection::Notify()
{
    InFlight& head = m_inFlight.front();
    RdmaFramePtr f = std::move(head.frame);
    const uint32_t epoch = head.epoch;
    m_inFlight.pop_front();
    if (!m_inFlight.empty())
    {
        RdmaFramePrefetch(m_inFlight.front().frame.get());
    }
    // Sends stop while blocked, and going down starts a new epoch: the epoch decides.
    if (epoch != m_epoch)
    {
        m_channel->m_lossTrace(*f);
        return;
    }
    m_dst->Receive(std::move(f));
}

RdmaChannel::RdmaChannel()
    : m_dir{Create<RdmaLinkDirection>(this, 0), Create<RdmaLinkDirection>(this, 1)}
{
}

void
RdmaChannel::Attach(Ptr<RdmaNetDevice> device)
{
    NS_ABORT_MSG_IF(m_nDevices >= 2, "RdmaChannel: a link has exactly two ends");
    m_dir[m_nDevices]->m_dst = PeekPointer(device);
    m_dev[m_nDevices++] = device;
}

RdmaLinkDirection*
RdmaChannel::GetDirectionFrom(const RdmaNetDevice* src) const
{
    return PeekPointer(m_dir[(m_dev[0] == src) ? 1 : 0]);
}

bool
RdmaChannel::TransmitStart(RdmaFramePtr f, const RdmaNetDevice* src, Time txTime)
{
    return GetDirectionFrom(src)->TransmitStart(std::move(f), txTime);
}

void
RdmaChannel::SetDown(bool down)
{
    NS_LOG_FUNCTION(this << down);
    if (down && !m_down)
    {
        ++m_dir[0]->m_epoch;
        ++m_dir[1]->m_epoch;
    }
    m_down = down;
    UpdateBlocked();
}

void
RdmaChannel::UpdateBlocked()
{
    for (uint32_t i = 0; i < 2; ++i)
    {
        m_dir[i]->m_blocked = m_down || m_dirDown[i];
    }
}

bool
RdmaChannel::IsDown() const
{
    return m_down;
}

void
RdmaChannel::SetDirectionDown(Ptr<const RdmaNetDevice> sender, bool down)
{
    NS_LOG_FUNCTION(this << sender << down);
    NS_ABORT_MSG_IF(sender != m_dev[0] && sender != m_dev[1],
                    "RdmaChannel: SetDirectionDown from a device not on this link");
    uint32_t dst = (m_dev[0] == sender) ? 1 : 0;
    if (down && !m_dirDown[dst])
    {
        ++m_dir[dst]->m_epoch;
    }
    m_dirDown[dst] = down;
    UpdateBlocked();
}

bool
RdmaChannel::IsDirectionDown(Ptr<const RdmaNetDevice> sender) const
{
    uint32_t dst = (m_dev[0] == sender) ? 1 : 0;
    return m_down || m_dirDown[dst];
}

Time
RdmaChannel::GetDelay() const
{
    return m_dir[0]->m_delay; // both directions keep the link's
}

void
RdmaChannel::SetDelay(Time delay)
{
    m_dir[0]->m_delay = delay;
    m_dir[1]->m_delay = delay;
}

Ptr<RdmaNetDevice>
RdmaChannel::GetPeer(Ptr<const RdmaNetDevice> d) const
{
    return (m_dev[0] == d) ? m_dev[1] : m_dev[0];
}

std::size_t
RdmaChannel::GetNDevices() const
{
    return m_nDevices;
}

Ptr<NetDevice>
RdmaChannel::GetDevice(std::size_t i) const
{
    return m_dev[i];
}

bool
RdmaChannel::IsCrossRank() const
{
    return m_nDevices == 2 &&
           m_dev[0]->GetNode()->GetSystemId() != m_dev[1]->GetNode()->GetSystemId();
}

// ---- Remote links (MPI) ---------------------------------------------------------------------

#ifdef NS3_MPI

void
RdmaChannel::EnableRemote()
{
    if (!IsCrossRank())
    {
        return;
    }
    const uint32_t me = MpiInterface::GetSystemId();
    for (uint32_t i = 0; i < 2; ++i)
    {
        const bool mine = m_dev[i]->GetNode()->GetSystemId() == me;
        m_dir[i]->m_remote = !mine;
        if (mine)
        {
            RdmaRemoteAttach(m_dev[i]);
        }
    }
    RdmaRemoteNoteDelay(GetDelay());
    // ns-3's receive path schedules MpiReceiver::Receive events; the scheduler puts them first
    // in their timestamp (partition-invariant ties). The type of that event is the one
    // MakeEvent gives for these argument types, as GrantedTimeWindowMpiInterface calls it.
    static bool registered = false;
    if (!registered)
    {
        registered = true;
        Ptr<MpiReceiver> probe;
        Ptr<Packet> none;
        EventImpl* ev = MakeEvent(&MpiReceiver::Receive, probe, none);
        RdmaWheelScheduler::RegisterRemoteArrivalType(&typeid(*ev));
        ev->Unref();
    }
}

void
RdmaChannel::ReceiveRemote(Ptr<const RdmaNetDevice> dst, Ptr<Packet> p)
{
    ReceiveRemoteFrame(dst, RdmaRemoteDecodeFrame(p), Simulator::Now());
}

void
RdmaChannel::ReceiveRemoteFrame(Ptr<const RdmaNetDevice> dst, const RdmaRemoteFrame& m, Time arrival)
{
    const uint32_t dstIndex = m_dev[0] == dst ? 0 : 1;
    RdmaFramePtr f = RdmaFrame::Make(m.header, 0);
    f->header = m.header; // every field as the sender had it (Make keeps the wire's only)
    f->sizeBytes = m.sizeBytes;
    f->lbTag = m.lbTag;
    // The arrival, in arrival order (one direction's frames come in their sending order), and
    // ordered among its time's events as the sender's schedule would have been on one rank.
    if (m.hasKey)
    {
        RdmaWheelScheduler::SetNextTieKey(m.key);
    }
    m_dir[dstIndex]->Launch(std::move(f), arrival - Simulator::Now());
}

bool
RdmaChannel::SendRemote(RdmaFramePtr f, uint32_t dst, Time txTime)
{
    // Conservative synchronisation delivers a message before the receiver passes the sender's
    // time + lookahead (the smallest remote delay); an arrival exactly there could come late.
    NS_ABORT_MSG_IF(!txTime.IsStrictlyPositive(),
                    "RdmaChannel: a frame of " << f->sizeBytes << " B serialises in 0 time steps "
                    "on a link between ranks (its arrival would be at the lookahead's edge)");
    RdmaRemoteFrame m;
    m.hasKey = RdmaWheelScheduler::TakeTieKey(&m.key);
    m.sizeBytes = f->sizeBytes;
    m.lbTag = f->lbTag;
    m.header = f->header;
    RdmaRemoteSendFrame(m_dev[dst], m, Simulator::Now() + txTime + m_dir[dst]->m_delay);
    return true;
}

#else

bool
RdmaChannel::SendRemote(RdmaFramePtr, uint32_t, Time)
{
    NS_ABORT_MSG("RdmaChannel: remote links need ns-3 built with MPI (NS3_MPI)");
    return false;
}

#endif

} // namespace ns3
