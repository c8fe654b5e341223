#!/usr/bin/env bash
# Runs ON the lent GPU machine: Nsight Compute's view of ATen's FlashAttention-2 backward (the
# kernels py.torch.sdpa.flash times in mode bwd), one call at B 4, 16 heads, N 4096, D 128, bf16,
# no mask, with the same sections (and ATTNPROF_NCU_METRICS) as ncu_point.sh gives cuda.flash:
# $OUT/ncu-fa2-bwd.txt. The Python provider runs in a worker process that `attnprof trace
# --ncu-target` does not start, so this calls the two ATen operators directly.
set -uo pipefail
# shellcheck source=scripts/device/bundle_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bundle_env.sh"
python=${ATTNPROF_PYTHON:-/opt/torch/.venv/bin/python}
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis
  --section WarpStateStats --section LaunchStats)
[[ -n ${ATTNPROF_NCU_METRICS:-} ]] && sections+=(--metrics "$ATTNPROF_NCU_METRICS")
timeout 150 ncu --clock-control none --kernel-name regex:bwd "${sections[@]}" "$python" - \
  >"$out/ncu-fa2-bwd.txt" 2>&1 <<'PY'
import torch
q = torch.randn(4, 16, 4096, 128, device="cuda", dtype=torch.bfloat16)
k, v, d_o = torch.randn_like(q), torch.randn_like(q), torch.randn_like(q)
f = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, False, False)
torch.ops.aten._scaled_dot_product_flash_attention_backward(
    d_o, q, k, v, f[0], f[1], f[2], f[3], f[4], f[5], 0.0, False, f[6], f[7])
torch.cuda.synchronize()
PY
echo "== ncu fa2 bwd: exit $?"
