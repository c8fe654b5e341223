#!/usr/bin/env bash
# CPU timings a user can reproduce (docs/method.md, "Against a user's own loop"): the same call
# timed by attnprof and by the user's own loop, one right after the other, ROUNDS times.
#   numpy: bench/numpy_attention.py through `attnprof run --py-provider` against timeit in a fresh
#          Python process (bench/timeit_numpy.py);
#   C++:   cpu.naive and cpu.flash through `attnprof run` against a standalone loop of their
#          launch() (bench/standalone/loop.cpp, target attnprof_standalone_loop).
# B 1, H 8, D 64, fp32, no mask, N 512 and 2048. Run on a quiet machine (nothing compiling).
# Usage: bench/cpu_timeit.sh [build-dir] [rounds]   prints one line per measurement.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-3}
cmake --build "$build" --target attnprof attnprof_py attnprof_standalone_loop >/dev/null
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median_of() {  # the journal's median in ms
  python3 -c "import json,sys; r=[json.loads(l) for l in open(sys.argv[1])][0]; \
t=r['timing']; print(f\"median {t['median_us']/1e3:.3f} ms ({t['samples']} samples, {r['status']})\")" "$1"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
for n in 512 2048; do
  reps=$((n == 512 ? 50 : 10))
  for round in $(seq "$rounds"); do
    "$build/attnprof" run --device cpu --no-history --py-provider bench/numpy_attention.py:attention \
      --providers py.bench.numpy --seq "$n" --heads 8 --head-dim 64 --dtype fp32 --mask none \
      --min-time 500ms --point-timeout 20s --out "$tmp/py.jsonl" --force >/dev/null
    echo "N $n round $round numpy attnprof: $(median_of "$tmp/py.jsonl")"
    echo "N $n round $round numpy timeit:   $(python3 bench/timeit_numpy.py "$n" "$reps")"
    for p in cpu.naive cpu.flash; do
      "$build/attnprof" run --device cpu --no-history --providers "$p" --seq "$n" --heads 8 \
        --head-dim 64 --dtype fp32 --mask none --min-time 500ms --point-timeout 20s \
        --out "$tmp/c.jsonl" --force >/dev/null
      echo "N $n round $round $p attnprof: $(median_of "$tmp/c.jsonl")"
      echo "N $n round $round $p loop:     $("$build/attnprof_standalone_loop" "$p" "$n" "$reps")"
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
