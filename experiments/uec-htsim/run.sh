#!/usr/bin/env bash
# NSCC, RCCC and NSCC + RCCC on the uet transport against the UEC's htsim (README.md): each case's htsim input files
# unchanged, REPS (and htsim's mixed and bitmap on three cases), seeds 13 (htsim's default), 1, 2, 3 (13, 1, 2 for the 1,024-host plan's
# permutation on its fat tree and 4:1 / 8:1 leaf-spines); then analyze.py (results.csv, the
# README table) against htsim's runs of the same cases and seeds (data/uec-htsim/reps/).
# Resumable `rdma-lb sweep` into out/experiments/uec-htsim; builds nothing (scripts/build,
# cargo build --release -p rdma-lb). Each run takes 0.5-10 s of CPU. JOBS=N runs N at once.
set -euo pipefail
cd "$(dirname "$0")/../.."
exp=experiments/uec-htsim
out=out/experiments/uec-htsim
cli=${RDMA_LB:-target/release/rdma-lb}
py=${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}
[ -x "$cli" ] || { echo "run.sh: no $cli (cargo build --release -p rdma-lb)" >&2; exit 2; }
"$cli" sweep --config "$exp/perm128_ft100_nscc.toml,$exp/incast8to1_ft100_nscc.toml,$exp/perm128_ls400_nscc.toml,$exp/perm128_ls400_nscc_failed1.toml,$exp/perm128_ls400_nscc_oblivious.toml" \
  --seed 13,1,2,3 -j "${JOBS:-1}" --out-root "$out"
"$cli" sweep --config "$exp/perm1024_fat_tree_1024.toml,$exp/perm1024_leaf_spine_1024_oversub.toml,$exp/perm1024_leaf_spine_1024_oversub_8-1.toml" \
  --seed 13,1,2 -j "${JOBS:-1}" --out-root "$out"
# The two NSCC permutations' few trims come in bursts on both sides: 11 more seeds.
"$cli" sweep --config "$exp/perm128_ft100_nscc.toml,$exp/perm128_ls400_nscc.toml" \
  --seed 4,5,6,7,8,9,10,11,12,14,15 -j "${JOBS:-1}" --out-root "$out"
# The NSCC incast's mean FCT swings +-3 % per seed on both sides: 8 more seeds (as ctest
# reference-uec-htsim runs it).
"$cli" sweep --config "$exp/incast8to1_ft100_nscc.toml" --seed 4,5,6,7,8,9,10,11 \
  -j "${JOBS:-1}" --out-root "$out"
# RCCC (htsim -receiver_cc_only) and NSCC + RCCC (-sender_cc -receiver_cc), 0.5-4 s each.
"$cli" sweep --config "$exp/perm128_ft100_rccc.toml,$exp/incast8to1_ft100_rccc.toml,$exp/perm128_ft100_both.toml" \
  --seed 13,1,2,3 -j "${JOBS:-1}" --out-root "$out"
# RCCC's permutation trims vary 120-504 per seed on both sides: 8 more seeds.
"$cli" sweep --config "$exp/perm128_ft100_rccc.toml" --seed 4,5,6,7,8,9,10,11 -j "${JOBS:-1}" \
  --out-root "$out"
# RCCC with oblivious spraying (htsim -load_balancing_algo oblivious): RCCC's trims apart from REPS'.
"$cli" sweep --config "$exp/perm128_ft100_rccc_oblivious.toml" --seed 13,1,2,3,4,5,6,7 \
  -j "${JOBS:-1}" --out-root "$out"
# The 8,192-host plan's permutation (about 50 s of CPU and 0.5 GiB per run).
"$cli" sweep --config "$exp/perm8192_ls400_1MB.toml" --seed 13,1 -j "${JOBS:-1}" --out-root "$out"
# htsim's own load balancers: its default, mixed (ours uec-mixed), and its bitmap (uec-bitmap).
"$cli" sweep --config "$exp/perm128_ft100_nscc_mixed.toml,$exp/perm128_ls400_nscc_mixed.toml,$exp/perm128_ls400_nscc_failed1_mixed.toml,$exp/perm128_ft100_nscc_bitmap.toml,$exp/perm128_ls400_nscc_bitmap.toml,$exp/perm128_ls400_nscc_failed1_bitmap.toml" \
  --seed 13,1,2,3 -j "${JOBS:-1}" --out-root "$out"
# mixed and bitmap on the incasts (NSCC, RCCC) and the RCCC permutation (trims 0-33 per run on
# both sides: 12 seeds).
"$cli" sweep --config "$exp/incast8to1_ft100_nscc_mixed.toml,$exp/incast8to1_ft100_nscc_bitmap.toml,$exp/incast8to1_ft100_rccc_mixed.toml,$exp/incast8to1_ft100_rccc_bitmap.toml" \
  --seed 13,1,2,3 -j "${JOBS:-1}" --out-root "$out"
"$cli" sweep --config "$exp/perm128_ft100_rccc_mixed.toml,$exp/perm128_ft100_rccc_bitmap.toml" \
  --seed 13,1,2,3,4,5,6,7,8,9,10,11 -j "${JOBS:-1}" --out-root "$out"
# Their -failed 1 runs' trims spread by +-80 per seed on both sides: 8 more seeds.
"$cli" sweep --config "$exp/perm128_ls400_nscc_failed1_mixed.toml,$exp/perm128_ls400_nscc_failed1_bitmap.toml" \
  --seed 4,5,6,7,8,9,10,11 -j "${JOBS:-1}" --out-root "$out"
# The shipped 8,192-host plan (data/uec-htsim/shipped/) with htsim's default load balancer:
# 1, 2 and 4 MB, NSCC and RCCC, at -paths 128 / 64 / 32, seed 13 (1-7 min of CPU each).
for p in 128 64 32; do
  "$cli" sweep --config "$exp/perm8192_ls400_1MB_mixed.toml,$exp/perm8192_ls400_1MB_mixed_rccc.toml,$exp/perm8192_ls400_2MB_mixed.toml,$exp/perm8192_ls400_2MB_mixed_rccc.toml,$exp/perm8192_ls400_4MB_mixed.toml,$exp/perm8192_ls400_4MB_mixed_rccc.toml" \
    --seed 13 --lb-params "num_entropies = $p" -j "${JOBS:-1}" --out-root "$out"
done
# The 4 MB point at 32 paths again (its trims differ most), seed 1, NSCC and RCCC.
"$cli" sweep --config "$exp/perm8192_ls400_4MB_mixed.toml,$exp/perm8192_ls400_4MB_mixed_rccc.toml" \
  --seed 1 --lb-params "num_entropies = 32" -j "${JOBS:-1}" --out-root "$out"
# The plan's -failed 1 and 4:1 / 8:1 oversubscribed fabrics, 1 MB, NSCC, -paths 128 / 64 / 32.
for p in 128 64 32; do
  "$cli" sweep --config "$exp/perm8192_ls400_failed1_1MB_mixed.toml,$exp/perm8192_ls400_4to1_1MB_mixed.toml,$exp/perm8192_ls400_8to1_1MB_mixed.toml" \
    --seed 13 --lb-params "num_entropies = $p" -j "${JOBS:-1}" --out-root "$out"
done
# The plan at 200 G and 800 G, 1 MB: NSCC at -paths 128 / 32, RCCC at 128.
for p in 128 32; do
  "$cli" sweep --config "$exp/perm8192_ls200_1MB_mixed.toml,$exp/perm8192_ls800_1MB_mixed.toml" \
    --seed 13 --lb-params "num_entropies = $p" -j "${JOBS:-1}" --out-root "$out"
done
"$cli" sweep --config "$exp/perm8192_ls200_1MB_mixed_rccc.toml,$exp/perm8192_ls800_1MB_mixed_rccc.toml" \
  --seed 13 --lb-params "num_entropies = 128" -j "${JOBS:-1}" --out-root "$out"
# The 4:1 / 8:1 points' seed-to-seed spread (htsim's seed 1 is kept in data/ too).
"$cli" sweep --config "$exp/perm8192_ls400_4to1_1MB_mixed.toml,$exp/perm8192_ls400_8to1_1MB_mixed.toml" \
  --seed 1,2 --lb-params "num_entropies = 128" -j "${JOBS:-1}" --out-root "$out"
# The 4:1 / 8:1 gap's cheap case (README.md, "The 4:1 / 8:1 gap: the cause"; ~12 s each),
# compared flow by flow with htsim's seed-13 runs by compare_flows.py (not by analyze.py).
"$cli" sweep --config "$exp/oversub1024_ls400_4to1_1MB_mixed.toml,$exp/oversub1024_ls400_8to1_1MB_mixed.toml" \
  --seed 13 -j "${JOBS:-1}" --out-root "$out"
"$py" "$exp/analyze.py" "$out" "$exp"
"$py" "$exp/analyze_plan.py" "$out" "$exp"
