// Peaks of any engine: the datasheet table, the cache file, and the per-row figures derived from
// them. The keys and the measurements are the engines' own (cpu_peaks.cpp, cuda/peaks.cpp).
#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attnprof/inputs.hpp"  // fnv1a
#include "attnprof/peaks.hpp"

#include "measure/host_load.hpp"

namespace attnprof {

namespace {

constexpr int kPeaksSchema = 5;  // 2: kind and fp32_tflops (CPU); 3: fp8_tflops; 4: the clocks;
                                 // 5: host_busy (a CPU cache of 4 may have been measured busy)

bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

// The rate of a dtype's matrix units among a device's figures (fp32 is held against tf32).
double rate_for(DType dtype, double bf16, double fp16, double tf32, double fp8) {
  switch (dtype) {
    case DType::bf16:
      return bf16;
    case DType::fp16:
      return fp16;
    case DType::fp32:
      return tf32;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
      return fp8;
  }
  return 0;
}

}  // namespace

double Peaks::tflops_for(DType dtype) const {
  if (kind == DeviceKind::cpu) return fp32_tflops;
  return rate_for(dtype, bf16_tflops, fp16_tflops, tf32_tflops, fp8_tflops);
}

double Peaks::clock_for(DType dtype) const {
  if (kind == DeviceKind::cpu) return 0;
  return rate_for(dtype, bf16_clock_mhz, fp16_clock_mhz, tf32_clock_mhz, fp8_clock_mhz);
}

double Datasheet::tflops_for(DType dtype) const {
  return rate_for(dtype, bf16_tflops, fp16_tflops, tf32_tflops, fp8_tflops);
}

double Peaks::best_tbps() const {
  return std::max(copy_tbps, read_tbps);
}

Datasheet datasheet_for(const std::string& name) {
  // Dense tensor-core rates (no 2:4 sparsity) and HBM bandwidth from NVIDIA's datasheets. H200
  // and H100 SXM share the Hopper SXM compute rates; the NVL / PCIe parts run lower clocks and
  // power, so they are left unknown rather than held to the SXM figures.
  Datasheet d;
  if (contains(name, "NVL") || contains(name, "PCIe")) return d;
  if (contains(name, "H200")) {
    d = {true, "NVIDIA H200 SXM datasheet", 989.4, 989.4, 494.7, 4.8, 1978.9};
  } else if (contains(name, "H100") && (contains(name, "HBM3") || contains(name, "SXM"))) {
    d = {true, "NVIDIA H100 SXM datasheet", 989.4, 989.4, 494.7, 3.35, 1978.9};
  } else if (contains(name, "A100")) {
    const bool big = contains(name, "80GB");
    d = {true, "NVIDIA A100 SXM datasheet", 312, 312, 156, big ? 2.039 : 1.555};
  }
  return d;
}

std::string peaks_cache_path(const std::string& key) {
  std::filesystem::path dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = x;
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = std::filesystem::path(h) / ".cache";
  } else {
    return "";
  }
  return (dir / "attnprof" / fmt::format("peaks-{:016x}.json", fnv1a(key))).string();
}

std::optional<Peaks> load_cached_peaks(const std::string& key) {
  const std::string path = peaks_cache_path(key);
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (j.value("schema", 0) != kPeaksSchema || j.value("key", "") != key) return std::nullopt;
    Peaks p;
    p.key = key;
    p.device = j.value("device", "");
    p.measured_at = j.value("measured_at", "");
    p.kind = j.at("kind").get<std::string>() == "cpu" ? DeviceKind::cpu : DeviceKind::cuda;
    p.fp32_tflops = j.at("fp32_tflops").get<double>();
    p.bf16_tflops = j.at("bf16_tflops").get<double>();
    p.fp16_tflops = j.at("fp16_tflops").get<double>();
    p.tf32_tflops = j.at("tf32_tflops").get<double>();
    p.fp8_tflops = j.at("fp8_tflops").get<double>();
    p.copy_tbps = j.at("copy_tbps").get<double>();
    p.read_tbps = j.at("read_tbps").get<double>();
    p.bf16_clock_mhz = j.at("bf16_clock_mhz").get<double>();
    p.fp16_clock_mhz = j.at("fp16_clock_mhz").get<double>();
    p.tf32_clock_mhz = j.at("tf32_clock_mhz").get<double>();
    p.fp8_clock_mhz = j.at("fp8_clock_mhz").get<double>();
    p.host_busy = j.at("host_busy").get<double>();
    if (j.contains("env")) p.env = j.at("env").get<Fingerprint>();
    return p;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged cache is measured again, never trusted
  }
}

std::string to_json(const Peaks& p) {
  const nlohmann::json j = {{"schema", kPeaksSchema},
                            {"key", p.key},
                            {"device", p.device},
                            {"kind", p.kind == DeviceKind::cpu ? "cpu" : "cuda"},
                            {"measured_at", p.measured_at},
                            {"bf16_tflops", p.bf16_tflops},
                            {"fp16_tflops", p.fp16_tflops},
                            {"tf32_tflops", p.tf32_tflops},
                            {"fp8_tflops", p.fp8_tflops},
                            {"fp32_tflops", p.fp32_tflops},
                            {"copy_tbps", p.copy_tbps},
                            {"read_tbps", p.read_tbps},
                            {"bf16_clock_mhz", p.bf16_clock_mhz},
                            {"fp16_clock_mhz", p.fp16_clock_mhz},
                            {"tf32_clock_mhz", p.tf32_clock_mhz},
                            {"fp8_clock_mhz", p.fp8_clock_mhz},
                            {"host_busy", p.host_busy},
                            {"env", p.env}};
  return j.dump(2) + "\n";
}

std::string busy_note(const Peaks& p) {
  if (p.host_busy <= kBusyHost) return "";
  return fmt::format(
      "measured on a busy host ({:.0f}% of its CPU time went to other processes): they read low "
      "until a run on an idle host measures them again",
      100 * p.host_busy);
}

std::string save_peaks(const Peaks& p) {
  const std::string path = peaks_cache_path(p.key);
  if (path.empty()) return "";
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  // Write-then-rename, so a reader never sees half a file.
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());  // one per writer
  {
    std::ofstream out(tmp);
    if (!out) return "";
    out << to_json(p);
    if (!out) return "";
  }
  std::filesystem::rename(tmp, path, ec);
  return ec ? "" : path;
}

void apply_peaks(Result& r, const Peaks& peaks) {
  const double peak_tflops = peaks.tflops_for(r.spec.dtype);
  const double peak_tbps = peaks.best_tbps();
  if (!(peak_tflops > 0) || !(peak_tbps > 0)) return;
  r.peak_tflops = peak_tflops;
  r.peak_tbps = peak_tbps;
  r.peaks_source = "measured by attnprof " + peaks.measured_at;
  r.peak_clock_mhz = peaks.clock_for(r.spec.dtype);
  const Datasheet sheet = datasheet_for(peaks.device);
  r.datasheet_tflops = sheet.known ? sheet.tflops_for(r.spec.dtype) : 0;
  if (!(r.timing.median_us > 0)) return;
  r.pct_peak_flops = 100.0 * r.tflops / peak_tflops;
  if (r.peak_clock_mhz > 0 && r.timing.clock_mhz > 0) {
    r.pct_peak_flops_at_clock =
        100.0 * r.tflops / (peak_tflops * r.timing.clock_mhz / r.peak_clock_mhz);
  }
  if (r.datasheet_tflops > 0) r.pct_datasheet_flops = 100.0 * r.tflops / r.datasheet_tflops;
  r.pct_peak_bw = 100.0 * r.gbps / (peak_tbps * 1e3);
  if (r.bytes > 0) {
    // Ridge point in FLOP per byte: above it the matrix units, below it memory, set the floor.
    const double ridge = peak_tflops * 1e12 / (peak_tbps * 1e12);
    r.bound = r.flops / r.bytes >= ridge ? "compute" : "memory";
  }
}

}  // namespace attnprof
