#!/usr/bin/env bash
# Runs ON the lent GPU machine after the bundle is unpacked (bundle_env.sh) and FlashInfer staged
# (scripts/device/stage.sh unpack flashinfer, and fa4 for FlashAttention-4): FlashInfer's and
# FlashAttention-4's providers beside cuDNN and attnprof's own kernels, in one call per part so
# figures compare within a call. $OUT/contenders-PART.log and $OUT/contenders-PART-*.jsonl.
#   contenders.sh check    the settings fold (cuda.decode and cuda.mla.decode split knobs), the
#                          layout axis (bhsd,bshd) on the prefill providers and decode providers
#   contenders.sh spec     multi-token decode (spec-decode's B 64 slice, KV 8k and 32k)
#   contenders.sh prefill  fa-bench in bshd: FlashInfer fa2 / fa3 against cuDNN and cuda.flash.sm90
#   contenders.sh fa4      FlashAttention-4's masks, GQA, softcap and sinks at one shape, then
#                          fa-bench in bshd against cuDNN, ATen's FA2 (py.torch.sdpa.flash: the bundle has no LibTorch),
#                          FlashInfer fa3, cuda.flash.sm90
#   contenders.sh fa4-spec multi-token decode (spec-decode's B 64 slice at KV 8k) with py.fa4
#   contenders.sh fa4-bench fa-bench in bshd alone (the fa4 part without its feature checks)
#   contenders.sh fa4-bwd  fa-bench-bwd in bshd: FlashAttention-4's backward against cuDNN's, ATen's
#                          FA2 (py.torch.sdpa.flash) and cuda.flash.sm90's
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
part=${1:?usage: contenders.sh check|spec|prefill|fa4|fa4-spec|fa4-bench|fa4-bwd}
a="$pkg/bin/attnprof"
use_staged flashinfer fa4
# FlashInfer JIT-compiles a kernel module on its first use (tens of seconds, in prepare): the
# worker's hang limit must outlast it.
common=(--no-history --hang-timeout 400s)
fi="py.flashinfer.fa2,py.flashinfer.fa3,py.flashinfer.decode"
fa4_bench="py.fa4,cudnn.sdpa,py.torch.sdpa.flash,py.flashinfer.fa3,cuda.flash.sm90"
step() {
  local name=$1
  shift
  echo "== $name: $*"
  "$a" run "$@" "${common[@]}" --out "$out/contenders-$part-$name.jsonl"
  echo "== $name: exit $?"
}
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  "$a" list | grep -E '^(py\.flashinfer|py\.fa4|xformers)'
  case $part in
    check)
      dec=(--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --mask causal-br --seq 1
        --kv-seq 32k)
      step decode-plain --providers cuda.decode "${dec[@]}"
      step decode-split --providers cuda.decode "${dec[@]}" --set cuda.decode.split=8:2048
      step mla-split --providers cuda.mla.decode --model deepseek-v3-mla-decode --seq 1 \
        --kv-seq 16k --batch 16 --set cuda.mla.decode.split=2:512
      step layout-prefill --providers "cudnn.sdpa,cuda.flash,cuda.flash.sm90,cuda.naive,$fi" \
        --batch 2 --heads 16 --head-dim 128 --seq 4k --dtype bf16 --mask none,causal \
        --layout bhsd,bshd
      step layout-decode --providers "cudnn.sdpa,cuda.decode,$fi" --batch 64 --heads 32 \
        --kv-heads 8 --head-dim 128 --dtype bf16 --mask causal-br --seq 1 --kv-seq 1k,8k,32k \
        --layout bhsd,bshd
      ;;
    spec)
      step spec-decode --providers "cudnn.sdpa,cuda.decode,cuda.flash.sm90,$fi" \
        --preset spec-decode --batch 64 --kv-seq 8k,32k
      ;;
    prefill)
      step fa-bench --providers "cudnn.sdpa,cuda.flash.sm90,py.flashinfer.fa2,py.flashinfer.fa3" \
        --preset fa-bench --layout bshd
      ;;
    fa4)
      step fa4-check --providers "py.fa4,cudnn.sdpa" --batch 2 --heads 16 --head-dim 128 --seq 2k \
        --dtype bf16 --layout bshd --mask none,causal,window:256 --kv-heads 16,4
      step fa4-features --providers "py.fa4,py.flashinfer.fa3" --batch 2 --heads 16 --head-dim 128 \
        --seq 2k --dtype bf16,fp16 --layout bshd --mask causal --softcap 0,30
      step fa4-sinks --providers "py.fa4" --batch 2 --heads 16 --head-dim 64,128 --seq 1k \
        --dtype bf16 --layout bshd --mask causal --sinks on
      step fa-bench --providers "$fa4_bench" --preset fa-bench --layout bshd
      ;;
    fa4-bench)
      step fa-bench --providers "$fa4_bench" --preset fa-bench --layout bshd
      ;;
    fa4-bwd)
      step fa-bench-bwd --providers "py.fa4,cudnn.sdpa,py.torch.sdpa.flash,cuda.flash.sm90" \
        --preset fa-bench-bwd --layout bshd
      ;;
    fa4-spec)
      step spec-decode --providers "py.fa4,cudnn.sdpa,py.flashinfer.fa2,cuda.decode" \
        --preset spec-decode --batch 64 --kv-seq 8k
      ;;
    *)
      echo "contenders.sh: unknown part $part" >&2
      exit 2
      ;;
  esac
} 2>&1 | tee "$out/contenders-$part.log"
