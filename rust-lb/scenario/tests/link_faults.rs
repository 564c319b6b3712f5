//! `[topology] link_faults`: flapping (`up`), switch-port failures, and their errors.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use common::{scratch, write};
use rdma_lb_scenario::{load_scenario, LinkEvent, Overrides, Result, Scenario};

/// A 2-leaf x 2-host x 2-spine fabric (hosts 0-3, leaves 4-5, spines 6-7; links in file
/// order: 0-4, 1-4, 2-5, 3-5, 4-6, 4-7, 5-6, 5-7) with the given `link_faults` entries.
fn load(faults: &str) -> Result<Scenario> {
    let d = scratch("faults");
    write(&d, "f.txt", "1\n0 2 3 100 0.000001\n");
    let cfg = write(
        &d,
        "s.toml",
        &format!(
            "[topology]\nleaf_spine = {{ leaves = 2, hosts_per_leaf = 2, spines = 2, \
             host_rate = \"100Gbps\", delay = \"1us\" }}\nlink_faults = [\n{faults}\n]\n\
             [workload]\nflow_file = \"f.txt\"\n[lb]\nname = \"ecmp\"\n"
        ),
    );
    load_scenario(&cfg, &Overrides::default())
}

fn ev(at_ns: u64, a: u32, b: u32, down: bool, port: Option<u32>) -> LinkEvent {
    LinkEvent {
        at_ns,
        a,
        b,
        down,
        port,
        one_way: false,
    }
}

/// A one-way event: only `a`'s direction towards `b`.
fn ev1(at_ns: u64, a: u32, b: u32, down: bool, port: Option<u32>) -> LinkEvent {
    LinkEvent {
        one_way: true,
        ..ev(at_ns, a, b, down, port)
    }
}

/// The error of `faults` without the scratch directory: `s.toml:LINE: key: message`.
fn err(faults: &str) -> String {
    let e = load(faults).unwrap_err();
    let s = e.to_string();
    assert!(!s.contains('\n'), "{s}");
    s[s.rfind("s.toml:").unwrap()..].to_owned()
}

#[test]
fn flap_expands_into_down_then_up_in_time_order() {
    let s = load(
        "{ at = \"1ms\", up = \"3ms\", a = 4, b = 6 },\n\
         { at = \"2ms\", a = 5, b = 7 },\n\
         { at = \"4ms\", a = 5, b = 7, down = false },",
    )
    .unwrap();
    assert_eq!(
        s.run.link_events,
        vec![
            ev(1_000_000, 4, 6, true, None),
            ev(2_000_000, 5, 7, true, None),
            ev(3_000_000, 4, 6, false, None),
            ev(4_000_000, 5, 7, false, None),
        ]
    );
}

#[test]
fn switch_ports_are_their_links_in_file_order() {
    // Leaf 4: port 0 = host 0, 1 = host 1, 2 = spine 6, 3 = spine 7. Spine 7: port 0 = leaf 4,
    // port 1 = leaf 5.
    let s = load(
        "{ at = \"1ms\", switch = 4, port = 3, up = \"2ms\" },\n\
         { at = \"5ms\", switch = 7, port = 1 },",
    )
    .unwrap();
    assert_eq!(
        s.run.link_events,
        vec![
            ev(1_000_000, 4, 7, true, Some(3)),
            ev(2_000_000, 4, 7, false, Some(3)),
            ev(5_000_000, 7, 5, true, Some(1)),
        ]
    );
}

#[test]
fn a_port_and_its_link_are_one_link_for_the_order_check() {
    // Leaf 4's port 2 is link 4-6: failing it again while down is refused.
    assert_eq!(
        err("{ at = \"1ms\", a = 4, b = 6 },\n{ at = \"2ms\", switch = 4, port = 2 },"),
        "s.toml:5: topology.link_faults: link 4-6 is already down at 2000000 ns \
         (per link, faults must alternate down, up)"
    );
    assert_eq!(
        err("{ at = \"1ms\", a = 4, b = 6, down = false },"),
        "s.toml:4: topology.link_faults: link 4-6 is not down at 1000000 ns \
         (per link, faults must alternate down, up)"
    );
    // Down, up, down again: fine.
    let s = load(
        "{ at = \"1ms\", up = \"2ms\", switch = 6, port = 0 },\n{ at = \"3ms\", a = 6, b = 4 },",
    )
    .unwrap();
    assert_eq!(s.run.link_events.len(), 3);
}

#[test]
fn bad_entries_name_the_line_and_what_is_wrong() {
    let k = "s.toml:4: topology.link_faults:";
    assert_eq!(
        err("{ at = \"3ms\", up = \"3ms\", a = 4, b = 6 },"),
        format!("{k} up (3000000 ns) must be after at (3000000 ns)")
    );
    assert_eq!(
        err("{ at = \"1ms\", up = \"3ms\", a = 4, b = 6, down = false },"),
        format!("{k} `up` needs a failure (down = true)")
    );
    assert_eq!(
        err("{ at = \"1ms\", switch = 4, port = 4 },"),
        format!("{k} switch 4 has ports 0..=3, not port 4")
    );
    assert_eq!(
        err("{ at = \"1ms\", switch = 0, port = 0 },"),
        format!("{k} node 0 is not a switch")
    );
    assert_eq!(
        err("{ at = \"1ms\", switch = 4, port = 0, a = 4, b = 0 },"),
        format!("{k} give a link (`a` and `b`) or a switch port (`switch` and `port`), not both")
    );
    assert_eq!(
        err("{ at = \"1ms\", a = 4 },"),
        format!("{k} give a link (`a` and `b`) or a switch port (`switch` and `port`), not both")
    );
    assert_eq!(
        err("{ at = \"1ms\", a = 0, b = 6 },"),
        format!("{k} no link 0-6 in the topology")
    );
}

#[test]
fn one_way_faults_take_one_direction_and_alternate_per_direction() {
    // Spine 6 -> leaf 4 down at 1 ms; leaf 4 -> spine 6 (the reverse) down at 2 ms and up at
    // 3 ms; leaf 4's port 3 (towards spine 7) down at 4 ms: three independent directions.
    let s = load(
        "{ at = \"1ms\", a = 6, b = 4, one_way = true },\n\
         { at = \"2ms\", up = \"3ms\", a = 4, b = 6, one_way = true },\n\
         { at = \"4ms\", switch = 4, port = 3, one_way = true },",
    )
    .unwrap();
    assert_eq!(
        s.run.link_events,
        vec![
            ev1(1_000_000, 6, 4, true, None),
            ev1(2_000_000, 4, 6, true, None),
            ev1(3_000_000, 4, 6, false, None),
            ev1(4_000_000, 4, 7, true, Some(3)),
        ]
    );
    // In the effective configuration only where set.
    let cfg = s.effective_config();
    assert_eq!(cfg.matches("one_way = true").count(), 4, "{cfg}");
    let two_way = load("{ at = \"1ms\", a = 4, b = 6 },").unwrap();
    assert!(!two_way.effective_config().contains("one_way"));
}

#[test]
fn one_way_faults_errors_name_the_direction() {
    assert_eq!(
        err("{ at = \"1ms\", a = 4, b = 6, one_way = true },\n\
             { at = \"2ms\", a = 4, b = 6, one_way = true },"),
        "s.toml:5: topology.link_faults: direction 4 -> 6 is already down at 2000000 ns \
         (per direction, faults must alternate down, up)"
    );
    assert_eq!(
        err("{ at = \"1ms\", a = 6, b = 4, one_way = true, down = false },"),
        "s.toml:4: topology.link_faults: direction 6 -> 4 is not down at 1000000 ns \
         (per direction, faults must alternate down, up)"
    );
    assert_eq!(
        err("{ at = \"1ms\", a = 4, b = 6, one_way = true },\n{ at = \"2ms\", a = 6, b = 4 },"),
        "s.toml:5: topology.link_faults: link 6-4 has both one-way and two-way faults \
         (give one kind per link)"
    );
    assert_eq!(
        err("{ at = \"1ms\", a = 4, b = 6, one_way = 1 },"),
        "s.toml:4: topology.one_way: invalid type: integer `1`, expected a boolean"
    );
}
