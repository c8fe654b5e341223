// Hand-made traces for the trace tests: a point's phases and the device events in them.
#pragma once

#include <string>
#include <vector>

#include "attnprof/trace.hpp"

namespace attnprof::testing {

inline TraceEvent range(const char* name, uint64_t start_ns, uint64_t end_ns) {
  TraceEvent e;
  e.name = name;
  e.kind = TraceKind::range;
  e.start_ns = start_ns;
  e.end_ns = end_ns;
  return e;
}

inline TraceEvent kernel(const std::string& name, uint64_t start_ns, uint64_t end_ns,
                         uint32_t stream = 7) {
  TraceEvent e;
  e.name = name;
  e.category = categorize(name);
  e.kind = TraceKind::kernel;
  e.stream = stream;
  e.start_ns = start_ns;
  e.end_ns = end_ns;
  return e;
}

inline TraceEvent memcpy_event(const char* name, uint64_t start_ns, uint64_t end_ns,
                               uint64_t bytes) {
  TraceEvent e = kernel(name, start_ns, end_ns);
  e.kind = TraceKind::memcpy;
  e.category = KernelCategory::elementwise_copy;
  e.bytes = bytes;
  return e;
}

// A passed row with the four phases at 0-100, 100-200, 200-300 and 300-1000 µs. cudnn.* and
// *flash* providers declare themselves fused (the traits a real row carries).
inline Result phased_trace(const std::string& provider, int launches) {
  Result r;
  r.provider = provider;
  r.traits.name = provider;
  r.traits.device = DeviceKind::cuda;
  r.traits.fused = provider.rfind("cudnn.", 0) == 0 || provider.find("flash") != std::string::npos;
  r.traits.family = r.traits.fused ? Family::fused : Family::naive;
  r.device = "NVIDIA H200";
  r.spec.batch = 2;
  r.spec.q_heads = r.spec.kv_heads = 16;
  r.spec.q_len = r.spec.kv_len = 8192;
  r.spec.head_dim = 128;
  r.spec.dtype = DType::bf16;
  r.status = Status::passed;
  PointTrace& t = r.trace.emplace();
  t.timed_stream = 7;
  t.timed_launches = launches;
  t.ranges = {range("prepare", 0, 100'000), range("verify", 100'000, 200'000),
              range("warm-up", 200'000, 300'000), range("timed", 300'000, 1'000'000)};
  return r;
}

}  // namespace attnprof::testing
