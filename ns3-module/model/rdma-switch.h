/*
 * rdma-lb: the switch of the RDMA fabric model (the reference's SwitchNode, as behaviour;
 * doc/rdma-lb.rst, "Routing and ECMP", "Switch buffer, PFC and ECN").
 *
 * Forwarding: look up the destination address in the routing table (all equal-cost egress
 * ports, ascending port order); with more than one candidate, the run's load balancer chooses
 * (Rust, through the bridge; with ECMP it is the reference's MurmurHash3 5-tuple hash seeded by
 * the switch id). Data goes to the queue of its priority group, ACK/NACK to queue 0.
 * Port indices are the node's device indices (0-based; the reference counts from 1 because its
 * port 0 is a loopback device).
 *
 * Buffer (as the reference): every packet of queue 1-7 passes the egress then the ingress
 * admission of the switch's SwitchMmu (attribute Mmu; sized lazily from the ports' rates and
 * link delays, or by ConfigureMmu) and is charged to both; failing either drops it (Drop trace,
 * per-egress-port drop counter). Queue 0 (ACK/NACK/PFC) bypasses the MMU. With PFC off the
 * egress dynamic threshold is the drop point.
 *
 * PFC generation (as the reference; PfcEnabled): after admitting a packet from port i, every class
 * k that must pause gets a pause frame of PauseTime out of port i (queue 0) -- re-sent for every
 * arriving packet while the condition holds -- and classes that may resume get an explicit resume;
 * the resume check also runs when a packet that entered via port i departs.
 *
 * ECN (as the reference; EcnEnabled): at dequeue of a data packet of queue q from port j, with S
 * the egress shared bytes of (j, q) after its removal, mark CE (RdmaHeader::ecn = 3) if S >
 * EcnKmax, else with probability (S - Kmin) / (Kmax - Kmin) x Pmax if S > EcnKmin.
 *
 * QueueRelease (uet transport; doc/rdma-lb.rst, "The UET transport"): "start" (default) does the
 * above when a packet's transmission starts -- it leaves the MMU's accounting (so also the
 * DataQueueLimit's occupancy) and is marked then. "end" keeps an MMU-admitted packet of queues
 * 1-7 charged while it is sent and does both when its last bit has left
 * (RdmaNetDevice::SetTransmitEndHook): its own mark is decided from the packets waiting
 * behind it then, and until then it counts against DataQueueLimit (one packet less room for
 * those arriving meanwhile), as the UEC htsim's CompositeQueue (receivePacket, completeService).
 *
 * Link faults: NotifyLinkState (called by RdmaFabricHelper::ScheduleLinkState) lets the switch
 * withdraw a failed port from its candidate lists WithdrawDelay after the failure (and restore
 * it the same delay after repair) when WithdrawFailedPorts is set; by default routing does not
 * react, as in the reference without route recomputation. The load balancer is told of the
 * change WithdrawDelay after it (Themis reverts to ECMP, its paper's §6); NotifyRemoteLinkState
 * tells it of a failure elsewhere, as a fabric monitoring system would.
 *
 * Switch-side load balancing (doc/rdma-lb.rst "Switch-side load balancers"): the run's scheme is
 * one SwitchLbAgent (Rust) per switch. When the agent is installed the switch tells it the fabric:
 * its ports (rate, delay, host-facing or not), every host's ToR, and at ToRs every shortest path to
 * every other ToR (named as the reference names paths: byte k = egress port + 1 at hop k), found by
 * walking the switches' routing tables. Then, per packet:
 *  - ingress (Route): packets with two or more live candidates -- every packet if the agent
 *    SeesEveryPacket -- get a verdict: forward on candidate i (with an optional entropy
 *    rewrite, Themis-S PathMap in 3-tier fabrics), drop (a blocked NACK, a consumed control
 *    packet; trace LbDrop), or hold in a per-flow queue outside the MMU (ConWeave's VOQ);
 *    the scheme's opaque tag travels in the frame (RdmaFrame::lbTag: no wire bytes, as the
 *    reference's LetFlow/CONGA/ConWeave tags);
 *  - egress (Dequeued, if the agent SeesEgress): the agent sees each packet leaving;
 *  - after each call the switch pulls what the agent wants: control packets (PollTransmit:
 *    a NACK built as the receiver NIC would -- Themis compensation, trace NackCompensation --
 *    or the scheme's own 64 B control packet, queue 0), held queues to release now
 *    (PollRelease: released in FIFO order through the normal forwarding path, MMU admission
 *    at release, as the reference's ConWeave queues), and its timer (PollAt / OnTimer, one
 *    pending event).
 * PathIndexRouting: the switch takes candidate (entropy / PathIndexDivisor) mod n instead of
 * the agent's choice, so an entropy names a path.
 */
#ifndef RDMA_SWITCH_H
#define RDMA_SWITCH_H

#include "rdma-frame.h"
#include "rdma-lb-bridge.h"
#include "rdma-net-device.h"
#include "switch-mmu.h"

#include "ns3/object.h"
#include "ns3/random-variable-stream.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/traced-callback.h"

#include <array>
#include <deque>
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3
{

class RdmaNetDevice;
class RdmaHeader;
class Packet;

/**
 * \ingroup rdma-lb
 * Per-node switch logic; aggregate it to a Node whose devices are RdmaNetDevices.
 */
class RdmaSwitch : public Object
{
  public:
    /// When a port lets go of a data packet it sends (attribute QueueRelease).
    enum QueueRelease : uint32_t
    {
        RELEASE_AT_START = 0, //!< "start": when its transmission starts (MMU, ECN)
        RELEASE_AT_END = 1,   //!< "end": when its last bit has left (the UEC htsim's)
    };

    /// \return the TypeId
    static TypeId GetTypeId();
    RdmaSwitch();
    ~RdmaSwitch() override;

    /// Adds a port; its index is its position (0-based) in the order of the calls.
    uint32_t AddPort(Ptr<RdmaNetDevice> dev);
    /// \return port \p i
    Ptr<RdmaNetDevice> GetPort(uint32_t i) const;
    /// \return the number of ports
    uint32_t GetNPorts() const;
    /**
     * Makes this switch an RDMA endpoint too (SimAI's NVSwitch, which ends and starts NVLS
     * flows; doc/rdma-lb.rst, "SimAI inputs"): frames addressed to \p address go to \p nic
     * (a NIC's receive) instead of being switched. RdmaNic::SetupOnSwitch calls it; that NIC
     * sends on this switch's ports.
     */
    void SetEndpoint(RdmaNetDevice::FrameReceiveHook nic, uint32_t address);
    /// Adds \p port as an equal-cost next hop towards address \p dip.
    void AddRoute(uint32_t dip, uint32_t port);
    /// Adds every port of \p ports as a next hop towards every address of \p dips (as
    /// AddRoute for each pair; hosts that had the same routes before share the work).
    void AddRoutes(const std::vector<uint32_t>& dips, const std::vector<uint32_t>& ports);
    /// Keeps only the port lists in use, copied side by side (the per-packet lookup reaches
    /// them; lists built one route at a time lie scattered), and frees AddRoute's memo. Routes
    /// may still be added after it. The fabric helper calls it once the routes are in.
    void CompactRoutes();
    /// \return the equal-cost ports towards \p dip (empty if unknown)
    const std::vector<uint32_t>& GetRoutes(uint32_t dip) const;
    /// Sets the switch's id (the reference's node id: it seeds the ECMP hash and names the
    /// switch to the load balancers of the others); call on every switch before the first
    /// SetLoadBalancer, so that path discovery sees the ids of all.
    void SetSwitchId(uint32_t switchId);
    /// \return the switch's id
    uint32_t GetSwitchId() const;
    /// Installs the run's load balancer; \p switchId seeds the ECMP hash as in the reference.
    void SetLoadBalancer(Ptr<LbConfig> cfg, uint32_t switchId);
    /// Multiplies port \p port's DataQueueLimit and ECN thresholds by \p scale (htsim's
    /// reduced-speed links scale speed, queue and ECN thresholds by one ratio).
    void SetPortQueueScale(uint32_t port, double scale);
    /**
     * Assigns a fixed stream number to the random variables used by this switch.
     * \param stream first stream index to use
     * \return the number of stream indices assigned
     */
    int64_t AssignStreams(int64_t stream);

    /// \return the switch's MMU
    Ptr<SwitchMmu> GetMmu() const;
    /// Sizes the MMU from the ports' rates and link delays (done lazily on the first packet).
    void ConfigureMmu();
    /// \return packets dropped by the MMU whose egress port was \p port
    uint64_t GetPortDrops(uint32_t port) const;
    /// \return data packets ECN-marked when leaving \p port
    uint64_t GetPortEcnMarks(uint32_t port) const;
    /// \return packets taken from the port queues for sending, all ports (data and control)
    uint64_t GetForwardedPackets() const;
    /// \return packets dropped by the MMU on all ports
    uint64_t GetTotalDrops() const;
    /// \return ECN marks on all ports
    uint64_t GetTotalEcnMarks() const;
    /// \return the data packets this switch trimmed (TrimEnabled)
    uint64_t GetTotalTrims() const;
    /// \return PFC pause frames sent on all ports
    uint64_t GetTotalPausesSent() const;
    /// \return whether \p port is currently withdrawn from the candidate lists
    bool IsPortWithdrawn(uint32_t port) const;
    /// Tells the switch that the link of \p port went down (true) or up (false).
    void NotifyLinkState(uint32_t port, bool down);
    /// Tells the switch's load balancer that a link elsewhere in the fabric went down (true) or
    /// up (false), as a monitoring system would (Themis reverts to ECMP, its paper's §6).
    void NotifyRemoteLinkState(bool down);
    /**
     * The routing protocol's view after a link state change (RdmaRouteWithdrawal): \p dead
     * lists the (destination address, port) routes that no longer lead to their destination.
     * With WithdrawFailedPorts they are withdrawn from the candidate lists WithdrawDelay later,
     * replacing the previous list (so a repaired link's routes come back); without, ignored.
     */
    void NotifyDeadRoutes(std::vector<std::pair<uint32_t, uint32_t>> dead);
    /// \return whether the route towards \p dip on \p port is withdrawn (port or route)
    bool IsRouteWithdrawn(uint32_t dip, uint32_t port) const;
    /// \return whether \p port faces a host (known once the load balancer is installed)
    bool IsHostPort(uint32_t port) const;
    /// \return bytes of switch memory the load balancer's state needs, by its paper's
    /// accounting (Themis: its paper's §4, PathMap + flow table + PSN queues); 0 for stateless
    /// algorithms
    uint64_t GetLbMemoryBytes() const;
    /// \return the load balancer's counters, (name, value), as the algorithm names and
    /// reports them (summary.json "lb_counters" sums them over the switches)
    std::vector<std::pair<std::string, uint64_t>> GetLbCounters() const;
    /// \return packets held now in the load balancer's per-flow queues
    uint64_t GetHeldPackets() const;

    /**
     * Trace signature of EcnMark.
     * \param port egress port
     * \param queue the queue (class)
     * \param sharedBytes egress shared bytes of the queue after the packet's removal
     */
    typedef void (*EcnMarkTracedCallback)(uint32_t port, uint32_t queue, uint64_t sharedBytes);
    /// Trace signature of Trim: the trimmed packet, egress port.
    typedef void (*TrimTracedCallback)(Ptr<const Packet> p, uint32_t port);
    /**
     * Trace signature of BufferDrop.
     * \param p the dropped packet
     * \param in ingress port
     * \param out egress port
     * \param queue the queue (class)
     */
    typedef void (*BufferDropTracedCallback)(Ptr<const Packet> p,
                                             uint32_t in,
                                             uint32_t out,
                                             uint32_t queue);

    /// Trace signature: packet, ingress port, egress port.
    typedef void (*ForwardTracedCallback)(Ptr<const Packet> p, uint32_t in, uint32_t out);

    /// Trace signature of LbDrop: the packet the load balancer dropped or consumed, its
    /// ingress port.
    typedef void (*LbDropTracedCallback)(Ptr<const Packet> p, uint32_t port);
    /// Trace signature of NackBlocked: the dropped NACK, the host port it came from.
    typedef void (*NackBlockedTracedCallback)(Ptr<const Packet> p, uint32_t port);
    /**
     * Trace signature of NackCompensation.
     * \param sender the data sender (the NACK's destination)
     * \param receiver the receiving host (the NACK's source)
     * \param qpn the sender's queue-pair number
     * \param epsn the expected PSN the NACK carries
     */
    typedef void (*NackCompensationTracedCallback)(uint32_t sender,
                                                   uint32_t receiver,
                                                   uint16_t qpn,
                                                   uint32_t epsn);

  protected:
    void DoDispose() override;

  private:
    /// A frame arrived at port \p dev.
    void Receive(RdmaNetDevice& dev, RdmaFramePtr& f);
    /// Routes \p f that entered through port \p in (\p local: made by this switch's agent);
    /// \p useAgent false routes past the load balancer (packets it released).
    void Route(RdmaFramePtr f, uint32_t in, bool local, bool useAgent = true);
    /// MMU admission, PFC check and enqueue of \p f on port \p out.
    void Forward(RdmaFramePtr f, uint32_t in, uint32_t out);
    /// Trims the data packet of header \p h bound for port \p out (TrimEnabled).
    void Trim(uint32_t out, const RdmaHeader& h);
    /// \return whether port \p port faces a host (from the channels, cached at first use)
    bool FacesHost(uint32_t port);
    /// The load balancer's view of a packet.
    LbPacketInfo MakeInfo(const RdmaHeader& h, uint32_t in, uint32_t size, bool local) const;
    /// Creates the agent and tells it the fabric (ports, hosts' ToRs, paths).
    void InstallAgent(uint64_t seed);
    /// The ToR of host address \p dip, found by following the routing tables; 0 if none.
    Ptr<RdmaSwitch> FindTor(uint32_t dip) const;
    /// Appends to \p out every path from this switch to ToR \p dst along the routes to \p dip.
    void FindPaths(Ptr<const RdmaSwitch> at,
                   Ptr<const RdmaSwitch> dst,
                   uint32_t dip,
                   std::vector<uint32_t>& ports,
                   std::vector<std::vector<uint32_t>>& out) const;
    /// Pulls what the agent wants done after a call: releases, control packets, its timer.
    /// \p deferTransmit sends control packets as their own events (inside a port's transmit
    /// path).
    void ServeAgent(bool deferTransmit);
    /// Builds and routes a control packet the agent asked for.
    void SendControl(LbControlPacket c);
    /// Releases the held queue \p queue through the normal forwarding path.
    void ReleaseHeld(uint64_t queue);
    void LbTimerFired();
    void ApplyLbLinkState(uint32_t port, bool remote, bool down);
    /// \p p left queue \p q of port \p dev; \p in is its ingress port if this switch's MMU
    /// admitted it (RdmaNetDevice::NO_META if not).
    void Dequeued(RdmaNetDevice& dev, RdmaFrame& f, uint32_t q, uint32_t in);
    /// QueueRelease "end": the last bit of a packet of \p sizeBytes from queue \p q left port
    /// \p dev (\p f the frame on the link, null if the link lost it; \p in as in Dequeued):
    /// releases its MMU charge, marks it and checks PFC resume.
    void TransmitEnded(RdmaNetDevice& dev,
                       RdmaFrame* f,
                       uint32_t sizeBytes,
                       uint32_t q,
                       uint32_t in);
    /// The ECN decision for a packet leaving queue \p q of port \p out now (EcnEnabled).
    void MarkEcn(uint32_t out, RdmaFrame* f, uint32_t q);
    /// \return the hook a port calls at the end of a transmission under \p release (TransmitEnded
    /// under RELEASE_AT_END, none under RELEASE_AT_START)
    RdmaNetDevice::TransmitEndHook TransmitEndHookFor(uint32_t release);
    /// Sets QueueRelease and (un)registers TransmitEnded on every port.
    void SetQueueRelease(uint32_t release);
    /// \return QueueRelease
    uint32_t GetQueueRelease() const;
    /// Appends this egress port's INT record to a data packet that carries HPCC INT.
    void PushInt(const RdmaNetDevice& dev, RdmaHeader& h);
    void CheckPfc(uint32_t in, uint32_t arrivingCls);
    void CheckResume(uint32_t in, uint32_t k);
    void SetPortWithdrawn(uint32_t port, bool withdrawn);

    std::vector<Ptr<RdmaNetDevice>> m_ports;
    RdmaNetDevice::FrameReceiveHook m_endpoint; //!< SetEndpoint's NIC, if any
    uint32_t m_endpointAddress{0};                  //!< its address
    static constexpr uint32_t NO_PORT = UINT32_MAX; //!< m_portOfIf: no port
    std::vector<uint32_t> m_portOfIf; //!< port index by the device's interface index
    /// Routes to host addresses: per host id an index into the distinct sorted port lists (a
    /// ToR has its hosts' single ports and one uplink list, a spine one port per ToR): 4 bytes
    /// per host instead of a hash node and a vector per destination, so that the fabric's
    /// tables stay small on large fabrics and the per-packet lookup in cache.
    static constexpr uint32_t NO_ROUTE = UINT32_MAX; //!< m_routeIndex: no route to this host
    std::vector<uint32_t> m_routeIndex;               //!< host id -> m_routeLists index
    std::vector<std::vector<uint32_t>> m_routeLists;  //!< the distinct lists
    std::unordered_map<uint32_t, std::vector<uint32_t>> m_routes; //!< other dips -> sorted ports
    /// Calls \p fn(dip) for every destination with a route, in ascending address order.
    template <typename Fn>
    void ForEachRouteDestination(Fn fn) const;
    Ptr<LbConfig> m_lbConfig;
    uint32_t m_switchId{0};
    std::unique_ptr<SwitchLbAgent> m_agent;
    bool m_agentAll{false};    //!< the agent sees every packet (and is polled after each)
    bool m_agentEgress{false}; //!< the agent sees packets at dequeue
    bool m_agentLoad{true};    //!< the agent reads the candidates' queue and sent bytes
    /// Held per-flow queues (the agent's Hold verdicts): packet and ingress port, FIFO.
    std::unordered_map<uint64_t, std::deque<std::pair<RdmaFramePtr, uint32_t>>> m_held;
    uint64_t m_heldPackets{0};
    bool m_sendingControl{false}; //!< ServeAgent is routing one of the agent's control packets
    EventId m_lbTimer;
    Time m_lbTimerAt{Time::Max()};
    std::vector<LbEgressCandidate> m_candidates; //!< reused per packet
    Ptr<UniformRandomVariable> m_rng;
    RdmaFrameTrace<uint32_t, uint32_t> m_forwardTrace;
    RdmaFrameTrace<> m_dropTrace;

    Ptr<SwitchMmu> m_mmu;
    bool m_pfcEnabled;
    Time m_pauseTime;
    bool m_ecnEnabled;
    bool m_intEnabled{false}; //!< HPCC INT records at dequeue
    uint32_t m_intMulti{};    //!< INT_MULTI
    uint64_t m_kmin;
    uint64_t m_kmax;
    double m_pmax;
    bool m_withdrawFailed;
    Time m_withdrawDelay;
    Ptr<UniformRandomVariable> m_ecnRng;
    bool m_ecnSharedStream{false}; //!< quirk ecn-shared-stream
    std::vector<uint64_t> m_drops;                    //!< per egress port
    uint64_t m_forwarded{0};                          //!< packets dequeued on any port
    std::vector<uint64_t> m_ecnMarks;                 //!< per egress port
    std::vector<std::array<bool, 8>> m_remotePaused;  //!< per ingress port and class
    std::vector<bool> m_withdrawn;                    //!< per port
    uint32_t m_nWithdrawn{0};
    std::set<std::pair<uint32_t, uint32_t>> m_deadRoutes; //!< withdrawn (dip, port) routes
    /// Replaces the withdrawn routes (NotifyDeadRoutes, WithdrawDelay later).
    void SetDeadRoutes(std::vector<std::pair<uint32_t, uint32_t>> dead);
    std::vector<uint32_t> m_liveRoutes;               //!< per packet; a nested Route refills it
    uint32_t m_payloadBytes{1000};                    //!< bytes per PSN
    bool m_pathIndexRouting{false};
    uint32_t m_pathIndexDivisor{1};
    uint64_t m_dataQueueLimit{0}; //!< DataQueueLimit (bytes, 0 = off)
    /// QueueRelease: when a port lets go of a data packet it sends (RELEASE_AT_START or _END).
    uint32_t m_queueRelease{RELEASE_AT_START};
    std::vector<double> m_portQueueScale; //!< SetPortQueueScale, by port (empty = all 1)
    /// \return \p bytes scaled for port \p port (SetPortQueueScale; unchanged when none set)
    uint64_t ScaledForPort(uint32_t port, uint64_t bytes) const;
    bool m_trimEnabled{false};    //!< TrimEnabled
    bool m_ecnHostPorts{true};    //!< EcnHostPorts
    std::vector<bool> m_facesHost; //!< per port: faces a host (FacesHost, built at first use)
    bool m_ackHighPriority{true}; //!< AckHighPriority
    uint32_t m_trimmedBytes{64};  //!< TrimmedSize
    uint64_t m_trims{0};          //!< packets trimmed
    double m_trimNewestProb{0};   //!< TrimNewestProbability
    uint64_t m_trimCoinState{0x9e3779b97f4a7c15ULL}; //!< the coin's splitmix64 state
    /// \return a uniform draw in [0, 1) of the trim coin (TrimNewestProbability)
    double TrimCoin();
    /**
     * Trims the newest data packet waiting in queue \p q of port \p out (htsim's
     * CompositeQueue, when its coin spares the arrival) and releases its MMU charge.
     * \return whether there was one
     */
    bool TrimNewest(uint32_t out, uint32_t q);
    RdmaFrameTrace<uint32_t> m_trimTrace; //!< Trim
    std::vector<bool> m_hostPort;                     //!< per port: faces a host
    RdmaFrameTrace<uint32_t> m_nackBlockedTrace;
    RdmaFrameTrace<uint32_t> m_lbDropTrace;
    TracedCallback<uint32_t, uint32_t, uint16_t, uint32_t> m_compensationTrace;
    TracedCallback<uint32_t, uint32_t, uint64_t> m_ecnMarkTrace;
    RdmaFrameTrace<uint32_t, uint32_t, uint32_t> m_bufferDropTrace;
    // Set-up only (AddRoute, CompactRoutes), kept after the members the packet path reads.
    std::map<std::vector<uint32_t>, uint32_t> m_routeListIds; //!< list -> its m_routeLists index
    /// AddRoute's memo: (list index + 1, or 0 for none) << 32 | port -> the list with the port
    std::unordered_map<uint64_t, uint32_t> m_routeSteps;
};

template <typename Fn>
void
RdmaSwitch::ForEachRouteDestination(Fn fn) const
{
    std::vector<uint32_t> dips;
    for (uint32_t id = 0; id < m_routeIndex.size(); ++id)
    {
        if (m_routeIndex[id] != NO_ROUTE)
        {
            dips.push_back(RdmaHostAddress(id));
        }
    }
    for (const auto& entry : m_routes)
    {
        dips.push_back(entry.first);
    }
    std::sort(dips.begin(), dips.end());
    for (uint32_t dip : dips)
    {
        fn(dip);
    }
}

} // namespace ns3

#endif /* RDMA_SWITCH_H */
