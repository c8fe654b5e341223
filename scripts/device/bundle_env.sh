# Sourced by the scripts that run ON the lent GPU machine after scripts/device/h200.sh unpacked
# the bundle (decode_ncu.sh, decode_split.sh): `root`, `pkg` and `out` (the device tool's $OUT),
# and the library path and presets h200.sh sets for the bundle's attnprof.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pkg=$root/.deps/devpkg
export LD_LIBRARY_PATH="$pkg/lib:/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ATTNPROF_PRESETS="$root/presets" XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/attnprof-cache}
out=${OUT:-$root/out}
mkdir -p "$out"
# Puts what scripts/device/stage.sh staged in earlier calls (each NAME, when there) ahead on
# PYTHONPATH.
use_staged() {
  local staged site
  for staged in "$@"; do
    site=$(bash "$root/scripts/device/stage.sh" path "$staged")
    echo "$staged site: ${site:-none}"
    [[ -n $site && :${PYTHONPATH:-}: != *":$site:"* ]] && export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
  done
  return 0
}
