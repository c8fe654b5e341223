#!/usr/bin/env bash
# The main job with a built attnprof: the default profile of the device it finds (fa-bench on a
# CUDA device, cpu-small on the CPU), the batch to deploy for the seed's shape, and the report.
# scripts/profile.sh calls it after building; on the lent GPU machine it runs with the bundle's
# binary (scripts/device/). Files go under results/ (ATTNPROF_RESULTS), stamped with the time
# (ATTNPROF_STAMP names an earlier one). ATTNPROF_MAIN_STEPS picks steps (default "run tune
# report"): a device call of at most 10 minutes may run the profile, and the next call tune and
# report on the same stamp.
#   scripts/main_job.sh ATTNPROF [RUN-OPTIONS...]
set -euo pipefail
attnprof=${1:?usage: main_job.sh ATTNPROF [RUN-OPTIONS...]}
shift
results=${ATTNPROF_RESULTS:-results}
mkdir -p "$results"
stamp=${ATTNPROF_STAMP:-$(date -u +%Y%m%dT%H%M%SZ)}
steps=" ${ATTNPROF_MAIN_STEPS:-run tune report} "
out="$results/profile-$stamp"
if [[ $steps == *" run "* ]]; then
  "$attnprof" list
  "$attnprof" run --out "$out.jsonl" --markdown "$out.md" "$@"
fi
# The deployment question for the seed's shape: the largest and the throughput-optimal batch of
# every default provider under 14 GiB and a p95 of 100 ms.
if [[ $steps == *" tune "* ]]; then
  "$attnprof" tune --heads 16 --seq 1024 --head-dim 64 --dtype fp16 --max-memory 14GiB \
    --p95 100ms --out "$out-tune.jsonl" --json "$out-tune.json" | tee "$out-tune.txt"
fi
# The answers: plots (a roofline among them), findings and tables, in HTML and Markdown.
if [[ $steps == *" report "* ]]; then
  "$attnprof" report "$out.jsonl" --tune "$out-tune.json" --html "$out-report.html" \
    --markdown "$out-report.md"
fi
echo "wrote $out.jsonl (every point), $out.md (the table), $out-tune.txt (the batch to deploy),"
echo "      $out-report.html and $out-report.md (plots, roofline, findings, tables)"
