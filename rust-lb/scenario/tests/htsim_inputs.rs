//! The UEC htsim's inputs in TOML scenarios (issue 40): `[topology] htsim_topo` and
//! `[workload] htsim_cm` on the files of data/uec-htsim/ unchanged, htsim's uet defaults when
//! `kind = "uet"` (explicit keys win), and the errors of the wiring.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use common::{data, scratch, write};
use rdma_lb_scenario::{
    load_scenario, Overrides, Scenario, SwitchHash, TransportKind, UetCc, UetParams,
};

fn topo(case: &str, file: &str) -> String {
    data(&format!("uec-htsim/{case}/{file}"))
        .display()
        .to_string()
}

fn ft() -> String {
    topo("incast8to1_ft100_nscc", "fat_tree_128_1os.topo")
}

fn incast() -> String {
    topo("incast8to1_ft100_nscc", "incast_128n_8to1_1MB.cm")
}

fn load(name: &str, text: &str) -> Result<Scenario, String> {
    let dir = scratch("htsim");
    load_scenario(&write(&dir, name, text), &Overrides::default()).map_err(|e| e.to_string())
}

fn uet_toml(topo: &str, cm: &str, uet: &str) -> String {
    format!(
        "[topology]\nhtsim_topo = \"{topo}\"\n[workload]\nhtsim_cm = \"{cm}\"\n[transport]\n\
         kind = \"uet\"\n{uet}[lb]\nname = \"reps\"\n[run]\nseed = 13\nstop = \"20ms\"\n"
    )
}

#[test]
fn fat_tree_incast_loads_with_htsim_defaults() {
    let s = load("incast.toml", &uet_toml(&ft(), &incast(), "")).unwrap();
    assert_eq!(s.topology.node_count, 128 + 32 + 32 + 16);
    assert_eq!(s.topology.switch_ids.len(), 80);
    assert_eq!(s.topology.links.len(), 384);
    assert_eq!(s.flows.len(), 8);
    assert!(s
        .flows
        .iter()
        .all(|f| f.dst == 0 && f.size_bytes == 1_000_000 && f.start_ns == 0 && f.pg == 3));
    assert_eq!(s.transport.kind, TransportKind::Uet);
    // htsim's printed values (data/uec-htsim/incast8to1_ft100_nscc/stdout.txt):
    // network_max_unloaded_rtt 14.0227 us, queue 178450 B = 43 packets, ECN 37350 / 145250 B
    // = 9 / 35 packets, min RTO 100.656 us; an ACK per 16 KiB (its -sack_threshold default).
    assert_eq!(
        s.transport.uet,
        UetParams {
            cc: UetCc::Nscc,
            trimming: true,
            payload_bytes: 4086,
            header_bytes: 64,
            queue_packets: 43,
            ecn_kmin_packets: 9,
            ecn_kmax_packets: 35,
            base_rtt_ns: 14_023,
            rto_ns: 100_656,
            switch_hash: SwitchHash::FiveTuple,
            ack_bytes: 16_384,
            ..UetParams::default()
        }
    );
    assert_eq!(s.transport.payload_bytes, 4086);
}

#[test]
fn leaf_spine_permutation_loads() {
    let t = topo("perm128_ls400_nscc", "leaf_spine_128_400g.topo");
    let cm = topo("perm128_ls400_nscc", "perm_128n_128c_2MB.cm");
    let s = load("perm.toml", &uet_toml(&t, &cm, "")).unwrap();
    assert_eq!(s.topology.node_count, 128 + 8 + 16);
    assert_eq!(s.flows.len(), 128);
    assert_eq!((s.flows[0].src, s.flows[0].dst), (103, 32));
    let u = &s.transport.uet;
    // perm128_ls400_nscc/stdout.txt: 8.33712 us, 419150 B (101), 87150 / 336150 B (21 / 81),
    // 65.298 us.
    assert_eq!(
        (
            u.base_rtt_ns,
            u.queue_packets,
            u.ecn_kmin_packets,
            u.ecn_kmax_packets,
            u.rto_ns
        ),
        (8_337, 101, 21, 81, 65_298)
    );
}

#[test]
fn explicit_uet_keys_win_and_feed_the_derived_ones() {
    let s = load(
        "k.toml",
        &uet_toml(
            &ft(),
            &incast(),
            "[transport.uet]\ncc = \"mprdma\"\ntrimming = false\nrto = \"1ms\"\nswitch_hash = \"htsim\"\n",
        ),
    )
    .unwrap();
    let u = &s.transport.uet;
    assert_eq!(
        (u.cc, u.trimming, u.rto_ns),
        (UetCc::Mprdma, false, 1_000_000)
    );
    assert_eq!(u.switch_hash, SwitchHash::Htsim);
    // -disable_trim: 5 x BDP queues; ECN and base RTT unchanged.
    assert_eq!(
        (
            u.queue_packets,
            u.ecn_kmin_packets,
            u.ecn_kmax_packets,
            u.base_rtt_ns
        ),
        (215, 9, 35, 14_023)
    );
    // An explicit queue sets the RTO's queue (htsim -q 100): 15 us + 6 x 415,000 B at 100G.
    let s = load(
        "q.toml",
        &uet_toml(
            &ft(),
            &incast(),
            "[transport.uet]\nqueue_packets = 100\nbase_rtt = \"20us\"\n",
        ),
    )
    .unwrap();
    let u = &s.transport.uet;
    assert_eq!(
        (u.queue_packets, u.rto_ns, u.base_rtt_ns),
        (100, 214_200, 20_000)
    );
    // ECN thresholds must fit the queue, as htsim asserts.
    let e = load(
        "small.toml",
        &uet_toml(&ft(), &incast(), "[transport.uet]\nqueue_packets = 20\n"),
    )
    .unwrap_err();
    assert!(
        e.contains("transport.uet: needs ecn_kmin_packets <= ecn_kmax_packets <= queue_packets, got 9, 35, 20 (the keys left out are htsim's defaults"),
        "{e}"
    );
}

#[test]
fn roce_on_an_htsim_topology_keeps_our_defaults() {
    let text = format!(
        "[topology]\nhtsim_topo = \"{}\"\n[workload]\nhtsim_cm = \"{}\"\n",
        ft(),
        incast()
    );
    let s = load("roce.toml", &text).unwrap();
    assert_eq!(s.transport.kind, TransportKind::Roce);
    assert!(s.transport.uet.is_default());
}

#[test]
fn htsim_cm_on_other_topologies_and_with_other_workloads() {
    // ConWeave's 128-host leaf-spine: hosts 0..128, so host i is node i; the flow file's
    // flows come first.
    let dir = scratch("htsim-mix");
    let flows = write(&dir, "f.txt", "1\n5 6 3 1000 0.000001\n");
    let text = format!(
        "[topology]\nconweave_file = \"{}\"\n[workload]\nflow_file = \"{}\"\nhtsim_cm = \"{}\"\n",
        data("conweave/config/leaf_spine_128_100G_OS2.txt").display(),
        flows.display(),
        incast()
    );
    let s = load_scenario(&write(&dir, "mix.toml", &text), &Overrides::default()).unwrap();
    assert_eq!(s.flows.len(), 9);
    assert_eq!((s.flows[0].src, s.flows[0].id), (5, 0));
    assert_eq!((s.flows[1].src, s.flows[1].dst, s.flows[1].id), (64, 0, 1));
    // A 16-host leaf-spine cannot take a 128-host matrix.
    let e = load(
        "small.toml",
        &format!(
            "[topology]\nleaf_spine = {{ leaves = 2, hosts_per_leaf = 8, spines = 2, \
             host_rate = \"100Gbps\", delay = \"1us\" }}\n[workload]\nhtsim_cm = \"{}\"\n",
            incast()
        ),
    )
    .unwrap_err();
    assert!(
        e.contains(":4: workload.htsim_cm: ")
            && e.contains("is written for Nodes 128 hosts; the topology has 16"),
        "{e}"
    );
}

#[test]
fn wiring_errors_name_the_key() {
    let e = load(
        "two.toml",
        &format!(
            "[topology]\nconweave_file = \"x.txt\"\nhtsim_topo = \"{}\"\n[workload]\nhtsim_cm = \"{}\"\n",
            ft(),
            incast()
        ),
    )
    .unwrap_err();
    assert!(
        e.ends_with(":3: topology.htsim_topo: give one of conweave_file, htsim_topo or leaf_spine, not conweave_file and htsim_topo"),
        "{e}"
    );
    let e = load("missing.toml", &uet_toml("nowhere.topo", &incast(), "")).unwrap_err();
    assert!(
        e.contains(":2: topology.htsim_topo: ") && e.contains("nowhere.topo: cannot read"),
        "{e}"
    );
    // Errors inside the files name the file's line.
    let dir = scratch("htsim-bad");
    let cm = write(
        &dir,
        "bad.cm",
        "Nodes 128\nConnections 1\n0->1 id 1 trigger 2 size 9\n",
    );
    let e = load_scenario(
        &write(
            &dir,
            "bad.toml",
            &uet_toml(&ft(), &cm.display().to_string(), ""),
        ),
        &Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("bad.cm:3: trigger: `trigger`: triggers are not supported yet"),
        "{e}"
    );
    let e = load("none.toml", "[topology]\n[workload]\nhtsim_cm = \"x.cm\"\n").unwrap_err();
    assert!(
        e.ends_with("topology: needs conweave_file, htsim_topo or leaf_spine"),
        "{e}"
    );
}
