/*
 * rdma-lb: the fabric's routing after link faults, as a converged routing protocol leaves it.
 * A switch's route towards a host (destination address, egress port) is dead when the link on
 * that port is down or the next hop can no longer reach the host over live links along the
 * original equal-cost paths (no detours: the routes only lose next hops). Every switch is
 * told its dead routes after each link state change (RdmaSwitch::NotifyDeadRoutes); those
 * with WithdrawFailedPorts withdraw them, so an upstream switch stops sending into a switch
 * that lost its only way on (spine -> ToR in a leaf-spine).
 */
#ifndef RDMA_ROUTE_WITHDRAWAL_H
#define RDMA_ROUTE_WITHDRAWAL_H

#include "ns3/node-container.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace ns3
{

class RdmaChannel;

/**
 * \ingroup rdma-lb
 * Dead routes of every switch, from the channels' current state (see the file comment).
 */
class RdmaRouteWithdrawal
{
  public:
    /// A link: its two nodes, their ports on it and its channel (whose IsDown is the state).
    struct Link
    {
        uint32_t a, b;         //!< the nodes
        uint32_t portA, portB; //!< their ports (0 at a host)
        Ptr<RdmaChannel> channel; //!< up or down
    };

    /// A (destination address, egress port) route.
    using Route = std::pair<uint32_t, uint32_t>;

    /**
     * \param nodes every node, indexed as the links name them
     * \param isSwitch per node
     * \param hosts the host nodes
     * \param links every link
     */
    RdmaRouteWithdrawal(NodeContainer nodes,
                        std::vector<bool> isSwitch,
                        std::vector<uint32_t> hosts,
                        std::vector<Link> links);

    /// \return the number of links the view was made with
    size_t GetNLinks() const;
    /// \return switch node \p s's dead routes (from its routing table and the links' state)
    std::vector<Route> DeadRoutes(uint32_t s) const;
    /// Tells every switch its dead routes (RdmaSwitch::NotifyDeadRoutes).
    void Update() const;

  private:
    /// \return per node, its dead routes (empty for hosts)
    std::vector<std::vector<Route>> AllDeadRoutes() const;
    /// Per node: whether it can still reach host node \p h (hosts: only h itself).
    std::vector<bool> Reachable(uint32_t h) const;

    NodeContainer m_nodes;
    std::vector<bool> m_isSwitch;
    std::vector<uint32_t> m_hosts;
    std::vector<Link> m_links;
    /// Per node, per port: (link index, node at the other end).
    std::vector<std::vector<std::pair<size_t, uint32_t>>> m_ports;
};

} // namespace ns3

#endif /* RDMA_ROUTE_WITHDRAWAL_H */
