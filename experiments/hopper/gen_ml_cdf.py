"""The flow-size CDF of the ML-training workload of Hopper ("Predictive Load Balancing for RDMA
Traffic", section 4.1, Fig. 4), built as a stand-in.

The paper takes "the collective message size distribution reported in" Gangidi et al., "RDMA
over Ethernet for Distributed Training at Meta Scale" (SIGCOMM '24): a mix of AllReduce (DDP)
and AllGather / ReduceScatter (FSDP). Those numbers are not public in a form we can read, so
this script builds the distribution the paper describes from public traces of the same two
kinds of job: AICB's Llama-7B on 128 GPUs with DeepSpeed ZeRO-2 (gradient AllReduce buckets:
DDP-like) and ZeRO-3 (per-layer AllGather / ReduceScatter: FSDP-like), one iteration of each
(`data/aicb/README.md`). Each collective becomes the flows a ring puts on one link, as NCCL's
ring algorithm does: a message of S bytes in a group of n gives n - 1 flows of ceil(S / n)
bytes for AllGather and ReduceScatter, 2 (n - 1) for AllReduce. Set-up collectives (stage
`init...`) and scalar ones (S < 1 KiB: overflow and norm checks) are left out.

The output is a CDF in ConWeave's generator format (`<size_bytes> <cumulative_percent>`,
linear between points): each distinct size is a step (two points at the same size), so the
generator draws exactly these sizes.

Usage (from the repository root):
    python experiments/hopper/gen_ml_cdf.py > experiments/hopper/ml_llama7b_zero.txt
"""
import collections
import csv
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRACES = [
    ROOT / "data/aicb/L7B-D1-C01_Llama7B_zero2_mbs1.csv",
    ROOT / "data/aicb/L7B-D1-C02_Llama7B_zero3_mbs1.csv",
]
# Flows one ring collective of a group of n puts on each link.
RING_STEPS = {
    "CommType.all_reduce": lambda n: 2 * (n - 1),
    "CommType.all_gather": lambda n: n - 1,
    "CommType.reduce_scatter": lambda n: n - 1,
}
MIN_MESSAGE_BYTES = 1024


def ring_flows(path):
    """{flow size in bytes: number of flows} of one AICB trace."""
    flows = collections.Counter()
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[1]
    col = {name: i for i, name in enumerate(header)}
    for lineno, row in enumerate(rows[2:], start=3):
        kind, stage = row[col["comm_type"]], row[col["stage"]]
        if stage.startswith("init") or kind == "CommType.epoch_end":
            continue
        if kind not in RING_STEPS:
            sys.exit(f"{path}:{lineno}: comm_type: no ring decomposition for {kind}")
        n, size = int(row[col["comm_group_size"]]), int(row[col["msg_size"]])
        count = int(row[col["count"]])
        if size < MIN_MESSAGE_BYTES:
            continue
        flows[math.ceil(size / n)] += RING_STEPS[kind](n) * count
    return flows


def main():
    flows = collections.Counter()
    for path in TRACES:
        flows += ring_flows(path)
    total = sum(flows.values())
    mean = sum(s * c for s, c in flows.items()) / total
    print(f"# {total} flows per iteration pair, mean {mean:.0f} B (gen_ml_cdf.py)", file=sys.stderr)
    done = 0
    for size in sorted(flows):
        print(f"{size} {100 * done / total:.6f}")
        done += flows[size]
        print(f"{size} {100 * done / total:.6f}")


if __name__ == "__main__":
    main()
