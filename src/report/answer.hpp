// The answer first: per shape class, the fastest verified provider, its margin over the
// runner-up (or who ties with it within noise), the best provider of another library and of the
// other family (fused or unfused), and how near its ceiling it runs. The report opens with it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/result.hpp"
#include "report/report_model.hpp"

namespace attnprof {

// Decode: fewer query tokens than keys, at most this many (one token, or a speculative draft).
inline constexpr int64_t kMaxDecodeQueries = 16;

// Where a spec belongs in the answer: prefill by head dim, mask and dtype; decode by KV length,
// batch and query tokens (with its heads and head dim); and apart, in this order, paged, ragged,
// MLA (Dv != D or a shared latent), fp8 and backward, each split the same way.
enum class ShapeKind { prefill, decode, paged, ragged, mla, fp8, backward };
// As sentences name it: "prefill", "decode", "paged KV", "ragged batches", "MLA", "fp8",
// "backward".
std::string_view to_string(ShapeKind k);

struct ShapeClass {
  ShapeKind kind = ShapeKind::prefill;
  std::string label;  // "prefill D128 causal bf16", "decode KV 8192 B64 q1 H32/8 D128 bf16"
};
ShapeClass shape_class(const Spec& s);

// Which side of fused against unfused a provider declares itself on: a fused kernel, an unfused
// recipe (naive, math), or neither (a dispatcher that may choose either per call).
enum class FusedSide { fused, unfused, neither };
FusedSide fused_side(const ProviderTraits& t);

// Another provider held against the fastest over the shapes of the class both ran: the geomean
// of its median over the fastest's, and the noise that ratio must exceed to rank the two (the
// rows' own: max(1%, cv + cv), averaged over those shapes; docs/method.md "Comparing two rows").
struct Contender {
  std::string provider;
  std::string library;
  FusedSide side = FusedSide::neither;
  double ratio = 0;  // > 1: slower than the fastest
  double lo = 0, hi = 0;
  int64_t shared = 0;
  double tolerance = 0;
  // Within the tolerance either way.
  bool tied() const;
};

struct ClassAnswer {
  ShapeClass shape_class;
  std::string where;  // "NVIDIA H200, cold": the device and timing mode of the class's rows
  int64_t shapes = 0;
  std::string fastest;  // the provider with the lowest geomean time over the class's shapes
  std::string library;
  FusedSide side = FusedSide::neither;
  int64_t fastest_shapes = 0;  // shapes it ran
  // Other providers that shared at least half of the fastest's shapes, fastest first.
  std::vector<Contender> others;
  // The binding ceiling's share (pct_peak_flops where a row is compute-bound, pct_peak_bw where
  // memory-bound) over the fastest's rows; empty where no ceilings were measured.
  std::vector<double> pct_flops, pct_bw;

  const Contender* runner_up() const;
  std::vector<const Contender*> tied() const;
  const Contender* other_library() const;
  // The best on the other side of fused against unfused; none when the fastest is on neither.
  const Contender* other_family() const;
};

// Every class of the passed, timed rows (reference, test and GQA-expansion providers left out:
// they are not what a user deploys), in order of kind, then of first appearance.
std::vector<ClassAnswer> answer_by_class(const std::vector<Result>& rows);

// The table the report opens with.
TableSection answer_table(const std::vector<ClassAnswer>& answers);

}  // namespace attnprof
