/*
 * rdma-lb: a port's clock and turns (rdma-net-device.h, rdma-time.h).
 *
 * - TxTime ps: htsim's serialization times (bytes x 8 x 10^12 / rate in whole ps), each port
 *   carrying the fraction of a ns to the next frame it sends back to back, so that a run of
 *   64 B frames at 400 Gb/s takes 1.28 ns each, not ns-3's rounded 1 ns.
 * - ControlTurns N: a NIC's port whose data source always has a frame and whose control
 *   queue is never empty gives data every (N + 1)th turn (the UEC htsim's UecNIC: 10 control
 *   turns to 1 data turn).
 */

#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/rdma-lb-module.h"

#include <string>
#include <vector>

using namespace ns3;

namespace
{

const uint32_t CONTROL_BYTES = 64;  //!< htsim's ACK / pull
const uint32_t DATA_BYTES = 4150;   //!< htsim's 4086 B payload + 64 B header
const int64_t DELAY_NS = 1000;      //!< the link's propagation delay

/// A NIC's data source with \p left frames of DATA_BYTES to send.
struct DataSource
{
    uint32_t left{0};

    RdmaFramePtr Next(RdmaNetDevice& /*dev*/)
    {
        if (left == 0)
        {
            return nullptr;
        }
        --left;
        RdmaHeader h;
        h.type = RdmaHeader::DATA;
        return RdmaFrame::Make(h, DATA_BYTES - RdmaHeader::DATA_HEADER_BYTES);
    }
};

/// What the far end of the link received: per frame, whether it was data, and when.
struct Received
{
    std::vector<bool> data;
    std::vector<int64_t> atNs;
};

/**
 * A 400 Gb/s link; its near port (clock \p txTime, \p controlTurns) gets \p controls control
 * frames of CONTROL_BYTES queued at t = 0 and a data source of \p datas frames.
 */
Received
RunLink(const std::string& txTime, uint32_t controlTurns, uint32_t controls, uint32_t datas)
{
    Received r;
    NodeContainer nodes;
    nodes.Create(2);
    Ptr<RdmaChannel> ch = CreateObject<RdmaChannel>();
    ch->SetAttribute("Delay", TimeValue(NanoSeconds(DELAY_NS)));
    std::vector<Ptr<RdmaNetDevice>> dev;
    for (uint32_t n = 0; n < 2; ++n)
    {
        Ptr<RdmaNetDevice> d = CreateObject<RdmaNetDevice>();
        d->SetAttribute("DataRate", DataRateValue(DataRate("400Gbps")));
        d->SetAttribute("TxTime", StringValue(txTime));
        d->SetAttribute("ControlTurns", UintegerValue(controlTurns));
        nodes.Get(n)->AddDevice(d);
        d->Attach(ch);
        dev.push_back(d);
    }
    DataSource source{datas};
    dev[0]->SetDataSourceHook(
        RdmaNetDevice::DataSourceHook::Of<DataSource, &DataSource::Next>(&source));
    dev[1]->SetFrameReceiveHandler(MakeBoundCallback(
        +[](Received* out, Ptr<RdmaNetDevice>, RdmaFramePtr& f) {
            out->data.push_back(f->header.type == RdmaHeader::DATA);
            out->atNs.push_back(Simulator::Now().GetNanoSeconds());
        },
        &r));
    for (uint32_t k = 0; k < controls; ++k)
    {
        RdmaHeader h;
        h.type = RdmaHeader::ACK;
        dev[0]->Enqueue(RdmaFrame::Make(h, CONTROL_BYTES - h.GetSerializedSize()), 0);
    }
    Simulator::Run();
    Simulator::Destroy();
    return r;
}

/// The ps clock: a link's rate is exact, whole ns events.
class PortPicosecondClockTestCase : public TestCase
{
  public:
    PortPicosecondClockTestCase()
        : TestCase("TxTime ps: 100 x 64 B + 10 x 4150 B at 400 Gbps take 958 ns (ns clock: 930)")
    {
    }

  private:
    void DoRun() override
    {
        NS_TEST_EXPECT_MSG_EQ(RdmaTxPicoseconds(DataRate("400Gbps"), CONTROL_BYTES),
                              1280u,
                              "64 x 8 x 10^12 / 4 x 10^11 ps");
        NS_TEST_EXPECT_MSG_EQ(
            RdmaTxTime(DataRate("800Gbps"), DATA_BYTES, RdmaTxArithmetic::PICOSECOND)
                .GetNanoSeconds(),
            41,
            "41.5 ns truncated (the port carries the 0.5)");
        const Received ps = RunLink("ps", 0, 100, 10);
        const Received ns = RunLink("ns", 0, 100, 10);
        NS_TEST_ASSERT_MSG_EQ(ps.atNs.size(), 110u, "every frame arrives");
        NS_TEST_ASSERT_MSG_EQ(ns.atNs.size(), 110u, "every frame arrives");
        // Back to back from t = 0: the k-th frame ends at the whole ns below its exact end.
        int64_t endPs = 0;
        for (size_t k = 0; k < ps.atNs.size(); ++k)
        {
            endPs += ps.data[k] ? 83000 : 1280;
            NS_TEST_EXPECT_MSG_EQ(ps.atNs[k], DELAY_NS + endPs / 1000, "frame " << k);
        }
        NS_TEST_EXPECT_MSG_EQ(ps.atNs.back(), DELAY_NS + 958, "100 x 1.28 + 10 x 83 ns");
        NS_TEST_EXPECT_MSG_EQ(ns.atNs.back(), DELAY_NS + 930, "100 x 1 + 10 x 83 ns");
        // A port that idles starts its next frame on its own whole ns: no fraction carried.
        NS_TEST_EXPECT_MSG_EQ(ps.atNs.front(), DELAY_NS + 1, "the first 1.28 ns");
    }
};

/// ControlTurns: data every (N + 1)th turn while control waits; control first without it.
class PortControlTurnsTestCase : public TestCase
{
  public:
    PortControlTurnsTestCase()
        : TestCase("ControlTurns 10: data is every 11th frame while control waits (htsim "
                   "UecNIC); 0: control first")
    {
    }

  private:
    void DoRun() override
    {
        const Received htsim = RunLink("ps", 10, 100, 10);
        NS_TEST_ASSERT_MSG_EQ(htsim.data.size(), 110u, "every frame arrives");
        // The first control frame finds the port idle; then 10 control turns, 1 data turn,
        // while control waits; the last data frame goes once the control queue is empty.
        for (size_t k = 0; k < htsim.data.size(); ++k)
        {
            const bool expectData = (k % 11 == 0 && k > 0) || k == 109;
            NS_TEST_EXPECT_MSG_EQ(htsim.data[k], expectData, "frame " << k);
        }
        const Received strict = RunLink("ps", 0, 100, 10);
        for (size_t k = 0; k < strict.data.size(); ++k)
        {
            NS_TEST_EXPECT_MSG_EQ(strict.data[k], (k >= 100), "control first: frame " << k);
        }
        // Without data, control frames go back to back whatever the turns.
        const Received controlOnly = RunLink("ps", 10, 20, 0);
        NS_TEST_EXPECT_MSG_EQ(controlOnly.data.size(), 20u, "every control frame");
        NS_TEST_EXPECT_MSG_EQ(controlOnly.atNs.back(), DELAY_NS + 25, "20 x 1.28 = 25.6 ns");
    }
};

class RdmaLbPortTestSuite : public TestSuite
{
  public:
    RdmaLbPortTestSuite()
        : TestSuite("rdma-lb-port", UNIT)
    {
        AddTestCase(new PortPicosecondClockTestCase, TestCase::QUICK);
        AddTestCase(new PortControlTurnsTestCase, TestCase::QUICK);
    }
};

RdmaLbPortTestSuite g_rdmaLbPortTestSuite;

} // namespace
