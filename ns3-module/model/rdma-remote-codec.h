/*
 * rdma-lb: the records exchanged between the MPI ranks of a distributed run, as plain bytes
 * (ns3-module/doc/performance.md, "Distributed runs (MPI)").
 *
 * One record is one thing a rank hands to another: a frame crossing a link between ranks
 * (FRAME), a sender's StartFlow announcing its flow to a receiver on another rank
 * (EXPECT_FLOW), a sender's completion releasing its receiver's state (RELEASE_RX). Each carries
 * its arrival time and its destination node, so that many records, of any kinds and for any
 * nodes of one rank, go as one message: RdmaRemoteBatchWriter appends records to a byte buffer,
 * RdmaRemoteBatchReader reads them back in the same order. Every field goes as its bytes
 * (both ranks run the same binary on the same machine type, as ns-3's own MPI packet path
 * assumes); each kind's fields are listed once, read by the writer and by the reader.
 *
 * No MPI here: the codec is built (and tested) in every build; the engines that send the bytes
 * (rdma-remote.h, rdma-mpi-simulator-impl.h) need ns-3's MPI.
 */
#ifndef RDMA_REMOTE_CODEC_H
#define RDMA_REMOTE_CODEC_H

#include "rdma-header.h"
#include "rdma-lb-bridge.h"
#include "rdma-wheel-scheduler.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ns3
{

/// The kind of a record (the first byte of ns-3's per-record message, too).
enum class RdmaRemoteKind : uint8_t
{
    FRAME = 0,       //!< a frame on a remote link
    EXPECT_FLOW = 1, //!< RdmaNic::ExpectFlow on the receiver's rank
    RELEASE_RX = 2,  //!< RdmaNic::ReleaseRx on the receiver's rank
};

/// What a FRAME carries: every field of the sender's frame (not only those the wire carries:
/// the frame is the sender's object, moved) and the sender's tie key.
struct RdmaRemoteFrame
{
    bool hasKey{false};             //!< the sender's schedule had a tie key
    RdmaWheelScheduler::TieKey key; //!< that key (partition-invariant ties)
    uint32_t sizeBytes{0};          //!< RdmaFrame::sizeBytes
    LbTagData lbTag;                //!< RdmaFrame::lbTag
    RdmaHeader header;              //!< RdmaFrame::header
};

/// One record of a batch. Which fields are meaningful depends on kind (see each).
struct RdmaRemoteRecord
{
    RdmaRemoteKind kind{RdmaRemoteKind::FRAME}; //!< the kind
    int64_t arrivalTs{0};   //!< when it takes effect on the receiving rank (time steps)
    uint32_t node{0};       //!< the destination node
    uint32_t ifIndex{0};    //!< FRAME: the destination device's index on its node
    RdmaRemoteFrame frame;  //!< FRAME: the frame
    uint32_t sip{0};        //!< EXPECT_FLOW, RELEASE_RX: the sender's address
    uint16_t qpn{0};        //!< EXPECT_FLOW, RELEASE_RX: the sender's queue pair
    uint32_t flowId{0};     //!< EXPECT_FLOW: the flow
    uint64_t size{0};       //!< EXPECT_FLOW: its size in bytes
    bool hasKey{false};     //!< RELEASE_RX: the sender's schedule had a tie key
    RdmaWheelScheduler::TieKey key; //!< RELEASE_RX: that key
};

/// Appends records to a byte buffer (one message to one rank).
class RdmaRemoteBatchWriter
{
  public:
    /// Appends \p r to \p out.
    static void Append(std::vector<uint8_t>* out, const RdmaRemoteRecord& r);
    /// Appends the frame part of a record (ns-3's per-frame message body) to \p out.
    static void AppendFrame(std::vector<uint8_t>* out, const RdmaRemoteFrame& f);
};

/// Reads the records of a buffer RdmaRemoteBatchWriter wrote, in order.
class RdmaRemoteBatchReader
{
  public:
    /// Reads \p n bytes at \p data (not copied: they must outlive the reader).
    RdmaRemoteBatchReader(const uint8_t* data, size_t n);
    /**
     * \param r receives the next record
     * \return false at the end of the buffer (aborts on a truncated or unknown record)
     */
    bool Next(RdmaRemoteRecord* r);
    /// Reads a frame part (AppendFrame) that fills the rest of the buffer exactly (aborts if not).
    RdmaRemoteFrame ReadWholeFrame();

  private:
    const uint8_t* m_data; //!< the buffer
    size_t m_size;         //!< its length
    size_t m_pos{0};       //!< the read position
};

} // namespace ns3

#endif /* RDMA_REMOTE_CODEC_H */
