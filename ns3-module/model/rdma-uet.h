/*
 * rdma-lb: the UET transport's sender state and window rule.
 *
 * The transport REPS was evaluated on (the REPS paper, §4: htsim's Ultra-Ethernet-style "UEC"
 * sender, repository tommasobo/REPS_EuroSys_Artifact, htsim/sim/uec.cpp, run with
 * `-sender_cc_only -sender_cc_algo mprdma`). What it does, as implemented here (the NIC side is
 * rdma-recovery-uet.cc, the switch side RdmaSwitch's TrimEnabled / DataQueueLimit):
 *  - data packets of PayloadSize (4086 B) plus UetHeaderSize (64 B) on the wire;
 *  - the receiver answers every data packet with an ACK carrying the cumulative ACK (next
 *    expected byte), a SACK of that packet, its entropy and its ECN mark (htsim UecSink::
 *    processData with -sack_threshold 4000 < one packet: one ACK per packet). The artifact's
 *    ACK also carries a 64-packet SACK bitmap (UecSink::sack, buildSackBitmap), which only
 *    repeats what earlier ACKs said -- unless an ACK is lost: under one-way black holes
 *    (ACKs crossing a failed pipe) the single SACK here leaves a delivered packet outstanding
 *    until the cumulative ACK passes it, or until it times out (a spurious resend and window
 *    cut) where the artifact's next ACK re-reports it. The artifact's ACKs exactly:
 *    RdmaUetRecovery::AckBytes 4000 (its -sack_threshold: every packet answered at once, each
 *    ACK with the bitmap) and AckRequest "reps" (its AR rule, RdmaUetAckRequest) -- with them
 *    oblivious spraying under 1 / 4 / 8 black-holed aggregation -> core pipes of a k = 8
 *    fat-tree is within 5 % of the artifact (experiments/reps/README.md, "Spraying under
 *    one-way black holes against the artifact"); with the single SACK its slowest flow is
 *    49 % / 123 % later with 4 / 8 pipes. Default unchanged (AckBytes 0, AckRequest "uec");
 *  - a trimmed packet (header only, FLAG_TRIMMED) is answered by a NACK naming it
 *    (UecSink::processTrimmed);
 *  - the sender keeps a window in wire bytes and may send while window > in-flight bytes
 *    (UecSrc::sendIfPermitted). Window rule (UecSrc::updateCwndOnAck_MPRDMA /
 *    updateCwndOnNack_MPRDMA / mark_packet_for_retransmission), with newly acknowledged wire
 *    bytes A of one ACK and packet size MTU = payload + header:
 *        unmarked ACK:  cwnd += A * MTU / cwnd   (about one packet per window), at most cap
 *        ECN-marked:    cwnd -= A / 4, at least MTU
 *        NACK/timeout:  cwnd -= the lost packet's bytes, at least MTU
 *    cap = RdmaUetRecovery::MaxWindowBdp (1.5) x base RTT x line rate (UecSrc::initNscc:
 *    _maxwnd = 1.5 * _bdp); initial window RdmaUetRecovery::InitialWindowPackets (htsim
 *    -cwnd, in packets);
 *  - a NACKed or timed-out packet leaves the in-flight count and is queued for
 *    retransmission ahead of new data (UecSrc::processNack, queueForRtx);
 *  - one retransmission timer on the oldest outstanding packet, firing at its send time +
 *    UetRto (UecSrc::startRTO / recalculateRTO / rtxTimerExpired; htsim's _min_rto = the
 *    fabric's unloaded RTT + 4 queue drain times, main_uec.cpp).
 *
 * Base RTT (the cap's): UetBaseRtt, or per destination through RdmaNic::SetUetBaseRttOf (the
 * scenario program: htsim's per-pair base RTT, 2 x the pair's propagation + the fabric's
 * diameter x (data + ACK) serialization, main_uec.cpp base_rtt_bw_two_points).
 *
 * Option (off by default, RdmaUetRecovery::WaitToDecrease): SMaRTT's wait-to-decrease, the
 * REPS paper's setting (§3.0.1: "does not react to congestion unless 25 percent or more of the
 * acknowledgments indicate congestion"): each ACK updates avg = alpha x ECN + (1 - alpha) x avg
 * (alpha = WtdAlpha, the artifact's 0.05); a marked ACK cuts the window only when avg >= the
 * threshold and otherwise leaves it unchanged. The artifact applies it in its SMaRTT window
 * (threshold 0.3, strictly above); here it gates the mprdma window's cut, the paper's 0.25.
 *
 * Deviations: the initial window is clamped to the cap (htsim starts at -cwnd even above it:
 * 0.2 % above in the Fig. 2 setup, about 2x for the pairs under one ToR); no quick-adapt, fast
 * increase or fast loss recovery (off in htsim's mprdma runs).
 */
#ifndef RDMA_UET_H
#define RDMA_UET_H

#include "rdma-uet-nscc.h"
#include "rdma-uet-rccc.h"

#include "ns3/nstime.h"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <utility>

namespace ns3
{

/// \ingroup rdma-lb
/// One outstanding (sent, not yet acknowledged, not declared lost) UET data packet.
struct RdmaUetSent
{
    Time sent;              //!< when it was (last) sent
    uint32_t wireBytes{0};  //!< its size on the wire (header included)
    uint16_t entropy{0};    //!< the entropy it carried
    bool present{false};    //!< outstanding (a slot of RdmaUetOutstanding)
};

/**
 * \ingroup rdma-lb
 * The outstanding packets of a UET queue pair, by byte offset (each a multiple of the payload
 * size \p unit): a ring of slots from the lowest outstanding packet to the highest, no
 * allocation per packet (a std::deque's blocks), and the order of their send times for the
 * timer: a FIFO of (send time, offset) in send order, whose entries go stale when their packet
 * leaves or is sent again and are skipped at the front. Send times of one queue pair strictly
 * increase, so the first live entry is the oldest outstanding packet (what a set ordered by
 * (send time, offset) gives first).
 */
class RdmaUetOutstanding
{
  public:
    /// Offsets are multiples of \p unit (the payload size).
    void SetUnit(uint64_t unit)
    {
        m_unit = unit;
    }

    /// \return the number of outstanding packets
    size_t Size() const
    {
        return m_count;
    }

    /// \return whether nothing is outstanding
    bool Empty() const
    {
        return m_count == 0;
    }

    /// \return the packet at \p offset, or null when it is not outstanding
    RdmaUetSent* Find(uint64_t offset)
    {
        const uint64_t i = offset / m_unit;
        if (m_count == 0 || i < m_base || i - m_base >= m_slots.size() || !m_slots[i - m_base].present)
        {
            return nullptr;
        }
        return &m_slots[i - m_base];
    }

    /// \return the lowest outstanding offset (not Empty())
    uint64_t Lowest() const
    {
        return m_base * m_unit;
    }

    /// Makes \p s (sent at s.sent) the outstanding packet at \p offset.
    void Insert(uint64_t offset, RdmaUetSent s)
    {
        const uint64_t i = offset / m_unit;
        s.present = true;
        if (m_count == 0)
        {
            m_slots.assign(1, s);
            m_base = i;
        }
        else if (i < m_base)
        {
            m_slots.insert(m_slots.begin(), m_base - i, RdmaUetSent{});
            m_base = i;
            m_slots.front() = s;
        }
        else
        {
            if (i - m_base >= m_slots.size())
            {
                m_slots.resize(i - m_base + 1);
            }
            m_count -= m_slots[i - m_base].present ? 1 : 0;
            m_slots[i - m_base] = s;
        }
        ++m_count;
        m_sendOrder.emplace_back(s.sent, offset);
    }

    /// Removes the outstanding packet at \p offset (which must be outstanding).
    void Erase(uint64_t offset)
    {
        m_slots[offset / m_unit - m_base].present = false;
        --m_count;
        while (!m_slots.empty() && !m_slots.front().present)
        {
            m_slots.pop_front();
            ++m_base;
        }
        while (!m_slots.empty() && !m_slots.back().present)
        {
            m_slots.pop_back();
        }
        if (m_count == 0)
        {
            m_sendOrder.clear();
        }
    }

    /// \return (send time, offset) of the oldest outstanding packet (not Empty())
    std::pair<Time, uint64_t> Oldest()
    {
        for (;;)
        {
            const auto& [sent, offset] = m_sendOrder.front();
            const RdmaUetSent* p = Find(offset);
            if (p && p->sent == sent)
            {
                return m_sendOrder.front();
            }
            m_sendOrder.pop_front();
        }
    }

  private:
    uint64_t m_unit{1};
    uint64_t m_base{0};                 //!< packet number (offset / unit) of m_slots[0]
    std::deque<RdmaUetSent> m_slots;    //!< lowest to highest outstanding; front and back present
    size_t m_count{0};                  //!< present slots
    std::deque<std::pair<Time, uint64_t>> m_sendOrder; //!< (send time, offset), send order
};

/// \ingroup rdma-lb
/// Sender state of a UET queue pair (RdmaQueuePair::uet).
struct RdmaUetSender
{
    uint64_t windowBytes{0};   //!< the congestion window (wire bytes)
    uint64_t capBytes{0};      //!< the window's cap
    uint64_t mtuBytes{0};      //!< one full data packet on the wire (the window's floor)
    /// wire bytes in flight: the outstanding packets' (Inflight named-packets), or sent less
    /// the receiver's count (received-bytes; may dip below zero: read it as signed, as htsim's)
    uint64_t inflightBytes{0};
    uint32_t recvdSeen{0}; //!< Inflight received-bytes: the highest receiver count seen
    RdmaUetOutstanding outstanding; //!< by byte offset, and in send-time order for the timer
    std::set<uint64_t> rtx;   //!< offsets to send again (NACKed or timed out), lowest first
    /// NsccFeedback htsim: times each offset above the cumulative ACK was sent again
    std::map<uint64_t, uint32_t> resends;
    uint64_t nackAckedBytes{0}; //!< NsccFeedback htsim: NACK-acknowledged bytes for the next ACK
    double ecnAverage{0};     //!< wait-to-decrease: moving average of the ACKs' ECN echoes
    std::unique_ptr<RdmaUetNscc> nscc; //!< NSCC's state (Cc nscc, nscc+rccc), else null
    std::unique_ptr<RdmaUetRcccSender> rccc; //!< RCCC's credit (Cc rccc, nscc+rccc), else null
    Time lastRts{Time::Min()};         //!< when the last RTS left (RCCC)
};

/**
 * \ingroup rdma-lb
 * The window after one ACK that newly acknowledged \p ackedBytes wire bytes (see the file
 * comment; htsim UecSrc::updateCwndOnAck_MPRDMA).
 * \param windowBytes the window before
 * \param capBytes its cap
 * \param mtuBytes one full packet on the wire (the floor, and the increase unit)
 * \param ackedBytes wire bytes newly acknowledged by this ACK
 * \param ecnMarked whether the ACK echoes an ECN mark
 * \return the new window
 */
uint64_t RdmaUetWindowOnAck(uint64_t windowBytes,
                            uint64_t capBytes,
                            uint64_t mtuBytes,
                            uint64_t ackedBytes,
                            bool ecnMarked);

/**
 * \ingroup rdma-lb
 * Whether a data packet carries the AR bit (ACK request; only with coalesced ACKs,
 * RdmaUetRecovery::AckBytes > 0): a resend (\p resend), the flow's last new packet (\p last),
 * and a packet that leaves the window full. The two htsims differ on "full", seen from the
 * bytes in flight after this packet (\p inflightBytes before it plus its \p wireBytes)
 * against the window \p windowBytes:
 *  - UEC's (ultraethernet/uet-htsim UecSrc::sendNewPacket, RdmaUetRecovery::AckRequest "uec",
 *    the default): no room for another packet of this size, in flight + size >= window;
 *  - the REPS artifact's (tommasobo/REPS_EuroSys_Artifact UecSrc::sendNewPacket,
 *    AckRequest "reps"): no room at all, in flight >= window.
 * The AR bit moves the SACK bitmap of the packet's ACK to start at the packet itself (see
 * the file comment), so it decides which earlier out-of-order packets an ACK re-reports.
 */
bool RdmaUetAckRequest(uint64_t inflightBytes,
                       uint64_t wireBytes,
                       uint64_t windowBytes,
                       bool resend,
                       bool last,
                       bool repsRule);

/**
 * \ingroup rdma-lb
 * Whether an ACK gives NSCC an RTT sample under RdmaUetRecovery::NsccFeedback "htsim" (the UEC
 * htsim's UecSrc::validateSendTs, as processAck calls it): the packet it answers is still
 * outstanding (\p outstanding), and it was sent once, or it was resent once (\p resends = 1)
 * and this ACK answers the resend (its echoed send time \p echoTsNs is the packet's last,
 * \p lastSentNs). Otherwise NSCC takes its delay average, and neither that average nor the
 * base RTT is updated. (htsim knows which transmission an ACK answers from its rtx_echo flag;
 * ours from the echoed send time.)
 */
bool RdmaUetHtsimRttSample(bool outstanding,
                           uint32_t resends,
                           uint64_t lastSentNs,
                           uint64_t echoTsNs);

/**
 * \ingroup rdma-lb
 * RdmaUetWindowOnAck under SMaRTT's wait-to-decrease (the REPS paper, §3.0.1; the REPS
 * artifact's UecSrc::smartt_update_wtd_state): first the moving average of the ECN echoes
 * takes this ACK, *\p ecnAverage = \p alpha x mark + (1 - \p alpha) x *\p ecnAverage; then a
 * marked ACK with the average below \p threshold leaves the window unchanged, and any other
 * ACK acts as RdmaUetWindowOnAck.
 * \return the new window
 */
uint64_t RdmaUetWindowOnAckWtd(uint64_t windowBytes,
                               uint64_t capBytes,
                               uint64_t mtuBytes,
                               uint64_t ackedBytes,
                               bool ecnMarked,
                               double threshold,
                               double alpha,
                               double* ecnAverage);

/**
 * \ingroup rdma-lb
 * \return the window after a packet of \p lostBytes was NACKed (trimmed) or timed out:
 * \p windowBytes - \p lostBytes, at least \p mtuBytes (htsim updateCwndOnNack_MPRDMA)
 */
uint64_t RdmaUetWindowOnLoss(uint64_t windowBytes, uint64_t mtuBytes, uint64_t lostBytes);

} // namespace ns3

#endif /* RDMA_UET_H */
