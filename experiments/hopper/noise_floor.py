"""The noise floor of the App. B "up to" claims (Hopper, "Predictive Load Balancing for RDMA
Traffic", App. B), from whichever AliStorage 50 % (IRN) runs are under OUT_ROOT.

analyze.py reads every claim as Hopper's best size bucket out of 20 ("up to"). The same
best-of-20 figure between two seeds of one baseline -- same scheme, another flow file and seed --
is what that selection gives with no change of scheme: the noise floor. This script needs the
baseline's runs only (every seed of it), not the whole grid:
* writes buckets.csv: per run, the avg and p99 slowdown of each of the 20 size buckets (the
  per-bucket, per-seed data results.csv does not hold), merged with the rows already there;
* prints, per claim, the floor over every ordered pair of the baseline's seeds beside Hopper's
  best-bucket figure (from buckets.csv when Hopper's runs are in it) and the same statistic over
  the claim's whole group of flows, paired by seed from results.csv.
analyze.py prints the same columns when it runs over the whole grid.

Usage (from the repository root): python experiments/hopper/noise_floor.py OUT_ROOT EXP_DIR
"""
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import analyze  # noqa: E402

CELL = "AliStorage 50% IRN"


def read_buckets(path):
    """{(algorithm, seed): stats with 'buckets'} from buckets.csv."""
    runs = {}
    if path.exists():
        for r in csv.DictReader(open(path)):
            st = runs.setdefault((r["algorithm"], int(r["seed"])),
                                 {"algorithm": r["algorithm"], "seed": int(r["seed"]), "buckets": [],
                                  "run": r["run"]})
            st["buckets"].append({"size_max": int(r["size_max"]), "avg": float(r["avg"]),
                                  "p99": float(r["p99"])})
    return runs


def main():
    out_root, exp = Path(sys.argv[1]), Path(sys.argv[2])
    runs = read_buckets(exp / "buckets.csv")
    for algo in analyze.SIX:
        for d in analyze.run_dirs(out_root, "hopper_alistorage", "0.25", algo):
            st = analyze.run_stats(d)
            runs[(algo, st["seed"])] = {"algorithm": algo, "seed": st["seed"], "buckets": st["buckets"],
                                        "run": d.name}
    if not runs:
        sys.exit(f"{out_root}: no AliStorage 50 % runs, and no buckets.csv")
    keys = sorted(runs, key=lambda k: (analyze.SIX.index(k[0]), k[1]))
    with open(exp / "buckets.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["cell", "algorithm", "seed", "bucket", "size_max", "avg", "p99", "run"])
        for k in keys:
            for i, b in enumerate(runs[k]["buckets"], 1):
                w.writerow([CELL, k[0], k[1], i, b["size_max"], f"{b['avg']:.4f}", f"{b['p99']:.4f}",
                            runs[k]["run"]])
    # The cell as analyze.py holds it: per algorithm, per-seed stats with buckets (buckets.csv)
    # and groups (results.csv).
    groups = {}
    for r in csv.DictReader(open(exp / "results.csv")):
        if r["cell"] == CELL:
            groups[(r["algorithm"], int(r["seed"]))] = {
                "all": {"avg": float(r["avg_all"]), "p99": float(r["p99_all"])},
                "<1BDP": {"avg": float(r["avg_small"]), "p99": float(r["p99_small"])},
                ">=1BDP": {"avg": float(r["avg_large"]), "p99": float(r["p99_large"])}}
    cell = {}
    for (algo, seed), g in sorted(groups.items()):
        st = {"seed": seed, "groups": g, "buckets": runs.get((algo, seed), {}).get("buckets")}
        cell.setdefault(algo, []).append(st)
    print("### App. B claims (AliStorage 50 %, IRN): best bucket, whole group, noise floor\n")
    print("| claim | vs | Hopper's best bucket, % | whole group, % | noise floor, % (seed pairs) | seeds |")
    print("|---|---|---|---|---|---|")
    for label, ll, bases, stat, group, paper in analyze.CLAIMS:
        if ll != "50%":
            continue
        worst = paper < 0
        for a in bases:
            g = analyze.GROUP_OF[group]
            whole = analyze.paired(cell, a, lambda b, h: analyze.improvement(b["groups"][g][stat],
                                                                            h["groups"][g][stat]))
            with_b = {k: [r for r in v if r["buckets"]] for k, v in cell.items()}
            best = analyze.paired(with_b, a, lambda b, h: analyze.best_bucket(b, h, stat, group, worst))
            floor = analyze.noise_floor(with_b, a, stat, group, worst)
            fl = f"{analyze.spread(floor, '{:+.1f}')} ({len(floor)})" if floor else "-"
            print(f"| {label} | {a} | {analyze.spread(best, '{:+.1f}') if best else 'needs its runs'} | "
                  f"{analyze.spread(whole, '{:+.1f}')} | {fl} | {len(whole)} |")


if __name__ == "__main__":
    main()
