//! NVLS flow-model tests: SimAI's choice of NVLS, and the flows of a TP-8 all-reduce on one
//! server worked by hand (`data/simai/reference/case1_microAllReduce_8g_nvls`: 64 flows per
//! all-reduce, each `size / 4` bytes, GPUs 0-7 and the NVSwitch 8).

use super::*;
use crate::simai::groups::{GroupSizes, Groups};

fn tp_group(world: u32, gps: u32, tp: u32, rank: u32) -> Group {
    let g = Groups::build(GroupSizes::new(world, gps, tp, None).unwrap());
    g.group_of(rank, CommGroup::Tp).unwrap().clone()
}

#[test]
fn simai_picks_nvls_for_tp_all_reduces_of_eight_ranks_on_h100_and_h800_only() {
    let h100 = Some(GpuType::H100);
    assert!(applies(CommKind::AllReduce, CommGroup::Tp, 8, h100));
    assert!(applies(
        CommKind::AllReduce,
        CommGroup::Tp,
        16,
        Some(GpuType::H800)
    ));
    assert!(!applies(CommKind::AllReduce, CommGroup::Tp, 4, h100));
    assert!(!applies(CommKind::AllReduce, CommGroup::Dp, 8, h100));
    assert!(!applies(CommKind::AllGather, CommGroup::Tp, 8, h100));
    assert!(!applies(CommKind::ReduceScatter, CommGroup::Tp, 8, h100));
    assert!(!applies(
        CommKind::AllReduce,
        CommGroup::Tp,
        8,
        Some(GpuType::A100)
    ));
    assert!(!applies(CommKind::AllReduce, CommGroup::Tp, 8, None));
}

#[test]
fn a_tp8_all_reduce_is_four_chunks_up_to_the_nvswitch_and_back() {
    let g = tp_group(8, 8, 8, 3);
    assert_eq!(check(&g, 16 << 20), None);
    let f = decompose(&g, 16 << 20, 8);
    assert_eq!(f.len(), 64);
    assert!(f.iter().all(|x| x.bytes == 4 << 20));
    for c in 0..4usize {
        let chunk = &f[16 * c..16 * (c + 1)];
        for k in 0..8usize {
            let (up, down) = (&chunk[k], &chunk[8 + k]);
            let r = u32::try_from(k).unwrap();
            assert_eq!((up.src, up.dst, up.hop), (r, 8, Hop::NvlsUpload));
            assert_eq!((down.src, down.dst, down.hop), (8, r, Hop::NvlsDownload));
            assert_eq!(up.step as usize, 2 * c);
            assert_eq!(down.step as usize, 2 * c + 1);
            // The upload follows the same rank's previous upload's send; the download waits
            // for every upload of its chunk.
            assert!(up.after.is_empty());
            assert_eq!(up.after_sent, c.checked_sub(1).map(|p| 16 * p + k));
            assert_eq!(down.after, (16 * c..16 * c + 8).collect::<Vec<_>>());
            assert_eq!(down.after_sent, None);
        }
    }
    // First principles: every rank sends and receives the whole buffer once.
    for r in 0..8 {
        let sent: u64 = f.iter().filter(|x| x.src == r).map(|x| x.bytes).sum();
        let recv: u64 = f.iter().filter(|x| x.dst == r).map(|x| x.bytes).sum();
        assert_eq!((sent, recv), (16 << 20, 16 << 20));
    }
}

#[test]
fn nvls_over_two_servers_or_beyond_simai_s_int_is_refused() {
    let two = tp_group(16, 8, 16, 0);
    assert!(check(&two, 1 << 20).unwrap().contains("over 2 servers"));
    let one = tp_group(8, 8, 8, 0);
    assert!(check(&one, 4 * (1u64 << 31)).unwrap().contains("overflows"));
    assert_eq!(check(&one, 4 * ((1u64 << 31) - 1)), None);
}
