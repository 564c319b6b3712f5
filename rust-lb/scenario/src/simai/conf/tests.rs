//! `SimAI.conf` parser tests: SimAI's own example (data/simai/config/SimAI.conf) with the
//! numbers it sets, then absent keys, link-down and malformed, unknown and refused keys.

use super::*;
use crate::error::ScenarioError;
use crate::model::{Cc, EcnEntry, Recovery};

fn parse_data() -> (String, SimAiConf) {
    let path = format!(
        "{}/../../data/simai/config/SimAI.conf",
        env!("CARGO_MANIFEST_DIR")
    );
    let c = parse_conf_file(Path::new(&path)).unwrap();
    (path, c)
}

fn err(text: &str) -> ScenarioError {
    parse_conf_str("t.conf", text).unwrap_err()
}

#[test]
fn simai_example_conf_transport() {
    let (_, c) = parse_data();
    let t = &c.transport;
    assert_eq!(t.cc, Cc::Dcqcn); // CC_MODE 1
    assert_eq!(t.recovery, Recovery::Gbn);
    assert!(t.ecn_enabled); // ENABLE_QCN 1
    assert_eq!(t.payload_bytes, 9000);
    assert_eq!(t.buffer_bytes, 32 * 1024 * 1024);
    // DCQCN: ALPHA_RESUME_INTERVAL 1, RATE_DECREASE_INTERVAL 4, RP_TIMER 900 (µs).
    assert_eq!(t.alpha_resume_interval_ns, 1_000);
    assert_eq!(t.rate_decrease_interval_ns, 4_000);
    assert_eq!(t.rp_timer_ns, 900_000);
    assert!(!t.clamp_target_rate);
    assert!((t.ewma_gain - 0.003_906_25).abs() < 1e-15);
    assert_eq!(t.fast_recovery_times, 1);
    assert_eq!(
        (t.rate_ai_bps, t.rate_hai_bps, t.min_rate_bps),
        (50_000_000, 100_000_000, 100_000_000)
    );
    assert_eq!(t.dctcp_rate_ai_bps, 1_000_000_000);
    assert_eq!((t.l2_chunk_bytes, t.ack_interval_packets), (4000, 1));
    assert!(!t.l2_back_to_zero);
    // HAS_WIN 1, VAR_WIN 1, FAST_REACT 1, U_TARGET 0.95, MI_THRESH 0, INT_MULTI 1,
    // MULTI_RATE 0, SAMPLE_FEEDBACK 0, RATE_BOUND 1.
    assert!(t.has_win && t.var_win && t.fast_react && t.rate_bound);
    assert!((t.u_target - 0.95).abs() < 1e-12);
    assert_eq!((t.mi_thresh, t.int_multi), (0, 1));
    assert!(!t.multi_rate && !t.sample_feedback);
}

#[test]
fn simai_example_conf_ecn_maps() {
    let (_, c) = parse_data();
    let e = |rate_bps: u64, kmin_kb: u64, kmax_kb: u64, pmax: f64| EcnEntry {
        rate_bps,
        kmin_bytes: kmin_kb * 1000,
        kmax_bytes: kmax_kb * 1000,
        pmax,
    };
    let g = 1_000_000_000;
    assert_eq!(
        c.transport.ecn,
        vec![
            e(25 * g, 100, 400, 0.2),
            e(50 * g, 200, 800, 0.2),
            e(100 * g, 400, 1600, 0.2),
            e(200 * g, 300, 1200, 0.8),
            e(400 * g, 800, 3200, 0.2),
            e(1600 * g, 600, 2400, 0.2),
        ]
    );
}

#[test]
fn simai_example_conf_run_settings_and_notes() {
    let (path, c) = parse_data();
    assert!(c.link_events.is_empty()); // LINK_DOWN 0 0 0
    assert!(c.pfc_trace); // PFC_OUTPUT_FILE
    assert_eq!(c.error_rate_per_link, None); // ERROR_RATE_PER_LINK 0.0000
    let has = |prefix: &str| c.notes.iter().any(|n| n.starts_with(prefix));
    for (ln, key) in [
        (6, "FLOW_FILE"),
        (7, "TRACE_FILE"),
        (9, "FCT_OUTPUT_FILE"),
        (10, "PFC_OUTPUT_FILE"),
        (12, "SIMULATOR_STOP_TIME"),
        (32, "GLOBAL_T"),
    ] {
        assert!(
            has(&format!("{path}:{ln}: {key}: ")),
            "{key}: {:?}",
            c.notes
        );
    }
    // ACK_HIGH_PRIO 0: ACKs in their flow's data queue at the switches (honoured, no note).
    assert!(!c.transport.ack_high_prio);
    assert!(!c.notes.iter().any(|n| n.contains(": ACK_HIGH_PRIO: ")));
    for key in [
        "PINT_PROB",
        "ENABLE_TRACE",
        "QLEN_MON_FILE",
        "BW_MON_INTERVAL",
    ] {
        assert!(
            c.notes.iter().any(|n| n.contains(&format!(": {key}: "))),
            "{key}"
        );
    }
    // Every key of the example is given: no absent-default note.
    assert!(
        !c.notes.iter().any(|n| n.contains("absent")),
        "{:?}",
        c.notes
    );
    assert!(c.notes.iter().all(|n| !n.contains('\n')));
}

#[test]
fn simai_conf_absent_keys_take_simai_defaults() {
    let c = parse_conf_str("t.conf", "CC_MODE 3\n").unwrap();
    let t = &c.transport;
    assert_eq!(t.cc, Cc::Hpcc);
    assert_eq!(t.alpha_resume_interval_ns, 55_000);
    assert_eq!((t.fast_recovery_times, t.mi_thresh), (5, 5));
    assert!(t.fast_react && t.multi_rate);
    assert_eq!(t.buffer_bytes, 16 << 20);
    assert!(t.has_win && !t.var_win);
    let d = Transport::default();
    assert_eq!((t.ewma_gain, t.rp_timer_ns), (d.ewma_gain, d.rp_timer_ns));
    assert_eq!(t.ecn, d.ecn);
    assert!(c
        .notes
        .iter()
        .any(|n| n.starts_with("t.conf: EWMA_GAIN: absent")));
    assert!(!c.pfc_trace);
}

#[test]
fn simai_conf_link_down_at_two_seconds_plus_t() {
    let c = parse_conf_str("t.conf", "LINK_DOWN 1500 3 7\n").unwrap();
    let [ev] = c.link_events.as_slice() else {
        panic!("{:?}", c.link_events)
    };
    assert_eq!((ev.at_ns, ev.a, ev.b, ev.down), (2_001_500_000, 3, 7, true));
    let e = err("LINK_DOWN 0 0 0\nLINK_DOWN 1 2 3\n");
    assert_eq!(
        e.to_string().split(": given twice").next(),
        Some("t.conf:2: LINK_DOWN")
    );
}

#[test]
fn simai_conf_global_t_zero_is_noted() {
    let c = parse_conf_str("t.conf", "GLOBAL_T 0\n").unwrap();
    assert!(c
        .notes
        .iter()
        .any(|n| n.starts_with("t.conf:1: GLOBAL_T: ")));
}

#[test]
fn simai_conf_unknown_key() {
    let e = err("CC_MODE 1\nNVLINK_RATE 900Gbps\n");
    assert_eq!((e.line, e.key.as_str()), (Some(2), "NVLINK_RATE"));
    assert!(
        e.to_string()
            .starts_with("t.conf:2: NVLINK_RATE: unknown key"),
        "{e}"
    );
}

#[test]
fn simai_conf_malformed_values() {
    for (text, ln, key) in [
        ("BUFFER_SIZE lots\n", 1, "BUFFER_SIZE"),
        ("CC_MODE 1\nRATE_AI fast\n", 2, "RATE_AI"),
        ("\nKMAX_MAP 2 25000000000 400\n", 2, "KMAX_MAP"),
        ("MON_START soon\n", 1, "MON_START"),
        ("GLOBAL_T 2\n", 1, "GLOBAL_T"),
        ("FLOW_FILE\n", 1, "FLOW_FILE"),
        ("U_TARGET 0.95 0.9\n", 1, "U_TARGET"),
    ] {
        let e = err(text);
        assert_eq!((e.line, e.key.as_str()), (Some(ln), key), "{e}");
        assert!(
            e.to_string().starts_with(&format!("t.conf:{ln}: {key}: ")),
            "{e}"
        );
    }
}

#[test]
fn simai_conf_refused_keys_and_values() {
    for (text, ln, key, why) in [
        ("LB_MODE 0\n", 1, "LB_MODE", "SimAI does not read"),
        (
            "\nTOPOLOGY_FILE topo.txt\n",
            2,
            "TOPOLOGY_FILE",
            "SimAI does not read",
        ),
        ("ENABLE_IRN 1\n", 1, "ENABLE_IRN", "SimAI does not read"),
        ("CC_MODE 10\n", 1, "CC_MODE", "HPCC-PINT"),
        (
            "NIC_TOTAL_PAUSE_TIME 3\n",
            1,
            "NIC_TOTAL_PAUSE_TIME",
            "not modelled",
        ),
        ("L2_BACK_TO_ZERO 1\n", 1, "L2_BACK_TO_ZERO", ""),
    ] {
        let e = err(text);
        assert_eq!((e.line, e.key.as_str()), (Some(ln), key), "{e}");
        assert!(e.to_string().contains(why), "{e}");
        assert!(!e.to_string().contains('\n'));
    }
}
