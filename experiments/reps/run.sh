#!/usr/bin/env bash
# REPS (the REPS paper, §4) permutation experiment: 3 fabrics x {ecmp, spray, reps} x seeds, then the
# analysis (results.csv, fct_cdf.png, the README table). Builds nothing: needs
# build/rdma-lb-scenario (scripts/build) and the rdma-lb CLI (cargo build --release -p rdma-lb;
# or set RDMA_LB to its path). Resumable: finished runs are skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
exp=experiments/reps
out=out/experiments/reps
seeds=${SEEDS:-1,2}
cli=${RDMA_LB:-}
if [ -z "$cli" ]; then
  for c in target/release/rdma-lb build/ns3-module/cargo-target/release/rdma-lb; do
    if [ -x "$c" ]; then cli=$c; break; fi
  done
fi
[ -n "$cli" ] || { echo "run.sh: no rdma-lb CLI (cargo build --release -p rdma-lb)" >&2; exit 2; }
py=${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}
configs=$exp/reps_1to1.toml,$exp/reps_8to1.toml,$exp/reps_failures.toml
# REPS on a 3-tier fabric: base RTT of the 6-hop inter-pod path (12 x 1 us + 6 x 80 ns of
# serialization at 100 Gbps) and one BDP (156 KB = 156 packets) of exploration.
"$cli" sweep --config "$configs" --lb ecmp,spray --seed "$seeds" -j 1 --out-root "$out"
"$cli" sweep --config "$configs" --lb reps --lb-params "base_rtt_ns = 12480, explore_pkts = 156" \
  --seed "$seeds" -j 1 --out-root "$out"
"$py" $exp/analyze.py "$out" $exp
