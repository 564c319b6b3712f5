/*
 * rdma-lb: LoadRdmaScenario (see rdma-scenario-load.h).
 */
#include "rdma-scenario-load.h"

#include "ns3/rdma-lb-bridge.h"

#include "rdma-lb-bridge/src/lib.rs.h"

#include "ns3/fatal-error.h"
#include "ns3/rdma-recovery-uet.h"

#include <exception>

namespace ns3
{

namespace
{

std::vector<uint32_t>
Ids(const rust::Vec<uint32_t>& v)
{
    return std::vector<uint32_t>(v.begin(), v.end());
}

void
CopyTransport(const rdmalb::scenario::Transport& t, RdmaScenarioTransport& o)
{
    o.uetHtsimSwitches = t.uet_switch_hash == rdmalb::bridge::SwitchHash::Htsim;
    o.hasWin = t.has_win;
    o.ecn.clear();
    for (const auto& e : t.ecn)
    {
        o.ecn.push_back({e.rate_bps, e.kmin_bytes, e.kmax_bytes, e.pmax});
    }
    o.attributes.clear();
    for (const auto& a : t.attributes)
    {
        o.attributes.push_back(RdmaTransportSetting::FromBridge(a));
    }
    o.uetAttributes.clear();
    for (const auto& a : t.uet_attributes)
    {
        o.uetAttributes.push_back(RdmaTransportSetting::FromBridge(a));
    }
    o.quirks.flowPorts = t.quirk_flow_ports;
    o.quirks.simai = t.quirks_of_simai;
    o.quirks.timeTruncation = t.quirk_time_truncation;
    o.quirks.pacingWakeup = t.quirk_pacing_wakeup;
    o.quirks.irnSender = t.quirk_irn_sender;
    o.quirks.ecnSharedStream = t.quirk_ecn_shared_stream;
    o.quirks.eventOrder = t.quirk_event_order;
    o.quirks.glibcRand = t.quirk_glibc_rand;
}

void
Convert(const rdmalb::scenario::Scenario& in, RdmaScenarioSpec& out)
{
    out.name = std::string(in.name);
    out.configPath = std::string(in.config_path);
    out.nodeCount = in.node_count;
    out.switchIds = Ids(in.switch_ids);
    out.links.clear();
    for (const auto& l : in.links)
    {
        out.links.push_back({l.a, l.b, l.rate_bps, l.delay_ns, l.error_rate});
    }
    out.portRates.clear();
    for (const auto& p : in.port_rates)
    {
        out.portRates.push_back({p.node, p.peer, p.rate_bps, p.queue_scale});
    }
    out.endpointSwitchIds = Ids(in.endpoint_switch_ids);
    out.flows.clear();
    out.flows.reserve(in.flows.size());
    for (const auto& f : in.flows)
    {
        RdmaScenarioFlow g;
        g.id = f.id;
        g.src = f.src;
        g.dst = f.dst;
        g.pg = f.pg;
        g.sizeBytes = f.size_bytes;
        g.startNs = f.start_ns;
        g.after = Ids(f.after);
        g.computeAfter = Ids(f.compute_after);
        g.computeNs = f.compute_ns;
        g.latencyNs = f.latency_ns;
        g.afterCompletion = f.after_completion;
        g.afterSent = Ids(f.after_sent);
        g.afterReady = Ids(f.after_ready);
        g.sendLatencyNs = f.send_latency_ns;
        out.flows.push_back(std::move(g));
    }
    out.collectives.clear();
    for (const auto& c : in.collectives)
    {
        out.collectives.push_back({c.group, std::string(c.kind), Ids(c.flow_ids)});
    }
    CopyTransport(in.transport, out.transport);
    const auto& r = in.run;
    RdmaScenarioRun& p = out.run;
    p.seed = r.seed;
    p.flowgenStartNs = r.flowgen_start_ns;
    p.flowgenStopNs = r.flowgen_stop_ns;
    p.hardStopNs = r.hard_stop_ns;
    p.monitorIntervalNs = r.monitor_interval_ns;
    p.linkEvents.clear();
    for (const auto& e : r.link_events)
    {
        p.linkEvents.push_back({e.at_ns, e.a, e.b, e.down, e.by_port, e.port, e.one_way});
    }
    p.outDir = std::string(r.out_dir);
    p.pfcTrace = r.pfc_trace;
    p.queueTrace = r.queue_trace;
    p.rateTraceNs = r.rate_trace_ns;
    p.failedLinkDrops = r.failed_link_drops;
    p.rttHistogramNs = r.rtt_histogram_ns;
    p.portBytes = r.port_bytes;
    p.load = r.load;
    out.notes.clear();
    for (const auto& n : in.notes)
    {
        out.notes.emplace_back(std::string(n));
    }
    out.configEcho = std::string(in.effective_config);
}

} // namespace

RdmaScenarioTransport::RdmaScenarioTransport()
{
    static const rdmalb::scenario::Transport defaults = rdmalb::scenario::default_transport();
    CopyTransport(defaults, *this);
    quirks = RdmaScenarioQuirks{}; // the model's own behaviour unless a config asks
}

const RdmaTransportSetting&
RdmaScenarioTransport::Get(const std::string& typeId, const std::string& name) const
{
    for (const auto* list : {&attributes, &uetAttributes})
    {
        for (const RdmaTransportSetting& a : *list)
        {
            if (a.typeId == typeId && a.name == name)
            {
                return a;
            }
        }
    }
    NS_FATAL_ERROR("transport: no setting of attribute " << name << " of " << typeId);
    return attributes.front();
}

RdmaTransportSetting&
RdmaScenarioTransport::Get(const std::string& typeId, const std::string& name)
{
    const RdmaScenarioTransport& self = *this;
    return const_cast<RdmaTransportSetting&>(self.Get(typeId, name));
}

TypeId
RdmaScenarioTransport::Component(const std::string& attribute) const
{
    const std::string& name = Get("ns3::RdmaNic", attribute).text;
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(name, &tid))
    {
        NS_FATAL_ERROR("transport: " << attribute << ": no TypeId " << name);
    }
    return tid;
}

TypeId
RdmaScenarioTransport::Recovery() const
{
    return Component("LossRecovery");
}

TypeId
RdmaScenarioTransport::Cc() const
{
    return Component("CongestionControl");
}

bool
RdmaScenarioTransport::Uet() const
{
    const TypeId uet = RdmaUetRecovery::GetTypeId();
    return Recovery() == uet || Recovery().IsChildOf(uet);
}

uint32_t
RdmaScenarioTransport::PayloadBytes() const
{
    return static_cast<uint32_t>(Get("ns3::RdmaNic", "PayloadSize").uint);
}

uint64_t
RdmaScenarioTransport::BufferBytes() const
{
    return Get("ns3::SwitchMmu", "BufferSize").uint;
}

bool
RdmaScenarioTransport::EcnEnabled() const
{
    return Get("ns3::RdmaSwitch", "EcnEnabled").uint != 0;
}

uint32_t
RdmaScenarioTransport::UetHeaderBytes() const
{
    return static_cast<uint32_t>(Get("ns3::RdmaNic", "UetHeaderSize").uint);
}

std::vector<RdmaScenarioEcnEntry>
RdmaScenarioSpec::DefaultEcnMap()
{
    return RdmaScenarioTransport().ecn;
}

bool
LoadRdmaScenario(const std::string& path,
                 const std::string& overrides,
                 RdmaScenarioSpec* spec,
                 std::string* error)
{
    try
    {
        rdmalb::bridge::LoadedScenario s =
            rdmalb::bridge::load_scenario(rust::Str(path), rust::Str(overrides));
        Convert(s.scenario, *spec);
        spec->lb = LbConfig::TakeFrom(s);
        spec->simaiReport = SimAiEndToEndReport::TakeFrom(s);
        return true;
    }
    catch (const std::exception& e)
    {
        if (error)
        {
            *error = e.what();
        }
        return false;
    }
}

std::vector<std::string>
RdmaScenarioOverrideKeys()
{
    std::vector<std::string> keys;
    for (const auto& k : rdmalb::scenario::override_keys())
    {
        keys.emplace_back(std::string(k));
    }
    return keys;
}

} // namespace ns3
