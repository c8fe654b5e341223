// Findings: sentences computed from a run's rows, as the seeds' reports wrote them by hand. The
// report shows them per provider, under the answer table and its headline (headline.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/result.hpp"
#include "report/series.hpp"

namespace attnprof {

// Memory against N as a constant plus a power: y = base + a * x^exponent with base, a >= 0,
// fitted by least squares on relative residuals (y - fit) / y, the exponent searched over
// 0.1..3. A workspace that does not grow (cuBLAS's 32 MiB) is the base, the scores' N^2 the power:
// a pure power law on such data reads N^0.5. `constant` when y moves by under 5% of its largest
// value (then base is its median). Points with x <= 0 or y <= 0 are left out; nullopt with fewer
// than 3 distinct x left.
struct GrowthFit {
  bool constant = false;
  double base = 0;      // bytes that do not grow with N
  double exponent = 0;  // of the part that grows (0 when constant)
  double r2 = 0;        // of log y against log fit (1 when exact)
  int64_t points = 0;
};
std::optional<GrowthFit> fit_growth(const std::vector<double>& x, const std::vector<double>& y);
// Below this R² a series follows no power of N (allocator caches, first-call workspaces move
// it): said so, and no exponent given.
inline constexpr double kClearGrowthFit = 0.9;

// "N^2.00 above a constant 32.0 MiB", "N^1.00", "constant at 1.00 MiB", "no clear power of N"
// (R² under kClearGrowthFit): the growth in words. The base is named when it is at least 5% of
// the smallest point's memory.
std::string describe_growth(const GrowthFit& f, double y_min);

// The memory growth of one provider on one fixed-batch series: extra_bytes against N.
struct MemoryGrowth {
  std::string provider;
  std::string series;  // the group's title
  int64_t n_min = 0, n_max = 0;
  int64_t points = 0;
  double y_min = 0;                // the smallest positive extra memory of the series
  double y_first = 0, y_last = 0;  // the extra memory at n_min and at n_max
  std::optional<GrowthFit> fit;    // nullopt when the extra memory is zero or too few points
  bool no_extra = false;           // extra_bytes <= 0 at every point
};
// At least 3 distinct N per fit: two points always fit exactly.
std::vector<MemoryGrowth> memory_growth(const std::vector<SeriesGroup>& groups);

// The relative difference two rows' medians must exceed to be ranked: the larger of 1% and the
// rows' two sample spreads (cv) added. Rows of one kernel timed one after the other differ by that
// much (on the H200, up to 3% on power-capped compute-bound points, where the SM clock moves).
double noise_tolerance(const Result& a, const Result& b);
// Whether two rows' medians are too close to rank (noise_tolerance).
bool within_noise(const Result& a, const Result& b);

// Geometric mean, minimum and maximum of positive ratios.
struct Spread {
  double geomean = 0, lo = 0, hi = 0;
  std::size_t n = 0;
};
Spread spread(const std::vector<double>& ratios);
// Whether the ratios print as more than one value.
bool spans(const Spread& s);
// "1.50–3.20×", or the one value when the ratios print the same.
std::string range_of(const Spread& s);

// The fastest provider at one shape (spec and timing mode) with passed rows.
struct Fastest {
  const Result* best = nullptr;
  const Result* runner_up = nullptr;  // the second fastest, if any
  const Result* baseline = nullptr;   // the baseline's row at this shape, if it passed
  std::vector<const Result*> tied;    // other providers within_noise of best, fastest first
};
std::vector<Fastest> fastest_per_shape(const std::vector<Result>& results,
                                       const std::string& baseline);

struct Finding {
  std::string topic;     // "fused", "gqa", "memory", "kernel", "bound", "deploy", ...
  std::string text;      // one paragraph of plain text (Markdown code spans allowed: `x`)
  std::string provider;  // the provider it is about; "" for one about several or none
};

// Every finding the rows support, in a fixed order of topics. The
// fastest provider per shape class is the answer table's (answer.hpp), points not supported the
// "Not supported" table's.
std::vector<Finding> compute_findings(const std::vector<Result>& results);

// Parts of compute_findings (findings_status.cpp): which kernels a dispatching provider
// (torch.sdpa.default) really ran; points out of memory.
void add_kernel_findings(const std::vector<Result>& results, std::vector<Finding>& out);
void add_status_findings(const std::vector<Result>& results, std::vector<Finding>& out);

// The kernel a row spent the most time in (its CUPTI records), "" when none was recorded.
std::string main_kernel(const Result& r);

// Which SDPA backend a kernel name belongs to: "flash", "efficient", "cudnn" or "math".
std::string sdpa_backend_of_kernel(const std::string& kernel_name);
// The traits a provider's rows declare (the first row's), null when no row names it.
const ProviderTraits* traits_in(const std::vector<Result>& results, const std::string& provider);

// A name as a Markdown code span in a finding's text: `cudnn.sdpa`.
inline std::string code(const std::string& s) {
  return "`" + s + "`";
}

}  // namespace attnprof
