#!/usr/bin/env bash
# Seed 001 (Themis) §5 / Fig. 5, scaled: 16 x 16 leaf-spine at 400 Gbps, 16 groups of 16 ranks;
# ring AllReduce (1 MiB per rank) and AlltoAll (2 MiB per rank) under ECMP, adaptive routing
# (AR), random spraying (NIC-SR strawman) and Themis; AlltoAll also for a second DCQCN
# (T_I, T_D) setting (AllReduce steps are too short for DCQCN to cut: see README).
# Builds nothing: needs build/rdma-lb-scenario (scripts/build) and the CLI
# (cargo build --release -p rdma-lb). Resumable: finished points are skipped.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
cli="${RDMA_LB_CLI:-target/release/rdma-lb}"
py="${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}"
out="out/experiments/themis-collectives"
d=experiments/themis-collectives
mkdir -p "$out"
"$cli" sweep \
  --config "$d/allreduce_ti900_td4.toml,$d/alltoall_ti900_td4.toml,$d/alltoall_ti55_td50.toml" \
  --lb ecmp,adaptive,spray,themis --seed 1 -j 1 --out-root "$out/runs"
"$py" "$d/analyze.py" "$out/runs" "$d/results.csv" "$out"
for k in allreduce alltoall; do cp "$out/cct_$k.png" "$out/cct_$k.csv" "$d/"; done
