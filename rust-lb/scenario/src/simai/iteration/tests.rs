//! Iteration tests: SimAI's own micro example on a generated topology (numbers worked from the
//! rules), the blocking / non-blocking rule, and the hosts a transfer uses.

use super::*;
use crate::simai::groups::GroupSizes;
use crate::simai::topology::parse_topology_file;
use crate::simai::workload::{parse_workload_file, parse_workload_str};

fn data(rel: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(format!(
        "{}/../../data/simai/{rel}",
        env!("CARGO_MANIFEST_DIR")
    ))
}

fn opts(send_latency_ns: u64, first_id: u32, first_group: u32) -> Options {
    Options {
        pg: 3,
        send_latency_ns,
        first_id,
        first_group,
        nccl: NcclOptions::default(),
    }
}

fn fabric(name: &str) -> SimAiFabric {
    SimAiFabric::build(&parse_topology_file(&data(&format!("topo/{name}"))).unwrap()).unwrap()
}

#[test]
fn simai_micro_all_reduce_on_one_spectrum_x_server() {
    let w = parse_workload_file(&data("workload/microAllReduce.txt")).unwrap();
    let f = fabric("Spectrum-X_8g_8gps_400Gbps_H100");
    let g = Groups::build(GroupSizes::new(8, 8, 8, Some(1)).unwrap());
    let it = expand(&w, &f, &g, opts(0, 0, 0)).unwrap();
    // Two forward all-reduces of 16 MiB and 64 MiB in the TP group of 8: 8 rings x 14 steps x 8.
    assert_eq!(it.collectives.len(), 2);
    assert_eq!(it.flows.len(), 2 * 8 * 14 * 8);
    let (first, second) = it.flows.split_at(8 * 14 * 8);
    assert!(first.iter().all(|x| x.size_bytes == 16_777_216 / 64));
    assert!(second.iter().all(|x| x.size_bytes == 67_108_864 / 64));
    // One server: every transfer between NVLink sides (hosts 18..26).
    assert!(it
        .flows
        .iter()
        .all(|x| (18..26).contains(&x.src) && (18..26).contains(&x.dst)));
    // The first collective starts after layer 0's forward compute (556,000 ns) and SimAI's 10 ns
    // start delay (send latency 0 here), absolutely.
    for x in first {
        assert_eq!((x.start_ns, x.compute_ns), (556_010, 0));
        assert!(x.after_completion && x.latency_ns == 10);
        assert!(x.compute_after.is_empty());
    }
    // The second waits for the rank's last-step flows of the first (2 per ring), then the
    // layer's update time (1 ns), SimAI's 1 ns wait and 556 us.
    for x in second {
        assert_eq!((x.start_ns, x.compute_ns), (0, 556_002));
        assert_eq!(x.compute_after.len(), 16);
        assert!(x.compute_after.iter().all(|&d| {
            let p = &it.flows[d as usize];
            d < 896 && (p.src == x.src || p.dst == x.src)
        }));
    }
    // Backward: update 1 ns and SimAI's 1 ns step after the last forward collective, then per
    // phase (no collective) 1 ns of compute and SimAI's 1 ns step to the next phase, but after
    // the pass's last: 2 + 2 + 2 + 2 + 1 ns after the last flow.
    assert_eq!(it.trailing_compute_ns, 9);
    assert_eq!(it.labels[1].bytes, 67_108_864);
    assert_eq!(it.labels[1].phase, PhaseKind::Forward);
}

#[test]
fn weight_gradient_collectives_do_not_block_the_backward_pass() {
    // 16 GPUs in 2 servers, TP 8 (inside a server) and DP 2 (across): per layer an input-
    // gradient all-reduce in TP, a weight-gradient all-reduce in DP.
    let text =
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 2 ga: 1 \
                all_gpus: 16 checkpoints: 0 checkpoint_initiates: 0\n2\n\
                a -1 10 NONE 0 20 ALLREDUCE 1048576 30 ALLREDUCE 2097152 100\n\
                b -1 10 NONE 0 20 ALLREDUCE 1048576 30 ALLREDUCE 2097152 100\n";
    let w = parse_workload_str("w.txt", text).unwrap();
    let f = fabric("DCN+SingleToR_16g_8gps_400Gbps_H100");
    let g = Groups::build(GroupSizes::new(16, 8, 8, Some(1)).unwrap());
    let it = expand(&w, &f, &g, opts(0, 100, 7)).unwrap();
    // Backward order: b.ig (2 TP groups), b.wg (8 DP groups), a.ig (2), a.wg (8).
    let phases: Vec<(usize, PhaseKind)> = it.labels.iter().map(|l| (l.layer, l.phase)).collect();
    assert_eq!(phases[0], (1, PhaseKind::InputGrad));
    assert_eq!(phases[2], (1, PhaseKind::WeightGrad));
    assert_eq!(phases[10], (0, PhaseKind::InputGrad));
    assert_eq!(it.collectives.len(), 2 + 8 + 2 + 8);
    assert_eq!(it.collectives[0].group, 7);
    assert_eq!(it.flows[0].id, 100);
    // b.ig: after the forward computes (10 + 10) and SimAI's 1 ns step after each phase
    // (without a collective too), b's input-gradient compute (20) and the 10 ns start delay.
    let b_ig = &it.flows[it.collectives[0].flow_ids[0] as usize - 100];
    assert_eq!((b_ig.start_ns, b_ig.compute_ns), (52, 0));
    // b.wg (DP, across servers: the NICs) waits for b.ig's flows of its rank, then the update
    // time (100 ns), SimAI's 1 ns wait and 30 ns.
    let b_wg = &it.flows[it.collectives[2].flow_ids[0] as usize - 100];
    assert!(b_wg.src < 16 && b_wg.dst < 16, "across servers: NIC sides");
    assert_eq!(b_wg.compute_ns, 131);
    let in_b_ig = |d: u32| it.collectives[..2].iter().any(|c| c.flow_ids.contains(&d));
    assert!(b_wg.compute_after.iter().all(|&d| in_b_ig(d)));
    // a.ig waits for b.ig (blocking), not for b.wg (non-blocking): 100 + 1 + 30 (b.wg) + 1
    // (SimAI's step after b.wg's issue) + 20.
    let a_ig = &it.flows[it.collectives[10].flow_ids[0] as usize - 100];
    assert_eq!(a_ig.compute_ns, 152);
    assert!(a_ig.compute_after.iter().all(|&d| in_b_ig(d)));
    // Dependencies point backwards.
    for x in &it.flows {
        assert!(x.after.iter().chain(&x.compute_after).all(|&d| d < x.id));
    }
    assert_eq!(it.trailing_compute_ns, 131);
}
