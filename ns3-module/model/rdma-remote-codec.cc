/*
 * rdma-lb: the records exchanged between MPI ranks, as plain bytes (see the header).
 */
#include "rdma-remote-codec.h"

#include "ns3/abort.h"

#include <cstring>
#include <type_traits>

namespace ns3
{

namespace
{
/**
 * Calls \p visit on every field of a frame, in message order: the one list of them, read by the
 * writer (\p m const) and by the reader. A new RdmaHeader field is one line here.
 */
template <typename Frame, typename Visit>
void
ForEachFrameField(Frame& m, Visit&& visit)
{
    visit(m.hasKey);
    visit(m.key.schedTs);
    visit(m.key.schedCtx);
    visit(m.key.seq);
    visit(m.sizeBytes);
    visit(m.lbTag.present);
    visit(m.lbTag.words);
    auto& h = m.header;
    visit(h.type);
    visit(h.sip);
    visit(h.dip);
    visit(h.sport);
    visit(h.dport);
    visit(h.ecn);
    visit(h.pg);
    visit(h.seq);
    visit(h.tsNs);
    visit(h.echoSeq);
    visit(h.flags);
    visit(h.sackSeq);
    visit(h.sackLen);
    visit(h.sackBitmap);
    visit(h.recvdBytes);
    visit(h.qpn);
    visit(h.pauseUs);
    visit(h.pfcQlen);
    visit(h.pfcClass);
    visit(h.intMode);
    visit(h.intNHop);
    visit(h.intHop);
}

/**
 * Calls \p visit on every field of a record, in message order. The kind comes first: the
 * reader has read it when the switch below looks at it.
 */
template <typename Record, typename Visit>
void
ForEachRecordField(Record& r, Visit&& visit)
{
    visit(r.kind);
    visit(r.arrivalTs);
    visit(r.node);
    switch (r.kind)
    {
    case RdmaRemoteKind::FRAME:
        visit(r.ifIndex);
        ForEachFrameField(r.frame, visit);
        return;
    case RdmaRemoteKind::EXPECT_FLOW:
        visit(r.sip);
        visit(r.qpn);
        visit(r.flowId);
        visit(r.size);
        return;
    case RdmaRemoteKind::RELEASE_RX:
        visit(r.sip);
        visit(r.qpn);
        visit(r.hasKey);
        visit(r.key.schedTs);
        visit(r.key.schedCtx);
        visit(r.key.seq);
        return;
    }
    NS_ABORT_MSG("RdmaRemote: a record of unknown kind " << unsigned(r.kind));
}

/// The most bytes one record takes (a FRAME's; checked when writing).
constexpr size_t MAX_RECORD = 256;

/// Writes fields at the end of a buffer grown by MAX_RECORD beforehand.
struct Put
{
    uint8_t* p; //!< the next byte to write

    template <typename T>
    void operator()(const T& v)
    {
        static_assert(std::is_trivially_copyable<T>::value, "plain fields only");
        std::memcpy(p, &v, sizeof(v));
        p += sizeof(v);
    }
};

/// Appends the fields \p forEach visits to \p out.
template <typename F>
void
AppendFields(std::vector<uint8_t>* out, F&& forEach)
{
    const size_t start = out->size();
    out->resize(start + MAX_RECORD);
    Put put{out->data() + start};
    forEach(put);
    const size_t n = static_cast<size_t>(put.p - (out->data() + start));
    NS_ABORT_MSG_IF(n > MAX_RECORD, "RdmaRemote: a record of " << n << " B");
    out->resize(start + n);
}
} // namespace

void
RdmaRemoteBatchWriter::Append(std::vector<uint8_t>* out, const RdmaRemoteRecord& r)
{
    AppendFields(out, [&r](Put& put) { ForEachRecordField(r, put); });
}

void
RdmaRemoteBatchWriter::AppendFrame(std::vector<uint8_t>* out, const RdmaRemoteFrame& f)
{
    AppendFields(out, [&f](Put& put) { ForEachFrameField(f, put); });
}

RdmaRemoteBatchReader::RdmaRemoteBatchReader(const uint8_t* data, size_t n)
    : m_data(data),
      m_size(n)
{
}

bool
RdmaRemoteBatchReader::Next(RdmaRemoteRecord* r)
{
    if (m_pos == m_size)
    {
        return false;
    }
    const size_t start = m_pos;
    ForEachRecordField(*r, [this, start](auto& v) {
        NS_ABORT_MSG_IF(m_pos + sizeof(v) > m_size,
                        "RdmaRemote: a record at byte " << start << " of a " << m_size
                                                        << " B batch is truncated");
        std::memcpy(&v, m_data + m_pos, sizeof(v));
        m_pos += sizeof(v);
    });
    return true;
}

RdmaRemoteFrame
RdmaRemoteBatchReader::ReadWholeFrame()
{
    RdmaRemoteFrame f;
    ForEachFrameField(f, [this](auto& v) {
        NS_ABORT_MSG_IF(m_pos + sizeof(v) > m_size,
                        "RdmaRemote: a FRAME message of " << m_size << " B is too short");
        std::memcpy(&v, m_data + m_pos, sizeof(v));
        m_pos += sizeof(v);
    });
    NS_ABORT_MSG_IF(m_pos != m_size,
                    "RdmaRemote: a FRAME message of " << m_size << " B, decoded " << m_pos);
    return f;
}

} // namespace ns3
