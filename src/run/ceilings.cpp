#include "run/ceilings.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "measure/host_load.hpp"

namespace attnprof {

namespace {

// Whether other processes leave the host idle over a tenth of a second (host_load.hpp).
bool host_idle_now() {
  const CpuTimes before = read_cpu_times();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return others_busy_share(before, read_cpu_times()) <= kBusyHost;
}

}  // namespace

std::optional<Peaks> ceilings(Engine& engine, AutoPeaks policy) {
  if (!engine.availability().available) return std::nullopt;
  static std::mutex mutex;
  static std::map<std::string, std::optional<Peaks>> known;  // by key, cached or measured
  const std::lock_guard<std::mutex> lock(mutex);
  const std::string key = engine.peaks_key();
  if (const auto it = known.find(key); it != known.end()) return it->second;
  std::optional<Peaks> peaks = load_cached_peaks(key);
  const bool allowed =
      policy == AutoPeaks::any || (policy == AutoPeaks::gpu && engine.kind() == DeviceKind::cuda);
  if (!peaks && !allowed) return std::nullopt;  // not remembered: a later point may allow it
  // Figures cached from a busy host are measured again once the host is idle.
  if (const std::string busy = peaks ? busy_note(*peaks) : "";
      !busy.empty() && allowed && host_idle_now()) {
    fmt::print(stderr, "attnprof: the cached ceilings of {} were {}; measuring them again\n",
               engine.device().name, busy);
    peaks.reset();
  }
  if (!peaks) {
    fmt::print(stderr,
               "attnprof: measuring the ceilings of {} once, for % of peak in every row (a few "
               "seconds; `attnprof peaks` shows them)\n",
               engine.device().name);
    std::fflush(stderr);
    try {
      peaks = engine.measure_peaks([](const std::string&) {});
      if (const std::string busy = busy_note(*peaks); !busy.empty())
        fmt::print(stderr, "attnprof: the ceilings of {} were {}\n", engine.device().name, busy);
      if (save_peaks(*peaks).empty()) {
        fmt::print(stderr, "attnprof: the ceilings could not be cached (no writable {})\n",
                   peaks_cache_path(key).empty() ? "HOME" : peaks_cache_path(key));
      }
    } catch (const std::exception& e) {
      fmt::print(stderr,
                 "attnprof: the ceilings could not be measured: {}; rows carry no % of peak\n",
                 e.what());
      peaks.reset();
    }
  }
  known[key] = peaks;
  return peaks;
}

}  // namespace attnprof
