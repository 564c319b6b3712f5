//! Group tests: SimAI's construction on hand-worked cases, then its invariants (each kind
//! partitions the world, EP and DP_EP inside DP and crossing in one rank) over many shapes.

use super::*;

fn ranks(g: &Groups, kind: CommGroup) -> Vec<Vec<u32>> {
    g.of_kind(kind).iter().map(|x| x.ranks.clone()).collect()
}

#[test]
fn dense_tp8_over_two_servers() {
    // GPT-13B-like: 16 GPUs, 8 per server, TP 8 (AICB's files without `ep:`).
    let g = Groups::build(GroupSizes::new(16, 8, 8, None).unwrap());
    assert_eq!((g.sizes.dp, g.sizes.ep, g.sizes.dp_ep), (2, 1, 2));
    assert_eq!(
        ranks(&g, CommGroup::Tp),
        [(0..8).collect::<Vec<_>>(), (8..16).collect()]
    );
    // DP: the same position in both servers.
    let dp = ranks(&g, CommGroup::Dp);
    assert_eq!(dp.len(), 8);
    assert_eq!(dp[0], [0, 8]);
    assert_eq!(dp[7], [7, 15]);
    assert!(g.of_kind(CommGroup::Ep).is_empty(), "EP 1: no group");
    // DP_EP = DP here: TP groups 0 and 1, one position each.
    assert_eq!(ranks(&g, CommGroup::DpEp), dp);
    assert_eq!(g.group_of(3, CommGroup::Tp).unwrap().servers, [0]);
    assert_eq!(g.group_of(3, CommGroup::Dp).unwrap().servers, [0, 1]);
    assert!(g.group_of(3, CommGroup::Ep).is_none());
    assert!(g.group_of(16, CommGroup::Tp).is_none(), "outside the world");
}

#[test]
fn moe_tp2_ep4_over_four_servers() {
    // 32 GPUs, 8 per server, TP 2, EP 4: DP 16, DP_EP 4; worked by hand from the rules.
    let g = Groups::build(GroupSizes::new(32, 8, 2, Some(4)).unwrap());
    assert_eq!((g.sizes.dp, g.sizes.dp_ep), (16, 4));
    let tp = ranks(&g, CommGroup::Tp);
    assert_eq!(
        (tp.len(), &tp[0], &tp[15]),
        (16, &vec![0, 1], &vec![30, 31])
    );
    let dp = ranks(&g, CommGroup::Dp);
    assert_eq!(dp.len(), 2);
    assert_eq!(dp[0], (0..16).map(|j| 2 * j).collect::<Vec<u32>>());
    assert_eq!(dp[1], (0..16).map(|j| 2 * j + 1).collect::<Vec<u32>>());
    // EP: runs of 4 TP groups, one position: {0,2,4,6}, {1,3,5,7}, {8,10,12,14}, ...
    let ep = ranks(&g, CommGroup::Ep);
    assert_eq!(ep.len(), 8);
    assert_eq!(ep[0], [0, 2, 4, 6]);
    assert_eq!(ep[1], [1, 3, 5, 7]);
    assert_eq!(ep[2], [8, 10, 12, 14]);
    assert_eq!(
        g.group_of(13, CommGroup::Ep).unwrap().ranks,
        [9, 11, 13, 15]
    );
    // DP_EP: TP groups i, i+4, i+8, i+12: {0,8,16,24}, {1,9,17,25}, {2,10,18,26}, ...
    let dp_ep = ranks(&g, CommGroup::DpEp);
    assert_eq!(dp_ep.len(), 8);
    assert_eq!(dp_ep[0], [0, 8, 16, 24]);
    assert_eq!(dp_ep[1], [1, 9, 17, 25]);
    assert_eq!(dp_ep[2], [2, 10, 18, 26]);
    assert_eq!(
        g.group_of(24, CommGroup::DpEp).unwrap().servers,
        [0, 1, 2, 3]
    );
    assert_eq!(g.group_of(13, CommGroup::Ep).unwrap().servers, [1]);
}

#[test]
fn every_kind_partitions_the_world_and_dp_is_ep_by_dp_ep() {
    for (world, gps) in [(8, 8), (16, 8), (32, 8), (64, 8), (48, 4), (128, 8)] {
        for tp in [1, 2, 4, 8, 16] {
            for ep in [1, 2, 4, 8] {
                let Ok(sizes) = GroupSizes::new(world, gps, tp, Some(ep)) else {
                    assert!(world % tp != 0 || (world / tp) % ep != 0);
                    continue;
                };
                let g = Groups::build(sizes);
                for kind in CommGroup::ALL.iter().copied() {
                    let size = sizes.size(kind);
                    let groups = g.of_kind(kind);
                    if size == 1 {
                        assert!(groups.is_empty());
                        continue;
                    }
                    assert_eq!(groups.len() as u32 * size, world, "{kind} partitions");
                    let mut seen = vec![false; world as usize];
                    for (i, grp) in groups.iter().enumerate() {
                        assert_eq!(grp.ranks.len() as u32, size);
                        for &r in &grp.ranks {
                            assert!(!seen[r as usize], "{kind}: rank {r} twice");
                            seen[r as usize] = true;
                            assert_eq!(g.group_of(r, kind), Some(&groups[i]));
                        }
                    }
                }
                if tp <= gps && tp > 1 {
                    assert!(g
                        .of_kind(CommGroup::Tp)
                        .iter()
                        .all(|x| x.servers.len() == 1));
                }
                // EP and DP_EP groups are parts of one DP group and cross in one rank.
                for r in 0..world {
                    let dp: Vec<u32> = g
                        .group_of(r, CommGroup::Dp)
                        .map_or(vec![r], |x| x.ranks.clone());
                    let ep_g = g
                        .group_of(r, CommGroup::Ep)
                        .map_or(vec![r], |x| x.ranks.clone());
                    let dpep = g
                        .group_of(r, CommGroup::DpEp)
                        .map_or(vec![r], |x| x.ranks.clone());
                    assert!(ep_g.iter().chain(&dpep).all(|x| dp.contains(x)));
                    assert_eq!(ep_g.iter().filter(|x| dpep.contains(x)).count(), 1);
                    assert_eq!(ep_g.len() * dpep.len(), dp.len());
                }
            }
        }
    }
}

#[test]
fn sizes_that_do_not_divide_are_refused_with_their_field() {
    let e = |w, gps, tp, ep| GroupSizes::new(w, gps, tp, ep).unwrap_err();
    assert!(
        e(12, 8, 4, None).starts_with("all_gpus: 12 GPUs are not a whole number of servers of 8")
    );
    assert!(e(16, 8, 3, None).starts_with("model_parallel_NPU_group: TP 3 does not divide the 16"));
    assert!(e(16, 8, 0, None).starts_with("model_parallel_NPU_group:"));
    assert!(e(16, 8, 8, Some(4)).starts_with("ep: EP 4 does not divide DP 2"));
    assert!(e(16, 8, 8, Some(0)).starts_with("ep:"));
}
