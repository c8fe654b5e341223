#!/usr/bin/env bash
# Runs ON the lent GPU machine after unpacking the bundle: provider settings (--set) on the GPU
# providers that take them. One decode point of cuda.decode plain, then under
# --set cuda.decode.pipeline=4x3 resumed into the same journal (it must run again, its row
# recording setting.pipeline), `compare` of the two (not joined), cuda.flash.sm90's backward
# under --set cuda.flash.sm90.deterministic=1, a swept setting (4x3,p64x3: two rows), and a bad
# value refused: $OUT/settings.log,
# $OUT/settings-*.jsonl.
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
a="$pkg/bin/attnprof"
point=(--batch 64 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --mask causal-br --seq 1
  --kv-seq 8k --no-history)
{
  "$a" list | grep -A4 '^cuda.decode '
  "$a" run --providers cuda.decode "${point[@]}" --out "$out/settings-plain.jsonl"
  echo "== plain: exit $?"
  cp "$out/settings-plain.jsonl" "$out/settings-both.jsonl"
  "$a" run --providers cuda.decode "${point[@]}" --set cuda.decode.pipeline=4x3 \
    --out "$out/settings-both.jsonl" --resume
  echo "== resumed with a setting: exit $?"
  tail -n 1 "$out/settings-both.jsonl" >"$out/settings-set.jsonl"
  "$a" compare "$out/settings-plain.jsonl" "$out/settings-set.jsonl"
  echo "== compare: exit $?"
  "$a" run --providers cuda.flash.sm90 --mode bwd --batch 2 --heads 16 --head-dim 128 --seq 4k \
    --dtype bf16 --mask causal --set cuda.flash.sm90.deterministic=1 --no-history \
    --out "$out/settings-deterministic.jsonl"
  echo "== deterministic: exit $?"
  "$a" run --providers cuda.decode "${point[@]}" --set cuda.decode.pipeline=4x3,p64x3 \
    --out "$out/settings-swept.jsonl"
  echo "== swept: exit $? ($(wc -l <"$out/settings-swept.jsonl") rows, 2 expected)"
  "$a" run --providers cuda.decode "${point[@]}" --set cuda.decode.pipeline=bogus \
    --out "$out/settings-refused.jsonl"
  echo "== bad value: exit $? (2 expected), file left: $([[ -e $out/settings-refused.jsonl ]] && echo yes || echo no)"
} 2>&1 | tee "$out/settings.log"
