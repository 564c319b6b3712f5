/*
 * rdma-lb-scenario: runs one scenario file (a ConWeave key/value config with its topology and
 * flow files, or an rdma-lb TOML) and writes its outputs
 * (configs/README.md, ns3-module/doc/rdma-lb.rst "Scenarios"): fct.txt (ConWeave's format),
 * flows.csv, summary.json, collectives.csv (when the scenario has collectives) and pfc.txt (when
 * enabled).
 *
 *   rdma-lb-scenario --config=PATH [--lb=NAME] [--lbParams=STR] [--seed=N] [--out=DIR]
 *                    [--stop=TIME] [--load=X] [--pfc=B] [--recovery=R] [--pfcTrace=B] [--queueTrace=B]
 *                    [--quirks=all|none|LIST] [--transport="k = v, ..."] [--progress=auto|on|off]
 *                    [--partitionInvariant=B] [--ranks=N] [--mpiEngine=batched|ns3] [--mpiStats=B]
 *   rdma-lb-scenario PATH [options]      (the config positionally, as ConWeave's driver)
 *
 * The file is parsed by the Rust crate rdma-lb-scenario (the same parser as the `rdma-lb` CLI);
 * the options become its overrides. Output directory: --out, else the config's, else
 * out/<config stem>-<lb>-s<seed>. Exit status 0 on success (incomplete flows are reported in
 * summary.json, not as a failure), 2 on bad input (one line on stderr), 1 if the outputs
 * cannot be written. The event scheduler defaults to rdma-lb's ns3::RdmaWheelScheduler (a
 * timing wheel: ns-3's exact event order, so identical outputs; 21 % less CPU than
 * ns3::PriorityQueueScheduler, which was itself about 20 % faster than ns-3's default map, on
 * ConWeave's 128-host case); --SchedulerType=... overrides it.
 *
 * Distributed runs (ns-3 built with MPI; ns3-module/doc/performance.md, "Distributed runs
 * (MPI)"): `mpirun -np N rdma-lb-scenario ... --ranks=N` spreads the fabric over N ranks under
 * rdma-lb's ns3::RdmaMpiSimulatorImpl (one MPI message per pair of ranks and window;
 * --mpiEngine=ns3: ns-3's ns3::DistributedSimulatorImpl, one message per frame; the same
 * outputs); rank 0 writes the merged outputs. --mpiStats=true: each rank's traffic to the
 * others on stderr. --partitionInvariant=true
 * (implied by --ranks > 1) orders same-time events partition-invariantly and does not stop at
 * the last completion, so that a 1-rank run with it has the same outputs as an N-rank run.
 */
#include "ns3/core-module.h"
#include "ns3/rdma-lb-module.h"

#include <cstdlib>
#include <iostream>
#include <set>

#ifdef NS3_MPI
#include "ns3/mpi-interface.h"
#include "ns3/rdma-mpi-simulator-impl.h"
#include "ns3/rdma-remote.h"
#endif

using namespace ns3;

namespace
{

/// A CommandLine value taking the whole argument (a plain std::string stops at a space).
void
AddWholeValue(CommandLine& cmd, const std::string& name, const std::string& help, std::string* dst)
{
    cmd.AddValue(name,
                 help,
                 MakeBoundCallback(
                     +[](std::string* d, std::string v) {
                         *d = v;
                         return true;
                     },
                     dst));
}

#ifdef NS3_MPI
/// Whether MpiInterface::Enable was called (it must be undone before exiting).
bool g_mpi = false;
#endif

int
Bad(const std::string& msg)
{
#ifdef NS3_MPI
    // Every rank finds the same fault: rank 0 says it.
    if (!g_mpi || MpiInterface::GetSystemId() == 0)
    {
        std::cerr << "rdma-lb-scenario: " << msg << std::endl;
    }
    if (g_mpi)
    {
        MpiInterface::Disable();
    }
#else
    std::cerr << "rdma-lb-scenario: " << msg << std::endl;
#endif
    return 2;
}

/**
 * The value of --ranks in argv (before CommandLine: MPI must be started first), 1 if absent.
 * \return "" or the message
 */
std::string
PeekRanks(int argc, char* argv[], uint32_t* ranks)
{
    *ranks = 1;
    for (int i = 1; i < argc; ++i)
    {
        std::string arg = argv[i];
        if (arg.rfind("--ranks=", 0) != 0)
        {
            continue;
        }
        const std::string v = arg.substr(8);
        char* end = nullptr;
        const unsigned long n = std::strtoul(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n == 0 || n > 65536)
        {
            return "--ranks: must be a whole number in 1..65536, got `" + v + "`";
        }
        *ranks = static_cast<uint32_t>(n);
    }
    return "";
}

/// The value of option \p name (`--NAME=VALUE`) in argv, \p dflt if absent (read before
/// CommandLine, as --ranks: the engine is chosen when MPI starts).
std::string
PeekOption(int argc, char* argv[], const std::string& name, const std::string& dflt)
{
    std::string v = dflt;
    const std::string prefix = "--" + name + "=";
    for (int i = 1; i < argc; ++i)
    {
        std::string arg = argv[i];
        if (arg.rfind(prefix, 0) == 0)
        {
            v = arg.substr(prefix.size());
        }
    }
    return v;
}

/**
 * Checks the option names before CommandLine::Parse, which answers an unknown one with its
 * whole usage text and exit status 1: bad input must be one line and exit status 2.
 * \return "" or the message
 */
std::string
CheckOptionNames(int argc, char* argv[], const std::set<std::string>& ours)
{
    for (int i = 1; i < argc; ++i)
    {
        std::string arg = argv[i];
        if (arg.rfind("--", 0) != 0 && !(arg.rfind('-', 0) == 0 && arg.size() > 1))
        {
            continue; // the positional config, taken out by TakePositionalConfig
        }
        std::string name = arg.substr(arg.find_first_not_of('-'));
        name = name.substr(0, name.find('='));
        if (ours.count(name) != 0 || name.rfind("Print", 0) == 0 || name == "help" || name == "h")
        {
            continue;
        }
        size_t sep = name.rfind("::");
        if (sep != std::string::npos)
        {
            // An attribute default, --ns3::Type::Attribute=value (or without the ns3:: prefix).
            std::string type = name.substr(0, sep);
            if (type.rfind("ns3::", 0) != 0)
            {
                type = "ns3::" + type;
            }
            TypeId tid;
            TypeId::AttributeInformation info;
            if (!TypeId::LookupByNameFailSafe(type, &tid))
            {
                return "--" + name + ": unknown type " + type;
            }
            if (!tid.LookupAttributeByName(name.substr(sep + 2), &info))
            {
                return "--" + name + ": " + type + " has no attribute " + name.substr(sep + 2);
            }
            continue;
        }
        StringValue value;
        if (!GlobalValue::GetValueByNameFailSafe(name, value))
        {
            return "unknown option --" + name + " (see --PrintHelp)";
        }
    }
    return "";
}

/**
 * Takes the one argument that is not an option out of argv: the config, as ConWeave's driver
 * is invoked (its config file as the one argument).
 * \return "" or the message (a second positional argument, or one beside --config)
 */
std::string
TakePositionalConfig(int* argc, char* argv[], std::string* config)
{
    int kept = 1;
    std::string positional;
    bool configOption = false;
    for (int i = 1; i < *argc; ++i)
    {
        std::string arg = argv[i];
        configOption = configOption || arg.rfind("--config=", 0) == 0 || arg == "--config";
        if (arg.empty() || arg[0] != '-')
        {
            if (!positional.empty())
            {
                return "unexpected argument `" + arg + "` (one config file; options are "
                       "--name=value)";
            }
            positional = arg;
            continue;
        }
        argv[kept++] = argv[i];
    }
    *argc = kept;
    if (!positional.empty() && configOption)
    {
        return "`" + positional + "`: the config is given twice (positionally and by --config)";
    }
    if (!positional.empty())
    {
        *config = positional;
    }
    return "";
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string config;
    std::string lb;
    std::string lbParams;
    std::string seed;
    std::string out;
    std::string stop;
    std::string load;
    std::string pfc;
    std::string recovery;
    std::string pfcTrace;
    std::string queueTrace;
    std::string quirks;
    std::string transport;
    std::string progress = "auto";
    std::string ranksText;
    std::string partitionInvariantText;
    std::string mpiEngineText;
    std::string mpiStats;
    bool partitionInvariant = false;
    uint32_t ranks = 1;
    {
        std::string e = PeekRanks(argc, argv, &ranks);
        if (!e.empty())
        {
            return Bad(e);
        }
    }
    const std::string mpiEngine = PeekOption(argc, argv, "mpiEngine", "batched");
    if (mpiEngine != "batched" && mpiEngine != "ns3")
    {
        return Bad("--mpiEngine: must be batched or ns3, got `" + mpiEngine + "`");
    }
    if (ranks > 1)
    {
#ifdef NS3_MPI
        GlobalValue::Bind("SimulatorImplementationType",
                          StringValue("ns3::DistributedSimulatorImpl"));
        MpiInterface::Enable(&argc, &argv);
        g_mpi = true;
        if (mpiEngine == "batched")
        {
            // rdma-lb's engine: one message per pair of ranks and window (MpiInterface still
            // gives the ranks; ns-3's engine is selected by Enable, replaced here before the
            // simulator is created).
            GlobalValue::Bind("SimulatorImplementationType",
                              StringValue("ns3::RdmaMpiSimulatorImpl"));
        }
        if (MpiInterface::GetSize() != ranks)
        {
            return Bad("--ranks=" + std::to_string(ranks) + ": started on " +
                       std::to_string(MpiInterface::GetSize()) + " MPI processes (mpirun -np " +
                       std::to_string(ranks) + ")");
        }
#else
        return Bad("--ranks=" + std::to_string(ranks) +
                   ": this build has no MPI (ns-3 configured with --enable-mpi: "
                   "scripts/ns3-intree --mpi)");
#endif
    }
    // The timing wheel (same event order as every ns-3 scheduler, so identical outputs) runs
    // these fabrics fastest; --SchedulerType=... still overrides it.
    GlobalValue::Bind("SchedulerType", StringValue("ns3::RdmaWheelScheduler"));
    CommandLine cmd;
    AddWholeValue(cmd, "config", "scenario file: ConWeave config (.txt) or rdma-lb TOML (.toml)", &config);
    AddWholeValue(cmd, "lb", "load-balancing algorithm (overrides the config's)", &lb);
    AddWholeValue(cmd,
                  "lbParams",
                  "algorithm parameters, `key = value` pairs separated by commas",
                  &lbParams);
    AddWholeValue(cmd, "seed", "random seed (overrides the config's)", &seed);
    AddWholeValue(cmd, "out", "output directory (default out/<config stem>-<lb>-s<seed>)", &out);
    AddWholeValue(cmd, "stop", "hard stop, a time with unit such as 10ms (overrides the config's)", &stop);
    AddWholeValue(cmd,
                  "load",
                  "offered host load of a generated (TOML Poisson) workload (overrides the config's)",
                  &load);
    AddWholeValue(cmd, "pfc", "PFC on or off: true/false/1/0 (overrides the config's)", &pfc);
    AddWholeValue(cmd, "recovery", "loss recovery: gbn, irn or nic-sr (overrides the config's)", &recovery);
    AddWholeValue(cmd, "pfcTrace", "write pfc.txt: true/false/1/0 (overrides the config's)", &pfcTrace);
    AddWholeValue(cmd,
                  "queueTrace",
                  "write queue.txt and uplink.txt (ConWeave's uplink monitor): true/false/1/0 "
                  "(overrides the config's)",
                  &queueTrace);
    AddWholeValue(cmd,
                  "quirks",
                  "reference quirks to reproduce: all, none, or a comma list of flow-ports, "
                  "time-truncation, pacing-wakeup, irn-sender, ecn-shared-stream, event-order, glibc-rand "
                  "(ConWeave configs: all; TOML: none unless [transport] quirks)",
                  &quirks);
    AddWholeValue(cmd,
                  "transport",
                  "transport parameters, `key = value` pairs separated by commas: the TOML keys of "
                  "[transport]'s table, values as in TOML without quotes, e.g. "
                  "`rp_timer = 300us, min_rate = 1Gbps` (override the config's)",
                  &transport);
    AddWholeValue(cmd, "progress", "progress on stderr: auto (when a terminal), on, off", &progress);
    AddWholeValue(cmd,
                  "ranks",
                  "MPI ranks (mpirun -np N; ns-3 built with MPI): the fabric over N ranks "
                  "(--mpiEngine), rank 0 writes the merged outputs",
                  &ranksText);
    AddWholeValue(cmd,
                  "partitionInvariant",
                  "true/false: partition-invariant event order and no stop at the last "
                  "completion: the same outputs on 1 rank and on N (default: true with "
                  "--ranks > 1, else false; false with --ranks > 1 shows what it buys)",
                  &partitionInvariantText);
    AddWholeValue(cmd,
                  "mpiEngine",
                  "with --ranks > 1: batched (rdma-lb's ns3::RdmaMpiSimulatorImpl, one message per "
                  "pair of ranks and window; default) or ns3 (ns-3's DistributedSimulatorImpl, one "
                  "message per frame); the outputs are the same",
                  &mpiEngineText);
    AddWholeValue(cmd,
                  "mpiStats",
                  "true/false: with --ranks > 1, each rank prints one line of its traffic to other "
                  "ranks (records, messages, windows) on stderr",
                  &mpiStats);
    std::string badOption = CheckOptionNames(argc,
                                             argv,
                                             {"config", "lb", "lbParams", "seed", "out", "stop", "load",
                                              "pfc", "recovery", "pfcTrace", "queueTrace", "quirks", "transport",
                                              "progress", "ranks", "partitionInvariant", "mpiEngine", "mpiStats"});
    if (badOption.empty())
    {
        badOption = TakePositionalConfig(&argc, argv, &config);
    }
    if (!badOption.empty())
    {
        return Bad(badOption);
    }
    cmd.Parse(argc, argv);
    // Until Simulator::Run or Time::SetResolution, ns-3 records every Time it constructs in a
    // locked global set (for the resolution change), and a large fabric's set-up constructs
    // millions (6 % of an 8,192-host set-up's CPU). Setting the resolution it already has converts
    // nothing and ends the recording; this program never changes it.
    Time::SetResolution(Time::GetResolution());

    if (config.empty())
    {
        return Bad("--config: required (a ConWeave config or an rdma-lb TOML file, as --config=PATH "
                   "or positionally)");
    }
    RdmaScenarioRunner::Progress mode;
    if (progress == "auto")
    {
        mode = RdmaScenarioRunner::Progress::AUTO;
    }
    else if (progress == "on")
    {
        mode = RdmaScenarioRunner::Progress::ON;
    }
    else if (progress == "off")
    {
        mode = RdmaScenarioRunner::Progress::OFF;
    }
    else
    {
        return Bad("--progress: must be auto, on or off, got `" + progress + "`");
    }
    std::string overrides;
    for (const auto& [key, option, value] :
         {std::make_tuple("lb", "--lb", &lb),
          std::make_tuple("lb_params", "--lbParams", &lbParams),
          std::make_tuple("seed", "--seed", &seed),
          std::make_tuple("out", "--out", &out),
          std::make_tuple("stop", "--stop", &stop),
          std::make_tuple("load", "--load", &load),
          std::make_tuple("pfc", "--pfc", &pfc),
          std::make_tuple("recovery", "--recovery", &recovery),
          std::make_tuple("pfc_trace", "--pfcTrace", &pfcTrace),
          std::make_tuple("queue_trace", "--queueTrace", &queueTrace),
          std::make_tuple("quirks", "--quirks", &quirks),
          std::make_tuple("transport", "--transport", &transport)})
    {
        if (value->empty())
        {
            continue;
        }
        if (value->find(';') != std::string::npos)
        {
            return Bad(std::string(option) + ": must not contain `;`");
        }
        overrides += (overrides.empty() ? "" : ";") + std::string(key) + "=" + *value;
    }

    RdmaScenarioSpec spec;
    std::string error;
    if (!LoadRdmaScenario(config, overrides, &spec, &error))
    {
        return Bad(error);
    }
    if (partitionInvariantText.empty())
    {
        partitionInvariant = ranks > 1;
    }
    else if (partitionInvariantText == "true" || partitionInvariantText == "1")
    {
        partitionInvariant = true;
    }
    else if (partitionInvariantText == "false" || partitionInvariantText == "0")
    {
        partitionInvariant = false;
    }
    else
    {
        return Bad("--partitionInvariant: must be true/false/1/0, got `" + partitionInvariantText + "`");
    }
    spec.run.ranks = ranks;
    spec.run.partitionInvariant = partitionInvariant;
    if (partitionInvariant)
    {
        Config::SetDefault("ns3::RdmaWheelScheduler::PartitionInvariantTies", BooleanValue(true));
    }
    bool rank0 = true;
#ifdef NS3_MPI
    rank0 = !g_mpi || MpiInterface::GetSystemId() == 0;
#endif
    for (const std::string& note : rank0 ? spec.notes : std::vector<std::string>{})
    {
        std::cerr << "warning: " << note << "\n";
    }
    std::string bad = RdmaScenarioRunner::Validate(spec);
    if (!bad.empty())
    {
        return Bad(config + ": " + bad);
    }
    std::string dir = spec.run.outDir;
    if (dir.empty())
    {
        dir = "out/" + spec.name + "-" + spec.lb->GetAlgorithmName() + "-s" +
              std::to_string(spec.run.seed);
    }
    RdmaScenarioRunner runner(spec);
    runner.SetOutputDirectory(dir);
    runner.SetProgress(mode);
    const bool runOk = runner.Run(&error);
#ifdef NS3_MPI
    if (g_mpi && (mpiStats == "true" || mpiStats == "1"))
    {
        const RdmaRemoteCounts c = RdmaRemoteGetCounts();
        std::cerr << "rdma-lb-scenario: rank " << MpiInterface::GetSystemId() << " (" << mpiEngine
                  << "): sent " << c.frames << " frames, " << c.expectFlows << " flow starts, "
                  << c.releases << " receiver releases to other ranks";
        if (mpiEngine == "batched")
        {
            const RdmaMpiSimulatorImpl::Statistics st = RdmaMpiSimulatorImpl::GetStatistics();
            std::cerr << " in " << st.messagesSent << " messages (" << st.bytesSent << " B), "
                      << st.messagesReceived << " received; " << st.windows << " windows of "
                      << st.lookaheadTs << " time steps' lookahead; run " << st.runCpuSeconds
                      << " s CPU, of which synchronising " << st.syncCpuSeconds << " s CPU ("
                      << st.syncSeconds << " s wall)";
        }
        else
        {
            std::cerr << ", one MPI message each";
        }
        std::cerr << std::endl;
    }
#endif
    if (!runOk)
    {
        std::cerr << "rdma-lb-scenario: " << error << std::endl;
#ifdef NS3_MPI
        if (g_mpi)
        {
            MpiInterface::Disable();
        }
#endif
        return 1;
    }
#ifdef NS3_MPI
    if (g_mpi)
    {
        MpiInterface::Disable();
    }
#endif
    if (!rank0)
    {
        return 0;
    }
    const std::map<std::string, uint64_t> lbCounters = runner.GetLbCounters();
    if (lbCounters.count("conweave_reroutes") != 0)
    {
        // The statistics the reference prints at the end of a ConWeave run, same wording.
        auto c = [&lbCounters](const char* name) { return lbCounters.at(name); };
        std::cout << "------------ConWeave History---------------\n"
                  << "Number of INIT's Reply sent (RTT_REPLY):" << c("conweave_init_replies_sent")
                  << "\nNumber of Timely RTT_REPLY (INIT's Reply):"
                  << c("conweave_init_replies_timely")
                  << "\nNumber of TAIL's Reply Sent (CLEAR):" << c("conweave_tail_replies_sent")
                  << "\nNumber of Timely CLEAR (TAIL's Reply):" << c("conweave_tail_replies_timely")
                  << "\nNumber of NOTIFY Sent:" << c("conweave_notifies_sent")
                  << "\nNumber of Rerouting:" << c("conweave_reroutes")
                  << "\nNumber of OoO enqueued pkts:" << c("conweave_ooo_queued")
                  << "\nNumber of VOQ Flush Total:" << c("conweave_voq_flushes")
                  << "\nNumber of VOQ Flush by TAIL:" << c("conweave_voq_flushes_by_tail")
                  << "\n--------------------------" << std::endl;
    }
    std::cout << "rdma-lb-scenario: " << spec.name << " lb=" << spec.lb->GetAlgorithmName()
              << " seed=" << spec.run.seed
              << ": " << runner.GetCompletedFlows() << "/" << spec.flows.size()
              << " flows completed, sim " << runner.GetSimTimeNs() << " ns, "
              << runner.GetEventCount() << " events, wall " << runner.GetWallTimeSeconds()
              << " s -> " << dir << std::endl;
    return 0;
}
