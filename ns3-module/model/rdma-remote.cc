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

/// An incoming message for \p dev: dispatched on its first byte.
void
Dispatch(Ptr<RdmaNetDevice> dev, Ptr<Packet> p)
{
    uint8_t kind = 0xff;
    p->CopyData(&kind, 1);
    switch (static_cast<RdmaRemoteKind>(kind))
    {
    case RdmaRemoteKind::FRAME:
        dev->GetRdmaChannel()->ReceiveRemote(dev, p);
        return;
    case RdmaRemoteKind::EXPECT_FLOW: {
        uint8_t b[1 + 4 + 2 + 4 + 8];
        NS_ABORT_MSG_IF(p->GetSize() != sizeof(b), "RdmaRemote: EXPECT_FLOW of " << p->GetSize() << " B");
        p->CopyData(b, sizeof(b));
        uint32_t sip;
        uint16_t qpn;
        uint32_t flowId;
        uint64_t size;
        std::memcpy(&sip, b + 1, 4);
        std::memcpy(&qpn, b + 5, 2);
        std::memcpy(&flowId, b + 7, 4);
        std::memcpy(&size, b + 11, 8);
        Ptr<RdmaNic> nic = dev->GetNode()->GetObject<RdmaNic>();
        NS_ABORT_MSG_IF(!nic, "RdmaRemote: EXPECT_FLOW for node " << dev->GetNode()->GetId()
                                                                   << ", not a host");
        nic->ExpectFlow(sip, qpn, flowId, size);
        return;
    }
    case RdmaRemoteKind::RELEASE_RX: {
        uint8_t b[1 + 4 + 2 + 1 + 8 + 4 + 8];
        NS_ABORT_MSG_IF(p->GetSize() != sizeof(b), "RdmaRemote: RELEASE_RX of " << p->GetSize() << " B");
        p->CopyData(b, sizeof(b));
        uint32_t sip;
        uint16_t qpn;
        RdmaWheelScheduler::TieKey key;
        std::memcpy(&sip, b + 1, 4);
        std::memcpy(&qpn, b + 5, 2);
        std::memcpy(&key.schedTs, b + 8, 8);
        std::memcpy(&key.schedCtx, b + 16, 4);
        std::memcpy(&key.seq, b + 20, 8);
        Ptr<RdmaNic> nic = dev->GetNode()->GetObject<RdmaNic>();
        NS_ABORT_MSG_IF(!nic, "RdmaRemote: RELEASE_RX for a node that is not a host");
        if (b[7] != 0)
        {
            RdmaWheelScheduler::SetNextTieKey(key);
        }
        Simulator::ScheduleWithContext(dev->GetNode()->GetId(), Time(0), &RdmaNic::ReleaseRx, nic, sip, qpn);
        return;
    }
    }
    NS_ABORT_MSG("RdmaRemote: a message of unknown kind " << unsigned(kind));
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
        case RdmaRemoteKind::EXPECT_FLOW: {
            // Only state for the flow's first packet, which comes later (in a later batch or
            // after this record in this one, delivered at its own arrival): set at once.
            Ptr<RdmaNic> nic = node->GetObject<RdmaNic>();
            NS_ABORT_MSG_IF(!nic, "RdmaRemote: EXPECT_FLOW for node " << r.node << ", not a host");
            nic->ExpectFlow(r.sip, r.qpn, r.flowId, r.size);
            break;
        }
        case RdmaRemoteKind::RELEASE_RX: {
            Ptr<RdmaNic> nic = node->GetObject<RdmaNic>();
            NS_ABORT_MSG_IF(!nic, "RdmaRemote: RELEASE_RX for a node that is not a host");
            if (r.hasKey)
            {
                RdmaWheelScheduler::SetNextTieKey(r.key);
            }
            Simulator::ScheduleWithContext(r.node,
                                           arrival - Simulator::Now(),
                                           &RdmaNic::ReleaseRx,
                                           nic,
                                           r.sip,
                                           r.qpn);
            break;
        }
        }
    }
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
    const Time arrival = Simulator::Now() + g_minRemoteDelay + NanoSeconds(1);
    Ptr<Node> n = NodeList::GetNode(node);
    if (RdmaMpiSimulatorImpl* engine = RdmaMpiSimulatorImpl::Get())
    {
        RdmaRemoteRecord r;
        r.kind = RdmaRemoteKind::EXPECT_FLOW;
        r.arrivalTs = arrival.GetTimeStep();
        r.node = node;
        r.sip = sip;
        r.qpn = qpn;
        r.flowId = flowId;
        r.size = size;
        RdmaRemoteBatchWriter::Append(&engine->Batch(n->GetSystemId(), arrival), r);
        return;
    }
    uint8_t b[1 + 4 + 2 + 4 + 8];
    b[0] = static_cast<uint8_t>(RdmaRemoteKind::EXPECT_FLOW);
    std::memcpy(b + 1, &sip, 4);
    std::memcpy(b + 5, &qpn, 2);
    std::memcpy(b + 7, &flowId, 4);
    std::memcpy(b + 11, &size, 8);
    MpiInterface::SendPacket(Create<Packet>(b, sizeof(b)),
                             arrival,
                             node,
                             n->GetDevice(0)->GetIfIndex());
}

void
RdmaRemoteSendReleaseRx(uint32_t node, uint32_t sip, uint16_t qpn, Time delay)
{
    NS_ABORT_MSG_IF(delay <= g_minRemoteDelay,
                    "RdmaRemote: ReceiverReleaseDelay " << delay.As(Time::NS) << " must exceed the "
                    "smallest delay of a link between ranks, " << g_minRemoteDelay.As(Time::NS));
    ++g_counts.releases;
    RdmaWheelScheduler::TieKey key;
    const bool hasKey = RdmaWheelScheduler::TakeTieKey(&key);
    const Time arrival = Simulator::Now() + delay;
    Ptr<Node> n = NodeList::GetNode(node);
    if (RdmaMpiSimulatorImpl* engine = RdmaMpiSimulatorImpl::Get())
    {
        RdmaRemoteRecord r;
        r.kind = RdmaRemoteKind::RELEASE_RX;
        r.arrivalTs = arrival.GetTimeStep();
        r.node = node;
        r.sip = sip;
        r.qpn = qpn;
        r.hasKey = hasKey;
        r.key = key;
        RdmaRemoteBatchWriter::Append(&engine->Batch(n->GetSystemId(), arrival), r);
        return;
    }
    uint8_t b[1 + 4 + 2 + 1 + 8 + 4 + 8];
    b[0] = static_cast<uint8_t>(RdmaRemoteKind::RELEASE_RX);
    std::memcpy(b + 1, &sip, 4);
    std::memcpy(b + 5, &qpn, 2);
    b[7] = hasKey ? 1 : 0;
    std::memcpy(b + 8, &key.schedTs, 8);
    std::memcpy(b + 16, &key.schedCtx, 4);
    std::memcpy(b + 20, &key.seq, 8);
    MpiInterface::SendPacket(Create<Packet>(b, sizeof(b)),
                             arrival,
                             node,
                             n->GetDevice(0)->GetIfIndex());
}

RdmaRemoteCounts
RdmaRemoteGetCounts()
{
    return g_counts;
}

} // namespace ns3

#endif // NS3_MPI
