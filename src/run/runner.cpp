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
#include "attnprof/stats.hpp"
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

// The seed of the new input values the last check launches on: another draw of the generator,
// the same for every provider of a point.
constexpr uint64_t kFreshSeedSalt = 0x5EED'F4E5'0000'0001ull;

// One point from allocation to release: a method per phase, in the order run() calls them, each
// filling its part of the row; any may throw (a FaultError names the fault). Whatever ends the
// point, its row says what the audits cost up to there.
class PointLifecycle {
 public:
  PointLifecycle(Result& r, const Spec& spec, Provider& provider, Engine& engine,
                 const RunOptions& options, const Settings& settings,
                 const std::optional<Peaks>& peaks, PointHooks& hooks)
      : r_(r),
        spec_(spec),
        provider_(provider),
        engine_(engine),
        options_(options),
        settings_(settings),
        peaks_(peaks),
        hooks_(hooks),
        tracker_(engine.tracker()),
        base_(tracker_ ? tracker_->current() : 0),
        fill_{options.seed, InputPattern::random},
        stream_(engine.stream()),
        audit_streams_(options.trace_launches == 0 && !options.profile_one_launch) {
    if (tracker_) tracker_->reset_peak();
  }
  ~PointLifecycle() { r_.audits = audits_.seconds(); }
  PointLifecycle(const PointLifecycle&) = delete;
  PointLifecycle& operator=(const PointLifecycle&) = delete;

  void run() {
    phase(hooks_, Phase::prepare, [&] { prepare(); });
    bool correct = true;
    phase(hooks_, Phase::verify, [&] { correct = verify(); });
    if (!correct) {
      r_.status = Status::incorrect;
      r_.reason = fmt::format("verification failed: {}", r_.verify.detail);
      return;
    }
    const auto measure_t0 = std::chrono::steady_clock::now();
    phase(hooks_, Phase::warmup, [&] { warm_up(); });
    phase(hooks_, Phase::measure, [&] { measure(); });
    r_.measure_s = seconds_since(measure_t0);
    require_plausible();  // outside the phase: a trace's timed range holds the provider's work
                          // alone
    phase(hooks_, Phase::verify_last, [&] { correct = verify_last(); });
    if (!correct) {
      r_.status = Status::incorrect;
      return;
    }
    // The streams the work ran on, and which kernels (an extra launch under CUPTI). A tracer that
    // holds CUPTI itself (trace, --ncu) sees the streams in its own trace instead.
    if (options_.trace_kernels || audit_streams_) phase(hooks_, Phase::kernels, [&] { kernels(); });
    finish();
  }

 private:
  // The tensors, the provider's prepare (its time is the row's prepare_s) and the bound launch.
  void prepare() {
    tensors_ = engine_.allocate(spec_, r_.traits.writes_lse, fill_);
    PrepareContext ctx;
    ctx.threads = options_.threads;
    ctx.tracker = tracker_;
    ctx.stream = &stream_;
    ctx.settings = settings_;
    const auto t0 = std::chrono::steady_clock::now();
    run_ = provider_.prepare(spec_, engine_.device(), ctx, tensors_->io());
    const Io first[] = {tensors_->io()};
    run_->bind(first);
    tensors_->finish();  // work prepare queued is prepare's
    r_.prepare_s = seconds_since(t0);
    audits_(&AuditSeconds::inputs, [&] { require_untouched(*tensors_, "prepare"); });
    tensors_->seal_inputs();  // mode bwd: the forward state prepare wrote is an input from here on
  }

  // Verified run: poisoned outputs, one launch, every element scanned, rows against fp64, within
  // the dtype's bounds (or the looser one a quantized provider declares: said in the detail).
  bool verify() {
    bounds_ = tolerance_for(spec_.dtype, r_.traits);
    const std::string declared =
        bounds_.output > tolerance_for(spec_.dtype).output
            ? fmt::format("; O's bound {:.3g} declared by the provider ({})", bounds_.output,
                          r_.traits.quantization.empty() ? "quantized" : r_.traits.quantization)
            : "";
    audited_launch(*run_, stream_, *tensors_, "the verified launch", &audits_);
    const auto t0 = std::chrono::steady_clock::now();
    r_.verify = judge_rows(spec_, check(true), bounds_);
    r_.verify.seconds = seconds_since(t0);
    r_.verify.launches_checked = 1;
    r_.verify.detail += declared;
    return verify_passed(r_.verify);
  }

  // The warm-up launches, then the point's footprint: prepare, the verified launch and the
  // warm-up. Copies the timer makes for cold batches are a measurement device, not the point's.
  void warm_up() {
    for (int i = 0; i < options_.warmup_launches; ++i) run_->launch(stream_, tensors_->io());
    r_.memory.workspace_bytes = run_->workspace_bytes();
    r_.memory.peak_bytes = tracker_ ? tracker_->peak() - base_ + run_->untracked_peak_bytes()
                                    : tensors_->bytes() + run_->workspace_bytes();
  }

  // The timed samples (or the hooks' own measurement: tune's batch search, trace's one launch).
  void measure() {
    if (hooks_.measure(*run_, *tensors_, engine_, r_)) return;
    MeasureOptions measure = options_.measure;
    const bool over_memory =
        options_.memory_limit_bytes > 0 && r_.memory.peak_bytes > options_.memory_limit_bytes;
    if (over_memory) {
      measure.rule.max_samples = std::min<int64_t>(measure.rule.max_samples, 10);
      measure.rule.min_samples = std::min(measure.rule.min_samples, measure.rule.max_samples);
    }
    r_.timing = engine_.measure(*run_, *tensors_, measure);
    audits_.add(&AuditSeconds::outputs, r_.timing.audit_s);
    if (over_memory) r_.timing.stop_reason = to_string(StopReason::over_memory_limit);
    // No sample kept (every one dropped as throttled, say) is no figure: the row must not read
    // as a measured pass, however well its outputs verified.
    if (r_.timing.samples == 0) {
      throw FaultError(Fault::timeout,
                       fmt::format("no timed sample: {} (its outputs verified; docs/method.md, "
                                   "\"Timing\")",
                                   r_.timing.stop_reason));
    }
  }

  // Inputs untouched by the timed launches, and a time a device could have run the point in: work
  // the timer did not see is the likeliest reason for one it could not, and named when it is.
  void require_plausible() {
    audits_(&AuditSeconds::inputs, [&] { require_untouched(*tensors_, "the timed launches"); });
    std::string why = implausible_reason(r_, engine_.device(), peaks_);
    if (why.empty()) return;
    if (audit_streams_) {
      require_on_stream(audits_(&AuditSeconds::streams, [&] {
        return engine_.trace_kernels(*run_, *tensors_, r_.traits.own_streams);
      }));
    }
    throw FaultError(Fault::implausible, why);
  }

  // The output of the last timed launch is checked too (its outputs were poisoned before its
  // sample), then `repeats` more launches, each on poisoned outputs: a kernel that is right once
  // and wrong under repetition (a race, stale state) must not pass. Then one launch on new input
  // values: an output that does not follow its inputs was not computed from them.
  bool verify_last() {
    const auto t0 = std::chrono::steady_clock::now();
    bool correct = true;
    int repeats = 0;
    for (int t = 0; correct; ++t) {
      if (t > 0) {
        audited_launch(*run_, stream_, *tensors_, fmt::format("repeat launch {}", t), &audits_);
      } else {
        run_->publish(stream_, tensors_->io());
        audits_(&AuditSeconds::outputs,
                [&] { require_written(*tensors_, "the last timed sample"); });
      }
      const auto c0 = std::chrono::steady_clock::now();
      const VerifyResult result = judge_rows(spec_, check(false), bounds_);
      if (t == 0) repeats = verify_repeats(options_.verify, engine_.kind(), seconds_since(c0));
      ++r_.verify.launches_checked;
      if (!verify_passed(result)) {
        keep_failed_check(result, t, repeats);
        correct = false;
      }
      if (t >= repeats) break;
    }
    // A launch count of the other parity: an input a provider changes on one launch and changes
    // back on the next is seen after one of the two.
    // Both launches are the audits' own: their whole time is the audits'.
    if (correct && repeats == 0) {
      audits_(&AuditSeconds::launches,
              [&] { audited_launch(*run_, stream_, *tensors_, "one more launch"); });
    }
    if (correct && spec_.mode != Mode::bwd) require_fresh_inputs_followed();
    r_.verify.seconds += seconds_since(t0);
    return correct;
  }

  // The failed check of launch `t` (0: the last timed one) becomes the row's, keeping the count
  // of launches checked, the checks' seconds and the references' disagreement.
  void keep_failed_check(const VerifyResult& result, int t, int repeats) {
    const double seconds = r_.verify.seconds;
    const int64_t launches = r_.verify.launches_checked;
    const double disagreement = r_.verify.reference_disagreement;
    r_.verify = result;
    r_.verify.launches_checked = launches;
    r_.verify.seconds = seconds;
    r_.verify.reference_disagreement = disagreement;
    r_.reason = t == 0 ? fmt::format("verification of the last timed run failed: {}", result.detail)
                       : fmt::format(
                             "verification of repeat launch {} of {} after the timed "
                             "runs failed: {}",
                             t, repeats, result.detail);
  }

  // One launch on new input values, checked on a sample of rows: a result kept from earlier
  // inputs is `stale`.
  void require_fresh_inputs_followed() {
    const InputFill fresh{fill_.seed ^ kFreshSeedSalt, fill_.pattern};
    const VerifyResult result = audits_(&AuditSeconds::launches, [&] {
      tensors_->refill_inputs(fresh);
      audited_launch(*run_, stream_, *tensors_, "the launch on new input values");
      return judge_rows(spec_, engine_.check_sample(spec_, *tensors_, fresh), bounds_);
    });
    ++r_.verify.launches_checked;
    if (!verify_passed(result)) {
      throw FaultError(Fault::stale,
                       fmt::format("the outputs did not follow new input values (a result kept "
                                   "from earlier inputs?): {}",
                                   result.detail));
    }
  }

  // Without --kernels the whole phase is the stream audit's.
  void kernels() {
    KernelTrace k = options_.trace_kernels
                        ? engine_.trace_kernels(*run_, *tensors_, r_.traits.own_streams)
                        : audits_(&AuditSeconds::streams, [&] {
                            return engine_.trace_kernels(*run_, *tensors_, r_.traits.own_streams);
                          });
    require_on_stream(k);
    if (options_.trace_kernels) r_.kernels = std::move(k.kernels);
    r_.kernels_note = std::move(k.note);
  }

  void finish() {
    r_.provider_note = run_->note();
    r_.memory.extra_bytes = r_.memory.peak_bytes - r_.memory.analytic_bytes;
    r_.memory.process_hwm_bytes = process_hwm_bytes();
    r_.status = Status::passed;
    derive_rates(r_);
  }

  // The engine's check, with its own disagreement attributed: where the device reference and
  // the host's fp64 disagree, a changed input is the provider's doing, not the instrument's.
  RowChecks check(bool cross_check) {
    try {
      return engine_.check_outputs(spec_, *tensors_, fill_, options_.verify, cross_check);
    } catch (const FaultError& e) {
      if (e.fault() == Fault::harness) require_untouched(*tensors_, "the check");
      throw;
    }
  }

  Result& r_;
  const Spec& spec_;
  Provider& provider_;
  Engine& engine_;
  const RunOptions& options_;
  const Settings& settings_;
  const std::optional<Peaks>& peaks_;
  PointHooks& hooks_;
  MemoryTracker* tracker_;
  const int64_t base_;  // the tracker's bytes before the point
  const InputFill fill_;
  Stream& stream_;
  const bool audit_streams_;  // no tracer holds CUPTI: the streams are audited here
  std::unique_ptr<PointTensors> tensors_;
  std::unique_ptr<Run> run_;
  AuditClock audits_;
  Tolerance bounds_;
};

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
    h.around([&] { PointLifecycle(r, spec, provider, engine, options, settings, peaks, h).run(); });
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
