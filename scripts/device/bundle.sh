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
# With TORCH_PREFIX=<…/site-packages/torch> (a torch wheel of the GPU machine's exact version,
# 2.11.0+cu130, unpacked here: `pip download torch==2.11.0 --no-deps` + unzip) the LibTorch
# providers are built too (build-torch); LibTorch and its NVIDIA wheels are not bundled: the GPU
# machine's venv has the same files, and h200.sh puts them on the library path.
#
# Usage: scripts/device/bundle.sh [build-dir]   (default build-gpu or build-torch; BUNDLE_JOBS=2)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
torch=${TORCH_PREFIX:-}
if [[ -n ${1:-} ]]; then
  build=$1
elif [[ -n $torch ]]; then
  build=$root/build-torch
else
  build=$root/build-gpu
fi
pkg=$root/.deps/devpkg
jobs=${BUNDLE_JOBS:-2}

configure=(-DCMAKE_BUILD_TYPE=Release -DATTNPROF_WITH_CUDA=ON)
# LibTorch's own dependencies (cuSPARSELt, NVSHMEM, cuFile) are wheels of the GPU machine's venv,
# not here: let the linker leave their symbols to the GPU machine's loader.
[[ -n $torch ]] && configure+=(-DATTNPROF_WITH_TORCH=ON "-DCMAKE_PREFIX_PATH=$torch/share/cmake"
  "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--allow-shlib-undefined"
  # The test binaries cannot start here (those libraries): list their tests when ctest runs.
  -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST)
cmake -S "$root" -B "$build" -G Ninja "${configure[@]}" >/dev/null
ninja -C "$build" -j"$jobs" attnprof attnprof_py test_gpu

rm -rf "$pkg"
mkdir -p "$pkg/bin" "$pkg/lib"
# libattnprof_py.so next to attnprof: the Python worker's instrument (found there by attnprof).
cp "$build/attnprof" "$build/tests/test_gpu" "$build/libattnprof_py.so" "$pkg/bin/"
strip --strip-unneeded "$pkg/bin/attnprof" "$pkg/bin/test_gpu" "$pkg/bin/libattnprof_py.so"
# The Python package as built beside them (bin/python, where attnprof looks first after
# $ATTNPROF_PYTHON_DIR): the worker's ctypes structs must match the library's ABI, so a working
# tree changed after the build may not lend its python/ to this bundle.
tar -C "$root" --exclude=__pycache__ -cf - python | tar -x -C "$pkg/bin/"

# Shared libraries the machine already has (or must come from its own system).
keep_system='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libutil|libgcc_s|libstdc\+\+)\.'
ldd "$pkg/bin/attnprof" "$pkg/bin/test_gpu" "$pkg/bin/libattnprof_py.so" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
  sort -u | while read -r name path; do
    [[ $name =~ $keep_system ]] && continue
    [[ $path == /usr/local/cuda* ]] && continue
    [[ -n $torch && ( $path == "$torch"/* || $path == "$(dirname "$torch")"/nvidia/* ) ]] && continue
    cp -L "$path" "$pkg/lib/$name"
    echo "bundled $name ($(du -h "$pkg/lib/$name" | cut -f1))"
  done
# LibTorch's own dependencies (cuSPARSELt, NVSHMEM, ...) come from its wheels on the GPU machine.
missing=$(ldd "$pkg/bin/attnprof" "$pkg/bin/test_gpu" "$pkg/bin/libattnprof_py.so" | grep "not found" || true)
if [[ -n $torch ]]; then
  missing=$(grep -vE 'libcusparseLt|libnvshmem|libcufile|libnccl|libcudss' <<<"$missing" || true)
fi
if [[ -n $missing ]]; then
  echo "bundle.sh: a library is missing here too:" >&2
  echo "$missing" >&2
  exit 1
fi
git -C "$root" rev-parse --short=12 HEAD >"$pkg/COMMIT" 2>/dev/null || echo unknown >"$pkg/COMMIT"
# A working tree that differs from the commit is said in COMMIT too: the rows' build is not it.
[[ -n $(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null) ]] &&
  sed -i 's/$/ plus local changes/' "$pkg/COMMIT"
if [[ -n $torch ]]; then echo "LibTorch providers built against $torch" >"$pkg/TORCH"; fi
echo "bundle.sh: $(du -sh "$pkg" | cut -f1) in $pkg (commit $(cat "$pkg/COMMIT"))"
