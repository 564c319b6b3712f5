"""The UEC htsim's shipped 8,192-host plan results against ours (README.md, "The shipped 8,192-host
plan"): results_plan.csv and the README table.

For each point of the plans (fabric: the full-bisection leaf-spine, the same with -failed 1, or
its 4:1 / 8:1 oversubscribed variants; message size; -paths; congestion control) this puts side
by side:

* the tail FCT (the largest FCT, as htsim's validate.py computes it) the UEC shipped in its
  repository's results/ files (data/uec-htsim/shipped/: for NSCC two runs of each plan by htsim
  builds of July / August 2024, 400g_nscc*.txt and 400g_nscc*_2.txt; for RCCC 400g_rccc.txt,
  that htsim's default with no CC flag);
* htsim at commit 40ccb05 (the build our other rows compare with) on the same command, seed 13,
  where run (data/uec-htsim/mixed/perm8192_ls400_*_p<paths>_s13.txt.gz: the `finished at`
  lines and the `New:` line);
* ours: uec-mixed (htsim's default load balancer) on the plan's files and flags
  (perm8192_ls400_*_mixed*.toml, num_entropies = the plan's -paths), seed 13.

Rows of the committed results_plan.csv whose run is not under OUT_ROOT are kept (raw outputs
are not committed). Deterministic: same inputs, same bytes.

Usage (from the repository root): python experiments/uec-htsim/analyze_plan.py OUT_ROOT EXP_DIR
"""
import csv
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyze import htsim_file, our_run  # noqa: E402

SHIPPED = ROOT / "data" / "uec-htsim" / "shipped"
MIXED = ROOT / "data" / "uec-htsim" / "mixed"
# The plan's points: (fabric, size, cc, -paths values) -> our config stem, the shipped results
# files (data/uec-htsim/shipped/) and the stem of htsim 40ccb05's kept runs (data/uec-htsim/mixed/).
POINTS = [
    (("full", "1MB", "nscc"), [32, 64, 128], "perm8192_ls400_1MB_mixed",
     ["400g_nscc.txt", "400g_nscc_2.txt"], "perm8192_ls400_1MB_nscc"),
    (("full", "2MB", "nscc"), [32, 64, 128], "perm8192_ls400_2MB_mixed",
     ["400g_nscc.txt", "400g_nscc_2.txt"], "perm8192_ls400_2MB_nscc"),
    (("full", "1MB", "rccc"), [32, 64, 128], "perm8192_ls400_1MB_mixed_rccc",
     ["400g_rccc.txt"], "perm8192_ls400_1MB_rccc"),
    (("full", "4MB", "nscc"), [32, 64, 128], "perm8192_ls400_4MB_mixed",
     ["400g_nscc.txt", "400g_nscc_2.txt"], "perm8192_ls400_4MB_nscc"),
    (("full", "2MB", "rccc"), [32, 64, 128], "perm8192_ls400_2MB_mixed_rccc",
     ["400g_rccc.txt"], "perm8192_ls400_2MB_rccc"),
    (("full", "4MB", "rccc"), [32, 64, 128], "perm8192_ls400_4MB_mixed_rccc",
     ["400g_rccc.txt"], "perm8192_ls400_4MB_rccc"),
    (("-failed 1", "1MB", "nscc"), [32, 64, 128], "perm8192_ls400_failed1_1MB_mixed",
     ["400g_nscc_fail1.txt", "400g_nscc_fail1_2.txt"], "perm8192_ls400_failed1_1MB_nscc"),
    (("4:1", "1MB", "nscc"), [32, 64, 128], "perm8192_ls400_4to1_1MB_mixed",
     ["400g_nscc_4_to_1.txt", "400g_nscc_4_to_1_2.txt"], "perm8192_ls400_4to1_1MB_nscc"),
    (("8:1", "1MB", "nscc"), [32, 64, 128], "perm8192_ls400_8to1_1MB_mixed",
     ["400g_nscc_8_to_1.txt", "400g_nscc_8_to_1_2.txt"], "perm8192_ls400_8to1_1MB_nscc"),
    # The plan at 200 G and 800 G (its experiment1_200g_* / _800g_* files), 1 MB.
    (("full 200G", "1MB", "nscc"), [32, 128], "perm8192_ls200_1MB_mixed",
     ["200g_nscc.txt", "200g_nscc_2.txt"], "perm8192_ls200_1MB_nscc"),
    (("full 200G", "1MB", "rccc"), [128], "perm8192_ls200_1MB_mixed_rccc",
     ["200g_rccc.txt"], "perm8192_ls200_1MB_rccc"),
    (("full 800G", "1MB", "nscc"), [32, 128], "perm8192_ls800_1MB_mixed",
     ["800g_nscc.txt", "800g_nscc_2.txt"], "perm8192_ls800_1MB_nscc"),
    (("full 800G", "1MB", "rccc"), [128], "perm8192_ls800_1MB_mixed_rccc",
     ["800g_rccc.txt"], "perm8192_ls800_1MB_rccc"),
]
SEED = 13
# Points run again over more seeds (both sides): the oversubscribed fabrics, whose mean FCT
# differs by more than the full-bisection points', and the 4 MB permutation at 32 paths under
# NSCC and RCCC, whose trims differ most: (label, our config stem, htsim's kept stem, -paths).
SEED_POINTS = [("4:1", "perm8192_ls400_4to1_1MB_mixed", "perm8192_ls400_4to1_1MB_nscc", 128),
               ("8:1", "perm8192_ls400_8to1_1MB_mixed", "perm8192_ls400_8to1_1MB_nscc", 128),
               ("full 4MB 32 paths", "perm8192_ls400_4MB_mixed", "perm8192_ls400_4MB_nscc", 32),
               ("full 4MB RCCC 32 paths", "perm8192_ls400_4MB_mixed_rccc",
                "perm8192_ls400_4MB_rccc", 32)]
SEEDS = [13, 1, 2]
SEED_FIELDS = ["fabric", "seed", "htsim_mean_us", "htsim_tail_us", "htsim_trims",
               "ours_mean_us", "ours_tail_us", "ours_trims", "ours_cpu_s"]
FIELDS = ["fabric", "size", "cc", "paths", "shipped_tail_us", "shipped2_tail_us",
          "htsim_mean_us", "htsim_tail_us", "htsim_trims", "ours_mean_us", "ours_tail_us",
          "ours_trims", "ours_cpu_s"]


def shipped(name):
    """{(paths, size): tail FCT in us} of one shipped results file."""
    out = {}
    text = (SHIPPED / name).read_text()
    for block in text.split("Experiment:")[1:]:
        m = re.match(r".*?, (\d+) paths, (\d+MB) messages", block)
        t = re.search(r"Tail FCT (\S+) us", block)
        if m and t:
            out[(int(m[1]), m[2])] = float(t[1])
    return out


def htsim(stem, paths, seed=SEED):
    return htsim_file(MIXED / f"{stem}_p{paths}_s{seed}.txt")


def ours(out_root, stem, paths, seed=SEED):
    for s in sorted(Path(out_root).glob(f"{stem}-uec-mixed-s{seed}-*/summary.json")):
        j = json.loads(s.read_text())
        if j["lb_params"].strip() != f"num_entropies = {paths}":
            continue
        r = our_run(s.parent)
        if r["flows"] != j["flows_total"]:
            return None
        return r["mean_fct_us"], r["max_fct_us"], r["trims"], round(j["cpu_time_s"])
    return None


def kept(exp, name="results_plan.csv", key=("fabric", "size", "cc", "paths")):
    path = exp / name
    if not path.exists():
        return {}
    with open(path) as f:
        return {tuple(r[k] for k in key): r for r in csv.DictReader(f)}


OURS = ("ours_mean_us", "ours_tail_us", "ours_trims", "ours_cpu_s")


def both_sides(h, o, old_row):
    """One point's htsim columns and ours: from this run, else from the committed row."""
    row = {"htsim_mean_us": fmt(h and h["mean_fct_us"]),
           "htsim_tail_us": fmt(h and h["max_fct_us"]),
           "htsim_trims": h["trims"] if h else ""}
    if o:
        row.update(zip(OURS, (fmt(o[0]), fmt(o[1]), o[2], o[3])))
    elif old_row:
        row.update({k: old_row[k] for k in OURS})
    return row


def write_csv(rows, fields, path):
    """`rows` under the header `fields` (written even when there are no rows)."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def fmt(v, nd=2):
    return "" if v is None or v == "" else f"{float(v):.{nd}f}"


def main(out_root, exp):
    exp = Path(exp)
    old = kept(exp)
    rows = []
    for (fabric, size, cc), paths, stem, files, ref in POINTS:
        ship = [shipped(n) for n in files] + [{}]
        for p in paths:
            s = [d.get((p, size)) for d in ship]
            h = htsim(ref, p)
            o = ours(out_root, stem, p)
            row = {"fabric": fabric, "size": size, "cc": cc, "paths": p,
                   "shipped_tail_us": fmt(s[0]), "shipped2_tail_us": fmt(s[1]),
                   **both_sides(h, o, old.get((fabric, size, cc, str(p))))}
            if "ours_mean_us" not in row:
                continue
            rows.append(row)
    write_csv(rows, FIELDS, exp / "results_plan.csv")
    print("| fabric | size | CC | paths | tail FCT, us: shipped (2024) | htsim 40ccb05 | ours | "
          "ours / htsim 40ccb05 | mean FCT, us: htsim 40ccb05 / ours | "
          "trims: htsim 40ccb05 / ours |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ship_s = " / ".join(v for v in (r["shipped_tail_us"], r["shipped2_tail_us"]) if v)
        ratio = ""
        if r["htsim_tail_us"] and r["ours_tail_us"]:
            ratio = f"{100 * (float(r['ours_tail_us']) / float(r['htsim_tail_us']) - 1):+.1f} %"
        means = " / ".join(v for v in (r["htsim_mean_us"], r["ours_mean_us"]) if v)
        trims = " / ".join(str(v) for v in (r["htsim_trims"], r["ours_trims"]) if v != "")
        print(f"| {r['fabric']} | {r['size']} | {r['cc'].upper()} | {r['paths']} | {ship_s} | "
              f"{r['htsim_tail_us']} | {r['ours_tail_us']} | {ratio} | {means} | "
              f"{trims} |")
    seeds_table(out_root, exp)


def seeds_table(out_root, exp):
    """results_plan_seeds.csv: the oversubscribed points per seed, and their means."""
    old = kept(exp, "results_plan_seeds.csv", ("fabric", "seed"))
    rows = []
    for fabric, stem, ref, paths in SEED_POINTS:
        for seed in SEEDS:
            h = htsim(ref, paths, seed)
            o = ours(out_root, stem, paths, seed)
            row = {"fabric": fabric, "seed": seed,
                   **both_sides(h, o, old.get((fabric, str(seed))))}
            if not h or "ours_mean_us" not in row:
                continue
            rows.append(row)
    write_csv(rows, SEED_FIELDS, exp / "results_plan_seeds.csv")
    print()
    print("| fabric | seeds | mean FCT, us: htsim 40ccb05 / ours | diff | tail FCT, us: htsim / "
          "ours | diff | trims: htsim / ours | diff |")
    print("|---|---|---|---|---|---|---|---|")
    for fabric, _, _, _ in SEED_POINTS:
        rs = [r for r in rows if r["fabric"] == fabric]
        if not rs:
            continue
        cells = []
        for h_key, o_key, nd in (("htsim_mean_us", "ours_mean_us", 2),
                                 ("htsim_tail_us", "ours_tail_us", 2),
                                 ("htsim_trims", "ours_trims", 0)):
            hv = [float(r[h_key]) for r in rs]
            ov = [float(r[o_key]) for r in rs]
            hm, om = sum(hv) / len(hv), sum(ov) / len(ov)
            cells.append(f"{hm:.{nd}f} [{min(hv):.{nd}f}, {max(hv):.{nd}f}] / "
                         f"{om:.{nd}f} [{min(ov):.{nd}f}, {max(ov):.{nd}f}]")
            cells.append(f"{100 * (om / hm - 1):+.1f} %")
        print(f"| {fabric} | {len(rs)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: analyze_plan.py OUT_ROOT EXP_DIR")
    main(sys.argv[1], sys.argv[2])
