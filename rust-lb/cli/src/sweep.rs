//! `rdma-lb sweep`: a grid of configs × algorithms × loads × seeds, run by a local pool of
//! worker threads, resumable.
//!
//! Each point is validated first (all points, before anything runs: a typo fails the sweep
//! at once). Its results go to `OUT_ROOT/<stem>-<lb>[-l<load>]-s<seed>-<hash>`, where `hash`
//! is the FNV-1a 64-bit hash of the point's effective configuration (every setting except
//! the output directory, see `Scenario::effective_config`) — stable across runs and machines,
//! and different whenever any setting differs. A point whose directory already holds a
//! `summary.json` (written by the scenario program at the end of a successful run) is
//! skipped, so an interrupted sweep resumes where it stopped. Progress goes to stderr.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use clap::Args;

use crate::{load, sim_args, sim_path, spawn, Failure, OverrideArgs};

#[derive(Debug, Args)]
pub(crate) struct SweepArgs {
    /// Scenario configs (repeat or comma-separate).
    #[arg(
        long = "config",
        value_name = "FILE",
        value_delimiter = ',',
        required = true
    )]
    configs: Vec<PathBuf>,
    /// Algorithms (comma-separated) [default: each config's own].
    #[arg(long = "lb", value_name = "NAMES", value_delimiter = ',')]
    lbs: Vec<String>,
    /// Host loads for generated Poisson workloads (comma-separated) [default: each config's].
    #[arg(long = "load", value_name = "X", value_delimiter = ',')]
    loads: Vec<String>,
    /// Seeds (comma-separated) [default: each config's].
    #[arg(long = "seed", value_name = "N", value_delimiter = ',')]
    seeds: Vec<u64>,
    /// Algorithm parameters applied to every point (`k = v, ...`).
    #[arg(long, value_name = "STR")]
    lb_params: Option<String>,
    /// Parallel runs [default: number of CPUs].
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// Root directory of the results.
    #[arg(long, value_name = "DIR", default_value = "out/sweep")]
    out_root: PathBuf,
    /// The ns-3 scenario program [default: $RDMA_LB_SIM, else build/rdma-lb-scenario].
    #[arg(long, value_name = "PATH")]
    sim: Option<PathBuf>,
    /// List the points and their directories without running anything.
    #[arg(long)]
    dry_run: bool,
}

/// FNV-1a, 64 bits: a stable hash (no per-process random keys).
#[must_use]
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

struct Point {
    label: String,
    dir: PathBuf,
    args: Vec<String>,
}

fn options<T: Clone>(v: &[T]) -> Vec<Option<T>> {
    if v.is_empty() {
        vec![None]
    } else {
        v.iter().cloned().map(Some).collect()
    }
}

pub(crate) fn sweep(a: &SweepArgs) -> Result<ExitCode, Failure> {
    let mut points = Vec::new();
    for config in &a.configs {
        for lb in options(&a.lbs) {
            for load_v in options(&a.loads) {
                for seed in options(&a.seeds) {
                    let o = OverrideArgs {
                        lb: lb.clone(),
                        lb_params: a.lb_params.clone(),
                        seed,
                        stop: None,
                        load: load_v.clone(),
                    };
                    let s = load(config, &o.to_text(None)).map_err(|Failure(m)| {
                        Failure(format!(
                            "{m} (sweep point lb={lb:?} load={load_v:?} seed={seed:?})"
                        ))
                    })?;
                    let hash = fnv1a64(s.effective_config().as_bytes());
                    let load_part = load_v.as_ref().map_or(String::new(), |l| format!("-l{l}"));
                    let label = format!("{}-{}{}-s{}", s.name, s.lb.name, load_part, s.run.seed);
                    let dir = a.out_root.join(format!("{label}-{hash:016x}"));
                    let args = sim_args(config, &o, Some(&dir), "off");
                    points.push(Point { label, dir, args });
                }
            }
        }
    }
    let total = points.len();
    let (todo, done): (Vec<Point>, Vec<Point>) = points
        .into_iter()
        .partition(|p| !p.dir.join("summary.json").is_file());
    eprintln!(
        "sweep: {total} points, {} already finished (skipped), {} to run",
        done.len(),
        todo.len()
    );
    if a.dry_run {
        for p in done.iter().chain(todo.iter()) {
            println!("{}\t{}", p.label, p.dir.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let sim = sim_path(a.sim.as_deref());
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    let n_todo = todo.len();
    let queue = Arc::new(Mutex::new(todo.into_iter().collect::<VecDeque<_>>()));
    let failed = Arc::new(Mutex::new(Vec::<String>::new()));
    let finished = Arc::new(Mutex::new(0usize));
    let workers: Vec<_> = (0..jobs.min(n_todo.max(1)))
        .map(|_| {
            let (queue, failed, finished, sim) =
                (queue.clone(), failed.clone(), finished.clone(), sim.clone());
            std::thread::spawn(move || loop {
                let next = queue.lock().ok().and_then(|mut q| q.pop_front());
                let Some(p) = next else { break };
                let t0 = Instant::now();
                let ok = std::fs::create_dir_all(&p.dir).is_ok()
                    && spawn(&sim, &p.args).is_ok_and(|c| c == ExitCode::SUCCESS)
                    && p.dir.join("summary.json").is_file();
                let n = finished.lock().map_or(0, |mut f| {
                    *f += 1;
                    *f
                });
                eprintln!(
                    "[{n}/{n_todo}] {} {} ({:.1} s)",
                    if ok { "done" } else { "FAILED" },
                    p.label,
                    t0.elapsed().as_secs_f64()
                );
                if !ok {
                    if let Ok(mut f) = failed.lock() {
                        f.push(p.label.clone());
                    }
                }
            })
        })
        .collect();
    for w in workers {
        if w.join().is_err() {
            return Err(Failure("a sweep worker panicked".to_owned()));
        }
    }
    let failed = failed.lock().map(|f| f.clone()).unwrap_or_default();
    if failed.is_empty() {
        eprintln!("sweep: all {total} points finished");
        Ok(ExitCode::SUCCESS)
    } else {
        Err(Failure(format!(
            "{} of {n_todo} runs failed: {}",
            failed.len(),
            failed.join(", ")
        )))
    }
}
