#include "attnprof/env.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <ctime>
#include <thread>

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

std::string fingerprint_key(const Fingerprint& env) {
  // Build and device identity; versions of the libraries that produce the numbers.
  std::string key;
  for (const char* k : {"git_commit", "build_type", "device", "driver", "cuda_runtime", "cublas",
                        "cudnn", "torch"}) {
    auto it = env.find(k);
    key += fmt::format("{}={};", k, it == env.end() ? "" : it->second);
  }
  return key;
}

}  // namespace attnprof
