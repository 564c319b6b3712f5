/*
 * rdma-lb: helpers shared by the module's test suites.
 */
#ifndef RDMA_LB_TEST_UTIL_H
#define RDMA_LB_TEST_UTIL_H

#include "ns3/error-model.h"
#include "ns3/packet.h"
#include "ns3/rdma-header.h"

#include <cstdint>
#include <set>
#include <utility>

namespace ns3
{
namespace rdmalbtest
{

/// Drops the first arrival of the data packets at the listed byte offsets (a real loss, once).
class DropSeqOnceErrorModel : public ErrorModel
{
  public:
    explicit DropSeqOnceErrorModel(std::set<uint32_t> seqs)
        : m_seqs(std::move(seqs))
    {
    }

  private:
    bool DoCorrupt(Ptr<Packet> p) override
    {
        RdmaHeader h;
        p->PeekHeader(h);
        return h.type == RdmaHeader::DATA && m_seqs.erase(h.seq) != 0;
    }

    void DoReset() override
    {
    }

    std::set<uint32_t> m_seqs;
};

} // namespace rdmalbtest
} // namespace ns3

#endif /* RDMA_LB_TEST_UTIL_H */
