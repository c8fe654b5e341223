# Sourced by the build scripts: the CUDA toolkit's nvcc where it is installed but not on PATH
# (non-login shells, CI), so ATTNPROF_WITH_CUDA turns on wherever the toolkit exists.
if ! command -v nvcc >/dev/null 2>&1; then
  for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [ -n "$d" ] && [ -x "$d/bin/nvcc" ]; then
      export PATH="$d/bin:$PATH"
      break
    fi
  done
fi
