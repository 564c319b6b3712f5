#!/usr/bin/env bash
# Writes the committed TOML configs of this experiment (run once by hand when the grid changes;
# run.sh uses the committed files).
#   main grid: {ring AllReduce, AlltoAll} at 300 MB per rank x DCQCN (T_I, T_D) settings;
#   size sweep at T_I 900 us / T_D 4 us: 1 MiB (AllReduce) / 2 MiB (AlltoAll), 16 MiB, 64 MB.
set -euo pipefail
cd "$(dirname "$0")"

# write NAME KIND SIZE T_I T_D STOP [RATE_TRACE]
write() {
  local name=$1 kind=$2 size=$3 ti=$4 td=$5 stop=$6 rate=${7:-}
  local trace=""
  [ -n "$rate" ] && trace=$'\n'"rate_trace = \"$rate\"  # rate.txt / retx.txt: the Fig. 1-style time series"
  cat > "$name.toml" <<TOML
# Themis ("Enabling Packet Spraying over Commodity RNICs with In-Network Support", §5):
# $kind on a 16 x 16 leaf-spine, 1:1, all links 400 Gbps / 1 us, 64 MB switch buffer,
# NIC-SR + DCQCN + PFC; 256 NICs in 16 groups of 16, one NIC of every group under each ToR;
# all 16 groups start at once; metric = the slowest group's CCT.
# Size: $size per rank (the paper: 300 MB; README.md says how it is read).
# DCQCN: T_I (rp_timer) = $ti, T_D (rate_decrease_interval) = $td; AI/HAI and the ECN
# thresholds are ConWeave's 100 Gbps values x4 (the paper gives neither).
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
stop = "$stop"$trace
TOML
}

for coll in allreduce alltoall; do
  if [ $coll = allreduce ]; then kind=allreduce-ring; small=1MiB; else kind=alltoall; small=2MiB; fi
  # 300 MB per rank, four DCQCN points: the recommended one, "smaller T_I, larger T_D",
  # ConWeave's 300/4 and an extreme AR-friendly one.
  # The recommended point was run before the rate trace existed (no trace: its sweep
  # directories stay valid); the others sample every 100 us.
  # More extreme points (T_I 5 us with T_D 200 and 400 us) look for the paper's "extreme values
  # degrade AR again"; each also with PFC off (`_nopfc`).
  for dc in "900 4" "55 50" "300 4" "10 100" "5 200" "5 400"; do
    set -- $dc
    rate=100us
    [ "$1" = 900 ] && rate=""
    write "${coll}_300MB_ti$1_td$2" $kind 300MB "$1us" "$2us" 2s $rate
    if [ "$1" = 5 ]; then
      write "${coll}_300MB_ti$1_td$2_nopfc" $kind 300MB "$1us" "$2us" 2s $rate
      sed -i 's/^pfc = true$/pfc = false/; s/^# NIC-SR + DCQCN + PFC;/# NIC-SR + DCQCN, PFC off;/' "${coll}_300MB_ti$1_td$2_nopfc.toml"
    fi
  done
  # size sweep at the recommended setting (the 300 MB point is in the grid above)
  write "${coll}_ti900_td4" $kind $small 900us 4us 1s
  write "${coll}_16MiB_ti900_td4" $kind 16MiB 900us 4us 1s 10us
  write "${coll}_64MB_ti900_td4" $kind 64MB 900us 4us 1s 20us
done
