/*
 * rdma-lb: congestion control of the RDMA NIC, as the reference runs it (doc/rdma-lb.rst,
 * "Congestion control").
 *
 * One RdmaCongestionControl per NIC, chosen by its TypeId (the NIC's factory attribute
 * CongestionControl; the reference's CC_MODE): ns3::RdmaDcqcn (1, rdma-cc-dcqcn),
 * ns3::RdmaHpcc (3, rdma-cc-hpcc), ns3::RdmaTimely (7, rdma-cc-timely), ns3::RdmaDctcp (8,
 * rdma-cc-dctcp), or this base, ns3::RdmaCongestionControl (0: line rate). The NIC calls it at three points, in the
 * reference's order within one ACK: OnCnp for a CNP-flagged ACK/NACK (DCQCN's only input),
 * then OnAck for every ACK/NACK of an active queue pair (HPCC's INT, TIMELY's RTT, DCTCP's
 * ECN fraction), and Stop when the queue pair completes. Per-queue-pair state lives in the
 * queue pair (RdmaQueuePair::cc, allocated by Start). The per-packet cost is one virtual call
 * per ACK; data packets only read the INT mode (DataIntMode) and the window.
 *
 * Each algorithm is an ns3::Object whose TypeId holds the settings only it uses, as members in
 * its own header (e.g. RdmaDcqcn::RateDecreaseInterval, RdmaHpcc::MiThresh); the settings
 * several algorithms use are attributes of this base class, which their TypeIds inherit
 * (MinRate, RateAI, RateHAI, EwmaGain). Defaults: the table of transport parameters'
 * (RdmaTransportDefault). The NIC creates its algorithm at the first flow with that factory
 * (whose attribute values are the algorithm's: per NIC, or Config::SetDefault) and hands it
 * what the NIC derives rather than configures (RdmaCcContext) in Setup, where an algorithm may
 * turn attribute values into the integers its per-ACK arithmetic reads.
 *
 * Rates are bit/s in uint64_t; like ns-3.19's DataRate arithmetic of the reference, a rate
 * scaled by a double is truncated to an integer.
 */
#ifndef RDMA_CC_H
#define RDMA_CC_H

#include "rdma-header.h"

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>

namespace ns3
{

struct RdmaQueuePair;

/// \ingroup rdma-lb
/// What the NIC derives for its congestion control (no knob: knobs are the algorithms'
/// attributes).
struct RdmaCcContext
{
    uint32_t mtu{};           //!< payload bytes per packet (RdmaNic::PayloadSize; DCTCP's batch)
    bool timeTruncation{};    //!< quirk time-truncation (ns-3.19 DataRate/Time arithmetic)
    bool eventOrderQuirk{};   //!< quirk event-order (DCQCN's periodic events)
    Time feedbackLead;        //!< link delay + one ACK's transmission (event-order quirk)
    uint64_t baseRttNs{};     //!< HPCC's T: RdmaNic::BaseRtt (the reference's maxRtt)
    uint64_t windowBytes{};   //!< HPCC's W: RdmaNic::Window (maxBdp with HAS_WIN, else 0)
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
/// One congestion-control algorithm of a NIC; this base is CC_MODE 0 (line rate, no reaction).
class RdmaCongestionControl : public Object
{
  public:
    /// \return the TypeId: the attributes several algorithms share
    static TypeId GetTypeId();
    RdmaCongestionControl();
    ~RdmaCongestionControl() override;
    RdmaCongestionControl(const RdmaCongestionControl&) = delete;
    RdmaCongestionControl& operator=(const RdmaCongestionControl&) = delete;

    /**
     * Binds the algorithm to its NIC (once, before the first Start; the NIC owns it).
     * Overrides call this first, then derive their integers from their attributes.
     * \param cx what the NIC derives \param host the NIC
     */
    virtual void Setup(const RdmaCcContext& cx, RdmaCcHost& host);

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
    RdmaCcContext m_cx;            //!< what the NIC derives (Setup)
    RdmaCcHost* m_host{nullptr};   //!< the NIC (Setup)
    // Attributes (defaults: the table's, RdmaTransportDefault).
    DataRate m_minRate;            //!< MinRate: MIN_RATE (DCQCN, HPCC, TIMELY, DCTCP)
    DataRate m_rateAi;             //!< RateAI: RATE_AI (DCQCN step; HPCC W_AI; TIMELY)
    DataRate m_rateHai;            //!< RateHAI: RATE_HAI (DCQCN hyper step; TIMELY)
    double m_g{};                  //!< EwmaGain: EWMA_GAIN (DCQCN alpha, DCTCP alpha)
    // The rates above in bit/s (Setup).
    uint64_t m_minRateBps{};       //!< m_minRate
    uint64_t m_rateAiBps{};        //!< m_rateAi
    uint64_t m_rateHaiBps{};       //!< m_rateHai
};

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
