"""Wait-to-decrease (run_wtd.sh): results_wtd.csv and the README table.

The REPS paper runs every load balancer under SMaRTT, whose wait-to-decrease (§3.0.1) ignores
ECN marks until a moving average of them reaches 0.25; our uet window (htsim's `mprdma`, the
artifact's Fig. 2 setting) cuts on every mark. run_wtd.sh runs each case with and without the
option (`<case>_wtd.toml`), ECMP, spraying and REPS, the same seeds; this script pairs them by
seed and prints, per case and window, the completion time (max FCT) and the mean FCT of each
algorithm and REPS against spraying per seed.

Reads the sweep's run directories (<config stem>-<algorithm>-s<seed>-<hash>: summary.json,
flows.csv) and writes results_wtd.csv (one row per run). Deterministic: same runs, same bytes.

Usage (from the repository root): python experiments/reps/analyze_wtd.py OUT_ROOT EXP_DIR
"""
import csv
import json
import sys
from pathlib import Path

ALGOS = ["ecmp", "spray", "reps"]
# case stem -> label (the paper's figure it stands for)
CASES = {
    "uet_k8_1to1": "k=8, 1:1 (Fig. 2)",
    "uet_k8_8to1_uplinks": "k=8, 8:1 by fewer uplinks, the artifact's shape (Fig. 3)",
    "uet_k16_1to1": "k=16, 1:1 (Fig. 2)",
    "uet_k16_8to1": "k=16, 8:1 (Fig. 3)",
}
FIELDS = ["case", "wtd", "algorithm", "seed", "flows_completed", "flows_total", "mean_fct_us",
          "max_fct_us", "retx_pkts", "trims", "ecn_marks", "cpu_s"]


def load(out_root):
    rows = []
    for summary in sorted(Path(out_root).glob("*/summary.json")):
        d = summary.parent
        s = json.loads(summary.read_text())
        tag = f"-{s['algorithm']}-s{s['seed']}-"
        if tag not in d.name:
            continue
        stem = d.name[: d.name.index(tag)]
        wtd = stem.endswith("_wtd")
        case = stem[: -len("_wtd")] if wtd else stem
        if case not in CASES:
            continue
        with open(d / "flows.csv") as f:
            fct = [int(r["fct_ns"]) / 1e3 for r in csv.DictReader(f) if r["fct_ns"]]
        c = s["counters"]
        done, total = s["flows_completed"], s["flows_total"]
        rows.append({
            "case": case, "wtd": int(wtd), "algorithm": s["algorithm"], "seed": s["seed"],
            "flows_completed": done, "flows_total": total,
            "mean_fct_us": round(sum(fct) / len(fct), 2) if fct else "",
            "max_fct_us": round(max(fct), 2) if fct and done == total else "",
            "retx_pkts": c.get("retx_pkts", ""), "trims": c.get("trims", ""),
            "ecn_marks": c.get("ecn_marks", ""), "cpu_s": s.get("cpu_time_s", ""),
        })
    rows.sort(key=lambda r: (list(CASES).index(r["case"]), r["wtd"], ALGOS.index(r["algorithm"]),
                             r["seed"]))
    return rows


def spread(vals, fmt="{:.0f}"):
    """'mean (min-max)' of a list of numbers."""
    if not vals:
        return "-"
    m = sum(vals) / len(vals)
    if len(vals) == 1:
        return fmt.format(m)
    return f"{fmt.format(m)} ({fmt.format(min(vals))}-{fmt.format(max(vals))})"


def per_seed(rows, case, wtd, algo, key):
    return {r["seed"]: r[key] for r in rows
            if (r["case"], r["wtd"], r["algorithm"]) == (case, wtd, algo) and r[key] != ""}


def gain(rows, case, wtd, key):
    """REPS vs spraying per seed, % (negative: REPS faster)."""
    a = per_seed(rows, case, wtd, "reps", key)
    b = per_seed(rows, case, wtd, "spray", key)
    return [100 * (a[s] / b[s] - 1) for s in sorted(a) if s in b]


def print_table(rows):
    print("| case | window | seeds | ECMP | spray | REPS | REPS vs spray, max FCT (per seed) | "
          "REPS vs spray, mean FCT | ECMP / spray | marks, spray |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case, label in CASES.items():
        for wtd in (0, 1):
            cols = [per_seed(rows, case, wtd, a, "max_fct_us") for a in ALGOS]
            if not any(cols):
                continue
            seeds = sorted(set().union(*cols))
            e, s = cols[0], cols[1]
            ecmp_ratio = [e[k] / s[k] for k in sorted(e) if k in s]
            marks = list(per_seed(rows, case, wtd, "spray", "ecn_marks").values())
            print(f"| {label} | {'wait-to-decrease 0.25' if wtd else 'every mark cuts'} | "
                  f"{','.join(map(str, seeds))} | "
                  + " | ".join(spread(list(c.values())) for c in cols)
                  + f" | {spread(gain(rows, case, wtd, 'max_fct_us'), '{:+.1f}')} % | "
                  f"{spread(gain(rows, case, wtd, 'mean_fct_us'), '{:+.1f}')} % | "
                  f"{spread(ecmp_ratio, '{:.2f}')}x | {spread(marks)} |")


def main():
    out_root, exp = Path(sys.argv[1]), Path(sys.argv[2])
    rows = load(out_root)
    with open(exp / "results_wtd.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print_table(rows)


if __name__ == "__main__":
    main()
