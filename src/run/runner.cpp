// The point lifecycle (include/attnprof/runner.hpp; docs/design.md, "The point lifecycle").
#include "attnprof/runner.hpp"

#include "attnprof/ragged.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>

#include "attnprof/env.hpp"
#include "attnprof/model.hpp"
#include "attnprof/peaks.hpp"
#include "attnprof/physics.hpp"
#include "run/ceilings.hpp"

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

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Launches checked after the last timed one: options.repeats, or the engine's choice: on a GPU
// up to 10 while they cost under ~0.5 s together (the last timed launch's check took `check_s`);
// none on the CPU, whose checks are the host's fp64.
int verify_repeats(const VerifyOptions& options, DeviceKind kind, double check_s) {
  if (options.repeats >= 0) return options.repeats;
  if (kind != DeviceKind::cuda) return 0;
  if (!(check_s > 0)) return 10;
  return static_cast<int>(std::clamp(0.5 / check_s, 0.0, 10.0));
}

// Runs one phase between the hooks' begin and end.
template <class Body>
void phase(PointHooks& hooks, Phase p, Body&& body) {
  hooks.begin(p);
  body();
  hooks.end(p);
}

// Seconds the audits took, by kind: the row's audits.
class AuditClock {
 public:
  using Part = double AuditSeconds::*;
  template <class Body>
  decltype(auto) operator()(Part part, Body&& body) {
    struct Add {
      double& total;
      std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
      ~Add() { total += seconds_since(t0); }
    } add{seconds_.*part};
    return body();
  }
  void add(Part part, double s) { seconds_.*part += s; }
  const AuditSeconds& seconds() const { return seconds_; }

 private:
  AuditSeconds seconds_;
};

// One launch from poisoned outputs, its outputs published and audited: the audits' time in
// `audits`, the launch's not (a launch of the point's own protocol); with no clock, the caller
// counts the whole (a launch the audits alone make).
void audited_launch(Run& run, Stream& stream, PointTensors& tensors, std::string_view what,
                    AuditClock* audits = nullptr) {
  const auto audit = [&](AuditClock::Part part, auto&& body) {
    audits ? (*audits)(part, body) : body();
  };
  audit(&AuditSeconds::outputs, [&] { tensors.poison_outputs(); });
  run.launch(stream, tensors.io());
  run.publish(stream, tensors.io());
  tensors.finish();  // the launch's time, not the audits'
  audit(&AuditSeconds::inputs, [&] { require_untouched(tensors, what); });
  audit(&AuditSeconds::outputs, [&] { require_written(tensors, what); });
}

// Work the timer times: no kernel on a stream the timed stream does not wait for.
void require_on_stream(const KernelTrace& k) {
  if (k.off_stream == 0) return;
  throw FaultError(Fault::off_stream,
                   fmt::format("{} kernel(s) ran on a stream the timed stream does not wait for "
                               "(the first: {}); the timer did not time them",
                               k.off_stream, k.off_stream_first));
}

// The engine's check, with its own disagreement attributed: where the device reference and the
// host's fp64 disagree, a changed input is the provider's doing, not the instrument's.
RowChecks checked(Engine& engine, const Spec& spec, PointTensors& tensors, const InputFill& fill,
                  const VerifyOptions& options, bool cross_check) {
  try {
    return engine.check_outputs(spec, tensors, fill, options, cross_check);
  } catch (const FaultError& e) {
    if (e.fault() == Fault::harness) require_untouched(tensors, "the check");
    throw;
  }
}

// The seed of the new input values the last check launches on: another draw of the generator,
// the same for every provider of a point.
constexpr uint64_t kFreshSeedSalt = 0x5EED'F4E5'0000'0001ull;

// The phases from allocation to release; fills `r`; may throw.
void execute(Result& r, const Spec& spec, Provider& provider, Engine& engine,
             const RunOptions& options, const Settings& settings, const std::optional<Peaks>& peaks,
             PointHooks& hooks) {
  MemoryTracker* tracker = engine.tracker();
  const int64_t base = tracker ? tracker->current() : 0;
  if (tracker) tracker->reset_peak();
  const InputFill fill{options.seed, InputPattern::random};
  Stream& stream = engine.stream();

  std::unique_ptr<PointTensors> tensors;
  std::unique_ptr<Run> run;
  AuditClock audits;
  // Whatever ends the point, its row says what the audits cost up to there.
  struct PublishAudits {
    Result& r;
    AuditClock& a;
    ~PublishAudits() { r.audits = a.seconds(); }
  } publish_audits{r, audits};
  phase(hooks, Phase::prepare, [&] {
    tensors = engine.allocate(spec, r.traits.writes_lse, fill);
    PrepareContext ctx;
    ctx.threads = options.threads;
    ctx.tracker = tracker;
    ctx.stream = &stream;
    ctx.settings = settings;
    const auto t0 = std::chrono::steady_clock::now();
    run = provider.prepare(spec, engine.device(), ctx, tensors->io());
    const Io first[] = {tensors->io()};
    run->bind(first);
    tensors->finish();  // work prepare queued is prepare's
    r.prepare_s = seconds_since(t0);
    audits(&AuditSeconds::inputs, [&] { require_untouched(*tensors, "prepare"); });
    tensors->seal_inputs();  // mode bwd: the forward state prepare wrote is an input from here on
  });
  const Io& io = tensors->io();

  // Verified run: poisoned outputs, one launch, every element scanned, rows against fp64, within
  // the dtype's bounds (or the looser one a quantized provider declares: said in the detail).
  const Tolerance bounds = tolerance_for(spec.dtype, r.traits);
  const std::string declared =
      bounds.output > tolerance_for(spec.dtype).output
          ? fmt::format("; O's bound {:.3g} declared by the provider ({})", bounds.output,
                        r.traits.quantization.empty() ? "quantized" : r.traits.quantization)
          : "";
  bool correct = true;
  phase(hooks, Phase::verify, [&] {
    audited_launch(*run, stream, *tensors, "the verified launch", &audits);
    const auto t0 = std::chrono::steady_clock::now();
    r.verify =
        judge_rows(spec, checked(engine, spec, *tensors, fill, options.verify, true), bounds);
    r.verify.seconds = seconds_since(t0);
    r.verify.launches_checked = 1;
    r.verify.detail += declared;
    correct = verify_passed(r.verify);
  });
  if (!correct) {
    r.status = Status::incorrect;
    r.reason = fmt::format("verification failed: {}", r.verify.detail);
    return;
  }

  const auto measure_t0 = std::chrono::steady_clock::now();
  phase(hooks, Phase::warmup, [&] {
    for (int i = 0; i < options.warmup_launches; ++i) run->launch(stream, io);
  });
  // The point's footprint: prepare, the verified launch and the warm-up. Copies the timer makes
  // for cold batches are a measurement device, not the point's.
  r.memory.workspace_bytes = run->workspace_bytes();
  r.memory.peak_bytes = tracker ? tracker->peak() - base + run->untracked_peak_bytes()
                                : tensors->bytes() + run->workspace_bytes();

  phase(hooks, Phase::measure, [&] {
    if (!hooks.measure(*run, *tensors, engine, r)) {
      MeasureOptions measure = options.measure;
      const bool over_memory =
          options.memory_limit_bytes > 0 && r.memory.peak_bytes > options.memory_limit_bytes;
      if (over_memory) {
        measure.rule.max_samples = std::min<int64_t>(measure.rule.max_samples, 10);
        measure.rule.min_samples = std::min(measure.rule.min_samples, measure.rule.max_samples);
      }
      r.timing = engine.measure(*run, *tensors, measure);
      audits.add(&AuditSeconds::outputs, r.timing.audit_s);
      if (over_memory) r.timing.stop_reason = "over_memory_limit";
      // No sample kept (every one dropped as throttled, say) is no figure: the row must not read
      // as a measured pass, however well its outputs verified.
      if (r.timing.samples == 0) {
        throw FaultError(Fault::timeout,
                         fmt::format("no timed sample: {} (its outputs verified; docs/method.md, "
                                     "\"Timing\")",
                                     r.timing.stop_reason));
      }
    }
  });
  r.measure_s = seconds_since(measure_t0);
  // Outside the phase: a trace's timed range holds the provider's work alone.
  audits(&AuditSeconds::inputs, [&] { require_untouched(*tensors, "the timed launches"); });
  // A time no device could have run the point in is no measurement; work the timer did not see
  // is the likeliest reason, and named when it is.
  const bool audit_streams = options.trace_launches == 0 && !options.profile_one_launch;
  if (std::string why = implausible_reason(r, engine.device(), peaks); !why.empty()) {
    if (audit_streams) {
      require_on_stream(audits(&AuditSeconds::streams, [&] {
        return engine.trace_kernels(*run, *tensors, r.traits.own_streams);
      }));
    }
    throw FaultError(Fault::implausible, why);
  }

  // The output of the last timed launch is checked too (its outputs were poisoned before its
  // sample), then `repeats` more launches, each on poisoned outputs: a kernel that is right once
  // and wrong under repetition (a race, stale state) must not pass. Then one launch on new input
  // values: an output that does not follow its inputs was not computed from them.
  phase(hooks, Phase::verify_last, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    int repeats = 0;
    for (int t = 0; correct; ++t) {
      if (t > 0) {
        audited_launch(*run, stream, *tensors, fmt::format("repeat launch {}", t), &audits);
      } else {
        run->publish(stream, io);
        audits(&AuditSeconds::outputs, [&] { require_written(*tensors, "the last timed sample"); });
      }
      const auto c0 = std::chrono::steady_clock::now();
      const VerifyResult check =
          judge_rows(spec, checked(engine, spec, *tensors, fill, options.verify, false), bounds);
      if (t == 0) repeats = verify_repeats(options.verify, engine.kind(), seconds_since(c0));
      ++r.verify.launches_checked;
      if (!verify_passed(check)) {
        const double seconds = r.verify.seconds;
        const int64_t launches = r.verify.launches_checked;
        const double disagreement = r.verify.reference_disagreement;
        r.verify = check;
        r.verify.launches_checked = launches;
        r.verify.seconds = seconds;
        r.verify.reference_disagreement = disagreement;
        r.reason = t == 0
                       ? fmt::format("verification of the last timed run failed: {}", check.detail)
                       : fmt::format(
                             "verification of repeat launch {} of {} after the timed "
                             "runs failed: {}",
                             t, repeats, check.detail);
        correct = false;
      }
      if (t >= repeats) break;
    }
    // A launch count of the other parity: an input a provider changes on one launch and changes
    // back on the next is seen after one of the two.
    // Both launches are the audits' own: their whole time is the audits'.
    if (correct && repeats == 0) {
      audits(&AuditSeconds::launches,
             [&] { audited_launch(*run, stream, *tensors, "one more launch"); });
    }
    if (correct && spec.mode != Mode::bwd) {
      const InputFill fresh{fill.seed ^ kFreshSeedSalt, fill.pattern};
      const VerifyResult check = audits(&AuditSeconds::launches, [&] {
        tensors->refill_inputs(fresh);
        audited_launch(*run, stream, *tensors, "the launch on new input values");
        return judge_rows(spec, engine.check_sample(spec, *tensors, fresh), bounds);
      });
      ++r.verify.launches_checked;
      if (!verify_passed(check)) {
        throw FaultError(Fault::stale,
                         fmt::format("the outputs did not follow new input values (a result kept "
                                     "from earlier inputs?): {}",
                                     check.detail));
      }
    }
    r.verify.seconds += seconds_since(t0);
  });
  if (!correct) {
    r.status = Status::incorrect;
    return;
  }

  // The streams the work ran on, and which kernels (an extra launch under CUPTI). A tracer that
  // holds CUPTI itself (trace, --ncu) sees the streams in its own trace instead.
  if (options.trace_kernels || audit_streams) {
    phase(hooks, Phase::kernels, [&] {
      // Without --kernels the whole phase is the stream audit's.
      KernelTrace k = options.trace_kernels
                          ? engine.trace_kernels(*run, *tensors, r.traits.own_streams)
                          : audits(&AuditSeconds::streams, [&] {
                              return engine.trace_kernels(*run, *tensors, r.traits.own_streams);
                            });
      require_on_stream(k);
      if (options.trace_kernels) r.kernels = std::move(k.kernels);
      r.kernels_note = std::move(k.note);
    });
  }

  r.provider_note = run->note();
  r.memory.extra_bytes = r.memory.peak_bytes - r.memory.analytic_bytes;
  r.memory.process_hwm_bytes = process_hwm_bytes();
  r.status = Status::passed;
  derive_rates(r);
}

Result refused(Result r, Status status, Fault fault, std::string reason) {
  r.status = status;
  r.fault = fault;
  r.reason = std::move(reason);
  return r;
}

}  // namespace

std::string_view to_string(Phase p) {
  switch (p) {
    case Phase::prepare:
      return "prepare";
    case Phase::verify:
      return "verify";
    case Phase::warmup:
      return "warm-up";
    case Phase::measure:
      return "timed";
    case Phase::verify_last:
      return "verify-last";
    case Phase::kernels:
      return "kernels";
  }
  return "?";
}

void derive_rates(Result& r) {
  const double t = r.timing.median_us * 1e-6;
  if (!(t > 0)) return;
  r.tflops = r.flops / t / 1e12;
  r.gbps = r.bytes / t / 1e9;
  // Query tokens processed: a ragged batch's sequences' own (ragged.hpp), not its padding.
  r.tokens_per_s = static_cast<double>(seq_lens(r.spec).q_total()) / t;
}

Result point_row(const Provider& provider, const Spec& spec, uint64_t seed) {
  Result r;
  r.traits = provider.traits();
  r.provider = r.traits.name;
  r.spec = spec;
  r.seed = seed;
  r.flop_convention = std::string(kFlopConvention);
  if (spec.validate().empty()) {
    r.flops = flops(spec);
    r.bytes = min_bytes(spec);
    r.memory.analytic_bytes = io_bytes(spec);
  }
  return r;
}

Result unrun_row(const Provider& provider, const Spec& spec, uint64_t seed, Status status,
                 Fault fault, std::string reason) {
  return refused(point_row(provider, spec, seed), status, fault, std::move(reason));
}

std::optional<Result> refuse_point(const Spec& spec, Provider& provider, Engine& engine,
                                   const RunOptions& options, const Settings& settings) {
  Result r = point_row(provider, spec, options.seed);
  r.device = engine.device().name;
  if (auto errors = spec.validate(); !errors.empty()) {
    return refused(std::move(r), Status::not_supported, Fault::invalid,
                   "invalid spec: " + join(errors, "; "));
  }
  if (provider.device_kind() != engine.kind()) {
    return refused(std::move(r), Status::not_supported, Fault::not_supported,
                   fmt::format("runs on {}, this point is on {}", to_string(provider.device_kind()),
                               to_string(engine.kind())));
  }
  if (Availability a = provider.availability(); !a.available) {
    return refused(std::move(r), Status::not_supported, Fault::not_supported, a.reason);
  }
  if (Availability a = engine.availability(); !a.available) {
    return refused(std::move(r), Status::not_supported, Fault::not_supported, a.reason);
  }
  const int bits = provider.index_bits();
  if (bits < 63 && spec.largest_tensor_elems() >= (int64_t{1} << bits)) {
    return refused(std::move(r), Status::not_supported, Fault::not_supported,
                   fmt::format("a tensor of {} elements exceeds the provider's {}-bit indexing",
                               spec.largest_tensor_elems(), bits));
  }
  if (std::string why = variant_refusal(r.traits, spec); !why.empty()) {
    return refused(std::move(r), Status::not_supported, Fault::not_supported, why);
  }
  if (Support s = provider.supports(spec, engine.device()); !s.ok) {
    return refused(std::move(r), Status::not_supported, Fault::not_supported, s.reason);
  }
  const Io layout = io_layout(spec, spec.dtype, r.traits.writes_lse);
  const int64_t estimate = tensor_bytes(layout) + provider.workspace_estimate(spec, settings);
  const int64_t capacity = engine.device().memory_bytes;
  if (capacity > 0 && estimate > capacity) {
    return refused(std::move(r), Status::oom, Fault::oom,
                   fmt::format("estimated {:.2f} GiB exceeds the device's {:.2f} GiB; not run",
                               static_cast<double>(estimate) / double(1 << 30),
                               static_cast<double>(capacity) / double(1 << 30)));
  }
  return std::nullopt;
}

Result run_point(const Spec& spec, Provider& provider, Engine& engine, const RunOptions& options,
                 PointHooks* hooks, const Settings& settings) {
  if (std::optional<Result> no = refuse_point(spec, provider, engine, options, settings))
    return *no;
  Result r = point_row(provider, spec, options.seed);
  r.device = engine.device().name;
  r.started_at = utc_now_iso8601();
  // Before anything of the point is allocated: measuring the ceilings needs the device to itself.
  const std::optional<Peaks> peaks = ceilings(engine, options.auto_peaks);
  PointHooks none;
  PointHooks& h = hooks ? *hooks : none;
  // One catch per point: whatever a provider throws ends this point only, classified here.
  try {
    h.around([&] { execute(r, spec, provider, engine, options, settings, peaks, h); });
  } catch (const std::exception& e) {
    r.fault = classify(e);
    r.reason = fault_reason(e);
    // A sticky CUDA error poisons the context whatever the exception said about it: ask the
    // device, not the message.
    if (r.fault != Fault::sticky_device) {
      if (const std::string why = engine.poisoned(); !why.empty()) {
        r.fault = Fault::sticky_device;
        r.reason += "; " + why;
      }
    }
    r.status = status_of(r.fault);
  }
  // % of the device's measured ceilings and the bound.
  if (peaks && r.status == Status::passed) apply_peaks(r, *peaks);
  h.finish(r);
  return r;
}

}  // namespace attnprof
