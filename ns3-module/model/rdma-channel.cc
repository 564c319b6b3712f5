/*
 * rdma-lb: RdmaChannel.
 */
#include "rdma-channel.h"

#include "rdma-net-device.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

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
RdmaChannel::TransmitStart(RdmaFramePtr f, Ptr<RdmaNetDevice> src, Time txTime)
{
    uint32_t dst = (m_dev[0] == src) ? 1 : 0;
    if (m_down || m_dirDown[dst])
    {
        m_lossTrace(*f);
        return false;
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

} // namespace ns3
