/*
 * rdma-lb-bridge-bench: cost of one load-balancing decision called from C++ through the cxx
 * bridge, exactly as the NIC and switch models call it (QpPathSelector / SwitchEgressChooser).
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
    // Switch side: every algorithm's egress choice among 8 equal-cost uplinks (host-side
    // algorithms leave the switches on the ECMP hash), then Themis' two ToR hooks.
    std::vector<LbEgressCandidate> cands;
    for (uint32_t p = 0; p < 8; ++p)
    {
        cands.push_back({p, 1048ULL * p, 0});
    }
    auto dataPkt = [](int i) {
        LbPacketInfo pkt;
        pkt.sip = 0x0b000001 + static_cast<uint32_t>(i % 16);
        pkt.dip = 0x0b000101;
        pkt.sport = static_cast<uint16_t>(i % 64);
        pkt.dport = 100;
        pkt.psn = static_cast<uint32_t>(i);
        pkt.ingressPort = 8;
        pkt.sizeBytes = 1048;
        return pkt;
    };
    std::printf("\n%-14s %16s\n", "algorithm", "switch Choose ns");
    for (const std::string& name : LbConfig::AlgorithmNames())
    {
        Ptr<LbConfig> cfg = LbConfig::ParseOrAbort(name, "");
        auto chooser = cfg->CreateSwitchChooser(3, 1);
        double choose = MedianNsPerCall([&](int i) {
            sink = sink + chooser->Choose(now[i % WINDOW], dataPkt(i), cands);
        });
        std::printf("%-14s %16.1f\n", name.c_str(), choose);
    }
    // Themis-D at a destination ToR: data to host port 0 in order (no compensation due), and
    // reordering NACKs from that host (found in the PSN queue and blocked).
    Ptr<LbConfig> themis = LbConfig::ParseOrAbort("themis", "");
    auto tor = themis->CreateSwitchChooser(3, 1);
    tor->AddHostPort(0, 100000000000ULL, MicroSeconds(1));
    LbCompensation comp;
    double toHost = MedianNsPerCall([&](int i) {
        LbPacketInfo pkt = dataPkt(i);
        pkt.dip = 0x0b000001;
        sink = sink + (tor->OnDataToHost(now[i % WINDOW], pkt, 0, &comp) ? 1 : 0);
    });
    double nack = MedianNsPerCall([&](int i) {
        LbPacketInfo pkt = dataPkt(i);
        pkt.kind = LbPacketKind::NACK;
        std::swap(pkt.sip, pkt.dip);
        pkt.ingressPort = 0;
        sink = sink + (tor->OnNackFromHost(now[i % WINDOW], pkt, 8) ? 1 : 0);
    });
    std::printf("themis ToR OnDataToHost: %.1f ns, OnNackFromHost: %.1f ns\n", toHost, nack);
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
