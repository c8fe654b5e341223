// Sample statistics and the adaptive stopping rule. Pure functions of the samples; the timers
// that produce samples live in src/measure/ and know nothing about when to stop.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/result.hpp"

namespace attnprof {

struct SampleStats {
  int64_t samples = 0;
  double median = 0, mean = 0, min = 0, max = 0, p5 = 0, p95 = 0;
  double stddev = 0;
  double cv = 0;         // stddev / mean
  double rel_noise = 0;  // the noise the stopping rule judges: relative std. error of the median
};

// Percentiles by linear interpolation between order statistics (p in [0, 100]).
double percentile(std::vector<double> values, double p);
// The same of values already sorted ascending (no copy, no sort).
double percentile_of_sorted(const std::vector<double>& sorted, double p);

// The samples of one point as they come: in the order taken (the clock's settling drops the older
// ones) and sorted (the order statistics), kept sorted as each arrives, so a decision after each
// sample costs a pass over them, not a sort.
class SampleSeries {
 public:
  SampleSeries() = default;
  SampleSeries(const std::vector<double>& samples);  // NOLINT: a vector is a series
  void add(double x);
  // Drops the `count` oldest samples.
  void drop_oldest(std::size_t count);
  std::size_t size() const { return in_order_.size(); }
  bool empty() const { return in_order_.empty(); }
  const std::vector<double>& in_order() const { return in_order_; }
  const std::vector<double>& sorted() const { return sorted_; }
  SampleStats stats() const;

 private:
  std::vector<double> in_order_, sorted_;
};

SampleStats summarize(const std::vector<double>& samples);

// When to stop sampling a point. Defaults (docs/method.md, "When to stop"): at least 10 samples and
// 0.1 s of measured time, then stop once the relative noise is under max(max_noise,
// resolution/median), or at the timeout (the row is then flagged noisy).
struct StoppingRule {
  int64_t min_samples = 10;
  int64_t max_samples = 100000;
  double max_noise = 0.005;       // 0.5%: below run-to-run drift on a quiet machine
  double min_time_s = 0.1;        // measured (timed-region) seconds before stopping may happen
  double timeout_s = 2.0;         // wall seconds for the whole measurement of one point
  double timer_resolution_s = 0;  // the timer's resolution; sets the floor of reachable noise
  // > 0 (tune's p95 limit, seconds): stop after 10 samples once the third smallest is above it.
  // Then the median is above it with 94.5% probability (Binomial(10, 1/2) <= 2), and so is the
  // p95: more samples cannot bring the point under the limit.
  double over_limit_s = 0;
};

// Why sampling stopped; the row's stop_reason starts with its to_string ("converged", ...).
enum class StopReason {
  none,         // not stopped ("")
  converged,    // the noise under the bound
  timeout,      // the point's time ran out
  max_samples,  // the sample cap
  over_limit,   // tune's p95 limit cannot be met (StoppingRule::over_limit_s)
  // The point's peak memory is above tune's limit: sampled at most 10 times (the runner replaces
  // the timer's reason with this one).
  over_memory_limit,
};
std::string_view to_string(StopReason r);

struct StopDecision {
  bool stop = false;
  bool noisy = false;  // stopped by timeout or max_samples with noise above the bound
  StopReason why = StopReason::none;
  // Why a noisy stop is noisy: too few samples for --min-samples, or the noise above the bound.
  std::string detail;
};

// Decide after each sample. `measured_s` is the sum of the timed samples; `elapsed_s` the wall
// time spent measuring this point so far.
StopDecision should_stop(const StoppingRule& rule, const SampleSeries& samples, double measured_s,
                         double elapsed_s);

// Whether the SM clock is still falling over a point's samples (`clocks`, one per sample in the
// order taken, MHz): the mean of the last quarter more than `tolerance` (relative) under the mean
// of the first. A compute-bound kernel under a power cap starts at a recovered clock and slows
// for a few hundred milliseconds; the sustained policy samples on until its clock has settled.
// Fewer than 8 clocks, or any unknown (0): false.
bool clock_falling(const std::vector<double>& clocks, double tolerance = 0.01);

// The timing of a row from its samples' statistics (seconds) and the stop decision; times in
// microseconds. Engine-specific fields (launches per sample, clocks) are the caller's.
TimingResult to_timing(std::string mode, const SampleStats& stats, const StopDecision& decision);

}  // namespace attnprof
