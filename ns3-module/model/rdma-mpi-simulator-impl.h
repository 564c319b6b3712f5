/*
 * rdma-lb: a distributed simulator engine that exchanges one message per pair of ranks and
 * time window (ns3-module/doc/performance.md, "Distributed runs (MPI)").
 *
 * Conservative and granted-time-window, as ns-3's DistributedSimulatorImpl, but what the ranks
 * send each other is batched: during a window a model appends records (plain bytes, no
 * Packet) to the batch of their destination rank (Batch), noting each record's arrival time;
 * at the window's end each non-empty batch goes as one MPI message. One MPI_Allreduce per
 * window then gives every rank, at once,
 *  - the lower bound on the time stamp of anything still to happen anywhere (LBTS): the
 *    smallest of every rank's next event time and of the arrival times of the records it sent
 *    in this window (a record is an event its receiver has not scheduled yet);
 *  - how many batches each rank must receive (one counter per rank, summed), so that it
 *    receives exactly those, blocking, with no second round;
 *  - whether every rank is finished (no event left or stopped) with nothing in flight.
 * Each rank then hands the batches it received, in the order of their source ranks, to the
 * receive callback (SetBatchReceiver), and may run every event up to LBTS + lookahead, the
 * lookahead being the smallest delay of a link between ranks (BoundLookahead; the ranks agree
 * on the smallest): anything sent in that window arrives strictly later (a frame's arrival is
 * its send time + its serialisation, at least one time step, + the link's delay), after the
 * next synchronisation has delivered it.
 *
 * Against ns-3's engine: no Packet, no heap buffer and no MPI message per frame, no receive
 * event per frame (the receiver schedules the frame's arrival itself, under the sender's tie
 * key), and one collective per window instead of one or more (ns-3 repeats its MPI_Allgather
 * until the counts of sent and received messages agree).
 *
 * Select it with SimulatorImplementationType = ns3::RdmaMpiSimulatorImpl after
 * MpiInterface::Enable (which starts MPI and selects ns-3's engine); rdma-lb-scenario does so
 * under --ranks > 1 unless --mpiEngine=ns3. Built only with ns-3's MPI (NS3_MPI).
 */
#ifndef RDMA_MPI_SIMULATOR_IMPL_H
#define RDMA_MPI_SIMULATOR_IMPL_H

#ifdef NS3_MPI

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/scheduler.h"
#include "ns3/simulator-impl.h"

#include <cstdint>
#include <list>
#include <mpi.h>
#include <vector>

namespace ns3
{

/**
 * \ingroup rdma-lb
 * A conservative distributed simulator over MPI that batches what crosses ranks (see the file
 * comment).
 */
class RdmaMpiSimulatorImpl : public SimulatorImpl
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();

    RdmaMpiSimulatorImpl();
    ~RdmaMpiSimulatorImpl() override;

    void Destroy() override;
    bool IsFinished() const override;
    void Stop() override;
    void Stop(const Time& delay) override;
    EventId Schedule(const Time& delay, EventImpl* event) override;
    void ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event) override;
    EventId ScheduleNow(EventImpl* event) override;
    EventId ScheduleDestroy(EventImpl* event) override;
    void Remove(const EventId& id) override;
    void Cancel(const EventId& id) override;
    bool IsExpired(const EventId& id) const override;
    void Run() override;
    Time Now() const override;
    Time GetDelayLeft(const EventId& id) const override;
    Time GetMaximumSimulationTime() const override;
    void SetScheduler(ObjectFactory schedulerFactory) override;
    uint32_t GetSystemId() const override;
    uint32_t GetContext() const override;
    uint64_t GetEventCount() const override;

    /// \return the running simulator if it is this engine, else nullptr
    static RdmaMpiSimulatorImpl* Get();
    /**
     * \return the batch for rank \p rank of this window, to append records to; the caller
     * notes that one of them takes effect at \p arrival on that rank (more than the lookahead
     * from now)
     */
    std::vector<uint8_t>& Batch(uint32_t rank, Time arrival);
    /// The callback that receives every batch (source rank, bytes, length), at the window's
    /// end, in the order of the source ranks. One for the process (the models register it).
    static void SetBatchReceiver(Callback<void, uint32_t, const uint8_t*, size_t> cb);
    /// A link between ranks has delay \p d: the lookahead is at most that. Any time before Run.
    static void BoundLookahead(Time d);

    /// What the last run of this engine did on this rank (kept after the engine is destroyed).
    struct Statistics
    {
        uint64_t windows{0};          //!< synchronisations (one MPI_Allreduce each)
        uint64_t messagesSent{0};     //!< batches sent (MPI messages)
        uint64_t bytesSent{0};        //!< their bytes
        uint64_t messagesReceived{0}; //!< batches received
        double syncSeconds{0};        //!< wall time spent synchronising (send, reduce, receive)
        double syncCpuSeconds{0};     //!< CPU time of this process spent synchronising (MPI
                                      //!< waits by polling: mostly waiting for the other ranks)
        double runCpuSeconds{0};      //!< CPU time of this process in Run, synchronising included
        int64_t lookaheadTs{0};       //!< the lookahead (time steps)
    };
    /// \return the statistics of the last run on this rank
    static Statistics GetStatistics();

  private:
    void DoDispose() override;
    /// Runs the next event.
    void ProcessOneEvent();
    /// \return whether this rank has no event left or was stopped
    bool IsLocalFinished() const;
    /// Ends the window: sends the batches, agrees on the next window, receives the batches.
    void Synchronise();

    Ptr<Scheduler> m_events;             //!< the events
    std::list<EventId> m_destroyEvents;  //!< ScheduleDestroy's events
    bool m_stop{false};                  //!< Stop() was called
    bool m_globalFinished{false};        //!< every rank finished, nothing in flight
    uint32_t m_uid;                      //!< the next event's uid
    uint32_t m_currentUid;               //!< the running event's uid
    uint64_t m_currentTs{0};             //!< the running event's time stamp
    uint32_t m_currentContext;           //!< the running event's context
    int m_unscheduledEvents{0};          //!< events scheduled and not yet run or removed
    uint64_t m_eventCount{0};            //!< events run
    MPI_Comm m_comm;                     //!< this engine's communicator (a duplicate)
    uint32_t m_rank{0};                  //!< this rank
    uint32_t m_size{1};                  //!< the number of ranks
    int64_t m_lookahead{0};              //!< the lookahead (time steps)
    int64_t m_granted{-1};               //!< events up to this time stamp may run
    int64_t m_minArrival;                //!< earliest arrival among this window's records
    std::vector<std::vector<uint8_t>> m_out;     //!< this window's batch per destination rank
    std::vector<std::vector<uint8_t>> m_sending; //!< batches being sent (until the window's end)
    std::vector<std::vector<uint8_t>> m_in;      //!< batches received, per source rank
    std::vector<MPI_Request> m_requests;         //!< the sends' requests
    std::vector<int64_t> m_reduce;               //!< the Allreduce's vector
    MPI_Op m_op;                                 //!< its operation (min, then sums)
};

} // namespace ns3

#endif // NS3_MPI

#endif /* RDMA_MPI_SIMULATOR_IMPL_H */
