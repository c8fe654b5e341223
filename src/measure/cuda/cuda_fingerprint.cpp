#include "measure/cuda/cuda_fingerprint.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstdlib>

#include "cuda/library_versions.hpp"
#include "cuda/nvml.hpp"

namespace attnprof::cuda {

Fingerprint cuda_fingerprint(const Device& d) {
  Fingerprint f;
  auto put = [&f](const char* key, std::string value) {
    if (!value.empty()) f[key] = std::move(value);
  };
  put("cuda_driver", cuda_driver_version());
  put("cuda_runtime", cuda_runtime_version());
  put("cublas", cublas_version());
  if (d.sm_count == 0) return f;  // no device: versions only
  put("gpu", d.name);
  put("gpu_sm_count", std::to_string(d.sm_count));
  put("gpu_cc", fmt::format("{}.{}", d.cc_major, d.cc_minor));
  put("gpu_memory_bytes", std::to_string(d.memory_bytes));
  put("gpu_l2_bytes", std::to_string(d.l2_bytes));
  put("gpu_clock_rate_mhz", std::to_string(d.clock_khz / 1000));

  char bus[64] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, d.index) != cudaSuccess) bus[0] = '\0';
  put("gpu_pci_bus_id", bus);
  // Which of the host's GPUs this process was given (run --gpus pins each share to one).
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"))
    put("cuda_visible_devices", visible);
  const NvmlInfo nv = query_nvml(bus);
  put("nvml", nv.note);
  put("driver", !nv.driver.empty()       ? nv.driver
                : f.count("cuda_driver") ? "cuda " + f["cuda_driver"]
                                         : std::string());
  if (nv.power_limit_w > 0) put("gpu_power_limit_w", fmt::format("{:.0f}", nv.power_limit_w));
  put("gpu_ecc", nv.ecc);
  auto put_mhz = [&put](const char* key, int mhz) {
    if (mhz > 0) put(key, std::to_string(mhz));
  };
  put_mhz("gpu_sm_clock_mhz", nv.sm_clock_mhz);
  put_mhz("gpu_sm_clock_max_mhz", nv.sm_clock_max_mhz);
  put_mhz("gpu_mem_clock_mhz", nv.mem_clock_mhz);
  put_mhz("gpu_mem_clock_max_mhz", nv.mem_clock_max_mhz);
  return f;
}

}  // namespace attnprof::cuda
