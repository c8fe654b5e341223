// LibTorch as a runtime: whether it sees a CUDA device, its version, and the library folders
// its worker group starts with.
#include <dlfcn.h>

#include <ATen/Context.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "providers/cuda/provider_common.hpp"
#include "providers/torch/torch_provider.hpp"

namespace attnprof::torchp {

namespace fs = std::filesystem;

Availability torch_availability() {
  static std::once_flag once;
  static Availability availability;
  std::call_once(once, [] {
    try {
      if (Availability device = cuda::device_availability(); !device.available) {
        availability = device;
      } else if (!at::hasCUDA()) {
        availability = {false, "LibTorch " + torch_version() + " is built without CUDA"};
      }
    } catch (const std::exception& e) {
      availability = {false, std::string("LibTorch cannot use CUDA: ") + e.what()};
    }
  });
  return availability;
}

std::string torch_version() {
  return TORCH_VERSION;
}

WorkerGroup torch_worker_group() {
  static const WorkerGroup group = [] {
    // ATTNPROF_TORCH_LIBRARY_PATH overrides what is found next to the loaded libc10.
    if (const char* set = std::getenv("ATTNPROF_TORCH_LIBRARY_PATH"); set && *set) {
      return WorkerGroup{"torch", set, {}, {}};
    }
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&c10::cuda::device_count), &info) == 0 ||
        info.dli_fname == nullptr) {
      return WorkerGroup{"torch", "", {}, {}};
    }
    // .../site-packages/torch/lib/libc10_cuda.so: the wheel's NVIDIA libraries (cuBLAS, cuDNN,
    // the CUDA runtime, NCCL, ...) are in .../site-packages/nvidia/*/lib.
    std::error_code ec;
    const fs::path torch_lib = fs::weakly_canonical(fs::path(info.dli_fname), ec).parent_path();
    std::string path = torch_lib.string();
    const fs::path nvidia = torch_lib.parent_path().parent_path() / "nvidia";
    std::vector<std::string> folders;
    if (fs::is_directory(nvidia, ec)) {
      for (const auto& entry : fs::directory_iterator(nvidia, ec)) {
        if (fs::is_directory(entry.path() / "lib", ec)) {
          folders.push_back((entry.path() / "lib").string());
        }
      }
    }
    std::sort(folders.begin(), folders.end());
    for (const std::string& f : folders) path += ":" + f;
    return WorkerGroup{"torch", path, {}, {}};
  }();
  return group;
}

}  // namespace attnprof::torchp
