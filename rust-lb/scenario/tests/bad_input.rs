//! Every bad-input case of the scenario inputs gives one `file:line: key: message` line.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use common::{data, runpy_config, scratch, write};
use rdma_lb_scenario::cdf::parse_cdf_str;
use rdma_lb_scenario::flows::parse_flow_str;
use rdma_lb_scenario::topology::{parse_topology_str, LeafSpine};
use rdma_lb_scenario::{load_scenario, validate, ErrorKind, Overrides, Topology};

fn small() -> Topology {
    // hosts 0..3, leaves 4,5, spine 6
    LeafSpine {
        leaves: 2,
        hosts_per_leaf: 2,
        spines: 1,
        host_rate_bps: 100_000_000_000,
        fabric_rate_bps: 100_000_000_000,
        delay_ns: 1000,
    }
    .build()
    .unwrap()
}

fn msg<T: std::fmt::Debug>(r: Result<T, rdma_lb_scenario::ScenarioError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn missing_file_names_the_key_and_line() {
    let d = scratch("missing");
    let cfg = write(&d, "c.txt", &runpy_config("nope/topo.txt", "flow.txt"));
    let e = load_scenario(&cfg, &Overrides::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Io);
    let s = e.to_string();
    assert!(
        s.starts_with(&format!("{}:1: TOPOLOGY_FILE: ", cfg.display())),
        "{s}"
    );
    assert!(
        s.contains("nope/topo.txt: cannot read: No such file or directory"),
        "{s}"
    );
    // The config itself missing: file and no line.
    let e = load_scenario(&d.join("absent.toml"), &Overrides::default()).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("absent.toml: config: cannot read: No such file or directory (os error 2)"),
        "{e}"
    );
}

#[test]
fn wrong_column_counts() {
    let t = small();
    assert_eq!(
        msg(parse_flow_str("f.txt", "2\n0 1 3 100 2.0\n0 1 3 100\n", &t)),
        "f.txt:3: flow: expected 5 fields `<src> <dst> <pg> <size_bytes> <start_s>`, found 4"
    );
    assert_eq!(
        msg(parse_flow_str("f.txt", "1\n0 1 3 100 200 2.0\n", &t)),
        "f.txt:2: flow: expected 5 fields `<src> <dst> <pg> <size_bytes> <start_s>`, found 6 \
         (HPCC's 6-field format with a dport column is not ConWeave's)"
    );
    assert_eq!(
        msg(parse_topology_str(
            "t.txt",
            "3 1 1\n2\n0 2 100Gbps 1000ns\n"
        )),
        "t.txt:3: link: expected 5 fields `<a> <b> <rate> <delay> <error_rate>`, found 4"
    );
    assert_eq!(
        msg(parse_cdf_str("c.txt", "0 0\n100 50 7\n200 100\n")),
        "c.txt:2: point: expected 2 fields `<size_bytes> <cumulative_percent>`, found 3"
    );
}

#[test]
fn count_lines_must_match() {
    let t = small();
    assert_eq!(
        msg(parse_flow_str(
            "f.txt",
            "3\n0 1 3 100 2.0\n0 2 3 100 2.0\n",
            &t
        )),
        "f.txt:1: flow_count: says 3 flows, the file has 2"
    );
    assert_eq!(
        msg(parse_flow_str(
            "f.txt",
            "1\n0 1 3 100 2.0\n0 2 3 100 2.0\n",
            &t
        )),
        "f.txt:3: flow_count: the count line (1) says 1 flows, but more records follow"
    );
    assert_eq!(
        msg(parse_topology_str(
            "t.txt",
            "3 1 2\n2\n0 2 100Gbps 1000ns 0\n"
        )),
        "t.txt:3: links: header says 2 links, file ends after 1"
    );
    assert_eq!(
        msg(parse_topology_str("t.txt", "3 2 1\n2\n")),
        "t.txt:2: switch ids: header says 2 switches, file ends after 1"
    );
}

#[test]
fn negative_and_garbage_sizes_and_size_zero() {
    let t = small();
    assert_eq!(
        msg(parse_flow_str("f.txt", "1\n0 1 3 -5 2.0\n", &t)),
        "f.txt:2: size_bytes: negative size `-5`"
    );
    assert_eq!(
        msg(parse_flow_str("f.txt", "1\n0 1 3 1e3 2.0\n", &t)),
        "f.txt:2: size_bytes: `1e3` is not a non-negative integer"
    );
    assert_eq!(
        msg(parse_flow_str("f.txt", "1\n0 1 3 10 -2.0\n", &t)),
        "f.txt:2: start_s: `-2.0` is not a non-negative decimal number of seconds"
    );
    let f = parse_flow_str("f.txt", "1\n0 1 3 0 2.000013125\n", &t).unwrap();
    assert_eq!(f[0].size_bytes, 1, "size 0 becomes 1 (as the reference)");
    assert_eq!(f[0].start_ns, 2_000_013_125, "decimal seconds → ns exactly");
}

#[test]
fn unknown_host_ids_and_switches_as_endpoints() {
    let t = small();
    assert_eq!(
        msg(parse_flow_str("f.txt", "1\n0 9 3 100 2.0\n", &t)),
        "f.txt:2: dst: host 9 does not exist (topology has 7 nodes)"
    );
    assert_eq!(
        msg(parse_flow_str("f.txt", "1\n4 1 3 100 2.0\n", &t)),
        "f.txt:2: src: node 4 is a switch, not a host"
    );
    assert_eq!(
        msg(parse_flow_str("f.txt", "1\n1 1 3 100 2.0\n", &t)),
        "f.txt:2: dst: flow from host 1 to itself"
    );
    assert_eq!(
        msg(parse_topology_str(
            "t.txt",
            "3 1 1\n2\n0 7 100Gbps 1000ns 0\n"
        )),
        "t.txt:3: b: node 7 does not exist (ids 0..3)"
    );
    assert_eq!(
        msg(parse_topology_str(
            "t.txt",
            "3 1 1\n2\n2 2 100Gbps 1000ns 0\n"
        )),
        "t.txt:3: b: self link 2-2"
    );
    assert_eq!(
        msg(parse_topology_str("t.txt", "3 1 1\n5\n")),
        "t.txt:2: switch id: 5 is not a node id (0..3)"
    );
}

#[test]
fn link_delay_and_rate_with_bad_units() {
    assert_eq!(
        msg(parse_topology_str(
            "t.txt",
            "3 1 1\n2\n0 2 100Gbps 1000 0\n"
        )),
        "t.txt:3: delay: time `1000` has no unit (use ns, us, ms, s)"
    );
    assert_eq!(
        msg(parse_topology_str(
            "t.txt",
            "3 1 1\n2\n0 2 100Gbps 10xs 0\n"
        )),
        "t.txt:3: delay: time `10xs`: unknown unit `xs` (use ns, us, ms, s)"
    );
    assert_eq!(
        msg(parse_topology_str("t.txt", "3 1 1\n2\n0 2 100GBs 1us 0\n")),
        "t.txt:3: rate: rate `100GBs`: unknown unit `GBs` (use bps, Kbps, Mbps, Gbps, Tbps (or \
         b/s, Kb/s, Mb/s, Gb/s, Tb/s; K, M, G, T))"
    );
    // Not only 1000ns (the reference asserts it): other delays are fine.
    let t = parse_topology_str("t.txt", "3 1 1\n2\n0 2 25Gbps 1.5us 0.001\n").unwrap();
    assert_eq!(
        (t.links[0].rate_bps, t.links[0].delay_ns),
        (25_000_000_000, 1500)
    );
}

#[test]
fn cdf_not_monotone_or_not_ending_at_100() {
    assert_eq!(
        msg(parse_cdf_str("c.txt", "0 0\n100 50\n90 60\n200 100\n")),
        "c.txt:3: size_bytes: not monotone: 90 after 100"
    );
    assert_eq!(
        msg(parse_cdf_str("c.txt", "0 0\n100 50\n200 40\n300 100\n")),
        "c.txt:3: percent: not monotone: 40 after 50"
    );
    assert_eq!(
        msg(parse_cdf_str("c.txt", "0 0\n100 50\n\n200 90\n")),
        "c.txt:4: percent: the last point must be at 100 percent, got 90"
    );
    assert_eq!(
        msg(parse_cdf_str("c.txt", "0 0\n100 150\n")),
        "c.txt:2: percent: must be in [0, 100], got 150"
    );
}

#[test]
fn unknown_key_and_unknown_algorithm() {
    let d = scratch("keys");
    let topo = data("conweave/config/leaf_spine_128_100G_OS2.txt");
    write(&d, "flow.txt", "1\n0 17 3 1000 2.0\n");
    let base = runpy_config(&topo.display().to_string(), "flow.txt");

    let cfg = write(&d, "a.txt", &format!("{base}MY_KEY 3\n"));
    let e = load_scenario(&cfg, &Overrides::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnknownKey);
    assert!(
        e.to_string()
            .starts_with(&format!("{}:61: MY_KEY: unknown key", cfg.display())),
        "{e}"
    );

    let cfg = write(&d, "b.txt", &base.replace("LB_MODE 0", "LB_MODE bogus"));
    let e = load_scenario(&cfg, &Overrides::default()).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "{}:20: LB_MODE: unknown mode `bogus`",
            cfg.display()
        )),
        "{e}"
    );

    let cfg = write(&d, "c.txt", &base.replace("LB_MODE 0", "LB_MODE 2"));
    let e = load_scenario(&cfg, &Overrides::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(
        e.to_string()
            .contains(":20: LB_MODE: 2 = DRILL is not available in rdma-lb"),
        "{e}"
    );
    // 3 / 6 / 9 are CONGA / LetFlow / ConWeave, with the CONWEAVE_* keys as parameters.
    for (mode, name) in [("3", "conga"), ("6", "letflow"), ("9", "conweave")] {
        let cfg = write(
            &d,
            "m.txt",
            &base.replace("LB_MODE 0", &format!("LB_MODE {mode}")),
        );
        let s = load_scenario(&cfg, &Overrides::default()).unwrap();
        assert_eq!(s.lb.name, name);
    }

    // Unknown algorithm through an override and through TOML, validated by LbConfig::parse.
    let cfg = write(&d, "ok.txt", &base);
    let o = Overrides::parse("lb=bogus").unwrap();
    assert_eq!(
        load_scenario(&cfg, &o).unwrap_err().to_string(),
        format!(
            "overrides: lb: algorithm `bogus`: unknown algorithm `bogus` (known: {})",
            rdma_lb_core::Algorithm::all_names()
        )
    );
    let toml = write(
        &d,
        "s.toml",
        &format!(
            "[topology]\nconweave_file = \"{}\"\n[workload]\nflow_file = \"flow.txt\"\n\n[lb]\nname = \"ecmpp\"\n",
            topo.display()
        ),
    );
    assert_eq!(
        load_scenario(&toml, &Overrides::default())
            .unwrap_err()
            .to_string(),
        format!(
            "{}:7: lb: algorithm `ecmpp`: unknown algorithm `ecmpp` (known: {})",
            toml.display(),
            rdma_lb_core::Algorithm::all_names()
        )
    );
    let toml2 = write(
        &d,
        "p.toml",
        &format!(
            "[topology]\nconweave_file = \"{}\"\n[workload]\nflow_file = \"flow.txt\"\n[lb]\nname = \"spray\"\nparams = {{ num_entropies = 0 }}\n",
            topo.display()
        ),
    );
    assert_eq!(
        load_scenario(&toml2, &Overrides::default()).unwrap_err().to_string(),
        format!(
            "{}:6: lb_params: algorithm `spray`, parameter `num_entropies`: must be in 1..=65536, got 0",
            toml2.display()
        )
    );
    let toml3 = write(
        &d,
        "u.toml",
        "[topology]\nconweave_file = \"x\"\nflavour = 1\n[workload]\n",
    );
    assert_eq!(
        load_scenario(&toml3, &Overrides::default())
            .unwrap_err()
            .to_string(),
        format!(
            "{}:3: topology.flavour: unknown field `flavour`, expected one of `conweave_file`, \
             `htsim_topo`, `htsim_failed`, `simai_file`, `leaf_spine`, `link_rates`, `link_faults`",
            toml3.display()
        )
    );
}

#[test]
fn themis_with_irn_receivers_is_refused() {
    let d = scratch("themis-irn");
    let topo = data("conweave/config/leaf_spine_128_100G_OS2.txt");
    write(&d, "flow.txt", "1\n0 17 3 1000 2.0\n");
    let toml = write(
        &d,
        "t.toml",
        &format!(
            "[topology]\nconweave_file = \"{}\"\n[workload]\nflow_file = \"flow.txt\"\n[transport]\nrecovery = \"irn\"\n[lb]\nname = \"themis\"\n",
            topo.display()
        ),
    );
    let why = |key: &str| {
        format!(
            "algorithm `themis` conflicts with {key}: it needs nic-sr or gbn receivers, as IRN's \
             NACKs also acknowledge data and Themis-D would filter them as reordering NACKs (the \
             Themis paper, §3.3)"
        )
    };
    assert_eq!(
        msg(load_scenario(&toml, &Overrides::default())),
        format!(
            "{}:8: lb: {}",
            toml.display(),
            why("transport.recovery = \"irn\"")
        )
    );
    // The algorithm from an override, the recovery from the file: located at the override,
    // naming the file's key.
    let ecmp = write(
        &d,
        "ecmp.toml",
        &std::fs::read_to_string(&toml)
            .unwrap()
            .replace("\"themis\"", "\"ecmp\""),
    );
    assert_eq!(
        msg(load_scenario(
            &ecmp,
            &Overrides::parse("lb=themis").unwrap()
        )),
        format!("overrides: lb: {}", why("transport.recovery = \"irn\""))
    );
    // Through an override, on either side; nic-sr and gbn are accepted.
    let ok = write(
        &d,
        "ok.toml",
        &std::fs::read_to_string(&toml)
            .unwrap()
            .replace("\"irn\"", "\"nic-sr\""),
    );
    load_scenario(&ok, &Overrides::default()).unwrap();
    assert_eq!(
        msg(load_scenario(
            &ok,
            &Overrides::parse("recovery=irn").unwrap()
        )),
        format!("overrides: lb: {}", why("the override recovery=irn"))
    );
    load_scenario(&ok, &Overrides::parse("recovery=gbn").unwrap()).unwrap();
    // A ConWeave config names its own key.
    let base = runpy_config(&topo.display().to_string(), "flow.txt");
    assert!(base.contains("ENABLE_IRN 0") && base.contains("LB_MODE 0"));
    let cfg = write(
        &d,
        "c.txt",
        &base
            .replace("ENABLE_IRN 0", "ENABLE_IRN 1")
            .replace("LB_MODE 0", "LB_MODE themis"),
    );
    assert_eq!(
        msg(load_scenario(&cfg, &Overrides::default())),
        format!("{}:20: lb: {}", cfg.display(), why("ENABLE_IRN 1"))
    );
}

#[test]
fn a_switch_port_rate_without_an_ecn_entry_is_refused() {
    // What the scenario program refuses (RdmaScenarioRunner::Validate), `check` refuses too.
    let d = scratch("ecn-rates");
    let base = "[topology]\nleaf_spine = { leaves = 2, hosts_per_leaf = 1, spines = 2, \
                host_rate = \"100Gbps\", delay = \"1us\" }\n\
                link_rates = [ { a = 2, b = 4, rate = \"25Gbps\" } ]\n\
                [[workload.collective]]\nkind = \"permutation\"\nranks = 2\nsize = \"4KiB\"\n\
                [transport]\n";
    let cfg = write(&d, "slow.toml", base);
    assert_eq!(
        msg(load_scenario(&cfg, &Overrides::default())),
        format!(
            "{}: transport.ecn_thresholds: no entry for 25Gbps, the rate of link 2-4 \
             (topology.link_rates or the topology); every rate of a switch port needs one \
             (listed: 20Gbps, 50Gbps, 100Gbps, 200Gbps, 250Gbps, 400Gbps)",
            cfg.display()
        )
    );
    // An explicit list replaces the defaults: it must cover 100 Gbps too.
    let only25 = "ecn_thresholds = [ { rate = \"25Gbps\", kmin = \"100KB\", kmax = \"400KB\", \
                  pmax = 0.2 } ]\n";
    let cfg = write(&d, "only25.toml", &format!("{base}{only25}"));
    assert!(msg(load_scenario(&cfg, &Overrides::default()))
        .contains("no entry for 100Gbps, the rate of link 0-2"));
    // Covered, ECN off, or uet (thresholds in packets): accepted.
    let both = only25.replace(
        " ]\n",
        ", { rate = \"100Gbps\", kmin = \"100KB\", kmax = \"400KB\", pmax = 0.2 } ]\n",
    );
    for (name, extra) in [
        ("both.toml", both.as_str()),
        ("off.toml", "ecn = false\n"),
        ("uet.toml", "kind = \"uet\"\n"),
    ] {
        let cfg = write(&d, name, &format!("{base}{extra}"));
        load_scenario(&cfg, &Overrides::default()).unwrap();
    }
}

#[test]
fn unknown_congestion_control_is_one_located_line() {
    let d = scratch("unknown-cc");
    let topo = data("conweave/config/leaf_spine_128_100G_OS2.txt");
    write(&d, "flow.txt", "1\n0 17 3 1000 2.0\n");
    // ConWeave: CC_MODE 5 is no congestion control.
    let base = runpy_config(&topo.display().to_string(), "flow.txt");
    let cfg = write(&d, "cw.txt", &base.replace("CC_MODE 1", "CC_MODE 5"));
    let e = load_scenario(&cfg, &Overrides::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Value);
    assert_eq!(
        e.to_string(),
        format!(
            "{}:19: CC_MODE: unknown mode 5 (1 = DCQCN, 3 = HPCC, 7 = TIMELY, 8 = DCTCP, 0 = none)",
            cfg.display()
        )
    );
    // TOML: `cc = "cubic"`.
    let toml = write(
        &d,
        "t.toml",
        &format!(
            "[topology]\nconweave_file = \"{}\"\n[workload]\nflow_file = \"flow.txt\"\n[transport]\ncc = \"cubic\"\n",
            topo.display()
        ),
    );
    let e = msg(load_scenario(&toml, &Overrides::default()));
    assert_eq!(
        e,
        format!(
            "{}:6: transport.cc: unknown variant `cubic`, expected one of `dcqcn`, `hpcc`, \
             `timely`, `dctcp`, `none`",
            toml.display()
        )
    );
}

#[test]
fn transport_settings_the_model_cannot_run_are_refused_in_either_format() {
    let d = scratch("transport-ranges");
    let topo = data("conweave/config/leaf_spine_128_100G_OS2.txt");
    write(&d, "flow.txt", "1\n0 17 3 1000 2.0\n");
    let head = format!(
        "[topology]\nconweave_file = \"{}\"\n[workload]\nflow_file = \"flow.txt\"\n[transport]\n",
        topo.display()
    );
    // TOML: each row's check, at the key's line (6), in the TOML key's terms.
    for (key, want) in [
        (
            "l2_back_to_zero = true",
            "transport.l2_back_to_zero: only false (0) is modelled",
        ),
        (
            "pause_time = \"500ns\"",
            "transport.pause_time: must be >= 1us (whole microseconds on the wire), got 500 ns",
        ),
        (
            "ack_interval_packets = 0",
            "transport.ack_interval_packets: must be >= 1",
        ),
        ("irn_bdp = \"0B\"", "transport.irn_bdp: must be > 0"),
        ("rp_timer = \"0ns\"", "transport.rp_timer: must be > 0"),
        (
            "rate_decrease_interval = \"0us\"",
            "transport.rate_decrease_interval: must be > 0",
        ),
        (
            "alpha_resume_interval = \"0ns\"",
            "transport.alpha_resume_interval: must be > 0",
        ),
        (
            "buffer = \"0B\"",
            "transport.buffer: must be > 0 (the reference's 0 = per-port automatic size is not \
             modelled)",
        ),
        (
            "payload = \"5GB\"",
            "transport.payload: must be at most 4294967295 bytes, got 5000000000",
        ),
    ] {
        let toml = write(&d, "t.toml", &format!("{head}{key}\n"));
        assert_eq!(
            msg(load_scenario(&toml, &Overrides::default())),
            format!("{}:6: {want}", toml.display()),
            "{key}"
        );
    }
    // ConWeave: the same rows' checks, at the key's line (`from`'s + `below`), in ConWeave's
    // terms.
    let base = runpy_config(&topo.display().to_string(), "flow.txt");
    for (from, to, below, want) in [
        (
            "L2_BACK_TO_ZERO 0",
            "L2_BACK_TO_ZERO 1",
            0,
            "L2_BACK_TO_ZERO: only false (0) is modelled",
        ),
        (
            "RATE_DECREASE_INTERVAL 4",
            "RATE_DECREASE_INTERVAL 0",
            0,
            "RATE_DECREASE_INTERVAL: must be > 0",
        ),
        (
            "PACKET_PAYLOAD_SIZE 1000",
            "PACKET_PAYLOAD_SIZE 9001",
            0,
            "PACKET_PAYLOAD_SIZE: must be in 1..=9000 bytes, got 9001",
        ),
        (
            "RATE_BOUND 1",
            "RATE_BOUND 1\nPAUSE_TIME 0.5",
            1,
            "PAUSE_TIME: must be >= 1us (whole microseconds on the wire), got 500 ns",
        ),
    ] {
        let line = 1
            + below
            + base
                .lines()
                .position(|l| l == from)
                .unwrap_or_else(|| panic!("{from}"));
        let cfg = write(&d, "cw.txt", &base.replace(from, to));
        assert_eq!(
            msg(load_scenario(&cfg, &Overrides::default())),
            format!("{}:{line}: {want}", cfg.display()),
            "{to}"
        );
    }
    // The uet transport is lossy: PFC on through an override is the override's fault.
    let uet = write(&d, "u.toml", &format!("{head}kind = \"uet\"\n"));
    load_scenario(&uet, &Overrides::default()).unwrap();
    assert_eq!(
        msg(load_scenario(&uet, &Overrides::parse("pfc=true").unwrap())),
        "overrides: pfc: the uet transport is lossy (trimming or drops); set it false"
    );
}

/// The third input: the `transport` override sets a table key after parsing; the validation
/// runs the rows' checks on the merged scenario and names the override. A value that reaches
/// the scenario another way (code changing it after parsing) is named in the config's terms.
#[test]
fn the_transport_override_is_checked_on_the_merged_scenario() {
    let d = scratch("merged-ranges");
    let topo = data("conweave/config/leaf_spine_128_100G_OS2.txt");
    write(&d, "flow.txt", "1\n0 17 3 1000 2.0\n");
    let head = format!(
        "[topology]\nconweave_file = \"{}\"\n[workload]\nflow_file = \"flow.txt\"\n",
        topo.display()
    );
    let toml = write(&d, "t.toml", &head);
    let cw = write(
        &d,
        "cw.txt",
        &runpy_config(&topo.display().to_string(), "flow.txt"),
    );
    // Valid values reach the fields, in the TOML units, for either format.
    let o = Overrides::parse("transport=rp_timer = 100us, ewma_gain = 0.5,irn_bdp=2KiB").unwrap();
    for cfg in [&toml, &cw] {
        let t = load_scenario(cfg, &o).unwrap().transport;
        assert_eq!(
            (t.rp_timer_ns, t.ewma_gain, t.irn_bdp_bytes),
            (100_000, 0.5, 2_048)
        );
    }
    // A value out of its row's range: the override's fault, in either format.
    let bad = Overrides::parse("transport=rate_decrease_interval=0us").unwrap();
    for cfg in [&toml, &cw] {
        assert_eq!(
            msg(load_scenario(cfg, &bad)),
            "overrides: transport.rate_decrease_interval: must be > 0"
        );
    }
    assert_eq!(
        msg(load_scenario(
            &toml,
            &Overrides::parse("transport=pause_time=999ns").unwrap()
        )),
        "overrides: transport.pause_time: must be >= 1us (whole microseconds on the wire), got 999 ns"
    );
    // A value that does not read as its unit is refused where it is applied, once.
    for (text, want) in [
        (
            "transport=rp_timer=300",
            "overrides: transport.rp_timer: time `300` has no unit (use ns, us, ms, s)",
        ),
        (
            "transport=ewma_gain=half",
            "overrides: transport.ewma_gain: `half` is not a number",
        ),
    ] {
        let o = Overrides::parse(text).unwrap();
        for cfg in [&toml, &cw] {
            assert_eq!(msg(load_scenario(cfg, &o)), want, "{text}");
        }
    }
    // What the override text itself gets wrong (its keys, its syntax) is refused when it is
    // parsed.
    for (text, want) in [
        (
            "transport=rp_timer=1us, rp_timer=2us",
            "overrides: transport.rp_timer: given twice",
        ),
        (
            "transport=pfc=false",
            "overrides: transport.pfc: use the override pfc",
        ),
        (
            "transport=rp_timer",
            "overrides: transport: `rp_timer`: expected key = value",
        ),
        (
            "transport=rp_timerr=1us",
            "overrides: transport.rp_timerr: not a transport parameter (known: u_target, ",
        ),
    ] {
        let e = msg(Overrides::parse(text));
        assert!(e.starts_with(want), "{text}: {e}");
    }
    // The uet transport's payload is its own.
    let uet = write(
        &d,
        "u.toml",
        &format!("{head}[transport]\nkind = \"uet\"\n"),
    );
    assert_eq!(
        msg(load_scenario(
            &uet,
            &Overrides::parse("transport=payload=2000").unwrap()
        )),
        "overrides: transport.payload: with kind = \"uet\" the payload is transport.uet.payload"
    );
    // Changed after parsing by other code: named in the config's own terms.
    for (cfg, want) in [
        (&toml, "transport.rate_decrease_interval: must be > 0"),
        (&cw, "RATE_DECREASE_INTERVAL: must be > 0"),
    ] {
        let none = Overrides::default();
        let mut s = load_scenario(cfg, &none).unwrap();
        let file = cfg.display().to_string();
        validate(&s, &file, 0, &none).unwrap();
        s.transport.rate_decrease_interval_ns = 0;
        assert_eq!(
            msg(validate(&s, &file, 0, &none)),
            format!("{file}: {want}")
        );
    }
}

#[test]
fn send_dependencies_and_endpoint_switches_are_checked() {
    // A SimAI NVLS flow may wait for its sender's previous flow to be sent, and may start or end
    // at a switch the topology lists as an endpoint; nothing else.
    let d = scratch("after-sent");
    let topo = data("conweave/config/leaf_spine_128_100G_OS2.txt");
    write(
        &d,
        "flow.txt",
        "3\n0 17 3 1000 2.0\n0 18 3 1000 2.0\n1 19 3 1000 2.0\n",
    );
    let toml = write(
        &d,
        "t.toml",
        &format!(
            "[topology]\nconweave_file = \"{}\"\n[workload]\nflow_file = \"flow.txt\"\n",
            topo.display()
        ),
    );
    let none = Overrides::default();
    let s = load_scenario(&toml, &none).unwrap();
    let file = toml.display().to_string();
    let switch = s.topology.switch_ids[0];
    let mut ok = s.clone();
    ok.flows[1].after_sent = vec![0];
    ok.flows[2].dst = switch;
    ok.topology.endpoint_switch_ids = vec![switch];
    validate(&ok, &file, 0, &none).unwrap();
    let mut other = ok.clone();
    other.flows[2].after_sent = vec![0];
    assert!(msg(validate(&other, &file, 0, &none))
        .ends_with("flow 2: waits for flow 0 to be sent, which another host sends"));
    let mut handed = ok.clone();
    handed.flows[2].after_ready = vec![0];
    assert!(msg(validate(&handed, &file, 0, &none))
        .ends_with("flow 2: waits for flow 0 to be handed off, which another host sends"));
    let mut ready = ok.clone();
    ready.flows[1].after_ready = vec![0];
    ready.flows[1].latency_ns = 6_040;
    ready.flows[1].send_latency_ns = 6_000;
    validate(&ready, &file, 0, &none).unwrap();
    ready.flows[1].send_latency_ns = 6_041;
    assert!(msg(validate(&ready, &file, 0, &none))
        .ends_with("flow 1: send latency 6041 ns exceeds its latency 6040 ns"));
    let mut later = ok.clone();
    later.flows[1].after_sent = vec![1];
    assert!(msg(validate(&later, &file, 0, &none))
        .ends_with("flow 1: waits for flow 1, which is not an earlier flow"));
    let mut unlisted = ok.clone();
    unlisted.topology.endpoint_switch_ids.clear();
    assert!(msg(validate(&unlisted, &file, 0, &none))
        .ends_with(&format!("flow 2: endpoint {switch} is not a host")));
    let mut host = ok;
    host.topology.endpoint_switch_ids = vec![0];
    assert!(msg(validate(&host, &file, 0, &none))
        .ends_with("topology: endpoint switch 0 is not a switch"));
}
