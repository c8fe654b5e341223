// The versions of the CUDA driver, runtime and cuBLAS this process loaded, for the environment
// fingerprint (measure/) and the traits of the providers that call cuBLAS (providers/).
#pragma once

#include <string>

namespace attnprof::cuda {

// "13.0"-style versions; "" where unknown (no driver, library not built).
std::string cuda_driver_version();
std::string cuda_runtime_version();
std::string cublas_version();  // "13.1.0"

}  // namespace attnprof::cuda
