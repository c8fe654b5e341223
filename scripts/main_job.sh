#!/usr/bin/env bash
# The main job with a built attnprof: the default profile of the device it finds (fa-bench on a
# CUDA device, cpu-small on the CPU), the batch to deploy for the seed's shape, and the report.
# scripts/profile.sh calls it after building; on the lent GPU machine it runs with the bundle's
# binary (scripts/device/). Files go under results/ (ATTNPROF_RESULTS), stamped with the time.
#   scripts/main_job.sh ATTNPROF [RUN-OPTIONS...]
set -euo pipefail
attnprof=${1:?usage: main_job.sh ATTNPROF [RUN-OPTIONS...]}
shift
results=${ATTNPROF_RESULTS:-results}
mkdir -p "$results"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
"$attnprof" list
out="$results/profile-$stamp"
"$attnprof" run --out "$out.jsonl" --markdown "$out.md" "$@"
# The deployment question for the seed's shape: the largest and the throughput-optimal batch of
# every default provider under 14 GiB and a p95 of 100 ms.
"$attnprof" tune --heads 16 --seq 1024 --head-dim 64 --dtype fp16 --max-memory 14GiB \
  --p95 100ms --out "$out-tune.jsonl" --json "$out-tune.json" | tee "$out-tune.txt"
# The answers: plots (a roofline among them), findings and tables, in HTML and Markdown.
"$attnprof" report "$out.jsonl" --tune "$out-tune.json" --html "$out-report.html" \
  --markdown "$out-report.md"
echo "wrote $out.jsonl (every point), $out.md (the table), $out-tune.txt (the batch to deploy),"
echo "      $out-report.html and $out-report.md (plots, roofline, findings, tables)"
