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

// A passed point with the four phases at 0-100, 100-200, 200-300 and 300-1000 µs.
inline ProviderTrace phased_trace(const std::string& provider, int launches) {
  ProviderTrace t;
  t.provider = provider;
  t.device = "NVIDIA H200";
  t.spec.batch = 2;
  t.spec.q_heads = t.spec.kv_heads = 16;
  t.spec.q_len = t.spec.kv_len = 8192;
  t.spec.head_dim = 128;
  t.spec.dtype = DType::bf16;
  t.status = Status::passed;
  t.timed_stream = 7;
  t.timed_launches = launches;
  t.ranges = {range("prepare", 0, 100'000), range("verify", 100'000, 200'000),
              range("warm-up", 200'000, 300'000), range("timed", 300'000, 1'000'000)};
  return t;
}

}  // namespace attnprof::testing
