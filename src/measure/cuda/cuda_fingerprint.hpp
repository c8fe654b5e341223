// The CUDA part of the environment fingerprint: device identity, driver, runtime and library
// versions (stable: part of resume/compare keys) and NVML's record of power limit, ECC and
// clocks (for the record only).
#pragma once

#include <string>

#include "attnprof/device.hpp"
#include "attnprof/env.hpp"

namespace attnprof::cuda {

// Keys (all strings): gpu, gpu_sm_count, gpu_cc, gpu_memory_bytes, gpu_l2_bytes,
// gpu_clock_rate_mhz, gpu_pci_bus_id, cuda_driver, cuda_runtime, cublas, driver (NVML's
// driver string, else "cuda <cuda_driver>"), gpu_power_limit_w, gpu_ecc, gpu_sm_clock_mhz,
// gpu_sm_clock_max_mhz, gpu_mem_clock_mhz, gpu_mem_clock_max_mhz, nvml (why NVML fields are
// missing). Entries that cannot be read are left out.
Fingerprint cuda_fingerprint(const Device& device);

}  // namespace attnprof::cuda
