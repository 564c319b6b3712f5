#!/usr/bin/env bash
# REPS under failures at the paper's scale (the REPS paper, §4.3 and Figs. 2b-4b):
# one-way black-holed aggregation -> core pipes (1 / 3 / 6 % of them, gen_failures.py) at k = 8
# and k = 16, the artifact's half-speed links at k = 16, a failure in the middle of the run,
# the symmetric k = 16 case on 10 seeds, and the RTT histograms of 1:1 / 8:1 / failures;
# ECMP / spray / REPS, uet with trimming. Then analyze_failures.py (results_failures.csv,
# figures, the README tables).
#
# A resumable sweep (rdma-lb sweep -j 1: finished runs, those with summary.json, are skipped);
# raw outputs in out/experiments/reps_failures/. Sim seeds only: the permutation is the
# artifact's seed-42 one (perm_*_seed42.txt) in every run.
#   RUNS="k8 k8sym k8os k16fail6 k16fail13 k16mid k16sym k16deg k16os k8fail2 k8osup k16fail052"
#   (the default, in order; the last three: the 2 % share at k = 8, the artifact's 8:1 shape on
#   seeds 1-10, the 0.5 % and 2 % shares at k = 16, spraying and REPS; their ECMP only with
#   ECMP_SEEDS_K16_052=1,...)
#   SEEDS=1,2,3,4,5 (k = 8)   SEEDS_SYM=1,...,10 (1:1, k = 8)   SEEDS_K16_SYM=1,...,10
#   SEEDS_K16_FAIL6=1,...,5   SEEDS_K16_MID=1,...,5   SEEDS_K16_DEG=1   SEEDS_K16_LOW=1,...,5
#   (k16fail13)   ECMP_SEEDS_K16=1,...,5 (ECMP at k = 16)
# The defaults are the committed results: what fitted this machine's CPU on the day (README).
# Needs build/rdma-lb-scenario (scripts/build) and target/release/rdma-lb (cargo build
# --release -p rdma-lb).
set -euo pipefail
cd "$(dirname "$0")/../.."
exp=experiments/reps
out=out/experiments/reps_failures
cli=target/release/rdma-lb
py=${PYTHON:-$HOME/.cache/rdma-lb/venv/bin/python}
groups=${RUNS:-k8 k8sym k8os k16fail6 k16fail13 k16mid k16sym k16deg k16os k8fail2 k8osup k16fail052}
seeds=${SEEDS:-1,2,3,4,5}
seeds_sym=${SEEDS_SYM:-1,2,3,4,5,6,7,8,9,10}
seeds16_fail6=${SEEDS_K16_FAIL6:-1,2,3,4,5}
seeds16_mid=${SEEDS_K16_MID:-1,2,3,4,5}
seeds16_deg=${SEEDS_K16_DEG:-1}
seeds16_low=${SEEDS_K16_LOW:-1,2,3,4,5}
seeds16_sym=${SEEDS_K16_SYM:-1,2,3,4,5,6,7,8,9,10}
ecmp16=${ECMP_SEEDS_K16:-1,2,3,4,5}
[ -x "$cli" ] || { echo "run_failures.sh: no $cli (cargo build --release -p rdma-lb)" >&2; exit 2; }
[ -x build/rdma-lb-scenario ] || { echo "run_failures.sh: no build/rdma-lb-scenario (scripts/build)" >&2; exit 2; }

# REPS: the artifact's 65535 entropies, exploring one BDP (42 packets at 100 Gbps), its base RTT
# for the RTT guard (14022 ns between pods; 23462 ns on the 8:1 fabric), told the fabric trims.
reps="num_entropies = 65535, explore_pkts = 42, base_rtt_ns = 14022, trimming = true"
reps_os="num_entropies = 65535, explore_pkts = 42, base_rtt_ns = 23462, trimming = true"

# sweep CONFIGS LBS SEEDS [REPS_PARAMS]
sweep() {
  local cfgs=$1 lbs=$2 s=$3 params=${4:-}
  local list=()
  for c in $cfgs; do list+=(--config "$exp/$c.toml"); done
  if [ -n "$params" ]; then
    "$cli" sweep "${list[@]}" --lb "$lbs" --seed "$s" --lb-params "$params" -j 1 --out-root "$out"
  else
    "$cli" sweep "${list[@]}" --lb "$lbs" --seed "$s" -j 1 --out-root "$out"
  fi
}

for g in $groups; do
  case $g in
    k8)
      sweep "uet_k8_oneway_1pct uet_k8_oneway_3pct uet_k8_oneway_6pct" ecmp,spray "$seeds"
      sweep "uet_k8_oneway_1pct uet_k8_oneway_3pct uet_k8_oneway_6pct" reps "$seeds" "$reps"
      sweep uet_k8_oneway_mid spray "$seeds"
      sweep uet_k8_oneway_mid reps "$seeds" "$reps"
      ;;
    k8sym)
      sweep uet_k8_1to1_rtt spray "$seeds_sym"
      sweep uet_k8_1to1_rtt reps "$seeds_sym" "$reps"
      sweep uet_k8_1to1_rtt ecmp 1
      ;;
    k8os)
      sweep uet_k8_8to1_rtt ecmp,spray 1
      sweep uet_k8_8to1_rtt reps 1 "$reps_os"
      ;;
    k16fail6)
      sweep uet_k16_oneway_6pct spray "$seeds16_fail6"
      sweep uet_k16_oneway_6pct reps "$seeds16_fail6" "$reps"
      sweep uet_k16_oneway_6pct ecmp "$ecmp16"
      ;;
    k16mid)
      sweep uet_k16_oneway_mid spray "$seeds16_mid"
      sweep uet_k16_oneway_mid reps "$seeds16_mid" "$reps"
      ;;
    k16sym)
      sweep uet_k16_1to1_rtt spray "$seeds16_sym"
      sweep uet_k16_1to1_rtt reps "$seeds16_sym" "$reps"
      sweep uet_k16_1to1_rtt ecmp "$ecmp16"
      ;;
    k16deg)
      sweep uet_k16_degraded spray "$seeds16_deg"
      sweep uet_k16_degraded reps "$seeds16_deg" "$reps"
      sweep uet_k16_degraded ecmp "$ecmp16"
      ;;
    k16os)
      sweep uet_k16_8to1_rtt ecmp,spray 1
      sweep uet_k16_8to1_rtt reps 1 "$reps_os"
      ;;
    k16fail13)
      sweep "uet_k16_oneway_1pct uet_k16_oneway_3pct" spray "$seeds16_low"
      sweep "uet_k16_oneway_1pct uet_k16_oneway_3pct" reps "$seeds16_low" "$reps"
      sweep "uet_k16_oneway_1pct uet_k16_oneway_3pct" ecmp "$ecmp16"
      ;;
    k8fail2)
      sweep uet_k8_oneway_2pct ecmp,spray "$seeds"
      sweep uet_k8_oneway_2pct reps "$seeds" "$reps"
      ;;
    k8osup)
      # the artifact's 8:1 (fewer uplinks, every link 100 Gbps; experiments/reps/run_uet.sh runs
      # its seed 42): base RTT 14022 ns between pods, as the 1:1 fabric
      sweep uet_k8_8to1_uplinks ecmp,spray "$seeds_sym"
      sweep uet_k8_8to1_uplinks reps "$seeds_sym" "$reps"
      ;;
    k16fail052)
      sweep "uet_k16_oneway_0p5pct uet_k16_oneway_2pct" spray "$seeds16_low"
      sweep "uet_k16_oneway_0p5pct uet_k16_oneway_2pct" reps "$seeds16_low" "$reps"
      # ECMP only when asked (ECMP_SEEDS_K16_052=1,...): it never finishes at any share
      if [ -n "${ECMP_SEEDS_K16_052:-}" ]; then
        sweep "uet_k16_oneway_0p5pct uet_k16_oneway_2pct" ecmp "$ECMP_SEEDS_K16_052"
      fi
      ;;
    *) echo "run_failures.sh: unknown group $g" >&2; exit 2 ;;
  esac
done
"$py" $exp/analyze_failures.py "$out" $exp
