/*
 * rdma-lb: a packet on the fabric's own path, as a compact record (ns3-module/doc/performance.md,
 * "Third round").
 *
 * Ports, links, switches and NICs hand each other an RdmaFrame: the packet's decoded header,
 * its size on the wire and a switch load balancer's tag. No ns-3 Packet is made for it unless
 * something outside that path needs one: a connected trace sink, a receive error model, a
 * packet handler of a test or a foreign device. Then Materialise() writes the header (and the
 * tag) into a Packet of the frame's size, kept in the frame so that one sink sees one packet
 * (one uid) hop after hop. Before the record, every hop queued, copied and parsed a Packet;
 * reading a packet object and its buffer after they went cold in a queue or on a link was
 * about a third of a run.
 */
#ifndef RDMA_FRAME_H
#define RDMA_FRAME_H

#include "rdma-header.h"
#include "rdma-lb-bridge.h"

#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <memory>
#include <string>

namespace ns3
{

struct RdmaFrame;

/// Returns a frame to the pool (RdmaFramePtr's deleter).
struct RdmaFrameRelease
{
    /// Releases \p f's packet and tag and keeps \p f for the next RdmaFrame::New.
    void operator()(RdmaFrame* f) const;
};

/// The owner of a frame: moved from port queue to link to switch, never copied.
using RdmaFramePtr = std::unique_ptr<RdmaFrame, RdmaFrameRelease>;

/**
 * \ingroup rdma-lb
 * A packet of the fabric model: header, size on the wire, load-balancer tag. Frames come from
 * one pool, reused last-released-first (a frame released by one hop is warm in the cache for
 * the next New); queues and links hold their owning pointers.
 */
struct RdmaFrame
{
    // In this order: a hop reads the first cache line (size, packet, tag flag) and the header's
    // first fields in the second; releasing a frame touches the first line only.
    uint32_t sizeBytes{0}; //!< size on the wire, headers included
    /// The ns-3 packet made by Materialise (null until something needed one).
    Ptr<Packet> packet;
    /// A switch load balancer's per-packet state (no wire bytes); its words are zero when
    /// it is not present.
    LbTagData lbTag;
    RdmaHeader header; //!< the packet's header: what the wire carries (RdmaHeader::OnTheWire)

    /// \return a frame of header \p h (reduced to what the wire carries) and \p payloadBytes
    static RdmaFramePtr Make(const RdmaHeader& h, uint32_t payloadBytes);
    /// \return the frame of an ns-3 packet that starts with an RdmaHeader (a test's or a
    /// foreign device's packet; an RdmaLbTag on it becomes the frame's tag)
    static RdmaFramePtr FromPacket(Ptr<Packet> p);
    /**
     * \return the frame as an ns-3 packet: made at the first call, its header bytes and tag
     * rewritten from the frame at later ones (the switches change a frame's header: ECN,
     * INT, entropy). A packet a sink still holds is copied before it is rewritten.
     */
    Ptr<Packet> Materialise();

  private:
    friend struct RdmaFrameRelease;
    /// \return a pooled frame without packet or tag (its header and size are the caller's
    /// to set)
    static RdmaFramePtr New();
};

/**
 * Asks the cache for the first two lines of \p f, the next frame a queue or a link will hand
 * on: it is read one serialisation time later at the earliest, and would be a cache miss then.
 */
inline void
RdmaFramePrefetch(const RdmaFrame* f)
{
#if defined(__GNUC__)
    __builtin_prefetch(f);
    __builtin_prefetch(reinterpret_cast<const char*>(f) + 64);
#else
    (void)f;
#endif
}

/**
 * \ingroup rdma-lb
 * A packet trace source fired with frames: TracedCallback<Ptr<const Packet>, Ts...> to its
 * sinks (connected through the usual TraceConnect of the attribute system), which makes the
 * frame's packet only once a sink has been connected. Disconnecting does not stop the making.
 */
template <typename... Ts>
class RdmaFrameTrace : public TracedCallback<Ptr<const Packet>, Ts...>
{
    using Base = TracedCallback<Ptr<const Packet>, Ts...>;

  public:
    /// As TracedCallback::ConnectWithoutContext (found by the trace source accessor).
    void ConnectWithoutContext(const CallbackBase& cb)
    {
        m_connected = true;
        Base::ConnectWithoutContext(cb);
    }

    /// As TracedCallback::Connect.
    void Connect(const CallbackBase& cb, std::string path)
    {
        m_connected = true;
        Base::Connect(cb, path);
    }

    /// Fires the sinks with \p f's packet, if any sink was connected.
    void operator()(RdmaFrame& f, Ts... args)
    {
        if (m_connected)
        {
            Base::operator()(f.Materialise(), args...);
        }
    }

  private:
    bool m_connected{false};
};

} // namespace ns3

#endif /* RDMA_FRAME_H */
