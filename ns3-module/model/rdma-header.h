/*
 * rdma-lb: the one header of every packet of the RDMA fabric model.
 *
 * Wire sizes follow the HPCC/ConWeave simulator (doc/rdma-lb.rst, "Packets"):
 *  - data:  L2 14 + IPv4 20 + UDP 8 + SeqTs 6 = 48 B of headers (1000 B payload -> 1048 B);
 *  - ACK/NACK: L2 14 + IPv4 20 + qbb 18, padded to 60 B;
 *  - PFC:   L2 14 + IPv4 20 + 9 = 43 B;
 *  - INT: HPCC data packets carry 5 hop records + a hop count (42 B -> 1090 B)
 *    and their ACK/NACK a copy (14 + 20 + 18 + 42 = 94 B, no padding); TIMELY data packets
 *    carry an 8 B send timestamp (1056 B) and their ACK/NACK a copy (60 B, no padding);
 *    DCQCN, DCTCP and no congestion control carry no INT.
 * The model's own metadata (the send timestamp echoed for per-packet RTT, the PSN echo) is
 * carried in bytes the reference leaves zero (the 12 zero bytes of its 14-byte "PPP" header
 * and the ACK padding), so sizes on the wire stay exactly those of the reference.
 */
#ifndef RDMA_HEADER_H
#define RDMA_HEADER_H

#include "ns3/header.h"
#include "ns3/packet.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup rdma-lb
 * L2 + IPv4 + UDP/qbb/PFC fields of a fabric packet, serialized with the reference's sizes.
 */
class RdmaHeader : public Header
{
  public:
    /// The IPv4 protocol numbers the reference uses.
    enum Type : uint8_t
    {
        DATA = 0x11, //!< RoCEv2 data (UDP)
        ACK = 0xFC,  //!< acknowledgement
        NACK = 0xFD, //!< negative acknowledgement
        PFC = 0xFE,  //!< priority flow control pause/resume
    };

    /// Bytes of headers on a data packet.
    static constexpr uint32_t DATA_HEADER_BYTES = 48;
    /// Bytes of an ACK or NACK on the wire.
    static constexpr uint32_t ACK_BYTES = 60;
    /// Bytes of a PFC frame on the wire.
    static constexpr uint32_t PFC_BYTES = 43;
    /// The largest header: an ACK/NACK with HPCC's INT (34 + 18 + 42 B).
    static constexpr uint32_t MAX_HEADER_BYTES = 94;

    /// In-band telemetry carried after the data headers and copied into ACK/NACK (the
    /// reference's IntHeader::mode, chosen by the congestion control).
    enum IntMode : uint8_t
    {
        INT_NONE = 0, //!< no INT bytes (DCQCN, DCTCP; the reference's mode 5)
        INT_HPCC = 1, //!< 5 hop records + hop count, 42 B (the reference's mode 0)
        INT_TS = 2,   //!< the 8 B send timestamp (TIMELY; the reference's mode 1)
    };
    /// \return the INT bytes on the wire of mode \p m
    static uint32_t IntBytes(IntMode m);

    RdmaHeader();

    /// \return the TypeId
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    void Print(std::ostream& os) const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;

    /**
     * Reads the header at the front of \p p without changing it (as Packet::PeekHeader, but
     * from one memcpy of the packet's first bytes: every hop parses the header, and reading it
     * through a Buffer::Iterator byte by byte was the largest single cost of a run).
     * \return the header's size in bytes
     */
    uint32_t PeekFrom(const Packet& p);

    /**
     * \return this header as a receiver decodes it after Serialize: the fields the wire
     * carries for its type and INT mode, the others zero (RdmaFrame carries a header without
     * serialising it, so a receiver sees exactly what it would have read from the bytes)
     */
    RdmaHeader OnTheWire() const;

    // Fields (public: a plain record, as the reference's one-shot parser exposes them).
    Type type{DATA};     //!< packet type (the IPv4 protocol)
    uint32_t sip{0};     //!< source IPv4 address
    uint32_t dip{0};     //!< destination IPv4 address
    uint16_t sport{0};   //!< UDP source port; on data packets, the entropy switches hash
    uint16_t dport{0};   //!< UDP destination port
    uint8_t ecn{0};      //!< IPv4 ECN bits (0 = not ECT, 3 = CE)
    uint16_t pg{3};      //!< priority group (switch queue of data)
    uint32_t seq{0};     //!< data: byte offset of the first payload byte; ACK/NACK: next expected byte
    uint64_t tsNs{0};    //!< data: send time; ACK/NACK: echoed send time of the answered packet
    /// ACK/NACK: byte offset of the answered data packet. Data under IRN's IrnQpPerPath: the
    /// byte where the packet's PSN space starts (the Hopper paper, §3.3; 0 otherwise)
    /// Data under the uet transport's RCCC: the sender's pull target in 256 B quanta
    /// (htsim's pull_target field).
    uint32_t echoSeq{0};
    uint16_t flags{0};   //!< ACK/NACK: bit 0 = CNP; data and ACK: bit 1 = probe (IPv4 id on data)
    uint32_t sackSeq{0}; //!< ACK/NACK: start of the selectively acknowledged block (IRN)
    uint16_t sackLen{0}; //!< ACK/NACK: length of that block in bytes (IRN)
    /// ACK with FLAG_ACK_REQUEST (UET, coalesced ACKs): bit i = the packet at sackSeq + i
    /// payloads was received (htsim's 64-packet SACK bitmap)
    uint64_t sackBitmap{0};
    /// ACK/NACK (uet): the receiver's count of the wire bytes of the new, untrimmed data
    /// packets of the flow, modulo 2^32 (htsim's recvd_bytes; RdmaUetRecovery Inflight
    /// received-bytes). Model metadata beside the header, as htsim's is beside its ACK's 64
    /// bytes: neither serialised nor kept by OnTheWire (RdmaUetRecovery::SendHeader copies it).
    uint32_t recvdBytes{0};
    /// Data: the sender's queue-pair number (model metadata in the UDP checksum, which the
    /// reference leaves zero); ACK/NACK: echoed (in the padding). The NICs key a flow by it,
    /// so the UDP ports are free to be the reference's (quirk flow-ports) or the entropy.
    uint16_t qpn{0};
    uint32_t pauseUs{0}; //!< PFC: pause time in microseconds (0 = resume)
    uint32_t pfcQlen{0}; //!< PFC: queue length reported
    uint8_t pfcClass{0}; //!< PFC: priority class
    /// Data and ACK/NACK: the INT carried (model metadata in the IPv4 fragment field, which
    /// the reference leaves zero). With INT an ACK/NACK has no padding, so its qpn moves to
    /// the IPv4 checksum (not computed by the reference either).
    IntMode intMode{INT_NONE};
    uint16_t intNHop{0}; //!< INT_HPCC: records pushed so far (slot = count modulo 5)
    uint64_t intHop[5]{}; //!< INT_HPCC: the records (RdmaIntHop)

    /// ACK/NACK flag: the answered data packet carried CE.
    static constexpr uint16_t FLAG_CNP = 1;
    /// Data: a path probe (no transport state; answered at once). ACK: the answer to one.
    static constexpr uint16_t FLAG_PROBE = 2;
    /// Data (UET transport): a switch trimmed the payload; the header travels on at the
    /// highest priority and the receiver answers it with a NACK (RdmaSwitch::TrimEnabled).
    static constexpr uint16_t FLAG_TRIMMED = 8;
    /// NACK: a switch load balancer's own control packet (ConWeave REPLY / NOTIFY; the
    /// reference's 0xFD packets with a ConWeave tag). Consumed by a ToR; a NIC ignores it.
    static constexpr uint16_t FLAG_LB_CONTROL = 0x100; // bit 2 is the NIC's ECN echo
    /// Data (UET transport): the sender asks for an ACK at once (UEC's AR bit). ACK (UET):
    /// it carries a SACK bitmap (sackBitmap, 64 packets from sackSeq) instead of one block.
    static constexpr uint16_t FLAG_ACK_REQUEST = 0x10;
    /// ACK size with a SACK bitmap: the 8 B of padding after the qpn hold the bitmap
    /// (2 B more than ACK_BYTES' 6 B of padding).
    static constexpr uint32_t ACK_BITMAP_BYTES = 62;
    /// NACK (IRN with IrnQpPerPath): its SACK block is in order in the packet's own PSN space,
    /// the queue pair of its path: not a sign of loss.
    static constexpr uint16_t FLAG_IN_ORDER_SACK = 0x20;
    /// Trimmed data: trimmed at a port facing a host (the last hop); a NACK echoes it
    /// (htsim's NACK last_hop).
    static constexpr uint16_t FLAG_LAST_HOP = 0x40;
    /// UET RCCC, an ACK-type control packet: a pull, its pull number (256 B quanta) in
    /// sackSeq (htsim UecPullPacket).
    static constexpr uint16_t FLAG_PULL = 0x80;
    /// UET RCCC, a header-only data packet (with FLAG_TRIMMED, so that switches forward it
    /// as control): an RTS, asking the receiver to pull again (htsim UecRtsPacket).
    static constexpr uint16_t FLAG_RTS = 0x200;

  private:
    void WriteInt(Buffer::Iterator& i) const;
    /// Decodes the header from its \p n serialized bytes at \p b; \return its size
    uint32_t Decode(const uint8_t* b, uint32_t n);
    /// Decodes the INT bytes at \p b (as many as IntBytes(intMode)).
    void DecodeInt(const uint8_t* b);
};

/// \return the IPv4 address the reference gives host \p hostId: 11.(id/256).(id%256).1
uint32_t RdmaHostAddress(uint32_t hostId);
/// \return the host id of a host address (inverse of RdmaHostAddress)
uint32_t RdmaHostId(uint32_t address);

} // namespace ns3

#endif /* RDMA_HEADER_H */
