#!/usr/bin/env bash
# PLTS (the PLTS paper) vs ECMP (see README.md), two parts:
#   fat_k4: ConWeave's k = 4 fat tree, AliStorage 50 % load, GBN and IRN receivers (FCT slowdown)
#   perm:   long flows, a permutation on the 1:1 k = 8 fat tree, 10 seeds, reordering-tolerant
#           IRN and the uet transport (throughput)
#   layers: perm runs again with port_bytes.csv (bytes per switch port, every tier): balance and
#           queueing at the aggregation -> core layer (layers.csv); uet seeds 1-3, IRN the PLTS
#           variants on seed 1 (what the CPU allowed)
#   RUNS="fat_k4 perm layers" (default all three)   experiments/plts/run.sh
# Builds nothing: run scripts/build and `cargo build --release -p rdma-lb` first. Sweeps into
# out/experiments/plts/ (resumable: finished runs are skipped, -j 1), then writes the tables and
# figures beside this script (fat_k4: results.csv, slowdown_*.png; perm: throughput.csv,
# throughput.png) and prints the tables.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
py="${RDMA_LB_CACHE:-$HOME/.cache/rdma-lb}/venv/bin/python"
out=out/experiments/plts
algs=ecmp,plts-random,plts-counter,plts-rr
for part in ${RUNS:-fat_k4 perm layers}; do
  case $part in
    fat_k4)
      for t in gbn irn; do
        cfg="$here/fat_k4.toml"
        [ $t = irn ] && cfg="$here/fat_k4_irn.toml"
        target/release/rdma-lb sweep --config "$cfg" --lb "$algs" --seed 1,2 -j 1 --out-root "$out/$t"
        "$py" -m plots slowdown "$out/$t"/*/ -o "$here/slowdown_$t.png" \
          --title "k=4 fat tree, AliStorage 50 % load, $t receivers" >/dev/null
      done
      rm -f "$here"/slowdown_*.pdf # keep the PNGs (and their CSV tables)
      "$py" "$here/analyze.py" "$here/results.csv" "gbn=$out/gbn" "irn=$out/irn"
      ;;
    perm)
      seeds=1,2,3,4,5,6,7,8,9,10
      for t in irn uet; do
        target/release/rdma-lb sweep --config "$here/perm_k8_$t.toml" --lb "$algs" --seed "$seeds" \
          -j 1 --out-root "$out/perm_$t"
      done
      "$py" "$here/analyze_perm.py" "$here" "irn=$out/perm_irn" "uet=$out/perm_uet"
      ;;
    layers)
      target/release/rdma-lb sweep --config "$here/perm_k8_uet_layers.toml" --lb "$algs" \
        --seed 1,2,3 -j 1 --out-root "$out/perm_uet_layers"
      target/release/rdma-lb sweep --config "$here/perm_k8_irn_layers.toml" \
        --lb plts-random,plts-counter,plts-rr --seed 1 -j 1 --out-root "$out/perm_irn_layers"
      "$py" "$here/analyze_layers.py" "$here" "irn=$out/perm_irn_layers" "uet=$out/perm_uet_layers"
      ;;
    *) echo "run.sh: unknown part $part (fat_k4, perm, layers)" >&2; exit 2 ;;
  esac
done
