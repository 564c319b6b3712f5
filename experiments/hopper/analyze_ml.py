"""Hopper ("Predictive Load Balancing for RDMA Traffic", section 4.1, Fig. 4) on the ML-training
workload: FCT slowdown of the six schemes in Fig. 4's four size bins.

The workload is our stand-in (gen_ml_cdf.py: the ring flows of AICB's Llama-7B ZeRO-2 / ZeRO-3
collectives), whose sizes fall in four groups, so the bins are those groups: one-packet flows
(64 B: layer-norm and bias AllGathers), 256 KiB (attention-weight shards), 688 KiB (MLP-weight
shards) and 2-17.5 MB (gradient buckets and embedding shards). Per run: flows started after
5 ms and finished before 150 ms, the largest dropped (analyze.py's window); per bin the average
and p99 slowdown (interpolated percentile, as analyze.py's groups). Hopper's improvement over
each baseline is paired by seed (same flow file). The paper's numbers: "up to 20 % average and
14 % p99" over FlowBender (the abstract's, from a third-party summary; our copy of the paper
lost them), and at moderate load ahead of CONGA.

Writes results_ml.csv (one row per run and bin) and slowdown_ml.png; prints the README tables.
Rows of the committed results_ml.csv whose run (load, scheme, seed) has no directory under
OUT_ROOT are kept and enter the tables (raw outputs are not committed, so a re-run on another
machine adds only what it runs).

Usage (from the repository root): python experiments/hopper/analyze_ml.py OUT_ROOT EXP_DIR
"""
import csv
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyze import SIX, WINDOW, improvement, run_dirs, spread  # noqa: E402
from plots import analysis, style  # noqa: E402
from plots.io import read_run  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402

STEM = "hopper_ml"
LOADS = [("0.25", "50%"), ("0.4", "80%")]
# (label, smallest size, largest size) in bytes: the four size groups of the stand-in.
BINS = [("64 B", 0, 1_000), ("256 KiB", 1_001, 300_000), ("688 KiB", 300_001, 1_000_000),
        ("2-17.5 MB", 1_000_001, 10**12)]
CLAIMS = [("flowbender", "FlowBender", 20.0, 14.0), ("conga", "CONGA", None, None)]


def run_bins(d):
    """{bin label: (n, avg, p99)} and the seed of one run."""
    run = read_run(d)
    lo, hi = WINDOW
    flows, _ = analysis.prepare_runs([run], lo, hi, drop_largest=True)[run.algorithm]
    sd = flows.slowdown
    out = {}
    for label, smin, smax in BINS:
        m = (flows.size >= smin) & (flows.size <= smax)
        v = sd[m]
        out[label] = (int(m.sum()), float(np.mean(v)) if len(v) else float("nan"),
                      float(np.percentile(v, 99)) if len(v) else float("nan"))
    return run.seed, out, run.summary


def kept_rows(path, fresh):
    """Committed rows of results_ml.csv for runs (load, scheme, seed) not in ``fresh``."""
    if not path.exists():
        return []
    with open(path) as f:
        return [r for r in csv.DictReader(f) if (r["load"], r["algorithm"], int(r["seed"])) not in fresh]


def main():
    out_root, exp = Path(sys.argv[1]), Path(sys.argv[2])
    cells = {}
    rows = []
    for load, load_label in LOADS:
        for algo in SIX:
            for d in run_dirs(out_root, STEM, load, algo):
                seed, bins, summary = run_bins(d)
                cells.setdefault(load_label, {}).setdefault(algo, {})[seed] = bins
                for label, (n, avg, p99) in bins.items():
                    rows.append({"load": load_label, "algorithm": algo, "seed": seed, "bin": label,
                                 "flows": n, "avg_slowdown": f"{avg:.4f}", "p99_slowdown": f"{p99:.4f}",
                                 "flows_completed": summary["flows_completed"],
                                 "flows_total": summary["flows_total"],
                                 "cpu_time_s": summary.get("cpu_time_s")})
    fresh = {(r["load"], r["algorithm"], r["seed"]) for r in rows}
    for r in kept_rows(exp / "results_ml.csv", fresh):
        bins = cells.setdefault(r["load"], {}).setdefault(r["algorithm"], {}).setdefault(int(r["seed"]), {})
        bins[r["bin"]] = (int(r["flows"]), float(r["avg_slowdown"]), float(r["p99_slowdown"]))
        rows.append(r)
    order = {label: i for i, (_, label) in enumerate(LOADS)}
    rows.sort(key=lambda r: (order[r["load"]], SIX.index(r["algorithm"]), int(r["seed"])))
    for algos in cells.values():
        for algo in algos:
            algos[algo] = dict(sorted(algos[algo].items()))
    cells = {label: {a: cells[label][a] for a in SIX if a in cells[label]}
             for _, label in LOADS if label in cells}
    with open(exp / "results_ml.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["load"])
        w.writeheader()
        w.writerows(rows)
    print_tables(cells)
    figure(cells, exp / "slowdown_ml.png")


def print_tables(cells):
    for load_label, algos in cells.items():
        seeds = max(len(v) for v in algos.values())
        print(f"\n{load_label} load (avg / p99 slowdown per bin, mean [min, max] over up to {seeds} seeds)\n")
        print("| scheme | " + " | ".join(b for b, _, _ in BINS) + " |")
        print("|---|" + "---|" * len(BINS))
        for algo in SIX:
            if algo not in algos:
                continue
            cells_txt = []
            for b, _, _ in BINS:
                avg = [r[b][1] for r in algos[algo].values()]
                p99 = [r[b][2] for r in algos[algo].values()]
                cells_txt.append(f"{spread(avg)} / {spread(p99)}")
            print(f"| {algo} | " + " | ".join(cells_txt) + " |")
        hop = algos.get("hopper", {})
        for base, name, paper_avg, paper_p99 in CLAIMS:
            pairs = [(algos[base][s], hop[s]) for s in sorted(algos.get(base, {})) if s in hop]
            if not pairs:
                continue
            print(f"\nHopper vs {name} ({len(pairs)} seeds paired; + = Hopper better"
                  + (f"; paper: up to {paper_avg:.0f} % avg / {paper_p99:.0f} % p99" if paper_avg else "")
                  + ")\n")
            print("| bin | avg | p99 |")
            print("|---|---|---|")
            best = {"avg": [], "p99": []}
            for b, _, _ in BINS:
                ia = [improvement(x[b][1], h[b][1]) for x, h in pairs]
                ip = [improvement(x[b][2], h[b][2]) for x, h in pairs]
                print(f"| {b} | {spread(ia, '{:+.1f}')} % | {spread(ip, '{:+.1f}')} % |")
            for x, h in pairs:
                best["avg"].append(max(improvement(x[b][1], h[b][1]) for b, _, _ in BINS))
                best["p99"].append(max(improvement(x[b][2], h[b][2]) for b, _, _ in BINS))
            print(f"| best bin (\"up to\") | {spread(best['avg'], '{:+.1f}')} % | {spread(best['p99'], '{:+.1f}')} % |")


def figure(cells, path):
    if not cells:
        return
    fig, axes = plt.subplots(2, len(cells), figsize=(5.5 * len(cells), 6.5), squeeze=False)
    width = 0.8 / len(SIX)
    x = np.arange(len(BINS))
    for col, (load_label, algos) in enumerate(cells.items()):
        for row, (k, stat) in enumerate([(1, "avg"), (2, "p99")]):
            ax = axes[row][col]
            for i, algo in enumerate(a for a in SIX if a in algos):
                vals = np.array([[r[b][k] for b, _, _ in BINS] for r in algos[algo].values()])
                mean = vals.mean(axis=0)
                colour, _ = style.style_for(algo)
                ax.bar(x + (i - len(SIX) / 2 + 0.5) * width, mean, width, color=colour, label=algo,
                       yerr=[mean - vals.min(axis=0), vals.max(axis=0) - mean] if len(vals) > 1 else None,
                       capsize=2)
            ax.set_xticks(x, [b for b, _, _ in BINS])
            ax.set_ylabel(f"{stat} FCT slowdown")
            ax.set_title(f"ML training (stand-in), {load_label} load")
            ax.grid(axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
