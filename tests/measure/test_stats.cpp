#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "attnprof/stats.hpp"

namespace attnprof {
namespace {

TEST(Stats, SummaryOfKnownSamples) {
  const SampleStats s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.p5, 1.2);
  EXPECT_DOUBLE_EQ(s.p95, 4.8);
  EXPECT_NEAR(s.stddev, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(s.cv, std::sqrt(2.5) / 3, 1e-12);
}

// The series kept sorted as samples arrive gives what sorting them all gives, the median's
// noise (MAD from the deviations walked out from the median) included; dropping the oldest keeps
// the two orders together.
TEST(Stats, ASeriesKeptAsSamplesArriveMatchesTheSortedSummary) {
  std::mt19937 gen(7);
  std::lognormal_distribution<double> noise(0, 0.05);
  std::vector<double> all;
  SampleSeries series;
  for (int i = 0; i < 301; ++i) {
    const double x = (i % 37 == 0 ? 3.0 : 1.0) * noise(gen);  // a few preempted samples
    all.push_back(x);
    series.add(x);
    if (i % 50 == 9) {
      const SampleStats a = series.stats();
      std::vector<double> sorted = all;
      std::sort(sorted.begin(), sorted.end());
      std::vector<double> dev;
      const double median = percentile(sorted, 50);
      for (double v : sorted) dev.push_back(std::abs(v - median));
      const double sigma = 1.4826 * percentile(dev, 50);
      EXPECT_DOUBLE_EQ(a.median, median);
      EXPECT_DOUBLE_EQ(a.p95, percentile(sorted, 95));
      EXPECT_DOUBLE_EQ(a.rel_noise, 1.2533 * sigma / std::sqrt(double(all.size())) / median);
      EXPECT_EQ(series.sorted(), sorted);
    }
  }
  series.drop_oldest(150);
  const std::vector<double> newer(all.begin() + 150, all.end());
  EXPECT_EQ(series.in_order(), newer);
  std::vector<double> sorted = newer;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(series.sorted(), sorted);
  EXPECT_DOUBLE_EQ(series.stats().median, summarize(newer).median);
  EXPECT_DOUBLE_EQ(series.stats().rel_noise, summarize(newer).rel_noise);
}

TEST(Stats, NeedsMinimumSamplesAndTime) {
  StoppingRule r;
  std::vector<double> same(9, 1.0);
  EXPECT_FALSE(should_stop(r, same, 9.0, 9.0 / 100).stop);  // 9 < 10 samples
  same.push_back(1.0);
  EXPECT_TRUE(should_stop(r, same, 10.0, 0.1).stop);
  std::vector<double> tiny(20, 1e-3);
  EXPECT_FALSE(should_stop(r, tiny, 0.02, 0.02).stop);  // 20 ms < 0.1 s measured
}

TEST(Stats, NoisySamplesRunUntilTimeoutAndAreFlagged) {
  StoppingRule r;
  r.timeout_s = 1.0;
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> d(0.5, 1.5);
  std::vector<double> v;
  for (int i = 0; i < 12; ++i) v.push_back(d(rng) * 0.1);
  const double sum = 1.2;
  EXPECT_FALSE(should_stop(r, v, sum, 0.9).stop);
  const StopDecision at_timeout = should_stop(r, v, sum, 1.0);
  EXPECT_TRUE(at_timeout.stop);
  EXPECT_TRUE(at_timeout.noisy);
  EXPECT_EQ(at_timeout.why, StopReason::timeout);
  EXPECT_NE(at_timeout.detail.find("noise"), std::string::npos) << at_timeout.detail;
}

// Issue 40: a point stopped at its time limit before --min-samples is noisy for that reason, and
// says so, not that its noise was above the bound.
TEST(Stats, ATimeoutBeforeMinSamplesSaysSo) {
  StoppingRule r;
  r.min_samples = 10;
  r.timeout_s = 1.0;
  const std::vector<double> v = {0.1, 0.1, 0.1};  // no noise at all
  const StopDecision d = should_stop(r, v, 0.3, 1.0);
  EXPECT_TRUE(d.stop);
  EXPECT_TRUE(d.noisy);
  EXPECT_EQ(d.detail, "3 of the 10 samples --min-samples asks for");
  EXPECT_EQ(to_timing("cpu-wall", summarize(v), d).stop_reason,
            "timeout: 3 of the 10 samples --min-samples asks for");
}

TEST(Stats, NoiseConvergesWithMoreSamples) {
  StoppingRule r;
  r.timeout_s = 1e9;
  std::mt19937 rng(7);
  std::normal_distribution<double> d(1e-3, 2e-5);  // 2% cv
  std::vector<double> v;
  double sum = 0;
  StopDecision dec;
  while (!(dec = should_stop(r, v, sum, sum)).stop) {
    v.push_back(d(rng));
    sum += v.back();
  }
  EXPECT_EQ(dec.why, StopReason::converged);
  EXPECT_FALSE(dec.noisy);
  // 0.5% on the median with 2% cv needs about (1.25 * 2 / 0.5)^2 = 25 samples; min time 0.1 s
  // at 1 ms per sample makes it 100.
  EXPECT_GE(v.size(), 100u);
  EXPECT_LT(v.size(), 120u);
}

TEST(Stats, TimerResolutionSetsTheNoiseFloor) {
  StoppingRule r;
  r.timer_resolution_s = 1e-6;
  r.min_time_s = 0;
  // 2 us samples jittering by a timer tick: noise ~ 1e-6/2e-6 is as good as it gets.
  std::vector<double> v;
  for (int i = 0; i < 10; ++i) v.push_back(i % 2 ? 2e-6 : 3e-6);
  EXPECT_TRUE(should_stop(r, v, 2.5e-5, 2.5e-5).stop);
}

// Tune's candidates far over the p95 limit stop after 10 samples; under it, or straddling it,
// they sample as long as the rule says.
TEST(Stats, OverTheLimitStopsAfterTenSamples) {
  StoppingRule r;
  r.min_samples = 59;
  r.over_limit_s = 1e-3;
  std::vector<double> over(9, 2e-3);
  EXPECT_FALSE(should_stop(r, over, 0.018, 0.018).stop);  // 9: too few to know
  over.push_back(2e-3);
  const StopDecision d = should_stop(r, over, 0.02, 0.02);
  EXPECT_TRUE(d.stop);
  EXPECT_FALSE(d.noisy);
  EXPECT_EQ(d.why, StopReason::over_limit);
  // Three samples under the limit: the median may be under it; keep sampling.
  std::vector<double> straddle(10, 2e-3);
  straddle[0] = straddle[4] = straddle[7] = 0.5e-3;
  EXPECT_FALSE(should_stop(r, straddle, 0.02, 0.02).stop);
  std::vector<double> under(10, 0.5e-3);
  EXPECT_FALSE(should_stop(r, under, 0.005, 0.005).stop);
}

}  // namespace
// The sustained policy's settling rule: a clock coming down by more than 1% between the first
// and last quarter of the samples is still falling; flat, noisy-flat, rising, few or unknown
// clocks are not.
TEST(Stats, ClockFallingOnlyWhenTheLastQuarterIsBelowTheFirst) {
  std::vector<double> falling;
  for (int i = 0; i < 40; ++i) falling.push_back(1980 - 10.0 * i);  // 1980 .. 1590 MHz
  EXPECT_TRUE(clock_falling(falling));
  const std::vector<double> flat(40, 1755.0);
  EXPECT_FALSE(clock_falling(flat));
  std::vector<double> jitter;
  for (int i = 0; i < 40; ++i) jitter.push_back(i % 2 ? 1760.0 : 1750.0);
  EXPECT_FALSE(clock_falling(jitter));
  std::vector<double> rising(falling.rbegin(), falling.rend());
  EXPECT_FALSE(clock_falling(rising));
  EXPECT_FALSE(clock_falling({1980, 1900, 1800, 1700, 1600, 1500, 1400}));  // 7 < 8
  std::vector<double> unknown = falling;
  unknown[5] = 0;
  EXPECT_FALSE(clock_falling(unknown));
  // 0.5% down: under the 1% tolerance, over a 0.25% one.
  std::vector<double> slight(20, 1800.0);
  for (int i = 15; i < 20; ++i) slight[size_t(i)] = 1791.0;
  EXPECT_FALSE(clock_falling(slight));
  EXPECT_TRUE(clock_falling(slight, 0.0025));
}

}  // namespace attnprof
