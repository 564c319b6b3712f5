/*
 * rdma-lb: RdmaLbTag, a switch load balancer's per-packet tag (ns3-module/doc/rdma-lb.rst,
 * "Switch-side load balancers"), as it appears on a packet made for a trace sink or read from a
 * foreign one. Module-private: included by rdma-frame.cc, which writes and reads it and
 * registers its TypeId (on the fabric's own path the tag is RdmaFrame::lbTag).
 */
#ifndef RDMA_LB_TAG_H
#define RDMA_LB_TAG_H

#include "rdma-lb-bridge.h"

#include "ns3/tag.h"

#include <ostream>

namespace ns3
{

/**
 * \ingroup rdma-lb
 * A switch load balancer's opaque per-packet state (LbTagData), carried from switch to switch
 * as a packet tag: no bytes on the wire, as the reference's LetFlow/CONGA/ConWeave tags.
 */
class RdmaLbTag : public Tag
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::RdmaLbTag")
                                .SetParent<Tag>()
                                .SetGroupName("RdmaLb")
                                .AddConstructor<RdmaLbTag>();
        return tid;
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return static_cast<uint32_t>(8 * data.words.size());
    }

    void Serialize(TagBuffer i) const override
    {
        for (uint64_t w : data.words)
        {
            i.WriteU64(w);
        }
    }

    void Deserialize(TagBuffer i) override
    {
        for (uint64_t& w : data.words)
        {
            w = i.ReadU64();
        }
        data.present = true;
    }

    void Print(std::ostream& os) const override
    {
        os << "lb-tag=" << data.words[0];
    }

    LbTagData data; //!< the tag's content
};

} // namespace ns3

#endif /* RDMA_LB_TAG_H */
