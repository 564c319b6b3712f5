/*
 * rdma-lb: RdmaFrame.
 */
#include "rdma-frame.h"

#include "rdma-lb-tag.h"

#include <vector>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaLbTag);

namespace
{

/// The frames not in use, the most recently released last. Frames are allocated in blocks
/// and never freed: the pool holds the most frames a run had alive at once.
struct FramePool
{
    std::vector<RdmaFrame*> free;
    std::vector<std::unique_ptr<RdmaFrame[]>> blocks;
};

FramePool&
Pool()
{
    // Never destroyed: frames may still be owned by objects torn down after static
    // destructors ran.
    static FramePool* pool = new FramePool;
    return *pool;
}

constexpr std::size_t BLOCK_FRAMES = 256;

} // namespace

void
RdmaFrameRelease::operator()(RdmaFrame* f) const
{
    f->packet = nullptr;
    if (f->lbTag.present)
    {
        f->lbTag = LbTagData();
    }
    Pool().free.push_back(f);
}

RdmaFramePtr
RdmaFrame::New()
{
    FramePool& pool = Pool();
    if (pool.free.empty())
    {
        pool.blocks.emplace_back(new RdmaFrame[BLOCK_FRAMES]);
        RdmaFrame* block = pool.blocks.back().get();
        for (std::size_t i = BLOCK_FRAMES; i-- > 0;)
        {
            pool.free.push_back(&block[i]);
        }
    }
    RdmaFrame* f = pool.free.back();
    pool.free.pop_back();
    return RdmaFramePtr(f);
}

RdmaFramePtr
RdmaFrame::Make(const RdmaHeader& h, uint32_t payloadBytes)
{
    RdmaFramePtr f = New();
    f->header = h.OnTheWire();
    f->sizeBytes = f->header.GetSerializedSize() + payloadBytes;
    return f;
}

RdmaFramePtr
RdmaFrame::FromPacket(Ptr<Packet> p)
{
    RdmaFramePtr f = New();
    f->header = RdmaHeader();
    f->header.PeekFrom(*p);
    f->sizeBytes = p->GetSize();
    RdmaLbTag lt;
    if (p->PeekPacketTag(lt))
    {
        f->lbTag = lt.data;
    }
    f->packet = p;
    return f;
}

Ptr<Packet>
RdmaFrame::Materialise()
{
    const uint32_t headerBytes = header.GetSerializedSize();
    if (!packet)
    {
        packet = Create<Packet>(sizeBytes > headerBytes ? sizeBytes - headerBytes : 0);
    }
    else
    {
        if (packet->GetReferenceCount() > 1)
        {
            packet = packet->Copy(); // a sink kept the packet as it was then
        }
        RdmaHeader old;
        packet->RemoveHeader(old);
        RdmaLbTag oldTag;
        packet->RemovePacketTag(oldTag);
    }
    packet->AddHeader(header);
    if (lbTag.present)
    {
        RdmaLbTag lt;
        lt.data = lbTag;
        packet->AddPacketTag(lt);
    }
    return packet;
}

} // namespace ns3
