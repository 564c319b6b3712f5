/*
 * rdma-lb: RCCC, the Ultra Ethernet transport's receiver-credit congestion control, as the
 * Ultra Ethernet Consortium's htsim runs it (ultraethernet/uet-htsim, htsim/sim/uec.cpp:
 * UecSrc::computePullTarget, handlePull, stopSpeculating, sendRTS; UecSink::handlePullTarget,
 * pull; UecPullPacer::doNextEvent). Our own code, from that simulator's behaviour
 * (doc/rdma-lb.rst, "RCCC").
 *
 * Credit is counted in quanta of 256 B. Each receiver NIC runs one pull pacer, shared by every
 * flow it receives: it grants CreditPerPull bytes (16 KiB, htsim's 4 x 4096 B whatever the
 * MTU) to one flow at a time, round robin, never beyond what that flow asked for (its pull
 * target), and waits (time per quantum) x (quanta granted, at least 4) before the next grant,
 * with time per quantum = 8 x 256 B / line rate / PullRate (0.99): credit flows at 0.99 x
 * the receiver's line rate. A flow whose demand is met moves to an idle list; with no flow
 * asking, idle flows get unsolicited 16 KiB grants (slow pulls) until each holds the window
 * cap (1.5 BDP) of grants beyond its target.
 *
 * The sender starts with the window cap's worth of speculative credit (1.5 BDP), and drops
 * what is left of it at the first ACK, NACK or pull ("stop speculating"); afterwards it sends
 * only on granted credit, while credit > 0 (a packet may take it below zero). Each data
 * packet carries its pull target: the bytes it still wants (new + queued resends, at most
 * window + MTU with NSCC on, at most the cap) minus its credit (at least one MTU while still
 * speculating with data left), added to the grants so far, rounded up to a quantum. After a
 * retransmission timeout without credit the sender sends an RTS (a header carrying its pull
 * target) so that the receiver pulls it again.
 *
 * Deviations (doc/rdma-lb.rst, "RCCC"): the pull target is not divided by the number of
 * other flows waiting on the sender's NIC (htsim's activeSources; every case compared has
 * one sending flow per NIC); an RTS takes no sequence number and is not ACKed (the pull it
 * triggers stops the speculation and grants credit, what htsim's ACK of it and the pull
 * after it do); the receiver's OversubscribedCC and PCIe model are not modelled.
 */
#ifndef RDMA_UET_RCCC_H
#define RDMA_UET_RCCC_H

#include <cstdint>
#include <deque>

namespace ns3
{

/// \ingroup rdma-lb
/// RCCC's settings (htsim's constants and the NIC's rate).
struct RdmaUetRcccParams
{
    static constexpr int64_t QUANTUM_BYTES = 256;     //!< credit unit (UEC_PULL_QUANTUM)
    static constexpr uint64_t INIT_PULL = 100000000;  //!< first pull number (htsim's INIT_PULL)
    static constexpr uint64_t MIN_GAP_QUANTA = 1024 / 256; //!< pacer gap of an empty grant
    uint64_t creditPerPullQuanta{64}; //!< quanta per grant (htsim's 16 KiB)
    uint64_t timePerQuantumPs{0};     //!< pacer time per quantum granted
    int64_t maxWindowBytes{0};        //!< the cap: speculative credit, credit and request cap
    int64_t mtuBytes{0};              //!< one full packet on the wire

    /**
     * htsim's derivation (UecPullPacer's constructor).
     * \param lineRateBps the NIC's rate \param pullRate the pacer's fraction of it (0.99)
     * \param creditPerPullBytes bytes per grant \param maxWindowBytes the window cap
     * \param mtuBytes one full packet on the wire
     */
    static RdmaUetRcccParams Derive(uint64_t lineRateBps,
                                    double pullRate,
                                    uint64_t creditPerPullBytes,
                                    int64_t maxWindowBytes,
                                    int64_t mtuBytes);

    /// \return \p bytes in quanta, rounded up (quantize_ceil)
    static int64_t QuantizeCeil(int64_t bytes)
    {
        return (bytes + QUANTUM_BYTES - 1) / QUANTUM_BYTES;
    }
};

/// \ingroup rdma-lb
/// RCCC's sender state of one queue pair (htsim UecSrc's credit members).
class RdmaUetRcccSender
{
  public:
    /// A new queue pair: speculative credit of the window cap.
    explicit RdmaUetRcccSender(const RdmaUetRcccParams& p);

    /// \return whether credit allows a packet (credit > 0; can_send_RCCC)
    bool CanSend() const
    {
        return m_credit > 0;
    }

    /// Spends \p wireBytes of credit on a packet (spendCredit).
    void Spend(int64_t wireBytes)
    {
        m_credit -= wireBytes;
    }

    /// The first ACK, NACK or pull: any speculative credit left is dropped.
    void StopSpeculating();

    /// A pull numbered \p pullNo: credit += the quanta beyond the last one, at most the cap.
    void OnPull(const RdmaUetRcccParams& p, uint64_t pullNo);

    /**
     * The pull target a packet carries (computePullTarget), kept for an RTS.
     * \param backlogBytes new bytes still to send, headers included
     * \param rtxBytes queued resends, headers included
     * \param nscc whether NSCC runs too (then at most \p windowBytes + MTU)
     * \param windowBytes NSCC's window
     * \return the target, in quanta
     */
    uint64_t PullTarget(const RdmaUetRcccParams& p,
                        int64_t backlogBytes,
                        int64_t rtxBytes,
                        bool nscc,
                        int64_t windowBytes);

    /// \return the credit (bytes; may be negative)
    int64_t Credit() const
    {
        return m_credit;
    }

    /// \return whether the speculative credit is still in use
    bool Speculating() const
    {
        return m_speculating;
    }

    /// \return the last pull target computed (what an RTS carries)
    uint64_t LastPullTarget() const
    {
        return m_pullTarget;
    }

    /// \return the highest pull number seen
    uint64_t Pulled() const
    {
        return m_pull;
    }

  private:
    int64_t m_credit{0};
    uint64_t m_pull{RdmaUetRcccParams::INIT_PULL};
    uint64_t m_pullTarget{RdmaUetRcccParams::INIT_PULL};
    bool m_speculating{true};
};

/// \ingroup rdma-lb
/// RCCC's receiver state of one incoming flow (htsim UecSink's pull members).
struct RdmaUetRcccSink
{
    uint64_t latestPull{RdmaUetRcccParams::INIT_PULL};    //!< pull number granted so far
    uint64_t highestTarget{RdmaUetRcccParams::INIT_PULL}; //!< highest pull target seen
    bool inPull{false};     //!< in the pacer's active list (or asked to be)
    bool inSlowPull{false}; //!< in the pacer's idle list
    uint16_t entropy{0};    //!< the pulls' entropy counter (UecSink::nextEntropy)

    /// \return quanta asked for and not granted yet
    uint64_t Backlog() const
    {
        return highestTarget > latestPull ? highestTarget - latestPull : 0;
    }

    /// \return quanta granted beyond the target (slow pulls)
    uint64_t SlowCredit() const
    {
        return latestPull > highestTarget ? latestPull - highestTarget : 0;
    }

    /// A packet carrying pull target \p pt: \return whether the flow must join the active
    /// list (the target advanced and it is not in it; handlePullTarget). Marks it in.
    bool OnPullTarget(uint64_t pt);

    /// A trimmed packet or an RTS: the flow is pulled again whatever its target.
    /// \return whether it must join the active list (it is not in it). Marks it in.
    bool Repull()
    {
        const bool join = !inPull;
        inPull = true;
        return join;
    }

    /// The pacer grants: \p slowQuanta of unsolicited credit when > 0, else up to
    /// CreditPerPull towards the target. \return the quanta granted; latestPull is the new
    /// pull number (UecSink::pull)
    uint64_t Grant(const RdmaUetRcccParams& p, uint64_t slowQuanta);
};

/**
 * \ingroup rdma-lb
 * The pull pacer of one receiver NIC (htsim UecPullPacer): round robin over the flows that
 * ask for credit, slow pulls for idle ones. Flows are named by a key (K, copyable,
 * comparable); the caller keeps their RdmaUetRcccSink and sends the pulls.
 */
template <typename K>
class RdmaUetPullPacer
{
  public:
    /// One grant of NextPull.
    struct Pull
    {
        K flow{};              //!< who gets it
        uint64_t pullNo{0};    //!< its pull number
        bool slow{false};      //!< unsolicited (slow pull)
        uint64_t gapPs{0};     //!< time until the pacer's next grant
    };

    /// Flow \p k (whose sink's inPull is set) asks for credit. \return whether the pacer was
    /// idle (the caller then runs NextPull now)
    bool Request(const K& k)
    {
        m_active.push_back(k);
        const bool wasIdle = !m_running;
        m_running = true;
        return wasIdle;
    }

    /// \return whether the pacer has no flow in either list
    bool Empty() const
    {
        return m_active.empty() && m_idle.empty();
    }

    /// The pacer's event: the next grant, with \p sinkOf(k) the flow's sink (a reference).
    /// Must not be Empty(); when it is, the pacer stops (Stop()).
    template <typename SinkOf>
    Pull NextPull(const RdmaUetRcccParams& p, SinkOf&& sinkOf)
    {
        Pull out;
        uint64_t granted = 0;
        if (!m_active.empty())
        {
            out.flow = m_active.front();
            m_active.pop_front();
            RdmaUetRcccSink& s = sinkOf(out.flow);
            granted = s.Grant(p, 0);
            if (s.Backlog() > 0)
            {
                m_active.push_back(out.flow);
            }
            else
            {
                // Demand met: to the idle list, for slow pulls.
                m_idle.push_back(out.flow);
                s.inPull = false;
                s.inSlowPull = true;
            }
        }
        else
        {
            out.flow = m_idle.front();
            m_idle.pop_front();
            RdmaUetRcccSink& s = sinkOf(out.flow);
            if (!s.inSlowPull)
            {
                s.inPull = false;
                s.inSlowPull = true;
            }
            granted = s.Grant(p, p.creditPerPullQuanta);
            out.slow = true;
            const auto cap = static_cast<uint64_t>(p.maxWindowBytes / RdmaUetRcccParams::QUANTUM_BYTES);
            if (s.Backlog() == 0 && s.SlowCredit() < cap)
            {
                m_idle.push_back(out.flow); // up to one cap of unsolicited credit
            }
            else
            {
                s.inPull = false;
                s.inSlowPull = false;
            }
        }
        out.pullNo = sinkOf(out.flow).latestPull;
        const uint64_t q = granted == 0 ? RdmaUetRcccParams::MIN_GAP_QUANTA : granted;
        out.gapPs = p.timePerQuantumPs * q;
        return out;
    }

    /// The pacer found both lists empty at its event: it stops until the next Request.
    void Stop()
    {
        m_running = false;
    }

  private:
    std::deque<K> m_active; //!< flows asking for credit
    std::deque<K> m_idle;   //!< flows whose demand is met (slow pulls)
    bool m_running{false};  //!< an event is pending
};

/**
 * \ingroup rdma-lb
 * Whether a retransmission timeout sends an RTS (htsim UecSrc::rtxTimerExpired with RCCC on):
 * when resends were already queued (\p rtxWasEmpty false: the receiver may not know the
 * sender waits), or when the resend cannot go: NSCC on (\p nscc) and \p windowBytes below
 * \p wireBytes + \p inflightBytes (in flight without the lost packet), or no credit
 * (\p credit <= 0).
 */
bool RdmaUetRcccRtsOnTimeout(bool rtxWasEmpty,
                             bool nscc,
                             int64_t windowBytes,
                             int64_t wireBytes,
                             int64_t inflightBytes,
                             int64_t credit);

/**
 * \ingroup rdma-lb
 * \return whether an RTS may leave at \p nowPs after the last one at \p lastPs (\p hasLast
 * false: none yet): at most one per \p limitPs (htsim sendRTS: NSCC's network RTT, 0 without
 * NSCC, when its _network_rtt is never set)
 */
bool RdmaUetRcccRtsAllowed(bool hasLast, uint64_t lastPs, uint64_t nowPs, uint64_t limitPs);

} // namespace ns3

#endif /* RDMA_UET_RCCC_H */
