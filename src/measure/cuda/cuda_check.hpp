// Errors as values at the kernel boundary, exceptions at the orchestration boundary: these
// helpers turn a CUDA/cuBLAS status into a std::runtime_error carrying the library's own words.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace attnprof::cuda {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }
  // Sticky errors (illegal address, launch failure, ...) poison the context: the worker must be
  // replaced after one of them.
  bool sticky() const;

 private:
  cudaError_t code_;
};

void check_cuda(cudaError_t e, const char* what, const char* file, int line);

// Why CUDA cannot run device `index` here, in words ("no CUDA driver on this machine (...)", "no
// CUDA device", ...); "" when it can. Clears the (non-sticky) error it may leave behind. The one
// answer the engine, the CUDA, cuDNN and LibTorch providers give.
std::string unavailable_reason(int index);
void check_cublas(cublasStatus_t s, const char* what, const char* file, int line);

}  // namespace attnprof::cuda

#define ATTNPROF_CUDA(expr) ::attnprof::cuda::check_cuda((expr), #expr, __FILE__, __LINE__)
#define ATTNPROF_CUBLAS(expr) ::attnprof::cuda::check_cublas((expr), #expr, __FILE__, __LINE__)
