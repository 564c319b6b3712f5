"""PLTS on long flows, tier by tier: how evenly each splitter spreads bytes over the uplinks of
the ToRs and of the aggregation switches, and how much queues there, in the k = 8 permutation
(perm_k8_*_layers.toml: the runs of perm_k8_*.toml with port_bytes.csv on).

Per run (summary.json, flows.csv, uplink.txt, queue.txt, port_bytes.csv of one sweep point):
* tiers from the fabric: ToRs = the switches of uplink.txt, aggregation = their peers, core =
  the rest;
* uplink balance per tier from port_bytes.csv (bytes sent on each port over the run): per switch
  the coefficient of variation (population std / mean) of its up-ports' bytes (ToR -> aggregation,
  aggregation -> core), averaged over the switches of the tier, and the largest max / mean; and
  per pod the same over all its aggregation -> core ports (a pod = the aggregation switches with
  the same ToRs): the imbalance between aggregation switches of a pod, which the PLTS paper's
  Fig. 2 shows counter-based splitting can leave (§III-A.2);
* queueing per tier from queue.txt (queued bytes of every non-empty port, every monitor tick):
  the mean queued KB per port and tick over the up-ports (ToR -> aggregation, aggregation ->
  core) and the down-ports (core -> aggregation, aggregation -> ToR, ToR -> host), the ticks
  counted from uplink.txt;
* the aggregate throughput (all bytes x 8 / the permutation's completion), checked against the
  row of throughput_runs.csv for the same transport, algorithm and seed (the same run without
  port_bytes.csv: it must be identical).
Per (transport, algorithm): mean (min-max) over the seeds. Writes layers.csv and prints it.

usage: analyze_layers.py EXP_DIR TRANSPORT=SWEEP_DIR..."""

import csv
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from plots.tables import markdown, write_csv  # noqa: E402

ALGOS = ["ecmp", "plts-random", "plts-counter", "plts-rr"]


def balance(ports):
    """(mean over switches of the CV of their ports' bytes, largest max / mean of a switch)."""
    cvs, peaks = [], []
    for tx in ports.values():
        mean = np.mean(tx)
        if mean > 0:
            cvs.append(np.std(tx) / mean)
            peaks.append(max(tx) / mean)
    return float(np.mean(cvs)), float(np.max(peaks))


def one_run(transport, run):
    s = json.loads((run / "summary.json").read_text())
    tors, times = set(), set()
    with open(run / "uplink.txt") as f:
        for line in f:
            t, tor, _, _ = line.strip().split(",")
            tors.add(int(tor))
            times.add(int(t))
    rows = [(int(r["switch"]), int(r["port"]), int(r["peer"]), int(r["tx_bytes"]))
            for r in csv.DictReader(open(run / "port_bytes.csv"))]
    aggs = {peer for sw, _, peer, _ in rows if sw in tors}
    tier_of = lambda sw: "tor" if sw in tors else "agg" if sw in aggs else "core"  # noqa: E731
    up = {"tor": {}, "agg": {}}
    pod_of = {}
    for sw, _, peer, _ in rows:
        if sw in aggs and peer in tors:
            pod_of.setdefault(sw, set()).add(peer)
    pods = {}
    kind = {}  # (switch, port) -> "tor_up" | "agg_up" | "core_down"
    for sw, port, peer, b in rows:
        t, tp = tier_of(sw), tier_of(peer)
        if (t, tp) in (("tor", "agg"), ("agg", "core")):
            up[t].setdefault(sw, []).append(b)
            kind[(sw, port)] = f"{t}_up"
            if t == "agg":
                pods.setdefault(frozenset(pod_of[sw]), []).append(b)
        elif (t, tp) == ("core", "agg"):
            kind[(sw, port)] = "core_down"
        elif (t, tp) == ("agg", "tor"):
            kind[(sw, port)] = "agg_down"
    flows = list(csv.DictReader(open(run / "flows.csv")))
    n_hosts = len({f["src"] for f in flows} | {f["dst"] for f in flows})
    n_ports = {k: sum(1 for v in kind.values() if v == k) for k in ("tor_up", "agg_up", "core_down", "agg_down")}
    n_ports["tor_down"] = n_hosts
    queued = {k: 0 for k in n_ports}
    with open(run / "queue.txt") as f:
        for line in f:
            _, sw, port, q = (int(x) for x in line.split())
            k = kind.get((sw, port)) or ("tor_down" if sw in tors else None)
            if k:
                queued[k] += q
    complete = all(f["fct_ns"] != "" for f in flows)
    cct_ns = s["collectives"]["cct_max_ns"] if complete else None
    total_bytes = sum(int(f["size_bytes"]) for f in flows)
    tor_cv, tor_peak = balance(up["tor"])
    agg_cv, agg_peak = balance(up["agg"])
    pod_cv, pod_peak = balance(pods)
    mean_q = {k: queued[k] / (n_ports[k] * len(times)) / 1e3 for k in n_ports}
    return {
        "transport": transport, "algorithm": s["algorithm"], "seed": s["seed"],
        "aggregate_tbps": f"{total_bytes * 8 / cct_ns / 1e3:.3f}" if complete else "",
        "tor_up_cv": f"{tor_cv:.4f}", "tor_up_max_over_mean": f"{tor_peak:.3f}",
        "agg_up_cv": f"{agg_cv:.4f}", "agg_up_max_over_mean": f"{agg_peak:.3f}",
        "pod_up_cv": f"{pod_cv:.4f}", "pod_up_max_over_mean": f"{pod_peak:.3f}",
        "queue_tor_up_kb": f"{mean_q['tor_up']:.2f}", "queue_agg_up_kb": f"{mean_q['agg_up']:.2f}",
        "queue_core_down_kb": f"{mean_q['core_down']:.2f}",
        "queue_agg_down_kb": f"{mean_q['agg_down']:.2f}", "queue_tor_down_kb": f"{mean_q['tor_down']:.2f}",
        "retx_pkts": s["counters"]["retx_pkts"], "ecn_marks": s["counters"].get("ecn_marks", 0),
        "rate_cuts": s["counters"].get("rate_cuts", 0),
    }


def spread(values, fmt):
    v = np.array(values, dtype=float)
    if len(v) == 1:
        return fmt.format(v[0])
    return f"{fmt.format(v.mean())} ({fmt.format(v.min())}-{fmt.format(v.max())})"


def main():
    exp = Path(sys.argv[1])
    runs = []
    for spec in sys.argv[2:]:
        transport, root = spec.split("=", 1)
        for run in sorted(Path(root).iterdir()):
            if (run / "summary.json").exists() and (run / "port_bytes.csv").exists():
                runs.append(one_run(transport, run))
    if not runs:
        sys.exit("analyze_layers.py: no finished runs with port_bytes.csv")
    runs.sort(key=lambda r: (r["transport"], ALGOS.index(r["algorithm"]), r["seed"]))
    ref = {(r["transport"], r["algorithm"], int(r["seed"])): r["aggregate_tbps"]
           for r in csv.DictReader(open(exp / "throughput_runs.csv"))}
    same = [ref.get((r["transport"], r["algorithm"], r["seed"])) == r["aggregate_tbps"] for r in runs]
    rows = []
    for transport in sorted({r["transport"] for r in runs}):
        for algo in ALGOS:
            rs = [r for r in runs if r["transport"] == transport and r["algorithm"] == algo]
            if not rs:
                continue
            col = lambda key: [float(r[key]) for r in rs if r[key] != ""]  # noqa: E731
            rows.append({
                "transport": transport, "algorithm": algo,
                "seeds": ",".join(str(r["seed"]) for r in rs),
                "aggregate_tbps": spread(col("aggregate_tbps"), "{:.2f}"),
                "tor_up_cv": spread(col("tor_up_cv"), "{:.3f}"),
                "agg_up_cv": spread(col("agg_up_cv"), "{:.3f}"),
                "pod_up_cv": spread(col("pod_up_cv"), "{:.3f}"),
                "pod_up_max_over_mean": spread(col("pod_up_max_over_mean"), "{:.2f}"),
                "queue_tor_up_kb": spread(col("queue_tor_up_kb"), "{:.1f}"),
                "queue_agg_up_kb": spread(col("queue_agg_up_kb"), "{:.1f}"),
                "queue_core_down_kb": spread(col("queue_core_down_kb"), "{:.1f}"),
                "queue_agg_down_kb": spread(col("queue_agg_down_kb"), "{:.1f}"),
                "queue_tor_down_kb": spread(col("queue_tor_down_kb"), "{:.1f}"),
                "retx_pkts": spread(col("retx_pkts"), "{:.0f}"),
                "ecn_marks": spread(col("ecn_marks"), "{:.0f}"),
                "rate_cuts": spread(col("rate_cuts"), "{:.0f}"),
            })
    write_csv(rows, exp / "layers.csv")
    print(markdown(rows))
    print(f"\naggregate throughput identical to throughput_runs.csv (the runs without port_bytes.csv): "
          f"{sum(same)} of {len(same)} runs")


if __name__ == "__main__":
    main()
