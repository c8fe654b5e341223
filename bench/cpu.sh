#!/usr/bin/env bash
# The CPU benchmark of the foundation issue: cpu.flash against cpu.naive, fp32 forward,
# B 1, H 8, D 64, no mask, N 1024..8192, every point verified. Writes
# bench/results/cpu/flash-vs-naive.{jsonl,md} and prints the machine's load beside them.
# Usage: bench/cpu.sh [path/to/attnprof]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/attnprof}
out=bench/results/cpu
mkdir -p "$out"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
"$bin" run --device cpu --in-process --no-history --providers cpu.naive,cpu.flash \
  --seq 1024:8192:*2 --heads 8 --head-dim 64 --dtype fp32 --mask none \
  --min-samples 3 --min-time 1s --point-timeout 30s \
  --out "$out/flash-vs-naive.jsonl" --markdown "$out/flash-vs-naive.md"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
