#include "attnprof/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnprof {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

SampleStats summarize(const std::vector<double>& samples) {
  SampleStats s;
  s.samples = static_cast<int64_t>(samples.size());
  if (samples.empty()) return s;
  std::vector<double> v = samples;
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  s.min = v.front();
  s.max = v.back();
  s.median = percentile(v, 50);
  s.p5 = percentile(v, 5);
  s.p95 = percentile(v, 95);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(ss / (n - 1)) : 0;
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0;
  // The noise the stopping rule judges is the relative standard error of the median,
  // 1.2533 * sigma / sqrt(n) / median, with sigma estimated robustly from the median absolute
  // deviation (1.4826 * MAD) so that one preempted sample does not keep a point running.
  std::vector<double> dev(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) dev[i] = std::abs(v[i] - s.median);
  const double sigma = 1.4826 * percentile(dev, 50);
  s.rel_noise = (s.median > 0 && v.size() > 1) ? 1.2533 * sigma / std::sqrt(n) / s.median : 1.0;
  return s;
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
  }
  return "";
}

StopDecision should_stop(const StoppingRule& rule, const std::vector<double>& samples,
                         double measured_s, double elapsed_s) {
  const auto n = static_cast<int64_t>(samples.size());
  if (elapsed_s >= rule.timeout_s && n >= 1) {
    const SampleStats st = summarize(samples);
    const bool noisy = st.rel_noise > rule.max_noise;
    if (n < rule.min_samples) {
      return {true, true, StopReason::timeout,
              fmt::format("{} of the {} samples --min-samples asks for", n, rule.min_samples)};
    }
    return {true, noisy, StopReason::timeout, noisy ? noise_detail(st, rule) : ""};
  }
  if (n >= rule.max_samples) {
    const SampleStats st = summarize(samples);
    const bool noisy = st.rel_noise > rule.max_noise;
    return {true, noisy, StopReason::max_samples, noisy ? noise_detail(st, rule) : ""};
  }
  if (rule.over_limit_s > 0 && n >= 10) {
    // The third smallest is above the limit when at most two samples are at or under it. Called
    // after every sample: a scan that stops at the third sample under the limit (near the start
    // for a point that keeps sampling), no copy.
    int under = 0;
    for (double x : samples) {
      if (x <= rule.over_limit_s && ++under == 3) break;
    }
    if (under < 3) return {true, false, StopReason::over_limit, ""};
  }
  if (n < rule.min_samples || measured_s < rule.min_time_s) return {};
  const SampleStats st = summarize(samples);
  // The timer cannot resolve noise finer than its own resolution relative to the median.
  const double floor = st.median > 0 ? rule.timer_resolution_s / st.median : 0;
  if (st.rel_noise <= std::max(rule.max_noise, floor))
    return {true, false, StopReason::converged, ""};
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
