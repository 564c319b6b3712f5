/*
 * rdma-lb: RdmaUetRecovery, the UET transport of the NIC (kind "uet").
 *
 * Implements the sender and receiver of REPS's Ultra-Ethernet-style transport as htsim's UEC
 * sender with its MPRDMA-style window (tommasobo/REPS_EuroSys_Artifact, htsim/sim/uec.cpp);
 * the rules, their sources and the deviations are in rdma-uet.h. It shares the rest of the
 * NIC with the RoCE loss recoveries (rdma-recovery.h): round-robin over queue pairs, pacing at
 * the line rate, the load balancer's entropy and feedback (every ACK, NACK and timeout names
 * the packet's entropy, its RTT and its ECN echo), completion and the flow records.
 */
#include "rdma-recovery-uet.h"

#include "rdma-header.h"
#include "rdma-lb-bridge.h"
#include "rdma-net-device.h"
#include "rdma-time.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/uinteger.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaUetRecovery");
NS_OBJECT_ENSURE_REGISTERED(RdmaUetRecovery);

TypeId
RdmaUetRecovery::GetTypeId()
{
    // Defaults: the uet table of transport parameters' (RdmaTransportDefault;
    // rust-lb/scenario/src/transport_params/uet.rs).
    static TypeId tid =
        TypeId("ns3::RdmaUetRecovery")
            .SetParent<RdmaLossRecovery>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaUetRecovery>()
            .AddAttribute("MaxWindowBdp",
                          "The window's cap in base BDPs (RdmaNic::UetBaseRtt, or the pair's, x "
                          "the line rate; htsim 1.5)",
                          *RdmaTransportDefault("ns3::RdmaUetRecovery", "MaxWindowBdp"),
                          MakeDoubleAccessor(&RdmaUetRecovery::m_maxWindowBdp),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("InitialWindowPackets",
                          "Initial window in packets of PayloadSize + UetHeaderSize wire bytes "
                          "(htsim -cwnd); 0 = the cap; clamped to [1 packet, the cap] (NSCC "
                          "takes it unclamped, as htsim)",
                          *RdmaTransportDefault("ns3::RdmaUetRecovery", "InitialWindowPackets"),
                          MakeUintegerAccessor(&RdmaUetRecovery::m_initialWindowPackets),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("WaitToDecrease",
                          "SMaRTT's wait-to-decrease (REPS paper, section 3.0.1): an ECN-marked "
                          "ACK cuts the window only while the moving average of the ACKs' ECN "
                          "echoes is at least this (the paper's 0.25); 0 = off, every mark cuts",
                          *RdmaTransportDefault("ns3::RdmaUetRecovery", "WaitToDecrease"),
                          MakeDoubleAccessor(&RdmaUetRecovery::m_waitToDecrease),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("WtdAlpha",
                          "Gain of the ECN moving average per ACK (the REPS artifact's 0.05)",
                          *RdmaTransportDefault("ns3::RdmaUetRecovery", "WtdAlpha"),
                          MakeDoubleAccessor(&RdmaUetRecovery::m_wtdAlpha),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("AckBytes",
                          "Receiver: coalesce ACKs, one per this many wire bytes accepted and one "
                          "at once for a mark, a duplicate, the first packet and an AR packet, "
                          "with a 64-packet SACK bitmap (htsim -sack_threshold, the UEC htsim's "
                          "16384); 0 = answer every packet with its own ACK (the REPS artifact's)",
                          *RdmaTransportDefault("ns3::RdmaUetRecovery", "AckBytes"),
                          MakeUintegerAccessor(&RdmaUetRecovery::m_ackBytes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("AckRequest",
                          "With AckBytes > 0, which new packets carry the AR bit besides the "
                          "last one (resends always do): uec, one after which the window has no "
                          "room for another (the UEC htsim's); reps, one that fills the window "
                          "(the REPS artifact's; with AckBytes 4000, its ACKs)",
                          EnumValue(RdmaUetRecovery::ACK_REQUEST_UEC),
                          MakeEnumAccessor(&RdmaUetRecovery::m_ackRequest),
                          MakeEnumChecker(RdmaUetRecovery::ACK_REQUEST_UEC,
                                          "uec",
                                          RdmaUetRecovery::ACK_REQUEST_REPS,
                                          "reps"))
            .AddAttribute("NsccFeedback",
                          "What NSCC learns from an ACK: every-ack, every ACK's echoed send "
                          "time is an RTT sample and a NACK's cumulative ACK credits nothing "
                          "(ours); htsim, an RTT sample only for a still-outstanding packet's "
                          "first or (resent once) second transmission, else the delay average, "
                          "and a NACK's cumulatively acknowledged bytes credited at the next "
                          "ACK (the UEC htsim's UecSrc::processAck)",
                          EnumValue(RdmaUetRecovery::NSCC_FEEDBACK_EVERY_ACK),
                          MakeEnumAccessor(&RdmaUetRecovery::m_nsccFeedback),
                          MakeEnumChecker(RdmaUetRecovery::NSCC_FEEDBACK_EVERY_ACK,
                                          "every-ack",
                                          RdmaUetRecovery::NSCC_FEEDBACK_HTSIM,
                                          "htsim"))
            .AddAttribute("Inflight",
                          "What takes bytes out of flight: named-packets, each packet an "
                          "acknowledgement names (ours); received-bytes, the growth of the "
                          "receiver's count of new data bytes that every ACK carries, a NACK "
                          "taking out only its trimmed packet (the UEC htsim's "
                          "UecSrc::processAck)",
                          EnumValue(RdmaUetRecovery::INFLIGHT_NAMED_PACKETS),
                          MakeEnumAccessor(&RdmaUetRecovery::m_inflight),
                          MakeEnumChecker(RdmaUetRecovery::INFLIGHT_NAMED_PACKETS,
                                          "named-packets",
                                          RdmaUetRecovery::INFLIGHT_RECEIVED_BYTES,
                                          "received-bytes"))
            .AddAttribute("Cc",
                          "The congestion control: mprdma (htsim's window, the REPS "
                          "artifact's; rdma-uet.h), nscc (the Ultra Ethernet transport's NSCC "
                          "as the UEC's htsim runs it; rdma-uet-nscc.h), rccc (its receiver "
                          "credit alone, no window; rdma-uet-rccc.h) or nscc+rccc (both)",
                          EnumValue(RdmaUetRecovery::MPRDMA),
                          MakeEnumAccessor(&RdmaUetRecovery::m_cc),
                          MakeEnumChecker(RdmaUetRecovery::MPRDMA,
                                          "mprdma",
                                          RdmaUetRecovery::NSCC,
                                          "nscc",
                                          RdmaUetRecovery::RCCC,
                                          "rccc",
                                          RdmaUetRecovery::NSCC_RCCC,
                                          "nscc+rccc"))
            .AddTraceSource("Rts",
                            "RCCC: a sender's RTS left (flow id, its pull target in quanta)",
                            MakeTraceSourceAccessor(&RdmaUetRecovery::m_rtsTrace),
                            "ns3::RdmaUetRecovery::RtsTracedCallback")
            .AddTraceSource("Pull",
                            "RCCC: a receiver's pull left (sender address, queue pair, pull "
                            "number in quanta, slow pull)",
                            MakeTraceSourceAccessor(&RdmaUetRecovery::m_pullTrace),
                            "ns3::RdmaUetRecovery::PullTracedCallback")
            .AddAttribute("RcccPullRate",
                          "RCCC: the receiver's pull pacer grants credit at this fraction of "
                          "its line rate (htsim's pull_rate_modifier 0.99)",
                          *RdmaTransportDefault("ns3::RdmaUetRecovery", "RcccPullRate"),
                          MakeDoubleAccessor(&RdmaUetRecovery::m_rcccPullRate),
                          MakeDoubleChecker<double>(0.01, 10.0))
            .AddAttribute("RcccCreditPerPull",
                          "RCCC: bytes of credit per pull, a multiple of 256 (htsim's 4 x 4096 "
                          "B, whatever the MTU)",
                          *RdmaTransportDefault("ns3::RdmaUetRecovery", "RcccCreditPerPull"),
                          MakeUintegerAccessor(&RdmaUetRecovery::m_rcccCreditPerPull),
                          MakeUintegerChecker<uint32_t>(256))
            .AddAttribute("NsccTargetDelay",
                          "NSCC's target queuing delay (htsim -target_q_delay); 0 = 0.75 x "
                          "the network's RTT (UetBaseRtt) with NsccTrimming, else 1 x",
                          *RdmaTransportDefault("ns3::RdmaUetRecovery", "NsccTargetDelay"),
                          MakeTimeAccessor(&RdmaUetRecovery::m_nsccTarget),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("NsccQaGate",
                          "NSCC's quick adapt acts when the bytes delivered in a window are "
                          "below the window's cap / 2^NsccQaGate (htsim -qa_gate)",
                          *RdmaTransportDefault("ns3::RdmaUetRecovery", "NsccQaGate"),
                          MakeUintegerAccessor(&RdmaUetRecovery::m_nsccQaGate),
                          MakeUintegerChecker<uint32_t>(0, 30))
            .AddAttribute("NsccTrimming",
                          "Whether the fabric trims (NSCC's derived target delay)",
                          *RdmaTransportDefault("ns3::RdmaUetRecovery", "NsccTrimming"),
                          MakeBooleanAccessor(&RdmaUetRecovery::m_nsccTrimming),
                          MakeBooleanChecker());
    return tid;
}

uint64_t
RdmaUetWindowOnAck(uint64_t windowBytes,
                   uint64_t capBytes,
                   uint64_t mtuBytes,
                   uint64_t ackedBytes,
                   bool ecnMarked)
{
    if (!ecnMarked)
    {
        // Additive increase, about one packet per window of ACKs.
        const uint64_t w = windowBytes + ackedBytes * mtuBytes / std::max<uint64_t>(windowBytes, 1);
        return std::min(w, capBytes);
    }
    // Multiplicative decrease per marked ACK: a quarter of the bytes it acknowledges.
    const uint64_t cut = ackedBytes / 4;
    return windowBytes > mtuBytes + cut ? windowBytes - cut : mtuBytes;
}

uint64_t
RdmaUetWindowOnAckWtd(uint64_t windowBytes,
                      uint64_t capBytes,
                      uint64_t mtuBytes,
                      uint64_t ackedBytes,
                      bool ecnMarked,
                      double threshold,
                      double alpha,
                      double* ecnAverage)
{
    // The average includes this ACK (SMaRTT updates it before deciding).
    *ecnAverage = alpha * (ecnMarked ? 1.0 : 0.0) + (1.0 - alpha) * *ecnAverage;
    if (ecnMarked && *ecnAverage < threshold)
    {
        return windowBytes; // a mark below the threshold: neither cut nor grown
    }
    return RdmaUetWindowOnAck(windowBytes, capBytes, mtuBytes, ackedBytes, ecnMarked);
}

bool
RdmaUetHtsimRttSample(bool outstanding, uint32_t resends, uint64_t lastSentNs, uint64_t echoTsNs)
{
    return outstanding && (resends == 0 || (resends == 1 && lastSentNs == echoTsNs));
}

bool
RdmaUetAckRequest(uint64_t inflightBytes,
                  uint64_t wireBytes,
                  uint64_t windowBytes,
                  bool resend,
                  bool last,
                  bool repsRule)
{
    // In flight once this packet is sent, signed (Inflight received-bytes may dip below zero).
    const auto after = static_cast<int64_t>(inflightBytes + wireBytes);
    const auto wire = static_cast<int64_t>(wireBytes);
    return resend || last ||
           (repsRule ? after : after + wire) >= static_cast<int64_t>(windowBytes);
}

uint64_t
RdmaUetWindowOnLoss(uint64_t windowBytes, uint64_t mtuBytes, uint64_t lostBytes)
{
    return windowBytes > mtuBytes + lostBytes ? windowBytes - lostBytes : mtuBytes;
}

RdmaFramePtr
RdmaUetRecovery::NextPacket(Time now)
{
    return m_host->ServeQueuePairs(*this, now);
}

RdmaUetSender&
RdmaUetRecovery::Sender(RdmaQueuePair& qp)
{
    if (qp.uet)
    {
        return *qp.uet;
    }
    NS_ABORT_MSG_IF(Settings().m_uetBaseRtt.IsZero() || Settings().m_uetRto.IsZero(),
                    "RdmaNic: the uet transport needs UetBaseRtt and UetRto");
    qp.uet = std::make_unique<RdmaUetSender>();
    RdmaUetSender& u = *qp.uet;
    u.mtuBytes = uint64_t(Settings().m_payloadBytes) + Settings().m_uetHeaderBytes;
    u.outstanding.SetUnit(Settings().m_payloadBytes);
    Time baseRtt = Settings().m_uetBaseRttOf.IsNull() ? Time(0) : Settings().m_uetBaseRttOf(qp.dip);
    if (baseRtt.IsZero())
    {
        baseRtt = Settings().m_uetBaseRtt;
    }
    // BDP in bytes = RTT (ps) x rate (bit/s) / 8e12, in integers (no rounding below a byte).
    const auto bdp =
        static_cast<uint64_t>(static_cast<unsigned __int128>(baseRtt.GetPicoSeconds()) *
                              m_host->Device()->GetDataRate().GetBitRate() / 8000000000000ULL);
    u.capBytes = std::max<uint64_t>(
        static_cast<uint64_t>(m_maxWindowBdp * static_cast<double>(bdp)), u.mtuBytes);
    const uint64_t initialWindow = uint64_t(m_initialWindowPackets) * u.mtuBytes;
    u.windowBytes = initialWindow == 0 ? u.capBytes
                                       : std::clamp(initialWindow, u.mtuBytes, u.capBytes);
    if (UsesNscc())
    {
        // NSCC's own base RTT (the network's, lowered by samples), cap and initial window
        // (htsim's -cwnd is not clamped to the cap before the first ACK).
        u.nscc = std::make_unique<RdmaUetNscc>(Nscc(), static_cast<int64_t>(initialWindow));
        MirrorNscc(u);
    }
    if (UsesRccc())
    {
        u.rccc = std::make_unique<RdmaUetRcccSender>(Rccc()); // speculative credit: the cap
    }
    return u;
}

const RdmaUetRcccParams&
RdmaUetRecovery::Rccc()
{
    if (!m_rcccDerived)
    {
        NS_ABORT_MSG_IF(m_rcccCreditPerPull % RdmaUetRcccParams::QUANTUM_BYTES != 0,
                        "RdmaUetRecovery: RcccCreditPerPull must be a multiple of 256");
        const uint64_t rate = m_host->Device()->GetDataRate().GetBitRate();
        // htsim's _configured_maxwnd = 1.5 x the network RTT's BDP (UecSrc::initRccc).
        const double bdp = static_cast<double>(Settings().m_uetBaseRtt.GetPicoSeconds()) * 1e-12 *
                           static_cast<double>(rate) / 8.0;
        m_rccc = RdmaUetRcccParams::Derive(
            rate,
            m_rcccPullRate,
            m_rcccCreditPerPull,
            static_cast<int64_t>(m_maxWindowBdp * bdp),
            int64_t(Settings().m_payloadBytes) + Settings().m_uetHeaderBytes);
        m_rcccDerived = true;
    }
    return m_rccc;
}

int64_t
RdmaUetRecovery::BacklogBytes(const RdmaQueuePair& qp, uint64_t next) const
{
    const uint64_t left = qp.size > next ? qp.size - next : 0;
    const uint64_t unit = Settings().m_payloadBytes;
    return static_cast<int64_t>(left + (left + unit - 1) / unit * Settings().m_uetHeaderBytes);
}

int64_t
RdmaUetRecovery::RtxBytes(const RdmaQueuePair& qp) const
{
    int64_t bytes = 0;
    for (uint64_t seq : qp.uet->rtx)
    {
        bytes += static_cast<int64_t>(WireAt(qp, seq));
    }
    return bytes;
}

void
RdmaUetRecovery::MirrorNscc(RdmaUetSender& u)
{
    // The send gate and the UetWindow trace read these; NSCC owns them.
    u.windowBytes = static_cast<uint64_t>(u.nscc->Window());
    u.capBytes = static_cast<uint64_t>(u.nscc->MaxWindow());
}

const RdmaUetNsccParams&
RdmaUetRecovery::Nscc()
{
    if (!m_nsccDerived)
    {
        const int64_t mss = Settings().m_payloadBytes;
        m_nscc = RdmaUetNsccParams::Derive(
            static_cast<uint64_t>(Settings().m_uetBaseRtt.GetPicoSeconds()),
            m_host->Device()->GetDataRate().GetBitRate(),
            mss + Settings().m_uetHeaderBytes,
            mss,
            static_cast<uint64_t>(m_nsccTarget.GetPicoSeconds()),
            m_nsccTrimming,
            m_nsccQaGate);
        m_nsccDerived = true;
    }
    return m_nscc;
}

uint32_t
RdmaUetRecovery::PayloadAt(const RdmaQueuePair& qp, uint64_t seq) const
{
    return static_cast<uint32_t>(std::min<uint64_t>(Settings().m_payloadBytes, qp.size - seq));
}

uint64_t
RdmaUetRecovery::WireAt(const RdmaQueuePair& qp, uint64_t seq) const
{
    return PayloadAt(qp, seq) + Settings().m_uetHeaderBytes;
}

bool
RdmaUetRecovery::Eligible(RdmaQueuePair& qp, Time now, Time* wake)
{
    RdmaUetSender& u = Sender(qp);
    if (u.rtx.empty() && qp.sndNxt >= qp.size)
    {
        return false;
    }
    if (u.rccc && !u.rccc->CanSend())
    {
        return false; // credit-bound: a pull kicks the port
    }
    if (m_cc == RCCC)
    {
        return m_host->TimeToSend(qp, now, wake); // no window
    }
    // In flight read as signed: under Inflight received-bytes it may dip below zero, as htsim's.
    const int64_t inflight = static_cast<int64_t>(u.inflightBytes);
    if (static_cast<int64_t>(u.windowBytes) <= inflight)
    {
        return false; // window-bound: an ACK, NACK or timeout kicks the port
    }
    if (u.nscc)
    {
        // NSCC sends a packet only if it fits (htsim can_send_NSCC: cwnd >= in flight + size).
        const uint64_t seq = u.rtx.empty() ? qp.sndNxt : *u.rtx.begin();
        const uint64_t wire = WireAt(qp, seq);
        if (static_cast<int64_t>(u.windowBytes) < inflight + static_cast<int64_t>(wire))
        {
            return false;
        }
    }
    return m_host->TimeToSend(qp, now, wake);
}

RdmaFramePtr
RdmaUetRecovery::Send(RdmaQueuePair& qp, Time now)
{
    RdmaUetSender& u = *qp.uet;
    const bool fromRtx = !u.rtx.empty();
    const uint64_t seq = fromRtx ? *u.rtx.begin() : qp.sndNxt;
    const uint32_t payload = PayloadAt(qp, seq);
    const uint64_t wireBytes = WireAt(qp, seq);
    LbSendContext cx;
    cx.now = now;
    cx.psn = static_cast<uint32_t>(seq / Settings().m_payloadBytes);
    cx.retransmission = seq < qp.highSent;
    cx.inflightPkts = static_cast<uint32_t>(u.outstanding.Size());
    cx.everyArrivalAnswered = true;
    RdmaHeader h = m_host->DataHeader(qp, seq, cx);
    if (u.rccc)
    {
        // Spend the credit, then carry the pull target of what is left (htsim
        // sendNewPacket / sendRtxPacket: computePullTarget after the backlogs moved on).
        u.rccc->Spend(static_cast<int64_t>(wireBytes));
        const int64_t rtxLeft = RtxBytes(qp) - (fromRtx ? static_cast<int64_t>(wireBytes) : 0);
        h.echoSeq = static_cast<uint32_t>(
            u.rccc->PullTarget(Rccc(),
                               BacklogBytes(qp, fromRtx ? qp.sndNxt : qp.sndNxt + payload),
                               rtxLeft,
                               u.nscc != nullptr,
                               static_cast<int64_t>(u.windowBytes)));
    }
    if (m_ackBytes > 0)
    {
        // The AR bit (htsim UecSrc::sendNewPacket / sendRtxPacket): a resend, the last new
        // packet, one that leaves the window full (AckRequest: UEC's or the REPS
        // artifact's "full", RdmaUetAckRequest), or one that leaves no credit.
        const bool last = !fromRtx && seq + payload >= qp.size;
        const bool ar = m_cc == RCCC ? fromRtx || last
                                     : RdmaUetAckRequest(u.inflightBytes,
                                                         wireBytes,
                                                         u.windowBytes,
                                                         fromRtx,
                                                         last,
                                                         m_ackRequest == ACK_REQUEST_REPS);
        if (ar || (u.rccc && !u.rccc->CanSend()))
        {
            h.flags |= RdmaHeader::FLAG_ACK_REQUEST;
            ++m_counts.ackRequests;
        }
    }
    RdmaFramePtr f =
        RdmaFrame::Make(h, static_cast<uint32_t>(wireBytes - RdmaHeader::DATA_HEADER_BYTES));
    const uint32_t wire = f->sizeBytes;
    m_host->NotifyDataSent(qp.flowId, h.seq, h.sport);
    if (fromRtx)
    {
        u.rtx.erase(u.rtx.begin());
    }
    else
    {
        qp.sndNxt += payload;
    }
    if (const RdmaUetSent* again = u.outstanding.Find(seq))
    {
        // Sent again while still outstanding (cannot happen: a resent offset left it first).
        u.inflightBytes -= again->wireBytes;
    }
    u.outstanding.Insert(seq, RdmaUetSent{now, wire, h.sport});
    if (cx.retransmission && m_nsccFeedback == NSCC_FEEDBACK_HTSIM)
    {
        ++u.resends[seq];
    }
    u.inflightBytes += wire;
    m_host->RecordDataSent(qp, seq, payload, wire, h.sport, cx.retransmission);
    qp.nextAvail =
        now + RdmaTxTime(m_host->Device(qp)->GetDataRate(), wire, Settings().TxArithmetic());
    ArmRto(qp);
    m_host->ArmLbTimer(qp);
    return f;
}

// ---- Receiver -------------------------------------------------------------------------------

uint64_t
RdmaUetRecovery::SackBitmap(const RxState& rx, uint64_t base) const
{
    // Bit i: the packet at base + i payloads is held out of order (htsim buildSackBitmap).
    const uint64_t unit = Settings().m_payloadBytes;
    uint64_t bits = 0;
    auto it = rx.ooo.upper_bound(base);
    if (it != rx.ooo.begin())
    {
        --it;
    }
    for (; it != rx.ooo.end() && it->first < base + 64 * unit; ++it)
    {
        // Held blocks start at packet offsets, multiples of the payload, as the base is.
        for (uint64_t o = std::max(it->first, base); o < it->second && o < base + 64 * unit;
             o += unit)
        {
            bits |= uint64_t{1} << ((o - base) / unit);
        }
    }
    return bits;
}

void
RdmaUetRecovery::SendCoalescedAck(const RdmaHeader& h, RxState& rx, bool toTrigger)
{
    // The bitmap starts at the packet itself after a mark or an AR, else it ends there
    // (htsim sackBitmapBase: max(psn - 63, expected + 1), in packets).
    const uint64_t unit = Settings().m_payloadBytes;
    const uint64_t s = h.seq / unit;
    const uint64_t base =
        toTrigger ? s : std::max<uint64_t>(s >= 63 ? s - 63 : 0, rx.expected / unit + 1);
    RdmaHeader a = m_host->ReplyHeader(h, rx, RdmaHeader::ACK);
    a.flags |= RdmaHeader::FLAG_ACK_REQUEST;
    a.sackSeq = static_cast<uint32_t>(base * unit);
    a.sackBitmap = SackBitmap(rx, base * unit);
    rx.uetAccepted = 0;
    SendHeader(a);
}


void
RdmaUetRecovery::SendHeader(const RdmaHeader& a)
{
    if (a.type == RdmaHeader::ACK)
    {
        ++((a.flags & RdmaHeader::FLAG_PULL) != 0 ? m_counts.pulls : m_counts.acks);
    }
    const uint32_t size = a.GetSerializedSize();
    const uint32_t header = Settings().m_uetHeaderBytes;
    RdmaFramePtr f = RdmaFrame::Make(a, header > size ? header - size : 0);
    f->header.recvdBytes = a.recvdBytes; // metadata beside the header (RdmaHeader::recvdBytes)
    m_host->FeedbackDevice(a)->Enqueue(std::move(f), 0);
}

void
RdmaUetRecovery::SendFeedback(const RdmaHeader& h,
                              const RxState& rx,
                              RdmaHeader::Type type,
                              uint64_t sackLen)
{
    RdmaHeader a = m_host->ReplyHeader(h, rx, type);
    a.sackSeq = h.seq;
    a.sackLen = static_cast<uint16_t>(sackLen);
    if (type == RdmaHeader::NACK)
    {
        a.flags |= h.flags & RdmaHeader::FLAG_LAST_HOP; // trimmed at the last hop
    }
    SendHeader(a);
}

void
RdmaUetRecovery::ReceiveData(const RdmaHeader& h, uint32_t payloadBytes)
{
    auto [rit, fresh] = m_host->RxStates().try_emplace({h.sip, h.qpn});
    (void)fresh;
    RxState& rx = rit->second;
    const uint64_t s = h.seq;
    const bool held = s < rx.expected || rx.ooo.count(s) != 0;
    const bool coalesce = m_ackBytes > 0;
    const bool trimmed = (h.flags & RdmaHeader::FLAG_TRIMMED) != 0;
    if (UsesRccc() && ((h.flags & RdmaHeader::FLAG_RTS) != 0 || !trimmed || !held))
    {
        // Every data packet, a trimmed one not held yet and an RTS carry a pull target
        // (htsim handlePullTarget); a trim and an RTS ask for a pull whatever it is.
        RdmaUetRcccSink& sink = RcccSink(h, rx);
        const std::pair<uint32_t, uint16_t> key{h.sip, h.qpn};
        if (sink.OnPullTarget(h.echoSeq))
        {
            RequestPull(key);
        }
        if (trimmed && sink.Repull())
        {
            RequestPull(key);
        }
        if ((h.flags & RdmaHeader::FLAG_RTS) != 0)
        {
            return; // not ACKed: the pull answers it (rdma-uet-rccc.h)
        }
    }
    if (trimmed)
    {
        if (held && coalesce)
        {
            SendCoalescedAck(h, rx, h.ecn != 0);
            return;
        }
        if (held)
        {
            // An older copy arrived: ACK it (SACK its block if it is beyond the cumulative ACK).
            auto block = rx.ooo.find(s);
            SendFeedback(h, rx, RdmaHeader::ACK, block == rx.ooo.end() ? 0 : block->second - s);
            return;
        }
        ++rx.nacksSent;
        m_host->NotifyNackSent(h.sip, h.qpn, h.seq);
        NS_LOG_LOGIC("trimmed " << s << " from " << h.sip << " qpn " << h.qpn << ": NACK");
        SendFeedback(h, rx, RdmaHeader::NACK, 0);
        return;
    }
    const uint64_t len =
        payloadBytes - (Settings().m_uetHeaderBytes - RdmaHeader::DATA_HEADER_BYTES);
    if (!held)
    {
        // New data: its wire bytes join the count every ACK carries (htsim's recvd_bytes).
        rx.uetRecvdBytes += static_cast<uint32_t>(len + Settings().m_uetHeaderBytes);
    }
    if (h.ecn != 0)
    {
        ++rx.cnpsSent; // ECN-echoing feedback (the RoCE counters' "CNP-flagged")
        m_host->CountCnpSent();
    }
    if (coalesce)
    {
        ReceiveCoalesced(h, rx, len);
        return;
    }
    if (s == rx.expected)
    {
        Advance(rx, h.sip, s + len);
    }
    else if (!held)
    {
        rx.ooo.emplace(s, s + len);
    }
    SendFeedback(h, rx, RdmaHeader::ACK, len);
}

RdmaUetRcccSink&
RdmaUetRecovery::RcccSink(const RdmaHeader& h, const RxState& rx)
{
    RcccFlow& f = m_rcccFlows[{h.sip, h.qpn}];
    f.reply = m_host->ReplyHeader(h, rx, RdmaHeader::ACK);
    return f.sink;
}

void
RdmaUetRecovery::RequestPull(const std::pair<uint32_t, uint16_t>& key)
{
    if (m_pacer.Request(key))
    {
        // The pacer was idle: it grants now (htsim requestPull: an event at once).
        m_pacerAtPs = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
        Simulator::ScheduleNow(&RdmaUetRecovery::PacerEvent, this);
    }
}

void
RdmaUetRecovery::PacerEvent()
{
    if (m_pacer.Empty())
    {
        m_pacer.Stop();
        return;
    }
    using Key = std::pair<uint32_t, uint16_t>;
    const auto pull = m_pacer.NextPull(Rccc(), [this](const Key& k) -> RdmaUetRcccSink& {
        return m_rcccFlows.at(k).sink;
    });
    RdmaHeader a = m_rcccFlows.at(pull.flow).reply;
    a.flags = RdmaHeader::FLAG_PULL;
    a.sackSeq = static_cast<uint32_t>(pull.pullNo);
    a.sackLen = 0;
    SendHeader(a);
    m_pullTrace(pull.flow.first, pull.flow.second, pull.pullNo, pull.slow);
    // The next grant after the credit's time at 0.99 x line rate, kept in ps (no drift).
    m_pacerAtPs += pull.gapPs;
    const Time at = PicoSeconds(static_cast<int64_t>(m_pacerAtPs));
    const Time now = Simulator::Now();
    Simulator::Schedule(at > now ? at - now : Time(0), &RdmaUetRecovery::PacerEvent, this);
}

void
RdmaUetRecovery::Advance(RxState& rx, uint32_t sip, uint64_t end)
{
    rx.expected = end;
    while (!rx.ooo.empty() && rx.ooo.begin()->first <= rx.expected)
    {
        rx.expected = std::max(rx.expected, rx.ooo.begin()->second);
        rx.ooo.erase(rx.ooo.begin());
    }
    m_host->CheckDelivered(rx, sip);
}

void
RdmaUetRecovery::ReceiveCoalesced(const RdmaHeader& h, RxState& rx, uint64_t len)
{
    // htsim UecSink::processData: ACK at once for a mark, a duplicate, the flow's first
    // packet, an AR packet (and again when the reordering it saw has drained), else once
    // AckBytes of packets have been accepted since the last ACK.
    const uint64_t s = h.seq;
    const bool ecn = h.ecn != 0;
    const bool ar = (h.flags & RdmaHeader::FLAG_ACK_REQUEST) != 0;
    rx.uetAccepted += static_cast<uint32_t>(len + Settings().m_uetHeaderBytes);
    if (s < rx.expected || rx.ooo.count(s) != 0)
    {
        SendCoalescedAck(h, rx, ecn); // a duplicate: the sender is confused, ACK now
        return;
    }
    bool force = rx.expected == 0 && rx.ooo.empty();
    if (ar)
    {
        force = true;
        rx.uetAckRequest = true;
    }
    if (s == rx.expected)
    {
        Advance(rx, h.sip, s + len);
        if (rx.ooo.empty() && rx.uetAckRequest)
        {
            force = true;
            rx.uetAckRequest = false;
        }
    }
    else
    {
        rx.ooo.emplace(s, s + len);
    }
    if (ecn || force || rx.uetAccepted >= m_ackBytes)
    {
        SendCoalescedAck(h, rx, ecn || ar);
    }
}

// ---- Sender: feedback and timeout -----------------------------------------------------------

void
RdmaUetRecovery::CutOnLoss(RdmaQueuePair& qp,
                           const RdmaUetSent& at,
                           bool nack,
                           bool lastHop,
                           Time now)
{
    RdmaUetSender& u = *qp.uet;
    if (m_cc == RCCC)
    {
        return; // no window
    }
    if (!u.nscc)
    {
        u.windowBytes = RdmaUetWindowOnLoss(u.windowBytes, u.mtuBytes, at.wireBytes);
        return;
    }
    if (nack)
    {
        u.nscc->OnNack(Nscc(),
                       static_cast<uint64_t>(now.GetPicoSeconds()),
                       at.wireBytes,
                       static_cast<uint64_t>((now - at.sent).GetPicoSeconds()),
                       static_cast<int64_t>(u.inflightBytes),
                       !(u.rccc && lastHop)); // RCCC handles the last hop's trims
    }
    else
    {
        u.nscc->OnTimeout(Nscc(), at.wireBytes);
    }
    MirrorNscc(u);
}

uint16_t
RdmaUetRecovery::Lose(RdmaQueuePair& qp, uint64_t seq, bool nack, Time now, bool lastHop)
{
    RdmaUetSender& u = *qp.uet;
    const RdmaUetSent at = *u.outstanding.Find(seq);
    const uint16_t entropy = at.entropy;
    CutOnLoss(qp, at, nack, lastHop, now);
    u.inflightBytes -= at.wireBytes;
    u.rtx.insert(seq);
    u.outstanding.Erase(seq);
    m_host->NotifyUetWindow(qp.flowId, u.windowBytes, u.capBytes);
    return entropy;
}

void
RdmaUetRecovery::ReceiveAck(std::map<uint16_t, RdmaQueuePair>::iterator it, const RdmaHeader& h)
{
    RdmaQueuePair& qp = it->second;
    RdmaUetSender& u = Sender(qp);
    const Time now = Simulator::Now();
    if ((h.flags & RdmaHeader::FLAG_PULL) != 0)
    {
        if (u.rccc)
        {
            // A pull: credit up to its number (htsim processPull).
            u.rccc->StopSpeculating();
            u.rccc->OnPull(Rccc(), h.sackSeq);
            m_host->Device(qp)->TriggerTransmit();
        }
        return;
    }
    const bool ecn = (h.flags & RdmaRecoveryHost::FLAG_ECN_ECHO) != 0;
    const bool nack = h.type == RdmaHeader::NACK;
    const bool lastHop = nack && (h.flags & RdmaHeader::FLAG_LAST_HOP) != 0;
    LbFeedback fb;
    // What happened, under every congestion control: a NACK says whether the trim was at the
    // last hop, and each load balancer decides what that means (htsim's own -- uec-bitmap,
    // uec-mixed, reps under htsim inputs -- count it as good or ECN, htsim processNack).
    fb.kind = nack ? LbFeedbackKind::NACK : LbFeedbackKind::ACK;
    fb.now = now;
    fb.entropy = h.dport;
    fb.psn = h.echoSeq / Settings().m_payloadBytes;
    fb.rtt = now - NanoSeconds(static_cast<int64_t>(h.tsNs));
    fb.hasRtt = true;
    fb.ecn = ecn;
    fb.lastHop = lastHop;
    m_host->LbFeedbackAndProbes(qp, fb);
    if (ecn)
    {
        ++qp.rec.cnpsRx;
    }
    // NsccFeedback htsim: an RTT sample only as htsim's validateSendTs allows one.
    bool rttSample = true;
    if (m_nsccFeedback == NSCC_FEEDBACK_HTSIM)
    {
        const RdmaUetSent* sent = u.outstanding.Find(h.echoSeq);
        const auto r = u.resends.find(h.echoSeq);
        rttSample = RdmaUetHtsimRttSample(
            sent != nullptr,
            r == u.resends.end() ? 0 : r->second,
            sent != nullptr ? static_cast<uint64_t>(sent->sent.GetNanoSeconds()) : 0,
            h.tsNs);
    }
    // Inflight received-bytes: what the receiver got since the last ACK leaves flight, named
    // or not (a NACK's count is not read: htsim's processNack).
    const bool byCount = m_inflight == INFLIGHT_RECEIVED_BYTES;
    if (byCount && !nack)
    {
        const uint32_t grown = h.recvdBytes - u.recvdSeen; // modulo 2^32
        if (grown != 0 && grown < (uint32_t{1} << 31))
        {
            u.inflightBytes -= grown;
            u.recvdSeen = h.recvdBytes;
        }
    }
    // Acknowledged: everything below the cumulative ACK, and the packet it SACKs.
    uint64_t acked = 0;
    auto ack = [&](uint64_t seq) {
        const uint32_t wire = u.outstanding.Find(seq)->wireBytes;
        acked += wire;
        if (!byCount)
        {
            u.inflightBytes -= wire;
        }
        u.outstanding.Erase(seq);
    };
    // A packet waiting to be resent left flight when it was found lost; acknowledged, the
    // receiver's count covers it, so under received-bytes it comes back in first.
    auto unqueue = [&](std::set<uint64_t>::iterator r) {
        if (byCount)
        {
            u.inflightBytes += WireAt(qp, *r);
        }
        u.rtx.erase(r);
    };
    while (!u.outstanding.Empty() && u.outstanding.Lowest() < h.seq)
    {
        ack(u.outstanding.Lowest());
    }
    while (!u.rtx.empty() && *u.rtx.begin() < h.seq)
    {
        unqueue(u.rtx.begin());
    }
    u.resends.erase(u.resends.begin(), u.resends.lower_bound(h.seq));
    if ((h.flags & RdmaHeader::FLAG_ACK_REQUEST) != 0)
    {
        // A coalesced ACK: the packets its bitmap names.
        for (uint64_t bits = h.sackBitmap; bits != 0; bits &= bits - 1)
        {
            const uint64_t seq =
                h.sackSeq + uint64_t(__builtin_ctzll(bits)) * Settings().m_payloadBytes;
            if (u.outstanding.Find(seq))
            {
                ack(seq);
            }
            if (const auto r = u.rtx.find(seq); r != u.rtx.end())
            {
                unqueue(r);
            }
        }
    }
    else if (h.sackLen != 0)
    {
        if (u.outstanding.Find(h.sackSeq))
        {
            ack(h.sackSeq);
        }
        if (const auto r = u.rtx.find(h.sackSeq); r != u.rtx.end())
        {
            unqueue(r);
        }
    }
    qp.sndUna = std::max<uint64_t>(qp.sndUna, h.seq);
    qp.highestAck = qp.sndUna;
    if (m_nsccFeedback == NSCC_FEEDBACK_HTSIM)
    {
        // A NACK's cumulatively acknowledged bytes reach NSCC with the next ACK.
        if (nack)
        {
            u.nackAckedBytes += acked;
        }
        else
        {
            acked += u.nackAckedBytes;
            u.nackAckedBytes = 0;
        }
    }
    if (nack)
    {
        ++qp.rec.nacksRx;
        if (u.outstanding.Find(h.echoSeq))
        {
            Lose(qp, h.echoSeq, true, now, lastHop); // a trimmed packet: resend it, cut the window
        }
    }
    else
    {
        m_host->NotifyUetRtt(qp.flowId, fb.rtt);
        if (u.nscc)
        {
            u.nscc->OnAck(Nscc(),
                          static_cast<uint64_t>(now.GetPicoSeconds()),
                          static_cast<int64_t>(acked),
                          rttSample ? static_cast<uint64_t>(std::max(fb.rtt, Time(0)).GetPicoSeconds())
                                    : 0, // 0: the delay average, nothing updated
                          ecn,
                          static_cast<int64_t>(u.inflightBytes));
            MirrorNscc(u);
        }
        else if (m_cc == RCCC)
        {
            // no window
        }
        else if (m_waitToDecrease > 0)
        {
            u.windowBytes = RdmaUetWindowOnAckWtd(u.windowBytes, u.capBytes, u.mtuBytes, acked,
                                                  ecn, m_waitToDecrease, m_wtdAlpha,
                                                  &u.ecnAverage);
        }
        else
        {
            u.windowBytes = RdmaUetWindowOnAck(u.windowBytes, u.capBytes, u.mtuBytes, acked, ecn);
        }
        m_host->NotifyUetWindow(qp.flowId, u.windowBytes, u.capBytes);
    }
    if (u.rccc)
    {
        u.rccc->StopSpeculating(); // the first ACK or NACK ends the speculative credit
    }
    if (qp.sndUna >= qp.size)
    {
        m_host->Complete(it);
        return;
    }
    ArmRto(qp);
    m_host->ArmLbTimer(qp);
    m_host->Device(qp)->TriggerTransmit();
}

void
RdmaUetRecovery::ArmRto(RdmaQueuePair& qp)
{
    RdmaUetSender& u = *qp.uet;
    if (u.outstanding.Empty())
    {
        qp.rtoDeadline = Time::Max();
        return; // a pending event finds nothing outstanding
    }
    qp.rtoDeadline = u.outstanding.Oldest().first + Settings().m_uetRto;
    // One event per queue pair; it re-checks the deadline when it fires (moved lazily later).
    if (!qp.rtoEvent.pending ||
        qp.rtoEvent.GetTs() > static_cast<uint64_t>(qp.rtoDeadline.GetTimeStep()))
    {
        qp.rtoEvent.Cancel();
        const Time now = Simulator::Now();
        qp.rtoEvent.Schedule(std::max(qp.rtoDeadline - now, Time(0)),
                             &RdmaUetRecovery::RtoCheck,
                             this,
                             qp.qpn);
    }
}

void
RdmaUetRecovery::RtoCheck(uint16_t qpn)
{
    auto it = m_host->QueuePairs().find(qpn);
    if (it == m_host->QueuePairs().end())
    {
        return;
    }
    RdmaQueuePair& qp = it->second;
    qp.rtoEvent.Fired();
    if (!qp.uet || qp.uet->outstanding.Empty())
    {
        return;
    }
    RdmaUetSender& u = *qp.uet;
    const Time now = Simulator::Now();
    const Time deadline = u.outstanding.Oldest().first + Settings().m_uetRto;
    if (now < deadline)
    {
        qp.rtoEvent.Schedule(deadline - now, &RdmaUetRecovery::RtoCheck, this, qpn);
        return;
    }
    // The oldest outstanding packet timed out: resend it, blame its entropy.
    const uint64_t seq = u.outstanding.Oldest().second;
    ++qp.rec.timeouts;
    NS_LOG_LOGIC("flow " << qp.flowId << " timeout of " << seq);
    LbFeedback fb;
    fb.kind = LbFeedbackKind::TIMEOUT;
    fb.now = now;
    fb.psn = static_cast<uint32_t>(seq / Settings().m_payloadBytes);
    const bool rtxWasEmpty = u.rtx.empty();
    const uint32_t wire = u.outstanding.Find(seq)->wireBytes;
    fb.entropy = Lose(qp, seq, false, now);
    m_host->LbFeedbackAndProbes(qp, fb);
    if (u.rccc)
    {
        RcccOnTimeout(qp, rtxWasEmpty, wire, now);
    }
    ArmRto(qp);
    m_host->ArmLbTimer(qp);
    m_host->Device(qp)->TriggerTransmit();
}

} // namespace ns3

namespace ns3
{

void
RdmaUetRecovery::RcccOnTimeout(RdmaQueuePair& qp, bool rtxWasEmpty, uint32_t wireBytes, Time now)
{
    // htsim rtxTimerExpired: with resends already queued the receiver may not know we wait:
    // an RTS; else one when the window or the credit keeps the resend back.
    RdmaUetSender& u = *qp.uet;
    if (!rtxWasEmpty)
    {
        u.rccc->StopSpeculating();
    }
    if (RdmaUetRcccRtsOnTimeout(rtxWasEmpty,
                                u.nscc != nullptr,
                                static_cast<int64_t>(u.windowBytes),
                                wireBytes,
                                static_cast<int64_t>(u.inflightBytes),
                                u.rccc->Credit()))
    {
        SendRts(qp, now);
    }
}

void
RdmaUetRecovery::SendRts(RdmaQueuePair& qp, Time now)
{
    RdmaUetSender& u = *qp.uet;
    // At most one per network RTT, against an incast of RTSs; htsim's limit is its NSCC's
    // network RTT, 0 (none) when NSCC is off.
    const bool hasLast = u.lastRts != Time::Min();
    if (!RdmaUetRcccRtsAllowed(hasLast,
                               hasLast ? static_cast<uint64_t>(u.lastRts.GetPicoSeconds()) : 0,
                               static_cast<uint64_t>(now.GetPicoSeconds()),
                               u.nscc ? Nscc().networkRttPs : 0))
    {
        return;
    }
    LbSendContext cx;
    cx.now = now;
    cx.psn = static_cast<uint32_t>(qp.sndNxt / Settings().m_payloadBytes);
    cx.inflightPkts = static_cast<uint32_t>(u.outstanding.Size());
    cx.everyArrivalAnswered = true;
    RdmaHeader h = m_host->DataHeader(qp, qp.sndNxt, cx); // an entropy, as htsim's RTS takes
    h.flags |= RdmaHeader::FLAG_TRIMMED | RdmaHeader::FLAG_RTS; // a header, control priority
    h.echoSeq = static_cast<uint32_t>(u.rccc->LastPullTarget());
    NS_LOG_LOGIC("flow " << qp.flowId << " RTS, pull target " << h.echoSeq);
    SendHeader(h);
    u.lastRts = now;
    m_rtsTrace(qp.flowId, u.rccc->LastPullTarget());
}

} // namespace ns3
