/*
 * rdma-lb: RdmaLossRecovery, and the steps the RoCE schemes share
 * (RdmaRoceRecovery): the reference's RdmaHw sender and receiver around the scheme's own rules
 * (doc/rdma-lb.rst, "NIC").
 */
#include "rdma-recovery.h"

#include "rdma-header.h"
#include "rdma-net-device.h"
#include "rdma-time.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaLossRecovery");

NS_OBJECT_ENSURE_REGISTERED(RdmaLossRecovery);
NS_OBJECT_ENSURE_REGISTERED(RdmaRoceRecovery);

TypeId
RdmaLossRecovery::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaLossRecovery").SetParent<Object>().SetGroupName("RdmaLb");
    return tid;
}

RdmaLossRecovery::RdmaLossRecovery() = default;

RdmaLossRecovery::~RdmaLossRecovery() = default;

void
RdmaLossRecovery::Setup(RdmaRecoveryHost& host)
{
    m_host = &host;
}

TypeId
RdmaRoceRecovery::GetTypeId()
{
    // Defaults: the table of transport parameters' (RdmaTransportDefault).
    static TypeId tid =
        TypeId("ns3::RdmaRoceRecovery")
            .SetParent<RdmaLossRecovery>()
            .SetGroupName("RdmaLb")
            .AddAttribute("NackInterval",
                          "NACK generation interval (NACKGenerationInterval): no second NACK "
                          "for the same expected byte within it (GBN, IRN)",
                          *RdmaTransportDefault("ns3::RdmaRoceRecovery", "NackInterval"),
                          MakeTimeAccessor(&RdmaRoceRecovery::m_nackInterval),
                          MakeTimeChecker())
            .AddAttribute("L2Timeout",
                          "Retransmission timeout of Go-Back-N and NIC-SR (L2Timeout)",
                          *RdmaTransportDefault("ns3::RdmaRoceRecovery", "L2Timeout"),
                          MakeTimeAccessor(&RdmaRoceRecovery::m_l2Timeout),
                          MakeTimeChecker())
            .AddAttribute("NackCarriesCnp",
                          "Reference quirk: an out-of-order NACK always "
                          "carries the CNP flag (rate cut). false = only ECN-marked packets "
                          "(GBN, IRN)",
                          *RdmaTransportDefault("ns3::RdmaRoceRecovery", "NackCarriesCnp"),
                          MakeBooleanAccessor(&RdmaRoceRecovery::m_nackCarriesCnp),
                          MakeBooleanChecker());
    return tid;
}

// ---- Sender ---------------------------------------------------------------------------------

bool
RdmaRoceRecovery::HasDataAndRoom(const RdmaQueuePair& qp) const
{
    bool hasData = qp.sndNxt < qp.size || !qp.srRetx.empty();
    if (!hasData)
    {
        return false;
    }
    if (m_host->Device(qp)->IsPaused(qp.pg))
    {
        return false; // a paused priority group is not scheduled; the resume kicks the port
    }
    if (Settings().m_window != 0 && qp.sndNxt >= qp.sndUna + m_host->Window(qp))
    {
        return false; // window-bound (HAS_WIN): an ACK will kick the port
    }
    return true;
}

RdmaFramePtr
RdmaRoceRecovery::SendData(RdmaQueuePair& qp, Time now, bool everyArrivalAnswered)
{
    const uint32_t payloadBytes = Settings().m_payloadBytes;
    bool fromSr = !qp.srRetx.empty();
    uint64_t seq = fromSr ? *qp.srRetx.begin() : qp.sndNxt;
    uint32_t payload = static_cast<uint32_t>(std::min<uint64_t>(payloadBytes, qp.size - seq));
    LbSendContext cx;
    cx.now = now;
    cx.psn = static_cast<uint32_t>(seq / payloadBytes);
    cx.retransmission = seq < qp.highSent;
    cx.inflightPkts = static_cast<uint32_t>(
        (qp.highSent - std::min(qp.highSent, qp.sndUna) + payloadBytes - 1) / payloadBytes);
    cx.everyArrivalAnswered = everyArrivalAnswered;
    RdmaHeader h = m_host->DataHeader(qp, seq, cx);
    h.intMode = m_host->DataIntMode();
    RdmaFramePtr f = RdmaFrame::Make(h, payload + Settings().RoceHeaderPad());
    qp.lastPktSize = f->sizeBytes;
    m_host->NotifyDataSent(qp.flowId, h.seq, h.sport);
    if (fromSr)
    {
        qp.srRetx.erase(qp.srRetx.begin());
    }
    else
    {
        qp.sndNxt += payload;
    }
    m_host->RecordDataSent(qp, seq, payload, f->sizeBytes, h.sport, cx.retransmission);
    DataRate pace = Settings().m_rateBound ? DataRate(qp.rate) : m_host->Device(qp)->GetDataRate();
    qp.nextAvail = now + RdmaTxTime(pace, f->sizeBytes, Settings().TxArithmetic());
    return f;
}

void
RdmaRoceRecovery::ArmRtoIn(RdmaQueuePair& qp, Time rto)
{
    Time now = Simulator::Now();
    qp.rtoDeadline = now + rto;
    // One event per queue pair; it re-checks the (lazily moved) deadline when it fires.
    if (!qp.rtoEvent.pending ||
        qp.rtoEvent.GetTs() > static_cast<uint64_t>(qp.rtoDeadline.GetTimeStep()))
    {
        qp.rtoEvent.Cancel();
        qp.rtoEvent.Schedule(rto, &RdmaRoceRecovery::RtoCheck, this, qp.qpn);
    }
}

void
RdmaRoceRecovery::RtoCheck(uint16_t qpn)
{
    auto it = m_host->QueuePairs().find(qpn);
    if (it == m_host->QueuePairs().end())
    {
        return;
    }
    RdmaQueuePair& qp = it->second;
    qp.rtoEvent.Fired();
    Time now = Simulator::Now();
    if (now < qp.rtoDeadline)
    {
        qp.rtoEvent.Schedule(qp.rtoDeadline - now, &RdmaRoceRecovery::RtoCheck, this, qpn);
        return;
    }
    qp.rtoDeadline = Time::Max();
    if (qp.highSent <= qp.sndUna)
    {
        return; // nothing outstanding
    }
    ++qp.rec.timeouts;
    NS_LOG_LOGIC("flow " << qp.flowId << " timeout at una " << qp.sndUna);
    LbFeedback fb;
    fb.kind = LbFeedbackKind::TIMEOUT;
    fb.now = now;
    // The timeout is about the oldest unacknowledged packet (the one whose loss stalls the
    // queue pair), not the last one sent: its path is the one to blame.
    fb.entropy = m_host->SentEntropy(qp, qp.sndUna);
    fb.psn = static_cast<uint32_t>(qp.sndUna / Settings().m_payloadBytes);
    m_host->LbFeedbackAndProbes(qp, fb);
    OnTimeout(qp);
    qp.srRetx.clear();
    qp.sndNxt = qp.sndUna;
    m_host->ArmLbTimer(qp);
    m_host->Device(qp)->TriggerTransmit();
}

void
RdmaRoceRecovery::OnTimeout(RdmaQueuePair& /*qp*/)
{
}

// ---- Sender: ACK/NACK -----------------------------------------------------------------------

void
RdmaRoceRecovery::AckFeedback(RdmaQueuePair& qp, const RdmaHeader& h, bool nack, bool sacksAnswered)
{
    // To the load balancer, feedback is about the answered packet (its entropy, RTT and ECN
    // echo).
    LbFeedback fb;
    fb.kind = (nack && !sacksAnswered) ? LbFeedbackKind::NACK : LbFeedbackKind::ACK;
    fb.now = Simulator::Now();
    fb.entropy = h.dport;
    fb.psn = h.echoSeq / Settings().m_payloadBytes;
    fb.rtt = Simulator::Now() - NanoSeconds(static_cast<int64_t>(h.tsNs));
    fb.hasRtt = true;
    // The load balancer learns whether *this* packet was marked (the ECN echo), not the CNP
    // flag, which an out-of-order NACK also carries (NackCarriesCnp) for the early packet.
    fb.ecn = (h.flags & RdmaRecoveryHost::FLAG_ECN_ECHO) != 0;
    m_host->LbFeedbackAndProbes(qp, fb);
    if (nack)
    {
        ++qp.rec.nacksRx;
    }
    qp.sndUna = std::max<uint64_t>(qp.sndUna, h.seq);
    qp.highestAck = std::max<uint64_t>(qp.highestAck, h.seq);
}

bool
RdmaRoceRecovery::RestartsTimer(const RdmaQueuePair& qp, bool referenceRule)
{
    return referenceRule ? qp.sndNxt > qp.sndUna : qp.highSent > qp.sndUna;
}

bool
RdmaRoceRecovery::AckCompletes(QpIterator it, const RdmaHeader& h, bool congestion)
{
    RdmaQueuePair& qp = it->second;
    const bool cnp = (h.flags & RdmaHeader::FLAG_CNP) != 0;
    if (cnp)
    {
        ++qp.rec.cnpsRx;
    }
    if (cnp || congestion)
    {
        m_host->CongestionControl().OnCnp(qp);
    }
    if (qp.sndUna >= qp.size)
    {
        if (Settings().m_pacingWakeupQuirk)
        {
            // Quirk pacing-wakeup: the reference also runs HPCC/TIMELY/DCTCP on the ACK that
            // completes a flow; HPCC's rate change then moves the port's pending wake-up.
            m_host->CongestionControl().OnAck(qp, h);
        }
        const Ptr<RdmaNetDevice> dev = m_host->Device(qp); // qp is gone after Complete
        m_host->Complete(it);
        if (Settings().m_eventOrderQuirk)
        {
            dev->TriggerTransmit(); // the reference kicks the port after every ACK
        }
        return true;
    }
    // HPCC, TIMELY, DCTCP (the reference also runs them on the ACK that completes a flow, with
    // no effect on its FCT)
    m_host->CongestionControl().OnAck(qp, h);
    return false;
}

void
RdmaRoceRecovery::FinishAck(QpIterator it, const RdmaHeader& h, bool congestion, bool restartTimer)
{
    RdmaQueuePair& qp = it->second;
    if (AckCompletes(it, h, congestion))
    {
        return;
    }
    if (restartTimer)
    {
        ArmRto(qp);
    }
    m_host->ArmLbTimer(qp);
    m_host->Device(qp)->TriggerTransmit();
}

// ---- Receiver -------------------------------------------------------------------------------

RdmaRoceRecovery::RxState&
RdmaRoceRecovery::Rx(const RdmaHeader& h)
{
    auto [rit, fresh] = m_host->RxStates().try_emplace({h.sip, h.qpn});
    RxState& rx = rit->second;
    if (fresh)
    {
        rx.milestone = uint64_t(Settings().m_ackInterval) * Settings().m_payloadBytes;
    }
    return rx;
}

void
RdmaRoceRecovery::Nack(const RdmaHeader& h,
                       RxState& rx,
                       uint16_t flags,
                       uint64_t sackSeq,
                       uint64_t sackLen)
{
    ++rx.nacksSent;
    m_host->NotifyNackSent(h.sip, h.qpn, static_cast<uint32_t>(rx.expected));
    NS_LOG_LOGIC("NACK to " << h.sip << " qpn " << h.qpn << " E " << rx.expected);
    m_host->SendFeedback(h, rx, RdmaHeader::NACK, flags, sackSeq, sackLen);
}

} // namespace ns3
