#!/usr/bin/env bash
# AI training on a rail-optimized fabric (README.md): one iteration of AICB's Llama-7B (TP 2)
# SimAI workload on SimAI's 256-GPU Spectrum-X topology, every load balancer.
# Builds nothing: needs build/rdma-lb-scenario (scripts/build) and the CLI
# (cargo build --release -p rdma-lb). Resumable: finished points are skipped. Passes: (1) seeds
# 1-3 of all 17 algorithms on SimAI.conf's Go-Back-N transport; (2) NIC-SR: Themis, adaptive
# routing, spray, ECMP, seed 1, and Themis and adaptive routing, seeds 2, 3; then the other
# cases, seed 1 unless said: (3) the slow spine and (4) the failed link, all 17 schemes; PXN,
# five; (5) the MoE iteration, nine schemes, seeds 2-3 of six; (6) the dual-plane fabric, ECMP;
# (7) 1,024 GPUs, four schemes (~14 CPU-minutes each); (8) the uet transport, all 17 schemes,
# and seven of them seeds 2, 3. JOBS=N runs N points at once (default 2).
# About 1 CPU-minute per 256-GPU run (2-3 for the MoE iteration and on uet).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
cli="${RDMA_LB_CLI:-target/release/rdma-lb}"
py="${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}"
out=out/experiments/ai-training/runs
all=ecmp,spray,reps,flowbender,whack-a-mole,hopper,plb,flowcut,themis,plts-random,plts-counter,plts-rr,adaptive,drill,conga,letflow,conweave
gbn=experiments/ai-training/llama7b_tp2_256g.toml
nicsr=experiments/ai-training/llama7b_tp2_256g_nicsr.toml
mkdir -p "$out"
sweep() { # CONFIG ALGORITHMS SEEDS
  # a failed point is listed by the sweep; the others still count
  nice -n 10 "$cli" sweep --config "$1" --lb "$2" --seed "$3" -j "${JOBS:-2}" --out-root "$out" ||
    true
}
sweep "$gbn" "$all" 1,2,3
sweep "$nicsr" themis,adaptive,spray,ecmp 1
sweep "$nicsr" themis,adaptive 2,3
five=ecmp,plts-counter,adaptive,drill,conweave
sweep experiments/ai-training/llama7b_tp2_256g_slowpsw.toml "$all" 1
sweep experiments/ai-training/llama7b_tp2_256g_faillink.toml "$all" 1
# SimAI's PXN (simai_pxn = true): every NIC flow on its rail, five schemes.
sweep experiments/ai-training/llama7b_tp2_256g_pxn.toml "$five" 1
moe=experiments/ai-training/mixtral8x7b_tp4_ep8_256g.toml
sweep "$moe" "$five,spray,flowbender,conga,letflow" 1
sweep "$moe" ecmp,adaptive,plts-counter,drill,conweave,spray 2,3
sweep experiments/ai-training/llama7b_tp2_256g_dualplane.toml ecmp 1
sweep experiments/ai-training/llama7b_tp2_1024g.toml ecmp,plts-counter,adaptive,drill 1
uet=experiments/ai-training/llama7b_tp2_256g_uet.toml
sweep "$uet" "$all" 1
sweep "$uet" ecmp,spray,reps,whack-a-mole,plts-counter,adaptive,drill 2,3
"$py" "$here/analyze.py" "$out" "$here"
