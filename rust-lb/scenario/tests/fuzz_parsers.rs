//! Stable fuzzing: random and mutated inputs to every text parser. Each must return (never
//! panic), and every error must be one line naming the input and a line number.
//! (The `fuzz/` directory holds the same targets for cargo-fuzz/libFuzzer on nightly.)
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use proptest::prelude::*;
use rdma_lb_scenario::cdf::parse_cdf_str;
use rdma_lb_scenario::conweave::parse_conweave_config_str;
use rdma_lb_scenario::flows::parse_flow_str;
use rdma_lb_scenario::htsim::{parse_cm_str, parse_topo_str as parse_htsim_topo_str};
use rdma_lb_scenario::toml_config::parse_toml_str;
use rdma_lb_scenario::topology::{parse_topology_str, LeafSpine};
use rdma_lb_scenario::{ScenarioError, Topology};

fn topo() -> Topology {
    LeafSpine {
        leaves: 2,
        hosts_per_leaf: 4,
        spines: 2,
        host_rate_bps: 100_000_000_000,
        fabric_rate_bps: 100_000_000_000,
        delay_ns: 1000,
    }
    .build()
    .unwrap()
}

const CONFIG: &str = "TOPOLOGY_FILE t.txt\nFLOW_FILE f.txt\nBUFFER_SIZE 9\nCC_MODE 1\nLB_MODE 0\n\
ENABLE_PFC 1\nRATE_AI 40.0Mb/s\nLINK_DOWN 0 0 0\nKMAX_MAP 2 100000000000 400 400000000000 1600\n\
KMIN_MAP 2 100000000000 100 400000000000 400\nPMAX_MAP 2 100000000000 0.2 400000000000 0.2\n\
FLOWGEN_START_TIME 2.0\nFLOWGEN_STOP_TIME 2.1\nEWMA_GAIN 0.00390625\nQLEN_MON_START 2.0\n";
const TOPOLOGY: &str = "12 4 4\n8 9 10 11\n0 8 100Gbps 1000ns 0\n1 8 100Gbps 1us 0\n\
8 10 400Gbps 0.001ms 0\n9 11 25Gbps 2us 0.01\ntrailing text\n";
const FLOWS: &str = "3\n0 5 3 1000 2.000000001\n1 7 3 0 2.5\n4 2 3 2000000 2.000013125\n";
const CDF: &str = "0 0\n4000 22.93\n8000 69.21\n16000 80.61\n2000000 100\n";
const TOML: &str = "[topology]\nleaf_spine = { leaves = 2, hosts_per_leaf = 4, spines = 2, \
host_rate = \"100Gbps\", delay = \"1us\" }\nlink_rates = [ { a = 0, b = 8, rate = \"40Gbps\" } ]\n\
[workload]\npoisson = { cdf = \"c.txt\", load = 0.3, duration = \"1ms\" }\n\
[[workload.collective]]\nkind = \"incast\"\nranks = 4\nsize = \"64KiB\"\n[transport]\n\
recovery = \"irn\"\nbuffer = \"9MiB\"\n[lb]\nname = \"reps\"\nparams = { num_entropies = 64 }\n\
[run]\nseed = 3\nstop = \"10ms\"\n";
const HTSIM_TOPO: &str = "# htsim's test.topo\nNodes 8\nTiers 3\nPodsize 4\nTier 0\n\
Downlink_speed_Gbps 200\nRadix_Down 2\nRadix_Up 2\nDownlink_Latency_ns 1000\nTier 1\n\
Downlink_speed_Gbps 200\nRadix_Down 2\nRadix_Up 4\nDownlink_Latency_ns 1000\nBundle 1\nTier 2\n\
Downlink_speed_Gbps 100\nRadix_Down 4\nDownlink_Latency_ns 1000\nBundle 2\nSwitch_Latency_ns 2\n";
const HTSIM_CM: &str = "Nodes 8\nConnections 3\n7->0 id 1 start 0 size 2000000\n\
1->2 start 9.5 size 4086\n2->1 size 1 start 40 id 3\n";

fn check_err(name: &str, r: Result<(), ScenarioError>) {
    if let Err(e) = r {
        let s = e.to_string();
        assert!(s.starts_with(&format!("{name}:")), "{s}");
        assert!(!s.contains('\n'), "multi-line error: {s:?}");
        let line = e.line.unwrap_or_else(|| panic!("no line number: {s}"));
        assert!(line >= 1, "{s}");
        assert!(s.starts_with(&format!("{name}:{line}: ")), "{s}");
    }
}

fn run_all(text: &str) {
    let t = topo();
    check_err("c", parse_conweave_config_str("c", text).map(|_| ()));
    check_err("t", parse_topology_str("t", text).map(|_| ()));
    check_err("f", parse_flow_str("f", text, &t).map(|_| ()));
    check_err("d", parse_cdf_str("d", text).map(|_| ()));
    check_err("m", parse_toml_str("m", text));
    check_err(
        "h",
        parse_htsim_topo_str("h", text).map(|t| {
            if t.link_count() <= 1 << 16 {
                let _ = t.to_topology();
            }
        }),
    );
    check_err("x", parse_cm_str("x", text).map(|_| ()));
}

/// Characters the formats are made of, so random text gets past the first checks often.
fn alphabet() -> impl Strategy<Value = String> {
    proptest::string::string_regex(
        "([0-9]{1,6}|[ \\t\\n]|\\.|-|#|=|\"|\\[|\\]|\\{|\\}|,|Gbps|ns|us|ms|MiB|[A-Z_]{2,12}|[a-z_]{1,10}|\u{b5}|\u{0}){0,80}",
    )
    .unwrap()
}

#[derive(Debug, Clone)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, String),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0usize..12).prop_map(|(a, n)| Edit::Delete(a, n)),
        (any::<usize>(), alphabet())
            .prop_map(|(a, s)| Edit::Insert(a, s.chars().take(12).collect())),
        any::<usize>().prop_map(Edit::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut s: Vec<char> = text.chars().collect();
    for e in edits {
        match e {
            Edit::Delete(a, n) if !s.is_empty() => {
                let a = a % s.len();
                let b = (a + n).min(s.len());
                s.drain(a..b);
            }
            Edit::Insert(a, ins) => {
                let a = a % (s.len() + 1);
                for (i, c) in ins.chars().enumerate() {
                    s.insert(a + i, c);
                }
            }
            Edit::DuplicateLine(i) | Edit::SwapLines(i, _) | Edit::Truncate(i) => {
                let text: String = s.iter().collect();
                let mut lines: Vec<&str> = text.split('\n').collect();
                let n = lines.len();
                match e {
                    Edit::DuplicateLine(_) => lines.insert(i % n, lines[i % n]),
                    Edit::SwapLines(_, j) => lines.swap(i % n, j % n),
                    _ => lines.truncate(i % n + 1),
                }
                s = lines.join("\n").chars().collect();
            }
            Edit::Delete(..) => {}
        }
    }
    s.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Writing flows in ConWeave format and reading them back gives the same flows
    /// (start times exact to the ns, sizes ≥ 1, hosts of the topology).
    #[test]
    fn flow_file_round_trip(
        recs in proptest::collection::vec((0u32..8, 1u32..8, 1u32..8, 1u64..10_000_000_000, 0u64..20_000_000_000), 0..40)
    ) {
        let flows: Vec<rdma_lb_scenario::Flow> = recs
            .iter()
            .enumerate()
            .map(|(i, &(src, off, pg, size_bytes, start_ns))| rdma_lb_scenario::Flow {
                id: i as u32,
                src,
                dst: (src + off) % 8,
                pg,
                size_bytes,
                start_ns,
                after: Vec::new(),
                compute_after: Vec::new(),
                compute_ns: 0,
                latency_ns: 0,
                after_completion: false,
                after_sent: Vec::new(),
                after_ready: Vec::new(),
                send_latency_ns: 0,
            })
            .collect();
        let text = rdma_lb_scenario::flows::format_flow_file(&flows);
        let back = parse_flow_str("f", &text, &topo()).unwrap();
        prop_assert_eq!(back, flows);
    }

    #[test]
    fn random_text_never_panics(text in alphabet()) {
        run_all(&text);
    }

    #[test]
    fn mutated_valid_inputs_never_panic(
        which in 0usize..7,
        edits in proptest::collection::vec(edit(), 1..6),
    ) {
        let base = [CONFIG, TOPOLOGY, FLOWS, CDF, TOML, HTSIM_TOPO, HTSIM_CM][which];
        run_all(&apply(base, &edits));
    }
}

#[test]
fn the_seeds_are_valid() {
    // The mutation bases parse, so mutations explore near-valid inputs.
    parse_conweave_config_str("c", CONFIG).unwrap();
    parse_topology_str("t", TOPOLOGY).unwrap();
    parse_flow_str("f", FLOWS, &topo()).unwrap();
    parse_cdf_str("d", CDF).unwrap();
    parse_toml_str("m", TOML).unwrap();
    parse_htsim_topo_str("h", HTSIM_TOPO).unwrap();
    parse_cm_str("x", HTSIM_CM).unwrap();
    // Found by cargo-fuzz: a huge ECN-map count overflowed `2 * n`.
    let e = parse_conweave_config_str("c", "KMAX_MAP 18446744073709551615 1 2\n").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("c:1: KMAX_MAP: count 18446744073709551615 needs"),
        "{e}"
    );
    // Resource guards: absurd counts are errors, not allocations.
    let e = parse_topology_str("t", "4000000000 1 1\n0\n").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("t:1: total_nodes: must be in 1..=1048576"),
        "{e}"
    );
}
