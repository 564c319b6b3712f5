"""REPS on the uet transport: tables, results_uet.csv and fct_cdf_uet.png.

Reads run_uet.sh's run directories (summary.json, flows.csv, time.txt), writes
results_uet.csv (one row per run) and fct_cdf_uet.png (FCT CDF per fabric), and prints the
tables README.md shows: the artifact's Fig. 2 setup beside the artifact's own numbers, then
the 128-host and 1024-host fat-trees.

Usage (from the repository root): python experiments/reps/analyze_uet.py OUT_ROOT EXP_DIR
"""
import csv
import json
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plots.style import RC, COLUMN_WIDTH_IN, line_kwargs  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402

VARIANTS = [
    ("uet_fig2_1024h_400g", "Fig. 2 setup: 2-tier, 1024 hosts, 400G, 4 MiB"),
    ("uet_fig2_1024h_400g_trim", "Fig. 2 setup with trimming"),
    ("uet_k8_1to1", "k=8, 128 hosts, 1:1"),
    ("uet_k8_8to1", "k=8, 128 hosts, 8:1"),
    ("uet_k8_failures", "k=8, 128 hosts, 8 failed agg-core links"),
    ("uet_k8_8to1_uplinks", "k=8, 128 hosts, 8:1 by fewer uplinks (artifact's)"),
    ("uet_k8_degraded", "k=8, 128 hosts, 8 links at half speed, one way (artifact's -failed 8)"),
    ("uet_k16_1to1", "k=16, 1024 hosts, 1:1"),
    ("uet_k16_8to1", "k=16, 1024 hosts, 8:1"),
    ("uet_k16_failures", "k=16, 1024 hosts, 64 failed agg-core links"),
]
ALGOS = ["ecmp", "spray", "reps"]
# The REPS authors' simulator on this machine kind, its own Fig. 2 command: max and
# mean FCT in us, CPU s and peak RSS MiB ranges over its runs. Measured outside this repository.
ARTIFACT_FIG2 = {"reps": (98.35, 96.71), "spray": (125.10, 99.06), "ecmp": (485.52, 192.08)}
ARTIFACT_FIG2_TRIM = {"spray": 103.26}
# (max, mean) FCT by seed (htsim_uec ... -seed S -load_balancing_algo ecmp / oblivious, same
# permutation, no trimming).
ARTIFACT_FIG2_SEEDS = {
    "ecmp": {42: (485.52, 192.08), 1: (479.66, 191.17), 2: (472.08, 198.53),
             3: (489.29, 197.96)},
    "spray": {42: (125.10, 99.06), 1: (118.97, 99.10), 2: (103.78, 98.83), 3: (102.18, 98.78),
              4: (134.89, 98.85), 5: (134.67, 99.13), 6: (129.09, 99.02), 7: (133.38, 99.48),
              8: (105.72, 99.13), 9: (135.11, 99.17), 10: (135.63, 99.01), 11: (102.71, 98.80),
              12: (104.41, 98.92), 13: (130.48, 99.19), 14: (129.66, 99.02), 15: (124.72, 98.86)},
}
# The artifact on the k = 8 cases (htsim_uec built from the artifact under /tmp, not part of
# this repository; trimming on, -linkspeed 100000 -ecn 10 31 -q 42 -cwnd 63 -paths 65535
# -seed 42, its perm_n128_s2097152.cm; the commands are in README.md): (max, mean) FCT in us.
ARTIFACT_K8 = {
    "uet_k8_1to1": {"reps": (202.99, 194.52), "spray": (214.45, 201.33), "ecmp": (753.47, 411.45)},
    "uet_k8_8to1_uplinks": {"reps": (1475.80, 1089.93), "spray": (1503.76, 1089.16),
                            "ecmp": (1986.08, 1154.02)},
    "uet_k8_degraded": {"reps": (380.28, 210.80), "spray": (398.83, 228.13),
                        "ecmp": (1386.65, 434.30)},
}
ARTIFACT_COST = ("first measured outside this project: 33-43 s CPU, 111-147 MiB per run; our run of it on this machine: 10.4-19.3 s CPU, "
                 "111-147 MiB (ECMP 10.4-11.9 s, REPS 17.0 s, spray 19.3 s)")


def load(out_root):
    runs = []
    for summary in sorted(Path(out_root).glob("*/summary.json")):
        d = summary.parent
        stem = next((v for v, _ in VARIANTS if d.name.startswith(v + "-")), None)
        if stem is None:
            continue
        s = json.loads(summary.read_text())
        with open(d / "flows.csv") as f:
            fct_us = sorted(int(r["fct_ns"]) / 1e3 for r in csv.DictReader(f) if r["fct_ns"])
        cost = {}
        if (d / "time.txt").exists():
            for line in (d / "time.txt").read_text().splitlines():
                k, _, v = line.partition(" ")
                if v:
                    cost[k] = float(v)
        runs.append({"variant": stem, "algorithm": s["algorithm"], "summary": s,
                     "fct_us": fct_us, "cost": cost})
    return runs


def row(r):
    s, f, c = r["summary"], r["fct_us"], r["summary"]["counters"]
    done, total = s["flows_completed"], s["flows_total"]
    p99 = f[min(len(f) - 1, int(0.99 * len(f)))] if f else float("nan")
    return {
        "variant": r["variant"], "algorithm": r["algorithm"], "seed": s["seed"],
        "flows_completed": done, "flows_total": total,
        "mean_fct_us": round(sum(f) / len(f), 2) if f else "",
        "p99_fct_us": round(p99, 2) if f else "",
        "max_fct_us": round(f[-1], 2) if f and done == total else "",
        "max_completed_fct_us": round(f[-1], 2) if f else "",
        "retx_pkts": c.get("retx_pkts", ""), "nacks": c.get("nacks", ""),
        "timeouts": c.get("timeouts", ""), "trims": c.get("trims", ""),
        "mmu_drops": c.get("mmu_drops", ""), "link_down_losses": c.get("link_down_losses", ""),
        "ecn_marks": c.get("ecn_marks", ""),
        "cpu_s": r["cost"].get("cpu_s", ""),
        "max_rss_mib": round(r["cost"]["max_rss_kb"] / 1024, 1) if "max_rss_kb" in r["cost"] else "",
    }


def main():
    out_root, exp = Path(sys.argv[1]), Path(sys.argv[2])
    runs = load(out_root)
    if not runs:
        sys.exit(f"{out_root}: no finished runs")
    order = [v for v, _ in VARIANTS]
    rows = sorted((row(r) for r in runs),
                  key=lambda x: (order.index(x["variant"]), ALGOS.index(x["algorithm"]),
                                 x["seed"] != 42, x["seed"]))
    with open(exp / "results_uet.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    by = {(x["variant"], x["algorithm"]): x for x in rows if x["seed"] == 42}

    print("| algorithm | max FCT ours (us) | artifact | diff | mean FCT ours (us) | artifact | diff "
          "| CPU ours (s) | peak RSS ours (MiB) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for a in ["reps", "spray", "ecmp"]:
        x = by.get(("uet_fig2_1024h_400g", a))
        if not x or x["max_fct_us"] == "":
            continue
        am, amean = ARTIFACT_FIG2[a]
        print(f"| {a} | {x['max_fct_us']:.2f} | {am:.2f} | {100 * (x['max_fct_us'] / am - 1):+.1f} % "
              f"| {x['mean_fct_us']:.2f} | {amean:.2f} | {100 * (x['mean_fct_us'] / amean - 1):+.1f} % "
              f"| {x['cpu_s']} | {x['max_rss_mib']} |")
    for a in ["spray", "reps"]:
        x = by.get(("uet_fig2_1024h_400g_trim", a))
        if not x or x["max_fct_us"] == "":
            continue
        ref = ARTIFACT_FIG2_TRIM.get(a)
        ref_s = f"{ref:.2f} | {100 * (x['max_fct_us'] / ref - 1):+.1f} %" if ref else "- | -"
        print(f"| {a}, trimming | {x['max_fct_us']:.2f} | {ref_s} | {x['mean_fct_us']:.2f} | - | - "
              f"| {x['cpu_s']} | {x['max_rss_mib']} |")
    print(f"\n(artifact: {ARTIFACT_COST})\n")

    print("| Fig. 2 setup, by seed | max FCT ours (us) | artifact | diff | mean FCT ours (us) "
          "| artifact | diff | retransmitted (ours) |")
    print("|---|---|---|---|---|---|---|---|")
    for a, refs in ARTIFACT_FIG2_SEEDS.items():
        for x in rows:
            if (x["variant"], x["algorithm"]) != ("uet_fig2_1024h_400g", a) or x["max_fct_us"] == "":
                continue
            ref = refs.get(x["seed"])
            if not ref:
                continue
            am, amean = ref
            print(f"| {a}, seed {x['seed']} | {x['max_fct_us']:.2f} | {am:.2f} "
                  f"| {100 * (x['max_fct_us'] / am - 1):+.1f} % | {x['mean_fct_us']:.2f} "
                  f"| {amean:.2f} | {100 * (x['mean_fct_us'] / amean - 1):+.1f} % "
                  f"| {x['retx_pkts']} |")
    print()

    print("| k = 8 case | algorithm | max FCT ours (us) | artifact | diff | mean FCT ours (us) "
          "| artifact | diff |")
    print("|---|---|---|---|---|---|---|---|")
    for v, refs in ARTIFACT_K8.items():
        label = dict(VARIANTS)[v]
        for a in ALGOS:
            x = by.get((v, a))
            if not x or x["max_fct_us"] == "":
                continue
            am, amean = refs[a]
            print(f"| {label} | {a} | {x['max_fct_us']:.2f} | {am:.2f} "
                  f"| {100 * (x['max_fct_us'] / am - 1):+.1f} % | {x['mean_fct_us']:.2f} | {amean:.2f} "
                  f"| {100 * (x['mean_fct_us'] / amean - 1):+.1f} % |")
    print()

    print("| fabric | algorithm | flows done | mean FCT (us) | p99 FCT (us) | max FCT (us) | vs spray "
          "| retx | trims | timeouts | CPU (s) | RSS (MiB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for v, label in VARIANTS[2:]:
        spray = by.get((v, "spray"), {}).get("max_fct_us", "")
        for a in ALGOS:
            x = by.get((v, a))
            if not x:
                continue
            mx = x["max_fct_us"]
            ratio = f"{mx / spray:.2f}x" if mx != "" and spray != "" else "-"
            mx_s = f"{mx:.0f}" if mx != "" else "never (flows stuck)"
            print(f"| {label} | {a} | {x['flows_completed']}/{x['flows_total']} | {x['mean_fct_us']:.0f} "
                  f"| {x['p99_fct_us']:.0f} | {mx_s} | {ratio} | {x['retx_pkts']} | {x['trims']} "
                  f"| {x['timeouts']} | {x['cpu_s']} | {x['max_rss_mib']} |")

    plt.rcParams.update(RC)
    present = [(v, label) for v, label in VARIANTS if any(r["variant"] == v for r in runs)]
    cols = 4
    nrows = (len(present) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(COLUMN_WIDTH_IN * 2.6, 1.9 * nrows), squeeze=False)
    for ax, (v, label) in zip(axes.flat, present):
        for a in ALGOS:
            rs = [r for r in runs if r["variant"] == v and r["algorithm"] == a
                  and r["summary"]["seed"] == 42]
            if not rs:
                continue
            f = rs[0]["fct_us"]
            n = rs[0]["summary"]["flows_total"]
            kw = line_kwargs(a)
            kw.pop("marker")
            ax.step(f, [(i + 1) / n for i in range(len(f))], where="post", **kw)
        ax.set_title(textwrap.fill(label, 46), fontsize="small")
        ax.set_xlabel("FCT (us)")
        ax.grid(True)
    for ax in list(axes.flat)[len(present):]:
        ax.axis("off")
    axes[0][0].set_ylabel("fraction of flows done")
    axes[0][0].legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(exp / "fct_cdf_uet.png")


if __name__ == "__main__":
    main()
