/*
 * rdma-lb: a timing-wheel event scheduler with ns-3's exact event order (see the header).
 */
#include "rdma-wheel-scheduler.h"

#include "ns3/assert.h"
#include "ns3/log.h"
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
                          MakeUintegerChecker<uint32_t>(64, 1U << 24));
    return tid;
}

RdmaWheelScheduler::RdmaWheelScheduler()
    : m_slotCount(4096),
      m_mask(0),
      m_inRing(0),
      m_base(0)
{
}

RdmaWheelScheduler::~RdmaWheelScheduler() = default;

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

void
RdmaWheelScheduler::PutInRing(const Event& ev)
{
    const uint64_t i = ev.key.m_ts & m_mask;
    m_slots[i].events.push_back(ev);
    m_occupied[i >> 6] |= uint64_t{1} << (i & 63);
    ++m_inRing;
}

void
RdmaWheelScheduler::Insert(const Event& ev)
{
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
    return m_inRing == 0 && m_later.empty();
}

Scheduler::Event
RdmaWheelScheduler::PeekNext() const
{
    if (m_inRing == 0)
    {
        NS_ASSERT(!m_later.empty());
        return m_later.front();
    }
    const Slot& s = m_slots[EarliestSlot()];
    return s.events[s.head];
}

Scheduler::Event
RdmaWheelScheduler::RemoveNext()
{
    Event ev;
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
        ev = s.events[s.head++];
        --m_inRing;
        if (s.head == s.events.size())
        {
            Drained(i);
        }
    }
    m_base = ev.key.m_ts;
    MoveInLater();
    return ev;
}

void
RdmaWheelScheduler::Drained(uint32_t i)
{
    Slot& s = m_slots[i];
    // A burst (every host starting at one instant) leaves a slot with a large capacity that
    // the slot, reused once per turn of the ring, rarely needs again: give it back.
    if (s.events.capacity() > KEPT_EVENTS)
    {
        std::vector<Event>().swap(s.events);
    }
    else
    {
        s.events.clear();
    }
    s.head = 0;
    m_occupied[i >> 6] &= ~(uint64_t{1} << (i & 63));
}

void
RdmaWheelScheduler::Remove(const Event& ev)
{
    auto same = [&ev](const Event& e) { return e.key.m_uid == ev.key.m_uid; };
    if (ev.key.m_ts - m_base < m_slotCount)
    {
        const uint64_t i = ev.key.m_ts & m_mask;
        Slot& s = m_slots[i];
        auto it = std::find_if(s.events.begin() + s.head, s.events.end(), same);
        NS_ASSERT_MSG(it != s.events.end(), "RdmaWheelScheduler: removing an unknown event");
        s.events.erase(it);
        --m_inRing;
        if (s.head == s.events.size())
        {
            Drained(static_cast<uint32_t>(i));
        }
        return;
    }
    auto it = std::find_if(m_later.begin(), m_later.end(), same);
    NS_ASSERT_MSG(it != m_later.end(), "RdmaWheelScheduler: removing an unknown event");
    m_later.erase(it);
    std::make_heap(m_later.begin(), m_later.end(), EventLater());
}

} // namespace ns3
