#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build, and run the default profile on
# the best device present (CUDA where a device answers, else the CPU), tune the batch of the
# seed's shape, and write the report. Everything goes under results/. Extra arguments go to
# `attnprof run`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/install-deps.sh >/dev/null
cmake --preset default >/dev/null
cmake --build --preset default --target attnprof
mkdir -p results
stamp=$(date -u +%Y%m%dT%H%M%SZ)
./build/attnprof list
out="results/profile-$stamp"
./build/attnprof run --out "$out.jsonl" --markdown "$out.md" "$@"
# The deployment question for the seed's shape: the largest and the throughput-optimal batch of
# every default provider under 14 GiB and a p95 of 100 ms.
./build/attnprof tune --heads 16 --seq 1024 --head-dim 64 --dtype fp16 --max-memory 14GiB \
  --p95 100ms --out "$out-tune.jsonl" --json "$out-tune.json" | tee "$out-tune.txt"
# The answers: plots (a roofline among them), findings and tables, in HTML and Markdown.
./build/attnprof report "$out.jsonl" --tune "$out-tune.json" --html "$out-report.html" \
  --markdown "$out-report.md"
echo "wrote $out.jsonl (every point), $out.md (the table), $out-tune.txt (the batch to deploy),"
echo "      $out-report.html and $out-report.md (plots, roofline, findings, tables)"
