#!/usr/bin/env bash
# Ablation of the Themis AlltoAll miss at 300 MB per rank, T_I 900 us / T_D 4 us (README.md):
# one change per config (gen_configs.sh), AR and Themis with 2 seeds per cell, random spraying
# and ECMP with 1 where the change concerns them too. The baseline cells are the main grid's
# (../results.csv). Points run in order of importance; resumable (finished points are
# skipped). Builds nothing: needs build/rdma-lb-scenario (scripts/build) and the CLI.
# JOBS=N points at once (default 1); SLURM=FILE writes each sweep as a Slurm array FILE.N.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$root"
cli="${RDMA_LB_CLI:-target/release/rdma-lb}"
py="${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}"
out="out/experiments/themis-collectives/ablation"
d=experiments/themis-collectives/ablation
jobs=${JOBS:-1}
n=0
sweep() { # CONFIG-NAMES ALGORITHMS SEEDS [ALGORITHM-PARAMETERS]
  local cfgs=""
  for c in $1; do cfgs="$cfgs${cfgs:+,}$d/$c.toml"; done
  n=$((n + 1))
  local mode=(-j "$jobs")
  [ -n "${SLURM:-}" ] && mode=(--slurm "$SLURM.$n")
  local params=()
  [ -n "${4:-}" ] && params=(--lb-params "$4")
  "$cli" sweep --config "$cfgs" --lb "$2" --seed "$3" "${params[@]}" "${mode[@]}" --out-root "$out/runs"
}
sweep alltoall_300MB_hpcc_ecn adaptive,themis 1,2
sweep alltoall_pairwise_300MB adaptive,themis 1,2
# The configs' [lb] params are repeated with --lb-params (needed before `--lb` kept a config's own
# parameters; kept so that the run directories are those results.csv names).
sweep alltoall_300MB_ar_flowlet adaptive 1,2 "flowlet_gap_ns = 5000"
sweep alltoall_300MB_ar_sampled adaptive 1,2 "load_sample_ns = 10000"
sweep alltoall_pairwise_300MB ecmp,spray 1
sweep alltoall_300MB_alpha_half adaptive,themis 1,2
sweep alltoall_300MB_random_psn themis 1,2 'initial_psn = "random"'
sweep alltoall_300MB_buffer_32MB adaptive,themis 1,2
sweep alltoall_300MB_pfc_off adaptive,themis 1
[ -n "${SLURM:-}" ] && exit 0
[ -n "${NO_ANALYSIS:-}" ] && exit 0
"$py" "$d/analyze.py" "$out/runs" "$d"
