//! PXN tests: the relayed flows of case 3's DP group (TP 4 on 8-GPU servers: two ranks of each
//! DP group per server) as SimAI's run with `AS_PXN_ENABLE=1` sends them
//! (`data/simai/reference/case3_w64_tp4_64g_pxn/fct.txt`), and what PXN leaves alone.

use super::*;
use crate::simai::groups::{GroupSizes, Groups};
use crate::simai::nccl::{decompose, decompose_with, rings, Hop, NcclOptions};
use crate::simai::workload::CommGroup;

const PXN: NcclOptions = NcclOptions {
    pxn: true,
    nvls: false,
};

fn groups(world: u32, gps: u32, tp: u32) -> Groups {
    Groups::build(GroupSizes::new(world, gps, tp, None).unwrap())
}

/// How many of `flows` go from `src` to `dst`.
fn count(flows: &[crate::simai::NcclFlow], src: u32, dst: u32) -> usize {
    flows
        .iter()
        .filter(|f| (f.src, f.dst) == (src, dst))
        .count()
}

#[test]
fn relay_is_the_first_rank_of_the_senders_server_on_the_ring() {
    // Ring 0 of case 3's DP group of rank 0: [0, 4, 8, 12, ..., 56, 60], two per server.
    let ring: Vec<u32> = (0..16).map(|i| 4 * i).collect();
    assert_eq!(relay(&ring, 8, 1), Some(0), "4 -> 8 through 0");
    assert_eq!(
        relay(&ring, 8, 15),
        Some(56),
        "60 -> 0 (closing) through 56"
    );
    assert_eq!(relay(&ring, 8, 0), None, "0 -> 4 stays on NVLink");
    assert_eq!(relay(&ring, 8, 14), None);
    // One rank per server (TP 8's DP groups) or one server: nothing relayed.
    assert!((0..4).all(|p| relay(&[5, 13, 21, 29], 4, p).is_none()));
    assert!((0..8).all(|p| relay(&[0, 1, 2, 3, 4, 5, 6, 7], 1, p).is_none()));
    // Four per server: only the fourth of each server sends through the first.
    let ring = [2, 4, 6, 0, 10, 12, 14, 8];
    let relayed: Vec<(usize, u32)> = (0..8)
        .filter_map(|p| relay(&ring, 2, p).map(|r| (p, r)))
        .collect();
    assert_eq!(relayed, [(3, 2), (7, 10)]);
}

#[test]
fn case3_dp_all_reduce_relays_every_cross_server_hop_as_simai_does() {
    let g = groups(64, 8, 4);
    let dp = g.group_of(0, CommGroup::Dp).unwrap();
    assert_eq!(rings(dp)[1][..4], [4, 0, 12, 8]);
    let bytes = 4_194_304; // case 3's weight-gradient all-reduce
    let f = decompose_with(CommKind::AllReduce, dp, bytes, PXN);
    // SimAI: 24 flows per ring step (16 hops, 8 relayed), 2 rings, 30 steps.
    assert_eq!(f.len(), 24 * 2 * 30);
    assert!(f.iter().all(|x| x.bytes == bytes / 16 / 2));
    // SimAI's fct.txt, pairs of rank 0's server and the ring's close (131,072-byte flows).
    assert_eq!(count(&f, 0, 8), 30, "ring 0's relay 0 -> 8");
    assert_eq!(count(&f, 4, 12), 30, "ring 1's relay 4 -> 12");
    assert_eq!(count(&f, 4, 8), 0, "the cross-rail hop of ring 0 is gone");
    assert_eq!(count(&f, 0, 12), 0, "and ring 1's");
    assert_eq!(count(&f, 4, 0), 60, "ring 1's hop plus ring 0's first half");
    assert_eq!(count(&f, 0, 4), 60);
    assert_eq!(count(&f, 56, 0), 30, "the closing hop 60 -> 0 through 56");
    assert_eq!(count(&f, 60, 0), 0);
    // Every NIC flow stays on its rail (local GPU index kept); every other stays in its server.
    for x in &f {
        let same_server = x.src / 8 == x.dst / 8;
        assert!(same_server || x.src % 8 == x.dst % 8, "{x:?}");
        assert_eq!(
            same_server,
            x.hop != Hop::PxnFromRelay,
            "only the relay's half leaves the server: {x:?}"
        );
    }
    // Without PXN the same group has 16 flows per step, half of them across rails.
    let plain = decompose(CommKind::AllReduce, dp, bytes);
    assert_eq!(plain.len(), 16 * 2 * 30);
    assert_eq!(count(&plain, 4, 8), 30);
}

#[test]
fn relayed_halves_wait_for_each_other_and_the_successor_for_the_second() {
    let g = groups(64, 8, 4);
    let dp = g.group_of(3, CommGroup::Dp).unwrap(); // {3, 7, 11, ..., 63}
    let f = decompose_with(CommKind::ReduceScatter, dp, 1 << 20, PXN);
    assert_eq!(f.len(), 24 * 2 * 15);
    for (i, x) in f.iter().enumerate() {
        match (x.hop, x.after.as_slice()) {
            (Hop::PxnFromRelay, &[j]) => {
                let first = &f[j];
                assert_eq!(j + 1, i);
                assert_eq!(first.hop, Hop::PxnToRelay);
                assert_eq!((first.dst, first.step, first.ring), (x.src, x.step, x.ring));
            }
            (Hop::PxnFromRelay, &[]) => panic!("a relay's half without its first: {x:?}"),
            (_, &[]) => assert_eq!(x.step, 0),
            (_, &[j]) => {
                // The previous step's flow that delivered to this flow's sender (the relay's
                // half for a server's first rank).
                let p = &f[j];
                assert!(j < i);
                assert_ne!(p.hop, Hop::PxnToRelay);
                assert_eq!((p.ring, p.step + 1), (x.ring, x.step));
                let sender = match x.hop {
                    Hop::PxnToRelay | Hop::Direct => x.src,
                    Hop::PxnFromRelay | Hop::NvlsUpload | Hop::NvlsDownload => unreachable!(),
                };
                assert_eq!(p.dst, sender, "{p:?} -> {x:?}");
            }
            (_, _) => panic!("a ring flow waits for more than one: {x:?}"),
        }
    }
    // Bytes: each rank still receives (n - 1) chunks per ring as the ring's member; a relay
    // also forwards its server's outgoing chunk.
    let received_by_11: u64 = f
        .iter()
        .filter(|x| x.dst == 11 && x.hop != Hop::PxnToRelay)
        .map(|x| x.bytes)
        .sum();
    assert_eq!(received_by_11, 2 * 15 * ((1 << 20) / 16 / 2));
}

#[test]
fn pxn_leaves_all_gather_all_to_all_and_single_rank_per_server_groups_alone() {
    let g = groups(64, 8, 4);
    let dp = g.group_of(0, CommGroup::Dp).unwrap();
    for kind in [CommKind::AllGather, CommKind::AllToAll] {
        assert_eq!(
            decompose_with(kind, dp, 1 << 20, PXN),
            decompose(kind, dp, 1 << 20),
            "{kind:?}"
        );
    }
    // TP 8 on 8-GPU servers (case 4): one DP rank per server, nothing to relay.
    let g = groups(32, 8, 8);
    let dp = g.group_of(5, CommGroup::Dp).unwrap();
    assert_eq!(
        decompose_with(CommKind::AllReduce, dp, 1 << 20, PXN),
        decompose(CommKind::AllReduce, dp, 1 << 20)
    );
    // A TP group in one server: nothing crosses a server.
    let tp = g.group_of(5, CommGroup::Tp).unwrap();
    assert_eq!(
        decompose_with(CommKind::AllReduce, tp, 1 << 20, PXN),
        decompose(CommKind::AllReduce, tp, 1 << 20)
    );
}
