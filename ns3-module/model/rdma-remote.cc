/*
 * rdma-lb: messages between MPI ranks (see the header).
 */
#include "rdma-remote.h"

#ifdef NS3_MPI

#include "rdma-channel.h"
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
/**
 * Calls \p visit on every field of a FRAME message, in message order: the one list of them,
 * read by the encoder (\p m const) and by the decoder. A new RdmaHeader field is one line here.
 */
template <typename Frame, typename Visit>
void
ForEachFrameField(Frame& m, Visit&& visit)
{
    visit(m.hasKey);
    visit(m.key.schedTs);
    visit(m.key.schedCtx);
    visit(m.key.seq);
    visit(m.sizeBytes);
    visit(m.lbTag.present);
    visit(m.lbTag.words);
    auto& h = m.header;
    visit(h.type);
    visit(h.sip);
    visit(h.dip);
    visit(h.sport);
    visit(h.dport);
    visit(h.ecn);
    visit(h.pg);
    visit(h.seq);
    visit(h.tsNs);
    visit(h.echoSeq);
    visit(h.flags);
    visit(h.sackSeq);
    visit(h.sackLen);
    visit(h.sackBitmap);
    visit(h.qpn);
    visit(h.pauseUs);
    visit(h.pfcQlen);
    visit(h.pfcClass);
    visit(h.intMode);
    visit(h.intNHop);
    visit(h.intHop);
}

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
} // namespace

Ptr<Packet>
RdmaRemoteEncodeFrame(const RdmaRemoteFrame& m)
{
    // Both ranks run the same binary on the same machine type, as ns-3's own MPI packet path
    // assumes: fields go as their bytes.
    std::vector<uint8_t> b;
    b.reserve(192);
    b.push_back(static_cast<uint8_t>(RdmaRemoteKind::FRAME));
    ForEachFrameField(m, [&b](const auto& v) {
        static_assert(std::is_trivially_copyable<std::decay_t<decltype(v)>>::value,
                      "plain fields only");
        const auto* bytes = reinterpret_cast<const uint8_t*>(&v);
        b.insert(b.end(), bytes, bytes + sizeof(v));
    });
    return Create<Packet>(b.data(), static_cast<uint32_t>(b.size()));
}

RdmaRemoteFrame
RdmaRemoteDecodeFrame(Ptr<const Packet> p)
{
    std::vector<uint8_t> b(p->GetSize());
    p->CopyData(b.data(), b.size());
    RdmaRemoteFrame m;
    size_t pos = 1; // the kind
    ForEachFrameField(m, [&b, &pos](auto& v) {
        NS_ABORT_MSG_IF(pos + sizeof(v) > b.size(),
                        "RdmaRemote: a FRAME message of " << b.size() << " B is too short");
        std::memcpy(&v, b.data() + pos, sizeof(v));
        pos += sizeof(v);
    });
    NS_ABORT_MSG_IF(pos != b.size(),
                    "RdmaRemote: a FRAME message of " << b.size() << " B, decoded " << pos);
    return m;
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

void
RdmaRemoteSendReleaseRx(uint32_t node, uint32_t sip, uint16_t qpn, Time delay)
{
    NS_ABORT_MSG_IF(delay <= g_minRemoteDelay,
                    "RdmaRemote: ReceiverReleaseDelay " << delay.As(Time::NS) << " must exceed the "
                    "smallest delay of a link between ranks, " << g_minRemoteDelay.As(Time::NS));
    RdmaWheelScheduler::TieKey key;
    const bool hasKey = RdmaWheelScheduler::TakeTieKey(&key);
    uint8_t b[1 + 4 + 2 + 1 + 8 + 4 + 8];
    b[0] = static_cast<uint8_t>(RdmaRemoteKind::RELEASE_RX);
    std::memcpy(b + 1, &sip, 4);
    std::memcpy(b + 5, &qpn, 2);
    b[7] = hasKey ? 1 : 0;
    std::memcpy(b + 8, &key.schedTs, 8);
    std::memcpy(b + 16, &key.schedCtx, 4);
    std::memcpy(b + 20, &key.seq, 8);
    Ptr<Node> n = NodeList::GetNode(node);
    MpiInterface::SendPacket(Create<Packet>(b, sizeof(b)),
                             Simulator::Now() + delay,
                             node,
                             n->GetDevice(0)->GetIfIndex());
}

} // namespace ns3

#endif // NS3_MPI
