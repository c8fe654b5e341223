#include "cuda/cuda_check.hpp"

#include "attnprof/device.hpp"

#include <fmt/format.h>

namespace attnprof::cuda {

bool is_sticky(cudaError_t code) {
  // Errors that leave the context unusable: every later call in this process fails too, so the
  // worker that saw one must be replaced (docs/design.md, "Faults").
  switch (code) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorContextIsDestroyed:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

Fault fault_of(cudaError_t code) {
  if (code == cudaErrorMemoryAllocation) return Fault::oom;
  return is_sticky(code) ? Fault::sticky_device : Fault::device;
}

std::string sticky_error() {
  const cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess || !is_sticky(e)) {
    (void)cudaGetLastError();
    return "";
  }
  return fmt::format("the CUDA context is poisoned ({}: {}): this process cannot run more points",
                     cudaGetErrorName(e), cudaGetErrorString(e));
}

void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e == cudaSuccess) return;
  // Clear the non-sticky "last error" so the next unrelated check does not report it again.
  (void)cudaGetLastError();
  throw CudaError(e, fmt::format("{}: {} ({}) at {}:{}", what, cudaGetErrorName(e),
                                 cudaGetErrorString(e), file, line));
}

void check_cublas(cublasStatus_t s, const char* what, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const std::string msg = fmt::format("{}: {} ({}) at {}:{}", what, cublasGetStatusName(s),
                                      cublasGetStatusString(s), file, line);
  // An allocation failure inside cuBLAS is an out-of-memory like any other.
  throw FaultError(s == CUBLAS_STATUS_ALLOC_FAILED ? Fault::oom : Fault::library, msg);
}

std::string unavailable_reason(int index) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice ||
      e == cudaErrorSystemDriverMismatch || e == cudaErrorCompatNotSupportedOnDevice) {
    return fmt::format("{} (cudaGetDeviceCount: {})",
                       e == cudaErrorNoDevice ? "no CUDA device" : "no CUDA driver on this machine",
                       cudaGetErrorString(e));
  }
  if (e != cudaSuccess) {
    return fmt::format("CUDA unavailable (cudaGetDeviceCount: {}: {})", cudaGetErrorName(e),
                       cudaGetErrorString(e));
  }
  if (count == 0) return "no CUDA device";
  if (index < 0 || index >= count) {
    return fmt::format("no CUDA device {} (this machine has {})", index, count);
  }
  return "";
}

}  // namespace attnprof::cuda

namespace attnprof {

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  (void)cudaGetLastError();
  return count;
}

}  // namespace attnprof
