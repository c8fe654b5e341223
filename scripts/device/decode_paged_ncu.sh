#!/usr/bin/env bash
# Runs ON the lent GPU machine after scripts/device/h200.sh (same bundle): why cuda.decode reads a
# paged cache slower than a contiguous one. Nsight Compute's SpeedOfLight, MemoryWorkloadAnalysis,
# WarpStateStats, Occupancy and LaunchStats sections of one launch of its tensor-core kernel at
# the decode shape of bench/results/h200/2026-12-01-decode (B 64, 32/8 heads, D 128, bf16, one
# query token, KV 32k), contiguous and in pages of 16, and of cudnn.sdpa's paged kernel for
# comparison, each into $OUT/ncu-<provider>-page<P>.txt.
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats
  --section Occupancy --section LaunchStats)
for run in "cuda.decode 0" "cuda.decode 16" "cudnn.sdpa 16"; do
  read -r provider page <<<"$run"
  timeout 200 ncu --clock-control none --profile-from-start off "${sections[@]}" \
    "$pkg/bin/attnprof" trace --providers "$provider" --batch 64 --heads 32 --kv-heads 8 \
    --head-dim 128 --dtype bf16 --mask causal-br --seq 1 --kv-seq 32k --page-size "$page" \
    --ncu-target >"$out/ncu-$provider-page$page.txt" 2>&1
  echo "== ncu $provider page $page: exit $?"
done
