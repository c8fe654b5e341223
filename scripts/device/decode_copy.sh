#!/usr/bin/env bash
# Runs ON the lent GPU machine after scripts/device/h200.sh (same bundle): cuda.decode's ways of
# copying its tiles (its setting copy) against each other and cudnn.sdpa, in one
# call (absolute figures move ~7% between calls):
#  1. cudnn.sdpa, then cuda.decode under each COPY:PIPELINE[:L2] of ATTNPROF_FORMS (default:
#     tma:auto cp.async:auto; --set cuda.decode.copy, .pipeline (auto: the split's rule) and .l2
#     (default none)), at B ATTNPROF_COPY_BATCHES
#     (1,8,64), 32/8 heads, D 128, bf16, one token (causal-br), KV 1k..32k, contiguous and in
#     pages of ATTNPROF_COPY_PAGES (0,16):
#     $OUT/copy-cudnn.jsonl and $OUT/copy-COPY-PIPELINE[-L2].jsonl;
#  2. a ragged batch (KV drawn in 1k..32k) beside the uniform one at B 8 and 64, KV 32k, both
#     providers, under each pipeline of ATTNPROF_RAGGED_PIPELINES (default auto):
#     $OUT/ragged-PIPELINE.jsonl;
#  3. unless ATTNPROF_COPY_MLA=0, cuda.mla.decode beside cuda.naive at B 1 and 16, KV 4k and
#     32k (the merge of its splits): $OUT/mla.jsonl;
#  4. with ATTNPROF_COPY_NCU=1 (and the MLA step), Nsight Compute's sections for cuda.decode at
#     B 64, KV 32k under each copy, and for cudnn.sdpa (attnprof trace --ncu).
# Everything printed is appended to $OUT/h200.log (h200.sh's log: the call's files stay under 8).
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
exec > >(tee -a "$out/h200.log") 2>&1
shape=(--heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --mask causal-br --seq 1)
points() {  # points PROVIDER FILE [--set ...]
  timeout 200 "$pkg/bin/attnprof" run --providers "$1" --batch "${ATTNPROF_COPY_BATCHES:-1,8,64}" \
    --kv-seq 1k:32k:*2 --page-size "${ATTNPROF_COPY_PAGES:-0,16}" "${shape[@]}" --no-history \
    --out "$2" "${@:3}"
}
echo "== cudnn.sdpa"
points cudnn.sdpa "$out/copy-cudnn.jsonl"
for f in ${ATTNPROF_FORMS:-tma:auto cp.async:auto}; do
  IFS=: read -r copy pipeline l2 <<<"$f"
  echo "== cuda.decode, copy $copy, pipeline $pipeline${l2:+, L2 promotion $l2}"
  points cuda.decode "$out/copy-$copy-$pipeline${l2:+-$l2}.jsonl" --set "cuda.decode.copy=$copy" \
    --set "cuda.decode.pipeline=$pipeline" --set "cuda.decode.l2=${l2:-none}"
done
for pipeline in ${ATTNPROF_RAGGED_PIPELINES:-auto}; do
  echo "== ragged, pipeline $pipeline"
  timeout 150 "$pkg/bin/attnprof" run --set "cuda.decode.pipeline=$pipeline" \
    --providers cudnn.sdpa,cuda.decode --batch 8,64 --kv-seq 32k --seqlens off,uniform:1024:32768 \
    "${shape[@]}" --no-history --out "$out/ragged-$pipeline.jsonl"
done
[[ ${ATTNPROF_COPY_MLA:-1} == 0 ]] && exit 0
echo "== cuda.mla.decode and cuda.naive"
timeout 150 "$pkg/bin/attnprof" run --model deepseek-v3-mla-decode --dtype bf16 --mask causal-br \
  --seq 1 --kv-seq 4k,32k --batch 1,16 --providers cuda.mla.decode,cuda.naive --no-history \
  --out "$out/mla.jsonl"
if [[ ${ATTNPROF_COPY_NCU:-0} == 1 ]]; then
  for c in tma cp.async; do
    echo "== ncu, cuda.decode, copy $c"
    timeout 120 "$pkg/bin/attnprof" trace --providers cuda.decode --set "cuda.decode.copy=$c" \
      --batch 64 "${shape[@]}" --kv-seq 32k --ncu
  done
  echo "== ncu, cudnn.sdpa"
  timeout 120 "$pkg/bin/attnprof" trace --providers cudnn.sdpa --batch 64 "${shape[@]}" \
    --kv-seq 32k --ncu
fi
python3 "$root/scripts/device/show_rows.py"
