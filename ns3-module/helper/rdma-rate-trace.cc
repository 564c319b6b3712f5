/*
 * rdma-lb: sampled per-flow rate and retransmission trace (rdma-rate-trace.h).
 */
#include "rdma-rate-trace.h"

#include "ns3/callback.h"
#include "ns3/rdma-nic.h"
#include "ns3/simulator.h"

namespace ns3
{

void
RdmaRateTrace::Start(const std::vector<Ptr<RdmaNic>>& nics,
                     Time first,
                     Time period,
                     std::ostream* rate,
                     std::ostream* retx)
{
    m_period = period;
    m_rate = rate;
    m_retx = retx;
    for (const Ptr<RdmaNic>& nic : nics)
    {
        nic->TraceConnectWithoutContext("DataSent",
                                        MakeBoundCallback(&RdmaRateTrace::OnDataSent,
                                                          this,
                                                          PeekPointer(nic)));
        nic->TraceConnectWithoutContext("FlowRecord", MakeCallback(&RdmaRateTrace::OnRecord, this));
    }
    Simulator::Schedule(first, &RdmaRateTrace::Sample, this);
}

void
RdmaRateTrace::OnDataSent(RdmaRateTrace* self,
                          RdmaNic* nic,
                          uint32_t flowId,
                          uint32_t /* seq */,
                          uint16_t /* entropy */)
{
    if (self->m_seen.emplace(flowId, false).second)
    {
        self->m_active.emplace(flowId, Ptr<RdmaNic>(nic));
    }
}

void
RdmaRateTrace::OnRecord(const RdmaFlowRecord& record)
{
    auto it = m_seen.find(record.flowId);
    if (it == m_seen.end() || it->second)
    {
        return; // a flow that never sent a data packet, or a record seen twice
    }
    it->second = true;
    m_active.erase(record.flowId);
    m_doneData += record.dataPkts;
    m_doneRetx += record.retxPkts;
}

void
RdmaRateTrace::Sample()
{
    const int64_t t = Simulator::Now().GetNanoSeconds();
    uint64_t data = m_doneData;
    uint64_t retx = m_doneRetx;
    for (const auto& [flow, nic] : m_active)
    {
        *m_rate << t << ',' << flow << ',' << nic->GetFlowRate(flow).GetBitRate() << '\n';
        RdmaFlowRecord r = nic->GetFlowRecord(flow);
        data += r.dataPkts;
        retx += r.retxPkts;
    }
    *m_retx << t << ',' << data << ',' << retx << '\n';
    // Events at the stop time still run; the scenario's Stop ends the chain.
    Simulator::Schedule(m_period, &RdmaRateTrace::Sample, this);
}

} // namespace ns3
