//! Cost of one decision (`next_entropy`) and one feedback (`on_feedback`) per algorithm, and of
//! one switch egress choice, in Rust. Run: `cargo bench -p rdma-lb-core --bench decisions`.
#![allow(
    clippy::unwrap_used,
    missing_docs,
    reason = "benchmark harness: fixed valid configs; criterion macros generate undocumented items"
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use rdma_lb_core::config::LbConfig;
use rdma_lb_core::host::{Feedback, FeedbackKind, HostLb, SendCx};
use rdma_lb_core::switch::{EgressCandidate, PacketKind, PacketMeta, SwitchLb};
use rdma_lb_core::{Algorithm, Entropy, Psn, SimDuration, SimTime};

fn host(c: &mut Criterion) {
    for alg in Algorithm::ALL {
        let cfg = LbConfig::parse(alg.name(), "").unwrap();
        let mut lb = HostLb::new(&cfg.host, 1);
        let mut psn = 0u32;
        c.bench_function(&format!("next_entropy/{alg}"), |b| {
            b.iter(|| {
                psn = psn.wrapping_add(1);
                let cx = SendCx {
                    now: SimTime::from_ns(u64::from(psn) * 100),
                    psn: Psn(psn),
                    retransmission: false,
                    inflight_pkts: 8,
                };
                black_box(lb.next_entropy(black_box(&cx)))
            });
        });
        c.bench_function(&format!("on_feedback/{alg}"), |b| {
            b.iter(|| {
                psn = psn.wrapping_add(1);
                let fb = Feedback {
                    kind: FeedbackKind::Ack,
                    now: SimTime::from_ns(u64::from(psn) * 100),
                    entropy: Entropy((psn % 256) as u16),
                    psn: Psn(psn),
                    rtt: Some(SimDuration::from_ns(8_320)),
                    ecn: psn % 16 == 0,
                };
                lb.on_feedback(black_box(&fb));
            });
        });
    }
}

fn switch(c: &mut Criterion) {
    let cfg = LbConfig::parse("ecmp", "").unwrap();
    let mut sw = SwitchLb::new(&cfg.switch, 3, 1);
    let cands: Vec<EgressCandidate> = (0..8)
        .map(|p| EgressCandidate {
            port: p,
            queue_bytes: 0,
            tx_bytes: 0,
        })
        .collect();
    let mut i = 0u16;
    c.bench_function("choose/ecmp-hash-8", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let pkt = PacketMeta {
                kind: PacketKind::Data,
                sip: 0x0b00_0001,
                dip: 0x0b00_0101,
                sport: Entropy(i),
                dport: 100,
                psn: Psn(0),
                ingress_port: 0,
                size_bytes: 1048,
            };
            black_box(sw.choose(SimTime::ZERO, black_box(&pkt), &cands))
        });
    });
}

criterion_group!(benches, host, switch);
criterion_main!(benches);
