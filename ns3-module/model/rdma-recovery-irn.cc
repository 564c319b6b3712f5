/*
 * rdma-lb: RdmaIrn, IRN as the reference's RdmaHw runs it (ENABLE_IRN 1; "Revisiting Network
 * Support for RDMA", SIGCOMM 2018, §3; doc/rdma-lb.rst, "NIC").
 */
#include "rdma-recovery-irn.h"

#include "rdma-header.h"
#include "rdma-net-device.h"

#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaIrn");

Ptr<Packet>
RdmaIrn::NextPacket(Time now)
{
    return m_nic.ServeQueuePairs(*this, now);
}

uint64_t
RdmaIrn::Inflight(const RdmaQueuePair& qp) const
{
    if (m_nic.m_irnReferenceSender)
    {
        // Quirk irn-sender: start of the highest packet sent minus the highest cumulative ACK,
        // in the reference's 32 bits (it wraps when that ACK is beyond the highest start).
        return static_cast<uint32_t>(qp.maxSentSeq - qp.highestAck);
    }
    return qp.maxSentSeq > qp.sndUna ? qp.maxSentSeq - qp.sndUna : 0;
}

bool
RdmaIrn::Eligible(RdmaQueuePair& qp, Time now, Time* wake)
{
    if (m_nic.m_irnReferenceSender)
    {
        // Quirk irn-sender: jump over the first SACKed block when the next byte is its start,
        // and forget the blocks below the new next byte.
        while (!qp.sack.empty() && qp.sack.begin()->first == qp.sndNxt)
        {
            qp.sndNxt = qp.sack.begin()->second;
            qp.sack.erase(qp.sack.begin());
        }
        while (!qp.sack.empty() && qp.sack.begin()->second <= qp.sndNxt)
        {
            qp.sack.erase(qp.sack.begin());
        }
    }
    else
    {
        // Skip what the receiver already holds. The blocks are single packets, so disjoint:
        // of those starting at or before sndNxt only the last can reach past it (a scan from
        // the first block cost O(blocks) per packet sent under spraying).
        auto b = qp.sack.upper_bound(qp.sndNxt);
        if (b != qp.sack.begin() && std::prev(b)->second > qp.sndNxt)
        {
            qp.sndNxt = std::prev(b)->second;
        }
        for (; b != qp.sack.end() && b->first <= qp.sndNxt; ++b)
        {
            qp.sndNxt = std::max(qp.sndNxt, b->second);
        }
    }
    if (!HasDataAndRoom(qp))
    {
        return false;
    }
    if (qp.srRetx.empty())
    {
        uint64_t inflight = Inflight(qp);
        uint64_t next = std::min<uint64_t>(m_nic.m_payloadBytes, qp.size - qp.sndNxt);
        if (!(inflight + next < m_nic.m_irnBdp || qp.sndUna + m_nic.m_irnBdp > qp.sndNxt))
        {
            return false; // an ACK will kick the port
        }
    }
    return m_nic.TimeToSend(qp, now, wake);
}

Ptr<Packet>
RdmaIrn::Send(RdmaQueuePair& qp, Time now)
{
    Ptr<Packet> p = SendData(qp, now, true);
    ArmRto(qp);
    m_nic.ArmLbTimer(qp);
    return p;
}

void
RdmaIrn::ArmRto(RdmaQueuePair& qp)
{
    if (m_nic.m_lossless && !m_nic.m_irnRtoWithPfc)
    {
        return; // with PFC on, the reference ignores IRN timeouts
    }
    ArmRtoIn(qp,
             Inflight(qp) > 3ULL * m_nic.m_payloadBytes ? m_nic.m_irnRtoHigh : m_nic.m_irnRtoLow);
}

void
RdmaIrn::OnTimeout(RdmaQueuePair& qp)
{
    if (m_nic.m_irnReferenceSender)
    {
        qp.irnRecovery = true; // quirk irn-sender: the recovery end is left as it was
    }
    else if (!qp.irnRecovery)
    {
        qp.irnRecovery = true;
        qp.irnRecoverySeq = qp.sndNxt;
    }
}

void
RdmaIrn::ReceiveData(const RdmaHeader& h, Ptr<Packet> p)
{
    RxState& rx = Rx(h);
    const uint64_t s = h.seq;
    const uint64_t len = p->GetSize();
    const uint16_t ecnFlag = (h.ecn != 0) ? RdmaHeader::FLAG_CNP : 0;
    const uint16_t oooFlag = m_nic.m_nackCarriesCnp ? RdmaHeader::FLAG_CNP : 0;
    Time now = Simulator::Now();
    if (s <= rx.expected && rx.expected < s + len)
    {
        rx.expected = s + len;
        while (!rx.ooo.empty() && rx.ooo.begin()->first <= rx.expected)
        {
            rx.expected = std::max(rx.expected, rx.ooo.begin()->second);
            rx.ooo.erase(rx.ooo.begin());
        }
        m_nic.CheckDelivered(rx, h.sip);
        if (rx.ooo.empty())
        {
            m_nic.SendFeedback(h, rx, RdmaHeader::NACK, ecnFlag, 0, 0); // "ACK-like NACK"
        }
        else
        {
            m_nic.SendFeedback(h, rx, RdmaHeader::NACK, ecnFlag, s, len);
        }
    }
    else if (s > rx.expected)
    {
        bool sacked = rx.ooo.count(s) != 0;
        if (sacked && now < rx.nackDeadline)
        {
            return;
        }
        rx.nackDeadline = now + m_nic.m_nackInterval;
        rx.ooo[s] = s + len;
        Nack(h, rx, ecnFlag | oooFlag, s, len);
    }
    else
    {
        m_nic.SendFeedback(h, rx, RdmaHeader::NACK, ecnFlag, rx.ooo.empty() ? 0 : s,
                           rx.ooo.empty() ? 0 : len);
    }
}

void
RdmaIrn::ReceiveAck(QpIterator it, const RdmaHeader& h)
{
    RdmaQueuePair& qp = it->second;
    // A NACK without a SACK block is an "ACK-like NACK". One that SACKs the answered packet
    // itself says that packet arrived: a selective acknowledgement of its path (the gap it
    // reports is about another packet, whose path the feedback does not name), so the load
    // balancer sees it as an ACK.
    const bool isNack = h.type == RdmaHeader::NACK && h.sackLen != 0;
    const bool sacksAnswered = h.sackLen != 0 && h.sackSeq == h.echoSeq;
    AckFeedback(qp, h, isNack, sacksAnswered);

    // The go-back this feedback asks for: a SACK while not in recovery.
    bool goBack = false;
    if (h.sackLen != 0)
    {
        uint64_t b = h.sackSeq;
        uint64_t e = b + h.sackLen;
        auto [bit, fresh] = qp.sack.emplace(b, e);
        if (!fresh)
        {
            bit->second = std::max(bit->second, e);
        }
    }
    while (!qp.sack.empty() && qp.sack.begin()->first <= qp.sndUna)
    {
        qp.sndUna = std::max(qp.sndUna, qp.sack.begin()->second);
        qp.sack.erase(qp.sack.begin());
    }
    if (qp.irnRecovery && qp.sndUna >= qp.irnRecoverySeq)
    {
        qp.irnRecovery = false;
    }
    if (h.sackLen != 0)
    {
        uint64_t sackedEnd = qp.sack.empty() ? 0 : qp.sack.rbegin()->second;
        const uint64_t threshold = uint64_t(m_nic.m_irnOooThreshold) * m_nic.m_payloadBytes;
        bool beyond = sackedEnd > qp.sndUna && sackedEnd - qp.sndUna > threshold;
        // The reference goes back on any SACK (quirk irn-sender); ours only when SACKed
        // data lies beyond the hole (and IrnOooThreshold packets past it).
        bool any = m_nic.m_irnReferenceSender && m_nic.m_irnOooThreshold == 0;
        goBack = !qp.irnRecovery && (beyond || any);
    }
    else
    {
        qp.irnRecovery = false;
    }
    qp.sndNxt = std::max(qp.sndNxt, qp.sndUna);
    // Quirk irn-sender: the reference restarts the timer before it goes back, and only while
    // sent-but-unacknowledged bytes remain (snd_nxt > snd_una); ours after, while any byte
    // sent is unacknowledged.
    const bool restartTimer = RestartsTimer(qp, m_nic.m_irnReferenceSender);
    if (goBack)
    {
        qp.irnRecoverySeq = qp.sndNxt;
        qp.irnRecovery = true;
        qp.sndNxt = qp.sndUna;
    }
    FinishAck(it, h, false, restartTimer);
}

} // namespace ns3
