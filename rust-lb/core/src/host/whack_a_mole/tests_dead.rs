//! Tests of the dead-path rule of Whack-a-Mole (our addition to M. Luby and J. Byers,
//! "Whack-a-Mole: Deterministic Packet Spraying Across Multiple Network Paths",
//! arXiv:2509.18519; the parent module's "Dead paths"): a queue pair fed what an IRN NIC
//! produces when one of its four paths black-holes -- no answer to any packet sent on it,
//! NACKs (IRN's SACKs, carrying RTT and entropy) for the packets of the live paths that arrive
//! after a hole, a retransmission timeout naming the oldest unacknowledged packet's path, and
//! ECN marks on the live paths (whose whacks used to hand balls back to the dead path).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::*;
use crate::host::FeedbackKind;
use crate::time::{SimDuration, SimTime};
use crate::units::Psn;

/// RTT of a live path's answers, ns.
const RTT_NS: u64 = 8_000;
/// One data packet every 100 ns (1 KB at 80 Gbps).
const SEND_GAP_NS: u64 = 100;
/// IRN's RtoHigh.
const RTO_NS: u64 = 320_000;

/// What one run of [`run`] saw.
struct Trace {
    /// (send time, path) of every data packet.
    sends: Vec<(u64, usize)>,
    /// (time, path) of every probe the selector asked for.
    probes: Vec<(u64, usize)>,
    /// Path 3's balls after each send.
    balls3: Vec<(u64, u32)>,
    /// Whether path 3 was dead after each send.
    dead3: Vec<(u64, bool)>,
    /// The paths dead at the end.
    dead_at_end: Vec<bool>,
    /// The profile at the end.
    balls_at_end: Vec<u32>,
}

/// An answer in flight: (arrival, psn, send time, path, whether to a probe).
type Answer = (u64, u32, u64, usize, bool);

/// 4 paths, m = 1024; the paths in `holes` answer nothing in [`hole_from`, `hole_to`) (a black
/// hole, probes included); path 3 answers after `rtt3` otherwise; paths 0-2 answer after 8 us, every 4th answer
/// ECN-marked. Answers to packets sent in the hole window on live paths are NACKs (the
/// receiver has a hole); every RTO after the hole opens, while something is unanswered, a
/// timeout names the oldest unanswered packet's path. Runs to `end` ns.
fn run(
    config: &WhackAMoleConfig,
    holes: &[usize],
    (hole_from, hole_to): (u64, u64),
    rtt3: u64,
    end: u64,
) -> Trace {
    let mut rng = SimRng::new(7);
    let mut w = WhackAMole::new(config, &mut rng);
    let mut answers: BinaryHeap<Reverse<Answer>> = BinaryHeap::new();
    let mut unanswered: HashMap<u32, usize> = HashMap::new();
    let mut trace = Trace {
        sends: Vec::new(),
        probes: Vec::new(),
        balls3: Vec::new(),
        dead3: Vec::new(),
        dead_at_end: Vec::new(),
        balls_at_end: Vec::new(),
    };
    let mut answer_count = 0u64;
    let mut next_timeout = hole_from + RTO_NS;
    let in_hole = |t: u64| (hole_from..hole_to).contains(&t);
    let lost = |path: usize, t: u64| holes.contains(&path) && in_hole(t);
    let rtt_of = |path: usize| if path == 3 { rtt3 } else { RTT_NS };
    let mut psn = 0u32;
    let mut t = 0u64;
    while t < end {
        // Answers due by now, then a timeout if one is due.
        let mut fbs = Vec::new();
        while let Some(&Reverse((at, p, sent, path, probe))) = answers.peek() {
            if at > t {
                break;
            }
            answers.pop();
            unanswered.remove(&p);
            let kind = if probe {
                FeedbackKind::ProbeAck
            } else if in_hole(sent) {
                FeedbackKind::Nack
            } else {
                FeedbackKind::Ack
            };
            answer_count += 1;
            fbs.push(Feedback {
                kind,
                now: SimTime::from_ns(at),
                entropy: Entropy(u16::try_from(path).unwrap()),
                psn: Psn(p),
                rtt: Some(SimDuration::from_ns(at - sent)),
                ecn: path != 3 && !probe && answer_count % 4 == 0,
                last_hop: false,
            });
        }
        if t >= next_timeout {
            next_timeout = t + RTO_NS;
            if let Some((&p, &path)) = unanswered.iter().min_by_key(|(&p, _)| p) {
                fbs.push(Feedback {
                    kind: FeedbackKind::Timeout,
                    now: SimTime::from_ns(t),
                    entropy: Entropy(u16::try_from(path).unwrap()),
                    psn: Psn(p),
                    rtt: None,
                    ecn: false,
                    last_hop: false,
                });
            }
        }
        for fb in fbs {
            w.on_feedback(&fb, &mut rng);
            // The NIC asks for probes after every piece of feedback.
            while let Some(e) = w.take_probe(fb.now) {
                let path = usize::from(e.0);
                trace.probes.push((fb.now.as_ns(), path));
                let now = fb.now.as_ns();
                if !lost(path, now) {
                    answers.push(Reverse((now + rtt_of(path), u32::MAX, now, path, true)));
                }
            }
        }
        let cx = SendCx {
            now: SimTime::from_ns(t),
            psn: Psn(psn),
            retransmission: false,
            inflight_pkts: u32::try_from(unanswered.len()).unwrap_or(u32::MAX),
            every_arrival_answered: true,
        };
        let path = usize::from(w.next_entropy(&cx, &mut rng).0);
        trace.sends.push((t, path));
        unanswered.insert(psn, path);
        if !lost(path, t) {
            answers.push(Reverse((t + rtt_of(path), psn, t, path, false)));
        }
        trace.balls3.push((t, w.profile().balls()[3]));
        trace.dead3.push((t, w.with_state(false, |s| s.is_dead(3))));
        psn += 1;
        t += SEND_GAP_NS;
    }
    trace.dead_at_end = (0..4)
        .map(|i| w.with_state(false, |s| s.is_dead(i)))
        .collect();
    trace.balls_at_end = w.profile().balls().to_vec();
    trace
}

fn cfg4() -> WhackAMoleConfig {
    WhackAMoleConfig {
        num_paths: 4,
        ..WhackAMoleConfig::default()
    }
}

fn sends_on(trace: &Trace, path: usize, from: u64, to: u64) -> usize {
    trace
        .sends
        .iter()
        .filter(|&&(t, p)| p == path && (from..to).contains(&t))
        .count()
}

#[test]
fn a_black_holed_path_gets_no_data_after_its_bound_and_is_probed() {
    // The hole opens at 200 us. The last answer on path 3 comes by 200 + 8 us (R = 8 us, the
    // largest RTT here); its oldest unanswered packet was sent by then, and the stall test
    // (every 2 us, at a send) finds it older than stall_factor (4) x the average RTT (8 us)
    // within 32 + 2 us more: bound = t0 + R + 4 R + 2 us = 242 us. From then on path 3 holds
    // 0 balls although the live paths are whacked by ECN every update interval (which hands
    // balls to every path not whacked) and timeouts name path 3 (which whack it again).
    // Measured: dead at 238.1 us, probes at 338.1, 438.1, ... us; after 1.2 ms path 3 is back
    // to 252 of 1024 balls by 2 ms.
    let (t0, t1, end) = (200_000, 1_200_000, 2_000_000);
    let trace = run(&cfg4(), &[3], (t0, t1), RTT_NS, end);
    let bound = t0 + RTT_NS + 4 * RTT_NS + 2_000;
    assert!(
        sends_on(&trace, 3, 0, t0) > 100,
        "path 3 carried data before"
    );
    let dead_at = trace
        .dead3
        .iter()
        .find(|&&(_, d)| d)
        .map_or(u64::MAX, |&(t, _)| t);
    assert!(
        (t0 + 4 * RTT_NS..=bound).contains(&dead_at),
        "declared dead at {dead_at} ns"
    );
    assert_eq!(sends_on(&trace, 3, bound, t1), 0, "no data after the bound");
    assert!(trace
        .balls3
        .iter()
        .filter(|&&(t, _)| (bound..t1).contains(&t))
        .all(|&(_, b)| b == 0));
    // One probe per 100 us on the dead path only: due at dead_at + 100 us, 200 us, ...,
    // taken at the first feedback at or after that (an answer every 100 ns here).
    let hole_probes: Vec<u64> = trace
        .probes
        .iter()
        .filter(|&&(t, _)| t < t1)
        .map(|&(t, p)| {
            assert_eq!(p, 3, "only the dead path is probed");
            t
        })
        .collect();
    assert_eq!(
        hole_probes.len(),
        usize::try_from((t1 - dead_at) / 100_000).unwrap()
    );
    assert!(hole_probes
        .windows(2)
        .all(|w| (100_000..100_200).contains(&(w[1] - w[0]))));
    // The hole closes at 1.2 ms: the next probe is answered 8 us later, path 3 revives with
    // the floor (1 ball) and then regains balls on its clean ACKs (evidence recovery).
    let revived = trace
        .dead3
        .iter()
        .find(|&&(t, d)| t >= t1 && !d)
        .map_or(u64::MAX, |&(t, _)| t);
    assert!(
        revived <= t1 + 100_000 + RTT_NS + SEND_GAP_NS,
        "revived at {revived} ns"
    );
    assert!(sends_on(&trace, 3, revived, end) > 0);
    let last = trace.balls3.last().map_or(0, |&(_, b)| b);
    assert!(last > 1, "path 3 regains balls once it answers: {last}");
}

#[test]
fn before_the_dead_path_rule_a_black_hole_kept_receiving_data() {
    // The same signals with dead_probe_interval_ns = 0 (the rule off: a stall only whacks by
    // loss_factor, down to the floor): the ECN whacks of the live paths hand balls back to the
    // black-holed one, which keeps receiving data long after the bound, and is never probed.
    // Measured: 327 of 9,580 data packets (3.4 %) into it between the bound and 1.2 ms.
    let (t0, t1) = (200_000, 1_200_000);
    let trace = run(
        &WhackAMoleConfig {
            dead_probe_interval_ns: 0,
            ..cfg4()
        },
        &[3],
        (t0, t1),
        RTT_NS,
        t1,
    );
    let bound = t0 + RTT_NS + 4 * RTT_NS + 2_000;
    let dead = sends_on(&trace, 3, bound, t1);
    let all = trace
        .sends
        .iter()
        .filter(|&&(t, _)| (bound..t1).contains(&t))
        .count();
    assert!(dead * 1_000 > all, "{dead} of {all} into the black hole");
    assert!(trace.probes.is_empty());
}

#[test]
fn a_slow_path_that_answers_is_never_declared_dead() {
    // Path 3 answers every packet, but 3 x later (24 us): it is whacked by the RTT rule, yet
    // its oldest unanswered packet is never older than 4 x the average RTT (>= 8 us, so >=
    // 32 us > 24 us): never dead, never probed, always carrying data.
    let trace = run(&cfg4(), &[], (0, 0), 3 * RTT_NS, 2_000_000);
    assert!(trace.dead3.iter().all(|&(_, d)| !d));
    assert!(trace.probes.is_empty());
    for k in 0..20 {
        let from = k * 100_000;
        assert!(
            sends_on(&trace, 3, from, from + 100_000) > 0,
            "path 3 carries data in every 100 us"
        );
    }
}

#[test]
fn the_last_live_path_is_never_declared_dead() {
    // Every path black-holed from 100 us on: three are declared dead, the last is only
    // whacked; the profile keeps its m balls, all on the path not dead.
    let trace = run(
        &cfg4(),
        &[0, 1, 2, 3],
        (100_000, u64::MAX),
        RTT_NS,
        1_000_000,
    );
    assert_eq!(trace.dead_at_end.iter().filter(|&&d| d).count(), 3);
    let live = trace.dead_at_end.iter().position(|&d| !d).unwrap_or(0);
    assert_eq!(trace.balls_at_end[live], 1024, "{:?}", trace.balls_at_end);
}
