/*
 * rdma-lb: the C++ face of the Rust load balancers (crate rdma-lb-bridge).
 *
 * This header is plain C++: the cxx-generated types stay private to rdma-lb-bridge.cc
 * (PIMPL), so scenario programs and other modules never see `rust/cxx.h`. Everything here is
 * a thin forwarding layer; the algorithms live in Rust (rust-lb/core).
 *
 * Error policy (no Rust panic crosses the bridge):
 *  - Construction errors (unknown algorithm, bad parameter) come back as a message, naming the
 *    parameter; the ParseOrAbort variants turn them into NS_FATAL_ERROR.
 *  - A per-packet call cannot fail unless the Rust side caught a panic; the Try* variants then
 *    return false and GetLastError() holds the message, the plain variants raise NS_FATAL_ERROR.
 */
#ifndef RDMA_LB_BRIDGE_H
#define RDMA_LB_BRIDGE_H

#include "ns3/attribute.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simple-ref-count.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rdmalb
{
namespace bridge
{
struct LoadedScenario;
struct Ns3Setting;
} // namespace bridge
} // namespace rdmalb

namespace ns3
{

/**
 * \ingroup rdma-lb
 * One ns-3 attribute setting of the table of transport parameters (rust-lb/scenario/src/
 * transport_params.rs: each parameter's TOML and ConWeave keys, default and attribute defined
 * once): attribute \p name of every object of TypeId \p typeId = the value of kind \p kind.
 * The objects are the hosts' RdmaNic, the switches' RdmaSwitch and SwitchMmu, and the loss
 * recoveries and congestion controls the NICs create (\p typeId names the TypeId that declares
 * the attribute; the setting goes to each NIC's factory -- attributes LossRecovery,
 * CongestionControl -- of that type or of a type derived from it). The NIC's components
 * themselves are COMPONENT settings of its factory attributes. The scenario program applies a
 * loaded scenario's list in one loop; the attribute defaults read the table's defaults
 * (RdmaTransportDefault).
 */
struct RdmaTransportSetting
{
    /// The value's kind (and its field).
    enum Kind
    {
        UINT,     //!< UintegerValue(uint)
        TIME_NS,  //!< TimeValue(NanoSeconds(uint))
        RATE_BPS, //!< DataRateValue(DataRate(uint))
        BOOL,     //!< BooleanValue(uint != 0)
        DOUBLE,   //!< DoubleValue(real)
        NAME,     //!< StringValue(text): enum attributes accept their names
        COMPONENT, //!< ObjectFactoryValue of the TypeId named text (a NIC's component)
    };

    std::string typeId;      //!< the objects' TypeId name, e.g. "ns3::RdmaGoBackN"
    std::string name;        //!< the attribute's name in their TypeId
    Kind kind{UINT};         //!< the value's kind
    uint64_t uint{0};        //!< UINT, TIME_NS, RATE_BPS, BOOL
    double real{0};          //!< DOUBLE
    std::string text;        //!< NAME
    std::string summaryKey;  //!< key in summary.json's transport object ("" = not listed)
    std::string summaryText; //!< COMPONENT: its value in summary.json (the config's name)

    /// \return the value as an ns-3 attribute value of its kind
    Ptr<AttributeValue> Value() const;

    /// \return the setting a bridge value describes
    static RdmaTransportSetting FromBridge(const rdmalb::bridge::Ns3Setting& s);
};

/**
 * \ingroup rdma-lb
 * \param typeId the TypeId name of the attribute's object, e.g. "ns3::RdmaGoBackN"
 * \param name the attribute's name
 * \return the table's default of the parameter behind the attribute, as its ns-3 value (an
 * AddAttribute default); an attribute the table lacks is a fatal error
 */
Ptr<AttributeValue> RdmaTransportDefault(const std::string& typeId, const std::string& name);

/// What the NIC knows when it is about to send a data packet.
struct LbSendContext
{
    Time now;                  //!< now
    uint32_t psn{0};           //!< sequence number of the packet (in packets)
    bool retransmission{false}; //!< whether the packet is a retransmission
    uint32_t inflightPkts{0};  //!< packets sent and not yet acknowledged
    bool everyArrivalAnswered{false}; //!< the receiver answers every arrival (IRN)
};

/// Kind of feedback a sender receives about a packet.
enum class LbFeedbackKind
{
    ACK,
    NACK,
    CNP,
    TIMEOUT,
    PROBE_ACK //!< the answer to a probe packet the selector asked for (TakeProbe)
};

/// Feedback for a packet sent on `entropy`.
struct LbFeedback
{
    LbFeedbackKind kind{LbFeedbackKind::ACK}; //!< kind
    Time now;                                 //!< now
    uint16_t entropy{0};                      //!< entropy of the answered packet (echoed)
    uint32_t psn{0};                          //!< answered sequence number (in packets)
    Time rtt;                                 //!< round-trip time of that packet, if hasRtt
    bool hasRtt{false};                       //!< whether rtt is meaningful
    bool ecn{false};                          //!< whether the answered packet was ECN-marked
    bool lastHop{false}; //!< a NACK of a packet trimmed at its last hop (the port facing the host)
};

/// What a packet at a switch is.
enum class LbPacketKind
{
    DATA,
    ACK,
    NACK,
    CNP,
    LB_CONTROL //!< a switch scheme's own control packet (ConWeave REPLY / NOTIFY)
};

/// The packet fields a switch algorithm reads.
struct LbPacketInfo
{
    LbPacketKind kind{LbPacketKind::DATA}; //!< kind
    uint32_t sip{0};                       //!< source IPv4 address
    uint32_t dip{0};                       //!< destination IPv4 address
    uint16_t sport{0};                     //!< UDP source port (the entropy of data packets)
    uint16_t dport{0};                     //!< UDP destination port
    uint32_t psn{0};                       //!< sequence number (in packets)
    uint32_t ingressPort{0};               //!< port the packet arrived on
    uint32_t sizeBytes{0};                 //!< size on the wire
    bool ecnCe{false};                     //!< data: carries ECN CE
    uint16_t pg{0};                        //!< priority group
    uint16_t qpn{0};                       //!< the sender's queue pair (model metadata)
    uint32_t seqBytes{0};                  //!< data: byte offset of the first payload byte
    uint64_t tsNs{0};                      //!< data: send time; ACK/NACK: the echoed one
    bool local{false};                     //!< made by this switch's own agent
};

/// One equal-cost egress port and its state.
struct LbEgressCandidate
{
    uint32_t port{0};       //!< port index on the switch
    uint64_t queueBytes{0}; //!< bytes queued at the port
    uint64_t txBytes{0};    //!< bytes sent so far
};

/// A switch scheme's opaque per-packet tag (carried as an ns-3 packet tag: no wire bytes).
struct LbTagData
{
    bool present{false};                //!< the packet carries a tag
    std::array<uint64_t, 5> words{};    //!< its content (the scheme's own layout)
};

/// What a switch does with a packet.
enum class LbVerdictKind
{
    FORWARD, //!< send on candidate `index`
    DROP,    //!< drop (a blocked NACK, or a control packet the scheme consumed)
    HOLD     //!< hold in the per-flow queue `queue` until the agent releases it
};

/// A switch agent's verdict on one packet.
struct LbVerdict
{
    LbVerdictKind kind{LbVerdictKind::FORWARD}; //!< what to do
    uint32_t index{0};                          //!< FORWARD: index into the candidates
    bool rewriteEntropy{false};                 //!< FORWARD: write `entropy` into the sport
    uint16_t entropy{0};                        //!< the new entropy (Themis-S PathMap, 3-tier)
    uint64_t queue{0};                          //!< HOLD: the queue's name
};

/// Kind of a control packet a switch agent sends.
enum class LbControlKind
{
    NACK,      //!< an RDMA NACK as the receiver NIC would send it (Themis compensation)
    LB_CONTROL //!< the scheme's own control packet (NACK format, sequence 0, sizeBytes)
};

/// A control packet a switch agent wants sent (plain data; RdmaSwitch builds the packet).
struct LbControlPacket
{
    LbControlKind kind{LbControlKind::NACK}; //!< kind
    uint32_t sip{0};                         //!< source address
    uint32_t dip{0};                         //!< destination address
    uint16_t sport{0};                       //!< UDP source port
    uint16_t dport{0};                       //!< UDP destination port (a NACK echoes the entropy)
    uint16_t qpn{0};                         //!< the queue pair it is about
    uint16_t pg{0};                          //!< priority group
    uint32_t epsn{0};                        //!< NACK: expected sequence number (packets)
    uint32_t echoSeqBytes{0};                //!< NACK: byte offset of the triggering data
    uint64_t tsNs{0};                        //!< NACK: echoed send time
    uint32_t sizeBytes{0};                   //!< LB_CONTROL: size on the wire
    uint32_t fromPort{0};                    //!< the port it is routed from
    LbTagData tag;                           //!< its tag
};

class QpPathSelector;
class SwitchLbAgent;
class HostLbGroup;

/// How the fabric is to route an algorithm's path indices (Whack-a-Mole's `routing`;
/// LbConfig::GetPathIndexRouting).
enum class LbPathIndexRouting
{
    NOT_USED, //!< the algorithm sends no path indices
    OFF,      //!< `routing = "ecmp"`: path i is ECMP hash input i
    ON        //!< path i is the ToR's equal-cost uplink i where the fabric has one multipath stage
};

/// \return a 64-bit seed for a Rust load balancer, drawn from the ns-3 stream \p rng (so that
/// RngRun and AssignStreams govern the Rust decisions: a run is a function of its inputs
/// and seed)
uint64_t DrawLbSeed(Ptr<UniformRandomVariable> rng);

/**
 * \ingroup rdma-lb
 * A validated load-balancing configuration (algorithm name + parameters), shared by all the
 * NICs and switches of a run; it creates the per-queue-pair and per-switch deciders, and
 * answers what the fabric needs to know about the algorithm (the Rust side decides; nothing
 * here looks at a name or a parameter text).
 */
class LbConfig : public SimpleRefCount<LbConfig>
{
  public:
    /**
     * Parses and validates.
     * \param algorithm the algorithm's name (see AlgorithmNames())
     * \param params parameters as `key = value` pairs separated by commas or newlines
     * \param[out] error the reason, naming the parameter, when nullptr is returned
     * \return the configuration, or nullptr
     */
    static Ptr<LbConfig> Parse(const std::string& algorithm,
                               const std::string& params,
                               std::string* error);
    /// Like Parse, but a bad configuration is an NS_FATAL_ERROR carrying the message.
    static Ptr<LbConfig> ParseOrAbort(const std::string& algorithm, const std::string& params);
    /// Every algorithm name the Rust side knows, in table order.
    static std::vector<std::string> AlgorithmNames();
    /// Takes the configuration out of a scenario the Rust side loaded and validated
    /// (rdmalb::bridge::load_scenario; for rdma-scenario-load.cc, which sees the cxx types).
    static Ptr<LbConfig> TakeFrom(rdmalb::bridge::LoadedScenario& loaded);

    ~LbConfig();
    /// \return the algorithm's name
    std::string GetAlgorithmName() const;
    /// \return the parameter text it was parsed from
    std::string GetParams() const;
    /// \return the same configuration as a new object: ShareReferenceRand and
    /// UseHtsimSwitches apply to each copy on its own
    Ptr<LbConfig> Copy() const;
    /// \return whether the algorithm sprays a queue pair over many paths and learns per packet
    /// from the ECN marks and RTTs echoed for each (reps, whack-a-mole): a transport that leaves
    /// out-of-order arrivals unanswered starves it
    bool SpraysOnFeedback() const;
    /// \return whether the algorithm keeps a queue pair on one path at a time and moves it on
    /// ECN and RTT feedback (hopper, flowbender): thinned ACKs starve it
    bool MovesOnFeedback() const;
    /// \return how the fabric is to route the algorithm's path indices
    LbPathIndexRouting GetPathIndexRouting() const;
    /// \return whether the parameters set num_paths
    bool IsNumPathsGiven() const;
    /// \return the same configuration with num_paths = \p numPaths (a new object); a count
    /// the algorithm refuses is a fatal error naming the parameter at fault
    Ptr<LbConfig> WithNumPaths(uint32_t numPaths) const;
    /// \return a path selector for one queue pair, seeded with \p seed, with state of its own
    std::unique_ptr<QpPathSelector> CreateQpSelector(uint64_t seed) const;
    /// \return the state one sender NIC keeps across its queue pairs; the NIC creates each
    /// queue pair's selector from it (HostLbGroup::CreateQpSelector)
    Ptr<HostLbGroup> CreateHostGroup() const;
    /// \return the load-balancing agent of switch \p switchId, seeded with \p seed
    std::unique_ptr<SwitchLbAgent> CreateSwitchAgent(uint32_t switchId, uint64_t seed) const;
    /// Quirk glibc-rand: the switch agents created from now on draw LetFlow's, CONGA's and
    /// ConWeave's random choices as `rand() % n` from one glibc rand() stream after
    /// srand(\p seed), shared by all of them in the order they draw (the reference's
    /// srand(RANDOM_SEED)). Other schemes are unaffected.
    void ShareReferenceRand(uint32_t seed);
    /**
     * The REPS authors' switches (htsim's ECMP, rust-lb core switch/htsim_ecmp.rs): the switch
     * agents created from now on hash and shuffle as htsim does, from one mt19937(\p seed)
     * stream. \p switchIds lists every switch in htsim's construction order (ToRs, then the
     * second tier, then the rest), its first \p tors being the ToRs; the stream skips htsim's
     * draws made before the first packet (one per second-tier switch, per host, two per flow).
     * Fatal error if the algorithm's switch side is not plain ECMP.
     */
    void UseHtsimSwitches(uint32_t seed,
                          const std::vector<uint32_t>& switchIds,
                          uint32_t tors,
                          uint32_t secondTier,
                          uint32_t hosts,
                          uint32_t flows);

    struct Impl;

  private:
    explicit LbConfig(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

/**
 * \ingroup rdma-lb
 * SimAI's per-layer result file (ncclFlowModel_EndToEnd.csv) of a scenario whose workload is
 * a SimAI workload file: the columns and their rules are rust-lb/scenario/src/simai/report.rs;
 * the scenario program writes it after the run from every flow's completion.
 */
class SimAiEndToEndReport : public SimpleRefCount<SimAiEndToEndReport>
{
  public:
    /// Takes the report out of a scenario the Rust side loaded (for rdma-scenario-load.cc);
    /// nullptr if the scenario has no SimAI iteration.
    static Ptr<SimAiEndToEndReport> TakeFrom(rdmalb::bridge::LoadedScenario& loaded);

    ~SimAiEndToEndReport();
    /// \return the file's name
    std::string GetFileName() const;
    /**
     * The file's text.
     * \param flowEndNs per flow id, its completion at its sender in ns (UINT64_MAX: it did not
     *        complete)
     * \param[out] csv the text
     * \return "" or, in one line, why there is no file (a collective of rank 0 did not complete)
     */
    std::string Write(const std::vector<uint64_t>& flowEndNs, std::string* csv) const;

    struct Impl;

  private:
    explicit SimAiEndToEndReport(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

/**
 * \ingroup rdma-lb
 * One sender NIC's load-balancing state across its queue pairs (Rust object): Whack-a-Mole's
 * per-destination profiles when `profile_scope = "destination"`, nothing otherwise.
 */
class HostLbGroup : public SimpleRefCount<HostLbGroup>
{
  public:
    struct Impl;
    explicit HostLbGroup(std::unique_ptr<Impl> impl);
    ~HostLbGroup();

    /// \return a path selector for one queue pair to the address \p destination, seeded with
    /// \p seed (the same draws as LbConfig::CreateQpSelector). \p flowSport: the flow's own
    /// source port, if it has one (reference quirk flow-ports): a host side that keeps one
    /// entropy per flow (ecmp, the switch-side schemes) then keeps this one
    std::unique_ptr<QpPathSelector> CreateQpSelector(
        uint32_t destination,
        uint64_t seed,
        std::optional<uint16_t> flowSport = std::nullopt);

  private:
    std::unique_ptr<Impl> m_impl;
};

/**
 * \ingroup rdma-lb
 * One queue pair's path selector (Rust object): chooses each data packet's entropy.
 *
 * A selector that keeps one entropy for the flow's life (ECMP's NIC side and every switch
 * scheme's) answers every call with a constant; it says so when created, and its answers are
 * then given here without a call into Rust.
 */
class QpPathSelector
{
  public:
    struct Impl;
    explicit QpPathSelector(std::unique_ptr<Impl> impl);
    ~QpPathSelector();

    /// \return the entropy of the next data packet (NS_FATAL_ERROR if the algorithm failed)
    uint16_t NextEntropy(const LbSendContext& cx);
    /// \return false if the algorithm failed (see GetLastError); else sets \p entropy
    bool TryNextEntropy(const LbSendContext& cx, uint16_t* entropy);
    /// Delivers feedback (NS_FATAL_ERROR if the algorithm failed).
    void OnFeedback(const LbFeedback& fb);
    /// \return the time the selector wants OnTimer called, or Time::Max() for none
    Time PollAt() const;
    /// Fires the selector's timer (NS_FATAL_ERROR if the algorithm failed).
    void OnTimer(Time now);
    /// \return the earliest time the next data packet may leave (Hopper holds a queue pair
    /// while it switches paths); Time(0) when there is no hold
    Time GetSendAfter() const;
    /**
     * Asks whether the selector wants a probe packet sent now.
     * \param now the current time
     * \param[out] entropy the probe's entropy, when true is returned
     * \return whether to send a probe
     */
    bool TakeProbe(Time now, uint16_t* entropy);
    /// \return how many times the selector moved the queue pair to another path
    uint64_t GetPathSwitches() const;
    /// \return the message of the caught failure, or an empty string
    std::string GetLastError() const;
    /// Makes the next call panic inside the Rust guard (tests only; it ends the constant
    /// answers of a fixed-entropy selector, so that the next call reaches Rust).
    void ArmTestPanic();

  private:
    std::unique_ptr<Impl> m_impl;
    /// The flow's entropy when the selector keeps one for its life, else -1
    int32_t m_fixedEntropy;
};

/**
 * \ingroup rdma-lb
 * One switch's load-balancing agent (Rust object; rust-lb/core/src/switch/agent.rs): the switch
 * shows it the packets it routes and pulls from it the control packets, held-queue releases
 * and timer it wants (one-way: Rust never calls C++).
 */
class SwitchLbAgent
{
  public:
    struct Impl;
    explicit SwitchLbAgent(std::unique_ptr<Impl> impl);
    ~SwitchLbAgent();

    // Setup (before the first packet).

    /// One of the switch's ports: its rate, its link's one-way delay, whether it faces a host.
    void AddPort(uint32_t port, uint64_t rateBps, Time delay, bool facesHost);
    /// Host \p hostIp hangs off the ToR switch whose node id is \p tor.
    void AddHost(uint32_t hostIp, uint32_t tor);
    /// (ToRs) A path to ToR \p dstTor: byte k of \p pathId = egress port + 1 at hop k.
    void AddPath(uint32_t dstTor, uint32_t pathId, uint8_t hops);
    /// \return whether OnIngress wants packets with a single candidate too
    bool SeesEveryPacket() const;
    /// \return whether OnEgress must be called at dequeue
    bool SeesEgress() const;
    /// \return whether OnIngress reads the candidates' queue and sent bytes (else zeros do)
    bool ReadsPortLoad() const;
    /// \return whether the agent reads the fabric map (AddHost, AddPath): without it the switch
    /// spares finding every host's ToR and every path
    bool UsesFabricMap() const;

    // Per packet (NS_FATAL_ERROR if the algorithm failed).

    /// \return the verdict on a packet towards \p candidates; \p tag is updated in place
    LbVerdict OnIngress(Time now,
                        const LbPacketInfo& pkt,
                        LbTagData* tag,
                        const std::vector<LbEgressCandidate>& candidates);
    /// A packet leaves through \p port.
    void OnEgress(Time now, const LbPacketInfo& pkt, const LbTagData& tag, uint32_t port);
    /// \return whether there is a control packet to send now (then in \p out)
    bool PollTransmit(Time now, LbControlPacket* out);
    /// \return whether a held queue is to be released now (then its name in \p queue)
    bool PollRelease(Time now, uint64_t* queue);
    /// \return when the agent wants OnTimer called, or Time::Max() for never
    Time PollAt() const;
    /// Fires the agent's timer.
    void OnTimer(Time now);

    /// A link went down (\p down) or up: port \p port of this switch, or (\p remote) a link
    /// elsewhere in the fabric as a monitoring system reports it.
    void OnLinkState(uint32_t port, bool remote, bool down);
    /// \return bytes of switch memory the algorithm's state needs (its paper's accounting)
    uint64_t GetMemoryBytes() const;
    /// \return every counter of the agent, (name, value)
    std::vector<std::pair<std::string, uint64_t>> GetCounters() const;
    /// \return the message of the caught failure, or an empty string
    std::string GetLastError() const;
    /// Makes the next call panic inside the Rust guard (tests only).
    void ArmTestPanic();

  private:
    std::unique_ptr<Impl> m_impl;
};

} // namespace ns3

#endif /* RDMA_LB_BRIDGE_H */
