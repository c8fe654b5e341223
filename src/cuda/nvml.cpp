#include "cuda/nvml.hpp"

#include <dlfcn.h>

namespace attnprof::cuda {

namespace {

// The few NVML declarations used, written out so that no nvml.h is needed to build.
using nvmlReturn = int;  // NVML_SUCCESS = 0
using nvmlDevice = struct nvmlDevice_st*;
constexpr int kNvmlClockSm = 1;   // NVML_CLOCK_SM
constexpr int kNvmlClockMem = 2;  // NVML_CLOCK_MEM

struct NvmlApi {
  nvmlReturn (*init)();
  nvmlReturn (*shutdown)();
  nvmlReturn (*driver_version)(char*, unsigned);
  nvmlReturn (*by_pci_bus_id)(const char*, nvmlDevice*);
  nvmlReturn (*power_limit)(nvmlDevice, unsigned*);  // milliwatts
  nvmlReturn (*ecc_mode)(nvmlDevice, int*, int*);    // current, pending (1 = enabled)
  nvmlReturn (*clock)(nvmlDevice, int, unsigned*);
  nvmlReturn (*max_clock)(nvmlDevice, int, unsigned*);
};

template <class F>
bool bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

}  // namespace

NvmlInfo query_nvml(const std::string& pci_bus_id) {
  NvmlInfo info;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    info.note = "NVML not available (libnvidia-ml.so.1 not found)";
    return info;
  }
  NvmlApi api{};
  if (!bind(lib, "nvmlInit_v2", api.init) || !bind(lib, "nvmlShutdown", api.shutdown) ||
      !bind(lib, "nvmlSystemGetDriverVersion", api.driver_version) ||
      !bind(lib, "nvmlDeviceGetHandleByPciBusId_v2", api.by_pci_bus_id) ||
      !bind(lib, "nvmlDeviceGetEnforcedPowerLimit", api.power_limit) ||
      !bind(lib, "nvmlDeviceGetEccMode", api.ecc_mode) ||
      !bind(lib, "nvmlDeviceGetClockInfo", api.clock) ||
      !bind(lib, "nvmlDeviceGetMaxClockInfo", api.max_clock)) {
    info.note = "NVML not available (a symbol is missing from libnvidia-ml.so.1)";
    dlclose(lib);
    return info;
  }
  if (api.init() != 0) {
    info.note = "NVML not available (nvmlInit failed)";
    dlclose(lib);
    return info;
  }
  info.loaded = true;
  char buf[96] = {};
  if (api.driver_version(buf, sizeof buf) == 0) info.driver = buf;
  nvmlDevice dev = nullptr;
  if (api.by_pci_bus_id(pci_bus_id.c_str(), &dev) == 0) {
    unsigned v = 0;
    if (api.power_limit(dev, &v) == 0) info.power_limit_w = v / 1000.0;
    int current = 0, pending = 0;
    if (api.ecc_mode(dev, &current, &pending) == 0) info.ecc = current ? "on" : "off";
    if (api.clock(dev, kNvmlClockSm, &v) == 0) info.sm_clock_mhz = static_cast<int>(v);
    if (api.max_clock(dev, kNvmlClockSm, &v) == 0) info.sm_clock_max_mhz = static_cast<int>(v);
    if (api.clock(dev, kNvmlClockMem, &v) == 0) info.mem_clock_mhz = static_cast<int>(v);
    if (api.max_clock(dev, kNvmlClockMem, &v) == 0) info.mem_clock_max_mhz = static_cast<int>(v);
  } else {
    info.note = "NVML has no device at PCI bus id " + pci_bus_id;
  }
  api.shutdown();
  dlclose(lib);
  return info;
}

PowerMeter::PowerMeter(const std::string& pci_bus_id) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return;
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*by_pci_bus_id)(const char*, nvmlDevice*) = nullptr;
  if (!bind(lib_, "nvmlInit_v2", init) || !bind(lib_, "nvmlShutdown", shutdown_) ||
      !bind(lib_, "nvmlDeviceGetHandleByPciBusId_v2", by_pci_bus_id) ||
      !bind(lib_, "nvmlDeviceGetPowerUsage", power_usage_) || init() != 0) {
    dlclose(lib_);
    lib_ = nullptr;
    return;
  }
  nvmlDevice dev = nullptr;
  if (by_pci_bus_id(pci_bus_id.c_str(), &dev) == 0) device_ = dev;
}

PowerMeter::~PowerMeter() {
  if (!lib_) return;
  shutdown_();
  dlclose(lib_);
}

double PowerMeter::watts() const {
  unsigned mw = 0;
  if (!lib_ || !device_ || power_usage_(device_, &mw) != 0) return 0;
  return mw / 1000.0;
}

}  // namespace attnprof::cuda
