/*
 * rdma-lb: messages between MPI ranks (see the header).
 */
#include "rdma-remote.h"

#ifdef NS3_MPI

#include "rdma-channel.h"
#include "rdma-mpi-simulator-impl.h"
#include "rdma-net-device.h"
#include "rdma-nic.h"
#include "rdma-wheel-scheduler.h"

#include "ns3/abort.h"
#include "ns3/mpi-interface.h"
#include "ns3/mpi-receiver.h"
#include "ns3/node-list.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <cstring>
#include <type_traits>
#include <vector>

namespace ns3
{

namespace
{
/// The smallest remote link delay (RdmaRemoteNoteDelay).
Time g_minRemoteDelay = Time::Max();

/**
 * A host record (EXPECT_FLOW or RELEASE_RX) for node \p r.node, taking effect at its arrival:
 * applied alike whether it came alone (ns-3's engine, delivered at its arrival) or in a batch
 * (RdmaMpiSimulatorImpl, delivered at the end of the window before it).
 */
void
ApplyHostRecord(const RdmaRemoteRecord& r)
{
    Ptr<RdmaNic> nic = NodeList::GetNode(r.node)->GetObject<RdmaNic>();
    NS_ABORT_MSG_IF(!nic, "RdmaRemote: a host record for node " << r.node << ", not a host");
    switch (r.kind)
    {
    case RdmaRemoteKind::EXPECT_FLOW:
        // Only state for the flow's first packet, which comes later (in a later batch or
        // after this record in this one, delivered at its own arrival): set at once.
        nic->ExpectFlow(r.sip, r.qpn, r.flowId, r.size);
        return;
    case RdmaRemoteKind::RELEASE_RX:
        if (r.hasKey)
        {
            RdmaWheelScheduler::SetNextTieKey(r.key);
        }
        Simulator::ScheduleWithContext(r.node,
                                       TimeStep(r.arrivalTs) - Simulator::Now(),
                                       &RdmaNic::ReleaseRx,
                                       nic,
                                       r.sip,
                                       r.qpn);
        return;
    case RdmaRemoteKind::FRAME:
        break;
    }
    NS_ABORT_MSG("RdmaRemote: not a host record, kind " << unsigned(r.kind));
}

/// An incoming message for \p dev under ns-3's engine: dispatched on its first byte.
void
Dispatch(Ptr<RdmaNetDevice> dev, Ptr<Packet> p)
{
    uint8_t kind = 0xff;
    p->CopyData(&kind, 1);
    if (static_cast<RdmaRemoteKind>(kind) == RdmaRemoteKind::FRAME)
    {
        dev->GetRdmaChannel()->ReceiveRemote(dev, p);
        return;
    }
    std::vector<uint8_t> b(p->GetSize());
    p->CopyData(b.data(), b.size());
    RdmaRemoteBatchReader reader(b.data(), b.size());
    RdmaRemoteRecord r;
    NS_ABORT_MSG_IF(!reader.Next(&r), "RdmaRemote: an empty message");
    NS_ABORT_MSG_IF(reader.Next(&r), "RdmaRemote: a message of more than one record");
    ApplyHostRecord(r);
}

/// What this rank sent (RdmaRemoteGetCounts).
RdmaRemoteCounts g_counts;

/**
 * A batch from rank \p src (RdmaMpiSimulatorImpl, at the end of a window): each record takes
 * effect at its arrival time, scheduled here under its sender's tie key as ns-3's receive path
 * would have re-scheduled it, without a receive event of its own.
 */
void
ReceiveBatch(uint32_t src, const uint8_t* data, size_t n)
{
    (void)src;
    RdmaRemoteBatchReader reader(data, n);
    RdmaRemoteRecord r;
    while (reader.Next(&r))
    {
        const Time arrival = TimeStep(r.arrivalTs);
        Ptr<Node> node = NodeList::GetNode(r.node);
        switch (r.kind)
        {
        case RdmaRemoteKind::FRAME: {
            Ptr<RdmaNetDevice> dev = DynamicCast<RdmaNetDevice>(node->GetDevice(r.ifIndex));
            NS_ABORT_MSG_IF(!dev, "RdmaRemote: a frame for node " << r.node << " device "
                                                                   << r.ifIndex);
            dev->GetRdmaChannel()->ReceiveRemoteFrame(dev, r.frame, arrival);
            break;
        }
        case RdmaRemoteKind::EXPECT_FLOW:
        case RdmaRemoteKind::RELEASE_RX:
            ApplyHostRecord(r);
            break;
        }
    }
}

/**
 * Sends host record \p r to its node's rank: into the window's batch under
 * RdmaMpiSimulatorImpl, else as one ns-3 MPI message delivered at its arrival.
 */
void
SendHostRecord(const RdmaRemoteRecord& r)
{
    Ptr<Node> n = NodeList::GetNode(r.node);
    const Time arrival = TimeStep(r.arrivalTs);
    if (RdmaMpiSimulatorImpl* engine = RdmaMpiSimulatorImpl::Get())
    {
        RdmaRemoteBatchWriter::Append(&engine->Batch(n->GetSystemId(), arrival), r);
        return;
    }
    std::vector<uint8_t> b;
    RdmaRemoteBatchWriter::Append(&b, r);
    MpiInterface::SendPacket(Create<Packet>(b.data(), static_cast<uint32_t>(b.size())),
                             arrival,
                             r.node,
                             n->GetDevice(0)->GetIfIndex());
}
} // namespace

Ptr<Packet>
RdmaRemoteEncodeFrame(const RdmaRemoteFrame& m)
{
    std::vector<uint8_t> b;
    b.reserve(192);
    b.push_back(static_cast<uint8_t>(RdmaRemoteKind::FRAME));
    RdmaRemoteBatchWriter::AppendFrame(&b, m);
    return Create<Packet>(b.data(), static_cast<uint32_t>(b.size()));
}

RdmaRemoteFrame
RdmaRemoteDecodeFrame(Ptr<const Packet> p)
{
    std::vector<uint8_t> b(p->GetSize());
    p->CopyData(b.data(), b.size());
    NS_ABORT_MSG_IF(b.empty(), "RdmaRemote: an empty FRAME message");
    RdmaRemoteBatchReader reader(b.data() + 1, b.size() - 1); // after the kind
    return reader.ReadWholeFrame();
}

void
RdmaRemoteAttach(Ptr<RdmaNetDevice> dev)
{
    if (dev->GetObject<MpiReceiver>())
    {
        return;
    }
    Ptr<MpiReceiver> rx = CreateObject<MpiReceiver>();
    rx->SetReceiveCallback(MakeBoundCallback(&Dispatch, dev));
    dev->AggregateObject(rx);
}

void
RdmaRemoteNoteDelay(Time d)
{
    g_minRemoteDelay = Min(g_minRemoteDelay, d);
    RdmaMpiSimulatorImpl::BoundLookahead(d);
    static bool registered = false;
    if (!registered)
    {
        registered = true;
        RdmaMpiSimulatorImpl::SetBatchReceiver(MakeCallback(&ReceiveBatch));
    }
}

void
RdmaRemoteSendFrame(Ptr<RdmaNetDevice> dst, const RdmaRemoteFrame& m, Time arrival)
{
    ++g_counts.frames;
    Ptr<Node> node = dst->GetNode();
    if (RdmaMpiSimulatorImpl* engine = RdmaMpiSimulatorImpl::Get())
    {
        RdmaRemoteRecord r;
        r.kind = RdmaRemoteKind::FRAME;
        r.arrivalTs = arrival.GetTimeStep();
        r.node = node->GetId();
        r.ifIndex = dst->GetIfIndex();
        r.frame = m;
        RdmaRemoteBatchWriter::Append(&engine->Batch(node->GetSystemId(), arrival), r);
        return;
    }
    MpiInterface::SendPacket(RdmaRemoteEncodeFrame(m), arrival, node->GetId(), dst->GetIfIndex());
}

void
RdmaRemoteSendExpectFlow(uint32_t node, uint32_t sip, uint16_t qpn, uint32_t flowId, uint64_t size)
{
    NS_ABORT_MSG_IF(g_minRemoteDelay == Time::Max(),
                    "RdmaRemote: a flow to another rank but no remote link");
    ++g_counts.expectFlows;
    RdmaRemoteRecord r;
    r.kind = RdmaRemoteKind::EXPECT_FLOW;
    r.arrivalTs = (Simulator::Now() + g_minRemoteDelay + NanoSeconds(1)).GetTimeStep();
    r.node = node;
    r.sip = sip;
    r.qpn = qpn;
    r.flowId = flowId;
    r.size = size;
    SendHostRecord(r);
}

void
RdmaRemoteSendReleaseRx(uint32_t node, uint32_t sip, uint16_t qpn, Time delay)
{
    NS_ABORT_MSG_IF(delay <= g_minRemoteDelay,
                    "RdmaRemote: ReceiverReleaseDelay " << delay.As(Time::NS) << " must exceed the "
                    "smallest delay of a link between ranks, " << g_minRemoteDelay.As(Time::NS));
    ++g_counts.releases;
    RdmaRemoteRecord r;
    r.kind = RdmaRemoteKind::RELEASE_RX;
    r.arrivalTs = (Simulator::Now() + delay).GetTimeStep();
    r.node = node;
    r.sip = sip;
    r.qpn = qpn;
    r.hasKey = RdmaWheelScheduler::TakeTieKey(&r.key);
    SendHostRecord(r);
}

RdmaRemoteCounts
RdmaRemoteGetCounts()
{
    return g_counts;
}

} // namespace ns3

#endif // NS3_MPI
