// Factory functions of every provider, one per provider file. The registry table
// (src/core/registry.cpp) is the only caller.
#pragma once

#include <memory>
#include <string>

#include "attnprof/provider.hpp"

namespace attnprof {

// CPU (src/providers/cpu/)
std::unique_ptr<Provider> make_cpu_reference();
std::unique_ptr<Provider> make_cpu_naive();
std::unique_ptr<Provider> make_cpu_flash();

// CUDA (src/providers/cuda/), built with ATTNPROF_WITH_CUDA
std::unique_ptr<Provider> make_cuda_naive();
std::unique_ptr<Provider> make_cuda_naive_expand();
std::unique_ptr<Provider> make_cuda_math();

// cuDNN (src/providers/cudnn/), built with ATTNPROF_WITH_CUDNN
std::unique_ptr<Provider> make_cudnn_sdpa();

// A provider this build does not contain: listed, never available, with the reason.
std::unique_ptr<Provider> make_unbuilt(std::string name, std::string description,
                                       DeviceKind kind, std::string reason);

}  // namespace attnprof
