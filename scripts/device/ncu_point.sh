#!/usr/bin/env bash
# Runs ON the lent GPU machine after scripts/device/h200.sh (same bundle): Nsight Compute's
# SpeedOfLight, MemoryWorkloadAnalysis, ComputeWorkloadAnalysis, WarpStateStats and LaunchStats
# sections of one launch of each provider of ATTNPROF_NCU_PROVIDERS at one point,
# ATTNPROF_NCU_POINT (attnprof trace's shape options), each into $OUT/ncu-<provider>.txt.
# Example: ATTNPROF_NCU_PROVIDERS="cuda.mla.decode cuda.naive" ATTNPROF_NCU_POINT="--model
# deepseek-v3-mla-decode --dtype bf16 --mask causal-br --seq 1 --kv-seq 16k --batch 64".
# ATTNPROF_NCU_METRICS adds `--metrics` (a list, or regex:...): the stall reasons, say.
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis
  --section WarpStateStats --section LaunchStats)
[[ -n ${ATTNPROF_NCU_METRICS:-} ]] && sections+=(--metrics "$ATTNPROF_NCU_METRICS")
for provider in ${ATTNPROF_NCU_PROVIDERS:?name the providers}; do
  # shellcheck disable=SC2086 # the point is a list of options
  timeout 150 ncu --clock-control none --profile-from-start off "${sections[@]}" \
    "$pkg/bin/attnprof" trace --providers "$provider" ${ATTNPROF_NCU_POINT:?name the point} \
    --ncu-target >"$out/ncu-$provider.txt" 2>&1
  echo "== ncu $provider: exit $?"
done
