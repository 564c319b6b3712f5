/*
 * rdma-lb: RdmaGoBackN, Go-Back-N as the reference's RdmaHw runs it (ENABLE_IRN 0;
 * doc/rdma-lb.rst, "NIC").
 */
#include "rdma-recovery-gbn.h"

#include "rdma-header.h"
#include "rdma-net-device.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaGoBackN");
NS_OBJECT_ENSURE_REGISTERED(RdmaGoBackN);

TypeId
RdmaGoBackN::GetTypeId()
{
    // Defaults: the table of transport parameters' (RdmaTransportDefault).
    static TypeId tid =
        TypeId("ns3::RdmaGoBackN")
            .SetParent<RdmaRoceRecovery>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaGoBackN>()
            .AddAttribute("L2ChunkSize",
                          "An ACK is also sent when the expected byte is a multiple of this "
                          "(L2_CHUNK_SIZE, bytes; 0 = off)",
                          *RdmaTransportDefault("ns3::RdmaGoBackN", "L2ChunkSize"),
                          MakeUintegerAccessor(&RdmaGoBackN::m_chunkSize),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("AckMilestoneFix",
                          "Fix of the milestone quirk (every in-order packet ACKed): ACK once per "
                          "L2AckInterval packets instead of every packet",
                          *RdmaTransportDefault("ns3::RdmaGoBackN", "AckMilestoneFix"),
                          MakeBooleanAccessor(&RdmaGoBackN::m_ackMilestoneFix),
                          MakeBooleanChecker());
    return tid;
}

RdmaFramePtr
RdmaGoBackN::NextPacket(Time now)
{
    return m_host->ServeQueuePairs(*this, now);
}

bool
RdmaGoBackN::Eligible(RdmaQueuePair& qp, Time now, Time* wake)
{
    return HasDataAndRoom(qp) && m_host->TimeToSend(qp, now, wake);
}

RdmaFramePtr
RdmaGoBackN::Send(RdmaQueuePair& qp, Time now)
{
    RdmaFramePtr f = SendData(qp, now, false);
    ArmRto(qp);
    m_host->ArmLbTimer(qp);
    return f;
}

void
RdmaGoBackN::ArmRto(RdmaQueuePair& qp)
{
    ArmRtoIn(qp, m_l2Timeout);
}

void
RdmaGoBackN::ReceiveData(const RdmaHeader& h, uint32_t payloadBytes)
{
    RxState& rx = Rx(h);
    const uint64_t s = h.seq;
    const uint64_t len = payloadBytes - Settings().RoceHeaderPad();
    const uint16_t ecnFlag = (h.ecn != 0) ? RdmaHeader::FLAG_CNP : 0;
    const uint16_t oooFlag = m_nackCarriesCnp ? RdmaHeader::FLAG_CNP : 0;
    Time now = Simulator::Now();
    if (s <= rx.expected && rx.expected <= s + len)
    {
        rx.expected = s + len;
        m_host->CheckDelivered(rx, h.sip);
        bool ack;
        if (m_ackMilestoneFix)
        {
            ack = rx.expected >= rx.milestone;
        }
        else
        {
            ack = rx.expected >= Settings().m_ackInterval; // the milestone is reset every packet
        }
        ack = ack || (m_chunkSize != 0 && rx.expected % m_chunkSize == 0);
        if (!ack)
        {
            return;
        }
        rx.milestone = rx.expected + uint64_t(Settings().m_ackInterval) * Settings().m_payloadBytes;
        m_host->SendFeedback(h, rx, RdmaHeader::ACK, ecnFlag, 0, 0);
    }
    else if (s > rx.expected)
    {
        if (now >= rx.nackDeadline || rx.expected != rx.lastNacked)
        {
            rx.nackDeadline = now + m_nackInterval;
            rx.lastNacked = rx.expected;
            Nack(h, rx, ecnFlag | oooFlag, 0, 0);
        }
    }
    else
    {
        m_host->SendFeedback(h, rx, RdmaHeader::ACK, ecnFlag, 0, 0); // duplicate
    }
}

void
RdmaGoBackN::ReceiveAck(QpIterator it, const RdmaHeader& h)
{
    RdmaQueuePair& qp = it->second;
    const bool isNack = h.type == RdmaHeader::NACK;
    AckFeedback(qp, h, isNack, false);
    qp.sndNxt = std::max(qp.sndNxt, qp.sndUna);
    // Quirk irn-sender: the reference restarts the timer before it goes back, and only while
    // sent-but-unacknowledged bytes remain (snd_nxt > snd_una); ours after, while any byte
    // sent is unacknowledged.
    const bool restartTimer = RestartsTimer(qp, Settings().m_irnReferenceSender);
    if (isNack)
    {
        qp.sndNxt = qp.sndUna; // go back
    }
    FinishAck(it, h, false, restartTimer);
}

} // namespace ns3
