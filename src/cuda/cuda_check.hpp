// Errors as values at the kernel boundary, exceptions at the orchestration boundary: these
// helpers turn a CUDA/cuBLAS status into a typed fault (attnprof/fault.hpp) carrying the
// library's own words, classified here by the status code, never later by its text.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "attnprof/fault.hpp"

namespace attnprof::cuda {

// Sticky errors (illegal address, launch failure, ...) poison the context: every later call in
// the process fails too, so the worker must be replaced after one of them.
bool is_sticky(cudaError_t code);
// The fault of a CUDA error: oom for cudaErrorMemoryAllocation, sticky_device for a sticky one,
// device otherwise.
Fault fault_of(cudaError_t code);

class CudaError : public FaultError {
 public:
  CudaError(cudaError_t code, const std::string& what)
      : FaultError(fault_of(code), what), code_(code) {}
  cudaError_t code() const { return code_; }
  bool sticky() const { return is_sticky(code_); }

 private:
  cudaError_t code_;
};

// Why this process can no longer trust the device, in words: the sticky error the context
// holds (cudaDeviceSynchronize and cudaGetLastError report it); "" when there is none.
std::string sticky_error();

void check_cuda(cudaError_t e, const char* what, const char* file, int line);

// Why CUDA cannot run device `index` here, in words ("no CUDA driver on this machine (...)", "no
// CUDA device", ...); "" when it can. Clears the (non-sticky) error it may leave behind. The one
// answer the engine, the CUDA, cuDNN and LibTorch providers give.
std::string unavailable_reason(int index);
// Throws FaultError: oom for CUBLAS_STATUS_ALLOC_FAILED, library otherwise.
void check_cublas(cublasStatus_t s, const char* what, const char* file, int line);

}  // namespace attnprof::cuda

#define ATTNPROF_CUDA(expr) ::attnprof::cuda::check_cuda((expr), #expr, __FILE__, __LINE__)
#define ATTNPROF_CUBLAS(expr) ::attnprof::cuda::check_cublas((expr), #expr, __FILE__, __LINE__)
