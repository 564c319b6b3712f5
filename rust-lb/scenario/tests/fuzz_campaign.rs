//! The stable fuzzing route: seeded random mutations of the seed corpus (`fuzz/corpus/TARGET/`,
//! real input files) through `rdma_lb_scenario::fuzz_check::check`, the check the libFuzzer
//! targets run, with every panic caught and counted as a crash.
//!
//! * `corpus_seeds_pass_the_check` and `mutation_smoke` run in `cargo test` (the seeds, then
//!   2,000 mutations per target from a fixed seed);
//! * `campaign` (ignored; `scripts/fuzz --stable`) fuzzes `RDMA_LB_FUZZ_TARGET` for
//!   `RDMA_LB_FUZZ_SECONDS`, writes crashing inputs to `RDMA_LB_FUZZ_ARTIFACTS` and prints
//!   `fuzz-campaign: target=T execs=N secs=S crashes=C`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use rdma_lb_scenario::fuzz_check::{check, TARGETS};

/// Pieces of the formats, inserted by the mutator so random edits reach deeper checks.
const TOKENS: &[&str] = &[
    "\n",
    " ",
    "\t",
    "0",
    "1",
    "-1",
    "2",
    "3",
    "100",
    "1000",
    "2.000000001",
    "0.5",
    "1e309",
    "nan",
    "inf",
    "-0",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "Gbps",
    "Mbps",
    "bps",
    "ns",
    "us",
    "ms",
    "s",
    "KB",
    "KiB",
    "MiB",
    "B",
    "#",
    "=",
    "\"",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "[[",
    "]]",
    "\u{b5}",
    "\u{0}",
    "\r\n",
    "LINK_DOWN",
    "KMAX_MAP",
    "LB_MODE",
    "FLOW_FILE",
    "TOPOLOGY_FILE",
    "BUFFER_SIZE",
    "ENABLE_PFC",
    "[topology]",
    "[workload]",
    "[transport]",
    "[lb]",
    "[run]",
    "leaf_spine",
    "link_faults",
    "switch",
    "port",
    "up",
    "down",
    "at",
    "true",
    "false",
    "->",
    "Nodes",
    "Tiers",
    "Podsize",
    "Tier",
    "Radix_Down",
    "Radix_Up",
    "Bundle",
    "Oversubscribed",
    "Switch_Latency_ns",
    "Connections",
    "start",
    "size",
    "id",
    "trigger",
];

/// Interesting replacements for a run of digits.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "255",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "99999999999999999999999",
    "0.0",
    "1e-9",
    "1e18",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = repo().join("fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

fn range(rng: &mut Pcg64, len: usize) -> (usize, usize) {
    let a = rng.random_range(0..=len);
    let n = rng.random_range(0..=(len - a).min(64));
    (a, a + n)
}

/// One to eight stacked edits of `base` (bytes, lines, tokens, numbers, crossover).
fn mutate(rng: &mut Pcg64, base: &[u8], corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut s = base.to_vec();
    for _ in 0..rng.random_range(1..=8) {
        match rng.random_range(0..9) {
            0 if !s.is_empty() => {
                let i = rng.random_range(0..s.len());
                s[i] ^= 1 << rng.random_range(0..8);
            }
            1 if !s.is_empty() => {
                let i = rng.random_range(0..s.len());
                s[i] = rng.random();
            }
            2 => {
                let (a, b) = range(rng, s.len());
                s.drain(a..b);
            }
            3 => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
                let i = rng.random_range(0..=s.len());
                s.splice(i..i, t.iter().copied());
            }
            4 => {
                // Replace a run of digits with an interesting number.
                let starts: Vec<usize> = (0..s.len())
                    .filter(|&i| s[i].is_ascii_digit() && (i == 0 || !s[i - 1].is_ascii_digit()))
                    .collect();
                if let Some(&a) = starts.get(rng.random_range(0..starts.len().max(1))) {
                    let b = (a..s.len())
                        .find(|&i| !s[i].is_ascii_digit())
                        .unwrap_or(s.len());
                    let n = NUMBERS[rng.random_range(0..NUMBERS.len())].as_bytes();
                    s.splice(a..b, n.iter().copied());
                }
            }
            5 => {
                // Duplicate a range.
                let (a, b) = range(rng, s.len());
                let piece = s[a..b].to_vec();
                let i = rng.random_range(0..=s.len());
                s.splice(i..i, piece);
            }
            6 => {
                // Swap or duplicate whole lines.
                let mut lines: Vec<Vec<u8>> =
                    s.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                let (i, j) = (
                    rng.random_range(0..lines.len()),
                    rng.random_range(0..lines.len()),
                );
                if rng.random() {
                    lines.swap(i, j);
                } else {
                    let l = lines[i].clone();
                    lines.insert(j, l);
                }
                s = lines.join(&b'\n');
            }
            7 if !corpus.is_empty() => {
                // Crossover: a piece of another seed.
                let other = &corpus[rng.random_range(0..corpus.len())];
                let (a, b) = range(rng, other.len());
                let i = rng.random_range(0..=s.len());
                s.splice(i..i, other[a..b].iter().copied());
            }
            _ => {
                let n = rng.random_range(0..=s.len());
                s.truncate(n);
            }
        }
    }
    s
}

/// Outcome of a run of the mutator.
struct Stats {
    execs: u64,
    crashes: Vec<(Vec<u8>, String)>,
}

/// Fuzzes `target` until `deadline` or `max_execs` executions, from `seed`.
fn fuzz(target: &str, seed: u64, deadline: Option<Instant>, max_execs: u64) -> Stats {
    let seeds = corpus(target);
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut st = Stats {
        execs: 0,
        crashes: Vec::new(),
    };
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {})); // panics are counted, not printed
    while st.execs < max_execs && deadline.is_none_or(|d| st.execs % 256 != 0 || Instant::now() < d)
    {
        let base = &seeds[rng.random_range(0..seeds.len())];
        let input = mutate(&mut rng, base, &seeds);
        st.execs += 1;
        let r = panic::catch_unwind(AssertUnwindSafe(|| check(target, &input)));
        let failure = match r {
            Ok(Ok(())) => continue,
            Ok(Err(msg)) => msg,
            Err(p) => p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "panic".to_owned()),
        };
        if st.crashes.len() < 100 {
            st.crashes.push((input, failure));
        }
    }
    panic::set_hook(hook);
    st
}

#[test]
fn corpus_seeds_pass_the_check() {
    for t in TARGETS {
        let seeds = corpus(t);
        assert!(seeds.len() >= 3, "{t}: {} seed files", seeds.len());
        for (i, s) in seeds.iter().enumerate() {
            check(t, s).unwrap_or_else(|e| panic!("{t} seed {i}: {e}"));
        }
    }
}

#[test]
fn mutation_smoke() {
    for t in TARGETS {
        let st = fuzz(t, 1, None, 2_000);
        assert_eq!(st.execs, 2_000);
        assert!(
            st.crashes.is_empty(),
            "{t}: {} crashes, first: {} on {:?}",
            st.crashes.len(),
            st.crashes[0].1,
            String::from_utf8_lossy(&st.crashes[0].0)
        );
    }
}

#[test]
fn the_mutator_changes_inputs_and_is_seeded() {
    let seeds = corpus("cdf");
    let a: Vec<Vec<u8>> = (0..50)
        .map(|_| ())
        .scan(Pcg64::seed_from_u64(7), |r, ()| {
            Some(mutate(r, &seeds[0], &seeds))
        })
        .collect();
    let b: Vec<Vec<u8>> = (0..50)
        .map(|_| ())
        .scan(Pcg64::seed_from_u64(7), |r, ()| {
            Some(mutate(r, &seeds[0], &seeds))
        })
        .collect();
    assert_eq!(a, b, "same seed, same mutations");
    assert!(a.iter().filter(|m| **m != seeds[0]).count() > 40);
}

#[test]
#[ignore = "the campaign: scripts/fuzz --stable"]
fn campaign() {
    let target = std::env::var("RDMA_LB_FUZZ_TARGET").expect("RDMA_LB_FUZZ_TARGET");
    let secs: u64 = std::env::var("RDMA_LB_FUZZ_SECONDS")
        .expect("RDMA_LB_FUZZ_SECONDS")
        .parse()
        .expect("RDMA_LB_FUZZ_SECONDS: a number");
    let seed: u64 = std::env::var("RDMA_LB_FUZZ_SEED").map_or(1, |s| s.parse().expect("seed"));
    let t0 = Instant::now();
    let st = fuzz(
        &target,
        seed,
        Some(t0 + Duration::from_secs(secs)),
        u64::MAX,
    );
    let dir = std::env::var("RDMA_LB_FUZZ_ARTIFACTS").map_or_else(
        |_| {
            repo()
                .join("target/fuzz-work")
                .join(&target)
                .join("artifacts")
        },
        PathBuf::from,
    );
    for (i, (input, msg)) in st.crashes.iter().enumerate() {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("crash-stable-{i}")), input).unwrap();
        eprintln!("crash {i}: {msg}");
    }
    println!(
        "fuzz-campaign: target={target} execs={} secs={:.0} crashes={}",
        st.execs,
        t0.elapsed().as_secs_f64(),
        st.crashes.len()
    );
    assert!(st.crashes.is_empty(), "{} crashes", st.crashes.len());
}
