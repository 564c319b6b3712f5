//! Tests of Whack-a-Mole (M. Luby and J. Byers, "Whack-a-Mole: Deterministic Packet Spraying Across
//! Multiple Network Paths", arXiv:2509.18519): the counter's window bounds (§4), the embodiments
//! (§7), the whacks, loss detection and recovery, and the time-varying profile of the paper's
//! two-path example (§8).

use super::*;
use crate::host::FeedbackKind;
use crate::time::{SimDuration, SimTime};
use crate::units::Psn;
use proptest::prelude::*;

const ALL_HOW: [Redistribution; 4] = [
    Redistribution::EvenEach,
    Redistribution::EvenAll,
    Redistribution::EvenOthers,
    Redistribution::Proportional,
];

fn profile(balls: &[u32], log2_m: u32) -> Profile {
    Profile::from_balls(balls.to_vec(), log2_m).unwrap()
}

#[test]
fn bit_reversal_of_the_low_bits() {
    assert_eq!(bit_reverse(0b001, 3), 0b100);
    assert_eq!(bit_reverse(0b110, 3), 0b011);
    assert_eq!(bit_reverse(0b0001, 4), 0b1000);
    assert_eq!(bit_reverse(0b1011, 4), 0b1101);
    assert_eq!(bit_reverse(1, 16), 1 << 15);
    // The plain counter visits balls in van der Corput order: 0, 4, 2, 6, 1, 5, 3, 7.
    let c = SprayCounter::with_seed(3, Shuffle::None, 0, 1);
    let order: Vec<u32> = (0..8).map(|j| c.ball(j)).collect();
    assert_eq!(order, vec![0, 4, 2, 6, 1, 5, 3, 7]);
}

#[test]
fn every_shuffle_is_a_permutation_of_the_balls() {
    let mut rng = SimRng::new(1);
    for shuffle in [Shuffle::None, Shuffle::Method1, Shuffle::Method2] {
        for log2_m in 1..=10 {
            let c = SprayCounter::random(log2_m, shuffle, &mut rng);
            let mut seen: Vec<u32> = (0..1 << log2_m).map(|j| c.ball(j)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..1 << log2_m).collect::<Vec<u32>>(), "{shuffle:?}");
        }
    }
}

#[test]
fn seeds_are_in_range_and_differ_across_sources() {
    let mut rng = SimRng::new(2);
    let seeds: Vec<(u32, u32)> = (0..32)
        .map(|_| {
            let c = SprayCounter::random(10, Shuffle::Method1, &mut rng);
            assert!(c.s_a < 1024 && c.s_b < 1024 && c.s_b % 2 == 1);
            (c.s_a, c.s_b)
        })
        .collect();
    let mut d = seeds.clone();
    d.sort_unstable();
    d.dedup();
    assert_eq!(d.len(), seeds.len());
    // m = 2: s_b can only be 1.
    let c = SprayCounter::random(1, Shuffle::Method1, &mut rng);
    assert_eq!(c.s_b, 1);
}

#[test]
fn path_of_uses_the_cumulative_counts() {
    let p = profile(&[2, 3, 3], 3);
    assert_eq!(p.cumulative(), &[2, 5, 8]);
    let paths: Vec<usize> = (0..8).map(|x| p.path_of(x)).collect();
    assert_eq!(paths, vec![0, 0, 1, 1, 1, 2, 2, 2]);
    // Empty bins are never chosen.
    let p = profile(&[0, 4, 0, 4], 3);
    let paths: Vec<usize> = (0..8).map(|x| p.path_of(x)).collect();
    assert_eq!(paths, vec![1, 1, 1, 1, 3, 3, 3, 3]);
}

#[test]
fn uniform_profile_spreads_the_remainder_over_the_first_bins() {
    let p = Profile::uniform(3, 4);
    assert_eq!(p.balls(), &[6, 5, 5]);
    assert_eq!(p.total(), 16);
    assert!(
        Profile::from_balls(vec![1, 2], 2).is_none(),
        "sums to 3, not 4"
    );
}

#[test]
fn one_period_sends_exactly_the_profile() {
    let p = profile(&[5, 0, 8, 3], 4);
    let mut rng = SimRng::new(3);
    for shuffle in [Shuffle::None, Shuffle::Method1, Shuffle::Method2] {
        let mut c = SprayCounter::random(4, shuffle, &mut rng);
        // Any 16 consecutive packets (here from counter 5) match the profile exactly.
        for _ in 0..5 {
            c.next_ball();
        }
        let mut counts = [0u32; 4];
        for _ in 0..16 {
            counts[p.path_of(c.next_ball())] += 1;
        }
        assert_eq!(counts, [5, 0, 8, 3], "{shuffle:?}");
    }
}

#[test]
fn embodiment_1_spreads_over_all_with_rotating_residuals() {
    let mut p = profile(&[4, 4, 4, 4], 4);
    // Whack bin 1 by 3: ⌊3/4⌋ = 0 each, 3 leftovers to bins 0, 1, 2 from ρ = 0.
    p.apply(&[0, 3, 0, 0], Redistribution::EvenEach);
    assert_eq!(p.balls(), &[5, 2, 5, 4]);
    assert_eq!(p.residual_index(), 3);
    // Again by 1: the leftover goes to bin 3 (ρ persists), then ρ wraps to 0.
    p.apply(&[0, 1, 0, 0], Redistribution::EvenEach);
    assert_eq!(p.balls(), &[5, 1, 5, 5]);
    assert_eq!(p.residual_index(), 0);
    // 5 balls from bin 0: 1 to each (itself included), 1 leftover at ρ = 0.
    p.apply(&[5, 0, 0, 0], Redistribution::EvenEach);
    assert_eq!(p.balls(), &[2, 2, 6, 6]);
    assert_eq!(p.cumulative(), &[2, 4, 10, 16]);
}

#[test]
fn embodiment_1_takes_bins_one_at_a_time() {
    let mut p = profile(&[4, 4, 4, 4], 4);
    // Bin 0 first: 2 balls → +0 each, leftovers to 0, 1 (ρ → 2) = [3, 5, 4, 4];
    // then bin 2 (3 balls) → leftovers to 2, 3, 0 (ρ → 1) = [4, 5, 2, 5].
    p.apply(&[2, 0, 3, 0], Redistribution::EvenEach);
    assert_eq!(p.balls(), &[4, 5, 2, 5]);
    assert_eq!(p.residual_index(), 1);
}

#[test]
fn embodiment_2_spreads_the_total_over_all() {
    let mut p = profile(&[4, 4, 4, 4], 4);
    // R = 5: 1 each, 1 leftover at ρ = 0.
    p.apply(&[2, 0, 3, 0], Redistribution::EvenAll);
    assert_eq!(p.balls(), &[4, 5, 2, 5]);
    assert_eq!(p.residual_index(), 1);
}

#[test]
fn embodiment_3_spreads_over_the_bins_not_whacked() {
    let mut p = profile(&[4, 4, 4, 4], 4);
    // R = 5 over S' = {1, 3}: 2 each, the leftover skips bin 0 and lands on bin 1.
    p.apply(&[2, 0, 3, 0], Redistribution::EvenOthers);
    assert_eq!(p.balls(), &[2, 7, 1, 6]);
    assert_eq!(p.residual_index(), 2);
    // Every bin whacked: as embodiment 2.
    let mut p = profile(&[4, 4, 4, 4], 4);
    p.apply(&[1, 1, 1, 1], Redistribution::EvenOthers);
    assert_eq!(p.balls(), &[4, 4, 4, 4]);
}

#[test]
fn embodiment_4_spreads_in_proportion() {
    let mut p = profile(&[8, 4, 4, 0], 4);
    // R = 4 from bin 0: b' = (4, 4, 4, 0), m − R = 12, ⌊4·4/12⌋ = 1 to bins 0..2;
    // the 1 left over goes evenly over S' = {1, 2, 3}: round-robin from ρ = 0, skipping 0.
    p.apply(&[4, 0, 0, 0], Redistribution::Proportional);
    assert_eq!(p.balls(), &[5, 6, 5, 0]);
    assert_eq!(p.residual_index(), 2);
    // Scaling shape: removing half of every bin gives it all back proportionally.
    let mut p = profile(&[8, 4, 4, 0], 4);
    p.apply(&[4, 2, 2, 0], Redistribution::Proportional);
    assert_eq!(p.balls(), &[8, 4, 4, 0]);
}

#[test]
fn whack_amount_respects_factor_and_floor() {
    assert_eq!(whack_amount(64, 0.125, 1), 8);
    assert_eq!(whack_amount(64, 0.5, 1), 32);
    assert_eq!(whack_amount(5, 0.125, 1), 1, "at least one ball");
    assert_eq!(whack_amount(2, 1.0, 1), 1, "never below the floor");
    assert_eq!(whack_amount(1, 1.0, 1), 0);
    assert_eq!(whack_amount(3, 1.0, 0), 3);
    assert_eq!(whack_amount(64, 0.0, 1), 0);
}

#[test]
fn relax_moves_toward_target_without_overshoot() {
    let mut p = profile(&[1, 7, 4, 4], 4);
    let target = [4, 4, 4, 4];
    // Excess 3 on bin 1: ⌈0.5·3⌉ = 2 moved to bin 0 (the only deficit).
    assert!(p.relax_toward(&target, 0.5));
    assert_eq!(p.balls(), &[3, 5, 4, 4]);
    assert!(p.relax_toward(&target, 0.5));
    assert_eq!(p.balls(), &[4, 4, 4, 4]);
    assert!(!p.relax_toward(&target, 0.5), "at target nothing moves");
}

// ---- the selector ----------------------------------------------------------------------

/// The embodiments' mechanics, without the §6 objective (tested on its own).
fn cfg() -> WhackAMoleConfig {
    WhackAMoleConfig {
        num_paths: 4,
        log2_balls: 6,
        objective: Objective::None,
        ..WhackAMoleConfig::default()
    }
}

fn send_at(w: &mut WhackAMole, rng: &mut SimRng, now_ns: u64) -> usize {
    let cx = SendCx {
        now: SimTime::from_ns(now_ns),
        psn: Psn(0),
        retransmission: false,
        inflight_pkts: 0,
        every_arrival_answered: false,
    };
    usize::from(w.next_entropy(&cx, rng).0)
}

fn feedback(
    kind: FeedbackKind,
    now_ns: u64,
    path: u16,
    ecn: bool,
    rtt_ns: Option<u64>,
) -> Feedback {
    Feedback {
        kind,
        now: SimTime::from_ns(now_ns),
        entropy: Entropy(path),
        psn: Psn(0),
        rtt: rtt_ns.map(SimDuration::from_ns),
        ecn,
        last_hop: false,
    }
}

/// Sends `n` packets 100 ns apart from PSN `psn0` at `t0` under IRN (every arrival
/// answered, or not); returns (psn, send time, path) of each.
fn send_irn(
    w: &mut WhackAMole,
    rng: &mut SimRng,
    t0: u64,
    psn0: u32,
    n: u32,
    answered: bool,
) -> Vec<(u32, u64, u16)> {
    (0..n)
        .map(|k| {
            let now = t0 + 100 * u64::from(k);
            let cx = SendCx {
                now: SimTime::from_ns(now),
                psn: Psn(psn0 + k),
                retransmission: false,
                inflight_pkts: k,
                every_arrival_answered: answered,
            };
            (psn0 + k, now, w.next_entropy(&cx, rng).0)
        })
        .collect()
}

/// The answer (an ACK, RTT `rtt`) to one transmission.
fn answer(sent: (u32, u64, u16), rtt: u64) -> Feedback {
    Feedback {
        kind: FeedbackKind::Ack,
        now: SimTime::from_ns(sent.1 + rtt),
        entropy: Entropy(sent.2),
        psn: Psn(sent.0),
        rtt: Some(SimDuration::from_ns(rtt)),
        ecn: false,
        last_hop: false,
    }
}

#[test]
fn a_gap_in_one_paths_sequence_is_a_loss_on_that_path() {
    // 4 paths x 16 of 64 balls, whacks applied at once. 64 packets, one of them on path 2
    // lost: the next answer from path 2 reveals the gap and path 2 alone loses
    // loss_factor x 16 = 8 balls, spread over the 3 others (EvenOthers: 3, 3, 2 from rho).
    for answered in [true, false] {
        let config = WhackAMoleConfig {
            update_interval_ns: 0,
            recovery_interval_ns: 0,
            ..cfg()
        };
        let mut rng = SimRng::new(3);
        let mut w = WhackAMole::new(&config, &mut rng);
        let sent = send_irn(&mut w, &mut rng, 0, 0, 64, answered);
        let lost = sent.iter().position(|s| s.2 == 2).unwrap_or(0);
        for (k, &s) in sent.iter().enumerate() {
            if k != lost {
                w.on_feedback(&answer(s, 8_000), &mut rng);
            }
        }
        let balls = w.profile().balls().to_vec();
        if answered {
            assert_eq!(w.path_losses(), (1, 0));
            assert_eq!(balls[2], 8, "{balls:?}");
            assert_eq!(balls.iter().sum::<u32>(), 64);
            assert!(
                balls.iter().enumerate().all(|(i, &b)| i == 2 || b > 16),
                "{balls:?}"
            );
        } else {
            // Go-Back-N / NIC-SR: a missing answer is no evidence.
            assert_eq!(w.path_losses(), (0, 0));
            assert_eq!(balls, vec![16; 4]);
        }
    }
}

#[test]
fn a_path_that_answers_nothing_stalls_and_is_whacked() {
    // Path 3 black-holed: every packet on it goes unanswered; the others answer at 8 us.
    // Once path 3's oldest packet is older than stall_factor (4) x the average RTT (8 us)
    // = 32 us, the stall test (every 2 us, at a send) whacks it by loss_factor (with the
    // dead-path rule off; on, it empties the path: tests_dead.rs).
    let config = WhackAMoleConfig {
        update_interval_ns: 0,
        recovery_interval_ns: 0,
        dead_probe_interval_ns: 0,
        ..cfg()
    };
    let mut rng = SimRng::new(4);
    let mut w = WhackAMole::new(&config, &mut rng);
    let mut psn = 0;
    let mut first_dead = None;
    let mut whacked_at = None;
    let mut t = 0;
    while t < 100_000 && whacked_at.is_none() {
        let batch = send_irn(&mut w, &mut rng, t, psn, 10, true);
        psn += 10;
        for s in batch {
            if s.2 == 3 {
                first_dead.get_or_insert(s.1);
            } else {
                w.on_feedback(&answer(s, 8_000), &mut rng);
            }
        }
        if w.profile().balls()[3] < 16 {
            whacked_at = Some(t);
        }
        t += 1_000;
    }
    let (first_dead, whacked_at) = (first_dead.unwrap_or(0), whacked_at.unwrap_or(0));
    assert_eq!(w.path_losses().1, 1);
    assert_eq!(w.profile().balls()[3], 8);
    // Detected between 32 us and 32 us + the check period + one batch after the send.
    let age = whacked_at + 1_000 - first_dead;
    assert!(
        (32_000..=36_000).contains(&age),
        "stall found after {age} ns"
    );
}

#[test]
fn the_severity_objective_never_feeds_a_worse_than_average_path() {
    // 4 paths x 16 of 64 balls, whacks at once. Path 3 times out twice (16 -> 8 -> 4;
    // w3 = 0.5/8 + 7/8 x 0.5/8 = 0.117), the others answer cleanly (w = 0). Then an ECN
    // mark on path 1 frees max(1, 0.125 x b1) balls. Under the §6 objective they go only
    // to paths below the mean weight Σ p·w (paths 0 and 2); under the embodiment alone
    // (even-others) the drained path 3 gets its share back.
    let run = |objective| {
        let config = WhackAMoleConfig {
            update_interval_ns: 0,
            recovery_interval_ns: 0,
            objective,
            ..cfg()
        };
        let mut rng = SimRng::new(5);
        let mut w = WhackAMole::new(&config, &mut rng);
        for p in 0..3 {
            w.on_feedback(&feedback(FeedbackKind::Ack, 10, p, false, None), &mut rng);
        }
        for t in [20, 30] {
            w.on_feedback(
                &feedback(FeedbackKind::Timeout, t, 3, false, None),
                &mut rng,
            );
        }
        let before = w.profile().balls().to_vec();
        w.on_feedback(&feedback(FeedbackKind::Ack, 40, 1, true, None), &mut rng);
        (before, w.profile().balls().to_vec())
    };
    let (before, after) = run(Objective::Severity);
    assert_eq!(before[3], 4, "{before:?}");
    assert_eq!(after[3], 4, "the drained path gets nothing back: {after:?}");
    assert_eq!(after[1] + 2, before[1], "{before:?} -> {after:?}");
    assert_eq!(after[0] + after[2], before[0] + before[2] + 2);
    let (_, plain) = run(Objective::None);
    assert!(
        plain[3] > 4,
        "even-others feeds the drained path: {plain:?}"
    );
}

#[test]
fn weights_round_to_m_balls_by_largest_remainder() {
    assert_eq!(balls_from_weights(&[2.0, 1.0], 10), vec![683, 341]);
    assert_eq!(balls_from_weights(&[0.0, 1.0], 10), vec![0, 1024]);
    assert_eq!(balls_from_weights(&[1.0, 1.0, 1.0], 4), vec![6, 5, 5]);
    // 16·(0.1, 0.2, 0.7) = (1.6, 3.2, 11.2): floors 1+3+11 = 15, the largest remainder
    // (0.6, bin 0) gets the 16th ball.
    assert_eq!(balls_from_weights(&[0.1, 0.2, 0.7], 4), vec![2, 3, 11]);
}

#[test]
fn schedule_is_validated() {
    let step = |at_ns, weights: &[f64]| ProfileStep {
        at_ns,
        weights: weights.to_vec(),
    };
    let with = |schedule| WhackAMoleConfig {
        num_paths: 2,
        schedule,
        ..WhackAMoleConfig::default()
    };
    assert!(with(vec![step(0, &[2.0, 1.0]), step(5, &[0.0, 1.0])])
        .validate()
        .is_ok());
    for (bad, what) in [
        (
            vec![step(5, &[1.0, 1.0]), step(5, &[0.0, 1.0])],
            "after the previous",
        ),
        (
            vec![step(0, &[1.0, 1.0, 1.0])],
            "3 weights for num_paths = 2",
        ),
        (vec![step(0, &[-1.0, 1.0])], ">= 0"),
        (vec![step(0, &[0.0, 0.0])], "all 0"),
    ] {
        let e = with(bad).validate().unwrap_err();
        assert_eq!(e.parameter, "schedule");
        assert!(e.message.contains(what), "{e}");
    }
}

#[test]
fn schedule_parses_from_the_parameter_text() {
    use crate::config::{HostLbConfig, LbConfig};
    let c = LbConfig::parse(
        "whack-a-mole",
        "num_paths = 2, schedule = [{ at_ns = 0, weights = [2, 1] }, \
         { at_ns = 36700000, weights = [0, 1] }]",
    )
    .unwrap();
    let HostLbConfig::WhackAMole(w) = c.host else {
        panic!("not whack-a-mole: {c:?}");
    };
    assert_eq!(w.schedule.len(), 2);
    assert_eq!(w.schedule[1].at_ns, 36_700_000);
    assert_eq!(w.schedule[1].weights, vec![0.0, 1.0]);
    let e =
        LbConfig::parse("whack-a-mole", "schedule = [{ at_ns = 0, weights = [1] }]").unwrap_err();
    assert_eq!(
        e.to_string(),
        "algorithm `whack-a-mole`, parameter `schedule`: step 0: 1 weights for num_paths = 8"
    );
}

#[test]
fn schedule_steps_apply_from_the_first_packet_and_set_the_target() {
    let config = WhackAMoleConfig {
        num_paths: 2,
        log2_balls: 4,
        schedule: vec![
            ProfileStep {
                at_ns: 0,
                weights: vec![3.0, 1.0],
            },
            ProfileStep {
                at_ns: 1_000,
                weights: vec![0.0, 1.0],
            },
        ],
        ..WhackAMoleConfig::default()
    };
    let mut rng = SimRng::new(1);
    let mut w = WhackAMole::new(&config, &mut rng);
    assert_eq!(
        w.profile().balls(),
        &[8, 8],
        "uniform before the first packet"
    );
    let first = 50_000;
    let mut on_0 = 0;
    for _ in 0..16 {
        on_0 += u32::from(send_at(&mut w, &mut rng, first) == 0);
    }
    assert_eq!(w.profile().balls(), &[12, 4]);
    assert_eq!(w.target(), &[12, 4]);
    assert_eq!(
        on_0, 12,
        "one period of 16 packets follows the profile exactly"
    );
    send_at(&mut w, &mut rng, first + 999);
    assert_eq!(
        w.profile().balls(),
        &[12, 4],
        "offsets count from the first packet"
    );
    for _ in 0..32 {
        assert_eq!(send_at(&mut w, &mut rng, first + 1_000), 1);
    }
    assert_eq!(w.target(), &[0, 16]);
}

/// The paper's §8 two-path example, its inputs reconstructed from its results:
/// path 0 at 100 Mb/s with 100 ms latency, path 1 at 50 Mb/s with 10 ms; a 10 Mbit
/// message in 1000 packets of 10 kbit. The sender paces at the summed bandwidth of the
/// paths its profile uses; each path is a FIFO at its bandwidth. Completion times
/// (first principles): all on path 0: 100 + 100 = 200 ms; all on path 1: 200 + 10 =
/// 210 ms; (2/3, 1/3) throughout: 10/150 s + 100 ms = 166.7 ms; (2/3, 1/3) for the first
/// x = 36.7 ms, then path 1 only: max(x + 100, 210 − 2x) = 136.7 ms (the paper's 137 ms).
fn two_path_completion_ms(schedule: Vec<ProfileStep>) -> f64 {
    const BW_BPS: [f64; 2] = [100e6, 50e6];
    const LATENCY_S: [f64; 2] = [0.100, 0.010];
    const PKT_BITS: f64 = 10_000.0;
    let config = WhackAMoleConfig {
        num_paths: 2,
        log2_balls: 10,
        schedule,
        ..WhackAMoleConfig::default()
    };
    let mut rng = SimRng::new(7);
    let mut w = WhackAMole::new(&config, &mut rng);
    let (mut now_s, mut free_s, mut done_s) = (0.0f64, [0.0f64; 2], 0.0f64);
    for _ in 0..1000 {
        let now_ns = (now_s * 1e9).round() as u64;
        let p = send_at(&mut w, &mut rng, now_ns);
        let rate: f64 = w
            .profile()
            .balls()
            .iter()
            .zip(BW_BPS)
            .filter(|(&b, _)| b > 0)
            .map(|(_, bw)| bw)
            .sum();
        let depart = now_s.max(free_s[p]);
        free_s[p] = depart + PKT_BITS / BW_BPS[p];
        done_s = done_s.max(free_s[p] + LATENCY_S[p]);
        now_s += PKT_BITS / rate;
    }
    done_s * 1e3
}

#[test]
fn time_varying_profile_beats_every_fixed_one_in_the_two_path_example() {
    let fixed = |w: [f64; 2]| {
        two_path_completion_ms(vec![ProfileStep {
            at_ns: 0,
            weights: w.to_vec(),
        }])
    };
    let close = |got: f64, want: f64| (got - want).abs() <= 0.01 * want;
    let only_0 = fixed([1.0, 0.0]);
    let only_1 = fixed([0.0, 1.0]);
    let both = fixed([2.0, 1.0]);
    let hybrid = two_path_completion_ms(vec![
        ProfileStep {
            at_ns: 0,
            weights: vec![2.0, 1.0],
        },
        ProfileStep {
            at_ns: 36_700_000,
            weights: vec![0.0, 1.0],
        },
    ]);
    assert!(close(only_0, 200.0), "{only_0}");
    assert!(close(only_1, 210.0), "{only_1}");
    assert!(close(both, 166.7), "{both}");
    assert!(close(hybrid, 136.7), "{hybrid}");
    assert!(hybrid < both && both < only_0 && only_0 < only_1);
}

#[test]
fn path_i_is_entropy_i_and_sends_follow_the_profile() {
    let mut rng = SimRng::new(4);
    let mut w = WhackAMole::new(&cfg(), &mut rng);
    let mut counts = [0u32; 4];
    for _ in 0..64 {
        counts[send_at(&mut w, &mut rng, 0)] += 1;
    }
    assert_eq!(counts, [16; 4]);
}

#[test]
fn ecn_feedback_whacks_the_path_when_the_interval_ends() {
    let mut rng = SimRng::new(5);
    let mut w = WhackAMole::new(&cfg(), &mut rng);
    send_at(&mut w, &mut rng, 0); // opens the 10 µs interval
    for t in 1..5 {
        w.on_feedback(&feedback(FeedbackKind::Ack, t, 2, true, None), &mut rng);
    }
    assert_eq!(w.profile().balls(), &[16; 4], "gathered, not yet applied");
    send_at(&mut w, &mut rng, 10_000);
    // One whack for the interval: ⌊16/8⌋ = 2 balls, 1 to each of 2 of the other paths
    // (2 over 3 others: 0 each, leftovers round-robin from ρ = 0 skipping path 2).
    assert_eq!(w.profile().balls(), &[17, 17, 14, 16]);
}

#[test]
fn severity_sets_the_factor() {
    let mut rng = SimRng::new(6);
    let mut w = WhackAMole::new(
        &WhackAMoleConfig {
            redistribution: Redistribution::EvenAll,
            ..cfg()
        },
        &mut rng,
    );
    send_at(&mut w, &mut rng, 0);
    // Path 0: RTT above 1.5 × average (f = 1/16 → 1 ball); path 1: ECN (1/8 → 2);
    // path 2: timeout (1/2 → 8); path 3: a NACK (factor 0: nothing).
    w.on_feedback(
        &feedback(FeedbackKind::Ack, 1, 3, false, Some(10_000)),
        &mut rng,
    );
    w.on_feedback(
        &feedback(FeedbackKind::Ack, 2, 0, false, Some(16_000)),
        &mut rng,
    );
    w.on_feedback(&feedback(FeedbackKind::Ack, 3, 1, true, None), &mut rng);
    w.on_feedback(
        &feedback(FeedbackKind::Timeout, 4, 2, false, None),
        &mut rng,
    );
    w.on_feedback(&feedback(FeedbackKind::Nack, 5, 3, false, None), &mut rng);
    send_at(&mut w, &mut rng, 10_000);
    // Removed 1 + 2 + 8 = 11, spread evenly over all 4: 2 each, 3 leftovers to 0, 1, 2.
    assert_eq!(
        w.profile().balls(),
        &[16 - 1 + 3, 16 - 2 + 3, 16 - 8 + 3, 16 + 2]
    );
    // The most severe feedback of an interval wins: ECN then timeout on path 3 → 1/2.
    w.on_feedback(
        &feedback(FeedbackKind::Ack, 10_001, 3, true, None),
        &mut rng,
    );
    w.on_feedback(
        &feedback(FeedbackKind::Timeout, 10_002, 3, false, None),
        &mut rng,
    );
    send_at(&mut w, &mut rng, 20_000);
    // 9 balls spread over all 4: 2 each, the leftover at ρ = 3.
    assert_eq!(w.profile().balls()[3], 18 - 9 + 2 + 1);
}

#[test]
fn an_rtt_at_or_below_the_margin_is_not_whacked() {
    let mut rng = SimRng::new(7);
    let mut w = WhackAMole::new(
        &WhackAMoleConfig {
            update_interval_ns: 0,
            ..cfg()
        },
        &mut rng,
    );
    w.on_feedback(
        &feedback(FeedbackKind::Ack, 1, 0, false, Some(10_000)),
        &mut rng,
    );
    w.on_feedback(
        &feedback(FeedbackKind::Ack, 2, 1, false, Some(15_000)),
        &mut rng,
    );
    assert_eq!(
        w.profile().balls(),
        &[16; 4],
        "15,000 = 1.5 × 10,000 is not above"
    );
}

#[test]
fn immediate_mode_whacks_each_feedback_and_ignores_unknown_paths() {
    let mut rng = SimRng::new(8);
    let mut w = WhackAMole::new(
        &WhackAMoleConfig {
            update_interval_ns: 0,
            ..cfg()
        },
        &mut rng,
    );
    w.on_feedback(&feedback(FeedbackKind::Ack, 1, 9, true, None), &mut rng);
    assert_eq!(w.profile().balls(), &[16; 4], "entropy 9 names no path");
    w.on_feedback(&feedback(FeedbackKind::Cnp, 1, 0, false, None), &mut rng);
    w.on_feedback(&feedback(FeedbackKind::Ack, 2, 0, true, None), &mut rng);
    // 16 → 14 → 14 − ⌊14/8⌋ = 13; 3 balls to the others.
    assert_eq!(w.profile().balls()[0], 13);
    assert_eq!(w.profile().balls().iter().sum::<u32>(), 64);
}

#[test]
fn a_whacked_path_drains_to_its_floor_and_recovers_when_feedback_stops() {
    let mut rng = SimRng::new(9);
    let periodic = WhackAMoleConfig {
        recovery_rule: RecoveryRule::Periodic,
        ..cfg()
    };
    let mut w = WhackAMole::new(&periodic, &mut rng);
    let mut t = 0;
    // Marks on path 1 every 10 µs for 2 ms; recovery every 100 µs fights back.
    while t < 2_000_000 {
        send_at(&mut w, &mut rng, t);
        w.on_feedback(&feedback(FeedbackKind::Ack, t, 1, true, None), &mut rng);
        t += 10_000;
    }
    // Under sustained marks the path hovers near its floor of 1: recovery returns
    // ⌈0.25·15⌉ = 4 balls per 100 µs, and the 10 whacks per 100 µs take them again.
    // Measured within the last update interval (before recovery's next step at 2 ms).
    let b1 = w.profile().balls()[1];
    assert!(b1 <= 4, "{:?}", w.profile().balls());
    let sent_on_1 = (0..64)
        .filter(|_| send_at(&mut w, &mut rng, t - 10_000) == 1)
        .count();
    assert!(sent_on_1 <= 4, "{sent_on_1}");
    // Feedback stops: within ~15 recovery intervals the profile is back at target.
    for _ in 0..20 {
        t += 100_000;
        send_at(&mut w, &mut rng, t);
    }
    assert_eq!(w.profile().balls(), w.target());
}

/// Drives `w` for `until_ns` from `t`: a packet every 10 µs and, for each, the feedback
/// `fb(path)` gives (marked or clean ACKs), or none. Returns the time reached.
fn drive_paths(
    w: &mut WhackAMole,
    rng: &mut SimRng,
    mut t: u64,
    until_ns: u64,
    marked: impl Fn(usize) -> Option<bool>,
) -> u64 {
    while t < until_ns {
        let path = send_at(w, rng, t);
        if let Some(ecn) = marked(path) {
            let fb = feedback(FeedbackKind::Ack, t, path as u16, ecn, None);
            w.on_feedback(&fb, rng);
        }
        t += 10_000;
    }
    t
}

#[test]
fn evidence_recovery_waits_for_clean_acks_on_the_path() {
    let mut rng = SimRng::new(9);
    let mut w = WhackAMole::new(&cfg(), &mut rng);
    assert_eq!(w.target(), vec![16, 16, 16, 16]);
    // Every packet on path 1 comes back marked, the others clean, for 2 ms: path 1 is
    // whacked whenever it carries a packet and never recovers (no clean ACK from it).
    let t = drive_paths(&mut w, &mut rng, 0, 2_000_000, |p| Some(p == 1));
    assert_eq!(w.profile().balls()[1], 1, "{:?}", w.profile().balls());
    // Nothing is sent for 5 ms: no evidence either way, so the profile stays (the periodic
    // rule would have handed path 1 its 15 balls back: 64 intervals at gain 1/4).
    let t = t + 5_000_000;
    send_at(&mut w, &mut rng, t);
    assert_eq!(w.profile().balls()[1], 1, "{:?}", w.profile().balls());
    // Path 1 heals: its (rare, 1 in 64) packets come back clean. Each interval with a
    // clean ACK from it returns ⌈1/4⌉ of the others' excess; back at target within 4 ms.
    let t = drive_paths(&mut w, &mut rng, t, t + 4_000_000, |_| Some(false));
    assert_eq!(w.profile().balls(), &[16, 16, 16, 16][..], "at {t} ns");
}

#[test]
fn evidence_recovery_gives_nothing_back_to_a_path_still_marked() {
    let mut rng = SimRng::new(11);
    let mut w = WhackAMole::new(&cfg(), &mut rng);
    // Path 2 is marked at every packet. Once drained (2 ms), 1 ball of 64 (its floor) is all
    // it keeps for the next 8 ms, whereas the periodic rule keeps handing it balls back
    // (see the test above: up to 4 after each recovery step).
    let mut t = drive_paths(&mut w, &mut rng, 0, 2_000_000, |p| Some(p == 2));
    let mut worst = 0;
    while t < 10_000_000 {
        t = drive_paths(&mut w, &mut rng, t, t + 100_000, |p| Some(p == 2));
        worst = worst.max(w.profile().balls()[2]);
    }
    assert_eq!(worst, 1, "path 2 held {worst} balls");
    assert_eq!(w.profile().balls()[2], 1);
}

#[test]
fn recovery_rule_and_profile_scope_parse_by_name() {
    use crate::config::{HostLbConfig, LbConfig};
    let parse = |text: &str| match LbConfig::parse("whack-a-mole", text).map(|c| c.host) {
        Ok(HostLbConfig::WhackAMole(w)) => Ok((w.recovery_rule, w.profile_scope)),
        Ok(other) => panic!("{other:?}"),
        Err(e) => Err(e.to_string()),
    };
    assert_eq!(
        parse(""),
        Ok((RecoveryRule::Evidence, ProfileScope::QueuePair))
    );
    assert_eq!(
        parse("recovery_rule = \"periodic\", profile_scope = \"destination\""),
        Ok((RecoveryRule::Periodic, ProfileScope::Destination))
    );
    assert!(parse("recovery_rule = \"quiet\"")
        .unwrap_err()
        .contains("recovery_rule"));
    assert!(parse("profile_scope = \"nic\"")
        .unwrap_err()
        .contains("profile_scope"));
}

#[test]
fn evidence_needs_a_floor_of_one_ball() {
    let bad = WhackAMoleConfig {
        min_balls: 0,
        ..WhackAMoleConfig::default()
    };
    let e = bad.validate().unwrap_err();
    assert!(e.to_string().contains("min_balls"), "{e}");
    for ok in [
        WhackAMoleConfig {
            recovery_rule: RecoveryRule::Periodic,
            ..bad.clone()
        },
        WhackAMoleConfig {
            recovery_interval_ns: 0,
            ..bad.clone()
        },
    ] {
        ok.validate().unwrap();
    }
}

#[test]
fn relax_toward_where_gives_only_to_the_selected_bins() {
    // Excess 8 on bin 0; deficits 4 (bin 1, not selected) and 4 (bin 2).
    let mut p = profile(&[16, 4, 4, 8], 5);
    let target = [8, 8, 8, 8];
    assert!(p.relax_toward_where(&target, 1.0, |i| i != 1));
    // Bin 0 gives only what bin 2 can take.
    assert_eq!(p.balls(), &[12, 4, 8, 8]);
    assert!(!p.relax_toward_where(&target, 1.0, |i| i != 1));
    // Gain 1/4: bin 0 gives ⌈0.25·4⌉ = 1 to bin 1.
    assert!(p.relax_toward_where(&target, 0.25, |_| true));
    assert_eq!(p.balls(), &[11, 5, 8, 8]);
    assert_eq!(p.cumulative(), &[11, 16, 24, 32]);
}

#[test]
fn without_recovery_a_whacked_path_sits_at_its_floor() {
    for how in ALL_HOW {
        let mut rng = SimRng::new(10);
        let mut w = WhackAMole::new(
            &WhackAMoleConfig {
                recovery_interval_ns: 0,
                redistribution: how,
                min_balls: 2,
                ..cfg()
            },
            &mut rng,
        );
        for i in 0..200 {
            let t = i * 10_000;
            send_at(&mut w, &mut rng, t);
            w.on_feedback(&feedback(FeedbackKind::Ack, t, 3, true, None), &mut rng);
        }
        assert_eq!(
            w.profile().balls()[3],
            2,
            "{how:?}: {:?}",
            w.profile().balls()
        );
    }
}

#[test]
fn same_seed_same_sequence() {
    let run = |seed| {
        let mut rng = SimRng::new(seed);
        let mut w = WhackAMole::new(&WhackAMoleConfig::default(), &mut rng);
        (0..256)
            .map(|t| send_at(&mut w, &mut rng, t))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2), "different seeds shuffle differently");
}

// ---- properties ------------------------------------------------------------------------

/// A random profile: ℓ in 4..=12, n in 1..=16, ball counts from sorted cut points (zero
/// counts allowed).
fn arb_profile() -> impl Strategy<Value = (u32, Vec<u32>)> {
    (4u32..=12, 1usize..=16).prop_flat_map(|(l, n)| {
        let m = 1u32 << l;
        (Just(l), proptest::collection::vec(0..=m, n - 1)).prop_map(move |(l, mut cuts)| {
            cuts.sort_unstable();
            let mut prev = 0;
            let mut balls: Vec<u32> = cuts
                .iter()
                .map(|&c| {
                    let b = c - prev;
                    prev = c;
                    b
                })
                .collect();
            balls.push(m - prev);
            (l, balls)
        })
    })
}

/// The largest |actual − expected| count of any path over any window of consecutive
/// packets, in units of 1/m packet. The selection is periodic in m, so with
/// D(t) = m·count(0..t) − t·b the worst window is max D − min D over one period.
fn worst_window_deviation(p: &Profile, c: &SprayCounter) -> i64 {
    let m = i64::from(p.total());
    let n = p.balls().len();
    let mut count = vec![0i64; n];
    let mut lo = vec![0i64; n];
    let mut hi = vec![0i64; n];
    for t in 0..p.total() {
        count[p.path_of(c.ball(t))] += 1;
        for i in 0..n {
            let d = m * count[i] - i64::from(t + 1) * i64::from(p.balls()[i]);
            lo[i] = lo[i].min(d);
            hi[i] = hi[i].max(d);
        }
    }
    (0..n).map(|i| hi[i] - lo[i]).max().unwrap_or(0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn selective_recovery_keeps_m_balls_and_spares_the_unselected(
        (l, balls) in arb_profile(),
        mask in proptest::collection::vec(any::<bool>(), 16),
        gain in 0.0f64..=1.0,
    ) {
        let n = balls.len();
        let mut p = profile(&balls, l);
        let target = Profile::uniform(n, l).balls().to_vec();
        let before = p.balls().to_vec();
        p.relax_toward_where(&target, gain, |i| mask[i]);
        let after = p.balls();
        prop_assert_eq!(after.iter().sum::<u32>(), 1u32 << l);
        for i in 0..n {
            let (b, a, t) = (before[i], after[i], target[i]);
            if b > t {
                // A giver gives at most its excess and never drops below target.
                prop_assert!(a <= b && a >= t, "bin {i}: {b} -> {a}, target {t}");
            } else if mask[i] {
                // A selected bin below target gains, never past target.
                prop_assert!(a >= b && a <= t, "bin {i}: {b} -> {a}, target {t}");
            } else {
                prop_assert_eq!(a, b, "unselected bin {} moved", i);
            }
        }
    }

    #[test]
    fn spray_deviation_is_bounded_by_log2_m(
        (l, balls) in arb_profile(),
        s_a: u32,
        s_b: u32,
    ) {
        let p = Profile::from_balls(balls, l).unwrap();
        let m = i64::from(p.total());
        let l64 = i64::from(l);
        for (shuffle, bound) in
            [(Shuffle::None, l64), (Shuffle::Method1, l64), (Shuffle::Method2, 2 * l64)]
        {
            let c = SprayCounter::with_seed(l, shuffle, s_a, s_b);
            let dev = worst_window_deviation(&p, &c);
            prop_assert!(
                dev <= bound * m,
                "{:?}: deviation {} > {} (profile {:?})",
                shuffle, dev as f64 / m as f64, bound, p.balls()
            );
        }
    }

    #[test]
    fn updates_keep_m_balls_and_the_floor(
        (l, balls) in arb_profile(),
        floor in 0u32..3,
        ops in proptest::collection::vec(
            (0usize..16, 0.0f64..=1.0, 0usize..4, proptest::bool::ANY), 1..60),
    ) {
        // Lift every bin to the floor first (taking from the largest) to start valid.
        let mut balls = balls;
        let m = 1u32 << l;
        let n = balls.len();
        prop_assume!(u64::from(floor) * n as u64 <= u64::from(m));
        for i in 0..n {
            while balls[i] < floor {
                let j = (0..n).max_by_key(|&j| balls[j]).unwrap();
                balls[j] -= 1;
                balls[i] += 1;
            }
        }
        let mut p = Profile::from_balls(balls, l).unwrap();
        let target = Profile::uniform(n, l).balls().to_vec();
        for (path, f, how, multi) in ops {
            let how = ALL_HOW[how];
            if multi {
                // A batched update: every bin whacked by f.
                let removal: Vec<u32> =
                    p.balls().iter().map(|&b| whack_amount(b, f, floor)).collect();
                p.apply(&removal, how);
            } else if path < n {
                let mut removal = vec![0; n];
                removal[path] = whack_amount(p.balls()[path], f, floor);
                p.apply(&removal, how);
            } else {
                p.relax_toward(&target, f);
            }
            prop_assert_eq!(p.balls().iter().sum::<u32>(), m);
            prop_assert!(p.balls().iter().all(|&b| b >= floor), "{:?}", p.balls());
            prop_assert_eq!(p.cumulative().last().copied(), Some(m));
            prop_assert!(p.residual_index() < n);
            let mut acc = 0;
            for (c, b) in p.cumulative().iter().zip(p.balls()) {
                acc += b;
                prop_assert_eq!(*c, acc);
            }
        }
    }

    #[test]
    fn a_repeatedly_whacked_path_drains_to_its_floor_and_recovers(
        l in 4u32..=12,
        n in 2usize..=16,
        floor in 0u32..=2,
        path in 0usize..16,
        f in 0.03f64..=1.0,
        gain in 0.05f64..=1.0,
        how in 0usize..4,
    ) {
        let path = path % n;
        let how = ALL_HOW[how];
        let mut p = Profile::uniform(n, l);
        let target = p.balls().to_vec();
        prop_assume!(target.iter().all(|&b| b >= floor));
        let mut whacks = 0;
        while p.balls()[path] > floor {
            let mut removal = vec![0; n];
            removal[path] = whack_amount(p.balls()[path], f, floor);
            p.apply(&removal, how);
            whacks += 1;
            prop_assert!(whacks < 20_000, "not drained: {:?}", p.balls());
        }
        prop_assert_eq!(p.balls()[path], floor);
        let mut steps = 0;
        while p.relax_toward(&target, gain) {
            steps += 1;
            prop_assert!(steps < 2_000, "not recovered: {:?}", p.balls());
        }
        prop_assert_eq!(p.balls(), &target[..]);
    }
}
