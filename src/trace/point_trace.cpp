// trace_point(): the point's phases on any engine. The CUDA engine's part (CUPTI around the
// phases, CUPTI timestamps) is in src/trace/cuda/point_trace_cuda.cpp; the phases themselves,
// and the CPU engine's host-clock ranges, are here.
#include <fmt/format.h>

#include <chrono>
#include <new>
#include <stdexcept>

#include "attnprof/trace.hpp"
#include "attnprof/verify.hpp"
#include "trace/phases.hpp"

#if defined(ATTNPROF_WITH_CUDA)
#include "trace/cuda/point_trace_cuda.hpp"
#endif

namespace attnprof {

namespace {

// The checks run_point makes before it prepares anything; the reason when the point cannot run.
std::optional<std::pair<Status, std::string>> cannot_run(const Spec& spec, Provider& provider,
                                                         Engine& engine) {
  using R = std::pair<Status, std::string>;
  if (auto errors = spec.validate(); !errors.empty()) return R{Status::failed, errors.front()};
  if (provider.device_kind() != engine.kind()) {
    return R{Status::not_supported,
             fmt::format("runs on {}, this engine is {}", to_string(provider.device_kind()),
                         to_string(engine.kind()))};
  }
  if (Availability a = provider.availability(); !a.available)
    return R{Status::not_supported, a.reason};
  if (Availability a = engine.availability(); !a.available)
    return R{Status::not_supported, a.reason};
  if (Support s = provider.supports(spec, engine.device()); !s.ok)
    return R{Status::not_supported, s.reason};
  return std::nullopt;
}

uint64_t steady_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

PhaseClock host_phase_clock() {
  return {steady_ns, [] {}};
}

void run_phases(ProviderTrace& t, Provider& provider, Engine& engine, const TraceOptions& options,
                const PhaseClock& clock) {
  auto phase = [&](std::string_view name, auto&& body) {
    TraceEvent r;
    r.name = std::string(name);
    r.kind = TraceKind::range;
    r.start_ns = clock.now_ns();
    body();
    clock.sync();  // the range ends when the device work it queued has finished
    r.end_ns = clock.now_ns();
    t.ranges.push_back(std::move(r));
  };
  try {
    PrepareContext ctx;
    ctx.seed = options.seed;
    ctx.threads = engine.device().threads;
    ctx.tracker = engine.tracker();
    std::unique_ptr<Run> run;
    phase(kPhasePrepare, [&] { run = provider.prepare(t.spec, engine.device(), ctx); });
    VerifyResult v;
    phase(kPhaseVerify, [&] {
      run->poison_outputs();
      run->launch(engine.stream());
      v = verify_outputs(t.spec, ctx, run->read_outputs());
    });
    if (!verify_passed(v)) {
      t.status = Status::incorrect;
      t.reason = fmt::format("verification failed: {}", v.detail);
      return;
    }
    phase(kPhaseWarmup, [&] {
      for (int i = 0; i < options.warmup_launches; ++i) run->launch(engine.stream());
    });
    phase(kPhaseTimed, [&] {
      for (int i = 0; i < options.timed_launches; ++i) run->launch(engine.stream());
    });
    t.timed_launches = options.timed_launches;
    t.status = Status::passed;
  } catch (const NotSupported& e) {
    t.status = Status::not_supported;
    t.reason = e.reason();
  } catch (const OutOfMemory& e) {
    t.status = Status::oom;
    t.reason = e.what();
  } catch (const std::bad_alloc&) {
    t.status = Status::oom;
    t.reason = "host allocation failed (std::bad_alloc)";
  } catch (const std::exception& e) {
    t.status = Status::failed;
    t.reason = e.what();
  }
}

ProviderTrace trace_point(const Spec& spec, Provider& provider, Engine& engine,
                          const TraceOptions& options) {
  ProviderTrace t;
  t.provider = provider.name();
  t.device = engine.device().name;
  t.device_index = engine.device().index;
  t.spec = spec;
  if (auto no = cannot_run(spec, provider, engine)) {
    t.status = no->first;
    t.reason = no->second;
    return t;
  }
#if defined(ATTNPROF_WITH_CUDA)
  if (engine.kind() == DeviceKind::cuda) {
    cuda::trace_point_cuda(t, provider, engine, options);
    return t;
  }
#endif
  t.kernels_note = "host only (CPU provider: phases, no kernels)";
  run_phases(t, provider, engine, options, host_phase_clock());
  return t;
}

void run_profiled_launch(const Spec& spec, Provider& provider, Engine& engine,
                         const TraceOptions& options) {
#if defined(ATTNPROF_WITH_CUDA)
  if (auto no = cannot_run(spec, provider, engine)) {
    throw std::runtime_error(fmt::format("{}: {}", provider.name(), no->second));
  }
  if (engine.kind() == DeviceKind::cuda) {
    cuda::run_profiled_launch_cuda(spec, provider, engine, options);
    return;
  }
  throw std::runtime_error(
      fmt::format("{} is not a CUDA provider; ncu profiles CUDA kernels", provider.name()));
#else
  (void)spec, (void)provider, (void)engine, (void)options;
  throw std::runtime_error("built without CUDA: nothing for ncu to profile");
#endif
}

}  // namespace attnprof
