/*
 * rdma-lb: the switch of the RDMA fabric model (spec/rdma-model.md §5).
 *
 * Forwarding: look up the destination address in the routing table (all equal-cost egress
 * ports, ascending port order); with more than one candidate, the run's load balancer chooses
 * (Rust, through the bridge; with ECMP it is the reference's MurmurHash3 5-tuple hash seeded by
 * the switch id). Data goes to the queue of its priority group, ACK/NACK to queue 0.
 * Port indices are the node's device indices (0-based; the reference counts from 1 because its
 * port 0 is a loopback device).
 *
 * Buffer (spec §5.2 step 5, §5.3): every packet of queue 1-7 passes the egress then the ingress
 * admission of the switch's SwitchMmu (attribute Mmu; sized lazily from the ports' rates and
 * link delays, or by ConfigureMmu) and is charged to both; failing either drops it (Drop trace,
 * per-egress-port drop counter). Queue 0 (ACK/NACK/PFC) bypasses the MMU. With PFC off the
 * egress dynamic threshold is the drop point.
 *
 * PFC generation (§5.4, PfcEnabled): after admitting a packet from port i, every class k that
 * must pause gets a pause frame of PauseTime out of port i (queue 0) -- re-sent for every
 * arriving packet while the condition holds -- and classes that may resume get an explicit
 * resume; the resume check also runs when a packet that entered via port i departs.
 *
 * ECN (§5.5, EcnEnabled): at dequeue of a data packet of queue q from port j, with S the egress
 * shared bytes of (j, q) after its removal, mark CE (RdmaHeader::ecn = 3) if S > EcnKmax, else
 * with probability (S - Kmin) / (Kmax - Kmin) x Pmax if S > EcnKmin.
 *
 * Link faults: NotifyLinkState (called by RdmaFabricHelper::ScheduleLinkState) lets the switch
 * withdraw a failed port from its candidate lists WithdrawDelay after the failure (and restore
 * it the same delay after repair) when WithdrawFailedPorts is set; by default routing does not
 * react, as in the reference without route recomputation. The load balancer is told of the
 * change WithdrawDelay after it (Themis reverts to ECMP, seed 001 §6); NotifyRemoteLinkState
 * tells it of a failure elsewhere, as a fabric monitoring system would.
 *
 * Switch-side load balancing hooks (DESIGN.md decision 5; doc/rdma-lb.rst "Switch-side load
 * balancers"): the load balancer sees each packet's PSN (byte offset / PayloadSize). When it
 * has a ToR role (Themis), the switch finds its host-facing ports when the load balancer is
 * installed (ports whose peer node has an RdmaNic) and:
 *  - reports every data packet leaving towards a host (at dequeue) -- the load balancer may
 *    ask for a compensation NACK, which the switch builds as the receiver NIC would (from the
 *    receiver to the sender, source port = the sender's queue pair, seq = ePSN x PayloadSize,
 *    echoing the entropy, send time and sequence of the data packet that triggered it) and
 *    routes towards the sender (trace NackCompensation);
 *  - filters every NACK arriving from a host: blocked NACKs are dropped (trace NackBlocked);
 *  - applies an entropy rewrite the load balancer asks for (Themis-S PathMap in 3-tier fabrics).
 * PathIndexRouting: the switch ignores the load balancer and takes candidate
 * (entropy / PathIndexDivisor) mod n, so an entropy names a path (DESIGN.md decision 4).
 */
#ifndef RDMA_SWITCH_H
#define RDMA_SWITCH_H

#include "rdma-lb-bridge.h"
#include "switch-mmu.h"

#include "ns3/object.h"
#include "ns3/random-variable-stream.h"
#include "ns3/nstime.h"
#include "ns3/traced-callback.h"

#include <array>
#include <map>
#include <memory>
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
    /// Adds \p port as an equal-cost next hop towards address \p dip.
    void AddRoute(uint32_t dip, uint32_t port);
    /// \return the equal-cost ports towards \p dip (empty if unknown)
    const std::vector<uint32_t>& GetRoutes(uint32_t dip) const;
    /// Installs the run's load balancer; \p switchId seeds the ECMP hash as in the reference.
    void SetLoadBalancer(Ptr<LbConfig> cfg, uint32_t switchId);
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
    /// \return packets dropped by the MMU on all ports
    uint64_t GetTotalDrops() const;
    /// \return ECN marks on all ports
    uint64_t GetTotalEcnMarks() const;
    /// \return PFC pause frames sent on all ports
    uint64_t GetTotalPausesSent() const;
    /// \return whether \p port is currently withdrawn from the candidate lists
    bool IsPortWithdrawn(uint32_t port) const;
    /// Tells the switch that the link of \p port went down (true) or up (false).
    void NotifyLinkState(uint32_t port, bool down);
    /// Tells the switch's load balancer that a link elsewhere in the fabric went down (true) or
    /// up (false), as a monitoring system would (Themis reverts to ECMP, seed 001 §6).
    void NotifyRemoteLinkState(bool down);
    /// \return whether \p port faces a host (known once the load balancer is installed)
    bool IsHostPort(uint32_t port) const;
    /// \return bytes of switch memory the load balancer's state needs, by its paper's
    /// accounting (Themis: seed 001 §4, PathMap + flow table + PSN queues); 0 for stateless
    /// algorithms
    uint64_t GetLbMemoryBytes() const;
    /// \return the load balancer's Themis counters (enabled false for other algorithms)
    LbThemisCounters GetThemisCounters() const;

    /**
     * Trace signature of EcnMark.
     * \param port egress port
     * \param queue the queue (class)
     * \param sharedBytes egress shared bytes of the queue after the packet's removal
     */
    typedef void (*EcnMarkTracedCallback)(uint32_t port, uint32_t queue, uint64_t sharedBytes);
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
    void Receive(Ptr<RdmaNetDevice> dev, Ptr<Packet> p);
    /// Routes \p p that entered through port \p in; NACKs from hosts are filtered if
    /// \p filterNacks.
    void Route(Ptr<Packet> p, uint32_t in, bool filterNacks);
    /// The load balancer's view of a packet.
    LbPacketInfo MakeInfo(const RdmaHeader& h, uint32_t in, uint32_t size) const;
    /// Creates the chooser and tells it the host ports.
    void InstallChooser(uint64_t seed);
    /// Builds and routes a compensation NACK as if it came from the host on \p hostPort.
    void SendCompensation(uint32_t hostPort, LbCompensation c, RdmaHeader data);
    void ApplyLbLinkState(uint32_t port, bool remote, bool down);
    void Dequeued(Ptr<RdmaNetDevice> dev, Ptr<Packet> p, uint32_t q);
    void CheckPfc(uint32_t in, uint32_t arrivingCls);
    void CheckResume(uint32_t in, uint32_t k);
    void SetPortWithdrawn(uint32_t port, bool withdrawn);

    std::vector<Ptr<RdmaNetDevice>> m_ports;
    std::map<Ptr<RdmaNetDevice>, uint32_t> m_portIndex;
    std::map<uint32_t, std::vector<uint32_t>> m_routes;
    Ptr<LbConfig> m_lbConfig;
    uint32_t m_switchId{0};
    std::unique_ptr<SwitchEgressChooser> m_chooser;
    std::vector<LbEgressCandidate> m_candidates; //!< reused per packet
    Ptr<UniformRandomVariable> m_rng;
    TracedCallback<Ptr<const Packet>, uint32_t, uint32_t> m_forwardTrace;
    TracedCallback<Ptr<const Packet>> m_dropTrace;

    Ptr<SwitchMmu> m_mmu;
    bool m_pfcEnabled;
    Time m_pauseTime;
    bool m_ecnEnabled;
    uint64_t m_kmin;
    uint64_t m_kmax;
    double m_pmax;
    bool m_withdrawFailed;
    Time m_withdrawDelay;
    Ptr<UniformRandomVariable> m_ecnRng;
    bool m_ecnSharedStream{false}; //!< quirk ecn-shared-stream
    std::vector<uint64_t> m_drops;                    //!< per egress port
    std::vector<uint64_t> m_ecnMarks;                 //!< per egress port
    std::vector<std::array<bool, 8>> m_remotePaused;  //!< per ingress port and class
    std::vector<bool> m_withdrawn;                    //!< per port
    uint32_t m_nWithdrawn{0};
    std::vector<uint32_t> m_liveRoutes;               //!< reused per packet
    uint32_t m_payloadBytes{1000};                    //!< bytes per PSN
    bool m_pathIndexRouting{false};
    uint32_t m_pathIndexDivisor{1};
    std::vector<bool> m_hostPort;                     //!< per port: faces a host
    bool m_torHooks{false};                           //!< the load balancer has a ToR role
    TracedCallback<Ptr<const Packet>, uint32_t> m_nackBlockedTrace;
    TracedCallback<uint32_t, uint32_t, uint16_t, uint32_t> m_compensationTrace;
    TracedCallback<uint32_t, uint32_t, uint64_t> m_ecnMarkTrace;
    TracedCallback<Ptr<const Packet>, uint32_t, uint32_t, uint32_t> m_bufferDropTrace;
};

} // namespace ns3

#endif /* RDMA_SWITCH_H */
