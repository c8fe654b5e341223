// Noise-aware comparison: the verdict rule on its own, then two synthetic runs whose samples are
// drawn with a known noise, joined and judged.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "attnprof/compare.hpp"
#include "attnprof/stats.hpp"
#include "report/fixtures.hpp"

namespace attnprof {
namespace {

TEST(Compare, VerdictNeedsBothSignificanceAndTheThreshold) {
  const CompareOptions o;  // 5%, 2 standard errors
  EXPECT_EQ(judge(1.10, 0.005, 0.005, o), Verdict::slower);
  EXPECT_EQ(judge(0.90, 0.005, 0.005, o), Verdict::faster);
  // Significant but under the threshold: the same, for the purpose of the comparison.
  EXPECT_EQ(judge(1.02, 0.001, 0.001, o), Verdict::same);
  // Under the threshold and quiet enough that a 5% change would have shown.
  EXPECT_EQ(judge(1.01, 0.01, 0.01, o), Verdict::same);
  // Over the threshold but inside the noise: cannot tell.
  EXPECT_EQ(judge(1.10, 0.05, 0.05, o), Verdict::ambiguous);
  // Under the threshold, but the noise band is wider than the threshold: cannot tell either.
  EXPECT_EQ(judge(1.01, 0.03, 0.03, o), Verdict::ambiguous);
  // Unknown noise (one sample).
  EXPECT_EQ(judge(1.5, std::numeric_limits<double>::infinity(), 0.01, o), Verdict::ambiguous);
  EXPECT_EQ(judge(0.0, 0.01, 0.01, o), Verdict::ambiguous);
  CompareOptions strict;
  strict.threshold = 0.01;
  EXPECT_EQ(judge(1.02, 0.001, 0.001, strict), Verdict::slower);
}

TEST(Compare, MedianNoiseUsesTheRobustNoiseThenTheStandardDeviation) {
  TimingResult t;
  t.samples = 100;
  t.rel_noise = 0.004;
  t.cv = 6.0;  // one huge outlier: the median's noise must not follow it
  EXPECT_DOUBLE_EQ(median_noise(t), 0.004);
  t.rel_noise = 0;  // identical samples but a few
  t.cv = 0.1;
  EXPECT_NEAR(median_noise(t), 1.2533 * 0.1 / 10, 1e-12);
  t.samples = 1;
  EXPECT_TRUE(std::isinf(median_noise(t)));
}

// A passed row whose timing summarizes `n` samples drawn around `median_us` with relative
// standard deviation `noise`.
Result measured(const std::string& provider, int64_t seq, double median_us, double noise, int n,
                std::mt19937_64& rng) {
  std::normal_distribution<double> d(median_us, median_us * noise);
  std::vector<double> samples;
  for (int i = 0; i < n; ++i) samples.push_back(d(rng));
  const SampleStats s = summarize(samples);
  Result r;
  r.provider = provider;
  r.status = Status::passed;
  r.spec = test::make_spec(1, 8, 8, seq, seq, 64, DType::fp16, {}, Mode::fwd);
  r.timing = test::make_timing("cold", s.median, s.p95, s.samples, false);
  r.timing.cv = s.cv;
  r.timing.rel_noise = s.rel_noise;
  return r;
}

TEST(Compare, SyntheticRunsWithKnownNoiseAreJudgedRight) {
  std::mt19937_64 rng(7);
  std::vector<Result> a, b;
  // Quiet rows (1% noise, 200 samples: ~0.09% standard error of the median).
  a.push_back(measured("p.same", 1024, 100, 0.01, 200, rng));
  b.push_back(measured("p.same", 1024, 100.5, 0.01, 200, rng));
  a.push_back(measured("p.slow", 1024, 100, 0.01, 200, rng));
  b.push_back(measured("p.slow", 1024, 112, 0.01, 200, rng));
  a.push_back(measured("p.fast", 1024, 100, 0.01, 200, rng));
  b.push_back(measured("p.fast", 1024, 80, 0.01, 200, rng));
  // Very noisy rows (40% noise, 10 samples): even 10% is not resolvable.
  a.push_back(measured("p.noisy", 1024, 100, 0.4, 10, rng));
  b.push_back(measured("p.noisy", 1024, 110, 0.4, 10, rng));

  const Comparison c = compare_runs(a, b, CompareOptions{});
  ASSERT_EQ(c.rows.size(), 4u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::same);
  EXPECT_EQ(c.rows[1].verdict, Verdict::slower);
  EXPECT_EQ(c.rows[2].verdict, Verdict::faster);
  EXPECT_EQ(c.rows[3].verdict, Verdict::ambiguous);
  EXPECT_NEAR(c.rows[1].ratio, 1.12, 0.01);
  EXPECT_TRUE(c.has_regression());
  const std::string text = format_comparison(c, "a.jsonl", "b.jsonl", CompareOptions{});
  EXPECT_NE(text.find("4 points compared: 1 FASTER, 1 SLOWER, 1 SAME, 1 AMBIGUOUS"),
            std::string::npos)
      << text;
}

// Points timed at different SM clocks are listed, with both clocks; equal clocks and rows
// without one (CPU rows) are not.
TEST(Compare, PointsAtDifferentClocksAreNamed) {
  std::mt19937_64 rng(5);
  Result a1 = measured("p.gemm", 1024, 100, 0.01, 100, rng);
  Result b1 = measured("p.gemm", 1024, 106, 0.01, 100, rng);
  a1.timing.clock_mhz = 1862;
  b1.timing.clock_mhz = 1760;
  Result a2 = measured("p.copy", 1024, 100, 0.01, 100, rng);
  Result b2 = measured("p.copy", 1024, 100, 0.01, 100, rng);
  a2.timing.clock_mhz = b2.timing.clock_mhz = 1800;
  Result a3 = measured("p.cpu", 1024, 100, 0.01, 100, rng);
  Result b3 = measured("p.cpu", 1024, 100, 0.01, 100, rng);
  a3.timing.clock_mhz = 0;
  b3.timing.clock_mhz = 0;
  const Comparison c = compare_runs({a1, a2, a3}, {b1, b2, b3}, CompareOptions{});
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_NEAR(c.rows[0].clock_ratio, 1760.0 / 1862.0, 1e-12);
  EXPECT_DOUBLE_EQ(c.rows[1].clock_ratio, 1.0);
  EXPECT_EQ(c.rows[2].clock_ratio, 0.0);
  const std::string text = format_comparison(c, "a", "b", CompareOptions{});
  EXPECT_NE(text.find("1 points ran at SM clocks 2.00% or more apart"), std::string::npos) << text;
  EXPECT_NE(text.find("p.gemm B1 H8 N1024 D64 fp16 none fwd: B/A 1.06 with the SM clock at "
                      "1862 -> 1760 MHz (-5.48%)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("p.copy B1 H8 N1024 D64 fp16 none fwd: B/A"), std::string::npos) << text;
  EXPECT_EQ(text.find("p.cpu B1 H8 N1024 D64 fp16 none fwd: B/A"), std::string::npos) << text;
}

TEST(Compare, StatusChangesUnmatchedPointsAndEnvironments) {
  std::mt19937_64 rng(11);
  Result ok = measured("p.x", 512, 100, 0.01, 100, rng);
  ok.env = {{"git_commit", "aaa"}, {"device", "NVIDIA H200"}};
  Result broke = ok;
  broke.status = Status::failed;
  broke.reason = "worker killed by signal 11 (SIGSEGV)";
  broke.timing = {};
  broke.env["git_commit"] = "bbb";
  Result only_a = measured("p.gone", 512, 50, 0.01, 100, rng);
  Result only_b = measured("p.new", 512, 50, 0.01, 100, rng);
  Result hot = measured("p.mode", 512, 50, 0.01, 100, rng);
  Result cold = hot;
  hot.timing.mode = "hot";

  const Comparison c = compare_runs({ok, only_a, cold}, {broke, only_b, hot}, CompareOptions{});
  EXPECT_TRUE(c.rows.empty());
  ASSERT_EQ(c.changes.size(), 1u);
  EXPECT_EQ(c.changes[0].base_status, "passed");
  EXPECT_EQ(c.changes[0].head_status, "failed");
  EXPECT_TRUE(c.changes[0].regression);
  EXPECT_TRUE(c.has_regression());
  // p.gone passed in A: listed once, as missing from B, not again as "only in A".
  EXPECT_TRUE(c.only_base.empty());
  EXPECT_EQ(c.missing, std::vector<std::string>{"p.gone B1 H8 N512 D64 fp16 none fwd: absent"});
  EXPECT_EQ(c.only_head, std::vector<std::string>{"p.new B1 H8 N512 D64 fp16 none fwd"});
  ASSERT_EQ(c.mode_mismatches.size(), 1u);
  EXPECT_NE(c.mode_mismatches[0].find("timed cold vs hot"), std::string::npos);
  EXPECT_EQ(c.env_differences, std::vector<std::string>{"git_commit: aaa -> bbb"});

  // A point that now passes is a change, not a regression.
  const Comparison fixed = compare_runs({broke}, {ok}, CompareOptions{});
  ASSERT_EQ(fixed.changes.size(), 1u);
  EXPECT_FALSE(fixed.changes[0].regression);
  EXPECT_FALSE(fixed.has_regression());
}

// A provider under another setting is another point: never joined with the first one.
TEST(Compare, APointUnderAnotherProviderSettingIsNotJoined) {
  std::mt19937_64 rng(17);
  Result plain = measured("cuda.decode", 512, 100, 0.01, 100, rng);
  Result set = measured("cuda.decode", 512, 150, 0.01, 100, rng);
  set.env["setting.pipeline"] = "p64x3";
  const Comparison c = compare_runs({plain}, {set}, CompareOptions{});
  EXPECT_TRUE(c.rows.empty());
  EXPECT_EQ(c.missing,
            std::vector<std::string>{"cuda.decode B1 H8 N512 D64 fp16 none fwd: absent"});
  EXPECT_EQ(c.only_head, std::vector<std::string>{
                             "cuda.decode B1 H8 N512 D64 fp16 none fwd (setting.pipeline=p64x3;)"});
  EXPECT_EQ(compare_runs({set}, {set}, CompareOptions{}).rows.size(), 1u);
}

// A CI gate must not pass because the points that got slower stopped running: a point that
// passed in A and is absent, or not passed, in B is a regression unless missing ones are allowed.
TEST(Compare, PointsMissingFromTheNewRunAreARegressionUnlessAllowed) {
  std::mt19937_64 rng(13);
  const Result kept = measured("p.kept", 512, 100, 0.01, 100, rng);
  const Result gone = measured("p.gone", 512, 100, 0.01, 100, rng);
  const Result unsupported_before = measured("p.never", 512, 100, 0.01, 100, rng);
  Result now_unsupported = measured("p.dropped", 512, 100, 0.01, 100, rng);
  Result never = unsupported_before;
  never.status = Status::not_supported;
  const Result dropped_before = now_unsupported;
  now_unsupported.status = Status::not_supported;
  now_unsupported.reason = "head_dim 512 not supported";
  now_unsupported.timing = {};

  const Comparison c =
      compare_runs({kept, gone, never, dropped_before}, {kept, now_unsupported}, CompareOptions{});
  EXPECT_EQ(c.count(Verdict::slower), 0);
  EXPECT_EQ(c.broken(), 0);
  // p.never did not pass in A: nothing was lost.
  EXPECT_EQ(c.missing, (std::vector<std::string>{"p.gone B1 H8 N512 D64 fp16 none fwd: absent",
                                                 "p.dropped B1 H8 N512 D64 fp16 none fwd: "
                                                 "not_supported"}));
  EXPECT_TRUE(c.has_regression());
  EXPECT_FALSE(c.has_regression(/*allow_missing=*/true));
  const std::string text = format_comparison(c, "a", "b", CompareOptions{});
  EXPECT_NE(text.find("2 points passed in A and have no passed row in B:\n"
                      "  p.gone B1 H8 N512 D64 fp16 none fwd: absent\n"),
            std::string::npos)
      << text;
  // Each point is listed once: p.gone not again under "only in A", p.dropped not again among
  // the status changes.
  for (const char* point : {"p.gone B1", "p.dropped B1"}) {
    const std::size_t first = text.find(point);
    EXPECT_EQ(text.find(point, first + 1), std::string::npos) << point << " twice in:\n" << text;
  }

  // A point that broke stays a regression with missing points allowed, and is not "missing".
  Result broke = kept;
  broke.status = Status::failed;
  const Comparison b = compare_runs({kept}, {broke}, CompareOptions{});
  EXPECT_TRUE(b.missing.empty());
  EXPECT_TRUE(b.has_regression(/*allow_missing=*/true));
}

TEST(Compare, RepeatedRowsUseTheLastAndAreCounted) {
  std::mt19937_64 rng(3);
  Result first = measured("p", 256, 100, 0.01, 100, rng);
  Result second = measured("p", 256, 200, 0.01, 100, rng);
  const Comparison c = compare_runs({first, second}, {second}, CompareOptions{});
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::same);
  EXPECT_EQ(c.duplicates, 1);
}

}  // namespace
}  // namespace attnprof
