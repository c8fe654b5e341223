#!/usr/bin/env bash
# Builds attnprof (every engine found on this machine) and runs its tests. Tests labelled gpu
# skip cleanly where no CUDA device answers.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/install-deps.sh >/dev/null
cmake --preset default
cmake --build --preset default
ctest --preset default -j2
