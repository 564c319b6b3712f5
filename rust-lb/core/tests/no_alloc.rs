//! The per-packet path allocates nothing: every algorithm's `next_entropy`, `on_feedback` and
//! `on_timer`, and every switch scheme's `choose` and ToR hooks, run under a counting global
//! allocator after warm-up.
#![allow(unsafe_code, reason = "a GlobalAlloc wrapper is unsafe by definition")]
#![allow(missing_docs, reason = "test binary")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use rdma_lb_core::config::LbConfig;
use rdma_lb_core::host::{Feedback, FeedbackKind, HostLb, HostLbGroup, SendCx};
use rdma_lb_core::switch::{EgressCandidate, PacketKind, PacketMeta, SwitchLb};
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
        };
        if let Some(c) = cands.get_mut((i % 8) as usize) {
            c.queue_bytes = u64::from(i.wrapping_mul(2_654_435_761) % 100_000);
        }
        let k = sw.choose(SimTime::from_ns(u64::from(i)), &out, cands);
        assert!(k.index < cands.len());
        let inbound = PacketMeta {
            sip: out.dip,
            dip: out.sip,
            psn: Psn(psn ^ 1), // pairwise reordered
            ingress_port: 4 + i % 8,
            ..out
        };
        sw.on_data_to_host(SimTime::from_ns(u64::from(i)), &inbound, flow % 4);
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
            };
            sw.on_nack_from_host(SimTime::from_ns(u64::from(i)), &nack, 8);
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
        for port in 0..4 {
            sw.add_host_port(port, 100_000_000_000, 1_000);
        }
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
    for port in 0..4 {
        sw.add_host_port(port, 100_000_000_000, 1_000);
    }
    drive_switch(&mut sw, &mut cands, 0, 2_000);
    let s = sw.themis_stats().unwrap();
    assert!(s.sprayed_pkts == 2_000 && s.nacks_seen > 100, "{s:?}");
}
