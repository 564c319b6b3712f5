//! SimAI's parallel groups: which ranks (GPUs) take part in a collective of each kind
//! (issue 39: "parallel groups mapped to ranks as SimAI maps them").
//!
//! SimAI (Wang et al., "SimAI: Unifying Architecture Design and Performance Tuning for
//! Large-Scale Large Language Model Training with Scalability and Precision", NSDI '25) builds
//! its groups once per run from the workload header and the topology, in its NCCL model's
//! group constructor (`MockNcclGroup`; sizes from `Sys::mock_nccl_grobal_group_init`). Rank r
//! is GPU r of the topology file; the world is every GPU of the topology. Sizes:
//! * TP = the header's `model_parallel_NPU_group:`;
//! * PP = 1 whatever the header says (SimAI's ns-3 backend simulates no pipeline traffic);
//! * DP = world / TP;
//! * EP = the header's `ep:` and DP_EP = DP / EP.
//!
//! The groups of a kind partition the world (kinds of size 1 have none):
//! * TP: blocks of TP consecutive ranks (`i·TP + j`), inside one server when TP ≤ the GPUs
//!   per server;
//! * DP: ranks strided by world / DP (`i + j·world/DP`): the same position in every TP block;
//! * EP: within each run of EP consecutive TP groups, the ranks at one position `k` of each;
//! * DP_EP: the TP groups `i, i + EP, i + 2·EP, ...` (DP_EP of them), the ranks at one position.
//!
//! So an EP group and a DP_EP group are each a part of one DP group, and one EP group and one
//! DP_EP group meet in exactly one rank (DP = EP × DP_EP).
//!
//! Deviations (our choices where SimAI's behaviour is undefined or an artefact):
//! * A header without `ep:` means EP = 1 (SimAI leaves the size uninitialised and divides by
//!   it; AICB's older files, e.g. `data/simai/workload/G13B-M1-C01_*`, have no `ep:`).
//! * SimAI creates each EP and DP_EP group EP (resp. DP_EP) times over, identical copies (its
//!   loop over `j` does not move the TP index); a rank's group is the last copy, so the
//!   membership is the same as one copy's, which is what is kept here.
//! * With TP = 1 SimAI builds no EP or DP_EP group (it walks the TP groups, which it creates
//!   only for TP > 1), so such a collective has no group there; here the TP blocks of one rank
//!   stand in and the groups follow the same rules.
//! * Sizes that do not divide (SimAI logs "The group division method is incorrect." and goes
//!   on with no groups) are an error.

use super::workload::CommGroup;

/// Group sizes of a run (see the module docs for how SimAI derives them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupSizes {
    /// GPUs in the topology (ranks `0..world`).
    pub world: u32,
    /// GPUs per server (the topology's header).
    pub gpus_per_server: u32,
    /// Tensor parallel.
    pub tp: u32,
    /// Data parallel (world / TP).
    pub dp: u32,
    /// Expert parallel.
    pub ep: u32,
    /// Data parallel across experts (DP / EP).
    pub dp_ep: u32,
}

impl GroupSizes {
    /// Sizes for `world` GPUs in servers of `gpus_per_server`, the header's TP and EP (`None`
    /// for an absent `ep:` = 1). Errors name the header field and say why (the caller adds the
    /// file and line).
    ///
    /// # Errors
    /// A size of 0, a world that is not whole servers, TP not dividing the world, EP not
    /// dividing DP.
    pub fn new(world: u32, gpus_per_server: u32, tp: u32, ep: Option<u32>) -> Result<Self, String> {
        let ep = ep.unwrap_or(1);
        if gpus_per_server == 0 || world == 0 || world % gpus_per_server != 0 {
            return Err(format!(
                "all_gpus: {world} GPUs are not a whole number of servers of {gpus_per_server}"
            ));
        }
        if tp == 0 || world % tp != 0 {
            return Err(format!(
                "model_parallel_NPU_group: TP {tp} does not divide the {world} GPUs"
            ));
        }
        let dp = world / tp;
        if ep == 0 || dp % ep != 0 {
            return Err(format!(
                "ep: EP {ep} does not divide DP {dp} (= {world} GPUs / TP {tp})"
            ));
        }
        Ok(GroupSizes {
            world,
            gpus_per_server,
            tp,
            dp,
            ep,
            dp_ep: dp / ep,
        })
    }

    /// The size of a group of `kind`.
    #[must_use]
    pub fn size(&self, kind: CommGroup) -> u32 {
        match kind {
            CommGroup::Tp => self.tp,
            CommGroup::Dp => self.dp,
            CommGroup::Ep => self.ep,
            CommGroup::DpEp => self.dp_ep,
        }
    }
}

/// One group: its ranks in SimAI's order (the order its rings start from) and the servers it
/// spans, ascending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Ranks, in SimAI's order.
    pub ranks: Vec<u32>,
    /// Servers (rank / GPUs per server), ascending.
    pub servers: Vec<u32>,
}

/// Every group of every kind, and each rank's group of each kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Groups {
    /// The sizes they were built from.
    pub sizes: GroupSizes,
    /// Groups per kind, in SimAI's creation order (indexed by [`kind_index`]).
    by_kind: [Vec<Group>; 4],
    /// Per kind, per rank: the index of its group (`u32::MAX` for a kind of size 1).
    of_rank: [Vec<u32>; 4],
}

/// Position of `kind` in the per-kind arrays.
fn kind_index(kind: CommGroup) -> usize {
    match kind {
        CommGroup::Tp => 0,
        CommGroup::Dp => 1,
        CommGroup::Ep => 2,
        CommGroup::DpEp => 3,
    }
}

impl Groups {
    /// Builds the groups of `sizes` as SimAI does (module docs).
    #[must_use]
    pub fn build(sizes: GroupSizes) -> Groups {
        let GroupSizes {
            world,
            tp,
            dp,
            ep,
            dp_ep,
            ..
        } = sizes;
        let tp_groups = world / tp; // = DP with PP = 1
                                    // Rank at position k of TP block b (the blocks exist for every TP, also TP = 1).
        let at = |b: u32, k: u32| b * tp + k;
        let mut lists: [Vec<Vec<u32>>; 4] = Default::default();
        let [tp_list, dp_list, ep_list, dp_ep_list] = &mut lists;
        if tp > 1 {
            *tp_list = (0..tp_groups)
                .map(|b| (0..tp).map(|k| at(b, k)).collect())
                .collect();
        }
        if dp > 1 {
            let stride = world / dp;
            *dp_list = (0..stride)
                .map(|i| (0..dp).map(|j| i + j * stride).collect())
                .collect();
        }
        if ep > 1 {
            for run in 0..tp_groups / ep {
                for k in 0..tp {
                    ep_list.push((run * ep..(run + 1) * ep).map(|b| at(b, k)).collect());
                }
            }
        }
        if dp_ep > 1 {
            for first in 0..tp_groups / dp_ep {
                for k in 0..tp {
                    dp_ep_list.push((0..dp_ep).map(|m| at(first + m * ep, k)).collect());
                }
            }
        }
        let mut by_kind: [Vec<Group>; 4] = Default::default();
        let mut of_rank: [Vec<u32>; 4] = Default::default();
        for ((list, groups), index) in lists.into_iter().zip(&mut by_kind).zip(&mut of_rank) {
            *index = vec![u32::MAX; world as usize];
            for (g, ranks) in (0u32..).zip(list) {
                for &r in &ranks {
                    if let Some(slot) = index.get_mut(r as usize) {
                        *slot = g;
                    }
                }
                let mut servers: Vec<u32> =
                    ranks.iter().map(|r| r / sizes.gpus_per_server).collect();
                servers.sort_unstable();
                servers.dedup();
                groups.push(Group { ranks, servers });
            }
        }
        Groups {
            sizes,
            by_kind,
            of_rank,
        }
    }

    /// The groups of `kind` (none when its size is 1).
    #[must_use]
    pub fn of_kind(&self, kind: CommGroup) -> &[Group] {
        self.by_kind
            .get(kind_index(kind))
            .map_or(&[], Vec::as_slice)
    }

    /// The group of `kind` that `rank` belongs to (`None` when the kind's size is 1 or the rank
    /// is outside the world).
    #[must_use]
    pub fn group_of(&self, rank: u32, kind: CommGroup) -> Option<&Group> {
        let k = kind_index(kind);
        let g = *self.of_rank.get(k)?.get(rank as usize)?;
        self.by_kind.get(k)?.get(g as usize)
    }
}

#[cfg(test)]
mod tests;
