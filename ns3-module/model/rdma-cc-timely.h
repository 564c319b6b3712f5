/*
 * rdma-lb: TIMELY (CC_MODE 7), as the reference runs it.
 *
 * Data packets carry their send time (8 B of INT); the ACK echoes it, so each ACK gives an
 * RTT. Once per RTT (an ACK beyond the sequence recorded at the last update; the first one
 * only records snd_nxt and the RTT): diff := (1 - a) diff + a (rtt - last rtt), gradient =
 * diff / minRTT; rtt < T_low, or T_low <= rtt <= T_high with gradient <= 0: increase by RATE_AI
 * (RATE_HAI from the 6th consecutive increase), at most the line rate; rtt > T_high:
 * rate x (1 - b (1 - T_high / rtt)); else rate x max(0, 1 - b gradient); at least MIN_RATE.
 * Parameters: a = 0.875, b = 0.8, T_low = 50 us, T_high = 500 us, minRTT = 20 us.
 *
 * Attributes (ns3::RdmaTimely): its own TimelyAlpha, TimelyBeta, TimelyTLow, TimelyTHigh,
 * TimelyMinRtt (defaults: the values above); MinRate, RateAI, RateHAI of RdmaCongestionControl.
 */
#ifndef RDMA_CC_TIMELY_H
#define RDMA_CC_TIMELY_H

#include "rdma-cc.h"

namespace ns3
{

/// \ingroup rdma-lb
/// TIMELY (RTT gradient).
class RdmaTimely : public RdmaCongestionControl
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    void Setup(const RdmaCcContext& cx, RdmaCcHost& host) override;
    RdmaHeader::IntMode DataIntMode() const override;
    void Start(RdmaQueuePair& qp) override;
    void OnAck(RdmaQueuePair& qp, const RdmaHeader& ack) override;

    /// Per-queue-pair TIMELY state.
    struct State : RdmaCcState
    {
        uint64_t lastUpdateSeq{0}; //!< snd_nxt at the last update (0 = none yet)
        uint64_t curRate{0};       //!< rate of the last update
        uint32_t incStage{0};      //!< consecutive increases
        uint64_t lastRtt{0};       //!< RTT at the last update (ns)
        double rttDiff{0};         //!< EWMA of RTT differences (ns)
    };

  private:
    // Attributes.
    double m_alpha{}; //!< TimelyAlpha: EWMA weight of a new RTT difference
    double m_beta{};  //!< TimelyBeta: multiplicative decrease factor
    Time m_tLow;      //!< TimelyTLow: RTT below which the rate always increases
    Time m_tHigh;     //!< TimelyTHigh: RTT above which the rate decreases
    Time m_minRtt;    //!< TimelyMinRtt: the RTT that normalises the gradient
    // The times above in ns (Setup).
    uint64_t m_tLowNs{};   //!< m_tLow
    uint64_t m_tHighNs{};  //!< m_tHigh
    uint64_t m_minRttNs{}; //!< m_minRtt
};

} // namespace ns3

#endif /* RDMA_CC_TIMELY_H */
