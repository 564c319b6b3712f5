/*
 * rdma-lb: RdmaSwitch (the reference's routing and forwarding, as behaviour). Its load-balancer
 * role -- installing and serving the SwitchLb agent, held queues, control packets, counters -- is
 * rdma-switch-lb.cc's; the packet path here asks the agent for its verdicts and acts on them.
 */
#include "rdma-switch.h"

#include "rdma-header.h"
#include "rdma-int.h"
#include "rdma-net-device.h"
#include "rdma-node-role.h"

#include "rdma-channel.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/tag.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm> // std::find, std::upper_bound (ns-3.35 headers do not bring it in)

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaSwitch");
NS_OBJECT_ENSURE_REGISTERED(RdmaSwitch);

TypeId
RdmaSwitch::GetTypeId()
{
    // Defaults of the transport parameters: the table's (RdmaTransportDefault).
    static TypeId tid =
        TypeId("ns3::RdmaSwitch")
            .SetParent<Object>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaSwitch>()
            .AddTraceSource("Forward",
                            "A packet was forwarded: packet, ingress port, egress port",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_forwardTrace),
                            "ns3::RdmaSwitch::ForwardTracedCallback")
            .AddAttribute("Mmu",
                          "The shared-buffer MMU",
                          PointerValue(),
                          MakePointerAccessor(&RdmaSwitch::m_mmu),
                          MakePointerChecker<SwitchMmu>())
            .AddAttribute("PfcEnabled",
                          "Generate PFC pause/resume frames (ENABLE_PFC); off, the "
                          "egress dynamic threshold drops packets",
                          *RdmaTransportDefault("ns3::RdmaSwitch", "PfcEnabled"),
                          MakeBooleanAccessor(&RdmaSwitch::m_pfcEnabled),
                          MakeBooleanChecker())
            .AddAttribute("PauseTime",
                          "Pause time carried by PFC pause frames (PAUSE_TIME, whole "
                          "microseconds)",
                          *RdmaTransportDefault("ns3::RdmaSwitch", "PauseTime"),
                          MakeTimeAccessor(&RdmaSwitch::m_pauseTime),
                          MakeTimeChecker(MicroSeconds(1)))
            .AddAttribute("EcnEnabled",
                          "ECN marking at dequeue (ENABLE_QCN)",
                          *RdmaTransportDefault("ns3::RdmaSwitch", "EcnEnabled"),
                          MakeBooleanAccessor(&RdmaSwitch::m_ecnEnabled),
                          MakeBooleanChecker())
            .AddAttribute("EcnHostPorts",
                          "With EcnEnabled, whether ports facing a host mark too; false: only "
                          "fabric ports mark (htsim's ToR -> host queues with RCCC on: the "
                          "receiver's credit handles the last hop)",
                          BooleanValue(true),
                          MakeBooleanAccessor(&RdmaSwitch::m_ecnHostPorts),
                          MakeBooleanChecker())
            .AddAttribute("IntEnabled",
                          "HPCC in-band telemetry: every data packet that "
                          "carries INT gets a record of its egress port at dequeue (time, "
                          "bytes sent before it, bytes queued after it, line rate). The "
                          "reference pushes records when CC_MODE is 3",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaSwitch::m_intEnabled),
                          MakeBooleanChecker())
            .AddAttribute("IntMulti",
                          "INT_MULTI: multiplies the INT byte (128 B) and queue (80 B) units",
                          *RdmaTransportDefault("ns3::RdmaSwitch", "IntMulti"),
                          MakeUintegerAccessor(&RdmaSwitch::m_intMulti),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("EcnKmin",
                          "Egress shared bytes above which packets may be marked (KMIN; "
                          "100 KB for 100 Gbps ports)",
                          UintegerValue(100000),
                          MakeUintegerAccessor(&RdmaSwitch::m_kmin),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("EcnKmax",
                          "Egress shared bytes above which every packet is marked (KMAX; "
                          "400 KB for 100 Gbps ports)",
                          UintegerValue(400000),
                          MakeUintegerAccessor(&RdmaSwitch::m_kmax),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("EcnPmax",
                          "Marking probability reached at EcnKmax (PMAX; 0.2 for 100 Gbps)",
                          DoubleValue(0.2),
                          MakeDoubleAccessor(&RdmaSwitch::m_pmax),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("EcnSharedStream",
                          "Reference quirk ecn-shared-stream: AssignStreams gives "
                          "the ECN-marking variable ns-3's user stream 0 at every switch, as the "
                          "reference's MMU does, so every switch draws the same sequence. "
                          "false = a stream of its own per switch",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaSwitch::m_ecnSharedStream),
                          MakeBooleanChecker())
            .AddAttribute("WithdrawFailedPorts",
                          "Withdraw a port whose link is down from the candidate lists, and "
                          "every route whose next hop lost its way to the destination "
                          "(NotifyDeadRoutes: the fabric helper tells every switch after each "
                          "link state change) -- WithdrawDelay after the failure; restored the "
                          "same delay after repair. Off: routing does not react to link faults",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaSwitch::m_withdrawFailed),
                          MakeBooleanChecker())
            .AddAttribute("WithdrawDelay",
                          "Delay between a link state change and the routing reaction",
                          TimeValue(MicroSeconds(10)),
                          MakeTimeAccessor(&RdmaSwitch::m_withdrawDelay),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("PayloadSize",
                          "Payload bytes per data packet: the load balancer sees PSN = byte "
                          "offset / PayloadSize (must equal the NICs' PayloadSize)",
                          UintegerValue(1000),
                          MakeUintegerAccessor(&RdmaSwitch::m_payloadBytes),
                          MakeUintegerChecker<uint32_t>(1, 9000))
            .AddAttribute("PathIndexRouting",
                          "Deterministic path-index routing: with n equal-cost candidates take "
                          "candidate (entropy / PathIndexDivisor) mod n instead of asking the "
                          "load balancer, so an entropy names a path (as Themis' PathMap needs in "
                          "the upper tiers of a 3-tier Themis fabric)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaSwitch::m_pathIndexRouting),
                          MakeBooleanChecker())
            .AddAttribute("PathIndexDivisor",
                          "Divisor of the entropy under PathIndexRouting (1 at the first tier "
                          "that reads the entropy; the product of the fan-outs of the tiers "
                          "below it above that)",
                          UintegerValue(1),
                          MakeUintegerAccessor(&RdmaSwitch::m_pathIndexDivisor),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("DataQueueLimit",
                          "Bytes a data queue of one egress port may hold beyond which arriving "
                          "data is refused (trimmed or dropped); 0 = only the MMU decides "
                          "(uet transport: htsim's per-port queue, -q packets)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RdmaSwitch::m_dataQueueLimit),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("QueueRelease",
                          "When a port lets go of a data packet it sends: start, when its "
                          "transmission starts (it leaves the MMU's and DataQueueLimit's "
                          "occupancy and is ECN-marked then, from the packets behind it); end, "
                          "when its last bit has left (it counts in the occupancy that trims, "
                          "drops and marks until then, and is marked then from the packets "
                          "waiting behind it: the UEC htsim's CompositeQueue)",
                          EnumValue(RdmaSwitch::RELEASE_AT_START),
                          MakeEnumAccessor(&RdmaSwitch::SetQueueRelease,
                                           &RdmaSwitch::GetQueueRelease),
                          MakeEnumChecker(RdmaSwitch::RELEASE_AT_START,
                                          "start",
                                          RdmaSwitch::RELEASE_AT_END,
                                          "end"))
            .AddAttribute("AckHighPriority",
                          "ACKs and NACKs in the highest-priority queue, outside the MMU (the "
                          "reference; SimAI's ACK_HIGH_PRIO 1); false: in their flow's data "
                          "queue (their pg), admitted by the MMU as data, as SimAI's "
                          "ACK_HIGH_PRIO 0. A load balancer's control packets stay high",
                          *RdmaTransportDefault("ns3::RdmaSwitch", "AckHighPriority"),
                          MakeBooleanAccessor(&RdmaSwitch::m_ackHighPriority),
                          MakeBooleanChecker())
            .AddAttribute("TrimEnabled",
                          "Packet trimming (uet transport): data refused by DataQueueLimit or "
                          "the MMU loses its payload and its header (TrimmedSize bytes, "
                          "FLAG_TRIMMED) goes on in the highest-priority queue, so that the "
                          "receiver NACKs it at once (htsim CompositeQueue)",
                          *RdmaTransportDefault("ns3::RdmaSwitch", "TrimEnabled"),
                          MakeBooleanAccessor(&RdmaSwitch::m_trimEnabled),
                          MakeBooleanChecker())
            .AddAttribute("TrimNewestProbability",
                          "When DataQueueLimit refuses an arriving data packet (trimming on), "
                          "the probability that the newest data packet waiting in that queue "
                          "is trimmed instead and the arrival is queued (the UEC htsim's "
                          "CompositeQueue::receivePacket: 0.5); 0: the arrival is trimmed",
                          DoubleValue(0.0),
                          MakeDoubleAccessor(&RdmaSwitch::m_trimNewestProb),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("TrimmedSize",
                          "Wire bytes of a trimmed packet (htsim 64)",
                          *RdmaTransportDefault("ns3::RdmaSwitch", "TrimmedSize"),
                          MakeUintegerAccessor(&RdmaSwitch::m_trimmedBytes),
                          MakeUintegerChecker<uint32_t>(RdmaHeader::DATA_HEADER_BYTES, 512))
            .AddTraceSource("Trim",
                            "A data packet was trimmed: the trimmed packet (header only), "
                            "egress port",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_trimTrace),
                            "ns3::RdmaSwitch::TrimTracedCallback")
            .AddTraceSource("LbDrop",
                            "The load balancer dropped or consumed a packet (a blocked NACK, a "
                            "control packet for this switch): the packet, its ingress port",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_lbDropTrace),
                            "ns3::RdmaSwitch::LbDropTracedCallback")
            .AddTraceSource("NackBlocked",
                            "The load balancer blocked a NACK from a host (Themis-D): the NACK, "
                            "the host port",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_nackBlockedTrace),
                            "ns3::RdmaSwitch::NackBlockedTracedCallback")
            .AddTraceSource("NackCompensation",
                            "The switch sent a NACK on a receiver's behalf (Themis NACK "
                            "compensation): sender, receiver, queue pair, ePSN",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_compensationTrace),
                            "ns3::RdmaSwitch::NackCompensationTracedCallback")
            .AddTraceSource("Drop",
                            "A packet was dropped (no route, or refused by the MMU)",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_dropTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("BufferDrop",
                            "The MMU refused a packet: packet, ingress port, egress port, queue",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_bufferDropTrace),
                            "ns3::RdmaSwitch::BufferDropTracedCallback")
            .AddTraceSource("EcnMark",
                            "A data packet was ECN-marked at dequeue: egress port, queue, egress "
                            "shared bytes of the queue",
                            MakeTraceSourceAccessor(&RdmaSwitch::m_ecnMarkTrace),
                            "ns3::RdmaSwitch::EcnMarkTracedCallback");
    return tid;
}

RdmaSwitch::RdmaSwitch()
    : m_rng(CreateObject<UniformRandomVariable>()),
      m_mmu(CreateObject<SwitchMmu>()),
      m_ecnRng(CreateObject<UniformRandomVariable>())
{
}

RdmaSwitch::~RdmaSwitch() = default;

void
RdmaSwitch::DoDispose()
{
    m_ports.clear();
    m_portOfIf.clear();
    m_endpoint = RdmaNetDevice::FrameReceiveHook();
    Simulator::Cancel(m_lbTimer);
    m_agent.reset();
    m_held.clear();
    m_lbConfig = nullptr;
    m_mmu = nullptr;
    Object::DoDispose();
}

uint32_t
RdmaSwitch::AddPort(Ptr<RdmaNetDevice> dev)
{
    uint32_t i = static_cast<uint32_t>(m_ports.size());
    m_ports.push_back(dev);
    const uint32_t ifIndex = dev->GetIfIndex();
    if (ifIndex >= m_portOfIf.size())
    {
        m_portOfIf.resize(ifIndex + 1, NO_PORT);
    }
    NS_ABORT_MSG_IF(m_portOfIf[ifIndex] != NO_PORT,
                    "RdmaSwitch::AddPort: two ports with interface index "
                        << ifIndex << " (add each device to its node before AddPort)");
    m_portOfIf[ifIndex] = i;
    m_drops.push_back(0);
    m_ecnMarks.push_back(0);
    m_remotePaused.push_back({});
    m_withdrawn.push_back(false);
    m_hostPort.push_back(false);
    dev->SetFrameReceiveHook(
        RdmaNetDevice::FrameReceiveHook::Of<RdmaSwitch, &RdmaSwitch::Receive>(this));
    dev->SetDequeueHook(RdmaNetDevice::DequeueHook::Of<RdmaSwitch, &RdmaSwitch::Dequeued>(this));
    dev->SetTransmitEndHook(TransmitEndHookFor(m_queueRelease));
    return i;
}

RdmaNetDevice::TransmitEndHook
RdmaSwitch::TransmitEndHookFor(uint32_t release)
{
    return release == RELEASE_AT_END
               ? RdmaNetDevice::TransmitEndHook::Of<RdmaSwitch, &RdmaSwitch::TransmitEnded>(this)
               : RdmaNetDevice::TransmitEndHook();
}

uint32_t
RdmaSwitch::GetQueueRelease() const
{
    return m_queueRelease;
}

void
RdmaSwitch::SetQueueRelease(uint32_t release)
{
    m_queueRelease = release;
    for (const auto& dev : m_ports)
    {
        dev->SetTransmitEndHook(TransmitEndHookFor(release));
    }
}

Ptr<RdmaNetDevice>
RdmaSwitch::GetPort(uint32_t i) const
{
    return m_ports.at(i);
}

uint32_t
RdmaSwitch::GetNPorts() const
{
    return static_cast<uint32_t>(m_ports.size());
}

void
RdmaSwitch::AddRoute(uint32_t dip, uint32_t port)
{
    auto add = [port](std::vector<uint32_t>& v) {
        if (std::find(v.begin(), v.end(), port) == v.end())
        {
            v.insert(std::upper_bound(v.begin(), v.end(), port), port);
        }
    };
    const uint32_t id = RdmaHostId(dip);
    if (RdmaHostAddress(id) != dip)
    {
        add(m_routes[dip]);
        return;
    }
    if (id >= m_routeIndex.size())
    {
        m_routeIndex.resize(id + 1, NO_ROUTE);
    }
    const uint32_t from = m_routeIndex[id];
    const uint64_t step = (static_cast<uint64_t>(from == NO_ROUTE ? 0 : from + 1) << 32) | port;
    auto known = m_routeSteps.find(step);
    if (known != m_routeSteps.end())
    {
        m_routeIndex[id] = known->second;
        return;
    }
    std::vector<uint32_t> list;
    if (from != NO_ROUTE)
    {
        list = m_routeLists[from];
    }
    add(list);
    auto [it, added] = m_routeListIds.emplace(list, static_cast<uint32_t>(m_routeLists.size()));
    if (added)
    {
        m_routeLists.push_back(list);
    }
    m_routeSteps.emplace(step, it->second);
    m_routeIndex[id] = it->second;
}


void
RdmaSwitch::AddRoutes(const std::vector<uint32_t>& dips, const std::vector<uint32_t>& ports)
{
    bool known = false;
    uint32_t lastFrom = NO_ROUTE;
    uint32_t lastTo = NO_ROUTE;
    for (uint32_t dip : dips)
    {
        const uint32_t id = RdmaHostId(dip);
        const bool host = RdmaHostAddress(id) == dip;
        const uint32_t from = host && id < m_routeIndex.size() ? m_routeIndex[id] : NO_ROUTE;
        if (host && known && from == lastFrom)
        {
            if (id >= m_routeIndex.size())
            {
                m_routeIndex.resize(id + 1, NO_ROUTE);
            }
            m_routeIndex[id] = lastTo; // the same list plus the same ports
            continue;
        }
        for (uint32_t port : ports)
        {
            AddRoute(dip, port);
        }
        if (host)
        {
            known = true;
            lastFrom = from;
            lastTo = m_routeIndex[id];
        }
    }
}

void
RdmaSwitch::CompactRoutes()
{
    std::vector<uint32_t> remap(m_routeLists.size(), NO_ROUTE);
    std::vector<std::vector<uint32_t>> lists;
    for (uint32_t& k : m_routeIndex)
    {
        if (k == NO_ROUTE)
        {
            continue;
        }
        if (remap[k] == NO_ROUTE)
        {
            remap[k] = static_cast<uint32_t>(lists.size());
            lists.push_back(m_routeLists[k]);
        }
        k = remap[k];
    }
    m_routeLists = std::move(lists);
    m_routeSteps = {};
    m_routeListIds.clear();
    for (uint32_t i = 0; i < m_routeLists.size(); ++i)
    {
        m_routeListIds.emplace(m_routeLists[i], i);
    }
}

const std::vector<uint32_t>&
RdmaSwitch::GetRoutes(uint32_t dip) const
{
    static const std::vector<uint32_t> none;
    const uint32_t id = RdmaHostId(dip);
    if (id < m_routeIndex.size() && RdmaHostAddress(id) == dip)
    {
        const uint32_t k = m_routeIndex[id];
        return k == NO_ROUTE ? none : m_routeLists[k];
    }
    auto it = m_routes.find(dip);
    return it == m_routes.end() ? none : it->second;
}

void
RdmaSwitch::SetPortQueueScale(uint32_t port, double scale)
{
    NS_ABORT_MSG_IF(port >= m_ports.size() || !(scale > 0),
                    "RdmaSwitch: bad queue scale " << scale << " for port " << port);
    m_portQueueScale.resize(m_ports.size(), 1.0);
    m_portQueueScale[port] = scale;
}

uint64_t
RdmaSwitch::ScaledForPort(uint32_t port, uint64_t bytes) const
{
    if (port >= m_portQueueScale.size()) // no scale set on this switch (the usual case)
    {
        return bytes;
    }
    return static_cast<uint64_t>(static_cast<double>(bytes) * m_portQueueScale[port]);
}

void
RdmaSwitch::SetSwitchId(uint32_t switchId)
{
    m_switchId = switchId;
}

uint32_t
RdmaSwitch::GetSwitchId() const
{
    return m_switchId;
}

int64_t
RdmaSwitch::AssignStreams(int64_t stream)
{
    m_rng->SetStream(stream);
    // Quirk ecn-shared-stream: the reference's MMU draws from user stream 0 at every switch,
    // so all switches see the same sequence of numbers, each advancing its own.
    m_ecnRng->SetStream(m_ecnSharedStream ? 0 : stream + 1);
    if (m_lbConfig)
    {
        // Re-seed the agent from the newly assigned stream.
        InstallAgent(DrawLbSeed(m_rng));
    }
    // The trim coin (TrimNewestProbability) is seeded last, so that the draws above, and the
    // streams of every other object, are those of a run without it.
    m_trimCoinState = m_rng->GetInteger();
    return 2;
}

Ptr<SwitchMmu>
RdmaSwitch::GetMmu() const
{
    return m_mmu;
}

void
RdmaSwitch::ConfigureMmu()
{
    std::vector<uint64_t> headroom;
    for (const auto& dev : m_ports)
    {
        Ptr<RdmaChannel> ch = dev->GetRdmaChannel();
        Time delay = ch ? ch->GetDelay() : Time(0);
        headroom.push_back(SwitchMmu::ComputeHeadroom(dev->GetDataRate().GetBitRate(), delay));
    }
    m_mmu->Configure(headroom);
}

uint64_t
RdmaSwitch::GetPortDrops(uint32_t port) const
{
    return m_drops.at(port);
}

uint64_t
RdmaSwitch::GetPortEcnMarks(uint32_t port) const
{
    return m_ecnMarks.at(port);
}

uint64_t
RdmaSwitch::GetForwardedPackets() const
{
    return m_forwarded;
}

uint64_t
RdmaSwitch::GetTotalDrops() const
{
    uint64_t s = 0;
    for (uint64_t d : m_drops)
    {
        s += d;
    }
    return s;
}

uint64_t
RdmaSwitch::GetTotalTrims() const
{
    return m_trims;
}

uint64_t
RdmaSwitch::GetTotalEcnMarks() const
{
    uint64_t s = 0;
    for (uint64_t m : m_ecnMarks)
    {
        s += m;
    }
    return s;
}

uint64_t
RdmaSwitch::GetTotalPausesSent() const
{
    uint64_t s = 0;
    for (const auto& dev : m_ports)
    {
        s += dev->GetPfcPausesSent();
    }
    return s;
}

bool
RdmaSwitch::IsPortWithdrawn(uint32_t port) const
{
    return m_withdrawn.at(port);
}

void
RdmaSwitch::NotifyLinkState(uint32_t port, bool down)
{
    NS_LOG_INFO("switch " << m_switchId << ": link of port " << port << (down ? " down" : " up"));
    if (m_withdrawFailed)
    {
        Simulator::Schedule(m_withdrawDelay, &RdmaSwitch::SetPortWithdrawn, this, port, down);
    }
    Simulator::Schedule(m_withdrawDelay, &RdmaSwitch::ApplyLbLinkState, this, port, false, down);
}

void
RdmaSwitch::NotifyRemoteLinkState(bool down)
{
    NS_LOG_INFO("switch " << m_switchId << ": a remote link went " << (down ? "down" : "up"));
    Simulator::Schedule(m_withdrawDelay, &RdmaSwitch::ApplyLbLinkState, this, 0, true, down);
}

void
RdmaSwitch::NotifyDeadRoutes(std::vector<std::pair<uint32_t, uint32_t>> dead)
{
    if (m_withdrawFailed)
    {
        Simulator::Schedule(m_withdrawDelay, &RdmaSwitch::SetDeadRoutes, this, std::move(dead));
    }
}

void
RdmaSwitch::SetDeadRoutes(std::vector<std::pair<uint32_t, uint32_t>> dead)
{
    NS_LOG_INFO("switch " << m_switchId << ": " << dead.size() << " routes withdrawn");
    m_deadRoutes = std::set<std::pair<uint32_t, uint32_t>>(dead.begin(), dead.end());
}

bool
RdmaSwitch::IsRouteWithdrawn(uint32_t dip, uint32_t port) const
{
    return m_withdrawn.at(port) || m_deadRoutes.count({dip, port}) != 0;
}

void
RdmaSwitch::SetPortWithdrawn(uint32_t port, bool withdrawn)
{
    if (m_withdrawn.at(port) == withdrawn)
    {
        return;
    }
    NS_LOG_INFO("switch " << m_switchId << ": port " << port
                          << (withdrawn ? " withdrawn from" : " restored to")
                          << " the candidate lists");
    m_withdrawn[port] = withdrawn;
    m_nWithdrawn += withdrawn ? 1 : static_cast<uint32_t>(-1);
}

void
RdmaSwitch::CheckPfc(uint32_t in, uint32_t arrivingCls)
{
    for (uint32_t k = 1; k < RdmaNetDevice::N_QUEUES; ++k)
    {
        if (m_mmu->ShouldPause(in, k, arrivingCls))
        {
            NS_LOG_LOGIC("switch " << m_switchId << ": pause port " << in << " class " << k);
            m_ports[in]->SendPfc(k,
                                 static_cast<uint32_t>(m_pauseTime.GetMicroSeconds()),
                                 static_cast<uint32_t>(m_mmu->GetIngressBytes(in, k)));
            m_mmu->SetPaused(in, k, m_pauseTime);
            m_remotePaused[in][k] = true;
        }
    }
    for (uint32_t k = 1; k < RdmaNetDevice::N_QUEUES; ++k)
    {
        CheckResume(in, k);
    }
}

void
RdmaSwitch::CheckResume(uint32_t in, uint32_t k)
{
    if (!m_remotePaused[in][k])
    {
        return;
    }
    if (!m_mmu->IsPaused(in, k))
    {
        m_remotePaused[in][k] = false; // the pause expired by itself
        return;
    }
    if (m_mmu->ShouldResume(in, k))
    {
        NS_LOG_LOGIC("switch " << m_switchId << ": resume port " << in << " class " << k);
        m_ports[in]->SendPfc(k, 0, static_cast<uint32_t>(m_mmu->GetIngressBytes(in, k)));
        m_mmu->ClearPaused(in, k);
        m_remotePaused[in][k] = false;
    }
}

void
RdmaSwitch::Dequeued(RdmaNetDevice& dev, RdmaFrame& f, uint32_t q, uint32_t in)
{
    ++m_forwarded;
    if (q == 0)
    {
        return; // control traffic bypasses the MMU
    }
    if (in == RdmaNetDevice::NO_META)
    {
        if (m_intEnabled)
        {
            PushInt(dev, f.header);
        }
        return; // not admitted by this switch's MMU
    }
    const uint32_t out = m_portOfIf[dev.GetIfIndex()];
    const uint32_t size = f.sizeBytes;
    const bool atEnd = m_queueRelease == RELEASE_AT_END;
    if (!atEnd)
    {
        m_mmu->RemoveFromIngressAdmission(in, q, size);
        m_mmu->RemoveFromEgressAdmission(out, q, size);
    }
    if (m_agentEgress)
    {
        const RdmaHeader& h = f.header;
        if ((h.flags & RdmaHeader::FLAG_PROBE) == 0 || h.type != RdmaHeader::DATA)
        {
            m_agent->OnEgress(Simulator::Now(), MakeInfo(h, in, size, false), f.lbTag, out);
            ServeAgent(true); // inside the port's transmit path: control goes out as events
        }
    }
    if (!atEnd)
    {
        MarkEcn(out, &f, q);
        if (m_pfcEnabled)
        {
            CheckResume(in, q);
        }
    }
    if (m_intEnabled)
    {
        PushInt(dev, f.header); // after ECN marking and the resume check, as the reference
    }
}

void
RdmaSwitch::TransmitEnded(RdmaNetDevice& dev,
                          RdmaFrame* f,
                          uint32_t sizeBytes,
                          uint32_t q,
                          uint32_t in)
{
    if (q == 0 || in == RdmaNetDevice::NO_META)
    {
        return; // control traffic and packets this MMU did not admit: done at the start
    }
    const uint32_t out = m_portOfIf[dev.GetIfIndex()];
    NS_LOG_LOGIC("switch " << m_switchId << ": port " << out << " queue " << q << " sent "
                           << sizeBytes << " B" << (f ? "" : " (lost on the link)"));
    m_mmu->RemoveFromIngressAdmission(in, q, sizeBytes);
    m_mmu->RemoveFromEgressAdmission(out, q, sizeBytes);
    MarkEcn(out, f, q);
    if (m_pfcEnabled)
    {
        CheckResume(in, q);
    }
}

void
RdmaSwitch::MarkEcn(uint32_t out, RdmaFrame* f, uint32_t q)
{
    if (!m_ecnEnabled || (!m_ecnHostPorts && FacesHost(out)))
    {
        return;
    }
    const uint64_t shared = m_mmu->GetEgressSharedBytes(out, q);
    const uint64_t kmin = ScaledForPort(out, m_kmin);
    const uint64_t kmax = ScaledForPort(out, m_kmax);
    bool mark = false;
    if (shared > kmax)
    {
        mark = true;
    }
    else if (shared > kmin && kmin != kmax)
    {
        const double prob =
            static_cast<double>(shared - kmin) / static_cast<double>(kmax - kmin) * m_pmax;
        mark = m_ecnRng->GetValue() < prob;
    }
    if (mark && f != nullptr && f->header.type == RdmaHeader::DATA)
    {
        f->header.ecn = 3;
        ++m_ecnMarks[out];
        m_ecnMarkTrace(out, q, shared);
    }
}

void
RdmaSwitch::PushInt(const RdmaNetDevice& dev, RdmaHeader& h)
{
    if (h.type != RdmaHeader::DATA || h.intMode != RdmaHeader::INT_HPCC)
    {
        return;
    }
    // The port's bytes sent before this packet (its own count is added when it starts) and
    // the bytes still queued over every class after it left.
    h.intHop[h.intNHop % RdmaIntHop::MAX_HOPS] =
        RdmaIntHop::Pack(static_cast<uint64_t>(Simulator::Now().GetNanoSeconds()),
                         dev.GetTxBytes(), dev.GetTotalQueueBytes(),
                         dev.GetDataRate().GetBitRate(), m_intMulti);
    ++h.intNHop;
}

void
RdmaSwitch::Receive(RdmaNetDevice& dev, RdmaFramePtr& f)
{
    if (m_endpoint && f->header.dip == m_endpointAddress)
    {
        m_endpoint(dev, f); // for this switch's own NIC: not switched, no MMU
        return;
    }
    Route(std::move(f), m_portOfIf[dev.GetIfIndex()], false, true);
}

void
RdmaSwitch::SetEndpoint(RdmaNetDevice::FrameReceiveHook nic, uint32_t address)
{
    m_endpoint = nic;
    m_endpointAddress = address;
}

void
RdmaSwitch::Route(RdmaFramePtr f, uint32_t in, bool local, bool useAgent)
{
    RdmaHeader& h = f->header;
    const std::vector<uint32_t>* candidates = &GetRoutes(h.dip);
    if (m_nWithdrawn != 0 || !m_deadRoutes.empty())
    {
        m_liveRoutes.clear();
        for (uint32_t port : *candidates)
        {
            if (!m_withdrawn[port] && m_deadRoutes.count({h.dip, port}) == 0)
            {
                m_liveRoutes.push_back(port);
            }
        }
        candidates = &m_liveRoutes;
    }
    const std::vector<uint32_t>& routes = *candidates;
    if (routes.empty())
    {
        NS_LOG_WARN("switch " << m_switchId << ": no route to " << h.dip << ", dropped");
        m_dropTrace(*f);
        return;
    }
    uint32_t out = routes.front();
    const bool multi = routes.size() > 1;
    if (useAgent && (m_agentAll || (multi && !m_pathIndexRouting)))
    {
        NS_ABORT_MSG_IF(!m_agent, "RdmaSwitch: no load balancer installed");
        // Written in place: a candidate built aside and copied in stalled on its own stores.
        m_candidates.resize(routes.size());
        for (size_t k = 0; k < routes.size(); ++k)
        {
            LbEgressCandidate& c = m_candidates[k];
            c.port = routes[k];
            if (m_agentLoad)
            {
                const RdmaNetDevice& d = *m_ports[c.port];
                c.queueBytes = d.GetTotalQueueBytes();
                c.txBytes = d.GetTxBytes();
            }
            else
            {
                c.queueBytes = 0; // spares reading each port's counters
                c.txBytes = 0;
            }
        }
        // An agent that sees every packet reads the tag it carries; the others start from
        // none (and their tag, if they set one, replaces the packet's).
        LbTagData tag = m_agentAll ? f->lbTag : LbTagData();
        const LbTagData before = tag;
        LbVerdict v = m_agent->OnIngress(Simulator::Now(),
                                         MakeInfo(h, in, f->sizeBytes, local),
                                         &tag,
                                         m_candidates);
        if (tag.present != before.present || tag.words != before.words)
        {
            f->lbTag = tag.present ? tag : LbTagData(); // a removed tag leaves no words
        }
        if (v.kind == LbVerdictKind::FORWARD)
        {
            // Resolved before the agent is served: its control packets are routed at once
            // (SendControl -> Route), which refills m_liveRoutes when routes are withdrawn.
            out = routes[v.index];
            if (v.rewriteEntropy && h.type == RdmaHeader::DATA)
            {
                h.sport = v.entropy;
            }
            if (multi && m_pathIndexRouting)
            {
                out = routes[(h.sport / m_pathIndexDivisor) % routes.size()];
            }
        }
        if (m_agentAll)
        {
            ServeAgent(false);
        }
        switch (v.kind)
        {
        case LbVerdictKind::DROP:
            if (h.type == RdmaHeader::NACK && m_hostPort[in] && !local &&
                (h.flags & RdmaHeader::FLAG_LB_CONTROL) == 0)
            {
                NS_LOG_LOGIC("switch " << m_switchId << ": NACK from port " << in << " blocked");
                m_nackBlockedTrace(*f, in);
            }
            m_lbDropTrace(*f, in);
            return;
        case LbVerdictKind::HOLD:
            m_held[v.queue].emplace_back(std::move(f), in);
            ++m_heldPackets;
            return;
        case LbVerdictKind::FORWARD:
            break;
        }
    }
    else if (multi && m_pathIndexRouting)
    {
        out = routes[(h.sport / m_pathIndexDivisor) % routes.size()];
    }
    Forward(std::move(f), in, out);
}

void
RdmaSwitch::Forward(RdmaFramePtr f, uint32_t in, uint32_t out)
{
    const RdmaHeader& h = f->header;
    // A trimmed header keeps the highest priority, outside the MMU, at every hop (TrimEnabled).
    const bool data = h.type == RdmaHeader::DATA && (h.flags & RdmaHeader::FLAG_TRIMMED) == 0;
    // AckHighPriority false (SimAI's ACK_HIGH_PRIO 0): ACKs and NACKs share their flow's queue.
    const bool ackAsData = !m_ackHighPriority &&
                           (h.type == RdmaHeader::ACK || h.type == RdmaHeader::NACK) &&
                           (h.flags & RdmaHeader::FLAG_LB_CONTROL) == 0;
    uint32_t queue = data || ackAsData ? h.pg : 0;
    if (queue != 0)
    {
        if (!m_mmu->IsConfigured())
        {
            ConfigureMmu();
        }
        const uint32_t size = f->sizeBytes;
        const uint64_t limit = ScaledForPort(out, m_dataQueueLimit);
        const bool overLimit = limit != 0 && m_mmu->GetEgressBytes(out, queue) + size > limit;
        auto admitted = [&]() {
            return m_mmu->CheckEgressAdmission(out, queue, size) &&
                   m_mmu->CheckIngressAdmission(in, queue, size);
        };
        bool refused = overLimit || !admitted();
        const bool trimmable =
            refused && m_trimEnabled && data && (h.flags & RdmaHeader::FLAG_PROBE) == 0;
        // htsim's CompositeQueue: a full queue trims the arrival or, on its coin, the newest
        // packet queued, and then takes the arrival.
        if (trimmable && overLimit && m_trimNewestProb > 0 && TrimCoin() < m_trimNewestProb &&
            TrimNewest(out, queue))
        {
            refused = !admitted();
        }
        if (refused)
        {
            if (trimmable)
            {
                Trim(out, h); // the payload is dropped; its header goes on
                return;
            }
            NS_LOG_LOGIC("switch " << m_switchId << ": MMU drop, in " << in << " out " << out
                                   << " queue " << queue);
            ++m_drops[out];
            m_bufferDropTrace(*f, in, out, queue);
            m_dropTrace(*f);
            return;
        }
        m_mmu->UpdateIngressAdmission(in, queue, size);
        m_mmu->UpdateEgressAdmission(out, queue, size);
        if (m_pfcEnabled)
        {
            CheckPfc(in, queue);
        }
    }
    m_forwardTrace(*f, in, out);
    // An admitted packet's ingress port travels beside it in the port queue (the reference
    // keeps it in a packet tag); Dequeued releases its MMU charge with it.
    m_ports[out]->Enqueue(std::move(f), queue, queue != 0 ? in : RdmaNetDevice::NO_META);
}

double
RdmaSwitch::TrimCoin()
{
    // splitmix64
    uint64_t z = (m_trimCoinState += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
}

bool
RdmaSwitch::TrimNewest(uint32_t out, uint32_t q)
{
    uint32_t in = RdmaNetDevice::NO_META;
    RdmaFramePtr f = m_ports[out]->PopNewest(q, in);
    if (!f)
    {
        return false;
    }
    const RdmaHeader& h = f->header;
    const uint32_t notData = RdmaHeader::FLAG_TRIMMED | RdmaHeader::FLAG_PROBE;
    if (h.type != RdmaHeader::DATA || (h.flags & notData) != 0)
    {
        m_ports[out]->Enqueue(std::move(f), q, in); // not data to trim: back where it was
        return false;
    }
    if (in != RdmaNetDevice::NO_META)
    {
        m_mmu->RemoveFromIngressAdmission(in, q, f->sizeBytes);
        m_mmu->RemoveFromEgressAdmission(out, q, f->sizeBytes);
        if (m_pfcEnabled)
        {
            CheckResume(in, q);
        }
    }
    Trim(out, h);
    return true;
}

bool
RdmaSwitch::FacesHost(uint32_t port)
{
    if (m_facesHost.empty())
    {
        m_facesHost.resize(m_ports.size(), false);
        for (uint32_t i = 0; i < m_ports.size(); ++i)
        {
            Ptr<RdmaChannel> ch = m_ports[i]->GetRdmaChannel();
            Ptr<RdmaNetDevice> peer = ch ? ch->GetPeer(m_ports[i]) : nullptr;
            m_facesHost[i] = peer && RdmaNodeIsHost(peer->GetNode());
        }
    }
    return m_facesHost[port];
}

void
RdmaSwitch::Trim(uint32_t out, const RdmaHeader& h)
{
    RdmaHeader t = h;
    t.flags |= RdmaHeader::FLAG_TRIMMED;
    if (FacesHost(out))
    {
        t.flags |= RdmaHeader::FLAG_LAST_HOP; // the NACK says so (htsim's last_hop)
    }
    RdmaFramePtr header = RdmaFrame::Make(t, m_trimmedBytes - RdmaHeader::DATA_HEADER_BYTES);
    ++m_trims;
    NS_LOG_LOGIC("switch " << m_switchId << ": trim " << h.seq << " to port " << out);
    m_trimTrace(*header, out);
    m_ports[out]->Enqueue(std::move(header), 0); // the highest priority, outside the MMU as control
}

} // namespace ns3
