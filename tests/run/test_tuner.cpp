// The tuner against a synthetic provider whose peak memory is exactly a known function of the
// batch (or length) and whose launch sleeps a known time: it must find the exact boundary, honour
// the p95 limit, treat an OOM as a boundary and report "no batch fits" as a result.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "attnprof/registry.hpp"
#include "attnprof/tune.hpp"

namespace attnprof {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// cpu.naive's correct run (untracked), plus what brings the point to exactly `bytes` with the
// harness's tensors (tracked by the engine) reported to the tracker, and a sleep of `sleep` in
// every launch.
class SyntheticRun final : public Run {
 public:
  SyntheticRun(std::unique_ptr<Run> inner, MemoryTracker* tracker, int64_t bytes,
               std::chrono::microseconds sleep)
      : inner_(std::move(inner)), tracker_(tracker), bytes_(bytes), sleep_(sleep) {
    if (tracker_) tracker_->on_alloc(bytes_);
  }
  ~SyntheticRun() override {
    if (tracker_) tracker_->on_free(bytes_);
  }
  void launch(Stream& s, const Io& io) override {
    inner_->launch(s, io);
    if (sleep_.count() > 0) std::this_thread::sleep_for(sleep_);
  }
  int64_t workspace_bytes() const override { return bytes_; }

 private:
  std::unique_ptr<Run> inner_;
  MemoryTracker* tracker_;
  int64_t bytes_;
  std::chrono::microseconds sleep_;
};

// Memory and sleep as functions of the tuned value (the batch, or the KV length).
struct Curve {
  std::function<int64_t(int64_t)> bytes = [](int64_t) { return kMiB; };
  std::function<int64_t(int64_t)> sleep_us = [](int64_t) { return int64_t{0}; };
  int64_t oom_above = INT64_MAX;  // prepare() throws OutOfMemory above this value
  bool supported = true;
};

class SyntheticProvider final : public Provider {
 public:
  SyntheticProvider(Curve c, TuneAxis axis)
      : curve_(std::move(c)), axis_(axis), naive_(find_provider("cpu.naive")) {}
  ProviderTraits traits() const override {
    ProviderTraits t = naive_->traits();
    t.name = "test.synthetic";
    t.description = "known memory and latency curves";
    t.family = Family::test;
    return t;
  }
  Support supports(const Spec&, const Device&) const override {
    return curve_.supported ? Support::yes() : Support::no("synthetic: never supported");
  }
  int64_t workspace_estimate(const Spec&, const Settings&) const override { return 0; }
  std::unique_ptr<Run> prepare(const Spec& spec, const Device& device, const PrepareContext& ctx,
                               const Io& io) override {
    const int64_t v = axis_ == TuneAxis::batch ? spec.batch : spec.kv_len;
    if (v > curve_.oom_above) throw OutOfMemory("synthetic: out of memory");
    PrepareContext untracked = ctx;
    untracked.tracker = nullptr;
    return std::make_unique<SyntheticRun>(naive_->prepare(spec, device, untracked, io), ctx.tracker,
                                          curve_.bytes(v) - tensor_bytes(io),
                                          std::chrono::microseconds(curve_.sleep_us(v)));
  }

 private:
  Curve curve_;
  TuneAxis axis_;
  Provider* naive_;
};

Spec tiny() {
  Spec s;
  s.q_heads = s.kv_heads = 1;
  s.q_len = s.kv_len = 8;
  s.head_dim = 8;
  s.dtype = DType::fp32;
  return s;
}

TuneOptions quick(TuneLimits limits) {
  TuneOptions o;
  o.limits = limits;
  o.run.measure.rule.min_time_s = 0.001;
  o.run.measure.rule.timeout_s = 0.05;
  o.run.measure.rule.min_samples = 3;
  o.run.trace_kernels = false;
  o.refine_optimum = 0;  // the boundary search alone; refinement has its own test
  return o;
}

TuneResult run_tune(const Curve& c, const TuneOptions& o, const Spec& spec = tiny()) {
  SyntheticProvider p(c, o.axis);
  auto engine = make_cpu_engine(1);
  auto executor = make_in_process_executor(Engines{engine.get(), nullptr}, o.run);
  return tune(spec, p, *executor, o);
}

std::vector<int64_t> values(const TuneResult& r) {
  std::vector<int64_t> v;
  for (const TunePoint& p : r.curve) v.push_back(p.value);
  return v;
}

// Rows with exact figures, no timing noise: peak memory, tokens/s and p95 as functions of the
// batch. The tests of the search's logic use it, so no wall clock decides what they see.
class ScriptedExecutor final : public Executor {
 public:
  ScriptedExecutor(
      std::function<int64_t(int64_t)> bytes, std::function<double(int64_t)> tokens,
      std::function<double(int64_t)> p95_us = [](int64_t) { return 1000.0; })
      : bytes_(std::move(bytes)), tokens_(std::move(tokens)), p95_us_(std::move(p95_us)) {}
  bool has_engine(DeviceKind) const override { return true; }
  const Fingerprint& fingerprint(DeviceKind) override { return env_; }
  const Fingerprint& fingerprint(const Provider&) override { return env_; }
  std::optional<Result> run(const Point& point) override {
    Result r;
    r.spec = point.spec;
    r.status = Status::passed;
    r.memory.peak_bytes = bytes_(point.spec.batch);
    r.tokens_per_s = tokens_(point.spec.batch);
    r.timing.p95_us = p95_us_(point.spec.batch);
    r.timing.median_us = r.timing.p95_us;
    r.timing.samples = 59;
    return r;
  }

 private:
  std::function<int64_t(int64_t)> bytes_;
  std::function<double(int64_t)> tokens_;
  std::function<double(int64_t)> p95_us_;
  Fingerprint env_;
};

// A batch of `b` sequences whose launch takes `seconds`: tokens/s as the rows compute it (one
// query token per sequence of tiny()'s 8 counts the same for every batch, so b / seconds ranks
// the batches as the real figure does).
double tokens(int64_t b, double seconds) {
  return double(b) / seconds;
}

TEST(Tuner, FindsTheExactMemoryBoundary) {
  Curve c;
  c.bytes = [](int64_t b) { return 3 * kMiB + b * kMiB; };  // 20 MiB at batch 17
  TuneOptions o = quick({20 * kMiB, std::nullopt});
  o.run.memory_limit_bytes = 20 * kMiB;  // what `attnprof tune --max-memory` sets
  o.run.measure.rule.min_samples = 12;
  const TuneResult r = run_tune(c, o);
  ASSERT_TRUE(r.largest.has_value()) << r.boundary;
  EXPECT_EQ(*r.largest, 17);
  // Over the memory limit, the point cannot fit: sampled 10 times, not to convergence.
  EXPECT_EQ(r.at(18)->result.timing.stop_reason, "over_memory_limit");
  EXPECT_LE(r.at(18)->result.timing.samples, 10);
  EXPECT_NE(r.at(17)->result.timing.stop_reason, "over_memory_limit");
  EXPECT_GE(r.at(17)->result.timing.samples, 12);
  // Batches 1 and 2 put the line of peak memory through 20 MiB at 17: one point there, one above.
  EXPECT_EQ(values(r), (std::vector<int64_t>{1, 2, 17, 18}));
  EXPECT_EQ(r.at(17)->result.memory.peak_bytes, 20 * kMiB);
  EXPECT_TRUE(r.at(17)->fits);
  EXPECT_FALSE(r.at(18)->fits);
  EXPECT_EQ(r.boundary, "batch 18: peak memory 21.0 MiB > limit 20.0 MiB");
  for (const TunePoint& p : r.curve) EXPECT_EQ(p.result.spec.batch, p.value);
}

TEST(Tuner, HonoursTheP95Limit) {
  SyntheticProvider p(Curve{}, TuneAxis::batch);
  // p95 grows 10 ms per batch element: 5 is 50 ms, 6 is 60 ms, over the 59.5 ms limit.
  ScriptedExecutor e([](int64_t) { return kMiB; },
                     [](int64_t b) { return tokens(b, 0.01 * double(b)); },
                     [](int64_t b) { return 10000.0 * double(b); });
  const TuneResult r = tune(tiny(), p, e, quick({std::nullopt, 59500.0}));
  ASSERT_TRUE(r.largest.has_value()) << r.boundary;
  EXPECT_EQ(*r.largest, 5);
  // 1 and 2 put the line of p95 through the limit at 5.95: 5 fits, 6 does not.
  EXPECT_EQ(values(r), (std::vector<int64_t>{1, 2, 5, 6}));
  EXPECT_EQ(r.boundary, "batch 6: p95 60.0 ms > limit 59.5 ms");
}

// The same search with real points (the CPU engine, a provider that sleeps): a p95 limit is met
// by measured p95s. Only what no busy machine can move is asserted: 6 sleeps 60 ms, never under
// the 59.5 ms limit; 1 sleeps 10 ms, far under it.
TEST(Tuner, HonoursTheP95LimitWithMeasuredPoints) {
  Curve c;
  c.sleep_us = [](int64_t b) { return b * 10000; };
  const TuneResult r = run_tune(c, quick({std::nullopt, 59500.0}));
  ASSERT_TRUE(r.largest.has_value()) << r.boundary;
  EXPECT_LE(*r.largest, 5);
  ASSERT_NE(r.at(1), nullptr);
  EXPECT_TRUE(r.at(1)->fits);
  for (const TunePoint& pt : r.curve) {
    if (pt.value >= 6) {
      EXPECT_FALSE(pt.fits) << pt.value;
    }
  }
}

TEST(Tuner, OptimalBatchIsTheBestThroughputAmongThoseThatFit) {
  SyntheticProvider p(Curve{}, TuneAxis::batch);
  // Batch 5 is the largest under 6 MiB; 10 ms up to batch 2, then 10 ms more per element:
  // tokens/s peaks at batch 2.
  const auto seconds = [](int64_t b) { return b <= 2 ? 0.01 : 0.01 + 0.01 * double(b - 2); };
  ScriptedExecutor e([](int64_t b) { return (b + 1) * kMiB; },
                     [=](int64_t b) { return tokens(b, seconds(b)); });
  const TuneResult r = tune(tiny(), p, e, quick({6 * kMiB, std::nullopt}));
  ASSERT_TRUE(r.largest && r.optimal) << r.boundary;
  EXPECT_EQ(*r.largest, 5);
  EXPECT_EQ(*r.optimal, 2);
  const std::string summary = format_tune_summary({r}, TuneAxis::batch);
  EXPECT_NE(summary.find("optimal batch"), std::string::npos) << summary;
  EXPECT_NE(format_tune_curve(r).find("yes (optimal)"), std::string::npos);
}

// Throughput that peaks at batch 12 and falls after it, under a memory limit met at 40: the
// jump from 2 to 40 passes the peak, and the refinement finds it between the measured values.
TEST(Tuner, RefinementFindsAnOptimumBetweenTheMeasuredValues) {
  SyntheticProvider p(Curve{}, TuneAxis::batch);
  const auto seconds = [](int64_t b) { return b <= 12 ? 0.01 : 0.01 * double(b * b) / 144; };
  ScriptedExecutor e([](int64_t b) { return (b + 1) * kMiB; },
                     [=](int64_t b) { return tokens(b, seconds(b)); });
  TuneOptions o = quick({41 * kMiB, std::nullopt});
  o.refine_optimum = 4;
  const TuneResult r = tune(tiny(), p, e, o);
  ASSERT_TRUE(r.largest && r.optimal) << r.boundary;
  EXPECT_EQ(*r.largest, 40);
  EXPECT_EQ(*r.optimal, 12);
  EXPECT_EQ(values(r), (std::vector<int64_t>{1, 2, 7, 12, 21, 30, 40, 41}));
}

// Throughput that saturates at batch 8 and then stays within 1% (noise): after the boundary one
// point in the wide gap from 2 to 100 finds the plateau, and nothing more is refined there, where
// more points only chase the noise; a neighbor 5% below the optimum is refined toward as before.
TEST(Tuner, RefinementLeavesAFlatCurveAlone) {
  const auto bytes = [](int64_t b) { return (b + 1) * kMiB; };
  TuneOptions o = quick({101 * kMiB, std::nullopt});
  o.refine_optimum = 4;
  SyntheticProvider p(Curve{}, TuneAxis::batch);
  {
    ScriptedExecutor flat(bytes, [](int64_t b) {
      return b < 8 ? 1000.0 * double(b) : 8000.0 * (1 + 0.01 * double(b % 3) / 2);
    });
    const TuneResult r = tune(tiny(), p, flat, o);
    EXPECT_EQ(values(r), (std::vector<int64_t>{1, 2, 51, 100, 101}));
    EXPECT_EQ(*r.largest, 100);
  }
  {
    // 5% below the best at 100 on the way to it: the gap is refined.
    ScriptedExecutor rising(bytes, [](int64_t b) {
      return b < 8 ? 1000.0 * double(b) : b < 100 ? 7600.0 : 8000.0;
    });
    const TuneResult r = tune(tiny(), p, rising, o);
    EXPECT_GT(r.curve.size(), 5u) << testing::PrintToString(values(r));
  }
}

// A relative resolution: the bracket closes once it is within 5% of the largest value that fits.
TEST(Tuner, RelativeResolutionStopsWithinAShareOfTheBatch) {
  Curve c;
  c.oom_above = 1000;  // no measured quantity to interpolate: the bracket is halved
  TuneOptions o = quick({int64_t{1} << 40, std::nullopt});
  o.relative_resolution = 0.05;
  const TuneResult r = run_tune(c, o);
  ASSERT_TRUE(r.largest.has_value()) << r.boundary;
  EXPECT_LE(*r.largest, 1000);
  EXPECT_GE(*r.largest, 950);
  // The smallest value measured above the largest that fits failed, within 5% of it.
  const auto above = std::find_if(r.curve.begin(), r.curve.end(),
                                  [&](const TunePoint& p) { return p.value > *r.largest; });
  ASSERT_NE(above, r.curve.end());
  EXPECT_FALSE(above->fits);
  EXPECT_LE(double(above->value - *r.largest), 0.05 * double(*r.largest));
  EXPECT_EQ(r.curve.size(), 15u);  // doubling to 1024 is 11 points, then 768, 896, 960, 1008
}

TEST(Tuner, OutOfMemoryIsABoundaryNotACrash) {
  Curve c;
  c.oom_above = 12;
  const TuneResult r = run_tune(c, quick({int64_t{1} << 40, std::nullopt}));
  ASSERT_TRUE(r.largest.has_value());
  EXPECT_EQ(*r.largest, 12);
  EXPECT_EQ(r.at(13)->result.status, Status::oom);
  EXPECT_EQ(r.boundary, "batch 13: oom: synthetic: out of memory");
}

TEST(Tuner, NoBatchFitsIsAClearResult) {
  Curve c;
  c.bytes = [](int64_t b) { return (4 + b) * kMiB; };
  const TuneResult r = run_tune(c, quick({2 * kMiB, std::nullopt}));
  EXPECT_FALSE(r.largest.has_value());
  EXPECT_FALSE(r.optimal.has_value());
  EXPECT_EQ(values(r), std::vector<int64_t>{1});
  EXPECT_EQ(r.boundary, "batch 1: peak memory 5.00 MiB > limit 2.00 MiB");
  const std::string summary = format_tune_summary({r}, TuneAxis::batch);
  EXPECT_NE(summary.find("no batch fits: batch 1: peak memory"), std::string::npos) << summary;
  const auto json = nlohmann::json::parse(tune_summary_json({r}, {2 * kMiB, std::nullopt}));
  EXPECT_FALSE(json["results"][0]["fits"].get<bool>());
  EXPECT_TRUE(json["results"][0]["largest"].is_null());
}

TEST(Tuner, UnsupportedProviderFitsNothingWithItsReason) {
  Curve c;
  c.supported = false;
  const TuneResult r = run_tune(c, quick({kMiB, std::nullopt}));
  EXPECT_FALSE(r.largest.has_value());
  EXPECT_EQ(r.boundary, "batch 1: not_supported: synthetic: never supported");
}

TEST(Tuner, StopsAtTheSearchCap) {
  TuneOptions o = quick({int64_t{1} << 40, std::nullopt});
  o.max_value = 6;
  const TuneResult r = run_tune(Curve{}, o);
  EXPECT_EQ(values(r), (std::vector<int64_t>{1, 2, 4, 6}));
  EXPECT_EQ(r.largest, 6);
  EXPECT_EQ(r.boundary, "reached the search cap (batch 6)");
}

TEST(Tuner, MaxSeqFindsTheLongestSequenceBeforeOom) {
  Curve c;
  c.oom_above = 300;
  c.bytes = [](int64_t n) { return n * 1024; };
  TuneOptions o = quick({});
  o.axis = TuneAxis::seq;
  o.start = 8;
  const TuneResult r = run_tune(c, o);
  ASSERT_TRUE(r.largest.has_value()) << r.boundary;
  EXPECT_EQ(*r.largest, 300);
  EXPECT_EQ(r.boundary.rfind("seq 301: oom", 0), 0u) << r.boundary;
  for (const TunePoint& p : r.curve) {
    EXPECT_EQ(p.result.spec.q_len, p.value);
    EXPECT_EQ(p.result.spec.kv_len, p.value);
    EXPECT_EQ(p.result.spec.batch, 1);
  }
  // A resolution stops the search at a multiple of it above the last doubling.
  o.resolution = 32;
  const TuneResult coarse = run_tune(c, o);
  EXPECT_EQ(coarse.largest, 288);  // 256 + 32; 320 is out of memory
}

TEST(Tuner, DecodeGrowsOnlyTheKvLength) {
  Spec decode = tiny();
  decode.q_len = 1;
  Curve c;
  c.oom_above = 64;
  TuneOptions o = quick({});
  o.axis = TuneAxis::seq;
  o.start = 16;
  const TuneResult r = run_tune(c, o, decode);
  EXPECT_EQ(r.largest, 64);
  for (const TunePoint& p : r.curve) EXPECT_EQ(p.result.spec.q_len, 1);
}

}  // namespace
}  // namespace attnprof
