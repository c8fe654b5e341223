// The forward check through fp64 GEMMs (device_check_gemm.cu): the reference S = scale Q K^T and
// O = softmax(S) V computed with cuBLAS DGEMMs over chunks of (batch, KV head) groups and their
// query heads' rows (K and V widened once per group, however many query heads share them),
// the softmax and the comparison in kernels; the same per-row sums as the shared-memory forward
// kernel of device_check.cu, with the products on the FP64 tensor cores (docs/method.md,
// "Verification", has the cost of each). Internal to src/measure/cuda.
#pragma once

#include <cuda_runtime.h>

#include "attnprof/io.hpp"
#include "attnprof/spec.hpp"

namespace attnprof::cuda {

// Per query row (flat (b * q_heads + h) * q_len + i), device memory the caller owns.
struct ForwardRowSums {
  double* err2 = nullptr;  // squared error of O's row
  double* ref2 = nullptr;  // squared reference row
  double* max_abs = nullptr;
  double* floor = nullptr;     // sqrt(sum_j P_ij^2 |v_j|^2)
  const float* lse = nullptr;  // the provider's LSE (null: none)
  double* lse_err = nullptr;   // |lse - lse_ref|
  double* o_keep = nullptr;    // where to keep O_ref per element (null: nowhere)
  double* lse_keep = nullptr;  // where to keep the reference LSE per row
};

// Fills `out` for mode fwd. False, with nothing written, when its scratch memory cannot be had
// (the caller then uses the shared-memory kernel). Scratch: `budget` bytes at most, 0 for half
// of the free memory up to 2 GiB. Synchronous; throws on CUDA or cuBLAS errors.
bool gemm_forward_sums(const Spec& spec, const Io& io, cudaStream_t stream,
                       const ForwardRowSums& out, int64_t budget = 0);

}  // namespace attnprof::cuda
