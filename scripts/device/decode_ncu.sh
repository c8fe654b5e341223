#!/usr/bin/env bash
# Runs ON the lent GPU machine after scripts/device/h200.sh (same bundle): Nsight Compute's view of
# the decode step that bench/results/h200/2026-12-01-decode reports (B 64, 32/8 heads, D 128,
# bf16, one query token, KV 32k), contiguous and in pages of 16, for cuda.decode and cudnn.sdpa:
# `attnprof trace --ncu` (each kernel's duration, DRAM and tensor-pipe throughput) into
# $OUT/ncu.log.
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
for page in 0 16; do
  timeout 200 "$pkg/bin/attnprof" trace --providers cuda.decode,cudnn.sdpa --batch 64 --heads 32 \
    --kv-heads 8 --head-dim 128 --dtype bf16 --mask causal-br --seq 1 --kv-seq 32k \
    --page-size "$page" --ncu 2>&1 | tee -a "$out/ncu.log"
done
