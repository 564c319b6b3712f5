"""NSCC, RCCC and NSCC + RCCC on the uet transport against the UEC's htsim (run.sh): results.csv and the README table.

For each case (the same .topo and .cm files, unchanged, under data/uec-htsim/), reads our runs
(<case>-reps-s<seed>-<hash>: flows.csv, summary.json) and htsim's (data/uec-htsim/reps/
<case>_reps_s<seed>.txt: the `finished at` lines, every flow starting at 0, and the `New:`
counter line; for the cases of htsim's own load balancers, mixed and bitmap, ours uec-mixed and
uec-bitmap: data/uec-htsim/mixed/<case>_s<seed>.txt) for seeds 13, 1, 2, 3 (13, 1, 2 at 1,024 hosts), and compares the mean over seeds of the mean FCT, the
largest FCT (the plans' tail FCT) and the trims (every loss here is a trim answered by a
NACK) with the issue's bars: FCT within 2 %, counts within 5 % (or, where the trims are that
few, within 1 in 10,000 of the packets sent). Deterministic:
same runs, same bytes.

A (case, seed) with no run under OUT_ROOT keeps our row of EXP_DIR/results.csv.

Usage (from the repository root): python experiments/uec-htsim/analyze.py OUT_ROOT EXP_DIR
"""
import csv
import gzip
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REF = ROOT / "data" / "uec-htsim" / "reps"
MIXED = ROOT / "data" / "uec-htsim" / "mixed"
SEEDS4 = [13, 1, 2, 3]
SEEDS12 = SEEDS4 + list(range(4, 12))
# case -> (label, seeds)
CASES = {
    "perm128_ft100_nscc": ("128-host 3-tier fat tree, 100 G, 2 MB permutation",
                           [13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15]),
    "incast8to1_ft100_nscc": ("same fabric, 8 -> 1 x 1 MB incast", SEEDS12),
    "perm128_ls400_nscc": ("128-host leaf-spine (8 x 16, 16 spines), 400 G, 2 MB permutation",
                           [13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15]),
    "perm128_ls400_nscc_failed1": ("same leaf-spine, -failed 1: every leaf <-> spine 0 link at "
                                   "100 G", [13, 1, 2, 3]),
    "perm1024_fat_tree_1024": ("1,024-host 3-tier fat tree, 100 G, 2 MB permutation "
                                   "(htsim's plan)", [13, 1, 2]),
    "perm1024_leaf_spine_1024_oversub": ("1,024-host leaf-spine 4:1, 100 G, same permutation",
                                         [13, 1, 2]),
    "perm1024_leaf_spine_1024_oversub_8-1": ("1,024-host leaf-spine 8:1, 100 G, same permutation",
                                             [13, 1, 2]),
    "perm8192_ls400_1MB": ("8,192-host leaf-spine, 400 G, 1 MB permutation (its 8K plan, "
                           "128 paths)", [13, 1]),
    "perm128_ls400_nscc_oblivious": ("the 400 G leaf-spine permutation, oblivious spraying "
                                     "(ours: spray, cycle = true)", [13, 1, 2, 3]),
    "perm128_ft100_rccc": ("RCCC: the 128-host 100 G fat tree's 2 MB permutation",
                           [13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
    "incast8to1_ft100_rccc": ("RCCC: the 8 -> 1 x 1 MB incast", [13, 1, 2, 3]),
    "perm128_ft100_both": ("NSCC + RCCC: the 128-host 100 G fat tree's 2 MB permutation",
                           [13, 1, 2, 3]),
    "perm128_ft100_rccc_oblivious": ("RCCC, oblivious spraying: the same permutation (ours: "
                                     "spray, cycle = true)", [13, 1, 2, 3, 4, 5, 6, 7]),
    "perm128_ft100_nscc_mixed": ("htsim's default load balancer, mixed (ours: uec-mixed): the "
                                 "128-host 100 G fat tree's 2 MB permutation", SEEDS4),
    "perm128_ls400_nscc_mixed": ("mixed: the 400 G leaf-spine permutation", SEEDS4),
    "perm128_ls400_nscc_failed1_mixed": ("mixed: the 400 G leaf-spine, -failed 1", SEEDS12),
    "perm128_ft100_nscc_bitmap": ("htsim's bitmap (ours: uec-bitmap): the 100 G fat tree's "
                                  "permutation", SEEDS4),
    "perm128_ls400_nscc_bitmap": ("bitmap: the 400 G leaf-spine permutation", SEEDS4),
    "perm128_ls400_nscc_failed1_bitmap": ("bitmap: the 400 G leaf-spine, -failed 1", SEEDS12),
    "incast8to1_ft100_nscc_mixed": ("mixed: the 8 -> 1 incast", SEEDS4),
    "incast8to1_ft100_nscc_bitmap": ("bitmap: the 8 -> 1 incast", SEEDS4),
    "incast8to1_ft100_rccc_mixed": ("mixed, RCCC: the 8 -> 1 incast", SEEDS4),
    "incast8to1_ft100_rccc_bitmap": ("bitmap, RCCC: the 8 -> 1 incast", SEEDS4),
    "perm128_ft100_rccc_mixed": ("mixed, RCCC: the 100 G fat tree's permutation", SEEDS12),
    "perm128_ft100_rccc_bitmap": ("bitmap, RCCC: the 100 G fat tree's permutation", SEEDS12),
}
# Our load balancer per case (the run directories' name) and htsim's (its reference files'):
# REPS everywhere but the oblivious cases and htsim's own mixed and bitmap.
OURS = {case: {"oblivious": "spray", "mixed": "uec-mixed", "bitmap": "uec-bitmap"}.get(
            case.rsplit("_", 1)[-1], "reps") for case in CASES}
REF_LB = {case: "" if case.endswith("_oblivious") else "reps" for case in CASES}


def ref_path(case, seed):
    """htsim's kept output of `case` with `seed`."""
    if OURS[case].startswith("uec-"):
        return MIXED / f"{case}_s{seed}.txt"
    return REF / (f"{case}_s{seed}.txt" if not REF_LB[case] else f"{case}_{REF_LB[case]}_s{seed}.txt")
FIELDS = ["case", "simulator", "seed", "flows", "mean_fct_us", "max_fct_us", "retx_pkts", "trims"]


def our_run(d):
    """Mean / largest FCT (us), flows, resends and trims of our run directory `d`."""
    s = json.loads((d / "summary.json").read_text())
    with open(d / "flows.csv") as f:
        fct = [int(r["fct_ns"]) / 1e3 for r in csv.DictReader(f) if r["fct_ns"]]
    c = s["counters"]
    return {"flows": len(fct), "mean_fct_us": sum(fct) / len(fct), "max_fct_us": max(fct),
            "retx_pkts": c.get("retx_pkts", 0), "trims": c.get("trims", 0)}


def ours(out_root, case, seed):
    runs = sorted(Path(out_root).glob(f"{case}-{OURS[case]}-s{seed}-*/summary.json"))
    return our_run(runs[-1].parent) if runs else None


def htsim_file(path):
    """Mean / largest FCT (us) and counters of htsim's kept output `path` (or its .gz)."""
    if path.exists():
        text = path.read_text()
    elif path.with_suffix(".txt.gz").exists():
        text = gzip.decompress(path.with_suffix(".txt.gz").read_bytes()).decode()
    else:
        return None
    fct = [float(t) for t in re.findall(r"finished at (\S+)", text)]
    m = re.search(r"New: (\d+) Rtx: (\d+) .* NACKs: (\d+)", text)
    return {"flows": len(fct), "mean_fct_us": sum(fct) / len(fct), "max_fct_us": max(fct),
            "new_pkts": int(m[1]), "retx_pkts": int(m[2]), "trims": int(m[3])}


def htsim(case, seed):
    return htsim_file(ref_path(case, seed))


def mean(rows, key):
    return sum(r[key] for r in rows) / len(rows)


def kept(exp):
    """Our rows of the existing results.csv, by (case, seed): a case not re-run under OUT_ROOT
    keeps them (the runs are deterministic; run.sh re-runs everything)."""
    path = exp / "results.csv"
    if not path.exists():
        return {}
    with open(path) as f:
        return {(r["case"], int(r["seed"])): {
                    "flows": int(r["flows"]), "mean_fct_us": float(r["mean_fct_us"]),
                    "max_fct_us": float(r["max_fct_us"]), "retx_pkts": int(r["retx_pkts"]),
                    "trims": int(r["trims"])}
                for r in csv.DictReader(f) if r["simulator"] == "rdma-lb"}


def main():
    out_root, exp = Path(sys.argv[1]), Path(sys.argv[2])
    before = kept(exp)
    rows = []
    print("| case | seeds | mean FCT, us: ours / htsim | diff | max FCT, us: ours / htsim | diff "
          "| trims: ours / htsim | diff | within the bars |")
    print("|---|---|---|---|---|---|---|---|---|")
    for case, (label, seeds) in CASES.items():
        a, b = [], []
        for seed in seeds:
            o, h = ours(out_root, case, seed) or before.get((case, seed)), htsim(case, seed)
            if o is None or h is None:
                continue
            a.append(o)
            b.append(h)
            for sim, r in (("rdma-lb", o), ("htsim", h)):
                rows.append({"case": case, "simulator": sim, "seed": seed, "flows": r["flows"],
                             "mean_fct_us": round(r["mean_fct_us"], 3),
                             "max_fct_us": round(r["max_fct_us"], 3),
                             "retx_pkts": r["retx_pkts"], "trims": r["trims"]})
        if not a:
            continue
        d = {k: 100 * (mean(a, k) / mean(b, k) - 1) if mean(b, k) else 0.0
             for k in ("mean_fct_us", "max_fct_us", "trims")}
        # Trims within 5 %, or within 1 in 10,000 of the packets sent where they are that few.
        ok = abs(d["mean_fct_us"]) <= 2 and abs(d["max_fct_us"]) <= 2 and (
            abs(d["trims"]) <= 5
            or abs(mean(a, "trims") - mean(b, "trims")) <= mean(b, "new_pkts") / 10000)
        print(f"| {label} | {len(a)} | {mean(a, 'mean_fct_us'):.2f} / {mean(b, 'mean_fct_us'):.2f} | "
              f"{d['mean_fct_us']:+.1f} % | {mean(a, 'max_fct_us'):.2f} / {mean(b, 'max_fct_us'):.2f} | "
              f"{d['max_fct_us']:+.1f} % | {mean(a, 'trims'):.0f} / {mean(b, 'trims'):.0f} | "
              f"{d['trims']:+.1f} % | {'yes' if ok else 'no'} |")
    with open(exp / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
