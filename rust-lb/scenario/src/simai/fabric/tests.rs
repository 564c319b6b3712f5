//! Fabric tests on the topology files SimAI's generator writes (data/simai/topo/).

use super::*;
use crate::simai::topology::parse_topology_file;

fn topo(name: &str) -> SimAiTopology {
    let path = format!(
        "{}/../../data/simai/topo/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    parse_topology_file(std::path::Path::new(&path)).unwrap()
}

#[test]
fn spectrum_x_one_server_gets_an_nvlink_side_per_gpu() {
    let t = topo("Spectrum-X_8g_8gps_400Gbps_H100");
    let f = SimAiFabric::build(&t).unwrap();
    assert_eq!((t.node_count, f.gpus, f.gpus_per_server), (18, 8, 8));
    assert_eq!(f.topology.node_count, 26);
    assert_eq!(
        f.topology.hosts(),
        (0..8).chain(18..26).collect::<Vec<u32>>()
    );
    assert_eq!(f.topology.links.len(), t.links.len());
    // Every NVLink link now ends at the NVLink side, with its rate and delay.
    let nvlink: Vec<&Link> = f
        .topology
        .links
        .iter()
        .filter(|l| l.a == 8 || l.b == 8)
        .collect();
    assert_eq!(nvlink.len(), 8);
    for l in nvlink {
        let host = if l.a == 8 { l.b } else { l.a };
        assert!((18..26).contains(&host));
        assert_eq!((l.rate_bps, l.delay_ns), (2_880_000_000_000, 25));
    }
    // NIC links keep the GPU ids.
    assert!(f
        .topology
        .links
        .iter()
        .any(|l| (l.a < 8 || l.b < 8) && l.rate_bps == 400_000_000_000));
    // Same server: NVLink sides; the pair's order kept.
    assert_eq!(f.endpoints(0, 1), (18, 19));
    assert_eq!(f.endpoints(7, 2), (25, 20));
}

#[test]
fn rail_optimized_servers_talk_over_their_nics() {
    let t = topo("Rail_Opti_SingleToR_32g_8gps_400Gbps_H100");
    let f = SimAiFabric::build(&t).unwrap();
    assert_eq!(f.topology.node_count, t.node_count + 32);
    assert_eq!(f.endpoints(0, 8), (0, 8), "another server: the NICs");
    assert_eq!(f.endpoints(9, 10), (t.node_count + 9, t.node_count + 10));
    assert_eq!(
        f.topology.switch_ids.len() as u32,
        t.nvswitch_count() + t.switch_count()
    );
}

#[test]
fn dual_tor_gpus_are_refused_at_their_second_nic_link() {
    let t = topo("AlibabaHPN_64g_8gps_DualToR_DualPlane_200Gbps_H100");
    let (line, msg) = SimAiFabric::build(&t).unwrap_err();
    assert!(line > 2, "a link line");
    assert!(msg.contains("second NIC link"), "{msg}");
}
