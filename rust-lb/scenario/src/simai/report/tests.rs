//! Report tests: SimAI's own `ncclFlowModel_EndToEnd.csv` of its four reference runs
//! (`data/simai/reference/`) rebuilt digit for digit from the per-layer times it lists (so the
//! columns, their order, the float bandwidths, the sums and the summary's rounding are
//! SimAI's), and rank 0's timeline worked from chosen flow completions.

use super::*;
use crate::simai::fabric::SimAiFabric;
use crate::simai::groups::{GroupSizes, Groups};
use crate::simai::iteration::{expand, Options};
use crate::simai::topology::parse_topology_file;
use crate::simai::workload::parse_workload_file;

fn data(rel: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(format!(
        "{}/../../data/simai/{rel}",
        env!("CARGO_MANIFEST_DIR")
    ))
}

/// The plan of `workload` on `topo` (TP 8, as both reference cases), with its iteration.
fn plan(workload: &str, topo: &str, gpus: u32) -> (EndToEndPlan, crate::simai::Iteration) {
    let w = parse_workload_file(&data(workload)).unwrap();
    let it = iteration(&w, topo, gpus, 6_000_000);
    (it.report.clone(), it)
}

/// The iteration of the parsed workload `w` on `topo` with TP 8 and the given send latency.
fn iteration(
    w: &crate::simai::workload::Workload,
    topo: &str,
    gpus: u32,
    send_latency_ns: u64,
) -> crate::simai::Iteration {
    let f =
        SimAiFabric::build(&parse_topology_file(&data(&format!("topo/{topo}"))).unwrap()).unwrap();
    let g = Groups::build(GroupSizes::new(gpus, 8, 8, Some(1)).unwrap());
    let o = Options {
        pg: 3,
        send_latency_ns,
        first_id: 0,
        first_group: 0,
        nccl: crate::simai::NcclOptions::default(),
    };
    expand(w, &f, &g, o).unwrap()
}

/// A µs cell of SimAI's file (3 decimals are significant: whole ns) as ns.
fn ns(cell: &str) -> u64 {
    let v: f64 = cell.parse().unwrap();
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "test data: whole ns"
    )]
    let n = (v * 1000.0).round() as u64;
    n
}

#[test]
fn rebuilds_simai_s_own_files_digit_for_digit() {
    let cases = [
        (
            "case1_microAllReduce_8g",
            "workload/microAllReduce.txt",
            "Spectrum-X_8g_8gps_400Gbps_H100",
            8,
        ),
        (
            "case1_microAllReduce_8g_send_lat_6us",
            "workload/microAllReduce.txt",
            "Spectrum-X_8g_8gps_400Gbps_H100",
            8,
        ),
        (
            "case2_w16_16g",
            "reference/case2_w16_16g/w16.txt",
            "DCN+SingleToR_16g_8gps_400Gbps_H100",
            16,
        ),
        (
            "case2_w16_16g_send_lat_6us",
            "reference/case2_w16_16g/w16.txt",
            "DCN+SingleToR_16g_8gps_400Gbps_H100",
            16,
        ),
    ];
    for (case, workload, topo, gpus) in cases {
        let simai =
            std::fs::read_to_string(data(&format!("reference/{case}/{END_TO_END_CSV}"))).unwrap();
        let (p, _) = plan(workload, topo, gpus);
        // SimAI's per-layer times: rows 4.. up to SUM; columns 2-7 compute / exposed, 8, 11, 14
        // totals, 17 the end.
        let rows: Vec<Vec<&str>> = simai
            .lines()
            .skip(3)
            .take_while(|l| !l.starts_with("SUM,"))
            .map(|l| l.split(',').collect())
            .collect();
        assert_eq!(rows.len(), p.layers.len(), "{case}");
        let times: Vec<LayerTimes> = rows
            .iter()
            .map(|r| LayerTimes {
                compute: [ns(r[2]), ns(r[3]), ns(r[4])],
                exposed: [ns(r[5]), ns(r[6]), ns(r[7])],
                total: [ns(r[8]), ns(r[11]), ns(r[14])],
            })
            .collect();
        let finished = ns(rows[0][17]);
        assert_eq!(p.format(&times, finished), simai, "{case}");
    }
}

#[test]
fn rank_0_timeline_from_flow_completions() {
    // SimAI's micro example: two blocking forward all-reduces (556 us compute each, update
    // 1 ns), then four 1-ns computes and no collective.
    let (p, it) = plan(
        "workload/microAllReduce.txt",
        "Spectrum-X_8g_8gps_400Gbps_H100",
        8,
    );
    // Rank 0's last-step flows: on each of 8 rings it sends one and receives one.
    assert_eq!(p.layers[0].fwd.done_flows.len(), 16);
    assert_eq!(p.layers[1].fwd.done_flows.len(), 16);
    assert!(p.layers[0].wg.done_flows.is_empty());
    let first: std::collections::HashSet<u32> =
        it.collectives[0].flow_ids.iter().copied().collect();
    // Collective 0's flows end at 10,000,000 ns; one of rank 0's last ones at 10,000,500 ns;
    // collective 1's at 30,000,000 ns.
    let slow = p.layers[0].fwd.done_flows[3];
    let end = |id: u32| {
        Some(if id == slow {
            10_000_500
        } else if first.contains(&id) {
            10_000_000
        } else {
            30_000_000
        })
    };
    let csv = p.csv(&end).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    // Layer 0: issued at 556,000 ns, ends 10,000,500 + 1 (update): 9,444,501 ns, all exposed.
    assert!(
        rows[3].starts_with(
            "embedding_layer,test1,556.000000,0.001000,0.001000,9444.501000,0.000000,0.000000,\
             9444.501000,"
        ),
        "{}",
        rows[3]
    );
    // Layer 1: issued at 10,000,501 + 1 (SimAI's wait) + 556,000; ends 30,000,001: 19,443,499 ns.
    assert!(rows[4].contains(",19443.499000,0.000000,0.000000,19443.499000,"));
    // Rank 0 finishes 1 ns (wait) + 4 ns of compute + 1 ns after its last collective:
    // 30,000,007 ns.
    assert!(rows[4].ends_with(",30000.007000"), "{}", rows[4]);
    assert_eq!(
        rows[6],
        "total exposed comm,28888.003000,total comp,1112.004000,total time,30000.007000"
    );
    // algbw of 16 MiB in 9,444.501 us: 16 MiB / 9.444501 ms = 1.654... GiB/s; busbw x 14 / 8.
    let cells: Vec<&str> = rows[3].split(',').collect();
    let alg: f64 = cells[9].parse().unwrap();
    let bus: f64 = cells[10].parse().unwrap();
    assert!((alg - 16.0 / 1024.0 / 9.444_501e-3).abs() < 1e-5, "{alg}");
    assert!((bus / alg - 14.0 / 8.0).abs() < 1e-6);
    // Summary: every wait is TP's.
    assert!(
        rows[1].starts_with("test1, 0 (0.00%), 0 (0.00%), 28888 (96.29%), 0 (0.00%), 0 (0.00%)"),
        "{}",
        rows[1]
    );
}

#[test]
fn only_layer_0_s_weight_gradient_wait_counts() {
    // Two layers, TP 8 and DP 2 on 16 GPUs: weight-gradient all-reduces do not block; SimAI
    // counts the wait only for layer 0's, from 1 ns after the loop.
    let dir = std::env::temp_dir().join(format!("simai-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("w.txt");
    std::fs::write(
        &path,
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 2 vpp: 2 ga: 2 \
         all_gpus: 16\n2\n\
         embedding_layer -1 10 NONE 0 20 ALLREDUCE 1048576 30 ALLREDUCE 2097152 100\n\
         b -1 10 NONE 0 20 ALLREDUCE 1048576 30 ALLREDUCE 2097152 100\n",
    )
    .unwrap();
    let w = parse_workload_file(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let it = iteration(&w, "DCN+SingleToR_16g_8gps_400Gbps_H100", 16, 0);
    let mut p = it.report.clone();
    p.start_ns = 1_000;
    // Order: b.ig, b.wg, a.ig, a.wg. Every flow of a collective ends at its given time.
    let ends = [2_000_u64, 50_000, 60_000, 90_000];
    let phase_of = |id: u32| -> Option<u64> {
        it.labels
            .iter()
            .zip(&it.collectives)
            .find(|(_, c)| c.flow_ids.contains(&id))
            .map(|(l, _)| {
                let k = match (l.layer, l.phase) {
                    (1, PhaseKind::InputGrad) => 0,
                    (1, PhaseKind::WeightGrad) => 1,
                    (0, PhaseKind::InputGrad) => 2,
                    _ => 3,
                };
                ends[k]
            })
    };
    let csv = p.csv(&phase_of).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    // Forward: 10 + 10 ns of compute (from 1,000). b.ig issued at 1,040, ends 2,000 + 100.
    // b.wg issued at 2,100 + 1 (SimAI's wait) + 30 = 2,131, ends 50,100: total 47,969, not
    // exposed. a.ig issued at 2,131 + 20 = 2,151, ends 60,100: 57,949.
    // a.wg issued at 60,131; ends 90,100: total 29,969; the loop ends at 60,132: 29,968 exposed.
    // Its busbw is SimAI's with n = DP = all_gpus / (TP x PP) = 16 / (8 x 2) = 1 (the header's
    // pp: 2, though the groups are built with PP = 1): 0.
    assert_eq!(
        rows[3],
        format!(
            "embedding_layer,test1,0.010000,0.030000,0.020000,0.000000,29.968000,57.949000,\
             0.000000,-nan,0.000000,29.969000,{},{},57.949000,{},{},89.100000",
            f6(f64::from(
                busbw(p.layers[0].wg.comm, 1, 2_097_152, 29_969).0
            )),
            f6(f64::from(
                busbw(p.layers[0].wg.comm, 1, 2_097_152, 29_969).1
            )),
            f6(f64::from(
                busbw(p.layers[0].ig.comm, 8, 1_048_576, 57_949).0
            )),
            f6(f64::from(
                busbw(p.layers[0].ig.comm, 8, 1_048_576, 57_949).1
            )),
        )
    );
    assert!(
        rows[4].starts_with("b,test1,0.010000,0.030000,0.020000,0.000000,0.000000,1.060000,"),
        "{}",
        rows[4]
    );
    // Summary: DP 29.968, TP 57.949 + 1.06; bubble = b's fwd + compute + ig (0 + 60 + 1,060 ns)
    // x (PP - 1) / (GA x VPP) = 1.12 us / 4 = 0.28 us -> "0"; total 89.1 us.
    assert_eq!(
        rows[1],
        "test1, 30 (33.63%), 0 (0.00%), 59 (66.23%), 0 (0.00%), 0 (0.00%), 0 (0.31%), \
         0 (0.13%), 89 (99.87%), 89"
    );
}

#[test]
fn an_incomplete_collective_is_a_clear_error() {
    let (p, _) = plan(
        "workload/microAllReduce.txt",
        "Spectrum-X_8g_8gps_400Gbps_H100",
        8,
    );
    let missing = p.layers[1].fwd.done_flows[0];
    let e = p
        .csv(&|id| (id != missing).then_some(5_000_000))
        .unwrap_err();
    assert_eq!(
        e,
        format!(
            "ncclFlowModel_EndToEnd.csv not written: rank 0's fwd collective of layer 1 \
             (embedding_layer) did not complete (flow {missing})"
        )
    );
}

#[test]
fn c_formatting() {
    assert_eq!(f6(0.0 / 0.0_f64.max(0.0)), "-nan");
    assert_eq!(f6(f64::INFINITY), "inf");
    assert_eq!(f6(0.185_828_3), "0.185828");
    // %.0f rounds half to even, as glibc does.
    assert_eq!(
        (f0(0.5), f0(1.5), f0(2.5), f0(168_410.545)),
        (
            "0".to_owned(),
            "2".to_owned(),
            "2".to_owned(),
            "168411".to_owned()
        )
    );
    assert_eq!(f0(f64::NAN), "NaN or Inf");
    assert_eq!(pct(1.0, 3.0), "33.33%");
}
