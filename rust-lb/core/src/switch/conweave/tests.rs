//! Tests of ConWeave (Song et al., "Network Load Balancing with In-network Reordering Support for
//! RDMA", SIGCOMM 2023) as the reference simulator runs it: the source ToR (epochs,
//! RTT_REQUEST/REPLY, rerouting), the destination ToR (reordering queues, TAIL, NOTIFY).

use super::*;
use crate::units::Entropy;

const A: u32 = 0x0b00_0001; // host 0, under ToR 10
const C: u32 = 0x0b00_0201; // host 2, under ToR 11
const SRC_TOR: u32 = 10;
const DST_TOR: u32 = 11;

fn path(uplink: u32) -> PathId {
    PathId::from_ports(&[uplink, 0]).unwrap()
}

/// A ToR of the 2-leaf fabric: ports 0-1 hosts, 2-3 uplinks; paths via uplinks 2 and 3.
fn tor(id: u32) -> (ConWeave, SimRng) {
    let mut cw = ConWeave::new(&ConWeaveConfig::default(), id);
    for port in 0..4 {
        cw.add_port(PortInfo {
            port,
            rate_bps: 100_000_000_000,
            delay_ns: 1_000,
            faces_host: port < 2,
        });
    }
    for (h, t) in [(0, SRC_TOR), (1, SRC_TOR), (2, DST_TOR), (3, DST_TOR)] {
        cw.add_host(0x0b00_0001 + (h << 8), t);
    }
    let other = if id == SRC_TOR { DST_TOR } else { SRC_TOR };
    cw.add_path(other, path(2));
    cw.add_path(other, path(3));
    (cw, SimRng::new(7))
}

fn uplinks() -> Vec<EgressCandidate> {
    crate::switch::test_support::cands(&[0, 0, 0, 0])[2..].to_vec()
}

fn host_port() -> Vec<EgressCandidate> {
    crate::switch::test_support::cands(&[0])
}

fn data(psn: u32) -> PacketMeta {
    PacketMeta {
        kind: PacketKind::Data,
        sip: A,
        dip: C,
        sport: Entropy(10_000),
        dport: 100,
        psn: Psn(psn),
        ingress_port: 0,
        size_bytes: 1048,
        pg: 3,
        ..PacketMeta::default()
    }
}

fn at_us(us: u64) -> SimTime {
    SimTime::from_ns(2_000_000_000 + us * 1_000)
}

/// Sends one packet from the source ToR; returns its tag and the uplink taken.
fn send(cw: &mut ConWeave, rng: &mut SimRng, now: SimTime, psn: u32) -> (DataTag, u32) {
    let mut tag = LbTag::NONE;
    let c = uplinks();
    let Verdict::Forward { index, .. } = cw.on_ingress(now, &data(psn), &mut tag, &c, rng) else {
        panic!("data is forwarded at the source ToR")
    };
    (DataTag::decode(&tag).unwrap(), c[index].port)
}

/// The control packet the destination ToR sends for `tag`, delivered at the source ToR.
fn deliver(cw: &mut ConWeave, rng: &mut SimRng, now: SimTime, ctrl: &ControlPacket) {
    let pkt = PacketMeta {
        kind: PacketKind::LbControl,
        sip: ctrl.sip,
        dip: ctrl.dip,
        sport: Entropy(ctrl.sport),
        dport: ctrl.dport,
        ingress_port: 2,
        size_bytes: ctrl.size_bytes,
        ..PacketMeta::default()
    };
    let mut tag = ctrl.tag;
    let v = cw.on_ingress(now, &pkt, &mut tag, &host_port(), rng);
    assert_eq!(v, Verdict::Drop, "control is consumed by the source ToR");
}

#[test]
fn first_packet_is_an_init_and_the_flow_keeps_its_path_until_the_deadline() {
    let (mut cw, mut rng) = tor(SRC_TOR);
    let (t0, up0) = send(&mut cw, &mut rng, at_us(0), 0);
    assert_eq!(
        (t0.flag, t0.epoch, t0.phase, t0.hop),
        (DataFlag::Init, 1, 0, 0)
    );
    assert_eq!(t0.path.port_at(0), Some(up0));
    // Within the 8 µs deadline (4 µs base RTT + 4 µs): plain data, same path and epoch.
    let (t1, up1) = send(&mut cw, &mut rng, at_us(7), 1);
    assert_eq!(
        (t1.flag, t1.epoch, t1.phase, up1),
        (DataFlag::Data, 1, 0, up0)
    );
    assert_eq!(cw.stats().reroutes, 0);
}

#[test]
fn a_timely_reply_starts_a_new_epoch_on_the_same_path() {
    let (mut src, mut rng) = tor(SRC_TOR);
    let (mut dst, _) = tor(DST_TOR);
    let (t0, up0) = send(&mut src, &mut rng, at_us(0), 0);
    let mut tag = t0.encode();
    let mut at_dst = data(0);
    at_dst.ingress_port = 2;
    let v = dst.on_ingress(at_us(3), &at_dst, &mut tag, &host_port(), &mut rng);
    assert_eq!(v, Verdict::at(0));
    assert!(!tag.present, "the destination ToR removes the tag");
    let reply = dst.poll_transmit(at_us(3)).unwrap();
    assert_eq!((reply.size_bytes, reply.sip, reply.dip), (64, C, A));
    assert_eq!(dst.stats().init_replies_sent, 1);
    deliver(&mut src, &mut rng, at_us(6), &reply);
    assert_eq!(src.stats().init_replies_timely, 1);
    let (t1, up1) = send(&mut src, &mut rng, at_us(7), 1);
    assert_eq!((t1.flag, t1.epoch, up1), (DataFlag::Init, 2, up0));
}

#[test]
fn after_a_missed_deadline_the_tail_takes_the_old_path_and_the_next_packet_the_new_one() {
    let (mut cw, mut rng) = tor(SRC_TOR);
    let (t0, up0) = send(&mut cw, &mut rng, at_us(0), 0);
    // Pause the current path, so the only good path is the other one.
    let notify = ControlPacket {
        kind: ControlKind::LbControl,
        sip: C,
        dip: A,
        sport: 100,
        dport: 10_000,
        qpn: 0,
        pg: 3,
        epsn: Psn(0),
        echo_seq_bytes: 0,
        ts_ns: 0,
        size_bytes: 64,
        from_port: 0,
        tag: notify_tag(t0.path),
    };
    deliver(&mut cw, &mut rng, at_us(5), &notify);
    // 9 µs > the 8 µs deadline: this packet is the TAIL, still on the old path.
    let (tail, up_tail) = send(&mut cw, &mut rng, at_us(9), 1);
    assert_eq!((tail.flag, tail.phase, up_tail), (DataFlag::Tail, 0, up0));
    assert_eq!(tail.tail_ns, at_us(9).as_ns());
    let (next, up_next) = send(&mut cw, &mut rng, at_us(10), 2);
    assert_eq!((next.flag, next.phase, next.epoch), (DataFlag::Data, 1, 1));
    assert_ne!(up_next, up0, "phase 1 moved off the paused path");
    assert_eq!(
        next.tail_ns,
        at_us(9).as_ns(),
        "phase-1 packets carry the TAIL's time"
    );
    assert_eq!(cw.stats().reroutes, 1);
    // The NOTIFY's pause ends after 16 µs.
    assert!(cw.is_paused(t0.path, at_us(20)) && !cw.is_paused(t0.path, at_us(21)));
}

#[test]
fn phase_one_waits_in_the_voq_until_the_predicted_time_then_flushes_in_order() {
    let (mut dst, mut rng) = tor(DST_TOR);
    let tagged = |phase: u8, flag: DataFlag, tx_us: u64| DataTag {
        path: path(2),
        hop: 1,
        epoch: 1,
        phase,
        tx_ns: at_us(tx_us).as_ns(),
        tail_ns: if phase == 1 || flag == DataFlag::Tail {
            at_us(9).as_ns()
        } else {
            0
        },
        flag,
    };
    let mut arrival_rng = SimRng::new(3);
    let mut arrive = |cw: &mut ConWeave, now: SimTime, t: DataTag| {
        let mut tag = t.encode();
        let mut p = data(0);
        p.ingress_port = 2;
        cw.on_ingress(now, &p, &mut tag, &host_port(), &mut arrival_rng)
    };
    // Phase 0 sent at 0 µs arrives at 5 µs; phase 1 (TAIL sent at 9 µs) overtakes the TAIL.
    assert_eq!(
        arrive(&mut dst, at_us(5), tagged(0, DataFlag::Init, 0)),
        Verdict::at(0)
    );
    let key = flow_key(A, C, 10_000, 100);
    let v = arrive(&mut dst, at_us(12), tagged(1, DataFlag::Data, 10));
    assert_eq!(v, Verdict::Hold { queue: key });
    // Predicted flush: phase-0 RX 5 µs + (TAIL tx 9 - phase-0 tx 0) + 16 µs = 30 µs.
    assert_eq!(dst.poll_at(), Some(at_us(30)));
    assert_eq!(dst.stats().ooo_queued, 1);
    // A second phase-1 packet joins the same queue.
    let v = arrive(&mut dst, at_us(13), tagged(1, DataFlag::Data, 11));
    assert_eq!(v, Verdict::Hold { queue: key });
    dst.on_timer(at_us(29), &mut rng);
    assert_eq!(
        dst.poll_release(at_us(29)),
        None,
        "not before the predicted time"
    );
    dst.on_timer(at_us(30), &mut rng);
    assert_eq!(dst.poll_release(at_us(30)), Some(key));
    assert_eq!(dst.stats().voq_flushes, 1);
    // After the flush the flow is in phase 1: later phase-1 packets go straight through.
    assert_eq!(
        arrive(&mut dst, at_us(31), tagged(1, DataFlag::Data, 20)),
        Verdict::at(0)
    );
}

#[test]
fn the_tail_flushes_the_voq_one_nanosecond_later() {
    let (mut dst, mut rng) = tor(DST_TOR);
    let mk = |phase: u8, flag: DataFlag| DataTag {
        path: path(2),
        hop: 1,
        epoch: 1,
        phase,
        tx_ns: at_us(0).as_ns(),
        tail_ns: at_us(9).as_ns(),
        flag,
    };
    let mut p = data(0);
    p.ingress_port = 2;
    let mut tag = mk(0, DataFlag::Init).encode();
    dst.on_ingress(at_us(5), &p, &mut tag, &host_port(), &mut rng);
    let mut tag = mk(1, DataFlag::Data).encode();
    let v = dst.on_ingress(at_us(12), &p, &mut tag, &host_port(), &mut rng);
    assert!(matches!(v, Verdict::Hold { .. }));
    let mut tag = mk(0, DataFlag::Tail).encode();
    let v = dst.on_ingress(at_us(14), &p, &mut tag, &host_port(), &mut rng);
    assert_eq!(v, Verdict::at(0), "the TAIL itself goes to the host first");
    assert_eq!(dst.poll_at(), Some(at_us(14) + SimDuration::from_ns(1)));
    assert_eq!(dst.stats().voq_flushes_by_tail, 1);
    let reply = std::iter::from_fn(|| dst.poll_transmit(at_us(14)))
        .last()
        .unwrap();
    assert_eq!(
        reply.tag.words[0] & 1,
        1,
        "the last control is a REPLY(TAIL) = CLEAR"
    );
}

#[test]
fn a_ce_marked_packet_sends_a_notify_naming_its_path() {
    let (mut dst, mut rng) = tor(DST_TOR);
    let t = DataTag {
        path: path(3),
        hop: 1,
        epoch: 1,
        phase: 0,
        tx_ns: 0,
        tail_ns: 0,
        flag: DataFlag::Data,
    };
    let mut tag = t.encode();
    let mut p = data(0);
    p.ingress_port = 3;
    p.ecn_ce = true;
    dst.on_ingress(at_us(1), &p, &mut tag, &host_port(), &mut rng);
    let n = dst.poll_transmit(at_us(1)).unwrap();
    assert_eq!(n.tag, notify_tag(path(3)));
    assert_eq!((n.size_bytes, n.kind), (64, ControlKind::LbControl));
    assert_eq!(dst.stats().notifies_sent, 1);
}

#[test]
fn a_spine_follows_the_path_and_control_takes_ecmp() {
    let mut spine = ConWeave::new(&ConWeaveConfig::default(), 20);
    for (h, t) in [(0, SRC_TOR), (2, DST_TOR)] {
        spine.add_host(0x0b00_0001 + (h << 8), t);
    }
    let mut rng = SimRng::new(1);
    let cands = crate::switch::test_support::cands(&[0, 0, 0]);
    let t = DataTag {
        path: PathId::from_ports(&[2, 1]).unwrap(),
        hop: 0,
        epoch: 1,
        phase: 0,
        tx_ns: 0,
        tail_ns: 0,
        flag: DataFlag::Data,
    };
    let mut tag = t.encode();
    let v = spine.on_ingress(at_us(1), &data(0), &mut tag, &cands, &mut rng);
    assert_eq!(v, Verdict::at(1), "hop 1 of the path is port 1");
    assert_eq!(DataTag::decode(&tag).unwrap().hop, 1);
    let mut ctrl = data(0);
    ctrl.kind = PacketKind::LbControl;
    let mut none = LbTag::NONE;
    let v = spine.on_ingress(at_us(1), &ctrl, &mut none, &cands, &mut rng);
    let ecmp = EcmpHash::new(20).index(&ctrl, 3);
    assert_eq!(v, Verdict::at(ecmp));
}

#[test]
fn aging_forgets_idle_flows_after_two_milliseconds() {
    let (mut cw, mut rng) = tor(SRC_TOR);
    send(&mut cw, &mut rng, at_us(0), 0);
    assert_eq!(cw.poll_at(), Some(at_us(2_000)));
    cw.on_timer(at_us(2_000), &mut rng);
    assert_eq!(cw.tx.len(), 1, "idle for exactly 2 ms: kept");
    cw.on_timer(at_us(4_000), &mut rng);
    assert!(cw.tx.is_empty());
}

#[test]
fn shared_reference_rand_draws_three_paths_per_packet_across_switches() {
    // Both ToRs (2 paths each, uplinks 2 and 3) share one stream after srand(1): glibc's
    // values 1804289383, 846930886, 1681692777 | 1714636915, 1957747793, 424238335 |
    // 719885386, 1649760492, 596516649 | 1189641421. Each data packet at a source ToR
    // draws the unused initial path, then paths 1 and 2 (value % 2 into [uplink 2, 3]).
    let shared = crate::rng::GlibcRand::shared(1);
    let (mut src, mut rng) = tor(SRC_TOR);
    let (mut other, _) = tor(DST_TOR);
    src.share_reference_rand(std::sync::Arc::clone(&shared));
    other.share_reference_rand(std::sync::Arc::clone(&shared));
    // src: path 1 = 846930886 % 2 = 0 (uplink 2), not paused: taken.
    let (t0, up0) = send(&mut src, &mut rng, at_us(0), 0);
    assert_eq!((t0.flag, up0), (DataFlag::Init, 2));
    // the other ToR, a flow towards host A: path 1 = 1957747793 % 2 = 1 (uplink 3).
    let back = PacketMeta {
        sip: C,
        dip: A,
        ..data(0)
    };
    let mut tag = LbTag::NONE;
    let c = uplinks();
    let Verdict::Forward { index, .. } = other.on_ingress(at_us(1), &back, &mut tag, &c, &mut rng)
    else {
        panic!("data is forwarded at the source ToR")
    };
    assert_eq!(c[index].port, 3);
    // src again: three more draws, the flow keeps uplink 2.
    let (t1, up1) = send(&mut src, &mut rng, at_us(2), 1);
    assert_eq!((t1.flag, up1), (DataFlag::Data, 2));
    assert_eq!(
        shared.lock().map(|mut g| g.next_rand()).ok(),
        Some(1_189_641_421)
    );
}

/// Sends packet `psn` of flow `sport` from the source ToR with only `live` uplinks routed;
/// returns its tag and the uplink taken.
fn send_over(
    cw: &mut ConWeave,
    rng: &mut SimRng,
    now: SimTime,
    sport: u16,
    psn: u32,
    live: &[u32],
) -> (DataTag, u32) {
    let c: Vec<EgressCandidate> = uplinks()
        .into_iter()
        .filter(|c| live.contains(&c.port))
        .collect();
    let mut pkt = data(psn);
    pkt.sport = Entropy(sport);
    let mut tag = LbTag::NONE;
    let Verdict::Forward { index, .. } = cw.on_ingress(now, &pkt, &mut tag, &c, rng) else {
        panic!("data is forwarded at the source ToR")
    };
    (DataTag::decode(&tag).unwrap(), c[index].port)
}

#[test]
fn a_withdrawn_uplink_is_never_drawn_and_its_flows_move_at_their_next_packet() {
    let (mut cw, mut rng) = tor(SRC_TOR);
    // Healthy: 64 flows spread over both uplinks, each tagged with the path it takes.
    let mut on_3 = Vec::new();
    for sport in 0..64u16 {
        let (t, up) = send_over(&mut cw, &mut rng, at_us(0), sport, 0, &[2, 3]);
        assert_eq!(t.path.port_at(0), Some(up));
        if up == 3 {
            on_3.push(sport);
        }
    }
    assert!(
        (16..=48).contains(&on_3.len()),
        "{} of 64 on uplink 3",
        on_3.len()
    );
    // Uplink 3 withdrawn: every packet, new flow or old, leaves on uplink 2 with a path via 2.
    for (k, sport) in (0..128u16).enumerate() {
        let (t, up) = send_over(&mut cw, &mut rng, at_us(1 + k as u64), sport, 1, &[2]);
        assert_eq!((up, t.path.port_at(0)), (2, Some(2)), "flow {sport}");
    }
    let s = cw.stats();
    assert_eq!(s.path_fallbacks, 0);
    assert_eq!(s.dead_path_moves, on_3.len() as u64);
    // A moved flow stays in its epoch: no new INIT.
    let (t, _) = send_over(&mut cw, &mut rng, at_us(130), on_3[0], 2, &[2]);
    assert_eq!(t.epoch, 1);
    assert_ne!(t.flag, DataFlag::Init);
}
