#!/usr/bin/env bash
# Runs ON the lent GPU machine after the bundle is unpacked (scripts/device/call.sh): the main job
# (scripts/main_job.sh, what scripts/profile.sh runs after building) with the bundle's attnprof and
# whatever stage.sh staged (FlashInfer, FlashAttention-4) importable, files under $OUT/main.
# ATTNPROF_MAIN_STEPS and ATTNPROF_STAMP split it over calls (main_job.sh); extra arguments go to
# `attnprof run`.
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
use_staged flashinfer fa4
ATTNPROF_RESULTS="$out/main" bash "$root/scripts/main_job.sh" "$pkg/bin/attnprof" "$@"
