#!/usr/bin/env bash
# Runs ON the lent GPU machine after scripts/device/h200.sh (same bundle): the decode points where
# attnprof and PyTorch's do_bench part (B 64, 32/8 heads, D 128, bf16, one query token, KV 1k, 8k
# and 32k; mask ATTNPROF_ARBITER_MASK, default none: one query token sees every key, as
# bottom-right causal, which ATen's flash backend refuses for q_len != kv_len), timed in one call
# by
#   attnprof run     cudnn.sdpa and py.torch.sdpa.flash (ATTNPROF_ARBITER_PROVIDERS), under the
#                    default clock policy and under --clock recover: $OUT/arbiter-<policy>.jsonl
#   do_bench         bench/decode_arbiter.py: do_bench's median and mean, CUDA-graph replay, and
#                    the kernels' own time (torch.profiler) in do_bench's loop:
#                    $OUT/decode_arbiter.jsonl
#   Nsight Compute   attnprof trace --ncu: each kernel's gpu__time_duration (clocks left alone,
#                    caches flushed before the kernel: cold), into $OUT/arbiter-ncu.log
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
providers=${ATTNPROF_ARBITER_PROVIDERS:-cudnn.sdpa,py.torch.sdpa.flash}
point=(--batch 64 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16
  --mask "${ATTNPROF_ARBITER_MASK:-none}" --seq 1)
for policy in default recover; do
  clock=()
  [[ $policy == recover ]] && clock=(--clock recover)
  timeout 200 "$pkg/bin/attnprof" run --providers "$providers" "${point[@]}" --kv-seq 1k,8k,32k \
    "${clock[@]}" --no-history --out "$out/arbiter-$policy.jsonl"
  echo "== arbiter run $policy: exit $?"
done
timeout 150 python3 "$root/bench/decode_arbiter.py" --out "$out/decode_arbiter.jsonl"
echo "== arbiter do_bench: exit $?"
# Nsight Compute on the Python calls themselves (trace --ncu cannot host a Python provider in its
# profiled child): each kernel's duration and SM clock, cold (ncu flushes the caches first).
timeout 200 ncu --clock-control none -k regex:'sdpa|flash_fwd' --csv \
  --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__throughput.avg.pct_of_peak_sustained_elapsed \
  python3 "$root/bench/decode_arbiter.py" --ncu-target >"$out/arbiter-ncu-python.csv" 2>&1
echo "== arbiter ncu python: exit $?"
[[ -n ${ATTNPROF_ARBITER_NO_TRACE:-} ]] && exit 0
for kv in 1k 8k 32k; do
  timeout 150 "$pkg/bin/attnprof" trace --providers "$providers" "${point[@]}" --kv-seq "$kv" \
    --ncu 2>&1 | tee -a "$out/arbiter-ncu.log"
  echo "== arbiter ncu $kv: exit ${PIPESTATUS[0]}"
done
