/*
 * rdma-lb: DCQCN, Mellanox variant (CC_MODE 1), as the reference runs it.
 *
 * On a CNP-flagged ACK/NACK: alpha and the rate are cut at the next decrease check
 * (RATE_DECREASE_INTERVAL grid anchored at the queue pair's first CNP), alpha follows an EWMA
 * with gain g every ALPHA_RESUME_INTERVAL, and the rate recovers every RP_TIMER (fast
 * recovery, then additive RATE_AI, then hyper RATE_HAI steps of the target). The reference runs
 * the alpha timer and the decrease check forever after a queue pair's first CNP; here both
 * grids keep the reference's phase but cost no idle events: alpha is brought up to date
 * lazily (periods without a CNP only decay it), and a decrease check is scheduled only while
 * a CNP is pending (EventOrderQuirk: periodic, as the reference). The increase timer stops
 * once further events cannot change the rate (hyper increase at the line rate).
 *
 * Attributes (ns3::RdmaDcqcn): its own AlphaResumeInterval, RateDecreaseInterval, RpTimer,
 * FastRecoveryTimes, ClampTargetRate, RateOnFirstCnp; MinRate, RateAI, RateHAI, EwmaGain of
 * RdmaCongestionControl.
 */
#ifndef RDMA_CC_DCQCN_H
#define RDMA_CC_DCQCN_H

#include "rdma-cc.h"

#include "ns3/event-id.h"

namespace ns3
{

/// \ingroup rdma-lb
/// DCQCN (Mellanox variant).
class RdmaDcqcn : public RdmaCongestionControl
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    void Start(RdmaQueuePair& qp) override;
    void OnCnp(RdmaQueuePair& qp) override;
    void Stop(RdmaQueuePair& qp) override;

    /// Per-queue-pair DCQCN state.
    struct State : RdmaCcState
    {
        uint64_t targetRate{0};      //!< target rate (bit/s)
        double alpha{1.0};           //!< alpha
        bool alphaCnpSeen{false};    //!< a CNP arrived in the current alpha period
        bool decreaseCnpSeen{false}; //!< a CNP arrived since the last decrease check
        bool firstCnpSeen{false};    //!< the first CNP has arrived (grids started)
        Time firstCnp;               //!< time of the first CNP (origin of the grids)
        uint64_t alphaTicks{0};      //!< alpha periods already applied
        uint32_t stage{0};           //!< rate-increase stage
        EventId decreaseEvent;       //!< pending decrease check
        EventId increaseEvent;       //!< pending rate-increase event
    };

  private:
    /// Brings alpha up to date: every alpha tick up to now (but the one at this very instant
    /// if \p tickNowPending) is applied.
    void AdvanceAlpha(State& s, bool tickNowPending = false) const;
    void Decrease(uint16_t qpn);
    void Increase(uint16_t qpn);

    // Attributes (defaults: the table's, RdmaTransportDefault).
    Time m_alphaResumeInterval;      //!< AlphaResumeInterval: alpha update period
    Time m_rateDecreaseInterval;     //!< RateDecreaseInterval: rate-decrease check period
    Time m_rpTimer;                  //!< RpTimer: rate-increase timer
    uint32_t m_fastRecoveryTimes{};  //!< FastRecoveryTimes: fast-recovery stages
    bool m_clampTargetRate{};        //!< ClampTargetRate: a cut sets the target to the rate
    double m_rateOnFirstCnp{};       //!< RateOnFirstCnp: rate kept on a queue pair's first CNP
};

} // namespace ns3

#endif /* RDMA_CC_DCQCN_H */
