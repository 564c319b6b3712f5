#!/usr/bin/env bash
# Writes the committed TOML configs of this experiment (run once by hand when the grid changes;
# run.sh uses the committed files). Grid: collective x DCQCN (T_I, T_D).
# Sizes: SIZE_ALLREDUCE / SIZE_ALLTOALL (per rank).
set -euo pipefail
cd "$(dirname "$0")"
SIZE_ALLREDUCE=${SIZE_ALLREDUCE:-1MiB}
SIZE_ALLTOALL=${SIZE_ALLTOALL:-2MiB}
for coll in allreduce alltoall; do
  if [ $coll = allreduce ]; then kind=allreduce-ring; size=$SIZE_ALLREDUCE; else kind=alltoall; size=$SIZE_ALLTOALL; fi
  # AllReduce at 1 MiB: every flow (one ring step, 64 KiB) lasts ~1.4 us < T_D, so DCQCN never
  # cuts the rate and T_I/T_D cannot matter; only AlltoAll gets the second setting.
  if [ $coll = allreduce ]; then dcs=("900us 4us"); else dcs=("900us 4us" "55us 50us"); fi
  for dc in "${dcs[@]}"; do
    set -- $dc
    ti=$1 td=$2
    name=${coll}_ti${ti%us}_td${td%us}
    cat > $name.toml <<TOML
# Themis (seed 001 §5), $coll: 16 x 16 leaf-spine, 1:1, all links 400 Gbps / 1 us, 64 MB
# switch buffer, NIC-SR + DCQCN; 256 NICs in 16 groups of 16, one NIC of every group under
# each ToR; all 16 groups start the collective at once; metric = the slowest group's CCT.
# Scaled: $size per rank (the paper: 300 MB), to fit this machine's CPU budget.
# DCQCN: T_I (rp_timer) = $ti, T_D (rate_decrease_interval) = $td; AI/HAI and the ECN
# thresholds are ConWeave's 100 Gbps values x4 (as configs/themis_16x16_400g_allreduce.toml;
# the paper gives neither).
#   rdma-lb run experiments/themis-collectives/$name.toml --lb themis

[topology]
leaf_spine = { leaves = 16, hosts_per_leaf = 16, spines = 16, host_rate = "400Gbps", fabric_rate = "400Gbps", delay = "1us" }

[[workload.collective]]
kind = "$kind"
ranks = 16
groups = 16
placement = "one-per-tor"
size = "$size"
start = "0ns"

[transport]
recovery = "nic-sr"
pfc = true
cc = "dcqcn"
buffer = "64MB"
ecn_thresholds = [
  { rate = "400Gbps", kmin = "400KB", kmax = "1600KB", pmax = 0.2 },
]
rate_ai = "160Mbps"
rate_hai = "400Mbps"
rp_timer = "$ti"
rate_decrease_interval = "$td"

[lb]
name = "ecmp"

[run]
seed = 1
stop = "1s"
TOML
  done
done
