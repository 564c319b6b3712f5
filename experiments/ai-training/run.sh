#!/usr/bin/env bash
# AI training on a rail-optimized fabric (README.md): one iteration of AICB's Llama-7B (TP 2)
# SimAI workload on SimAI's 256-GPU Spectrum-X topology, every load balancer, 3 seeds.
# Builds nothing: needs build/rdma-lb-scenario (scripts/build) and the CLI
# (cargo build --release -p rdma-lb). Resumable: finished points are skipped. Seed 1 of every
# algorithm runs first, so an interrupted sweep has one run of each. JOBS=N runs N points at
# once (default 2); SEEDS=... overrides the seeds of the second pass (default 2,3).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
cli="${RDMA_LB_CLI:-target/release/rdma-lb}"
py="${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}"
out=out/experiments/ai-training/runs
algos=ecmp,spray,reps,flowbender,whack-a-mole,hopper,plb,flowcut,themis,plts-random,plts-counter,plts-rr,adaptive,drill,conga,letflow,conweave
cfg=experiments/ai-training/llama7b_tp2_256g.toml
mkdir -p "$out"
for seeds in 1 "${SEEDS:-2,3}"; do
  nice -n 10 "$cli" sweep --config "$cfg" --lb "$algos" --seed "$seeds" -j "${JOBS:-2}" \
    --out-root "$out" || true # a failed point is listed by the sweep; the others still count
done
"$py" "$here/analyze.py" "$out" "$here"
