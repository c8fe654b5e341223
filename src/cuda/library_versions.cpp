#include "cuda/library_versions.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

namespace attnprof::cuda {

namespace {
// CUDA encodes versions as 1000 * major + 10 * minor.
std::string cuda_version_string(int v) {
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}
}  // namespace

std::string cuda_driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess || v == 0) return "";
  return cuda_version_string(v);
}

std::string cuda_runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return "";
  return cuda_version_string(v);
}

std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS) {
    return "";
  }
  return fmt::format("{}.{}.{}", major, minor, patch);
}

}  // namespace attnprof::cuda
