/*
 * rdma-lb: the switch of the RDMA fabric model (spec/rdma-model.md §5).
 *
 * Forwarding: look up the destination address in the routing table (all equal-cost egress
 * ports, ascending port order); with more than one candidate, the run's load balancer chooses
 * (Rust, through the bridge; with ECMP it is the reference's MurmurHash3 5-tuple hash seeded by
 * the switch id). Data goes to the queue of its priority group, ACK/NACK to queue 0.
 * Port indices are the node's device indices (0-based; the reference counts from 1 because its
 * port 0 is a loopback device).
 */
#ifndef RDMA_SWITCH_H
#define RDMA_SWITCH_H

#include "rdma-lb-bridge.h"

#include "ns3/object.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

#include <map>
#include <memory>
#include <vector>

namespace ns3
{

class RdmaNetDevice;
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

    /// Trace signature: packet, ingress port, egress port.
    typedef void (*ForwardTracedCallback)(Ptr<const Packet> p, uint32_t in, uint32_t out);

  protected:
    void DoDispose() override;

  private:
    void Receive(Ptr<RdmaNetDevice> dev, Ptr<Packet> p);

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
};

} // namespace ns3

#endif /* RDMA_SWITCH_H */
