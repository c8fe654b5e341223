#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build, and run the default profile on
# the best device present (CUDA where a device answers, else the CPU). Writes a JSONL journal
# and a Markdown summary under results/. Extra arguments go to `attnprof run`.
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
# The answers: plots (a roofline among them), findings and tables, in HTML and Markdown.
./build/attnprof report "$out.jsonl" --html "$out-report.html" --markdown "$out-report.md"
echo "wrote $out.jsonl (every point), $out.md (the table),"
echo "      $out-report.html and $out-report.md (plots, roofline, findings, tables)"
