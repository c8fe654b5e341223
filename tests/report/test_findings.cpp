// Findings computed on synthetic rows with known answers: growth exponents of N^2 and N series,
// the fastest provider and its speedup, GQA expansion cost, grouped unsupported reasons, the
// kernel a dispatcher ran, and how rows are grouped into series.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "attnprof/verify.hpp"
#include "report/answer.hpp"
#include "report/findings.hpp"
#include "report/fixtures.hpp"
#include "report/headline.hpp"
#include "report/precision.hpp"
#include "report/series.hpp"

namespace attnprof {
namespace {

using test::row;

bool has_finding(const std::vector<Finding>& f, const std::string& text) {
  for (const Finding& x : f) {
    if (x.text == text) return true;
  }
  return false;
}

std::string all_text(const std::vector<Finding>& f) {
  std::string s;
  for (const Finding& x : f) s += x.topic + ": " + x.text + "\n";
  return s;
}

TEST(Findings, GrowthFitRecoversAConstantAndAPower) {
  constexpr double kMiB = 1024.0 * 1024.0;
  const std::vector<double> n = {64, 128, 256, 512, 1024, 2048};
  // seed-000's cuda.naive: 32 MiB of cuBLAS workspace under the scores, 2 x 12 heads x N^2 x 2 B.
  std::vector<double> naive, lin, flat;
  for (double x : n) {
    naive.push_back(32 * kMiB + 2 * 12 * x * x * 2);
    lin.push_back(40 * x);
    flat.push_back(kMiB * (1 + 0.01 * std::sin(x)));
  }
  const auto q = fit_growth(n, naive);
  ASSERT_TRUE(q);
  EXPECT_FALSE(q->constant);
  EXPECT_NEAR(q->exponent, 2.0, 0.01);
  EXPECT_NEAR(q->base / (32 * kMiB), 1.0, 0.01);
  EXPECT_GT(q->r2, 0.999);
  EXPECT_EQ(q->points, 6);
  EXPECT_EQ(describe_growth(*q, naive.front()), "N^2.00 above a constant 32.0 MiB");
  // A pure power: no constant named.
  const auto l = fit_growth(n, lin);
  ASSERT_TRUE(l);
  EXPECT_NEAR(l->exponent, 1.0, 0.01);
  EXPECT_LT(l->base, 0.05 * lin.front());
  EXPECT_EQ(describe_growth(*l, lin.front()), "N^1.00");
  // Nothing grows: constant, whatever the noise's slope.
  const auto c = fit_growth(n, flat);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->constant);
  EXPECT_EQ(describe_growth(*c, flat.front()).substr(0, 12), "constant at ");
  // Non-positive points are left out; fewer than 3 distinct N fit nothing.
  EXPECT_EQ(fit_growth({1, 2, 4, 8}, {0, 4, 16, 64})->points, 3);
  EXPECT_FALSE(fit_growth({8, 8, 8}, {1, 2, 3}).has_value());
  EXPECT_FALSE(fit_growth({8, 16}, {1, 2}).has_value());
  // Noise lowers R² below 1.
  EXPECT_LT(fit_growth({1, 2, 4, 8}, {1, 8, 4, 64})->r2, 0.95);
}

std::vector<Result> mha_rows() {
  std::vector<Result> rows;
  for (int64_t n : {512, 1024, 2048, 4096}) {
    const double nn = static_cast<double>(n);
    rows.push_back(row("cuda.naive", 1, 8, 8, n, nn * nn / 1e4, n * n * 4));
    rows.push_back(row("cudnn.sdpa", 1, 8, 8, n, nn * nn / 4e4, n * 256));
    rows.push_back(row("cuda.flash", 1, 8, 8, n, nn * nn / 3e4, 0));
  }
  return rows;
}

TEST(Findings, MemoryGrowthExponentsOnFixedBatchSeries) {
  const std::vector<Result> rows = mha_rows();
  const auto growth = memory_growth(group_series(rows));
  ASSERT_EQ(growth.size(), 3u);
  EXPECT_EQ(growth[0].provider, "cuda.naive");
  ASSERT_TRUE(growth[0].fit);
  EXPECT_NEAR(growth[0].fit->exponent, 2.0, 1e-3);
  ASSERT_TRUE(growth[1].fit);
  EXPECT_NEAR(growth[1].fit->exponent, 1.0, 1e-3);
  EXPECT_TRUE(growth[2].no_extra);
  EXPECT_EQ(growth[0].n_min, 512);
  EXPECT_EQ(growth[0].n_max, 4096);
  const auto f = compute_findings(rows);
  EXPECT_TRUE(has_finding(f,
                          "`cuda.naive`: extra memory grows as N^2.00 (H8 D64 fp16 causal fwd, "
                          "B1: N 512–4096, 4 points, R² 1.000, 1.00 MiB to 64.0 MiB (64.0×))."))
      << all_text(f);
  EXPECT_TRUE(has_finding(f,
                          "`cuda.flash` holds no memory beyond its inputs and outputs (H8 D64 "
                          "fp16 causal fwd, B1: N 512–4096, 4 points)."))
      << all_text(f);
}

// seed-000's question: a constant workspace under an N^2 growth is named as such, a provider
// whose memory does not grow is "constant", and two series of one provider that grow alike are
// one line naming both, while a series that behaves otherwise gets its own.
TEST(Findings, MemoryGrowthNamesTheConstantAndEachBehavior) {
  constexpr int64_t kMiB = 1 << 20;
  std::vector<Result> rows;
  for (int64_t n : {64, 128, 256, 512, 1024, 2048}) {
    const double nn = static_cast<double>(n);
    for (int64_t kv : {12, 3}) {
      Result r = row("cuda.naive", 1, 12, kv, n, nn * nn / 1e4, 32 * kMiB + 2 * 12 * n * n * 2);
      rows.push_back(r);
      rows.push_back(row("cudnn.sdpa.infer", 1, 12, kv, n, nn * nn / 4e4, 256));
    }
    rows.push_back(row("cuda.math", 1, 12, 12, n, nn * nn / 1e4, 1000 * n));
    rows.push_back(row("cuda.math", 1, 12, 3, n, nn * nn / 1e4, 64 * n * n));
  }
  const auto f = compute_findings(rows);
  EXPECT_TRUE(has_finding(f,
                          "`cuda.naive`: extra memory grows as N^2.00 above a constant 32.0 MiB "
                          "(H12 D64 fp16 causal fwd, B1 and H12/3 D64 fp16 causal fwd, B1: N "
                          "64–2048, 6 points, R² 1.000, 32.2 MiB to 224 MiB (6.96×))."))
      << all_text(f);
  EXPECT_TRUE(has_finding(f,
                          "`cudnn.sdpa.infer`: extra memory is constant at 256 B (in each series): "
                          "nothing grows with N (H12 D64 fp16 causal fwd, B1 and H12/3 D64 fp16 "
                          "causal fwd, B1: N 64–2048, 6 points)."))
      << all_text(f);
  EXPECT_TRUE(has_finding(f,
                          "`cuda.math`: extra memory grows as N^1.00 (H12 D64 fp16 causal fwd, "
                          "B1: N 64–2048, 6 points, R² 1.000, 62.5 KiB to 1.95 MiB (32.0×))."))
      << all_text(f);
  EXPECT_TRUE(has_finding(f,
                          "`cuda.math`: extra memory grows as N^2.00 (H12/3 D64 fp16 causal fwd, "
                          "B1: N 64–2048, 6 points, R² 1.000, 256 KiB to 256 MiB (1024×))."))
      << all_text(f);
}

TEST(Findings, TokenSeriesAreGroupedButNotFittedAndDecodeStaysApart) {
  std::vector<Result> rows;
  for (int64_t n : {512, 1024, 2048})
    rows.push_back(row("cuda.naive", 4096 / n, 8, 8, n, 10, n * n));
  Result decode = row("cuda.naive", 1, 8, 8, 1, 5, 1000);
  decode.spec.kv_len = 4096;
  rows.push_back(decode);
  const auto groups = group_series(rows);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_FALSE(groups[0].fixed_batch);
  EXPECT_EQ(groups[0].title, "H8 D64 fp16 causal fwd, B·N = 4096 tokens");
  EXPECT_EQ(groups[0].distinct_n(), 3);
  EXPECT_FALSE(groups[1].self_attention);
  EXPECT_EQ(groups[1].title, "H8 Nq1 D64 fp16 causal fwd, B1");
  EXPECT_TRUE(memory_growth(groups).empty());
}

// The fastest per shape (the report's table of it), and fused against unfused under the unfused
// provider. The fastest per shape class is the answer table's (test_answer.cpp).
TEST(Findings, FastestProviderAndFusedAgainstUnfused) {
  const std::vector<Result> rows = mha_rows();
  const auto shapes = fastest_per_shape(rows, "cuda.naive");
  ASSERT_EQ(shapes.size(), 4u);
  for (const Fastest& s : shapes) {
    EXPECT_EQ(s.best->provider, "cudnn.sdpa");
    EXPECT_EQ(s.runner_up->provider, "cuda.flash");
    EXPECT_EQ(s.baseline->provider, "cuda.naive");
  }
  const auto f = compute_findings(rows);
  for (const Finding& x : f) {
    if (x.topic == "fused") {
      EXPECT_EQ(x.provider, "cuda.naive") << x.text;
    }
  }
  EXPECT_TRUE(has_finding(
      f,
      "Fused against unfused: `cudnn.sdpa` is 4.00× faster than `cuda.naive` (geomean over 4 "
      "shared shapes); at the largest shared shape, B1 H8 N4096 D64 fp16 causal fwd, it is "
      "4.00× faster and holds 1.00 MiB of extra memory against 64.0 MiB."))
      << all_text(f);
}

// Extra memory that a caching allocator moves (torch.sdpa.flash on the H200, seed-000) follows
// no power of N: said so, with its R², not given an exponent.
TEST(Findings, MemoryThatFollowsNoPowerOfNIsSaidSo) {
  std::vector<Result> rows;
  const std::vector<std::pair<int64_t, int64_t>> measured = {
      {64, 4096}, {128, 7168}, {256, 13312}, {512, 3220480}, {1024, 12829696}, {2048, 99328}};
  for (const auto& [n, bytes] : measured)
    rows.push_back(row("torch.sdpa.flash", 1, 12, 12, n, 10, bytes));
  const auto f = compute_findings(rows);
  bool said = false;
  for (const Finding& x : f) {
    if (x.topic != "memory") continue;
    said = x.text.starts_with("`torch.sdpa.flash`: extra memory follows no power of N");
    EXPECT_NE(x.text.find(", R² 0."), std::string::npos) << x.text;
  }
  EXPECT_TRUE(said) << all_text(f);
  // The memory table and the plot legend say the same: no exponent.
  const auto growth = memory_growth(group_series(rows));
  ASSERT_EQ(growth.size(), 1u);
  ASSERT_TRUE(growth[0].fit);
  EXPECT_EQ(describe_growth(*growth[0].fit, growth[0].y_min), "no clear power of N");
}

// The math backend against naive, in time and memory; compute- or memory-bound per provider from
// the measured ceilings.
TEST(Findings, MathAgainstNaiveAndTheBoundOfEachProvider) {
  std::vector<Result> rows;
  for (int64_t n : {512, 1024, 2048}) {
    const double nn = static_cast<double>(n);
    Result naive = row("cuda.naive", 1, 8, 8, n, nn * nn / 1e4, n * n * 4);
    naive.bound = "memory";
    naive.pct_peak_bw = 40.0 + double(n) / 512;
    naive.pct_peak_flops = 5.0;
    Result math = row("cuda.math", 1, 8, 8, n, 3 * nn * nn / 1e4, n * n * 10);
    math.traits.family = Family::math;
    math.traits.fused = false;
    math.bound = "memory";
    math.pct_peak_bw = n == 512 ? 4.0 : 12.0;  // far below its roof at 512
    Result fused = row("cudnn.sdpa", 1, 8, 8, n, nn * nn / 4e4, 1024);
    fused.bound = n == 512 ? "memory" : "compute";
    fused.pct_peak_flops = 20.0 * double(n) / 512;
    fused.pct_peak_bw = 30.0;
    rows.insert(rows.end(), {naive, math, fused});
  }
  const auto f = compute_findings(rows);
  EXPECT_TRUE(has_finding(f,
                          "Math against naive: `cuda.math` takes 3.00× the time of `cuda.naive` "
                          "(geomean over 3 shared shapes); at the largest, B1 H8 N2048 D64 fp16 "
                          "causal fwd, 40.0 MiB of extra memory against 16.0 MiB."))
      << all_text(f);
  EXPECT_TRUE(has_finding(f,
                          "`cuda.naive` is memory-bound at all 3 shapes (up to 44.0% of the "
                          "measured bandwidth ceiling)."))
      << all_text(f);
  EXPECT_TRUE(has_finding(f,
                          "`cudnn.sdpa` is compute-bound at 2 and memory-bound at 1 shapes (up "
                          "to 80.0% of the TFLOP/s ceiling, 30.0% of the bandwidth ceiling)."))
      << all_text(f);
  EXPECT_TRUE(has_finding(f,
                          "`cuda.math` is memory-bound at all 3 shapes (up to 12.0% of the "
                          "measured bandwidth ceiling); at 1 of them under 10% of that ceiling: "
                          "neither compute nor bandwidth limits those, latency and launch "
                          "overhead do."))
      << all_text(f);
  // A row far above its ceiling says the ceiling is what is wrong.
  rows.back().pct_peak_flops = 150.0;
  EXPECT_TRUE(has_finding(compute_findings(rows),
                          "`cudnn.sdpa` is compute-bound at 2 and memory-bound at 1 shapes (up "
                          "to 150% of the TFLOP/s ceiling, 30.0% of the bandwidth ceiling); above "
                          "100% the measured ceiling is too low (measured on a busy host or at "
                          "another clock): `attnprof peaks --refresh` on an idle machine."))
      << all_text(compute_findings(rows));
  // No measured ceilings, no bound finding.
  for (Result& r : rows) r.bound.clear();
  for (const Finding& x : compute_findings(rows)) EXPECT_NE(x.topic, "bound");
}

// Providers whose medians differ by less than the rows' spread are not ranked: the same cuDNN
// kernel under two names, 0.5% apart, is a tie; 5% apart (beyond 1% and cv 1.2% + 1.2%) is not.
TEST(Findings, MediansWithinNoiseAreTiesNotWins) {
  std::vector<Result> rows;
  for (int64_t n : {512, 1024, 2048}) {
    const double t = static_cast<double>(n);
    rows.push_back(row("cuda.naive", 1, 8, 8, n, 10 * t, 0));
    rows.push_back(row("cudnn.sdpa", 1, 8, 8, n, t, 0));
    rows.push_back(row("torch.sdpa.cudnn", 1, 8, 8, n, n == 2048 ? 1.05 * t : 1.005 * t, 0));
  }
  EXPECT_TRUE(within_noise(rows[1], rows[2]));
  EXPECT_FALSE(within_noise(rows[7], rows[8]));
  const auto shapes = fastest_per_shape(rows, "cuda.naive");
  ASSERT_EQ(shapes.size(), 3u);
  ASSERT_EQ(shapes[0].tied.size(), 1u);
  EXPECT_EQ(shapes[0].tied[0]->provider, "torch.sdpa.cudnn");
  EXPECT_TRUE(shapes[2].tied.empty());
}

TEST(Findings, GqaExpansionCost) {
  std::vector<Result> rows;
  for (int64_t n : {1024, 2048}) {
    rows.push_back(row("cuda.naive", 1, 32, 8, n, 100, n * n));
    rows.push_back(row("cuda.naive.expand", 1, 32, 8, n, n == 1024 ? 110 : 120, n * n + (8 << 20)));
  }
  rows.push_back(row("cuda.naive", 1, 8, 8, 1024, 50, 0));  // MHA: not a GQA shape
  rows.push_back(row("cuda.naive.expand", 1, 8, 8, 1024, 500, 0));
  const auto f = compute_findings(rows);
  EXPECT_TRUE(has_finding(f,
                          "GQA expansion: repeating the K/V heads (`cuda.naive.expand` against "
                          "`cuda.naive`) changes the time by +14.9% (geomean over 2 GQA shapes, "
                          "+10.0% to +20.0%) and the peak memory by +8.00 MiB at B1 H32/8 N2048 "
                          "D64 fp16 causal fwd."))
      << all_text(f);
}

// A paged cache against contiguous K and V: each provider's paged time over its own contiguous
// time at the same shape, per page size; a paged row without its contiguous twin is left out.
TEST(Findings, PagedAgainstContiguousPerPageSize) {
  std::vector<Result> rows;
  for (int64_t n : {1024, 2048}) {
    for (int64_t page : {0, 16, 64}) {
      Result r = row("cudnn.sdpa", 1, 32, 8, n, page == 0 ? 100 : page == 16 ? 105 : 102, 0);
      r.spec.page_size = page;
      rows.push_back(r);
    }
  }
  Result lone = row("cudnn.sdpa", 4, 32, 8, 1024, 400, 0);
  lone.spec.page_size = 16;
  rows.push_back(lone);
  const auto f = compute_findings(rows);
  EXPECT_TRUE(has_finding(f,
                          "Paged KV cache: `cudnn.sdpa` with pages of 16 keys takes 1.05× its "
                          "contiguous time (geomean over 2 shapes; 105 µs against 100 µs at B1 "
                          "H32/8 N2048 D64 fp16 causal fwd); pages of 64 keys takes 1.02× its "
                          "contiguous time (geomean over 2 shapes; 102 µs against 100 µs at B1 "
                          "H32/8 N2048 D64 fp16 causal fwd)."))
      << all_text(f);
}

// A ragged batch against the uniform batch of the same padded shape: the share of its TFLOP/s a
// provider keeps; a ragged row without its uniform twin is left out.
TEST(Findings, RaggedKeepsAShareOfTheUniformRate) {
  std::vector<Result> rows;
  for (int64_t n : {1024, 2048}) {
    Result uniform = row("cudnn.sdpa", 8, 32, 8, n, 100, 0);
    uniform.tflops = 500;
    Result lens = row("cudnn.sdpa", 8, 32, 8, n, 60, 0);
    lens.spec.seqlens = "uniform:1:" + std::to_string(n);
    lens.flops = uniform.flops / 2;
    lens.tflops = n == 1024 ? 400 : 450;  // 80%, 90%
    rows.push_back(uniform);
    rows.push_back(lens);
  }
  Result lone = row("cudnn.sdpa", 4, 32, 8, 1024, 400, 0);
  lone.spec.seqlens = "7/9";
  rows.push_back(lone);
  const auto f = compute_findings(rows);
  EXPECT_TRUE(has_finding(f,
                          "Ragged batches: `cudnn.sdpa` keeps 85% of its uniform-batch TFLOP/s "
                          "(geomean over 2 shapes, 80%–90%; 60.0 µs for 50% of the uniform batch's "
                          "work at B8 H32/8 N2048 D64 fp16 causal fwd ragged uniform:1:2048)."))
      << all_text(f);
}

// A softcap's and sinks' cost against the same shape without them, per provider.
TEST(Findings, ScoreModifiersAgainstThePlainShape) {
  std::vector<Result> rows;
  for (int64_t n : {1024, 2048}) {
    rows.push_back(row("cudnn.sdpa", 1, 16, 8, n, 100, 0));
    Result cap = row("cudnn.sdpa", 1, 16, 8, n, 120, 0);
    cap.spec.softcap = 50;
    rows.push_back(cap);
    Result sinks = row("cudnn.sdpa", 1, 16, 8, n, 101, 0);
    sinks.spec.sinks = true;
    rows.push_back(sinks);
  }
  const auto f = compute_findings(rows);
  EXPECT_TRUE(has_finding(f,
                          "Logit softcap: `cudnn.sdpa` takes 1.20× its time without (geomean over "
                          "2 shapes; 120 µs against 100 µs at B1 H16/8 N2048 D64 fp16 causal fwd "
                          "softcap50)."))
      << all_text(f);
  EXPECT_TRUE(has_finding(f,
                          "Attention sinks: `cudnn.sdpa` takes 1.01× its time without (geomean "
                          "over 2 shapes; 101 µs against 100 µs at B1 H16/8 N2048 D64 fp16 causal "
                          "fwd sinks)."))
      << all_text(f);
}

// At memory-bound shapes, who reads nearest the measured ceiling, and how often.
TEST(Findings, NearestTheBandwidthLimit) {
  std::vector<Result> rows;
  for (int64_t n : {1024, 2048, 4096}) {
    Result a = row("cuda.naive", 1, 32, 8, n, 100, 0);
    Result b = row("torch.naive", 1, 32, 8, n, 100, 0);
    a.bound = b.bound = "memory";
    a.pct_peak_bw = n == 4096 ? 40.0 : 58.0;
    b.pct_peak_bw = n == 4096 ? 49.0 : 45.0;
    rows.push_back(a);
    rows.push_back(b);
  }
  // A shape only one provider ran has no leader, however near the ceiling it reads.
  Result alone = row("cuda.naive", 1, 32, 8, 8192, 100, 0);
  alone.bound = "memory";
  alone.pct_peak_bw = 90.0;
  rows.push_back(alone);
  const auto f = compute_findings(rows);
  EXPECT_TRUE(
      has_finding(f,
                  "Nearest the bandwidth limit: of the providers that ran each of the 3 "
                  "memory-bound shapes that two or more ran, `cuda.naive` reads closest to the "
                  "measured ceiling "
                  "at 2 (up to 58.0% of it, at B1 H32/8 N1024 D64 fp16 causal fwd) and "
                  "`torch.naive` at 1 (up to 49.0% of it, at B1 H32/8 N4096 D64 fp16 causal "
                  "fwd)."))
      << all_text(f);
}

TEST(Findings, UnsupportedReasonsKernelsAndFailures) {
  std::vector<Result> rows = mha_rows();
  for (int64_t d : {96, 160, 192}) {
    Result r = row("cudnn.sdpa", 1, 8, 8, 512, 0, 0);
    r.status = Status::not_supported;
    // the same refusal at two sizes is one reason, shown by its first example
    r.reason = d == 96 ? "fp32 is not supported"
                       : "head_dim " + std::to_string(d) + " not a multiple of 64";
    rows.push_back(r);
  }
  for (int64_t n : {512, 1024, 2048}) {
    Result r = row("torch.sdpa.default", 1, 8, 8, n, 10, 0);
    r.kernels = {
        {n == 512 ? "fmha_cutlassF_f16_aligned_64x64_rf_sm80" : "flash_fwd_kernel<...>", 1, 9},
        {"elementwise_kernel", 2, 1}};
    rows.push_back(r);
  }
  Result bad = row("cuda.math", 1, 8, 8, 512, 0, 0);
  bad.status = Status::incorrect;
  bad.reason = "verification failed: rel_l2_err 1e-1";
  rows.push_back(bad);
  const auto f = compute_findings(rows);
  EXPECT_TRUE(
      has_finding(f,
                  "`torch.sdpa.default` dispatched to the efficient backend at 1 of 3 shapes "
                  "(`fmha_cutlassF_f16_aligned_64x64_rf_sm80`); the flash backend at 2 of 3 shapes "
                  "(`flash_fwd_kernel<...>`)."))
      << all_text(f);
  // Points not supported are counted in one place, the "Not supported" table: per provider and
  // reason (numbers aside), shown by its first example.
  for (const Finding& x : f) EXPECT_EQ(x.text.find("not supported"), std::string::npos) << x.text;
  const auto tables = report_tables(rows, "cuda.naive");
  const auto unsupported = std::find_if(tables.begin(), tables.end(), [](const TableSection& t) {
    return t.heading == "Not supported";
  });
  ASSERT_NE(unsupported, tables.end());
  ASSERT_EQ(unsupported->table.rows.size(), 2u);
  EXPECT_EQ(unsupported->table.rows[0],
            (std::vector<std::string>{"cudnn.sdpa", "fp32 is not supported", "1"}));
  EXPECT_EQ(unsupported->table.rows[1],
            (std::vector<std::string>{"cudnn.sdpa", "head_dim 160 not a multiple of 64", "2"}));
  // A broken point is the headline's, counted; the "Did not pass" table has its reason.
  EXPECT_TRUE(has_finding(headline_findings(rows, answer_by_class(rows), "cuda.naive", {}),
                          "1 point did not pass and is left out of every comparison: "
                          "`cuda.math` (1 incorrect) (\"Did not pass\" has the reasons)."));
}

// A compiled naive recipe that Inductor replaced with a fused kernel at some shapes: said, with
// where it did not. Its traits say unfused (family naive); the kernels say what ran.
TEST(Findings, ACompilerThatReplacedTheRecipeIsSaid) {
  std::vector<Result> rows;
  for (int64_t n : {2048, 8192}) {
    Result r = row("py.torch.compile.naive", 2, 16, 16, n, 100, 0);
    r.traits.family = Family::naive;
    r.tflops = n == 8192 ? 659 : 63.8;
    r.kernels = {{n == 8192 ? "cudnn_generated_fort_native_sdpa_sm90_flash_fprop"
                            : "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
                  1, 9},
                 {"triton_red_fused__softmax", 1, 1}};
    rows.push_back(r);
  }
  Result plain = row("cuda.naive", 2, 16, 16, 2048, 100, 0);
  plain.kernels = {{"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", 2, 9}};
  rows.push_back(plain);
  const auto f = compute_findings(rows);
  EXPECT_TRUE(has_finding(
      f,
      "`py.torch.compile.naive` declares an unfused recipe but ran a fused attention kernel at 1 "
      "of 2 shapes (`cudnn_generated_fort_native_sdpa_sm90_flash_fprop`): what was compiled "
      "replaced the recipe there (up to 659 TFLOP/s, against up to 63.8 where it ran unfused "
      "kernels)."))
      << all_text(f);
  EXPECT_EQ(all_text(f).find("`cuda.naive` declares an unfused recipe"), std::string::npos);
}

// A provider that declares itself a variant of another (one library's other form of the point):
// the time ratio over the shapes both ran, the largest shape's two medians, and the kernel each
// form spent the most time in there (where the rows recorded kernels).
TEST(Findings, FormsOfOneLibraryAreCompared) {
  std::vector<Result> rows;
  for (int64_t n : {256, 512}) {
    rows.push_back(row("ort.cpu.naive_graph", 1, 8, 8, n, 100, 0));
    Result r = row("ort.cpu.attention", 1, 8, 8, n, n == 256 ? 50 : 25, 0);
    r.traits.variant_of = "ort.cpu.naive_graph";
    rows.push_back(r);
  }
  auto f = compute_findings(rows);
  EXPECT_TRUE(has_finding(f,
                          "Forms of one library: `ort.cpu.attention` takes 0.354× the time of "
                          "`ort.cpu.naive_graph` (geomean over 2 shared shapes, 0.250–0.500×); at "
                          "the largest, B1 H8 N512 D64 fp16 causal fwd, 25.0 µs against 100 µs."))
      << all_text(f);
  for (Result& r : rows) {
    if (r.spec.q_len != 512) continue;  // the largest shared shape's rows
    if (r.provider == "ort.cpu.attention") {
      r.kernels = {{"transpose", 2, 3}, {"flash_fwd_kernel", 1, 22}};
    } else {
      r.kernels = {{"nvjet_gemm", 2, 40}, {"softmax_block_forward", 1, 60}};
    }
  }
  f = compute_findings(rows);
  EXPECT_NE(all_text(f).find("mostly in `flash_fwd_kernel` against `softmax_block_forward`"),
            std::string::npos)
      << all_text(f);
}

TEST(Findings, ClassificationOfKernelsAndProviders) {
  EXPECT_EQ(sdpa_backend_of_kernel("void pytorch_flash::flash_fwd_kernel<...>"), "flash");
  EXPECT_EQ(sdpa_backend_of_kernel("fmha_cutlassF_bf16_aligned_64x128_rf_sm80"), "efficient");
  EXPECT_EQ(sdpa_backend_of_kernel("cudnn_generated_fort_native_sdpa_sm90"), "cudnn");
  EXPECT_EQ(sdpa_backend_of_kernel("ampere_bf16_s16816gemm_bf16_128x128"), "math");
  // Facts come from the rows' declared traits, never from the names.
  const std::vector<Result> rows = mha_rows();
  ASSERT_NE(traits_in(rows, "cudnn.sdpa"), nullptr);
  EXPECT_TRUE(traits_in(rows, "cudnn.sdpa")->fused);
  EXPECT_EQ(traits_in(rows, "not.there"), nullptr);
  std::vector<Result> renamed = rows;
  for (Result& r : renamed) {
    if (r.provider == "cuda.naive") r.provider = r.traits.name = "my.unfused.baseline";
  }
  EXPECT_EQ(choose_baseline(renamed, ""), "my.unfused.baseline");
  EXPECT_EQ(choose_baseline(mha_rows(), ""), "cuda.naive");
  EXPECT_EQ(choose_baseline(mha_rows(), "cudnn.sdpa"), "cudnn.sdpa");
  EXPECT_EQ(choose_baseline({mha_rows()[1]}, ""), "");
}

// fp8 against bf16 at one shape per provider: the table lists each dtype with its speed against
// bf16 and its error; the finding names the largest shape's e4m3 row.
TEST(Findings, PrecisionAgainstSpeed) {
  std::vector<Result> rows;
  for (int64_t n : {4096, 8192}) {
    for (DType t : {DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2}) {
      const double us = (t == DType::bf16       ? 160.0
                         : t == DType::fp8_e4m3 ? 100.0
                                                : 200.0) *
                        double(n / 4096);
      Result r = row("cudnn.sdpa", 1, 64, 8, n, us, 0);
      r.spec.dtype = t;
      r.tflops = 1000 / us;
      r.verify = test::make_verify(t == DType::bf16 ? 3e-3 : 5e-2, tolerance_for(t).output);
      rows.push_back(r);
    }
  }
  rows.push_back(row("cuda.naive", 1, 64, 8, 4096, 900, 0));  // one dtype: no group
  const std::vector<PrecisionGroup> groups = precision_groups(rows);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[1].shape, "B1 H64/8 N8192 D64 causal fwd");
  ASSERT_EQ(groups[1].rows.size(), 3u);
  EXPECT_EQ(groups[1].reference->spec.dtype, DType::bf16);
  EXPECT_EQ(groups[1].rows[1]->spec.dtype, DType::fp8_e4m3);
  const TableSection t = precision_table(rows);
  ASSERT_EQ(t.table.rows.size(), 6u);
  EXPECT_EQ(t.table.rows[4][2], "fp8_e4m3");
  EXPECT_EQ(t.table.rows[4][5], "1.60× bf16");
  EXPECT_EQ(t.table.rows[5][5], "0.800× bf16");
  EXPECT_EQ(t.table.rows[3][5], "reference");
  // A figure per shape, the largest first: a point per dtype at its error and TFLOP/s.
  int id = 1;
  const FigureGroup figs = precision_figures(rows, {"cudnn.sdpa", "cuda.naive"}, id);
  ASSERT_EQ(figs.figures.size(), 2u);
  EXPECT_EQ(figs.figures[0].plot.title, "Precision against speed: B1 H64/8 N8192 D64 causal fwd");
  ASSERT_EQ(figs.figures[0].plot.series.size(), 3u);
  EXPECT_EQ(figs.figures[0].plot.series[1].name, "cudnn.sdpa fp8_e4m3");
  EXPECT_EQ(figs.figures[0].plot.series[1].points.at(0), std::make_pair(5e-2, 5.0));
  EXPECT_EQ(id, 3);
  const auto f = compute_findings(rows);
  const std::string text = all_text(f);
  EXPECT_NE(text.find("precision: Precision against speed: `cudnn.sdpa` in fp8_e4m3 runs B1 H64/8 "
                      "N8192 D64 causal fwd in 200 µs, 1.60× faster than in bf16 (5.00 against "
                      "3.12 TFLOP/s)"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace attnprof
