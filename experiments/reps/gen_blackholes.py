#!/usr/bin/env python3
"""Writes the configs of "Spraying under one-way black holes against the artifact" (README; issue 40):
1, 4 and 8 aggregation -> core pipes of the k = 8 fat-tree black-holed one way from t = 0, a
failure set of its own (not gen_failures.py's): all 128 pipes (pod p, aggregation switch j,
uplink l) shuffled by random.Random(40), the first 1 / 4 / 8 (nested).

  uet_k8_bhN.toml          our default ACKs: each answers its packet with a SACK of it alone
  uet_k8_bhN_artacks.toml  the REPS artifact's ACKs: ack_bytes = 4000 (its -sack_threshold 4000:
                           every packet answered at once, each ACK with the 64-packet SACK
                           bitmap) and ack_request = "reps" (its AR bit)

Pipe (p, j, l) is ours (160 + 4p + j) -> (192 + 4j + l) (gen_fattree.py) and the artifact's
US(4p+j) -> CS(j + 4l) (fat_tree_topology.cpp: aggregation switch j of a pod links to cores
j + 4l; both number an aggregation switch's uplinks l = 0..3 in the same order, the order
switch_hash = "htsim" hashes over). The artifact fails them with its failure-input mode
(-failures_input FILE with Cable-Fail ON, Start-After 0, Period 0, Max-Percent 0.5, and the
pipe ids listed in failures_input/saved/saved_cableFILE; README).
Usage: python3 gen_blackholes.py [OUT_DIR]   (default: this directory)
"""
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PIPES = [(p, j, l) for p in range(8) for j in range(4) for l in range(4)]
random.Random(40).shuffle(PIPES)
SETS = {1: PIPES[:1], 4: PIPES[:4], 8: PIPES[:8]}


def ours(p, j, l):
    return 160 + 4 * p + j, 192 + 4 * j + l


def artifact(p, j, l):
    return 4 * p + j, j + 4 * l


TEMPLATE = """# Spraying under one-way black holes against the REPS artifact (README; issue 40): {n} of the
# 128 aggregation -> core pipes black-holed one way from t = 0, kept in every ECMP set;
# the artifact's: {names}.
# {acks}.
# k = 8 fat-tree, 128 hosts, 100 Gbps, 1 us links, 2 MiB per host, the artifact's seed-42
# permutation, every flow at t = 0. Written by gen_blackholes.py.

[topology]
conweave_file = "fat_k8_128h_1to1.txt"
link_faults = [
{faults}]

[workload]
flow_file = "perm_128_2MiB_seed42.txt"

[transport]
kind = "uet"
withdraw_failed_ports = false

[transport.uet]
# The artifact's switches and its one-BDP sizing at 100 Gbps (as uet_k8_oneway_*.toml).
switch_hash = "htsim"
trimming = true
queue_packets = 42
ecn_kmin_packets = 10
ecn_kmax_packets = 31
initial_window_packets = 63
{ackkeys}
[lb]
name = "spray"

[run]
seed = 1
stop = "20ms"
failed_link_drops = true
"""


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    for n, pipes in SETS.items():
        faults = "".join('  {{ at = "0us", a = {}, b = {}, one_way = true }},\n'.format(*ours(*x)) for x in pipes)
        names = ", ".join("US{}->CS{}".format(*artifact(*x)) for x in pipes)
        for suffix, acks, keys in (
            ("", "Our default ACKs (a SACK of the answered packet only)", ""),
            ("_artacks", "The artifact's ACKs (every packet answered at once with the 64-packet SACK\n# bitmap: ack_bytes = 4000, its -sack_threshold; its AR rule: ack_request = \"reps\")",
             '# The artifact\'s ACKs (-sack_threshold 4000 and its AR bit).\nack_bytes = 4000\nack_request = "reps"\n'),
        ):
            text = TEMPLATE.format(n=n, names=names, acks=acks, faults=faults, ackkeys=keys)
            (out / f"uet_k8_bh{n}{suffix}.toml").write_text(text)


if __name__ == "__main__":
    main()
