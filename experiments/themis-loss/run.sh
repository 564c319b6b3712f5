#!/usr/bin/env bash
# Themis under real loss (§3.3-3.4) and a link failure (§6) on the paper's 8-host ring: ECMP,
# random spraying and Themis (and Themis without NACK compensation on the lossy fabric), three
# seeds each. Builds nothing: needs build/rdma-lb-scenario (scripts/build) and the CLI (cargo
# build --release -p rdma-lb). Resumable: finished points are skipped. About 90 s of CPU.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
cli="${RDMA_LB_CLI:-target/release/rdma-lb}"
py="${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}"
out="out/experiments/themis-loss"
d=experiments/themis-loss
"$cli" sweep --config "$d/loss.toml,$d/failure.toml,$d/failure_permanent.toml" \
  --lb ecmp,spray,themis --seed 1,2,3 -j "${JOBS:-1}" --out-root "$out/runs"
"$cli" sweep --config "$d/loss.toml" --lb themis --lb-params "compensation = false" \
  --seed 1,2,3 -j "${JOBS:-1}" --out-root "$out/runs"
"$py" "$d/analyze.py" "$out/runs" "$d/results.csv"
