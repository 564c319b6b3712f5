//! The shipped ConWeave/HPCC data files parse, with their known numbers (node, switch and link
//! counts of the topologies; point counts and means of the CDFs).
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use common::data;
use rdma_lb_scenario::cdf::parse_cdf_file;
use rdma_lb_scenario::topology::{parse_topology_file, LeafSpine};

#[test]
fn leaf_spine_128_matches_the_spec() {
    let t = parse_topology_file(&data("conweave/config/leaf_spine_128_100G_OS2.txt")).unwrap();
    assert_eq!(t.node_count, 144);
    assert_eq!(t.switch_ids, (128..144).collect::<Vec<_>>());
    assert_eq!(t.links.len(), 192);
    assert!(t
        .links
        .iter()
        .all(|l| l.rate_bps == 100_000_000_000 && l.delay_ns == 1000 && l.error_rate == 0.0));
    assert_eq!(t.hosts(), (0..128).collect::<Vec<_>>());
    for h in 0..128 {
        assert_eq!(
            t.tor_of(h),
            Some(128 + h / 16),
            "host {h} → leaf 128 + h/16"
        );
    }
    // Our generator with ConWeave's numbering reproduces the shipped file link for link.
    let g = LeafSpine {
        leaves: 8,
        hosts_per_leaf: 16,
        spines: 8,
        host_rate_bps: 100_000_000_000,
        fabric_rate_bps: 100_000_000_000,
        delay_ns: 1000,
    }
    .build()
    .unwrap();
    assert_eq!(g, t);
}

#[test]
fn fat_trees_and_hpcc_topology() {
    let t = parse_topology_file(&data("conweave/config/fat_k8_100G_OS2.txt")).unwrap();
    assert_eq!(
        (t.node_count, t.switch_ids.len(), t.links.len()),
        (336, 80, 512)
    );
    assert_eq!(t.hosts().len(), 256);
    let t = parse_topology_file(&data("conweave/config/fat_k4_100G_OS2.txt")).unwrap();
    assert_eq!(
        (t.node_count, t.switch_ids.len(), t.links.len()),
        (52, 20, 64)
    );
    // HPCC writes delays as 0.001ms: exactly 1000 ns.
    let t = parse_topology_file(&data("hpcc/simulation/mix/topology.txt")).unwrap();
    assert!(
        t.links.iter().all(|l| l.delay_ns == 1000),
        "{:?}",
        t.links.first()
    );
}

#[test]
fn cdfs_parse_with_the_documented_means() {
    // Means of the CDFs (trapezoid integral of the piecewise-linear CDF, as `traffic_gen.py`).
    for (file, points, mean, tol) in [
        ("conweave/traffic_gen/AliStorage2019.txt", 9, 40_869.8, 0.1),
        ("conweave/traffic_gen/FbHdp2015.txt", 461, 121_849.0, 1.0),
        ("conweave/traffic_gen/GoogleRPC2008.txt", 120, 2_968.0, 1.0),
        ("conweave/traffic_gen/Solar2022.txt", 8, 39_424.0, 1.0),
        (
            "hpcc/traffic_gen/WebSearch_distribution.txt",
            12,
            1_711_250.0,
            0.5,
        ),
        (
            "hpcc/traffic_gen/FbHdp_distribution.txt",
            20,
            120_421.0,
            1.0,
        ),
        ("hpcc/traffic_gen/AliStorage2019.txt", 9, 40_869.8, 0.1),
        ("hpcc/traffic_gen/GoogleRPC2008.txt", 843, f64::NAN, 0.0),
    ] {
        let c = parse_cdf_file(&data(file)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.points().len(), points, "{file}");
        if !mean.is_nan() {
            assert!(
                (c.mean_bytes() - mean).abs() <= tol,
                "{file}: mean {} vs {mean}",
                c.mean_bytes()
            );
        }
    }
}

#[test]
fn legacy_fraction_cdfs_are_rejected_with_a_line() {
    let e = parse_cdf_file(&data("conweave/workloads/DCTCP_CDF.txt")).unwrap_err();
    assert!(
        e.to_string()
            .contains(": percent: the last point must be at 100 percent, got 1"),
        "{e}"
    );
    assert!(e.line.is_some());
}
