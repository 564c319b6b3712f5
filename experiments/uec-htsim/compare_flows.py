#!/usr/bin/env python3
"""Per-flow FCTs of one htsim run against one of ours on the same .cm (README.md, "The 4:1 / 8:1
gap: the cause").

    compare_flows.py HTSIM_OUT OUR_RUN_DIR CM [HOSTS_PER_LEAF]

HTSIM_OUT: htsim_uec's stdout (or its kept `Flow ... finished at T` lines, .gz or not; every flow
starts at 0, so T is the FCT). OUR_RUN_DIR: an `rdma-lb run` output directory (flows.csv).
Prints the mean and percentiles of the FCT, the trims (htsim's NACKs; ours the flows' NACKs), and
for the flows that leave their leaf the Pearson correlation of the FCT with the flow's rank,
within its source leaf, in the .cm's line order: the order in which both simulators start the
flows and so break ties between packets arriving at a switch at the same instant.
"""
import csv
import gzip
import re
import statistics
import sys


def htsim(path):
    opener = gzip.open if path.endswith(".gz") else open
    flows, trims = {}, None
    with opener(path, "rt") as f:
        for line in f:
            m = re.search(r"Flow Uec_(\d+)_(\d+) .*finished at ([\d.e+-]+)", line)
            if m:
                flows[(int(m.group(1)), int(m.group(2)))] = float(m.group(3))
            m = re.search(r"NACKs: (\d+)", line)
            if m:
                trims = int(m.group(1))
    return flows, trims


def ours(run_dir):
    flows, trims = {}, 0
    with open(run_dir + "/flows.csv") as f:
        for row in csv.DictReader(f):
            flows[(int(row["src"]), int(row["dst"]))] = int(row["fct_ns"]) / 1000
            trims += int(row["nacks"])
    return flows, trims


def cm_order(path):
    order = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*(\d+)->(\d+)", line)
            if m:
                order[(int(m.group(1)), int(m.group(2)))] = len(order)
    return order


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    hpl = int(sys.argv[4]) if len(sys.argv) > 4 else 64
    order = cm_order(sys.argv[3])
    sides = [("htsim", *htsim(sys.argv[1])), ("ours", *ours(sys.argv[2]))]
    print("side   flows  mean    p10     p50     p90     p99     max     trims   corr(rank in leaf)")
    base = None
    for name, flows, trims in sides:
        x = sorted(flows.values())
        n = len(x)
        row = [statistics.mean(x)] + [x[min(n - 1, int(n * q))] for q in (0.1, 0.5, 0.9, 0.99)] + [x[-1]]
        inter = [k for k in flows if k[0] // hpl != k[1] // hpl]
        by_leaf = {}
        for k in inter:
            by_leaf.setdefault(k[0] // hpl, []).append(order[k])
        ranks = [sorted(by_leaf[k[0] // hpl]).index(order[k]) for k in inter]
        corr = statistics.correlation(ranks, [flows[k] for k in inter])
        print(f"{name:6} {n:6} " + " ".join(f"{v:7.2f}" for v in row) + f" {trims:8} {corr:+.3f}")
        if base is None:
            base = row
        else:
            print("diff          " + " ".join(f"{100 * (a / b - 1):+6.1f}%" for a, b in zip(row, base)))


if __name__ == "__main__":
    main()
