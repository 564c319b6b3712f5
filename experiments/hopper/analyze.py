"""Hopper ("Predictive Load Balancing for RDMA Traffic", section 4.1 and App. B) experiment
analysis, from the run directories of run.sh.

Per run: FCT slowdown over ConWeave's analysis window (flows started after 5 ms and finished
before 150 ms, i.e. run.py's start + 5 ms and stop + 50 ms; each run's largest flow dropped, as
ConWeave's fctAnalysis.py), avg and p99 for flows below / at-or-above one BDP (104 kB) and per
20 equal-count size buckets, through the one slowdown definition (plots/analysis.py); the
counters of summary.json. Per cell (workload x load x transport): each algorithm's mean over
seeds with the min-max spread; Hopper's improvement over each baseline, paired by seed (same
flow file), beside the paper's App. B numbers with a verdict; every load balancer side by side
on AliStorage 50 %; the asymmetric fabric's share of bytes on the 1 Gbps links.

Writes results.csv (one row per run), the figures, and prints the README tables. The grid may be
partial (the sweep spans sittings): cells print what has finished.

Usage (from the repository root): python experiments/hopper/analyze.py OUT_ROOT EXP_DIR
"""
import csv
import json
import re
import sys
from pathlib import Path

import numpy as np

# summary.json counters in results.csv, in this (alphabetical) order whether a run was read from
# its cache or not.
COUNTERS = ("mmu_drops", "nacks", "path_switches", "probes", "rate_cuts", "retx_pkts", "timeouts")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from plots import analysis, style  # noqa: E402
from plots.io import read_run  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402

WINDOW = (5_000_000, 150_000_000)
BDP = 104_000
N_BUCKETS = 20
SIX = ["ecmp", "flowbender", "conga", "letflow", "conweave", "hopper"]
ALL = list(style.ALGORITHM_STYLE)
# (config stem, host load, workload label, load label, transport label)
CELLS = [
    ("hopper_alistorage", "0.25", "AliStorage", "50%", "IRN"),
    ("hopper_alistorage", "0.4", "AliStorage", "80%", "IRN"),
    ("hopper_fbhdp", "0.25", "Hadoop", "50%", "IRN"),
    ("hopper_fbhdp", "0.4", "Hadoop", "80%", "IRN"),
    ("hopper_alistorage_pfc", "0.25", "AliStorage", "50%", "PFC+GBN"),
    ("hopper_alistorage_pfc", "0.4", "AliStorage", "80%", "PFC+GBN"),
    ("hopper_fbhdp_pfc", "0.25", "Hadoop", "50%", "PFC+GBN"),
    ("hopper_fbhdp_pfc", "0.4", "Hadoop", "80%", "PFC+GBN"),
]
NICSR = ("hopper_alistorage_nicsr", "0.25")  # Themis' receivers, for the all-algorithm table
# hopper_asym.toml: leaves 8 and 9; their 1-based ports 5..10 go to spines 10..15, and
# spines 10 and 11 (ports 5 and 6) are the 1 Gbps ones.
SLOW_PORTS, FAST_PORTS = {5, 6}, {7, 8, 9, 10}
# App. B, AliStorage: (label, load, baseline(s), metric, group, paper's number in %, sign):
# improvement = (baseline - hopper) / baseline; "up to" = the best size bucket of the group.
CLAIMS = [
    ("avg, small flows: up to 6 % better than CONGA and FlowBender", "50%", ("conga", "flowbender"),
     "avg", "small", 6.0),
    ("avg, large flows: up to 19 % better than CONGA and FlowBender", "50%", ("conga", "flowbender"),
     "avg", "large", 19.0),
    ("avg, small flows: up to 6 % worse than ConWeave", "50%", ("conweave",), "avg", "small", -6.0),
    ("p99: up to 8 % better than FlowBender", "50%", ("flowbender",), "p99", "any", 8.0),
    ("p99: up to 16 % better than CONGA", "50%", ("conga",), "p99", "any", 16.0),
    ("avg: about 10 % better than FlowBender at 80 % load", "80%", ("flowbender",), "avg", "any", 10.0),
]


def run_dirs(out_root, stem, load, algo):
    pat = re.compile(rf"^{re.escape(stem)}-{re.escape(algo)}-" + (rf"l{re.escape(load)}-" if load else "")
                     + r"s\d+-[0-9a-f]+$")
    return sorted(d for d in Path(out_root).iterdir() if pat.match(d.name) and (d / "summary.json").exists())


def run_stats(d, ideal=None, window=WINDOW, bdp=BDP):
    """Slowdown stats of one run (cached beside its outputs: reading 10^6 flows takes seconds)."""
    cache = d / "analysis-stats.json"
    key = {"window": list(window) if window else None, "ideal": ideal, "bdp": bdp, "buckets": N_BUCKETS,
           "summary_mtime_ns": (d / "summary.json").stat().st_mtime_ns}
    if cache.exists():
        c = json.loads(cache.read_text())
        if c.get("key") == key:
            return c
    run = read_run(d)
    lo, hi = window if window else (None, None)
    prep = analysis.prepare_runs([run], lo, hi, drop_largest=True, ideal=ideal)
    flows, _ = prep[run.algorithm]
    groups = {g.label: g for g in analysis.group_stats(flows, bdp)}
    buckets = analysis.bucket_stats(flows, N_BUCKETS)
    s = run.summary
    c = {
        "key": key, "algorithm": run.algorithm, "seed": run.seed, "n_window": len(flows),
        "groups": {k: {"n": g.n, "avg": g.avg, "p99": g.p99} for k, g in groups.items()},
        "buckets": [{"size_max": b.size_max, "avg": b.avg, "p99": b.p99} for b in buckets],
        "flows_completed": s["flows_completed"], "flows_total": s["flows_total"],
        "counters": {k: s["counters"].get(k, 0) for k in COUNTERS},
        "cpu_time_s": s.get("cpu_time_s"), "peak_rss_mib": s.get("peak_rss_mib"),
    }
    cache.write_text(json.dumps(c, sort_keys=True))
    return c


def slow_link_share(d):
    last = {}
    with open(d / "uplink.txt") as f:
        for line in f:
            t, tor, port, b = line.strip().split(",")
            last[(tor, int(port))] = int(b)
    slow = sum(b for (_, p), b in last.items() if p in SLOW_PORTS)
    fast = sum(b for (_, p), b in last.items() if p in FAST_PORTS)
    return slow / (slow + fast) if slow + fast else float("nan")


def spread(xs, fmt="{:.2f}"):
    """mean, with [min, max] when there is more than one value."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    m = fmt.format(float(np.mean(xs)))
    return m if len(xs) == 1 else f"{m} [{fmt.format(min(xs))}, {fmt.format(max(xs))}]"


def improvement(base, hop):
    return 100.0 * (base - hop) / base if base else float("nan")


def paired(cell, algo, fn):
    """fn(baseline stats, hopper stats) per seed both finished."""
    h = {r["seed"]: r for r in cell.get("hopper", [])}
    return [fn(r, h[r["seed"]]) for r in cell.get(algo, []) if r["seed"] in h]


def best_bucket(base, hop, stat, group, worst=False):
    """The largest improvement over the size buckets of a group ("up to" in the paper), or the
    most negative one for a claim of being worse."""
    out = []
    for b, h in zip(base["buckets"], hop["buckets"]):
        small = b["size_max"] < BDP
        if group == "any" or (group == "small") == small:
            out.append(improvement(b[stat], h[stat]))
    if not out:
        return float("nan")
    return min(out) if worst else max(out)


def verdict(vals, paper):
    """reproduced: every seed on the paper's side of zero and the mean within max(3 points,
    half the paper's number) of it; direction only: every seed on the paper's side; otherwise
    not reproduced (the seeds disagree in sign, or all are on the other side)."""
    if not vals:
        return "pending"
    same = all(v * paper > 0 for v in vals)
    if same and abs(float(np.mean(vals)) - paper) <= max(3.0, abs(paper) / 2):
        return "reproduced"
    if same:
        return "direction only"
    return "not reproduced" + (" (seeds disagree in sign)" if any(v * paper > 0 for v in vals) else "")


def main():
    out_root, exp = Path(sys.argv[1]), Path(sys.argv[2])
    cells = {}
    rows = []
    for stem, load, wl, ll, tr in CELLS:
        cell = {}
        for a in SIX:
            for d in run_dirs(out_root, stem, load, a):
                st = run_stats(d)
                cell.setdefault(a, []).append(st)
                rows.append(result_row(f"{wl} {ll} {tr}", d, st))
        cells[(wl, ll, tr)] = cell
    # Every load balancer on AliStorage 50 % (IRN; Themis on NIC-SR).
    every = {a: list(cells[("AliStorage", "50%", "IRN")].get(a, [])) for a in ALL}
    for a in ALL:
        if a in SIX:
            continue
        for d in run_dirs(out_root, "hopper_alistorage", "0.25", a):
            st = run_stats(d)
            every[a].append(st)
            rows.append(result_row("AliStorage 50% IRN", d, st))
    for d in run_dirs(out_root, *NICSR, "themis"):
        st = run_stats(d)
        every["themis"].append(st)
        rows.append(result_row("AliStorage 50% NIC-SR", d, st))
    asym = {}
    for a in SIX:
        for d in run_dirs(out_root, "hopper_asym", None, a):
            # The recorded ideal FCT takes the bottleneck of the first BFS path, which crosses a
            # 1 Gbps spine; recompute it over a 10 Gbps path (the fast paths' bottleneck).
            st = run_stats(d, ideal={"variant": "fixed", "hosts_per_tor": 4, "link_delay_ns": 1000,
                                     "bw_gbps": 10.0}, window=None, bdp=32_000)
            st["slow_share"] = slow_link_share(d)
            asym.setdefault(a, []).append(st)
            rows.append(result_row("asym 10G/1G", d, st, st["slow_share"]))
    if not rows:
        sys.exit(f"{out_root}: no finished runs")
    rows = merged_rows(exp / "results.csv", rows, every)
    with open(exp / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)

    print_cells(cells)
    print_claims(cells)
    print_every(every)
    print_asym(asym)
    for tr, name in (("IRN", "slowdown_irn.png"), ("PFC+GBN", "slowdown_pfc.png")):
        panels = [(k, v) for k, v in cells.items() if k[2] == tr and v]
        if panels:
            bucket_figure(panels, exp / name, tr)
    if any(every.values()):
        every_figure(every, exp / "all_algorithms.png")


def merged_rows(path, rows, every):
    """The committed results.csv with this analysis' rows in place of the runs they re-read and
    new runs appended, so that a partial re-run (some cells, a new scheme) keeps every other
    row. A committed row of the every-scheme table that was not re-read also enters ``every``
    (its group figures: enough for that table and all_algorithms.png; the size-bucket figures
    and the claims use only runs read here)."""
    if not path.exists():
        return rows
    with open(path, newline="") as f:
        committed = list(csv.DictReader(f))
    fresh = {r["run"]: r for r in rows}
    out = [fresh.pop(r["run"], r) for r in committed]
    for r in committed:
        if r["run"] in {x["run"] for x in rows}:
            continue
        if r["cell"] in ("AliStorage 50% IRN", "AliStorage 50% NIC-SR") and r["algorithm"] in every:
            every[r["algorithm"]].append(stats_of_row(r))
    return out + list(fresh.values())


def stats_of_row(r):
    """A committed results.csv row as the group part of :func:`run_stats`."""
    groups = {"<1BDP": ("avg_small", "p99_small"), ">=1BDP": ("avg_large", "p99_large"),
              "all": ("avg_all", "p99_all")}
    return {"algorithm": r["algorithm"], "seed": int(r["seed"]), "buckets": [],
            "groups": {g: {"avg": float(r[a]), "p99": float(r[p])} for g, (a, p) in groups.items()},
            "counters": {k: int(r[k]) for k in COUNTERS}, "cpu_time_s": None, "peak_rss_mib": None}


def result_row(cell, d, st, share=None):
    g = st["groups"]
    f = lambda v: f"{v:.4f}"  # noqa: E731
    return {"cell": cell, "algorithm": st["algorithm"], "seed": st["seed"],
            "flows_in_window": st["n_window"], "flows_completed": st["flows_completed"],
            "flows_total": st["flows_total"],
            "avg_small": f(g["<1BDP"]["avg"]), "p99_small": f(g["<1BDP"]["p99"]),
            "avg_large": f(g[">=1BDP"]["avg"]), "p99_large": f(g[">=1BDP"]["p99"]),
            "avg_all": f(g["all"]["avg"]), "p99_all": f(g["all"]["p99"]),
            **{k: st["counters"][k] for k in COUNTERS}, "slow_link_share": "" if share is None else f"{share:.4f}", "run": d.name}


def print_cells(cells):
    print("### FCT slowdown per cell (mean over seeds [min, max])\n")
    print("| workload | load | transport | algorithm | seeds | avg <1BDP | p99 <1BDP | avg ≥1BDP | p99 ≥1BDP "
          "| retx pkts | path switches |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (wl, ll, tr), cell in cells.items():
        for a in SIX:
            rs = cell.get(a, [])
            if not rs:
                continue
            g = lambda grp, st: spread([r["groups"][grp][st] for r in rs])  # noqa: E731
            print(f"| {wl} | {ll} | {tr} | {a} | {len(rs)} | {g('<1BDP', 'avg')} | {g('<1BDP', 'p99')} | "
                  f"{g('>=1BDP', 'avg')} | {g('>=1BDP', 'p99')} | "
                  f"{spread([r['counters']['retx_pkts'] for r in rs], '{:.0f}')} | "
                  f"{spread([r['counters']['path_switches'] for r in rs], '{:.0f}')} |")
    print("\n### Hopper's improvement over each baseline ((baseline − Hopper) / baseline, %, paired by seed: "
          "mean [min, max])\n")
    print("| workload | load | transport | vs | seeds | avg <1BDP | p99 <1BDP | avg ≥1BDP | p99 ≥1BDP |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (wl, ll, tr), cell in cells.items():
        for a in SIX[:-1]:
            n = len(paired(cell, a, lambda b, h: 0))
            if not n:
                continue
            cols = [spread(paired(cell, a, lambda b, h, g=g, s=s: improvement(b["groups"][g][s], h["groups"][g][s])),
                           "{:+.1f}")
                    for g in ("<1BDP", ">=1BDP") for s in ("avg", "p99")]
            print(f"| {wl} | {ll} | {tr} | {a} | {n} | {cols[0]} | {cols[1]} | {cols[2]} | {cols[3]} |")


GROUP_OF = {"any": "all", "small": "<1BDP", "large": ">=1BDP"}


def noise_floor(cell, algo, stat, group, worst=False):
    """The same best-bucket figure between two seeds of one scheme (each ordered pair of seeds,
    the first as the baseline): what the best of 20 buckets "gains" with no change of scheme,
    only of flow file and seed."""
    rs = cell.get(algo, [])
    return [best_bucket(a, b, stat, group, worst) for a in rs for b in rs if a["seed"] != b["seed"]]


def print_claims(cells):
    print("\n### The paper's AliStorage claims (App. B) on the extended IRN\n")
    print("Best bucket: Hopper's largest improvement over the 20 size buckets of the group (the most "
          "negative for a 'worse' claim), paired by seed. Whole group: the same statistic over all the "
          "group's flows. Noise floor: the best-bucket figure of one seed of the baseline over another "
          "(every ordered pair of seeds), i.e. what the best-of-20 selection gives with no change of "
          "scheme.\n")
    print("| claim | vs | ours: best size bucket, % (mean [min, max] over seeds) | whole group, % | "
          "noise floor, % (seed pairs) | seeds | verdict |")
    print("|---|---|---|---|---|---|---|")
    for label, ll, bases, stat, group, paper in CLAIMS:
        cell = cells.get(("AliStorage", ll, "IRN"), {})
        for a in bases:
            vals = paired(cell, a, lambda b, h: best_bucket(b, h, stat, group, worst=paper < 0))
            whole = paired(cell, a, lambda b, h: improvement(b["groups"][GROUP_OF[group]][stat],
                                                            h["groups"][GROUP_OF[group]][stat]))
            floor = noise_floor(cell, a, stat, group, worst=paper < 0)
            v = verdict(vals, paper)
            if floor and vals and abs(float(np.mean(vals))) <= max(abs(x) for x in floor):
                v += " (within the noise floor)"
            fl = f"{spread(floor, '{:+.1f}')} ({len(floor)})" if floor else "-"
            print(f"| {label} | {a} | {spread(vals, '{:+.1f}')} | {spread(whole, '{:+.1f}')} | {fl} | "
                  f"{len(vals)} | {v} |")


def print_every(every):
    print("\n### Every load balancer, AliStorage 50 %, 100 ms, extended IRN (Themis: NIC-SR receivers)\n")
    print("| algorithm | seeds | avg <1BDP | p99 <1BDP | avg ≥1BDP | p99 ≥1BDP | retx pkts | path switches "
          "| CPU s | peak MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for a in ALL:
        rs = every.get(a, [])
        if not rs:
            print(f"| {a} | 0 | pending | | | | | | | |")
            continue
        g = lambda grp, st: spread([r["groups"][grp][st] for r in rs])  # noqa: E731
        cpu = [r["cpu_time_s"] for r in rs if r.get("cpu_time_s") is not None]
        mem = [r["peak_rss_mib"] for r in rs if r.get("peak_rss_mib") is not None]
        print(f"| {a} | {len(rs)} | {g('<1BDP', 'avg')} | {g('<1BDP', 'p99')} | {g('>=1BDP', 'avg')} | "
              f"{g('>=1BDP', 'p99')} | {spread([r['counters']['retx_pkts'] for r in rs], '{:.0f}')} | "
              f"{spread([r['counters']['path_switches'] for r in rs], '{:.0f}')} | "
              f"{spread(cpu, '{:.0f}') if cpu else '-'} | {spread(mem, '{:.0f}') if mem else '-'} |")


def print_asym(asym):
    if not asym:
        return
    print("\n### Asymmetric 10G/1G fabric (1 MiB rounds; ideal over a 10 Gbps path)\n")
    print("| algorithm | seeds | avg | p99 | 1G share of uplink bytes |")
    print("|---|---|---|---|---|")
    for a in SIX:
        rs = asym.get(a, [])
        if rs:
            print(f"| {a} | {len(rs)} | {spread([r['groups']['all']['avg'] for r in rs])} | "
                  f"{spread([r['groups']['all']['p99'] for r in rs])} | "
                  f"{spread([100 * r['slow_share'] for r in rs], '{:.1f} %')} |")


def size_label(b):
    for unit, m in (("M", 1_000_000), ("K", 1_000)):
        if b >= m:
            return f"{b / m:.3g}{unit}"
    return str(b)


def bucket_figure(panels, path, transport):
    """Avg and p99 slowdown per size bucket (ConWeave's 20 equal-count buckets, labelled by
    their largest flow; the dotted line is 1 BDP), one column per workload x load, schemes in
    the project's colours; the line is the mean over seeds, the band their min-max."""
    with plt.rc_context(style.RC):
        fig, axes = plt.subplots(2, len(panels), figsize=(2.1 * len(panels) + 0.4, 3.8), squeeze=False)
        for j, ((wl, ll, _), cell) in enumerate(panels):
            sizes = None
            for a in style.ordered(cell):
                rs = [r for r in cell[a] if len(r["buckets"]) == N_BUCKETS]
                if not rs:
                    continue
                sizes = sizes or [b["size_max"] for b in rs[0]["buckets"]]
                x = np.arange(1, N_BUCKETS + 1)
                for i, stat in enumerate(("avg", "p99")):
                    ys = np.array([[b[stat] for b in r["buckets"]] for r in rs])
                    kw = style.line_kwargs(a)
                    kw["markersize"] = 2.5
                    axes[i][j].plot(x, ys.mean(axis=0), **kw)
                    if len(ys) > 1:
                        axes[i][j].fill_between(x, ys.min(axis=0), ys.max(axis=0), color=kw["color"], alpha=0.18,
                                                linewidth=0)
            axes[0][j].set_title(f"{wl} {ll} ({transport})")
            for i, stat in enumerate(("avg", "p99")):
                ax = axes[i][j]
                ax.grid(True, alpha=0.3)
                if sizes:
                    ticks = list(range(1, N_BUCKETS + 1, 3))
                    ax.set_xticks(ticks)
                    ax.set_xticklabels([size_label(sizes[t - 1]) for t in ticks], rotation=45)
                    edge = next((k for k, sz in enumerate(sizes, 1) if sz >= BDP), None)
                    if edge:
                        ax.axvline(edge - 0.5, color="grey", linewidth=0.6, linestyle=":")
                if j == 0:
                    ax.set_ylabel(f"{stat} FCT slowdown")
            axes[1][j].set_xlabel("flow size (bucket's largest, B)")
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
        fig.tight_layout(rect=(0, 0.06, 1, 1))
        fig.savefig(path, dpi=200)
        fig.savefig(path.with_suffix(".pdf"))
        plt.close(fig)


def every_figure(every, path):
    """Four ranked panels (avg / p99 slowdown of small and large flows): one bar per algorithm,
    best at the top, hatched for switch-side schemes, seed spread as a whisker."""
    metrics = [("<1BDP", "avg", "avg, flows < 1 BDP"), ("<1BDP", "p99", "p99, flows < 1 BDP"),
               (">=1BDP", "avg", "avg, flows ≥ 1 BDP"), (">=1BDP", "p99", "p99, flows ≥ 1 BDP")]
    algos = [a for a in ALL if every.get(a)]
    with plt.rc_context(style.RC):
        fig, axes = plt.subplots(1, 4, figsize=(7.2, 0.16 * len(algos) + 0.9))
        for ax, (grp, stat, title) in zip(axes, metrics):
            vals = {a: [r["groups"][grp][stat] for r in every[a]] for a in algos}
            order = sorted(algos, key=lambda a: np.mean(vals[a]), reverse=True)
            for i, a in enumerate(order):
                colour, _ = style.style_for(a)
                v = vals[a]
                m = float(np.mean(v))
                ax.barh(i, m, color=colour, alpha=0.75, edgecolor=colour,
                        hatch="////" if a in style.SWITCH_SCHEMES else None)
                if len(v) > 1:
                    ax.plot([min(v), max(v)], [i, i], color="k", linewidth=0.8)
                ax.text(max(v), i, f" {m:.2f}", va="center", fontsize=5)
            ax.set_yticks(range(len(order)))
            ax.set_yticklabels(order)
            ax.set_title(title)
            ax.set_xlim(left=1, right=max(max(v) for v in vals.values()) * 1.18)
            ax.grid(True, axis="x", alpha=0.3)
        fig.suptitle("AliStorage 50 %, 100 ms, extended IRN: FCT slowdown (best at the top; hatched: "
                     "switch-side)", fontsize=6)
        fig.tight_layout()
        fig.savefig(path, dpi=200)
        fig.savefig(path.with_suffix(".pdf"))
        plt.close(fig)


if __name__ == "__main__":
    main()
