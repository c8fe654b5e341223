// What a point runs on. CPU always exists; CUDA devices are described by the CUDA engine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace attnprof {

enum class DeviceKind { cpu, cuda };

struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;
  std::string name;          // "cpu: <model>" or "NVIDIA H200"
  int64_t memory_bytes = 0;  // total memory the point may use (host RAM or device memory)
  int sm_count = 0;          // CUDA only
  int cc_major = 0, cc_minor = 0;
  int64_t l2_bytes = 0;  // CUDA only
  int clock_khz = 0;     // CUDA: cudaDevAttrClockRate
  int threads = 1;       // CPU: worker threads available to providers
};

std::string_view to_string(DeviceKind k);
std::optional<DeviceKind> parse_device_kind(std::string_view s);

// CUDA devices this process sees (0 without CUDA in the build, a driver or a device).
int cuda_device_count();

// The host CPU as a Device (name from /proc/cpuinfo, memory from sysconf).
Device host_cpu_device();

}  // namespace attnprof
