//! `.cm` parser tests: the connection matrices of data/uec-htsim/ (htsim's own
//! perm_128n_128c_2MB.cm and the 8-to-1 incast of the reference runs), start times as
//! main_uec.cpp uses them, the features refused, then malformed input.

use super::*;

fn data(rel: &str) -> HtsimCm {
    let path = format!("{}/../../data/uec-htsim/{rel}", env!("CARGO_MANIFEST_DIR"));
    parse_cm_file(Path::new(&path)).unwrap()
}

fn check_err(text: &str, want: &str) {
    let got = parse_cm_str("m.cm", text).unwrap_err().to_string();
    assert!(got.starts_with(want), "want {want}\n got {got}");
}

#[test]
fn permutation_128_hosts_2mb() {
    let m = data("perm128_ft100_nscc/perm_128n_128c_2MB.cm");
    assert_eq!((m.nodes, m.connections.len()), (128, 128));
    let first = &m.connections[0];
    assert_eq!(
        (
            first.line,
            first.src,
            first.dst,
            first.id,
            first.start_us,
            first.size_bytes
        ),
        (3, 103, 32, Some(1), 0, 2_000_000)
    );
    let flows = m.flows();
    assert_eq!(flows.len(), 128);
    assert!(flows.iter().enumerate().all(|(i, f)| f.id as usize == i
        && f.size_bytes == 2_000_000
        && f.start_ns == 0
        && f.pg == 3
        && f.after.is_empty()));
    // A permutation: every host sends once and receives once.
    let mut srcs: Vec<u32> = flows.iter().map(|f| f.src).collect();
    let mut dsts: Vec<u32> = flows.iter().map(|f| f.dst).collect();
    srcs.sort_unstable();
    dsts.sort_unstable();
    assert_eq!(srcs, (0..128).collect::<Vec<_>>());
    assert_eq!(dsts, (0..128).collect::<Vec<_>>());
    // The same file in every permutation case.
    assert_eq!(
        data("perm128_ls400_nscc/perm_128n_128c_2MB.cm").connections,
        m.connections
    );
}

#[test]
fn incast_8_to_1() {
    let m = data("incast8to1_ft100_nscc/incast_128n_8to1_1MB.cm");
    assert_eq!((m.nodes, m.connections.len()), (128, 8));
    let flows = m.flows();
    assert!(flows
        .iter()
        .all(|f| f.dst == 0 && f.size_bytes == 1_000_000));
    assert_eq!(
        flows.iter().map(|f| f.src).collect::<Vec<_>>(),
        (64..72).collect::<Vec<_>>()
    );
    assert_eq!(
        m.connections.iter().map(|c| c.id).collect::<Vec<_>>(),
        (1..=8).map(Some).collect::<Vec<_>>()
    );
}

#[test]
fn starts_are_whole_microseconds_and_hosts_map() {
    // htsim's one.cm style (no id), a fractional start (main_uec: (uint32_t)start us), comments.
    let m = parse_cm_str(
        "s.cm",
        "# two\nNodes 4\nConnections 3\nTriggers 0\nFailures 0\n0->3 start 0 size 2000000\n\
         3->0 size 10 start 9.7   # late\n1->2 id 7 start 40 size 1\n",
    )
    .unwrap();
    assert_eq!(
        m.connections
            .iter()
            .map(|c| (c.start_us, c.id))
            .collect::<Vec<_>>(),
        vec![(0, None), (9, None), (40, Some(7))]
    );
    assert_eq!(
        m.flows().iter().map(|f| f.start_ns).collect::<Vec<_>>(),
        vec![0, 9_000, 40_000]
    );
    // On a topology whose hosts are 10..14, host i is the i-th of them.
    let on = m.flows_on(&[10, 11, 12, 13]).unwrap();
    assert_eq!(
        on.iter().map(|f| (f.src, f.dst)).collect::<Vec<_>>(),
        vec![(10, 13), (13, 10), (11, 12)]
    );
    assert!(m.flows_on(&[10, 11, 12]).is_none());
}

#[test]
fn unsupported_features_are_refused_one_line_each() {
    let head = "Nodes 16\nConnections 1\n";
    for (text, want) in [
        (
            format!("{head}0->1 id 1 trigger 1 size 10\n"),
            "m.cm:3: trigger: `trigger`: triggers are not supported yet",
        ),
        (
            format!("{head}0->1 id 1 start 0 size 10 send_done_trigger 2\n"),
            "m.cm:3: send_done_trigger: `send_done_trigger`: triggers are not supported yet",
        ),
        (
            format!("{head}0->1 id 1 start 0 size 10 recv_done_trigger 2\n"),
            "m.cm:3: recv_done_trigger: `recv_done_trigger`: triggers are not supported yet",
        ),
        (
            format!("{head}0->1 id 1 msg start 0 size 4086\n"),
            "m.cm:3: msg: `msg` (messages on a reused connection, htsim -conn_reuse) is not supported yet",
        ),
        (
            format!("{head}0->1 id 1 start 0 size 10 prio 1\n"),
            "m.cm:3: prio: `prio` (connection priorities) is not supported yet",
        ),
        (
            format!("{head}0->1 id 1 start 0 size 10\ntrigger id 1 oneshot\n"),
            "m.cm:4: trigger: a trigger line is not supported yet",
        ),
        (
            format!("{head}0->1 id 1 start 0 size 10\nfailure switch_type AGG switch_id 0 link_id 0\n"),
            "m.cm:4: failure: a failure line (a cut aggregation-core link) is not supported yet",
        ),
        (
            "Nodes 16\nConnections 1\nTriggers 3\n".to_owned(),
            "m.cm:3: Triggers: 3 triggers: triggers are not supported yet",
        ),
        (
            "Nodes 16\nConnections 1\nFailures 1\n".to_owned(),
            "m.cm:3: Failures: 1 link failures: link failures are not supported yet",
        ),
    ] {
        check_err(&text, want);
    }
}

#[test]
fn malformed_files_name_line_and_field() {
    let head = "Nodes 16\nConnections 2\n";
    for (text, want) in [
        (
            "Connections 1\n0->1 start 0 size 10\n".to_owned(),
            "m.cm:2: Nodes: no `Nodes` line before the first connection",
        ),
        (
            "Connections 0\n".to_owned(),
            "m.cm:1: Nodes: no `Nodes` line in the header",
        ),
        (
            "Nodes 16\n0->1 start 0 size 10\n".to_owned(),
            "m.cm:2: Connections: no `Connections` line before the first connection",
        ),
        (
            format!("{head}0->1 start 0 size 10\n"),
            "m.cm:2: Connections: says 2 connections, the file has 1",
        ),
        (
            format!("{head}0->1 start 0 size 10\n1->2 start 0 size 10\n2->3 start 0 size 10\n"),
            "m.cm:2: Connections: says 2 connections, the file has 3",
        ),
        (
            format!("{head}0->16 start 0 size 10\n"),
            "m.cm:3: dst: host 16 does not exist (Nodes 16: hosts 0 to 15)",
        ),
        (
            format!("{head}99->1 start 0 size 10\n"),
            "m.cm:3: src: host 99 does not exist",
        ),
        (
            format!("{head}3->3 start 0 size 10\n"),
            "m.cm:3: dst: connection from host 3 to itself",
        ),
        (
            format!("{head}0->1 id 0 start 0 size 10\n"),
            "m.cm:3: id: flow id 0 is not allowed",
        ),
        (
            format!("{head}0->1 id 5 start 0 size 10\n1->0 id 5 start 0 size 10\n"),
            "m.cm:4: id: flow id 5 is already used at line 3",
        ),
        (
            format!("{head}0->1 size 10\n"),
            "m.cm:3: start: the connection has no `start`",
        ),
        (
            format!("{head}0->1 start 0\n"),
            "m.cm:3: size: the connection has no `size`",
        ),
        (
            format!("{head}0->1 start 0 size 0\n"),
            "m.cm:3: size: must be >= 1 byte",
        ),
        (
            format!("{head}0->1 start -1 size 10\n"),
            "m.cm:3: start: must be in 0..=4294967295 us, got -1",
        ),
        (
            format!("{head}0->1 start 0 size 10 start 5\n"),
            "m.cm:3: start: given twice",
        ),
        (
            format!("{head}0->1 start 0 size\n"),
            "m.cm:3: size: has no value",
        ),
        (
            format!("{head}0->1 start 0 size 10 color red\n"),
            "m.cm:3: color: unknown keyword (known: id, start, size)",
        ),
        (
            format!("{head}0-1 start 0 size 10\n"),
            "m.cm:3: 0-1: unknown line",
        ),
        (
            format!("{head}a->1 start 0 size 10\n"),
            "m.cm:3: src: `a` is not a non-negative integer",
        ),
        (
            format!("{head}0->1 start 0 size 10\nNodes 16\n"),
            "m.cm:4: Nodes: a header key must come before the first connection",
        ),
        (
            "Nodes 16\nNodes 8\n".to_owned(),
            "m.cm:2: Nodes: given twice (first at line 1)",
        ),
        (
            "Nodes 0\n".to_owned(),
            "m.cm:1: Nodes: must be in 1..=1048576, got 0",
        ),
        (
            "Nodes\n".to_owned(),
            "m.cm:1: Nodes: expected `Nodes <count>`, found 1 fields",
        ),
    ] {
        check_err(&text, want);
    }
}
