/*
 * rdma-lb: SwitchMmu (the reference's shared-buffer MMU, as behaviour).
 */
#include "switch-mmu.h"

#include "rdma-lb-bridge.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SwitchMmu");
NS_OBJECT_ENSURE_REGISTERED(SwitchMmu);

TypeId
SwitchMmu::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::SwitchMmu")
            .SetParent<Object>()
            .SetGroupName("RdmaLb")
            .AddConstructor<SwitchMmu>()
            .AddAttribute("BufferSize",
                          "Shared buffer of the switch in bytes (BUFFER_SIZE MB x 1024 x 1024; "
                          "the reference's run.py default is 9 MB)",
                          *RdmaTransportDefault("ns3::SwitchMmu", "BufferSize"),
                          MakeUintegerAccessor(&SwitchMmu::m_bufferSize),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("IngressAlpha",
                          "Alpha of the ingress dynamic threshold (PFC generation)",
                          *RdmaTransportDefault("ns3::SwitchMmu", "IngressAlpha"),
                          MakeDoubleAccessor(&SwitchMmu::m_alphaIngress),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("EgressAlpha",
                          "Alpha of the egress dynamic threshold (drop point with PFC off)",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&SwitchMmu::m_alphaEgress),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("EgressDynamicThreshold",
                          "Drop at the egress dynamic threshold (reference: on for every data "
                          "class, PFC or not). false keeps only the pool/port/buffer limits at "
                          "egress, so that with PFC on the ingress pause threshold and the "
                          "per-port headroom alone bound a lossless queue: with alpha_eg = 1 "
                          "the threshold sits near L_eg / 2, only sum(headroom) / 2 above the "
                          "pause point L_in / 2 that many converging ports reach, and their "
                          "in-flight bytes after the pause overflow it",
                          BooleanValue(true),
                          MakeBooleanAccessor(&SwitchMmu::m_egressDt),
                          MakeBooleanChecker())
            .AddAttribute("HeadroomSumQuirk",
                          "Reproduce the reference's headroom sum in the ingress shared limit "
                          "(indices 0..N-1 of a 1-based array: QuirkHeadroom replaces the last "
                          "port's headroom); false sums the N real ports' headrooms",
                          BooleanValue(true),
                          MakeBooleanAccessor(&SwitchMmu::m_headroomQuirk),
                          MakeBooleanChecker())
            .AddAttribute("QuirkHeadroom",
                          "The headroom the reference's index 0 keeps (its attribute default, "
                          "12500 + 2 x 1048 B); used only with HeadroomSumQuirk",
                          UintegerValue(14596),
                          MakeUintegerAccessor(&SwitchMmu::m_quirkHeadroom),
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

SwitchMmu::SwitchMmu() = default;

uint64_t
SwitchMmu::ComputeHeadroom(uint64_t rateBps, Time delay)
{
    // 2 x rate x delay / 8 + 2 x MTU; rate x delay in bits, exact for integral nanoseconds.
    const uint64_t bits = static_cast<uint64_t>(static_cast<double>(rateBps) * delay.GetSeconds() + 0.5);
    return 2 * bits / 8 + 2 * MTU;
}

void
SwitchMmu::Configure(const std::vector<uint64_t>& headroom)
{
    const uint64_t n = headroom.size();
    m_ports.assign(n, Port{});
    uint64_t sum = 0;
    for (uint64_t i = 0; i < n; ++i)
    {
        m_ports[i].headroomLimit = headroom[i];
        if (m_headroomQuirk)
        {
            sum += i == 0 ? m_quirkHeadroom : headroom[i - 1];
        }
        else
        {
            sum += headroom[i];
        }
    }
    const uint64_t mins = n * N_CLASSES * PG_MIN;
    NS_ABORT_MSG_IF(sum + mins >= m_bufferSize,
                    "SwitchMmu: buffer of " << m_bufferSize << " B too small for " << n << " ports");
    m_ingressLimit = m_bufferSize - sum - mins;
    m_egressLimit = m_bufferSize - mins;
    m_total = 0;
    m_ingressPool = {};
    m_egressPool = {};
    NS_LOG_INFO("MMU: " << n << " ports, B " << m_bufferSize << ", L_in " << m_ingressLimit
                        << ", L_eg " << m_egressLimit);
}

bool
SwitchMmu::IsConfigured() const
{
    return !m_ports.empty();
}

uint32_t
SwitchMmu::GetNPorts() const
{
    return static_cast<uint32_t>(m_ports.size());
}

uint64_t
SwitchMmu::GetBufferSize() const
{
    return m_bufferSize;
}

uint64_t
SwitchMmu::GetIngressSharedLimit() const
{
    return m_ingressLimit;
}

uint64_t
SwitchMmu::GetEgressSharedLimit() const
{
    return m_egressLimit;
}

uint64_t
SwitchMmu::GetHeadroom(uint32_t port) const
{
    return m_ports.at(port).headroomLimit;
}

uint32_t
SwitchMmu::IngressPool(uint32_t cls)
{
    return cls == 1 ? 1 : 0;
}

uint32_t
SwitchMmu::EgressPool(uint32_t cls)
{
    return cls == 0 ? 0 : 1;
}

double
SwitchMmu::GetPauseThreshold(uint32_t cls) const
{
    const double pool = static_cast<double>(m_ingressPool[IngressPool(cls)]);
    return static_cast<double>(PFC_OFFSET) +
           m_alphaIngress * (static_cast<double>(m_ingressLimit) - pool);
}

bool
SwitchMmu::CheckIngressAdmission(uint32_t port, uint32_t cls, uint32_t size) const
{
    const Port& pt = m_ports[port];
    const Pg& pg = pt.pg[cls];
    if (m_total + size > m_bufferSize)
    {
        NS_LOG_LOGIC("ingress drop (buffer full): port " << port << " class " << cls);
        return false;
    }
    if (pg.ingress + size > PG_MIN && pt.ingress + size > PG_MIN &&
        m_ingressPool[IngressPool(cls)] > m_ingressLimit &&
        pg.headroom + size > pt.headroomLimit)
    {
        NS_LOG_LOGIC("ingress drop (headroom exhausted): port " << port << " class " << cls);
        return false;
    }
    return true;
}

bool
SwitchMmu::CheckEgressAdmission(uint32_t port, uint32_t cls, uint32_t size) const
{
    const Port& pt = m_ports[port];
    const Pg& pg = pt.pg[cls];
    const uint64_t pool = m_egressPool[EgressPool(cls)];
    if (pool + size > m_egressLimit || pt.egress + size > m_bufferSize ||
        pg.egressShared + size > m_bufferSize)
    {
        NS_LOG_LOGIC("egress drop (pool/port limit): port " << port << " class " << cls);
        return false;
    }
    const double dt = m_alphaEgress * (static_cast<double>(m_egressLimit) - static_cast<double>(pool));
    if (m_egressDt && static_cast<double>(pg.egressShared + size) > dt)
    {
        NS_LOG_LOGIC("egress drop (dynamic threshold): port " << port << " class " << cls
                                                              << " shared " << pg.egressShared);
        return false;
    }
    return true;
}

void
SwitchMmu::UpdateIngressAdmission(uint32_t port, uint32_t cls, uint32_t size)
{
    Port& pt = m_ports[port];
    Pg& pg = pt.pg[cls];
    const uint32_t pool = IngressPool(cls);
    m_total += size;
    m_ingressPool[pool] += size;
    pt.ingress += size;
    pg.ingress += size;
    if (m_ingressPool[pool] > m_ingressLimit)
    {
        pg.headroom += size;
    }
}

void
SwitchMmu::UpdateEgressAdmission(uint32_t port, uint32_t cls, uint32_t size)
{
    Port& pt = m_ports[port];
    Pg& pg = pt.pg[cls];
    const uint64_t toMin = std::min<uint64_t>(size, EGRESS_MIN - std::min(EGRESS_MIN, pg.egressMin));
    pg.egressMin += toMin;
    pg.egressShared += size - toMin;
    m_egressPool[EgressPool(cls)] += size - toMin;
    pt.egress += size;
}

void
SwitchMmu::RemoveFromIngressAdmission(uint32_t port, uint32_t cls, uint32_t size)
{
    Port& pt = m_ports[port];
    Pg& pg = pt.pg[cls];
    pg.headroom -= std::min<uint64_t>(pg.headroom, size);
    m_total -= std::min<uint64_t>(m_total, size);
    m_ingressPool[IngressPool(cls)] -= std::min<uint64_t>(m_ingressPool[IngressPool(cls)], size);
    pt.ingress -= std::min<uint64_t>(pt.ingress, size);
    pg.ingress -= std::min<uint64_t>(pg.ingress, size);
}

void
SwitchMmu::RemoveFromEgressAdmission(uint32_t port, uint32_t cls, uint32_t size)
{
    Port& pt = m_ports[port];
    Pg& pg = pt.pg[cls];
    const uint64_t fromShared = std::min<uint64_t>(pg.egressShared, size);
    pg.egressShared -= fromShared;
    m_egressPool[EgressPool(cls)] -= std::min(m_egressPool[EgressPool(cls)], fromShared);
    pg.egressMin -= std::min<uint64_t>(pg.egressMin, size - fromShared);
    pt.egress -= std::min<uint64_t>(pt.egress, size);
}

bool
SwitchMmu::ShouldPause(uint32_t port, uint32_t k, uint32_t arrivingCls) const
{
    const Port& pt = m_ports[port];
    const Pg& pg = pt.pg[k];
    if (pg.ingress <= PFC_OFFSET)
    {
        return false;
    }
    const double over = static_cast<double>(pg.ingress - PFC_OFFSET);
    const double limit = m_alphaIngress * (static_cast<double>(m_ingressLimit) -
                                           static_cast<double>(m_ingressPool[IngressPool(k)]));
    return over > limit || pt.pg[arrivingCls].headroom != 0;
}

bool
SwitchMmu::ShouldResume(uint32_t port, uint32_t k) const
{
    const Pg& pg = m_ports[port].pg[k];
    const double over = static_cast<double>(pg.ingress) - static_cast<double>(PFC_OFFSET);
    const double limit = m_alphaIngress * (static_cast<double>(m_ingressLimit) -
                                           static_cast<double>(m_ingressPool[IngressPool(k)]) - 16);
    return over < limit && pg.headroom == 0;
}

void
SwitchMmu::SetPaused(uint32_t port, uint32_t k, Time duration)
{
    m_ports[port].pg[k].pausedUntil = Simulator::Now() + duration;
}

void
SwitchMmu::ClearPaused(uint32_t port, uint32_t k)
{
    m_ports[port].pg[k].pausedUntil = Time();
}

bool
SwitchMmu::IsPaused(uint32_t port, uint32_t k) const
{
    return Simulator::Now() < m_ports[port].pg[k].pausedUntil;
}

uint64_t
SwitchMmu::GetIngressBytes(uint32_t port, uint32_t cls) const
{
    return m_ports.at(port).pg.at(cls).ingress;
}

uint64_t
SwitchMmu::GetIngressPortBytes(uint32_t port) const
{
    return m_ports.at(port).ingress;
}

uint64_t
SwitchMmu::GetHeadroomBytes(uint32_t port, uint32_t cls) const
{
    return m_ports.at(port).pg.at(cls).headroom;
}

uint64_t
SwitchMmu::GetIngressPoolBytes(uint32_t pool) const
{
    return m_ingressPool.at(pool);
}

uint64_t
SwitchMmu::GetEgressSharedBytes(uint32_t port, uint32_t cls) const
{
    return m_ports.at(port).pg.at(cls).egressShared;
}

uint64_t
SwitchMmu::GetEgressBytes(uint32_t port, uint32_t cls) const
{
    const Pg& pg = m_ports.at(port).pg.at(cls);
    return pg.egressMin + pg.egressShared;
}

uint64_t
SwitchMmu::GetEgressPoolBytes(uint32_t pool) const
{
    return m_egressPool.at(pool);
}

uint64_t
SwitchMmu::GetTotalBytes() const
{
    return m_total;
}

} // namespace ns3
