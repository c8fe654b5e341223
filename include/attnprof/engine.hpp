// An engine is how points are executed and measured on one kind of device: the point's tensors
// (allocated, filled and read back by the harness, never by providers), its streams, its timer
// (measurement strategy), its kernel tracer and its part of the environment fingerprint.
// The CPU engine lives in src/measure/cpu_engine.cpp; the CUDA engine in src/measure/cuda/.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/device.hpp"
#include "attnprof/env.hpp"
#include "attnprof/inputs.hpp"
#include "attnprof/io.hpp"
#include "attnprof/memory.hpp"
#include "attnprof/peaks.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/result.hpp"
#include "attnprof/stats.hpp"
#include "attnprof/verify.hpp"

namespace attnprof {

// How samples are spaced (docs/method.md, "Clocks"). Compute-bound kernels under a power cap run
// at a lower SM clock the longer they are sampled back to back.
enum class ClockPolicy {
  sustained,  // samples back to back: what a loaded, steady pipeline sees
  recover,    // the device idles between samples long enough for the clock to come back: what
              // one launch in a pipeline with gaps sees (Nsight Compute's isolated launches)
};
std::string_view to_string(ClockPolicy p);
std::optional<ClockPolicy> parse_clock_policy(std::string_view s);

// How a CUDA sample is timed (docs/method.md, "Timing"): cold, L2 evicted before each sample and
// batches of short launches rotating through copies of the tensors; hot, back to back; graph, the
// batch captured in a CUDA graph; wall, host wall time around a synchronized batch. A row writes
// it as to_string (the CPU engine's rows say "cpu-wall").
enum class TimingMode { cold, hot, graph, wall };
inline constexpr std::string_view kTimingModeChoices = "cold, hot, graph, wall";
std::string_view to_string(TimingMode m);
std::optional<TimingMode> parse_timing_mode(std::string_view s);

struct MeasureOptions {
  // CUDA's timing (cold by default). The CPU engine always measures host wall time.
  TimingMode mode = TimingMode::cold;
  ClockPolicy clock = ClockPolicy::sustained;
  StoppingRule rule{};
  // CUDA, cold: a batch of short launches rotates through copies of the tensors (false: every
  // launch of a batch reads copy 0, whose inputs the previous launch left in L2). Tests compare.
  bool rotate = true;
  // CUDA: 0 lets the timer batch launches under ~100 us; N > 0 forces N launches per sample.
  int64_t launches_per_sample = 0;
  // CUDA: keep samples taken below 75% of the rated SM clock (dropped as throttled otherwise).
  // For the ceilings (peaks.cpp), whose steady state may be power-capped below that.
  bool keep_throttled = false;
};

// What one extra, untimed launch ran (Engine::trace_kernels).
struct KernelTrace {
  std::vector<KernelRecord> kernels;
  std::string note;              // why the list is empty or what it lacks ("cpu: no kernels")
  bool audited = false;          // the streams the kernels ran on were seen
  int64_t off_stream = 0;        // kernels on a stream the timed stream does not wait for
  std::string off_stream_first;  // the first of them, by name
};

// What PointTensors::audit() found: the inputs changed ("q", "k (timing copy 3)") and the tensors
// written past their end ("o").
struct TensorAudit {
  std::vector<std::string> modified;
  std::vector<std::string> overrun;
  bool clean() const { return modified.empty() && overrun.empty(); }
};

// A point's tensors on an engine's device (io.hpp), allocated through the engine's tracker, the
// inputs filled from the generator. Copies made for cold timing are untracked: a measurement
// device, not the point's footprint.
class PointTensors {
 public:
  virtual ~PointTensors() = default;
  virtual const Io& io() const = 0;  // copy 0
  // NaN into every tensor the launch writes (copy 0); synchronous.
  virtual void poison_outputs() = 0;
  // Waits until the work queued on the device (a launch's) is done, so that a synchronous audit
  // after it times itself and not the launch. Synchronous engines have nothing to wait for.
  virtual void finish() {}
  // Copy 0's launch outputs as host floats; synchronous.
  virtual HostOutputs read_outputs() = 0;
  // Only what a host check of `rows` (O, LSE and dQ rows) and `groups` (whole (batch, KV head)
  // groups of dK and dV, flat b * kv_heads + kv_head) reads: a partial HostOutputs where the
  // tensors are large and far (device memory); read_outputs() by default. Synchronous.
  virtual HostOutputs read_rows(const std::vector<RowIndex>& rows,
                                const std::vector<int64_t>& groups) {
    (void)rows;
    (void)groups;
    return read_outputs();
  }
  // Tracked bytes of copy 0.
  virtual int64_t bytes() const = 0;
  // Holds `copies` sets in all: copy 0 and copies of it whose launch inputs (the generated
  // inputs, and in mode bwd the forward state prepare() wrote) have the same values; returns
  // every set held, copy 0 first, possibly fewer than asked (memory). replicate(1) frees them,
  // after auditing them (audit() reports what it found).
  virtual std::vector<Io> replicate(int copies) = 0;

  // The harness's audits (docs/method.md, "What a provider cannot fake"). Synchronous.
  // What the launches did to memory they may not write: inputs (input_ranges, in every set held
  // and in the copies freed since the last audit) whose digest differs from what the harness
  // wrote, and tensors whose guard bytes past the end changed.
  virtual TensorAudit audit() = 0;
  // From here on O and the LSE are inputs too (mode bwd: the forward state prepare() wrote), as
  // they are now. Other modes: nothing.
  virtual void seal_inputs() = 0;
  // Copy 0's launch outputs that still hold poison in some elements, as "o: 512 of 4096
  // elements"; empty when every element was written.
  virtual std::vector<std::string> unwritten() = 0;
  // New values from `fill` for the generated inputs of copy 0 (Q, K, V, dO, the sink logits; not
  // the block table or the lengths), taken as what the harness wrote. Not in mode bwd (the
  // forward state prepare() wrote would no longer match its inputs).
  virtual void refill_inputs(const InputFill& fill) = 0;
};

// The audits every engine and the point lifecycle share (docs/method.md, "What a provider cannot
// fake"); each throws the FaultError that names what the provider did. Memory the launches may
// not write: the guards past every tensor's end (out_of_bounds), then the inputs
// (modified_inputs); `after` says when it was seen ("the timed launches").
void require_untouched(PointTensors& tensors, std::string_view after);
// Every element of the outputs was written by `launch` (they were poisoned before it): else
// unwritten.
void require_written(PointTensors& tensors, std::string_view launch);

// The point tensors of a run that holds its own operands (the ceilings' GEMMs, the engine's
// self-tests): none, so the timer has nothing to rotate.
class NoTensors final : public PointTensors {
 public:
  const Io& io() const override { return io_; }
  void poison_outputs() override {}
  HostOutputs read_outputs() override { return {}; }
  int64_t bytes() const override { return 0; }
  std::vector<Io> replicate(int) override { return {io_}; }
  TensorAudit audit() override { return {}; }
  void seal_inputs() override {}
  std::vector<std::string> unwritten() override { return {}; }
  void refill_inputs(const InputFill&) override {}

 private:
  Io io_;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual DeviceKind kind() const = 0;
  // Whether the engine can run here; the reason in words when not ("no CUDA driver ...").
  virtual Availability availability() const = 0;
  virtual const Device& device() const = 0;
  virtual Stream& stream() = 0;
  // The tensors of `spec` (with a log-sum-exp when `lse`), inputs filled, outputs poisoned.
  // Throws OutOfMemory when they do not fit.
  virtual std::unique_ptr<PointTensors> allocate(const Spec& spec, bool lse,
                                                 const InputFill& fill) = 0;
  // Untimed warm-up launches are the caller's job; measure() only samples. On return the run is
  // bound to copy 0 again and copy 0 holds the outputs of the last timed launch.
  virtual TimingResult measure(Run& run, PointTensors& tensors, const MeasureOptions& options) = 0;
  // Copy 0's launch outputs against the fp64 reference of `fill`'s inputs (verify.hpp), for
  // judge_rows. The CPU engine checks host copies on the host (check_on_host); the CUDA engine
  // checks every row on the device and, with `cross_check`, a sample of rows against the host's
  // fp64 too (a disagreement throws FaultError harness: attnprof's reference is wrong).
  virtual RowChecks check_outputs(const Spec& spec, PointTensors& tensors, const InputFill& fill,
                                  const VerifyOptions& options, bool cross_check) = 0;
  // A cheap check of copy 0's outputs against the fp64 reference of `fill`'s inputs: a sample of
  // rows on the host (the CUDA engine reads back only those rows), for a check whose failure is
  // wholesale when it fails (the outputs of new inputs, after the timed runs).
  virtual RowChecks check_sample(const Spec& spec, PointTensors& tensors,
                                 const InputFill& fill) = 0;
  // The kernels one extra, untimed launch runs, and the streams they ran on. `own_streams`: the
  // provider orders streams of its own with the timed stream (ProviderTraits::own_streams), so
  // kernels elsewhere count as off the stream only when they run outside the launch's window.
  virtual KernelTrace trace_kernels(Run& run, PointTensors& tensors, bool own_streams) = 0;
  // After a failure: why this process can no longer trust the device (a sticky CUDA error
  // poisoned the context), in words; "" when it can.
  virtual std::string poisoned() { return {}; }
  // Engine-specific fingerprint entries (driver, runtime, library versions, ...).
  virtual Fingerprint fingerprint() const = 0;
  // The tracker every allocation of a point on this engine is reported to.
  virtual MemoryTracker* tracker() = 0;
  // The key this device's measured ceilings are cached under (peaks.hpp): the device and what
  // moves its figures (driver, runtime and BLAS versions; the CPU engine's threads).
  virtual std::string peaks_key() const = 0;
  // Measures the ceilings (a few seconds, every figure warmed up and sampled by this engine's
  // timer); `progress` hears one line per figure. Throws when the device cannot run them.
  virtual Peaks measure_peaks(const std::function<void(const std::string&)>& progress) = 0;
};

std::unique_ptr<Engine> make_cpu_engine(int threads);
// Null where CUDA is not built; otherwise an engine that may report itself unavailable.
std::unique_ptr<Engine> make_cuda_engine(int device_index);

}  // namespace attnprof
