// Running points: one (Spec, Provider) at a time through one lifecycle (docs/design.md, "The
// point lifecycle"), every failure caught once at the point boundary, classified into a fault
// and turned into a Result. run, trace and tune all go through it; what differs between them
// attaches as PointHooks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/result.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/verify.hpp"

namespace attnprof {

// Whether a point measures its device's ceilings (peaks.hpp) when none are cached: never, on a
// GPU only, or on any engine (what run, tune and trace do: % of peak, the roofline and the check
// that no figure beats the device need them on the CPU too).
enum class AutoPeaks { off, gpu, any };

struct RunOptions {
  uint64_t seed = 20261129;
  MeasureOptions measure{};
  VerifyOptions verify{};
  int warmup_launches = 1;
  bool trace_kernels = true;
  int threads = 1;  // CPU providers
  // attnprof trace: > 0 records the phases and what the device ran into Result::trace, and
  // replaces sampling with this many back-to-back launches (the hooks a HooksFactory makes).
  int trace_launches = 0;
  // attnprof trace --ncu: the one launch Nsight Compute profiles replaces sampling.
  bool profile_one_launch = false;
  // Cached ceilings always fill % of peak and the bound; this says whether missing ones are
  // measured first (the commands: any; --no-auto-peaks: off).
  AutoPeaks auto_peaks = AutoPeaks::off;
  // > 0 (tune's memory limit, bytes): a point whose peak memory after the warm-up is above it
  // cannot fit whatever its timing, and is sampled at most 10 times (stop_reason
  // "over_memory_limit"): its median is a coarse figure, not a converged one.
  int64_t memory_limit_bytes = 0;
};

// The phases of a point, in order. validate, support and estimate refuse a point before anything
// is allocated; the others run under PointHooks.
enum class Phase { prepare, verify, warmup, measure, verify_last, kernels };
// "prepare", "verify", "warm-up", "timed", "verify-last", "kernels": the trace's range names.
std::string_view to_string(Phase p);

// What run, trace and tune attach to the one lifecycle.
class PointHooks {
 public:
  virtual ~PointHooks() = default;
  // Wraps every phase, from allocation to release (trace: under the kernel tracer). Must call
  // `body` once; exceptions from it propagate.
  virtual void around(const std::function<void()>& body) { body(); }
  virtual void begin(Phase p) { (void)p; }
  // The device work the phase queued has finished.
  virtual void end(Phase p) { (void)p; }
  // Replaces the measure phase (trace: a fixed number of launches); true when it did.
  virtual bool measure(Run& run, PointTensors& tensors, Engine& engine, Result& row) {
    (void)run, (void)tensors, (void)engine, (void)row;
    return false;
  }
  // The row is complete (whatever its status): add what the hooks recorded.
  virtual void finish(Result& row) { (void)row; }
};

// Makes the hooks a point needs for `options` (null: none). The composition root (the CLI)
// provides it: the tracer lives above the lifecycle, not in it.
using HooksFactory =
    std::function<std::unique_ptr<PointHooks>(const RunOptions& options, Engine& engine)>;

// Runs one point end to end: validate -> support -> estimate -> allocate the tensors -> prepare
// -> poison, launch, verify -> warm-up -> measure -> verify the last timed output -> kernels.
// Never throws. `settings`: the point's values of the provider's settings (provider_settings.hpp),
// handed to its estimate and prepare().
Result run_point(const Spec& spec, Provider& provider, Engine& engine, const RunOptions& options,
                 PointHooks* hooks = nullptr, const Settings& settings = {});

// Why the point cannot run at all (invalid spec, wrong device, unavailable, indexing, support,
// memory estimate), as the row it would get; nullopt when it may run. No allocation, no launch.
std::optional<Result> refuse_point(const Spec& spec, Provider& provider, Engine& engine,
                                   const RunOptions& options, const Settings& settings = {});

// The one builder of rows: provider, traits, spec, seed, model FLOPs and bytes.
Result point_row(const Provider& provider, const Spec& spec, uint64_t seed);
// A row of a point that did not run or did not finish, with its status, fault and reason.
Result unrun_row(const Provider& provider, const Spec& spec, uint64_t seed, Status status,
                 Fault fault, std::string reason);

// Fills the derived figures of a passed row (TFLOP/s, GB/s, tokens/s).
void derive_rates(Result& r);

}  // namespace attnprof
