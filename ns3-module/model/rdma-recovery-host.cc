/*
 * rdma-lb: RdmaRecoveryHost, the queue-pair context of the NIC's loss recovery (see
 * rdma-recovery-host.h; doc/rdma-lb.rst, "NIC"): pacing and the port's wake-up, the data
 * header and its accounting, the load balancer's feedback, probes and timer, the receiver's
 * ACK/NACK and delivery -- the reference's RdmaHw steps both transports share.
 */
#include "rdma-recovery-host.h"

#include "rdma-header.h"
#include "rdma-net-device.h"

#include "ns3/hash.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

RdmaRecoveryHost::RdmaRecoveryHost() = default;

RdmaRecoveryHost::~RdmaRecoveryHost() = default;

// ---- Sender: scheduling and pacing ----------------------------------------------------------

bool
RdmaRecoveryHost::TimeToSend(const RdmaQueuePair& qp, Time now, Time* wake) const
{
    if (qp.nextAvail > now)
    {
        *wake = std::min(*wake, qp.nextAvail);
        return false;
    }
    Time hold = qp.lb->GetSendAfter();
    if (hold > now)
    {
        *wake = std::min(*wake, hold);
        return false;
    }
    return true;
}

uint64_t
RdmaRecoveryHost::Window(const RdmaQueuePair& qp) const
{
    if (!m_varWin)
    {
        return m_window;
    }
    return RdmaVarWindow(m_window, qp.rate, Device(qp)->GetDataRate().GetBitRate());
}

void
RdmaRecoveryHost::ScheduleWake(Time now, Time wake)
{
    const uint8_t port = m_servingPort;
    EventId& wakeEvent = WakeEvent(port);
    if (m_pacingWakeupQuirk)
    {
        ScheduleWakeAsReference(now);
    }
    else if (wake != Time::Max() &&
             (!wakeEvent.IsRunning() ||
              wakeEvent.GetTs() > static_cast<uint64_t>(wake.GetTimeStep())))
    {
        wakeEvent.Cancel();
        wakeEvent = Simulator::Schedule(wake - now, &RdmaRecoveryHost::Wake, this, port);
    }
}

void
RdmaRecoveryHost::ScheduleWakeAsReference(Time now)
{
    // Quirk pacing-wakeup (the reference's NIC scheduling): the earliest future next-send time over
    // every queue pair with bytes left -- paused ones included -- and only if no wake-up is pending
    // (a pending one is never moved earlier). A stalled queue pair then waits for the pending
    // wake-up or the next feedback.
    const uint8_t port = m_servingPort;
    Time t = Time::Max();
    for (const auto& [qpn, qp] : m_qps)
    {
        (void)qpn;
        if (qp.port != port)
        {
            continue; // another port's (a NIC of several ports)
        }
        const Time ready = std::max(qp.nextAvail, qp.lb->GetSendAfter());
        if ((qp.sndNxt < qp.size || !qp.srRetx.empty()) && ready > now)
        {
            t = std::min(t, ready);
        }
    }
    EventId& wakeEvent = WakeEvent(port);
    if (!wakeEvent.IsRunning() && t != Time::Max())
    {
        wakeEvent = Simulator::Schedule(t - now, &RdmaRecoveryHost::Wake, this, port);
    }
}

void
RdmaRecoveryHost::AdvancePendingWake(Time at, uint8_t port)
{
    EventId& wakeEvent = WakeEvent(port);
    if (wakeEvent.IsRunning() && static_cast<uint64_t>(at.GetTimeStep()) < wakeEvent.GetTs())
    {
        const Time now = Simulator::Now();
        wakeEvent.Cancel();
        wakeEvent = Simulator::Schedule(at > now ? at - now : Time(0),
                                        &RdmaRecoveryHost::Wake,
                                        this,
                                        port);
    }
}

void
RdmaRecoveryHost::Wake(uint8_t port)
{
    const Ptr<RdmaNetDevice>& dev = port == 0 ? m_dev : m_ports[port];
    if (dev)
    {
        dev->TriggerTransmit();
    }
}

// ---- A NIC of several ports (SimAI's multi-homed GPU) ---------------------------------------

uint8_t
RdmaRecoveryHost::PortByHash(uint32_t dip, uint16_t sport, uint16_t dport) const
{
    const uint32_t dst = RdmaHostId(dip);
    if (m_ports.size() < 2 || dst >= m_portRoutes.size() || m_portRoutes[dst].empty())
    {
        return 0;
    }
    // SimAI's RdmaQueuePair::GetHash / RdmaRxQueuePair::GetHash: Hash32 over the bytes of
    // {uint32 sip, uint32 dip, uint16 sport, uint16 dport} as laid out in memory on x86
    // (little-endian; 12 bytes, no padding), written out byte by byte here.
    char key[12];
    const uint32_t words[2] = {m_address, dip};
    for (int w = 0; w < 2; ++w)
    {
        for (int b = 0; b < 4; ++b)
        {
            key[4 * w + b] = static_cast<char>((words[w] >> (8 * b)) & 0xff);
        }
    }
    key[8] = static_cast<char>(sport & 0xff);
    key[9] = static_cast<char>(sport >> 8);
    key[10] = static_cast<char>(dport & 0xff);
    key[11] = static_cast<char>(dport >> 8);
    const std::vector<uint8_t>& routes = m_portRoutes[dst];
    return routes[Hash32(key, sizeof(key)) % routes.size()];
}

const Ptr<RdmaNetDevice>&
RdmaRecoveryHost::FeedbackDevice(const RdmaHeader& reply) const
{
    if (m_ports.size() < 2)
    {
        return m_dev;
    }
    // SimAI's receive queue pair: sip = this NIC, dip = the data's sender, sport = the data's
    // dport, dport = the data's sport -- the reply's own fields.
    return m_ports[PortByHash(reply.dip, reply.sport, reply.dport)];
}

// ---- Sender: data packets -------------------------------------------------------------------

RdmaHeader
RdmaRecoveryHost::DataHeader(RdmaQueuePair& qp, uint64_t seq, const LbSendContext& cx)
{
    RdmaHeader h;
    h.type = RdmaHeader::DATA;
    h.sip = m_address;
    h.dip = qp.dip;
    h.sport = qp.lb->NextEntropy(cx);
    h.dport = qp.dport;
    h.qpn = qp.qpn;
    h.pg = static_cast<uint16_t>(qp.pg);
    h.seq = static_cast<uint32_t>(seq);
    h.tsNs = static_cast<uint64_t>(cx.now.GetNanoSeconds());
    return h;
}

void
RdmaRecoveryHost::RecordDataSent(RdmaQueuePair& qp,
                        uint64_t seq,
                        uint32_t payload,
                        uint32_t wireBytes,
                        uint16_t entropy,
                        bool retransmission)
{
    ++qp.rec.dataPkts;
    if (retransmission)
    {
        ++qp.rec.retxPkts;
    }
    if (!retransmission && seq + payload == qp.size)
    {
        // The flow's last byte, sent now in a packet of wireBytes (SimAI's send-finish, which
        // its NVLS uploads wait for): reported with its serialisation's end.
        m_flowSent(qp.flowId, Simulator::Now() + Device(qp)->GetTxTime(wireBytes));
    }
    qp.highSent = std::max(qp.highSent, seq + payload);
    qp.maxSentSeq = std::max(qp.maxSentSeq, seq);
    qp.lastEntropy = entropy;
    qp.sentEntropy[(seq / m_payloadBytes) % RdmaQueuePair::ENTROPY_WINDOW] = entropy;
}

uint16_t
RdmaRecoveryHost::SentEntropy(const RdmaQueuePair& qp, uint64_t seq) const
{
    const uint64_t psn = seq / m_payloadBytes;
    const uint64_t highPsn = (qp.highSent + m_payloadBytes - 1) / m_payloadBytes;
    if (seq >= qp.highSent || highPsn - psn > RdmaQueuePair::ENTROPY_WINDOW)
    {
        return qp.lastEntropy; // never sent, or overwritten by a packet ENTROPY_WINDOW later
    }
    return qp.sentEntropy[psn % RdmaQueuePair::ENTROPY_WINDOW];
}

// ---- The load balancer's feedback, probes and timer -----------------------------------------

void
RdmaRecoveryHost::LbFeedbackAndProbes(RdmaQueuePair& qp, const LbFeedback& fb)
{
    m_lbFeedback(qp.flowId, static_cast<uint8_t>(fb.kind), fb.entropy);
    qp.lb->OnFeedback(fb);
    qp.rec.pathSwitches = qp.lb->GetPathSwitches();
    uint16_t entropy = 0;
    Time now = Simulator::Now();
    while (qp.lb->TakeProbe(now, &entropy))
    {
        // A probe is a small data packet (64 B on the wire) in the flow's priority group, so it
        // queues behind the same data the flow's own packets would.
        RdmaHeader h;
        h.type = RdmaHeader::DATA;
        h.flags = RdmaHeader::FLAG_PROBE;
        h.sip = m_address;
        h.dip = qp.dip;
        h.sport = entropy;
        h.dport = qp.dport;
        h.qpn = qp.qpn;
        h.pg = static_cast<uint16_t>(qp.pg);
        h.tsNs = static_cast<uint64_t>(now.GetNanoSeconds());
        ++qp.rec.probes;
        Device(qp)->Enqueue(RdmaFrame::Make(h, 64 - RdmaHeader::DATA_HEADER_BYTES), qp.pg);
    }
}

void
RdmaRecoveryHost::ArmLbTimer(RdmaQueuePair& qp)
{
    Time at = qp.lb->PollAt();
    if (at == Time::Max())
    {
        qp.lbEvent.Cancel();
        return;
    }
    if (qp.lbEvent.IsRunning() && qp.lbEvent.GetTs() == static_cast<uint64_t>(at.GetTimeStep()))
    {
        return;
    }
    qp.lbEvent.Cancel();
    Time delay = std::max(at - Simulator::Now(), Time(0));
    qp.lbEvent = Simulator::Schedule(delay, &RdmaRecoveryHost::LbTimer, this, qp.qpn);
}

void
RdmaRecoveryHost::LbTimer(uint16_t qpn)
{
    auto it = m_qps.find(qpn);
    if (it == m_qps.end())
    {
        return;
    }
    it->second.lb->OnTimer(Simulator::Now());
    ArmLbTimer(it->second);
    Device(it->second)->TriggerTransmit();
}

// ---- Receiver -------------------------------------------------------------------------------

RdmaHeader
RdmaRecoveryHost::ReplyHeader(const RdmaHeader& h, const RdmaRxState& rx, RdmaHeader::Type type) const
{
    RdmaHeader a;
    a.type = type;
    a.sip = m_address;
    a.dip = h.sip;
    a.sport = h.dport; // the reverse direction of the data packet
    a.dport = h.sport; // echo the entropy
    a.qpn = h.qpn;
    a.pg = h.pg;
    a.tsNs = h.tsNs;
    a.echoSeq = h.seq;
    a.flags = h.ecn != 0 ? FLAG_ECN_ECHO : 0;
    a.seq = static_cast<uint32_t>(rx.expected);
    a.recvdBytes = rx.uetRecvdBytes;
    return a;
}

void
RdmaRecoveryHost::SendFeedback(const RdmaHeader& h,
                      RdmaRxState& rx,
                      uint8_t type,
                      uint16_t flags,
                      uint64_t sackSeq,
                      uint64_t sackLen)
{
    RdmaHeader a = ReplyHeader(h, rx, static_cast<RdmaHeader::Type>(type));
    a.flags |= flags;
    a.sackSeq = static_cast<uint32_t>(sackSeq);
    a.sackLen = static_cast<uint16_t>(sackLen);
    // The INT of the data packet goes back in the ACK/NACK (HPCC's records, TIMELY's time).
    a.intMode = h.intMode;
    if (h.intMode == RdmaHeader::INT_HPCC)
    {
        a.intNHop = h.intNHop;
        std::copy(std::begin(h.intHop), std::end(h.intHop), std::begin(a.intHop));
    }
    if (flags & RdmaHeader::FLAG_CNP)
    {
        ++rx.cnpsSent;
        ++m_cnpsSent;
    }
    (rx.feedbackPort >= 0 ? m_ports[rx.feedbackPort] : FeedbackDevice(a))
        ->Enqueue(RdmaFrame::Make(a, 0), 0);
}

void
RdmaRecoveryHost::CheckDelivered(RdmaRxState& rx, uint32_t sip)
{
    if (rx.size != 0 && !rx.delivered && rx.expected >= rx.size)
    {
        rx.delivered = true;
        m_flowDelivered(rx.flowId, sip, m_address, rx.size, Simulator::Now());
    }
}

} // namespace ns3
