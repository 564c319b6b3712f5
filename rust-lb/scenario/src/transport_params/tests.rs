//! Tests of the table of transport parameters (`super`).

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap is a failed test"
)]
use super::*;
use crate::{toml_config::load_toml_str, Overrides, Transport};
use std::path::Path;

/// The transport of a file-less TOML scenario whose `[transport]` is `body`.
fn parse(body: &str) -> crate::Result<Transport> {
    let text = format!(
        "[topology]\nleaf_spine = {{ leaves = 2, hosts_per_leaf = 2, spines = 2, \
         host_rate = \"100Gbps\", delay = \"1us\" }}\n[[workload.collective]]\n\
         kind = \"incast\"\nranks = 2\nsize = \"4KiB\"\n[transport]\n{body}"
    );
    load_toml_str(Path::new("t.toml"), &text, &Overrides::default()).map(|(s, _)| s.transport)
}

fn attr(t: &Transport, object: Ns3Object, name: &str) -> Ns3Value {
    t.ns3_attributes()
        .into_iter()
        .find(|a| a.object == object && a.name == name)
        .unwrap()
        .value
}

#[test]
fn toml_keys_reach_the_field_and_the_attribute_in_their_units() {
    let t = parse(
        "nack_interval = \"8us\"\nl2_chunk = \"2KiB\"\nrate_ai = \"80Mbps\"\n\
         ewma_gain = 0.5\npfc = false\nint_multi = 2\nirn_bdp = 52000\n",
    )
    .unwrap();
    assert_eq!((t.nack_interval_ns, t.l2_chunk_bytes), (8_000, 2_048));
    assert_eq!(
        attr(&t, Ns3Object::RoceRecovery, "NackInterval"),
        Ns3Value::TimeNs(8_000)
    );
    assert_eq!(
        attr(&t, Ns3Object::GoBackN, "L2ChunkSize"),
        Ns3Value::Uint(2_048)
    );
    assert_eq!(
        attr(&t, Ns3Object::CongestionControl, "RateAI"),
        Ns3Value::RateBps(80_000_000)
    );
    assert_eq!(
        attr(&t, Ns3Object::CongestionControl, "EwmaGain"),
        Ns3Value::Double(0.5)
    );
    assert_eq!(
        attr(&t, Ns3Object::Switch, "PfcEnabled"),
        Ns3Value::Bool(false)
    );
    assert_eq!(attr(&t, Ns3Object::Hpcc, "IntMulti"), Ns3Value::Uint(2));
    assert_eq!(attr(&t, Ns3Object::Switch, "IntMulti"), Ns3Value::Uint(2));
    assert_eq!(attr(&t, Ns3Object::Irn, "IrnBdp"), Ns3Value::Uint(52_000));
    // Keys left out keep the table's defaults.
    let d = Transport::default();
    assert_eq!((t.rp_timer_ns, t.payload_bytes), (d.rp_timer_ns, 1000));
}

#[test]
fn bad_values_name_file_line_and_key() {
    let e = parse("ewma_gain = 0.0\n").unwrap_err().to_string();
    assert_eq!(e, "t.toml:8: transport.ewma_gain: must be in (0, 1], got 0");
    let e = parse("\nint_multi = 0\n").unwrap_err().to_string();
    assert_eq!(e, "t.toml:9: transport.int_multi: must be >= 1");
    let e = parse("payload = 9001\n").unwrap_err().to_string();
    assert!(
        e.starts_with("t.toml:8: transport.payload: must be in 1..=9000 bytes, got 9001"),
        "{e}"
    );
    let e = parse("nack_interval = 4000\n").unwrap_err().to_string();
    assert!(
        e.starts_with("t.toml:8: transport.nack_interval") && e.contains("has no unit"),
        "{e}"
    );
    assert!(parse("nack_intervall = \"4us\"\n").is_err());
}

#[test]
fn check_ranges_runs_each_rows_check_on_the_merged_value() {
    assert_eq!(Transport::default().check_ranges(), Ok(()));
    let t = Transport {
        rate_decrease_interval_ns: 0,
        ..Transport::default()
    };
    assert_eq!(
        t.check_ranges(),
        Err(RangeError {
            field: "rate_decrease_interval_ns",
            toml_key: "transport.rate_decrease_interval",
            conweave_key: Some("RATE_DECREASE_INTERVAL"),
            message: "must be > 0".to_owned(),
        })
    );
    // A row without a ConWeave key; the first refused value in table order wins.
    let mut t = Transport::default();
    (t.irn_bdp_bytes, t.ewma_gain) = (0, 1.5);
    let e = t.check_ranges().unwrap_err();
    assert_eq!(
        (e.toml_key, e.conweave_key, e.message.as_str()),
        (
            "transport.ewma_gain",
            Some("EWMA_GAIN"),
            "must be in (0, 1], got 1.5"
        )
    );
    t.ewma_gain = 1.0;
    let e = t.check_ranges().unwrap_err();
    assert_eq!((e.toml_key, e.conweave_key), ("transport.irn_bdp", None));
    // The boundaries of each check, from the model's units: 1 µs pause quanta, 1..=9000 B
    // payloads (jumbo frames), η in (0, 10].
    let mut t = Transport::default();
    (t.pause_time_ns, t.payload_bytes, t.u_target) = (1_000, 9_000, 10.0);
    assert_eq!(t.check_ranges(), Ok(()));
    for (set, key) in [
        (
            (|t: &mut Transport| t.pause_time_ns = 999) as fn(&mut Transport),
            "transport.pause_time",
        ),
        (|t| t.payload_bytes = 9_001, "transport.payload"),
        (|t| t.payload_bytes = 0, "transport.payload"),
        (|t| t.u_target = 10.5, "transport.u_target"),
        (|t| t.int_multi = 0, "transport.int_multi"),
        (
            |t| t.ack_interval_packets = 0,
            "transport.ack_interval_packets",
        ),
        (|t| t.rate_on_first_cnp = 0.0, "transport.rate_on_first_cnp"),
        (
            |t| t.alpha_resume_interval_ns = 0,
            "transport.alpha_resume_interval",
        ),
        (|t| t.rp_timer_ns = 0, "transport.rp_timer"),
        (|t| t.buffer_bytes = 0, "transport.buffer"),
        (|t| t.l2_back_to_zero = true, "transport.l2_back_to_zero"),
        (|t| t.roce_header_bytes = 40, "transport.roce_header"),
    ] {
        let mut t = Transport::default();
        set(&mut t);
        assert_eq!(t.check_ranges().map_err(|e| e.toml_key), Err(key));
    }
}

#[test]
fn every_attribute_is_set_once_and_the_summary_keeps_its_order() {
    let list = Transport::default().ns3_attributes();
    for (i, a) in list.iter().enumerate() {
        assert!(
            !list[..i]
                .iter()
                .any(|b| b.object == a.object && b.name == a.name),
            "{:?} {} twice",
            a.object,
            a.name
        );
    }
    // summary.json's `transport` object as the scenario program has always written it (plus
    // `roce_header_bytes` since SimAI's 52 B headers).
    let summary: Vec<&str> = list.iter().filter_map(|a| a.summary_key).collect();
    assert_eq!(
        summary,
        [
            "recovery",
            "cc",
            "pfc_enabled",
            "ecn_enabled",
            "buffer_bytes",
            "alpha_resume_interval_ns",
            "rate_decrease_interval_ns",
            "rp_timer_ns",
            "fast_recovery_times",
            "ewma_gain",
            "rate_ai_bps",
            "rate_hai_bps",
            "min_rate_bps",
            "clamp_target_rate",
            "rate_on_first_cnp",
            "ack_interval_packets",
            "l2_chunk_bytes",
            "rate_bound",
            "payload_bytes",
            "roce_header_bytes",
            "pause_time_ns",
            "l2_timeout_ns",
            "nack_interval_ns",
            "irn_rto_low_ns",
            "irn_rto_high_ns",
            "irn_bdp_bytes",
            "irn_ooo_threshold",
            "ack_milestone_fix",
            "nack_carries_cnp",
            "headroom_sum_quirk",
            "withdraw_failed_ports",
        ]
    );
}

#[test]
fn components_cross_as_their_type_ids_with_the_config_names() {
    let mut t = Transport {
        recovery: crate::Recovery::NicSr,
        cc: crate::Cc::Hpcc,
        ..Transport::default()
    };
    assert_eq!(
        attr(&t, Ns3Object::Nic, "LossRecovery"),
        Ns3Value::Component {
            type_id: "ns3::RdmaNicSr",
            name: "nic-sr"
        }
    );
    assert_eq!(
        attr(&t, Ns3Object::Nic, "CongestionControl"),
        Ns3Value::Component {
            type_id: "ns3::RdmaHpcc",
            name: "hpcc"
        }
    );
    assert_eq!(
        t.ns3_settings(),
        t.ns3_attributes(),
        "RoCE: the table alone"
    );
    // Under uet the NICs' loss recovery is the uet transport (set once), the summary keeps the
    // recovery's name; the uet transport's own settings are the uet table's list.
    t.kind = crate::TransportKind::Uet;
    let list = t.ns3_settings();
    let recoveries: Vec<_> = list
        .iter()
        .filter(|a| a.object == Ns3Object::Nic && a.name == "LossRecovery")
        .collect();
    assert_eq!(recoveries.len(), 1);
    assert_eq!(
        recoveries[0].value,
        Ns3Value::Component {
            type_id: "ns3::RdmaUetRecovery",
            name: "nic-sr"
        }
    );
    assert_eq!(list.len(), t.ns3_attributes().len());
}

/// The uet table: each row's value reaches its attributes (the objects that read it), with
/// the value the field holds; the rows without one are the two the module doc names.
#[test]
fn uet_rows_set_their_attributes() {
    let u = crate::UetParams {
        header_bytes: 80,
        trimming: true,
        queue_packets: 33,
        max_window_bdp: 2.5,
        initial_window_packets: 7,
        base_rtt_ns: 8_337,
        rto_ns: 42_000,
        cc: crate::UetCc::NsccRccc,
        ..crate::UetParams::default()
    };
    let list = u.ns3_attributes();
    let get = |object: Ns3Object, name: &str| {
        list.iter()
            .find(|a| a.object == object && a.name == name)
            .map(|a| a.value.clone())
    };
    assert_eq!(
        get(Ns3Object::Nic, "UetHeaderSize"),
        Some(Ns3Value::Uint(80))
    );
    assert_eq!(
        get(Ns3Object::Switch, "TrimmedSize"),
        Some(Ns3Value::Uint(80))
    );
    assert_eq!(
        get(Ns3Object::Switch, "TrimEnabled"),
        Some(Ns3Value::Bool(true))
    );
    assert_eq!(
        get(Ns3Object::UetRecovery, "NsccTrimming"),
        Some(Ns3Value::Bool(true))
    );
    assert_eq!(
        get(Ns3Object::UetFabric, "QueuePackets"),
        Some(Ns3Value::Uint(33))
    );
    assert_eq!(
        get(Ns3Object::UetFabric, "EcnKminPackets"),
        Some(Ns3Value::Uint(0)),
        "0 = derived crosses as 0"
    );
    assert_eq!(
        get(Ns3Object::UetRecovery, "MaxWindowBdp"),
        Some(Ns3Value::Double(2.5))
    );
    assert_eq!(
        get(Ns3Object::UetRecovery, "InitialWindowPackets"),
        Some(Ns3Value::Uint(7))
    );
    assert_eq!(
        get(Ns3Object::UetFabric, "BaseRtt"),
        Some(Ns3Value::TimeNs(8_337))
    );
    assert_eq!(
        get(Ns3Object::UetFabric, "Rto"),
        Some(Ns3Value::TimeNs(42_000))
    );
    assert_eq!(
        get(Ns3Object::UetFabric, "SizingRate"),
        Some(Ns3Value::RateBps(0)),
        "0 = the largest pair bottleneck crosses as 0"
    );
    assert_eq!(
        get(Ns3Object::UetRecovery, "Cc"),
        Some(Ns3Value::Name("nscc+rccc"))
    );
    assert_eq!(
        get(Ns3Object::Switch, "QueueRelease"),
        Some(Ns3Value::Name("start")),
        "the switches' queue release, ours by default"
    );
    assert_eq!(
        get(Ns3Object::Switch, "TrimNewestProbability"),
        Some(Ns3Value::Double(0.0)),
        "a full queue trims the arrival, ours by default"
    );
    assert_eq!(
        get(Ns3Object::UetRecovery, "NsccFeedback"),
        Some(Ns3Value::Name("every-ack")),
        "NSCC fed by every ACK, ours by default"
    );
    assert_eq!(
        get(Ns3Object::UetRecovery, "Inflight"),
        Some(Ns3Value::Name("named-packets")),
        "bytes leave flight as acknowledgements name them, ours by default"
    );
    assert_eq!(
        get(Ns3Object::Device, "TxTime"),
        Some(Ns3Value::Name("ns")),
        "whole-ns serialization times, ours by default"
    );
    assert_eq!(get(Ns3Object::Nic, "TxTime"), Some(Ns3Value::Name("ns")));
    assert_eq!(
        get(Ns3Object::Device, "ControlTurns"),
        Some(Ns3Value::Uint(0)),
        "a NIC's control packets first, ours by default"
    );
    // 27 fields: 25 rows with attributes, three of them (header, trimming, tx_time) with two
    // each.
    assert_eq!(crate::UetParams::TOML_KEYS.len(), 27);
    assert_eq!(list.len(), 28);
    assert!(list.iter().all(|a| a.summary_key.is_none()));
    // RCCC also turns ECN off on the switches' ports to hosts (the settings' last).
    let settings = u.ns3_settings();
    assert_eq!(settings.len(), 29);
    assert_eq!(
        settings.last().map(|a| (a.object, a.name, a.value.clone())),
        Some((Ns3Object::Switch, "EcnHostPorts", Ns3Value::Bool(false)))
    );
    assert_eq!(crate::UetParams::default().ns3_settings().len(), 28);
}

/// The uet rows' range checks run on the merged values, naming the row's TOML key.
#[test]
fn uet_rows_check_their_ranges() {
    assert_eq!(crate::UetParams::default().check_ranges(), Ok(()));
    let bad = |u: crate::UetParams| u.check_ranges().map_err(|e| (e.toml_key, e.message));
    assert_eq!(
        bad(crate::UetParams {
            header_bytes: 40,
            ..crate::UetParams::default()
        }),
        Err((
            "transport.uet.header",
            "must be in 48..=512 bytes, got 40".to_owned()
        ))
    );
    assert_eq!(
        bad(crate::UetParams {
            max_window_bdp: 0.0,
            ..crate::UetParams::default()
        }),
        Err((
            "transport.uet.max_window_bdp",
            "must be in (0, 100], got 0".to_owned()
        ))
    );
    assert_eq!(
        bad(crate::UetParams {
            rccc_credit_per_pull_bytes: 1000,
            ..crate::UetParams::default()
        }),
        Err((
            "transport.uet.rccc_credit_per_pull",
            "must be a positive multiple of 256 B, got 1000".to_owned()
        ))
    );
}
