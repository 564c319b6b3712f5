/*
 * rdma-lb: helpers shared by the module's test suites.
 */
#ifndef RDMA_LB_TEST_UTIL_H
#define RDMA_LB_TEST_UTIL_H

#include "ns3/error-model.h"
#include "ns3/packet.h"
#include "ns3/rdma-fabric-helper.h"
#include "ns3/rdma-header.h"
#include "ns3/rdma-scenario.h"
#include "ns3/rdma-switch.h"
#include "ns3/test.h"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{
namespace rdmalbtest
{

/// Sets attribute \p name of every host NIC.
inline void
SetNics(RdmaFabricHelper& f, const std::string& name, const AttributeValue& v)
{
    for (uint32_t h : f.GetHosts())
    {
        f.GetNic(h)->SetAttribute(name, v);
    }
}

/**
 * Sets attribute \p name = \p v on \p nic's factory (attribute LossRecovery or
 * CongestionControl) whose type is \p typeId or derived from it (e.g. ("ns3::RdmaRoceRecovery",
 * "NackInterval") on a NIC running Go-Back-N, IRN or NIC-SR). Choose the component first: a
 * new factory has only its defaults. A NIC with no such component is a fatal error.
 */
inline void
SetComponent(Ptr<RdmaNic> nic,
             const std::string& typeId,
             const std::string& name,
             const AttributeValue& v)
{
    TypeId owner;
    if (!TypeId::LookupByNameFailSafe(typeId, &owner))
    {
        NS_FATAL_ERROR("no TypeId " << typeId);
    }
    for (const char* attribute : {"LossRecovery", "CongestionControl"})
    {
        ObjectFactoryValue value;
        nic->GetAttribute(attribute, value);
        ObjectFactory factory = value.Get();
        if (factory.GetTypeId() == owner || factory.GetTypeId().IsChildOf(owner))
        {
            factory.Set(name, v);
            nic->SetAttribute(attribute, ObjectFactoryValue(factory));
            return;
        }
    }
    NS_FATAL_ERROR("the NIC has no component of type " << typeId);
}

/// Puts scenario \p s on the uet transport, without congestion control (its window is the uet
/// transport's own), as a config with `kind = "uet"` and `cc = "none"` does.
inline void
UseUet(RdmaScenarioSpec& s)
{
    RdmaTransportSetting& recovery = s.transport.Get("ns3::RdmaNic", "LossRecovery");
    recovery.text = "ns3::RdmaUetRecovery";
    RdmaTransportSetting& cc = s.transport.Get("ns3::RdmaNic", "CongestionControl");
    cc.text = "ns3::RdmaCongestionControl";
    cc.summaryText = "none";
}

/// SetComponent on every host NIC.
inline void
SetNicComponents(RdmaFabricHelper& f,
                 const std::string& typeId,
                 const std::string& name,
                 const AttributeValue& v)
{
    for (uint32_t h : f.GetHosts())
    {
        SetComponent(f.GetNic(h), typeId, name, v);
    }
}

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

/// Themis counters of one ToR, read from its load balancer's counters (themis_*).
struct ThemisCounters
{
    bool enabled{false};        //!< the switch runs Themis
    uint64_t sprayedPkts{0};    //!< data packets sprayed by Themis-S
    uint64_t dataObserved{0};   //!< data packets to hosts recorded in a PSN queue
    uint64_t nacksSeen{0};      //!< NACKs from hosts seen
    uint64_t nacksBlocked{0};   //!< NACKs blocked as invalid
    uint64_t nacksForwarded{0}; //!< NACKs forwarded
    uint64_t nacksUnresolved{0}; //!< forwarded NACKs whose trigger was not in the queue
    uint64_t compensations{0};  //!< compensation NACKs generated
    uint64_t cancellations{0};  //!< pending compensations cancelled by the BePSN packet
    uint64_t alreadyPassed{0};  //!< blocked NACKs whose ePSN packet had already passed
    uint64_t ringOverwrites{0}; //!< PSN-queue entries overwritten before use
    uint64_t flows{0};          //!< queue pairs in the flow table
    bool ecmpFallback{false};   //!< reverted to ECMP after a link failure
};

/// \return the Themis counters of switch \p sw (enabled false for other algorithms)
inline ThemisCounters
GetThemisCounters(Ptr<RdmaSwitch> sw)
{
    ThemisCounters out;
    const std::map<std::string, uint64_t*> fields{
        {"themis_sprayed_pkts", &out.sprayedPkts},
        {"themis_data_observed", &out.dataObserved},
        {"themis_nacks_seen", &out.nacksSeen},
        {"themis_nacks_blocked", &out.nacksBlocked},
        {"themis_nacks_forwarded", &out.nacksForwarded},
        {"themis_nacks_unresolved", &out.nacksUnresolved},
        {"themis_compensations", &out.compensations},
        {"themis_cancellations", &out.cancellations},
        {"themis_already_passed", &out.alreadyPassed},
        {"themis_ring_overwrites", &out.ringOverwrites},
        {"themis_flows", &out.flows},
    };
    for (const auto& [name, value] : sw->GetLbCounters())
    {
        auto it = fields.find(name);
        if (it != fields.end())
        {
            *it->second = value;
            out.enabled = true;
        }
        else if (name == "themis_ecmp_fallback")
        {
            out.ecmpFallback = value != 0;
        }
    }
    return out;
}

/// Leaf-spine as ConWeave's topology files lay it out: hosts 0..L*H-1 (H per leaf), then the
/// leaves, then the spines; host links first, then the leaf x spine mesh.
inline RdmaScenarioSpec
LeafSpineSpec(uint32_t leaves, uint32_t hostsPerLeaf, uint32_t spines, uint64_t rateBps, uint64_t delayNs)
{
    RdmaScenarioSpec s;
    s.name = "test";
    s.lb = LbConfig::ParseOrAbort("ecmp", "");
    const uint32_t hosts = leaves * hostsPerLeaf;
    s.nodeCount = hosts + leaves + spines;
    for (uint32_t i = hosts; i < s.nodeCount; ++i)
    {
        s.switchIds.push_back(i);
    }
    for (uint32_t h = 0; h < hosts; ++h)
    {
        s.links.push_back({h, hosts + h / hostsPerLeaf, rateBps, delayNs, 0.0});
    }
    for (uint32_t l = 0; l < leaves; ++l)
    {
        for (uint32_t p = 0; p < spines; ++p)
        {
            s.links.push_back({hosts + l, hosts + leaves + p, rateBps, delayNs, 0.0});
        }
    }
    return s;
}

inline uint32_t
AddSpecFlow(RdmaScenarioSpec& s, uint32_t src, uint32_t dst, uint64_t size, uint64_t startNs,
        std::vector<uint32_t> after = {})
{
    RdmaScenarioFlow f;
    f.id = static_cast<uint32_t>(s.flows.size());
    f.src = src;
    f.dst = dst;
    f.sizeBytes = size;
    f.startNs = startNs;
    f.after = std::move(after);
    s.flows.push_back(f);
    return f.id;
}

/**
 * A test suite whose cases can be narrowed from the environment: with \p envVar set to some
 * text, only the cases whose name contains it are added (ns-3's runner stops a suite at its
 * first failing case, so this is how one reaches the later ones).
 */
class FilteredTestSuite : public TestSuite
{
  public:
    FilteredTestSuite(const std::string& name, const char* envVar)
        : TestSuite(name, UNIT),
          m_envVar(envVar)
    {
    }

    /// Adds \p tc unless the filter excludes it (then it is deleted).
    void AddTestCase(TestCase* tc, TestCase::TestDuration d)
    {
        const char* only = std::getenv(m_envVar);
        if (only != nullptr && tc->GetName().find(only) == std::string::npos)
        {
            delete tc;
            return;
        }
        TestSuite::AddTestCase(tc, d);
    }

  private:
    const char* m_envVar;
};

} // namespace rdmalbtest
} // namespace ns3

#endif /* RDMA_LB_TEST_UTIL_H */
