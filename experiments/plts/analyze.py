"""PLTS on the k = 4 fat tree: per (transport, algorithm), pooled over seeds, the FCT slowdown
(avg / p99 over all flows, interpolated percentile) and the ToR uplink balance from uplink.txt
(per ToR: max / mean of its uplinks' bytes at the last sample, minus 1; mean and worst over
ToRs and seeds). Writes results.csv; prints the table.

usage: analyze.py RESULTS_CSV TRANSPORT=SWEEP_DIR..."""

import csv
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plots.tables import markdown, write_csv  # noqa: E402


def imbalance(run):
    last = {}
    with open(run / "uplink.txt") as f:
        for line in f:
            t, tor, port, b = (int(x) for x in line.strip().split(","))
            last[(tor, port)] = b
    tors = {}
    for (tor, _), b in last.items():
        tors.setdefault(tor, []).append(b)
    return [max(v) / np.mean(v) - 1 for v in tors.values() if np.mean(v) > 0]


def main():
    out = Path(sys.argv[1])
    groups = {}
    for spec in sys.argv[2:]:
        transport, root = spec.split("=", 1)
        for run in sorted(Path(root).iterdir()):
            if not (run / "summary.json").exists():
                continue
            s = json.loads((run / "summary.json").read_text())
            g = groups.setdefault((transport, s["algorithm"]), {"sd": [], "imb": [], "seeds": [], "retx": 0, "done": 0, "total": 0})
            g["sd"] += [float(r["slowdown"]) for r in csv.DictReader(open(run / "flows.csv"))]
            g["imb"] += imbalance(run)
            g["seeds"].append(s["seed"])
            g["retx"] += s["counters"]["retx_pkts"]
            g["done"] += s["flows_completed"]
            g["total"] += s["flows_total"]
    order = ["ecmp", "plts-random", "plts-counter", "plts-rr"]
    rows = []
    for (transport, algo), g in sorted(groups.items(), key=lambda kv: (kv[0][0] != "gbn", order.index(kv[0][1]))):
        sd = np.array(g["sd"])
        ecmp = groups.get((transport, "ecmp"))
        e_avg = np.mean(ecmp["sd"]) if ecmp else float("nan")
        rows.append({"recovery": transport, "algorithm": algo, "seeds": len(g["seeds"]),
                     "flows": f"{g['done']}/{g['total']}", "avg_slowdown": f"{sd.mean():.2f}",
                     "p99_slowdown": f"{np.percentile(sd, 99):.2f}",
                     "avg_vs_ecmp": f"{(sd.mean() / e_avg - 1) * 100:+.0f}%",
                     "uplink_imbalance_mean": f"{np.mean(g['imb']):.3f}",
                     "uplink_imbalance_max": f"{np.max(g['imb']):.3f}", "retx_pkts": g["retx"]})
    write_csv(rows, out)
    print(markdown(rows))


if __name__ == "__main__":
    main()
