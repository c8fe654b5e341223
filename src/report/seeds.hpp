// The seeds' comparison: one row per system the project's seeds name (naive, PyTorch's SDPA and
// each backend it can be forced to, FlashAttention-2, xFormers, ONNX Runtime FP16, TensorRT FP16),
// plus FlashInfer and FlashAttention-4: its figure at one reference shape with its speedup and
// memory against naive, or why it has none (the reason `attnprof list` gives for an unavailable
// provider, or the row's own).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/report.hpp"
#include "report/report_model.hpp"

namespace attnprof {

// A system and the providers that stand for it (comma-separated globs, most direct first).
struct SeedSystem {
  std::string_view name;
  std::string_view providers;
};
// The systems after naive (the report's baseline, the table's first row), in the seeds' order.
std::span<const SeedSystem> seed_systems();

// The reference shape is where the baseline and the most of the systems passed (the largest by
// FLOPs among equals).
TableSection seeds_table(const std::vector<Result>& rows, const std::string& baseline,
                         const ReportOptions& options);

}  // namespace attnprof
