#!/usr/bin/env bash
# Supervisor overhead per point: the wall time of `attnprof run` on N tiny cpu.naive points,
# supervised (the default) against --in-process, as the slope between 1 and N points, which
# cancels process and worker start-up. Each configuration runs R times, interleaved; the median
# is kept.
#   usage: bench/supervisor_overhead.sh [path/to/attnprof] [N=200] [R=7]
set -euo pipefail
bin=${1:-build/attnprof}
n=${2:-200}
reps=${3:-7}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }

run() {  # $1: batches (1, or 1:N:1 for N points), $2: mode flag; prints wall seconds
  local s e
  s=$(now)
  "$bin" run --device cpu --providers cpu.naive --batch "$1" --seq 8 --heads 1 --head-dim 8 \
    --dtype fp32 --min-samples 1 --min-time 1us --warmup 0 --threads 1 --no-trace \
    --out "$tmp/j.jsonl" $2 >/dev/null
  e=$(now)
  awk -v s="$s" -v e="$e" 'BEGIN { printf "%.6f\n", e - s }'
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Interleaved (in-process, supervised, in-process, ...) so that drifting load hits both alike.
declare -A t
for size in 1 "1:$n:1"; do
  for ((i = 0; i < reps; i++)); do
    echo "in-process $(run "$size" --in-process)" >>"$tmp/times"
    echo "supervised $(run "$size" "")" >>"$tmp/times"
  done
  for mode in in-process supervised; do
    t[$mode,$size]=$(awk -v m="$mode" '$1 == m { print $2 }' "$tmp/times" |
      median)
  done
  rm -f "$tmp/times"
done
awk -v n="$n" -v i1="${t[in-process,1]}" -v iN="${t[in-process,1:$n:1]}" \
  -v s1="${t[supervised,1]}" -v sN="${t[supervised,1:$n:1]}" 'BEGIN {
  pi = (iN - i1) / (n - 1) * 1000; ps = (sN - s1) / (n - 1) * 1000
  printf "in-process  1 point %.3f s, %d points %.3f s: %.3f ms per point\n", i1, n, iN, pi
  printf "supervised  1 point %.3f s, %d points %.3f s: %.3f ms per point\n", s1, n, sN, ps
  printf "supervisor overhead per point: %.3f ms\n", ps - pi
  printf "worker start-up (1 point, supervised - in-process): %.1f ms\n", (s1 - i1) * 1000
}'
