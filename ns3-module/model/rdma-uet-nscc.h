/*
 * rdma-lb: NSCC, the Ultra Ethernet transport's sender-based congestion control, as the Ultra
 * Ethernet Consortium's htsim runs it (ultraethernet/uet-htsim, htsim/sim/uec.cpp: UecSrc::
 * initNsccParams, updateCwndOnAck_NSCC, updateCwndOnNack_NSCC, quick_adapt, update_delay;
 * UEC Specification 1.0, the NSCC section, describes the same 2 x 2 rule). Our own code, from
 * that simulator's behaviour (doc/rdma-lb.rst, "NSCC").
 *
 * A window in wire bytes, moved on every ACK by the ACK's ECN echo and its queuing delay
 * (RTT - base RTT) against a target delay:
 *
 *   no ECN, delay >= target   fair increase:         inc += Fi x newly acked bytes
 *   no ECN, delay <  target   proportional increase: inc += alpha x newly x (target - delay)
 *                             (or, with the delay under 1 us for a whole window, a fast
 *                             increase: window += newly x FiScale at once)
 *   ECN,    delay >= target   multiplicative decrease, at most once per base RTT:
 *                             window x max(1 - 0.8 (avgDelay - target) / avgDelay, 0.5)
 *                             when the averaged delay is above the target
 *   ECN,    delay <  target   nothing (the path is congested, not the flow: the load
 *                             balancer moves it)
 *
 * The increases accumulate in `inc` and land every 8 MTU of acknowledged bytes or once per
 * network RTT ("fulfill"): window += inc / window, plus Eta once per network RTT. Quick adapt:
 * at the end of each window of (base RTT + target), if a loss, a NACK or a delay above
 * 4 x target was seen and the bytes delivered in it are below maxWindow / 2^QaGate, the window
 * becomes those bytes and the feedback of the bytes then in flight is ignored. A NACK (trim)
 * cuts the packet's bytes and asks for a quick adapt; a timeout cuts the packet's bytes.
 * Scaling with the fabric: a = network BDP / 150,000 B (100 Gbps x 12 us), b = target / 12 us;
 * alpha = 4 MSS a b / target, Fi = 5 MSS a, Eta = 0.15 MSS a, FiScale = 0.25 a. Base RTT: the
 * network's largest unloaded RTT, lowered to the smallest RTT sampled; maxWindow = 1.5 x BDP of
 * the base RTT; the window starts at maxWindow (or the configured initial window).
 *
 * Arithmetic as htsim's: times in integer picoseconds, the window and the byte counters
 * integers, each double product truncated where htsim stores it in an integer (the increase
 * accumulator is 32 bits, as there).
 *
 * Deviations: our receiver answers every data packet (htsim's coalesces ACKs to one per 16 KiB
 * and one per ECN-marked packet), so the rule runs per packet with that packet's RTT and mark;
 * the rules are linear in the acknowledged bytes, so an RTT's sum is the same. The htsim
 * load balancer's entropy feedback is the load balancer's here (REPS, spraying, ...).
 */
#ifndef RDMA_UET_NSCC_H
#define RDMA_UET_NSCC_H

#include <cstdint>

namespace ns3
{

/// \ingroup rdma-lb
/// NSCC's settings, derived once per NIC from the fabric (htsim UecSrc::initNsccParams).
struct RdmaUetNsccParams
{
    uint64_t networkRttPs{0}; //!< the fabric's largest unloaded RTT (also the fulfill period)
    uint64_t targetPs{0};     //!< target queuing delay
    uint64_t lineRateBps{0};  //!< the NIC's rate
    int64_t mtuBytes{0};      //!< one full packet on the wire (the window's floor)
    double alpha{0};          //!< proportional gain, bytes per acked byte per ps of headroom
    double fi{0};             //!< fair increase per acked byte (summed, divided by the window)
    double eta{0};            //!< additive bytes once per network RTT
    double fiScale{0};        //!< fast increase, fraction of the acked bytes
    double gamma{0.8};        //!< multiplicative decrease gain
    double delayAlpha{0.0125}; //!< gain of the delay average
    uint32_t qaGate{3};       //!< quick adapt when delivered < maxWindow >> qaGate
    uint64_t qaThresholdPs{0}; //!< quick adapt also on a delay above this (4 x target)
    int64_t adjustBytes{0};   //!< fulfill every this many acknowledged bytes (8 MTU)

    /**
     * htsim's derivation.
     * \param networkRttPs the fabric's largest unloaded RTT
     * \param lineRateBps the NIC's rate
     * \param mtuBytes one full packet on the wire; \param mssBytes its payload
     * \param targetPs the target delay, 0 = 0.75 x network RTT with trimming, 1 x without
     * \param trimming whether the switches trim
     * \param qaGate quick adapt's gate
     */
    static RdmaUetNsccParams Derive(uint64_t networkRttPs,
                                    uint64_t lineRateBps,
                                    int64_t mtuBytes,
                                    int64_t mssBytes,
                                    uint64_t targetPs,
                                    bool trimming,
                                    uint32_t qaGate);
};

/// \ingroup rdma-lb
/// NSCC's state of one queue pair (htsim UecSrc's NSCC members).
class RdmaUetNscc
{
  public:
    /// A new queue pair: base RTT = the network's, window = maxWindow or \p initialBytes (> 0).
    RdmaUetNscc(const RdmaUetNsccParams& p, int64_t initialBytes);

    /**
     * An ACK newly acknowledging \p newlyBytes wire bytes at \p nowPs, of a packet whose RTT
     * was \p rawRttPs (0 = no valid sample) and which carried CE when \p ecn, leaving
     * \p inflightBytes in flight (htsim UecSrc::processAck's NSCC part).
     */
    void OnAck(const RdmaUetNsccParams& p,
               uint64_t nowPs,
               int64_t newlyBytes,
               uint64_t rawRttPs,
               bool ecn,
               int64_t inflightBytes);
    /// A NACK of a trimmed packet of \p bytes whose RTT was \p rawRttPs, with
    /// \p inflightBytes in flight before it leaves them (updateCwndOnNack_NSCC). Without
    /// \p cutWindow (RCCC on and the trim at the last hop) everything but the window cut.
    void OnNack(const RdmaUetNsccParams& p,
                uint64_t nowPs,
                int64_t bytes,
                uint64_t rawRttPs,
                int64_t inflightBytes,
                bool cutWindow = true);
    /// A packet of \p bytes timed out (mark_packet_for_retransmission).
    void OnTimeout(const RdmaUetNsccParams& p, int64_t bytes);

    /// \return the window (wire bytes)
    int64_t Window() const
    {
        return m_cwnd;
    }

    /// \return the window's cap (1.5 x the base RTT's BDP)
    int64_t MaxWindow() const
    {
        return m_maxWnd;
    }

    /// \return the base RTT (ps)
    uint64_t BaseRttPs() const
    {
        return m_baseRttPs;
    }

    /// \return the averaged queuing delay (ps)
    uint64_t AvgDelayPs() const
    {
        return m_avgDelayPs;
    }

  private:
    void UpdateBaseRtt(const RdmaUetNsccParams& p, uint64_t rawRttPs);
    void UpdateDelay(const RdmaUetNsccParams& p, uint64_t rawRttPs, bool ecn);
    bool QuickAdapt(const RdmaUetNsccParams& p,
                    uint64_t nowPs,
                    bool isLoss,
                    bool skip,
                    uint64_t delayPs,
                    int64_t inflightBytes);
    void ProportionalIncrease(const RdmaUetNsccParams& p, int64_t newly, uint64_t delayPs);
    void FastIncrease(const RdmaUetNsccParams& p, int64_t newly, uint64_t delayPs);
    void MultiplicativeDecrease(const RdmaUetNsccParams& p, uint64_t nowPs);
    void Fulfill(const RdmaUetNsccParams& p, uint64_t nowPs);
    void Bound(const RdmaUetNsccParams& p);

    int64_t m_cwnd{0};
    int64_t m_maxWnd{0};
    uint64_t m_baseRttPs{0};
    uint64_t m_avgDelayPs{0};
    int64_t m_achievedBytes{0}; //!< delivered in the current quick-adapt window
    int64_t m_receivedBytes{0}; //!< acknowledged since the last fulfill
    uint32_t m_fiCount{0};      //!< bytes acknowledged with a delay under 1 us in a row
    uint32_t m_bytesToIgnore{0};
    uint32_t m_bytesIgnored{0};
    uint32_t m_incBytes{0};     //!< the increases accumulated (htsim's 32-bit _inc_bytes)
    bool m_triggerQa{false};
    bool m_increase{false};     //!< in fast increase
    uint64_t m_qaEndPs{0};
    uint64_t m_lastAdjustPs{0};
    uint64_t m_lastDecPs{0};
};

} // namespace ns3

#endif /* RDMA_UET_NSCC_H */
