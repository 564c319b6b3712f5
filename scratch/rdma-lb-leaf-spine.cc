/*
 * rdma-lb-leaf-spine: a small leaf-spine run in which every data packet's entropy is chosen by
 * the Rust load balancer at the sender NIC and every multi-path forwarding decision is made by
 * the Rust chooser at the switch.
 *
 *   rdma-lb-leaf-spine --lb=ecmp
 *   rdma-lb-leaf-spine --lb=spray --lbParams="num_entropies = 256" --RngRun=2
 *
 * Prints one line per flow (id, src, dst, size, FCT, distinct entropies, uplinks used) and the
 * bytes each leaf-0 uplink carried. A bad --lb or --lbParams is reported on one line naming the
 * parameter, with exit status 2.
 */
#include "ns3/core-module.h"
#include "ns3/rdma-lb-module.h"

#include <iostream>
#include <map>
#include <set>

using namespace ns3;

namespace
{
struct FlowObs
{
    std::set<uint16_t> entropies;
    std::set<uint32_t> uplinks;
    uint64_t size{0};
    uint32_t src{0};
    uint32_t dst{0};
    Time fct{Seconds(-1)};
};

std::map<uint32_t, FlowObs> g_flows;
std::map<uint32_t, uint64_t> g_uplinkBytes;
std::map<std::pair<uint32_t, uint16_t>, uint32_t> g_flowOfQp;

void
OnDataSent(uint32_t flow, uint32_t /*seq*/, uint16_t entropy)
{
    g_flows[flow].entropies.insert(entropy);
}

void
OnFlowComplete(uint32_t flow, uint32_t, uint32_t, uint64_t, Time start, Time finish, uint64_t)
{
    g_flows[flow].fct = finish - start;
}

void
OnLeafForward(uint32_t hostsPerLeaf, Ptr<const Packet> p, uint32_t /*in*/, uint32_t out)
{
    RdmaHeader h;
    p->PeekHeader(h);
    if (h.type == RdmaHeader::DATA && out >= hostsPerLeaf)
    {
        g_uplinkBytes[out] += p->GetSize();
        g_flows[RdmaHostId(h.sip)].uplinks.insert(out); // flow id == source host below
    }
}
} // namespace

int
main(int argc, char* argv[])
{
    std::string lb = "ecmp";
    std::string lbParams;
    uint32_t spines = 4;
    uint32_t hostsPerLeaf = 8;
    uint64_t flowBytes = 1000000;
    CommandLine cmd;
    cmd.AddValue("lb", "load-balancing algorithm (" + [] {
        std::string s;
        for (const auto& n : LbConfig::AlgorithmNames())
        {
            s += (s.empty() ? "" : ", ") + n;
        }
        return s;
    }() + ")", lb);
    // A callback receives the whole value (a plain std::string option would stop at a space).
    cmd.AddValue("lbParams",
                 "algorithm parameters, `key = value` pairs separated by commas",
                 MakeBoundCallback(+[](std::string* dst, std::string v) {
                     *dst = v;
                     return true;
                 },
                 &lbParams));
    cmd.AddValue("spines", "number of spine switches", spines);
    cmd.AddValue("hostsPerLeaf", "hosts under each of the two leaves", hostsPerLeaf);
    cmd.AddValue("flowBytes", "size of each flow in bytes", flowBytes);
    cmd.Parse(argc, argv);

    std::string error;
    if (!LbConfig::Parse(lb, lbParams, &error))
    {
        std::cerr << "rdma-lb-leaf-spine: " << error << std::endl;
        return 2;
    }

    RdmaFabricHelper fabric;
    fabric.SetLoadBalancer(lb, lbParams);
    fabric.BuildLeafSpine(2, hostsPerLeaf, spines, DataRate("100Gbps"), DataRate("100Gbps"), MicroSeconds(1));
    fabric.Finish();
    fabric.AssignStreams(0);
    // Every host of leaf 0 sends one flow to its peer under leaf 1; flow id = source host.
    for (uint32_t h = 0; h < hostsPerLeaf; ++h)
    {
        fabric.AddFlow(h, h, hostsPerLeaf + h, flowBytes, MicroSeconds(1));
        g_flows[h].size = flowBytes;
        g_flows[h].src = h;
        g_flows[h].dst = hostsPerLeaf + h;
        fabric.GetNic(h)->TraceConnectWithoutContext("DataSent", MakeCallback(&OnDataSent));
        fabric.GetNic(h)->TraceConnectWithoutContext("FlowComplete", MakeCallback(&OnFlowComplete));
    }
    fabric.GetSwitch(2 * hostsPerLeaf)
        ->TraceConnectWithoutContext("Forward", MakeBoundCallback(&OnLeafForward, hostsPerLeaf));
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    Simulator::Destroy();

    std::cout << "algorithm " << lb << "\n";
    std::cout << "flow src dst size_bytes fct_ns entropies uplinks\n";
    int incomplete = 0;
    for (const auto& [id, f] : g_flows)
    {
        std::cout << id << " " << f.src << " " << f.dst << " " << f.size << " "
                  << (f.fct.IsNegative() ? std::string("incomplete")
                                         : std::to_string(f.fct.GetNanoSeconds()))
                  << " " << f.entropies.size() << " " << f.uplinks.size() << "\n";
        incomplete += f.fct.IsNegative() ? 1 : 0;
    }
    std::cout << "uplink bytes:";
    for (const auto& [port, bytes] : g_uplinkBytes)
    {
        std::cout << " port" << port << "=" << bytes;
    }
    std::cout << "\n";
    return incomplete == 0 ? 0 : 1;
}
