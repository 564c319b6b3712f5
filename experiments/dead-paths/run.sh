#!/usr/bin/env bash
# Dead paths (see README.md): when does each host load balancer send its last data packet,
# resends included, into a silently failed leaf-spine link? Builds nothing: run scripts/build
# and cargo build --release -p rdma-lb first. A resumable sweep (rdma-lb sweep -j 1: finished
# runs, those with summary.json, are skipped) into out/experiments/dead-paths/, then
# analyze.py writes results.csv beside this script and prints the table.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
out=out/experiments/dead-paths
mkdir -p "$out"
target/release/rdma-lb sweep \
  --config "$here/ls_irn_twoway.toml,$here/ls_irn_oneway.toml,$here/ls_uet_twoway.toml,$here/ls_uet_oneway.toml" \
  --lb whack-a-mole,reps,hopper,flowbender,spray,ecmp --seed "${SEEDS:-1}" -j "${JOBS:-1}" \
  --out-root "$out"
python3 "$here/analyze.py" "$out" "$here/results.csv"
