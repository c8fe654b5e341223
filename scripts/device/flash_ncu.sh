#!/usr/bin/env bash
# Runs ON the lent GPU machine after scripts/device/h200.sh (same bundle): what stands between
# cuda.flash and cuDNN's forward. Nsight Compute's SpeedOfLight, ComputeWorkloadAnalysis,
# WarpStateStats, Occupancy and LaunchStats sections of one launch of each at fa-bench's D 128,
# N 8192 point (B 2, 16 heads, bf16), no mask and causal, each into
# $OUT/ncu-<provider>-<mask>.txt. ATTNPROF_NCU_FLASH_PROVIDERS overrides the providers.
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats
  --section Occupancy --section LaunchStats)
for provider in ${ATTNPROF_NCU_FLASH_PROVIDERS:-cuda.flash cudnn.sdpa}; do
  for mask in none causal; do
    timeout 150 ncu --clock-control none --profile-from-start off "${sections[@]}" \
      "$pkg/bin/attnprof" trace --providers "$provider" --batch 2 --heads 16 --head-dim 128 \
      --dtype bf16 --mask "$mask" --seq 8192 --ncu-target >"$out/ncu-$provider-$mask.txt" 2>&1
    echo "== ncu $provider $mask: exit $?"
  done
done
