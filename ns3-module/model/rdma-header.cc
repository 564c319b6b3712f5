/*
 * rdma-lb: RdmaHeader serialization (sizes of spec/rdma-model.md §2).
 */
#include "rdma-header.h"

#include "ns3/abort.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaHeader);

namespace
{
constexpr uint32_t L2_BYTES = 14;
constexpr uint32_t IPV4_BYTES = 20;
constexpr uint16_t PPP_PROTO_IPV4 = 0x0021;
/// L2 + IPv4: the part every header type shares.
constexpr uint32_t FIXED_BYTES = L2_BYTES + IPV4_BYTES;

uint16_t
Be16(const uint8_t* p)
{
    return static_cast<uint16_t>((p[0] << 8) | p[1]);
}

uint32_t
Be32(const uint8_t* p)
{
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

uint64_t
Be64(const uint8_t* p)
{
    return (uint64_t{Be32(p)} << 32) | Be32(p + 4);
}
} // namespace

uint32_t
RdmaHostAddress(uint32_t hostId)
{
    return 0x0B000001u + ((hostId / 256) << 16) + ((hostId % 256) << 8);
}

uint32_t
RdmaHostId(uint32_t address)
{
    return (address >> 8) & 0xFFFF;
}

RdmaHeader::RdmaHeader() = default;

TypeId
RdmaHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaHeader")
                            .SetParent<Header>()
                            .SetGroupName("RdmaLb")
                            .AddConstructor<RdmaHeader>();
    return tid;
}

TypeId
RdmaHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

void
RdmaHeader::Print(std::ostream& os) const
{
    os << "type=0x" << std::hex << static_cast<uint32_t>(type) << std::dec << " sip=" << sip
       << " dip=" << dip << " sport=" << sport << " dport=" << dport << " ecn=" << uint32_t(ecn)
       << " seq=" << seq;
}

uint32_t
RdmaHeader::GetSerializedSize() const
{
    switch (type)
    {
    case DATA:
        return DATA_HEADER_BYTES;
    case ACK:
    case NACK:
        return ACK_BYTES;
    case PFC:
        return PFC_BYTES;
    }
    return DATA_HEADER_BYTES;
}

void
RdmaHeader::Serialize(Buffer::Iterator i) const
{
    // L2 (14 B): protocol, then 12 bytes the reference leaves zero; we keep the send time
    // (8 B) and the echoed sequence (4 B) there.
    i.WriteHtonU16(PPP_PROTO_IPV4);
    i.WriteHtonU64(tsNs);
    i.WriteHtonU32(echoSeq);
    // IPv4 (20 B).
    i.WriteU8(0x45);
    i.WriteU8(ecn & 0x3);
    i.WriteHtonU16(static_cast<uint16_t>(GetSerializedSize() - L2_BYTES));
    i.WriteHtonU16(type == DATA ? flags : 0); // IPv4 id: data packets carry their flags here
    i.WriteHtonU16(0); // fragment
    i.WriteU8(type == PFC ? 1 : 64);
    i.WriteU8(type);
    i.WriteHtonU16(0); // checksum (not computed)
    i.WriteHtonU32(sip);
    i.WriteHtonU32(dip);
    switch (type)
    {
    case DATA:
        // UDP (8 B) + SeqTs (6 B).
        i.WriteHtonU16(sport);
        i.WriteHtonU16(dport);
        i.WriteHtonU16(0);   // length
        i.WriteHtonU16(qpn); // checksum in the reference (not computed): model metadata
        i.WriteHtonU32(seq);
        i.WriteHtonU16(pg);
        break;
    case ACK:
    case NACK:
        // qbb (18 B) + 8 B padding to 60 B.
        i.WriteHtonU16(sport);
        i.WriteHtonU16(dport);
        i.WriteHtonU16(flags);
        i.WriteHtonU16(pg);
        i.WriteHtonU32(seq);
        i.WriteHtonU32(sackSeq);
        i.WriteHtonU16(sackLen);
        i.WriteHtonU16(qpn); // padding in the reference: model metadata
        i.WriteHtonU16(0);
        i.WriteHtonU32(0);
        break;
    case PFC:
        // pause time (µs), queue length, class: 9 B.
        i.WriteHtonU32(pauseUs);
        i.WriteHtonU32(pfcQlen);
        i.WriteU8(pfcClass);
        break;
    }
}

uint32_t
RdmaHeader::Deserialize(Buffer::Iterator start)
{
    uint8_t b[ACK_BYTES]; // the largest header
    const uint32_t n = std::min(start.GetRemainingSize(), ACK_BYTES);
    for (uint32_t k = 0; k < n; ++k)
    {
        b[k] = start.ReadU8(); // inline; Iterator::Read is an out-of-line loop of the same
    }
    return Decode(b, n);
}

uint32_t
RdmaHeader::PeekFrom(const Packet& p)
{
    uint8_t b[ACK_BYTES];
    const uint32_t n = p.CopyData(b, ACK_BYTES);
    return Decode(b, n);
}

uint32_t
RdmaHeader::Decode(const uint8_t* b, uint32_t n)
{
    NS_ABORT_MSG_IF(n < FIXED_BYTES, "RdmaHeader: " << n << " bytes, shorter than L2 + IPv4");
    const uint8_t proto = b[23];
    const uint32_t size = proto == DATA ? DATA_HEADER_BYTES
                          : (proto == ACK || proto == NACK) ? ACK_BYTES
                          : proto == PFC                    ? PFC_BYTES
                                                            : FIXED_BYTES;
    NS_ABORT_MSG_IF(n < size, "RdmaHeader: " << n << " bytes, protocol " << uint32_t(proto));
    tsNs = Be64(b + 2);
    echoSeq = Be32(b + 10);
    ecn = b[15] & 0x3;
    const uint16_t ipId = Be16(b + 18);
    sip = Be32(b + 26);
    dip = Be32(b + 30);
    const uint8_t* t = b + FIXED_BYTES;
    switch (proto)
    {
    case DATA:
        type = DATA;
        flags = ipId;
        sport = Be16(t);
        dport = Be16(t + 2);
        qpn = Be16(t + 6);
        seq = Be32(t + 8);
        pg = Be16(t + 12);
        break;
    case ACK:
    case NACK:
        type = static_cast<Type>(proto);
        sport = Be16(t);
        dport = Be16(t + 2);
        flags = Be16(t + 4);
        pg = Be16(t + 6);
        seq = Be32(t + 8);
        sackSeq = Be32(t + 12);
        sackLen = Be16(t + 16);
        qpn = Be16(t + 18);
        break;
    case PFC:
        type = PFC;
        pauseUs = Be32(t);
        pfcQlen = Be32(t + 4);
        pfcClass = t[8];
        break;
    default:
        NS_ABORT_MSG("RdmaHeader: unknown protocol " << uint32_t(proto));
    }
    return GetSerializedSize();
}

} // namespace ns3
