//! Tests of CONGA (Alizadeh et al., "CONGA: Distributed Congestion-Aware Load Balancing for
//! Datacenters", SIGCOMM 2014) as the reference simulator models it: DRE (§3.2), flowlets, path
//! choice and congestion feedback.

use super::*;
use crate::config::{LbConfig, SwitchLbConfig};
use crate::switch::fabric::test_fabric::{
    data, path, setup_leaf, setup_spine, single, uplinks, HOSTS, SPINES,
};

fn leaf(id: u32) -> Conga {
    let mut c = Conga::new(&CongaConfig::default(), id, EcmpHash::new(id));
    setup_leaf(&mut c, id);
    c
}

fn spine(s: u32) -> Conga {
    let mut c = Conga::new(&CongaConfig::default(), 100 + s, EcmpHash::new(100 + s));
    setup_spine(&mut c);
    c
}

fn us(n: u64) -> SimTime {
    SimTime::from_ns(n * 1_000)
}

/// At 100 Gbps, τ = 50 us, α = 0.2: `C·τ/α` = 25e6 bits, so `CE = floor(X · 64 / 25e6)`
/// and X = 390625 B is one CE step. Sets `port`'s DRE to the middle of step `ce`.
fn set_local_ce(c: &mut Conga, port: u32, ce: u64) {
    c.dre[port as usize] = ce * 390_625 + 195_312;
    assert_eq!(u64::from(c.local_ce(port)), ce);
}

fn set_remote_ce(c: &mut Conga, dst_tor: u32, k: usize, ce: u32) {
    let slot = c.fabric.slot_of(dst_tor).unwrap();
    c.to_leaf[slot][k] = Some(Metric {
        ce,
        updated: SimTime::ZERO,
    });
}

fn forward(
    c: &mut Conga,
    now: SimTime,
    pkt: &PacketMeta,
    tag: &mut LbTag,
    cands: &[EgressCandidate],
    rng: &mut SimRng,
) -> u32 {
    let Verdict::Forward { index, .. } = c.on_ingress(now, pkt, tag, cands, rng) else {
        unreachable!("CONGA never holds or drops")
    };
    cands[index].port
}

/// Sends `pkt` out of its source leaf `c`; returns (uplink, tag).
fn send(c: &mut Conga, now: SimTime, pkt: &PacketMeta, rng: &mut SimRng) -> (u32, LbTag) {
    let mut tag = LbTag::NONE;
    let port = forward(c, now, pkt, &mut tag, &uplinks(), rng);
    (port, tag)
}

#[test]
fn config_defaults_are_the_reference_constants_and_errors_name_the_parameter() {
    let c = LbConfig::parse("conga", "").unwrap();
    assert_eq!(
        c.switch,
        SwitchLbConfig::Conga(CongaConfig {
            flowlet_timeout_ns: 100_000,
            dre_period_ns: 50_000,
            aging_ns: 500_000,
            quantize_bits: 3,
            alpha: 0.2,
            path_samples: 4,
        })
    );
    let c = LbConfig::parse("conga", "path_samples = 2, alpha = 0.5").unwrap();
    assert_eq!(
        c.switch,
        SwitchLbConfig::Conga(CongaConfig {
            path_samples: 2,
            alpha: 0.5,
            ..CongaConfig::default()
        })
    );
    let e = LbConfig::parse("conga", "alpha = 0").unwrap_err();
    assert_eq!(
        e.to_string(),
        "algorithm `conga`, parameter `alpha`: must be in [0.001, 1], got 0"
    );
    let e = LbConfig::parse("conga", "quantize_bits = 17").unwrap_err();
    assert_eq!(e.parameter.as_deref(), Some("quantize_bits"), "{e}");
    let e = LbConfig::parse("conga", "path_samples = 0").unwrap_err();
    assert_eq!(e.parameter.as_deref(), Some("path_samples"), "{e}");
    let e = LbConfig::parse("conga", "dre_period_ns = \"x\"").unwrap_err();
    assert_eq!(e.parameter.as_deref(), Some("dre_period_ns"), "{e}");
}

#[test]
fn quantisation_at_100gbps_matches_the_hand_computation() {
    let c = leaf(0);
    // floor(X * 64 / 25e6), not capped at 2^Q - 1 = 7.
    assert_eq!(c.quantize(2, 0), 0);
    assert_eq!(c.quantize(2, 1_048), 0);
    assert_eq!(c.quantize(2, 390_000), 0);
    assert_eq!(c.quantize(2, 400_000), 1); // 1.024
    assert_eq!(c.quantize(2, 1_000_000), 2); // 2.56
    assert_eq!(c.quantize(2, 3_200_000), 8); // 8.192
    assert_eq!(c.quantize(2, 10_000_000), 25); // 25.6
    assert_eq!(c.quantize(77, 10_000_000), 0, "unknown port");
}

#[test]
fn dre_counts_routed_bytes_and_decays_by_0_8_per_period_from_the_first_packet() {
    let mut c = leaf(0);
    let mut rng = SimRng::new(1);
    assert_eq!(c.poll_at(), None);
    let (port, tag) = send(&mut c, us(10), &data((0, 0), (1, 0), 5), &mut rng);
    assert_eq!(c.dre_bytes(port), 1_048);
    assert_eq!(tag.words[W_CE], 0);
    assert_eq!(
        c.poll_at(),
        Some(us(60)),
        "first decay tau after the first data packet"
    );
    c.on_timer(us(60), &mut rng);
    assert_eq!(c.dre_bytes(port), 838); // 838.4, truncated
    assert_eq!(c.poll_at(), Some(us(110)));
    c.on_timer(us(110), &mut rng);
    assert_eq!(c.dre_bytes(port), 670); // 670.4
                                        // Called late, the missed periods all run: 160, 210, 260 us.
    c.on_timer(us(260), &mut rng);
    assert_eq!(c.dre_bytes(port), 342); // 536, 428, 342
    assert_eq!(c.poll_at(), Some(us(310)));
}

#[test]
fn new_flowlet_takes_the_path_with_the_lowest_max_of_local_and_remote_ce() {
    let mut c = leaf(0);
    let mut rng = SimRng::new(2);
    // Spine k's path: (local, remote) = (5, 0), (0, 3), (2, 4), (1, 6) -> max 5, 3, 4, 6.
    for (k, (local, remote)) in [(5, 0), (0, 3), (2, 4), (1, 6)].into_iter().enumerate() {
        set_local_ce(&mut c, HOSTS + k as u32, local);
        set_remote_ce(&mut c, 1, k, remote);
    }
    for f in 0..100 {
        let (port, tag) = send(&mut c, us(1), &data((0, 0), (1, 0), f), &mut rng);
        assert_eq!(port, HOSTS + 1, "flow {f}");
        assert_eq!(word_path(tag.words[W_PATH]), path(1, 1));
    }
    assert_eq!(c.stats().flowlets, 100);
}

#[test]
fn ties_are_broken_uniformly() {
    // No congestion anywhere: 4 equal paths, 8000 flowlets; chi-square (3 dof, p = 0.01)
    // below 11.34. DRE does not decay here, so keep the packets' local CE at 0 by
    // resetting it.
    let mut c = leaf(0);
    let mut rng = SimRng::new(3);
    let mut counts = [0u32; 4];
    for f in 0..8000u16 {
        let (port, _) = send(&mut c, us(1), &data((0, 1), (1, 1), f), &mut rng);
        counts[(port - HOSTS) as usize] += 1;
        c.dre.iter_mut().for_each(|x| *x = 0);
    }
    let chi2: f64 = counts
        .iter()
        .map(|&n| (f64::from(n) - 2000.0).powi(2) / 2000.0)
        .sum();
    assert!(chi2 < 11.34, "chi2 = {chi2}, {counts:?}");
}

#[test]
fn only_a_window_of_consecutive_paths_is_sampled() {
    // 8 paths (uplinks 2..9), 4 samples: offsets 0..=4 are equally likely; only offset 0
    // sees nothing but the congested paths 0-3, so 1/5 of the flowlets land there.
    let mut c = Conga::new(&CongaConfig::default(), 0, EcmpHash::new(0));
    for port in 0..12 {
        c.add_port(PortInfo {
            port,
            rate_bps: 100_000_000_000,
            delay_ns: 1_000,
            faces_host: port < 2,
        });
    }
    c.add_host(data((0, 0), (1, 0), 0).sip, 0);
    c.add_host(data((0, 0), (1, 0), 0).dip, 1);
    for k in (0..8).rev() {
        c.add_path(1, PathId::from_ports(&[2 + k, 1]).unwrap());
    }
    for k in 0..4 {
        set_remote_ce(&mut c, 1, k, 7);
    }
    let cands: Vec<EgressCandidate> = (2..10).flat_map(single).collect();
    let mut rng = SimRng::new(4);
    let mut congested = 0;
    for f in 0..5000u16 {
        let mut tag = LbTag::NONE;
        let port = forward(
            &mut c,
            us(1),
            &data((0, 0), (1, 0), f),
            &mut tag,
            &cands,
            &mut rng,
        );
        congested += u32::from(port < 6);
        c.dre.iter_mut().for_each(|x| *x = 0);
    }
    // Binomial(5000, 0.2): mean 1000, sd 28.
    assert!((880..1120).contains(&congested), "{congested}");
}

#[test]
fn flowlet_keeps_its_path_for_gaps_up_to_100us() {
    let mut c = leaf(0);
    let mut rng = SimRng::new(5);
    let pkt = data((0, 0), (1, 0), 21);
    let (first, _) = send(&mut c, us(0), &pkt, &mut rng);
    // Make every other path strictly better: an active flowlet must not move.
    for k in 0..SPINES {
        set_local_ce(&mut c, HOSTS + k, u64::from(HOSTS + k == first) * 5);
    }
    assert_eq!(send(&mut c, us(99), &pkt, &mut rng).0, first);
    assert_eq!(send(&mut c, us(199), &pkt, &mut rng).0, first);
    assert_eq!(c.stats().flowlets, 1);
    // 100 us + 1 ns after the last packet: a new flowlet, which leaves the congested port.
    let t = us(299) + SimDuration::from_ns(1);
    assert_ne!(send(&mut c, t, &pkt, &mut rng).0, first);
    let s = c.stats();
    assert_eq!((s.flowlets, s.flowlet_timeouts, s.path_changes), (2, 1, 1));
}

#[test]
fn transit_follows_the_path_bytes_and_raises_ce() {
    let mut sp = spine(2);
    let mut rng = SimRng::new(6);
    set_local_ce(&mut sp, 1, 3);
    let pkt = data((0, 0), (1, 0), 1);
    let fb = (path_word(path(0, 3)), 4);
    let both: Vec<EgressCandidate> = (0..2).flat_map(single).collect();
    for (ce_in, ce_out) in [(1, 3), (5, 5)] {
        let mut tag = Conga::tag_words(path(1, 2), 0, ce_in, fb);
        assert_eq!(forward(&mut sp, us(1), &pkt, &mut tag, &both, &mut rng), 1);
        assert_eq!(tag.words[W_HOP], 1);
        assert_eq!(tag.words[W_CE], ce_out);
        assert_eq!((tag.words[W_FB_PATH], tag.words[W_FB_CE]), fb);
        assert_eq!(word_path(tag.words[W_PATH]), path(1, 2));
    }
    assert_eq!(sp.dre_bytes(1), 3 * 390_625 + 195_312 + 2 * 1_048);
    assert_eq!(sp.stats().transit_pkts, 2);
}

#[test]
fn destination_records_feedback_and_ce_removes_the_tag_and_feeds_back_later() {
    let mut dst = leaf(1);
    let mut rng = SimRng::new(7);
    let pkt = data((0, 0), (1, 1), 1);
    let mut tag = Conga::tag_words(path(1, 2), 1, 6, (path_word(path(0, 3)), 4));
    assert_eq!(
        forward(&mut dst, us(1), &pkt, &mut tag, &single(1), &mut rng),
        1
    );
    assert_eq!(tag, LbTag::NONE);
    assert_eq!(dst.remote_ce(0, path(0, 3)), Some(4));
    assert_eq!(dst.remote_ce(0, path(0, 2)), None);
    assert_eq!(dst.from_leaf(0).collect::<Vec<_>>(), [(path(1, 2), 6)]);
    let s = dst.stats();
    assert_eq!((s.feedback_received, s.untagged_pkts), (1, 1));
    // Its next data packet to leaf 0 carries that FromLeaf entry.
    let (_, tag) = send(&mut dst, us(2), &data((1, 0), (0, 0), 9), &mut rng);
    assert_eq!(word_path(tag.words[W_FB_PATH]), path(1, 2));
    assert_eq!(tag.words[W_FB_CE], 6);
    assert_eq!(dst.stats().feedback_sent, 1);
    // A tag without feedback records only the CE.
    let mut tag = Conga::tag_words(path(1, 0), 1, 2, (NO_FEEDBACK, NO_FEEDBACK));
    forward(&mut dst, us(3), &pkt, &mut tag, &single(1), &mut rng);
    assert_eq!(dst.stats().feedback_received, 1);
    assert_eq!(dst.from_leaf(0).count(), 2);
}

#[test]
fn aging_erases_from_leaf_and_zeroes_to_leaf_after_500us() {
    let mut dst = leaf(1);
    let mut rng = SimRng::new(8);
    let pkt = data((0, 0), (1, 1), 1);
    let mut tag = Conga::tag_words(path(1, 2), 1, 6, (path_word(path(0, 3)), 4));
    forward(&mut dst, us(10), &pkt, &mut tag, &single(1), &mut rng);
    // A flowlet at this ToR too (towards leaf 0), last packet at 10 us.
    send(&mut dst, us(10), &data((1, 0), (0, 0), 9), &mut rng);
    // Aging at 510 us: entries exactly 500 us old stay.
    assert_eq!(dst.next_aging, Some(us(510)));
    dst.on_timer(us(510), &mut rng);
    assert_eq!(dst.from_leaf(0).count(), 1);
    assert_eq!(dst.remote_ce(0, path(0, 3)), Some(4));
    assert_eq!(dst.flowlet_entries(), 1);
    dst.on_timer(us(1_010), &mut rng);
    assert_eq!(dst.from_leaf(0).count(), 0);
    assert_eq!(dst.remote_ce(0, path(0, 3)), Some(0));
    assert_eq!(dst.flowlet_entries(), 0);
    assert_eq!(dst.stats().aged_flowlets, 1);
}

#[test]
fn intra_tor_and_non_data_take_ecmp_and_leave_no_state() {
    let mut c = leaf(0);
    let mut rng = SimRng::new(9);
    let intra = data((0, 0), (0, 1), 3);
    let mut tag = LbTag::NONE;
    assert_eq!(
        forward(&mut c, us(0), &intra, &mut tag, &single(1), &mut rng),
        1
    );
    let ack = PacketMeta {
        kind: PacketKind::Ack,
        ..data((1, 0), (0, 0), 3)
    };
    let up = uplinks();
    let v = c.on_ingress(us(0), &ack, &mut tag, &up, &mut rng);
    assert_eq!(v, Verdict::at(EcmpHash::new(0).index(&ack, up.len())));
    assert_eq!(tag, LbTag::NONE);
    assert!(c.dre.iter().all(|&x| x == 0));
    assert_eq!(c.flowlet_entries(), 0);
}

#[test]
fn feedback_steers_new_flowlets_away_from_a_remotely_congested_path() {
    // Leaf 0 -> leaf 1 over 4 spines; spine 2's link to leaf 1 is congested (CE 6). Leaf 1
    // learns it in FromLeaf, feeds it back on its own data to leaf 0, and leaf 0's new
    // flowlets then avoid spine 2.
    let mut rng = SimRng::new(10);
    let mut leaves = [leaf(0), leaf(1)];
    let mut spines: Vec<Conga> = (0..SPINES).map(spine).collect();
    set_local_ce(&mut spines[2], 1, 6);
    let mut deliver = |leaves: &mut [Conga; 2], now: SimTime, pkt: &PacketMeta| {
        let (s, d) =
            if pkt.sip == data((0, 0), (1, 0), 0).sip || pkt.sip == data((0, 1), (1, 0), 0).sip {
                (0, 1)
            } else {
                (1, 0)
            };
        let (up, mut tag) = send(&mut leaves[s], now, pkt, &mut rng);
        let sp = &mut spines[(up - HOSTS) as usize];
        forward(sp, now, pkt, &mut tag, &single(d as u32), &mut rng);
        forward(&mut leaves[d], now, pkt, &mut tag, &single(0), &mut rng);
        up
    };
    // Leaf 0 sends on every path (64 flows), then leaf 1 answers with 64 data packets.
    for f in 0..64 {
        deliver(&mut leaves, us(1), &data((0, 0), (1, 0), f));
    }
    assert!(leaves[1]
        .from_leaf(0)
        .any(|(p, ce)| p == path(1, 2) && ce == 6));
    for f in 0..64 {
        deliver(&mut leaves, us(2), &data((1, 0), (0, 0), f));
    }
    assert_eq!(leaves[0].remote_ce(1, path(1, 2)), Some(6));
    leaves[0].dre.iter_mut().for_each(|x| *x = 0);
    for f in 1000..1100 {
        assert_ne!(
            deliver(&mut leaves, us(3), &data((0, 1), (1, 1), f)),
            HOSTS + 2
        );
    }
    assert!(leaves[0].stats().feedback_received > 0);
    assert!(leaves[1].stats().feedback_sent > 0);
}

/// The next value of a shared stream (to check how many draws were taken).
fn next_value(shared: &SharedGlibcRand) -> Option<u32> {
    shared.lock().map(|mut g| g.next_rand()).ok()
}

#[test]
fn shared_reference_rand_draws_feedback_window_and_tie_across_switches_in_call_order() {
    // Leaves 0 and 1 (4 paths each, 4 samples) share one stream after srand(1): glibc's
    // values 1804289383, 846930886, 1681692777, 1714636915, 1957747793, 424238335,
    // 719885386, 1649760492, 596516649. A new flowlet draws the window start (% 1, as
    // n >= samples) and the tie among the 4 idle paths (% 4); a packet whose FromLeaf
    // table is not empty first draws the feedback entry.
    let shared = crate::rng::GlibcRand::shared(1);
    let mut a = leaf(0);
    let mut b = leaf(1);
    a.share_reference_rand(std::sync::Arc::clone(&shared));
    b.share_reference_rand(std::sync::Arc::clone(&shared));
    let mut rng = SimRng::new(11);
    let spine_of = |tag: &LbTag, dst: u32| {
        let p = word_path(tag.words[W_PATH]);
        (0..SPINES).find(|&s| path(dst, s) == p)
    };
    // a: no feedback; start 1804289383 % 1, tie 846930886 % 4 = 2.
    let (_, t) = send(&mut a, us(1), &data((0, 0), (1, 0), 1), &mut rng);
    assert_eq!(spine_of(&t, 1), Some(2));
    assert_eq!(t.words[W_FB_PATH], NO_FEEDBACK);
    // b: start 1681692777 % 1, tie 1714636915 % 4 = 3.
    let (_, t) = send(&mut b, us(2), &data((1, 0), (0, 0), 2), &mut rng);
    assert_eq!(spine_of(&t, 0), Some(3));
    // a hears from leaf 1 on its paths 0, 1 and 3 (CE 5, 6, 7): FromLeaf has 3 entries.
    for (k, ce) in [(0, 5), (1, 6), (3, 7)] {
        let mut tag = Conga::tag_words(path(0, k), 1, ce, (NO_FEEDBACK, NO_FEEDBACK));
        forward(
            &mut a,
            us(3),
            &data((1, 1), (0, 1), 3),
            &mut tag,
            &single(0),
            &mut rng,
        );
    }
    a.dre.iter_mut().for_each(|x| *x = 0);
    // a, new flow: feedback 1957747793 % 3 = 2 (path 3, CE 7); start 424238335 % 1;
    // tie 719885386 % 4 = 2.
    let pkt = data((0, 1), (1, 1), 4);
    let (_, t) = send(&mut a, us(4), &pkt, &mut rng);
    assert_eq!(spine_of(&t, 1), Some(2));
    assert_eq!(
        (word_path(t.words[W_FB_PATH]), t.words[W_FB_CE]),
        (path(0, 3), 7)
    );
    // Its next packet keeps the flowlet: only the feedback, 1649760492 % 3 = 0 (path 0).
    let (_, t) = send(&mut a, us(5), &pkt, &mut rng);
    assert_eq!(spine_of(&t, 1), Some(2));
    assert_eq!(
        (word_path(t.words[W_FB_PATH]), t.words[W_FB_CE]),
        (path(0, 0), 5)
    );
    // 8 draws taken: the next value is glibc's ninth.
    assert_eq!(next_value(&shared), Some(596_516_649));
}

#[test]
fn shared_reference_rand_draws_the_window_start_only_with_enough_paths() {
    // 2 samples of 4 paths: start % 3, then tie % ties (drawn even with one tie).
    // srand(1): 1804289383 % 3 = 1 -> window paths 1, 2; path 1 is remotely congested,
    // so path 2 alone: 846930886 % 1. Next flow: 1681692777 % 3 = 0 -> paths 0, 1: path 0;
    // 1714636915 % 1. Next: 1957747793 % 3 = 2 -> paths 2, 3 tie: 424238335 % 2 = 1.
    let shared = crate::rng::GlibcRand::shared(1);
    let two = CongaConfig {
        path_samples: 2,
        ..CongaConfig::default()
    };
    let mut c = Conga::new(&two, 0, EcmpHash::new(0));
    setup_leaf(&mut c, 0);
    c.share_reference_rand(std::sync::Arc::clone(&shared));
    set_remote_ce(&mut c, 1, 1, 3);
    let mut rng = SimRng::new(12);
    let mut spines = Vec::new();
    for f in 0..3 {
        let (_, t) = send(&mut c, us(1), &data((0, 0), (1, 0), f), &mut rng);
        let p = word_path(t.words[W_PATH]);
        spines.push((0..SPINES).find(|&s| path(1, s) == p));
        c.dre.iter_mut().for_each(|x| *x = 0);
    }
    assert_eq!(spines, [Some(2), Some(0), Some(3)]);
    assert_eq!(next_value(&shared), Some(719_885_386));
    // 8 samples of 4 paths: the reference draws no start, only the tie among all 4:
    // srand(1): 1804289383 % 4 = 3.
    let shared = crate::rng::GlibcRand::shared(1);
    let eight = CongaConfig {
        path_samples: 8,
        ..CongaConfig::default()
    };
    let mut c = Conga::new(&eight, 0, EcmpHash::new(0));
    setup_leaf(&mut c, 0);
    c.share_reference_rand(std::sync::Arc::clone(&shared));
    let (_, t) = send(&mut c, us(1), &data((0, 0), (1, 0), 0), &mut rng);
    assert_eq!(word_path(t.words[W_PATH]), path(1, 3));
    assert_eq!(next_value(&shared), Some(846_930_886));
}
