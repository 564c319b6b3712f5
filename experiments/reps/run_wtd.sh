#!/usr/bin/env bash
# SMaRTT's wait-to-decrease (the REPS paper, §3.0.1) on the uet window, and the paper's REPS
# comparisons re-run with it (README "Wait-to-decrease"): the same cases with and without it,
# paired by seed, for ECMP, spraying and REPS: k = 8 1:1 and the artifact's 8:1 shape (fewer
# uplinks), 10 seeds; k = 16 1:1, 5 seeds; k = 16 8:1, 3 seeds. Then analyze_wtd.py
# (results_wtd.csv, the README table). Resumable `rdma-lb sweep` into out/experiments/reps_wtd;
# builds nothing (scripts/build, cargo build --release -p rdma-lb). JOBS=N runs N at once.
set -euo pipefail
cd "$(dirname "$0")/../.."
exp=experiments/reps
out=out/experiments/reps_wtd
cli=${RDMA_LB:-target/release/rdma-lb}
py=${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}
jobs=${JOBS:-1}
[ -x "$cli" ] || { echo "run_wtd.sh: no $cli (cargo build --release -p rdma-lb)" >&2; exit 2; }
# REPS as in run_failures.sh: the artifact's entropies, one BDP of exploration, its base RTT.
reps="num_entropies = 65535, explore_pkts = 42, base_rtt_ns = 14022, trimming = true"
reps_os="num_entropies = 65535, explore_pkts = 42, base_rtt_ns = 23462, trimming = true"
sweep() { # CASE SEEDS REPS-PARAMS
  local cfgs="--config $exp/$1.toml --config $exp/$1_wtd.toml"
  # shellcheck disable=SC2086
  "$cli" sweep $cfgs --lb ecmp,spray --seed "$2" -j "$jobs" --out-root "$out"
  # shellcheck disable=SC2086
  "$cli" sweep $cfgs --lb reps --seed "$2" --lb-params "$3" -j "$jobs" --out-root "$out"
}
sweep uet_k8_1to1 "${SEEDS_K8:-1,2,3,4,5,6,7,8,9,10}" "$reps"
sweep uet_k8_8to1_uplinks "${SEEDS_K8:-1,2,3,4,5,6,7,8,9,10}" "$reps"
sweep uet_k16_1to1 "${SEEDS_K16:-1,2,3,4,5}" "$reps"
sweep uet_k16_8to1 "${SEEDS_K16_OS:-1,2,3}" "$reps_os"
"$py" "$exp/analyze_wtd.py" "$out" "$exp"
