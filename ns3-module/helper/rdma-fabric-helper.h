/*
 * rdma-lb: builds a fabric of RdmaNic hosts and RdmaSwitch switches, computes the routing
 * tables as the reference driver does (doc/rdma-lb.rst, "Routing and ECMP": one BFS per host that
 * expands only through switches, every equal-cost next hop kept, ports in ascending order; run
 * once per host-facing switch when every host has one link, to a switch, with the same result)
 * and installs the run's load balancer everywhere.
 */
#ifndef RDMA_FABRIC_HELPER_H
#define RDMA_FABRIC_HELPER_H

#include "ns3/data-rate.h"
#include "ns3/node-container.h"
#include "ns3/nstime.h"
#include "ns3/rdma-lb-bridge.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ns3
{

class RdmaNic;
class RdmaSwitch;
class RdmaChannel;
class RdmaRouteWithdrawal;

/**
 * \ingroup rdma-lb
 * Fabric builder: nodes are numbered in creation order (hosts and switches share the space,
 * as in ConWeave's topology files); host node i has the reference's address
 * 11.(i/256).(i%256).1 (RdmaHostAddress).
 */
class RdmaFabricHelper
{
  public:
    RdmaFabricHelper();

    /// Sets the load balancer; a bad name or parameter is a fatal error naming it.
    void SetLoadBalancer(const std::string& algorithm, const std::string& params = "");
    /// Sets the load balancer to a copy of \p cfg (validated already; the copy is the
    /// fabric's own: ShareReferenceRand and UseHtsimSwitches on it leave \p cfg alone).
    void SetLoadBalancer(Ptr<const LbConfig> cfg);
    /// \return the load balancer configuration (null before SetLoadBalancer)
    Ptr<LbConfig> GetLoadBalancer() const;
    /**
     * \return notes on how Finish wired the load balancer to the fabric (one line each), e.g.
     * Whack-a-Mole's path-index routing: when the configuration asks for it
     * (LbConfig::GetPathIndexRouting: Whack-a-Mole without `routing = "ecmp"`), on a fabric
     * whose only multipath stage is at the ToRs (a leaf-spine), Finish turns on every switch's
     * PathIndexRouting and, unless the parameters give num_paths, sets num_paths to the ToRs'
     * number of equal-cost next hops, so that profile path i is routed on equal-cost path i
     * (the Whack-a-Mole paper's §3: paths are real paths).
     */
    const std::vector<std::string>& GetNotes() const;

    /// Creates \p n nodes; those whose index is in \p switchIds become switches, the rest hosts.
    void CreateNodes(uint32_t n, const std::vector<uint32_t>& switchIds);
    /**
     * As CreateNodes(n, switchIds), node i on MPI rank \p systemIds[i] (Node::GetSystemId; empty:
     * all on rank 0). Under ns-3's distributed simulator every rank creates every node and runs
     * the events of its own.
     */
    void CreateNodes(uint32_t n,
                     const std::vector<uint32_t>& switchIds,
                     const std::vector<uint32_t>& systemIds);
#ifdef NS3_MPI
    /// Makes every link whose ends are on different ranks remote (RdmaChannel::EnableRemote).
    /// \return the number of such links
    uint32_t EnableRemoteLinks();
#endif
    /// Links nodes \p a and \p b (indices) at \p rate with one-way \p delay; returns the channel.
    Ptr<RdmaChannel> Link(uint32_t a, uint32_t b, DataRate rate, Time delay);
    /// Computes all routing tables and installs the load balancer (call after all links).
    void Finish();
    /**
     * Makes Finish install the REPS authors' switches (LbConfig::UseHtsimSwitches) with
     * stream seed \p seed for a workload of \p flows flows. Finish orders the switches as
     * htsim builds them: ToRs (switches with a host link), then switches two hops from the
     * nearest host, then the rest by that distance; by node index within each.
     */
    void UseHtsimSwitches(uint32_t seed, uint32_t flows);

    /// Builds a two-tier leaf-spine: hosts 0..L*H-1 (H per leaf), then leaves, then spines.
    void BuildLeafSpine(uint32_t leaves,
                        uint32_t hostsPerLeaf,
                        uint32_t spines,
                        DataRate hostRate,
                        DataRate fabricRate,
                        Time delay);

    /// \return node \p i
    Ptr<Node> GetNode(uint32_t i) const;
    /// \return the number of nodes
    uint32_t GetNNodes() const;
    /// \return whether node \p i is a switch
    bool IsSwitch(uint32_t i) const;
    /// \return the host nodes' indices in creation order
    const std::vector<uint32_t>& GetHosts() const;
    /**
     * Makes switches \p ids RDMA endpoints too (SimAI's NVSwitches under NVLS): each gets an
     * RdmaNic now (GetNic), which Finish binds to all its ports (RdmaNic::SetupOnSwitch) with a
     * route to each host it is linked to. Call after CreateNodes, before Links.
     */
    void SetEndpointSwitches(const std::vector<uint32_t>& ids);
    /// \return the nodes with a NIC: the hosts in creation order, then the endpoint switches
    const std::vector<uint32_t>& GetNicNodes() const;
    /// \return the NIC of host (or endpoint switch) node \p i
    Ptr<RdmaNic> GetNic(uint32_t i) const;
    /// \return the switch of switch node \p i
    Ptr<RdmaSwitch> GetSwitch(uint32_t i) const;
    /// \return the channel between nodes \p a and \p b (first one if parallel links)
    Ptr<RdmaChannel> GetChannel(uint32_t a, uint32_t b) const;

    /// Schedules a flow from host node \p src to host node \p dst starting at \p start.
    void AddFlow(uint32_t flowId, uint32_t src, uint32_t dst, uint64_t size, Time start, uint32_t pg = 3);

    /**
     * Schedules the link between nodes \p a and \p b to go down (\p down true) or up at
     * \p at: packets that start or are in flight on a down link are lost (RdmaChannel), and
     * the switches at both ends are told (RdmaSwitch::NotifyLinkState: they withdraw the port
     * from their candidate lists only if their WithdrawFailedPorts attribute is set; then every
     * switch is told which of its routes lost their way to the destination -- RdmaRouteWithdrawal
     * -- and those with WithdrawFailedPorts withdraw them too). When the
     * link joins two switches, every other switch is told as well
     * (RdmaSwitch::NotifyRemoteLinkState), as a fabric monitoring system would: Themis falls
     * back to ECMP on any fabric link failure (the Themis paper, §6).
     * SetNotifyRemoteLinkState(false) tells only the two ends.
     */
    void ScheduleLinkState(uint32_t a, uint32_t b, Time at, bool down);
    /**
     * One direction of link \p node - \p peer: \p node's port sends at \p rate, and if \p node
     * is a switch, its data queue limit and ECN thresholds are multiplied by \p queueScale
     * (RdmaSwitch::SetPortQueueScale). Fatal error if there is no such link.
     */
    void SetPortRate(uint32_t node, uint32_t peer, DataRate rate, double queueScale = 1.0);
    /**
     * Schedules port \p port of switch node \p sw to fail (\p down true) or recover at \p at:
     * the link on that port goes down or up exactly as ScheduleLinkState does it (a port that
     * loses light takes its link down at both ends). A switch numbers its ports in the order
     * its links were made (Link), from 0; unlike ScheduleLinkState, this tells parallel links
     * between the same two nodes apart. A node that is not a switch, or a port it does not
     * have, is a fatal error.
     */
    void ScheduleSwitchPortState(uint32_t sw, uint32_t port, Time at, bool down);
    /**
     * Schedules one direction of the link between \p from and \p to to go down (\p down
     * true) or back up at \p at: what \p from sends on it is lost (RdmaChannel::
     * SetDirectionDown), the reverse direction keeps working. Silent, as a black hole: no
     * switch is told, so every switch keeps the port in its candidate lists whatever its
     * WithdrawFailedPorts. With \p port set, \p from is a switch and the link is the one on
     * that port (parallel links told apart, as ScheduleSwitchPortState). Fatal error if there
     * is no such link.
     */
    void ScheduleOneWayState(uint32_t from,
                             uint32_t to,
                             Time at,
                             bool down,
                             std::optional<uint32_t> port = std::nullopt);
    /// Whether ScheduleLinkState also tells the switches not attached to the link (default true).
    void SetNotifyRemoteLinkState(bool notify);
    /// Takes the link between \p a and \p b down at \p downAt and, if \p upAt > \p downAt, up
    /// again at \p upAt.
    void ScheduleLinkFailure(uint32_t a, uint32_t b, Time downAt, Time upAt = Time(0));

    /**
     * Assigns fixed random-stream numbers to every NIC and switch.
     * \param stream first stream index
     * \return the number of streams used
     */
    int64_t AssignStreams(int64_t stream);

  private:
    struct LinkRec
    {
        uint32_t a, b;
        uint32_t portA, portB;
        Ptr<RdmaChannel> channel;
    };

    /// Schedules the state change of link \p l (ScheduleLinkState, ScheduleSwitchPortState).
    void ScheduleLinkRecState(const LinkRec& l, Time at, bool down);

    NodeContainer m_nodes;
    std::vector<bool> m_isSwitch;
    std::vector<uint32_t> m_hosts;
    std::vector<uint32_t> m_endpointSwitches; //!< SetEndpointSwitches
    std::vector<uint32_t> m_nicNodes;         //!< m_hosts, then m_endpointSwitches
    std::vector<LinkRec> m_links;
    Ptr<LbConfig> m_lb;
    std::optional<std::pair<uint32_t, uint32_t>> m_htsim; //!< UseHtsimSwitches (seed, flows)
    std::vector<std::string> m_notes; //!< what Finish chose for the load balancer (GetNotes)
    /// Whack-a-Mole's default wiring (Finish): path-index routing and num_paths = the
    /// equal-cost paths, on fabrics with one multipath stage.
    void WireWhackAMole(const std::vector<std::vector<std::pair<uint32_t, uint32_t>>>& adj);
    /// Gives every host of several links (a NIC of several ports) its ports' routes to each
    /// host, in SimAI's order (RdmaNic::SetPortRoutes). \param adj per node: (neighbour, port)
    void SetHostPortRoutes(const std::vector<std::vector<std::pair<uint32_t, uint32_t>>>& adj);
    /// UseHtsimSwitches' part of Finish: orders the switches by tier and hands them over.
    void InstallHtsimSwitches(const std::vector<std::vector<std::pair<uint32_t, uint32_t>>>& adj);
    bool m_notifyRemoteLinkState{true};
    /// The routing view told to the switches after each link state change (made on the first).
    std::shared_ptr<RdmaRouteWithdrawal> m_routing;
};

} // namespace ns3

#endif /* RDMA_FABRIC_HELPER_H */
