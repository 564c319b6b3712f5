//! The `rdma-lb` binary end to end, with a fake scenario program (a shell script that
//! records its arguments) so no ns-3 build is needed.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

static N: AtomicUsize = AtomicUsize::new(0);

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "rdma-lb-cli-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A fake scenario program: appends its arguments to `log` (one run per line), writes a
/// summary.json into `--out=DIR`, and exits with `code`.
fn fake_sim(dir: &Path, code: i32) -> (PathBuf, PathBuf) {
    let log = dir.join("sim.log");
    let sim = dir.join("fake-sim.sh");
    std::fs::write(
        &sim,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nfor a in \"$@\"; do case \"$a\" in --out=*) d=\"${{a#--out=}}\"; mkdir -p \"$d\"; echo '{{}}' > \"$d/summary.json\";; esac; done\nexit {code}\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&sim, std::fs::Permissions::from_mode(0o755)).unwrap();
    (sim, log)
}

fn rdma_lb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdma-lb"))
        .args(args)
        .env_remove("RDMA_LB_SIM")
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn check_prints_a_summary() {
    let cfg = repo("configs/conweave_leaf_spine_alistorage.toml");
    let o = rdma_lb(&["check", cfg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("144 nodes: 128 hosts, 16 switches; 192 links; rates 100Gbps; delays 1000 ns"),
        "{out}"
    );
    assert!(out.contains("gbn + dcqcn, pfc on"), "{out}");
    assert!(out.trim_end().ends_with("ok"));
}

#[test]
fn check_reads_conweave_configs_and_prints_notes() {
    let d = scratch("cw");
    std::fs::write(
        d.join("flow.txt"),
        "2\n0 17 3 1000 2.0\n5 100 3 0 2.000001\n",
    )
    .unwrap();
    let topo = repo("data/conweave/config/leaf_spine_128_100G_OS2.txt");
    let cfg = d.join("config.txt");
    std::fs::write(
        &cfg,
        format!(
            "TOPOLOGY_FILE {}\nFLOW_FILE flow.txt\nVOQ_MON_FILE voq.txt\nLB_MODE 0\nENABLE_IRN 1\nENABLE_PFC 0\nRANDOM_SEED 4\n",
            topo.display()
        ),
    )
    .unwrap();
    let o = rdma_lb(&["check", cfg.to_str().unwrap(), "--lb", "spray"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("flows      2 flows, 1001 bytes, starts 2000000000..2000001000 ns"),
        "{out}"
    );
    assert!(out.contains("irn + dcqcn, pfc off"), "{out}");
    assert!(out.contains("lb         spray"), "{out}");
    assert!(
        out.contains("seed 4, flowgen 2000000000..2500000000 ns"),
        "{out}"
    );
    assert_eq!(
        stderr(&o),
        format!(
            "warning: {}:3: VOQ_MON_FILE: accepted; rdma-lb does not produce this file\n",
            cfg.display()
        )
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let d = scratch("bad");
    let cfg = d.join("bad.toml");
    std::fs::write(&cfg, "[topology]\nleaf_spine = { leaves = 2, hosts_per_leaf = 2, spines = 1, host_rate = \"100Gbps\", delay = \"1 hour\" }\n[workload]\n").unwrap();
    let o = rdma_lb(&["check", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with(&format!(
            "rdma-lb: {}:2: topology.leaf_spine.delay: time `1 hour`",
            cfg.display()
        )),
        "{e}"
    );
    let o = rdma_lb(&["check", "/nonexistent.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "rdma-lb: /nonexistent.txt: config: cannot read: No such file or directory (os error 2)\n"
    );
    let o = rdma_lb(&[
        "check",
        repo("configs/leaf_spine_demo.toml").to_str().unwrap(),
        "--lb",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("rdma-lb: overrides: lb: algorithm `nope`: unknown algorithm"),
        "{}",
        stderr(&o)
    );
    // A transport parameter out of its row's range, through the override.
    let o = rdma_lb(&[
        "check",
        repo("configs/leaf_spine_demo.toml").to_str().unwrap(),
        "--transport",
        "rate_decrease_interval = 0us",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "rdma-lb: overrides: transport.rate_decrease_interval: must be > 0\n"
    );
}

#[test]
fn run_validates_then_spawns_the_program_with_the_overrides() {
    let d = scratch("run");
    let (sim, log) = fake_sim(&d, 0);
    let cfg = repo("configs/leaf_spine_demo.toml");
    let out_dir = d.join("out");
    let o = rdma_lb(&[
        "run",
        cfg.to_str().unwrap(),
        "--lb",
        "reps",
        "--lb-params",
        "num_entropies = 64",
        "--seed",
        "3",
        "--transport",
        "rp_timer = 100us",
        "--out",
        out_dir.to_str().unwrap(),
        "--sim",
        sim.to_str().unwrap(),
        "--",
        "--ns3::RdmaIrn::IrnRtoWithPfc=true",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let args = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        args.trim_end(),
        format!(
            "--config={} --lb=reps --lbParams=num_entropies = 64 --seed=3 --transport=rp_timer = 100us --out={} --progress=auto --ns3::RdmaIrn::IrnRtoWithPfc=true",
            cfg.display(),
            out_dir.display()
        )
    );
    // The program's exit status is ours; RDMA_LB_SIM is honoured.
    let (sim7, log7) = fake_sim(&scratch("run7"), 7);
    let o = Command::new(env!("CARGO_BIN_EXE_rdma-lb"))
        .args(["run", cfg.to_str().unwrap()])
        .env("RDMA_LB_SIM", &sim7)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(7));
    assert!(std::fs::read_to_string(&log7)
        .unwrap()
        .starts_with("--config="));
    // Bad input: the program is never started.
    let (sim_b, log_b) = fake_sim(&scratch("runbad"), 0);
    let o = rdma_lb(&[
        "run",
        cfg.to_str().unwrap(),
        "--lb",
        "bogus",
        "--sim",
        sim_b.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!log_b.exists(), "the program must not run on bad input");
    // A missing program is a one-line error.
    let o = rdma_lb(&["run", cfg.to_str().unwrap(), "--sim", "/nonexistent/sim"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("scenario program /nonexistent/sim not found"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn flowgen_writes_a_conweave_flow_file_deterministically() {
    let d = scratch("flowgen");
    let cdf = repo("data/conweave/traffic_gen/AliStorage2019.txt");
    let gen = |out: &Path, seed: &str| {
        rdma_lb(&[
            "flowgen",
            "--cdf",
            cdf.to_str().unwrap(),
            "--hosts",
            "16",
            "--load",
            "0.25",
            "--bandwidth",
            "100G",
            "--duration-ns",
            "2000000",
            "--seed",
            seed,
            "-o",
            out.to_str().unwrap(),
        ])
    };
    let (a, b, c) = (d.join("a.txt"), d.join("b.txt"), d.join("c.txt"));
    for (p, s) in [(&a, "1"), (&b, "1"), (&c, "2")] {
        let o = gen(p, s);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let (ta, tb, tc) = (
        std::fs::read_to_string(&a).unwrap(),
        std::fs::read_to_string(&b).unwrap(),
        std::fs::read_to_string(&c).unwrap(),
    );
    assert_eq!(ta, tb);
    assert_ne!(ta, tc);
    // 16 hosts × 2 ms at 13.08 µs mean gap ≈ 2,447 flows; header = count; 5 fields; 2 s start.
    let lines: Vec<&str> = ta.lines().collect();
    let n: usize = lines[0].parse().unwrap();
    assert_eq!(n, lines.len() - 1);
    assert!((2_200..2_700).contains(&n), "{n}");
    for l in &lines[1..] {
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(f.len(), 5);
        assert_eq!(f[2], "3");
        assert!(f[4].starts_with("2.00") && f[4].len() == 11, "{l}");
    }
    let o = rdma_lb(&[
        "flowgen",
        "--cdf",
        "/nope",
        "--hosts",
        "4",
        "--load",
        "0.2",
        "--duration-ns",
        "10",
        "--seed",
        "1",
        "-o",
        "/tmp/x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "rdma-lb: /nope: cdf: cannot read: No such file or directory (os error 2)\n"
    );
    let o = gen(&d.join("bad.txt"), "x");
    assert_eq!(o.status.code(), Some(2), "clap usage errors also exit 2");
}

/// `rdma-lb sweep` over `cfg` × {ecmp, spray} × seeds {1, 2} into `root` with `sim`.
fn sweep_2x2<'a>(cfg: &'a Path, root: &'a Path, sim: &'a Path) -> Vec<&'a str> {
    vec![
        "sweep",
        "--config",
        cfg.to_str().unwrap(),
        "--lb",
        "ecmp,spray",
        "--seed",
        "1,2",
        "--out-root",
        root.to_str().unwrap(),
        "--sim",
        sim.to_str().unwrap(),
    ]
}

#[test]
fn sweep_runs_the_grid_once_and_resumes() {
    let d = scratch("sweep");
    let (sim, log) = fake_sim(&d, 0);
    let root = d.join("results");
    let cfg = repo("configs/leaf_spine_demo.toml");
    let args = [&sweep_2x2(&cfg, &root, &sim)[..], &["--jobs", "2"]].concat();
    let o = rdma_lb(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 4);
    let mut dirs: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 4);
    assert!(
        dirs[0].starts_with("leaf_spine_demo-ecmp-s1-")
            && dirs[0].len() == "leaf_spine_demo-ecmp-s1-".len() + 16,
        "{dirs:?}"
    );
    // Second time: every point has its summary.json → nothing runs.
    let o = rdma_lb(&args);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("4 points, 4 already finished (skipped), 0 to run"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 4);
    // Same names, same hashes (stable across processes).
    let o = rdma_lb(&[&args[..], &["--dry-run"]].concat());
    let listed = String::from_utf8_lossy(&o.stdout);
    for d in &dirs {
        assert!(listed.contains(d.as_str()), "{d} not in {listed}");
    }
}

#[test]
fn sweep_writes_a_slurm_job_array_that_runs_and_resumes_like_a_local_sweep() {
    let d = scratch("slurm");
    let (sim, log) = fake_sim(&d, 0);
    let root = d.join("results");
    let script = d.join("sweep.sbatch");
    // Relative, as users type it (tests run in rust-lb/cli): the script must still work from
    // any directory, and its directory names must be the local sweep's.
    let cfg = PathBuf::from("../../configs/leaf_spine_demo.toml");
    assert!(cfg.is_file());
    let grid = sweep_2x2(&cfg, &root, &sim);
    let with_params = [&grid[..], &["--lb-params", "num_entropies = 16"]].concat();
    // ecmp takes no parameters: the whole grid is validated before anything is written.
    let o = rdma_lb(&[&with_params[..], &["--slurm", script.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("algorithm `ecmp`"), "{}", stderr(&o));
    assert!(!script.exists());
    let o = rdma_lb(&[&grid[..], &["--slurm", script.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!log.exists(), "writing the script runs nothing");
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(text.contains("#SBATCH --array=0-3\n"), "{text}");
    assert!(text.contains(&format!(
        "#SBATCH --output={}/slurm-%A_%a.out",
        root.display()
    )));
    assert_eq!(text.lines().filter(|l| l.contains(") label=")).count(), 4);
    // The points, in the local sweep's order and directories.
    let o = rdma_lb(&[&grid[..], &["--dry-run"]].concat());
    let listed: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap().to_owned())
        .collect();
    assert_eq!(listed.len(), 4);
    let task = |id: &str| {
        Command::new("bash")
            .arg(&script)
            .env("SLURM_ARRAY_TASK_ID", id)
            .current_dir("/")
            .output()
            .unwrap()
    };
    // Task 2 runs its point (from any directory: the paths are absolute) ...
    let o = task("2");
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = std::fs::read_to_string(&log).unwrap();
    assert_eq!(runs.lines().count(), 1);
    assert!(
        runs.contains(&format!("--out={}", listed[2])),
        "{runs} vs {listed:?}"
    );
    assert!(Path::new(&listed[2]).join("summary.json").is_file());
    // ... once: a second submission skips it; an index outside the grid is an error.
    let o = task("2");
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("finished already"));
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
    assert_eq!(task("4").status.code(), Some(2));
    // A local sweep over the same root picks up what the array finished.
    let o = rdma_lb(&grid);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("4 points, 1 already finished (skipped), 3 to run"),
        "{}",
        stderr(&o)
    );
}

/// A fake MPI launcher: appends its arguments to `log`, drops `-np N` and runs the rest.
fn fake_mpirun(dir: &Path) -> (PathBuf, PathBuf) {
    let log = dir.join("mpirun.log");
    let launcher = dir.join("fake-mpirun.sh");
    std::fs::write(
        &launcher,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\n[ \"$1\" = -np ] || exit 9\nshift 2\nexec \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
    (launcher, log)
}

#[test]
fn ranks_run_under_the_mpi_launcher_in_directories_of_their_own_order() {
    let d = scratch("ranks");
    let (sim, sim_log) = fake_sim(&d, 0);
    let (launcher, launch_log) = fake_mpirun(&d);
    let root = d.join("results");
    let cfg = repo("configs/leaf_spine_demo.toml");
    let grid = [
        "sweep",
        "--config",
        cfg.to_str().unwrap(),
        "--lb",
        "ecmp",
        "--seed",
        "1",
        "--out-root",
        root.to_str().unwrap(),
        "--sim",
        sim.to_str().unwrap(),
    ];
    let listed = |extra: &[&str]| {
        let o = rdma_lb(&[&grid[..], extra, &["--dry-run"]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).trim().to_owned()
    };
    let one = listed(&[]);
    let two = listed(&["--ranks", "2"]);
    // Same label, another hash: the order of same-time events differs from one rank's default
    // (outputs differ), and is the same for every rank count > 1.
    assert_eq!(one.split('\t').next(), two.split('\t').next());
    assert_ne!(one, two);
    assert_eq!(two, listed(&["--ranks", "4"]));
    let o = rdma_lb(
        &[
            &grid[..],
            &["--ranks", "2", "--mpirun", launcher.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let launched = std::fs::read_to_string(&launch_log).unwrap();
    assert!(
        launched.starts_with(&format!("-np 2 {} --config=", sim.display())),
        "{launched}"
    );
    let ran = std::fs::read_to_string(&sim_log).unwrap();
    assert!(ran.trim_end().ends_with("--ranks=2"), "{ran}");
    let dir = two.split('\t').nth(1).unwrap();
    assert!(ran.contains(&format!("--out={dir}")), "{ran} vs {dir}");
    // `run` takes the same options.
    let out = d.join("run-out");
    let o = rdma_lb(&[
        "run",
        cfg.to_str().unwrap(),
        "--sim",
        sim.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--ranks",
        "3",
        "--mpirun",
        launcher.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let launched = std::fs::read_to_string(&launch_log).unwrap();
    assert!(
        launched.lines().nth(1).unwrap().starts_with("-np 3 "),
        "{launched}"
    );
    assert!(launched.trim_end().ends_with("--ranks=3"), "{launched}");
    // A Slurm array task asks for the ranks and starts them with srun.
    let script = d.join("ranks.sbatch");
    let o = rdma_lb(
        &[
            &grid[..],
            &["--ranks", "2", "--slurm", script.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(text.contains("#SBATCH --ntasks=2\n"), "{text}");
    assert!(
        text.contains("exec srun --ntasks=2 \"$sim\" \"${args[@]}\" --ranks=2\n"),
        "{text}"
    );
    // Bad values: status 2, the first line names the option, nothing run.
    for bad in [
        &["--ranks", "0"][..],
        &["--ranks", "2", "--mpirun", " "][..],
    ] {
        let o = rdma_lb(&[&grid[..], bad].concat());
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        let first = stderr(&o).lines().next().unwrap_or_default().to_owned();
        assert!(first.contains(bad[bad.len() - 2]), "{first}");
    }
    assert_eq!(
        std::fs::read_to_string(&sim_log).unwrap().lines().count(),
        2
    );
}

#[test]
fn help_explains_every_option() {
    for (sub, words) in [
        (
            "run",
            &[
                "--lb",
                "--lb-params",
                "--seed",
                "--stop",
                "--load",
                "--out",
                "--sim",
                "RDMA_LB_SIM",
                "--progress",
            ][..],
        ),
        ("check", &["--lb", "--seed", "--verbose"][..]),
        (
            "flowgen",
            &[
                "--cdf",
                "--hosts",
                "--load",
                "--bandwidth",
                "--duration-ns",
                "--seed",
                "--start-ns",
                "--output",
            ][..],
        ),
        (
            "sweep",
            &[
                "--config",
                "--lb",
                "--load",
                "--seed",
                "--jobs",
                "--out-root",
                "--dry-run",
                "--ranks",
                "--mpirun",
            ][..],
        ),
    ] {
        let o = rdma_lb(&[sub, "--help"]);
        assert!(o.status.success());
        let h = String::from_utf8_lossy(&o.stdout);
        for w in words {
            assert!(h.contains(w), "{sub} --help lacks {w}:\n{h}");
        }
    }
}

/// A slow fake scenario program that writes its outputs as the real one does: under `.part`
/// names while it runs (`fct.txt.part` at once), renamed at the end, summary.json last.
fn slow_fake_sim(dir: &Path) -> (PathBuf, PathBuf) {
    let log = dir.join("sim.log");
    let sim = dir.join("slow-sim.sh");
    std::fs::write(
        &sim,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nfor a in \"$@\"; do case \"$a\" in --out=*) d=\"${{a#--out=}}\";; esac; done\n\
             rm -f \"$d/summary.json\"\necho partial > \"$d/fct.txt.part\"\nsleep 0.6\n\
             echo complete >> \"$d/fct.txt.part\"\necho '{{}}' > \"$d/summary.json.part\"\n\
             mv \"$d/fct.txt.part\" \"$d/fct.txt\"\nmv \"$d/summary.json.part\" \"$d/summary.json\"\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&sim, std::fs::Permissions::from_mode(0o755)).unwrap();
    (sim, log)
}

/// (points with a summary.json, points without); panics if a finished-looking point is not
/// complete or an unfinished one has a final fct.txt.
fn sweep_points(root: &Path) -> (usize, usize) {
    let (mut done, mut open) = (0, 0);
    for e in std::fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        if p.join("summary.json").is_file() {
            let fct = std::fs::read_to_string(p.join("fct.txt")).unwrap();
            assert_eq!(fct, "partial\ncomplete\n", "{}", p.display());
            done += 1;
        } else {
            assert!(
                !p.join("fct.txt").exists(),
                "{} looks finished",
                p.display()
            );
            open += 1;
        }
    }
    (done, open)
}

fn interrupted_sweep_resumes(signal: &str, status: i32) {
    let d = scratch(&format!("sweep-{signal}"));
    let (sim, log) = slow_fake_sim(&d);
    let root = d.join("results");
    let cfg = repo("configs/leaf_spine_demo.toml");
    let args = [
        "sweep",
        "--config",
        cfg.to_str().unwrap(),
        "--lb",
        "ecmp,spray,reps",
        "--seed",
        "1,2",
        "--out-root",
        root.to_str().unwrap(),
        "--sim",
        sim.to_str().unwrap(),
        "--jobs",
        "2",
    ];
    let child = Command::new(env!("CARGO_BIN_EXE_rdma-lb"))
        .args(args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Signal once the first two points have finished and two more are running.
    let t0 = std::time::Instant::now();
    while std::fs::read_to_string(&log).map_or(0, |l| l.lines().count()) < 4 {
        assert!(t0.elapsed().as_secs() < 30, "the sweep did not get going");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    let kill = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(status), "{err}");
    assert!(
        err.contains(&format!("sweep: interrupted by SIG{signal}: "))
            && err.contains("run the same command to resume"),
        "{err}"
    );
    let (done, open) = sweep_points(&root);
    let runs = std::fs::read_to_string(&log).unwrap().lines().count();
    assert!(
        (2..6).contains(&done) && runs < 6,
        "done {done}, runs {runs}: {err}"
    );
    assert!(
        err.contains(&format!("{done} of 6 points finished, ")),
        "{done}: {err}"
    );
    assert_eq!(
        open,
        runs - done,
        "every point started and not finished left its directory"
    );
    // Resume: only the unfinished points run, each once; then all 6 are complete.
    let o = rdma_lb(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "6 points, {done} already finished (skipped), {} to run",
            6 - done
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(sweep_points(&root), (6, 0));
    let runs_after = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(runs_after, runs + 6 - done);
}

#[test]
fn sweep_interrupted_by_sigterm_leaves_no_finished_looking_point_and_resumes() {
    interrupted_sweep_resumes("TERM", 143);
}

#[test]
fn sweep_interrupted_by_sigint_leaves_no_finished_looking_point_and_resumes() {
    interrupted_sweep_resumes("INT", 130);
}
