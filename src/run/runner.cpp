#include "attnprof/runner.hpp"
#include "attnprof/env.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <new>
#include <string>

#include "attnprof/model.hpp"
#if defined(ATTNPROF_WITH_CUDA)
#include "attnprof/peaks.hpp"
#endif

namespace attnprof {

namespace {

// VmHWM of /proc/self/status in bytes (0 where unreadable).
int64_t process_hwm_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return 0;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : std::string(sep)) + x;
  return s;
}

bool mentions_oom(std::string_view what) {
  return what.find("out of memory") != std::string_view::npos ||
         what.find("cudaErrorMemoryAllocation") != std::string_view::npos ||
         what.find("CUBLAS_STATUS_ALLOC_FAILED") != std::string_view::npos;
}

Result finished(Result r, Status s, std::string reason) {
  r.status = s;
  r.reason = std::move(reason);
  return r;
}

// The body of run_point once the point is known to be runnable; fills `r`; may throw.
void execute(Result& r, const Spec& spec, Provider& provider, Engine& engine,
             const RunOptions& options) {
  MemoryTracker* tracker = engine.tracker();
  const int64_t base = tracker ? tracker->current() : 0;
  if (tracker) tracker->reset_peak();

  PrepareContext ctx;
  ctx.seed = options.seed;
  ctx.threads = options.threads;
  ctx.tracker = tracker;
  std::unique_ptr<Run> run = provider.prepare(spec, engine.device(), ctx);

  // Verified run: poisoned outputs, one launch, every element scanned, rows against fp64.
  run->poison_outputs();
  run->launch(engine.stream());
  r.verify = verify_outputs(spec, ctx, run->read_outputs(), options.verify);
  if (!verify_passed(r.verify)) {
    r.status = Status::incorrect;
    r.reason = fmt::format("verification failed: {}", r.verify.detail);
    return;
  }

  for (int i = 0; i < options.warmup_launches; ++i) run->launch(engine.stream());
  r.timing = engine.measure(*run, options.measure);

  // The output of the last timed launch is checked too: a kernel that is right once and wrong
  // under repetition (a race, stale state) must not pass.
  VerifyResult last = verify_outputs(spec, ctx, run->read_outputs(), options.verify);
  if (!verify_passed(last)) {
    r.verify = last;
    r.status = Status::incorrect;
    r.reason = fmt::format("verification of the last timed run failed: {}", last.detail);
    return;
  }

  if (options.trace_kernels) r.kernels = engine.trace_kernels(*run, r.kernels_note);

  r.memory.workspace_bytes = run->workspace_bytes();
  r.memory.peak_bytes =
      tracker ? tracker->peak() - base + run->untracked_peak_bytes() : run->allocated_bytes();
  r.provider_note = run->note();
  r.memory.extra_bytes = r.memory.peak_bytes - r.memory.analytic_bytes;
  r.memory.process_hwm_bytes = process_hwm_bytes();
  r.status = Status::passed;
  derive_rates(r);
#if defined(ATTNPROF_WITH_CUDA)
  // % of the device's measured ceilings and the bound, where `attnprof peaks` has measured them.
  if (engine.kind() == DeviceKind::cuda) {
    if (auto peaks = load_cached_peaks(engine.device())) apply_peaks(r, *peaks);
  }
#endif
}

}  // namespace

void derive_rates(Result& r) {
  const double t = r.timing.median_us * 1e-6;
  if (!(t > 0)) return;
  r.tflops = r.flops / t / 1e12;
  r.gbps = r.bytes / t / 1e9;
  r.tokens_per_s = static_cast<double>(r.spec.batch * r.spec.q_len) / t;
}

Result run_point(const Spec& spec, Provider& provider, Engine& engine, const RunOptions& options) {
  Result r;
  r.provider = provider.name();
  r.spec = spec;
  r.seed = options.seed;
  r.device = engine.device().name;
  r.started_at = utc_now_iso8601();
  r.flop_convention = std::string(kFlopConvention);

  if (auto errors = spec.validate(); !errors.empty()) {
    return finished(std::move(r), Status::failed, "invalid spec: " + join(errors, "; "));
  }
  r.flops = flops(spec);
  r.bytes = min_bytes(spec);
  r.memory.analytic_bytes = io_bytes(spec);

  if (provider.device_kind() != engine.kind()) {
    return finished(std::move(r), Status::not_supported,
                    fmt::format("runs on {}, this point is on {}",
                                to_string(provider.device_kind()), to_string(engine.kind())));
  }
  if (Availability a = provider.availability(); !a.available) {
    return finished(std::move(r), Status::not_supported, a.reason);
  }
  if (Availability a = engine.availability(); !a.available) {
    return finished(std::move(r), Status::not_supported, a.reason);
  }
  const int bits = provider.index_bits();
  if (bits < 63 && spec.largest_tensor_elems() >= (int64_t{1} << bits)) {
    return finished(std::move(r), Status::not_supported,
                    fmt::format("a tensor of {} elements exceeds the provider's {}-bit indexing",
                                spec.largest_tensor_elems(), bits));
  }
  if (Support s = provider.supports(spec, engine.device()); !s.ok) {
    return finished(std::move(r), Status::not_supported, s.reason);
  }
  const int64_t estimate = provider.estimate_bytes(spec);
  const int64_t capacity = engine.device().memory_bytes;
  if (capacity > 0 && estimate > capacity) {
    return finished(std::move(r), Status::oom,
                    fmt::format("estimated {:.2f} GiB exceeds the device's {:.2f} GiB; not run",
                                static_cast<double>(estimate) / double(1 << 30),
                                static_cast<double>(capacity) / double(1 << 30)));
  }

  // One catch per point: whatever a provider throws ends this point only.
  try {
    execute(r, spec, provider, engine, options);
    return r;
  } catch (const NotSupported& e) {
    r.status = Status::not_supported;
    r.reason = e.reason();
  } catch (const OutOfMemory& e) {
    r.status = Status::oom;
    r.reason = e.what();
  } catch (const std::bad_alloc&) {
    r.status = Status::oom;
    r.reason = "host allocation failed (std::bad_alloc)";
  } catch (const std::exception& e) {
    r.status = mentions_oom(e.what()) ? Status::oom : Status::failed;
    r.reason = e.what();
  }
  return r;
}

}  // namespace attnprof
