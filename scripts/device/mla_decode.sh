#!/usr/bin/env bash
# Runs ON the lent GPU machine after scripts/device/h200.sh (same bundle): cuda.mla.decode's
# alternatives beside its default, in one call. Into $OUT:
#   mla-overlap32.jsonl  the deepseek-v3-mla-decode shapes at B 1, 64, 128, KV 4k, 16k, 32k with
#                        --set cuda.mla.decode.pipeline=overlap32 (the default pipeline is h200.sh's grid)
#   mla-split-C.jsonl    B 1 and 16, KV 4k and 32k with --set cuda.mla.decode.split=1:C for C in 64, 128
#   mla-trace-b1.txt     attnprof trace at B 1, KV 32k: the decode kernel's and the merge's times
# and compute-sanitizer racecheck of the overlapped pipeline into h200.log.
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
mla=(--model deepseek-v3-mla-decode --dtype bf16 --mask causal-br --seq 1
  --providers cuda.mla.decode)
timeout 120 "$pkg/bin/attnprof" run "${mla[@]}" --set cuda.mla.decode.pipeline=overlap32 --no-history \
  --kv-seq 4k,16k,32k --batch 1,64,128 --out "$out/mla-overlap32.jsonl" >"$out/mla.log" 2>&1
echo "== mla overlap32: exit $?"
for c in 64 128; do
  timeout 120 "$pkg/bin/attnprof" run "${mla[@]}" --set "cuda.mla.decode.split=1:$c" --no-history --kv-seq 4k,32k \
    --batch 1,16 --out "$out/mla-split-$c.jsonl" >>"$out/mla.log" 2>&1
  echo "== mla split 1:$c: exit $?"
done
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 \
  "$pkg/bin/test_gpu" --gtest_filter='CudaMlaDecode.Relaunch*' 2>&1 | grep -E "SUMMARY|PASSED|FAILED"
timeout 120 "$pkg/bin/attnprof" trace "${mla[@]}" --kv-seq 32k --batch 1 >"$out/mla-trace-b1.txt" 2>&1
echo "== mla trace: exit $?"
