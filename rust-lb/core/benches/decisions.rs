//! Cost of one decision (`next_entropy`) and one feedback (`on_feedback`) per algorithm, of
//! one switch egress choice per switch scheme, and of Themis-D's two ToR hooks (the NACK
//! bench includes the 8 data observations that refill the queue), in Rust.
//! Run: `cargo bench -p rdma-lb-core --bench decisions`.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    missing_docs,
    reason = "benchmark harness: fixed valid configs; criterion macros generate undocumented items"
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use rdma_lb_core::config::{LbConfig, SwitchLbConfig};
use rdma_lb_core::host::{Feedback, FeedbackKind, HostLb, SendCx};
use rdma_lb_core::rng::HtsimRand;
use rdma_lb_core::switch::{
    EgressCandidate, LbTag, PacketKind, PacketMeta, PathId, PortInfo, SwitchLb,
};

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
use rdma_lb_core::{Algorithm, Entropy, Psn, Side, SimDuration, SimTime};

/// The fabric around ToR 3 (the one benchmarked): its hosts `0x0b00_0001 + k * 0x100`
/// (k < 4), ToR 7's hosts from `0x0b00_0801`, and 8 paths to ToR 7 (uplink 4 + s, then the
/// spine's port 1). Only the path-based schemes (CONGA, LetFlow) use it.
fn add_fabric(sw: &mut SwitchLb) {
    for k in 0..4 {
        sw.add_host(0x0b00_0001 + k * 0x100, 3);
        sw.add_host(0x0b00_0801 + k * 0x100, 7);
    }
    for s in 0..8 {
        sw.add_path(7, PathId::from_ports(&[4 + s, 1]).unwrap());
    }
}

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
                    every_arrival_answered: false,
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
                    last_hop: false,
                };
                lb.on_feedback(black_box(&fb));
            });
        });
    }
}

/// A data packet of flow `flow` (0..16) entering a ToR from host port `flow % 4`.
fn data_pkt(flow: u16, psn: u32) -> PacketMeta {
    PacketMeta {
        kind: PacketKind::Data,
        sip: 0x0b00_0001 + u32::from(flow % 4) * 0x100,
        dip: 0x0b00_0801,
        sport: Entropy(1000 + flow),
        dport: flow,
        psn: Psn(psn),
        ingress_port: u32::from(flow % 4),
        size_bytes: 1048,
        ..PacketMeta::default()
    }
}

fn switch(c: &mut Criterion) {
    // Every switch scheme (and the ECMP hash the host schemes run over), 8 candidates whose
    // queues change every packet, 16 flows entering from the ToR's 4 host ports.
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
        add_fabric(&mut sw);
        // Time stands still for the per-packet schemes; the flowlet schemes get a packet every
        // 100 ns with a 120 us pause every 4096 packets (every flow starts a new flowlet then),
        // and their timers (DRE decay, aging) run when due.
        let timed = matches!(name, "conga" | "letflow");
        let mut i = 0u32;
        c.bench_function(&format!("choose/{name}-8"), |b| {
            b.iter(|| {
                i = i.wrapping_add(1);
                let k = (i % 8) as usize;
                cands[k].queue_bytes = u64::from(i.wrapping_mul(2_654_435_761) % 100_000);
                let pkt = data_pkt((i % 16) as u16, i / 16);
                let now = if timed {
                    let now = SimTime::from_ns(u64::from(i) * 100 + u64::from(i / 4096) * 120_000);
                    if sw.poll_at().is_some_and(|t| t <= now) {
                        sw.on_timer(now);
                    }
                    now
                } else {
                    SimTime::ZERO
                };
                let mut tag = LbTag::NONE;
                black_box(sw.on_ingress(now, black_box(&pkt), &mut tag, &cands))
            });
        });
    }
    // htsim's ECMP (the REPS artifact's switches): hash of the host pair, the entropy and the
    // salt, through the ToR's shuffle of its 8 uplinks (drawn at the first packet).
    let stream = std::sync::Arc::new(std::sync::Mutex::new(HtsimRand::new(42)));
    let mut sw =
        SwitchLb::htsim_ecmp(&SwitchLbConfig::EcmpHash, 1_608_637_542, true, stream, 1).unwrap();
    add_ports(&mut sw);
    let mut i = 0u32;
    c.bench_function("choose/htsim-ecmp-8", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let pkt = data_pkt((i % 16) as u16, i / 16);
            let mut tag = LbTag::NONE;
            black_box(sw.on_ingress(SimTime::ZERO, black_box(&pkt), &mut tag, &cands))
        });
    });
    // Themis-D at the destination ToR: data to a host, and a NACK from it every 8 packets.
    let cfg = LbConfig::parse("themis", "").unwrap();
    let mut sw = SwitchLb::new(&cfg.switch, 3, 1);
    add_ports(&mut sw);
    let mut psn = 0u32;
    c.bench_function("themis/on_data_to_host", |b| {
        b.iter(|| {
            psn = psn.wrapping_add(1);
            let mut pkt = data_pkt((psn % 16) as u16, psn / 16);
            pkt.ingress_port = 5;
            sw.on_egress(SimTime::ZERO, black_box(&pkt), &LbTag::NONE, 0);
            black_box(sw.poll_transmit(SimTime::ZERO))
        });
    });
    c.bench_function("themis/on_nack_from_host", |b| {
        b.iter(|| {
            psn = psn.wrapping_add(1);
            // Keep the queues filled: 8 data packets, then the NACK.
            let flow = (psn % 16) as u16;
            for k in 0..8 {
                let mut pkt = data_pkt(flow, psn * 8 + (k ^ 1));
                pkt.ingress_port = 5;
                sw.on_egress(SimTime::ZERO, &pkt, &LbTag::NONE, 0);
                while sw.poll_transmit(SimTime::ZERO).is_some() {}
            }
            let data = data_pkt(flow, 0);
            let nack = PacketMeta {
                kind: PacketKind::Nack,
                sip: data.dip,
                dip: data.sip,
                sport: Entropy(data.dport),
                dport: data.sport.0,
                psn: Psn(psn * 8),
                ingress_port: 0,
                size_bytes: 60,
                ..PacketMeta::default()
            };
            let mut tag = LbTag::NONE;
            black_box(sw.on_ingress(SimTime::ZERO, black_box(&nack), &mut tag, &cands))
        });
    });
}

criterion_group!(benches, host, switch);
criterion_main!(benches);
