/*
 * rdma-lb: the output files of a scenario run (see rdma-scenario-output.h): RdmaScenarioOutput
 * (the directory and the streamed traces) and the RdmaScenarioRunner members that write the
 * final files -- ConWeave's fct.txt, flows.csv, collectives.csv and summary.json.
 */
#include "rdma-scenario-output.h"

#include "rdma-scenario.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <sys/resource.h>
#include <tuple>

#ifndef RDMA_LB_VERSION
#define RDMA_LB_VERSION "unknown"
#endif

namespace ns3
{

// ---- The directory and the streamed traces ----------------------------------------------------

std::string
RdmaScenarioOutput::Open(const std::string& dir,
                         const RdmaScenarioRun& run,
                         const std::string& simaiReportFile)
{
    m_dir = dir;
    if (!m_dir.empty())
    {
        // summary.json first: it marks a finished run.
        std::vector<std::string> stale = {"summary.json", "fct.txt", "flows.csv",
                                          "collectives.csv", "pfc.txt", "queue.txt",
                                          "uplink.txt", "rate.txt", "retx.txt",
                                          "failed_drops.csv", "rtt_hist.csv", "port_bytes.csv"};
        if (!simaiReportFile.empty())
        {
            stale.push_back(simaiReportFile);
        }
        std::string e = m_files.Open(m_dir, stale);
        if (!e.empty())
        {
            return e;
        }
    }
    if (run.pfcTrace)
    {
        std::string e = OpenTrace("pfc.txt", &m_pfcFile, &m_pfcMem, &m_pfc);
        if (!e.empty())
        {
            return e;
        }
    }
    if (run.queueTrace)
    {
        for (auto [name, file, mem, out] :
             {std::make_tuple("queue.txt", &m_queueFile, &m_queueMem, &m_queue),
              std::make_tuple("uplink.txt", &m_uplinkFile, &m_uplinkMem, &m_uplink)})
        {
            std::string e = OpenTrace(name, file, mem, out);
            if (!e.empty())
            {
                return e;
            }
        }
    }
    if (run.rateTraceNs != 0)
    {
        for (auto [name, file, mem, out] :
             {std::make_tuple("rate.txt", &m_rateFile, &m_rateMem, &m_rate),
              std::make_tuple("retx.txt", &m_retxFile, &m_retxMem, &m_retx)})
        {
            std::string e = OpenTrace(name, file, mem, out);
            if (!e.empty())
            {
                return e;
            }
        }
        *m_rate << "time_ns,flow,rate_bps\n";
        *m_retx << "time_ns,data_pkts,retx_pkts\n";
    }
    return "";
}

std::string
RdmaScenarioOutput::OpenTrace(const char* name,
                              std::ofstream* file,
                              std::ostringstream* mem,
                              std::ostream** out)
{
    if (m_dir.empty())
    {
        *out = mem;
        return "";
    }
    std::string path = m_files.Add(name);
    file->open(path, std::ios::binary | std::ios::trunc);
    if (!*file)
    {
        return path + ": cannot open for writing: " + std::strerror(errno);
    }
    *out = file;
    return "";
}

std::string
RdmaScenarioOutput::CloseTraces()
{
    for (auto [name, file] : {std::make_pair("pfc.txt", &m_pfcFile),
                              std::make_pair("queue.txt", &m_queueFile),
                              std::make_pair("uplink.txt", &m_uplinkFile),
                              std::make_pair("rate.txt", &m_rateFile),
                              std::make_pair("retx.txt", &m_retxFile)})
    {
        if (file->is_open())
        {
            file->close();
            if (!*file)
            {
                return m_dir + "/" + name + ".part: write failed (disk full?)";
            }
        }
    }
    return "";
}

std::string
RdmaScenarioOutput::Commit(const std::vector<std::pair<std::string, std::string>>& files)
{
    for (const auto& [name, text] : files)
    {
        std::string e = m_files.Write(name, text);
        if (!e.empty())
        {
            return e;
        }
    }
    return m_files.Commit();
}

std::ostream*
RdmaScenarioOutput::Pfc() const
{
    return m_pfc;
}

std::ostream*
RdmaScenarioOutput::Queue() const
{
    return m_queue;
}

std::ostream*
RdmaScenarioOutput::Uplink() const
{
    return m_uplink;
}

std::ostream*
RdmaScenarioOutput::Rate() const
{
    return m_rate;
}

std::ostream*
RdmaScenarioOutput::Retx() const
{
    return m_retx;
}

std::string
RdmaScenarioOutput::PfcText() const
{
    return m_pfcMem.str();
}

std::string
RdmaScenarioOutput::QueueText() const
{
    return m_queueMem.str();
}

std::string
RdmaScenarioOutput::UplinkText() const
{
    return m_uplinkMem.str();
}

std::string
RdmaScenarioOutput::RateText() const
{
    return m_rateMem.str();
}

std::string
RdmaScenarioOutput::RetxText() const
{
    return m_retxMem.str();
}

// ---- The final files -------------------------------------------------------------------------

std::string
RdmaScenarioRunner::Fmt(const char* format, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, format);
    int n = std::vsnprintf(buf, sizeof(buf), format, ap);
    va_end(ap);
    if (n < 0)
    {
        return std::string();
    }
    if (static_cast<size_t>(n) < sizeof(buf))
    {
        return std::string(buf, static_cast<size_t>(n));
    }
    std::string out(static_cast<size_t>(n) + 1, '\0');
    va_start(ap, format);
    std::vsnprintf(&out[0], out.size(), format, ap);
    va_end(ap);
    out.resize(static_cast<size_t>(n));
    return out;
}

std::string
RdmaScenarioRunner::JsonString(const std::string& s)
{
    std::string out = "\"";
    for (unsigned char c : s)
    {
        switch (c)
        {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20)
            {
                out += Fmt("\\u%04x", c);
            }
            else
            {
                out += static_cast<char>(c);
            }
        }
    }
    return out + "\"";
}

std::string
RdmaScenarioRunner::JsonDouble(double v)
{
    if (!(v == v) || v == std::numeric_limits<double>::infinity() ||
        v == -std::numeric_limits<double>::infinity())
    {
        return "null";
    }
    for (int prec = 1; prec <= 17; ++prec)
    {
        std::string s = Fmt("%.*g", prec, v);
        if (std::strtod(s.c_str(), nullptr) == v)
        {
            return s;
        }
    }
    return Fmt("%.17g", v);
}

std::string
RdmaScenarioRunner::WriteOutputs()
{
    const RdmaScenarioSpec& spec = m_spec;
    std::string e = m_output->CloseTraces();
    if (!e.empty())
    {
        return e;
    }
    if (!m_outDir.empty())
    {
        // summary.json last: its presence marks a finished run (rdma-lb sweep relies on it);
        // every file is written as NAME.part and renamed only once all are written.
        std::vector<std::pair<std::string, std::string>> files = {
            {"fct.txt", FctText()},
            {"flows.csv", FlowsCsv()},
        };
        if (!spec.collectives.empty())
        {
            files.emplace_back("collectives.csv", CollectivesCsv());
        }
        if (spec.simaiReport)
        {
            std::string csv;
            std::string why = spec.simaiReport->Write(FlowEnds(), &csv);
            if (why.empty())
            {
                files.emplace_back(spec.simaiReport->GetFileName(), csv);
            }
            else
            {
                std::cerr << "warning: " << why << std::endl;
                m_spec.notes.push_back(why);
            }
        }
        if (spec.run.failedLinkDrops)
        {
            files.emplace_back("failed_drops.csv", FailedDropsCsv());
        }
        if (spec.run.rttHistogramNs != 0)
        {
            files.emplace_back("rtt_hist.csv", RttHistCsv());
        }
        if (spec.run.portBytes)
        {
            files.emplace_back("port_bytes.csv", PortBytesCsv());
        }
        files.emplace_back("summary.json", SummaryJson());
        return m_output->Commit(files);
    }
    return "";
}


std::string
RdmaScenarioRunner::FctText() const
{
    std::string out;
    for (const RdmaScenarioFlowResult& r : GetFlowResults())
    {
        if (!r.completed)
        {
            continue;
        }
        out += Fmt("%u %u %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", r.src, r.dst,
                   r.sport, r.dport, r.sizeBytes, r.startNs, r.fctNs, r.idealNs);
    }
    return out;
}

std::string
RdmaScenarioRunner::FlowsCsv() const
{
    std::string out = "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,retx_pkts,"
                      "nacks,path_switches,algorithm\n";
    const std::vector<RdmaScenarioFlowResult>& results = GetFlowResults();
    for (size_t i = 0; i < results.size(); ++i)
    {
        const RdmaScenarioFlowResult& r = results[i];
        if (!r.completed)
        {
            // Listed all the same, so that every flow of the workload appears exactly once:
            // empty fct_ns and slowdown; start_ns is the actual start, or the scheduled one
            // if the flow never started; the counters are those at the stop.
            const uint64_t start = r.started ? r.startNs : m_spec.flows[i].startNs;
            out += Fmt("%u,%u,%u,%" PRIu64 ",%" PRIu64 ",,%" PRIu64 ",,%" PRIu64 ",%" PRIu64
                       ",%" PRIu64 ",%s\n",
                       r.id, r.src, r.dst, r.sizeBytes, start, r.idealNs, r.retxPkts, r.nacks,
                       r.pathSwitches, m_spec.lb->GetAlgorithmName().c_str());
            continue;
        }
        double slowdown = r.idealNs == 0 ? 1.0
                                         : std::max(1.0, static_cast<double>(r.fctNs) /
                                                             static_cast<double>(r.idealNs));
        out += Fmt("%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%" PRIu64
                   ",%" PRIu64 ",%" PRIu64 ",%s\n",
                   r.id, r.src, r.dst, r.sizeBytes, r.startNs, r.fctNs, r.idealNs, slowdown,
                   r.retxPkts, r.nacks, r.pathSwitches, m_spec.lb->GetAlgorithmName().c_str());
    }
    return out;
}

std::vector<uint64_t>
RdmaScenarioRunner::FlowEnds() const
{
    std::vector<uint64_t> ends;
    for (const RdmaScenarioFlowResult& r : GetFlowResults())
    {
        ends.push_back(r.completed ? r.startNs + r.fctNs : std::numeric_limits<uint64_t>::max());
    }
    return ends;
}

std::string
RdmaScenarioRunner::CollectivesCsv() const
{
    std::string out = "group,algorithm,start_ns,finish_ns\n";
    for (const RdmaScenarioCollectiveResult& c : GetCollectiveResults())
    {
        if (c.complete)
        {
            out += Fmt("%u,%s,%" PRIu64 ",%" PRIu64 "\n", c.group, m_spec.lb->GetAlgorithmName().c_str(), c.startNs,
                       c.finishNs);
        }
    }
    return out;
}

std::string
RdmaScenarioRunner::PfcText() const
{
    return m_output ? m_output->PfcText() : std::string();
}

std::string
RdmaScenarioRunner::QueueText() const
{
    return m_output ? m_output->QueueText() : std::string();
}

std::string
RdmaScenarioRunner::UplinkText() const
{
    return m_output ? m_output->UplinkText() : std::string();
}

std::string
RdmaScenarioRunner::RateText() const
{
    return m_output ? m_output->RateText() : std::string();
}

std::string
RdmaScenarioRunner::RetxText() const
{
    return m_output ? m_output->RetxText() : std::string();
}

std::string
RdmaScenarioRunner::SummaryJson() const
{
    const RdmaScenarioSpec& sp = m_spec;
    const RdmaScenarioTransport& t = sp.transport;
    const RdmaScenarioRun& r = sp.run;
    std::ostringstream o;
    auto kv = [&](const char* k, const std::string& v, bool last = false) {
        o << "    " << JsonString(k) << ": " << v << (last ? "\n" : ",\n");
    };
    auto u = [](uint64_t v) { return std::to_string(v); };
    auto b = [](bool v) { return std::string(v ? "true" : "false"); };
    uint64_t retx = 0, nacks = 0, cnps = 0, timeouts = 0, cuts = 0, switches = 0, probes = 0;
    uint32_t started = 0, delivered = 0;
    for (const RdmaScenarioFlowResult& f : GetFlowResults())
    {
        started += f.started ? 1 : 0;
        delivered += f.delivered ? 1 : 0;
        retx += f.retxPkts;
        nacks += f.nacks;
        cnps += f.cnps;
        timeouts += f.timeouts;
        cuts += f.rateCuts;
        switches += f.pathSwitches;
        probes += f.probes;
    }
    o << "{\n";
    o << "  \"algorithm\": " << JsonString(sp.lb->GetAlgorithmName()) << ",\n";
    o << "  \"lb_params\": " << JsonString(sp.lb->GetParams()) << ",\n";
    o << "  \"seed\": " << r.seed << ",\n";
    o << "  \"version\": " << JsonString(RDMA_LB_VERSION) << ",\n";
    o << "  \"scenario\": " << JsonString(sp.name) << ",\n";
    o << "  \"config\": {\n";
    kv("path", JsonString(sp.configPath));
    kv("nodes", u(sp.nodeCount));
    kv("switches", u(sp.switchIds.size()));
    kv("links", u(sp.links.size()));
    kv("flows", u(sp.flows.size()));
    kv("collectives", u(sp.collectives.size()));
    std::string ecn = "[";
    for (const RdmaScenarioEcnEntry& e : t.ecn.empty() ? RdmaScenarioSpec::DefaultEcnMap() : t.ecn)
    {
        ecn += Fmt("%s{\"rate_bps\": %" PRIu64 ", \"kmin_bytes\": %" PRIu64
                   ", \"kmax_bytes\": %" PRIu64 ", \"pmax\": %s}",
                   ecn.size() > 1 ? ", " : "", e.rateBps, e.kminBytes, e.kmaxBytes,
                   JsonDouble(e.pmax).c_str());
    }
    ecn += "]";
    std::ostringstream tr;
    // The table's settings listed in the summary, in table order; the ECN map after the buffer.
    bool first = true;
    for (const RdmaTransportSetting& a : t.attributes)
    {
        if (a.summaryKey.empty())
        {
            continue;
        }
        tr << (first ? "{" : ", ") << JsonString(a.summaryKey) << ": ";
        first = false;
        switch (a.kind)
        {
        case RdmaTransportSetting::BOOL:
            tr << b(a.uint != 0);
            break;
        case RdmaTransportSetting::DOUBLE:
            tr << JsonDouble(a.real);
            break;
        case RdmaTransportSetting::NAME:
            tr << JsonString(a.text);
            break;
        case RdmaTransportSetting::COMPONENT:
            tr << JsonString(a.summaryText);
            break;
        default:
            tr << a.uint;
            break;
        }
        if (a.summaryKey == "buffer_bytes")
        {
            tr << ", \"ecn\": " << ecn;
        }
    }
    tr << ", \"quirks\": [";
    const RdmaScenarioQuirks& q = t.quirks;
    const char* sep = "";
    for (const auto& [on, name] : {std::make_pair(q.flowPorts, "flow-ports"),
                                   std::make_pair(q.timeTruncation, "time-truncation"),
                                   std::make_pair(q.pacingWakeup, "pacing-wakeup"),
                                   std::make_pair(q.irnSender, "irn-sender"),
                                   std::make_pair(q.ecnSharedStream, "ecn-shared-stream"),
                                   std::make_pair(q.eventOrder, "event-order"),
                                   std::make_pair(q.glibcRand, "glibc-rand")})
    {
        if (on)
        {
            tr << sep << "\"" << name << "\"";
            sep = ", ";
        }
    }
    tr << "]";
    if (!GetUetSummary().empty())
    {
        tr << ", \"kind\": \"uet\", \"uet\": " << GetUetSummary();
    }
    tr << "}";
    kv("transport", tr.str());
    std::ostringstream rn;
    rn << "{\"flowgen_start_ns\": " << r.flowgenStartNs << ", \"flowgen_stop_ns\": " << r.flowgenStopNs
       << ", \"hard_stop_ns\": " << r.hardStopNs << ", \"link_events\": " << r.linkEvents.size()
       << ", \"pfc_trace\": " << b(r.pfcTrace) << ", \"queue_trace\": " << b(r.queueTrace)
       << ", \"monitor_interval_ns\": " << r.monitorIntervalNs
       << ", \"rate_trace_ns\": " << r.rateTraceNs << ", \"load\": " << JsonDouble(r.load) << "}";
    kv("run", rn.str());
    kv("text", JsonString(sp.configEcho), true);
    o << "  },\n";
    o << "  \"flows_total\": " << sp.flows.size() << ",\n";
    o << "  \"flows_started\": " << started << ",\n";
    o << "  \"flows_delivered\": " << delivered << ",\n";
    o << "  \"flows_completed\": " << GetCompletedFlows() << ",\n";
    o << "  \"events\": " << GetEventCount() << ",\n";
    o << "  \"sim_time_ns\": " << GetSimTimeNs() << ",\n";
    o << "  \"wall_time_s\": " << Fmt("%.3f", GetWallTimeSeconds()) << ",\n";
    o << "  \"setup_wall_s\": " << Fmt("%.3f", GetSetupWallSeconds()) << ",\n";
    {
        // The whole process so far (parsing and building included): what a sweep costs.
        struct rusage ru{};
        getrusage(RUSAGE_SELF, &ru);
        const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                           1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
        o << "  \"cpu_time_s\": " << Fmt("%.3f", cpu) << ",\n";
        o << "  \"peak_rss_mib\": " << Fmt("%.1f", static_cast<double>(ru.ru_maxrss) / 1024.0)
          << ",\n";
    }
    o << "  \"counters\": {\n";
    const RdmaScenarioCounters c = GetCounters();
    kv("retx_pkts", u(retx));
    kv("nacks", u(nacks));
    kv("cnps", u(cnps));
    kv("cnps_sent", u(c.cnpsSent));
    kv("timeouts", u(timeouts));
    kv("rate_cuts", u(cuts));
    kv("path_switches", u(switches));
    kv("probes", u(probes));
    kv("ecn_marks", u(c.ecnMarks));
    kv("mmu_drops", u(c.mmuDrops));
    kv("switch_packets_forwarded", u(c.forwarded));
    kv("packet_hops", u(c.packetHops));
    if (sp.transport.Uet())
    {
        kv("trims", u(c.trims)); // (absent under RoCE: its outputs stay as they were)
        kv("ack_requests", u(c.ackRequests));
        kv("acks_sent", u(c.uetAcks));
        kv("pulls_sent", u(c.pulls));
    }
    kv("pfc_pauses_sent", u(c.pfcPausesSent));
    kv("pfc_pauses_received", u(c.pfcPausesRx));
    kv("pfc_resumes_received", u(c.pfcResumesRx));
    kv("link_down_losses", u(c.linkLoss));
    kv("error_model_drops", u(c.errorDrops), true);
    o << "  },\n";
    o << "  \"lb_counters\": {";
    const char* lbSep = "\n";
    for (const auto& [name, value] : GetLbCounters())
    {
        o << lbSep << "    " << JsonString(name) << ": " << value;
        lbSep = ",\n";
    }
    o << (GetLbCounters().empty() ? "},\n" : "\n  },\n");
    o << "  \"collectives\": {\n";
    uint32_t complete = 0;
    uint64_t maxCct = 0;
    int64_t slowest = -1;
    long double sum = 0;
    for (const RdmaScenarioCollectiveResult& c : GetCollectiveResults())
    {
        if (!c.complete)
        {
            continue;
        }
        ++complete;
        uint64_t cct = c.finishNs - c.startNs;
        sum += cct;
        if (slowest < 0 || cct > maxCct)
        {
            maxCct = cct;
            slowest = c.group;
        }
    }
    kv("groups", u(sp.collectives.size()));
    kv("complete", u(complete));
    kv("slowest_group", slowest < 0 ? std::string("null") : std::to_string(slowest));
    kv("cct_max_ns", u(maxCct));
    kv("cct_mean_ns", complete ? JsonDouble(static_cast<double>(sum / complete)) : "null", true);
    o << "  },\n";
    o << "  \"notes\": [";
    for (size_t i = 0; i < sp.notes.size(); ++i)
    {
        o << (i ? ", " : "") << JsonString(sp.notes[i]);
    }
    o << "]\n}\n";
    return o.str();
}

} // namespace ns3
