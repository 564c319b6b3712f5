/*
 * rdma-lb: RdmaHeader serialization (the reference's wire sizes).
 */
#include "rdma-header.h"

#include "rdma-int.h"

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
constexpr uint32_t QBB_BYTES = 18;
/// L2 + IPv4: the part every header type shares.
constexpr uint32_t FIXED_BYTES = L2_BYTES + IPV4_BYTES;
static_assert(RdmaHeader::MAX_HEADER_BYTES == FIXED_BYTES + QBB_BYTES + RdmaIntHop::WIRE_BYTES,
              "the largest header is an ACK with HPCC's INT");

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
RdmaHeader::IntBytes(IntMode m)
{
    switch (m)
    {
    case INT_HPCC:
        return RdmaIntHop::WIRE_BYTES;
    case INT_TS:
        return 8;
    case INT_NONE:
        break;
    }
    return 0;
}

uint32_t
RdmaHeader::GetSerializedSize() const
{
    switch (type)
    {
    case DATA:
        return DATA_HEADER_BYTES + IntBytes(intMode);
    case ACK:
    case NACK:
        if (intMode == INT_NONE && (flags & FLAG_ACK_REQUEST) != 0)
        {
            return ACK_BITMAP_BYTES;
        }
        return std::max(ACK_BYTES, L2_BYTES + IPV4_BYTES + QBB_BYTES + IntBytes(intMode));
    case PFC:
        return PFC_BYTES;
    }
    return DATA_HEADER_BYTES;
}

void
RdmaHeader::WriteInt(Buffer::Iterator& i) const
{
    if (intMode == INT_HPCC)
    {
        for (uint64_t hop : intHop)
        {
            i.WriteHtonU64(hop);
        }
        i.WriteHtonU16(intNHop);
    }
    else if (intMode == INT_TS)
    {
        i.WriteHtonU64(tsNs);
    }
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
    i.WriteHtonU16(intMode); // fragment in the reference (zero): the INT mode
    i.WriteU8(type == PFC ? 1 : 64);
    i.WriteU8(type);
    // Checksum (not computed by the reference): an ACK/NACK with INT has no padding, so it
    // carries its qpn here.
    i.WriteHtonU16(type != DATA && intMode != INT_NONE ? qpn : 0);
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
        WriteInt(i);
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
        if (intMode == INT_NONE && (flags & FLAG_ACK_REQUEST) != 0)
        {
            i.WriteHtonU16(qpn);
            i.WriteHtonU64(sackBitmap); // UET coalesced ACK: the SACK bitmap
        }
        else if (intMode == INT_NONE)
        {
            i.WriteHtonU16(qpn); // padding in the reference: model metadata
            i.WriteHtonU16(0);
            i.WriteHtonU32(0);
        }
        else
        {
            WriteInt(i); // 94 B (HPCC) or 60 B (TIMELY): no padding
        }
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
    uint8_t b[MAX_HEADER_BYTES];
    const uint32_t n = std::min(start.GetRemainingSize(), MAX_HEADER_BYTES);
    for (uint32_t k = 0; k < n; ++k)
    {
        b[k] = start.ReadU8(); // inline; Iterator::Read is an out-of-line loop of the same
    }
    return Decode(b, n);
}

uint32_t
RdmaHeader::PeekFrom(const Packet& p)
{
    uint8_t b[MAX_HEADER_BYTES];
    const uint32_t n = p.CopyData(b, MAX_HEADER_BYTES);
    return Decode(b, n);
}

RdmaHeader
RdmaHeader::OnTheWire() const
{
    // Field for field what Serialize writes and Decode reads back.
    RdmaHeader w;
    w.type = type;
    w.tsNs = tsNs;
    w.echoSeq = echoSeq;
    w.ecn = ecn & 0x3;
    w.intMode = intMode;
    w.sip = sip;
    w.dip = dip;
    if (type == PFC)
    {
        w.pauseUs = pauseUs;
        w.pfcQlen = pfcQlen;
        w.pfcClass = pfcClass;
        return w; // no INT bytes
    }
    // Data (UDP + SeqTs) and ACK/NACK (qbb) carry these alike; only ACK/NACK carry a SACK.
    w.sport = sport;
    w.dport = dport;
    w.flags = flags;
    w.pg = pg;
    w.seq = seq;
    w.qpn = qpn;
    if (type != DATA)
    {
        w.sackSeq = sackSeq;
        w.sackLen = sackLen;
        if (intMode == INT_NONE && (flags & FLAG_ACK_REQUEST) != 0)
        {
            w.sackBitmap = sackBitmap;
        }
    }
    if (intMode == INT_HPCC)
    {
        std::copy(std::begin(intHop), std::end(intHop), std::begin(w.intHop));
        w.intNHop = intNHop;
    }
    return w;
}

void
RdmaHeader::DecodeInt(const uint8_t* b)
{
    if (intMode == INT_HPCC)
    {
        for (uint32_t k = 0; k < RdmaIntHop::MAX_HOPS; ++k)
        {
            intHop[k] = Be64(b + 8 * k);
        }
        intNHop = Be16(b + 8 * RdmaIntHop::MAX_HOPS);
    }
    // INT_TS: the same send time as tsNs.
}

uint32_t
RdmaHeader::Decode(const uint8_t* b, uint32_t n)
{
    // One copy of the header's bytes, then decoding from memory: every hop parses the header,
    // and reading it field by field through a Buffer::Iterator was ~7 % of a run.
    NS_ABORT_MSG_IF(n < FIXED_BYTES, "RdmaHeader: " << n << " bytes, shorter than L2 + IPv4");
    tsNs = Be64(b + 2);
    echoSeq = Be32(b + 10);
    ecn = b[15] & 0x3;
    const uint16_t ipId = Be16(b + 18);
    intMode = static_cast<IntMode>(Be16(b + 20));
    const uint8_t proto = b[23];
    const uint16_t checksum = Be16(b + 24);
    sip = Be32(b + 26);
    dip = Be32(b + 30);
    NS_ABORT_MSG_IF(proto != DATA && proto != ACK && proto != NACK && proto != PFC,
                    "RdmaHeader: unknown protocol " << uint32_t(proto));
    type = static_cast<Type>(proto);
    if (type == ACK || type == NACK)
    {
        flags = Be16(b + FIXED_BYTES + 4); // the size depends on it (a SACK bitmap)
    }
    const uint32_t size = GetSerializedSize();
    NS_ABORT_MSG_IF(n < size, "RdmaHeader: " << n << " bytes, need " << size);
    const uint8_t* t = b + FIXED_BYTES;
    switch (type)
    {
    case DATA:
        flags = ipId;
        sport = Be16(t);
        dport = Be16(t + 2);
        qpn = Be16(t + 6);
        seq = Be32(t + 8);
        pg = Be16(t + 12);
        DecodeInt(t + 14);
        break;
    case ACK:
    case NACK:
        sport = Be16(t);
        dport = Be16(t + 2);
        flags = Be16(t + 4);
        pg = Be16(t + 6);
        seq = Be32(t + 8);
        sackSeq = Be32(t + 12);
        sackLen = Be16(t + 16);
        if (intMode == INT_NONE)
        {
            qpn = Be16(t + 18);
            if ((flags & FLAG_ACK_REQUEST) != 0)
            {
                sackBitmap = Be64(t + 20);
            }
        }
        else
        {
            qpn = checksum;
            DecodeInt(t + 18);
        }
        break;
    case PFC:
        pauseUs = Be32(t);
        pfcQlen = Be32(t + 4);
        pfcClass = t[8];
        break;
    }
    return size;
}

} // namespace ns3
