"""PLTS on long flows (the PLTS paper's throughput claim): a permutation on the 1:1 k = 8 fat tree.

Per run (summary.json, flows.csv, uplink.txt of one sweep point):
* aggregate throughput = all flows' bytes x 8 / the permutation's completion time (the
  collective's CCT: last delivery - first start; every flow starts at 0), in Tbps;
* per-flow goodput = size x 8 / FCT (Gbps): mean, min, p1 (interpolated) and median of the 128;
* ToR uplink balance from uplink.txt (cumulative bytes of every ToR port towards a switch, last
  sample): per ToR the coefficient of variation (population std / mean) of its uplinks' bytes,
  averaged over the ToRs, and the largest max / mean of any ToR;
* retransmitted packets, trimmed packets (uet), CPU seconds and peak RSS of the run.
Per (transport, algorithm): mean, min and max over the seeds of each; the ratio to ECMP is taken
seed by seed (the same seed draws the same permutation) before its mean / min / max.

Writes throughput_runs.csv (one row per run), throughput.csv (the summary) and throughput.png,
and prints the summary as Markdown, then the variants against each other (aggregate throughput,
seed by seed: round robin over counter-based, counter-based over random). Without sweep
directories it reads throughput_runs.csv instead and only prints.

usage: analyze_perm.py EXP_DIR [TRANSPORT=SWEEP_DIR...]"""

import csv
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plots.style import RC, COLUMN_WIDTH_IN, line_kwargs  # noqa: E402
from plots.tables import markdown, write_csv  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402

ALGOS = ["ecmp", "plts-random", "plts-counter", "plts-rr"]
TITLES = {"irn": "RoCE, IRN (3-packet reorder window) + DCQCN, no PFC",
          "uet": "uet (SACK per packet, trimming)"}


def tor_uplink_balance(run):
    """(mean over ToRs of the CV of their uplinks' bytes, largest max / mean of a ToR)."""
    last = {}
    with open(run / "uplink.txt") as f:
        for line in f:
            _, tor, port, tx_bytes = (int(x) for x in line.strip().split(","))
            last[(tor, port)] = tx_bytes
    per_tor = {}
    for (tor, _), tx_bytes in sorted(last.items()):
        per_tor.setdefault(tor, []).append(tx_bytes)
    cvs, peaks = [], []
    for tx in per_tor.values():
        mean = np.mean(tx)
        if mean > 0:
            cvs.append(np.std(tx) / mean)
            peaks.append(max(tx) / mean)
    return float(np.mean(cvs)), float(np.max(peaks))


def one_run(transport, run):
    s = json.loads((run / "summary.json").read_text())
    flows = list(csv.DictReader(open(run / "flows.csv")))
    done = [f for f in flows if f["fct_ns"] != ""]
    goodput_gbps = np.array([int(f["size_bytes"]) * 8 / int(f["fct_ns"]) for f in done])
    total_bytes = sum(int(f["size_bytes"]) for f in flows)
    complete = len(done) == len(flows)
    cct_ns = s["collectives"]["cct_max_ns"] if complete else None
    cv, peak = tor_uplink_balance(run)
    return {
        "transport": transport, "algorithm": s["algorithm"], "seed": s["seed"],
        "flows": f"{len(done)}/{len(flows)}",
        "completion_us": f"{cct_ns / 1e3:.1f}" if complete else "",
        "aggregate_tbps": f"{total_bytes * 8 / cct_ns / 1e3:.3f}" if complete else "",
        "goodput_mean_gbps": f"{goodput_gbps.mean():.2f}",
        "goodput_min_gbps": f"{goodput_gbps.min():.2f}",
        "goodput_p1_gbps": f"{np.percentile(goodput_gbps, 1):.2f}",
        "goodput_median_gbps": f"{np.median(goodput_gbps):.2f}",
        "tor_uplink_cv": f"{cv:.4f}", "tor_uplink_max_over_mean": f"{peak:.3f}",
        "retx_pkts": s["counters"]["retx_pkts"], "trims": s["counters"].get("trims", 0),
        "cpu_s": f"{s['cpu_time_s']:.1f}", "peak_rss_mib": f"{s['peak_rss_mib']:.0f}",
    }, goodput_gbps


def spread(values, fmt):
    v = np.array(values, dtype=float)
    return f"{fmt.format(v.mean())} ({fmt.format(v.min())}-{fmt.format(v.max())})"


def summarize(runs):
    rows = []
    for transport in sorted({r["transport"] for r in runs}):
        ecmp = {r["seed"]: float(r["aggregate_tbps"]) for r in runs
                if r["transport"] == transport and r["algorithm"] == "ecmp" and r["aggregate_tbps"]}
        for algo in ALGOS:
            rs = [r for r in runs if r["transport"] == transport and r["algorithm"] == algo]
            if not rs:
                continue
            ok = [r for r in rs if r["aggregate_tbps"]]
            ratio = [float(r["aggregate_tbps"]) / ecmp[r["seed"]] for r in ok if r["seed"] in ecmp]
            col = lambda key: [float(r[key]) for r in rs]  # noqa: E731
            rows.append({
                "transport": transport, "algorithm": algo, "seeds": len(rs),
                "complete_runs": f"{len(ok)}/{len(rs)}",
                "aggregate_tbps": spread([float(r["aggregate_tbps"]) for r in ok], "{:.2f}") if ok else "",
                "aggregate_vs_ecmp": spread(ratio, "{:.2f}x") if ratio else "",
                "goodput_mean_gbps": spread(col("goodput_mean_gbps"), "{:.1f}"),
                "goodput_min_gbps": spread(col("goodput_min_gbps"), "{:.1f}"),
                "goodput_p1_gbps": spread(col("goodput_p1_gbps"), "{:.1f}"),
                "goodput_median_gbps": spread(col("goodput_median_gbps"), "{:.1f}"),
                "tor_uplink_cv": spread(col("tor_uplink_cv"), "{:.3f}"),
                "tor_uplink_max_over_mean": spread(col("tor_uplink_max_over_mean"), "{:.2f}"),
                "retx_pkts": spread(col("retx_pkts"), "{:.0f}"),
                "trims": spread(col("trims"), "{:.0f}"),
                "cpu_s_total": f"{sum(col('cpu_s')):.0f}",
                "peak_rss_mib_max": f"{max(col('peak_rss_mib')):.0f}",
            })
    return rows


def figure(runs, goodputs, path):
    plt.rcParams.update(RC)
    transports = sorted({r["transport"] for r in runs})
    fig, axes = plt.subplots(len(transports), 2, figsize=(COLUMN_WIDTH_IN * 2.2, 2.2 * len(transports)),
                             squeeze=False)
    for row, transport in zip(axes, transports):
        ax_agg, ax_cdf = row
        for i, algo in enumerate(ALGOS):
            rs = [r for r in runs if r["transport"] == transport and r["algorithm"] == algo]
            if not rs:
                continue
            kw = line_kwargs(algo)
            y = [float(r["aggregate_tbps"]) for r in rs if r["aggregate_tbps"]]
            ax_agg.plot([i] * len(y), y, linestyle="none", marker=kw["marker"], color=kw["color"],
                        alpha=0.7)
            ax_agg.plot([i - 0.3, i + 0.3], [np.mean(y)] * 2, color=kw["color"])
            g = np.sort(np.concatenate([goodputs[(transport, algo, r["seed"])] for r in rs]))
            kw.pop("marker", None)
            ax_cdf.step(g, np.arange(1, len(g) + 1) / len(g), where="post", **kw)
        ax_agg.set_xticks(range(len(ALGOS)), ALGOS, rotation=20, fontsize="small")
        ax_agg.set_ylabel("aggregate throughput (Tbps)")
        ax_agg.set_ylim(bottom=0)
        ax_agg.set_title(f"{TITLES[transport]}: per seed", fontsize="small")
        ax_agg.grid(True, axis="y")
        ax_cdf.set_xlabel("per-flow goodput, size / FCT (Gbps)")
        ax_cdf.set_ylabel("fraction of flows")
        ax_cdf.set_title(f"{TITLES[transport]}: all seeds' flows", fontsize="small")
        ax_cdf.grid(True)
    axes[0][1].legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})


def pairwise(runs):
    """Aggregate throughput of one variant over another, seed by seed, per transport (Markdown)."""
    lines = ["| transport | comparison | seeds | aggregate throughput, ratio (mean (min-max)) |",
             "|---|---|---|---|"]
    for transport in sorted({r["transport"] for r in runs}):
        agg = {(r["algorithm"], int(r["seed"])): float(r["aggregate_tbps"]) for r in runs
               if r["transport"] == transport and r["aggregate_tbps"]}
        for a, b in (("plts-rr", "plts-counter"), ("plts-counter", "plts-random"), ("plts-rr", "plts-random")):
            ratio = [agg[(a, s)] / agg[(b, s)] for (x, s) in agg if x == a and (b, s) in agg]
            if ratio:
                lines.append(f"| {transport} | {a} / {b} | {len(ratio)} | {spread(ratio, '{:.3f}')} |")
    return "\n".join(lines)


def main():
    exp = Path(sys.argv[1])
    if len(sys.argv) == 2:
        runs = list(csv.DictReader(open(exp / "throughput_runs.csv")))
        print(markdown(summarize(runs)))
        print()
        print(pairwise(runs))
        return
    runs, goodputs = [], {}
    for spec in sys.argv[2:]:
        transport, root = spec.split("=", 1)
        for run in sorted(Path(root).iterdir()):
            if not (run / "summary.json").exists():
                continue
            r, g = one_run(transport, run)
            runs.append(r)
            goodputs[(transport, r["algorithm"], r["seed"])] = g
    runs.sort(key=lambda r: (r["transport"], ALGOS.index(r["algorithm"]), r["seed"]))
    write_csv(runs, exp / "throughput_runs.csv")
    rows = summarize(runs)
    write_csv(rows, exp / "throughput.csv")
    figure(runs, goodputs, exp / "throughput.png")
    print(markdown(rows))
    print()
    print(pairwise(runs))


if __name__ == "__main__":
    main()
