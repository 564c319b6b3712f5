/*
 * rdma-lb: forwarding from the plain C++ API of rdma-lb-bridge.h to the cxx bridge.
 * The only file of the module that includes cxx headers.
 */
#include "rdma-lb-bridge.h"

#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/fatal-error.h"
#include "ns3/log.h"
#include "ns3/object-factory.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include "rust/cxx.h"
#include "rdma-lb-bridge/src/lib.rs.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaLbBridge");

namespace rb = ::rdmalb::bridge;

namespace
{
/// Nanoseconds of \p t. With ns-3's default nanosecond resolution this is the raw time step;
/// the general conversion (Time::GetNanoSeconds) costs ~30 ns in a logging build of ns-3,
/// more than the Rust decision itself, so the per-packet path avoids it.
uint64_t
ToNs(Time t)
{
    static const bool nsResolution = Time::GetResolution() == Time::NS;
    return static_cast<uint64_t>(nsResolution ? t.GetTimeStep() : t.GetNanoSeconds());
}

/// The Time of \p ns nanoseconds (see ToNs).
Time
FromNs(uint64_t ns)
{
    static const bool nsResolution = Time::GetResolution() == Time::NS;
    return nsResolution ? Time(static_cast<int64_t>(ns)) : NanoSeconds(static_cast<int64_t>(ns));
}
} // namespace

struct LbConfig::Impl
{
    rust::Box<rb::LbConfig> cfg;
};

struct SimAiEndToEndReport::Impl
{
    rust::Box<rb::SimAiReport> report;
};

struct HostLbGroup::Impl
{
    rust::Box<rb::HostLbGroup> group;
};

struct QpPathSelector::Impl
{
    rust::Box<rb::HostLb> lb;
};

struct SwitchLbAgent::Impl
{
    rust::Box<rb::SwitchLb> lb;
    std::vector<rb::EgressCandidate> scratch; //!< reused per packet: no allocation per packet
};

uint64_t
DrawLbSeed(Ptr<UniformRandomVariable> rng)
{
    const uint32_t top = 0xFFFFFFFEu;
    uint64_t hi = rng->GetInteger(0, top);
    return (hi << 32) | rng->GetInteger(0, top);
}

LbConfig::LbConfig(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{
}

LbConfig::~LbConfig() = default;

Ptr<LbConfig>
LbConfig::Parse(const std::string& algorithm, const std::string& params, std::string* error)
{
    try
    {
        auto cfg = rb::new_lb_config(algorithm, params);
        return Ptr<LbConfig>(new LbConfig(std::make_unique<Impl>(Impl{std::move(cfg)})), false);
    }
    catch (const rust::Error& e)
    {
        if (error != nullptr)
        {
            *error = e.what();
        }
        return nullptr;
    }
}

Ptr<LbConfig>
LbConfig::ParseOrAbort(const std::string& algorithm, const std::string& params)
{
    std::string error;
    Ptr<LbConfig> cfg = Parse(algorithm, params, &error);
    if (!cfg)
    {
        NS_FATAL_ERROR("rdma-lb: " << error);
    }
    return cfg;
}

Ptr<LbConfig>
LbConfig::TakeFrom(rb::LoadedScenario& loaded)
{
    return Ptr<LbConfig>(new LbConfig(std::make_unique<Impl>(Impl{std::move(loaded.lb)})), false);
}

SimAiEndToEndReport::SimAiEndToEndReport(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{
}

SimAiEndToEndReport::~SimAiEndToEndReport() = default;

Ptr<SimAiEndToEndReport>
SimAiEndToEndReport::TakeFrom(rb::LoadedScenario& loaded)
{
    if (!loaded.simai->has_report())
    {
        return nullptr;
    }
    return Ptr<SimAiEndToEndReport>(
        new SimAiEndToEndReport(std::make_unique<Impl>(Impl{std::move(loaded.simai)})),
        false);
}

std::string
SimAiEndToEndReport::GetFileName() const
{
    return std::string(m_impl->report->file_name());
}

std::string
SimAiEndToEndReport::Write(const std::vector<uint64_t>& flowEndNs, std::string* csv) const
{
    try
    {
        *csv = std::string(m_impl->report->end_to_end_csv(
            rust::Slice<const uint64_t>(flowEndNs.data(), flowEndNs.size())));
        return "";
    }
    catch (const rust::Error& e)
    {
        return e.what();
    }
}

std::vector<std::string>
LbConfig::AlgorithmNames()
{
    std::vector<std::string> names;
    for (const auto& n : rb::algorithm_names())
    {
        names.emplace_back(std::string(n));
    }
    return names;
}

void
LbConfig::ShareReferenceRand(uint32_t seed)
{
    m_impl->cfg->share_reference_rand(seed);
}

void
LbConfig::UseHtsimSwitches(uint32_t seed,
                           const std::vector<uint32_t>& switchIds,
                           uint32_t tors,
                           uint32_t secondTier,
                           uint32_t hosts,
                           uint32_t flows)
{
    try
    {
        m_impl->cfg->use_htsim_switches(seed,
                                        rust::Slice<const uint32_t>(switchIds.data(),
                                                                    switchIds.size()),
                                        tors,
                                        secondTier,
                                        hosts,
                                        flows);
    }
    catch (const rust::Error& e)
    {
        NS_FATAL_ERROR("rdma-lb: " << e.what());
    }
}

std::string
LbConfig::GetAlgorithmName() const
{
    return std::string(m_impl->cfg->algorithm_name());
}

std::string
LbConfig::GetParams() const
{
    return std::string(m_impl->cfg->params());
}

Ptr<LbConfig>
LbConfig::Copy() const
{
    return Ptr<LbConfig>(new LbConfig(std::make_unique<Impl>(Impl{m_impl->cfg->copy()})), false);
}

bool
LbConfig::SpraysOnFeedback() const
{
    return m_impl->cfg->sprays_on_feedback();
}

bool
LbConfig::MovesOnFeedback() const
{
    return m_impl->cfg->moves_on_feedback();
}

LbPathIndexRouting
LbConfig::GetPathIndexRouting() const
{
    const rb::PathIndexRouting r = m_impl->cfg->path_index_routing();
    switch (r)
    {
    case rb::PathIndexRouting::NotUsed:
        return LbPathIndexRouting::NOT_USED;
    case rb::PathIndexRouting::Off:
        return LbPathIndexRouting::OFF;
    case rb::PathIndexRouting::On:
        return LbPathIndexRouting::ON;
    }
    NS_FATAL_ERROR("rdma-lb: no path-index routing has the value " << static_cast<int>(r));
}

bool
LbConfig::IsNumPathsGiven() const
{
    return m_impl->cfg->num_paths_given();
}

Ptr<LbConfig>
LbConfig::WithNumPaths(uint32_t numPaths) const
{
    try
    {
        return Ptr<LbConfig>(
            new LbConfig(std::make_unique<Impl>(Impl{m_impl->cfg->with_num_paths(numPaths)})),
            false);
    }
    catch (const rust::Error& e)
    {
        NS_FATAL_ERROR("rdma-lb: " << e.what());
    }
}

std::unique_ptr<QpPathSelector>
LbConfig::CreateQpSelector(uint64_t seed) const
{
    try
    {
        return std::make_unique<QpPathSelector>(
            std::make_unique<QpPathSelector::Impl>(QpPathSelector::Impl{m_impl->cfg->new_host_lb(seed)}));
    }
    catch (const rust::Error& e)
    {
        NS_FATAL_ERROR("rdma-lb: " << e.what());
    }
}

Ptr<HostLbGroup>
LbConfig::CreateHostGroup() const
{
    try
    {
        return Ptr<HostLbGroup>(
            new HostLbGroup(std::make_unique<HostLbGroup::Impl>(
                HostLbGroup::Impl{m_impl->cfg->new_host_lb_group()})),
            false);
    }
    catch (const rust::Error& e)
    {
        NS_FATAL_ERROR("rdma-lb: " << e.what());
    }
}

HostLbGroup::HostLbGroup(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{
}

HostLbGroup::~HostLbGroup() = default;

std::unique_ptr<QpPathSelector>
HostLbGroup::CreateQpSelector(uint32_t destination,
                              uint64_t seed,
                              std::optional<uint16_t> flowSport)
{
    const int32_t sport = flowSport ? static_cast<int32_t>(*flowSport) : -1;
    try
    {
        return std::make_unique<QpPathSelector>(std::make_unique<QpPathSelector::Impl>(
            QpPathSelector::Impl{m_impl->group->new_qp_lb(destination, seed, sport)}));
    }
    catch (const rust::Error& e)
    {
        NS_FATAL_ERROR("rdma-lb: " << e.what());
    }
}

std::unique_ptr<SwitchLbAgent>
LbConfig::CreateSwitchAgent(uint32_t switchId, uint64_t seed) const
{
    try
    {
        return std::make_unique<SwitchLbAgent>(std::make_unique<SwitchLbAgent::Impl>(
            SwitchLbAgent::Impl{m_impl->cfg->new_switch_lb(switchId, seed), {}}));
    }
    catch (const rust::Error& e)
    {
        NS_FATAL_ERROR("rdma-lb: " << e.what());
    }
}

QpPathSelector::QpPathSelector(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl)),
      m_fixedEntropy(m_impl->lb->fixed_entropy())
{
}

QpPathSelector::~QpPathSelector() = default;

bool
QpPathSelector::TryNextEntropy(const LbSendContext& cx, uint16_t* entropy)
{
    if (m_fixedEntropy >= 0)
    {
        *entropy = static_cast<uint16_t>(m_fixedEntropy);
        return true;
    }
    rb::SendContext c{ToNs(cx.now),
                      cx.psn,
                      cx.retransmission,
                      cx.inflightPkts,
                      cx.everyArrivalAnswered};
    rb::EntropyDecision d = m_impl->lb->next_entropy(c);
    if (d.failed)
    {
        return false;
    }
    *entropy = d.entropy;
    return true;
}

uint16_t
QpPathSelector::NextEntropy(const LbSendContext& cx)
{
    uint16_t e = 0;
    if (!TryNextEntropy(cx, &e))
    {
        NS_FATAL_ERROR("rdma-lb: " << GetLastError());
    }
    return e;
}

void
QpPathSelector::OnFeedback(const LbFeedback& fb)
{
    if (m_fixedEntropy >= 0)
    {
        return;
    }
    rb::FeedbackKind kind = rb::FeedbackKind::Ack;
    switch (fb.kind)
    {
    case LbFeedbackKind::ACK:
        kind = rb::FeedbackKind::Ack;
        break;
    case LbFeedbackKind::NACK:
        kind = rb::FeedbackKind::Nack;
        break;
    case LbFeedbackKind::CNP:
        kind = rb::FeedbackKind::Cnp;
        break;
    case LbFeedbackKind::TIMEOUT:
        kind = rb::FeedbackKind::Timeout;
        break;
    case LbFeedbackKind::PROBE_ACK:
        kind = rb::FeedbackKind::ProbeAck;
        break;
    }
    rb::FeedbackEvent e{kind,
                        ToNs(fb.now),
                        fb.entropy,
                        fb.psn,
                        ToNs(fb.rtt),
                        fb.hasRtt,
                        fb.ecn,
                        fb.lastHop};
    if (!m_impl->lb->on_feedback(e))
    {
        NS_FATAL_ERROR("rdma-lb: " << GetLastError());
    }
}

Time
QpPathSelector::PollAt() const
{
    if (m_fixedEntropy >= 0)
    {
        return Time::Max();
    }
    uint64_t ns = m_impl->lb->poll_at_ns();
    return ns == UINT64_MAX ? Time::Max() : FromNs(ns);
}

void
QpPathSelector::OnTimer(Time now)
{
    if (m_fixedEntropy >= 0)
    {
        return;
    }
    if (!m_impl->lb->on_timer(ToNs(now)))
    {
        NS_FATAL_ERROR("rdma-lb: " << GetLastError());
    }
}

Time
QpPathSelector::GetSendAfter() const
{
    if (m_fixedEntropy >= 0)
    {
        return Time(0);
    }
    return FromNs(m_impl->lb->send_after_ns());
}

bool
QpPathSelector::TakeProbe(Time now, uint16_t* entropy)
{
    if (m_fixedEntropy >= 0)
    {
        return false;
    }
    int32_t e = m_impl->lb->take_probe(ToNs(now));
    if (!m_impl->lb->last_error().empty())
    {
        NS_FATAL_ERROR("rdma-lb: " << GetLastError());
    }
    if (e < 0)
    {
        return false;
    }
    *entropy = static_cast<uint16_t>(e);
    return true;
}

uint64_t
QpPathSelector::GetPathSwitches() const
{
    if (m_fixedEntropy >= 0)
    {
        return 0;
    }
    return m_impl->lb->path_switches();
}

std::string
QpPathSelector::GetLastError() const
{
    return std::string(m_impl->lb->last_error());
}

void
QpPathSelector::ArmTestPanic()
{
    m_fixedEntropy = -1;
    m_impl->lb->arm_test_panic();
}

SwitchLbAgent::SwitchLbAgent(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{
}

SwitchLbAgent::~SwitchLbAgent() = default;

namespace
{
rb::PacketInfo
ToBridge(const LbPacketInfo& pkt)
{
    rb::PacketKind kind = rb::PacketKind::Data;
    switch (pkt.kind)
    {
    case LbPacketKind::DATA:
        kind = rb::PacketKind::Data;
        break;
    case LbPacketKind::ACK:
        kind = rb::PacketKind::Ack;
        break;
    case LbPacketKind::NACK:
        kind = rb::PacketKind::Nack;
        break;
    case LbPacketKind::CNP:
        kind = rb::PacketKind::Cnp;
        break;
    case LbPacketKind::LB_CONTROL:
        kind = rb::PacketKind::LbControl;
        break;
    }
    return rb::PacketInfo{kind,
                          pkt.sip,
                          pkt.dip,
                          pkt.sport,
                          pkt.dport,
                          pkt.psn,
                          pkt.ingressPort,
                          pkt.sizeBytes,
                          pkt.ecnCe,
                          pkt.pg,
                          pkt.qpn,
                          pkt.seqBytes,
                          pkt.tsNs,
                          pkt.local};
}
} // namespace

void
SwitchLbAgent::AddPort(uint32_t port, uint64_t rateBps, Time delay, bool facesHost)
{
    m_impl->lb->add_port(port, rateBps, ToNs(delay), facesHost);
    NS_ABORT_MSG_IF(!GetLastError().empty(), "rdma-lb: " << GetLastError());
}

void
SwitchLbAgent::AddHost(uint32_t hostIp, uint32_t tor)
{
    m_impl->lb->add_host(hostIp, tor);
    NS_ABORT_MSG_IF(!GetLastError().empty(), "rdma-lb: " << GetLastError());
}

void
SwitchLbAgent::AddPath(uint32_t dstTor, uint32_t pathId, uint8_t hops)
{
    NS_ABORT_MSG_IF(!m_impl->lb->add_path(dstTor, pathId, hops),
                    "rdma-lb: path " << pathId << " (" << unsigned(hops) << " hops) to ToR "
                                     << dstTor << " refused " << GetLastError());
}

bool
SwitchLbAgent::SeesEveryPacket() const
{
    return m_impl->lb->sees_every_packet();
}

bool
SwitchLbAgent::SeesEgress() const
{
    return m_impl->lb->sees_egress();
}

bool
SwitchLbAgent::ReadsPortLoad() const
{
    return m_impl->lb->reads_port_load();
}

bool
SwitchLbAgent::UsesFabricMap() const
{
    return m_impl->lb->uses_fabric_map();
}

LbVerdict
SwitchLbAgent::OnIngress(Time now,
                         const LbPacketInfo& pkt,
                         LbTagData* tag,
                         const std::vector<LbEgressCandidate>& candidates)
{
    // Field by field into a buffer kept across calls: building each element as a temporary
    // and copying it stalled store forwarding (~10 ns per candidate, measured with perf).
    auto& s = m_impl->scratch;
    s.resize(candidates.size());
    for (size_t i = 0; i < candidates.size(); ++i)
    {
        s[i].port = candidates[i].port;
        s[i].queue_bytes = candidates[i].queueBytes;
        s[i].tx_bytes = candidates[i].txBytes;
    }
    rb::LbTag t{tag->present, tag->words};
    rb::IngressDecision d =
        m_impl->lb->on_ingress(ToNs(now),
                               ToBridge(pkt),
                               t,
                               rust::Slice<const rb::EgressCandidate>(s.data(), s.size()));
    if (d.failed)
    {
        NS_FATAL_ERROR("rdma-lb: " << GetLastError());
    }
    tag->present = t.present;
    tag->words = t.words;
    LbVerdict v;
    switch (d.verdict)
    {
    case rb::VerdictKind::Drop:
        v.kind = LbVerdictKind::DROP;
        break;
    case rb::VerdictKind::Hold:
        v.kind = LbVerdictKind::HOLD;
        v.queue = d.queue;
        break;
    default:
        v.kind = LbVerdictKind::FORWARD;
        v.index = d.index;
        v.rewriteEntropy = d.rewrite_entropy;
        v.entropy = d.entropy;
        break;
    }
    return v;
}

void
SwitchLbAgent::OnEgress(Time now, const LbPacketInfo& pkt, const LbTagData& tag, uint32_t port)
{
    rb::LbTag t{tag.present, tag.words};
    if (!m_impl->lb->on_egress(ToNs(now), ToBridge(pkt), t, port))
    {
        NS_FATAL_ERROR("rdma-lb: " << GetLastError());
    }
}

bool
SwitchLbAgent::PollTransmit(Time now, LbControlPacket* out)
{
    rb::ControlOut c = m_impl->lb->poll_transmit(ToNs(now));
    if (c.failed)
    {
        NS_FATAL_ERROR("rdma-lb: " << GetLastError());
    }
    if (!c.has)
    {
        return false;
    }
    out->kind = c.kind == rb::ControlKind::LbControl ? LbControlKind::LB_CONTROL
                                                     : LbControlKind::NACK;
    out->sip = c.sip;
    out->dip = c.dip;
    out->sport = c.sport;
    out->dport = c.dport;
    out->qpn = c.qpn;
    out->pg = c.pg;
    out->epsn = c.epsn;
    out->echoSeqBytes = c.echo_seq_bytes;
    out->tsNs = c.ts_ns;
    out->sizeBytes = c.size_bytes;
    out->fromPort = c.from_port;
    out->tag.present = c.tag.present;
    out->tag.words = c.tag.words;
    return true;
}

bool
SwitchLbAgent::PollRelease(Time now, uint64_t* queue)
{
    rb::ReleaseOut r = m_impl->lb->poll_release(ToNs(now));
    if (r.failed)
    {
        NS_FATAL_ERROR("rdma-lb: " << GetLastError());
    }
    *queue = r.queue;
    return r.has;
}

Time
SwitchLbAgent::PollAt() const
{
    const uint64_t ns = m_impl->lb->poll_at_ns();
    return ns == UINT64_MAX ? Time::Max() : FromNs(ns);
}

void
SwitchLbAgent::OnTimer(Time now)
{
    if (!m_impl->lb->on_timer(ToNs(now)))
    {
        NS_FATAL_ERROR("rdma-lb: " << GetLastError());
    }
}

void
SwitchLbAgent::OnLinkState(uint32_t port, bool remote, bool down)
{
    if (!m_impl->lb->on_link_state(port, remote, down))
    {
        NS_FATAL_ERROR("rdma-lb: " << GetLastError());
    }
}

uint64_t
SwitchLbAgent::GetMemoryBytes() const
{
    return m_impl->lb->memory_bytes();
}

std::vector<std::pair<std::string, uint64_t>>
SwitchLbAgent::GetCounters() const
{
    std::vector<std::pair<std::string, uint64_t>> out;
    for (const auto& c : m_impl->lb->counters())
    {
        out.emplace_back(std::string(c.name), c.value);
    }
    return out;
}

std::string
SwitchLbAgent::GetLastError() const
{
    return std::string(m_impl->lb->last_error());
}

void
SwitchLbAgent::ArmTestPanic()
{
    m_impl->lb->arm_test_panic();
}

Ptr<AttributeValue>
RdmaTransportSetting::Value() const
{
    switch (kind)
    {
    case UINT:
        return Create<UintegerValue>(uint);
    case TIME_NS:
        return Create<TimeValue>(NanoSeconds(static_cast<int64_t>(uint)));
    case RATE_BPS:
        return Create<DataRateValue>(DataRate(uint));
    case BOOL:
        return Create<BooleanValue>(uint != 0);
    case DOUBLE:
        return Create<DoubleValue>(real);
    case NAME:
        return Create<StringValue>(text);
    case COMPONENT: {
        TypeId tid;
        if (!TypeId::LookupByNameFailSafe(text, &tid))
        {
            NS_FATAL_ERROR("transport setting " << name << ": no TypeId " << text);
        }
        ObjectFactory f;
        f.SetTypeId(tid);
        return Create<ObjectFactoryValue>(f);
    }
    }
    NS_FATAL_ERROR("transport setting " << name << ": no value kind " << kind);
    return nullptr;
}

RdmaTransportSetting
RdmaTransportSetting::FromBridge(const rdmalb::bridge::Ns3Setting& s)
{
    using B = rdmalb::bridge::Ns3ValueKind;
    RdmaTransportSetting o;
    o.typeId = std::string(s.type_id);
    o.name = std::string(s.name);
    o.kind = s.kind == B::TimeNs    ? TIME_NS
             : s.kind == B::RateBps ? RATE_BPS
             : s.kind == B::Bool    ? BOOL
             : s.kind == B::Double  ? DOUBLE
             : s.kind == B::Name    ? NAME
             : s.kind == B::Component ? COMPONENT
                                    : UINT;
    o.uint = s.uint;
    o.real = s.real;
    o.text = std::string(s.text);
    o.summaryKey = std::string(s.summary_key);
    o.summaryText = std::string(s.summary_text);
    return o;
}

Ptr<AttributeValue>
RdmaTransportDefault(const std::string& typeId, const std::string& name)
{
    try
    {
        return RdmaTransportSetting::FromBridge(rdmalb::bridge::default_ns3_setting(typeId, name))
            .Value();
    }
    catch (const std::exception& e)
    {
        NS_FATAL_ERROR("transport parameter defaults: " << e.what());
    }
    return nullptr;
}

} // namespace ns3
