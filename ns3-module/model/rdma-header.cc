/*
 * rdma-lb: RdmaHeader serialization (sizes of spec/rdma-model.md §2).
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
RdmaHeader::ReadInt(Buffer::Iterator& i)
{
    if (intMode == INT_HPCC)
    {
        for (uint64_t& hop : intHop)
        {
            hop = i.ReadNtohU64();
        }
        intNHop = i.ReadNtohU16();
    }
    else if (intMode == INT_TS)
    {
        i.ReadNtohU64(); // the same send time as tsNs
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
        if (intMode == INT_NONE)
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
    Buffer::Iterator i = start;
    i.ReadNtohU16();
    tsNs = i.ReadNtohU64();
    echoSeq = i.ReadNtohU32();
    i.ReadU8();
    ecn = i.ReadU8() & 0x3;
    i.ReadNtohU16();
    uint16_t ipId = i.ReadNtohU16();
    intMode = static_cast<IntMode>(i.ReadNtohU16());
    i.ReadU8();
    uint8_t proto = i.ReadU8();
    const uint16_t checksum = i.ReadNtohU16();
    sip = i.ReadNtohU32();
    dip = i.ReadNtohU32();
    switch (proto)
    {
    case DATA:
        type = DATA;
        flags = ipId;
        sport = i.ReadNtohU16();
        dport = i.ReadNtohU16();
        i.ReadNtohU16();
        qpn = i.ReadNtohU16();
        seq = i.ReadNtohU32();
        pg = i.ReadNtohU16();
        ReadInt(i);
        break;
    case ACK:
    case NACK:
        type = static_cast<Type>(proto);
        sport = i.ReadNtohU16();
        dport = i.ReadNtohU16();
        flags = i.ReadNtohU16();
        pg = i.ReadNtohU16();
        seq = i.ReadNtohU32();
        sackSeq = i.ReadNtohU32();
        sackLen = i.ReadNtohU16();
        if (intMode == INT_NONE)
        {
            qpn = i.ReadNtohU16();
            i.ReadNtohU16();
            i.ReadNtohU32();
        }
        else
        {
            qpn = checksum;
            ReadInt(i);
        }
        break;
    case PFC:
        type = PFC;
        pauseUs = i.ReadNtohU32();
        pfcQlen = i.ReadNtohU32();
        pfcClass = i.ReadU8();
        break;
    default:
        NS_ABORT_MSG("RdmaHeader: unknown protocol " << uint32_t(proto));
    }
    return GetSerializedSize();
}

} // namespace ns3
