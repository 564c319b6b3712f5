#!/usr/bin/env bash
# Hopper ("Predictive Load Balancing for RDMA Traffic", §4.1, App. B) at the
# published setup: ConWeave's 128-host leaf-spine, AliStorage2019 and FbHdp2015 (Hadoop), 50 %
# and 80 % network load, 100 ms of Poisson arrivals; ECMP, FlowBender, CONGA, LetFlow, ConWeave
# and Hopper on the extended IRN and on PFC + Go-Back-N; every one of the 15 load balancers on
# AliStorage 50 % (IRN; Themis on NIC selective repeat); the asymmetric 10G/1G fabric.
# The points run in order of importance, so an interrupted sweep has the headline cell first.
# Builds nothing: needs build/rdma-lb-scenario (scripts/build) and the rdma-lb CLI
# (cargo build --release -p rdma-lb; or set RDMA_LB to its path). Resumable: finished runs are
# skipped. JOBS=N runs N points at once (default 1). SLURM=FILE writes each sweep as a Slurm
# array script FILE.N (sbatch them; a local run.sh over the same out/ then only analyses).
set -euo pipefail
cd "$(dirname "$0")/../.."
exp=experiments/hopper
out=out/experiments/hopper
jobs=${JOBS:-1}
cli=${RDMA_LB:-}
if [ -z "$cli" ]; then
  for c in target/release/rdma-lb build/ns3-module/cargo-target/release/rdma-lb; do
    if [ -x "$c" ]; then cli=$c; break; fi
  done
fi
[ -n "$cli" ] || { echo "run.sh: no rdma-lb CLI (cargo build --release -p rdma-lb)" >&2; exit 2; }
py=${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}
n=0
sweep() { # CONFIGS ALGORITHMS LOADS SEEDS [EXTRA...]
  local cfgs=""
  for c in $1; do cfgs="$cfgs${cfgs:+,}$exp/$c.toml"; done
  n=$((n + 1))
  local mode=(-j "$jobs")
  [ -n "${SLURM:-}" ] && mode=(--slurm "$SLURM.$n")
  local load=()
  [ -n "$3" ] && load=(--load "$3")
  "$cli" sweep --config "$cfgs" --lb "$2" "${load[@]}" --seed "$4" "${mode[@]}" --out-root "$out" "${@:5}"
}
six=hopper,flowbender,conga,conweave,letflow,ecmp
rest=spray,reps,whack-a-mole,plb,flowcut,plts-random,plts-counter,plts-rr,adaptive,drill
# Host load 0.25 / 0.4 = 50 % / 80 % network load on the 2:1 leaf-spine.
for seed in 1 2 3; do                                          # the cell App. B reports
  sweep hopper_alistorage "$six" 0.25 $seed
done
sweep hopper_alistorage "$rest" 0.25 1                          # the all-algorithm table
# Ablation of the large-flow miss (README "Ablation"): every out-of-order NACK carrying a CNP
# (ConWeave's simulator, on which the paper builds), and IRN's out-of-order threshold 3 / 32.
sweep hopper_alistorage_cnp "$six" 0.25 1,2,3
sweep hopper_fbhdp_cnp "$six" 0.25,0.4 1
sweep "hopper_alistorage_ooo3 hopper_alistorage_ooo32" hopper,flowbender 0.25 1
# The paper's section 3.3 switch: data after a path change in the probing QP's own PSN space
# (irn_qp_per_path), with the CNP on out-of-order NACKs off and on.
sweep "hopper_alistorage_qpp hopper_alistorage_cnp_qpp" hopper 0.25 1,2,3
sweep hopper_alistorage_nicsr themis 0.25 1
sweep "hopper_alistorage hopper_fbhdp" "$six" 0.4 1
sweep hopper_fbhdp "$six" 0.25 1
sweep "hopper_alistorage_pfc hopper_fbhdp_pfc" "$six" 0.25,0.4 1
sweep hopper_asym ecmp,flowbender,conga,conweave,letflow "" 1,2,3
# Hopper's thresholds are multiples of the base RTT: 8 x 1 us + 2 x 320 ns (25 G) + 2 x 800 ns
# (10 G) of serialization on the asymmetric fabric (the leaf-spine default is 8,320 ns).
sweep hopper_asym hopper "" 1,2,3 --lb-params "base_rtt_ns = 10240"
# The ML-training workload (section 4.1, Fig. 4) as a stand-in from AICB's traces (gen_ml_cdf.py,
# README "ML training"): 50 % load, 3 seeds; 80 % load, seed 1 (15-20 CPU-minutes per run).
sweep hopper_ml "$six" 0.25 1,2,3
sweep hopper_ml "$six" 0.4 1
[ -n "${SLURM:-}" ] && exit 0
[ -n "${NO_ANALYSIS:-}" ] && exit 0
"$py" $exp/analyze.py "$out" $exp
"$py" $exp/noise_floor.py "$out" $exp   # buckets.csv: per-bucket, per-seed slowdowns
"$py" $exp/analyze_ml.py "$out" $exp    # results_ml.csv, slowdown_ml.png
