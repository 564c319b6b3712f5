/*
 * rdma-lb: the messages between MPI ranks of a distributed run (ns-3's DistributedSimulatorImpl;
 * ns3-module/doc/performance.md, "Distributed runs (MPI)").
 *
 * Two kinds go through ns-3's MpiInterface::SendPacket, each to a device of the receiving
 * rank, whose MpiReceiver (RdmaRemoteAttach) dispatches on the first byte:
 *  - FRAME: a frame crossing a remote link (RdmaChannel::EnableRemote), every field of the
 *    sender's frame and its tie key, written and read by one list of the fields
 *    (RdmaRemoteEncodeFrame / RdmaRemoteDecodeFrame);
 *  - EXPECT_FLOW: a sender's StartFlow announcing its flow to a receiver on another rank
 *    (RdmaNic::ExpectFlow, a direct call on one rank). It arrives the smallest remote link delay
 *    + 1 ns after the start: before the flow's first packet, which crosses that link and two
 *    more hops;
 *  - RELEASE_RX: a sender's completion deleting its receiver's state (RdmaNic::ReleaseRx), its
 *    ReceiverReleaseDelay later, under the sender's tie key as a local schedule would be.
 * Built only with ns-3's MPI (NS3_MPI); the module compiles without it.
 */
#ifndef RDMA_REMOTE_H
#define RDMA_REMOTE_H

#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>

#ifdef NS3_MPI
#include "rdma-header.h"
#include "rdma-lb-bridge.h"
#include "rdma-wheel-scheduler.h"
#endif

namespace ns3
{

class Packet;
class RdmaNetDevice;

/// The first byte of a message between ranks.
enum class RdmaRemoteKind : uint8_t
{
    FRAME = 0,       //!< a frame on a remote link
    EXPECT_FLOW = 1, //!< RdmaNic::ExpectFlow on the receiver's rank
    RELEASE_RX = 2,  //!< RdmaNic::ReleaseRx on the receiver's rank
};

#ifdef NS3_MPI
/// What a FRAME message carries: every field of the sender's frame (not only those the wire
/// carries: the frame is the sender's object, moved) and the sender's tie key.
struct RdmaRemoteFrame
{
    bool hasKey{false};               //!< the sender's schedule had a tie key
    RdmaWheelScheduler::TieKey key;   //!< that key (partition-invariant ties)
    uint32_t sizeBytes{0};            //!< RdmaFrame::sizeBytes
    LbTagData lbTag;                  //!< RdmaFrame::lbTag
    RdmaHeader header;                //!< RdmaFrame::header
};

/// \return \p m as a FRAME message.
Ptr<Packet> RdmaRemoteEncodeFrame(const RdmaRemoteFrame& m);
/// \return the frame of FRAME message \p p (aborts if its length is not a frame's).
RdmaRemoteFrame RdmaRemoteDecodeFrame(Ptr<const Packet> p);

/// Gives \p dev an MpiReceiver (once) that dispatches this rank's incoming messages for it.
void RdmaRemoteAttach(Ptr<RdmaNetDevice> dev);
/// A remote link of delay \p d exists (the smallest is what EXPECT_FLOW waits).
void RdmaRemoteNoteDelay(Time d);
/// Calls ExpectFlow(\p sip, \p qpn, \p flowId, \p size) on the NIC of host \p node, on another
/// rank, the smallest remote delay + 1 ns from now.
void RdmaRemoteSendExpectFlow(uint32_t node,
                              uint32_t sip,
                              uint16_t qpn,
                              uint32_t flowId,
                              uint64_t size);
/// Schedules ReleaseRx(\p sip, \p qpn) on the NIC of host \p node, on another rank, \p delay
/// from now (more than the smallest remote delay).
void RdmaRemoteSendReleaseRx(uint32_t node, uint32_t sip, uint16_t qpn, Time delay);
#endif

} // namespace ns3

#endif /* RDMA_REMOTE_H */
