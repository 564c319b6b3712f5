/*
 * rdma-lb: RdmaUetFabric (see rdma-uet-fabric.h).
 */
#include "rdma-uet-fabric.h"

#include "rdma-header.h"
#include "rdma-lb-bridge.h"
#include "rdma-nic.h"
#include "rdma-switch.h"
#include "switch-mmu.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaUetFabric);

TypeId
RdmaUetFabric::GetTypeId()
{
    // Defaults: the uet table of transport parameters' (RdmaTransportDefault).
    static TypeId tid =
        TypeId("ns3::RdmaUetFabric")
            .SetParent<Object>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaUetFabric>()
            .AddAttribute("QueuePackets",
                          "Data queue of a switch egress port in packets (RdmaSwitch::"
                          "DataQueueLimit in wire bytes); 0 = one BDP of the base RTT",
                          *RdmaTransportDefault("ns3::RdmaUetFabric", "QueuePackets"),
                          MakeUintegerAccessor(&RdmaUetFabric::m_queuePackets),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnKminPackets",
                          "ECN marking starts above this many queued packets; 0 = queue / 4",
                          *RdmaTransportDefault("ns3::RdmaUetFabric", "EcnKminPackets"),
                          MakeUintegerAccessor(&RdmaUetFabric::m_ecnKminPackets),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnKmaxPackets",
                          "Every packet is marked above this many; 0 = 3 x queue / 4",
                          *RdmaTransportDefault("ns3::RdmaUetFabric", "EcnKmaxPackets"),
                          MakeUintegerAccessor(&RdmaUetFabric::m_ecnKmaxPackets),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("BaseRtt",
                          "Base RTT of every queue pair (RdmaNic::UetBaseRtt); 0 = the "
                          "fabric's largest unloaded RTT, and each pair's own for its window cap",
                          *RdmaTransportDefault("ns3::RdmaUetFabric", "BaseRtt"),
                          MakeTimeAccessor(&RdmaUetFabric::m_baseRtt),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("Rto",
                          "Retransmission timeout (RdmaNic::UetRto); 0 = base RTT + 4 x the "
                          "drain time of one queue at the host rate",
                          *RdmaTransportDefault("ns3::RdmaUetFabric", "Rto"),
                          MakeTimeAccessor(&RdmaUetFabric::m_rto),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("SizingRate",
                          "The link rate the derived queue, ECN thresholds, base RTT and RTO are "
                          "sized for; 0 = the largest bottleneck rate of a host pair",
                          *RdmaTransportDefault("ns3::RdmaUetFabric", "SizingRate"),
                          MakeDataRateAccessor(&RdmaUetFabric::m_sizingRate),
                          MakeDataRateChecker());
    return tid;
}

RdmaUetDerived
RdmaUetFabric::Derive(const RdmaUetFabricShape& shape) const
{
    constexpr uint64_t BITS_NS = 8000000000ULL; // bits per byte x ns per second
    const uint64_t bps =
        m_sizingRate.GetBitRate() != 0 ? m_sizingRate.GetBitRate() : shape.hostBps;
    RdmaUetDerived d;
    d.sizingBps = bps;
    d.wireBytes = uint64_t(shape.payloadBytes) + shape.headerBytes;
    const uint64_t ackWire = std::max<uint64_t>(RdmaHeader::ACK_BYTES, shape.headerBytes);
    d.txNs = bps == 0 ? 0 : shape.maxHops * (d.wireBytes + ackWire) * BITS_NS / bps;
    const auto given = [](Time t) { return static_cast<uint64_t>(t.GetNanoSeconds()); };
    d.baseRttPerPair = m_baseRtt.IsZero();
    d.baseRttNs = d.baseRttPerPair ? 2 * shape.maxDelayNs + d.txNs : given(m_baseRtt);
    const auto bdpBytes =
        static_cast<uint64_t>(static_cast<unsigned __int128>(d.baseRttNs) * bps / BITS_NS);
    d.queuePackets =
        m_queuePackets != 0 ? m_queuePackets : std::max<uint64_t>(1, bdpBytes / d.wireBytes);
    d.ecnKminPackets = m_ecnKminPackets != 0 ? m_ecnKminPackets : d.queuePackets / 4;
    d.ecnKmaxPackets = m_ecnKmaxPackets != 0 ? m_ecnKmaxPackets : d.queuePackets * 3 / 4;
    d.rtoNs = !m_rto.IsZero()
                  ? given(m_rto)
                  : d.baseRttNs +
                        (bps == 0 ? 0 : 4 * d.queuePackets * d.wireBytes * BITS_NS / bps);
    return d;
}

void
RdmaUetFabric::ConfigureSwitch(Ptr<RdmaSwitch> sw,
                               const RdmaUetDerived& d,
                               uint32_t payloadBytes,
                               uint64_t bufferBytes)
{
    const uint64_t queueBytes = d.queuePackets * d.wireBytes;
    sw->SetAttribute("PayloadSize", UintegerValue(payloadBytes));
    sw->SetAttribute("DataQueueLimit", UintegerValue(queueBytes));
    sw->SetAttribute("EcnKmin", UintegerValue(d.ecnKminPackets * d.wireBytes));
    sw->SetAttribute("EcnKmax", UintegerValue(d.ecnKmaxPackets * d.wireBytes));
    sw->SetAttribute("EcnPmax", DoubleValue(1.0));
    const uint64_t room = sw->GetNPorts() * (queueBytes + (1u << 20));
    sw->GetMmu()->SetAttribute("EgressDynamicThreshold", BooleanValue(false));
    sw->GetMmu()->SetAttribute("BufferSize", UintegerValue(std::max(bufferBytes, room)));
}

void
RdmaUetFabric::ConfigureNic(Ptr<RdmaNic> nic, const RdmaUetDerived& d)
{
    nic->SetAttribute("UetBaseRtt", TimeValue(NanoSeconds(static_cast<int64_t>(d.baseRttNs))));
    nic->SetAttribute("UetRto", TimeValue(NanoSeconds(static_cast<int64_t>(d.rtoNs))));
}

} // namespace ns3
