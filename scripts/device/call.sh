#!/usr/bin/env bash
# Runs ON the lent GPU machine: one device call of several parts, each bounded, whose files come
# back as one archive (a call returns at most 8 files; a run of presets and parts writes more).
#   run(carry: [".deps/devpkg.tar.xz", ...], command: "bash scripts/device/call.sh NAME SECONDS 'PART' ...")
# Unpacks the carried bundle (.deps/devpkg.tar.xz, made by `tar -C .deps -cJf .deps/devpkg.tar.xz
# devpkg` after bundle.sh) and any carried stage parts (.stage/NAME/part*: received and unpacked,
# its site put on PYTHONPATH), then runs each PART (a shell command line) in turn until SECONDS
# have passed since the call began; a part still running then is stopped, the parts after it are
# named as not run. Everything under $OUT ends in $OUT/NAME.tar.gz, with call.log (what ran, how
# long, its exit code).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
name=${1:?usage: call.sh NAME SECONDS PART...}
budget=${2:?usage: call.sh NAME SECONDS PART...}
shift 2
out=${OUT:?call.sh runs on the device machine, where OUT is set}
log=$out/call.log
start=$SECONDS
{
  echo "== call $name on $(hostname), $(date -u +%FT%TZ), budget $budget s"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv,noheader
  if [[ -f $root/.deps/devpkg.tar.xz ]]; then
    python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='data')" \
      "$root/.deps/devpkg.tar.xz" "$root/.deps"
  fi
  echo "== bundle of commit $(cat "$root/.deps/devpkg/COMMIT" 2>/dev/null || echo none)"
  for staged in "$root"/.stage/*/; do
    [[ -d $staged ]] || continue
    s=$(basename "$staged")
    bash "$root/scripts/device/stage.sh" receive "$s" >/dev/null &&
      site=$(bash "$root/scripts/device/stage.sh" unpack "$s") &&
      export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" && echo "== staged $s at $site"
  done
  for part in "$@"; do
    left=$((budget - (SECONDS - start)))
    if ((left < 5)); then
      echo "== not run (budget spent): $part"
      continue
    fi
    echo "== part ($left s left): $part"
    t0=$SECONDS
    timeout --kill-after=10 "$left" bash -c "cd '$root' && $part"
    echo "== part exit $? in $((SECONDS - t0)) s: $part"
  done
  echo "== call $name done in $((SECONDS - start)) s"
} >"$log" 2>&1
tar -C "$out" --exclude "$name.tar.gz" -czf "/tmp/$name.tar.gz" . && mv "/tmp/$name.tar.gz" "$out/"
find "$out" -mindepth 1 -not -name "$name.tar.gz" -not -name call.log -delete
tail -40 "$log"
