"""REPS experiment analysis: permutation completion time per fabric variant and algorithm.

Reads the sweep's run directories (summary.json + flows.csv), writes results.csv (one row per
run) and fct_cdf.png (FCT CDF per variant), and prints the table README.md shows.

Usage (from the repository root): python experiments/reps/analyze.py OUT_ROOT EXP_DIR
"""
import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plots.style import RC, COLUMN_WIDTH_IN, line_kwargs  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402

VARIANTS = [("reps_1to1", "1:1"), ("reps_8to1", "8:1"), ("reps_failures", "1:1 + 8 failed agg-core links")]
ALGOS = ["ecmp", "spray", "reps"]


def load(out_root):
    runs = []
    for summary in sorted(Path(out_root).glob("*/summary.json")):
        d = summary.parent
        s = json.loads(summary.read_text())
        stem = next((v for v, _ in VARIANTS if d.name.startswith(v + "-")), None)
        if stem is None:
            continue
        with open(d / "flows.csv") as f:
            fct_us = [int(r["fct_ns"]) / 1e3 for r in csv.DictReader(f)]
        runs.append({"variant": stem, "algorithm": s["algorithm"], "seed": s["seed"], "summary": s,
                     "fct_us": sorted(fct_us)})
    return runs


def row(r):
    s, f = r["summary"], r["fct_us"]
    c = s["counters"]
    total, done = s["flows_total"], s["flows_completed"]
    p99 = f[min(len(f) - 1, int(0.99 * len(f)))] if f else float("nan")
    return {
        "variant": r["variant"], "algorithm": r["algorithm"], "seed": r["seed"],
        "flows_completed": done, "flows_total": total,
        "mean_fct_us": round(sum(f) / len(f), 1) if f else "",
        "p99_fct_us": round(p99, 1) if f else "",
        # completion time of the whole permutation = the last flow's FCT (all start at 0)
        "completion_us": round(f[-1], 1) if f and done == total else "",
        "max_completed_fct_us": round(f[-1], 1) if f else "",
        "retx_pkts": c.get("retx_pkts", ""), "timeouts": c.get("timeouts", ""),
        "mmu_drops": c.get("mmu_drops", ""), "link_down_losses": c.get("link_down_losses", ""),
        "wall_time_s": s.get("wall_time_s", ""),
    }


def main():
    out_root, exp = Path(sys.argv[1]), Path(sys.argv[2])
    runs = load(out_root)
    if not runs:
        sys.exit(f"{out_root}: no finished runs")
    rows = sorted((row(r) for r in runs), key=lambda x: (
        [v for v, _ in VARIANTS].index(x["variant"]), ALGOS.index(x["algorithm"]), x["seed"]))
    cols = [k for k in rows[0] if k != "wall_time_s"]
    with open(exp / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)

    # table: per variant and algorithm, averaged over seeds
    print("| fabric | algorithm | flows done | mean FCT (us) | p99 FCT (us) | completion (us) | vs spray |")
    print("|---|---|---|---|---|---|---|")
    for v, label in VARIANTS:
        agg = {}
        for a in ALGOS:
            rs = [x for x in rows if x["variant"] == v and x["algorithm"] == a]
            if not rs:
                continue
            mean = lambda k: sum(float(x[k]) for x in rs) / len(rs)  # noqa: E731
            done = sum(x["flows_completed"] for x in rs)
            total = sum(x["flows_total"] for x in rs)
            comp = mean("completion_us") if all(x["completion_us"] != "" for x in rs) else None
            agg[a] = (done, total, mean("mean_fct_us"), mean("p99_fct_us"), comp)
        base = agg.get("spray", (0, 0, 0, 0, None))[4]
        for a, (done, total, m, p, comp) in agg.items():
            ratio = f"{comp / base:.2f}x" if comp and base else "-"
            comp_s = f"{comp:.0f}" if comp else "never (flows stuck)"
            print(f"| {label} | {a} | {done}/{total} | {m:.0f} | {p:.0f} | {comp_s} | {ratio} |")

    plt.rcParams.update(RC)
    fig, axes = plt.subplots(1, len(VARIANTS), figsize=(COLUMN_WIDTH_IN * 2, 1.9), sharey=True)
    for ax, (v, label) in zip(axes, VARIANTS):
        for a in ALGOS:
            f = sorted(x for r in runs if r["variant"] == v and r["algorithm"] == a for x in r["fct_us"])
            if not f:
                continue
            n = sum(r["summary"]["flows_total"] for r in runs if r["variant"] == v and r["algorithm"] == a)
            kw = line_kwargs(a)
            kw.pop("marker")
            ax.step([x / 1e3 for x in f], [(i + 1) / n for i in range(len(f))], where="post", **kw)
        ax.set_title(label)
        ax.set_xlabel("FCT (ms)")
        ax.grid(True)
    axes[0].set_ylabel("fraction of flows done")
    axes[0].legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(exp / "fct_cdf.png")


if __name__ == "__main__":
    main()
