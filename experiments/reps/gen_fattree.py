#!/usr/bin/env python3
"""Writes the k = 8 three-tier fat-trees of this experiment in ConWeave's topology format
(spec/rdma-model.md §7.3), with ConWeave's fat-tree numbering conventions:

  hosts 0..127, ToRs 128..159 (4 hosts each), aggregation 160..191, core 192..207.
  Pod p (0..7) = ToRs 128+4p..128+4p+3 and aggregation switches 160+4p..160+4p+3; every ToR of
  a pod links to every aggregation switch of its pod; aggregation switch j (0..3) of every pod
  links to cores 192+4j..192+4j+3. 1 us per link.

fat_k8_128h_1to1.txt: every link 100 Gbps (4 hosts x 100 G down = 4 uplinks x 100 G: 1:1).
fat_k8_128h_8to1.txt: host links 100 Gbps, every switch-switch link 12.5 Gbps, so each ToR
  has 400 Gbps of hosts over 50 Gbps of uplinks (8:1) and the layers above are 1:1.

Usage: python3 gen_fattree.py OUT_DIR   (the committed files are its output)
"""
import sys
from pathlib import Path

HOSTS, TORS, AGGS, CORES = 128, 32, 32, 16
TOR0, AGG0, CORE0 = 128, 160, 192


def links(fabric_rate):
    out = []
    for h in range(HOSTS):
        out.append((h, TOR0 + h // 4, "100Gbps"))
    for p in range(8):
        for t in range(4):
            for a in range(4):
                out.append((TOR0 + 4 * p + t, AGG0 + 4 * p + a, fabric_rate))
    for p in range(8):
        for j in range(4):
            for c in range(4):
                out.append((AGG0 + 4 * p + j, CORE0 + 4 * j + c, fabric_rate))
    return out


def write(path, fabric_rate):
    ls = links(fabric_rate)
    switches = range(TOR0, CORE0 + CORES)
    text = [f"{CORE0 + CORES} {len(switches)} {len(ls)}", " ".join(map(str, switches))]
    text += [f"{a} {b} {r} 1000ns 0.000000" for a, b, r in ls]
    Path(path).write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    write(out / "fat_k8_128h_1to1.txt", "100Gbps")
    write(out / "fat_k8_128h_8to1.txt", "12.5Gbps")
