"""Whack-a-Mole with one degraded spine: per run, the slow spine's share of the ToR uplink
bytes (uplink.txt: over the 3 ms arrival window, over the whole run including the drain, and per 0.5 ms window) and the FCT slowdown (avg / p99 over all
flows, interpolated percentile). Writes results.csv and share.png; prints the table.

usage: analyze.py OUT_DIR RESULTS_CSV FIGURE_PNG NAME=RUN_DIR...
The slow spine is node 20; a leaf's uplink ports are 5..8 (1-based: 4 host ports first, then the
spines in link order), so port 5 is the slow spine (checked against the link order below)."""

import csv
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plots.style import figure, line_kwargs, save  # noqa: E402
from plots.tables import markdown, write_csv  # noqa: E402

SLOW_PORT = 5  # leaf port towards spine 20 (device index 4 + 1)
WINDOW_NS = 500_000
ARRIVALS_END_NS = 3_000_000  # the Poisson window of degraded_spine*.toml


def uplink(run):
    """{time: {(tor, port): cumulative bytes}} from uplink.txt."""
    by_t = {}
    with open(run / "uplink.txt") as f:
        for line in f:
            t, tor, port, b = (int(x) for x in line.strip().split(","))
            by_t.setdefault(t, {})[(tor, port)] = b
    return by_t


def shares(by_t):
    times = sorted(by_t)
    final = by_t[times[-1]]
    total = sum(final.values())
    slow = sum(b for (tor, port), b in final.items() if port == SLOW_PORT)
    # per-window share of the bytes sent in that window
    edges = [t for t in times if t % WINDOW_NS == 0]
    series = []
    for a, b in zip(edges, edges[1:]):
        d = {k: by_t[b][k] - by_t[a].get(k, 0) for k in by_t[b]}
        tot = sum(d.values())
        if tot > 0:
            series.append((b / 1e6, sum(v for (tor, p), v in d.items() if p == SLOW_PORT) / tot))
    t_end = max(t for t in times if t <= ARRIVALS_END_NS)
    win = by_t[t_end]
    w_total = sum(win.values())
    w_slow = sum(b for (tor, port), b in win.items() if port == SLOW_PORT)
    return slow / total if total else float("nan"), w_slow / w_total if w_total else float("nan"), series


def main():
    out_csv, fig_png = Path(sys.argv[2]), Path(sys.argv[3])
    rows, curves = [], {}
    for spec in sys.argv[4:]:
        name, run = spec.split("=", 1)
        run = Path(run)
        s = json.loads((run / "summary.json").read_text())
        sd = np.array([float(r["slowdown"]) for r in csv.DictReader(open(run / "flows.csv"))])
        share, share_arr, series = shares(uplink(run))
        rows.append({"variant": name, "algorithm": s["algorithm"], "lb_params": s["lb_params"],
                     "flows_completed": f"{s['flows_completed']}/{s['flows_total']}",
                     "slow_share_0_3ms": f"{share_arr:.3f}", "slow_share_all": f"{share:.3f}", "avg_slowdown": f"{sd.mean():.2f}",
                     "p99_slowdown": f"{np.percentile(sd, 99):.2f}",
                     "retx_pkts": s["counters"]["retx_pkts"], "timeouts": s["counters"]["timeouts"]})
        if name in ("ecmp", "spray", "whack-a-mole", "wam-path-index-4", "reps", "hopper"):
            curves[name] = (s["algorithm"], series)
    write_csv(rows, out_csv)
    fig, (ax,) = figure(2.2)
    for name, (algo, series) in curves.items():
        kw = line_kwargs(algo)
        kw["label"] = name
        if name == "wam-path-index-4":
            kw["linestyle"] = ":"
        pts = [(t, v) for t, v in series if t * 1e6 <= ARRIVALS_END_NS]
        ax.plot([t for t, _ in pts], [v for _, v in pts], **kw)
    ax.axhline(0.25, color="0.5", lw=0.6, ls="--")
    ax.axhline(25 / 325, color="0.5", lw=0.6, ls=":")
    ax.text(3.0, 0.255, "uniform 1/4", fontsize=5, color="0.4", ha="right")
    ax.text(3.0, 25 / 325 + 0.005, "capacity share 25/325", fontsize=5, color="0.4", ha="right")
    ax.set_xlabel("Time (ms), 0.5 ms windows while flows arrive")
    ax.set_ylabel("Slow spine's share of uplink bytes")
    ax.set_ylim(0, 0.34)
    ax.grid(True)
    ax.legend(ncol=3, loc="upper center", fontsize=5)
    ax.set_title("One spine at 25 Gbps (of 4), 16 hosts, IRN")
    fig.tight_layout(pad=0.3)
    save(fig, fig_png)
    print(markdown(rows))


if __name__ == "__main__":
    main()
