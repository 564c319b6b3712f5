/*
 * rdma-lb: a timing-wheel event scheduler with ns-3's exact event order (see the header).
 */
#include "rdma-wheel-scheduler.h"

#include "ns3/abort.h"
#include "ns3/assert.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <functional>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaWheelScheduler");
NS_OBJECT_ENSURE_REGISTERED(RdmaWheelScheduler);

namespace
{
/// Heap order of the later events (earliest on top): `b < a`, what std::greater would give,
/// written with operator< because Scheduler::Event has operator> only from ns-3.31.
struct EventLater
{
    bool operator()(const Scheduler::Event& a, const Scheduler::Event& b) const
    {
        return b < a;
    }
};

/// The scheduler of the running simulation (the last one created), for TakeTieKey.
RdmaWheelScheduler* g_current = nullptr;
/// RegisterRemoteArrivalType's type.
const std::type_info* g_remoteArrivalType = nullptr;
} // namespace

TypeId
RdmaWheelScheduler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaWheelScheduler")
            .SetParent<Scheduler>()
            .SetGroupName("RdmaLb")
            .AddConstructor<RdmaWheelScheduler>()
            .AddAttribute("Slots",
                          "Time steps the ring covers (rounded up to a power of two); later "
                          "events wait in a binary heap. Any value gives the same event order; "
                          "it only changes the speed.",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&RdmaWheelScheduler::m_slotCount),
                          MakeUintegerChecker<uint32_t>(64, 1U << 24))
            .AddAttribute("PartitionInvariantTies",
                          "Order the events of one timestamp by (time scheduled, scheduling "
                          "node, that node's count of scheduled events) instead of ns-3's "
                          "global insertion order, so that a run gives the same outputs on one "
                          "MPI rank and on several (doc/performance.md, \"Distributed runs "
                          "(MPI)\"). Costs a heap per time step; off: ns-3's order.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaWheelScheduler::m_invariantTies),
                          MakeBooleanChecker());
    return tid;
}

RdmaWheelScheduler::RdmaWheelScheduler()
    : m_slotCount(4096),
      m_mask(0),
      m_free(NIL),
      m_inRing(0),
      m_base(0)
{
    g_current = this;
}

RdmaWheelScheduler::~RdmaWheelScheduler()
{
    if (g_current == this)
    {
        g_current = nullptr;
    }
}

RdmaWheelScheduler::TieOrder
RdmaWheelScheduler::OrderOf(const TieKey& key)
{
    constexpr uint32_t ctxBits = 24;
    constexpr uint64_t lastCtx = (uint64_t{1} << ctxBits) - 1; // the set-up's context
    constexpr uint64_t seqBits = 40;
    const uint64_t ctx = key.schedCtx == Simulator::NO_CONTEXT ? lastCtx : key.schedCtx;
    NS_ABORT_MSG_IF(ctx > lastCtx || (ctx == lastCtx && key.schedCtx != Simulator::NO_CONTEXT),
                    "RdmaWheelScheduler: more than 2^24 - 2 nodes in the partition-invariant order");
    NS_ABORT_MSG_IF(key.seq >> seqBits != 0,
                    "RdmaWheelScheduler: more than 2^40 events scheduled by one node");
    return TieOrder{key.schedTs + 1, ctx << seqBits | key.seq};
}

bool
RdmaWheelScheduler::KeyedLater(const Keyed& a, const Keyed& b)
{
    if (a.ev.key.m_ts != b.ev.key.m_ts)
    {
        return a.ev.key.m_ts > b.ev.key.m_ts;
    }
    if (a.order.hi != b.order.hi)
    {
        return a.order.hi > b.order.hi;
    }
    return a.order.lo > b.order.lo;
}

bool
RdmaWheelScheduler::KeyedBefore(const Keyed& a, const Keyed& b)
{
    return KeyedLater(b, a);
}

RdmaWheelScheduler::TieKey
RdmaWheelScheduler::NewKey()
{
    TieKey k;
    k.schedTs = static_cast<uint64_t>(Simulator::Now().GetTimeStep());
    k.schedCtx = Simulator::GetContext();
    if (k.schedCtx == Simulator::NO_CONTEXT)
    {
        k.seq = m_seqNoContext++;
    }
    else
    {
        if (k.schedCtx >= m_seq.size())
        {
            m_seq.resize(k.schedCtx + 1, 0);
        }
        k.seq = m_seq[k.schedCtx]++;
    }
    return k;
}

bool
RdmaWheelScheduler::TakeTieKey(TieKey* key)
{
    if (g_current == nullptr || !g_current->m_invariantTies)
    {
        return false;
    }
    *key = g_current->NewKey();
    return true;
}

bool
RdmaWheelScheduler::InvariantTiesActive()
{
    return g_current != nullptr && g_current->m_invariantTies;
}

void
RdmaWheelScheduler::SetNextTieKey(const TieKey& key)
{
    if (g_current != nullptr && g_current->m_invariantTies)
    {
        g_current->m_nextKey = key;
        g_current->m_nextKeySet = true;
    }
}

void
RdmaWheelScheduler::RegisterRemoteArrivalType(const std::type_info* t)
{
    g_remoteArrivalType = t;
}

void
RdmaWheelScheduler::Init()
{
    uint64_t n = 64;
    while (n < m_slotCount)
    {
        n *= 2;
    }
    m_slotCount = static_cast<uint32_t>(n);
    m_mask = n - 1;
    m_slots.resize(n);
    m_occupied.assign(n / 64, 0);
}

uint32_t
RdmaWheelScheduler::NewNode(const Event& ev)
{
    uint32_t n = m_free;
    if (n == NIL)
    {
        NS_ABORT_MSG_IF(m_nodes.size() >= NIL, "RdmaWheelScheduler: too many events in the ring");
        n = static_cast<uint32_t>(m_nodes.size());
        m_nodes.push_back(Node{ev, NIL});
        return n;
    }
    Node& node = m_nodes[n];
    m_free = node.next;
    node.ev = ev;
    node.next = NIL;
    return n;
}

void
RdmaWheelScheduler::FreeNode(uint32_t n)
{
    m_nodes[n].next = m_free;
    m_free = n;
}

void
RdmaWheelScheduler::PutInRing(const Event& ev)
{
    const uint64_t i = ev.key.m_ts & m_mask;
    const uint32_t n = NewNode(ev);
    Slot& s = m_slots[i];
    if (s.head == NIL)
    {
        s.head = n;
        m_occupied[i >> 6] |= uint64_t{1} << (i & 63);
    }
    else
    {
        m_nodes[s.tail].next = n;
    }
    s.tail = n;
    ++m_inRing;
}

void
RdmaWheelScheduler::Insert(const Event& ev)
{
    if (m_invariantTies)
    {
        InsertKeyed(ev);
        return;
    }
    if (m_slots.empty())
    {
        Init();
    }
    NS_ASSERT_MSG(ev.key.m_ts >= m_base, "RdmaWheelScheduler: an event in the past");
    if (ev.key.m_ts - m_base < m_slotCount)
    {
        PutInRing(ev);
        return;
    }
    m_later.push_back(ev);
    std::push_heap(m_later.begin(), m_later.end(), EventLater());
}

void
RdmaWheelScheduler::MoveInLater()
{
    // In heap order, so that one timestamp's events enter their slot in uid order; the slot
    // has no event yet: its timestamp only now entered the span, and the ring was drained up
    // to m_base.
    while (!m_later.empty() && m_later.front().key.m_ts - m_base < m_slotCount)
    {
        std::pop_heap(m_later.begin(), m_later.end(), EventLater());
        PutInRing(m_later.back());
        m_later.pop_back();
    }
}

// ---- Partition-invariant mode ---------------------------------------------------------------

void
RdmaWheelScheduler::InsertKeyed(const Event& ev)
{
    Keyed k{ev, {}};
    if (m_nextKeySet)
    {
        k.order = OrderOf(m_nextKey);
        m_nextKeySet = false;
    }
    else if (g_remoteArrivalType != nullptr && typeid(*ev.impl) == *g_remoteArrivalType)
    {
        k.order = TieOrder{0, ev.key.m_uid};
    }
    else
    {
        k.order = OrderOf(NewKey());
    }
    if (CurrentPending())
    {
        if (ev.key.m_ts == m_currentTs)
        {
            // Scheduled for the time step being drained: at its place among the pending ones.
            const auto from = m_current.begin() + static_cast<std::ptrdiff_t>(m_currentNext);
            m_current.insert(std::upper_bound(from, m_current.end(), k, &KeyedBefore), k);
            return;
        }
        if (ev.key.m_ts < m_currentTs)
        {
            // Earlier than the step PeekNext moved into the current step (under MPI, a packet
            // from another rank arriving before this rank's next event): that step waits again.
            for (size_t i = m_currentNext; i < m_current.size(); ++i)
            {
                Place(m_current[i]);
            }
            m_current.clear();
            m_currentNext = 0;
        }
    }
    Place(k);
}

void
RdmaWheelScheduler::Place(const Keyed& k)
{
    if (m_slots.empty())
    {
        Init();
    }
    NS_ASSERT_MSG(k.ev.key.m_ts >= m_base, "RdmaWheelScheduler: an event in the past");
    if (k.ev.key.m_ts - m_base < m_slotCount)
    {
        PutKeyedInRing(k);
        return;
    }
    m_keyed.push_back(k);
    std::push_heap(m_keyed.begin(), m_keyed.end(), &RdmaWheelScheduler::KeyedLater);
}

void
RdmaWheelScheduler::PutKeyedInRing(const Keyed& k)
{
    PutInRing(k.ev);
    // PutInRing's node is its slot's tail.
    const uint32_t n = m_slots[k.ev.key.m_ts & m_mask].tail;
    if (n >= m_nodeOrders.size())
    {
        m_nodeOrders.resize(m_nodes.size());
    }
    m_nodeOrders[n] = k.order;
}

void
RdmaWheelScheduler::MoveInLaterKeyed()
{
    while (!m_keyed.empty() && m_keyed.front().ev.key.m_ts - m_base < m_slotCount)
    {
        std::pop_heap(m_keyed.begin(), m_keyed.end(), &RdmaWheelScheduler::KeyedLater);
        PutKeyedInRing(m_keyed.back());
        m_keyed.pop_back();
    }
}

void
RdmaWheelScheduler::Activate()
{
    if (CurrentPending())
    {
        return;
    }
    m_current.clear();
    m_currentNext = 0;
    if (m_inRing == 0)
    {
        // Nothing within the span: the earliest later events, in key order (the heap's). (m_base
        // stays: an event may still be scheduled before them, see InsertKeyed.)
        NS_ASSERT(!m_keyed.empty());
        m_currentTs = m_keyed.front().ev.key.m_ts;
        while (!m_keyed.empty() && m_keyed.front().ev.key.m_ts == m_currentTs)
        {
            std::pop_heap(m_keyed.begin(), m_keyed.end(), &RdmaWheelScheduler::KeyedLater);
            m_current.push_back(m_keyed.back());
            m_keyed.pop_back();
        }
        return;
    }
    // Every later event lies at or beyond m_base + m_slotCount (MoveInLaterKeyed after every
    // change of m_base), so the earliest slot holds every pending event of its time step.
    const uint32_t i = EarliestSlot();
    Slot& s = m_slots[i];
    m_currentTs = m_nodes[s.head].ev.key.m_ts;
    for (uint32_t n = s.head; n != NIL;)
    {
        const uint32_t next = m_nodes[n].next;
        m_current.push_back(Keyed{m_nodes[n].ev, m_nodeOrders[n]});
        FreeNode(n);
        --m_inRing;
        n = next;
    }
    s.head = NIL;
    Drained(i);
    if (!std::is_sorted(m_current.begin(), m_current.end(), &KeyedBefore))
    {
        std::sort(m_current.begin(), m_current.end(), &KeyedBefore);
    }
}

Scheduler::Event
RdmaWheelScheduler::RemoveNextKeyed()
{
    Activate();
    const Event ev = m_current[m_currentNext++].ev;
    m_base = ev.key.m_ts;
    MoveInLaterKeyed();
    return ev;
}

void
RdmaWheelScheduler::RemoveKeyed(const Event& ev)
{
    auto same = [&ev](const Keyed& k) { return k.ev.key.m_uid == ev.key.m_uid; };
    const auto from = m_current.begin() + static_cast<std::ptrdiff_t>(m_currentNext);
    auto it = std::find_if(from, m_current.end(), same);
    if (it != m_current.end())
    {
        m_current.erase(it); // keeps the order
        return;
    }
    if (ev.key.m_ts - m_base < m_slotCount)
    {
        RemoveFromRing(ev);
        return;
    }
    it = std::find_if(m_keyed.begin(), m_keyed.end(), same);
    NS_ASSERT_MSG(it != m_keyed.end(), "RdmaWheelScheduler: removing an unknown event");
    m_keyed.erase(it);
    std::make_heap(m_keyed.begin(), m_keyed.end(), &RdmaWheelScheduler::KeyedLater);
}

// ---- Both modes ----------------------------------------------------------------------------

uint32_t
RdmaWheelScheduler::EarliestSlot() const
{
    // Every event in the ring lies in [m_base, m_base + m_slotCount), so the first non-empty
    // slot at or after m_base's, wrapping around, holds the earliest.
    const uint64_t start = m_base & m_mask;
    const size_t words = m_occupied.size();
    size_t w = start >> 6;
    uint64_t bits = m_occupied[w] & (~uint64_t{0} << (start & 63));
    for (size_t scanned = 0; bits == 0; ++scanned)
    {
        NS_ASSERT_MSG(scanned <= words, "RdmaWheelScheduler: empty ring scanned");
        w = (w + 1) % words;
        bits = m_occupied[w];
    }
    return static_cast<uint32_t>((w << 6) + __builtin_ctzll(bits));
}

bool
RdmaWheelScheduler::IsEmpty() const
{
    return m_inRing == 0 && m_later.empty() && m_keyed.empty() && !CurrentPending();
}

Scheduler::Event
RdmaWheelScheduler::PeekNext() const
{
    if (m_invariantTies)
    {
        // Moving the earliest time step's events into the current step changes no event's
        // order or presence (see Activate).
        const_cast<RdmaWheelScheduler*>(this)->Activate();
        return m_current[m_currentNext].ev;
    }
    if (m_inRing == 0)
    {
        NS_ASSERT(!m_later.empty());
        return m_later.front();
    }
    return m_nodes[m_slots[EarliestSlot()].head].ev;
}

Scheduler::Event
RdmaWheelScheduler::RemoveNext()
{
    Event ev;
    if (m_invariantTies)
    {
        return RemoveNextKeyed();
    }
    if (m_inRing == 0)
    {
        NS_ASSERT(!m_later.empty());
        std::pop_heap(m_later.begin(), m_later.end(), EventLater());
        ev = m_later.back();
        m_later.pop_back();
    }
    else
    {
        const uint32_t i = EarliestSlot();
        Slot& s = m_slots[i];
        const uint32_t n = s.head;
        ev = m_nodes[n].ev;
        s.head = m_nodes[n].next;
        FreeNode(n);
        --m_inRing;
        if (s.head == NIL)
        {
            Drained(i);
        }
        else
        {
            // The next event of this time step is the next removed unless one is scheduled
            // for it first. Its node was fetched while this one ran (below, one event ago):
            // fetch the event object it names, which the simulator reads first, and the node
            // after it, while this event runs.
            const Node& next = m_nodes[s.head];
            __builtin_prefetch(next.ev.impl);
            if (next.next != NIL)
            {
                __builtin_prefetch(&m_nodes[next.next]);
            }
        }
    }
    m_base = ev.key.m_ts;
    MoveInLater();
    return ev;
}

void
RdmaWheelScheduler::Drained(uint32_t i)
{
    m_slots[i].tail = NIL;
    m_occupied[i >> 6] &= ~(uint64_t{1} << (i & 63));
}

void
RdmaWheelScheduler::Remove(const Event& ev)
{
    if (m_invariantTies)
    {
        RemoveKeyed(ev);
        return;
    }
    if (ev.key.m_ts - m_base < m_slotCount)
    {
        RemoveFromRing(ev);
        return;
    }
    auto same = [&ev](const Event& e) { return e.key.m_uid == ev.key.m_uid; };
    auto it = std::find_if(m_later.begin(), m_later.end(), same);
    NS_ASSERT_MSG(it != m_later.end(), "RdmaWheelScheduler: removing an unknown event");
    m_later.erase(it);
    std::make_heap(m_later.begin(), m_later.end(), EventLater());
}

void
RdmaWheelScheduler::RemoveFromRing(const Event& ev)
{
    const uint64_t i = ev.key.m_ts & m_mask;
    Slot& s = m_slots[i];
    uint32_t prev = NIL;
    uint32_t n = s.head;
    while (n != NIL && m_nodes[n].ev.key.m_uid != ev.key.m_uid)
    {
        prev = n;
        n = m_nodes[n].next;
    }
    NS_ASSERT_MSG(n != NIL, "RdmaWheelScheduler: removing an unknown event");
    const uint32_t next = m_nodes[n].next;
    (prev == NIL ? s.head : m_nodes[prev].next) = next;
    if (s.tail == n)
    {
        s.tail = prev;
    }
    FreeNode(n);
    --m_inRing;
    if (s.head == NIL)
    {
        Drained(static_cast<uint32_t>(i));
    }
}

} // namespace ns3
