/*
 * rdma-lb: the model's enums from and to the bridge's shared enums
 * (rust-lb/bridge/src/types.rs, which mirrors the Rust enums that define the names once).
 *
 * Module-private: it includes a cxx-generated header, so only the module's own sources include
 * it (never an installed header). Each switch names every enumerator of its side, so a new one
 * does not compile (-Wswitch under -Werror) until it is mapped; a value the other side made up
 * is a fatal error, never a default.
 */
#ifndef RDMA_LB_ENUMS_H
#define RDMA_LB_ENUMS_H

#include "rdma-nic.h"

#include "ns3/fatal-error.h"

#include "rust/cxx.h"
#include "rdma-lb-bridge/src/types.rs.h"

namespace ns3
{
namespace rdmalbenums
{

/// \return the model's congestion control for the bridge's \p cc
inline RdmaNic::CcMode
FromBridge(rdmalb::bridge::Cc cc)
{
    switch (cc)
    {
    case rdmalb::bridge::Cc::None:
        return RdmaNic::CC_NONE;
    case rdmalb::bridge::Cc::Dcqcn:
        return RdmaNic::CC_DCQCN;
    case rdmalb::bridge::Cc::Hpcc:
        return RdmaNic::CC_HPCC;
    case rdmalb::bridge::Cc::Timely:
        return RdmaNic::CC_TIMELY;
    case rdmalb::bridge::Cc::Dctcp:
        return RdmaNic::CC_DCTCP;
    }
    NS_FATAL_ERROR("rdma-lb: no congestion control has the value " << static_cast<int>(cc));
}

/// \return the bridge's congestion control for the model's \p cc
inline rdmalb::bridge::Cc
ToBridge(RdmaNic::CcMode cc)
{
    switch (cc)
    {
    case RdmaNic::CC_NONE:
        return rdmalb::bridge::Cc::None;
    case RdmaNic::CC_DCQCN:
        return rdmalb::bridge::Cc::Dcqcn;
    case RdmaNic::CC_HPCC:
        return rdmalb::bridge::Cc::Hpcc;
    case RdmaNic::CC_TIMELY:
        return rdmalb::bridge::Cc::Timely;
    case RdmaNic::CC_DCTCP:
        return rdmalb::bridge::Cc::Dctcp;
    }
    NS_FATAL_ERROR("rdma-lb: no congestion control has the value " << static_cast<int>(cc));
}

/// \return the model's loss recovery for the bridge's \p recovery
inline RdmaNic::LossRecovery
FromBridge(rdmalb::bridge::Recovery recovery)
{
    switch (recovery)
    {
    case rdmalb::bridge::Recovery::Gbn:
        return RdmaNic::GBN;
    case rdmalb::bridge::Recovery::Irn:
        return RdmaNic::IRN;
    case rdmalb::bridge::Recovery::NicSr:
        return RdmaNic::NIC_SR;
    }
    NS_FATAL_ERROR("rdma-lb: no loss recovery has the value " << static_cast<int>(recovery));
}

/// \return the bridge's loss recovery for the model's \p recovery
inline rdmalb::bridge::Recovery
ToBridge(RdmaNic::LossRecovery recovery)
{
    switch (recovery)
    {
    case RdmaNic::GBN:
        return rdmalb::bridge::Recovery::Gbn;
    case RdmaNic::IRN:
        return rdmalb::bridge::Recovery::Irn;
    case RdmaNic::NIC_SR:
        return rdmalb::bridge::Recovery::NicSr;
    }
    NS_FATAL_ERROR("rdma-lb: no loss recovery has the value " << static_cast<int>(recovery));
}

/// \return the bridge's transport for the model's \p kind
inline rdmalb::bridge::TransportKind
ToBridge(RdmaNic::Transport kind)
{
    switch (kind)
    {
    case RdmaNic::ROCE:
        return rdmalb::bridge::TransportKind::Roce;
    case RdmaNic::UET:
        return rdmalb::bridge::TransportKind::Uet;
    }
    NS_FATAL_ERROR("rdma-lb: no transport kind has the value " << static_cast<int>(kind));
}

/// \return the model's transport for the bridge's \p kind
inline RdmaNic::Transport
FromBridge(rdmalb::bridge::TransportKind kind)
{
    switch (kind)
    {
    case rdmalb::bridge::TransportKind::Roce:
        return RdmaNic::ROCE;
    case rdmalb::bridge::TransportKind::Uet:
        return RdmaNic::UET;
    }
    NS_FATAL_ERROR("rdma-lb: no transport kind has the value " << static_cast<int>(kind));
}

} // namespace rdmalbenums
} // namespace ns3

#endif /* RDMA_LB_ENUMS_H */
