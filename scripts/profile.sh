#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build what this machine can run, and run
# the default profile on the best device present (CUDA where a device answers, else the CPU), tune
# the batch of the seed's shape, and write the report (scripts/main_job.sh). Everything goes under
# results/. Extra arguments go to `attnprof run`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/install-deps.sh >/dev/null
# A GPU answers where the NVIDIA driver lists one: `nvidia-smi -L` (the driver's own tool), or
# its /proc/driver/nvidia/gpus/ where a container has the driver without the tool. Without one,
# only the CPU preset is built: the CUDA code is most of a 2-core machine's build and nothing of
# it could run here.
gpu_answers() {
  if command -v nvidia-smi >/dev/null 2>&1; then
    # Taken whole, then searched: a grep -q that exits at its match would leave nvidia-smi to
    # die of SIGPIPE, and pipefail would read that as no GPU.
    local gpus
    gpus=$(nvidia-smi -L 2>/dev/null) || return 1
    grep -q '^GPU ' <<<"$gpus"
  else
    [ -n "$(ls -A /proc/driver/nvidia/gpus 2>/dev/null)" ]
  fi
}
if gpu_answers; then
  preset=default build=build
else
  preset=cpu build=build-cpu
  echo "profile: no GPU answers (nvidia-smi lists none): building the CPU preset only"
fi
# The LibTorch providers (torch.sdpa.*, torch.naive) come with no flag where a GPU answers,
# python3 has a CUDA PyTorch and nvcc is here; otherwise one line says why they were skipped.
torch_flags=()
if [ "$preset" = cpu ]; then
  echo "profile: LibTorch providers skipped: no GPU (they run on the CUDA engine)"
elif ! command -v nvcc >/dev/null 2>&1; then
  echo "profile: LibTorch providers skipped: no nvcc (they run on the CUDA engine)"
elif prefix=$(python3 -c 'import sys, torch; sys.exit("no CUDA in this PyTorch") if torch.version.cuda is None else print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
  echo "profile: building the LibTorch providers against $prefix"
  torch_flags=(-DATTNPROF_WITH_TORCH=ON "-DCMAKE_PREFIX_PATH=$prefix")
else
  echo "profile: LibTorch providers skipped: python3 has no CUDA PyTorch (import torch failed or torch.version.cuda is None)"
fi
cmake --preset "$preset" "${torch_flags[@]}" >/dev/null
cmake --build --preset "$preset" --target attnprof
exec bash scripts/main_job.sh "./$build/attnprof" "$@"
