/*
 * rdma-lb: per-flow sending rate and cumulative retransmissions over time, sampled, as Themis
 * ("Enabling Packet Spraying over Commodity RNICs with In-Network Support", section 2.2,
 * Fig. 1) draws them to show what reordering NACKs do to DCQCN.
 *
 * rate.txt: `time_ns,flow,rate_bps` for every flow that has sent and not completed;
 * retx.txt: `time_ns,data_pkts,retx_pkts`, the whole run's data packets sent so far and how many
 * of them were retransmissions (offset below the highest sent), completed flows included.
 * Samples every period from the first until the run's stop. Rows are in time, then flow order,
 * so the same run gives the same bytes.
 */
#ifndef RDMA_RATE_TRACE_H
#define RDMA_RATE_TRACE_H

#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <map>
#include <ostream>
#include <unordered_map>
#include <vector>

namespace ns3
{

class RdmaNic;
struct RdmaFlowRecord;

/**
 * \ingroup rdma-lb
 * Samples the sending rate of every active flow and the run's retransmission count (see the
 * file comment). Connects to the NICs' DataSent and FlowRecord trace sources.
 */
class RdmaRateTrace
{
  public:
    /**
     * Connects to \p nics and schedules the first sample at \p first.
     * \param rate where rate.txt rows go; \param retx where retx.txt rows go (both outlive
     * the simulation)
     */
    void Start(const std::vector<Ptr<RdmaNic>>& nics,
               Time first,
               Time period,
               std::ostream* rate,
               std::ostream* retx);

  private:
    // The NIC is bound as a plain pointer: a Ptr bound into the NIC's own trace source would
    // keep it alive for ever (a reference cycle).
    static void OnDataSent(RdmaRateTrace* self,
                           RdmaNic* nic,
                           uint32_t flowId,
                           uint32_t seq,
                           uint16_t entropy);
    void OnRecord(const RdmaFlowRecord& record);
    void Sample();

    std::map<uint32_t, Ptr<RdmaNic>> m_active;  //!< flows that sent and did not complete
    std::unordered_map<uint32_t, bool> m_seen;  //!< every flow that sent (true = completed)
    uint64_t m_doneData{0};                     //!< data packets of completed flows
    uint64_t m_doneRetx{0};                     //!< retransmissions of completed flows
    Time m_period;
    std::ostream* m_rate{nullptr};
    std::ostream* m_retx{nullptr};
};

} // namespace ns3

#endif /* RDMA_RATE_TRACE_H */
