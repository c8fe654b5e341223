#!/usr/bin/env bash
# Runs ON the lent GPU machine after scripts/device/h200.sh (same bundle): Nsight Compute's
# SpeedOfLight, MemoryWorkloadAnalysis, WarpStateStats, Occupancy and LaunchStats sections of one
# launch of each decode kernel in ATTNPROF_NCU_RUNS at the decode shape of
# bench/results/h200/2026-12-01-decode (B 64, 32/8 heads, D 128, bf16, one query token, KV 32k).
# A run is PROVIDER:PAGE[:PIPELINE[:L2]] (PAGE 0: contiguous; PIPELINE and L2: cuda.decode's
# cuda.decode's settings pipeline and l2); the default compares cuda.decode contiguous and in pages of 16 with
# cudnn.sdpa's paged kernel (why a paged cache read slower). Each run's report goes to
# $OUT/ncu-<provider>-page<P>[-<pipeline>[-<l2>]].txt, or with ATTNPROF_NCU_LOG=1 into $OUT/h200.log
# (to keep a call's files under 8).
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats
  --section Occupancy --section LaunchStats)
for run in ${ATTNPROF_NCU_RUNS:-cuda.decode:0 cuda.decode:16 cudnn.sdpa:16}; do
  IFS=: read -r provider page pipeline l2 <<<"$run"
  name=ncu-$provider-page$page${pipeline:+-$pipeline}${l2:+-$l2}
  target=$out/$name.txt
  [[ ${ATTNPROF_NCU_LOG:-0} == 1 ]] && target=$out/h200.log && echo "== $name" >>"$target"
  sets=()  # cuda.decode's settings (a --set for another provider is refused)
  [[ $provider == cuda.decode ]] &&
    sets=(--set "cuda.decode.pipeline=${pipeline:-auto}" --set "cuda.decode.l2=${l2:-none}")
  timeout 200 ncu --clock-control none \
    --profile-from-start off "${sections[@]}" \
    "$pkg/bin/attnprof" trace --providers "$provider" --batch 64 --heads 32 --kv-heads 8 \
    --head-dim 128 --dtype bf16 --mask causal-br --seq 1 --kv-seq 32k --page-size "$page" \
    "${sets[@]}" --ncu-target >>"$target" 2>&1
  echo "== $name: exit $?"
done
