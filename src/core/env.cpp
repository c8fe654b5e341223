#include "attnprof/env.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <ctime>
#include <thread>

#include "attnprof/provider_settings.hpp"

#ifndef ATTNPROF_BUILD_TYPE
#define ATTNPROF_BUILD_TYPE "unknown"
#endif
#ifndef ATTNPROF_VERSION
#define ATTNPROF_VERSION "0"
#endif

namespace attnprof {

// The source tree's commit at build time (generated: cmake/git_commit.cmake).
const char* build_git_commit();

Fingerprint environment_fingerprint(const Device& device) {
  Fingerprint f;
  f["attnprof_version"] = ATTNPROF_VERSION;
  f["git_commit"] = build_git_commit();
  f["build_type"] = ATTNPROF_BUILD_TYPE;
#if defined(__clang__)
  f["compiler"] = fmt::format("clang {}", __clang_version__);
#elif defined(__GNUC__)
  f["compiler"] = fmt::format("g++ {}", __VERSION__);
#endif
  f["device"] = device.name;
  f["device_kind"] = std::string(to_string(device.kind));
  f["host_threads"] = std::to_string(std::thread::hardware_concurrency());
  return f;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

// Build and device identity; versions of the libraries that produce the numbers.
constexpr const char* kKeyFields[] = {"git_commit",   "build_type", "device", "driver",
                                      "cuda_runtime", "cublas",     "cudnn",  "torch"};

std::string field(const Fingerprint& env, const char* k) {
  const auto it = env.find(k);
  return it == env.end() ? "" : it->second;
}

}  // namespace

std::string fingerprint_key(const Fingerprint& env) {
  std::string key;
  for (const char* k : kKeyFields) key += fmt::format("{}={};", k, field(env, k));
  return key + settings_key(env);  // a provider's settings (provider_settings.hpp)
}

std::string fingerprint_difference(const Fingerprint& a, const Fingerprint& b) {
  for (const char* k : kKeyFields) {
    const std::string x = field(a, k), y = field(b, k);
    if (x != y) {
      return fmt::format("{} {} -> {}", k, x.empty() ? "(none)" : x, y.empty() ? "(none)" : y);
    }
  }
  if (const std::string x = settings_key(a), y = settings_key(b); x != y) {
    return fmt::format("settings {} -> {}", x.empty() ? "(none)" : x, y.empty() ? "(none)" : y);
  }
  return "";
}

}  // namespace attnprof
