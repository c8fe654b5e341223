// NVML, loaded with dlopen("libnvidia-ml.so.1") and used only for the environment record
// (driver string, power limit, ECC, clocks). Nothing links against it, so the binary starts on
// machines without it (the CPU machine and CI), where every field stays empty.
#pragma once

#include <string>

namespace attnprof::cuda {

struct NvmlInfo {
  bool loaded = false;
  std::string note;          // why fields are missing ("libnvidia-ml.so.1 not found", ...)
  std::string driver;        // "580.159.04"
  double power_limit_w = 0;  // enforced power limit
  std::string ecc;           // "on", "off" or "" (not supported / unknown)
  int sm_clock_mhz = 0, sm_clock_max_mhz = 0;
  int mem_clock_mhz = 0, mem_clock_max_mhz = 0;
};

// The device is found by its PCI bus id ("0000:18:00.0", from cudaDeviceGetPCIBusId), since
// NVML and CUDA may number devices differently.
NvmlInfo query_nvml(const std::string& pci_bus_id);

// Board power while points are sampled (docs/method.md, "Clocks"): NVML kept loaded for the
// engine's life. Never throws; where NVML or the device is missing, watts() is 0.
class PowerMeter {
 public:
  explicit PowerMeter(const std::string& pci_bus_id);
  ~PowerMeter();
  PowerMeter(const PowerMeter&) = delete;
  PowerMeter& operator=(const PowerMeter&) = delete;
  // nvmlDeviceGetPowerUsage: the board's power draw in watts (NVML averages it over a short
  // window, about a second on recent drivers); 0 when unknown.
  double watts() const;

 private:
  void* lib_ = nullptr;
  void* device_ = nullptr;
  int (*power_usage_)(void*, unsigned*) = nullptr;
  int (*shutdown_)() = nullptr;
};

}  // namespace attnprof::cuda
