#!/usr/bin/env bash
# REPS on the uet transport: the artifact's Fig. 2 setup (1024 hosts, 2-tier,
# 400 Gbps, 4 MiB; also with trimming, spray and REPS), the k = 8 fat-tree (128 hosts, 100 Gbps, 2 MiB) and the paper's scale
# (k = 16, 1024 hosts, 100 Gbps, 4 MiB), each 1:1, 8:1 and with failed aggregation-core links,
# x {ecmp, spray, reps}; then analyze_uet.py (results_uet.csv, fct_cdf_uet.png, the README
# tables). Needs build/rdma-lb-scenario (scripts/build). Resumable: finished runs are skipped.
# Each run's CPU time and peak RSS (GNU time) go to <run dir>/time.txt.
#   RUNS="fig2 fig2seeds fig2trim k8 k16" (default all)   experiments/reps/run_uet.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
exp=experiments/reps
out=out/experiments/reps_uet
bin=build/rdma-lb-scenario
py=${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}
groups=${RUNS:-fig2 fig2seeds fig2trim k8 k16}
[ -x "$bin" ] || { echo "run_uet.sh: no $bin (scripts/build)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "run_uet.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }
mkdir -p "$out"

# run CONFIG LB [REPS_PARAMS] [SEED]   (seed 42, the artifact's, unless given)
run() {
  local stem dir seed=${4:-42}
  stem=$(basename "$1" .toml)
  dir=$out/$stem-$2-s$seed
  if [ -f "$dir/summary.json" ]; then return; fi
  local params=()
  if [ -n "${3:-}" ]; then params=(--lbParams="$3"); fi
  mkdir -p "$dir"
  /usr/bin/time -f "cpu_s %U\nsys_s %S\nmax_rss_kb %M" -o "$dir/time.txt" \
    "$bin" "$exp/$1" --lb="$2" "${params[@]}" --seed="$seed" --out="$dir" --progress=off
}

# REPS: the artifact's 65535 entropies; exploration of one BDP in packets; base RTT for its
# RTT guard; trimming as the fabric has it.
for g in $groups; do
  case $g in
    fig2)
      for lb in ecmp spray; do run uet_fig2_1024h_400g.toml $lb; done
      run uet_fig2_1024h_400g.toml reps "num_entropies = 65535, explore_pkts = 100, base_rtt_ns = 8337"
      ;;
    fig2seeds)
      # ECMP's collisions follow the seed (htsim's switch salts and shuffles): seeds 1-3;
      # spraying without trimming loses a packet late in some seeds only: seeds 1-15
      for s in 1 2 3; do run uet_fig2_1024h_400g.toml ecmp "" $s; done
      for s in $(seq 1 15); do run uet_fig2_1024h_400g.toml spray "" $s; done
      ;;
    fig2trim)
      run uet_fig2_1024h_400g_trim.toml spray
      run uet_fig2_1024h_400g_trim.toml reps \
        "num_entropies = 65535, explore_pkts = 100, base_rtt_ns = 8337, trimming = true"
      ;;
    k8|k16)
      variants="1to1 8to1 failures"
      # k = 8 also as the artifact builds 8:1 (fewer uplinks) and "fails" links (half speed)
      if [ $g = k8 ]; then variants="$variants 8to1_uplinks degraded"; fi
      for v in $variants; do
        rtt=14022
        if [ $v = 8to1 ]; then rtt=23462; fi
        for lb in ecmp spray; do run uet_${g}_$v.toml $lb; done
        run uet_${g}_$v.toml reps \
          "num_entropies = 65535, explore_pkts = 42, base_rtt_ns = $rtt, trimming = true"
      done
      ;;
    *) echo "run_uet.sh: unknown group $g (fig2, fig2seeds, fig2trim, k8, k16)" >&2; exit 2 ;;
  esac
done
"$py" $exp/analyze_uet.py "$out" $exp
"$py" $exp/drops.py $exp   # drops.csv: losses per run (the paper's "fewer dropped packets")
