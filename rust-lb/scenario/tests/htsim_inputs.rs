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
    load_scenario, Overrides, PortRate, Scenario, SwitchHash, TransportKind, UetCc, UetInflight,
    UetNsccFeedback, UetParams, UetQueueRelease, UetTxTime,
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
            switch_hash: SwitchHash::Htsim,
            ack_bytes: 16_384,
            queue_release: UetQueueRelease::End,
            trim_newest_probability: 0.5,
            nscc_feedback: UetNsccFeedback::Htsim,
            inflight: UetInflight::ReceivedBytes,
            tx_time: UetTxTime::Ps,
            control_turns: 10,
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
fn rccc_names_keys_and_attributes() {
    use rdma_lb_scenario::model::UetCc;
    for (name, cc) in [("rccc", UetCc::Rccc), ("nscc+rccc", UetCc::NsccRccc)] {
        let s = load(
            "r.toml",
            &uet_toml(
                &ft(),
                &incast(),
                &format!("[transport.uet]\ncc = \"{name}\"\nrccc_pull_rate = 0.95\n"),
            ),
        )
        .unwrap();
        let u = &s.transport.uet;
        assert_eq!(u.cc, cc);
        assert_eq!(UetCc::from_name(name), Some(cc));
        assert_eq!(
            (u.rccc_pull_rate, u.rccc_credit_per_pull_bytes),
            (0.95, 16384)
        );
        // htsim's derived queue, ECN and RTT do not depend on the CC.
        assert_eq!(
            (u.queue_packets, u.ecn_kmin_packets, u.ecn_kmax_packets),
            (43, 9, 35)
        );
        let names: Vec<&str> = u.ns3_settings().iter().map(|a| a.name).collect();
        for want in ["Cc", "RcccPullRate", "RcccCreditPerPull", "EcnHostPorts"] {
            assert!(names.contains(&want), "{name}: no {want} in {names:?}");
        }
    }
    // htsim switches its receiver OversubscribedCC on for RCCC alone on an oversubscribed
    // topology; it is not modelled: refused (NSCC + RCCC there is htsim's plain RCCC).
    let over = topo("perm1024", "leaf_spine_1024_oversub.topo");
    let cm = topo("perm1024", "perm_1024n_1024c_0u_2000000b.cm");
    let e = load(
        "o.toml",
        &uet_toml(&over, &cm, "[transport.uet]\ncc = \"rccc\"\n"),
    )
    .unwrap_err();
    assert!(
        e.contains("transport.uet.cc") && e.contains("OversubscribedCC"),
        "{e}"
    );
    load(
        "o2.toml",
        &uet_toml(&over, &cm, "[transport.uet]\ncc = \"nscc+rccc\"\n"),
    )
    .unwrap();
    // NSCC alone keeps ECN on the ports to hosts, and RCCC's attributes (which only RCCC
    // reads) at their defaults: its runs stay as they were.
    let s = load("n.toml", &uet_toml(&ft(), &incast(), "")).unwrap();
    let settings = s.transport.uet.ns3_settings();
    assert!(!settings.iter().any(|a| a.name == "EcnHostPorts"));
    let defaults = rdma_lb_scenario::UetParams::default().ns3_attributes();
    for name in ["RcccPullRate", "RcccCreditPerPull"] {
        let value = |list: &[rdma_lb_scenario::transport_params::Ns3Attribute]| {
            list.iter()
                .find(|a| a.name == name)
                .map(|a| a.value.clone())
        };
        assert_eq!(value(&settings), value(&defaults), "{name}");
    }
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
        e.ends_with(":3: topology.htsim_topo: give one of conweave_file, htsim_topo, simai_file or leaf_spine, not conweave_file and htsim_topo"),
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
        e.ends_with("topology: needs conweave_file, htsim_topo, simai_file or leaf_spine"),
        "{e}"
    );
}

fn failed_toml(topo: &str, cm: &str, failed: &str, kind: &str) -> String {
    format!(
        "[topology]\nhtsim_topo = \"{topo}\"\n{failed}[workload]\nhtsim_cm = \"{cm}\"\n\
         [transport]\nkind = \"{kind}\"\n[run]\nseed = 13\nstop = \"20ms\"\n"
    )
}

/// `htsim_failed = 1` on the 400G leaf-spine is htsim_uec's `-failed 1`
/// (data/uec-htsim/perm128_ls400_nscc_failed1/stdout.txt prints "Failure: US0->LS_t(0)" and
/// "LSt->US0(0) linkspeed set to 100" for t = 0..7): the 8 leaf <-> spine 0 links at 100 Gbps
/// both ways, their 16 ports' queues and ECN thresholds x 0.25; the same as writing the
/// `link_rates` entries by hand.
#[test]
fn htsim_failed_leaf_spine_degrades_spine_0() {
    let t = topo("perm128_ls400_nscc", "leaf_spine_128_400g.topo");
    let cm = topo("perm128_ls400_nscc", "perm_128n_128c_2MB.cm");
    let s = load(
        "failed.toml",
        &failed_toml(&t, &cm, "htsim_failed = 1\n", "uet"),
    )
    .unwrap();
    let (g100, g400) = (100_000_000_000u64, 400_000_000_000u64);
    let slow: Vec<(u32, u32)> = s
        .topology
        .links
        .iter()
        .filter(|l| l.rate_bps != g400)
        .map(|l| {
            assert_eq!(l.rate_bps, g100);
            (l.a, l.b)
        })
        .collect();
    assert_eq!(slow, (128..136).map(|leaf| (leaf, 136)).collect::<Vec<_>>());
    let want: Vec<PortRate> = (128..136)
        .flat_map(|leaf| [(leaf, 136), (136, leaf)])
        .map(|(node, peer)| PortRate {
            node,
            peer,
            rate_bps: g100,
            queue_scale: 0.25,
        })
        .collect();
    assert_eq!(s.topology.port_rates, want);
    // The transport is htsim's defaults for the topology, unchanged by the failure (htsim sizes
    // its queues before it degrades some).
    assert_eq!(s.transport.uet.queue_packets, 101);
    let by_hand: String = (128..136)
        .map(|leaf| format!("{{ a = {leaf}, b = 136, rate = \"100Gbps\", scale_queue = true }}, "))
        .collect();
    let h = load(
        "by_hand.toml",
        &failed_toml(&t, &cm, &format!("link_rates = [ {by_hand}]\n"), "uet"),
    )
    .unwrap();
    assert_eq!(h.topology, s.topology);
}

/// `htsim_failed = 1` on fat_tree_128_1os.topo: htsim's 3-tier rule degrades the core ->
/// aggregation direction of (agg, l) when l + agg x 4 (aggregation switches per pod) < 1: agg 0,
/// l 0, i.e. core 0 (node 192) -> aggregation switch 0 (node 160) alone, at 25 Gbps; the link's
/// other direction and every other link stay at 100 Gbps.
#[test]
fn htsim_failed_fat_tree_degrades_one_core_downlink() {
    let t = topo("perm128_ft100_nscc", "fat_tree_128_1os.topo");
    let cm = topo("perm128_ft100_nscc", "perm_128n_128c_2MB.cm");
    let s = load(
        "failed_ft.toml",
        &failed_toml(&t, &cm, "htsim_failed = 1\n", "uet"),
    )
    .unwrap();
    assert!(s
        .topology
        .links
        .iter()
        .all(|l| l.rate_bps == 100_000_000_000));
    assert_eq!(
        s.topology.port_rates,
        vec![PortRate {
            node: 192,
            peer: 160,
            rate_bps: 25_000_000_000,
            queue_scale: 0.25,
        }]
    );
    let none = load(
        "failed0.toml",
        &failed_toml(&t, &cm, "htsim_failed = 0\n", "uet"),
    )
    .unwrap();
    assert!(none.topology.port_rates.is_empty());
}

#[test]
fn htsim_failed_errors_name_the_key() {
    let t = topo("perm128_ls400_nscc", "leaf_spine_128_400g.topo");
    let cm = topo("perm128_ls400_nscc", "perm_128n_128c_2MB.cm");
    let e = load(
        "too_many.toml",
        &failed_toml(&t, &cm, "htsim_failed = 17\n", "uet"),
    )
    .unwrap_err();
    assert!(
        e.ends_with(
            ":3: topology.htsim_failed: 17 failed links is more than the topology's uplinks: \
             a leaf has 16 spine uplinks"
        ),
        "{e}"
    );
    let ft = topo("perm128_ft100_nscc", "fat_tree_128_1os.topo");
    let e = load(
        "too_many_ft.toml",
        &failed_toml(&ft, &cm, "htsim_failed = 129\n", "uet"),
    )
    .unwrap_err();
    assert!(
        e.contains(":3: topology.htsim_failed: 129 failed links is more than"),
        "{e}"
    );
    let e = load(
        "no_topo.toml",
        "[topology]\nleaf_spine = { leaves = 2, hosts_per_leaf = 8, spines = 2, \
         host_rate = \"100Gbps\", delay = \"1us\" }\nhtsim_failed = 1\n[workload]\n\
         htsim_cm = \"x.cm\"\n[transport]\nkind = \"uet\"\n",
    )
    .unwrap_err();
    assert!(
        e.ends_with(
            ":3: topology.htsim_failed: htsim_failed (htsim_uec's -failed) needs htsim_topo"
        ),
        "{e}"
    );
    let e = load(
        "roce.toml",
        &failed_toml(&t, &cm, "htsim_failed = 1\n", "roce"),
    )
    .unwrap_err();
    assert!(
        e.contains(":3: topology.htsim_failed: htsim_failed needs kind = \"uet\""),
        "{e}"
    );
}

#[test]
fn reps_takes_htsims_last_hop_rule_under_htsim_inputs_unless_given() {
    // htsim's REPS hears a last-hop trim as PATH_GOOD / PATH_ECN (uec.cpp processNack): under
    // htsim inputs `reps` defaults to last_hop_trim = "ack"; elsewhere the paper's "nack".
    let params = |uet: &str, lb: &str, over: &str| {
        let text = uet_toml(&ft(), &incast(), uet)
            .replace("name = \"reps\"\n", &format!("name = \"reps\"\n{lb}"));
        let path = write(&scratch("htsim-lasthop"), "lh.toml", &text);
        load_scenario(&path, &Overrides::parse(over).unwrap())
            .unwrap()
            .lb
            .params
    };
    assert_eq!(params("", "", ""), "last_hop_trim = \"ack\"");
    assert_eq!(
        params("", "params = \"num_entropies = 128\"\n", ""),
        "num_entropies = 128, last_hop_trim = \"ack\""
    );
    let given = "params = \"last_hop_trim = \\\"nack\\\"\"\n";
    assert_eq!(params("", given, ""), "last_hop_trim = \"nack\"");
    // Overrides first: their parameters get the default too, unless they name it.
    assert_eq!(
        params("", given, "lb_params=buffer_size = 8"),
        "buffer_size = 8, last_hop_trim = \"ack\""
    );
    // Another algorithm, and RoCE on an htsim topology: nothing added.
    assert_eq!(params("", "", "lb=uec-mixed"), "");
    let roce = uet_toml(&ft(), &incast(), "").replace("kind = \"uet\"", "kind = \"roce\"");
    let s = load("roce.toml", &roce).unwrap();
    assert_eq!(s.lb.params, "");
}
