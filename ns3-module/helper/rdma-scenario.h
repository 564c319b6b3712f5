/*
 * rdma-lb: scenarios -- a plain-data description of a whole run (topology, flows with
 * dependencies, collectives, transport settings, load balancer, run control) and the runner
 * that builds the fabric from it, runs it and writes the outputs (doc/rdma-lb.rst, "Scenarios").
 *
 * The description mirrors the Rust crate rdma-lb-scenario's `Scenario` (the parsers of
 * ConWeave's config/topology/flow files and of our TOML live there; rdma-scenario-load.cc
 * converts). Reference behaviour reproduced (doc/rdma-lb.rst, "The reference simulator"):
 *  - topology: node ids shared by hosts and switches, ports in link order;
 *  - flows: sport 10000, 10001, ... per source host and dport 100, 101, ... per
 *    destination host, in flow-id order (16 bit, wrapping);
 *  - pair base RTT = 2 x one-way delay + one payload-size packet's serialization per hop
 *    (counted once), bottleneck = slowest link of the BFS path;
 *  - ideal FCT = base RTT + (size + ceil(size / payload) x 48) x 8 / bottleneck,
 *    integer nanoseconds; fct.txt in ConWeave's format.
 * Deviations: outputs are written in flow-id order at the end of the run (ConWeave appends in
 * completion order); the run stops as soon as every flow has completed (ConWeave polls every
 * 100 us), so sim_time_ns is the last completion, not the next poll.
 *
 * Dependencies: a flow with a non-empty `after` list starts at max(startNs, the time the last
 * byte of every listed flow was delivered in order at its receiver) -- RdmaNic's FlowDelivered
 * trace; the flow's FCT is measured from that actual start.
 *
 * rdma-scenario.cc runs the fabric; the output files and traces are rdma-scenario-output's.
 */
#ifndef RDMA_SCENARIO_H
#define RDMA_SCENARIO_H

#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/rdma-lb-bridge.h"
#include "ns3/rdma-nic.h"

#include <cstdint>
#include <memory>
#include <map>
#include <string>
#include <vector>

namespace ns3
{

/// \ingroup rdma-lb
/// One link of the topology (file order; port numbers per node follow this order).
struct RdmaScenarioLink
{
    uint32_t a{0};          //!< one end (node id)
    uint32_t b{0};          //!< the other end
    uint64_t rateBps{0};    //!< line rate, bit/s
    uint64_t delayNs{0};    //!< one-way propagation delay, ns
    double errorRate{0.0};  //!< per-packet loss probability at each receiving end (0..1)
};

/// \ingroup rdma-lb
/// One direction of a link set apart (`[topology] link_rates` with one_way / scale_queue):
/// node's port towards peer sends at rateBps; with the uet transport its data queue limit and
/// ECN thresholds are multiplied by queueScale (RdmaFabricHelper::SetPortRate).
struct RdmaScenarioPortRate
{
    uint32_t node{0};      //!< the sending node
    uint32_t peer{0};      //!< the other end of the link
    uint64_t rateBps{0};   //!< its sending rate, bit/s
    double queueScale{1.0}; //!< factor on its queue limit and ECN thresholds
};

/// \ingroup rdma-lb
/// One flow (an RDMA write of sizeBytes from src to dst).
struct RdmaScenarioFlow
{
    uint32_t id{0};              //!< id = index in the flow list
    uint32_t src{0};             //!< sender host
    uint32_t dst{0};             //!< receiver host
    uint32_t pg{3};              //!< priority group of its data (1..7)
    uint64_t sizeBytes{0};       //!< bytes (>= 1)
    uint64_t startNs{0};         //!< earliest start
    std::vector<uint32_t> after; //!< flows (smaller ids) that must be delivered first
    /// flows (smaller ids) after whose delivery the sender computes for computeNs first
    std::vector<uint32_t> computeAfter;
    uint64_t computeNs{0}; //!< see computeAfter
    uint64_t latencyNs{0}; //!< after every dependency (after, computeAfter): a send latency
    bool afterCompletion{false}; //!< dependencies count at their sender's completion
    /// flows (smaller ids, same sender) whose last byte must have been sent first (its first
    /// serialisation ended; RdmaNic's FlowSent), latencyNs before this one starts
    std::vector<uint32_t> afterSent;
    /// flows (smaller ids, same sender) whose hand-off (start - their sendLatencyNs) must come
    /// first, latencyNs before this one starts: SimAI's ring steps in order
    std::vector<uint32_t> afterReady;
    uint64_t sendLatencyNs{0}; //!< the part of latencyNs after the hand-off (<= latencyNs)
};

/// \ingroup rdma-lb
/// A collective: CCT = last delivery - first start of its flows.
struct RdmaScenarioCollective
{
    uint32_t group{0};              //!< group number
    std::string kind;               //!< "allreduce-ring" | "alltoall" | "permutation" | "incast"
    std::vector<uint32_t> flowIds;  //!< its flows
};

/// \ingroup rdma-lb
/// ECN thresholds of ports of one rate (KMIN_MAP / KMAX_MAP / PMAX_MAP).
struct RdmaScenarioEcnEntry
{
    uint64_t rateBps{0};     //!< port rate
    uint64_t kminBytes{0};   //!< marking starts above this
    uint64_t kmaxBytes{0};   //!< every packet marked above this
    double pmax{0.0};        //!< probability at kmax
};

/// \ingroup rdma-lb
/// The reference simulator's behaviours reproduced for lock-step agreement (Rust
/// rdma_lb_scenario::Quirk; every one on for ConWeave configs, off for our TOML scenarios
/// unless listed). Defaults: all off, as the model's attributes (the model's own behaviour).
struct RdmaScenarioQuirks
{
    bool flowPorts{false};       //!< data carries the reference's ports; ECMP's entropy = the sport
    bool simai{false};           //!< a SimAI workload: flowPorts gives SimAI's ports (per pair),
                                 //!< timeTruncation its integer times (IntegerTxTime)
    bool timeTruncation{false};  //!< RdmaNetDevice/RdmaNic::TimeTruncation (ns-3.19 times)
    bool pacingWakeup{false};    //!< RdmaNic::PacingWakeupQuirk
    bool irnSender{false};       //!< RdmaNic::IrnReferenceSender
    bool ecnSharedStream{false}; //!< RdmaSwitch::EcnSharedStream
    bool eventOrder{false};      //!< RdmaNic::EventOrderQuirk + the reference's flow starts
    bool glibcRand{false};       //!< LbConfig::ShareReferenceRand (LetFlow's rand() % n)
};

/// \ingroup rdma-lb
/// NIC, switch and congestion-control settings. Defaults: rdma_lb_scenario::Transport::default()
/// (ConWeave's run.py values at 100G), read through the bridge by the constructor -- the one
/// definition of each default; the quirks stay off. Every parameter of the table of transport
/// parameters (rust-lb/scenario/src/transport_params.rs) is one entry of \p attributes, and of
/// its uet sub-table (transport_params/uet.rs) one of \p uetAttributes, which the runner applies
/// in one loop; the fields are what the runner derives other settings from.
struct RdmaScenarioTransport
{
    RdmaScenarioTransport();
    /// uet: RdmaFabricHelper::UseHtsimSwitches (switch_hash: how the switches are built, not an
    /// attribute)
    bool uetHtsimSwitches{};
    bool hasWin{};                 //!< HAS_WIN: RdmaNic::Window = the largest BDP of the fabric
    std::vector<RdmaScenarioEcnEntry> ecn;    //!< per port rate; empty = ConWeave's 6 entries
    RdmaScenarioQuirks quirks;                //!< reference behaviours reproduced
    std::vector<RdmaTransportSetting> attributes; //!< the table's settings, in table order
    /// The uet table's settings (transport_params/uet.rs), whatever the kind; applied after
    /// \p attributes when the NICs run the uet transport (Uet())
    std::vector<RdmaTransportSetting> uetAttributes;

    /// \return the setting of attribute \p name of the objects of TypeId \p typeId, e.g.
    /// ("ns3::RdmaGoBackN", "L2ChunkSize"), in \p attributes or else in \p uetAttributes
    /// (fatal error if there is none)
    const RdmaTransportSetting& Get(const std::string& typeId, const std::string& name) const;
    /// \return the setting of attribute \p name of \p typeId, to change (fatal error if none)
    RdmaTransportSetting& Get(const std::string& typeId, const std::string& name);

    // The settings the runner derives other settings from (RdmaNic/RdmaSwitch/SwitchMmu
    // attributes of the same names).
    /// \return the TypeId of the NICs' factory attribute \p attribute (fatal error if unknown)
    TypeId Component(const std::string& attribute) const;
    TypeId Recovery() const;       //!< \return the TypeId of RdmaNic::LossRecovery
    TypeId Cc() const;             //!< \return the TypeId of RdmaNic::CongestionControl
    /// \return whether the NICs run the uet transport: their loss recovery is
    /// ns3::RdmaUetRecovery (or derived from it)
    bool Uet() const;
    uint32_t PayloadBytes() const;          //!< \return RdmaNic::PayloadSize
    uint64_t BufferBytes() const;           //!< \return SwitchMmu::BufferSize
    bool EcnEnabled() const;                //!< \return RdmaSwitch::EcnEnabled
    uint32_t UetHeaderBytes() const;        //!< \return RdmaNic::UetHeaderSize (uet)
};

/// \ingroup rdma-lb
/// A link going down or back up.
struct RdmaScenarioLinkEvent
{
    uint64_t atNs{0}; //!< when
    uint32_t a{0};    //!< one end (with byPort: the switch)
    uint32_t b{0};    //!< the other end
    bool down{true};  //!< true = down, false = up
    bool byPort{false}; //!< the link of switch a's port \p port (RdmaFabricHelper::ScheduleSwitchPortState)
    uint32_t port{0};   //!< with byPort: the switch port (its links in file order, 0-based)
    /// Only a's sending direction towards b, silently (RdmaFabricHelper::ScheduleOneWayState)
    bool oneWay{false};
};

/// \ingroup rdma-lb
/// Run control and outputs.
struct RdmaScenarioRun
{
    uint64_t seed{1};                    //!< RngSeedManager seed (1..2^32-1)
    uint64_t flowgenStartNs{0};          //!< start of the measured window (informational)
    uint64_t flowgenStopNs{0};           //!< end of flow generation (progress estimate)
    uint64_t hardStopNs{10000000000ULL}; //!< the simulation stops here at the latest
    uint64_t monitorIntervalNs{10000};   //!< periodic monitors (informational)
    std::vector<RdmaScenarioLinkEvent> linkEvents; //!< link faults
    std::string outDir;                  //!< output directory ("" = the program's default)
    bool pfcTrace{false};                //!< write pfc.txt
    bool queueTrace{false};              //!< write queue.txt and uplink.txt (sampled)
    uint64_t rateTraceNs{0};             //!< rate.txt / retx.txt sampling period (0 = off)
    bool failedLinkDrops{false};         //!< write failed_drops.csv
    uint64_t rttHistogramNs{0};          //!< rtt_hist.csv bin width (0 = off; uet senders)
    bool portBytes{false};               //!< write port_bytes.csv (every switch-switch port)
    double load{0.0};                    //!< offered load (informational)
    /// MPI ranks the run is spread over (1 = none), under the engine the scenario program's
    /// --mpiEngine picks (RdmaMpiSimulatorImpl or ns-3's DistributedSimulatorImpl). Set by the
    /// scenario program's --ranks, not by the config.
    uint32_t ranks{1};
    /// Partition-invariant mode (doc/performance.md, "Distributed runs (MPI)"): ties ordered by
    /// RdmaWheelScheduler::PartitionInvariantTies, and the run does not stop at its last flow's
    /// completion (it ends when no event is left, or at the hard stop), so that 1 rank and N
    /// give the same outputs. On whenever ranks > 1.
    bool partitionInvariant{false};
};

/// \ingroup rdma-lb
/// A whole run.
struct RdmaScenarioSpec
{
    std::string name;                             //!< config stem
    std::string configPath;                       //!< config file as given
    uint32_t nodeCount{0};                        //!< node ids 0..nodeCount-1
    std::vector<uint32_t> switchIds;              //!< the switches; other ids are hosts
    std::vector<RdmaScenarioLink> links;          //!< in file order
    std::vector<RdmaScenarioPortRate> portRates;  //!< applied after the links
    /// switches that also end and start flows (SimAI's NVSwitches under NVLS;
    /// RdmaFabricHelper::SetEndpointSwitches)
    std::vector<uint32_t> endpointSwitchIds;
    std::vector<RdmaScenarioFlow> flows;          //!< ids 0..n-1
    std::vector<RdmaScenarioCollective> collectives; //!< collective groups
    RdmaScenarioTransport transport;              //!< NIC/switch settings
    /// The load balancing (its algorithm and parameters): the one LoadRdmaScenario's
    /// validation parsed, or LbConfig::ParseOrAbort(name, params) for a spec made by hand
    Ptr<LbConfig> lb;
    /// With a SimAI workload file: SimAI's per-layer report, written after the run; else
    /// nullptr
    Ptr<SimAiEndToEndReport> simaiReport;
    RdmaScenarioRun run;                          //!< run control
    std::vector<std::string> notes;               //!< accepted-but-not-modelled warnings
    std::string configEcho;                       //!< effective config text (summary.json)

    /// ConWeave's ECN map (KMIN 100 KB, KMAX 400 KB, PMAX 0.2 at 20/50/100/200/250/400G).
    static std::vector<RdmaScenarioEcnEntry> DefaultEcnMap();
};

/// \ingroup rdma-lb
/// The outcome of one flow.
struct RdmaScenarioFlowResult
{
    uint32_t id{0};           //!< flow id
    uint32_t src{0};          //!< sender host
    uint32_t dst{0};          //!< receiver host
    uint16_t sport{0};        //!< ConWeave sport (10000 + k per source)
    uint16_t dport{0};        //!< ConWeave dport (100 + k per destination)
    uint64_t sizeBytes{0};    //!< bytes
    bool started{false};      //!< its queue pair was created
    bool delivered{false};    //!< its last byte arrived in order
    bool completed{false};    //!< its last ACK arrived at the sender
    uint64_t startNs{0};      //!< actual start
    uint64_t deliveredNs{0};  //!< last byte delivered at the receiver
    uint64_t fctNs{0};        //!< sender completion - start (ConWeave's FCT)
    uint64_t idealNs{0};      //!< ideal FCT (the reference's)
    uint64_t retxPkts{0};     //!< data packets resent
    uint64_t nacks{0};        //!< NACKs the receiver sent
    uint64_t cnps{0};         //!< CNP-flagged feedback the sender received
    uint64_t timeouts{0};     //!< retransmission timeouts
    uint64_t rateCuts{0};     //!< DCQCN rate decreases
    uint64_t pathSwitches{0}; //!< load-balancer path changes
    uint64_t probes{0};       //!< probes sent
};

/// \ingroup rdma-lb
/// The outcome of one collective group.
struct RdmaScenarioCollectiveResult
{
    uint32_t group{0};      //!< group number
    std::string kind;       //!< pattern
    bool complete{false};   //!< every flow delivered
    uint64_t startNs{0};    //!< first start
    uint64_t finishNs{0};   //!< last delivery
};

/// \ingroup rdma-lb
/// The run's totals beyond the per-flow counters (summary.json "counters").
struct RdmaScenarioCounters
{
    uint64_t ecnMarks{0};      //!< ECN marks by the switches
    uint64_t mmuDrops{0};      //!< packets the switches' MMUs dropped
    uint64_t forwarded{0};     //!< packets sent by the switches
    /// packets sent by every port, hosts' and switches' (one per packet per link it is sent
    /// over): the unit of a simulator's work that bench-scenario divides CPU time by
    uint64_t packetHops{0};
    uint64_t trims{0};         //!< data packets trimmed by switches (uet with trimming)
    uint64_t ackRequests{0};   //!< uet: data packets sent asking for an ACK at once (AR)
    uint64_t uetAcks{0};       //!< uet: ACKs sent by receivers
    uint64_t pulls{0};         //!< uet: RCCC pulls sent by receivers
    uint64_t pfcPausesSent{0}; //!< PFC pauses sent by the switches
    uint64_t cnpsSent{0}; //!< CNP-flagged feedback sent by receivers (ConWeave's cnp.txt count)
    uint64_t pfcPausesRx{0};   //!< PFC pauses received, every port
    uint64_t pfcResumesRx{0};  //!< PFC resumes received, every port
    uint64_t linkLoss{0};      //!< packets lost on links that were down
    uint64_t errorDrops{0};    //!< packets dropped by the links' error models
};

class RdmaScenarioOutput;

/**
 * \ingroup rdma-lb
 * Builds the fabric of a RdmaScenarioSpec with RdmaFabricHelper, applies its transport
 * settings to the NIC / switch / MMU attributes, schedules flows (dependent ones on their
 * predecessors' delivery), link events and the stop conditions, runs the simulation and
 * writes fct.txt, flows.csv, summary.json, collectives.csv and pfc.txt.
 *
 * A spec that cannot be run (unknown node, host with two links, flow between a host and
 * itself, dependency on a later flow, missing ECN map entry, no load balancer, ...) is
 * reported by Validate / Run as one line naming the field, never by an abort. The transport's
 * settings and the load balancer's parameters are validated once, in Rust, when the scenario
 * is loaded (rdma_lb_scenario::validate) or the LbConfig parsed; the spec's enums cannot hold
 * an unknown name.
 */
class RdmaScenarioRunner
{
  public:
    /// Progress indicator on stderr.
    enum class Progress
    {
        AUTO, //!< only when stderr is a terminal
        ON,   //!< always
        OFF   //!< never
    };

    /// \param spec the scenario (copied)
    explicit RdmaScenarioRunner(RdmaScenarioSpec spec);
    ~RdmaScenarioRunner();

    /// \return "" if \p spec can be run on the fabric, else one line naming the offending
    /// field: the topology, ports, link rates (ECN map), flow endpoints and link events, and
    /// what the runner relies on (flow ids, dependencies, the ranges of ns-3's times and seed)
    static std::string Validate(const RdmaScenarioSpec& spec);

    /// Outputs go to \p dir (created if needed); "" = do not write files.
    void SetOutputDirectory(const std::string& dir);
    /// Sets the progress indicator mode (default AUTO).
    void SetProgress(Progress mode);

    /**
     * Validates, builds, runs (Simulator::Run, then Simulator::Destroy) and writes the outputs.
     * \param[out] error one line when false is returned (bad spec or output not writable)
     * \return true on success (incomplete flows are not an error; see GetCompletedFlows)
     */
    bool Run(std::string* error);

    /// \return the per-flow outcomes, in flow-id order
    const std::vector<RdmaScenarioFlowResult>& GetFlowResults() const;
    /// \return the per-group outcomes, in spec order
    const std::vector<RdmaScenarioCollectiveResult>& GetCollectiveResults() const;
    /// \return the number of flows that completed
    uint32_t GetCompletedFlows() const;
    /// \return the simulator events executed
    uint64_t GetEventCount() const;
    /// \return the simulated time at the end of the run
    uint64_t GetSimTimeNs() const;
    /// \return the switch load balancers' counters summed over the switches, by name
    /// (summary.json "lb_counters")
    std::map<std::string, uint64_t> GetLbCounters() const;
    /// \return the run's totals (summary.json "counters" beyond the per-flow sums)
    RdmaScenarioCounters GetCounters() const;
    /// \return the wall-clock seconds of the pair table, build and run
    double GetWallTimeSeconds() const;
    /// \return wall seconds of the set-up (pair table, fabric, traffic) before the first event
    double GetSetupWallSeconds() const;

    /// \return ConWeave's fct.txt text (completed flows, flow-id order)
    std::string FctText() const;
    /// \return flows.csv text (header + every flow, flow-id order; a flow that did not complete
    /// has empty fct_ns and slowdown)
    std::string FlowsCsv() const;
    /// \return summary.json text
    std::string SummaryJson() const;
    /// \return collectives.csv text (header + one row per complete group)
    std::string CollectivesCsv() const;
    /// \return per flow id, its completion at its sender (start + FCT), ns; UINT64_MAX for a
    /// flow that did not complete (SimAiEndToEndReport::Write)
    std::vector<uint64_t> FlowEnds() const;
    /**
     * \return failed_drops.csv text (run.failedLinkDrops): header + one row per flow that lost
     * data packets on a down link, in flow-id order -- flow_id, src, dst, drops, first_drop_ns,
     * last_drop_ns; packets no flow was found for last, with an empty flow_id, src and dst
     */
    std::string FailedDropsCsv() const;
    /**
     * \return rtt_hist.csv text (run.rttHistogramNs = w): header + bins from 0 to the last
     * non-empty one -- bin_start_ns, bin_end_ns (start + w), acks: uet ACKs whose RTT (arrival
     * minus the echoed send time of the acknowledged packet) is in [start, start + w)
     */
    std::string RttHistCsv() const;
    /**
     * \return port_bytes.csv text (run.portBytes): header + one row per switch port whose peer
     * is a switch or a host of several NIC ports (SimAI's multi-homed GPU), by switch id and
     * port -- switch, port (1-based, as uplink.txt), peer, tx_bytes (bytes sent on the port over
     * the whole run, every packet kind)
     */
    std::string PortBytesCsv() const;
    /// \return pfc.txt text when the PFC trace was on and no output directory was set
    std::string PfcText() const;
    /// \return queue.txt text when the queue trace was on and no output directory was set
    std::string QueueText() const;
    /// \return uplink.txt text when the queue trace was on and no output directory was set
    std::string UplinkText() const;
    /// \return rate.txt text when the rate trace was on and no output directory was set
    std::string RateText() const;
    /// \return retx.txt text when the rate trace was on and no output directory was set
    std::string RetxText() const;

    /**
     * Base RTT of a host pair as the reference computes it: 2 x one-way delay +
     * serialization of one payload-size packet per hop, on the first BFS path from \p dst.
     * Valid after Run or ComputePairs.
     * \return the RTT in ns (0 if unreachable)
     */
    uint64_t GetPairRttNs(uint32_t src, uint32_t dst) const;
    /// \return the bottleneck rate of the pair's path in bit/s (0 if unreachable)
    uint64_t GetPairBottleneckBps(uint32_t src, uint32_t dst) const;
    /// \return the ideal FCT of a flow of \p size bytes (the reference's formula)
    uint64_t GetIdealFctNs(uint32_t src, uint32_t dst, uint64_t size) const;
    /// Computes the pair tables without running (for tests of the ideal FCT).
    /// \return an error (a path the pair table cannot hold), or empty
    std::string ComputePairs();

    /**
     * The MPI rank of every node for a run over \p ranks ranks: the ToRs (switches with a host
     * link) in id order in \p ranks contiguous groups, each host on its ToR's rank, a switch
     * with more than half of its ToR links to one rank on that rank (a fat tree's aggregation
     * switch with its pod), every other switch (spine, core) in id order round-robin.
     */
    static std::vector<uint32_t> PartitionNodes(const RdmaScenarioSpec& spec, uint32_t ranks);
    /// \return "" or what a run over several ranks does not support in \p spec
    static std::string ValidateRanks(const RdmaScenarioSpec& spec);

    struct State; //!< run-time state (trace sinks, counters)

  private:
    /// The uet transport: derived parameters and the NIC/switch attributes (rdma-uet.h).
    void ConfigureUet();
    /// Builds the fabric, one role per step (the functions below, in this order).
    void BuildFabric();
    void CreateFabric();
    void ConfigureNodes();
    void ApplyTransportTable();
    void CreateLinks();
    void ConfigurePortsAndEcn();
    void WarnStarvedBalancer();
    void AssignStreams();
    void ConnectTraces();
    void ScheduleTraffic();
    void Simulate();
    void SummarizeCollectives();
    /// Closes the streamed traces and writes fct.txt, flows.csv, collectives.csv and
    /// summary.json (rdma-scenario-output.cc). \return "" or the error
    std::string WriteOutputs();
    /// Several ranks: sends this rank's flows, counters and receivers' counts to rank 0, which
    /// merges them (every rank's own flows; a flow's delivery from its receiver's rank).
    void MergeRanks();
    /// \return transport uet's derived parameters (JSON), else ""
    const std::string& GetUetSummary() const;

    /// \return printf's formatting of \p format as a string
    static std::string Fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));
    /// \return \p s as a JSON string literal
    static std::string JsonString(const std::string& s);
    /// \return \p v as a JSON number (shortest round-tripping form; null if not finite)
    static std::string JsonDouble(double v);

    RdmaScenarioSpec m_spec;
    std::string m_outDir;
    Progress m_progress{Progress::AUTO};
    std::unique_ptr<State> m_state;
    std::unique_ptr<RdmaScenarioOutput> m_output; //!< the run's output files and traces
};

} // namespace ns3

#endif /* RDMA_SCENARIO_H */
