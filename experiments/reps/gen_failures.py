#!/usr/bin/env python3
"""Writes the failure configs of run_failures.sh ("REPS: Recycling Entropies for Packet Spraying
to Adaptively Explore Paths and Mitigate Failures", §4.3: "we fail a fixed number of links
between the aggregation switches and core switches of the fat tree").

One-way black holes: a failed pipe drops everything its aggregation switch sends up to its core
switch (`link_faults` with `one_way = true`: the core -> aggregation direction keeps working),
and every switch keeps it in its ECMP set (`withdraw_failed_ports = false`), so only the hosts'
load balancers can avoid it. Which pipes fail: all aggregation -> core pipes of the fat-tree
(gen_fattree.py's numbering) in file order, shuffled once by Python's `random.Random(SEED)`;
a share s fails the first round(s x pipes) of that order, so the 1 % set is inside the 3 % set,
which is inside the 6 % set. k = 8: 128 pipes -> 1, 3, 4, 8 failed (1 / 2 / 3 / 6 %); k = 16:
1024 pipes -> 5, 10, 20, 31, 61 (0.5 / 1 / 2 / 3 / 6 %).

  uet_kK_oneway_Ppct.toml   pipes down from t = 0 (P = 1, 2, 3, 6; k = 16 also 0p5)
  uet_kK_oneway_mid.toml    the 6 % set down at MID_US[k] (a failure in the middle of the
                            permutation: k = 8 at 50 us of its ~200 us, k = 16 at 100 us of ~380 us)
  uet_k16_degraded.toml     the artifact's -failed 8 links at k = 16 (as uet_k8_degraded.toml at
                            k = 8, its rules applied to k = 16: htsim degrades the uplinks of every
                            NTOR/8-th ToR until 8 cables are degraded -- ToR 0's 8 uplinks -- and
                            the core -> aggregation links with l + agg x (k/2) < 8 -- the 8 of
                            pod 0's first aggregation switch; each one way at half speed with
                            half the queue and ECN thresholds)
  uet_kK_1to1_rtt.toml, uet_kK_8to1_rtt.toml
                            uet_kK_1to1 / _8to1 with the RTT histogram on (nothing else changes:
                            the histogram is an output only)

Every config here writes rtt_hist.csv (500 ns bins) and failed_drops.csv.
Usage: python3 gen_failures.py [OUT_DIR]   (default: this directory; the committed files are
its output)
"""
import random
import sys
from pathlib import Path

SEED = 1
# Shares of the pipes failed from t = 0, per k (0.5 % at k = 8 would be the 1 % set's one pipe).
SHARES_PCT = {8: (1, 2, 3, 6), 16: (0.5, 1, 2, 3, 6)}
MID_US = {8: 50, 16: 100}
RTT_BIN_NS = 500
HERE = Path(__file__).resolve().parent

TRANSPORT = """[transport]
kind = "uet"
# Failed links stay in the switches' ECMP tables (routing has not converged): only the hosts'
# load balancers can avoid them.
withdraw_failed_ports = false

[transport.uet]
# The artifact's switches: htsim's ECMP hash, salts and uplink shuffles from its mt19937(seed)
# stream; ECMP flow i on path id i.
switch_hash = "htsim"
# The paper's setup: trimming on for every algorithm (the REPS paper, §4). The artifact's
# one-BDP sizing at 100 Gbps (run_symmetric.py getBDP: 12 us of links + 6 x 4096 B = 42
# packets): queue 42 packets, ECN from 10 to 31, initial window 63; base RTT per pair (14022 ns
# between pods), RTO 14022 ns + 4 x 42 x 4150 B at 100 Gbps = 69.8 us.
trimming = true
queue_packets = 42
ecn_kmin_packets = 10
ecn_kmax_packets = 31
initial_window_packets = 63
"""


def shape(k):
    half = k // 2
    hosts = k * k * k // 4
    tor0 = hosts
    agg0 = tor0 + k * half
    core0 = agg0 + k * half
    return half, hosts, tor0, agg0, core0


def agg_core_pipes(k):
    """(aggregation, core) of every aggregation -> core pipe, in gen_fattree.py's link order."""
    half, _, _, agg0, core0 = shape(k)
    return [(agg0 + half * p + j, core0 + half * j + c)
            for p in range(k) for j in range(half) for c in range(half)]


def failed_order(k):
    pipes = agg_core_pipes(k)
    random.Random(SEED).shuffle(pipes)
    return pipes


def n_failed(k, pct):
    return max(1, round(pct / 100 * len(agg_core_pipes(k))))


def header(k):
    hosts = shape(k)[1]
    size = "4 MiB" if k == 16 else "2 MiB"
    return (f"# k = {k} fat-tree, {hosts} hosts (fat_k{k}_{hosts}h_1to1.txt, gen_fattree.py), "
            f"100 Gbps, 1 us links, {size} per host\n"
            "# Workload: the REPS artifact's permutation (gen_permutation.py, seed 42), every "
            "flow at t = 0.\n# Written by gen_failures.py; run by run_failures.sh.\n")


def body(k, faults, stop, run_extra=""):
    hosts = shape(k)[1]
    perm = "perm_1024_4MiB_seed42.txt" if k == 16 else "perm_128_2MiB_seed42.txt"
    return (f"\n[topology]\nconweave_file = \"fat_k{k}_{hosts}h_1to1.txt\"\n{faults}\n"
            f"[workload]\nflow_file = \"{perm}\"\n\n{TRANSPORT}\n[lb]\nname = \"ecmp\"\n\n"
            f"[run]\nseed = 42\nstop = \"{stop}\"\n{run_extra}"
            f"rtt_histogram_ns = {RTT_BIN_NS}\n")


def faults_toml(pipes, at_us):
    rows = [f"  {{ at = \"{at_us}us\", a = {a}, b = {c}, one_way = true }}," for a, c in pipes]
    return "link_faults = [\n" + "\n".join(rows) + "\n]\n"


def oneway(k, pct):
    pipes = failed_order(k)[:n_failed(k, pct)]
    total = len(agg_core_pipes(k))
    title = (f"# REPS (the REPS paper, §4.3) on the uet transport: {len(pipes)} of the {total} "
             f"aggregation -> core pipes ({100 * len(pipes) / total:.2f} %, the {pct} % share)\n"
             "# black-holed one way from t = 0 (the core -> aggregation direction works), kept "
             "in every ECMP set.\n")
    # ECMP flows hashed onto a failed pipe never finish; stop at 20 ms.
    return title + header(k) + body(k, faults_toml(pipes, 0), "20ms",
                                    "failed_link_drops = true\n")


def mid(k):
    pipes = failed_order(k)[:n_failed(k, 6)]
    title = (f"# REPS (the REPS paper, §4.3; \"reroutes around a failure in < 100 us\") on the uet "
             f"transport: the 6 % set ({len(pipes)} aggregation -> core pipes) fails one way\n"
             f"# at {MID_US[k]} us, in the middle of the permutation; failed_drops.csv gives every "
             "flow's last packet into a failed pipe.\n")
    return title + header(k) + body(k, faults_toml(pipes, MID_US[k]), "20ms",
                                    "failed_link_drops = true\n")


def degraded16():
    half, _, tor0, agg0, core0 = shape(16)
    rows = [(tor0, agg0 + a) for a in range(half)]          # ToR 0's uplinks, ToR -> agg
    rows += [(core0 + c, agg0) for c in range(half)]        # core -> agg 0 (l = 0..7)
    lines = "\n".join(f"  {{ a = {a}, b = {b}, rate = \"50Gbps\", one_way = true, "
                      "scale_queue = true }," for a, b in rows)
    title = ("# REPS (the REPS paper, §4) on the uet transport: the artifact's \"failed\" links "
             "(htsim -failed 8) at k = 16, one direction each at half speed with half the queue\n"
             "# and ECN thresholds: ToR 1024's 8 uplinks (ToR -> aggregation) and the 8 core -> "
             "aggregation links of aggregation switch 1152 (see gen_failures.py).\n")
    return title + header(16) + body(16, "link_rates = [\n" + lines + "\n]\n", "20ms")


def with_rtt(name):
    text = (HERE / name).read_text()
    assert "rtt_histogram_ns" not in text
    return ("# As " + name + ", with the RTT histogram on (rtt_hist.csv; an output only). "
            "Written by gen_failures.py.\n" + text.rstrip("\n") +
            f"\nrtt_histogram_ns = {RTT_BIN_NS}\n")


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    files = {}
    for k in (8, 16):
        for pct in SHARES_PCT[k]:
            files[f"uet_k{k}_oneway_{str(pct).replace('.', 'p')}pct.toml"] = oneway(k, pct)
        files[f"uet_k{k}_oneway_mid.toml"] = mid(k)
    files["uet_k16_degraded.toml"] = degraded16()
    for base in ("uet_k8_1to1.toml", "uet_k8_8to1.toml", "uet_k16_1to1.toml", "uet_k16_8to1.toml"):
        files[base.replace(".toml", "_rtt.toml")] = with_rtt(base)
    for name, text in files.items():
        (out / name).write_text(text)
        print(name)


if __name__ == "__main__":
    main()
