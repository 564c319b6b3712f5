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
 *
 * Partition-invariant ties (attribute PartitionInvariantTies, off by default; doc/performance.md,
 * "Distributed runs (MPI)"). ns-3 orders events of one timestamp by uid, i.e. by the order in
 * which they were scheduled over the whole simulation. Under ns-3's distributed simulator a
 * packet from another rank is scheduled when its message is received, at a synchronisation
 * point, so that order (and with it the order in which a switch takes two packets arriving in
 * the same nanosecond) depends on the partition. With the option on, events of one timestamp
 * are ordered by a key that depends only on the node that scheduled them: (time it was
 * scheduled, that node's id, that node's running count of scheduled events). Each node's event
 * sequence, and so the run's outputs, is then the same on 1 rank and on N, provided nodes share
 * no state but packets. Ties are then not ns-3's order: a run with the option differs from one
 * without (both are deterministic). An event inserted by ns-3's MPI receive path (its
 * MpiReceiver::Receive, whose type RegisterRemoteArrivalType names) comes first in its
 * timestamp: it only re-schedules the packet's arrival under the sender's key (TakeTieKey /
 * SetNextTieKey), before any ordinary event of that time runs. In this mode the ring keeps each
 * event's order (its key packed in two words) beside its node, and the later events wait in a
 * heap ordered by key; when the earliest slot's time step is reached, its events (a few hundred
 * on the largest fabrics) move into the "current" step, an array sorted by key and drained front
 * to back. A slot's FIFO is only a bag here, but close to sorted: its events enter it in the
 * order of their scheduling time, the key's first part (the sort is skipped when it finds them
 * in order). An event scheduled for the current step while it drains is inserted at its place,
 * near the end (its scheduling time is the latest). The array replaced a binary heap of the
 * step, and that heap one heap of every pending event (doc/performance.md, "Distributed runs
 * (MPI)").
 */
#ifndef RDMA_WHEEL_SCHEDULER_H
#define RDMA_WHEEL_SCHEDULER_H

#include "ns3/scheduler.h"

#include <cstdint>
#include <typeinfo>
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

    /// The partition-invariant order of one event among those of its timestamp (see the file
    /// comment): remote-receive events first, then by (schedTs, schedCtx, seq).
    struct TieKey
    {
        uint64_t schedTs{0};  //!< time step at which it was scheduled
        uint32_t schedCtx{0}; //!< context (node id) that scheduled it
        uint64_t seq{0};      //!< that context's count of scheduled events before it
    };
    /**
     * 
eturn whether the running simulation's scheduler orders ties partition-invariantly; if
     * so, \p key receives the key an event scheduled now by the current context would get, and
     * that context's count advances as if it had been scheduled (a packet sent to another rank
     * instead of being scheduled here)
     */
    static bool TakeTieKey(TieKey* key);
    /// \return whether the running simulation's scheduler orders ties partition-invariantly
    static bool InvariantTiesActive();
    /// The next Insert (an event scheduled on behalf of a packet from another rank) gets
    /// \p key instead of one of its own.
    static void SetNextTieKey(const TieKey& key);
    /// Events whose implementation has type \p t (ns-3's MpiReceiver::Receive events) are
    /// ordered first in their timestamp.
    static void RegisterRemoteArrivalType(const std::type_info* t);

  private:
    /// TieKey's order as two words compared in turn (the order KeyedLater needs, without its
    /// branches): remote-receive events {0, uid}; any other {schedTs + 1, schedCtx << 40 | seq},
    /// the set-up's context (NO_CONTEXT) last as in TieKey's order. Holds for fewer than
    /// 2^24 - 1 nodes and 2^40 events scheduled per node (checked).
    struct TieOrder
    {
        uint64_t hi; //!< 0 for a remote-receive event, else its schedTs + 1
        uint64_t lo; //!< its uid, else schedCtx << 40 | seq
    };
    /// \return the order of an event with key \p key
    static TieOrder OrderOf(const TieKey& key);
    /// An event with its tie order, in the partition-invariant mode's heap and current step.
    struct Keyed
    {
        Event ev;       //!< the event
        TieOrder order; //!< its order among the events of its timestamp
    };
    /// Heap order of Keyed (earliest on top): true when \p a comes after \p b.
    static bool KeyedLater(const Keyed& a, const Keyed& b);
    /// Sort order of Keyed: true when \p a comes before \p b.
    static bool KeyedBefore(const Keyed& a, const Keyed& b);
    /// \return whether the current step still holds an event (partition-invariant mode)
    bool CurrentPending() const
    {
        return m_currentNext < m_current.size();
    }
    /// \return the key of an event scheduled now by the current context (whose count advances)
    TieKey NewKey();

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
    /// Partition-invariant mode: \p k into the ring (within its span) or the later heap.
    void Place(const Keyed& k);
    /// Partition-invariant mode: \p k, whose timestamp is within the ring's span, into its slot.
    void PutKeyedInRing(const Keyed& k);
    /// Partition-invariant mode: the later events that the span now covers into the ring.
    void MoveInLaterKeyed();
    /// Partition-invariant mode: if the current step is drained, moves the earliest time step's
    /// events (from the ring, or from the later heap) into it, sorted. Changes where events are kept,
    /// not which are pending: PeekNext calls it too, and an event scheduled before that step
    /// afterwards (InsertKeyed) puts them back.
    void Activate();
    /// Partition-invariant forms of Insert, RemoveNext and Remove.
    void InsertKeyed(const Event& ev);
    Event RemoveNextKeyed();
    void RemoveKeyed(const Event& ev);
    /// Removes \p ev, whose timestamp is within the ring's span, from its slot.
    void RemoveFromRing(const Event& ev);
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
    bool m_invariantTies{false}; //!< the PartitionInvariantTies attribute
    /// Partition-invariant mode: the events at or after the ring's span, a min-heap by key.
    std::vector<Keyed> m_keyed;
    /// Partition-invariant mode: the order of the event in m_nodes[i] (same index).
    std::vector<TieOrder> m_nodeOrders;
    /// Partition-invariant mode: the events of time step m_currentTs in order (KeyedBefore);
    /// those before m_currentNext have been removed.
    std::vector<Keyed> m_current;
    size_t m_currentNext{0}; //!< index in m_current of the next event of the current step
    uint64_t m_currentTs{0}; //!< the time step of m_current's events (while any is pending)
    std::vector<uint64_t> m_seq; //!< partition-invariant mode: events scheduled per context
    uint64_t m_seqNoContext{0};  //!< ... by the set-up (no context)
    bool m_nextKeySet{false};    //!< SetNextTieKey was called
    TieKey m_nextKey;            //!< its key
};

} // namespace ns3

#endif /* RDMA_WHEEL_SCHEDULER_H */
