"""REPS under failures (run_failures.sh): results_failures.csv, three figures, README tables.

Reads the sweep's run directories (summary.json, flows.csv, failed_drops.csv, rtt_hist.csv;
directory names <config stem>-<algorithm>-s<seed>-<hash>) and writes
  results_failures.csv  one row per run (FCTs, counters, RTT percentiles from the histogram,
                        the failure-to-last-drop times of the mid-run failure, CPU, memory);
  failures_fct.png      permutation completion time vs share of failed pipes (k = 8, k = 16),
                        mean over seeds with the min-max range;
  reroute_cdf.png       mid-run failure: per flow that sent into a failed pipe after it failed,
                        the time from the failure to its last packet into one (all seeds);
  rtt_cdf.png           the RTT distributions of Figs. 2b-4b (1:1, 8:1, 6 % failed pipes;
                        k = 8 and k = 16, seed 1), from rtt_hist.csv;
  failures_gain.png     spraying's completion time over REPS's against the share of failed
                        pipes (the paper's failure count is not given: the curve is what its
                        "50 %" depends on);
and prints the README's tables. Deterministic: same runs, same bytes.

Rows of an existing results_failures.csv whose run directory is not under OUT_ROOT are kept as
they are (the runs of earlier sittings, whose raw outputs may be gone); a run present under
OUT_ROOT replaces its row. The mid-run failure table and reroute_cdf.png pool every hit flow of
the raw runs, and rtt_cdf.png reads their histograms: they are redrawn only when those runs are
present.

Usage (from the repository root): python experiments/reps/analyze_failures.py OUT_ROOT EXP_DIR
"""
import csv
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plots.style import RC, COLUMN_WIDTH_IN, line_kwargs  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ALGOS = ["ecmp", "spray", "reps"]
# config stem -> (k, case, failed pipes or None, label)
CASES = {
    "uet_k8_oneway_1pct": (8, "oneway", 1, "k=8, 1 of 128 agg->core pipes one way (0.8 %)"),
    "uet_k8_oneway_2pct": (8, "oneway", 3, "k=8, 3 of 128 agg->core pipes one way (2.3 %)"),
    "uet_k8_oneway_3pct": (8, "oneway", 4, "k=8, 4 of 128 agg->core pipes one way (3.1 %)"),
    "uet_k8_oneway_6pct": (8, "oneway", 8, "k=8, 8 of 128 agg->core pipes one way (6.25 %)"),
    "uet_k16_oneway_0p5pct": (16, "oneway", 5, "k=16, 5 of 1024 agg->core pipes one way (0.5 %)"),
    "uet_k16_oneway_1pct": (16, "oneway", 10, "k=16, 10 of 1024 agg->core pipes one way (1.0 %)"),
    "uet_k16_oneway_2pct": (16, "oneway", 20, "k=16, 20 of 1024 agg->core pipes one way (2.0 %)"),
    "uet_k16_oneway_3pct": (16, "oneway", 31, "k=16, 31 of 1024 agg->core pipes one way (3.0 %)"),
    "uet_k16_oneway_6pct": (16, "oneway", 61, "k=16, 61 of 1024 agg->core pipes one way (6.0 %)"),
    "uet_k8_oneway_mid": (8, "mid", 8, "k=8, 8 pipes fail one way at 50 us"),
    "uet_k16_oneway_mid": (16, "mid", 61, "k=16, 61 pipes fail one way at 100 us"),
    "uet_k16_degraded": (16, "degraded", 16, "k=16, artifact's -failed 8: 16 links half speed one way"),
    "uet_k8_1to1_rtt": (8, "1to1", None, "k=8, 1:1"),
    "uet_k8_8to1_rtt": (8, "8to1", None, "k=8, 8:1"),
    "uet_k8_8to1_uplinks": (8, "8to1", None, "k=8, 8:1 by fewer uplinks (the artifact's shape)"),
    "uet_k16_1to1_rtt": (16, "1to1", None, "k=16, 1:1"),
    "uet_k16_8to1_rtt": (16, "8to1", None, "k=16, 8:1"),
}
MID_FAIL_NS = {"uet_k8_oneway_mid": 50_000, "uet_k16_oneway_mid": 100_000}


def pct(sorted_vals, q):
    """The q-quantile by the nearest-rank rule (q in [0, 1]) of a sorted list."""
    if not sorted_vals:
        return None
    i = min(len(sorted_vals) - 1, max(0, int(-(-q * len(sorted_vals) // 1)) - 1))
    return sorted_vals[i]


def hist_quantile(bins, q):
    """The bin end (us) below which a fraction q of the ACKs fall: (start_ns, end_ns, n) bins."""
    total = sum(n for _, _, n in bins)
    if total == 0:
        return None
    acc = 0
    for _, end, n in bins:
        acc += n
        if acc >= q * total:
            return end / 1e3
    return bins[-1][1] / 1e3


def load(out_root):
    runs = []
    for summary in sorted(Path(out_root).glob("*/summary.json")):
        d = summary.parent
        s = json.loads(summary.read_text())
        tag = f"-{s['algorithm']}-s{s['seed']}-"
        if tag not in d.name:
            continue
        stem = d.name[: d.name.index(tag)]
        if stem not in CASES:
            continue
        with open(d / "flows.csv") as f:
            fct_us = sorted(int(r["fct_ns"]) / 1e3 for r in csv.DictReader(f) if r["fct_ns"])
        drops = []
        if (d / "failed_drops.csv").exists():
            with open(d / "failed_drops.csv") as f:
                drops = list(csv.DictReader(f))
        bins = []
        if (d / "rtt_hist.csv").exists():
            with open(d / "rtt_hist.csv") as f:
                bins = [(int(r["bin_start_ns"]), int(r["bin_end_ns"]), int(r["acks"]))
                        for r in csv.DictReader(f)]
        runs.append({"stem": stem, "algorithm": s["algorithm"], "seed": s["seed"], "summary": s,
                     "fct_us": fct_us, "drops": drops, "rtt": bins})
    return runs


def reroute_us(r):
    """Mid-run failure: per flow with a drop after the failure, last drop - failure (us)."""
    fail = MID_FAIL_NS.get(r["stem"])
    if fail is None:
        return []
    return sorted((int(x["last_drop_ns"]) - fail) / 1e3 for x in r["drops"] if x["flow_id"])


def row(r):
    s, f, c = r["summary"], r["fct_us"], r["summary"]["counters"]
    k, case, failed, _ = CASES[r["stem"]]
    done, total = s["flows_completed"], s["flows_total"]
    rr = reroute_us(r)
    out = {
        "config": r["stem"], "k": k, "case": case, "failed_links": failed if failed else 0,
        "algorithm": r["algorithm"], "seed": r["seed"],
        "flows_completed": done, "flows_total": total,
        "mean_fct_us": round(sum(f) / len(f), 2) if f else "",
        "p99_fct_us": round(pct(f, 0.99), 2) if f else "",
        "max_fct_us": round(f[-1], 2) if f and done == total else "",
        "retx_pkts": c.get("retx_pkts", ""), "timeouts": c.get("timeouts", ""),
        "trims": c.get("trims", ""), "link_down_losses": c.get("link_down_losses", ""),
        "flows_with_failed_drops": sum(1 for x in r["drops"] if x["flow_id"]),
        "rtt_p50_us": "", "rtt_p99_us": "", "rtt_acks": "",
        "reroute_flows": len(rr) if rr else "",
        "reroute_min_us": round(rr[0], 3) if rr else "",
        "reroute_median_us": round(statistics.median(rr), 3) if rr else "",
        "reroute_p99_us": round(pct(rr, 0.99), 3) if rr else "",
        "reroute_max_us": round(rr[-1], 3) if rr else "",
        "cpu_s": s.get("cpu_time_s", ""), "peak_rss_mib": s.get("peak_rss_mib", ""),
    }
    if r["rtt"]:
        out["rtt_p50_us"] = hist_quantile(r["rtt"], 0.5)
        out["rtt_p99_us"] = hist_quantile(r["rtt"], 0.99)
        out["rtt_acks"] = sum(n for _, _, n in r["rtt"])
    return out


def spread(vals, fmt="{:.0f}"):
    """'mean (min-max)' of a list of numbers."""
    if not vals:
        return "-"
    m = sum(vals) / len(vals)
    if len(vals) == 1:
        return fmt.format(m)
    return f"{fmt.format(m)} ({fmt.format(min(vals))}-{fmt.format(max(vals))})"


def by(rows, stem, algo):
    return [x for x in rows if x["config"] == stem and x["algorithm"] == algo]


def ratio_per_seed(rows, stem, num, den, key="max_fct_us"):
    """Per seed present in both: max FCT (or `key`) num / den."""
    a = {x["seed"]: x[key] for x in by(rows, stem, num)}
    b = {x["seed"]: x[key] for x in by(rows, stem, den)}
    return [a[s] / b[s] for s in sorted(a) if s in b and a[s] != "" and b[s] != ""]


def print_tables(rows):
    print("\n### Completion time (max FCT, us): mean over seeds (min-max); flows done\n")
    print("| case | seeds | ECMP | spray | REPS | REPS vs spray (per seed) | spray / REPS | "
          "REPS vs spray, mean FCT | ECMP / spray | paper |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for stem, (k, case, _, label) in CASES.items():
        if case not in ("oneway", "degraded", "1to1", "8to1"):
            continue
        cells = []
        seeds = sorted({x["seed"] for x in rows if x["config"] == stem})
        if not seeds:
            continue
        for a in ALGOS:
            xs = by(rows, stem, a)
            if not xs:
                cells.append("-")
                continue
            done = [x["flows_completed"] for x in xs]
            total = xs[0]["flows_total"]
            fin = [x["max_fct_us"] for x in xs if x["max_fct_us"] != ""]
            if len(fin) == len(xs):
                cells.append(spread(fin))
            else:
                cells.append(f"never in {len(xs) - len(fin)}/{len(xs)} seeds "
                             f"({spread(done)} of {total} flows done)")
        r = ratio_per_seed(rows, stem, "spray", "reps")
        d = [100 * (x - 1) for x in ratio_per_seed(rows, stem, "reps", "spray")]
        dm = [100 * (x - 1) for x in ratio_per_seed(rows, stem, "reps", "spray", "mean_fct_us")]
        ecmp = ratio_per_seed(rows, stem, "ecmp", "spray")
        paper = {"oneway": "REPS ~50 % better (Fig. 4)", "degraded": "-",
                 "1to1": "REPS ~10 % better (Fig. 2)", "8to1": "REPS ~10 % better (Fig. 3)"}[case]
        print(f"| {label} | {','.join(map(str, seeds))} | {cells[0]} | {cells[1]} | {cells[2]} "
              f"| {spread(d, '{:+.1f}')} % | {spread(r, '{:.2f}')}x | {spread(dm, '{:+.1f}')} % | "
              f"{spread(ecmp, '{:.2f}') + 'x' if ecmp else '-'} | {paper} |")

    print("\n### REPS against spraying by share of failed pipes (max FCT; the paper gives no count)\n")
    print("| k | failed pipes | share | seeds | REPS faster than spraying, % (per seed) | spray / REPS |")
    print("|---|---|---|---|---|---|")
    for k, share, stem in gain_curve_points(rows):
        r = ratio_per_seed(rows, stem, "spray", "reps")
        d = [100 * (1 - 1 / x) for x in r]
        print(f"| {k} | {CASES[stem][2]} | {share:.1f} % | {len(r)} | {spread(d, '{:.1f}')} | "
              f"{spread(r, '{:.2f}')}x |")

    if not any(run["stem"] in MID_FAIL_NS for run in RUNS):
        print("\n(mid-run failure table: needs the raw runs; see README)")
    else:
        print_mid(rows)
    print_rtt(rows)


def gain_curve_points(rows):
    """(k, share %, stem) of every one-way failure case with spraying and REPS runs, by k, share."""
    pts = []
    for stem, (k, case, failed, _) in CASES.items():
        if case == "oneway" and by(rows, stem, "spray") and by(rows, stem, "reps"):
            pts.append((k, 100 * failed / (128 if k == 8 else 1024), stem))
    return sorted(pts)


def print_mid(rows):
    print("\n### Mid-run failure: failure -> each hit flow's last packet into a failed pipe (us)\n")
    print("| case | algorithm | seeds | flows hit per seed | min | median | p99 | max | under 100 us "
          "| max FCT (us) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for stem in MID_FAIL_NS:
        for a in ("spray", "reps"):
            xs = by(rows, stem, a)
            if not xs:
                continue
            pooled = []
            for run in RUNS:
                if run["stem"] == stem and run["algorithm"] == a:
                    pooled += reroute_us(run)
            pooled.sort()
            hits = [x["flows_with_failed_drops"] for x in xs]
            fin = [x["max_fct_us"] for x in xs if x["max_fct_us"] != ""]
            q = [pooled[0], statistics.median(pooled), pct(pooled, 0.99), pooled[-1]] if pooled \
                else [None] * 4
            cells = " | ".join("-" if v is None else f"{v:.1f}" for v in q)
            under = f"{100 * sum(1 for v in pooled if v < 100) / len(pooled):.1f} %" if pooled else "-"
            print(f"| {CASES[stem][3]} | {a} | {len(xs)} | {spread(hits)} | {cells} | {under} "
                  f"| {spread(fin)} |")



def print_rtt(rows):
    print("\n### RTT (us, from rtt_hist.csv, 500 ns bins): p50 / p99, seed 1\n")
    print("| case | ECMP | spray | REPS |")
    print("|---|---|---|---|")
    for stem in ("uet_k8_1to1_rtt", "uet_k8_8to1_rtt", "uet_k8_oneway_6pct", "uet_k16_1to1_rtt",
                 "uet_k16_8to1_rtt", "uet_k16_oneway_6pct", "uet_k16_degraded"):
        cells = []
        for a in ALGOS:
            xs = [x for x in by(rows, stem, a) if x["seed"] == 1 and x["rtt_p50_us"] != ""]
            cells.append(f"{xs[0]['rtt_p50_us']:.1f} / {xs[0]['rtt_p99_us']:.1f}" if xs else "-")
        if any(c != "-" for c in cells):
            print(f"| {CASES[stem][3]} | " + " | ".join(cells) + " |")

    cpu = [x["cpu_s"] for x in rows if x["cpu_s"] != ""]
    rss = [x["peak_rss_mib"] for x in rows if x["peak_rss_mib"] != ""]
    print(f"\n{len(rows)} runs, {sum(cpu):.0f} s of CPU in all, peak RSS up to {max(rss):.0f} MiB")


def fig_fct(rows, exp):
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN_WIDTH_IN * 2, 2.2), squeeze=False)
    for ax, k in zip(axes[0], (8, 16)):
        stems = [s for s, v in CASES.items() if v[0] == k and v[1] == "oneway"]
        for a in ALGOS:
            xs_, ys, lo, hi = [], [], [], []
            for stem in stems:
                fin = [x["max_fct_us"] for x in by(rows, stem, a)]
                if not fin or any(v == "" for v in fin):
                    continue  # ECMP: some flows never finish
                m = sum(fin) / len(fin)
                xs_.append(100 * CASES[stem][2] / (128 if k == 8 else 1024))
                ys.append(m)
                lo.append(m - min(fin))
                hi.append(max(fin) - m)
            if xs_:
                ax.errorbar(xs_, ys, yerr=[lo, hi], capsize=2, **line_kwargs(a))
        ax.set_xlabel("agg->core pipes failed one way (%)")
        ax.set_xlim(0, 7)
        ax.set_title(f"k = {k} (ECMP: some flows never finish)", fontsize="small")
        ax.set_yscale("log")
        ax.grid(True)
    axes[0][0].set_ylabel("completion time (us)")
    axes[0][0].legend(loc="upper left", fontsize="x-small")
    fig.tight_layout()
    fig.savefig(exp / "failures_fct.png")
    plt.close(fig)


def fig_gain(rows, exp):
    """spray / REPS completion time per seed against the failed share, both k; 2x = REPS 50 %
    faster, the paper's figure (Fig. 4) -- which share gives it is the free parameter."""
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN, 2.2))
    for k, marker in ((8, "o"), (16, "s")):
        pts = [(share, ratio_per_seed(rows, stem, "spray", "reps"))
               for kk, share, stem in gain_curve_points(rows) if kk == k]
        if not pts:
            continue
        xs_ = [p for p, _ in pts]
        ys = [sum(r) / len(r) for _, r in pts]
        lo = [y - min(r) for y, (_, r) in zip(ys, pts)]
        hi = [max(r) - y for y, (_, r) in zip(ys, pts)]
        ax.errorbar(xs_, ys, yerr=[lo, hi], marker=marker, capsize=2, label=f"k = {k}")
    ax.axhline(2.0, color="grey", linestyle=":", linewidth=0.8)
    ax.text(6.9, 2.05, "REPS 50 % faster (the paper)", ha="right", va="bottom", fontsize="x-small")
    ax.set_xlabel("agg->core pipes failed one way (%)")
    ax.set_ylabel("spray / REPS completion")
    ax.set_xlim(0, 7)
    ax.set_yscale("log")
    ax.set_yticks([1.5, 2, 3, 5, 10], ["1.5x", "2x", "3x", "5x", "10x"])
    ax.minorticks_off()
    ax.grid(True)
    ax.legend(loc="upper left", fontsize="x-small")
    fig.tight_layout()
    fig.savefig(exp / "failures_gain.png")
    plt.close(fig)


def load_csv(path):
    """The rows of an earlier results_failures.csv, typed as row() makes them."""
    def typed(v):
        if v == "":
            return ""
        for t in (int, float):
            try:
                return t(v)
            except ValueError:
                pass
        return v
    if not path.exists():
        return []
    with open(path) as f:
        return [{k: typed(v) for k, v in r.items()} for r in csv.DictReader(f)]


def fig_reroute(exp):
    fig, axes = plt.subplots(1, 2, figsize=(COLUMN_WIDTH_IN * 2, 2.2), squeeze=False)
    for ax, stem in zip(axes[0], MID_FAIL_NS):
        for a in ("spray", "reps"):
            pooled = sorted(v for run in RUNS if run["stem"] == stem and run["algorithm"] == a
                            for v in reroute_us(run))
            if not pooled:
                continue
            kw = line_kwargs(a)
            kw.pop("marker", None)
            ax.step(pooled, [(i + 1) / len(pooled) for i in range(len(pooled))], where="post", **kw)
        ax.axvline(100, color="grey", linestyle=":", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("failure -> flow's last packet into a failed pipe (us)")
        ax.set_title(CASES[stem][3], fontsize="small")
        ax.grid(True)
    axes[0][0].set_ylabel("fraction of hit flows")
    axes[0][0].legend(loc="lower right", fontsize="x-small")
    fig.tight_layout()
    fig.savefig(exp / "reroute_cdf.png")
    plt.close(fig)


def fig_rtt(exp):
    panels = [("1to1_rtt", "1:1 (Fig. 2b)"), ("8to1_rtt", "8:1 (Fig. 3b)"),
              ("oneway_6pct", "6 % pipes failed one way (Fig. 4b)")]
    fig, axes = plt.subplots(2, 3, figsize=(COLUMN_WIDTH_IN * 2.6, 4.2), squeeze=False)
    for ax_row, k in zip(axes, (8, 16)):
        for ax, (suffix, title) in zip(ax_row, panels):
            stem = f"uet_k{k}_{suffix}"
            for a in ALGOS:
                rs = [r for r in RUNS if r["stem"] == stem and r["algorithm"] == a
                      and r["seed"] == 1 and r["rtt"]]
                if not rs:
                    continue
                bins = rs[0]["rtt"]
                total = sum(n for _, _, n in bins)
                acc, xs_, ys = 0, [], []
                for _, end, n in bins:
                    if n:
                        acc += n
                        xs_.append(end / 1e3)
                        ys.append(acc / total)
                kw = line_kwargs(a)
                kw.pop("marker", None)
                ax.step(xs_, ys, where="post", **kw)
            ax.set_xscale("log")
            ax.set_xlabel("RTT (us)")
            ax.set_title(f"k = {k}, " + title, fontsize="small")
            ax.grid(True)
        ax_row[0].set_ylabel("fraction of ACKs")
    axes[0][0].legend(loc="lower right", fontsize="x-small")
    fig.tight_layout()
    fig.savefig(exp / "rtt_cdf.png")
    plt.close(fig)


RUNS = []


def main():
    out_root, exp = Path(sys.argv[1]), Path(sys.argv[2])
    RUNS.extend(load(out_root) if out_root.is_dir() else [])
    merged = {(x["config"], x["algorithm"], x["seed"]): x for x in load_csv(exp / "results_failures.csv")}
    merged.update({(x["config"], x["algorithm"], x["seed"]): x for x in (row(r) for r in RUNS)})
    if not merged:
        sys.exit(f"{out_root}: no finished runs")
    order = list(CASES)
    rows = sorted(merged.values(),
                  key=lambda x: (order.index(x["config"]), ALGOS.index(x["algorithm"]), x["seed"]))
    with open(exp / "results_failures.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print_tables(rows)
    plt.rcParams.update(RC)
    plt.rcParams["svg.hashsalt"] = "rdma-lb"
    fig_fct(rows, exp)
    fig_gain(rows, exp)
    if any(run["stem"] in MID_FAIL_NS for run in RUNS):
        fig_reroute(exp)
    if any(run["rtt"] and run["stem"].endswith(("_rtt", "_6pct")) for run in RUNS):
        fig_rtt(exp)


if __name__ == "__main__":
    main()
