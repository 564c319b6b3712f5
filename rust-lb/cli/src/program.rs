//! The ns-3 scenario program as the CLI drives it: the override options every subcommand
//! takes (as the program's command line or as the `key=value;...` text both parse), loading
//! and validating a scenario with them (the parser the program uses), where the program is,
//! and running it.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::Args;
use rdma_lb_scenario::{load_scenario, Overrides, Scenario};

use crate::failure::Failure;

/// Options that override a config's values (the same keys the ns-3 program accepts).
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct OverrideArgs {
    /// Load-balancing algorithm (overrides `[lb] name` / `LB_MODE`), e.g. ecmp, spray, reps.
    #[arg(long, value_name = "NAME")]
    pub(crate) lb: Option<String>,
    /// Algorithm parameters as `k = v, ...` (overrides `[lb] params` / `LB_PARAMS`).
    #[arg(long, value_name = "STR")]
    pub(crate) lb_params: Option<String>,
    /// Run seed (overrides `[run] seed` / `RANDOM_SEED`); generated workloads are re-drawn.
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
    /// Hard stop time with a unit, e.g. `50ms` (overrides `[run] stop`).
    #[arg(long, value_name = "TIME")]
    pub(crate) stop: Option<String>,
    /// Host load of a generated Poisson workload, in (0, 1] (TOML configs only).
    #[arg(long, value_name = "X")]
    pub(crate) load: Option<String>,
    /// Reference-simulator quirks to reproduce: all, none, or a comma list of names
    /// (ConWeave configs: all; TOML: `[transport] quirks`, default none).
    #[arg(long, value_name = "LIST")]
    pub(crate) quirks: Option<String>,
    /// Transport parameters as `k = v, ...` (override `[transport]` / the ConWeave keys): the
    /// TOML keys of the table of transport parameters, values as in TOML without quotes, e.g.
    /// `rp_timer = 300us, min_rate = 1Gbps`.
    #[arg(long, value_name = "STR")]
    pub(crate) transport: Option<String>,
}

impl OverrideArgs {
    /// The `key=value;...` text both this CLI and the ns-3 program parse.
    pub(crate) fn to_text(&self, out: Option<&Path>) -> String {
        let mut items = Vec::new();
        if let Some(v) = &self.lb {
            items.push(format!("lb={v}"));
        }
        if let Some(v) = &self.lb_params {
            items.push(format!("lb_params={v}"));
        }
        if let Some(v) = self.seed {
            items.push(format!("seed={v}"));
        }
        if let Some(v) = &self.stop {
            items.push(format!("stop={v}"));
        }
        if let Some(v) = &self.load {
            items.push(format!("load={v}"));
        }
        if let Some(v) = &self.quirks {
            items.push(format!("quirks={v}"));
        }
        if let Some(v) = &self.transport {
            items.push(format!("transport={v}"));
        }
        if let Some(o) = out {
            items.push(format!("out={}", o.display()));
        }
        items.join(";")
    }
}

/// Loads and validates with the overrides given on the command line.
pub(crate) fn load(config: &Path, overrides: &str) -> Result<Scenario, Failure> {
    let o = Overrides::parse(overrides)?;
    Ok(load_scenario(config, &o)?)
}

/// The repository root: the nearest ancestor of the current directory holding `rust-lb/`,
/// else the one this binary was built from.
fn repo_root() -> PathBuf {
    if let Ok(cwd) = std::env::current_dir() {
        if let Some(root) = cwd.ancestors().find(|d| d.join("rust-lb").is_dir()) {
            return root.to_path_buf();
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The scenario program: `--sim`, else `$RDMA_LB_SIM`, else `build/rdma-lb-scenario`.
pub(crate) fn sim_path(sim: Option<&Path>) -> PathBuf {
    if let Some(s) = sim {
        return s.to_path_buf();
    }
    if let Some(s) = std::env::var_os("RDMA_LB_SIM").filter(|s| !s.is_empty()) {
        return PathBuf::from(s);
    }
    repo_root().join("build/rdma-lb-scenario")
}

/// The scenario program's command line for one run.
pub(crate) fn sim_args(
    config: &Path,
    o: &OverrideArgs,
    out: Option<&Path>,
    progress: &str,
) -> Vec<String> {
    let mut args = vec![format!("--config={}", config.display())];
    if let Some(v) = &o.lb {
        args.push(format!("--lb={v}"));
    }
    if let Some(v) = &o.lb_params {
        args.push(format!("--lbParams={v}"));
    }
    if let Some(v) = o.seed {
        args.push(format!("--seed={v}"));
    }
    if let Some(v) = &o.stop {
        args.push(format!("--stop={v}"));
    }
    if let Some(v) = &o.load {
        args.push(format!("--load={v}"));
    }
    if let Some(v) = &o.quirks {
        args.push(format!("--quirks={v}"));
    }
    if let Some(v) = &o.transport {
        args.push(format!("--transport={v}"));
    }
    if let Some(v) = out {
        args.push(format!("--out={}", v.display()));
    }
    args.push(format!("--progress={progress}"));
    args
}

/// How many MPI ranks a run is spread over, and the launcher that starts them (ns-3's
/// distributed simulator; `ns3-module/doc/performance.md`, "Distributed runs (MPI)").
#[derive(Debug, Args, Clone)]
pub(crate) struct RankArgs {
    /// MPI ranks of each run: the scenario program is started by the launcher (`--mpirun`)
    /// with `-np N` and gets `--ranks=N`; it needs ns-3 built with MPI
    /// (`scripts/ns3-intree --mpi`). Runs on more than one rank order same-time events
    /// partition-invariantly, so their outputs are those of every rank count > 1, not of the
    /// default one-rank order.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub(crate) ranks: u32,
    /// The MPI launcher of local runs with `--ranks` > 1, split at spaces, e.g.
    /// `"mpirun --oversubscribe"` (a Slurm script uses `srun` instead).
    #[arg(long, value_name = "CMD", default_value = "mpirun")]
    pub(crate) mpirun: String,
}

impl RankArgs {
    /// The command starting `sim` with `args`: the program itself on one rank, else the
    /// launcher with `-np N` and the program with `--ranks=N` appended.
    pub(crate) fn command(&self, sim: &Path, args: &[String]) -> Result<Command, Failure> {
        if self.ranks == 1 {
            let mut c = Command::new(sim);
            c.args(args);
            return Ok(c);
        }
        let mut words = self.mpirun.split_whitespace();
        let launcher = words
            .next()
            .ok_or_else(|| Failure("--mpirun: empty launcher".to_owned()))?;
        let mut c = Command::new(launcher);
        c.args(words)
            .arg("-np")
            .arg(self.ranks.to_string())
            .arg(sim)
            .args(args)
            .arg(format!("--ranks={}", self.ranks));
        Ok(c)
    }
}

/// Runs the program (under the MPI launcher with more than one rank); its exit status becomes
/// ours (a signal → 1).
pub(crate) fn spawn(sim: &Path, args: &[String], ranks: &RankArgs) -> Result<ExitCode, Failure> {
    if !sim.exists() {
        return Err(Failure(format!(
            "scenario program {} not found (build it with scripts/build, or pass --sim / set RDMA_LB_SIM)",
            sim.display()
        )));
    }
    let status = ranks
        .command(sim, args)?
        .status()
        .map_err(|e| Failure(format!("cannot start {}: {e}", sim.display())))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        None => ExitCode::from(1),
    })
}
