/*
 * rdma-lb: RdmaNicSr, the selective repeat of commodity RNICs ("Enabling Packet Spraying over
 * Commodity RNICs with In-Network Support", §2.2; doc/rdma-lb.rst, "NIC").
 */
#include "rdma-recovery-nicsr.h"

#include "rdma-header.h"
#include "rdma-net-device.h"

#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaNicSr");
NS_OBJECT_ENSURE_REGISTERED(RdmaNicSr);

TypeId
RdmaNicSr::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaNicSr")
                            .SetParent<RdmaRoceRecovery>()
                            .SetGroupName("RdmaLb")
                            .AddConstructor<RdmaNicSr>();
    return tid;
}

RdmaFramePtr
RdmaNicSr::NextPacket(Time now)
{
    return m_host->ServeQueuePairs(*this, now);
}

bool
RdmaNicSr::Eligible(RdmaQueuePair& qp, Time now, Time* wake)
{
    while (!qp.srRetx.empty() && *qp.srRetx.begin() < qp.sndUna)
    {
        qp.srRetx.erase(qp.srRetx.begin());
    }
    return HasDataAndRoom(qp) && m_host->TimeToSend(qp, now, wake);
}

RdmaFramePtr
RdmaNicSr::Send(RdmaQueuePair& qp, Time now)
{
    RdmaFramePtr f = SendData(qp, now, false);
    ArmRto(qp);
    m_host->ArmLbTimer(qp);
    return f;
}

void
RdmaNicSr::ArmRto(RdmaQueuePair& qp)
{
    ArmRtoIn(qp, m_l2Timeout);
}

void
RdmaNicSr::ReceiveData(const RdmaHeader& h, uint32_t payloadBytes)
{
    RxState& rx = Rx(h);
    const uint64_t s = h.seq;
    const uint64_t len = payloadBytes - Settings().RoceHeaderPad();
    const uint16_t ecnFlag = (h.ecn != 0) ? RdmaHeader::FLAG_CNP : 0;
    if (s == rx.expected)
    {
        rx.expected = s + len;
        while (!rx.ooo.empty() && rx.ooo.begin()->first <= rx.expected)
        {
            rx.expected = std::max(rx.expected, rx.ooo.begin()->second);
            rx.ooo.erase(rx.ooo.begin());
        }
        m_host->CheckDelivered(rx, h.sip);
        m_host->SendFeedback(h, rx, RdmaHeader::ACK, ecnFlag, 0, 0);
    }
    else if (s > rx.expected)
    {
        rx.ooo[s] = s + len; // the bitmap
        if (rx.lastNacked != rx.expected)
        {
            // The first out-of-order arrival for this ePSN: one NACK, carrying only E.
            rx.lastNacked = rx.expected;
            Nack(h, rx, ecnFlag, 0, 0);
        }
        else if (ecnFlag)
        {
            m_host->SendFeedback(h, rx, RdmaHeader::ACK, ecnFlag, 0, 0);
        }
    }
    else
    {
        m_host->SendFeedback(h, rx, RdmaHeader::ACK, ecnFlag, 0, 0);
    }
}

void
RdmaNicSr::ReceiveAck(QpIterator it, const RdmaHeader& h)
{
    RdmaQueuePair& qp = it->second;
    const bool isNack = h.type == RdmaHeader::NACK;
    AckFeedback(qp, h, isNack, false);
    if (isNack && h.seq < qp.size && h.seq < qp.highSent)
    {
        qp.srRetx.insert(h.seq); // resend only the expected packet
    }
    qp.sndNxt = std::max(qp.sndNxt, qp.sndUna);
    const bool restartTimer = RestartsTimer(qp, false);
    FinishAck(it, h, isNack, restartTimer); // a NACK is also a congestion signal
}

} // namespace ns3
