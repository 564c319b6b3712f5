/*
 * rdma-lb: RdmaNodeIsHost, RdmaNodeIsPfcSwitch (see rdma-node-role.h).
 */
#include "rdma-node-role.h"

#include "rdma-nic.h"
#include "rdma-switch.h"

#include "ns3/boolean.h"

namespace ns3
{

bool
RdmaNodeIsHost(Ptr<const Node> node)
{
    // A switch with a NIC (an RDMA endpoint beside it, RdmaNic::SetupOnSwitch) is a switch.
    return node && node->GetObject<RdmaNic>() && !node->GetObject<RdmaSwitch>();
}

bool
RdmaNodeIsPfcSwitch(Ptr<const Node> node)
{
    Ptr<RdmaSwitch> sw = node ? node->GetObject<RdmaSwitch>() : nullptr;
    if (!sw)
    {
        return false; // hosts never send PFC
    }
    BooleanValue pfc(false);
    return sw->GetAttributeFailSafe("PfcEnabled", pfc) && pfc.Get();
}

} // namespace ns3
