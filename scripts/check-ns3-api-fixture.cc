// The self-test fixture of scripts/check-ns3-api (`scripts/check-ns3-api --self-test`, run by
// scripts/test): never compiled. Checked for ns-3.29, every line marked `expect: RULE` must be
// flagged with RULE, and no other line; the unmarked calls are forms every tree accepts.
#include "ns3/core-module.h"
#include "ns3/rdma-lb-module.h"
#include "ns3/rdma-nic.h"
#include "ns3/show-progress.h" // expect: ns3-header
#include "ns3/attribute-container.h" // expect: ns3-header
#include <ns3/internet-module.h> // expect: ns3-header
#include "ns3/sgi-hashmap.h" // expect: ns3-header
#ifdef NS3_MPI
#include "ns3/mpi-interface.h"
#ifndef RDMA_LB_NOTHING
#include "ns3/mpi-receiver.h"
#endif
#else
#include "ns3/mpi-interface.h" // expect: ns3-header
#endif
#if defined(NS3_MPI)
#include "ns3/mpi-receiver.h"
#endif

#include <functional>

using namespace ns3;

struct Probe
{
    void Tick(int n);
    static void Free(Probe* p, int n);
};

void
Planted(Probe& probe, Ptr<NetDevice> dev, Time t)
{
    int count = 0;
    // Accepted: member functions, function pointers, captureless lambdas made function pointers.
    Simulator::Schedule(t, &Probe::Tick, &probe, 3);
    Simulator::Schedule(t, &Probe::Free, &probe, 3);
    Simulator::ScheduleNow(+[](int* c) { ++*c; }, &count);
    Simulator::ScheduleWithContext(1, t, +[](Ptr<NetDevice> d) { d->GetIfIndex(); }, dev);
    const auto fp = +[](int* c) { ++*c; };
    Simulator::Schedule(t, fp, &count);
    // "[&]" inside a comment or a string is no lambda: Simulator::Schedule(t, [&]() {});
    const char* s = "Simulator::Schedule(t, [&]() {});";
    dev->TraceConnectWithoutContext("PhyTxEnd", MakeBoundCallback(+[](int* c, Ptr<const Packet>) { ++*c; }, &count));

    // Flagged.
    Simulator::Schedule(t, [&]() { probe.Tick(1); }); // expect: schedule-callable
    Simulator::Schedule(t, [&count]() { ++count; }); // expect: schedule-callable
    Simulator::Schedule(t,
                        [dev]() { dev->GetIfIndex(); }); // expect: schedule-callable
    Simulator::ScheduleNow([&probe] { probe.Tick(2); }); // expect: schedule-callable
    Simulator::ScheduleWithContext(2, t, [=]() { probe.Tick(3); }); // expect: schedule-callable
    Simulator::ScheduleDestroy([&]() { count = 0; }); // expect: schedule-callable
    Simulator::Schedule(t, [](int* c) { ++*c; }, &count); // expect: schedule-callable
    ns3::Simulator::Schedule(t, std::bind(&Probe::Tick, &probe, 4)); // expect: schedule-callable
    Simulator::Schedule(t, std::function<void()>([&] { ++count; })); // expect: schedule-callable
    auto later = [&probe]() { probe.Tick(5); };
    Simulator::Schedule(t, later); // expect: schedule-callable
    std::function<void()> job = std::bind(&Probe::Tick, &probe, 6);
    Simulator::ScheduleNow(job); // expect: schedule-callable
    EventImpl* ev = MakeEvent([&]() { ++count; }); // expect: schedule-callable
    dev->TraceConnectWithoutContext("PhyTxEnd", [&](Ptr<const Packet>) { ++count; }); // expect: callback-callable
    Callback<void, int> cb = [&](int n) { count += n; }; // expect: callback-callable
    Callback<void, int> cb2([&probe](int n) { probe.Tick(n); }); // expect: callback-callable
    dev->SetReceiveCallback(std::bind(&Probe::Tick, &probe, 7)); // expect: callback-callable
    MakeBoundCallback(&Probe::Free, &probe, 1, 2, 3); // expect: bound-callback
    MakeCallback(&Probe::Tick, &probe, 8); // expect: bound-callback
    TracedCallback<int, int, int, int, int, int, int, int, int> nine; // expect: traced-callback
    TracedCallback<int, int, int, int, int, int, int, int> eight;
    uint64_t events = Simulator::GetEventCount(); // expect: event-count
    CommandLine cmd(__FILE__); // expect: command-line-file
    CommandLine plain;
    std::vector<Scheduler::Event> heap;
    std::push_heap(heap.begin(), heap.end(), std::greater<Scheduler::Event>()); // expect: event-greater
    std::push_heap(heap.begin(), heap.end(), [](const Scheduler::Event& a, const Scheduler::Event& b) { return b < a; });
}
