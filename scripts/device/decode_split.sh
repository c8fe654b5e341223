#!/usr/bin/env bash
# Runs ON the lent GPU machine (same bundle as scripts/device/h200.sh): cuda.decode's split-KV
# choice and the order of a shape's providers, measured.
#  1. cuda.decode at 32/8 heads, D 128, bf16, one token, for each split of ATTNPROF_SPLITS
#     (W:C = about W waves of CTAs, chunks of at least C keys, for a uniform and a ragged batch
#     alike; `default` runs the rule as built; decode_split.cpp): B ATTNPROF_SPLIT_BATCHES
#     (default 1,8,64) at KV ATTNPROF_SPLIT_KV (default 1k..32k) into $OUT/split-W-C.jsonl, and
#     a ragged batch (KV drawn in 1k..32k) beside the uniform one at B 8 and 64, KV 32k, into
#     $OUT/ragged-W-C.jsonl;
#  2. with ATTNPROF_SPLIT_ORDER=1, B 64 KV 32k with cuda.decode measured first and then second in
#     its shape, and at --min-time 0.1 s and 1 s: $OUT/order-*.jsonl
# Everything printed goes to $OUT/split.log.
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
exec > >(tee -a "$out/split.log") 2>&1
shape=(--heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --mask causal-br --seq 1)
for s in ${ATTNPROF_SPLITS:-4:256 1:1024 2:1024 1:2048}; do
  echo "== split $s"
  knob=()
  [[ $s != default ]] && knob=(--set "cuda.decode.split=$s")
  timeout 120 "$pkg/bin/attnprof" run --providers cuda.decode "${knob[@]}" \
    --batch "${ATTNPROF_SPLIT_BATCHES:-1,8,64}" --kv-seq "${ATTNPROF_SPLIT_KV:-1k:32k:*2}" \
    "${shape[@]}" --no-history --out "$out/split-${s/:/-}.jsonl"
  timeout 120 "$pkg/bin/attnprof" run --providers cuda.decode "${knob[@]}" --batch 8,64 \
    --kv-seq 32k --seqlens off,uniform:1024:32768 "${shape[@]}" --no-history \
    --out "$out/ragged-${s/:/-}.jsonl"
done
[[ ${ATTNPROF_SPLIT_ORDER:-0} == 1 ]] || exit 0
for case in "decode-first cuda.decode,cudnn.sdpa 100ms" "decode-second cudnn.sdpa,cuda.decode 100ms" \
  "decode-first-1s cuda.decode,cudnn.sdpa 1s"; do
  read -r name providers min <<<"$case"
  echo "== order $name"
  timeout 120 "$pkg/bin/attnprof" run --providers "$providers" --batch 64 --kv-seq 32k "${shape[@]}" \
    --min-time "$min" --no-history --out "$out/order-$name.jsonl"
done
