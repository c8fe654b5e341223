#!/usr/bin/env bash
# Builds attnprof (every engine found on this machine) and runs its tests. Tests labelled gpu
# skip cleanly where no CUDA device answers; any other skip must be one tests/allowed_skips.toml
# gives, a run with no test fails, and every test has a time limit (scripts/check_skips.py).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/install-deps.sh >/dev/null
cmake --preset default
cmake --build --preset default
status=0
ctest --preset default -j2 --no-tests=error --timeout 900 --output-junit ctest-junit.xml || status=$?
python3 scripts/check_skips.py build build/ctest-junit.xml --preset default || status=1
exit $status
