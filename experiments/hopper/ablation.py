"""Hopper's large-flow miss, by ablation (README "Ablation of the large-flow miss").

The paper builds on ConWeave's simulator, whose IRN sets the CNP on every out-of-order NACK;
our Hopper configs do not (`nack_carries_cnp = false`). This script reads the runs of run.sh's
ablation sweeps beside the baseline cells and prints, per cell and scheme, the average FCT
slowdown of large flows (at least one BDP), the all-flow p99 and the counters, and Hopper's
improvement over FlowBender and CONGA per seed:
  hopper_alistorage_cnp        AliStorage 50 %, CNP on every out-of-order NACK, seeds 1-3
  hopper_fbhdp_cnp             Hadoop 50 % / 80 %, CNP on, seed 1
  hopper_alistorage_ooo3, _ooo32   IRN's out-of-order NACK threshold 3 / 32 (CNP off), seed 1
  hopper_alistorage_qpp, _cnp_qpp  Hopper only: the paper's section 3.3 switch, data after a path
                               change in the probing QP's own PSN space (irn_qp_per_path), CNP
                               off / on; the other schemes are those of the cell without it
Each run's statistics come from analyze.py's run_stats (same window, same slowdown); the
baseline (CNP off, threshold 0) is read the same way from its run directories when present,
else from results.csv. Writes ablation.csv (one row per run) and prints the README table.
Rows of an existing ablation.csv whose run is not under OUT_ROOT are kept.

Usage (from the repository root): python experiments/hopper/ablation.py OUT_ROOT EXP_DIR
"""
import csv
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import analyze  # noqa: E402

SIX = ["hopper", "flowbender", "conga", "conweave", "letflow", "ecmp"]
# (config stem, host load, label)
CELLS = [
    ("hopper_alistorage", "0.25", "AliStorage 50 %, CNP off (baseline)"),
    ("hopper_alistorage_cnp", "0.25", "AliStorage 50 %, CNP on every OOO NACK"),
    ("hopper_alistorage_ooo3", "0.25", "AliStorage 50 %, OOO threshold 3"),
    ("hopper_alistorage_ooo32", "0.25", "AliStorage 50 %, OOO threshold 32"),
    ("hopper_alistorage_qpp", "0.25", "AliStorage 50 %, Hopper on a QP per path (§3.3), CNP off"),
    ("hopper_alistorage_cnp_qpp", "0.25", "AliStorage 50 %, Hopper on a QP per path (§3.3), CNP on"),
    ("hopper_fbhdp", "0.25", "Hadoop 50 %, CNP off (baseline)"),
    ("hopper_fbhdp_cnp", "0.25", "Hadoop 50 %, CNP on every OOO NACK"),
    ("hopper_fbhdp", "0.4", "Hadoop 80 %, CNP off (baseline)"),
    ("hopper_fbhdp_cnp", "0.4", "Hadoop 80 %, CNP on every OOO NACK"),
]
# Cells that change Hopper only: the other schemes' runs are those of this cell.
OTHERS_FROM = {"hopper_alistorage_qpp": "hopper_alistorage",
               "hopper_alistorage_cnp_qpp": "hopper_alistorage_cnp"}
RUN = re.compile(r"^(?P<stem>.+)-(?P<algo>[a-z-]+)-l(?P<load>[0-9.]+)-s(?P<seed>\d+)-[0-9a-f]+$")
FIELDS = ["config", "load", "algorithm", "seed", "avg_large", "p99_all", "avg_small",
          "retx_pkts", "rate_cuts", "path_switches", "run"]


def read(out_root):
    rows = []
    for stem, load, _ in CELLS:
        for algo in SIX:
            for d in analyze.run_dirs(out_root, stem, load, algo):
                st = analyze.run_stats(d)
                if st["flows_completed"] != st["flows_total"]:
                    continue
                g = st["groups"]
                rows.append({
                    "config": stem, "load": load, "algorithm": algo, "seed": st["seed"],
                    "avg_large": round(g[">=1BDP"]["avg"], 4), "p99_all": round(g["all"]["p99"], 4),
                    "avg_small": round(g["<1BDP"]["avg"], 4),
                    "retx_pkts": st["counters"]["retx_pkts"], "rate_cuts": st["counters"]["rate_cuts"],
                    "path_switches": st["counters"]["path_switches"], "run": d.name,
                })
    return rows


def baseline_from_results(exp, have):
    """Baseline rows from results.csv for the (config, load, algorithm, seed) not read."""
    out = []
    with open(exp / "results.csv") as f:
        for r in csv.DictReader(f):
            m = RUN.match(r["run"])
            if not m:
                continue
            stem, algo, load, seed = m["stem"], m["algo"], m["load"], int(m["seed"])
            if (stem, load, algo, seed) in have or algo not in SIX:
                continue
            if not any(stem == c and load == lo for c, lo, _ in CELLS):
                continue
            out.append({
                "config": stem, "load": load, "algorithm": algo, "seed": seed,
                "avg_large": float(r["avg_large"]), "p99_all": float(r["p99_all"]),
                "avg_small": float(r["avg_small"]), "retx_pkts": r["retx_pkts"],
                "rate_cuts": r["rate_cuts"], "path_switches": r["path_switches"], "run": r["run"],
            })
    return out


def merge(exp, rows):
    """Keep the committed rows whose run was not re-read."""
    path = exp / "ablation.csv"
    seen = {r["run"] for r in rows}
    if path.exists():
        with open(path) as f:
            for r in csv.DictReader(f):
                if r["run"] not in seen:
                    r["seed"] = int(r["seed"])
                    for k in ("avg_large", "p99_all", "avg_small"):
                        r[k] = float(r[k])
                    rows.append(r)
    order = {(c, lo): i for i, (c, lo, _) in enumerate(CELLS)}
    rows.sort(key=lambda r: (order[(r["config"], r["load"])], SIX.index(r["algorithm"]), r["seed"]))
    return rows


def per_seed(rows, stem, load, algo, key):
    return {r["seed"]: float(r[key]) for r in rows
            if (r["config"], r["load"], r["algorithm"]) == (stem, load, algo)}


def cell_of(stem, algo):
    """The cell whose runs of `algo` stand in `stem`'s row."""
    return stem if algo == "hopper" else OTHERS_FROM.get(stem, stem)


def gain(rows, stem, load, base, key):
    """Hopper over `base` per seed, % (positive: Hopper better)."""
    h = per_seed(rows, stem, load, "hopper", key)
    b = per_seed(rows, cell_of(stem, base), load, base, key)
    return [100 * (b[s] - h[s]) / b[s] for s in sorted(h) if s in b]


def fmt(vals, f="{:.3f}"):
    if not vals:
        return "-"
    m = f.format(sum(vals) / len(vals))
    return m if len(vals) == 1 else f"{m} ({', '.join(f.format(v) for v in vals)})"


def print_table(rows):
    print("| cell | seeds | Hopper avg large | FlowBender | CONGA | ConWeave | LetFlow | ECMP | "
          "Hopper vs FlowBender, avg large | vs CONGA | Hopper vs FlowBender, p99 all |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for stem, load, label in CELLS:
        cols = {a: per_seed(rows, cell_of(stem, a), load, a, "avg_large") for a in SIX}
        if not cols["hopper"]:
            continue
        seeds = sorted(cols["hopper"])
        print(f"| {label} | {','.join(map(str, seeds))} | "
              + " | ".join(fmt([cols[a][s] for s in sorted(cols[a])]) for a in SIX)
              + f" | {fmt(gain(rows, stem, load, 'flowbender', 'avg_large'), '{:+.1f}')} % | "
              f"{fmt(gain(rows, stem, load, 'conga', 'avg_large'), '{:+.1f}')} % | "
              f"{fmt(gain(rows, stem, load, 'flowbender', 'p99_all'), '{:+.1f}')} % |")


def main():
    out_root, exp = Path(sys.argv[1]), Path(sys.argv[2])
    rows = read(out_root)
    have = {(r["config"], r["load"], r["algorithm"], r["seed"]) for r in rows}
    rows = merge(exp, rows + baseline_from_results(exp, have))
    with open(exp / "ablation.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print_table(rows)


if __name__ == "__main__":
    main()
