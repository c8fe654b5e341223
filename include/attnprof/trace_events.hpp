// What a traced point ran, as plain data (docs/tracing.md): the point's phases as ranges and the
// kernels, copies and sets the device ran, each with a category from its name. Rows of
// `attnprof trace` carry one (Result::trace); src/trace/ builds and reads them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnprof {

// What a kernel does, from its name (categorize(), src/trace/categorize.cpp). Order: the order of
// breakdown rows.
enum class KernelCategory { gemm, fused_attention, softmax_reduction, elementwise_copy, other };
inline constexpr KernelCategory kKernelCategories[] = {
    KernelCategory::gemm, KernelCategory::fused_attention, KernelCategory::softmax_reduction,
    KernelCategory::elementwise_copy, KernelCategory::other};
// "GEMM", "fused attention", "softmax/reduction", "elementwise/cast/copy", "other".
std::string_view to_string(KernelCategory c);
std::optional<KernelCategory> parse_kernel_category(std::string_view s);
// The category of a (demangled) kernel name: its patterns are matched case-insensitively
// against the name without its parameter list, in the order fused attention, softmax/reduction,
// GEMM, elementwise/cast/copy (docs/tracing.md lists them); anything else is other.
KernelCategory categorize(std::string_view kernel_name);

enum class TraceKind { kernel, memcpy, memset, range };
std::string_view to_string(TraceKind k);
std::optional<TraceKind> parse_trace_kind(std::string_view s);

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  bool operator==(const Dim3&) const = default;
};

struct TraceEvent {
  std::string name;  // kernel name (demangled), "memcpy DtoD", "memset", or the phase name
  KernelCategory category = KernelCategory::other;  // memcpy/memset: elementwise_copy
  TraceKind kind = TraceKind::kernel;
  uint32_t stream = 0;                // CUPTI stream id (device events); 0 for ranges
  uint64_t start_ns = 0, end_ns = 0;  // one clock per PointTrace
  std::optional<Dim3> grid, block;    // kernels, where the tracer read them
  uint64_t bytes = 0;                 // memcpy / memset

  double duration_us() const { return end_ns > start_ns ? double(end_ns - start_ns) * 1e-3 : 0; }
};

// The trace of one point: its phases (host ranges) and what the device ran meanwhile, on one
// clock (CUPTI's timestamps on the CUDA engine, the host's steady clock on the CPU engine).
struct PointTrace {
  std::vector<TraceEvent> ranges;         // the phases, in order
  std::vector<TraceEvent> device_events;  // kernels, memcpy, memset, by start time
  uint32_t timed_stream = 0;              // the engine's stream (CUPTI id)
  int timed_launches = 0;                 // launches inside the "timed" range
};

}  // namespace attnprof
