/*
 * rdma-lb: a timing-wheel event scheduler with ns-3's exact event order.
 *
 * Not a model of anything: a speed measure (doc/performance.md). A packet fabric schedules almost
 * every event a few microseconds ahead (a delivery one link delay plus a serialisation away, the
 * next transmission, pacing wake-ups), several per nanosecond of simulated time, while a binary
 * heap (ns3::PriorityQueueScheduler) pays a log-depth sift of mispredicted comparisons for each: on
 * ConWeave's 128-host case that sift was 23 % of the run.
 *
 * This scheduler keeps the events of the next `Slots` time steps (4,096 ns at ns-3's default
 * resolution) in a ring of one-time-step slots, each a FIFO, with a bitmap of the non-empty
 * slots; later events wait in a binary heap and move into the ring when it reaches them.
 * A slot's FIFO is a singly linked list of nodes from one pool, reused last-freed-first: an
 * insert writes a node an earlier removal just freed (in cache) beside the slot's 8-byte
 * head/tail pair, where a per-slot array would write memory last touched a turn of the ring
 * ago (that store was 11 % of the reference case's run).
 * Order is exactly ns-3's (timestamp, then uid): a slot holds one timestamp, and its events
 * arrive in uid order because uids grow with every Schedule and an event from the heap is
 * moved in (in heap order) before any later event can be scheduled into its slot. Results and
 * event counts are therefore the same as with any other ns-3 scheduler.
 *
 *   Insert      O(1) into the ring; O(log m) into the heap of the m later events
 *   RemoveNext  O(1) amortised: a bitmap scan to the next non-empty slot
 *   Remove      linear in one slot or in the later heap
 *
 * Memory: 8 bytes a slot, and 32 bytes a node for the most events the ring has held at once
 * (the pool keeps its peak: a start-up burst of every host's first packet stays allocated).
 */
#ifndef RDMA_WHEEL_SCHEDULER_H
#define RDMA_WHEEL_SCHEDULER_H

#include "ns3/scheduler.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * \ingroup rdma-lb
 * A timing wheel of one-time-step slots in front of a binary heap (see the file comment).
 * Select it with `--SchedulerType=ns3::RdmaWheelScheduler`; rdma-lb-scenario uses it by
 * default.
 */
class RdmaWheelScheduler : public Scheduler
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();

    RdmaWheelScheduler();
    ~RdmaWheelScheduler() override;

    void Insert(const Event& ev) override;
    bool IsEmpty() const override;
    Event PeekNext() const override;
    Event RemoveNext() override;
    void Remove(const Event& ev) override;

  private:
    /// No node: the end of a list.
    static constexpr uint32_t NIL = UINT32_MAX;
    /// One event in a slot's FIFO, or (in the free list) a free node.
    struct Node
    {
        Event ev;          //!< the event
        uint32_t next;     //!< the next node in the slot's FIFO or the free list, or NIL
    };
    /// One time step's events, in uid order: a list of nodes from head to tail.
    struct Slot
    {
        uint32_t head = NIL; //!< first node, or NIL when the slot is empty
        uint32_t tail = NIL; //!< last node
    };

    /// Takes a node from the free list (or grows the pool) holding \p ev.
    uint32_t NewNode(const Event& ev);
    /// Returns node \p n to the free list.
    void FreeNode(uint32_t n);
    /// Slot \p i became empty: clears its occupied bit.
    void Drained(uint32_t i);
    /// Allocates the ring (at the first Insert: attributes are set by then).
    void Init();
    /// Puts \p ev, whose timestamp is within the ring's span, at the end of its slot.
    void PutInRing(const Event& ev);
    /// Moves the later events that the ring's span now covers into the ring.
    void MoveInLater();
    /// Index of the slot of the earliest event in the ring (the ring must not be empty).
    uint32_t EarliestSlot() const;

    uint32_t m_slotCount;       //!< the Slots attribute, rounded up to a power of two
    uint64_t m_mask;            //!< m_slotCount - 1
    std::vector<Slot> m_slots;  //!< slot of timestamp t: t & m_mask
    std::vector<Node> m_nodes;  //!< the pool of list nodes
    uint32_t m_free;            //!< head of the free list of m_nodes, or NIL
    std::vector<uint64_t> m_occupied; //!< one bit per slot: non-empty
    uint64_t m_inRing;          //!< events in the ring
    uint64_t m_base;            //!< the last removed timestamp; the ring spans [m_base, m_base + m_slotCount)
    std::vector<Event> m_later; //!< min-heap (std::greater) of events at or after the span
};

} // namespace ns3

#endif /* RDMA_WHEEL_SCHEDULER_H */
