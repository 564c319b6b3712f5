#!/usr/bin/env bash
# The Themis paper, Fig. 1: the 8-host ring under ECMP, random spraying (NIC-SR) and Themis,
# for four DCQCN settings. Builds nothing: needs build/rdma-lb-scenario (scripts/build) and the
# CLI (cargo build --release -p rdma-lb). Resumable: finished points are skipped.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
cli="${RDMA_LB_CLI:-target/release/rdma-lb}"
py="${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}"
out="out/experiments/themis-motivation"
mkdir -p "$out"
d=experiments/themis-motivation
"$cli" sweep \
  --config "$d/ring.toml,$d/ring_ti900.toml,$d/ring_ti10_ai5g.toml,$d/ring_nocc.toml" \
  --lb ecmp,spray,themis --seed 1 -j 1 --out-root "$out/runs"
"$py" "$d/analyze.py" "$out/runs" "$d/results.csv" "$d/fig1_ring.png"
# Fig. 1's time series (per-flow sending rate, cumulative retransmission ratio), one figure per
# DCQCN setting.
for c in ring ring_ti900; do
  "$py" -m plots rates $(ls -d "$out"/runs/$c-{ecmp,spray,themis}-s1-* 2>/dev/null) \
    -o "$d/fig1_rates_$c.png" --title "$c: 8-host ring, 100 MB flows, NIC-SR"
done
