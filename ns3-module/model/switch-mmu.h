/*
 * rdma-lb: the shared-buffer MMU of a switch (doc/rdma-lb.rst, "Switch buffer, PFC and ECN"),
 * Broadcom-like as in the HPCC/ConWeave simulator.
 *
 * One buffer of B bytes (BufferSize; the reference's BUFFER_SIZE MB x 1024 x 1024, default
 * 9 MB = 9,437,184 B) is shared by all ports. Per port p: a PFC headroom
 * H_p = 2 x rate x delay / 8 + 2 x MTU (27,096 B at 100 Gbps / 1 us), MTU = 1048 B (a DCQCN data
 * packet with 1000 B payload). Per (port, class): an ingress (priority-group) minimum of 1048 B,
 * an egress queue minimum of 1049 B. Derived limits for N ports:
 *   - ingress shared limit L_in = B - sum of headrooms - N x 8 x 1048;
 *   - egress shared limit  L_eg = B - N x 8 x 1048.
 * Ingress alpha 1/16, egress alpha 1 (dynamic thresholds, always on).
 *
 * Headroom-sum quirk, reproduced by default (attribute HeadroomSumQuirk = true): the
 * reference sums the headrooms over indices 0..N-1 of its 1-based port array, so the sum holds
 * the attribute default of index 0 (QuirkHeadroom, 14,596 B = 12,500 + 2 x 1048) in place of the
 * last port's headroom. Leaf with 24 ports at 100 Gbps / 1 us: L_in = 8,598,164 B; spine with
 * 8 ports: 9,165,844 B. With HeadroomSumQuirk = false the sum runs over the N real ports
 * (leaf: 8,585,664 B; spine: 9,153,344 B).
 *
 * Only data classes (queues 1-7) are accounted: queue 0 (ACK/NACK/PFC) bypasses the MMU.
 * Service pools: ingress pool 1 for class 1 else 0; egress pool 0 for class 0 else 1.
 *
 * Admission (a packet of p bytes from ingress port i, class c, to egress port j, class c):
 *   - ingress drop if total + p > B; or if (PG usage + p > 1048 and port usage + p > 1048) and
 *     pool usage > L_in and headroom usage(i, c) + p > H_i;
 *   - egress drop if pool + p > L_eg; or port usage + p > B; or shared(j, c) + p > B; or the
 *     dynamic threshold shared(j, c) + p > alpha_eg x (L_eg - pool) (unless
 *     EgressDynamicThreshold is false).
 *
 * Lossless-drop quirk, reproduced by default: the reference applies the egress dynamic
 * threshold to PFC-protected classes too. When n ingress ports feed one egress queue, each
 * pauses once usage - 2096 > alpha_in x (L_in - pool), i.e. at pool ~ L_in x n / (16 + n)
 * (L_in / 2 for n = 16), while the egress drop point is ~ L_eg / 2 = (L_in + sum of
 * headrooms) / 2: for n = 16 line-rate senders on one 17-port switch the bytes still in flight
 * after the pauses (~26 KB per port at 100 Gbps / 1 us) exceed that 224 KB margin and lossless
 * traffic is dropped. EgressDynamicThreshold = false removes that drop point for PFC runs.
 * Accounting: ingress counters += p (and the headroom counter when the pool exceeds L_in
 * after the update); egress: the first 1049 B of each queue go to its "min" counter, the rest
 * to "shared" and the pool.
 *
 * PFC (the reference's dynamic threshold): class k of port i must pause when usage(i, k) > 2 x 1048
 * and usage(i, k) - 2096 > alpha_in x (L_in - pool) or the headroom usage of the arriving class is
 * not zero; it may resume when usage(i, k) - 2096 < alpha_in x (L_in - pool - 16) and its headroom
 * usage is zero. The MMU also keeps the "paused" flag of each (port, class), which clears itself
 * after the pause time.
 */
#ifndef SWITCH_MMU_H
#define SWITCH_MMU_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <array>
#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * \ingroup rdma-lb
 * Shared-buffer admission, accounting and PFC thresholds of one switch.
 */
class SwitchMmu : public Object
{
  public:
    /// Number of classes (priority queues).
    static constexpr uint32_t N_CLASSES = 8;
    /// The cell / MTU constant of the reference (a 1048 B DCQCN data packet).
    static constexpr uint64_t MTU = 1048;
    /// Ingress priority-group and port minimum guarantee.
    static constexpr uint64_t PG_MIN = 1048;
    /// Egress queue minimum guarantee.
    static constexpr uint64_t EGRESS_MIN = 1049;
    /// The "2 x MTU" offset of the PFC thresholds.
    static constexpr uint64_t PFC_OFFSET = 2 * 1048;

    /// \return the TypeId
    static TypeId GetTypeId();
    SwitchMmu();

    /**
     * \return the PFC headroom of a port: 2 x rate x delay / 8 + 2 x MTU
     * \param rateBps link rate in bit/s
     * \param delay one-way propagation delay
     */
    static uint64_t ComputeHeadroom(uint64_t rateBps, Time delay);

    /// Sizes the MMU for one port per entry of \p headroom (bytes) and derives the limits.
    void Configure(const std::vector<uint64_t>& headroom);
    /// \return whether Configure has been called
    bool IsConfigured() const;
    /// \return the number of ports
    uint32_t GetNPorts() const;

    /// \return the buffer size B in bytes
    uint64_t GetBufferSize() const;
    /// \return the ingress shared limit L_in in bytes
    uint64_t GetIngressSharedLimit() const;
    /// \return the egress shared limit L_eg in bytes
    uint64_t GetEgressSharedLimit() const;
    /// \return the PFC headroom of \p port in bytes
    uint64_t GetHeadroom(uint32_t port) const;
    /**
     * \return the ingress usage above which class \p cls of a port pauses with the current
     *         pool usage: 2096 + alpha_in x (L_in - pool) (may be negative when the pool is full)
     * \param cls the class (its ingress pool is used)
     */
    double GetPauseThreshold(uint32_t cls) const;

    /// \return whether a packet of \p size bytes may enter via \p port in class \p cls
    bool CheckIngressAdmission(uint32_t port, uint32_t cls, uint32_t size) const;
    /// \return whether a packet of \p size bytes may leave via \p port in class \p cls
    bool CheckEgressAdmission(uint32_t port, uint32_t cls, uint32_t size) const;
    /// Charges an admitted packet to the ingress accounting.
    void UpdateIngressAdmission(uint32_t port, uint32_t cls, uint32_t size);
    /// Charges an admitted packet to the egress accounting.
    void UpdateEgressAdmission(uint32_t port, uint32_t cls, uint32_t size);
    /// Releases a departing packet from the ingress accounting.
    void RemoveFromIngressAdmission(uint32_t port, uint32_t cls, uint32_t size);
    /// Releases a departing packet from the egress accounting.
    void RemoveFromEgressAdmission(uint32_t port, uint32_t cls, uint32_t size);

    /**
     * \return whether class \p k of ingress port \p port must be paused
     * \param port ingress port
     * \param k class examined
     * \param arrivingCls class of the packet just admitted (its headroom usage counts)
     */
    bool ShouldPause(uint32_t port, uint32_t k, uint32_t arrivingCls) const;
    /// \return whether paused class \p k of ingress port \p port may resume
    bool ShouldResume(uint32_t port, uint32_t k) const;
    /// Marks (port, k) paused until now + \p duration.
    void SetPaused(uint32_t port, uint32_t k, Time duration);
    /// Clears the paused flag of (port, k).
    void ClearPaused(uint32_t port, uint32_t k);
    /// \return whether (port, k) is marked paused (the flag expires by itself)
    bool IsPaused(uint32_t port, uint32_t k) const;

    /// \return ingress bytes of (port, class)
    uint64_t GetIngressBytes(uint32_t port, uint32_t cls) const;
    /// \return ingress bytes of a port (all classes)
    uint64_t GetIngressPortBytes(uint32_t port) const;
    /// \return headroom bytes of (port, class)
    uint64_t GetHeadroomBytes(uint32_t port, uint32_t cls) const;
    /// \return bytes in ingress service pool \p pool (0 or 1)
    uint64_t GetIngressPoolBytes(uint32_t pool) const;
    /// \return egress shared bytes of (port, class)
    uint64_t GetEgressSharedBytes(uint32_t port, uint32_t cls) const;
    /// \return egress bytes of (port, class) (min + shared)
    uint64_t GetEgressBytes(uint32_t port, uint32_t cls) const;
    /// \return bytes in egress service pool \p pool (shared part only)
    uint64_t GetEgressPoolBytes(uint32_t pool) const;
    /// \return bytes held in the buffer
    uint64_t GetTotalBytes() const;

    /// \return the ingress pool of class \p cls
    static uint32_t IngressPool(uint32_t cls);
    /// \return the egress pool of class \p cls
    static uint32_t EgressPool(uint32_t cls);

  private:
    /// Per (port, class) counters.
    struct Pg
    {
        uint64_t ingress{0};    //!< ingress bytes
        uint64_t headroom{0};   //!< of which counted as headroom
        uint64_t egressMin{0};  //!< egress bytes within the queue minimum
        uint64_t egressShared{0}; //!< egress bytes above it
        Time pausedUntil;       //!< paused flag (expires by itself)
    };
    /// Per-port state.
    struct Port
    {
        uint64_t headroomLimit{0};           //!< PFC headroom
        uint64_t ingress{0};                 //!< ingress bytes of the port
        uint64_t egress{0};                  //!< egress bytes of the port
        std::array<Pg, N_CLASSES> pg;        //!< per class
    };

    uint64_t m_bufferSize;
    double m_alphaIngress;
    double m_alphaEgress;
    bool m_egressDt{true}; //!< attribute EgressDynamicThreshold
    bool m_headroomQuirk;
    uint64_t m_quirkHeadroom;
    std::vector<Port> m_ports;
    uint64_t m_ingressLimit{0};
    uint64_t m_egressLimit{0};
    uint64_t m_total{0};
    std::array<uint64_t, 2> m_ingressPool{};
    std::array<uint64_t, 2> m_egressPool{};
};

} // namespace ns3

#endif /* SWITCH_MMU_H */
