// The CPU engine: host tensors (host_tensors.hpp), host wall-clock timing of synchronous
// launches, the host's load while sampling (host_load.hpp), no kernel tracing.
#include <fmt/format.h>

#include <chrono>
#include <string>

#include "attnprof/engine.hpp"
#include "measure/cpu_peaks.hpp"
#include "measure/host_load.hpp"
#include "measure/host_tensors.hpp"

namespace attnprof {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

class CpuEngine final : public Engine {
 public:
  explicit CpuEngine(int threads) : device_(host_cpu_device()) {
    if (threads > 0) device_.threads = threads;
  }
  DeviceKind kind() const override { return DeviceKind::cpu; }
  Availability availability() const override { return {}; }
  const Device& device() const override { return device_; }
  Stream& stream() override { return stream_; }
  MemoryTracker* tracker() override { return &tracker_; }
  std::string peaks_key() const override { return cpu_peaks_key(device_); }
  Peaks measure_peaks(const std::function<void(const std::string&)>& progress) override {
    return measure_cpu_peaks(*this, progress);
  }

  std::unique_ptr<PointTensors> allocate(const Spec& spec, bool lse,
                                         const InputFill& fill) override {
    return make_host_tensors(spec, lse, fill, device_.threads, &tracker_);
  }

  TimingResult measure(Run& run, PointTensors& tensors, const MeasureOptions& options) override {
    StoppingRule rule = options.rule;
    // steady_clock's tick is 1 ns on Linux, but a call costs ~20-50 ns: 1 us is a safe floor.
    rule.timer_resolution_s = 1e-6;
    const Io& io = tensors.io();
    SampleSeries samples;
    double measured = 0;
    const CpuTimes before = read_cpu_times();
    const auto start = Clock::now();
    StopDecision d;
    double audit_s = 0;
    while (true) {
      // Every sample starts from poisoned outputs and must write them (docs/method.md, "What a
      // provider cannot fake"); poison, publish and the scan are outside the sample.
      const auto a0 = Clock::now();
      tensors.poison_outputs();
      const auto t0 = Clock::now();
      run.launch(stream_, io);
      const auto t1 = Clock::now();
      const double s = std::chrono::duration<double>(t1 - t0).count();
      run.publish(stream_, io);
      require_written(tensors, fmt::format("timed sample {}", samples.size() + 1));
      audit_s += std::chrono::duration<double>(t0 - a0).count() + seconds_since(t1);
      samples.add(s);
      measured += s;
      d = should_stop(rule, samples, measured, seconds_since(start));
      if (d.stop) break;
    }
    TimingResult t = to_timing("cpu-wall", samples.stats(), d);
    t.audit_s = audit_s;
    t.host_busy = others_busy_share(before, read_cpu_times());
    t.host_load = load_average_1m();
    if (t.host_busy > kBusyHost) {
      t.noisy = true;
      t.stop_reason +=
          fmt::format("; host busy: other processes used {:.0f}% of its CPU time while sampling",
                      100 * t.host_busy);
    }
    return t;
  }

  RowChecks check_outputs(const Spec& spec, PointTensors& tensors, const InputFill& fill,
                          const VerifyOptions& options, bool) override {
    return check_on_host(spec, fill, tensors.read_outputs(), options);
  }
  RowChecks check_sample(const Spec& spec, PointTensors& tensors, const InputFill& fill) override {
    VerifyOptions sample;
    sample.full_check_flops = 0;  // the sample of rows_to_check, never every row
    return check_on_host(spec, fill, tensors.read_outputs(), sample);
  }
  KernelTrace trace_kernels(Run&, PointTensors&, bool) override {
    KernelTrace t;
    t.note = "cpu: no kernels";
    return t;
  }

  // The threads the CPU providers ran on (--threads): the figures depend on them.
  Fingerprint fingerprint() const override {
    return {{"threads", std::to_string(device_.threads)}};
  }

 private:
  Device device_;
  Stream stream_;
  MemoryTracker tracker_;
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(int threads) {
  return std::make_unique<CpuEngine>(threads);
}

#if !defined(ATTNPROF_WITH_CUDA)
std::unique_ptr<Engine> make_cuda_engine(int) {
  return nullptr;
}
#endif

}  // namespace attnprof
