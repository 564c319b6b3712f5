//! Workload generators: offered load, size distribution (Kolmogorov–Smirnov), determinism,
//! collective structure.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::collections::HashMap;

use common::data;
use rdma_lb_scenario::cdf::{parse_cdf_file, parse_cdf_str, Cdf};
use rdma_lb_scenario::topology::LeafSpine;
use rdma_lb_scenario::workload::{
    expand_collective, place_ranks, poisson_flows, CollectiveSpec, Placement, PoissonSpec,
};
use rdma_lb_scenario::{CollectiveKind, Flow};

const G100: u64 = 100_000_000_000;

fn spec(hosts: u32, load: f64, duration_ns: u64, seed: u64) -> PoissonSpec {
    PoissonSpec {
        hosts: (0..hosts).map(|h| (h, G100)).collect(),
        load,
        start_ns: 2_000_000_000,
        duration_ns,
        pg: 3,
        seed,
    }
}

fn offered(flows: &[Flow], hosts: u32, duration_ns: u64) -> f64 {
    let bytes: u64 = flows.iter().map(|f| f.size_bytes).sum();
    bytes as f64 * 8.0 / (f64::from(hosts) * G100 as f64 * duration_ns as f64 * 1e-9)
}

#[test]
fn offered_load_is_within_3_percent_of_target() {
    let ali = parse_cdf_file(&data("conweave/traffic_gen/AliStorage2019.txt")).unwrap();
    let fb = parse_cdf_file(&data("conweave/traffic_gen/FbHdp2015.txt")).unwrap();
    // 128 hosts, 50 ms: ~490k AliStorage flows at 25 % (as `traffic_gen.py`: ≈ 7,650
    // flows/host/0.1 s).
    for (cdf, name, load, dur) in [
        (&ali, "AliStorage2019", 0.25, 50_000_000),
        (&ali, "AliStorage2019", 0.40, 50_000_000),
        (&fb, "FbHdp2015", 0.25, 200_000_000),
    ] {
        let flows = poisson_flows(&spec(128, load, dur, 11), cdf);
        let got = offered(&flows, 128, dur);
        println!(
            "{name} load {load}: {} flows, offered {got:.4}",
            flows.len()
        );
        assert!(
            (got / load - 1.0).abs() < 0.03,
            "{name}: offered {got} vs {load}"
        );
        assert!(
            flows.windows(2).all(|w| w[0].start_ns <= w[1].start_ns),
            "time-sorted"
        );
        assert!(flows.iter().all(|f| f.src != f.dst
            && f.start_ns >= 2_000_000_000
            && f.start_ns < 2_000_000_000 + dur));
    }
    // Flow count: 25 % of 100 Gbps with a 40,869.8 B mean → 13.08 µs mean gap per host.
    let flows = poisson_flows(&spec(128, 0.25, 50_000_000, 3), &ali);
    let expect = 128.0 * 50_000.0 / 13.0784;
    assert!(
        ((flows.len() as f64) / expect - 1.0).abs() < 0.01,
        "{} vs {expect}",
        flows.len()
    );
}

/// Kolmogorov–Smirnov distance between integer samples and the piecewise-linear CDF they
/// were drawn from by inverse CDF + truncation: P(S ≤ k) = F(k + 1), P(S < k) = F(k).
fn ks(samples: &mut [u64], cdf: &Cdf) -> f64 {
    samples.sort_unstable();
    let n = samples.len() as f64;
    let mut d: f64 = 0.0;
    let mut i = 0;
    while i < samples.len() {
        let k = samples[i];
        let mut j = i;
        while j < samples.len() && samples[j] == k {
            j += 1;
        }
        let below = i as f64 / n; // empirical P(S < k)
        let at_or_below = j as f64 / n; // empirical P(S ≤ k)
        d = d
            .max((at_or_below - cdf.cdf_at(k as f64 + 1.0)).abs())
            .max((below - cdf.cdf_at(k as f64)).abs());
        i = j;
    }
    d
}

#[test]
fn sizes_follow_the_cdf_kolmogorov_smirnov() {
    for (file, dur_ns) in [
        ("conweave/traffic_gen/AliStorage2019.txt", 20_000_000),
        ("conweave/traffic_gen/FbHdp2015.txt", 20_000_000),
        ("hpcc/traffic_gen/WebSearch_distribution.txt", 200_000_000),
    ] {
        let cdf = parse_cdf_file(&data(file)).unwrap();
        let flows = poisson_flows(&spec(64, 0.3, dur_ns, 5), &cdf);
        let mut sizes: Vec<u64> = flows.iter().map(|f| f.size_bytes).collect();
        let n = sizes.len() as f64;
        let critical = 1.628 / n.sqrt(); // α = 0.01
        let d = ks(&mut sizes, &cdf);
        println!("{file}: n = {n}, D = {d:.5}, critical {critical:.5}");
        assert!(n > 2_000.0, "{file}: too few samples ({n})");
        assert!(d < critical, "{file}: D = {d} ≥ {critical}");
        // The test can fail: the same samples against a CDF with sizes 10 % larger.
        let shifted: String = cdf
            .points()
            .iter()
            .map(|(s, p)| format!("{} {p}\n", s * 1.1))
            .collect();
        let other = parse_cdf_str("shifted", &shifted).unwrap();
        let d_other = ks(&mut sizes, &other);
        assert!(
            d_other > critical,
            "{file}: shifted CDF not rejected, D = {d_other}"
        );
    }
}

#[test]
fn same_seed_same_flows_different_seed_different() {
    let cdf = parse_cdf_file(&data("conweave/traffic_gen/AliStorage2019.txt")).unwrap();
    let a = poisson_flows(&spec(16, 0.3, 1_000_000, 42), &cdf);
    let b = poisson_flows(&spec(16, 0.3, 1_000_000, 42), &cdf);
    let c = poisson_flows(&spec(16, 0.3, 1_000_000, 43), &cdf);
    assert!(!a.is_empty());
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(
        a.iter().map(|f| f.id).collect::<Vec<_>>(),
        (0..a.len() as u32).collect::<Vec<_>>()
    );
}

#[test]
fn ring_allreduce_structure() {
    let n = 8usize;
    let size: u64 = 8 << 20;
    let s = CollectiveSpec {
        kind: CollectiveKind::AllreduceRing,
        ranks: (100..100 + n as u32).collect(),
        size_bytes: size,
        start_ns: 5,
        pg: 3,
        seed: 0,
        in_order: false,
    };
    let (flows, coll) = expand_collective(&s, 4, 10).unwrap();
    let steps = 2 * (n - 1);
    assert_eq!(flows.len(), steps * n, "2(N−1) steps × N flows");
    assert_eq!(coll.group, 4);
    assert_eq!(
        coll.flow_ids,
        (10..10 + (steps * n) as u32).collect::<Vec<_>>()
    );
    let mut sent: HashMap<u32, u64> = HashMap::new();
    for (i, f) in flows.iter().enumerate() {
        let (k, r) = (i / n, i % n);
        assert_eq!(f.id, 10 + i as u32);
        assert_eq!(f.src, 100 + r as u32);
        assert_eq!(f.dst, 100 + ((r + 1) % n) as u32, "to the ring successor");
        assert_eq!(f.size_bytes, size / n as u64);
        if k == 0 {
            assert!(f.after.is_empty());
        } else {
            // Waits for the step-(k−1) flow into rank r, i.e. from rank r−1.
            let prev = &flows[(k - 1) * n + (r + n - 1) % n];
            assert_eq!(f.after, vec![prev.id]);
            assert_eq!(prev.dst, f.src);
        }
        *sent.entry(f.src).or_default() += f.size_bytes;
    }
    for (_, b) in sent {
        assert_eq!(
            b,
            2 * (n as u64 - 1) * size / n as u64,
            "2(N−1)/N × size per rank"
        );
    }
}

#[test]
fn ring_steps_in_order_wait_for_the_rank_s_own_step_before() {
    let n = 4usize;
    let mut s = CollectiveSpec {
        kind: CollectiveKind::ReducescatterRing,
        ranks: (0..n as u32).collect(),
        size_bytes: 4000,
        start_ns: 0,
        pg: 3,
        seed: 0,
        in_order: false,
    };
    let (free, _) = expand_collective(&s, 0, 20).unwrap();
    assert!(free.iter().all(|f| f.after_ready.is_empty()));
    s.in_order = true;
    let (ordered, _) = expand_collective(&s, 0, 20).unwrap();
    for (i, f) in ordered.iter().enumerate() {
        let (k, r) = (i / n, i % n);
        assert_eq!(f.after, free[i].after, "the data dependency unchanged");
        if k == 0 {
            assert!(f.after_ready.is_empty());
        } else {
            let own = &ordered[(k - 1) * n + r];
            assert_eq!(f.after_ready, vec![own.id]);
            assert_eq!(
                (own.src, own.dst),
                (f.src, f.dst),
                "the same ring neighbour"
            );
        }
    }
}

#[test]
fn alltoall_permutation_incast() {
    let ranks: Vec<u32> = (0..6).collect();
    let mk = |kind, seed| CollectiveSpec {
        kind,
        ranks: ranks.clone(),
        size_bytes: 6000,
        start_ns: 0,
        pg: 3,
        seed,
        in_order: false,
    };
    let (a2a, _) = expand_collective(&mk(CollectiveKind::Alltoall, 0), 0, 0).unwrap();
    assert_eq!(a2a.len(), 30);
    let mut pairs: Vec<(u32, u32)> = a2a.iter().map(|f| (f.src, f.dst)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    assert_eq!(pairs.len(), 30, "every ordered pair once");
    assert!(a2a.iter().all(|f| f.size_bytes == 1000 && f.src != f.dst));

    // Pairwise: the same (src, dst, size) set in 5 steps; step i sends r -> r+i and waits for
    // the rank's own send and its receive (from r-i+1) of step i-1.
    let (pw, _) = expand_collective(&mk(CollectiveKind::AlltoallPairwise, 0), 0, 10).unwrap();
    let mut pw_pairs: Vec<(u32, u32)> = pw.iter().map(|f| (f.src, f.dst)).collect();
    pw_pairs.sort_unstable();
    assert_eq!(
        pw_pairs, pairs,
        "the same ordered pairs as the simultaneous AlltoAll"
    );
    for (k, f) in pw.iter().enumerate() {
        let (step, r) = (k / 6 + 1, k % 6);
        assert_eq!(f.id, 10 + k as u32);
        assert_eq!((f.src, f.dst), (r as u32, ((r + step) % 6) as u32));
        if step == 1 {
            assert!(f.after.is_empty());
        } else {
            let prev = |rank: usize| 10 + ((step - 2) * 6 + rank) as u32;
            let from = (r + 6 - (step - 1)) % 6;
            assert_eq!(f.after, vec![prev(r), prev(from)], "flow {k}");
            // The receive it waits for goes into rank r.
            assert_eq!(pw[(step - 2) * 6 + from].dst, r as u32);
        }
    }

    let (p1, _) = expand_collective(&mk(CollectiveKind::Permutation, 1), 0, 0).unwrap();
    let (p2, _) = expand_collective(&mk(CollectiveKind::Permutation, 1), 0, 0).unwrap();
    assert_eq!(p1, p2, "seeded");
    let mut dsts: Vec<u32> = p1.iter().map(|f| f.dst).collect();
    dsts.sort_unstable();
    assert_eq!(dsts, ranks, "every rank receives once");
    assert!(p1.iter().all(|f| f.src != f.dst && f.size_bytes == 6000));
    let differs = (2..20).any(|s| {
        expand_collective(&mk(CollectiveKind::Permutation, s), 0, 0)
            .unwrap()
            .0
            != p1
    });
    assert!(differs, "the seed changes the permutation");

    let (inc, _) = expand_collective(&mk(CollectiveKind::Incast, 0), 0, 0).unwrap();
    assert_eq!(inc.len(), 5);
    assert!(inc
        .iter()
        .all(|f| f.dst == 0 && f.src != 0 && f.size_bytes == 6000));
}

#[test]
fn one_rank_per_tor_placement_as_themis() {
    let t = LeafSpine {
        leaves: 16,
        hosts_per_leaf: 16,
        spines: 16,
        host_rate_bps: 400_000_000_000,
        fabric_rate_bps: 400_000_000_000,
        delay_ns: 1000,
    }
    .build()
    .unwrap();
    let groups = place_ranks(&t, Placement::OnePerTor, 16, 16).unwrap();
    assert_eq!(groups.len(), 16);
    let mut all: Vec<u32> = groups.iter().flatten().copied().collect();
    all.sort_unstable();
    assert_eq!(
        all,
        (0..256).collect::<Vec<_>>(),
        "every NIC in exactly one group"
    );
    for (g, ranks) in groups.iter().enumerate() {
        for (r, &h) in ranks.iter().enumerate() {
            assert_eq!(h, (r * 16 + g) as u32);
            assert_eq!(t.tor_of(h), Some(256 + r as u32), "rank r under ToR r");
        }
    }
    let c = place_ranks(&t, Placement::Consecutive, 2, 16).unwrap();
    assert_eq!(c[1], (16..32).collect::<Vec<_>>());
    assert!(place_ranks(&t, Placement::OnePerTor, 17, 16)
        .unwrap_err()
        .contains("needs 17 hosts under every ToR"));
    assert!(place_ranks(&t, Placement::OnePerTor, 1, 17)
        .unwrap_err()
        .contains("needs 17 ToRs"));
    assert!(place_ranks(&t, Placement::Consecutive, 17, 16)
        .unwrap_err()
        .contains("need 272 hosts"));
}
