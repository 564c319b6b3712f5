//! The per-packet path allocates nothing: every algorithm's `next_entropy`, `on_feedback` and
//! `on_timer`, and every switch scheme's `choose` and ToR hooks, run under a counting global
//! allocator after warm-up.
#![allow(unsafe_code, reason = "a GlobalAlloc wrapper is unsafe by definition")]
#![allow(missing_docs, reason = "test binary")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use rdma_lb_core::config::LbConfig;
use rdma_lb_core::host::{Feedback, FeedbackKind, HostLb, HostLbGroup, SendCx};
use rdma_lb_core::switch::{
    EgressCandidate, LbTag, PacketKind, PacketMeta, PathId, PortInfo, SwitchLb, Verdict,
};
use rdma_lb_core::{Algorithm, Entropy, Psn, Side, SimDuration, SimTime};

struct Counting;

thread_local! {
    // Per thread, so that tests running in parallel do not see each other's allocations.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

fn count() {
    ALLOCATIONS.with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Drives one queue pair through `n` packets with a mix of feedback (ECN marks, NACKs, a
/// timeout every 97 packets) so every algorithm walks through its modes.
fn drive(lb: &mut HostLb, start: u32, n: u32) {
    for psn in start..start + n {
        let now = SimTime::from_ns(u64::from(psn) * 1_000);
        let cx = SendCx {
            now,
            psn: Psn(psn),
            retransmission: false,
            inflight_pkts: 8,
            every_arrival_answered: false,
        };
        let e = lb.next_entropy(&cx);
        let kind = match psn % 97 {
            0 => FeedbackKind::Timeout,
            13 => FeedbackKind::Nack,
            29 => FeedbackKind::Cnp,
            _ => FeedbackKind::Ack,
        };
        let fb = Feedback {
            kind,
            now: now + SimDuration::from_ns(8_000),
            entropy: e,
            psn: Psn(psn),
            rtt: Some(SimDuration::from_ns(8_000 + u64::from(psn % 7) * 3_000)),
            ecn: psn % 5 == 0,
            last_hop: false,
        };
        lb.on_feedback(&fb);
        if let Some(t) = lb.poll_at() {
            if t <= now {
                lb.on_timer(now);
            }
        }
    }
}

#[test]
fn host_decisions_allocate_nothing() {
    for alg in Algorithm::ALL {
        let cfg = LbConfig::parse(alg.name(), "").unwrap();
        let mut lb = HostLb::new(&cfg.host, 7);
        drive(&mut lb, 0, 1_000); // warm-up
        let before = allocations();
        drive(&mut lb, 1_000, 10_000);
        let after = allocations();
        assert_eq!(
            after - before,
            0,
            "{alg}: {} allocations in 10000 packets",
            after - before
        );
    }
}

#[test]
fn shared_profiles_allocate_nothing_per_packet() {
    // Whack-a-Mole with one profile per destination: two queue pairs of one NIC share it.
    let cfg = LbConfig::parse("whack-a-mole", "profile_scope = \"destination\"").unwrap();
    let mut nic = HostLbGroup::new(&cfg.host);
    let mut a = nic.new_lb(5, 7, None);
    let mut b = nic.new_lb(5, 8, None);
    assert_eq!(nic.shared_profiles(), 1);
    drive(&mut a, 0, 1_000);
    drive(&mut b, 0, 1_000);
    let before = allocations();
    for k in 0..10 {
        drive(&mut a, 1_000 + k * 2_000, 1_000);
        drive(&mut b, 2_000 + k * 2_000, 1_000);
    }
    assert_eq!(allocations() - before, 0);
}

/// A ToR's ports: 0-3 face hosts, 4-11 are uplinks.
fn add_ports(sw: &mut SwitchLb) {
    for port in 0..12 {
        sw.add_port(PortInfo {
            port,
            rate_bps: 100_000_000_000,
            delay_ns: 1_000,
            faces_host: port < 4,
        });
    }
}

/// One ToR's traffic: 16 flows enter from 4 host ports and are sprayed over 8 uplinks; 16
/// flows arrive from the uplinks to the hosts, with a NACK from the host every 13 packets.
fn drive_switch(sw: &mut SwitchLb, cands: &mut [EgressCandidate], start: u32, n: u32) {
    for i in start..start + n {
        let flow = i % 16;
        let psn = i / 16;
        let out = PacketMeta {
            kind: PacketKind::Data,
            sip: 0x0b00_0001 + (flow % 4) * 0x100,
            dip: 0x0b00_0801,
            sport: Entropy(1000 + flow as u16),
            dport: flow as u16,
            psn: Psn(psn),
            ingress_port: flow % 4,
            size_bytes: 1048,
            ..PacketMeta::default()
        };
        if let Some(c) = cands.get_mut((i % 8) as usize) {
            c.queue_bytes = u64::from(i.wrapping_mul(2_654_435_761) % 100_000);
        }
        let now = SimTime::from_ns(u64::from(i));
        let mut tag = LbTag::NONE;
        let v = sw.on_ingress(now, &out, &mut tag, cands);
        assert!(
            matches!(v, Verdict::Forward { index, .. } if index < cands.len()),
            "data from a host: {v:?}"
        );
        let inbound = PacketMeta {
            sip: out.dip,
            dip: out.sip,
            psn: Psn(psn ^ 1), // pairwise reordered
            ingress_port: 4 + i % 8,
            ..out
        };
        sw.on_egress(now, &inbound, &tag, flow % 4);
        while sw.poll_transmit(now).is_some() {}
        if i % 13 == 0 {
            let nack = PacketMeta {
                kind: PacketKind::Nack,
                sip: inbound.dip,
                dip: inbound.sip,
                sport: Entropy(inbound.dport),
                dport: inbound.sport.0,
                psn: Psn(psn),
                ingress_port: flow % 4,
                size_bytes: 60,
                ..PacketMeta::default()
            };
            let mut tag = LbTag::NONE;
            let _ = sw.on_ingress(now, &nack, &mut tag, cands);
        }
    }
}

#[test]
fn switch_decisions_allocate_nothing() {
    let mut cands: Vec<EgressCandidate> = (0..8)
        .map(|p| EgressCandidate {
            port: 4 + p,
            queue_bytes: 0,
            tx_bytes: 0,
        })
        .collect();
    let names = std::iter::once("ecmp").chain(
        Algorithm::ALL
            .iter()
            .filter(|a| a.side() == Side::Switch)
            .map(|a| a.name()),
    );
    for name in names {
        let cfg = LbConfig::parse(name, "").unwrap();
        let mut sw = SwitchLb::new(&cfg.switch, 3, 1);
        add_ports(&mut sw);
        add_fabric(&mut sw, 3);
        drive_switch(&mut sw, &mut cands, 0, 1_000); // warm-up: every flow's entry exists
        let before = allocations();
        drive_switch(&mut sw, &mut cands, 1_000, 10_000);
        let after = allocations();
        assert_eq!(
            after - before,
            0,
            "{name}: {} allocations in 10000 packets",
            after - before
        );
    }
    // Themis really filtered in this drive (the test covers its ToR hooks, not just hashing).
    let cfg = LbConfig::parse("themis", "").unwrap();
    let mut sw = SwitchLb::new(&cfg.switch, 3, 1);
    add_ports(&mut sw);
    drive_switch(&mut sw, &mut cands, 0, 2_000);
    let counters = sw.counter_list();
    let get = |n: &str| counters.iter().find(|(k, _)| *k == n).map(|(_, v)| *v);
    assert_eq!(get("themis_sprayed_pkts"), Some(2_000), "{counters:?}");
    assert!(get("themis_nacks_seen").unwrap() > 100, "{counters:?}");

    // The path-based schemes across a whole leaf-spine (2 ToRs, 8 spines), both directions,
    // ACKs, flowlet gaps and their timers (DRE decay, aging) firing.
    for name in ["conga", "letflow"] {
        let cfg = LbConfig::parse(name, "").unwrap();
        let mut fabric = LeafSpine::new(&cfg);
        fabric.drive(0, 2_000); // warm-up: every flowlet and FromLeaf entry exists
        let before = allocations();
        fabric.drive(2_000, 20_000);
        let after = allocations();
        assert_eq!(after - before, 0, "{name}: {} allocations", after - before);
        let total = |counter: &str| fabric.total(counter);
        let p = name.to_owned();
        assert!(total(&(p.clone() + "_flowlets")) > 1_000, "{name}");
        assert!(total(&(p.clone() + "_flowlet_timeouts")) > 100, "{name}");
        assert!(total(&(p.clone() + "_aged_flowlets")) > 0, "{name}");
        assert_eq!(total(&(p.clone() + "_fallbacks")), 0, "{name}");
        assert_eq!(
            total(&(p.clone() + "_transit_pkts")),
            total(&(p + "_untagged_pkts")),
            "{name}: every tagged packet is followed and untagged"
        );
        if name == "conga" {
            assert!(total("conga_feedback_received") > 1_000);
        }
    }
}

/// Host `k` (0..4) of ToR `tor` (3 or 7).
fn host_ip(tor: u32, k: u32) -> u32 {
    0x0b00_0001 + if tor == 3 { 0 } else { 0x800 } + k * 0x100
}

/// The fabric seen from one switch: 4 hosts on each of ToRs 3 and 7; at a ToR, the 8 paths to
/// the other ToR (uplink 4 + s, then the spine's port 0 towards ToR 3 or 1 towards ToR 7).
#[allow(clippy::unwrap_used, reason = "test helper: fixed valid ports")]
fn add_fabric(sw: &mut SwitchLb, me: u32) {
    for tor in [3, 7] {
        for k in 0..4 {
            sw.add_host(host_ip(tor, k), tor);
        }
    }
    if me == 3 || me == 7 {
        let (other, spine_port) = if me == 3 { (7, 1) } else { (3, 0) };
        for s in 0..8 {
            sw.add_path(other, PathId::from_ports(&[4 + s, spine_port]).unwrap());
        }
    }
}

/// ToRs 3 and 7 and spines 20..28 running one scheme.
struct LeafSpine {
    tors: [SwitchLb; 2],
    spines: Vec<SwitchLb>,
    uplinks: Vec<EgressCandidate>,
}

fn single(port: u32) -> [EgressCandidate; 1] {
    [EgressCandidate {
        port,
        queue_bytes: 0,
        tx_bytes: 0,
    }]
}

#[allow(
    clippy::indexing_slicing,
    reason = "test helper: indices are 0/1 and verdicts within the candidates"
)]
impl LeafSpine {
    fn new(cfg: &LbConfig) -> Self {
        let tor = |id: u32| {
            let mut sw = SwitchLb::new(&cfg.switch, id, u64::from(id));
            add_ports(&mut sw);
            add_fabric(&mut sw, id);
            sw
        };
        let spines = (20..28)
            .map(|id| {
                let mut sw = SwitchLb::new(&cfg.switch, id, u64::from(id));
                for port in 0..2 {
                    sw.add_port(PortInfo {
                        port,
                        rate_bps: 100_000_000_000,
                        delay_ns: 1_000,
                        faces_host: false,
                    });
                }
                add_fabric(&mut sw, id);
                sw
            })
            .collect();
        LeafSpine {
            tors: [tor(3), tor(7)],
            spines,
            uplinks: (4..12).flat_map(single).collect(),
        }
    }

    /// One packet from ToR `src` (0 or 1) through a spine to the other ToR's host port.
    fn route(&mut self, now: SimTime, src: usize, pkt: &PacketMeta) {
        let dst = 1 - src;
        let mut tag = LbTag::NONE;
        let v = self.tors[src].on_ingress(now, pkt, &mut tag, &self.uplinks);
        let Verdict::Forward { index, .. } = v else {
            unreachable!("{v:?}")
        };
        let spine = &mut self.spines[index];
        let v = spine.on_ingress(now, pkt, &mut tag, &single(dst as u32));
        assert_eq!(v, Verdict::at(0));
        let host_port = pkt.dip >> 8 & 3;
        let v = self.tors[dst].on_ingress(now, pkt, &mut tag, &single(host_port));
        assert_eq!(v, Verdict::at(0));
        assert!(!tag.present, "the destination ToR removes the tag");
    }

    /// Packets `start..start + n`: 1 us apart with a 150 us pause every 500; 32 flows, half
    /// each way, each data packet answered by an ACK, flows 16..32 silent in every other
    /// 2000-packet phase; due timers fire.
    fn drive(&mut self, start: u32, n: u32) {
        for i in start..start + n {
            let now = SimTime::from_ns(u64::from(i) * 1_000 + u64::from(i / 500) * 150_000);
            for sw in self.tors.iter_mut().chain(self.spines.iter_mut()) {
                if sw.poll_at().is_some_and(|t| t <= now) {
                    sw.on_timer(now);
                }
            }
            let flow = i % 32;
            if flow >= 16 && i / 2_000 % 2 == 1 {
                continue; // half the flows pause for ~2.6 ms: their entries age out and return
            }
            let src = (flow % 2) as usize;
            let (stor, dtor) = if src == 0 { (3, 7) } else { (7, 3) };
            let data = PacketMeta {
                kind: PacketKind::Data,
                sip: host_ip(stor, flow / 2 % 4),
                dip: host_ip(dtor, flow / 8),
                sport: Entropy(1000 + flow as u16),
                dport: 100 + flow as u16,
                psn: Psn(i / 32),
                ingress_port: flow / 2 % 4,
                size_bytes: 1048,
                pg: 3,
                ..PacketMeta::default()
            };
            self.route(now, src, &data);
            let ack = PacketMeta {
                kind: PacketKind::Ack,
                sip: data.dip,
                dip: data.sip,
                sport: Entropy(data.dport),
                dport: data.sport.0,
                size_bytes: 60,
                ..data
            };
            self.route(now, 1 - src, &ack);
        }
    }

    fn total(&self, counter: &str) -> u64 {
        self.tors
            .iter()
            .chain(&self.spines)
            .flat_map(SwitchLb::counter_list)
            .filter(|(k, _)| *k == counter)
            .map(|(_, v)| v)
            .sum()
    }
}
