"""The Themis paper's §5 / Fig. 5 metrics from rdma-lb-scenario run directories.

Usage: python analyze.py OUT_ROOT RESULTS_CSV FIG_DIR

Per run (collective kind x DCQCN setting x algorithm): the slowest group's CCT (summary.json
``collectives.cct_max_ns``; CCT = last delivery - first start of a group's flows), the mean
group CCT, the no-contention bound and the counters. Bound (no queueing, no reordering, ACK
bytes not counted), with W(b) = b + ceil(b / 1000) x 48 wire bytes, B = 400 Gbps, d = 1 us:
* allreduce-ring: 2(N-1) x (W(size/N) x 8/B + 3 x 1048 x 8/B + 4d) (steps are serialised by
  their dependencies; the formula the rdma-lb-scenario test suite checks to 0.1 %);
* alltoall: (N-1) x W(size/N) x 8/B + 3 x 1048 x 8/B + 4d (a host's N-1 flows share its port).
Prints the README table (ours beside the paper's Themis-vs-AR reductions), writes RESULTS_CSV
and one ``python -m plots cct`` figure (+ its CSV table) per collective kind into FIG_DIR.
"""

import csv
import json
import math
import subprocess
import sys
import tomllib
from pathlib import Path

N = 16
RATE_BPS = 400e9
DELAY_S = 1e-6
PAYLOAD = 1000
HDR = 48
ALGOS = ["ecmp", "adaptive", "spray", "themis"]
KINDS = ["allreduce", "alltoall"]
# The paper's Themis-vs-AR CCT reductions across its DCQCN settings (the Themis paper, §5).
PAPER = {"allreduce": "15.6 % - 75.3 %", "alltoall": "11.5 % - 40.7 %"}
UNITS = {"B": 1, "KB": 1000, "MB": 10**6, "GB": 10**9, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def parse_size(s):
    if isinstance(s, int):
        return s
    for u in sorted(UNITS, key=len, reverse=True):
        if s.endswith(u):
            return int(float(s[: -len(u)]) * UNITS[u])
    return int(s)


def wire(b):
    return b + math.ceil(b / PAYLOAD) * HDR


def bound_s(kind, size):
    chunk = math.ceil(size / N)
    hop = 3 * (PAYLOAD + HDR) * 8 / RATE_BPS + 4 * DELAY_S
    if kind == "allreduce":
        return 2 * (N - 1) * (wire(chunk) * 8 / RATE_BPS + hop)
    return (N - 1) * wire(chunk) * 8 / RATE_BPS + hop


def main():
    out_root, results_csv, fig_dir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    rows = []
    for s in sorted(out_root.glob("*/summary.json")):
        summ = json.loads(s.read_text())
        cfg_path = Path(summ["config"]["path"])
        cfg = tomllib.loads(cfg_path.read_text())
        coll = cfg["workload"]["collective"][0]
        kind = "allreduce" if coll["kind"] == "allreduce-ring" else coll["kind"]
        size = parse_size(coll["size"])
        t = summ["config"]["transport"]
        col = summ["collectives"]
        if col["complete"] != col["groups"]:
            sys.exit(f"{s}: only {col['complete']} of {col['groups']} groups completed")
        c = summ["counters"]
        b = bound_s(kind, size)
        rows.append({
            "collective": kind,
            "size_bytes": size,
            "t_i_us": t["rp_timer_ns"] / 1000,
            "t_d_us": t["rate_decrease_interval_ns"] / 1000,
            "algorithm": summ["algorithm"],
            "slowest_cct_us": col["cct_max_ns"] / 1000,
            "mean_cct_us": col["cct_mean_ns"] / 1000,
            "bound_us": b * 1e6,
            "slowest_over_bound": col["cct_max_ns"] * 1e-9 / b,
            "retx_pkts": c["retx_pkts"],
            "nacks": c["nacks"],
            "rate_cuts": c["rate_cuts"],
            "ecn_marks": c["ecn_marks"],
            "pfc_pauses": c["pfc_pauses_sent"],
            "drops": c["mmu_drops"] + c["link_down_losses"] + c["error_model_drops"],
            "timeouts": c["timeouts"],
            "run": s.parent.name,
        })
    rows.sort(key=lambda r: (KINDS.index(r["collective"]), -r["t_i_us"], r["t_d_us"],
                             ALGOS.index(r["algorithm"])))
    settings = sorted({(r["collective"], r["t_i_us"], r["t_d_us"]) for r in rows},
                      key=lambda x: (KINDS.index(x[0]), -x[1], x[2]))
    for k, ti, td in settings:
        have = {r["algorithm"] for r in rows if (r["collective"], r["t_i_us"], r["t_d_us"]) == (k, ti, td)}
        if have != set(ALGOS):
            sys.exit(f"{out_root}: {k} T_I {ti} T_D {td}: runs for {sorted(have)}, need {ALGOS}")
    cols = list(rows[0].keys())
    with open(results_csv, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([f"{r[c]:.3f}" if isinstance(r[c], float) else r[c] for c in cols])

    print("| collective | DCQCN | ECMP | AR (adaptive) | spray (NIC-SR) | Themis | "
          "Themis vs AR: ours | paper (range over its DCQCN settings) |")
    print("|---|---|---|---|---|---|---|---|")
    for k, ti, td in settings:
        rs = {r["algorithm"]: r for r in rows if (r["collective"], r["t_i_us"], r["t_d_us"]) == (k, ti, td)}
        cell = {a: f"{rs[a]['slowest_cct_us']:.1f} µs ({rs[a]['slowest_over_bound']:.2f}×)" for a in ALGOS}
        red = 100 * (1 - rs["themis"]["slowest_cct_us"] / rs["adaptive"]["slowest_cct_us"])
        print(f"| {k} {rs['ecmp']['size_bytes'] // 1024} KiB/rank | T_I {ti:g} µs, T_D {td:g} µs | "
              f"{cell['ecmp']} | {cell['adaptive']} | {cell['spray']} | {cell['themis']} | "
              f"{abs(red):.1f} % {'lower' if red >= 0 else 'higher'} | {PAPER[k]} lower |")
    print()
    print("| collective | DCQCN | algorithm | retx pkts | NACKs | rate cuts | ECN marks | PFC pauses |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['collective']} | T_I {r['t_i_us']:g}, T_D {r['t_d_us']:g} | {r['algorithm']} | "
              f"{r['retx_pkts']} | {r['nacks']} | {r['rate_cuts']} | {r['ecn_marks']} | {r['pfc_pauses']} |")

    py = sys.executable
    root = Path(__file__).resolve().parents[2]
    for k in KINDS:
        files = [str(out_root / r["run"] / "collectives.csv") for r in rows if r["collective"] == k]
        subprocess.run([py, "-m", "plots", "cct", *files, "-o", str(fig_dir / f"cct_{k}.png")],
                       check=True, cwd=root, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
