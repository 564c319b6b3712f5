//! The per-packet path allocates nothing: every algorithm's `next_entropy`, `on_feedback` and
//! `on_timer`, and the switch's `choose`, run under a counting global allocator after warm-up.
#![allow(unsafe_code, reason = "a GlobalAlloc wrapper is unsafe by definition")]
#![allow(missing_docs, reason = "test binary")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use rdma_lb_core::config::LbConfig;
use rdma_lb_core::host::{Feedback, FeedbackKind, HostLb, SendCx};
use rdma_lb_core::switch::{EgressCandidate, PacketKind, PacketMeta, SwitchLb};
use rdma_lb_core::{Algorithm, Entropy, Psn, SimDuration, SimTime};

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
fn switch_decisions_allocate_nothing() {
    let cfg = LbConfig::parse("ecmp", "").unwrap();
    let mut sw = SwitchLb::new(&cfg.switch, 3, 1);
    let cands: Vec<EgressCandidate> = (0..8)
        .map(|p| EgressCandidate {
            port: p,
            queue_bytes: u64::from(p) * 1000,
            tx_bytes: 0,
        })
        .collect();
    let before = allocations();
    for i in 0..10_000u32 {
        let pkt = PacketMeta {
            kind: PacketKind::Data,
            sip: 1,
            dip: 2,
            sport: Entropy((i % 65_536) as u16),
            dport: 100,
            psn: Psn(i),
            ingress_port: 0,
            size_bytes: 1048,
        };
        let k = sw.choose(SimTime::from_ns(u64::from(i)), &pkt, &cands);
        assert!(k < cands.len());
    }
    assert_eq!(allocations() - before, 0);
}
