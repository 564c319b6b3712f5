//! NCCL flow-model tests: rings and flows of SimAI's default (ring) model on hand-worked groups,
//! then first principles: bytes every rank sends and receives per collective, and every flow's
//! dependency is its predecessor's previous step.

use super::*;
use crate::simai::groups::{GroupSizes, Groups};
use crate::simai::workload::CommGroup;

fn groups(world: u32, gps: u32, tp: u32, ep: Option<u32>) -> Groups {
    Groups::build(GroupSizes::new(world, gps, tp, ep).unwrap())
}

#[test]
fn rings_rotate_the_local_ring_and_repeat_it_per_server() {
    // TP 8 in one server: 8 rings, each a rotation of 0..8.
    let g = groups(16, 8, 8, None);
    let tp = g.group_of(9, CommGroup::Tp).unwrap();
    let r = rings(tp);
    assert_eq!(r.len(), 8);
    assert_eq!(r[0], (8..16).collect::<Vec<u32>>());
    assert_eq!(r[3], [11, 12, 13, 14, 15, 8, 9, 10]);
    // DP over two servers, one rank each: one ring, 5 -> 13 -> 5.
    let dp = g.group_of(5, CommGroup::Dp).unwrap();
    assert_eq!(rings(dp), [vec![5, 13]]);
    // MoE DP group {0, 2, ..., 30} over four servers: 4 local ranks {0,2,4,6}, delta 8.
    let g = groups(32, 8, 2, Some(4));
    let dp = g.group_of(0, CommGroup::Dp).unwrap();
    let r = rings(dp);
    assert_eq!(r.len(), 4);
    assert_eq!(
        r[1],
        [2, 4, 6, 0, 10, 12, 14, 8, 18, 20, 22, 16, 26, 28, 30, 24]
    );
    for ring in &r {
        let mut sorted = ring.clone();
        sorted.sort_unstable();
        let mut all = dp.ranks.clone();
        all.sort_unstable();
        assert_eq!(sorted, all, "every ring visits the group once");
    }
}

#[test]
fn ring_all_reduce_is_two_n_minus_one_steps_of_size_over_n_rings() {
    let g = groups(16, 8, 8, None);
    let tp = g.group_of(0, CommGroup::Tp).unwrap();
    let bytes = 20_971_520; // a TP all-reduce of AICB's GPT-13B file
    let f = decompose(CommKind::AllReduce, tp, bytes);
    assert_eq!(f.len(), 8 * 14 * 8, "rings x 2(n-1) steps x ranks");
    assert!(f.iter().all(|x| x.bytes == bytes / 8 / 8));
    // First principles: each rank sends and receives 2 (n-1)/n of the data (ring all-reduce).
    for r in 0..8 {
        let sent: u64 = f.iter().filter(|x| x.src == r).map(|x| x.bytes).sum();
        let recv: u64 = f.iter().filter(|x| x.dst == r).map(|x| x.bytes).sum();
        assert_eq!(sent, 2 * 7 * (bytes / 64) * 8);
        assert_eq!(recv, sent);
    }
    // Dependencies: step k of p waits for step k-1 of its predecessor, which sent to p.
    for (i, x) in f.iter().enumerate() {
        match *x.after.as_slice() {
            [] => assert_eq!(x.step, 0),
            [j] => {
                assert!(j < i);
                let p = &f[j];
                assert_eq!((p.ring, p.step + 1, p.dst), (x.ring, x.step, x.src));
            }
            _ => panic!("a ring flow waits for more than one: {x:?}"),
        }
        // In order: step k of p also waits for the hand-off of p's own step k-1 on the ring.
        match x.after_ready {
            None => assert_eq!(x.step, 0),
            Some(j) => {
                assert!(j < i);
                let p = &f[j];
                assert_eq!(
                    (p.ring, p.step + 1, p.src, p.dst),
                    (x.ring, x.step, x.src, x.dst)
                );
            }
        }
    }
}

#[test]
fn pxn_relayed_hops_and_all_to_all_wait_for_no_hand_off() {
    // PXN's relayed hops keep SimAI's other receive tags (not modelled: module docs); an
    // all-to-all has no steps.
    let g = groups(32, 8, 2, Some(4));
    let dp = g.group_of(3, CommGroup::Dp).unwrap();
    let pxn = NcclOptions {
        pxn: true,
        nvls: false,
    };
    let f = decompose_with(CommKind::ReduceScatter, dp, 1 << 20, pxn);
    assert!(f.iter().any(|x| x.hop == Hop::PxnToRelay));
    assert!(f
        .iter()
        .filter(|x| x.hop != Hop::Direct)
        .all(|x| x.after_ready.is_none()));
    let a = decompose(CommKind::AllToAll, dp, 1 << 20);
    assert!(a.iter().all(|x| x.after_ready.is_none()));
}

#[test]
fn all_gather_and_reduce_scatter_take_n_minus_one_steps() {
    let g = groups(32, 8, 2, Some(4));
    let dp = g.group_of(3, CommGroup::Dp).unwrap(); // 16 ranks, 4 rings
    for kind in [CommKind::AllGather, CommKind::ReduceScatter] {
        let f = decompose(kind, dp, 1 << 20);
        assert_eq!(f.len(), 4 * 15 * 16);
        assert_eq!(f[0].bytes, (1 << 20) / 16 / 4);
        assert_eq!(f.iter().map(|x| x.step).max(), Some(14));
    }
}

#[test]
fn all_to_all_sends_size_over_n_to_every_other_rank_at_once() {
    let g = groups(32, 8, 2, Some(4));
    let ep = g.group_of(13, CommGroup::Ep).unwrap(); // {9, 11, 13, 15}
    let f = decompose(CommKind::AllToAll, ep, 4_000_001);
    assert_eq!(f.len(), 12);
    assert!(f
        .iter()
        .all(|x| x.bytes == 1_000_000 && x.after.is_empty() && x.src != x.dst));
    let mut pairs: Vec<(u32, u32)> = f.iter().map(|x| (x.src, x.dst)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    assert_eq!(pairs.len(), 12);
}

#[test]
fn broadcast_and_single_rank_groups_send_nothing() {
    let g = groups(16, 8, 8, None);
    let tp = g.group_of(0, CommGroup::Tp).unwrap();
    assert!(decompose(CommKind::Broadcast, tp, 16384).is_empty());
    let one = Group {
        ranks: vec![3],
        servers: vec![0],
    };
    assert!(decompose(CommKind::AllReduce, &one, 1 << 20).is_empty());
}

#[test]
fn reductions_fall_where_simai_s_toggle_puts_them() {
    // DP 4 over four servers, one rank each: one ring (channel). SimAI's rounds are 4 sends per
    // channel; the first round's toggle is set, so an all-reduce's steps 1..=3 wait the 30 ns
    // reduction and steps 0, 4, 5 do not (data/simai/reference/ case 4: its NIC flows' starts).
    let g = groups(32, 8, 8, None);
    let dp = g.group_of(0, CommGroup::Dp).unwrap();
    assert_eq!(rings(dp).len(), 1);
    let reduced_steps = |kind| {
        let f = decompose(kind, dp, 4 << 20);
        let mut steps: Vec<u32> = f.iter().filter(|x| x.reduced).map(|x| x.step).collect();
        steps.sort_unstable();
        steps.dedup();
        for s in &steps {
            // every rank's flow of a reduced step is reduced (the rings are symmetric)
            assert_eq!(f.iter().filter(|x| x.step == *s && x.reduced).count(), 4);
        }
        steps
    };
    assert_eq!(reduced_steps(CommKind::AllReduce), [1, 2, 3]);
    // A reduce-scatter reduces every send after the first of a round; an all-gather none.
    assert_eq!(reduced_steps(CommKind::ReduceScatter), [1, 2]);
    assert!(reduced_steps(CommKind::AllGather).is_empty());
    // TP 8 in one server: 8 channels start rounds together, the shared toggle flips 8 times
    // back to clear: nothing waits (case 1: every NVLink flow's start SimAI's without a delay).
    let tp = g.group_of(0, CommGroup::Tp).unwrap();
    assert!(decompose(CommKind::AllReduce, tp, 16 << 20)
        .iter()
        .all(|x| !x.reduced));
}
