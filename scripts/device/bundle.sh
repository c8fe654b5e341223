#!/usr/bin/env bash
# Builds attnprof and test_gpu here (CUDA on) and gathers them, with every shared library they
# need that the GPU machine lacks, into .deps/devpkg/{bin,lib} (git-ignored). The device tool
# carries that folder: run(carry: [".deps/devpkg"], command: "scripts/device/h200.sh").
#
# The GPU machine (Ubuntu 24.04, CUDA 13.0 at /usr/local/cuda) has glibc, libstdc++, the CUDA
# libraries (cudart, cuBLAS, CUPTI, cuDNN, NVRTC) and the driver; it lacks Debian's libfmt,
# OpenBLAS (with libgfortran, libquadmath), toml++, SQLite and maybe libgomp. Everything ldd
# resolves outside /usr/local/cuda and glibc/libstdc++ is copied.
#
# Usage: scripts/device/bundle.sh [build-dir]   (default build-gpu; BUNDLE_JOBS=2 ninja jobs)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build-gpu}
pkg=$root/.deps/devpkg
jobs=${BUNDLE_JOBS:-2}

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNPROF_WITH_CUDA=ON >/dev/null
ninja -C "$build" -j"$jobs" attnprof test_gpu

rm -rf "$pkg"
mkdir -p "$pkg/bin" "$pkg/lib"
cp "$build/attnprof" "$build/tests/test_gpu" "$pkg/bin/"
strip --strip-unneeded "$pkg/bin/attnprof" "$pkg/bin/test_gpu"

# Shared libraries the machine already has (or must come from its own system).
keep_system='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libutil|libgcc_s|libstdc\+\+)\.'
ldd "$pkg/bin/attnprof" "$pkg/bin/test_gpu" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
  sort -u | while read -r name path; do
    [[ $name =~ $keep_system ]] && continue
    [[ $path == /usr/local/cuda* ]] && continue
    cp -L "$path" "$pkg/lib/$name"
    echo "bundled $name ($(du -h "$pkg/lib/$name" | cut -f1))"
  done
if ldd "$pkg/bin/attnprof" "$pkg/bin/test_gpu" | grep -q "not found"; then
  echo "bundle.sh: a library is missing here too:" >&2
  ldd "$pkg/bin/attnprof" "$pkg/bin/test_gpu" | grep "not found" >&2
  exit 1
fi
git -C "$root" rev-parse --short=12 HEAD >"$pkg/COMMIT" 2>/dev/null || echo unknown >"$pkg/COMMIT"
echo "bundle.sh: $(du -sh "$pkg" | cut -f1) in $pkg (commit $(cat "$pkg/COMMIT"), plus local changes)"
