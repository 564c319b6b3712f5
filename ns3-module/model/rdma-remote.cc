/*
 * rdma-lb: messages between MPI ranks (see the header).
 */
#include "rdma-remote.h"

#ifdef NS3_MPI

#include "rdma-channel.h"
#include "rdma-net-device.h"
#include "rdma-nic.h"

#include "ns3/abort.h"
#include "ns3/mpi-interface.h"
#include "ns3/mpi-receiver.h"
#include "ns3/node-list.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <cstring>
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
    }
    NS_ABORT_MSG("RdmaRemote: a message of unknown kind " << unsigned(kind));
}
} // namespace

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
}

void
RdmaRemoteSendExpectFlow(uint32_t node, uint32_t sip, uint16_t qpn, uint32_t flowId, uint64_t size)
{
    NS_ABORT_MSG_IF(g_minRemoteDelay == Time::Max(),
                    "RdmaRemote: a flow to another rank but no remote link");
    uint8_t b[1 + 4 + 2 + 4 + 8];
    b[0] = static_cast<uint8_t>(RdmaRemoteKind::EXPECT_FLOW);
    std::memcpy(b + 1, &sip, 4);
    std::memcpy(b + 5, &qpn, 2);
    std::memcpy(b + 7, &flowId, 4);
    std::memcpy(b + 11, &size, 8);
    Ptr<Node> n = NodeList::GetNode(node);
    MpiInterface::SendPacket(Create<Packet>(b, sizeof(b)),
                             Simulator::Now() + g_minRemoteDelay + NanoSeconds(1),
                             node,
                             n->GetDevice(0)->GetIfIndex());
}

} // namespace ns3

#endif // NS3_MPI
