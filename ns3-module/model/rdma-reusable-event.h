/*
 * rdma-lb: one event object scheduled over and over for a per-packet-hop event (a port's
 * transmit-complete; a link direction's arrivals, RdmaLinkDirection, work the same way with
 * the direction's state in the event object itself).
 *
 * ns-3's Simulator::Schedule(delay, &T::Method, obj) allocates an EventMemberImpl for every
 * call and frees it after the call: two allocations and frees per packet-hop, and the first
 * touch of a fresh heap object on every event. These events carry no argument that changes
 * between schedules (a link keeps its packets in flight in order; a port sends one packet at a
 * time), so their owner creates one object each and schedules it again and again. The
 * scheduler keeps one reference per pending schedule (ns-3's ownership of a scheduled
 * EventImpl: Unref after the call), the owner one for its lifetime, so the same object may be
 * pending several times at once (a link's deliveries). Such an event must never be cancelled
 * (a cancel would cancel every pending schedule of the object): their owners never cancel them.
 * Event ids and order are those of Simulator::Schedule: the same simulation, event for event.
 * Uses only EventImpl and Simulator::ScheduleWithContext(context, delay, EventImpl*), both
 * in ns-3 since before 3.29.
 */
#ifndef RDMA_REUSABLE_EVENT_H
#define RDMA_REUSABLE_EVENT_H

#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"

namespace ns3
{

/**
 * \ingroup rdma-lb
 * A reusable, never cancelled event calling \p METHOD on its owner.
 */
template <typename T, void (T::*METHOD)()>
class RdmaReusableEvent : public EventImpl
{
  public:
    /// \param owner the object whose METHOD the event calls; it must outlive every call
    explicit RdmaReusableEvent(T* owner)
        : m_owner(owner)
    {
    }

    /// Schedules one more call of METHOD \p delay from now, in \p context.
    void ScheduleWithContext(uint32_t context, const Time& delay)
    {
        Ref(); // the scheduler's reference, released after the call
        Simulator::ScheduleWithContext(context, delay, this);
    }

    /// Schedules one more call of METHOD \p delay from now, in the current context.
    void Schedule(const Time& delay)
    {
        ScheduleWithContext(Simulator::GetContext(), delay);
    }

  private:
    void Notify() override
    {
        (m_owner->*METHOD)();
    }

    T* m_owner;
};

} // namespace ns3

#endif /* RDMA_REUSABLE_EVENT_H */
