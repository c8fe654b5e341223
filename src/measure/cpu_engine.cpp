// The CPU engine: host wall-clock timing of synchronous launches, the process high-water mark,
// no kernel tracing.
#include <chrono>
#include <fstream>
#include <string>

#include "attnprof/engine.hpp"

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

  TimingResult measure(Run& run, const MeasureOptions& options) override {
    StoppingRule rule = options.rule;
    // steady_clock's tick is 1 ns on Linux, but a call costs ~20-50 ns: 1 us is a safe floor.
    rule.timer_resolution_s = 1e-6;
    std::vector<double> samples;
    double measured = 0;
    const auto start = Clock::now();
    StopDecision d;
    while (true) {
      const auto t0 = Clock::now();
      run.launch(stream_);
      const double s = seconds_since(t0);
      samples.push_back(s);
      measured += s;
      d = should_stop(rule, samples, measured, seconds_since(start));
      if (d.stop) break;
    }
    return to_timing("cpu-wall", summarize(samples), d);
  }

  std::vector<KernelRecord> trace_kernels(Run&, std::string& note) override {
    note = "cpu: no kernels";
    return {};
  }

  Fingerprint fingerprint() const override { return {}; }

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
