"""Where the queues of a themis-collectives run stand: per port class of the 16 x 16 leaf-spine
(ToR uplinks, spine downlinks, ToR ports to hosts), the largest queue, the mean over ports and
samples, the samples at or above the ECN threshold and the first time one was.

Usage: python queue_classes.py RUN_DIR [KMIN_BYTES]

RUN_DIR holds queue.txt of a run made with --queueTrace=true (lines `time node port bytes`, every
switch port with queued bytes, every monitor interval). Nodes 0-255 are hosts, 256-271 ToRs
(ports 1-16 to hosts, 17-32 to spines), 272-287 spines (the layout of the experiment's configs).
"""

import sys
from collections import defaultdict
from pathlib import Path

TORS, SPINES, HOSTS_PER_TOR = range(256, 272), range(272, 288), 16
CLASSES = ("ToR -> spine", "spine -> ToR", "ToR -> host")


def port_class(node, port):
    if node in SPINES:
        return CLASSES[1]
    if node in TORS:
        return CLASSES[2] if port <= HOSTS_PER_TOR else CLASSES[0]
    raise ValueError(f"node {node} is not a switch of the 16 x 16 leaf-spine")


def main():
    run, kmin = Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 400_000
    peak, total, over, first, times = defaultdict(int), defaultdict(int), defaultdict(int), {}, set()
    with open(run / "queue.txt") as f:
        for line in f:
            t, node, port, queued = map(int, line.split()[:4])
            c = port_class(node, port)
            times.add(t)
            peak[c] = max(peak[c], queued)
            total[c] += queued
            if queued >= kmin:
                over[c] += 1
                first.setdefault(c, t)
    ports = len(TORS) * HOSTS_PER_TOR  # 256 ports in each class
    print(f"| {run.name} | " + " | ".join(CLASSES) + " |")
    print("|---|---|---|---|")
    cells = [f"max {peak[c] / 1e3:.0f} KB, mean {total[c] / len(times) / ports / 1e3:.1f} KB, {over[c]} samples "
             f">= {kmin / 1e3:.0f} KB" + (f", first at {first[c] / 1e3:.0f} us" if c in first else "")
             for c in CLASSES]
    print("| | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
