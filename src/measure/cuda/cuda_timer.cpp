#include "measure/cuda/cuda_timer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "measure/cuda/timing_kernels.hpp"

namespace attnprof::cuda {

namespace {

using Clock = std::chrono::steady_clock;

// cudaEventElapsedTime resolves about 0.5 us; a batch of n launches divides it by n.
constexpr double kEventResolutionS = 0.5e-6;
// steady_clock ticks in ns, but a call plus the synchronize's wake-up jitter is ~1 us.
constexpr double kWallResolutionS = 1e-6;
// Launches shorter than this are timed in batches of about kBatchTargetS of device time, so
// the event resolution is amortized (0.5 us / 200 us = 0.25%, under the 0.5% noise bound).
constexpr double kBatchBelowS = 100e-6;
constexpr double kBatchTargetS = 200e-6;
constexpr int64_t kMaxBatch = 4096;
constexpr int kMaxCopies = 256;
// docs/method.md, "Timing": a sample whose SM clock ran under 75% of the rated clock is a throttled
// sample.
constexpr double kThrottleFraction = 0.75;
// The spin kernel that hides the host's enqueue: at least 20 us, at most 50 ms, starting at
// 100 us and sized to twice the enqueue time the host last needed.
constexpr uint64_t kSpinMinNs = 20'000, kSpinStartNs = 100'000, kSpinMaxNs = 50'000'000;
// Clock policy recover: the idle gap before each sample is kRecoverFactor times the last
// sample's time, at least kRecoverMinS; the point's timeout grows by kRecoverTimeoutScale.
constexpr double kRecoverMinS = 2e-3, kRecoverFactor = 2.0, kRecoverTimeoutScale = 3.0;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Sample {
  double seconds = 0;    // device (or wall) time of the whole batch
  double mhz = 0;        // mean SM clock over the batch; 0 when unknown
  double watts = 0;      // board power read after the sample; 0 when unknown
  bool exposed = false;  // the spin ended before the host finished enqueueing
};

// One point's sampling state: the batch size, rotation copies and graph it set up, and the
// spin length it adapts. Restores the run (bound to copy 0, no extra copies) when destroyed.
class Sampler {
 public:
  Sampler(TimerContext& ctx, Run& run, PointTensors& tensors, const MeasureOptions& options,
          TimingMode mode)
      : ctx_(ctx), run_(run), tensors_(tensors), options_(options), mode_(mode) {
    sets_ = {tensors.io()};
  }
  ~Sampler() {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    if (sets_.size() > 1) {
      try {
        const Io first[] = {tensors_.io()};
        run_.bind(first);
        tensors_.replicate(1);
      } catch (...) {  // a destructor must not throw; the run is discarded after a failure
      }
    }
  }
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  bool spin_at_max() const { return spin_ns_ >= kSpinMaxNs; }
  int64_t copies() const { return static_cast<int64_t>(sets_.size()); }

  // Sets up batches of n launches: rotation copies (cold) or the captured graph (graph).
  void prepare_batch(int64_t n) {
    n_ = n;
    if (mode_ == TimingMode::cold && n > 1 && options_.rotate) setup_copies(n);
    if (mode_ == TimingMode::graph) capture_graph(n);
  }

  // Every sample starts from poisoned outputs of copy 0 (the set each batch ends on) and must
  // write them (docs/method.md, "What a provider cannot fake"); poison, publish and the scan run
  // outside the timed events.
  Sample take() {
    auto a0 = std::chrono::steady_clock::now();
    tensors_.poison_outputs();
    audit_s_ += seconds_since(a0);
    if (options_.clock == ClockPolicy::recover) idle_before_sample();
    Sample x = mode_ == TimingMode::wall ? take_wall() : take_events();
    last_s_ = x.seconds;
    if (ctx_.power) x.watts = ctx_.power->watts();
    a0 = std::chrono::steady_clock::now();
    run_.publish(*ctx_.launch_stream, tensors_.io());
    require_written(tensors_, fmt::format("timed sample {}", ++taken_));
    audit_s_ += seconds_since(a0);
    return x;
  }
  double audit_seconds() const { return audit_s_; }

 private:
  // The set launch i of a batch of n reads: the copies in reverse, so the batch's last launch
  // writes copy 0 (whose outputs the harness verifies) and consecutive launches never share one.
  const Io& set_for(int64_t i) const {
    const auto c = static_cast<int64_t>(sets_.size());
    return sets_[static_cast<size_t>((n_ - 1 - i) % c)];
  }

  void setup_copies(int64_t n) {
    const int64_t bytes = std::max<int64_t>(tensors_.bytes(), 1);
    // Copies that together exceed 2x L2, so a copy is evicted before its next turn.
    int64_t wanted = (2 * ctx_.device->l2_bytes + bytes - 1) / bytes + 1;
    size_t free_b = 0, total_b = 0;
    ATTNPROF_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const int64_t by_memory = 1 + static_cast<int64_t>(free_b / 2) / bytes;  // use <= half of free
    wanted = std::min({wanted, n, int64_t{kMaxCopies}, by_memory});
    if (wanted < 2) return;
    try {
      sets_ = tensors_.replicate(static_cast<int>(wanted));
    } catch (const FaultError& e) {
      if (e.fault() != Fault::oom) throw;
      // No room for copies after all: plain batches over copy 0.
      sets_ = tensors_.replicate(1);
    }
    run_.bind(sets_);
  }

  void capture_graph(int64_t n) {
    cudaGraph_t graph = nullptr;
    ATTNPROF_CUDA(cudaStreamBeginCapture(ctx_.stream, cudaStreamCaptureModeThreadLocal));
    try {
      for (int64_t i = 0; i < n; ++i) run_.launch(*ctx_.launch_stream, set_for(i));
    } catch (...) {
      (void)cudaStreamEndCapture(ctx_.stream, &graph);
      if (graph) (void)cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      throw;
    }
    const cudaError_t e = cudaStreamEndCapture(ctx_.stream, &graph);
    if (e != cudaSuccess) {
      if (graph) (void)cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      throw std::runtime_error(
          fmt::format("graph timing: the launch cannot be captured in a CUDA graph ({}: {})",
                      cudaGetErrorName(e), cudaGetErrorString(e)));
    }
    const cudaError_t ie = cudaGraphInstantiate(&exec_, graph, 0);
    (void)cudaGraphDestroy(graph);
    ATTNPROF_CUDA(ie);
    ATTNPROF_CUDA(cudaGraphUpload(exec_, ctx_.stream));
    // One untimed replay: the first replay of a fresh graph pays setup costs.
    ATTNPROF_CUDA(cudaGraphLaunch(exec_, ctx_.stream));
    ATTNPROF_CUDA(cudaStreamSynchronize(ctx_.stream));
  }

  // Clock policy recover: the device idles long enough for a power-capped clock to come back.
  void idle_before_sample() const {
    const double gap = std::max(kRecoverMinS, kRecoverFactor * last_s_);
    std::this_thread::sleep_for(std::chrono::duration<double>(gap));
  }

  Sample take_events() {
    const cudaStream_t s = ctx_.stream;
    if (mode_ == TimingMode::cold)
      launch_read(ctx_.flush_buffer, ctx_.flush_bytes, ctx_.sink, 0, s);
    launch_spin_ns(spin_ns_, s);
    ATTNPROF_CUDA(cudaEventRecord(ctx_.spin_done, s));
    const auto h0 = Clock::now();
    ctx_.clock->start(s);
    ATTNPROF_CUDA(cudaEventRecord(ctx_.start, s));
    if (exec_) {
      ATTNPROF_CUDA(cudaGraphLaunch(exec_, s));
    } else {
      for (int64_t i = 0; i < n_; ++i) run_.launch(*ctx_.launch_stream, set_for(i));
    }
    ATTNPROF_CUDA(cudaEventRecord(ctx_.stop, s));
    ctx_.clock->stop(s);
    const double enqueue_s = seconds_since(h0);
    const cudaError_t q = cudaEventQuery(ctx_.spin_done);
    if (q != cudaErrorNotReady) ATTNPROF_CUDA(q);
    ATTNPROF_CUDA(cudaStreamSynchronize(s));

    Sample x;
    x.exposed = q == cudaSuccess;
    float ms = 0;
    ATTNPROF_CUDA(cudaEventElapsedTime(&ms, ctx_.start, ctx_.stop));
    x.seconds = static_cast<double>(ms) * 1e-3;
    x.mhz = ctx_.clock->mhz();
    // Next spin: twice the enqueue time plus a margin; doubled after an exposed sample.
    const auto target = static_cast<uint64_t>(2.0 * enqueue_s * 1e9) + kSpinMinNs;
    spin_ns_ = std::clamp<uint64_t>(std::max(target, x.exposed ? 2 * spin_ns_ : 0), kSpinMinNs,
                                    kSpinMaxNs);
    return x;
  }

  Sample take_wall() {
    const auto h0 = Clock::now();
    run_.launch(*ctx_.launch_stream, sets_.front());
    ATTNPROF_CUDA(cudaStreamSynchronize(ctx_.stream));
    Sample x;
    x.seconds = seconds_since(h0);
    return x;
  }

  TimerContext& ctx_;
  Run& run_;
  PointTensors& tensors_;
  const MeasureOptions& options_;
  TimingMode mode_;
  int64_t n_ = 1;
  std::vector<Io> sets_;  // copy 0 first; more while cold batches rotate
  cudaGraphExec_t exec_ = nullptr;
  uint64_t spin_ns_ = kSpinStartNs;
  double last_s_ = 0;   // the last sample's time
  int64_t taken_ = 0;   // samples taken, the probe included
  double audit_s_ = 0;  // seconds of take()'s poison, publish and scan
};

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

TimingResult measure_on_stream(TimerContext& ctx, Run& run, PointTensors& tensors,
                               const MeasureOptions& options) {
  const TimingMode mode = options.mode;
  Sampler sampler(ctx, run, tensors, options, mode);
  StoppingRule rule = options.rule;
  if (options.clock == ClockPolicy::recover) rule.timeout_s *= kRecoverTimeoutScale;
  const double resolution = mode == TimingMode::wall ? kWallResolutionS : kEventResolutionS;
  rule.timer_resolution_s = resolution;
  const double rated_mhz = ctx.device->clock_khz / 1e3;

  // Per kept sample, in order: its time per launch, SM clock and board power (0: unknown).
  SampleSeries samples;
  std::vector<double> clocks, watts;
  double measured_s = 0;
  int64_t n = 1, dropped = 0, settling = 0;
  bool probing = mode != TimingMode::wall;  // the first sample decides the batch size
  StopDecision decision;
  const auto t0 = Clock::now();
  while (true) {
    const Sample x = sampler.take();
    const double elapsed = seconds_since(t0);
    // A sample whose spin ended before the host finished enqueueing may hold launch overhead:
    // it is discarded and the next spin is longer (until the spin is at its cap).
    bool keep = !x.exposed || sampler.spin_at_max();
    if (keep && probing) {
      probing = false;
      if (options.launches_per_sample > 0) {
        n = options.launches_per_sample;
      } else if (x.seconds < kBatchBelowS) {
        n = std::clamp<int64_t>(
            static_cast<int64_t>(std::ceil(kBatchTargetS / std::max(x.seconds, 1e-7))), 2,
            kMaxBatch);
      }
      rule.timer_resolution_s = resolution / static_cast<double>(n);
      sampler.prepare_batch(n);
      // The probe was one plain launch: a sample only when it is what every later sample is.
      keep = n == 1 && mode != TimingMode::graph;
    }
    if (keep && !options.keep_throttled && x.mhz > 0 && x.mhz < kThrottleFraction * rated_mhz) {
      ++dropped;
    } else if (keep) {
      samples.add(x.seconds / static_cast<double>(n));
      measured_s += x.seconds;
      clocks.push_back(x.mhz);
      watts.push_back(x.watts);
    }
    if (samples.empty()) {
      if (elapsed >= rule.timeout_s) {
        decision = {true, true, StopReason::timeout,
                    fmt::format("no sample kept ({} throttled)", dropped)};
        break;
      }
      continue;
    }
    decision = should_stop(rule, samples, measured_s, elapsed);
    // Sustained: a median taken while a power-capped clock is still coming down would be the
    // recovered clock's, not the steady one's. The older half of the samples is dropped and
    // sampling goes on (the minimum time counts again) until the clock is flat or time is up.
    if (decision.stop && decision.why == StopReason::converged &&
        options.clock == ClockPolicy::sustained && clock_falling(clocks)) {
      const auto half = static_cast<std::ptrdiff_t>(samples.size() / 2);
      for (auto it = samples.in_order().begin(); it != samples.in_order().begin() + half; ++it)
        measured_s -= *it * static_cast<double>(n);
      samples.drop_oldest(static_cast<std::size_t>(half));
      clocks.erase(clocks.begin(), clocks.begin() + half);
      watts.erase(watts.begin(), watts.begin() + half);
      ++settling;
      continue;
    }
    if (decision.stop) break;
  }

  TimingResult t = to_timing(std::string(to_string(options.mode)), samples.stats(), decision);
  t.launches_per_sample = n;
  t.dropped_throttled = dropped;
  std::erase(clocks, 0.0);
  std::erase(watts, 0.0);
  t.clock_mhz = median_of(clocks);
  t.power_w = median_of(watts);
  t.clock_settling = settling;
  t.clock_policy = std::string(to_string(options.clock));
  t.copies = sampler.copies();
  t.audit_s = sampler.audit_seconds();
  return t;
}

}  // namespace attnprof::cuda
