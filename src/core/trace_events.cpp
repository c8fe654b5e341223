#include "attnprof/trace_events.hpp"

namespace attnprof {

std::string_view to_string(KernelCategory c) {
  switch (c) {
    case KernelCategory::gemm:
      return "GEMM";
    case KernelCategory::fused_attention:
      return "fused attention";
    case KernelCategory::softmax_reduction:
      return "softmax/reduction";
    case KernelCategory::elementwise_copy:
      return "elementwise/cast/copy";
    case KernelCategory::other:
      return "other";
  }
  return "other";
}

std::string_view to_string(TraceKind k) {
  switch (k) {
    case TraceKind::kernel:
      return "kernel";
    case TraceKind::memcpy:
      return "memcpy";
    case TraceKind::memset:
      return "memset";
    case TraceKind::range:
      return "range";
  }
  return "kernel";
}

std::optional<KernelCategory> parse_kernel_category(std::string_view s) {
  for (KernelCategory c : kKernelCategories) {
    if (to_string(c) == s) return c;
  }
  return std::nullopt;
}

std::optional<TraceKind> parse_trace_kind(std::string_view s) {
  for (TraceKind k : {TraceKind::kernel, TraceKind::memcpy, TraceKind::memset, TraceKind::range}) {
    if (to_string(k) == s) return k;
  }
  return std::nullopt;
}

}  // namespace attnprof
