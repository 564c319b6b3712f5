//! SimAI inputs in a TOML scenario (`[topology] simai_file`, `[workload] simai_file`): the
//! shipped example, and bad input named by file, line and field.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use common::{data, repo, scratch, write};
use rdma_lb_scenario::{load_scenario, CollectiveKind, Overrides};

fn config(topo: &str, workload: &str) -> String {
    format!(
        "[topology]\nsimai_file = \"{}\"\n\n[workload]\nsimai_file = \"{}\"\n\n[transport]\n\
         ecn_thresholds = [\n  {{ rate = \"400Gbps\", kmin = \"800KB\", kmax = \"3200KB\", pmax = 0.2 }},\n  \
         {{ rate = \"2880Gbps\", kmin = \"32MiB\", kmax = \"32MiB\", pmax = 0.2 }},\n  \
         {{ rate = \"1360Gbps\", kmin = \"32MiB\", kmax = \"32MiB\", pmax = 0.2 }},\n]\n",
        topo, workload
    )
}

#[test]
fn the_shipped_micro_example_loads_as_two_nvlink_all_reduces() {
    let s = load_scenario(
        &repo("configs/simai_micro_allreduce.toml"),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(s.topology.node_count, 26, "18 SimAI nodes + 8 NVLink sides");
    assert_eq!(s.flows.len(), 1792);
    assert_eq!(s.collectives.len(), 2);
    assert!(s
        .collectives
        .iter()
        .all(|c| c.kind == CollectiveKind::AllreduceRing));
    assert!(s.flows.iter().all(|f| f.src >= 18 && f.dst >= 18));
    // SimAI's send latency when AS_SEND_LAT is unset: 6 ms (+ 10 ns) after 556 us of compute.
    assert_eq!(s.flows[0].start_ns, 6_556_010);
    // The second AllReduce's first step waits for the first's end, then its update time (1 ns)
    // and SimAI's 1 ns loop step after a blocking collective (SIMAI_PHASE_WAIT_NS).
    assert_eq!(
        (s.flows[896].compute_ns, s.flows[896].latency_ns),
        (556_002, 6_000_010)
    );
}

/// A one-layer workload for 32 GPUs: TP 8 inside each server, DP 4 across.
fn dense_32g_workload(d: &std::path::Path) -> std::path::PathBuf {
    write(
        d,
        "w.txt",
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 \
         all_gpus: 32 checkpoints: 0 checkpoint_initiates: 0\n1\n\
         l -1 100 ALLREDUCE 1048576 100 ALLREDUCE 1048576 100 ALLREDUCE 4194304 100\n",
    )
}

#[test]
fn a_dense_workload_on_a_rail_optimized_fabric_crosses_servers_on_the_nics() {
    // 32 GPUs, TP 8 inside each server, DP 4 across: the DP all-reduces take the NICs.
    let d = scratch("simai-rail");
    let w = dense_32g_workload(&d);
    let topo = data("simai/topo/Rail_Opti_SingleToR_32g_8gps_400Gbps_H100");
    let cfg = write(
        &d,
        "c.toml",
        &config(&topo.display().to_string(), &w.display().to_string()),
    );
    let s = load_scenario(&cfg, &Overrides::default()).unwrap();
    // fwd, ig: 4 TP groups x (8 rings x 14 steps x 8); wg: 8 DP groups x (1 ring x 6 x 4).
    assert_eq!(s.flows.len(), 2 * 4 * 896 + 8 * 24);
    assert_eq!(s.collectives.len(), 4 + 4 + 8);
    let dp = &s.flows[s.flows.len() - 1];
    assert!(dp.src < 32 && dp.dst < 32, "DP across servers: NIC sides");
    assert_ne!(dp.src / 8, dp.dst / 8);
}

#[test]
fn bad_simai_inputs_name_file_line_and_field() {
    let d = scratch("simai-bad");
    let topo = data("simai/topo/Spectrum-X_8g_8gps_400Gbps_H100");
    let header = |tp: u32, gpus: u32| {
        format!(
            "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {tp} ep: 1 pp: 1 vpp: 1 \
             ga: 1 all_gpus: {gpus} checkpoints: 0 checkpoint_initiates: 0\n1\n\
             l -1 1 ALLREDUCE 4096 1 NONE 0 1 NONE 0 1\n"
        )
    };
    let run = |workload: &str, topo: &str| {
        let w = write(&d, "w.txt", workload);
        let cfg = write(&d, "c.toml", &config(topo, &w.display().to_string()));
        load_scenario(&cfg, &Overrides::default())
            .unwrap_err()
            .to_string()
    };
    let t = topo.display().to_string();
    let e = run(&header(8, 16), &t);
    assert!(
        e.contains("w.txt:1: all_gpus: 16 GPUs in the workload, 8 in the topology"),
        "{e}"
    );
    let e = run(&header(3, 8), &t);
    assert!(
        e.contains("w.txt:1: model_parallel_NPU_group: TP 3 does not divide the 8 GPUs"),
        "{e}"
    );
    let e = run(&header(8, 8).replace("ALLREDUCE", "ALLSCATTER"), &t);
    assert!(e.contains("w.txt:3:"), "{e}");
    // A dual-plane GPU whose two NIC links differ in rate (line 5: GPU 0's second NIC link).
    let hpn = std::fs::read_to_string(data(
        "simai/topo/AlibabaHPN_64g_8gps_DualToR_DualPlane_200Gbps_H100",
    ))
    .unwrap()
    .replacen("0 80 200Gbps", "0 80 100Gbps", 1);
    let bad = write(&d, "hpn", &hpn);
    let e = run(&header(8, 64), &bad.display().to_string());
    assert!(
        e.contains(&format!(
            "{}:5: link: GPU 0 has NIC links of different rates",
            bad.display()
        )),
        "{e}"
    );
    // A SimAI workload needs a SimAI topology.
    let w = write(&d, "w.txt", &header(8, 8));
    let cfg = write(
        &d,
        "c.toml",
        &format!(
            "[topology]\nleaf_spine = {{ leaves = 1, hosts_per_leaf = 8, spines = 1, host_rate = \
             \"400Gbps\", delay = \"1us\" }}\n[workload]\nsimai_file = \"{}\"\n",
            w.display()
        ),
    );
    let e = load_scenario(&cfg, &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("c.toml:4: workload.simai_file: a SimAI workload needs a SimAI topology"),
        "{e}"
    );
}

#[test]
fn comm_and_compute_scale_shrink_sizes_and_gaps_as_simai_does() {
    // The 32-GPU case above at comm_scale 1/4, compute_scale 1/2: every flow a quarter, the
    // first flows start after half the forward compute (100 -> 50 ns) plus the send latency.
    let d = scratch("simai-scale");
    let w = dense_32g_workload(&d);
    let topo = data("simai/topo/Rail_Opti_SingleToR_32g_8gps_400Gbps_H100");
    let base = config(&topo.display().to_string(), &w.display().to_string());
    let full = load_scenario(&write(&d, "a.toml", &base), &Overrides::default()).unwrap();
    let scaled_cfg = base.replace(
        "[transport]",
        "simai_comm_scale = 0.25\nsimai_compute_scale = 0.5\nsimai_send_latency = \"6us\"\n\n[transport]",
    );
    let scaled = load_scenario(&write(&d, "b.toml", &scaled_cfg), &Overrides::default()).unwrap();
    assert_eq!(full.flows.len(), scaled.flows.len());
    for (a, b) in full.flows.iter().zip(&scaled.flows) {
        assert_eq!(b.size_bytes, a.size_bytes / 4);
    }
    assert_eq!(scaled.flows[0].start_ns, 50 + 6_000 + 10);
    // Not positive, or without a SimAI workload: one line naming the key.
    for bad in ["0", "-1.5", "nan"] {
        let cfg = write(
            &d,
            "c.toml",
            &base.replace(
                "[transport]",
                &format!("simai_comm_scale = {bad}\n\n[transport]"),
            ),
        );
        let e = load_scenario(&cfg, &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("c.toml:7: workload.simai_comm_scale:") && e.contains("must be a positive"),
            "{e}"
        );
    }
    let cfg = write(
        &d,
        "c.toml",
        "[topology]\nleaf_spine = { leaves = 1, hosts_per_leaf = 8, spines = 1, host_rate = \
         \"400Gbps\", delay = \"1us\" }\n[workload]\nsimai_compute_scale = 2.0\n\
         [[workload.collective]]\nkind = \"alltoall\"\nranks = 8\nsize = \"1MiB\"\n",
    );
    let e = load_scenario(&cfg, &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("c.toml:4: workload.simai_compute_scale: needs workload.simai_file"),
        "{e}"
    );
}

#[test]
fn simai_pxn_relays_case_3_s_cross_server_hops_and_nvls_leaves_its_tp4_rings() {
    // Case 3 (data/simai/reference/case3_w64_tp4_64g_pxn): TP 4, DP 16 over 8 servers, two DP
    // ranks per server. SimAI with AS_PXN_ENABLE=1 sends 5,760 DP flows instead of 3,840 (8 of
    // each ring step's 16 hops relayed), the 3,072 TP flows unchanged.
    let d = scratch("simai-pxn");
    let w = data("simai/reference/case3_w64_tp4_64g/w64_tp4.txt");
    let topo = data("simai/topo/Spectrum-X_64g_8gps_400Gbps_H100");
    let base = config(&topo.display().to_string(), &w.display().to_string());
    let plain = load_scenario(&write(&d, "a.toml", &base), &Overrides::default()).unwrap();
    let off = load_scenario(
        &write(
            &d,
            "b.toml",
            &base.replace(
                "[transport]",
                "simai_pxn = false\nsimai_nvls = false\n[transport]",
            ),
        ),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(plain.flows, off.flows, "false is SimAI's default");
    assert_eq!(plain.flows.len(), 3072 + 3840);
    let pxn = load_scenario(
        &write(
            &d,
            "c.toml",
            &base.replace("[transport]", "simai_pxn = true\n[transport]"),
        ),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(pxn.flows.len(), 3072 + 5760);
    // NIC flows (both ends below the 64 GPUs + switches, i.e. NIC sides) keep their rail: no
    // flow between two GPUs of different local index crosses servers.
    let gpu = |host: u32| (host < 64).then_some(host);
    let cross_rail = |flows: &[rdma_lb_scenario::Flow]| {
        flows
            .iter()
            .filter_map(|f| Some((gpu(f.src)?, gpu(f.dst)?)))
            .filter(|(a, b)| a % 8 != b % 8)
            .count()
    };
    assert_eq!(
        cross_rail(&plain.flows),
        1920,
        "half the DP hops change rail without PXN"
    );
    assert_eq!(cross_rail(&pxn.flows), 0);
    // NVLS applies to TP groups of 8 or more ranks only: case 3's TP 4 keeps its rings.
    let nvls = load_scenario(
        &write(
            &d,
            "d.toml",
            &base.replace("[transport]", "simai_nvls = true\n[transport]"),
        ),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(plain.flows, nvls.flows, "no TP group of 8: no NVLS");
    assert!(nvls.topology.endpoint_switch_ids.is_empty());
    // Bad values and the keys without a SimAI workload are named by file, line and field.
    let e = load_scenario(
        &write(
            &d,
            "e.toml",
            &base.replace("[transport]", "simai_pxn = \"yes\"\n[transport]"),
        ),
        &Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("e.toml:7") && e.contains("simai_pxn"), "{e}");
    let cfg = write(
        &d,
        "f.toml",
        "[topology]\nleaf_spine = { leaves = 1, hosts_per_leaf = 8, spines = 1, host_rate = \
         \"400Gbps\", delay = \"1us\" }\n[workload]\nsimai_pxn = true\n\
         [[workload.collective]]\nkind = \"alltoall\"\nranks = 8\nsize = \"1MiB\"\n",
    );
    let e = load_scenario(&cfg, &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("f.toml:4: workload.simai_pxn: needs workload.simai_file"),
        "{e}"
    );
}

#[test]
fn simai_conf_is_the_transport_s_base() {
    // SimAI's example SimAI.conf, read directly, against the shipped config's [transport],
    // which repeats its values by hand.
    let d = scratch("simai-conf");
    let topo = data("simai/topo/Spectrum-X_8g_8gps_400Gbps_H100");
    let micro = data("simai/workload/microAllReduce.txt");
    let conf = data("simai/config/SimAI.conf");
    let base = format!(
        "[topology]\nsimai_file = \"{}\"\n[workload]\nsimai_file = \"{}\"\n[transport]\n\
         simai_conf = \"{}\"\n",
        topo.display(),
        micro.display(),
        conf.display()
    );
    let cfg = write(&d, "c.toml", &base);
    let s = load_scenario(&cfg, &Overrides::default()).unwrap();
    let by_hand = load_scenario(
        &repo("configs/simai_micro_allreduce.toml"),
        &Overrides::default(),
    )
    .unwrap();
    let (t, h) = (&s.transport, &by_hand.transport);
    assert_eq!(
        (t.cc, t.recovery, t.pfc_enabled, t.has_win, t.var_win),
        (h.cc, h.recovery, h.pfc_enabled, h.has_win, h.var_win)
    );
    assert_eq!(
        (
            t.payload_bytes,
            t.buffer_bytes,
            t.rate_ai_bps,
            t.rate_hai_bps,
            t.min_rate_bps
        ),
        (
            h.payload_bytes,
            h.buffer_bytes,
            h.rate_ai_bps,
            h.rate_hai_bps,
            h.min_rate_bps
        )
    );
    assert_eq!((t.payload_bytes, t.buffer_bytes), (9000, 32 << 20));
    assert_eq!(t.ack_high_prio, h.ack_high_prio);
    // ECN: the file's six rates, then the NVLink rate the maps lack, never marking.
    assert_eq!(t.ecn.len(), 7);
    let at400 = t
        .ecn
        .iter()
        .find(|e| e.rate_bps == 400_000_000_000)
        .unwrap();
    assert_eq!((at400.kmin_bytes, at400.kmax_bytes), (800_000, 3_200_000));
    let nvlink = t.ecn.last().unwrap();
    assert_eq!(
        (nvlink.rate_bps, nvlink.kmin_bytes, nvlink.kmax_bytes),
        (2_880_000_000_000, 32 << 20, 32 << 20)
    );
    // PFC_OUTPUT_FILE: the PFC trace; the file's notes (FLOW_FILE, TRACE_FILE, ...) are the run's.
    assert!(s.run.pfc_trace);
    assert!(
        s.notes.iter().any(|n| n.contains("FLOW_FILE")),
        "{:?}",
        s.notes
    );
    // SimAI's file is SimAI's behaviour: its 52 B data headers (a 64-bit sequence number), its
    // ports (quirk flow-ports) and its truncating times (quirk time-truncation) unless the
    // section says otherwise; the hand-written transport says the same.
    assert_eq!(
        t.quirks
            .iter()
            .map(rdma_lb_scenario::Quirk::name)
            .collect::<Vec<_>>(),
        vec!["flow-ports", "time-truncation"]
    );
    assert_eq!(h.quirks, t.quirks);
    assert_eq!((t.roce_header_bytes, h.roce_header_bytes), (52, 52));
    let none = write(
        &d,
        "n.toml",
        &format!("{base}quirks = \"none\"\nroce_header = \"48B\"\n"),
    );
    let n = load_scenario(&none, &Overrides::default()).unwrap();
    assert_eq!(n.transport.quirks, rdma_lb_scenario::QuirkSet::NONE);
    assert_eq!(n.transport.roce_header_bytes, 48);
    // Without SimAI's file, our own headers; fewer than the model's 48 B are refused.
    let ours = load_scenario(
        &repo("configs/demo_leaf_spine_16.toml"),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(ours.transport.roce_header_bytes, 48);
    let short = write(&d, "s.toml", &format!("{base}roce_header = \"40B\"\n"));
    let e = load_scenario(&short, &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("s.toml:7: transport.roce_header") && e.contains("48..=512"),
        "{e}"
    );
    // A key beside it overrides the file's value.
    let cfg = write(
        &d,
        "o.toml",
        &format!("{base}payload = \"4000B\"\ncc = \"hpcc\"\n"),
    );
    let o = load_scenario(&cfg, &Overrides::default()).unwrap();
    assert_eq!(
        (o.transport.payload_bytes, o.transport.cc),
        (4000, rdma_lb_scenario::Cc::Hpcc)
    );
    // Not with uet; a missing file is named at the key's line.
    let cfg = write(&d, "u.toml", &format!("{base}kind = \"uet\"\n"));
    let e = load_scenario(&cfg, &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with(
            "u.toml:6: transport.simai_conf: SimAI's transport is RoCE: not with kind = \"uet\""
        ),
        "{e}"
    );
    let cfg = write(
        &d,
        "m.toml",
        &base.replace(&conf.display().to_string(), "/nonexistent/SimAI.conf"),
    );
    let e = load_scenario(&cfg, &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("m.toml:6: transport.simai_conf:"), "{e}");
    assert!(!e.contains('\n'));
    // LINK_DOWN must name a link of the topology; ERROR_RATE_PER_LINK reaches the links.
    let bad = write(&d, "bad.conf", "CC_MODE 1\nLINK_DOWN 5 0 99\n");
    let cfg = write(
        &d,
        "l.toml",
        &base.replace(&conf.display().to_string(), &bad.display().to_string()),
    );
    let e = load_scenario(&cfg, &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.conf:2: LINK_DOWN: no link 0-99"), "{e}");
    let lossy = write(
        &d,
        "lossy.conf",
        "CC_MODE 1\nERROR_RATE_PER_LINK 0.001\nLINK_DOWN 5 0 8\n",
    );
    let cfg = write(
        &d,
        "e.toml",
        &base.replace(&conf.display().to_string(), &lossy.display().to_string()),
    );
    let s = load_scenario(&cfg, &Overrides::default()).unwrap();
    assert!(s
        .topology
        .links
        .iter()
        .all(|l| (l.error_rate - 0.001).abs() < 1e-12));
    let ev = &s.run.link_events;
    assert_eq!(ev.len(), 1);
    assert_eq!(
        (ev[0].at_ns, ev[0].a, ev[0].b),
        (2_000_005_000, 18, 8),
        "SimAI's 2 s + t us; GPU 0's NVLink link starts at its NVLink side, host 18 + 0"
    );
}

#[test]
fn simai_nvls_sends_case_1_s_all_reduces_through_the_nvswitch_as_simai_does() {
    // Case 1 with AS_NVLS_ENABLE=1 (data/simai/reference/case1_microAllReduce_8g_nvls): two TP-8
    // all-reduces of 16 and 64 MiB on one H100 server (GPUs 0-7, NVSwitch 8), each 4 chunks of
    // size / 4 up to the NVSwitch and back: SimAI's fct.txt lists 128 flows.
    let d = scratch("simai-nvls");
    let w = data("simai/workload/microAllReduce.txt");
    let topo = data("simai/topo/Spectrum-X_8g_8gps_400Gbps_H100");
    let base = config(&topo.display().to_string(), &w.display().to_string());
    let s = load_scenario(
        &write(
            &d,
            "a.toml",
            &base.replace("[transport]", "simai_nvls = true\n[transport]"),
        ),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(s.topology.endpoint_switch_ids, [8]);
    // Both all-reduces are labelled NVLS in the outputs, not rings.
    let kinds: Vec<&str> = s.collectives.iter().map(|c| c.kind.name()).collect();
    assert_eq!(kinds, ["allreduce-nvls", "allreduce-nvls"]);
    // SimAI's (sip, dip, bytes), GPU r as its NVLink side here (host node_count + r).
    let n = s.topology.node_count - 8;
    let rank = |h: u32| if h >= n { h - n } else { h };
    let mut ours: Vec<(u32, u32, u64)> = s
        .flows
        .iter()
        .map(|f| (rank(f.src), rank(f.dst), f.size_bytes))
        .collect();
    let reference =
        std::fs::read_to_string(data("simai/reference/case1_microAllReduce_8g_nvls/fct.txt"))
            .unwrap();
    let ip = |t: &str| u32::from_str_radix(&t[2..6], 16).unwrap();
    let mut theirs: Vec<(u32, u32, u64)> = reference
        .lines()
        .map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            (ip(t[0]), ip(t[1]), t[4].parse().unwrap())
        })
        .collect();
    ours.sort_unstable();
    theirs.sort_unstable();
    assert_eq!(ours.len(), 128);
    assert_eq!(ours, theirs);
    // Order: a GPU's next upload follows its previous upload's send; a download waits for
    // every upload of its chunk (their completion), each a send latency + 10 ns later.
    for f in &s.flows {
        assert_eq!(f.latency_ns, 6_000_010);
        if f.dst == 8 {
            assert!(f.after.is_empty());
            for &p in &f.after_sent {
                let p = &s.flows[p as usize];
                assert_eq!((p.src, p.dst, p.size_bytes), (f.src, 8, f.size_bytes));
            }
        } else {
            assert!(f.after_sent.is_empty() && f.after_completion);
            assert_eq!(f.after.len(), 8);
            assert!(f.after.iter().all(|&p| s.flows[p as usize].dst == 8));
        }
    }
    let first_chunks = s
        .flows
        .iter()
        .filter(|f| f.dst == 8 && f.after_sent.is_empty());
    assert_eq!(
        first_chunks.count(),
        16,
        "chunk 0 of each all-reduce: 8 uploads"
    );
}

#[test]
fn the_uet_transport_on_a_simai_fabric_is_sized_for_its_nics() {
    // The largest pair bottleneck of a SimAI fabric is NVLink's 2,880 Gbps; the uet transport's
    // derived queue, ECN thresholds and RTO are sized for the 400 G NICs instead, unless
    // `sizing_rate` says otherwise.
    let d = scratch("simai-uet-sizing");
    let w = dense_32g_workload(&d);
    let topo = format!(
        "[topology]\nsimai_file = \"{}\"\n\n[workload]\nsimai_file = \"{}\"\n\n[transport]\n\
         kind = \"uet\"\n",
        data("simai/topo/Rail_Opti_SingleToR_32g_8gps_400Gbps_H100").display(),
        w.display()
    );
    let s = load_scenario(&write(&d, "a.toml", &topo), &Overrides::default()).unwrap();
    assert_eq!(s.transport.uet.sizing_rate_bps, 400_000_000_000);
    let given = format!("{topo}\n[transport.uet]\nsizing_rate = \"2880Gbps\"\n");
    let s = load_scenario(&write(&d, "b.toml", &given), &Overrides::default()).unwrap();
    assert_eq!(s.transport.uet.sizing_rate_bps, 2_880_000_000_000);
    // Elsewhere the table's 0: the largest pair bottleneck.
    assert_eq!(rdma_lb_scenario::UetParams::default().sizing_rate_bps, 0);
}
