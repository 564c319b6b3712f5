//! ConWeave run.py configs map onto the scenario key by key.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use common::{data, runpy_config, scratch, write};
use rdma_lb_scenario::{load_scenario, Cc, ErrorKind, Overrides, Quirk, QuirkSet, Recovery};

fn setup(tag: &str) -> (std::path::PathBuf, String) {
    let d = scratch(tag);
    write(
        &d,
        "flow.txt",
        "3\n0 17 3 1000 2.0\n5 100 3 0 2.000001\n127 0 3 2000000 2.1\n",
    );
    let topo = data("conweave/config/leaf_spine_128_100G_OS2.txt");
    let text = runpy_config(&topo.display().to_string(), "flow.txt");
    (d, text)
}

#[test]
fn runpy_template_maps_every_key() {
    let (d, text) = setup("runpy");
    let cfg = write(&d, "config.txt", &text);
    let s = load_scenario(&cfg, &Overrides::default()).unwrap();
    assert_eq!(s.name, "config");
    assert_eq!(s.topology.node_count, 144);
    assert_eq!(s.flows.len(), 3);
    assert_eq!(
        (
            s.flows[1].src,
            s.flows[1].dst,
            s.flows[1].size_bytes,
            s.flows[1].start_ns
        ),
        (5, 100, 1, 2_000_001_000)
    );
    let t = &s.transport;
    assert_eq!(t.buffer_bytes, 9 * 1024 * 1024);
    assert_eq!(
        (t.recovery, t.pfc_enabled, t.ecn_enabled),
        (Recovery::Gbn, true, true)
    );
    assert_eq!(t.cc, Cc::Dcqcn);
    assert_eq!(
        (
            t.alpha_resume_interval_ns,
            t.rate_decrease_interval_ns,
            t.rp_timer_ns
        ),
        (1_000, 4_000, 300_000)
    );
    assert_eq!(
        (t.rate_ai_bps, t.rate_hai_bps, t.min_rate_bps),
        (40_000_000, 100_000_000, 100_000_000)
    );
    assert_eq!(t.ewma_gain, 0.00390625);
    assert_eq!(
        (t.l2_chunk_bytes, t.ack_interval_packets, t.payload_bytes),
        (4000, 1, 1000)
    );
    assert_eq!(t.ecn.len(), 6);
    let e100 = t
        .ecn
        .iter()
        .find(|e| e.rate_bps == 100_000_000_000)
        .unwrap();
    assert_eq!(
        (e100.kmin_bytes, e100.kmax_bytes, e100.pmax),
        (100_000, 400_000, 0.2)
    );
    let e20 = t.ecn.iter().find(|e| e.rate_bps == 20_000_000_000).unwrap();
    assert_eq!(
        e20.pmax, 0.0,
        "run.py's format quirk for 20/50G is data, kept as written"
    );
    assert_eq!(s.lb.name, "ecmp");
    assert_eq!(s.run.seed, 1);
    assert_eq!(
        (s.run.flowgen_start_ns, s.run.flowgen_stop_ns),
        (2_000_000_000, 2_100_000_000)
    );
    assert_eq!(s.run.hard_stop_ns, 12_100_000_000, "stop + 10 s");
    assert_eq!(s.run.monitor_interval_ns, 10_000);
    assert!(s.run.pfc_trace, "PFC_OUTPUT_FILE turns the PFC trace on");
    assert!(s.run.link_events.is_empty(), "LINK_DOWN 0 0 0 = none");
    assert_eq!(s.run.load, 50.0);
    // Accepted-but-not-produced keys are reported, each with its line.
    for (key, line) in [("VOQ_MON_FILE", 8), ("CONWEAVE_TX_EXPIRY_TIME", 23)] {
        assert!(
            s.notes
                .iter()
                .any(|n| n.starts_with(&format!("{}:{line}: {key}: ", cfg.display()))),
            "{key}: {:#?}",
            s.notes
        );
    }
}

#[test]
fn cc_modes_and_their_windows() {
    // CC_MODE 1/3/7/8 select the algorithms; absent HAS_WIN/VAR_WIN follow run.py (1 for HPCC
    // and DCTCP), present ones are honoured; the HPCC keys are read.
    let (d, text) = setup("cc");
    let base = text.replace("HAS_WIN 0\n", "").replace("VAR_WIN 0\n", "");
    for (mode, name, win) in [
        (1, "dcqcn", false),
        (3, "hpcc", true),
        (7, "timely", false),
        (8, "dctcp", true),
    ] {
        let cfg = write(
            &d,
            &format!("c{mode}.txt"),
            &base.replace("CC_MODE 1", &format!("CC_MODE {mode}")),
        );
        let s = load_scenario(&cfg, &Overrides::default()).unwrap();
        assert_eq!(s.transport.cc.name(), name);
        assert_eq!(
            (s.transport.has_win, s.transport.var_win),
            (win, win),
            "{name}"
        );
    }
    let cfg = write(
        &d,
        "h.txt",
        &text
            .replace("CC_MODE 1", "CC_MODE 3")
            .replace("VAR_WIN 0", "VAR_WIN 1")
            .replace("FAST_REACT 0", "FAST_REACT 1")
            .replace("MI_THRESH 0", "MI_THRESH 5")
            .replace("U_TARGET 0.95", "U_TARGET 0.9")
            .replace("MULTI_RATE 0", "MULTI_RATE 1")
            .replace("DCTCP_RATE_AI 1000Mb/s", "DCTCP_RATE_AI 500Mb/s"),
    );
    let t = load_scenario(&cfg, &Overrides::default())
        .unwrap()
        .transport;
    assert_eq!(
        (t.has_win, t.var_win),
        (false, true),
        "given keys win over run.py's rule"
    );
    assert!(t.fast_react && t.multi_rate && !t.sample_feedback);
    assert_eq!((t.mi_thresh, t.u_target, t.int_multi), (5, 0.9, 1));
    assert_eq!(t.dctcp_rate_ai_bps, 500_000_000);
}

#[test]
fn modes_we_lack_and_other_rejections() {
    let (d, text) = setup("modes");
    for (from, to, want) in [
        (
            "CC_MODE 1",
            "CC_MODE 5",
            ":19: CC_MODE: unknown mode 5 (1 = DCQCN, 3 = HPCC, 7 = TIMELY, 8 = DCTCP, 0 = none)",
        ),
        (
            "CC_MODE 1\nLB_MODE 0",
            "CC_MODE 3\nLB_MODE 9",
            ":19: CC_MODE: hpcc with LB_MODE 9: ConWeave runs only with CC_MODE 1",
        ),
        (
            "U_TARGET 0.95",
            "U_TARGET 0",
            ":49: U_TARGET: must be in (0, 10]",
        ),
        (
            "LB_MODE 0",
            "LB_MODE 2",
            ":20: LB_MODE: 2 = DRILL is not available",
        ),
        (
            "CONWEAVE_TX_EXPIRY_TIME 1000",
            "CONWEAVE_TX_EXPIRY_TIME 0.5",
            ":23: CONWEAVE_TX_EXPIRY_TIME: must be a whole number of microseconds",
        ),
        (
            "GLOBAL_T 1",
            "GLOBAL_T 0",
            ":48: GLOBAL_T: 0 (per-pair RTT/BDP) is not modelled",
        ),
        (
            "RATE_AI 40.0Mb/s",
            "RATE_AI 40.0Mbit",
            ":34: RATE_AI: rate `40.0Mbit`: unknown unit `Mbit`",
        ),
        (
            "BUFFER_SIZE 9",
            "BUFFER_SIZE 0",
            ":18: BUFFER_SIZE: must be > 0 (the reference's 0 = per-port automatic size is not modelled)",
        ),
        (
            "ENABLE_PFC 1",
            "ENABLE_PFC 2",
            ":21: ENABLE_PFC: must be 0 or 1, got `2`",
        ),
        (
            "RANDOM_SEED 1",
            "RANDOM_SEED 1\nRANDOM_SEED 2",
            ":61: RANDOM_SEED: given twice (first on line 60)",
        ),
        (
            "LINK_DOWN 0 0 0",
            "LINK_DOWN 5 0 1",
            ":55: LINK_DOWN: no link 0-1 in the topology",
        ),
        (
            "PMAX_MAP 6 20000000000 0 ",
            "PMAX_MAP 6 30000000000 0 ",
            ":58: PMAX_MAP: no entry for rate 20000000000",
        ),
        (
            "KMIN_MAP 6 20000000000 100",
            "KMIN_MAP 6 20000000000 500",
            ":57: KMIN_MAP: Kmin 500 KB above Kmax 400 KB",
        ),
    ] {
        assert!(text.contains(from), "{from}");
        let cfg = write(&d, "c.txt", &text.replace(from, to));
        let e = load_scenario(&cfg, &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&cfg.display().to_string()) && e.contains(want),
            "{to}: {e}"
        );
    }
    // A mode we have, by name, with parameters (extension keys).
    let cfg = write(
        &d,
        "r.txt",
        &text.replace("LB_MODE 0", "LB_MODE reps\nLB_PARAMS num_entropies = 64"),
    );
    let s = load_scenario(&cfg, &Overrides::default()).unwrap();
    assert_eq!(
        (s.lb.name.as_str(), s.lb.params.as_str()),
        ("reps", "num_entropies = 64")
    );
    // IRN, LINK_DOWN on a real link: at FLOWGEN_START_TIME + t µs.
    let cfg = write(
        &d,
        "i.txt",
        &text
            .replace("ENABLE_IRN 0", "ENABLE_IRN 1")
            .replace("ENABLE_PFC 1", "ENABLE_PFC 0")
            .replace(
                "LINK_DOWN 0 0 0",
                "LINK_DOWN 100 128 136\nLINK_DOWN 250 129 137",
            ),
    );
    let s = load_scenario(&cfg, &Overrides::default()).unwrap();
    assert_eq!(
        (s.transport.recovery, s.transport.pfc_enabled),
        (Recovery::Irn, false)
    );
    assert_eq!(s.run.link_events.len(), 2);
    assert_eq!(
        (
            s.run.link_events[0].at_ns,
            s.run.link_events[0].a,
            s.run.link_events[0].b
        ),
        (2_000_100_000, 128, 136)
    );
}

#[test]
fn relative_paths_resolve_from_the_config_dir_then_cwd() {
    let (d, text) = setup("rel");
    // FLOW_FILE flow.txt lives beside the config: found even though the CWD is elsewhere.
    let sub = d.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let cfg = write(
        &sub,
        "c.txt",
        &text.replace("FLOW_FILE flow.txt", "FLOW_FILE ../flow.txt"),
    );
    assert_eq!(
        load_scenario(&cfg, &Overrides::default())
            .unwrap()
            .flows
            .len(),
        3
    );
    // A path relative to the CWD (the crate dir under cargo test) is the fallback.
    let rel_topo = "../../data/conweave/config/leaf_spine_128_100G_OS2.txt";
    assert!(
        std::path::Path::new(rel_topo).exists(),
        "cargo test runs in the crate dir"
    );
    let topo_line = text.lines().next().unwrap().to_owned();
    let cfg = write(
        &sub,
        "c2.txt",
        &text
            .replace(&topo_line, &format!("TOPOLOGY_FILE {rel_topo}"))
            .replace("FLOW_FILE flow.txt", "FLOW_FILE ../flow.txt"),
    );
    assert_eq!(
        load_scenario(&cfg, &Overrides::default())
            .unwrap()
            .topology
            .node_count,
        144
    );
}

#[test]
fn overrides_apply_and_are_checked() {
    let (d, text) = setup("ovr");
    let cfg = write(&d, "c.txt", &text);
    let o = Overrides::parse(
        "lb=spray; lb_params=num_entropies = 256; seed=7; out=o/x; stop=10ms; recovery=irn; pfc=0",
    )
    .unwrap();
    let s = load_scenario(&cfg, &o).unwrap();
    assert_eq!(
        (s.lb.name.as_str(), s.lb.params.as_str()),
        ("spray", "num_entropies = 256")
    );
    assert_eq!(
        (s.run.seed, s.run.out_dir.as_str(), s.run.hard_stop_ns),
        (7, "o/x", 10_000_000)
    );
    assert_eq!(
        (s.transport.recovery, s.transport.pfc_enabled),
        (Recovery::Irn, false)
    );
    let e = Overrides::parse("colour=red").unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnknownKey);
    assert!(
        e.to_string()
            .starts_with("overrides: colour: unknown override"),
        "{e}"
    );
    assert_eq!(
        Overrides::parse("stop=10").unwrap_err().to_string(),
        "overrides: stop: time `10` has no unit (use ns, us, ms, s)"
    );
    let e = load_scenario(&cfg, &Overrides::parse("load=0.5").unwrap()).unwrap_err();
    assert!(e.to_string().starts_with("overrides: load: "), "{e}");
    let e = load_scenario(
        &cfg,
        &Overrides::parse("lb=spray;lb_params=num_entropies = 0").unwrap(),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "overrides: lb_params: algorithm `spray`, parameter `num_entropies`: must be in 1..=65536, got 0");
}

#[test]
fn lb_override_keeps_the_configs_own_parameters_only_for_its_own_algorithm() {
    let (d, text) = setup("ovr-lb");
    let cfg = write(
        &d,
        "c.txt",
        &text.replace("LB_MODE 0", "LB_MODE spray\nLB_PARAMS num_entropies = 64"),
    );
    let lb = |o: &str| {
        let s = load_scenario(&cfg, &Overrides::parse(o).unwrap()).unwrap();
        (s.lb.name, s.lb.params)
    };
    let own = ("spray".to_owned(), "num_entropies = 64".to_owned());
    assert_eq!(lb(""), own);
    // A sweep names every algorithm with `lb`, the config's own included: its parameters stay.
    assert_eq!(lb("lb=spray"), own);
    // Another algorithm starts from none (spray's would be unknown keys to it) ...
    assert_eq!(lb("lb=reps"), ("reps".to_owned(), String::new()));
    // ... and `lb_params` replaces them either way.
    assert_eq!(
        lb("lb=spray;lb_params=num_entropies = 8"),
        ("spray".to_owned(), "num_entropies = 8".to_owned())
    );
}

#[test]
fn reference_quirks_are_on_and_flow_starts_truncated_as_ns3_19() {
    // 2.000000041 s is 2000000040.99.. ns as a double: the reference starts that flow at
    // 2000000040 ns (its fct.txt on the reference case says so); 2.000000083 stays 083.
    let d = scratch("quirks");
    write(
        &d,
        "flow.txt",
        "2\n71 100 3 6563 2.000000041\n43 104 3 256 2.000000083\n",
    );
    let topo = data("conweave/config/leaf_spine_128_100G_OS2.txt");
    let cfg = write(
        &d,
        "config.txt",
        &runpy_config(&topo.display().to_string(), "flow.txt"),
    );
    let s = load_scenario(&cfg, &Overrides::default()).unwrap();
    assert_eq!(s.transport.quirks, QuirkSet::all());
    assert_eq!(s.transport.quirks.iter().count(), 7);
    let starts: Vec<u64> = s.flows.iter().map(|f| f.start_ns).collect();
    assert_eq!(starts, vec![2_000_000_040, 2_000_000_083]);

    let o = Overrides::parse("quirks=none").unwrap();
    let s = load_scenario(&cfg, &o).unwrap();
    assert_eq!(s.transport.quirks, QuirkSet::NONE);
    let starts: Vec<u64> = s.flows.iter().map(|f| f.start_ns).collect();
    assert_eq!(starts, vec![2_000_000_041, 2_000_000_083]);

    let o = Overrides::parse("quirks=flow-ports, pacing-wakeup").unwrap();
    let s = load_scenario(&cfg, &o).unwrap();
    let names: Vec<&str> = s.transport.quirks.iter().map(Quirk::name).collect();
    assert_eq!(names, vec!["flow-ports", "pacing-wakeup"]);
    assert_eq!(s.flows[0].start_ns, 2_000_000_041, "time-truncation is off");

    let e = Overrides::parse("quirks=flow-ports,nope")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("overrides: quirks: unknown quirk `nope` (all, none, or of: flow-ports,"),
        "{e}"
    );
}
