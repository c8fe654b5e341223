#include "providers/cuda/cublas_session.hpp"

#include "cuda/cuda_check.hpp"

namespace attnprof::cuda {

CublasSession::CublasSession(MemoryTracker* tracker) : workspace_(kWorkspaceBytes, tracker) {
  ATTNPROF_CUBLAS(cublasCreate(&handle_));
  const cublasStatus_t s = cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH);
  if (s != CUBLAS_STATUS_SUCCESS) {
    cublasDestroy(handle_);
    ATTNPROF_CUBLAS(s);
  }
}

CublasSession::~CublasSession() {
  if (handle_) (void)cublasDestroy(handle_);
}

cublasHandle_t CublasSession::bind(cudaStream_t stream) {
  ATTNPROF_CUBLAS(cublasSetStream(handle_, stream));
  ATTNPROF_CUBLAS(
      cublasSetWorkspace(handle_, workspace_.data(), static_cast<size_t>(workspace_.bytes())));
  return handle_;
}

}  // namespace attnprof::cuda
