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
//! * **All-to-all**: every rank sends `size / n` to every other rank of the group, all at once.
//! * **Broadcast**: SimAI's reader sends nothing for it ([`CommKind::simai_sends`]).
//!
//! Not modelled here (yet): PXN (`AS_PXN_ENABLE=1`: a cross-server hop relayed through the
//! peer GPU on the destination's rail), NVLS (`AS_NVLS_ENABLE=1` on H100/H800 TP groups of 8
//! or more), the tree algorithms, and SimAI's splitting of each flow over several queue pairs.

use super::groups::Group;
use super::workload::CommKind;

/// One point-to-point transfer of a decomposed collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// Index (in the decomposition) of the flow it waits for, if any.
    pub after: Option<usize>,
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

/// `kind` of `bytes` (per rank, as the workload file gives it) in `group`, as flows in an
/// order where every flow comes after the one it waits for.
#[must_use]
pub fn decompose(kind: CommKind, group: &Group, bytes: u64) -> Vec<NcclFlow> {
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
                        after: None,
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
            let mut flows = Vec::with_capacity(rings.len() * steps * n);
            for (ring_id, ring) in (0u32..).zip(&rings) {
                // Position p sends to p + 1; its step-k flow waits for the step-(k-1) flow of
                // position p - 1, which was pushed `n` flows earlier, one position back.
                let base = flows.len();
                for step in 0..steps {
                    for (p, &src) in ring.iter().enumerate() {
                        let dst = ring.get((p + 1) % n).copied().unwrap_or(src);
                        let after = (step > 0).then(|| base + (step - 1) * n + (p + n - 1) % n);
                        flows.push(NcclFlow {
                            src,
                            dst,
                            bytes: chunk,
                            ring: ring_id,
                            step: u32::try_from(step).unwrap_or(u32::MAX),
                            after,
                        });
                    }
                }
            }
            flows
        }
        CommKind::Broadcast => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
