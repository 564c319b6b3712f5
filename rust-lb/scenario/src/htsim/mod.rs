//! The UEC's htsim inputs, parsed (issue 40: the Ultra Ethernet Consortium's htsim inputs should
//! run unchanged): topology files (`.topo`) and connection matrices (`.cm`), as the UEC's htsim
//! (<https://github.com/ultraethernet/uet-htsim>, commit `40ccb052`, `htsim/sim/datacenter/`)
//! reads them, and the transport settings its driver `htsim_uec` derives from the network.
//! * [`topo`]: `FatTreeTopologyCfg::read_cfg` and `set_custom_params` in `fat_tree_topology.cpp`
//!   (the file's fields and the switch counts derived from them), and the links the
//!   `FatTreeTopology` constructor builds, as a [`Topology`](crate::model::Topology);
//! * [`cm`]: `ConnectionMatrix::load` in `connection_matrix.cpp`, with the start times as
//!   `main_uec.cpp` uses them;
//! * [`uet_defaults`]: the queue size, ECN thresholds, base RTT and minimum RTO `main_uec.cpp`
//!   computes from the topology when no flag sets them.
//!
//! Both parsers follow this crate's conventions: `parse_*_str(name, text)` needs no file,
//! `parse_*_file(path)` reads one, and every error is a [`ScenarioError`](crate::ScenarioError)
//! naming `file:line: field`. htsim reads more loosely (it skips unknown header lines, lets a
//! later flow keyword replace an earlier one, asserts where these parsers return an error);
//! each module lists where it deviates. Example inputs are under `data/uec-htsim/`.
//!
//! In a TOML scenario: `[topology] htsim_topo = "x.topo"` and `[workload] htsim_cm = "x.cm"`
//! (`crate::toml_config`); `[topology] htsim_failed = N` is `htsim_uec -failed N`: the links
//! [`HtsimTopo::failed_links`] picks run at 0.25 x their speed, queue and ECN thresholds. With `htsim_topo` and `[transport] kind = "uet"`, every
//! `[transport.uet]` key the config leaves out takes htsim's default instead of ours:
//!
//! | key | htsim's default (`htsim_uec` without flags) | fat_tree_128_1os.topo (100G, 3 tiers) |
//! |---|---|---|
//! | `cc` | `"nscc"` (NSCC alone is htsim_uec's default CC; `"rccc"` is `-receiver_cc_only`, `"nscc+rccc"` `-sender_cc -receiver_cc`) | nscc |
//! | `trimming` | `true` (`-disable_trim` turns it off) | true |
//! | `payload`, `header` | 4086 B + 64 B = the 4150 B MTU | 4086, 64 |
//! | `queue_packets` | ⌈network BDP / MTU⌉ x 1 with trimming, x 5 without (main_uec.cpp `calculate_bdp_pkt`, `DEFAULT_TRIMMING_QUEUESIZE_FACTOR`) | 43 |
//! | `ecn_kmin_packets` | ⌈0.2 x BDP packets⌉ | 9 |
//! | `ecn_kmax_packets` | ⌈0.8 x BDP packets⌉ | 35 |
//! | `base_rtt` | `network_max_unloaded_rtt` = 2 x diameter latency + diameter x (MTU + 64 B ACK) x 8 / host rate, diameter = 2 x tiers links (main_uec.cpp `calculate_rtt`), to the nearest ns; it applies to every pair, as htsim's (no `-enable_accurate_base_rtt`) | 14,022.72 ns → 14,023 ns |
//! | `rto` | 15 us + 6 x queue bytes x 8 / host rate (main_uec.cpp `_min_rto`) | 100,656 ns |
//! | `switch_hash` | `"htsim"`: ECMP salts drawn from the run's seed (ours: `"five-tuple"`) | htsim |
//! | `queue_release` | `"end"`: the packet being sent counts in its queue until it has left, ECN decided then (`CompositeQueue`; ours: `"start"`) | end |
//! | `trim_newest_probability` | 0.5: a full queue trims its newest packet instead of the arrival on a coin of 0.5, and queues the arrival (`CompositeQueue::receivePacket`; ours: 0, the arrival) | 0.5 |
//! | `nscc_feedback` | `"htsim"`: an ACK gives NSCC an RTT sample only for a still-outstanding packet's first or (resent once) second transmission, else the delay average with nothing updated (`UecSrc::validateSendTs`); a NACK's cumulatively acknowledged bytes reach NSCC with the next ACK (`processAck` counts the receiver's byte total, which NACKs do not carry) (ours: `"every-ack"`) | htsim |
//! | `inflight` | `"received-bytes"`: an ACK takes out of flight the growth of the receiver's count of new data bytes it carries, so packets received out of order leave with the next ACK whether it names them or not; a NACK takes out only its trimmed packet; a packet waiting to be resent that an acknowledgement names comes back in (`UecSrc::processAck`, `handleAckno`) (ours: `"named-packets"`) | received-bytes |
//! | `tx_time` | `"ps"`: serialization in its whole ps (bytes x 8 x 10^12 / rate), each port carrying the fraction of a ns to its next back-to-back frame: 64 B at 400 Gb/s take 1.28 ns (ours: `"ns"`, rounded to 1 ns; on a host link of 4,150 B data and 64 B ACKs / pulls that is 0.3 % more room for data, enough for RCCC's senders to outrun their 0.99 x line-rate credit and ask for ACKs on 65 % more packets) | ps |
//! | `control_turns` | 10: a host port with control packets and data waiting gives data every 11th turn (`UecNIC::doNextEvent`, control 10 to data 1; ours: 0, control first always) | 10 |
//!
//! * The network BDP is the network RTT x host rate; the MTU is `payload + header` (as htsim's
//!   `-mtu`); the ACK is htsim's 64 B (`UecBasePacket::ACKSIZE`).
//! * The host rate is tier 0's `Downlink_speed_Gbps`. htsim takes it from `-linkspeed` instead
//!   (default 100 Gbps), and every shipped plan passes the topology's host speed there.
//! * The diameter latency is htsim's: 2 x (tier 0 + tier 1 link latencies) + 2 x the ToR's and
//!   1 x the aggregation tier's switch latency; 3 tiers add 2 x the core links' latency and the
//!   aggregation's and the core's switch latency (fat_tree_topology.cpp `initialize`).
//! * An explicit key wins (but 0, "derived", is htsim's derivation here), and the derived keys
//!   follow it: `trimming = false` makes the queue 5 x BDP; an explicit `queue_packets` sets
//!   the RTO's queue (htsim's `-q`); an explicit `payload` or `header` sets the MTU of the
//!   queue, ECN and RTT arithmetic (htsim's `-mtu`).
//! * As htsim (which asserts it), the ECN thresholds must fit the queue: kmin <= kmax <= queue.
//! * The other `[transport.uet]` defaults are htsim's already: `max_window_bdp` 1.5,
//!   `initial_window_packets` 0 (the cap: htsim's initial cwnd = maxwnd), `nscc_target_delay` 0
//!   (0.75 x the base RTT with trimming, 1 x without), `nscc_qa_gate` 3, `rccc_pull_rate` 0.99
//!   and `rccc_credit_per_pull` 16 KiB (fixed in htsim).
//! * With `kind = "roce"` an htsim topology gets our RoCE defaults; nothing changes.

pub mod cm;
pub mod topo;

pub use cm::{parse_cm_file, parse_cm_str, CmConnection, HtsimCm};
pub use topo::{
    parse_topo_file, parse_topo_str, FailedLink, HtsimTier, HtsimTopo, FAILED_LINK_RATIO,
};

/// htsim's ACK (and trimmed header) size in bytes (`UecBasePacket::ACKSIZE`).
pub const ACK_BYTES: u64 = 64;

/// The uet settings `htsim_uec` derives from a topology (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UetDefaults {
    /// `network_max_unloaded_rtt`, ps (htsim's unit; not a whole number of ns in general).
    pub network_rtt_ps: u64,
    /// That RTT to the nearest ns (the `base_rtt` default).
    pub base_rtt_ns: u64,
    /// The network BDP in whole packets, rounded up (htsim `calculate_bdp_pkt`).
    pub bdp_packets: u64,
    /// Switch data queue, packets: the BDP x 1 (trimming) or x 5 (no trimming), unless given.
    pub queue_packets: u64,
    /// ECN marking starts above this many packets: ⌈0.2 x BDP packets⌉.
    pub ecn_kmin_packets: u64,
    /// Every packet is marked above this many: ⌈0.8 x BDP packets⌉.
    pub ecn_kmax_packets: u64,
    /// Minimum RTO, ns: 15 us + 6 x queue bytes x 8 / host rate, to the nearest ns.
    pub rto_ns: u64,
}

/// htsim's defaults for `topo` with packets of `mtu_bytes` (payload + header), with or without
/// trimming; `queue_packets` is an explicit queue size (htsim's `-q`), if any: it replaces the
/// BDP-derived one in the RTO.
#[must_use]
pub fn uet_defaults(
    topo: &HtsimTopo,
    mtu_bytes: u64,
    trimming: bool,
    queue_packets: Option<u64>,
) -> UetDefaults {
    let gbps = u128::from(topo.host_rate_gbps().max(1));
    let mtu = u128::from(mtu_bytes.max(1));
    let rtt_ps = topo.network_rtt_ps(mtu_bytes, ACK_BYTES);
    // BDP bytes = rtt_ps x gbps x 1e9 / 8 / 1e12 = rtt_ps x gbps / 8000.
    let bdp_packets = u64::try_from((u128::from(rtt_ps) * gbps).div_ceil(8000 * mtu))
        .unwrap_or(u64::MAX)
        .max(1);
    let factor = if trimming { 1 } else { 5 };
    let queue = queue_packets.unwrap_or_else(|| bdp_packets.saturating_mul(factor));
    // 6 x queue x mtu x 8 bits at gbps: ns = 48 x queue x mtu / gbps.
    let drain_ns = (48 * u128::from(queue) * mtu + gbps / 2) / gbps;
    UetDefaults {
        network_rtt_ps: rtt_ps,
        base_rtt_ns: rtt_ps.saturating_add(500) / 1000,
        bdp_packets,
        queue_packets: queue,
        ecn_kmin_packets: bdp_packets.saturating_add(4) / 5,
        ecn_kmax_packets: bdp_packets.saturating_mul(4).saturating_add(4) / 5,
        rto_ns: u64::try_from(drain_ns)
            .unwrap_or(u64::MAX)
            .saturating_add(15_000),
    }
}
