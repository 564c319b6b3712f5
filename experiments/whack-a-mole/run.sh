#!/usr/bin/env bash
# Whack-a-Mole experiments (see README.md). Builds nothing: run scripts/build and
#   cargo build --release -p rdma-lb -p rdma-lb-core --example whack_deviation \
#     --example whack_exhaustive
# first. Runs into out/experiments/whack-a-mole/ (resumable: finished runs are skipped), then
# prints (a) the spray counter's window deviation vs log2 m (Monte Carlo for l = 4..12 beside
# random spraying, and exhaustive for l <= 8: every profile and seed; fails if the bound is
# exceeded), (b) the degraded-spine table and
# (c) the collectives over degraded spines, and writes results.csv, deviation.csv, share.png,
# results_collectives.csv and collectives.png beside this script. JOBS=N runs N points of (c)
# at once (default 1); ONLY=a|b|c runs one part.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
py="${RDMA_LB_CACHE:-$HOME/.cache/rdma-lb}/venv/bin/python"
out=out/experiments/whack-a-mole
mkdir -p "$out"

only=${ONLY:-}
if [ -z "$only" ] || [ "$only" = a ]; then
echo "== (a) worst window deviation per path (packets), 500 random profiles + seeds per l"
target/release/examples/whack_deviation 500 1 | tee "$here/deviation.csv" | column -s, -t
echo "== (a) exhaustive for l <= 8: every profile (interval path) and every seed (s_a, s_b)"
target/release/examples/whack_exhaustive 8 | tee "$here/deviation_exhaustive.csv" | column -s, -t
fi

if [ -z "$only" ] || [ "$only" = b ]; then
echo
echo "== (b) one spine at a quarter rate"
pi="--ns3::RdmaSwitch::PathIndexRouting=true"
# name | config | algorithm | lb params | extra program arguments. Config "irn" = the
# reference IRN (go back on any hole), "ooo8" = IRN going back only 8 packets past a hole.
points=(
  "ecmp|irn|ecmp||"
  "spray|irn|spray||"
  "reps|irn|reps||"
  "hopper|irn|hopper||"
  "whack-a-mole|irn|whack-a-mole||"
  "wam-periodic|irn|whack-a-mole|recovery_rule = \"periodic\"|"
  "wam-destination|irn|whack-a-mole|profile_scope = \"destination\"|"
  "wam-rtt0.25|irn|whack-a-mole|rtt_factor = 0.25|"
  "wam-ecn0.5|irn|whack-a-mole|ecn_factor = 0.5|"
  "wam-recovery1ms|irn|whack-a-mole|recovery_interval_ns = 1000000|"
  "wam-update50us|irn|whack-a-mole|update_interval_ns = 50000|"
  "wam-path-index-4|irn|whack-a-mole|num_paths = 4|$pi"
  "spray-path-index|irn|spray||$pi"
  "ecmp-ooo8|ooo8|ecmp||"
  "spray-ooo8|ooo8|spray||"
  "whack-a-mole-ooo8|ooo8|whack-a-mole||"
  "wam-path-index-4-ooo8|ooo8|whack-a-mole|num_paths = 4|$pi"
)
args=()
for p in "${points[@]}"; do
  IFS='|' read -r name conf lb params extra <<<"$p"
  cfg="$here/degraded_spine.toml"
  [ "$conf" = ooo8 ] && cfg="$here/degraded_spine_ooo8.toml"
  dir="$out/$name"
  args+=("$name=$dir")
  [ -f "$dir/summary.json" ] && continue
  cmd=(target/release/rdma-lb run "$cfg" --lb "$lb" --out "$dir" --progress off)
  [ -n "$params" ] && cmd+=(--lb-params "$params")
  [ -n "$extra" ] && cmd+=(-- "$extra")
  "${cmd[@]}"
done
"$py" "$here/analyze.py" "$out" "$here/results.csv" "$here/share.png" "${args[@]}"
rm -f "$here/share.pdf" # keep the PNG only
fi

if [ -z "$only" ] || [ "$only" = c ]; then
echo
echo "== (c) 16 ring AllReduces of 16 MiB on a 16 x 16 leaf-spine, 4 of 16 spines at 100 G, uet"
target/release/rdma-lb sweep --config "$here/collective_slow_spines.toml" \
  --lb whack-a-mole,hopper,reps,spray,ecmp --seed 1,2,3 -j "${JOBS:-1}" \
  --out-root "$out/collectives"
# Whack-a-Mole with one profile per (NIC, destination): a ring step's queue pair inherits what the
# previous steps to the same neighbour learned (each step is a new 1 MiB queue pair).
target/release/rdma-lb sweep --config "$here/collective_slow_spines.toml" --lb whack-a-mole \
  --lb-params 'profile_scope = "destination"' --seed 1,2,3 -j "${JOBS:-1}" \
  --out-root "$out/collectives"
"$py" "$here/analyze_collectives.py" "$out/collectives" "$here/results_collectives.csv" \
  "$here/collectives.png"
rm -f "$here/collectives.pdf" # keep the PNG only
fi
