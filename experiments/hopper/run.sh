#!/usr/bin/env bash
# Hopper (seed 004 §4.1, §4.2) experiment: {Hadoop, AliStorage} x {50 %, 80 %} x {ecmp,
# flowbender, hopper} on the 128-host leaf-spine, plus the asymmetric 10G/1G fabric; then the
# analysis (results.csv, figures, the README table). Builds nothing: needs
# build/rdma-lb-scenario (scripts/build) and the rdma-lb CLI (cargo build --release -p rdma-lb;
# or set RDMA_LB to its path). Resumable: finished runs are skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
exp=experiments/hopper
out=out/experiments/hopper
seeds=${SEEDS:-1}
asym_seeds=${ASYM_SEEDS:-1,2,3}
cli=${RDMA_LB:-}
if [ -z "$cli" ]; then
  for c in target/release/rdma-lb build/ns3-module/cargo-target/release/rdma-lb; do
    if [ -x "$c" ]; then cli=$c; break; fi
  done
fi
[ -n "$cli" ] || { echo "run.sh: no rdma-lb CLI (cargo build --release -p rdma-lb)" >&2; exit 2; }
py=${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}
# Host load 0.25 / 0.4 = 50 % / 80 % network load on the 2:1 leaf-spine.
"$cli" sweep --config $exp/hopper_fbhdp.toml,$exp/hopper_alistorage.toml --lb ecmp,flowbender,hopper \
  --load 0.25,0.4 --seed "$seeds" -j 1 --out-root "$out"
"$cli" sweep --config $exp/hopper_asym.toml --lb ecmp,flowbender --seed "$asym_seeds" -j 1 --out-root "$out"
# Hopper's thresholds are multiples of the base RTT: 8 x 1 us + 2 x 320 ns (25 G) + 2 x 800 ns
# (10 G) of serialization on the asymmetric fabric (the leaf-spine default is 8,320 ns).
"$cli" sweep --config $exp/hopper_asym.toml --lb hopper --lb-params "base_rtt_ns = 10240" \
  --seed "$asym_seeds" -j 1 --out-root "$out"
"$py" $exp/analyze.py "$out" $exp
