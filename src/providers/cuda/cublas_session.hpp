// One cuBLAS handle per prepared run, created in prepare and never in launch, with its
// workspace allocated through the run's MemoryTracker so that cuBLAS's scratch memory is part
// of the point's measured peak.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attnprof/memory.hpp"
#include "cuda/device_buffer.hpp"

namespace attnprof::cuda {

class CublasSession {
 public:
  // 32 MiB: what cuBLAS itself recommends for Hopper and what PyTorch gives it on sm_90
  // (CUBLAS_WORKSPACE_CONFIG :4096:8), so kernel choices match PyTorch's.
  static constexpr int64_t kWorkspaceBytes = int64_t{32} << 20;

  // Default math mode: no TF32. With CUBLAS_COMPUTE_32F (attention_gemms.cpp) an fp32 GEMM
  // stays fp32, as PyTorch's with allow_tf32 off (its default for matmul).
  explicit CublasSession(MemoryTracker* tracker);
  ~CublasSession();
  CublasSession(const CublasSession&) = delete;
  CublasSession& operator=(const CublasSession&) = delete;

  // The handle, bound to `stream` with the tracked workspace (set after the stream on every
  // call: cublasSetStream resets the workspace to cuBLAS's own pool).
  cublasHandle_t bind(cudaStream_t stream);

  int64_t bytes() const { return workspace_.bytes(); }

 private:
  cublasHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
};

}  // namespace attnprof::cuda
