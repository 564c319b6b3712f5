//! Topology parser tests: files written by SimAI's generator (data/simai/topo/, see the README
//! there) with numbers derived from the generator's rules, then malformed input.

use super::*;

fn parse_data(rel: &str) -> SimAiTopology {
    let path = format!("{}/../../data/simai/topo/{rel}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    parse_topology_str(&path, &text).unwrap()
}

fn err(text: &str) -> ScenarioError {
    parse_topology_str("t.txt", text).unwrap_err()
}

const G400: u64 = 400_000_000_000;

#[test]
fn simai_spectrum_x_8_gpus() {
    let t = parse_data("Spectrum-X_8g_8gps_400Gbps_H100");
    assert_eq!(
        (t.node_count, t.gpus_per_server, t.gpu_type),
        (18, 8, Some(GpuType::H100))
    );
    assert_eq!((t.gpu_count(), t.server_count()), (8, 1));
    assert_eq!(t.nvswitch_ids, vec![8]);
    assert_eq!(t.switch_ids, (9..18).collect::<Vec<_>>());
    assert_eq!(t.links.len(), 24);
    assert_eq!(
        [
            LinkClass::NvLink,
            LinkClass::Nic,
            LinkClass::Fabric,
            LinkClass::Direct
        ]
        .map(|c| t.link_count(c)),
        [8, 8, 8, 0]
    );
    let nv = &t.links[0];
    assert_eq!((nv.a, nv.b, nv.class), (0, 8, LinkClass::NvLink));
    assert_eq!(
        (nv.rate_bps, nv.delay_ns, nv.error_rate),
        (2_880_000_000_000, 25, 0.0)
    );
    let nic = &t.links[1];
    assert_eq!(
        (nic.a, nic.b, nic.class, nic.line),
        (0, 9, LinkClass::Nic, 4)
    );
    assert_eq!((nic.rate_bps, nic.delay_ns), (G400, 500));
    // Rail-optimised: GPU k on ASW 9 + k, every ASW to the single PSW 17.
    for g in 0..8 {
        assert_eq!(t.neighbours(g, LinkClass::Nic), vec![9 + g]);
        assert_eq!(t.neighbours(g, LinkClass::NvLink), vec![8]);
        assert_eq!(t.node_kind(g), Some(NodeKind::Gpu));
    }
    assert_eq!(
        t.neighbours(17, LinkClass::Fabric),
        (9..17).collect::<Vec<_>>()
    );
    assert_eq!(
        (t.node_kind(8), t.node_kind(17), t.node_kind(18)),
        (Some(NodeKind::NvSwitch), Some(NodeKind::Switch), None)
    );
}

#[test]
fn simai_rail_optimised_32_gpus_nvls_rate() {
    let t = parse_data("Rail_Opti_SingleToR_32g_8gps_400Gbps_H100");
    assert_eq!(
        (
            t.gpu_count(),
            t.server_count(),
            t.nvswitch_count(),
            t.switch_count()
        ),
        (32, 4, 4, 72)
    );
    assert_eq!(t.nvswitch_ids, (32..36).collect::<Vec<_>>());
    assert_eq!(
        [LinkClass::NvLink, LinkClass::Nic, LinkClass::Fabric].map(|c| t.link_count(c)),
        [32, 32, 8 * 64]
    );
    assert!(t
        .links_of(LinkClass::NvLink)
        .all(|l| l.rate_bps == 1_360_000_000_000));
    // GPU i's NVSwitch is 32 + i / 8 (what SimAI's frontend assumes); its rail is i % 8.
    for g in 0..32 {
        assert_eq!(t.neighbours(g, LinkClass::NvLink), vec![32 + g / 8]);
        assert_eq!(t.neighbours(g, LinkClass::Nic), vec![36 + g % 8]);
        assert_eq!(t.server_of(g), Some(g / 8));
    }
    assert_eq!(t.server_of(32), None);
}

#[test]
fn simai_hpn_dual_tor_dual_plane() {
    let t = parse_data("AlibabaHPN_64g_8gps_DualToR_DualPlane_200Gbps_H100");
    assert_eq!(
        (
            t.node_count,
            t.gpu_count(),
            t.nvswitch_count(),
            t.switch_count()
        ),
        (104, 64, 8, 32)
    );
    assert_eq!(
        [LinkClass::NvLink, LinkClass::Nic, LinkClass::Fabric].map(|c| t.link_count(c)),
        [64, 128, 128]
    );
    assert!(t
        .links_of(LinkClass::Nic)
        .all(|l| l.rate_bps == 200_000_000_000));
    // Dual ToR: GPU i has one NIC link into each ToR set (ASWs 72..80 and 80..88), rail i % 8.
    for g in 0..64 {
        assert_eq!(
            t.neighbours(g, LinkClass::Nic),
            vec![72 + g % 8, 80 + g % 8]
        );
    }
    // Dual plane: set-1 ASWs reach only plane-1 PSWs (88..96), set-2 only plane 2 (96..104).
    assert_eq!(
        t.neighbours(72, LinkClass::Fabric),
        (88..96).collect::<Vec<_>>()
    );
    assert_eq!(
        t.neighbours(80, LinkClass::Fabric),
        (96..104).collect::<Vec<_>>()
    );
}

#[test]
fn simai_dcn_single_tor() {
    let t = parse_data("DCN+SingleToR_16g_8gps_400Gbps_H100");
    assert_eq!((t.node_count, t.server_count()), (21, 2));
    assert_eq!(t.nvswitch_ids, vec![16, 17]);
    assert_eq!(t.switch_ids, vec![18, 19, 20]);
    // Not rail-optimised: all 16 GPUs on ASW 18, which connects to both PSWs.
    for g in 0..16 {
        assert_eq!(t.neighbours(g, LinkClass::Nic), vec![18]);
    }
    assert_eq!(t.neighbours(18, LinkClass::Fabric), vec![19, 20]);
}

#[test]
fn simai_unknown_gpu_type_is_kept() {
    let t = parse_topology_str(
        "t",
        "4 2 1 1 3 B200\n2 3\n0 2 1Tbps 25ns 0\n1 2 1Tbps 25ns 0\n2 3 100Gbps 1us 0\n",
    );
    // 2 GPUs + 1 NVSwitch + 1 switch; the NVSwitch-to-switch link counts as NVLink.
    let t = t.unwrap();
    assert_eq!((t.gpu_type, t.gpu_type_text.as_str()), (None, "B200"));
    assert_eq!(t.link_count(LinkClass::NvLink), 3);
}

#[test]
fn simai_bad_topologies_name_line_and_field() {
    let ok_links = "0 2 1Tbps 25ns 0\n1 2 1Tbps 25ns 0\n0 3 100Gbps 1us 0\n";
    let with = |header: &str, ids: &str, links: &str| format!("{header}\n{ids}\n{links}");
    let cases: Vec<(String, usize, &str, ErrorKind)> = vec![
        (String::new(), 1, "header", ErrorKind::Missing),
        // Truncated header (ConWeave's three-field form).
        (
            with("4 2 3", "2 3", ok_links),
            1,
            "switch_count",
            ErrorKind::Missing,
        ),
        (
            with("4 2 1 1 3", "2 3", ok_links),
            1,
            "gpu_type",
            ErrorKind::Missing,
        ),
        (
            with("4 2 1 1 3 H100 x", "2 3", ok_links),
            1,
            "header",
            ErrorKind::Syntax,
        ),
        (
            with("4 two 1 1 3 H100", "2 3", ok_links),
            1,
            "gpus_per_server",
            ErrorKind::Syntax,
        ),
        (
            with("4 0 1 1 3 H100", "2 3", ok_links),
            1,
            "gpus_per_server",
            ErrorKind::Value,
        ),
        (
            with("4 3 1 1 3 H100", "2 3", ok_links),
            1,
            "gpus_per_server",
            ErrorKind::Value,
        ),
        (
            with("4 2 2 2 3 H100", "2 3", ok_links),
            1,
            "switch_count",
            ErrorKind::Count,
        ),
        (
            with("4 2 1 1 3 H100", "3 2", ok_links),
            2,
            "nvswitch id",
            ErrorKind::Node,
        ),
        (
            with("4 2 1 1 3 H100", "2 1", ok_links),
            2,
            "switch id",
            ErrorKind::Node,
        ),
        (
            with("4 2 1 1 3 H100", "2 2", ok_links),
            2,
            "switch id",
            ErrorKind::Duplicate,
        ),
        (
            with("4 2 1 1 3 H100", "2 9", ok_links),
            2,
            "switch id",
            ErrorKind::Node,
        ),
        (
            with("4 2 1 1 3 H100", "2 3 3", ok_links),
            2,
            "switch ids",
            ErrorKind::Count,
        ),
        (
            "4 2 1 1 3 H100\n2\n".to_owned(),
            2,
            "switch ids",
            ErrorKind::Count,
        ),
        (
            with("4 2 1 1 3 H100", "2 3", "0 2 1Tbps 25ns 0\n"),
            3,
            "links",
            ErrorKind::Count,
        ),
        (
            with("4 2 1 1 3 H100", "2 3", "0 2 1Tbps 25ns\n"),
            3,
            "link",
            ErrorKind::Syntax,
        ),
        (
            with("4 2 1 1 3 H100", "2 3", "0 x 1Tbps 25ns 0\n"),
            3,
            "b",
            ErrorKind::Syntax,
        ),
        (
            with("4 2 1 1 3 H100", "2 3", "0 7 1Tbps 25ns 0\n"),
            3,
            "b",
            ErrorKind::Node,
        ),
        (
            with("4 2 1 1 3 H100", "2 3", "2 2 1Tbps 25ns 0\n"),
            3,
            "b",
            ErrorKind::Node,
        ),
        (
            with("4 2 1 1 3 H100", "2 3", "0 2 1000 25ns 0\n"),
            3,
            "rate",
            ErrorKind::Unit,
        ),
        (
            with("4 2 1 1 3 H100", "2 3", "0 2 1Tbps 0.0000001ms 0\n"),
            3,
            "delay",
            ErrorKind::Unit,
        ),
        (
            with("4 2 1 1 3 H100", "2 3", "0 2 1Tbps 25ns 2\n"),
            3,
            "error_rate",
            ErrorKind::Value,
        ),
    ];
    for (text, line, field, kind) in &cases {
        let e = err(text);
        assert_eq!(
            (e.line, e.key.as_str(), e.kind),
            (Some(*line), *field, *kind),
            "input {text:?} gave {e}"
        );
        assert!(
            e.to_string()
                .starts_with(&format!("t.txt:{line}: {field}: ")),
            "{e}"
        );
    }
}
