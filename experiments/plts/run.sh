#!/usr/bin/env bash
# PLTS (the PLTS paper) vs ECMP on ConWeave's k = 4 fat tree (see README.md). Builds nothing: run
# scripts/build and `cargo build --release -p rdma-lb` first. Sweeps into
# out/experiments/plts/ (resumable), then writes results.csv, slowdown_gbn.png and
# slowdown_irn.png beside this script and prints the table.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
py="${RDMA_LB_CACHE:-$HOME/.cache/rdma-lb}/venv/bin/python"
out=out/experiments/plts
algs=ecmp,plts-random,plts-counter,plts-rr
seeds=1,2
for t in gbn irn; do
  cfg="$here/fat_k4.toml"
  [ $t = irn ] && cfg="$here/fat_k4_irn.toml"
  target/release/rdma-lb sweep --config "$cfg" --lb "$algs" --seed "$seeds" -j 1 --out-root "$out/$t"
  "$py" -m plots slowdown "$out/$t"/*/ -o "$here/slowdown_$t.png" \
    --title "k=4 fat tree, AliStorage 50 % load, $t receivers" >/dev/null
done
rm -f "$here"/slowdown_*.pdf # keep the PNGs (and their CSV tables)
"$py" "$here/analyze.py" "$here/results.csv" "gbn=$out/gbn" "irn=$out/irn"
