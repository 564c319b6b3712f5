#!/usr/bin/env bash
# Writes the ablation's TOML configs from the main grid's AlltoAll at 300 MB per rank and the
# recommended DCQCN setting (../alltoall_300MB_ti900_td4.toml): one change each (run once by
# hand when the ablation changes; run.sh uses the committed files).
set -euo pipefail
cd "$(dirname "$0")"
base=../alltoall_300MB_ti900_td4.toml
# variant NAME COMMENT SED-EXPRESSION...
variant() {
  local name=$1 comment=$2
  shift 2
  {
    printf '# Ablation of the Themis AlltoAll at 300 MB per rank, T_I 900 us / T_D 4 us (README.md):\n'
    printf '# %s\n' "$comment"
    printf '#   rdma-lb run experiments/themis-collectives/ablation/%s.toml\n' "$name"
    grep -v '^#' "$base" | sed "$@"
  } > "$name.toml"
}
variant alltoall_300MB_hpcc_ecn \
  "HPCC-lineage DCQCN/ECN values as SimAI ships them for 400 G (Kmin 800 KB, Kmax 3200 KB, AI 50 Mb/s, HAI 100 Mb/s) instead of ConWeave's x4." \
  -e 's/kmin = "400KB", kmax = "1600KB"/kmin = "800KB", kmax = "3200KB"/' \
  -e 's/^rate_ai = .*/rate_ai = "50Mbps"/' -e 's/^rate_hai = .*/rate_hai = "100Mbps"/'
variant alltoall_pairwise_300MB \
  "The AlltoAll issued as 15 pairwise-shifted permutation steps (kind alltoall-pairwise), as collective libraries issue it." \
  -e 's/^kind = "alltoall"/kind = "alltoall-pairwise"/'
variant alltoall_300MB_alpha_half \
  "The MMU's ingress dynamic-threshold alpha 1/2 instead of 1/16: a queue pauses its upstream only above half the free buffer." \
  -e 's/^buffer = "64MB"/buffer = "64MB"\npfc_alpha = 0.5/'
variant alltoall_300MB_buffer_32MB \
  "A 32 MB switch buffer instead of the paper's 64 MB." \
  -e 's/^buffer = "64MB"/buffer = "32MB"/'
variant alltoall_300MB_ar_sampled \
  "AR on port loads sampled every 10 us (load_sample_ns) instead of exact, instant queue lengths." \
  -e 's/^name = "ecmp"/name = "adaptive"\nparams = "load_sample_ns = 10000"/'
variant alltoall_300MB_ar_flowlet \
  "AR per flowlet (a flow keeps its port until a 5 us pause, flowlet_gap_ns) instead of per packet." \
  -e 's/^name = "ecmp"/name = "adaptive"\nparams = "flowlet_gap_ns = 5000"/'
variant alltoall_300MB_random_psn \
  "Themis with a random initial PSN per queue pair (initial_psn = \"random\") instead of PSN 0 for every QP." \
  -e 's/^name = "ecmp"/name = "themis"\nparams = "initial_psn = \\"random\\""/'
variant alltoall_300MB_pfc_off \
  "PFC off: a lossy fabric, drops recovered by NIC-SR (the paper's section 5 never mentions PFC)." \
  -e 's/^pfc = true/pfc = false/'
