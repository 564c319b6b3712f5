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
                          MakeTimeAccessor(&RdmaChannel::m_delay),
                          MakeTimeChecker())
            .AddTraceSource("Loss",
                            "A packet was lost because the link was (or went) down",
                            MakeTraceSourceAccessor(&RdmaChannel::m_lossTrace),
                            "ns3::Packet::TracedCallback");
    return tid;
}

RdmaChannel::RdmaChannel()
    : m_deliverTo0(Create<RdmaReusableEvent<RdmaChannel, &RdmaChannel::DeliverTo0>>(this)),
      m_deliverTo1(Create<RdmaReusableEvent<RdmaChannel, &RdmaChannel::DeliverTo1>>(this))
{
}

void
RdmaChannel::Attach(Ptr<RdmaNetDevice> device)
{
    NS_ABORT_MSG_IF(m_nDevices >= 2, "RdmaChannel: a link has exactly two ends");
    m_dev[m_nDevices++] = device;
}

bool
RdmaChannel::TransmitStart(RdmaFramePtr f, const RdmaNetDevice* src, Time txTime)
{
    uint32_t dst = (m_dev[0] == src) ? 1 : 0;
    if (m_down || m_dirDown[dst])
    {
        m_lossTrace(*f);
        return false;
    }
    if (m_remote[dst])
    {
        return SendRemote(std::move(f), dst, txTime);
    }
    m_inFlight[dst].push_back({std::move(f), Epoch(dst)});
    if (m_context[dst] == UINT32_MAX)
    {
        m_context[dst] = m_dev[dst]->GetNode()->GetId();
    }
    const uint32_t context = m_context[dst];
    if (dst == 0)
    {
        m_deliverTo0->ScheduleWithContext(context, txTime + m_delay);
    }
    else
    {
        m_deliverTo1->ScheduleWithContext(context, txTime + m_delay);
    }
    return true;
}

void
RdmaChannel::DeliverTo0()
{
    Deliver(0);
}

void
RdmaChannel::DeliverTo1()
{
    Deliver(1);
}

void
RdmaChannel::Deliver(uint32_t dstIndex)
{
    InFlight& head = m_inFlight[dstIndex].front();
    RdmaFramePtr f = std::move(head.frame);
    const uint64_t epoch = head.epoch;
    m_inFlight[dstIndex].pop_front();
    if (!m_inFlight[dstIndex].empty())
    {
        RdmaFramePrefetch(m_inFlight[dstIndex].front().frame.get());
    }
    if (m_down || m_dirDown[dstIndex] || epoch != Epoch(dstIndex))
    {
        m_lossTrace(*f);
        return;
    }
    m_dev[dstIndex]->Receive(std::move(f));
}

void
RdmaChannel::SetDown(bool down)
{
    NS_LOG_FUNCTION(this << down);
    if (down && !m_down)
    {
        ++m_epoch;
    }
    m_down = down;
}

bool
RdmaChannel::IsDown() const
{
    return m_down;
}

uint64_t
RdmaChannel::Epoch(uint32_t dstIndex) const
{
    // Both counters only grow, so their sum changes whenever either does.
    return m_epoch + m_dirEpoch[dstIndex];
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
        ++m_dirEpoch[dst];
    }
    m_dirDown[dst] = down;
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
    return m_delay;
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
        m_remote[i] = !mine;
        if (mine)
        {
            RdmaRemoteAttach(m_dev[i]);
        }
    }
    RdmaRemoteNoteDelay(m_delay);
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
    // In arrival order: one direction's frames come in their sending order, and arrive in it.
    m_inFlight[dstIndex].push_back({std::move(f), Epoch(dstIndex)});
    if (m_context[dstIndex] == UINT32_MAX)
    {
        m_context[dstIndex] = m_dev[dstIndex]->GetNode()->GetId();
    }
    // The arrival itself, ordered among its time's events as the sender's schedule would have
    // been on one rank.
    if (m.hasKey)
    {
        RdmaWheelScheduler::SetNextTieKey(m.key);
    }
    const Time delay = arrival - Simulator::Now();
    if (dstIndex == 0)
    {
        m_deliverTo0->ScheduleWithContext(m_context[0], delay);
    }
    else
    {
        m_deliverTo1->ScheduleWithContext(m_context[1], delay);
    }
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
    RdmaRemoteSendFrame(m_dev[dst], m, Simulator::Now() + txTime + m_delay);
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
