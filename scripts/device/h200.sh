#!/usr/bin/env bash
# Runs ON the lent GPU machine, in the repo root, from the bundle scripts/device/bundle.sh made:
#   run(carry: [".deps/devpkg"], command: "scripts/device/h200.sh", timeout_s: 300)
# Writes under $OUT (at most 8 files come back): h200.log (everything printed), test_gpu.json
# (gtest results), peaks.json, and one <preset>.jsonl per benchmark preset.
#
# Steps, chosen with ATTNPROF_STEPS (default "tests peaks"):
#   tests     the engine's self-tests first, then the rest of test_gpu
#   peaks     attnprof peaks --refresh --json $OUT/peaks.json
#   torch     bench/torch_crosscheck.py --only ${ATTNPROF_TORCH_ONLY:-ceilings}: PyTorch's figures
#             in the same call (absolute figures move ~7% between calls)
#   sanitize  compute-sanitizer over test_gpu's small tests (ATTNPROF_SANITIZE_FILTER), with each
#             tool of ATTNPROF_SANITIZE_TOOLS (default memcheck; racecheck, synccheck, initcheck)
#   bench     attnprof run --preset P for each P in ATTNPROF_BENCH_PRESETS (extra run options: ATTNPROF_RUN_ARGS);
#             with ATTNPROF_RESUME_DIR (a folder of the working tree holding an earlier call's
#             P.jsonl), that journal is continued with --resume: one run of the same bundle
#             spread over calls, each point measured once
#   grid      one more `attnprof run $ATTNPROF_GRID_ARGS --out $OUT/grid.jsonl` (a grid, not a preset);
#             grid2 the same with ATTNPROF_GRID2_ARGS into $OUT/grid2.jsonl; ATTNPROF_GRID_ENV
#             (NAME=VALUE ...) is set for grid alone, ATTNPROF_GRID2_ENV for grid2 alone (say
#             settings now go as --set in the ARGS, not the ENV: the same grid under another schedule)
#   coldhot   cold against hot timing of short kernels (ATTNPROF_COLDHOT_PROVIDERS, default
#             cudnn.sdpa,cuda.naive) at B 1, H 12, D 64, N 256 and 512, fp16: $OUT/coldhot.jsonl
#   ncu       the engine's target against Nsight Compute, per clock policy: each provider of
#             ATTNPROF_NCU_PROVIDERS (default cuda.naive) at B 2, H 16, D 128, N 8192, bf16,
#             `attnprof run --clock sustained` and `--clock recover` (medians) and `attnprof
#             trace --ncu` (one launch's gpu__time_duration per kernel); rows to
#             $OUT/clocks.jsonl, everything into h200.log
#   autopeaks a point with an empty ceilings cache: the run measures them first (one line) and its
#             row carries % of peak: $OUT/autopeaks.jsonl
#   tune      the seeds' deployment question for every default provider (H 16, N 1024, D 64, fp16,
#             14 GiB, p95 100 ms; ATTNPROF_TUNE_PROVIDERS names others), its wall time in
#             h200.log: $OUT/tune.json, $OUT/tune.jsonl
#   python    the Python providers beside the C++ ones they compare with (ATTNPROF_PY_PROVIDERS),
#             at B 2 H 16 D 128 bf16, N ATTNPROF_PY_SEQ (1024,4096,8192), no mask and causal:
#             $OUT/python.jsonl;
#             then attnprof trace of py.torch.compile.naive and py.flex (kernel names, stream)
#   report    attnprof report of this call's journals of ATTNPROF_REPORT_PRESETS (default
#             seed-000 seed-003; bench) with --tune: $OUT/report.html and $OUT/report.md
#   stage     unpacks what scripts/device/stage.sh staged in earlier calls (ATTNPROF_STAGED,
#             default "ort-gpu") and puts it ahead on PYTHONPATH for the steps after it
#   pystream  tests/python_gpu/test_timed_stream.py: every available CUDA Python provider's
#             kernels on the timed stream (CUPTI stream ids), in h200.log
#   cheats    tests/python_gpu/test_cheats.py: the torch cheats through attnprof run, each row's
#             verdict in h200.log (ATTNPROF_CHEAT_SHAPES, default "small large")
#   ort       the ONNX Runtime graph forms on the CUDA EP beside PyTorch's dispatch and cuDNN at
#             B 32 H 16 N 1024 D 64 and B 2 H 16 N 8192 D 128, fp16, no mask and causal:
#             $OUT/ort.jsonl
# ATTNPROF_TEST_FILTER narrows the tests step (a gtest filter); ATTNPROF_STEP_TIMEOUT bounds
# each step in seconds (default 240).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pkg=$root/.deps/devpkg
out=${OUT:-$root/out}
mkdir -p "$out"
steps=${ATTNPROF_STEPS:-tests peaks}
step_timeout=${ATTNPROF_STEP_TIMEOUT:-240}

# The bundle's libraries first, then the venv's cuDNN 9.19 (the one PyTorch there uses), so
# cudnn.sdpa and torch's cuDNN backend run the same cuDNN (../shared/DEVICE.md).
cudnn_venv=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$pkg/lib:$cudnn_venv${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# A bundle with the LibTorch providers finds LibTorch in the venv (same 2.11.0+cu130 files it was
# built against); its worker group puts the venv's NVIDIA libraries first by itself.
if [[ -f $pkg/TORCH ]]; then
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:/opt/torch/.venv/lib/python3.12/site-packages/torch/lib"
fi
export ATTNPROF_PRESETS="$root/presets"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/attnprof-cache}
exec > >(tee -a "$out/h200.log") 2>&1

status=0
step() {  # step NAME COMMAND...: runs one step under the timeout, records its exit code
  local name=$1
  shift
  echo "== $name: $*"
  local t0=$SECONDS
  timeout --kill-after=10 "$step_timeout" "$@"
  local rc=$?
  echo "== $name: exit $rc in $((SECONDS - t0)) s"
  [[ $rc -ne 0 ]] && status=1
  return 0
}

echo "== bundle of commit $(cat "$pkg/COMMIT" 2>/dev/null || echo '?') on $(hostname), $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit,ecc.mode.current,temperature.gpu --format=csv
if ldd "$pkg/bin/attnprof" "$pkg/bin/test_gpu" | grep "not found"; then
  echo "h200.sh: libraries missing on this machine (above)"
  exit 1
fi

for s in $steps; do
  case $s in
    tests)
      engine='CudaEngine*:CuptiDemangle*:CuptiAggregate*:CudaErrors*:Peaks*'
      step engine-tests "$pkg/bin/test_gpu" --gtest_filter="${ATTNPROF_TEST_FILTER:-$engine}" \
        --gtest_output="json:$out/test_engine.json"
      if [[ -z ${ATTNPROF_TEST_FILTER:-} ]]; then
        step other-gpu-tests "$pkg/bin/test_gpu" --gtest_filter="-$engine" --gtest_brief=1 \
          --gtest_output="json:$out/test_gpu.json"
      fi
      ;;
    peaks)
      if "$pkg/bin/attnprof" peaks --help >/dev/null 2>&1; then
        step peaks "$pkg/bin/attnprof" peaks --refresh --json "$out/peaks.json"
      else
        echo "h200.sh: this attnprof has no 'peaks' subcommand yet; measuring through test_gpu"
        step peaks-test "$pkg/bin/test_gpu" --gtest_filter=CudaEngineTest.MeasuredPeaksArePlausible \
          --gtest_output="json:$out/test_peaks.json"
      fi
      ;;
    torch)
      # PyTorch's own ceilings (or more, ATTNPROF_TORCH_ONLY) in the same call, for comparison.
      step torch python3 "$root/bench/torch_crosscheck.py" --out "$out/torch_crosscheck.jsonl" \
        --only "${ATTNPROF_TORCH_ONLY:-ceilings}"
      ;;
    sanitize)
      filter=${ATTNPROF_SANITIZE_FILTER:-CudaEngineTest.DeviceFill*:CudaEngineTest.HostCopy*:CudaEngineTest.Tracker*}
      for tool in ${ATTNPROF_SANITIZE_TOOLS:-memcheck}; do
        step "sanitize $tool" compute-sanitizer --tool "$tool" --error-exitcode 1 \
          "$pkg/bin/test_gpu" --gtest_filter="$filter"
      done
      ;;
    bench)
      for preset in ${ATTNPROF_BENCH_PRESETS:-}; do
        resume=()
        earlier=${ATTNPROF_RESUME_DIR:+$root/$ATTNPROF_RESUME_DIR/$preset.jsonl}
        if [[ -n $earlier && -f $earlier ]]; then
          cp "$earlier" "$out/$preset.jsonl"
          resume=(--resume)
          echo "== bench $preset: continuing $(wc -l <"$earlier") rows of $earlier"
        fi
        step "bench $preset" "$pkg/bin/attnprof" run --preset "$preset" --out "$out/$preset.jsonl" \
          "${resume[@]}" ${ATTNPROF_RUN_ARGS:-}
      done
      ;;
    grid | grid2)
      args=${ATTNPROF_GRID_ARGS:-} settings=${ATTNPROF_GRID_ENV:-}
      [[ $s == grid2 ]] && args=${ATTNPROF_GRID2_ARGS:-} settings=${ATTNPROF_GRID2_ENV:-}
      # NAME=VALUE settings for this step alone (a kernel's schedule knob).
      step "$s" env $settings "$pkg/bin/attnprof" run $args --out "$out/$s.jsonl"
      ;;
    coldhot)
      point=(--providers "${ATTNPROF_COLDHOT_PROVIDERS:-cudnn.sdpa,cuda.naive}" --batch 1
        --heads 12 --head-dim 64 --seq 256,512 --dtype fp16)
      rm -f /tmp/coldhot-*.jsonl
      for timing in cold hot; do
        step "coldhot $timing" "$pkg/bin/attnprof" run "${point[@]}" --timing "$timing" \
          --out "/tmp/coldhot-$timing.jsonl"
      done
      cat /tmp/coldhot-*.jsonl >"$out/coldhot.jsonl"
      ;;
    ncu)
      point=(--batch 2 --heads 16 --head-dim 128 --seq 8192 --dtype bf16)
      rm -f /tmp/clocks-*.jsonl
      for p in ${ATTNPROF_NCU_PROVIDERS:-cuda.naive}; do
        for clock in sustained recover; do
          step "ncu-run $p $clock" "$pkg/bin/attnprof" run --providers "$p" "${point[@]}" \
            --clock "$clock" --out "/tmp/clocks-$p-$clock.jsonl"
        done
        step "ncu-trace $p" "$pkg/bin/attnprof" trace --providers "$p" "${point[@]}" --ncu
      done
      cat /tmp/clocks-*.jsonl >"$out/clocks.jsonl"
      ;;
    autopeaks)
      step autopeaks env XDG_CACHE_HOME="$(mktemp -d)" "$pkg/bin/attnprof" run --providers cudnn.sdpa \
        --batch 1 --heads 16 --head-dim 128 --seq 4096 --dtype bf16 --no-history \
        --out "$out/autopeaks.jsonl"
      ;;
    python)
      step python-list "$pkg/bin/attnprof" list
      step python "$pkg/bin/attnprof" run --providers \
        "${ATTNPROF_PY_PROVIDERS:-py.torch.sdpa,py.torch.compile.naive,py.torch.mha,py.flex,torch.sdpa.flash,torch.sdpa.default,cudnn.sdpa}" \
        --batch 2 --heads 16 --head-dim 128 --seq "${ATTNPROF_PY_SEQ:-1024,4096,8192}" --dtype bf16 --mask none,causal \
        --hang-timeout 150s --no-history --out "$out/python.jsonl"
      step python-trace "$pkg/bin/attnprof" trace --providers py.torch.compile.naive,py.flex \
        --batch 2 --heads 16 --head-dim 128 --seq 8192 --dtype bf16 --chrome "$out/python-trace.json"
      ;;
    tune)
      tune_providers=()
      [[ -n ${ATTNPROF_TUNE_PROVIDERS:-} ]] && tune_providers=(--providers "$ATTNPROF_TUNE_PROVIDERS")
      step tune "$pkg/bin/attnprof" tune "${tune_providers[@]}" --heads 16 --seq 1024 --head-dim 64 \
        --dtype fp16 --max-memory 14GiB --p95 100ms --json "$out/tune.json" --out "$out/tune.jsonl"
      ;;
    report)
      journals=()
      for preset in ${ATTNPROF_REPORT_PRESETS:-seed-000 seed-003}; do
        [[ -f $out/$preset.jsonl ]] && journals+=("$out/$preset.jsonl")
      done
      tune=()
      [[ -f $out/tune.json ]] && tune=(--tune "$out/tune.json")
      step report "$pkg/bin/attnprof" report "${journals[@]}" "${tune[@]}" \
        --html "$out/report.html" --markdown "$out/report.md"
      ;;
    stage)
      for name in ${ATTNPROF_STAGED:-ort-gpu}; do
        if site=$(bash "$root/scripts/device/stage.sh" unpack "$name"); then
          export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
          echo "== stage: $name at $site"
        else
          status=1
        fi
      done
      ;;
    pystream)
      step pystream python3 "$root/tests/python_gpu/test_timed_stream.py"
      ;;
    cheats)
      export ATTNPROF_BIN="$pkg/bin/attnprof"
      step cheats python3 "$root/tests/python_gpu/test_cheats.py" \
        ${ATTNPROF_CHEAT_SHAPES:-small large}
      ;;
    ort)
      ort_providers=ort.cuda.naive_graph,ort.cuda.attention,ort.cuda.mha,ort.cuda.gqa,torch.sdpa.default,cudnn.sdpa
      rm -f /tmp/ort-*.jsonl
      step ort-small "$pkg/bin/attnprof" run --providers "$ort_providers" --batch 32 --heads 16 \
        --head-dim 64 --seq 1024 --dtype fp16 --mask none,causal --hang-timeout 150s --no-history \
        --out /tmp/ort-small.jsonl
      step ort-large "$pkg/bin/attnprof" run --providers "$ort_providers" --batch 2 --heads 16 \
        --head-dim 128 --seq 8192 --dtype fp16 --mask none,causal --hang-timeout 150s --no-history \
        --out /tmp/ort-large.jsonl
      cat /tmp/ort-*.jsonl >"$out/ort.jsonl"
      ;;
    *)
      echo "h200.sh: unknown step '$s' (tests, peaks, torch, sanitize, bench, grid, coldhot, ncu,"
      echo "  autopeaks, tune, report, stage, pystream, ort, grid2)"
      status=1
      ;;
  esac
done
echo "== done: exit $status"
exit $status
