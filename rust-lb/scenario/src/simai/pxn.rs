//! SimAI's PXN: a ring's cross-server hop relayed through the sender's same-server peer on the
//! destination's rail (NCCL's "PCI x NVLink" path; SimAI, NSDI '25, with the environment
//! variable `AS_PXN_ENABLE=1`).
//!
//! What SimAI's NCCL model does (`MockNcclGroup::genAllReduceRingFlowModels` and
//! `MockNcclGroup::genReduceScatterFlowModels` in SimAI's
//! `astra-sim-alibabacloud/astra-sim/system/MockNcclGroup.cc`; the ring's per-rank entries
//! `{prev, next, node_recv, node_send}` from `MockNcclGroup::genringchannels`):
//! * A ring visits the group's servers one after the other, `l` ranks in each
//!   ([`super::nccl::rings`]); in each server its first rank there is the server's `node_recv`
//!   (it receives the hop from the previous server) and its last the `node_send` (it sends the
//!   hop to the next server's `node_recv`, which holds the same local position, hence the same
//!   rail, as the sending server's `node_recv`).
//! * When the group spans more than one server and `l > 1`, every step's flow of a `node_send`
//!   rank to its successor becomes two flows of the same chunk size: the `node_send` rank to its
//!   server's `node_recv` rank (NVLink), then, once that one has arrived, the `node_recv` rank
//!   to the successor (the NIC, rail to rail). The successor's next step waits for the second.
//!   All other flows are unchanged; with `l = 1` (one rank of the group per server: the DP
//!   groups of TP 8 on 8-GPU servers) or one server, PXN changes nothing.
//! * Only all-reduce and reduce-scatter: `MockNcclGroup::genAllGatherFlowModels` compares the
//!   variable's `const char*` with the literal `"1"` by address, so its PXN branch never runs;
//!   all-to-all has none.
//!
//! Checked against SimAI's own run of case 3 with `AS_PXN_ENABLE=1`
//! (`data/simai/reference/case3_w64_tp4_64g_pxn`): its 5,760 DP flows (24 per ring step: 16
//! ring hops, 8 of them relayed), their sizes and their pairs, and the per-layer times.
//!
//! Timing is [`super::iteration`]'s: each relayed half waits the send latency like any flow, as
//! SimAI's run shows (its DP all-reduce takes 45 rather than 30 send latencies, 1.5 per step).
//!
//! Deviations: none known in the flows. In SimAI's runs, from the all-reduce's 10th ring step on,
//! some flows of the ranks that relay start 30 ns later than here (our reading: SimAI's
//! per-packet reduction delay, which `NcclTreeFlowModel::insert_packets` requests on alternate
//! rounds of packets per channel, rounds that a relay's extra flows shift; not modelled):
//! per collective within 0.2 %, `data/simai/reference/README.md`.

use super::workload::CommKind;

/// Whether SimAI relays `kind`'s cross-server hops when PXN is on (module docs).
#[must_use]
pub fn relays(kind: CommKind) -> bool {
    matches!(kind, CommKind::AllReduce | CommKind::ReduceScatter)
}

/// The relay of the flow sent by position `p` of `ring` (the group's ranks in ring order, over
/// `servers` servers, the same number of ranks in each), if PXN relays it: `p` is the last of
/// its server's ranks on the ring and not also the first; the relay is the first
/// (`node_recv`).
#[must_use]
pub fn relay(ring: &[u32], servers: usize, p: usize) -> Option<u32> {
    if servers < 2 || ring.is_empty() || ring.len() % servers != 0 {
        return None;
    }
    let local_n = ring.len() / servers;
    if local_n < 2 || p >= ring.len() || p % local_n != local_n - 1 {
        return None;
    }
    ring.get(p + 1 - local_n).copied()
}

#[cfg(test)]
mod tests;
