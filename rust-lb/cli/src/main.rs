//! `rdma-lb`: the command line of rdma-lb (README.md, "Running scenarios").
//!
//! * `rdma-lb check CONFIG` — parse and validate a scenario, print a summary (no simulation);
//! * `rdma-lb run CONFIG` — validate, then run the ns-3 scenario program on it;
//! * `rdma-lb flowgen ...` — write a ConWeave flow file from a flow-size CDF (as ConWeave's
//!   `traffic_gen.py`);
//! * `rdma-lb sweep ...` — run a grid of configs × algorithms × loads × seeds.
//!
//! Every error is one line on stderr (`file:line: key: message` for bad input) and exit
//! status 2. Parsing and validation are those of the `rdma-lb-scenario` crate, the same code
//! the ns-3 program calls through the bridge.

mod failure;
mod program;
mod sweep;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use rdma_lb_scenario::cdf::parse_cdf_file;
use rdma_lb_scenario::flows::format_flow_file;
use rdma_lb_scenario::units::{format_rate, parse_rate_bps};
use rdma_lb_scenario::workload::{poisson_flows, PoissonSpec};
use rdma_lb_scenario::Scenario;

use failure::Failure;
use program::{load, sim_args, sim_path, spawn, OverrideArgs, RankArgs};

/// Datacenter load balancing for RDMA fabrics: check, run and sweep scenarios.
#[derive(Debug, Parser)]
#[command(name = "rdma-lb", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Parse and validate a scenario config and print a summary; no simulation.
    Check(CheckArgs),
    /// Validate a scenario config, then run the ns-3 scenario program on it.
    Run(RunArgs),
    /// Write a ConWeave flow file of Poisson arrivals with sizes from a CDF (as `traffic_gen.py`).
    Flowgen(FlowgenArgs),
    /// Run a grid of configs × algorithms × loads × seeds with a local worker pool.
    Sweep(sweep::SweepArgs),
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Scenario config: rdma-lb TOML (`.toml`) or a ConWeave key/value config (anything else).
    config: PathBuf,
    #[command(flatten)]
    overrides: OverrideArgs,
    /// Also print the effective settings (TOML).
    #[arg(long)]
    verbose: bool,
}

#[derive(Debug, Args)]
struct RunArgs {
    /// Scenario config: rdma-lb TOML (`.toml`) or a ConWeave key/value config (anything else).
    config: PathBuf,
    #[command(flatten)]
    overrides: OverrideArgs,
    /// Output directory (default: the program's `out/<config stem>-<lb>-s<seed>`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The ns-3 scenario program [default: $RDMA_LB_SIM, else build/rdma-lb-scenario under
    /// the repository root].
    #[arg(long, value_name = "PATH")]
    sim: Option<PathBuf>,
    /// Progress display of the simulation: auto, on or off.
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = ["auto", "on", "off"])]
    progress: String,
    #[command(flatten)]
    ranks: RankArgs,
    /// Extra arguments passed to the program unchanged (after `--`), e.g.
    /// `-- --ns3::RdmaIrn::IrnRtoWithPfc=true`.
    #[arg(last = true, value_name = "NS3_ARGS")]
    extra: Vec<String>,
}

#[derive(Debug, Args)]
struct FlowgenArgs {
    /// Flow-size CDF file (`size_bytes cumulative_percent` per line, as ConWeave's traffic_gen).
    #[arg(long, value_name = "FILE")]
    cdf: PathBuf,
    /// Number of hosts; flows go between hosts 0..N-1 (every host sends, uniform destinations).
    #[arg(long, value_name = "N")]
    hosts: u32,
    /// Offered load per host NIC, in (0, 1] (ConWeave's host load = fabric load / oversubscription).
    #[arg(long, value_name = "X")]
    load: f64,
    /// Host NIC rate, e.g. 100G or 100Gbps.
    #[arg(long, value_name = "RATE", default_value = "100G")]
    bandwidth: String,
    /// Length of the arrival window in ns.
    #[arg(long, value_name = "T")]
    duration_ns: u64,
    /// Seed of the generator (same seed, same file).
    #[arg(long, value_name = "S")]
    seed: u64,
    /// Start of the window in ns [default: 2 s, as traffic_gen.py].
    #[arg(long, value_name = "T0", default_value_t = 2_000_000_000)]
    start_ns: u64,
    /// Output flow file.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Cmd::Check(a) => check(&a),
        Cmd::Run(a) => run(&a),
        Cmd::Flowgen(a) => flowgen(&a).map(|()| ExitCode::SUCCESS),
        Cmd::Sweep(a) => sweep::sweep(&a),
    };
    match result {
        Ok(code) => code,
        Err(Failure(msg)) => {
            eprintln!("rdma-lb: {}", msg.lines().next().unwrap_or(""));
            ExitCode::from(2)
        }
    }
}

fn print_notes(s: &Scenario) {
    for n in &s.notes {
        eprintln!("warning: {n}");
    }
}

fn check(a: &CheckArgs) -> Result<ExitCode, Failure> {
    let s = load(&a.config, &a.overrides.to_text(None))?;
    print_notes(&s);
    let t = &s.topology;
    let hosts = t.hosts().len();
    let mut rates: Vec<u64> = t.links.iter().map(|l| l.rate_bps).collect();
    rates.sort_unstable();
    rates.dedup();
    let mut delays: Vec<u64> = t.links.iter().map(|l| l.delay_ns).collect();
    delays.sort_unstable();
    delays.dedup();
    let bytes: u64 = s.flows.iter().map(|f| f.size_bytes).sum();
    let first = s.flows.iter().map(|f| f.start_ns).min().unwrap_or(0);
    let last = s.flows.iter().map(|f| f.start_ns).max().unwrap_or(0);
    let mut out = std::io::stdout().lock();
    writeln!(out, "scenario   {} ({})", s.name, s.config_path)?;
    writeln!(
        out,
        "topology   {} nodes: {} hosts, {} switches; {} links; rates {}; delays {} ns",
        t.node_count,
        hosts,
        t.switch_ids.len(),
        t.links.len(),
        rates
            .iter()
            .map(|&r| format_rate(r))
            .collect::<Vec<_>>()
            .join(", "),
        delays
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    writeln!(
        out,
        "flows      {} flows, {} bytes, starts {}..{} ns, {} with dependencies",
        s.flows.len(),
        bytes,
        first,
        last,
        s.flows
            .iter()
            .filter(|f| !f.after.is_empty() || !f.compute_after.is_empty())
            .count()
    )?;
    if !s.collectives.is_empty() {
        let kinds: Vec<String> = rdma_lb_scenario::CollectiveKind::ALL
            .iter()
            .filter_map(|k| {
                let n = s.collectives.iter().filter(|c| c.kind == *k).count();
                (n > 0).then(|| format!("{n} {}", k.name()))
            })
            .collect();
        writeln!(
            out,
            "collectives {} groups: {}",
            s.collectives.len(),
            kinds.join(", ")
        )?;
    }
    let tr = &s.transport;
    if tr.kind == rdma_lb_scenario::TransportKind::Uet {
        let u = &tr.uet;
        // 0 = derived from the fabric by the scenario program (summary.json shows the values)
        let or_derived = |v: u64, unit: &str| {
            if v == 0 {
                "derived".to_owned()
            } else {
                format!("{v}{unit}")
            }
        };
        writeln!(
            out,
            "transport  uet: payload {} + header {} bytes, trimming {}, queue {}, ecn {} / {}, \
             initial window {}, cap {} BDP, base rtt {}, rto {}",
            u.payload_bytes,
            u.header_bytes,
            if u.trimming { "on" } else { "off" },
            or_derived(u.queue_packets.into(), " packets"),
            or_derived(u.ecn_kmin_packets.into(), " packets"),
            or_derived(u.ecn_kmax_packets.into(), " packets"),
            or_derived(u.initial_window_packets.into(), " packets"),
            u.max_window_bdp,
            or_derived(u.base_rtt_ns, " ns"),
            or_derived(u.rto_ns, " ns")
        )?;
    } else {
        writeln!(
            out,
            "transport  {} + {}, pfc {}, ecn {}, buffer {} bytes, payload {} bytes",
            tr.recovery.name(),
            tr.cc.name(),
            if tr.pfc_enabled { "on" } else { "off" },
            if tr.ecn_enabled { "on" } else { "off" },
            tr.buffer_bytes,
            tr.payload_bytes
        )?;
    }
    writeln!(
        out,
        "lb         {}{}",
        s.lb.name,
        if s.lb.params.is_empty() {
            String::new()
        } else {
            format!(" ({})", s.lb.params)
        }
    )?;
    writeln!(
        out,
        "run        seed {}, flowgen {}..{} ns, hard stop {} ns, {} link events",
        s.run.seed,
        s.run.flowgen_start_ns,
        s.run.flowgen_stop_ns,
        s.run.hard_stop_ns,
        s.run.link_events.len()
    )?;
    if a.verbose {
        writeln!(out, "\n{}", s.effective_config())?;
    }
    writeln!(out, "ok")?;
    Ok(ExitCode::SUCCESS)
}

fn run(a: &RunArgs) -> Result<ExitCode, Failure> {
    // Validate first with the same parser the program uses, so bad input fails here with the
    // same message and no simulator start-up.
    let s = load(&a.config, &a.overrides.to_text(a.out.as_deref()))?;
    print_notes(&s);
    let sim = sim_path(a.sim.as_deref());
    let mut args = sim_args(&a.config, &a.overrides, a.out.as_deref(), &a.progress);
    args.extend(a.extra.iter().cloned());
    spawn(&sim, &args, &a.ranks)
}

fn flowgen(a: &FlowgenArgs) -> Result<(), Failure> {
    let cdf = parse_cdf_file(&a.cdf)?;
    let rate_bps =
        parse_rate_bps(&a.bandwidth).map_err(|m| Failure(format!("--bandwidth: {m}")))?;
    if a.hosts < 2 {
        return Err(Failure("--hosts: need at least 2 hosts".to_owned()));
    }
    if !(a.load > 0.0 && a.load <= 1.0) {
        return Err(Failure(format!(
            "--load: must be in (0, 1], got {}",
            a.load
        )));
    }
    if a.duration_ns == 0 {
        return Err(Failure("--duration-ns: must be positive".to_owned()));
    }
    let spec = PoissonSpec {
        hosts: (0..a.hosts).map(|h| (h, rate_bps)).collect(),
        load: a.load,
        start_ns: a.start_ns,
        duration_ns: a.duration_ns,
        pg: 3,
        seed: a.seed,
    };
    #[allow(clippy::cast_precision_loss, reason = "an estimate")]
    let expected = f64::from(a.hosts) * rate_bps as f64 * a.load * a.duration_ns as f64 * 1e-9
        / (cdf.mean_bytes().max(1.0) * 8.0);
    #[allow(clippy::cast_precision_loss, reason = "an estimate")]
    let limit = rdma_lb_scenario::toml_config::MAX_FLOWS as f64;
    if expected > limit {
        return Err(Failure(format!(
            "would generate about {expected:.0} flows (limit {limit}); shorten --duration-ns"
        )));
    }
    let flows = poisson_flows(&spec, &cdf);
    std::fs::write(&a.output, format_flow_file(&flows))
        .map_err(|e| Failure(format!("{}: cannot write: {e}", a.output.display())))?;
    let bytes: u64 = flows.iter().map(|f| f.size_bytes).sum();
    #[allow(clippy::cast_precision_loss, reason = "a summary line")]
    let offered =
        bytes as f64 * 8.0 / (f64::from(a.hosts) * rate_bps as f64 * a.duration_ns as f64 * 1e-9);
    eprintln!(
        "{}: {} flows, {} bytes, mean size {:.1} B (CDF mean {:.1} B), offered host load {:.4}",
        a.output.display(),
        flows.len(),
        bytes,
        if flows.is_empty() {
            0.0
        } else {
            bytes as f64 / flows.len() as f64
        },
        cdf.mean_bytes(),
        offered
    );
    Ok(())
}
