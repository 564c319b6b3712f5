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
    Ptr<LbConfig> cfg = LbConfig::ParseOrAbort("ecmp", "");
    auto chooser = cfg->CreateSwitchChooser(3, 1);
    std::vector<LbEgressCandidate> cands;
    for (uint32_t p = 0; p < 8; ++p)
    {
        cands.push_back({p, 0, 0});
    }
    double choose = MedianNsPerCall([&](int i) {
        LbPacketInfo pkt;
        pkt.sip = 0x0b000001;
        pkt.dip = 0x0b000101;
        pkt.sport = static_cast<uint16_t>(i);
        pkt.dport = 100;
        pkt.sizeBytes = 1048;
        sink = sink + chooser->Choose(now[i % WINDOW], pkt, cands);
    });
    std::printf("switch ecmp choose among 8: %.1f ns\n", choose);
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
