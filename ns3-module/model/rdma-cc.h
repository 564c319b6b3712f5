/*
 * rdma-lb: congestion control of the RDMA NIC, as the reference runs it (doc/rdma-lb.rst,
 * "Congestion control").
 *
 * One RdmaCongestionControl per NIC, chosen by RdmaNic::CcMode (the reference's CC_MODE):
 * DCQCN (1, rdma-cc-dcqcn), HPCC (3, rdma-cc-hpcc), TIMELY (7, rdma-cc-timely), DCTCP (8,
 * rdma-cc-dctcp), or none (0: line rate). The NIC calls it at three points, in the
 * reference's order within one ACK: OnCnp for a CNP-flagged ACK/NACK (DCQCN's only input),
 * then OnAck for every ACK/NACK of an active queue pair (HPCC's INT, TIMELY's RTT, DCTCP's
 * ECN fraction), and Stop when the queue pair completes. Per-queue-pair state lives in the
 * queue pair (RdmaQueuePair::cc, allocated by Start). The per-packet cost is one virtual call
 * per ACK; data packets only read the INT mode (DataIntMode) and the window.
 *
 * Rates are bit/s in uint64_t; like ns-3.19's DataRate arithmetic of the reference, a rate
 * scaled by a double is truncated to an integer.
 */
#ifndef RDMA_CC_H
#define RDMA_CC_H

#include "rdma-header.h"

#include "ns3/nstime.h"

#include <cstdint>
#include <memory>

namespace ns3
{

struct RdmaQueuePair;

/// \ingroup rdma-lb
/// Congestion control of a NIC (the reference's CC_MODE numbers).
enum RdmaCcMode
{
    RDMA_CC_NONE = 0,   //!< line rate, no reaction
    RDMA_CC_DCQCN = 1,  //!< DCQCN, Mellanox variant
    RDMA_CC_HPCC = 3,   //!< HPCC
    RDMA_CC_TIMELY = 7, //!< TIMELY
    RDMA_CC_DCTCP = 8,  //!< rate-based DCTCP
};

/// \ingroup rdma-lb
/// The parameters of every algorithm: the NIC's attribute values (their defaults are the
/// attributes'; none is repeated here), each algorithm reads its own.
struct RdmaCcParams
{
    // Shared.
    uint64_t minRateBps{};   //!< MIN_RATE (DCQCN, HPCC, TIMELY, DCTCP)
    uint64_t rateAiBps{};    //!< RATE_AI (DCQCN additive step; HPCC W_AI; TIMELY increase)
    uint64_t rateHaiBps{};   //!< RATE_HAI (DCQCN hyper step; TIMELY after 5 increases)
    double g{};              //!< EWMA_GAIN (DCQCN alpha, DCTCP alpha)
    uint32_t mtu{};       //!< payload bytes per packet (DCTCP's batch size)
    bool timeTruncation{}; //!< quirk time-truncation (ns-3.19 DataRate/Time arithmetic)
    bool eventOrderQuirk{}; //!< quirk event-order (DCQCN's periodic events)
    Time feedbackLead;        //!< link delay + one ACK's transmission (event-order quirk)
    // DCQCN.
    Time alphaResumeInterval; //!< ALPHA_RESUME_INTERVAL
    Time rateDecreaseInterval; //!< RATE_DECREASE_INTERVAL
    Time rpTimer;             //!< RP_TIMER
    uint32_t fastRecoveryTimes{}; //!< FAST_RECOVERY_TIMES
    bool clampTargetRate{};   //!< CLAMP_TARGET_RATE
    double rateOnFirstCnp{};    //!< RateOnFirstCnp
    // HPCC.
    double targetUtil{};   //!< U_TARGET (eta)
    uint32_t miThresh{};      //!< MI_THRESH
    bool fastReact{};     //!< FAST_REACT
    bool multiRate{};     //!< MULTI_RATE
    bool sampleFeedback{}; //!< SAMPLE_FEEDBACK
    uint32_t intMulti{};      //!< INT_MULTI
    uint64_t baseRttNs{};     //!< T: the base RTT (the reference's maxRtt, GLOBAL_T 1)
    uint64_t windowBytes{};   //!< W: the window (maxBdp with HAS_WIN, else 0)
    // TIMELY.
    double timelyAlpha{}; //!< EWMA weight of a new RTT difference
    double timelyBeta{};    //!< multiplicative decrease factor
    uint64_t timelyTLowNs{};   //!< below: always increase
    uint64_t timelyTHighNs{}; //!< above: decrease
    uint64_t timelyMinRttNs{}; //!< gradient normaliser
    // DCTCP.
    uint64_t dctcpRateAiBps{}; //!< DCTCP_RATE_AI
};

/// \ingroup rdma-lb
/// Per-queue-pair state of one algorithm (each derives its own).
struct RdmaCcState
{
    virtual ~RdmaCcState() = default;
};

/// \ingroup rdma-lb
/// What a congestion control may ask of its NIC.
class RdmaCcHost
{
  public:
    virtual ~RdmaCcHost() = default;
    /// \return the line rate of the NIC's port (bit/s)
    virtual uint64_t CcLineRate() const = 0;
    /**
     * Sets the sending rate of \p qp. With \p shiftPacing (the reference's ChangeRate, used
     * by HPCC) the next send time moves by the difference of the last packet's transmission
     * time at the new and the old rate, and a pending wake-up of the port is moved earlier
     * if the queue pair may now send sooner.
     */
    virtual void CcSetRate(RdmaQueuePair& qp, uint64_t bps, bool shiftPacing) = 0;
    /// \return the active queue pair numbered \p qpn (nullptr once it completed)
    virtual RdmaQueuePair* CcFindQp(uint16_t qpn) = 0;
};

/// \ingroup rdma-lb
/// One congestion-control algorithm of a NIC.
class RdmaCongestionControl
{
  public:
    /// \param p parameters \param host the NIC
    RdmaCongestionControl(const RdmaCcParams& p, RdmaCcHost& host);
    virtual ~RdmaCongestionControl();
    RdmaCongestionControl(const RdmaCongestionControl&) = delete;
    RdmaCongestionControl& operator=(const RdmaCongestionControl&) = delete;

    /// \return the INT the queue pairs' data packets carry
    virtual RdmaHeader::IntMode DataIntMode() const;
    /// A new queue pair, at the line rate: create its state.
    virtual void Start(RdmaQueuePair& qp);
    /// A CNP-flagged ACK/NACK (or a NIC-SR NACK) for \p qp.
    virtual void OnCnp(RdmaQueuePair& qp);
    /// Any ACK/NACK \p ack of active \p qp, after the sender's sequence bookkeeping.
    virtual void OnAck(RdmaQueuePair& qp, const RdmaHeader& ack);
    /// \p qp completed (or the NIC is disposed): cancel its events.
    virtual void Stop(RdmaQueuePair& qp);

  protected:
    const RdmaCcParams m_p; //!< parameters
    RdmaCcHost& m_host;     //!< the NIC
};

/// \return the algorithm of \p mode (nullptr-free: RDMA_CC_NONE gives the no-op base)
std::unique_ptr<RdmaCongestionControl> CreateRdmaCongestionControl(RdmaCcMode mode,
                                                                   const RdmaCcParams& p,
                                                                   RdmaCcHost& host);

/**
 * \return the window of VAR_WIN (the reference's RdmaQueuePair::GetWin): \p window bytes scaled
 * by \p rate over \p lineRate, in integers, at least 1 B
 */
uint64_t RdmaVarWindow(uint64_t window, uint64_t rate, uint64_t lineRate);

/// \return \p rate x \p c truncated to whole bit/s (ns-3.19's DataRate * double)
uint64_t RdmaScaleRate(uint64_t rate, double c);
/// \return \p rate / \p c truncated to whole bit/s (ns-3.19's DataRate / double)
uint64_t RdmaDivideRate(uint64_t rate, double c);

} // namespace ns3

#endif /* RDMA_CC_H */
