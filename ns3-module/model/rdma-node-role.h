/*
 * rdma-lb: what a node of the fabric is, for the NIC and the switch, which otherwise do not
 * know each other's classes (module-private: only the module's sources include it).
 */
#ifndef RDMA_NODE_ROLE_H
#define RDMA_NODE_ROLE_H

#include "ns3/node.h"
#include "ns3/ptr.h"

namespace ns3
{

/// \return whether \p node is a host of the fabric (it carries an RdmaNic and is no switch);
/// false for null
bool RdmaNodeIsHost(Ptr<const Node> node);

/// \return whether \p node is a switch of the fabric that generates PFC pause frames (an
/// RdmaSwitch whose PfcEnabled is true); false for null
bool RdmaNodeIsPfcSwitch(Ptr<const Node> node);

} // namespace ns3

#endif /* RDMA_NODE_ROLE_H */
