//! rdma-lb TOML scenarios: the shipped examples in configs/ and the TOML-only features.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use common::{data, repo, scratch, write};
use rdma_lb_scenario::{
    load_scenario, Cc, CollectiveKind, Overrides, PortRate, Quirk, QuirkSet, Recovery, SwitchHash,
    TransportKind, UetAckRequest, UetCc, UetInflight, UetNsccFeedback, UetParams, UetQueueRelease,
    UetTxTime,
};

#[test]
fn shipped_examples_load() {
    let o = Overrides::default();
    let s = load_scenario(&repo("configs/leaf_spine_demo.toml"), &o).unwrap();
    assert_eq!((s.topology.node_count, s.topology.links.len()), (12, 12));
    assert!(!s.flows.is_empty());
    assert_eq!(s.run.hard_stop_ns, 50_000_000);

    let s = load_scenario(&repo("configs/conweave_leaf_spine_alistorage.toml"), &o).unwrap();
    assert_eq!(
        (
            s.topology.node_count,
            s.topology.switch_ids.len(),
            s.topology.links.len()
        ),
        (144, 16, 192)
    );
    let bytes: u64 = s.flows.iter().map(|f| f.size_bytes).sum();
    let offered = bytes as f64 * 8.0 / (128.0 * 100e9 * 0.010);
    assert!((offered / 0.25 - 1.0).abs() < 0.03, "offered {offered}");
    assert_eq!(
        (s.run.flowgen_start_ns, s.run.flowgen_stop_ns),
        (0, 10_000_000)
    );
    assert_eq!(s.transport.ecn.len(), 1);
    assert_eq!(s.transport.ewma_gain, 1.0 / 256.0);
    assert!(s.run.pfc_trace);

    let s = load_scenario(&repo("configs/themis_16x16_400g_allreduce.toml"), &o).unwrap();
    assert_eq!(s.topology.node_count, 16 * 16 + 32);
    assert!(s
        .topology
        .links
        .iter()
        .all(|l| l.rate_bps == 400_000_000_000));
    assert_eq!(s.collectives.len(), 16);
    assert!(s
        .collectives
        .iter()
        .all(|c| c.kind == CollectiveKind::AllreduceRing && c.flow_ids.len() == 2 * 15 * 16));
    assert_eq!(s.flows.len(), 16 * 2 * 15 * 16);
    assert_eq!(s.transport.recovery, Recovery::NicSr);
    assert_eq!(s.transport.buffer_bytes, 64_000_000);
}

#[test]
fn seed_and_load_overrides_redraw_the_workload() {
    let cfg = repo("configs/leaf_spine_demo.toml");
    let a = load_scenario(&cfg, &Overrides::default()).unwrap();
    let b = load_scenario(&cfg, &Overrides::default()).unwrap();
    assert_eq!(a, b, "deterministic");
    let c = load_scenario(&cfg, &Overrides::parse("seed=2").unwrap()).unwrap();
    assert_ne!(a.flows, c.flows);
    assert_eq!(c.run.seed, 2);
    let d = load_scenario(&cfg, &Overrides::parse("load=0.6").unwrap()).unwrap();
    let bytes =
        |s: &rdma_lb_scenario::Scenario| s.flows.iter().map(|f| f.size_bytes).sum::<u64>() as f64;
    assert!(
        bytes(&d) > 1.5 * bytes(&a),
        "{} vs {}",
        bytes(&d),
        bytes(&a)
    );
    assert_eq!(d.run.load, 0.6);
    assert_ne!(a.effective_config(), c.effective_config());
}

#[test]
fn link_overrides_faults_mixed_workloads() {
    let d = scratch("toml");
    write(&d, "f.txt", "2\n0 1 3 100 0.000001\n2 3 3 200 0.000002\n");
    let cfg = write(
        &d,
        "s.toml",
        &format!(
            r#"
[topology]
leaf_spine = {{ leaves = 2, hosts_per_leaf = 2, spines = 2, host_rate = "25Gbps", fabric_rate = "100Gbps", delay = "500ns" }}
link_rates = [ {{ a = 4, b = 6, rate = "40Gbps" }} ]
link_faults = [ {{ at = "2ms", a = 5, b = 7 }}, {{ at = "1ms", a = 4, b = 6, down = true }} ]

[workload]
flow_file = "f.txt"
poisson = {{ cdf = "{}", load = 0.5, duration = "100us", seed = 9 }}
[[workload.collective]]
kind = "incast"
ranks = 4
size = "64KiB"
start = "3us"

[transport]
recovery = "irn"
pfc = false
irn_ooo_threshold = 3
irn_qp_per_path = true
payload = "4000B"
# every switch port's rate (25, 40, 100 Gbps) needs ECN thresholds
ecn_thresholds = [
  {{ rate = "25Gbps", kmin = "25KB", kmax = "100KB", pmax = 0.2 }},
  {{ rate = "40Gbps", kmin = "40KB", kmax = "160KB", pmax = 0.2 }},
  {{ rate = "100Gbps", kmin = "100KB", kmax = "400KB", pmax = 0.2 }},
]

[lb]
name = "reps"
params = "num_entropies = 64, buffer_size = 4"

[run]
seed = 5
out = "out/x"
"#,
            data("conweave/traffic_gen/AliStorage2019.txt").display()
        ),
    );
    let s = load_scenario(&cfg, &Overrides::default()).unwrap();
    let t = &s.topology;
    assert_eq!(
        t.links
            .iter()
            .find(|l| l.a == 4 && l.b == 6)
            .unwrap()
            .rate_bps,
        40_000_000_000
    );
    assert_eq!(
        t.links.iter().find(|l| l.a == 0).unwrap().rate_bps,
        25_000_000_000
    );
    assert!(t.links.iter().all(|l| l.delay_ns == 500));
    assert_eq!(s.run.link_events.len(), 2);
    assert_eq!(s.run.link_events[0].at_ns, 1_000_000, "sorted by time");
    assert!(s.run.link_events.iter().all(|e| e.down));
    // File flows first (ids 0, 1), then Poisson, then the incast (last 3 flows).
    assert_eq!((s.flows[0].start_ns, s.flows[1].size_bytes), (1_000, 200));
    let inc = &s.collectives[0];
    assert_eq!(inc.flow_ids.len(), 3);
    assert_eq!(*inc.flow_ids.last().unwrap() as usize, s.flows.len() - 1);
    assert!(inc
        .flow_ids
        .iter()
        .all(|&i| s.flows[i as usize].dst == 0 && s.flows[i as usize].size_bytes == 65_536));
    assert_eq!(
        s.flows
            .iter()
            .enumerate()
            .filter(|(i, f)| *i as u32 != f.id)
            .count(),
        0
    );
    assert_eq!(
        (
            s.transport.recovery,
            s.transport.pfc_enabled,
            s.transport.irn_ooo_threshold,
            s.transport.irn_qp_per_path,
            s.transport.payload_bytes
        ),
        (Recovery::Irn, false, 3, true, 4000)
    );
    assert_eq!(
        (s.lb.name.as_str(), s.lb.params.as_str()),
        ("reps", "num_entropies = 64, buffer_size = 4")
    );
    assert_eq!((s.run.seed, s.run.out_dir.as_str()), (5, "out/x"));
    assert_eq!(s.run.flowgen_stop_ns, 100_000, "end of the Poisson window");

    // TOML errors with lines.
    for (from, to, want) in [
        (
            "\"40Gbps\"",
            "\"40\"",
            ":4: topology.link_rates.rate: rate `40` has no unit",
        ),
        (
            "b = 6, rate",
            "b = 9, rate",
            ":4: topology.link_rates: no link 4-9 in the topology",
        ),
        (
            "kind = \"incast\"",
            "kind = \"gather\"",
            ":11: workload.collective.kind: unknown kind `gather`",
        ),
        (
            "kind = \"incast\"",
            "kind = \"allreduce-nvls\"",
            ":11: workload.collective.kind: unknown kind `allreduce-nvls` (known: \
             allreduce-ring, allgather-ring, reducescatter-ring, alltoall, alltoall-pairwise, \
             permutation, incast; allreduce-nvls comes only from a SimAI workload)",
        ),
        (
            "ranks = 4",
            "ranks = 5",
            ":10: workload.collective: 1 groups × 5 ranks need 5 hosts, the topology has 4",
        ),
        (
            "kind = \"incast\"",
            "kind = \"incast\"\nin_order = true",
            ":12: workload.collective.in_order: only for the ring kinds, not incast",
        ),
        (
            "load = 0.5",
            "load = 1.5",
            ":9: workload.poisson.load: host load must be in (0, 1], got 1.5",
        ),
        (
            "out = \"out/x\"",
            "out = \"out/x\"\nspeed = 3",
            ":36: run.speed: unknown field `speed`",
        ),
        (
            "payload = \"4000B\"",
            "payload = 4000.5",
            ":21: transport.payload: 4000.5 has no unit",
        ),
    ] {
        let text = std::fs::read_to_string(&cfg).unwrap().replace(from, to);
        let bad = write(&d, "bad.toml", &text);
        let e = load_scenario(&bad, &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&bad.display().to_string()) && e.contains(want),
            "{to}: {e}"
        );
    }
}

/// `[run] rate_trace` sets the sampling period; off, it is absent from the effective
/// configuration, so that sweeps keep the directories of configs written before it existed.
#[test]
fn rate_trace_is_optional_and_off_by_default() {
    let d = scratch("toml-rate-trace");
    write(&d, "f.txt", "1\n0 1 3 100 0.000000041\n");
    let base = r#"
[topology]
leaf_spine = { leaves = 2, hosts_per_leaf = 2, spines = 2, host_rate = "100Gbps", delay = "1us" }
[workload]
flow_file = "f.txt"
"#;
    let off = load_scenario(&write(&d, "off.toml", base), &Overrides::default()).unwrap();
    assert_eq!(off.run.rate_trace_ns, 0);
    assert!(!off.effective_config().contains("rate_trace"));
    let on = load_scenario(
        &write(
            &d,
            "on.toml",
            &format!("{base}[run]\nrate_trace = \"10us\"\n"),
        ),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(on.run.rate_trace_ns, 10_000);
    assert!(on.effective_config().contains("rate_trace_ns = 10000"));
    let e = load_scenario(
        &write(
            &d,
            "bad.toml",
            &format!("{base}[run]\nrate_trace = \"ten\"\n"),
        ),
        &Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("bad.toml:7: run.rate_trace"), "{e}");
}

/// `[run] port_bytes`: off by default and then absent from the effective configuration (sweep
/// directories of configs without it keep their hash).
#[test]
fn port_bytes_is_optional_and_off_by_default() {
    let d = scratch("toml-port-bytes");
    write(&d, "f.txt", "1\n0 1 3 100 0.000000041\n");
    let base = r#"
[topology]
leaf_spine = { leaves = 2, hosts_per_leaf = 2, spines = 2, host_rate = "100Gbps", delay = "1us" }
[workload]
flow_file = "f.txt"
"#;
    let load =
        |name: &str, text: &str| load_scenario(&write(&d, name, text), &Overrides::default());
    let off = load("off.toml", base).unwrap();
    assert!(!off.run.port_bytes);
    assert!(!off.effective_config().contains("port_bytes"));
    let on = load("on.toml", &format!("{base}[run]\nport_bytes = true\n")).unwrap();
    assert!(on.run.port_bytes);
    assert!(on.effective_config().contains("port_bytes = true"));
}

/// `[run] failed_link_drops` and `rtt_histogram_ns`: off by default and then absent from the
/// effective configuration; the histogram needs the uet transport and a positive bin width.
#[test]
fn failed_drops_and_rtt_histogram_are_optional_and_off_by_default() {
    let d = scratch("toml-drops-rtt");
    write(&d, "f.txt", "1\n0 1 3 100 0.000000041\n");
    let base = r#"
[topology]
leaf_spine = { leaves = 2, hosts_per_leaf = 2, spines = 2, host_rate = "100Gbps", delay = "1us" }
[workload]
flow_file = "f.txt"
"#;
    let load =
        |name: &str, text: &str| load_scenario(&write(&d, name, text), &Overrides::default());
    let off = load("off.toml", &format!("{base}[transport]\nkind = \"uet\"\n")).unwrap();
    assert!(!off.run.failed_link_drops);
    assert_eq!(off.run.rtt_histogram_ns, 0);
    let cfg = off.effective_config();
    assert!(
        !cfg.contains("failed_link_drops") && !cfg.contains("rtt_histogram"),
        "{cfg}"
    );
    let on = load(
        "on.toml",
        &format!(
            "{base}[transport]\nkind = \"uet\"\n[run]\nfailed_link_drops = true\nrtt_histogram_ns = 500\n"
        ),
    )
    .unwrap();
    assert!(on.run.failed_link_drops);
    assert_eq!(on.run.rtt_histogram_ns, 500);
    let cfg = on.effective_config();
    assert!(cfg.contains("failed_link_drops = true"), "{cfg}");
    assert!(cfg.contains("rtt_histogram_ns = 500"), "{cfg}");
    let e = load(
        "zero.toml",
        &format!("{base}[transport]\nkind = \"uet\"\n[run]\nrtt_histogram_ns = 0\n"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("zero.toml:9: run.rtt_histogram_ns: the bin width must be positive"),
        "{e}"
    );
    let e = load(
        "roce.toml",
        &format!("{base}[run]\nrtt_histogram_ns = 500\n"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("roce.toml:7: run.rtt_histogram_ns:") && e.contains("uet"),
        "{e}"
    );
}

#[test]
fn quirks_are_opt_in_for_toml() {
    let d = scratch("toml-quirks");
    write(&d, "f.txt", "1\n0 1 3 100 0.000000041\n");
    let base = r#"
[topology]
leaf_spine = { leaves = 2, hosts_per_leaf = 2, spines = 2, host_rate = "100Gbps", delay = "1us" }
[workload]
flow_file = "f.txt"
"#;
    let cfg = write(&d, "none.toml", base);
    let s = load_scenario(&cfg, &Overrides::default()).unwrap();
    assert_eq!(s.transport.quirks, QuirkSet::NONE);
    assert_eq!(s.flows[0].start_ns, 41);

    let cfg = write(
        &d,
        "some.toml",
        &format!("{base}[transport]\nquirks = [\"time-truncation\", \"flow-ports\"]\n"),
    );
    let s = load_scenario(&cfg, &Overrides::default()).unwrap();
    let names: Vec<&str> = s.transport.quirks.iter().map(Quirk::name).collect();
    assert_eq!(names, vec!["flow-ports", "time-truncation"]);
    assert_eq!(
        s.flows[0].start_ns, 40,
        "ns-3.19 truncates 4.1e-8 s to 40 ns"
    );

    let cfg = write(
        &d,
        "all.toml",
        &format!("{base}[transport]\nquirks = \"all\"\n"),
    );
    let s = load_scenario(&cfg, &Overrides::default()).unwrap();
    assert_eq!(s.transport.quirks, QuirkSet::all());

    let cfg = write(
        &d,
        "bad.toml",
        &format!("{base}[transport]\nquirks = [\"flow-ports\", \"typo\"]\n"),
    );
    let e = load_scenario(&cfg, &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bad.toml:7: transport.quirks: unknown quirk `typo`"),
        "{e}"
    );
}

#[test]
fn congestion_control_is_chosen_in_transport() {
    let d = scratch("toml-cc");
    write(&d, "f.txt", "1\n0 1 3 100 0.000000041\n");
    let base = r#"
[topology]
leaf_spine = { leaves = 2, hosts_per_leaf = 2, spines = 2, host_rate = "100Gbps", delay = "1us" }
[workload]
flow_file = "f.txt"
[transport]
"#;
    // run.py's window rule by default: on for hpcc and dctcp, off for dcqcn and timely.
    for (cc, win) in [
        ("dcqcn", false),
        ("hpcc", true),
        ("timely", false),
        ("dctcp", true),
        ("none", false),
    ] {
        let cfg = write(&d, &format!("{cc}.toml"), &format!("{base}cc = \"{cc}\"\n"));
        let t = load_scenario(&cfg, &Overrides::default())
            .unwrap()
            .transport;
        assert_eq!((t.cc.name(), t.has_win, t.var_win), (cc, win, win));
    }
    let cfg = write(
        &d,
        "knobs.toml",
        &format!(
            "{base}cc = \"hpcc\"\nwindow = false\nu_target = 0.9\nmi_thresh = 5\nfast_react = true\n\
             multi_rate = true\nint_multi = 2\ndctcp_rate_ai = \"2Gbps\"\n"
        ),
    );
    let t = load_scenario(&cfg, &Overrides::default())
        .unwrap()
        .transport;
    assert_eq!((t.has_win, t.var_win), (false, true));
    assert_eq!((t.u_target, t.mi_thresh, t.int_multi), (0.9, 5, 2));
    assert!(t.fast_react && t.multi_rate);
    assert_eq!(t.dctcp_rate_ai_bps, 2_000_000_000);
    for (bad, want) in [
        ("cc = \"cubic\"", "bad.toml:7: transport.cc"),
        (
            "u_target = 0.0",
            "bad.toml:7: transport.u_target: must be in (0, 10]",
        ),
        (
            "int_multi = 0",
            "bad.toml:7: transport.int_multi: must be >= 1",
        ),
    ] {
        let cfg = write(&d, "bad.toml", &format!("{base}{bad}\n"));
        let e = load_scenario(&cfg, &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{bad}: {e}");
    }
}

fn fs_read(p: &std::path::Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn uet_transport_kind_and_parameters() {
    let d = scratch("toml-uet");
    write(&d, "f.txt", "1\n0 3 3 4194304 0\n");
    let base = r#"
[topology]
leaf_spine = { leaves = 2, hosts_per_leaf = 2, spines = 2, host_rate = "400Gbps", delay = "1us" }
[workload]
flow_file = "f.txt"
[transport]
"#;
    // RoCE by default, with the UET parameters at their defaults (htsim's 4150 B packets).
    let t = load_scenario(&write(&d, "roce.toml", base), &Overrides::default())
        .unwrap()
        .transport;
    assert_eq!(t.kind, TransportKind::Roce);
    assert_eq!((t.uet.payload_bytes, t.uet.header_bytes), (4086, 64));
    assert_eq!(t.payload_bytes, 1000);
    assert!(t.pfc_enabled);

    // kind = "uet": PFC off, no rate CC, the payload is the UET one; the table's keys land.
    let cfg = write(
        &d,
        "uet.toml",
        &format!(
            "{base}kind = \"uet\"\n[transport.uet]\ntrimming = true\nqueue_packets = 101\n\
             ecn_kmin_packets = 25\necn_kmax_packets = 76\ninitial_window_packets = 151\n\
             max_window_bdp = 2.0\nbase_rtt = \"8337ns\"\nrto = \"42us\"\npayload = 2000\n\
             sizing_rate = \"100Gbps\"\n\
             switch_hash = \"htsim\"\nwait_to_decrease = 0.25\nwtd_alpha = 0.1\n\
             cc = \"nscc\"\nnscc_target_delay = \"9us\"\nnscc_qa_gate = 4\nack_bytes = 16384\n\
             ack_request = \"reps\"\nqueue_release = \"end\"\n\
             trim_newest_probability = 0.25\nnscc_feedback = \"htsim\"\n\
             inflight = \"received-bytes\"\ntx_time = \"ps\"\ncontrol_turns = 10\n"
        ),
    );
    let t = load_scenario(&cfg, &Overrides::default())
        .unwrap()
        .transport;
    assert_eq!(t.kind, TransportKind::Uet);
    assert!(!t.pfc_enabled);
    assert_eq!(t.cc, Cc::None);
    assert_eq!(t.payload_bytes, 2000);
    assert_eq!(
        t.uet,
        UetParams {
            payload_bytes: 2000,
            header_bytes: 64,
            trimming: true,
            queue_packets: 101,
            ecn_kmin_packets: 25,
            ecn_kmax_packets: 76,
            initial_window_packets: 151,
            max_window_bdp: 2.0,
            base_rtt_ns: 8337,
            rto_ns: 42_000,
            sizing_rate_bps: 100_000_000_000,
            switch_hash: SwitchHash::Htsim,
            wait_to_decrease: 0.25,
            wtd_alpha: 0.1,
            cc: UetCc::Nscc,
            nscc_target_delay_ns: 9000,
            nscc_qa_gate: 4,
            ack_bytes: 16384,
            ack_request: UetAckRequest::Reps,
            rccc_pull_rate: 0.99,
            rccc_credit_per_pull_bytes: 16384,
            queue_release: UetQueueRelease::End,
            trim_newest_probability: 0.25,
            nscc_feedback: UetNsccFeedback::Htsim,
            inflight: UetInflight::ReceivedBytes,
            tx_time: UetTxTime::Ps,
            control_turns: 10,
        }
    );
    // Each uet key reaches the attributes of the objects that read it (the rows of
    // transport_params/uet.rs, in table order): the NICs and switches, the uet transport's
    // window, and the fabric-wide settings the scenario program derives from.
    let names: Vec<_> = t
        .uet
        .ns3_attributes()
        .iter()
        .map(|a| (a.object.type_id(), a.name))
        .collect();
    let (uet, fabric) = ("ns3::RdmaUetRecovery", "ns3::RdmaUetFabric");
    let (nic, switch) = ("ns3::RdmaNic", "ns3::RdmaSwitch");
    assert_eq!(
        names,
        [
            (nic, "UetHeaderSize"),
            (switch, "TrimmedSize"),
            (switch, "TrimEnabled"),
            (uet, "NsccTrimming"),
            (fabric, "QueuePackets"),
            (fabric, "EcnKminPackets"),
            (fabric, "EcnKmaxPackets"),
            (uet, "InitialWindowPackets"),
            (uet, "MaxWindowBdp"),
            (fabric, "BaseRtt"),
            (fabric, "Rto"),
            (fabric, "SizingRate"),
            (uet, "WaitToDecrease"),
            (uet, "WtdAlpha"),
            (uet, "Cc"),
            (uet, "NsccTargetDelay"),
            (uet, "NsccQaGate"),
            (uet, "AckBytes"),
            (uet, "AckRequest"),
            (uet, "RcccPullRate"),
            (uet, "RcccCreditPerPull"),
            (uet, "NsccFeedback"),
            (uet, "Inflight"),
            (switch, "QueueRelease"),
            (switch, "TrimNewestProbability"),
            ("ns3::RdmaNetDevice", "TxTime"),
            (nic, "TxTime"),
            ("ns3::RdmaNetDevice", "ControlTurns"),
        ]
    );
    // link_rates: one direction set apart, its queue scaled with its rate (htsim's -failed).
    let degraded = write(
        &d,
        "degraded.toml",
        &format!(
            "{}\nkind = \"uet\"\n",
            base.replace(
                "[workload]",
                "link_rates = [ { a = 4, b = 6, rate = \"200Gbps\", one_way = true, \
                 scale_queue = true }, { a = 5, b = 7, rate = \"100Gbps\" } ]\n[workload]"
            )
        ),
    );
    let topo = load_scenario(&degraded, &Overrides::default())
        .unwrap()
        .topology;
    assert_eq!(
        topo.port_rates,
        [PortRate {
            node: 4,
            peer: 6,
            rate_bps: 200_000_000_000,
            queue_scale: 0.5
        }]
    );
    let rate = |a, b| {
        topo.links
            .iter()
            .find(|l| (l.a, l.b) == (a, b))
            .map(|l| l.rate_bps)
    };
    assert_eq!(
        rate(4, 6),
        Some(400_000_000_000),
        "one way: the link keeps its rate"
    );
    assert_eq!(
        rate(5, 7),
        Some(100_000_000_000),
        "both ways: the link's rate"
    );
    let roce = write(
        &d,
        "degraded-roce.toml",
        &fs_read(&degraded).replace("kind = \"uet\"", "kind = \"roce\""),
    );
    let e = load_scenario(&roce, &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("topology.link_rates: scale_queue needs kind = \"uet\""),
        "{e}"
    );

    // htsim's switches are plain ECMP: a switch-side algorithm is refused, naming it.
    let e = load_scenario(
        &cfg,
        &Overrides {
            lb: Some("conga".to_owned()),
            ..Overrides::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("lb: algorithm `conga` decides at the switches; transport.uet.switch_hash"),
        "{e}"
    );

    // Bad input: file, line and key.
    for (bad, want) in [
        ("kind = \"tcp\"", "bad.toml:7: transport.kind"),
        (
            "[transport.uet]\ntrimming = true",
            "bad.toml:7: transport.uet: only with kind = \"uet\"",
        ),
        (
            "kind = \"uet\"\npfc = true",
            "transport.pfc: the uet transport is lossy",
        ),
        (
            "kind = \"uet\"\npayload = 1000",
            "bad.toml:8: transport.payload: with kind = \"uet\" the payload is transport.uet.payload",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\nheader = 20",
            "bad.toml:9: transport.uet.header: must be in 48..=512 bytes, got 20",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\necn_kmin_packets = 30\necn_kmax_packets = 20",
            "transport.uet: needs ecn_kmin_packets <= ecn_kmax_packets <= queue_packets",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\nmax_window_bdp = 0.0",
            "bad.toml:9: transport.uet.max_window_bdp: must be in (0, 100], got 0",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\ntrimming = true\nmax_window_bdp = 101.5",
            "bad.toml:10: transport.uet.max_window_bdp: must be in (0, 100], got 101.5",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\nheader = \"1KiB\"",
            "bad.toml:9: transport.uet.header: must be in 48..=512 bytes, got 1024",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\npayload = 0",
            "bad.toml:9: transport.uet.payload: must be in 1..=9000 bytes, got 0",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\nnscc_qa_gate = 31",
            "bad.toml:9: transport.uet.nscc_qa_gate: must be in 0..=30, got 31",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\nwtd_alpha = 0.0",
            "bad.toml:9: transport.uet.wtd_alpha: must be in (0, 1], got 0",
        ),

        (
            "kind = \"uet\"\n[transport.uet]\nwait_to_decrease = 1.0",
            "bad.toml:9: transport.uet.wait_to_decrease: must be in [0, 1) (0 = off), got 1",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\ncc = \"eqds\"",
            "bad.toml:9: transport.uet.cc: unknown \"eqds\", expected one of mprdma, nscc, rccc, nscc+rccc",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\nrccc_credit_per_pull = 1000",
            "bad.toml:9: transport.uet.rccc_credit_per_pull: must be a positive multiple of 256 B, got 1000",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\nrccc_pull_rate = 0.0",
            "bad.toml:9: transport.uet.rccc_pull_rate: must be in [0.01, 10], got 0",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\ntrim_newest_probability = 1.5",
            "bad.toml:9: transport.uet.trim_newest_probability: must be in [0, 1], got 1.5",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\nnscc_qa_gate = 31",
            "bad.toml:9: transport.uet.nscc_qa_gate: must be in 0..=30, got 31",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\nwtd_alpha = 0.0",
            "bad.toml:9: transport.uet.wtd_alpha: must be in (0, 1], got 0",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\nwindow = 3",
            "bad.toml:9",
        ),
        (
            "kind = \"uet\"\n[transport.uet]\nswitch_hash = \"crc\"",
            "bad.toml:9",
        ),
    ] {
        let cfg = write(&d, "bad.toml", &format!("{base}{bad}\n"));
        let e = load_scenario(&cfg, &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{bad}: {e}");
    }
}
