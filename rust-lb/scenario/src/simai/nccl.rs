//! SimAI's NCCL flow model: a collective in a group, decomposed into point-to-point flows with
//! their dependencies (issue 39: "collectives decomposed as SimAI's NCCL model does").
//!
//! What SimAI's ns-3 path does by default (its NCCL model, `MockNcclGroup`, with the
//! environment variables `AS_PXN_ENABLE` and `AS_NVLS_ENABLE` unset; SimAI, NSDI '25):
//! * **Rings.** A group has one ring per GPU it holds in a server ("channels"): a group of
//!   `n` ranks over `s` servers holds `l = n / s` ranks per server. The first server's ranks
//!   (the group's `l` smallest, ascending) form a local ring; ring `c` starts at its `c`-th
//!   rank and visits the `l` local ranks in order from there, then the same positions in the
//!   next server (ranks shifted by `delta` = the group's `(l+1)`-th rank minus its first, in
//!   the group's own order), and so on, and closes back to its start.
//! * **All-reduce**: per ring, `2 (n - 1)` steps; in every step every rank sends one chunk of
//!   `size / n / rings` bytes (integer division) to its successor on that ring; a rank's flow
//!   of step `k > 0` waits for the flow of step `k - 1` that its predecessor sent it.
//! * **All-gather, reduce-scatter**: the same with `n - 1` steps.
//! * **In order**: a rank's ring steps run in order. SimAI posts the receive of a step's data
//!   only when the rank sends that step (`NcclFlowModel::ready` calls `sim_recv` with the
//!   step's tag), so when the data of step `k` arrives before the rank has sent step `k` (its
//!   step-`k - 1` data came by a slower path), it waits in SimAI's receive buffer and is taken
//!   when the rank sends step `k`: the send of step `k + 1` is then issued at the same moment
//!   as that of step `k` plus its own processing. Here a direct hop's flow of step `k > 0`
//!   also waits for the hand-off of the same rank's flow of step `k - 1`
//!   ([`NcclFlow::after_ready`]). With send latencies that dominate (SimAI's default, 6 ms)
//!   no step overtakes another and this changes nothing.
//! * **All-to-all**: every rank sends `size / n` to every other rank of the group, all at once.
//! * **Broadcast**: SimAI's reader sends nothing for it ([`CommKind::simai_sends`]).
//! * **Reductions**: some ring sends of an all-reduce or reduce-scatter start
//!   [`SIMAI_REDUCE_DELAY_NS`] later, SimAI's reduction of what the rank received
//!   ([`NcclFlow::reduced`], decided by `mark_reductions` as SimAI's toggle decides).
//!
//! * **PXN** (`AS_PXN_ENABLE=1`; off by default, as in SimAI): with [`NcclOptions::pxn`], the
//!   cross-server hop of an all-reduce or reduce-scatter ring is relayed through the sender's
//!   same-server peer on the destination's rail ([`super::pxn`]).
//!
//! * **NVLS** (`AS_NVLS_ENABLE=1`; off by default, as in SimAI): with [`NcclOptions::nvls`], a
//!   TP all-reduce of 8 or more ranks on H100 / H800 goes through the server's NVSwitch
//!   ([`super::nvls`]).
//!
//! Not modelled here (yet): the tree algorithms, and SimAI's splitting of each flow over several
//! queue pairs.

use super::groups::Group;
use super::pxn;
use super::workload::CommKind;

/// Which of SimAI's optional NCCL behaviours apply (SimAI's environment variables; every one
/// off by default, as in SimAI when the variable is unset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NcclOptions {
    /// `AS_PXN_ENABLE=1`: cross-server ring hops relayed through the peer on the destination's
    /// rail ([`super::pxn`]).
    pub pxn: bool,
    /// `AS_NVLS_ENABLE=1`: a TP all-reduce of 8 or more ranks on H100 / H800 through the
    /// server's NVSwitch ([`super::nvls`]; chosen per collective by [`super::iteration`]).
    pub nvls: bool,
}

/// What a flow is in its ring step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    /// A ring step's transfer from a rank to its successor (or an all-to-all transfer).
    Direct,
    /// PXN's first half: the sender to its relay, the same-server peer on the successor's rail
    /// (SimAI's connection type `RING`, to the sender's `node_recv` rank).
    PxnToRelay,
    /// PXN's second half: the relay to the successor, after the first half (SimAI's connection
    /// type `PXN_INIT`).
    PxnFromRelay,
    /// NVLS: a GPU's chunk to its server's NVSwitch ([`super::nvls`]).
    NvlsUpload,
    /// NVLS: the NVSwitch's chunk to a GPU, after every upload of that chunk.
    NvlsDownload,
}

/// One point-to-point transfer of a decomposed collective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NcclFlow {
    /// Sending rank.
    pub src: u32,
    /// Receiving rank.
    pub dst: u32,
    /// Bytes.
    pub bytes: u64,
    /// Ring (channel) it belongs to (0 for all-to-all).
    pub ring: u32,
    /// Step on its ring (0 for all-to-all).
    pub step: u32,
    /// Indices (in the decomposition) of the flows it waits for (their completion at the
    /// sender): a ring step's one predecessor, or every upload of an NVLS chunk.
    pub after: Vec<usize>,
    /// Index of the flow whose last byte must have been sent first, if any (NVLS: the same
    /// GPU's upload of the previous chunk, [`super::nvls`]).
    pub after_sent: Option<usize>,
    /// Index of the same rank's send of the previous step on its ring, whose hand-off must
    /// come first (direct ring hops; module docs, "In order").
    pub after_ready: Option<usize>,
    /// What it is in its ring step.
    pub hop: Hop,
    /// SimAI reduces what it received before sending this flow: it starts
    /// [`SIMAI_REDUCE_DELAY_NS`] later (`mark_reductions`).
    pub reduced: bool,
}

/// The group's rings, each as its ranks in ring order (module docs).
#[must_use]
pub fn rings(group: &Group) -> Vec<Vec<u32>> {
    let n = group.ranks.len();
    let servers = group.servers.len().max(1);
    let local_n = (n / servers).max(1);
    let mut local: Vec<u32> = group.ranks.clone();
    local.sort_unstable();
    local.truncate(local_n);
    let delta = match (group.ranks.get(local_n), group.ranks.first()) {
        (Some(&b), Some(&a)) if servers > 1 => b.wrapping_sub(a),
        _ => 0,
    };
    (0..local_n)
        .map(|c| {
            (0..servers)
                .flat_map(|s| {
                    let shift = delta.wrapping_mul(u32::try_from(s).unwrap_or(u32::MAX));
                    local
                        .iter()
                        .cycle()
                        .skip(c)
                        .take(local_n)
                        .map(move |&r| r.wrapping_add(shift))
                })
                .collect()
        })
        .collect()
}

/// `kind` of `bytes` (per rank, as the workload file gives it) in `group` by SimAI's default
/// model ([`NcclOptions::default`]).
#[must_use]
pub fn decompose(kind: CommKind, group: &Group, bytes: u64) -> Vec<NcclFlow> {
    decompose_with(kind, group, bytes, NcclOptions::default())
}

/// `kind` of `bytes` (per rank, as the workload file gives it) in `group` with `options`, as
/// flows in an order where every flow comes after the one it waits for: ring by ring, step by
/// step, position by position (a relayed hop's two flows one after the other).
#[must_use]
pub fn decompose_with(
    kind: CommKind,
    group: &Group,
    bytes: u64,
    options: NcclOptions,
) -> Vec<NcclFlow> {
    let n = group.ranks.len();
    if n < 2 || !kind.simai_sends() {
        return Vec::new();
    }
    let n64 = n as u64;
    match kind {
        CommKind::AllToAll => group
            .ranks
            .iter()
            .flat_map(|&src| {
                group
                    .ranks
                    .iter()
                    .filter(move |&&dst| dst != src)
                    .map(move |&dst| NcclFlow {
                        src,
                        dst,
                        bytes: bytes / n64,
                        ring: 0,
                        step: 0,
                        after: Vec::new(),
                        after_sent: None,
                        after_ready: None,
                        hop: Hop::Direct,
                        reduced: false,
                    })
            })
            .collect(),
        CommKind::AllReduce | CommKind::AllGather | CommKind::ReduceScatter => {
            let steps = if kind == CommKind::AllReduce {
                2 * (n - 1)
            } else {
                n - 1
            };
            let rings = rings(group);
            let chunk = bytes / n64 / rings.len() as u64;
            let servers = group.servers.len().max(1);
            let relayed = options.pxn && pxn::relays(kind);
            let mut flows = Vec::with_capacity(rings.len() * steps * n * 2);
            for (ring_id, ring) in (0u32..).zip(&rings) {
                // Per position, the flow of the previous step that delivered to it: its flow of
                // this step waits for that one.
                let mut delivered: Vec<Option<usize>> = vec![None; n];
                // Per position, its own direct send of the previous step.
                let mut sent: Vec<Option<usize>> = vec![None; n];
                for step in 0..steps {
                    let step_no = u32::try_from(step).unwrap_or(u32::MAX);
                    let mut delivers: Vec<Option<usize>> = vec![None; n];
                    for (p, &src) in ring.iter().enumerate() {
                        let next = (p + 1) % n;
                        let dst = ring.get(next).copied().unwrap_or(src);
                        let flow = |src, dst, after: Option<usize>, hop| NcclFlow {
                            src,
                            dst,
                            bytes: chunk,
                            ring: ring_id,
                            step: step_no,
                            after: after.into_iter().collect(),
                            after_sent: None,
                            after_ready: None,
                            hop,
                            reduced: false,
                        };
                        let after = delivered.get(p).copied().flatten();
                        let relay = if relayed {
                            pxn::relay(ring, servers, p)
                        } else {
                            None
                        };
                        let own = sent.get_mut(p);
                        if let Some(relay) = relay {
                            flows.push(flow(src, relay, after, Hop::PxnToRelay));
                            let first = flows.len() - 1;
                            flows.push(flow(relay, dst, Some(first), Hop::PxnFromRelay));
                            if let Some(own) = own {
                                *own = None;
                            }
                        } else {
                            let mut direct = flow(src, dst, after, Hop::Direct);
                            if let Some(own) = own {
                                direct.after_ready = own.replace(flows.len());
                            }
                            flows.push(direct);
                        }
                        if let Some(d) = delivers.get_mut(next) {
                            *d = Some(flows.len() - 1);
                        }
                    }
                    delivered = delivers;
                }
            }
            mark_reductions(kind, n, rings.len(), &mut flows);
            flows
        }
        CommKind::Broadcast => Vec::new(),
    }
}

/// SimAI's reduction time, ns: `mem_write + 2 mem_read` of `PacketBundle::call`, 10 ns each
/// without a memory model (`Sys::mem_read`, `Sys::mem_write`).
pub const SIMAI_REDUCE_DELAY_NS: u64 = 30;

/// Marks the ring flows SimAI sends after a reduction ([`NcclFlow::reduced`]), as its
/// `NcclTreeFlowModel::insert_packets` decides, per rank of the collective: each channel (ring)
/// counts the rank's sends in rounds of `n` (one "zero-latency" send, then `n - 1`), and every
/// channel's start of a round flips one toggle the rank's channels share. A send after the
/// first of its round is reduced in a reduce-scatter always, in an all-reduce while the toggle
/// is set. So with one ring an all-reduce's steps 1 to `n - 1` wait the reduction and the rest
/// do not; with an even number of rings starting together the toggle is clear again by the
/// time any of them sends its second flow, and nothing waits. Deviation: the sends are taken
/// in the order they become ready when send latencies dominate (by the number of flows before
/// them on their chain of dependencies, then by ring); SimAI takes them in the order they
/// become ready in its run.
fn mark_reductions(kind: CommKind, n: usize, rings: usize, flows: &mut [NcclFlow]) {
    if !matches!(kind, CommKind::AllReduce | CommKind::ReduceScatter) {
        return;
    }
    // A flow's depth: how many flows precede it on its chain of dependencies (each one a send
    // latency), the order in which flows become ready when latencies dominate.
    let mut depth: Vec<usize> = Vec::with_capacity(flows.len());
    for f in flows.iter() {
        let d = f
            .after
            .iter()
            .filter_map(|&j| depth.get(j))
            .map(|d| d + 1)
            .max();
        depth.push(d.unwrap_or(0));
    }
    let mut order: Vec<(u32, usize, u32, usize)> = flows
        .iter()
        .zip(&depth)
        .enumerate()
        .map(|(i, (f, &d))| (f.src, d, f.ring, i))
        .collect();
    order.sort_unstable();
    let mut rank = None;
    let mut toggle = false;
    let mut left: Vec<(usize, usize)> = Vec::new(); // per ring: (zero-latency, others) left
    for (.., i) in order {
        let Some(f) = flows.get_mut(i) else {
            continue;
        };
        if rank != Some(f.src) {
            rank = Some(f.src);
            toggle = false;
            left = vec![(0, 0); rings];
        }
        let Some(c) = left.get_mut(f.ring as usize) else {
            continue;
        };
        if *c == (0, 0) {
            *c = (1, n - 1);
            toggle = !toggle;
        }
        if c.0 > 0 {
            c.0 -= 1;
        } else {
            c.1 = c.1.saturating_sub(1);
            f.reduced = kind == CommKind::ReduceScatter || toggle;
        }
    }
}

#[cfg(test)]
mod tests;
