/*
 * rdma-lb: a distributed simulator engine with one message per pair of ranks and window (see
 * the header).
 */
#include "rdma-mpi-simulator-impl.h"

#ifdef NS3_MPI

#include "ns3/abort.h"
#include "ns3/assert.h"
#include "ns3/boolean.h"
#include "ns3/event-impl.h"
#include "ns3/log.h"
#include "ns3/mpi-interface.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaMpiSimulatorImpl");
NS_OBJECT_ENSURE_REGISTERED(RdmaMpiSimulatorImpl);

namespace
{
/// The engine of the running simulation (the last one created).
RdmaMpiSimulatorImpl* g_engine = nullptr;
/// SetBatchReceiver's callback.
Callback<void, uint32_t, const uint8_t*, size_t> g_receiver;
/// BoundLookahead's bound (time steps).
int64_t g_lookaheadBound = std::numeric_limits<int64_t>::max();
/// The statistics of the last run.
RdmaMpiSimulatorImpl::Statistics g_stats;
/**
 * The tag of a batch of window w on the engine's communicator: BATCH_TAG + w % 2. A rank may
 * send its batches of window w + 1 while another still receives those of window w (it left
 * window w's Allreduce first), never those of w + 2 (that needs window w + 1's Allreduce,
 * which the other joins only after receiving): two tags keep the windows apart, so that a
 * receive of window w never takes a batch of w + 1 from a faster rank.
 */
constexpr int BATCH_TAG = 41;
/// \return this process's CPU time in seconds
double
CpuSeconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// "Never": no event, or nothing in flight.
constexpr int64_t NEVER = std::numeric_limits<int64_t>::max();

/**
 * The Allreduce's operation on [LBTS, finished ranks, batches for rank 0, ..., for rank N-1]:
 * the minimum of the first element, sums of the others.
 */
void
ReduceWindow(void* in, void* inout, int* len, MPI_Datatype*)
{
    const auto* a = static_cast<const int64_t*>(in);
    auto* b = static_cast<int64_t*>(inout);
    b[0] = std::min(a[0], b[0]);
    for (int i = 1; i < *len; ++i)
    {
        b[i] += a[i];
    }
}
} // namespace

TypeId
RdmaMpiSimulatorImpl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaMpiSimulatorImpl")
                            .SetParent<SimulatorImpl>()
                            .SetGroupName("RdmaLb")
                            .AddConstructor<RdmaMpiSimulatorImpl>();
    return tid;
}

RdmaMpiSimulatorImpl::RdmaMpiSimulatorImpl()
    : m_uid(EventId::UID::VALID),
      m_currentUid(EventId::UID::INVALID),
      m_currentContext(Simulator::NO_CONTEXT),
      m_minArrival(NEVER)
{
    NS_LOG_FUNCTION(this);
    int initialised = 0;
    MPI_Initialized(&initialised);
    NS_ABORT_MSG_IF(!initialised,
                    "RdmaMpiSimulatorImpl: MPI is not started (MpiInterface::Enable first)");
    // A communicator of its own: its messages never meet ns-3's or the models'.
    MPI_Comm_dup(MpiInterface::IsEnabled() ? MpiInterface::GetCommunicator() : MPI_COMM_WORLD,
                 &m_comm);
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(m_comm, &rank);
    MPI_Comm_size(m_comm, &size);
    m_rank = static_cast<uint32_t>(rank);
    m_size = static_cast<uint32_t>(size);
    m_out.resize(m_size);
    m_sending.resize(m_size);
    m_in.resize(m_size);
    m_requests.assign(m_size, MPI_REQUEST_NULL);
    m_reduce.assign(2 + m_size, 0);
    MPI_Op_create(&ReduceWindow, 1, &m_op);
    g_engine = this;
}

RdmaMpiSimulatorImpl::~RdmaMpiSimulatorImpl()
{
    NS_LOG_FUNCTION(this);
    if (g_engine == this)
    {
        g_engine = nullptr;
    }
}

void
RdmaMpiSimulatorImpl::DoDispose()
{
    NS_LOG_FUNCTION(this);
    while (m_events && !m_events->IsEmpty())
    {
        Scheduler::Event next = m_events->RemoveNext();
        next.impl->Unref();
    }
    m_events = nullptr;
    SimulatorImpl::DoDispose();
}

void
RdmaMpiSimulatorImpl::Destroy()
{
    NS_LOG_FUNCTION(this);
    while (!m_destroyEvents.empty())
    {
        Ptr<EventImpl> ev = m_destroyEvents.front().PeekEventImpl();
        m_destroyEvents.pop_front();
        if (!ev->IsCancelled())
        {
            ev->Invoke();
        }
    }
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (!finalised)
    {
        MPI_Op_free(&m_op);
        MPI_Comm_free(&m_comm);
    }
    if (g_engine == this)
    {
        g_engine = nullptr;
    }
}

RdmaMpiSimulatorImpl*
RdmaMpiSimulatorImpl::Get()
{
    return g_engine;
}

void
RdmaMpiSimulatorImpl::SetBatchReceiver(Callback<void, uint32_t, const uint8_t*, size_t> cb)
{
    g_receiver = cb;
}

void
RdmaMpiSimulatorImpl::BoundLookahead(Time d)
{
    NS_ABORT_MSG_IF(!d.IsStrictlyPositive(),
                    "RdmaMpiSimulatorImpl: a link between ranks with delay " << d.As(Time::NS)
                                                                            << " (no lookahead)");
    g_lookaheadBound = std::min(g_lookaheadBound, d.GetTimeStep());
}

RdmaMpiSimulatorImpl::Statistics
RdmaMpiSimulatorImpl::GetStatistics()
{
    return g_stats;
}

std::vector<uint8_t>&
RdmaMpiSimulatorImpl::Batch(uint32_t rank, Time arrival)
{
    NS_ASSERT_MSG(rank < m_size && rank != m_rank, "RdmaMpiSimulatorImpl: a batch for rank " << rank);
    NS_ASSERT_MSG(arrival.GetTimeStep() > static_cast<int64_t>(m_currentTs) + m_lookahead ||
                      m_lookahead == 0,
                  "RdmaMpiSimulatorImpl: a record arriving within the lookahead");
    m_minArrival = std::min(m_minArrival, arrival.GetTimeStep());
    return m_out[rank];
}

bool
RdmaMpiSimulatorImpl::IsLocalFinished() const
{
    return m_stop || m_events->IsEmpty();
}

void
RdmaMpiSimulatorImpl::ProcessOneEvent()
{
    Scheduler::Event next = m_events->RemoveNext();
    PreEventHook(EventId(next.impl, next.key.m_ts, next.key.m_context, next.key.m_uid));
    NS_ASSERT(next.key.m_ts >= m_currentTs);
    m_unscheduledEvents--;
    m_eventCount++;
    m_currentTs = next.key.m_ts;
    m_currentContext = next.key.m_context;
    m_currentUid = next.key.m_uid;
    next.impl->Invoke();
    next.impl->Unref();
}

void
RdmaMpiSimulatorImpl::Synchronise()
{
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = CpuSeconds();
    const int tag = BATCH_TAG + static_cast<int>(g_stats.windows % 2);
    ++g_stats.windows;
    // 1. This window's batches, one message per destination rank.
    std::fill(m_reduce.begin(), m_reduce.end(), 0);
    for (uint32_t r = 0; r < m_size; ++r)
    {
        if (m_out[r].empty())
        {
            continue;
        }
        m_sending[r].swap(m_out[r]);
        m_out[r].clear();
        MPI_Isend(m_sending[r].data(),
                  static_cast<int>(m_sending[r].size()),
                  MPI_BYTE,
                  static_cast<int>(r),
                  tag,
                  m_comm,
                  &m_requests[r]);
        m_reduce[2 + r] = 1;
        ++g_stats.messagesSent;
        g_stats.bytesSent += m_sending[r].size();
    }
    // 2. Agree on the next window: the LBTS (this rank's next event, or an earlier arrival it
    // just sent), the finished ranks, the batches each rank is to receive.
    const bool finished = IsLocalFinished();
    const int64_t next = finished ? NEVER : static_cast<int64_t>(m_events->PeekNext().key.m_ts);
    m_reduce[0] = std::min(next, m_minArrival);
    m_reduce[1] = finished ? 1 : 0;
    m_minArrival = NEVER;
    MPI_Allreduce(MPI_IN_PLACE,
                  m_reduce.data(),
                  static_cast<int>(m_reduce.size()),
                  MPI_INT64_T,
                  m_op,
                  m_comm);
    const int64_t lbts = m_reduce[0];
    int64_t inFlight = 0;
    for (uint32_t r = 0; r < m_size; ++r)
    {
        inFlight += m_reduce[2 + r];
    }
    // 3. Receive this rank's batches, then hand them on in the order of their sources (their
    // records schedule events under the senders' tie keys, so the order of the calls does not
    // decide the order of the events; a fixed order keeps the uids deterministic too).
    const int64_t expected = m_reduce[2 + m_rank];
    std::vector<bool> got(m_size, false);
    for (int64_t i = 0; i < expected; ++i)
    {
        MPI_Status st;
        MPI_Probe(MPI_ANY_SOURCE, tag, m_comm, &st);
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        const auto src = static_cast<uint32_t>(st.MPI_SOURCE);
        NS_ABORT_MSG_IF(got[src], "RdmaMpiSimulatorImpl: two batches from rank " << src);
        got[src] = true;
        m_in[src].resize(static_cast<size_t>(n));
        MPI_Recv(m_in[src].data(), n, MPI_BYTE, st.MPI_SOURCE, tag, m_comm, MPI_STATUS_IGNORE);
        ++g_stats.messagesReceived;
    }
    for (uint32_t r = 0; r < m_size; ++r)
    {
        if (got[r])
        {
            NS_ABORT_MSG_IF(g_receiver.IsNull(), "RdmaMpiSimulatorImpl: a batch and no receiver");
            g_receiver(r, m_in[r].data(), m_in[r].size());
        }
    }
    MPI_Waitall(static_cast<int>(m_size), m_requests.data(), MPI_STATUSES_IGNORE);
    // 4. The next window.
    m_globalFinished = m_reduce[1] == static_cast<int64_t>(m_size) && inFlight == 0;
    if (lbts == NEVER || m_lookahead == NEVER || lbts > NEVER - m_lookahead)
    {
        m_granted = NEVER;
    }
    else
    {
        m_granted = lbts + m_lookahead;
    }
    g_stats.syncSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    g_stats.syncCpuSeconds += CpuSeconds() - cpu0;
}

void
RdmaMpiSimulatorImpl::Run()
{
    NS_LOG_FUNCTION(this);
    // Every rank sees every link (each builds the whole fabric), so the bounds agree; the
    // minimum over the ranks makes sure.
    int64_t bound = g_lookaheadBound;
    MPI_Allreduce(MPI_IN_PLACE, &bound, 1, MPI_INT64_T, MPI_MIN, m_comm);
    m_lookahead = bound;
    g_stats = Statistics{};
    g_stats.lookaheadTs = m_lookahead;
    m_stop = false;
    m_globalFinished = false;
    m_granted = -1; // synchronise first: batches written during the set-up go out
    const double cpu0 = CpuSeconds();
    while (!m_globalFinished)
    {
        if (!IsLocalFinished() &&
            static_cast<int64_t>(m_events->PeekNext().key.m_ts) <= m_granted)
        {
            ProcessOneEvent();
            continue;
        }
        Synchronise();
    }
    g_stats.runCpuSeconds = CpuSeconds() - cpu0;
}

bool
RdmaMpiSimulatorImpl::IsFinished() const
{
    return m_globalFinished;
}

void
RdmaMpiSimulatorImpl::Stop()
{
    NS_LOG_FUNCTION(this);
    m_stop = true;
}

void
RdmaMpiSimulatorImpl::Stop(const Time& delay)
{
    NS_LOG_FUNCTION(this << delay.GetTimeStep());
    Simulator::Schedule(delay, &Simulator::Stop);
}

EventId
RdmaMpiSimulatorImpl::Schedule(const Time& delay, EventImpl* event)
{
    const Time tAbsolute = delay + TimeStep(m_currentTs);
    NS_ASSERT(tAbsolute.IsPositive());
    Scheduler::Event ev;
    ev.impl = event;
    ev.key.m_ts = static_cast<uint64_t>(tAbsolute.GetTimeStep());
    ev.key.m_context = GetContext();
    ev.key.m_uid = m_uid++;
    m_unscheduledEvents++;
    m_events->Insert(ev);
    return EventId(event, ev.key.m_ts, ev.key.m_context, ev.key.m_uid);
}

void
RdmaMpiSimulatorImpl::ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event)
{
    Scheduler::Event ev;
    ev.impl = event;
    ev.key.m_ts = m_currentTs + delay.GetTimeStep();
    ev.key.m_context = context;
    ev.key.m_uid = m_uid++;
    m_unscheduledEvents++;
    m_events->Insert(ev);
}

EventId
RdmaMpiSimulatorImpl::ScheduleNow(EventImpl* event)
{
    return Schedule(Time(0), event);
}

EventId
RdmaMpiSimulatorImpl::ScheduleDestroy(EventImpl* event)
{
    EventId id(Ptr<EventImpl>(event, false), m_currentTs, 0xffffffff, EventId::UID::DESTROY);
    m_destroyEvents.push_back(id);
    m_uid++;
    return id;
}

Time
RdmaMpiSimulatorImpl::Now() const
{
    return TimeStep(m_currentTs);
}

Time
RdmaMpiSimulatorImpl::GetDelayLeft(const EventId& id) const
{
    if (IsExpired(id))
    {
        return TimeStep(0);
    }
    return TimeStep(id.GetTs() - m_currentTs);
}

void
RdmaMpiSimulatorImpl::Remove(const EventId& id)
{
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        for (auto i = m_destroyEvents.begin(); i != m_destroyEvents.end(); ++i)
        {
            if (*i == id)
            {
                m_destroyEvents.erase(i);
                break;
            }
        }
        return;
    }
    if (IsExpired(id))
    {
        return;
    }
    Scheduler::Event event;
    event.impl = id.PeekEventImpl();
    event.key.m_ts = id.GetTs();
    event.key.m_context = id.GetContext();
    event.key.m_uid = id.GetUid();
    m_events->Remove(event);
    event.impl->Cancel();
    event.impl->Unref();
    m_unscheduledEvents--;
}

void
RdmaMpiSimulatorImpl::Cancel(const EventId& id)
{
    if (!IsExpired(id))
    {
        id.PeekEventImpl()->Cancel();
    }
}

bool
RdmaMpiSimulatorImpl::IsExpired(const EventId& id) const
{
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        if (id.PeekEventImpl() == nullptr || id.PeekEventImpl()->IsCancelled())
        {
            return true;
        }
        for (const EventId& d : m_destroyEvents)
        {
            if (d == id)
            {
                return false;
            }
        }
        return true;
    }
    return id.PeekEventImpl() == nullptr || id.GetTs() < m_currentTs ||
           (id.GetTs() == m_currentTs && id.GetUid() <= m_currentUid) ||
           id.PeekEventImpl()->IsCancelled();
}

Time
RdmaMpiSimulatorImpl::GetMaximumSimulationTime() const
{
    return TimeStep(std::numeric_limits<int64_t>::max());
}

void
RdmaMpiSimulatorImpl::SetScheduler(ObjectFactory schedulerFactory)
{
    NS_LOG_FUNCTION(this << schedulerFactory);
    Ptr<Scheduler> scheduler = schedulerFactory.Create<Scheduler>();
    if (m_events)
    {
        while (!m_events->IsEmpty())
        {
            scheduler->Insert(m_events->RemoveNext());
        }
    }
    m_events = scheduler;
}

uint32_t
RdmaMpiSimulatorImpl::GetSystemId() const
{
    return m_rank;
}

uint32_t
RdmaMpiSimulatorImpl::GetContext() const
{
    return m_currentContext;
}

uint64_t
RdmaMpiSimulatorImpl::GetEventCount() const
{
    return m_eventCount;
}

} // namespace ns3

#endif // NS3_MPI
