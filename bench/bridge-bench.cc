/*
 * rdma-lb-bridge-bench: cost of one load-balancing decision called from C++ through the cxx
 * bridge, exactly as the NIC and switch models call it (QpPathSelector / SwitchLbAgent).
 * A benchmark, not a test: it prints the median over 11 repetitions of 200,000 calls each.
 *
 *   build/rdma-lb-bridge-bench
 */
#include "ns3/rdma-lb-bridge.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{
constexpr int REPS = 11;
constexpr int CALLS = 200000;

template <typename F>
double
MedianNsPerCall(F&& body)
{
    std::vector<double> per;
    for (int r = 0; r < REPS; ++r)
    {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < CALLS; ++i)
        {
            body(i);
        }
        auto t1 = std::chrono::steady_clock::now();
        per.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / CALLS);
    }
    std::sort(per.begin(), per.end());
    return per[REPS / 2];
}
} // namespace

/// The measurements, run inside a simulation event: before Simulator::Run, ns-3 still records
/// every Time object for a possible resolution change, which makes Time copies far dearer
/// than during a simulation.
void
RunBench(int* status)
{
    volatile uint32_t sink = 0;
    // Times are made once: constructing an ns-3 Time costs more than a decision (the NIC and
    // switch models pass Simulator::Now(), which is already a Time).
    constexpr int WINDOW = 4096;
    std::vector<Time> now;
    for (int i = 0; i < WINDOW; ++i)
    {
        now.push_back(NanoSeconds(i * 100));
    }
    const Time rtt = NanoSeconds(8320);
    std::printf("%-14s %16s %16s\n", "algorithm", "NextEntropy ns", "OnFeedback ns");
    for (const std::string& name : LbConfig::AlgorithmNames())
    {
        Ptr<LbConfig> cfg = LbConfig::ParseOrAbort(name, "");
        auto sel = cfg->CreateQpSelector(1);
        double next = MedianNsPerCall([&](int i) {
            LbSendContext cx;
            cx.now = now[i % WINDOW];
            cx.psn = static_cast<uint32_t>(i);
            cx.inflightPkts = 8;
            sink = sink + sel->NextEntropy(cx);
        });
        double fb = MedianNsPerCall([&](int i) {
            LbFeedback f;
            f.kind = LbFeedbackKind::ACK;
            f.now = now[i % WINDOW];
            f.entropy = static_cast<uint16_t>(i % 256);
            f.psn = static_cast<uint32_t>(i);
            f.rtt = rtt;
            f.hasRtt = true;
            f.ecn = (i % 16) == 0;
            sel->OnFeedback(f);
        });
        std::printf("%-14s %16.1f %16.1f\n", name.c_str(), next, fb);
    }
    // Switch side: every algorithm's verdict at a source ToR (switch 3: hosts on ports 0-7,
    // uplinks 8-15; the destination hosts hang off ToR 4, reached over 8 two-hop paths), for
    // data leaving a host (host-side algorithms leave the switches on the ECMP hash), then
    // Themis' two ToR hooks.
    std::vector<LbEgressCandidate> cands;
    for (uint32_t p = 8; p < 16; ++p)
    {
        cands.push_back({p, 1048ULL * p, 0});
    }
    auto setupTor = [](SwitchLbAgent& a) {
        for (uint32_t p = 0; p < 16; ++p)
        {
            a.AddPort(p, 100000000000ULL, MicroSeconds(1), p < 8);
        }
        for (uint32_t h = 0; h < 16; ++h)
        {
            a.AddHost(0x0b000001 + (h << 8), h < 8 ? 3 : 4);
        }
        for (uint32_t p = 8; p < 16; ++p)
        {
            a.AddPath(4, (p + 1) | (1u << 8), 2);
        }
    };
    auto dataPkt = [](int i) {
        LbPacketInfo pkt;
        pkt.sip = 0x0b000001 + static_cast<uint32_t>(i % 16);
        pkt.dip = 0x0b000901;
        pkt.sport = static_cast<uint16_t>(i % 64);
        pkt.dport = 100;
        pkt.psn = static_cast<uint32_t>(i);
        pkt.ingressPort = static_cast<uint32_t>(i % 8);
        pkt.sizeBytes = 1048;
        pkt.pg = 3;
        return pkt;
    };
    std::printf("\n%-14s %16s\n", "algorithm", "switch OnIngress ns");
    for (const std::string& name : LbConfig::AlgorithmNames())
    {
        Ptr<LbConfig> cfg = LbConfig::ParseOrAbort(name, "");
        auto agent = cfg->CreateSwitchAgent(3, 1);
        setupTor(*agent);
        LbTagData tag;
        double ingress = MedianNsPerCall([&](int i) {
            tag = LbTagData{};
            sink = sink + agent->OnIngress(now[i % WINDOW], dataPkt(i), &tag, cands).index;
        });
        std::printf("%-14s %16.1f\n", name.c_str(), ingress);
    }
    // Themis-D at a destination ToR: data to host port 0 in order (no compensation due), and
    // reordering NACKs from that host (found in the PSN queue and blocked).
    Ptr<LbConfig> themis = LbConfig::ParseOrAbort("themis", "");
    auto tor = themis->CreateSwitchAgent(3, 1);
    setupTor(*tor);
    LbControlPacket comp;
    const LbTagData noTag;
    double toHost = MedianNsPerCall([&](int i) {
        LbPacketInfo pkt = dataPkt(i);
        std::swap(pkt.sip, pkt.dip);
        pkt.ingressPort = 8;
        tor->OnEgress(now[i % WINDOW], pkt, noTag, 0);
        sink = sink + (tor->PollTransmit(now[i % WINDOW], &comp) ? 1 : 0);
    });
    double nack = MedianNsPerCall([&](int i) {
        LbPacketInfo pkt = dataPkt(i);
        pkt.kind = LbPacketKind::NACK;
        pkt.ingressPort = 0;
        LbTagData tag;
        sink = sink + static_cast<uint32_t>(tor->OnIngress(now[i % WINDOW], pkt, &tag, cands).kind);
    });
    std::printf("themis ToR OnEgress+PollTransmit: %.1f ns, OnIngress(NACK): %.1f ns\n",
                toHost,
                nack);
    *status = sink == 0xFFFFFFFF ? 1 : 0;
}

int
main()
{
    int status = 0;
    Simulator::Schedule(Seconds(0), &RunBench, &status);
    Simulator::Run();
    Simulator::Destroy();
    return status;
}
