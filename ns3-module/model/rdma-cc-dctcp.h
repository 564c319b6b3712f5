/*
 * rdma-lb: rate-based DCTCP (CC_MODE 8), as the reference runs it.
 *
 * Per ACK: count CNP flags (ECN marks, and out-of-order NACKs under NackCarriesCnp). Once per
 * window (an ACK beyond the sequence recorded at the last update): alpha := (1 - g) alpha +
 * g min(1, marks / batch), with batch = (snd_nxt - ack) / MTU + 1 packets (the first window
 * only records snd_nxt). A CNP outside CWR cuts the rate to max(MIN_RATE, rate (1 - alpha/2))
 * and enters CWR until an ACK passes the snd_nxt of the cut; outside CWR each new window adds
 * DCTCP_RATE_AI (at most the line rate). alpha starts at 1. The rate paces sending; run.py
 * also turns the window on (HAS_WIN, VAR_WIN) for DCTCP.
 *
 * Attributes (ns3::RdmaDctcp): its own DctcpRateAI; MinRate and EwmaGain of
 * RdmaCongestionControl.
 */
#ifndef RDMA_CC_DCTCP_H
#define RDMA_CC_DCTCP_H

#include "rdma-cc.h"

namespace ns3
{

/// \ingroup rdma-lb
/// Rate-based DCTCP.
class RdmaDctcp : public RdmaCongestionControl
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    void Setup(const RdmaCcContext& cx, RdmaCcHost& host) override;
    void Start(RdmaQueuePair& qp) override;
    void OnAck(RdmaQueuePair& qp, const RdmaHeader& ack) override;

    /// Per-queue-pair DCTCP state.
    struct State : RdmaCcState
    {
        uint64_t lastUpdateSeq{0}; //!< snd_nxt at the last alpha update (0 = none yet)
        bool cwr{false};           //!< in CWR after a cut
        uint64_t highSeq{0};       //!< snd_nxt at the cut (CWR ends past it)
        double alpha{1.0};         //!< marked fraction EWMA
        uint64_t ecnCount{0};      //!< CNP-flagged ACKs in this window
        uint64_t batch{0};         //!< packets in this window
    };

  private:
    DataRate m_dctcpRateAi;        //!< attribute DctcpRateAI (default: the table's)
    uint64_t m_dctcpRateAiBps{};   //!< m_dctcpRateAi in bit/s (Setup)
};

} // namespace ns3

#endif /* RDMA_CC_DCTCP_H */
