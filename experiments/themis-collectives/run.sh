#!/usr/bin/env bash
# Themis ("Enabling Packet Spraying over Commodity RNICs with In-Network Support", §5, Fig. 5) at the paper's message size: 16 x 16 leaf-spine at
# 400 Gbps, 16 groups of 16 ranks, ring AllReduce and AlltoAll of 300 MB per rank under ECMP,
# adaptive routing (AR), random spraying and Themis across DCQCN (T_I, T_D) settings, plus a
# size sweep at the recommended setting. The points run in order of importance (the pair the
# claim compares first), so an interrupted sweep has the headline numbers first.
# Builds nothing: needs build/rdma-lb-scenario (scripts/build) and the CLI
# (cargo build --release -p rdma-lb). Resumable: finished points are skipped.
# JOBS=N runs N points at once (default 1); ONLY=main|sizes limits the grid; SLURM=FILE writes
# each sweep as a Slurm array script FILE.N instead (sbatch them; run.sh then only analyses).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
cli="${RDMA_LB_CLI:-target/release/rdma-lb}"
py="${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}"
out="out/experiments/themis-collectives"
d=experiments/themis-collectives
jobs=${JOBS:-1}
only=${ONLY:-}
mkdir -p "$out"
n=0
sweep() { # CONFIG-NAMES ALGORITHMS [SEEDS]
  local cfgs=""
  for c in $1; do cfgs="$cfgs${cfgs:+,}$d/$c.toml"; done
  n=$((n + 1))
  local mode=(-j "$jobs")
  [ -n "${SLURM:-}" ] && mode=(--slurm "$SLURM.$n")
  "$cli" sweep --config "$cfgs" --lb "$2" --seed "${3:-1}" "${mode[@]}" --out-root "$out/runs"
}
if [ "$only" != sizes ]; then
  sweep "allreduce_300MB_ti900_td4 alltoall_300MB_ti900_td4" adaptive,themis
  sweep "allreduce_300MB_ti55_td50 alltoall_300MB_ti55_td50" adaptive,themis
fi
if [ "$only" != main ]; then
  sweep "allreduce_ti900_td4 alltoall_ti900_td4 allreduce_16MiB_ti900_td4 alltoall_16MiB_ti900_td4" \
    ecmp,adaptive,spray,themis
  sweep "allreduce_64MB_ti900_td4 alltoall_64MB_ti900_td4" adaptive,themis,ecmp,spray
fi
if [ "$only" != sizes ]; then
  sweep "allreduce_300MB_ti900_td4 alltoall_300MB_ti900_td4 allreduce_300MB_ti55_td50 alltoall_300MB_ti55_td50" \
    ecmp,spray
  sweep "allreduce_300MB_ti300_td4 alltoall_300MB_ti300_td4 allreduce_300MB_ti10_td100 alltoall_300MB_ti10_td100" \
    adaptive,themis
  # A second seed for the headline pair (AR and Themis at the recommended DCQCN setting).
  sweep "allreduce_300MB_ti900_td4 alltoall_300MB_ti900_td4" adaptive,themis 2
  # AR at more extreme DCQCN points, PFC on, then off (the "extreme values" claim).
  sweep "allreduce_300MB_ti5_td200 alltoall_300MB_ti5_td200 allreduce_300MB_ti5_td400 alltoall_300MB_ti5_td400" adaptive
  sweep "allreduce_300MB_ti5_td200_nopfc alltoall_300MB_ti5_td200_nopfc allreduce_300MB_ti5_td400_nopfc alltoall_300MB_ti5_td400_nopfc" adaptive
fi
[ -n "${SLURM:-}" ] && exit 0
[ -n "${NO_ANALYSIS:-}" ] && exit 0
"$py" "$d/analyze.py" "$out/runs" "$d/results.csv" "$out"  # keeps the committed rows of points not re-run
"$py" "$d/dcqcn_figure.py" "$d/results.csv" "$d/cct_vs_dcqcn.png"
for k in allreduce alltoall; do cp "$out/cct_$k.png" "$out/cct_$k.csv" "$d/"; done
cp "$out/size_sweep.png" "$out"/rates_*.png "$d/"
