#!/usr/bin/env bash
# Installs everything attnprof needs to build and test on Debian 12 (the CPU machine and CI).
# Idempotent: packages already present are left alone. Run as root (or with sudo available).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# libjs-chart.js: Chart.js, which the build copies beside attnprof and every HTML report inlines to
# draw its charts (nothing of it is in the repository). chromium: the browser the report's check
# (tests/browser/check_report.py) opens it in. gnuplot-nox: optional, the Markdown report's SVGs.
pkgs=(build-essential cmake ninja-build pkg-config
      libcli11-dev nlohmann-json3-dev libfmt-dev libtomlplusplus-dev
      libsqlite3-dev zlib1g-dev libopenblas-dev libgtest-dev libgmock-dev libomp-dev
      libjs-chart.js chromium gnuplot-nox clang-format python3 python3-pip python3-venv python3-numpy)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The cuDNN frontend is header-only and comes as a PyPI wheel; we unpack its headers into
# .deps/ (ignored by git) so the build never depends on a Python environment.
root=$(cd "$(dirname "$0")/.." && pwd)
fe="$root/.deps/cudnn_frontend/include/cudnn_frontend.h"
if command -v nvcc >/dev/null 2>&1 && [ ! -f "$fe" ]; then
  tmp=$(mktemp -d)
  if python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "nvidia-cudnn-frontend==1.32.0" 2>/dev/null; then
    mkdir -p "$root/.deps/cudnn_frontend"
    python3 - "$tmp" "$root/.deps/cudnn_frontend" <<'PY'
import sys, zipfile, glob, os
whl = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
out = sys.argv[2]
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if n.startswith("include/") and not n.endswith("/"):
            dst = os.path.join(out, n)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as f:
                f.write(z.read(n))
PY
  else
    echo "install-deps: nvidia-cudnn-frontend could not be downloaded; cudnn.sdpa will not be built" >&2
  fi
  rm -rf "$tmp"
fi
# ONNX Runtime's CPU wheel and onnx, for the ort.cpu.* Python providers (their tests skip without
# them). Into the system python3 (Debian marks it externally managed, hence the flag).
if ! python3 -c "import onnxruntime, onnx" >/dev/null 2>&1; then
  if ! python3 -m pip install -q --break-system-packages "onnxruntime==1.32.0" "onnx==1.23.2" >/dev/null 2>&1; then
    echo "install-deps: onnxruntime/onnx could not be installed from PyPI; ort.cpu.* will be unavailable" >&2
  fi
fi
# OpenVINO and JAX (CPU wheels), for py.openvino.cpu.sdpa and py.jax.xla.cpu (their tests run in
# CI). Measured on the 2-core VM (2026-12-06): openvino 59 MB, jaxlib 85 MB, jax 3 MB and scipy
# 35 MB as wheels, 23 s to download and install into a fresh venv, 670 MB installed. PyTorch is
# not installed here: its PyPI wheel brings the CUDA libraries (README, "Providers").
if ! python3 -c "import openvino, jax" >/dev/null 2>&1; then
  if ! python3 -m pip install -q --break-system-packages "openvino==2026.4.1" "jax==0.10.2" \
      "jaxlib==0.10.2" >/dev/null 2>&1; then
    echo "install-deps: openvino/jax could not be installed from PyPI; py.openvino.cpu.sdpa and py.jax.xla.cpu will be unavailable" >&2
  fi
fi
# pytest, for the Python package's tests (the ctest test Python.Package), into the same python3.
if ! python3 -c "import pytest" >/dev/null 2>&1; then
  if ! python3 -m pip install -q --break-system-packages "pytest>=7" >/dev/null 2>&1; then
    echo "install-deps: pytest could not be installed from PyPI; the test Python.Package will fail" >&2
  fi
fi
echo "install-deps: done"
