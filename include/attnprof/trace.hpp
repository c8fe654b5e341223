// Kernel-level profiling of one point (`attnprof trace`): the point's phases (prepare, verify,
// warm-up, timed) as host ranges, the kernels / memcpy / memset it ran as device events, a
// breakdown of kernel time by category, a roofline placement against the device's ceilings,
// and the Chrome/Perfetto trace export. Everything here but trace_point() and
// run_profiled_launch() is plain data and runs without a GPU (docs/tracing.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/result.hpp"
#include "attnprof/spec.hpp"

namespace attnprof {

// What a kernel does, from its name (categorize()). Order: the order of breakdown rows.
enum class KernelCategory { gemm, fused_attention, softmax_reduction, elementwise_copy, other };
inline constexpr KernelCategory kKernelCategories[] = {
    KernelCategory::gemm, KernelCategory::fused_attention, KernelCategory::softmax_reduction,
    KernelCategory::elementwise_copy, KernelCategory::other};
// "GEMM", "fused attention", "softmax/reduction", "elementwise/cast/copy", "other".
std::string_view to_string(KernelCategory c);
// The category of a (demangled) kernel name: its patterns are matched case-insensitively
// against the name without its parameter list, in the order fused attention, softmax/reduction,
// GEMM, elementwise/cast/copy (docs/tracing.md lists them); anything else is other.
KernelCategory categorize(std::string_view kernel_name);

enum class TraceKind { kernel, memcpy, memset, range };
std::string_view to_string(TraceKind k);

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  bool operator==(const Dim3&) const = default;
};

struct TraceEvent {
  std::string name;  // kernel name (demangled), "memcpy DtoD", "memset", or the phase name
  KernelCategory category = KernelCategory::other;  // memcpy/memset: elementwise_copy
  TraceKind kind = TraceKind::kernel;
  uint32_t stream = 0;                // CUPTI stream id (device events); 0 for ranges
  uint64_t start_ns = 0, end_ns = 0;  // one clock per ProviderTrace (trace_point says which)
  std::optional<Dim3> grid, block;    // kernels, where the tracer read them
  uint64_t bytes = 0;                 // memcpy / memset

  double duration_us() const { return end_ns > start_ns ? double(end_ns - start_ns) * 1e-3 : 0; }
};

// Phase names, in the order they run.
inline constexpr std::string_view kPhasePrepare = "prepare";
inline constexpr std::string_view kPhaseVerify = "verify";
inline constexpr std::string_view kPhaseWarmup = "warm-up";
inline constexpr std::string_view kPhaseTimed = "timed";

// One provider's point, traced.
struct ProviderTrace {
  std::string provider;
  std::string device;  // "NVIDIA H200", "host CPU ..."
  int device_index = 0;
  Spec spec;
  Status status = Status::skipped;        // passed, incorrect, not_supported, oom or failed
  std::string reason;                     // why, when not passed
  std::vector<TraceEvent> ranges;         // the phases, host timestamps
  std::vector<TraceEvent> device_events;  // kernels, memcpy, memset, by start time
  uint32_t timed_stream = 0;              // the engine's stream (CUPTI id)
  int timed_launches = 0;                 // launches inside the "timed" range
  std::string kernels_note;  // "host only (CPU provider)", "unavailable (CUPTI busy: ...)"
};

struct TraceOptions {
  uint64_t seed = 20261129;
  int warmup_launches = 1;
  // Launches in the "timed" range: back to back on the engine's stream, L2 warm (hot). The
  // breakdown divides by this; measured times come from `attnprof run`, not from a trace.
  int timed_launches = 3;
};

// Runs the point once through its phases: prepare, verify (poisoned outputs, one launch, the
// fp64 check), warm-up, timed. On the CUDA engine everything runs under the CUPTI tracer and
// every timestamp (ranges too) is a CUPTI timestamp (cuptiGetTimestamp); on the CPU engine only
// the ranges are recorded, on the host's steady clock. Never throws: failures are the status.
ProviderTrace trace_point(const Spec& spec, Provider& provider, Engine& engine,
                          const TraceOptions& options);

// For `--ncu`: prepare, warm up, then exactly one launch between cudaProfilerStart and
// cudaProfilerStop (ncu --profile-from-start off sees only that launch). Throws on failure or
// where CUDA is not built.
void run_profiled_launch(const Spec& spec, Provider& provider, Engine& engine,
                         const TraceOptions& options);

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
std::vector<TraceEvent> events_in_phase(const ProviderTrace& t, std::string_view phase);
// Whether the provider's name says it is a fused implementation: cudnn.*, *flash*, *fmha*,
// *efficient* (torch.sdpa.efficient).
bool is_fused_provider(std::string_view provider);
// The breakdown of the timed range, with flags (elementwise/cast/copy over 5% in a fused path,
// a fused provider that ran no fused kernel, host<->device copies inside the launches, kernels
// outside the timed stream).
Breakdown make_breakdown(const ProviderTrace& t);
// The category table and the kernel table, plain text (terminal) or Markdown, flags below.
std::string render_breakdown(const ProviderTrace& t, const Breakdown& b, bool markdown);

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
Roofline place_on_roofline(const ProviderTrace& t, const Breakdown& b,
                           const std::optional<Ceilings>& ceilings);
std::string render_roofline(const Roofline& r, const std::optional<Ceilings>& ceilings,
                            bool markdown);

// ---- Chrome / Perfetto export --------------------------------------------------------------
// {"traceEvents": [...], "displayTimeUnit": "ns"}: one process per provider (pid 1, 2, ...),
// one thread per stream (tid = CUPTI stream id) plus a "phases" thread for the ranges; "X"
// events with ts/dur in µs from the provider's first event; "M" name and sort-index metadata.
std::string chrome_trace_json(const std::vector<ProviderTrace>& traces);

}  // namespace attnprof
