/*
 * rdma-lb: the data structures of the per-packet path.
 *
 * The port queues' and links' FIFO (model/rdma-fifo.h) hands out what a std::deque would, in
 * the same order, across wrap-arounds and growth, and releases a packet when it is popped.
 *
 * A frame (model/rdma-frame.h) carries exactly what the wire would: its header equals the one a
 * receiver decodes from the serialised bytes, for every packet type and INT mode; its size is
 * the packet's; the packet it makes for a trace sink has the frame's current header, one packet
 * hop after hop, and a packet a sink kept is never changed afterwards; no packet is made while
 * no sink is connected.
 *
 * The timing-wheel scheduler (model/rdma-wheel-scheduler.h) runs events in exactly
 * ns-3's order. The same randomly grown event workload runs under ns3::PriorityQueueScheduler
 * and under RdmaWheelScheduler (default ring and a 64-slot ring, so that most events go
 * through the later heap); the sequences of (event, time) must be equal. The workload has
 * many events per timestamp (delays on a 10 ns grid), zero-delay events scheduled while their
 * timestamp is being drained, events within and beyond the ring's span, cancels and removes.
 *
 * Partition-invariant ties (RdmaWheelScheduler::PartitionInvariantTies): two nodes each schedule
 * an event for a third at the same time, the later-inserted from the node of smaller id; ns-3's
 * order runs them in insertion order, the option by (time scheduled, node, count). An event
 * given a key (SetNextTieKey, as a packet from another rank is) takes that key's place; an event
 * of the registered remote-arrival type runs first in its timestamp. On a random workload over 8
 * nodes (zero-delay events while their time step drains, events in and beyond the ring's span,
 * cancels and removes) each event that runs is, of those pending, the first in (time, key), and
 * each live one runs exactly once; an earlier event inserted after PeekNext still comes first.
 *
 * The records between MPI ranks (model/rdma-remote-codec.h): random records of every kind, many
 * to one buffer as one batch, read back field for field in their order, and nothing after the
 * last; a frame alone (ns-3's per-frame message body) likewise.
 */
#include "ns3/boolean.h"
#include "ns3/packet.h"
#include "ns3/rdma-fifo.h"
#include "ns3/rdma-frame.h"
#include "ns3/rdma-remote-codec.h"
#include "ns3/rdma-wheel-scheduler.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <typeinfo>
#include <utility>
#include <vector>

namespace ns3
{
namespace
{

/// Knuth's MMIX LCG: the workloads' random source.
struct Lcg
{
    uint64_t state;

    uint64_t Next()
    {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return state >> 33;
    }
};

/// How many events a workload event schedules: 0-3, 1 and 2 the likeliest.
uint32_t
Children(Lcg& rng)
{
    const uint64_t r = rng.Next() % 100;
    return r < 45 ? 1 : (r < 75 ? 2 : (r < 90 ? 0 : 3));
}

/// A scheduled event's delay: zero (its time step, still draining) in \p zeroTenths tenths of
/// the draws, else within 2 us, around the ring's 4,096 ns span, or far (beyond it).
Time
ChildDelay(Lcg& rng, uint64_t zeroTenths)
{
    const uint64_t kind = rng.Next() % 10;
    if (kind < zeroTenths)
    {
        return Time(0);
    }
    return kind < 7 ? NanoSeconds(10 * (rng.Next() % 200))
           : kind < 9 ? NanoSeconds(10 * (rng.Next() % 1000))
                      : MicroSeconds(10 * (1 + rng.Next() % 400));
}

/// A deterministic workload: every event logs itself and schedules, cancels or removes others.
class Workload
{
  public:
    std::vector<std::pair<uint32_t, int64_t>> log; //!< (event id, time in ns) as run

    void Run(const ObjectFactory& scheduler)
    {
        Simulator::SetScheduler(scheduler);
        for (uint32_t i = 0; i < 200; ++i)
        {
            Spawn(NanoSeconds(10 * (Next() % 300)));
        }
        Simulator::Run();
        m_events = Simulator::GetEventCount();
        Simulator::Destroy();
    }

    uint64_t Events() const
    {
        return m_events;
    }

  private:
    uint64_t Next()
    {
        return m_rng.Next();
    }

    void Spawn(Time delay)
    {
        if (m_nextId >= 60000)
        {
            return;
        }
        m_pending.push_back(Simulator::Schedule(delay, &Workload::Fire, this, m_nextId++));
    }

    void Fire(uint32_t id)
    {
        log.emplace_back(id, Simulator::Now().GetNanoSeconds());
        for (uint32_t c = Children(m_rng); c > 0; --c)
        {
            Spawn(ChildDelay(m_rng, 2));
        }
        if (!m_pending.empty() && Next() % 20 == 0)
        {
            m_pending[Next() % m_pending.size()].Cancel();
        }
        if (!m_pending.empty() && Next() % 50 == 0)
        {
            Simulator::Remove(m_pending[Next() % m_pending.size()]);
        }
    }

    Lcg m_rng{42};
    uint32_t m_nextId = 0;
    uint64_t m_events = 0;
    std::vector<EventId> m_pending;
};

class WheelOrderTestCase : public TestCase
{
  public:
    WheelOrderTestCase()
        : TestCase("timing wheel: same events, same order as the priority-queue scheduler")
    {
    }

  private:
    void DoRun() override
    {
        ObjectFactory heap("ns3::PriorityQueueScheduler");
        Workload expected;
        expected.Run(heap);
        uint64_t ties = 0;
        for (size_t i = 1; i < expected.log.size(); ++i)
        {
            ties += expected.log[i].second == expected.log[i - 1].second;
        }
        // The workload must exercise what the order depends on: thousands of events, most of
        // them sharing their timestamp with another.
        NS_TEST_ASSERT_MSG_GT(expected.log.size(), 50000U, "workload too small");
        NS_TEST_ASSERT_MSG_GT(ties, expected.log.size() / 4, "too few same-time events");
        for (uint32_t slots : {4096U, 64U})
        {
            ObjectFactory wheel("ns3::RdmaWheelScheduler");
            wheel.Set("Slots", UintegerValue(slots));
            Workload got;
            got.Run(wheel);
            NS_TEST_ASSERT_MSG_EQ(got.Events(), expected.Events(), "event count, slots " << slots);
            NS_TEST_ASSERT_MSG_EQ(got.log.size(), expected.log.size(), "events run, slots " << slots);
            size_t firstDiff = 0;
            while (firstDiff < got.log.size() && got.log[firstDiff] == expected.log[firstDiff])
            {
                ++firstDiff;
            }
            NS_TEST_ASSERT_MSG_EQ(firstDiff, expected.log.size(), "first different event, slots " << slots);
        }
    }
};

/**
 * A random workload over 8 nodes (contexts) for the partition-invariant order. Each event's key
 * is noted as the order defines it, (time scheduled, scheduling node, that node's count), and
 * kept with its time in a model of the pending events (an ordered set); an event that runs must
 * be the model's first: of the events pending at its time, the one of smallest key (an event
 * scheduled while its time step drains may have a smaller key than one already run: causality
 * first). Events schedule others on random nodes with zero, short, ring-span and far delays,
 * cancel and remove pending ones.
 */
class KeyedWorkload
{
  public:
    uint32_t ran = 0;          //!< events run
    uint32_t outOfOrder = 0;   //!< events run that were not the model's first (must stay 0)
    uint32_t firstBad = 0;     //!< the run index of the first of them
    uint32_t sameTime = 0;     //!< events run at the time of the event before
    uint32_t spawned = 0;      //!< events scheduled
    uint32_t dropped = 0;      //!< cancelled or removed before they ran

    void Run(uint32_t slots)
    {
        ObjectFactory f("ns3::RdmaWheelScheduler");
        f.Set("Slots", UintegerValue(slots));
        f.Set("PartitionInvariantTies", BooleanValue(true));
        Simulator::SetScheduler(f);
        for (uint32_t i = 0; i < 200; ++i)
        {
            Spawn(NanoSeconds(10 * (Next() % 300)));
        }
        Simulator::Run();
        Simulator::Destroy();
    }

    /// \return whether the model holds no event (everything scheduled ran or was dropped)
    bool Drained() const
    {
        return m_model.empty();
    }

  private:
    /// (time, time scheduled, scheduling context, its count, event number)
    using Entry = std::tuple<int64_t, uint64_t, uint32_t, uint64_t, uint32_t>;

    struct Pending
    {
        EventId id;
        uint32_t n; //!< event number
    };

    uint64_t Next()
    {
        return m_rng.Next();
    }

    void Spawn(Time delay)
    {
        if (spawned >= 40000)
        {
            return;
        }
        const uint32_t ctx = Simulator::GetContext();
        const uint32_t n = spawned++;
        m_entries.emplace_back((Simulator::Now() + delay).GetTimeStep(),
                               static_cast<uint64_t>(Simulator::Now().GetTimeStep()),
                               ctx,
                               m_count[ctx]++,
                               n);
        m_model.insert(m_entries.back());
        if (ctx == Simulator::NO_CONTEXT || Next() % 2 == 0)
        {
            // On a random node; ns-3 gives no EventId for these, so they are never cancelled.
            Simulator::ScheduleWithContext(Next() % 8, delay, &KeyedWorkload::Fire, this, n);
            return;
        }
        // On this node, cancellable.
        m_pending.push_back(Pending{Simulator::Schedule(delay, &KeyedWorkload::Fire, this, n), n});
    }

    void Fire(uint32_t n)
    {
        if (*m_model.begin() != m_entries[n] && outOfOrder++ == 0)
        {
            firstBad = ran;
        }
        m_model.erase(m_entries[n]);
        sameTime += ran > 0 && Simulator::Now().GetTimeStep() == m_lastTs;
        m_lastTs = Simulator::Now().GetTimeStep();
        ++ran;
        for (uint32_t c = Children(m_rng); c > 0; --c)
        {
            Spawn(ChildDelay(m_rng, 3));
        }
        if (!m_pending.empty() && Next() % 20 == 0)
        {
            Pending& p = m_pending[Next() % m_pending.size()];
            dropped += m_model.erase(m_entries[p.n]);
            p.id.Cancel();
        }
        if (!m_pending.empty() && Next() % 50 == 0)
        {
            Pending& p = m_pending[Next() % m_pending.size()];
            if (m_model.erase(m_entries[p.n]) == 1)
            {
                ++dropped;
                Simulator::Remove(p.id);
            }
        }
    }

    Lcg m_rng{7};
    int64_t m_lastTs = 0;
    std::map<uint32_t, uint64_t> m_count; //!< events scheduled per context (NO_CONTEXT too)
    std::vector<Entry> m_entries;         //!< by event number
    std::set<Entry> m_model;              //!< the pending events, in the order's order
    std::vector<Pending> m_pending;
};

class InvariantOrderTestCase : public TestCase
{
  public:
    InvariantOrderTestCase()
        : TestCase("timing wheel: partition-invariant order on a random workload (ring, later "
                   "heap, the current step's heap)")
    {
    }

  private:
    void DoRun() override
    {
        for (uint32_t slots : {4096U, 64U})
        {
            KeyedWorkload w;
            w.Run(slots);
            NS_TEST_ASSERT_MSG_GT(w.ran, 30000U, "workload too small, slots " << slots);
            NS_TEST_ASSERT_MSG_GT(w.sameTime, w.ran / 4, "too few same-time events");
            NS_TEST_ASSERT_MSG_EQ(w.outOfOrder, 0U, "events run out of key order, the first the "
                                                        << w.firstBad << "th; slots " << slots);
            NS_TEST_ASSERT_MSG_EQ(w.ran + w.dropped, w.spawned, "events run + dropped, slots " << slots);
            NS_TEST_ASSERT_MSG_EQ(w.Drained(), true, "an event never ran, slots " << slots);
        }
    }
};

/// Does nothing (the events of PeekThenEarlierTestCase are never run).
void
Nothing()
{
}

/**
 * The scheduler alone, in the partition-invariant mode: PeekNext moves the earliest time step's
 * events aside (into its heap of one step); an event inserted afterwards for an earlier time (as
 * a packet from another MPI rank may be, between this rank's peek at its next event and that
 * event) must still come out first: from within the ring's span and after a jump beyond it.
 */
class PeekThenEarlierTestCase : public TestCase
{
  public:
    PeekThenEarlierTestCase()
        : TestCase("timing wheel: an earlier event inserted after PeekNext comes out first "
                   "(partition-invariant mode)")
    {
    }

  private:
    void DoRun() override
    {
        EventImpl* impl = MakeEvent(&Nothing);
        uint32_t uid = 0;
        auto event = [&](uint64_t ts) {
            Scheduler::Event e;
            e.impl = impl;
            e.key.m_ts = ts;
            e.key.m_uid = uid++;
            e.key.m_context = 0;
            return e;
        };
        // (inserted timestamps, the one inserted after the peek)
        const std::vector<std::pair<std::vector<uint64_t>, uint64_t>> cases{
            {{100, 100, 300}, 50},          // within the span: the step at 100 waits again
            {{1000000, 1000000, 2000000}, 70}, // beyond it: the jump to 1 ms is undone
            {{100, 100}, 100},              // the same step: joins it
        };
        for (const auto& c : cases)
        {
            ObjectFactory f("ns3::RdmaWheelScheduler");
            f.Set("PartitionInvariantTies", BooleanValue(true));
            Ptr<Scheduler> s = f.Create<Scheduler>();
            for (uint64_t ts : c.first)
            {
                s->Insert(event(ts));
            }
            NS_TEST_ASSERT_MSG_EQ(s->PeekNext().key.m_ts, c.first.front(), "peek");
            s->Insert(event(c.second));
            std::vector<uint64_t> expected = c.first;
            expected.push_back(c.second);
            std::sort(expected.begin(), expected.end());
            for (uint64_t ts : expected)
            {
                NS_TEST_ASSERT_MSG_EQ(s->PeekNext().key.m_ts, ts, "peek in order, late " << c.second);
                NS_TEST_ASSERT_MSG_EQ(s->RemoveNext().key.m_ts, ts, "removed in order, late " << c.second);
            }
            NS_TEST_ASSERT_MSG_EQ(s->IsEmpty(), true, "empty");
        }
        impl->Unref();
    }
};

/// Logs which event ran; schedules events on other nodes (contexts) as a node would.
class TieProbe
{
  public:
    std::vector<std::string> log; //!< names, as run

    void Note(std::string name)
    {
        log.push_back(name);
    }

    /// At the current time, on the current node: \p name on node 1 at 30 ns.
    void SendTo1(std::string name)
    {
        Simulator::ScheduleWithContext(1, NanoSeconds(30) - Simulator::Now(), &TieProbe::Note, this, name);
    }

    /// As SendTo1, but with the key of an event scheduled at 5 ns by node 9 (count 0).
    void SendTo1Keyed(std::string name)
    {
        RdmaWheelScheduler::TieKey k;
        k.schedTs = 5;
        k.schedCtx = 9;
        k.seq = 0;
        RdmaWheelScheduler::SetNextTieKey(k);
        SendTo1(name);
    }

    /// The stand-in for ns-3's MpiReceiver::Receive: its event type (which is what the
    /// scheduler recognises: the member function's signature and argument types, not which
    /// member) must differ from Note's.
    void Remote(std::string name, int)
    {
        log.push_back(name);
    }

    /// Runs the scenario under \p invariant ties, \return the log
    std::vector<std::string> Run(bool invariant)
    {
        ObjectFactory f("ns3::RdmaWheelScheduler");
        f.Set("PartitionInvariantTies", BooleanValue(invariant));
        Simulator::SetScheduler(f);
        // Node 7's event is inserted first, node 2's second; both run at 10 ns.
        Simulator::ScheduleWithContext(7, NanoSeconds(10), &TieProbe::SendTo1, this, std::string("from7"));
        Simulator::ScheduleWithContext(2, NanoSeconds(10), &TieProbe::SendTo1, this, std::string("from2"));
        // At 20 ns node 4 schedules one keyed as if node 9 had at 5 ns: before both.
        Simulator::ScheduleWithContext(4, NanoSeconds(20), &TieProbe::SendTo1Keyed, this, std::string("keyed"));
        // Inserted last, at set-up, for 30 ns: a remote-arrival event runs first at 30 ns.
        Simulator::ScheduleWithContext(1, NanoSeconds(30), &TieProbe::Remote, this, std::string("remote"), 0);
        Simulator::Run();
        Simulator::Destroy();
        std::vector<std::string> out = log;
        log.clear();
        return out;
    }
};

class TieOrderTestCase : public TestCase
{
  public:
    TieOrderTestCase()
        : TestCase("timing wheel: partition-invariant tie order")
    {
    }

  private:
    void DoRun() override
    {
        TieProbe probe;
        EventImpl* ev = MakeEvent(&TieProbe::Remote, &probe, std::string(), 0);
        RdmaWheelScheduler::RegisterRemoteArrivalType(&typeid(*ev));
        ev->Unref();
        const std::vector<std::string> ns3Order = probe.Run(false);
        const std::vector<std::string> invariant = probe.Run(true);
        RdmaWheelScheduler::RegisterRemoteArrivalType(nullptr);
        // (the remote-type event was inserted first, at set-up)
        const std::vector<std::string> insertion{"remote", "from7", "from2", "keyed"};
        const std::vector<std::string> keyed{"remote", "keyed", "from2", "from7"};
        NS_TEST_ASSERT_MSG_EQ((ns3Order == insertion), true, "ns-3's order: insertion order");
        std::string got;
        for (const std::string& n : invariant)
        {
            got += n + " ";
        }
        NS_TEST_ASSERT_MSG_EQ((invariant == keyed), true, "invariant order: remote, then by key; got " << got);
    }
};

class FifoTestCase : public TestCase
{
  public:
    FifoTestCase()
        : TestCase("FIFO: a std::deque's elements in its order, through wrap-around and growth")
    {
    }

  private:
    void DoRun() override
    {
        // A random walk of pushes and pops (pushes more likely while short, pops while long)
        // drives the ring through many wrap-arounds and every size up to 1,024.
        RdmaFifo<uint64_t> fifo;
        std::deque<uint64_t> model;
        uint64_t x = 12345;
        uint64_t next = 0;
        size_t most = 0;
        for (int op = 0; op < 200000; ++op)
        {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL; // Knuth's MMIX LCG
            const bool push = model.empty() || (x >> 33) % 1024 >= model.size();
            if (push && model.size() < 1024)
            {
                fifo.push_back(next);
                model.push_back(next++);
            }
            else
            {
                NS_TEST_ASSERT_MSG_EQ(fifo.front(), model.front(), "front at op " << op);
                fifo.pop_front();
                model.pop_front();
            }
            NS_TEST_ASSERT_MSG_EQ(fifo.size(), model.size(), "size at op " << op);
            NS_TEST_ASSERT_MSG_EQ(fifo.empty(), model.empty(), "empty at op " << op);
            most = std::max(most, model.size());
        }
        NS_TEST_ASSERT_MSG_GT(most, 256U, "the walk must grow the ring several times");
        fifo.clear();
        NS_TEST_ASSERT_MSG_EQ(fifo.size(), 0U, "clear");

        // A packet leaves the FIFO when it is popped, not when its slot is reused.
        RdmaFifo<Ptr<Packet>> packets;
        Ptr<Packet> p = Create<Packet>(1000);
        packets.push_back(p);
        NS_TEST_ASSERT_MSG_EQ(p->GetReferenceCount(), 2U, "held by the FIFO");
        packets.pop_front();
        NS_TEST_ASSERT_MSG_EQ(p->GetReferenceCount(), 1U, "released when popped");

        // Only queued elements are alive: growth moves them (one reference each, none left in
        // the old ring), pop_back, clear and the FIFO's end release them, a move hands them on.
        {
            RdmaFifo<Ptr<Packet>> held;
            for (int i = 0; i < 9; ++i)
            {
                held.push_back(p); // the ring grows 4 -> 8 -> 16
            }
            NS_TEST_ASSERT_MSG_EQ(p->GetReferenceCount(), 10U, "nine queued after two growths");
            held.pop_back();
            NS_TEST_ASSERT_MSG_EQ(p->GetReferenceCount(), 9U, "pop_back releases");
            RdmaFifo<Ptr<Packet>> moved(std::move(held));
            NS_TEST_ASSERT_MSG_EQ(p->GetReferenceCount(), 9U, "a move hands them on");
            NS_TEST_ASSERT_MSG_EQ(held.size(), 0U, "the moved-from FIFO is empty");
            moved.pop_front();
            moved.clear();
            NS_TEST_ASSERT_MSG_EQ(p->GetReferenceCount(), 1U, "clear releases the rest");
            for (int i = 0; i < 5; ++i)
            {
                moved.push_back(p);
            }
        }
        NS_TEST_ASSERT_MSG_EQ(p->GetReferenceCount(), 1U, "the FIFO's end releases its elements");
    }
};

/// \return whether \p a and \p b hold the same value in every field
bool
SameHeader(const RdmaHeader& a, const RdmaHeader& b)
{
    return a.type == b.type && a.sip == b.sip && a.dip == b.dip && a.sport == b.sport &&
           a.dport == b.dport && a.ecn == b.ecn && a.pg == b.pg && a.seq == b.seq &&
           a.tsNs == b.tsNs && a.echoSeq == b.echoSeq && a.flags == b.flags &&
           a.sackSeq == b.sackSeq && a.sackLen == b.sackLen && a.qpn == b.qpn &&
           a.pauseUs == b.pauseUs && a.pfcQlen == b.pfcQlen && a.pfcClass == b.pfcClass &&
           a.intMode == b.intMode && a.intNHop == b.intNHop &&
           std::equal(std::begin(a.intHop), std::end(a.intHop), std::begin(b.intHop));
}

/// Fills every field of \p h but its type and INT mode with draws of \p next.
template <typename Next>
void
FillRandomFields(RdmaHeader* h, Next& next)
{
    h->sip = next();
    h->dip = next();
    h->sport = next();
    h->dport = next();
    h->ecn = next() % 4;
    h->pg = next() % 8;
    h->seq = next();
    h->tsNs = next();
    h->echoSeq = next();
    h->flags = next();
    h->sackSeq = next();
    h->sackLen = next();
    h->sackBitmap = next();
    h->qpn = next();
    h->pauseUs = next();
    h->pfcQlen = next();
    h->pfcClass = next();
    h->intNHop = next();
    for (uint64_t& hop : h->intHop)
    {
        hop = next();
    }
}

class FrameTestCase : public TestCase
{
  public:
    FrameTestCase()
        : TestCase("frame: the header the wire carries, the packet's size, packets made for "
                   "sinks only and never changed once kept")
    {
    }

  private:
    void DoRun() override
    {
        // Every type and INT mode, every field random (also those the type does not carry).
        uint64_t x = 99;
        auto next = [&x]() {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            return x >> 11;
        };
        const RdmaHeader::Type types[] = {RdmaHeader::DATA,
                                          RdmaHeader::ACK,
                                          RdmaHeader::NACK,
                                          RdmaHeader::PFC};
        const RdmaHeader::IntMode modes[] = {RdmaHeader::INT_NONE,
                                             RdmaHeader::INT_HPCC,
                                             RdmaHeader::INT_TS};
        for (int round = 0; round < 50; ++round)
        {
            for (RdmaHeader::Type type : types)
            {
                for (RdmaHeader::IntMode mode : modes)
                {
                    RdmaHeader h;
                    h.type = type;
                    h.intMode = type == RdmaHeader::PFC ? RdmaHeader::INT_NONE : mode;
                    FillRandomFields(&h, next);
                    const uint32_t payload = next() % 4096;
                    Ptr<Packet> p = Create<Packet>(payload);
                    p->AddHeader(h);
                    RdmaHeader decoded;
                    p->PeekHeader(decoded);
                    RdmaFramePtr f = RdmaFrame::Make(h, payload);
                    NS_TEST_ASSERT_MSG_EQ(SameHeader(f->header, decoded),
                                          true,
                                          "type " << uint32_t(type) << " INT " << uint32_t(mode)
                                                  << ": the frame's header is the decoded one");
                    NS_TEST_ASSERT_MSG_EQ(f->sizeBytes, p->GetSize(), "size on the wire");
                    RdmaHeader made;
                    f->Materialise()->PeekHeader(made);
                    NS_TEST_ASSERT_MSG_EQ(SameHeader(made, decoded), true, "made packet's header");
                    NS_TEST_ASSERT_MSG_EQ(f->packet->GetSize(), p->GetSize(), "made packet's size");
                }
            }
        }

        // One packet along the path, rewritten from the frame; a kept packet stays as it was.
        RdmaHeader h;
        h.type = RdmaHeader::DATA;
        h.seq = 7000;
        RdmaFramePtr f = RdmaFrame::Make(h, 1000);
        Ptr<Packet> first = f->Materialise();
        const uint64_t uid = first->GetUid();
        first = nullptr; // no sink kept it
        f->header.ecn = 3; // a switch marks the frame
        Ptr<const Packet> kept = f->Materialise();
        NS_TEST_ASSERT_MSG_EQ(kept->GetUid(), uid, "the same packet at the next hop");
        RdmaHeader seen;
        kept->PeekHeader(seen);
        NS_TEST_ASSERT_MSG_EQ(uint32_t(seen.ecn), 3U, "the mark is in the packet");
        f->header.ecn = 0;
        f->header.seq = 8000;
        Ptr<Packet> later = f->Materialise();
        kept->PeekHeader(seen);
        NS_TEST_ASSERT_MSG_EQ(seen.seq, 7000U, "a kept packet is not changed");
        NS_TEST_ASSERT_MSG_EQ(uint32_t(seen.ecn), 3U, "a kept packet keeps its mark");
        later->PeekHeader(seen);
        NS_TEST_ASSERT_MSG_EQ(seen.seq, 8000U, "the frame's packet has its header");

        // A trace without sinks makes no packet; with one, its sink sees the frame's packet.
        RdmaFrameTrace<uint32_t> trace;
        RdmaFramePtr g = RdmaFrame::Make(h, 1000);
        trace(*g, 1);
        NS_TEST_ASSERT_MSG_EQ(bool(g->packet), false, "no sink, no packet");
        uint32_t fired = 0;
        trace.ConnectWithoutContext(MakeBoundCallback(
            +[](uint32_t* n, Ptr<const Packet> p, uint32_t port) {
                *n += p->GetSize() == 1048 && port == 2 ? 1 : 0;
            },
            &fired));
        trace(*g, 2);
        NS_TEST_ASSERT_MSG_EQ(fired, 1U, "the sink saw the 1048 B packet");

        // A released frame comes back without packet or tag.
        g->lbTag.present = true;
        RdmaFrame* raw = g.get();
        g.reset();
        RdmaFramePtr again = RdmaFrame::Make(h, 0);
        NS_TEST_ASSERT_MSG_EQ(again.get(), raw, "the pool hands out the last frame released");
        NS_TEST_ASSERT_MSG_EQ(bool(again->packet), false, "no packet");
        NS_TEST_ASSERT_MSG_EQ(again->lbTag.present, false, "no tag");
    }
};


/// \return whether the two frames of records are equal field for field
bool
SameRemoteFrame(const RdmaRemoteFrame& a, const RdmaRemoteFrame& b)
{
    return a.hasKey == b.hasKey && a.key.schedTs == b.key.schedTs &&
           a.key.schedCtx == b.key.schedCtx && a.key.seq == b.key.seq &&
           a.sizeBytes == b.sizeBytes && a.lbTag.present == b.lbTag.present &&
           a.lbTag.words == b.lbTag.words && SameHeader(a.header, b.header) &&
           a.header.sackBitmap == b.header.sackBitmap;
}

class RemoteCodecTestCase : public TestCase
{
  public:
    RemoteCodecTestCase()
        : TestCase("remote records: a batch of every kind reads back field for field, in order")
    {
    }

  private:
    void DoRun() override
    {
        uint64_t x = 41;
        auto next = [&x]() {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            return x >> 11;
        };
        auto randomFrame = [&next]() {
            RdmaRemoteFrame f;
            f.hasKey = next() % 2 == 0;
            f.key.schedTs = next();
            f.key.schedCtx = next();
            f.key.seq = next();
            f.sizeBytes = next();
            f.lbTag.present = next() % 2 == 0;
            for (uint64_t& w : f.lbTag.words)
            {
                w = next();
            }
            RdmaHeader& h = f.header;
            h.type = RdmaHeader::Type(next() % 4 == 0 ? RdmaHeader::PFC : RdmaHeader::DATA);
            h.intMode = RdmaHeader::IntMode(next() % 3);
            FillRandomFields(&h, next);
            return f;
        };
        std::vector<RdmaRemoteRecord> sent;
        std::vector<uint8_t> batch;
        for (int i = 0; i < 300; ++i)
        {
            RdmaRemoteRecord r;
            r.kind = RdmaRemoteKind(next() % 3);
            r.arrivalTs = static_cast<int64_t>(next());
            r.node = next();
            switch (r.kind)
            {
            case RdmaRemoteKind::FRAME:
                r.ifIndex = next();
                r.frame = randomFrame();
                break;
            case RdmaRemoteKind::EXPECT_FLOW:
                r.sip = next();
                r.qpn = next();
                r.flowId = next();
                r.size = next();
                break;
            case RdmaRemoteKind::RELEASE_RX:
                r.sip = next();
                r.qpn = next();
                r.hasKey = next() % 2 == 0;
                r.key.schedTs = next();
                r.key.schedCtx = next();
                r.key.seq = next();
                break;
            }
            RdmaRemoteBatchWriter::Append(&batch, r);
            sent.push_back(r);
        }
        RdmaRemoteBatchReader reader(batch.data(), batch.size());
        RdmaRemoteRecord r;
        size_t i = 0;
        while (reader.Next(&r))
        {
            NS_TEST_ASSERT_MSG_LT(i, sent.size(), "more records read than written");
            const RdmaRemoteRecord& s = sent[i];
            NS_TEST_ASSERT_MSG_EQ(uint32_t(r.kind), uint32_t(s.kind), "record " << i << ": kind");
            NS_TEST_ASSERT_MSG_EQ(r.arrivalTs, s.arrivalTs, "record " << i << ": arrival");
            NS_TEST_ASSERT_MSG_EQ(r.node, s.node, "record " << i << ": node");
            switch (s.kind)
            {
            case RdmaRemoteKind::FRAME:
                NS_TEST_ASSERT_MSG_EQ(r.ifIndex, s.ifIndex, "record " << i << ": device");
                NS_TEST_ASSERT_MSG_EQ(SameRemoteFrame(r.frame, s.frame),
                                      true,
                                      "record " << i << ": the frame, field for field");
                break;
            case RdmaRemoteKind::EXPECT_FLOW:
                NS_TEST_ASSERT_MSG_EQ(r.sip, s.sip, "record " << i << ": sip");
                NS_TEST_ASSERT_MSG_EQ(r.qpn, s.qpn, "record " << i << ": qpn");
                NS_TEST_ASSERT_MSG_EQ(r.flowId, s.flowId, "record " << i << ": flow");
                NS_TEST_ASSERT_MSG_EQ(r.size, s.size, "record " << i << ": size");
                break;
            case RdmaRemoteKind::RELEASE_RX:
                NS_TEST_ASSERT_MSG_EQ(r.sip, s.sip, "record " << i << ": sip");
                NS_TEST_ASSERT_MSG_EQ(r.qpn, s.qpn, "record " << i << ": qpn");
                NS_TEST_ASSERT_MSG_EQ(r.hasKey, s.hasKey, "record " << i << ": has key");
                NS_TEST_ASSERT_MSG_EQ(r.key.schedTs, s.key.schedTs, "record " << i << ": key ts");
                NS_TEST_ASSERT_MSG_EQ(r.key.schedCtx, s.key.schedCtx, "record " << i << ": key node");
                NS_TEST_ASSERT_MSG_EQ(r.key.seq, s.key.seq, "record " << i << ": key count");
                break;
            }
            ++i;
        }
        NS_TEST_ASSERT_MSG_EQ(i, sent.size(), "every record read back, none after the last");

        // A frame alone, as ns-3's per-frame message carries it after its kind byte.
        const RdmaRemoteFrame f = randomFrame();
        std::vector<uint8_t> one;
        RdmaRemoteBatchWriter::AppendFrame(&one, f);
        RdmaRemoteBatchReader whole(one.data(), one.size());
        NS_TEST_ASSERT_MSG_EQ(SameRemoteFrame(whole.ReadWholeFrame(), f), true, "a frame alone");
    }
};

class RdmaLbSchedulerTestSuite : public TestSuite
{
  public:
    RdmaLbSchedulerTestSuite()
        : TestSuite("rdma-lb-scheduler", UNIT)
    {
        AddTestCase(new FifoTestCase, TestCase::QUICK);
        AddTestCase(new FrameTestCase, TestCase::QUICK);
        AddTestCase(new WheelOrderTestCase, TestCase::QUICK);
        AddTestCase(new TieOrderTestCase, TestCase::QUICK);
        AddTestCase(new InvariantOrderTestCase, TestCase::QUICK);
        AddTestCase(new PeekThenEarlierTestCase, TestCase::QUICK);
        AddTestCase(new RemoteCodecTestCase, TestCase::QUICK);
    }
};

static RdmaLbSchedulerTestSuite g_rdmaLbSchedulerTestSuite;

} // namespace
} // namespace ns3
