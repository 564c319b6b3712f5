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
//!
//! SIGINT or SIGTERM stops a local sweep cleanly: no new point starts, the running scenario
//! programs are killed (their outputs stay under temporary `.part` names, and no
//! `summary.json`: the scenario program renames its files only at the end, summary.json
//! last), the sweep says what finished and what will run again, and exits with 128 + the
//! signal number. Running the same command again resumes.
//!
//! Beyond one machine (Slurm is what research clusters run), `--slurm FILE` writes the same grid as
//! a Slurm job array instead of running it: one array task per point, each running the scenario
//! program with the same arguments into the same directory (so results are laid out exactly as a
//! local sweep lays them out, and a local sweep over the same root skips what the cluster
//! finished), skipping a point that already has its `summary.json`. Paths in the script are
//! absolute; the cluster must see the same files (a shared file system).
//!
//! `--ranks N` (N > 1) spreads each run over N MPI ranks (ns-3's distributed simulator; the
//! program needs ns-3 built with MPI): locally under the launcher `--mpirun` (`mpirun -np N`),
//! in a Slurm script as `srun --ntasks=N` with `#SBATCH --ntasks=N`. A run over ranks orders
//! same-time events partition-invariantly, which gives other (equally valid) outputs than the
//! default one-rank order, identical for every N > 1: its directory hash covers that order, not
//! N, so a sweep over 2 ranks resumes one over 4 and never one of the default order.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;

use crate::failure::Failure;
use crate::program::{load, sim_args, sim_path, OverrideArgs, RankArgs};

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
    /// Write the grid as a Slurm job array script (`sbatch FILE`) instead of running it.
    #[arg(long, value_name = "FILE", conflicts_with = "dry_run")]
    slurm: Option<PathBuf>,
    #[command(flatten)]
    ranks: RankArgs,
}

/// What the directory hash adds to the effective configuration of a run over ranks: its
/// same-time order (`--partitionInvariant`, implied by `--ranks` > 1), which changes outputs.
const PARTITION_INVARIANT_MARK: &str = "\n# same-time order: partition-invariant (--ranks > 1)\n";

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

/// `path` made absolute against the working directory (not resolved: symlinks stay).
fn absolute(path: &Path) -> Result<PathBuf, Failure> {
    std::path::absolute(path).map_err(|e| {
        Failure(format!(
            "{}: cannot make the path absolute: {e}",
            path.display()
        ))
    })
}

/// `s` quoted for a POSIX shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The Slurm job array script running `points` with `sim`, one array task per point, each on
/// `ranks` MPI ranks (`srun`) when more than one.
fn slurm_script(points: &[Point], sim: &Path, out_root: &Path, ranks: u32) -> String {
    let mut s = String::new();
    s.push_str("#!/usr/bin/env bash\n");
    s.push_str(
        "# Written by `rdma-lb sweep --slurm`: one array task per sweep point. Submit with\n",
    );
    s.push_str("# `sbatch THIS_FILE`; a point whose directory has a summary.json is skipped.\n");
    s.push_str("#SBATCH --job-name=rdma-lb-sweep\n");
    s.push_str(&format!(
        "#SBATCH --array=0-{}\n",
        points.len().saturating_sub(1)
    ));
    s.push_str(&format!(
        "#SBATCH --ntasks={ranks}\n#SBATCH --cpus-per-task=1\n"
    ));
    s.push_str(&format!(
        "#SBATCH --output={}/slurm-%A_%a.out\n",
        out_root.display()
    ));
    s.push_str("set -euo pipefail\n");
    s.push_str(&format!(
        "sim={}\n",
        shell_quote(&sim.display().to_string())
    ));
    s.push_str("task=\"${SLURM_ARRAY_TASK_ID:?submit with sbatch, or set SLURM_ARRAY_TASK_ID}\"\n");
    s.push_str("case \"$task\" in\n");
    for (i, p) in points.iter().enumerate() {
        let args: Vec<String> = p.args.iter().map(|a| shell_quote(a)).collect();
        s.push_str(&format!(
            "{i}) label={}; dir={}; args=({}) ;;\n",
            shell_quote(&p.label),
            shell_quote(&p.dir.display().to_string()),
            args.join(" ")
        ));
    }
    s.push_str("*) echo \"rdma-lb sweep: no point $task (0..");
    s.push_str(&format!(
        "{})\" >&2; exit 2 ;;\nesac\n",
        points.len().saturating_sub(1)
    ));
    s.push_str(
        "if [ -f \"$dir/summary.json\" ]; then echo \"$label: finished already\"; exit 0; fi\n",
    );
    s.push_str("mkdir -p \"$dir\"\n");
    if ranks > 1 {
        s.push_str(&format!(
            "exec srun --ntasks={ranks} \"$sim\" \"${{args[@]}}\" --ranks={ranks}\n"
        ));
    } else {
        s.push_str("exec \"$sim\" \"${args[@]}\"\n");
    }
    s
}

pub(crate) fn sweep(a: &SweepArgs) -> Result<ExitCode, Failure> {
    if a.ranks.ranks > 1 && a.slurm.is_none() && a.ranks.mpirun.split_whitespace().next().is_none()
    {
        return Err(Failure("--mpirun: empty launcher".to_owned()));
    }
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
                        quirks: None,
                        transport: None,
                    };
                    let s = load(config, &o.to_text(None)).map_err(|Failure(m)| {
                        Failure(format!(
                            "{m} (sweep point lb={lb:?} load={load_v:?} seed={seed:?})"
                        ))
                    })?;
                    let mut effective = s.effective_config();
                    if a.ranks.ranks > 1 {
                        effective.push_str(PARTITION_INVARIANT_MARK);
                    }
                    let hash = fnv1a64(effective.as_bytes());
                    let load_part = load_v.as_ref().map_or(String::new(), |l| format!("-l{l}"));
                    let label = format!("{}-{}{}-s{}", s.name, s.lb.name, load_part, s.run.seed);
                    let mut dir = a.out_root.join(format!("{label}-{hash:016x}"));
                    let args = if a.slurm.is_some() {
                        // A job script must not depend on the directory it is submitted from;
                        // the names and hashes stay those of the local sweep.
                        dir = absolute(&dir)?;
                        sim_args(&absolute(config)?, &o, Some(&dir), "off")
                    } else {
                        sim_args(config, &o, Some(&dir), "off")
                    };
                    points.push(Point { label, dir, args });
                }
            }
        }
    }
    let total = points.len();
    if let Some(file) = &a.slurm {
        let out_root = absolute(&a.out_root)?;
        let sim = absolute(&sim_path(a.sim.as_deref()))?;
        // Slurm opens each task's log in out_root before the task starts.
        std::fs::create_dir_all(&out_root)
            .map_err(|e| Failure(format!("{}: cannot create: {e}", out_root.display())))?;
        std::fs::write(file, slurm_script(&points, &sim, &out_root, a.ranks.ranks))
            .map_err(|e| Failure(format!("{}: cannot write: {e}", file.display())))?;
        eprintln!(
            "sweep: {total} points written as a Slurm job array to {} (sbatch {0}); results \
             under {}",
            file.display(),
            out_root.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
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
    if !sim.exists() {
        return Err(Failure(format!(
            "scenario program {} not found (build it with scripts/build, or pass --sim / set RDMA_LB_SIM)",
            sim.display()
        )));
    }
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    // The signal that stopped the sweep (0: none yet).
    let stop = Arc::new(AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let value = usize::try_from(sig).unwrap_or(1);
        signal_hook::flag::register_usize(sig, stop.clone(), value)
            .map_err(|e| Failure(format!("cannot handle signal {sig}: {e}")))?;
    }
    let n_todo = todo.len();
    let queue = Arc::new(Mutex::new(todo.into_iter().collect::<VecDeque<_>>()));
    let failed = Arc::new(Mutex::new(Vec::<String>::new()));
    let stopped = Arc::new(Mutex::new(Vec::<String>::new()));
    let finished = Arc::new(Mutex::new(0usize));
    let workers: Vec<_> = (0..jobs.min(n_todo.max(1)))
        .map(|_| {
            let (queue, failed, stopped, finished, sim, stop, ranks) = (
                queue.clone(),
                failed.clone(),
                stopped.clone(),
                finished.clone(),
                sim.clone(),
                stop.clone(),
                a.ranks.clone(),
            );
            std::thread::spawn(move || loop {
                if stop.load(Ordering::SeqCst) != 0 {
                    break;
                }
                let next = queue.lock().ok().and_then(|mut q| q.pop_front());
                let Some(p) = next else { break };
                let t0 = Instant::now();
                let outcome = run_point(&sim, &p, &ranks, &stop);
                let (word, list) = match outcome {
                    Outcome::Done => ("done", None),
                    Outcome::Failed => ("FAILED", Some(&failed)),
                    Outcome::Stopped => ("stopped", Some(&stopped)),
                };
                let n = finished.lock().map_or(0, |mut f| {
                    *f += 1;
                    *f
                });
                eprintln!(
                    "[{n}/{n_todo}] {word} {} ({:.1} s)",
                    p.label,
                    t0.elapsed().as_secs_f64()
                );
                if let Some(Ok(mut l)) = list.map(|l| l.lock()) {
                    l.push(p.label.clone());
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
    let sig = stop.load(Ordering::SeqCst);
    if sig != 0 {
        let stopped = stopped.lock().map(|f| f.clone()).unwrap_or_default();
        let not_started = queue.lock().map_or(0, |q| q.len());
        let done = n_todo - not_started - stopped.len() - failed.len();
        let name = if sig == usize::try_from(signal_hook::consts::SIGINT).unwrap_or(0) {
            "SIGINT"
        } else {
            "SIGTERM"
        };
        eprintln!(
            "sweep: interrupted by {name}: {done} of {n_todo} points finished, {} stopped \
             (no summary.json: they run again), {not_started} not started, {} failed; run the \
             same command to resume",
            stopped.len(),
            failed.len()
        );
        return Ok(ExitCode::from(u8::try_from(128 + sig).unwrap_or(1)));
    }
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

enum Outcome {
    /// Exit status 0 and a summary.json.
    Done,
    /// Anything else, not caused by a signal to the sweep.
    Failed,
    /// The sweep was signalled while the point ran; its program was killed.
    Stopped,
}

/// Runs one point's scenario program (on its ranks), polling for a stop signal every 20 ms.
fn run_point(sim: &Path, p: &Point, ranks: &RankArgs, stop: &AtomicUsize) -> Outcome {
    if std::fs::create_dir_all(&p.dir).is_err() {
        return Outcome::Failed;
    }
    let Ok(mut command) = ranks.command(sim, &p.args) else {
        return Outcome::Failed;
    };
    let Ok(mut child) = command.stdin(Stdio::null()).spawn() else {
        return Outcome::Failed;
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if stop.load(Ordering::SeqCst) != 0 => {
                let _ = child.kill();
                let _ = child.wait();
                return Outcome::Stopped;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    let ok = status.is_some_and(|s| s.success()) && p.dir.join("summary.json").is_file();
    match (ok, stop.load(Ordering::SeqCst)) {
        (true, _) => Outcome::Done,
        (false, 0) => Outcome::Failed,
        // Killed by the same terminal signal (Ctrl-C reaches the whole process group).
        (false, _) => Outcome::Stopped,
    }
}
