/*
 * rdma-lb: the messages between MPI ranks of a distributed run (ns3-module/doc/performance.md,
 * "Distributed runs (MPI)"), under either engine: ns-3's DistributedSimulatorImpl (one
 * MpiInterface::SendPacket per record, to a device of the receiving rank, whose MpiReceiver
 * (RdmaRemoteAttach) dispatches on the first byte) or rdma-lb's RdmaMpiSimulatorImpl (records
 * appended to the destination rank's batch of the window, rdma-remote-codec.h; the receiver
 * schedules each record's effect at its arrival time itself). Three kinds of records:
 *  - FRAME: a frame crossing a remote link (RdmaChannel::EnableRemote), every field of the
 *    sender's frame and its tie key, written and read by one list of the fields
 *    (rdma-remote-codec.h);
 *  - EXPECT_FLOW: a sender's StartFlow announcing its flow to a receiver on another rank
 *    (RdmaNic::ExpectFlow, a direct call on one rank). It arrives the smallest remote link delay
 *    + 1 ns after the start (ns-3's engine) or at the window's end (the batching engine):
 *    before the flow's first packet, which crosses a link between ranks and two more hops;
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
#include "rdma-remote-codec.h"
#endif

namespace ns3
{

class Packet;
class RdmaNetDevice;

#ifdef NS3_MPI
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
/// Sends frame \p m to device \p dst (on another rank), arriving at \p arrival.
void RdmaRemoteSendFrame(Ptr<RdmaNetDevice> dst, const RdmaRemoteFrame& m, Time arrival);

/// What this rank sent to others in this process: records of each kind (under ns-3's engine
/// each is one MPI message; under RdmaMpiSimulatorImpl they go in one batch per rank and window).
struct RdmaRemoteCounts
{
    uint64_t frames{0};      //!< FRAME records
    uint64_t expectFlows{0}; //!< EXPECT_FLOW records
    uint64_t releases{0};    //!< RELEASE_RX records
};
/// \return the records this rank sent so far
RdmaRemoteCounts RdmaRemoteGetCounts();
#endif

} // namespace ns3

#endif /* RDMA_REMOTE_H */
