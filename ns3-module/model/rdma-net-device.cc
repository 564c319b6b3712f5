/*
 * rdma-lb: RdmaNetDevice (the reference's port device, as behaviour).
 */
#include "rdma-net-device.h"

#include "rdma-channel.h"
#include "rdma-header.h"
#include "rdma-time.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaNetDevice");
NS_OBJECT_ENSURE_REGISTERED(RdmaNetDevice);

TypeId
RdmaNetDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaNetDevice")
            .SetParent<NetDevice>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaNetDevice>()
            .AddAttribute("DataRate",
                          "Link rate of the port",
                          DataRateValue(DataRate("100Gbps")),
                          MakeDataRateAccessor(&RdmaNetDevice::m_rate),
                          MakeDataRateChecker())
            .AddAttribute("TimeTruncation",
                          "Reference quirk time-truncation: serialization times truncated to "
                          "whole ns as ns-3.19 computes them (1048 B at 100 Gbps: 83 ns). "
                          "false = this ns-3's DataRate::CalculateBytesTxTime (84 ns)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaNetDevice::m_timeTruncation),
                          MakeBooleanChecker())
            .AddAttribute("IntegerTxTime",
                          "With TimeTruncation, SimAI's arithmetic (time-truncation under a "
                          "SimAI workload): bytes x 8 x 10^9 / rate in integers, truncated "
                          "(1000 B at 100 Gbps: 80 ns, where ns-3.19's doubles give 79)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaNetDevice::m_integerTxTime),
                          MakeBooleanChecker())
            .AddAttribute("TxTime",
                          "The clock of serialization times: ns, whole ns as TimeTruncation / "
                          "IntegerTxTime compute them; ps, htsim's bytes x 8 x 10^12 / rate in "
                          "whole ps, the port carrying the fraction of a ns to the next frame it "
                          "sends back to back, so that its rate is exact (rdma-time.h)",
                          EnumValue(TX_CLOCK_NS),
                          MakeEnumAccessor(&RdmaNetDevice::m_txClock),
                          MakeEnumChecker(TX_CLOCK_NS, "ns", TX_CLOCK_PS, "ps"))
            .AddAttribute("ControlTurns",
                          "A port with a data source (a NIC's) and control frames queued: 0, "
                          "the control frames first always; N, the data source gets every "
                          "(N + 1)th such turn (the UEC htsim's UecNIC: 10). A data turn "
                          "without data sends the control frame and does not count",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RdmaNetDevice::m_controlTurns),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("PfcEnabled",
                          "Obey received PFC pause/resume frames (the reference's QbbEnabled / "
                          "ENABLE_PFC). Off, frames are counted and traced but ignored. A host "
                          "NIC in IRN mode ignores its retransmission timeouts when its port "
                          "is lossless (this set and the switch at the other end generating "
                          "PFC), as the reference does",
                          BooleanValue(true),
                          MakeBooleanAccessor(&RdmaNetDevice::m_pfcEnabled),
                          MakeBooleanChecker())
            .AddAttribute("ReceiveErrorModel",
                          "Error model deciding which arriving packets are lost (loss "
                          "injection; none by default)",
                          PointerValue(),
                          MakePointerAccessor(&RdmaNetDevice::m_receiveErrorModel),
                          MakePointerChecker<ErrorModel>())
            .AddTraceSource("RxDrop",
                            "An arriving packet was dropped by the ReceiveErrorModel",
                            MakeTraceSourceAccessor(&RdmaNetDevice::m_rxDropTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("Tx",
                            "A packet starts transmission on the port",
                            MakeTraceSourceAccessor(&RdmaNetDevice::m_txTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("Rx",
                            "A packet arrived at the port",
                            MakeTraceSourceAccessor(&RdmaNetDevice::m_rxTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PfcTx",
                            "This port sent a PFC frame: class, pause time in us (0 = resume)",
                            MakeTraceSourceAccessor(&RdmaNetDevice::m_pfcTxTrace),
                            "ns3::RdmaNetDevice::PfcTracedCallback")
            .AddTraceSource("PfcRx",
                            "This port received a PFC frame: class, pause time in us (0 = "
                            "resume)",
                            MakeTraceSourceAccessor(&RdmaNetDevice::m_pfcRxTrace),
                            "ns3::RdmaNetDevice::PfcTracedCallback")
            .AddTraceSource("QueueLength",
                            "A queue's length changed: queue, bytes",
                            MakeTraceSourceAccessor(&RdmaNetDevice::m_queueLengthTrace),
                            "ns3::RdmaNetDevice::QueueLengthTracedCallback");
    return tid;
}

RdmaNetDevice::RdmaNetDevice()
    : m_txComplete(Create<RdmaReusableEvent<RdmaNetDevice, &RdmaNetDevice::TransmitComplete>>(this)),
      m_address(Mac48Address::Allocate())
{
}

RdmaNetDevice::~RdmaNetDevice() = default;

void
RdmaNetDevice::DoDispose()
{
    for (auto& q : m_queues)
    {
        q.frames.clear();
        q.bytes = 0;
    }
    m_nonEmpty = 0;
    for (auto& e : m_resumeEvent)
    {
        e.Cancel();
    }
    m_channel = nullptr;
    m_txLink = nullptr;
    m_node = nullptr;
    m_receiveErrorModel = nullptr;
    m_frameReceive = {};
    m_dataSource = {};
    m_dequeue = {};
    m_transmitEnd = {};
    m_receiveHandler = MakeNullCallback<void, Ptr<RdmaNetDevice>, Ptr<Packet>>();
    m_frameReceiveHandler = MakeNullCallback<void, Ptr<RdmaNetDevice>, RdmaFramePtr&>();
    m_dataSourceHandler = MakeNullCallback<RdmaFramePtr, Ptr<RdmaNetDevice>>();
    m_dequeueHandler =
        MakeNullCallback<void, Ptr<RdmaNetDevice>, RdmaFrame&, uint32_t, uint32_t>();
    m_transmitEndHandler =
        MakeNullCallback<void, Ptr<RdmaNetDevice>, RdmaFrame*, uint32_t, uint32_t, uint32_t>();
    NetDevice::DoDispose();
}

void
RdmaNetDevice::Attach(Ptr<RdmaChannel> channel)
{
    m_channel = channel;
    channel->Attach(this);
    m_txLink = channel->GetDirectionFrom(this);
}

void
RdmaNetDevice::Enqueue(Ptr<Packet> p, uint32_t q, uint32_t meta)
{
    Enqueue(RdmaFrame::FromPacket(p), q, meta);
}

void
RdmaNetDevice::Enqueue(RdmaFramePtr f, uint32_t q, uint32_t meta)
{
    NS_ABORT_MSG_IF(q >= N_QUEUES, "RdmaNetDevice: queue " << q << " out of range");
    m_queues[q].bytes += f->sizeBytes;
    if (!m_busy && m_nonEmpty == 0 && (q == 0 || !m_paused[q]))
    {
        // An idle port with nothing queued: Dequeue would pick this frame at once, so it
        // leaves without passing through the ring (whose slot is cold memory at a port that
        // packets visit now and then), with the same traces, hook and round-robin turn.
        m_queueLengthTrace(q, m_queues[q].bytes);
        if (q != 0)
        {
            m_lastRr = q;
        }
        Served(*f, q, meta);
        Transmit(std::move(f), true);
        return;
    }
    m_queues[q].frames.push_back({std::move(f), meta});
    m_nonEmpty |= 1U << q;
    m_queueLengthTrace(q, m_queues[q].bytes);
    TriggerTransmit();
}

RdmaFramePtr
RdmaNetDevice::PopNewest(uint32_t q, uint32_t& meta)
{
    NS_ABORT_MSG_IF(q >= N_QUEUES, "RdmaNetDevice: queue " << q << " out of range");
    if (m_queues[q].frames.empty())
    {
        return nullptr;
    }
    Queued& tail = m_queues[q].frames.back();
    RdmaFramePtr f = std::move(tail.frame);
    meta = tail.meta;
    m_queues[q].frames.pop_back();
    if (m_queues[q].frames.empty())
    {
        m_nonEmpty &= ~(1U << q);
    }
    m_queues[q].bytes -= f->sizeBytes;
    m_queueLengthTrace(q, m_queues[q].bytes);
    return f;
}

void
RdmaNetDevice::TriggerTransmit()
{
    if (!m_busy)
    {
        TransmitNext();
    }
}

RdmaFramePtr
RdmaNetDevice::Dequeue()
{
    // Queue 0: strict priority.
    uint32_t q = N_QUEUES;
    if (m_nonEmpty & 1U)
    {
        q = 0;
    }
    else
    {
        // Queues 1..7: round-robin, starting after the last one served.
        for (uint32_t k = 1; k < N_QUEUES; ++k)
        {
            uint32_t cand = 1 + (m_lastRr + k - 1) % (N_QUEUES - 1);
            if ((m_nonEmpty & (1U << cand)) != 0 && !m_paused[cand])
            {
                q = cand;
                m_lastRr = cand;
                break;
            }
        }
    }
    if (q == N_QUEUES)
    {
        return nullptr;
    }
    Queued& head = m_queues[q].frames.front();
    RdmaFramePtr f = std::move(head.frame);
    const uint32_t meta = head.meta;
    m_queues[q].frames.pop_front();
    if (m_queues[q].frames.empty())
    {
        m_nonEmpty &= ~(1U << q);
    }
    else
    {
        RdmaFramePrefetch(m_queues[q].frames.front().frame.get());
    }
    Served(*f, q, meta);
    return f;
}

void
RdmaNetDevice::Served(RdmaFrame& f, uint32_t q, uint32_t meta)
{
    m_queues[q].bytes -= f.sizeBytes;
    m_queueLengthTrace(q, m_queues[q].bytes);
    m_lastQueue = q;
    m_lastMeta = meta;
    if (m_dequeue)
    {
        m_dequeue(*this, f, q, meta);
    }
}

void
RdmaNetDevice::TransmitNext()
{
    if (m_controlTurns > 0 && m_nonEmpty != 0 && m_dataSource)
    {
        // Control and data both waiting (htsim UecNIC::doNextEvent): data every
        // (ControlTurns + 1)th turn.
        const uint32_t turn = m_turn >= m_controlTurns ? 0 : m_turn + 1;
        if (turn != 0)
        {
            m_turn = turn;
        }
        else if (RdmaFramePtr d = m_dataSource(*this))
        {
            m_turn = 0;
            Transmit(std::move(d), false);
            return;
        }
    }
    RdmaFramePtr f = Dequeue();
    const bool queued = f != nullptr;
    if (!f && m_dataSource)
    {
        f = m_dataSource(*this);
    }
    if (f)
    {
        Transmit(std::move(f), queued);
    }
}

void
RdmaNetDevice::Transmit(RdmaFramePtr f, bool queued)
{
    m_busy = true;
    m_txBytes += f->sizeBytes;
    ++m_txPackets;
    m_txTrace(*f);
    const Time txTime = m_txClock == TX_CLOCK_PS ? CarriedTxTime(f->sizeBytes) : TxTime(f->sizeBytes);
    // Transmit-complete first, then the arrival at the peer (the reference's event order).
    m_txComplete->Schedule(txTime);
    if (queued && m_transmitEnd)
    {
        // The channel keeps the frame until it arrives, after TransmitComplete (scheduled
        // first); a link between ranks sends it away now, so it cannot be reported later.
        NS_ABORT_MSG_IF(m_txLink->IsRemote(),
                        "RdmaNetDevice: a transmit-end handler (RdmaSwitch::QueueRelease end) "
                        "on a link between ranks is not supported");
        RdmaFrame* onLink = f.get();
        const uint32_t size = f->sizeBytes;
        const bool sent = m_txLink->TransmitStart(std::move(f), txTime);
        m_inService = {sent ? onLink : nullptr, size, m_lastQueue, m_lastMeta, true};
        return;
    }
    m_txLink->TransmitStart(std::move(f), txTime);
}

Time
RdmaNetDevice::GetTxTime(uint32_t bytes) const
{
    return RdmaTxTime(m_rate,
                      bytes,
                      RdmaTxArithmeticOf(m_timeTruncation, m_integerTxTime, m_txClock));
}

Time
RdmaNetDevice::CarriedTxTime(uint32_t bytes)
{
    // Back to back (sent at the instant the last frame's whole ns ended): that frame's
    // fraction of a ns is still on the wire, ahead of this one.
    const Time now = Simulator::Now();
    const uint64_t ps = (now == m_txEnd ? m_txCarryPs : 0) + RdmaTxPicoseconds(m_rate, bytes);
    m_txCarryPs = static_cast<uint32_t>(ps % 1000);
    const Time t = NanoSeconds(static_cast<int64_t>(ps / 1000));
    m_txEnd = now + t;
    return t;
}

Time
RdmaNetDevice::TxTime(uint32_t bytes)
{
    // A link carries a few packet sizes (data, ACK, CNP), so two remembered serialisation
    // times spare most packets DataRate's 128-bit division; keyed by everything they depend on.
    const uint64_t bps = m_rate.GetBitRate();
    const RdmaTxArithmetic arithmetic =
        RdmaTxArithmeticOf(m_timeTruncation, m_integerTxTime, m_txClock);
    for (const TxTimeEntry& e : m_txTimes)
    {
        if (e.bytes == bytes && e.bps == bps && e.arithmetic == arithmetic)
        {
            return e.time;
        }
    }
    TxTimeEntry& slot = m_txTimes[m_txTimeNext];
    m_txTimeNext ^= 1;
    slot = {bps, bytes, arithmetic, RdmaTxTime(m_rate, bytes, arithmetic)};
    return slot.time;
}

void
RdmaNetDevice::TransmitComplete()
{
    m_busy = false;
    if (m_inService.pending)
    {
        const InService done = m_inService;
        m_inService = {};
        if (m_transmitEnd)
        {
            m_transmitEnd(*this, done.frame, done.sizeBytes, done.queue, done.meta);
        }
    }
    TransmitNext();
}

void
RdmaNetDevice::Receive(Ptr<Packet> p)
{
    Receive(RdmaFrame::FromPacket(p));
}

void
RdmaNetDevice::Receive(RdmaFramePtr f)
{
    if (m_receiveErrorModel && m_receiveErrorModel->IsCorrupt(f->Materialise()))
    {
        NS_LOG_LOGIC("packet " << f->packet->GetUid() << " lost by the receive error model");
        m_rxDropTrace(*f);
        return;
    }
    m_rxTrace(*f);
    if (f->header.type == RdmaHeader::PFC)
    {
        ReceivePfc(f->header.pfcClass, f->header.pauseUs);
        return;
    }
    if (m_frameReceive)
    {
        m_frameReceive(*this, f);
    }
    else if (!m_receiveHandler.IsNull())
    {
        m_receiveHandler(this, f->Materialise());
    }
}

void
RdmaNetDevice::SendPfc(uint32_t cls, uint32_t pauseUs, uint32_t qlen)
{
    RdmaHeader h;
    h.type = RdmaHeader::PFC;
    h.dip = 0xFFFFFFFF;
    h.pauseUs = pauseUs;
    h.pfcQlen = qlen;
    h.pfcClass = static_cast<uint8_t>(cls);
    ++(pauseUs > 0 ? m_pfcPausesSent : m_pfcResumesSent);
    NS_LOG_LOGIC("PFC " << (pauseUs > 0 ? "pause" : "resume") << " class " << cls << " sent");
    m_pfcTxTrace(cls, pauseUs);
    Enqueue(RdmaFrame::Make(h, 0), 0);
}

void
RdmaNetDevice::ReceivePfc(uint32_t cls, uint32_t pauseUs)
{
    m_pfcRxTrace(cls, pauseUs);
    ++(pauseUs > 0 ? m_pfcPausesReceived : m_pfcResumesReceived);
    if (cls == 0 || cls >= N_QUEUES || !m_pfcEnabled)
    {
        return; // queue 0 is never paused; a port without PFC ignores the frame
    }
    m_resumeEvent[cls].Cancel();
    if (pauseUs > 0)
    {
        NS_LOG_LOGIC("class " << cls << " paused for " << pauseUs << " us");
        m_paused[cls] = true;
        m_resumeEvent[cls] =
            Simulator::Schedule(MicroSeconds(pauseUs), &RdmaNetDevice::PauseExpired, this, cls);
    }
    else
    {
        PauseExpired(cls);
    }
}

void
RdmaNetDevice::PauseExpired(uint32_t cls)
{
    NS_LOG_LOGIC("class " << cls << " resumed");
    m_paused[cls] = false;
    TriggerTransmit();
}

bool
RdmaNetDevice::GetPfcEnabled() const
{
    return m_pfcEnabled;
}

bool
RdmaNetDevice::IsPaused(uint32_t q) const
{
    return q < N_QUEUES && m_paused[q];
}

uint64_t
RdmaNetDevice::GetPfcPausesSent() const
{
    return m_pfcPausesSent;
}

uint64_t
RdmaNetDevice::GetPfcResumesSent() const
{
    return m_pfcResumesSent;
}

uint64_t
RdmaNetDevice::GetPfcPausesReceived() const
{
    return m_pfcPausesReceived;
}

uint64_t
RdmaNetDevice::GetPfcResumesReceived() const
{
    return m_pfcResumesReceived;
}

void
RdmaNetDevice::SetReceiveHandler(ReceiveHandler h)
{
    m_receiveHandler = h;
}

void
RdmaNetDevice::SetFrameReceiveHandler(FrameReceiveHandler h)
{
    m_frameReceiveHandler = h;
    m_frameReceive =
        h.IsNull() ? FrameReceiveHook()
                   : FrameReceiveHook::Of<RdmaNetDevice, &RdmaNetDevice::CallFrameReceiveHandler>(this);
}

void
RdmaNetDevice::SetDataSource(DataSource s)
{
    m_dataSourceHandler = s;
    m_dataSource = s.IsNull() ? DataSourceHook()
                              : DataSourceHook::Of<RdmaNetDevice, &RdmaNetDevice::CallDataSource>(this);
}

void
RdmaNetDevice::SetDequeueHandler(DequeueHandler h)
{
    m_dequeueHandler = h;
    m_dequeue = h.IsNull()
                    ? DequeueHook()
                    : DequeueHook::Of<RdmaNetDevice, &RdmaNetDevice::CallDequeueHandler>(this);
}

void
RdmaNetDevice::SetTransmitEndHandler(TransmitEndHandler h)
{
    m_transmitEndHandler = h;
    m_transmitEnd =
        h.IsNull() ? TransmitEndHook()
                   : TransmitEndHook::Of<RdmaNetDevice, &RdmaNetDevice::CallTransmitEndHandler>(this);
}

void
RdmaNetDevice::SetFrameReceiveHook(FrameReceiveHook h)
{
    m_frameReceive = h;
}

void
RdmaNetDevice::SetDataSourceHook(DataSourceHook h)
{
    m_dataSource = h;
}

void
RdmaNetDevice::SetDequeueHook(DequeueHook h)
{
    m_dequeue = h;
}

void
RdmaNetDevice::SetTransmitEndHook(TransmitEndHook h)
{
    m_transmitEnd = h;
}

void
RdmaNetDevice::CallFrameReceiveHandler(RdmaNetDevice& dev, RdmaFramePtr& f)
{
    m_frameReceiveHandler(&dev, f);
}

RdmaFramePtr
RdmaNetDevice::CallDataSource(RdmaNetDevice& dev)
{
    return m_dataSourceHandler(&dev);
}

void
RdmaNetDevice::CallDequeueHandler(RdmaNetDevice& dev, RdmaFrame& f, uint32_t q, uint32_t meta)
{
    m_dequeueHandler(&dev, f, q, meta);
}

void
RdmaNetDevice::CallTransmitEndHandler(RdmaNetDevice& dev,
                                      RdmaFrame* f,
                                      uint32_t sizeBytes,
                                      uint32_t q,
                                      uint32_t meta)
{
    m_transmitEndHandler(&dev, f, sizeBytes, q, meta);
}

DataRate
RdmaNetDevice::GetDataRate() const
{
    return m_rate;
}

uint64_t
RdmaNetDevice::GetQueueBytes(uint32_t q) const
{
    return q < N_QUEUES ? m_queues[q].bytes : 0;
}

uint64_t
RdmaNetDevice::GetTotalQueueBytes() const
{
    uint64_t s = 0;
    for (const PortQueue& q : m_queues)
    {
        s += q.bytes;
    }
    return s;
}

uint64_t
RdmaNetDevice::GetTxBytes() const
{
    return m_txBytes;
}

uint64_t
RdmaNetDevice::GetTxPackets() const
{
    return m_txPackets;
}

Ptr<RdmaChannel>
RdmaNetDevice::GetRdmaChannel() const
{
    return m_channel;
}

bool
RdmaNetDevice::IsBusy() const
{
    return m_busy;
}

void
RdmaNetDevice::SetIfIndex(const uint32_t index)
{
    m_ifIndex = index;
}

uint32_t
RdmaNetDevice::GetIfIndex() const
{
    return m_ifIndex;
}

Ptr<Channel>
RdmaNetDevice::GetChannel() const
{
    return m_channel;
}

void
RdmaNetDevice::SetAddress(Address address)
{
    m_address = Mac48Address::ConvertFrom(address);
}

Address
RdmaNetDevice::GetAddress() const
{
    return m_address;
}

bool
RdmaNetDevice::SetMtu(const uint16_t mtu)
{
    m_mtu = mtu;
    return true;
}

uint16_t
RdmaNetDevice::GetMtu() const
{
    return m_mtu;
}

bool
RdmaNetDevice::IsLinkUp() const
{
    return m_channel && !m_channel->IsDown();
}

void
RdmaNetDevice::AddLinkChangeCallback(Callback<void> /*callback*/)
{
}

bool
RdmaNetDevice::IsBroadcast() const
{
    return false;
}

Address
RdmaNetDevice::GetBroadcast() const
{
    return Mac48Address::GetBroadcast();
}

bool
RdmaNetDevice::IsMulticast() const
{
    return false;
}

Address
RdmaNetDevice::GetMulticast(Ipv4Address /*multicastGroup*/) const
{
    return Mac48Address::GetMulticast(Ipv4Address());
}

Address
RdmaNetDevice::GetMulticast(Ipv6Address addr) const
{
    return Mac48Address::GetMulticast(addr);
}

bool
RdmaNetDevice::IsBridge() const
{
    return false;
}

bool
RdmaNetDevice::IsPointToPoint() const
{
    return true;
}

bool
RdmaNetDevice::Send(Ptr<Packet> packet, const Address& /*dest*/, uint16_t /*protocolNumber*/)
{
    Enqueue(packet, 1);
    return true;
}

bool
RdmaNetDevice::SendFrom(Ptr<Packet> packet,
                        const Address& /*source*/,
                        const Address& dest,
                        uint16_t protocolNumber)
{
    return Send(packet, dest, protocolNumber);
}

Ptr<Node>
RdmaNetDevice::GetNode() const
{
    return m_node;
}

void
RdmaNetDevice::SetNode(Ptr<Node> node)
{
    m_node = node;
}

bool
RdmaNetDevice::NeedsArp() const
{
    return false;
}

void
RdmaNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback /*cb*/)
{
}

void
RdmaNetDevice::SetPromiscReceiveCallback(PromiscReceiveCallback /*cb*/)
{
}

bool
RdmaNetDevice::SupportsSendFrom() const
{
    return false;
}

} // namespace ns3
