"""The Themis paper's Fig. 1 metrics from rdma-lb-scenario run directories (flows.csv + summary.json).

Usage: python analyze.py OUT_ROOT RESULTS_CSV FIGURE_PNG

Per run (one config x algorithm), over the 8 ring flows:
* spurious retransmission ratio = sum(retx_pkts) / sum(data packets sent), data packets sent =
  ceil(size / payload) + retx_pkts. The fabric is lossless (PFC); the script refuses a run whose
  summary.json counts any drop or loss or a timeout, so every retransmission is spurious.
* sending rate = mean over flows of (data packets sent x (payload + 48 B) x 8 / FCT) / line rate.
* throughput = mean over flows of ideal FCT / FCT, the ideal being the ring without reordering:
  every host port carries its flow's data packets and one 60 B ACK per packet of the flow it
  receives, so ideal = (size + packets x (48 + 60)) x 8 / rate + 3 store-and-forwards of a full
  data packet + 4 link delays (the same formula as the rdma-lb-themis test suite).
Prints the table the README shows; writes RESULTS_CSV and a 3-panel bar figure.
"""

import csv
import json
import math
import sys
from pathlib import Path

DATA_HEADER_BYTES = 48
ACK_BYTES = 60
LINE_RATE_BPS = 100e9
LINK_DELAY_S = 1e-6
HOPS = 3  # leaf, spine, leaf

# Rows of the table, in order: (config stem, label of the DCQCN setting).
CONFIGS = [
    ("ring", "default: T_I 300us, T_D 4us, AI 40Mb/s"),
    ("ring_ti900", "paper-recommended: T_I 900us, T_D 4us"),
    ("ring_ti10_ai5g", "fast: T_I 10us, AI 5Gb/s, HAI 10Gb/s"),
    ("ring_nocc", "no CC (cc = none)"),
]
ALGOS = ["ecmp", "spray", "themis"]
PAPER = {"spray": (16.0, 86.0, 71.0)}


def ideal_fct_s(size, payload):
    pkts = math.ceil(size / payload)
    wire = size + pkts * (DATA_HEADER_BYTES + ACK_BYTES)
    return wire * 8 / LINE_RATE_BPS + HOPS * (payload + DATA_HEADER_BYTES) * 8 / LINE_RATE_BPS \
        + (HOPS + 1) * LINK_DELAY_S


def analyse_run(d):
    summary = json.loads((d / "summary.json").read_text())
    cfg = summary["config"]
    payload = int(cfg["transport"]["payload_bytes"])
    c = summary["counters"]
    losses = {k: v for k, v in c.items() if ("drop" in k or "loss" in k or "timeout" in k) and v}
    if losses:
        sys.exit(f"{d}/summary.json: losses or timeouts {losses}: retransmissions not all spurious")
    rows = list(csv.DictReader(open(d / "flows.csv", newline="")))
    if len(rows) != summary["flows_total"]:
        sys.exit(f"{d}: {len(rows)} of {summary['flows_total']} flows completed")
    sent = retx = 0
    rate = thr = 0.0
    fcts = []
    for r in rows:
        size, fct_s, rx = int(r["size_bytes"]), int(r["fct_ns"]) * 1e-9, int(r["retx_pkts"])
        n = math.ceil(size / payload) + rx
        sent += n
        retx += rx
        rate += n * (payload + DATA_HEADER_BYTES) * 8 / fct_s / LINE_RATE_BPS
        thr += ideal_fct_s(size, payload) / fct_s
        fcts.append(fct_s)
    k = len(rows)
    return {
        "algorithm": summary["algorithm"],
        "flows": k,
        "spurious_retx_pct": 100 * retx / sent,
        "send_rate_pct": 100 * rate / k,
        "throughput_pct": 100 * thr / k,
        "retx_pkts": retx,
        "nacks": sum(int(r["nacks"]) for r in rows),
        "rate_cuts": c.get("rate_cuts", ""),
        "mean_fct_us": 1e6 * sum(fcts) / k,
        "max_fct_us": 1e6 * max(fcts),
        "wall_s": summary.get("wall_time_s", 0.0),
    }


def main():
    out_root, results_csv, fig_png = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    found = {}
    for s in sorted(out_root.glob("*/summary.json")):
        summary = json.loads(s.read_text())
        found[(summary["scenario"], summary["algorithm"])] = analyse_run(s.parent)
    table = []
    for stem, label in CONFIGS:
        for algo in ALGOS:
            if (stem, algo) not in found:
                sys.exit(f"{out_root}: no run for config {stem}, algorithm {algo}")
            table.append({"config": stem, "dcqcn": label, **found[(stem, algo)]})
    cols = ["config", "dcqcn", "algorithm", "flows", "spurious_retx_pct", "send_rate_pct",
            "throughput_pct", "retx_pkts", "nacks", "rate_cuts", "mean_fct_us", "max_fct_us"]
    with open(results_csv, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for r in table:
            w.writerow([f"{r[c]:.2f}" if isinstance(r[c], float) else r[c] for c in cols])
    print("| DCQCN | algorithm | spurious retx | sending rate | throughput vs ideal | NACKs | rate cuts |")
    print("|---|---|---|---|---|---|---|")
    print("| paper (Fig. 1) | spray | 16 % | 86 % | 71 % | - | - |")
    for r in table:
        print(f"| {r['dcqcn']} | {r['algorithm']} | {r['spurious_retx_pct']:.2f} % | "
              f"{r['send_rate_pct']:.1f} % | {r['throughput_pct']:.1f} % | {r['nacks']} | {r['rate_cuts']} |")
    figure(table, fig_png)


def figure(table, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from plots.style import style_for

    metrics = [("spurious_retx_pct", "spurious retx (%)", 0),
               ("send_rate_pct", "sending rate (% line)", 1),
               ("throughput_pct", "throughput (% ideal)", 2)]
    fig, axes = plt.subplots(1, 3, figsize=(7.0, 2.4))
    width = 0.8 / (len(ALGOS) + 1)
    for ax, (key, title, pi) in zip(axes, metrics):
        for j, algo in enumerate(ALGOS):
            colour, _ = style_for(algo)
            ys = [r[key] for r in table if r["algorithm"] == algo]
            ax.bar([i + j * width for i in range(len(CONFIGS))], ys, width, color=colour, label=algo)
        paper = PAPER["spray"][pi]
        ax.axhline(paper, color="k", linestyle="--", linewidth=0.8, label="paper (spray)")
        ax.set_title(title, fontsize=8)
        ax.set_xticks([i + width for i in range(len(CONFIGS))])
        ax.set_xticklabels(["default", "T_I 900", "fast", "no CC"], fontsize=6, rotation=20)
        ax.tick_params(labelsize=7)
        ax.grid(True, axis="y", linewidth=0.3)
    axes[0].legend(fontsize=6)
    fig.tight_layout(pad=0.3)
    fig.savefig(png, dpi=150)


if __name__ == "__main__":
    main()
