/*
 * rdma-lb: HPCC (CC_MODE 3; HPCC SIGCOMM'19 Alg. 1), as the
 * reference runs it.
 *
 * Data packets carry INT (rdma-int.h); every switch egress appends a record; the receiver
 * echoes them in the ACK. The sender keeps the records of its last reference update per hop
 * and, for each hop of a new ACK:
 *   txRate = (bytes now - bytes then) x 8 / (time now - time then)
 *   u      = txRate / C + min(qlen now, qlen then) x maxRate / (C x W)
 * (C the hop's line rate, maxRate the NIC's, W the window, i.e. the largest BDP).
 * MULTI_RATE 0: U = the largest u, tau = its time difference (capped at T, the base RTT);
 * U_qp := (U_qp (T - tau) + U tau) / T; c = U_qp / eta; c >= 1 or stage >= MI_THRESH:
 * R = Rc / c + W_AI and stage 0, else R = Rc + W_AI and stage + 1; R in [MIN_RATE, line].
 * MULTI_RATE 1: the same per hop with its own u, Rc and stage; R = the smallest.
 * A reference update (Rc, stage, the snapshot's sequence := snd_nxt) happens on the first ACK
 * beyond the sequence of the last one (once per RTT); other ACKs change only the rate, and
 * only with FAST_REACT (with SAMPLE_FEEDBACK skipping hops whose queue is empty). The first
 * ACK of a queue pair only records the INT. W_AI is RATE_AI. A rate change re-times the
 * pending send (RdmaCcHost::CcSetRate with shiftPacing). With HAS_WIN and VAR_WIN (run.py's
 * HPCC settings) the NIC's window is W x rate / line rate.
 * Floating point as the reference's binary computes it: built with -O3 -march=native, it fuses
 * the EWMA's a x b + c x d into one fused multiply-add (rounded once); std::fma does the same
 * here, so the same ACKs give the same rates to the bit.
 *
 * Attributes (ns3::RdmaHpcc): its own TargetUtil, MiThresh, FastReact, MultiRate,
 * SampleFeedback, IntMulti; MinRate and RateAI of RdmaCongestionControl. T and W are the NIC's
 * BaseRtt and Window (RdmaCcContext).
 */
#ifndef RDMA_CC_HPCC_H
#define RDMA_CC_HPCC_H

#include "rdma-cc.h"
#include "rdma-int.h"

namespace ns3
{

/// \ingroup rdma-lb
/// HPCC.
class RdmaHpcc : public RdmaCongestionControl
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    RdmaHeader::IntMode DataIntMode() const override;
    void Start(RdmaQueuePair& qp) override;
    void OnAck(RdmaQueuePair& qp, const RdmaHeader& ack) override;

    /// Per-hop state of MULTI_RATE.
    struct Hop
    {
        double u{1};          //!< utilisation EWMA
        uint64_t rc{0};       //!< reference rate
        uint32_t incStage{0}; //!< additive steps since the last multiplicative one
    };

    /// Per-queue-pair HPCC state.
    struct State : RdmaCcState
    {
        uint64_t lastUpdateSeq{0}; //!< snd_nxt at the last reference update (0 = none yet)
        uint64_t curRate{0};       //!< Rc (one rate)
        uint32_t incStage{0};      //!< additive steps since the last multiplicative one
        double u{1};               //!< utilisation EWMA (one rate)
        uint64_t hop[RdmaIntHop::MAX_HOPS]{}; //!< the INT records of the last update
        Hop hops[RdmaIntHop::MAX_HOPS];       //!< MULTI_RATE state
    };

  private:
    void Update(RdmaQueuePair& qp, State& s, const RdmaHeader& ack, bool fastReact);

    // Attributes (defaults: the table's, RdmaTransportDefault).
    double m_targetUtil{};   //!< TargetUtil: U_TARGET (eta)
    uint32_t m_miThresh{};   //!< MiThresh: MI_THRESH
    bool m_fastReact{};      //!< FastReact: FAST_REACT
    bool m_multiRate{};      //!< MultiRate: MULTI_RATE
    bool m_sampleFeedback{}; //!< SampleFeedback: SAMPLE_FEEDBACK
    uint32_t m_intMulti{};   //!< IntMulti: INT_MULTI (as the switches')
};

} // namespace ns3

#endif /* RDMA_CC_HPCC_H */
