#!/usr/bin/env python3
"""Writes the three-tier fat-trees of this experiment in ConWeave's topology format
(node counts, switch ids, one line per link), with ConWeave's fat-tree numbering conventions. For k = 8:

  hosts 0..127, ToRs 128..159 (4 hosts each), aggregation 160..191, core 192..207.
  Pod p (0..7) = ToRs 128+4p..128+4p+3 and aggregation switches 160+4p..160+4p+3; every ToR of
  a pod links to every aggregation switch of its pod; aggregation switch j (0..3) of every pod
  links to cores 192+4j..192+4j+3. 1 us per link.

k = 16 (the paper's 1024 hosts) is the same shape: hosts 0..1023, ToRs 1024..1151 (8 hosts
each), aggregation 1152..1279, core 1280..1343; pods of 8 ToRs and 8 aggregation switches.

fat_kK_Nh_1to1.txt: every link 100 Gbps (k/2 hosts x 100 G down = k/2 uplinks x 100 G: 1:1).
fat_kK_Nh_8to1.txt: host links 100 Gbps, every switch-switch link 12.5 Gbps, so each ToR has
  its hosts' rate over 1/8 of it in uplinks (8:1) and the layers above are 1:1.

fat_k8_128h_8to1_uplinks.txt: the artifact's 8:1 (htsim topologies/fat_tree_128_8os.topo): every
  link 100 Gbps, 4:1 at the ToRs (4 hosts, 1 uplink) and 2:1 at the aggregation switches (4
  ToRs, 2 uplinks): hosts 0..127, ToRs 128..159, one aggregation switch per pod 160..167 (ToR
  t of pod p links to 160 + p), cores 168..169 (every aggregation switch links to both).

Usage: python3 gen_fattree.py OUT_DIR   (the committed files are its output)
"""
import sys
from pathlib import Path


def shape(k):
    half = k // 2
    hosts = k * k * k // 4
    tors = aggs = k * half
    cores = half * half
    return half, hosts, tors, aggs, cores


def links(k, fabric_rate):
    half, hosts, tors, aggs, _ = shape(k)
    tor0, agg0 = hosts, hosts + tors
    core0 = agg0 + aggs
    out = []
    for h in range(hosts):
        out.append((h, tor0 + h // half, "100Gbps"))
    for p in range(k):
        for t in range(half):
            for a in range(half):
                out.append((tor0 + half * p + t, agg0 + half * p + a, fabric_rate))
    for p in range(k):
        for j in range(half):
            for c in range(half):
                out.append((agg0 + half * p + j, core0 + half * j + c, fabric_rate))
    return out


def write(path, k, fabric_rate):
    _, hosts, tors, aggs, cores = shape(k)
    ls = links(k, fabric_rate)
    switches = range(hosts, hosts + tors + aggs + cores)
    text = [f"{hosts + tors + aggs + cores} {len(switches)} {len(ls)}", " ".join(map(str, switches))]
    text += [f"{a} {b} {r} 1000ns 0.000000" for a, b, r in ls]
    Path(path).write_text("\n".join(text) + "\n")


def write_8to1_uplinks(path):
    ls = [(h, 128 + h // 4) for h in range(128)]
    ls += [(128 + t, 160 + t // 4) for t in range(32)]
    ls += [(160 + p, 168 + c) for p in range(8) for c in range(2)]
    text = ["170 42 " + str(len(ls)), " ".join(map(str, range(128, 170)))]
    text += [f"{a} {b} 100Gbps 1000ns 0.000000" for a, b in ls]
    Path(path).write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    write(out / "fat_k8_128h_1to1.txt", 8, "100Gbps")
    write(out / "fat_k8_128h_8to1.txt", 8, "12.5Gbps")
    write(out / "fat_k16_1024h_1to1.txt", 16, "100Gbps")
    write(out / "fat_k16_1024h_8to1.txt", 16, "12.5Gbps")
    write_8to1_uplinks(out / "fat_k8_128h_8to1_uplinks.txt")
