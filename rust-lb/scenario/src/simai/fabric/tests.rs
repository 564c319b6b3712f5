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

/// `gen_Topo_Template.py -topo AlibabaHPN --dp -g 64 -asn 16 -psn 16`: 64 GPUs (0..64),
/// NVSwitches 64..72, plane-1 ASWs 72..80, plane-2 ASWs 80..88, plane-1 PSWs 88..96, plane-2
/// PSWs 96..104; GPU `g` of rail `g % 8` has NIC port 0 on ASW `72 + g % 8`, port 1 on
/// ASW `80 + g % 8`.
#[test]
fn dual_plane_gpus_are_hosts_of_two_nic_ports() {
    let t = topo("AlibabaHPN_64g_8gps_DualToR_DualPlane_200Gbps_H100");
    let f = SimAiFabric::build(&t).unwrap();
    assert_eq!((t.node_count, f.gpus), (104, 64));
    assert_eq!(f.topology.node_count, 104 + 64);
    for g in 0..64 {
        assert_eq!(f.nic_ports(g), 2, "GPU {g}");
        let mut tors: Vec<u32> = f
            .topology
            .links
            .iter()
            .filter(|l| l.a == g || l.b == g)
            .map(|l| if l.a == g { l.b } else { l.a })
            .collect();
        tors.sort_unstable();
        assert_eq!(tors, vec![72 + g % 8, 80 + g % 8], "GPU {g}");
    }
    assert_eq!(f.nic_ports(64), 0);
    // The hosts: NIC sides 0..64 (two links each), NVLink sides 104..168.
    assert_eq!(
        f.topology.hosts(),
        (0..64).chain(104..168).collect::<Vec<u32>>()
    );
    assert_eq!(f.endpoints(0, 8), (0, 8));
}

/// A copy of the AlibabaHPN file with one line changed.
fn alibaba_with(line: usize, text: &str) -> Result<SimAiFabric, (usize, String)> {
    let path = format!(
        "{}/../../data/simai/topo/AlibabaHPN_64g_8gps_DualToR_DualPlane_200Gbps_H100",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut lines: Vec<String> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines[line - 1] = text.to_string();
    let dir = std::env::temp_dir().join(format!("simai-fabric-{}-{line}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("topo");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let t = parse_topology_file(&file).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    SimAiFabric::build(&t)
}

#[test]
fn multi_homed_gpus_with_unequal_or_parallel_nic_links_are_refused() {
    // Line 5 is GPU 0's second NIC link, "0 80 200Gbps 0.0005ms 0".
    assert!(alibaba_with(5, "0 80 200Gbps 0.0005ms 0").is_ok());
    let (line, msg) = alibaba_with(5, "0 80 100Gbps 0.0005ms 0").unwrap_err();
    assert_eq!(line, 5);
    assert_eq!(
        msg,
        "GPU 0 has NIC links of different rates (200000000000 and 100000000000 bit/s): the \
         NIC ports of a GPU must have one rate"
    );
    let (line, msg) = alibaba_with(5, "0 72 200Gbps 0.0005ms 0").unwrap_err();
    assert_eq!(
        (line, msg.as_str()),
        (5, "GPU 0 has a second NIC link to switch 72")
    );
}
