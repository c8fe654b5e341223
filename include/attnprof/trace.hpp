// Kernel-level profiling of one point (`attnprof trace`): the point runs through the one point
// lifecycle (runner.hpp) with trace hooks that record its phases (prepare, verify, warm-up, timed)
// as ranges and the kernels / memcpy / memset it ran as device events (Result::trace); then a
// breakdown of kernel time by category, a roofline placement against the device's ceilings, and
// the Chrome/Perfetto trace export. Everything here but the hooks is plain data over rows and
// runs without a GPU (docs/tracing.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/result.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/trace_events.hpp"

namespace attnprof {

// Phase names, in the order they run (to_string(Phase)).
inline constexpr std::string_view kPhasePrepare = "prepare";
inline constexpr std::string_view kPhaseVerify = "verify";
inline constexpr std::string_view kPhaseWarmup = "warm-up";
inline constexpr std::string_view kPhaseTimed = "timed";

// The hooks of `attnprof trace` and `--ncu` for the point lifecycle:
//  - options.trace_launches > 0: the phases as ranges, and on the CUDA engine everything under
//    the CUPTI tracer with every timestamp (ranges too) a CUPTI timestamp (cuptiGetTimestamp);
//    on the CPU engine only the ranges, on the host's steady clock. Sampling is replaced by
//    trace_launches launches back to back (L2 warm); the row's kernels are those of that range.
//  - options.profile_one_launch: sampling is replaced by exactly one launch between
//    cudaProfilerStart and cudaProfilerStop (ncu --profile-from-start off sees only it).
// Null otherwise. The worker and the in-process executor are handed this factory.
HooksFactory trace_hooks_factory();

// The trace of a row (an empty one when the row has none).
const PointTrace& trace_of(const Result& row);

// ---- breakdown ---------------------------------------------------------------------------
struct CategoryRow {
  KernelCategory category = KernelCategory::other;
  int64_t count = 0;    // events in the timed range
  double total_us = 0;  // their summed device time
  double share = 0;     // total_us / Breakdown::total_us (0 when nothing ran)
};

struct KernelRow {
  std::string name;
  KernelCategory category = KernelCategory::other;
  TraceKind kind = TraceKind::kernel;
  int64_t count = 0;
  double total_us = 0;
};

// A fused path spends more than this share of kernel time in elementwise/cast/copy: flagged.
inline constexpr double kFusedCopyShareLimit = 0.05;

struct Breakdown {
  std::vector<CategoryRow> categories;  // every category, in kKernelCategories order
  std::vector<KernelRow> kernels;       // by name, most time first
  double total_us = 0;                  // summed device time of the timed range's events
  int launches = 0;
  bool fused_path = false;         // the provider is a fused one or a fused kernel ran
  std::vector<std::string> flags;  // findings in words (docs/tracing.md: "Flags")

  const CategoryRow& row(KernelCategory c) const;
};

// Device events that started inside the named range (all of them when there is no such range).
std::vector<TraceEvent> events_in_phase(const Result& row, std::string_view phase);
// The breakdown of the timed range, with flags (elementwise/cast/copy over 5% in a fused path,
// a provider that declares itself fused (ProviderTraits::fused) that ran no fused kernel,
// host<->device copies inside the launches, kernels outside the timed stream).
Breakdown make_breakdown(const Result& row);
// The category table and the kernel table, plain text (terminal) or Markdown, flags below.
std::string render_breakdown(const Result& row, const Breakdown& b, bool markdown);

// ---- roofline ----------------------------------------------------------------------------
// The device's ceilings a point is held against: the dtype's matrix rate and the best bandwidth.
struct Ceilings {
  double tflops = 0;   // TFLOP/s
  double tbps = 0;     // TB/s
  std::string source;  // "measured by attnprof peaks", "datasheet (not measured)"
  double ridge() const { return tbps > 0 ? tflops / tbps : 0; }  // FLOP/byte
};

struct RooflinePlacement {
  std::string what;                          // "point", "fused attention kernels"
  double flops = 0, bytes = 0, time_us = 0;  // per launch
  double intensity = 0;                      // flops / bytes
  double tflops = 0, tbps = 0;               // achieved
  double pct_peak_flops = 0, pct_peak_bw = 0;
  std::string bound;  // "compute" or "memory"
};

struct Roofline {
  std::vector<RooflinePlacement> placements;
  std::vector<std::string> notes;  // what could not be placed, and why
};

// The point (model FLOPs and minimum bytes over the timed range's kernel time per launch) and,
// where every matmul of the point ran inside fused attention kernels (a fused kernel ran and no
// GEMM did), those kernels. GEMM and other kernels are not placed: the model counts the
// attention's FLOPs, not how a provider splits them among its kernels.
Roofline place_on_roofline(const Result& row, const Breakdown& b,
                           const std::optional<Ceilings>& ceilings);
std::string render_roofline(const Roofline& r, const std::optional<Ceilings>& ceilings,
                            bool markdown);

// ---- Chrome / Perfetto export --------------------------------------------------------------
// {"traceEvents": [...], "displayTimeUnit": "ns"}: one process per provider (pid 1, 2, ...),
// one thread per stream (tid = CUPTI stream id) plus a "phases" thread for the ranges; "X"
// events with ts/dur in µs from the provider's first event; "M" name and sort-index metadata.
std::string chrome_trace_json(const std::vector<Result>& rows);

}  // namespace attnprof
