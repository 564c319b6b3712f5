/*
 * rdma-lb: the RDMA NIC of the fabric model (spec/rdma-model.md §3).
 *
 * This first version carries the load-balancing hooks of DESIGN.md decision 5 end to end:
 * queue pairs (one per flow), round-robin among queue pairs with data to send, the entropy of
 * every data packet chosen by the run's load balancer (Rust), per-packet ACKs that echo the
 * entropy, sequence and send time, and feedback (with RTT and ECN) delivered to the selector.
 * Loss recovery is Go-Back-N on NACK (spec §3.3-3.4, one NACK per gap). Rate control (DCQCN),
 * timeouts, IRN and NIC selective repeat are the fabric-model issue's work.
 *
 * Packets: data carries sport = entropy, dport = the queue pair's number at the sender; the
 * receiver keys its state by (source address, dport), so the entropy may change per packet.
 */
#ifndef RDMA_NIC_H
#define RDMA_NIC_H

#include "rdma-lb-bridge.h"

#include "ns3/object.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

#include <map>
#include <memory>
#include <vector>

namespace ns3
{

class RdmaNetDevice;
class Packet;

/**
 * \ingroup rdma-lb
 * A sender-side queue pair: one flow.
 */
struct RdmaQueuePair
{
    uint32_t flowId{0};    //!< the flow's id (from the flow file)
    uint16_t qpn{0};       //!< queue-pair number at the sender (data dport)
    uint32_t dip{0};       //!< destination address
    uint64_t size{0};      //!< bytes to send
    uint64_t sndNxt{0};    //!< next byte to send
    uint64_t sndUna{0};    //!< bytes cumulatively acknowledged
    Time start;            //!< creation time (= flow start)
    uint32_t pg{3};        //!< priority group
    uint64_t retxPkts{0};  //!< packets sent again after a NACK
    uint64_t nacks{0};     //!< NACKs received
    std::unique_ptr<QpPathSelector> lb; //!< the load balancer's selector
};

/**
 * \ingroup rdma-lb
 * Per-host RDMA NIC; aggregate it to a host Node with one RdmaNetDevice.
 */
class RdmaNic : public Object
{
  public:
    /// \return the TypeId
    static TypeId GetTypeId();
    RdmaNic();
    ~RdmaNic() override;

    /// Binds the NIC to its port and gives it its address.
    void Setup(Ptr<RdmaNetDevice> dev, uint32_t address);
    /// Installs the run's load balancer (every new queue pair gets a selector).
    void SetLoadBalancer(Ptr<LbConfig> cfg);
    /// Starts a flow of \p size bytes to \p dip now.
    void StartFlow(uint32_t flowId, uint32_t dip, uint64_t size, uint32_t pg = 3);
    /// \return this NIC's address
    uint32_t GetAddress() const;
    /// \return the number of flows not yet completed
    uint32_t GetActiveFlows() const;
    /**
     * Assigns a fixed stream number to the random variables used by this NIC.
     * \param stream first stream index to use
     * \return the number of stream indices assigned
     */
    int64_t AssignStreams(int64_t stream);

    /// Trace signature of FlowComplete: flow id, sip, dip, size, start, finish, retransmitted packets.
    typedef void (*FlowCompleteTracedCallback)(uint32_t flowId,
                                               uint32_t sip,
                                               uint32_t dip,
                                               uint64_t size,
                                               Time start,
                                               Time finish,
                                               uint64_t retxPkts);
    /// Trace signature of DataSent: flow id, byte offset, entropy.
    typedef void (*DataSentTracedCallback)(uint32_t flowId, uint32_t seq, uint16_t entropy);

  protected:
    void DoDispose() override;

  private:
    /// Receiver state of one incoming flow.
    struct RxState
    {
        uint64_t expected{0}; //!< next expected byte
        bool nacked{false};   //!< a NACK was sent for the current gap
    };

    Ptr<Packet> NextPacket(Ptr<RdmaNetDevice> dev);
    void Receive(Ptr<RdmaNetDevice> dev, Ptr<Packet> p);
    void ReceiveData(Ptr<Packet> p);
    void ReceiveAck(Ptr<Packet> p);

    uint32_t m_payloadBytes{1000};
    Ptr<RdmaNetDevice> m_dev;
    uint32_t m_address{0};
    Ptr<LbConfig> m_lbConfig;
    Ptr<UniformRandomVariable> m_rng;
    uint16_t m_nextQpn{1};
    std::map<uint16_t, RdmaQueuePair> m_qps; //!< active queue pairs by number
    uint16_t m_lastServed{0};
    std::map<std::pair<uint32_t, uint16_t>, RxState> m_rx; //!< by (sip, qpn)
    TracedCallback<uint32_t, uint32_t, uint32_t, uint64_t, Time, Time, uint64_t> m_flowComplete;
    TracedCallback<uint32_t, uint32_t, uint16_t> m_dataSent;
};

} // namespace ns3

#endif /* RDMA_NIC_H */
