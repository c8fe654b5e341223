#include "attnprof/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <optional>

namespace attnprof {

double percentile_of_sorted(const std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return percentile_of_sorted(v, p);
}

SampleSeries::SampleSeries(const std::vector<double>& samples)
    : in_order_(samples), sorted_(samples) {
  std::sort(sorted_.begin(), sorted_.end());
}

void SampleSeries::add(double x) {
  in_order_.push_back(x);
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), x), x);
}

void SampleSeries::drop_oldest(std::size_t count) {
  count = std::min(count, in_order_.size());
  in_order_.erase(in_order_.begin(), in_order_.begin() + static_cast<std::ptrdiff_t>(count));
  sorted_ = in_order_;  // rare (the clock's settling): sorted again once
  std::sort(sorted_.begin(), sorted_.end());
}

SampleStats SampleSeries::stats() const {
  SampleStats s;
  const std::vector<double>& v = sorted_;
  s.samples = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  const double n = static_cast<double>(v.size());
  s.min = v.front();
  s.max = v.back();
  s.median = percentile_of_sorted(v, 50);
  s.p5 = percentile_of_sorted(v, 5);
  s.p95 = percentile_of_sorted(v, 95);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(ss / (n - 1)) : 0;
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0;
  // The noise the stopping rule judges is the relative standard error of the median,
  // 1.2533 * sigma / sqrt(n) / median, with sigma estimated robustly from the median absolute
  // deviation (1.4826 * MAD) so that one preempted sample does not keep a point running. The
  // deviations of sorted samples from their median come sorted by walking out from the median,
  // merging the two sides: no sort.
  std::vector<double> dev;
  dev.reserve(v.size());
  auto right = std::lower_bound(v.begin(), v.end(), s.median);
  auto left = right;
  while (left != v.begin() || right != v.end()) {
    const bool take_left =
        right == v.end() || (left != v.begin() && s.median - *(left - 1) <= *right - s.median);
    dev.push_back(take_left ? std::abs(*--left - s.median) : std::abs(*right++ - s.median));
  }
  const double sigma = 1.4826 * percentile_of_sorted(dev, 50);
  s.rel_noise = (s.median > 0 && v.size() > 1) ? 1.2533 * sigma / std::sqrt(n) / s.median : 1.0;
  return s;
}

SampleStats summarize(const std::vector<double>& samples) {
  return SampleSeries(samples).stats();
}

namespace {
std::string noise_detail(const SampleStats& st, const StoppingRule& rule) {
  return fmt::format("the median's noise {:.2g}% above the bound {:.2g}%", 100 * st.rel_noise,
                     100 * rule.max_noise);
}
}  // namespace

std::string_view to_string(StopReason r) {
  switch (r) {
    case StopReason::none:
      return "";
    case StopReason::converged:
      return "converged";
    case StopReason::timeout:
      return "timeout";
    case StopReason::max_samples:
      return "max_samples";
    case StopReason::over_limit:
      return "over_limit";
    case StopReason::over_memory_limit:
      return "over_memory_limit";
  }
  return "";
}

namespace {

// What a stopping criterion sees of a point after each sample.
struct Sampled {
  const StoppingRule& rule;
  const SampleSeries& samples;
  double measured_s, elapsed_s;
  int64_t n() const { return static_cast<int64_t>(samples.size()); }
};
using Criterion = std::optional<StopDecision> (*)(const Sampled&);

// A stop at a limit: noisy where the median's noise is above the bound.
StopDecision at_limit(const Sampled& p, StopReason why) {
  const SampleStats st = p.samples.stats();
  const bool noisy = st.rel_noise > p.rule.max_noise;
  return {true, noisy, why, noisy ? noise_detail(st, p.rule) : ""};
}

// The point's time ran out (noisy, too, with fewer samples than --min-samples asks for).
std::optional<StopDecision> out_of_time(const Sampled& p) {
  if (p.elapsed_s < p.rule.timeout_s || p.n() < 1) return std::nullopt;
  if (p.n() < p.rule.min_samples) {
    return StopDecision{
        true, true, StopReason::timeout,
        fmt::format("{} of the {} samples --min-samples asks for", p.n(), p.rule.min_samples)};
  }
  return at_limit(p, StopReason::timeout);
}

// The sample cap.
std::optional<StopDecision> at_the_cap(const Sampled& p) {
  if (p.n() < p.rule.max_samples) return std::nullopt;
  return at_limit(p, StopReason::max_samples);
}

// Tune's p95 limit cannot be met: the third smallest of ten or more samples is above it (at most
// two at or under it).
std::optional<StopDecision> over_the_limit(const Sampled& p) {
  if (p.rule.over_limit_s > 0 && p.n() >= 10 && p.samples.sorted()[2] > p.rule.over_limit_s)
    return StopDecision{true, false, StopReason::over_limit, ""};
  return std::nullopt;
}

// Enough samples and measured time, and the median's noise under the bound (or under what the
// timer's resolution allows relative to the median).
std::optional<StopDecision> converged(const Sampled& p) {
  if (p.n() < p.rule.min_samples || p.measured_s < p.rule.min_time_s) return std::nullopt;
  const SampleStats st = p.samples.stats();
  const double floor = st.median > 0 ? p.rule.timer_resolution_s / st.median : 0;
  if (st.rel_noise <= std::max(p.rule.max_noise, floor))
    return StopDecision{true, false, StopReason::converged, ""};
  return std::nullopt;
}

// In order: the limits (time, the sample cap, tune's p95 limit), then convergence. (The CUDA
// timer adds the clock's settling after a convergence: cuda_timer.cpp.)
constexpr std::array<Criterion, 4> kCriteria = {out_of_time, at_the_cap, over_the_limit, converged};

}  // namespace

StopDecision should_stop(const StoppingRule& rule, const SampleSeries& samples, double measured_s,
                         double elapsed_s) {
  const Sampled point{rule, samples, measured_s, elapsed_s};
  for (const Criterion criterion : kCriteria)
    if (std::optional<StopDecision> d = criterion(point)) return *d;
  return {};
}

bool clock_falling(const std::vector<double>& clocks, double tolerance) {
  const size_t n = clocks.size(), q = n / 4;
  if (n < 8 || std::find(clocks.begin(), clocks.end(), 0.0) != clocks.end()) return false;
  double first = 0, last = 0;
  for (size_t i = 0; i < q; ++i) {
    first += clocks[i];
    last += clocks[n - q + i];
  }
  return last < first * (1 - tolerance);
}

TimingResult to_timing(std::string mode, const SampleStats& st, const StopDecision& decision) {
  TimingResult t;
  t.mode = std::move(mode);
  t.median_us = st.median * 1e6;
  t.mean_us = st.mean * 1e6;
  t.min_us = st.min * 1e6;
  t.p5_us = st.p5 * 1e6;
  t.p95_us = st.p95 * 1e6;
  t.cv = st.cv;
  t.rel_noise = st.rel_noise;
  t.samples = st.samples;
  t.noisy = decision.noisy;
  const std::string why(to_string(decision.why));
  t.stop_reason = decision.detail.empty() ? why : why + ": " + decision.detail;
  return t;
}

}  // namespace attnprof
