#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "attnprof/device.hpp"

namespace attnprof {

std::string_view to_string(DeviceKind k) {
  return k == DeviceKind::cpu ? "cpu" : "cuda";
}

std::optional<DeviceKind> parse_device_kind(std::string_view s) {
  if (s == "cpu") return DeviceKind::cpu;
  if (s == "cuda") return DeviceKind::cuda;
  return std::nullopt;
}

Device host_cpu_device() {
  Device d;
  d.kind = DeviceKind::cpu;
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  std::string model = "unknown CPU";
  while (std::getline(info, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  d.name = "cpu: " + model;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  d.memory_bytes = pages > 0 && page_size > 0 ? int64_t{pages} * page_size : 0;
  d.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return d;
}

#if !defined(ATTNPROF_WITH_CUDA)
int cuda_device_count() {
  return 0;  // the CUDA build's is in src/cuda/cuda_check.cpp
}
#endif

}  // namespace attnprof
