//! `.topo` parser tests: the files of data/uec-htsim/ (htsim's counts as its runs print them
//! in stdout.txt: "No of pods: 8", "ToR switches per pod: 4", ...), the wiring rules on small
//! inline files (htsim's own topologies/test.topo with Bundle 2, oversubscription, switch
//! latency), htsim's defaults for the uet transport, then malformed input.

use super::*;
use crate::htsim::{uet_defaults, UetDefaults};

fn data(rel: &str) -> HtsimTopo {
    let path = format!("{}/../../data/uec-htsim/{rel}", env!("CARGO_MANIFEST_DIR"));
    parse_topo_file(Path::new(&path)).unwrap()
}

fn err(text: &str) -> String {
    parse_topo_str("t.topo", text).unwrap_err().to_string()
}

fn check_err(text: &str, want: &str) {
    let got = err(text);
    assert!(got.starts_with(want), "want {want}\n got {got}");
}

/// Links of `t` touching `node`, as (peer, rate_bps, delay_ns), in port order.
fn ports(t: &Topology, node: u32) -> Vec<(u32, u64, u64)> {
    t.links
        .iter()
        .filter_map(|l| {
            if l.a == node {
                Some((l.b, l.rate_bps, l.delay_ns))
            } else if l.b == node {
                Some((l.a, l.rate_bps, l.delay_ns))
            } else {
                None
            }
        })
        .collect()
}

const G100: u64 = 100_000_000_000;
const G400: u64 = 400_000_000_000;

#[test]
fn fat_tree_128_1os_counts_and_links() {
    let h = data("perm128_ft100_nscc/fat_tree_128_1os.topo");
    assert_eq!((h.nodes, h.tiers, h.podsize), (128, 3, 16));
    // htsim prints: No of pods 8, ToR switches per pod 4, Agg switches per pod 4, cores 16.
    assert_eq!(
        (h.pods, h.tors_per_pod, h.aggs_per_pod, h.cores),
        (8, 4, 4, 16)
    );
    assert_eq!((h.tors(), h.aggs(), h.switches()), (32, 32, 80));
    let t0 = &h.tier[0];
    assert_eq!(
        (
            t0.downlink_speed_gbps,
            t0.radix_down,
            t0.radix_up,
            t0.downlink_latency_ns,
            t0.switch_latency_ns,
            t0.oversubscribed,
            t0.bundle,
            t0.line
        ),
        (100, 4, 4, 1000, 0, 1, 1, 6)
    );
    assert_eq!((h.tier[2].radix_down, h.tier[2].radix_up), (8, 0));
    let t = h.to_topology();
    assert_eq!(t.node_count, 208);
    assert_eq!(t.switch_ids, (128..208).collect::<Vec<_>>());
    assert_eq!(t.hosts(), (0..128).collect::<Vec<_>>());
    // 128 host links, 32 ToRs x 4 uplinks, 32 aggregation switches x 4 core links.
    assert_eq!(t.links.len(), 128 + 128 + 128);
    assert_eq!(h.link_count(), 384);
    assert!(t
        .links
        .iter()
        .all(|l| l.rate_bps == G100 && l.delay_ns == 1000 && l.error_rate == 0.0));
    for host in 0..128 {
        assert_eq!(t.tor_of(host), Some(128 + host / 4), "host {host}");
    }
    // ToR 5 (pod 1): hosts 20..24, then the aggregation switches of pod 1 (agg 4..8).
    let tor5: Vec<u32> = ports(&t, h.tor_id(5)).iter().map(|p| p.0).collect();
    assert_eq!(tor5, vec![20, 21, 22, 23, 164, 165, 166, 167]);
    // Aggregation switch 6 (pod 1, position 2): ToRs 4..8 of pod 1, then cores 2, 6, 10, 14.
    let agg6: Vec<u32> = ports(&t, h.agg_id(6)).iter().map(|p| p.0).collect();
    assert_eq!(agg6, vec![132, 133, 134, 135, 194, 198, 202, 206]);
    // Core 2: aggregation switch 2 of every pod (position 2), 8 = its Radix_Down.
    let core2: Vec<u32> = ports(&t, h.core_id(2)).iter().map(|p| p.0).collect();
    assert_eq!(core2, (0..8).map(|p| 160 + 4 * p + 2).collect::<Vec<_>>());
    for sw in 128..208 {
        assert_eq!(ports(&t, sw).len(), 8, "switch {sw}: 8 ports");
    }
}

#[test]
fn leaf_spine_128_400g_counts_and_links() {
    let h = data("perm128_ls400_nscc/leaf_spine_128_400g.topo");
    assert_eq!((h.nodes, h.tiers, h.podsize, h.pods), (128, 2, 128, 1));
    assert_eq!((h.tors(), h.aggs(), h.cores), (8, 16, 0));
    assert_eq!(h.host_rate_gbps(), 400);
    let t = h.to_topology();
    assert_eq!(t.node_count, 128 + 8 + 16);
    assert_eq!(t.links.len(), 128 + 8 * 16);
    assert_eq!(h.link_count(), 256);
    assert!(t
        .links
        .iter()
        .all(|l| l.rate_bps == G400 && l.delay_ns == 1000));
    for host in 0..128 {
        assert_eq!(t.tor_of(host), Some(128 + host / 16));
    }
    // Every leaf reaches all 16 spines; every spine has the 8 leaves.
    for leaf in 0..8 {
        let p = ports(&t, h.tor_id(leaf));
        assert_eq!(p.len(), 32);
        assert_eq!(
            p[16..].iter().map(|p| p.0).collect::<Vec<_>>(),
            (136..152).collect::<Vec<_>>()
        );
    }
    for spine in 0..16 {
        assert_eq!(
            ports(&t, h.agg_id(spine))
                .iter()
                .map(|p| p.0)
                .collect::<Vec<_>>(),
            (128..136).collect::<Vec<_>>()
        );
    }
}

/// htsim's topologies/test.topo: 2 pods of 2 ToRs, 200G below the aggregation tier, 100G core
/// links in bundles of 2.
const TEST_TOPO: &str = "Nodes 8\nTiers 3\nPodsize 4\n\nTier 0\nDownlink_speed_Gbps 200\n\
Radix_Down 2\nRadix_Up 2\nDownlink_Latency_ns 1000\n\nTier 1\nDownlink_speed_Gbps 200\n\
Radix_Down 2\nRadix_Up 4\nDownlink_Latency_ns 1000\nBundle 1\n\nTier 2\n\
Downlink_speed_Gbps 100\nRadix_Down 4\nDownlink_Latency_ns 1000\nBundle 2\n";

#[test]
fn bundles_are_parallel_links() {
    let h = parse_topo_str("test.topo", TEST_TOPO).unwrap();
    // ToR uplinks 8 x 200 / 200 = 8, 2 aggregation switches per pod; aggregation uplinks
    // 8 x 200 / 100 = 16, 4 cores; each aggregation switch: 4 / 2 = 2 cores x 2 links.
    assert_eq!(
        (h.pods, h.tors_per_pod, h.aggs_per_pod, h.cores),
        (2, 2, 2, 4)
    );
    let t = h.to_topology();
    assert_eq!(t.node_count, 8 + 4 + 4 + 4);
    assert_eq!(t.links.len(), 8 + 4 * 2 + 4 * 4);
    assert_eq!(h.link_count(), 32);
    // Aggregation switch 1 (node 13, position 1): ToRs 8, 9, then cores 1 and 3, twice each.
    let agg1 = ports(&t, h.agg_id(1));
    assert_eq!(
        agg1.iter().map(|p| p.0).collect::<Vec<_>>(),
        vec![8, 9, 17, 17, 19, 19]
    );
    assert_eq!(
        agg1.iter().map(|p| p.1).collect::<Vec<_>>(),
        vec![200_000_000_000, 200_000_000_000, G100, G100, G100, G100]
    );
    // Core 3: position-1 switches of both pods (13 and 15), 2 links each = Radix_Down 4.
    let core3: Vec<u32> = ports(&t, h.core_id(3)).iter().map(|p| p.0).collect();
    assert_eq!(core3, vec![13, 13, 15, 15]);
}

/// htsim's `-failed N` on the 400G leaf-spine (its failed1 run prints the 16 lines
/// "Failure: US0->LS_t(0) linkspeed set to 100" / "Failure: LSt->US0(0) ...", t = 0..7):
/// every leaf's link to spine 0, both ways, at 100 Gbps.
#[test]
fn failed_links_leaf_spine() {
    let h = data("perm128_ls400_nscc/leaf_spine_128_400g.topo");
    assert_eq!(h.max_failed(), 16);
    assert_eq!(h.failed_links(0).unwrap(), vec![]);
    let one = h.failed_links(1).unwrap();
    let want: Vec<FailedLink> = (0..8)
        .map(|t| FailedLink {
            a: 128 + t,
            b: 136,
            one_way: false,
            rate_bps: G100,
        })
        .collect();
    assert_eq!(one, want);
    // N = 3: spines 0, 1, 2 of every leaf, by leaf (htsim's loop order).
    let three = h.failed_links(3).unwrap();
    assert_eq!(three.len(), 24);
    assert_eq!(
        three[..4].iter().map(|f| (f.a, f.b)).collect::<Vec<_>>(),
        vec![(128, 136), (128, 137), (128, 138), (129, 136)]
    );
    assert_eq!(h.failed_links(16).unwrap().len(), 128);
    let e = h.failed_links(17).unwrap_err();
    assert_eq!(
        e,
        "17 failed links is more than the topology's uplinks: a leaf has 16 spine uplinks"
    );
}

/// htsim's 3-tier rule on fat_tree_128_1os.topo: 32 aggregation switches (4 per pod), each
/// with l = 0..3 uplinks to cores `agg mod 4 + 4 l`; the core -> aggregation direction of
/// (agg, l) fails when l + 4 agg < N. N = 1: agg 0, l 0 = core 0 (node 192) -> agg 0 (node
/// 160) only. N = 6: agg 0's l 0..3 (cores 0, 4, 8, 12), agg 1's l 0, 1 (l + 4 < 6: cores 1,
/// 5). The aggregation -> core directions keep their 100 Gbps.
#[test]
fn failed_links_fat_tree() {
    let h = data("perm128_ft100_nscc/fat_tree_128_1os.topo");
    assert_eq!((h.aggs(), h.aggs_per_pod, h.cores), (32, 4, 16));
    let fl = |core: u32, agg: u32| FailedLink {
        a: 192 + core,
        b: 160 + agg,
        one_way: true,
        rate_bps: 25_000_000_000,
    };
    assert_eq!(h.failed_links(1).unwrap(), vec![fl(0, 0)]);
    assert_eq!(
        h.failed_links(6).unwrap(),
        vec![fl(0, 0), fl(4, 0), fl(8, 0), fl(12, 0), fl(1, 1), fl(5, 1)]
    );
    // The largest l + 4 agg is 3 + 4 x 31 = 127: N = 128 takes all 128 aggregation uplinks.
    assert_eq!(h.max_failed(), 128);
    assert_eq!(h.failed_links(128).unwrap().len(), 128);
    let e = h.failed_links(129).unwrap_err();
    assert!(
        e.starts_with("129 failed links is more than the topology's uplinks"),
        "{e}"
    );
    // Parallel links (Bundle 2 on the core tier) cannot be named one by one.
    let b = parse_topo_str("test.topo", TEST_TOPO).unwrap();
    let e = b.failed_links(1).unwrap_err();
    assert!(e.starts_with("tier 2 has Bundle 2"), "{e}");
}

#[test]
fn oversubscribed_leaf_spine_and_fat_tree() {
    // htsim's topologies/leaf_spine_tiny.topo: 4:1 at the leaves.
    let tiny = "Nodes 32\nTiers 2\nPodsize 32\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 8\n\
Radix_Up 2\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\nOversubscribed 4\nTier 1\n\
Downlink_speed_Gbps 100\nRadix_Down 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n";
    let h = parse_topo_str("tiny.topo", tiny).unwrap();
    assert_eq!((h.tors(), h.aggs()), (4, 2));
    let t = h.to_topology();
    assert_eq!(t.links.len(), 32 + 4 * 2);
    assert_eq!(ports(&t, h.tor_id(3)).len(), 8 + 2);
    // htsim's topologies/fat_tree_128_4os.topo: 4:1 at the aggregation tier (Radix_Up 1).
    let os4 = "Nodes 128\nTiers 3\nPodsize 16\nTier 0\nOversubscribed 1\nDownlink_speed_Gbps 100\n\
Radix_Down 4\nRadix_Up 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\nTier 1\nOversubscribed 4\n\
Downlink_speed_Gbps 100\nRadix_Down 4\nRadix_Up 1\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n\
Bundle 1\nTier 2\nDownlink_speed_Gbps 100\nRadix_Down 8\nDownlink_Latency_ns 1000\n\
Switch_Latency_ns 0\nBundle 1";
    let h = parse_topo_str("os4.topo", os4).unwrap();
    assert_eq!((h.tier[0].radix_up, h.tier[1].radix_up), (4, 1));
    assert_eq!((h.aggs(), h.cores), (32, 4));
    let t = h.to_topology();
    assert_eq!(t.links.len(), 128 + 128 + 32);
    // Each core has one aggregation switch per pod: position c.
    let core1: Vec<u32> = ports(&t, h.core_id(1)).iter().map(|p| p.0).collect();
    assert_eq!(core1, (0..8).map(|p| 160 + 4 * p + 1).collect::<Vec<_>>());
}

#[test]
fn switch_latency_is_split_over_the_links() {
    let text = TEST_TOPO
        .replace(
            "Radix_Up 2\nDownlink_Latency_ns 1000\n",
            "Radix_Up 2\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 200\n",
        )
        .replace("Bundle 1\n", "Bundle 1\nSwitch_Latency_ns 400\n")
        .replace("Bundle 2\n", "Bundle 2\nSwitch_Latency_ns 600\n");
    let h = parse_topo_str("lat.topo", &text).unwrap();
    let t = h.to_topology();
    let delay = |a: u32, b: u32| {
        t.links
            .iter()
            .find(|l| (l.a, l.b) == (a, b))
            .map(|l| l.delay_ns)
    };
    assert_eq!(delay(0, h.tor_id(0)), Some(1100));
    assert_eq!(delay(h.tor_id(0), h.agg_id(0)), Some(1300));
    assert_eq!(delay(h.agg_id(0), h.core_id(0)), Some(1500));
    // One way across the diameter, as htsim's diameter latency: 2 x (1000 + 1000) + 2 x 200
    // + 400, + 2 x 1000 + 400 + 600.
    assert_eq!(h.diameter_latency_ns(), 7800);
    assert_eq!(2 * (1100 + 1300 + 1500), 7800);
    check_err(
        &TEST_TOPO.replace("Bundle 1\n", "Bundle 1\nSwitch_Latency_ns 3\n"),
        "t.topo:17: Switch_Latency_ns: 3 ns is odd",
    );
}

#[test]
fn keys_any_case_comments_and_queue_sizes() {
    let text =
        "# a comment\nNODES 8 # hosts\ntiers 3\nPODSIZE 4\ntier 0\nDOWNLINK_SPEED_GBPS 200\n\
radix_down 2\nRADIX_UP 2\ndownlink_latency_ns 1000\nQueue_Up 1000\nqueue_down 2000\nTier 1\n\
Downlink_speed_Gbps 200\nRadix_Down 2\nRadix_Up 4\nDownlink_Latency_ns 1000\nTier 2\n\
Downlink_speed_Gbps 100\nRadix_Down 4\nDownlink_Latency_ns 1000\nBundle 2\nQueue_Down 5\n";
    let h = parse_topo_str("c.topo", text).unwrap();
    assert_eq!(h.nodes, 8);
    assert_eq!(
        (h.tier[0].queue_up_bytes, h.tier[0].queue_down_bytes),
        (Some(1000), Some(2000))
    );
    assert_eq!(h.tier[2].queue_down_bytes, Some(5));
    assert_eq!(
        h.to_topology(),
        parse_topo_str("t", TEST_TOPO).unwrap().to_topology()
    );
}

#[test]
fn htsim_uet_defaults_fat_tree() {
    // data/uec-htsim/perm128_ft100_nscc/stdout.txt: network_max_unloaded_rtt 14.0227 (us;
    // _network_rtt=14022720 ps), queue 178450 B = 43 x 4150, ECN low 37350 (9 pkts) high
    // 145250 (35 pkts), min RTO 100.656 us.
    let h = data("perm128_ft100_nscc/fat_tree_128_1os.topo");
    assert_eq!(h.diameter_latency_ns(), 6000);
    assert_eq!(h.network_rtt_ps(4150, 64), 14_022_720);
    let d = uet_defaults(&h, 4150, true, None);
    assert_eq!(
        d,
        UetDefaults {
            network_rtt_ps: 14_022_720,
            base_rtt_ns: 14_023,
            bdp_packets: 43,
            queue_packets: 43,
            ecn_kmin_packets: 9,
            ecn_kmax_packets: 35,
            rto_ns: 100_656,
        }
    );
    // -disable_trim: 5 x BDP queues (and the RTO follows the queue); -q 100: the RTO's queue.
    let d = uet_defaults(&h, 4150, false, None);
    assert_eq!((d.queue_packets, d.ecn_kmax_packets), (215, 35));
    assert_eq!(d.rto_ns, 15_000 + 6 * 215 * 4150 * 8 / 100);
    assert_eq!(
        uet_defaults(&h, 4150, true, Some(100)).rto_ns,
        15_000 + 199_200
    );
}

#[test]
fn htsim_uet_defaults_leaf_spine_400g() {
    // perm128_ls400_nscc/stdout.txt: network_max_unloaded_rtt 8.33712, queue 419150 B (101
    // packets), ECN 87150 / 336150 B (21 / 81 packets), min RTO 65.298 us.
    let h = data("perm128_ls400_nscc/leaf_spine_128_400g.topo");
    let d = uet_defaults(&h, 4150, true, None);
    assert_eq!(
        (d.network_rtt_ps, d.base_rtt_ns, d.queue_packets),
        (8_337_120, 8_337, 101)
    );
    assert_eq!((d.ecn_kmin_packets, d.ecn_kmax_packets), (21, 81));
    assert_eq!(d.rto_ns, 65_298);
}

#[test]
fn malformed_files_name_line_and_field() {
    let ft = std::fs::read_to_string(format!(
        "{}/../../data/uec-htsim/perm128_ft100_nscc/fat_tree_128_1os.topo",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let cases: Vec<(String, &str)> = vec![
        (
            ft.replace("Bundle 1\n\nTier 2", "Bundle 1\nBandwidth 4\n\nTier 2"),
            "t.topo:22: Bandwidth: unknown key (known, any case: Nodes, Tiers, Podsize, Tier,",
        ),
        (
            ft.replace("Nodes 128\n", ""),
            "t.topo:5: Nodes: the header (before the first `Tier`) has no `Nodes` line",
        ),
        (
            ft.replace("Tiers 3\n", ""),
            "t.topo:5: Tiers: the header must give `Tiers 2|3` before the first `Tier` line",
        ),
        (
            ft.replace("Tiers 3", "Tiers 4"),
            "t.topo:3: Tiers: must be 2 (leaf-spine) or 3 (fat tree), got 4",
        ),
        (
            ft.replace("Tier 0\nOversubscribed 1", "Tier 0\nOversubscribed 2"),
            "t.topo:7: Oversubscribed: tier 0: Oversubscribed 2 must be Radix_Down / Radix_Up = 4 / 4",
        ),
        (
            ft.replace(
                "Tier 1\nOversubscribed 1\nDownlink_speed_Gbps 100\nRadix_Down 4",
                "Tier 1\nOversubscribed 1\nDownlink_speed_Gbps 100\nRadix_Down 8",
            ),
            "t.topo:10: Radix_Up: tier 0 Radix_Up 4 must be 2 tier-1 switches per pod x tier 1 Bundle 1",
        ),
        (
            ft.replace("Radix_Down 8", "Radix_Down 6"),
            "t.topo:25: Radix_Down: 128 aggregation uplinks are not a multiple of Radix_Down 6",
        ),
        (
            ft.replace("Podsize 16", "Podsize 24"),
            "t.topo:4: Podsize: Nodes 128 is not a multiple of Podsize 24",
        ),
        (
            ft.replacen("Switch_Latency_ns 0\n", "Switch_Latency_ns 0\nSwitch_latency_ns 2\n", 1),
            "t.topo:13: Switch_Latency_ns: given twice in this section (first at line 12)",
        ),
        (
            format!("Radix_Down 4\n{ft}"),
            "t.topo:1: Radix_Down: a tier key must follow a `Tier` line",
        ),
        (
            ft.replace("Tier 1\n", "Tier 1\nNodes 12\n"),
            "t.topo:15: Nodes: a header key must come before the first `Tier` line",
        ),
        (
            ft.replace("Tier 2\n", "Tier 0\n"),
            "t.topo:23: Tier: tier 0 has a section already (line 6)",
        ),
        (
            ft.replace("Tier 2", "Tier 3"),
            "t.topo:23: Tier: tier 3 in a 3-tier topology (tiers 0 to 2)",
        ),
        (
            format!("{ft}\nRadix_Up 2\n"),
            "t.topo:29: Radix_Up: the top tier (2) has no uplinks",
        ),
        (
            ft.replacen("Downlink_Latency_ns 1000\n", "", 1),
            "t.topo:6: Downlink_Latency_ns: tier 0 has no `Downlink_Latency_ns`",
        ),
        (
            ft.replacen("Radix_Down 4\n", "Radix_Down 4 4\n", 1),
            "t.topo:9: Radix_Down: expected `key value`, found 3 fields",
        ),
        (
            ft.replacen("Radix_Down 4\n", "Radix_Down four\n", 1),
            "t.topo:9: Radix_Down: `four` is not a non-negative integer",
        ),
        (
            ft.replacen("Tier 0\n", "Tier 0\nBundle 2\n", 1),
            "t.topo:7: Bundle: tier 0 (host links) must have Bundle 1, got 2",
        ),
        (
            ft.replace("Tier 2\n", "Tier 2 \n").replacen("Downlink_speed_Gbps 100", "Downlink_speed_Gbps 0", 1),
            "t.topo:8: Downlink_speed_Gbps: must be in 1..=1000000, got 0",
        ),
        (
            ft.split("\nTier 2").next().unwrap().to_owned(),
            "t.topo:21: Tier: no `Tier 2` section (Tiers 3 needs tiers 0 to 2)",
        ),
    ];
    for (text, want) in cases {
        check_err(&text, want);
    }
    // 2 tiers: one pod, no tier 2.
    let ls = std::fs::read_to_string(format!(
        "{}/../../data/uec-htsim/perm128_ls400_nscc/leaf_spine_128_400g.topo",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    check_err(
        &ls.replace("Podsize 128", "Podsize 64"),
        "t.topo:5: Podsize: a 2-tier topology is one pod: Podsize must be Nodes (128), got 64",
    );
    check_err(
        &format!("{ls}\nTier 2\n"),
        "t.topo:21: Tier: tier 2 in a 2-tier topology (tiers 0 to 1)",
    );
    check_err(
        "",
        "t.topo:1: Nodes: the header (before the first `Tier`) has no",
    );
    // Size guard: a million hosts under one-port ToRs is too many links and nodes.
    assert!(err(
        "Nodes 1048576\nTiers 2\nPodsize 1048576\nTier 0\nDownlink_speed_Gbps 1\nRadix_Down 1\n\
         Radix_Up 1\nDownlink_Latency_ns 1\nTier 1\nDownlink_speed_Gbps 1\nRadix_Down 1048576\n\
         Downlink_Latency_ns 1\n"
    )
    .contains("at most 1048576 nodes"));
}
