// The ceilings a row is held against (src/run/ceilings.cpp, src/measure/cpu_peaks.cpp): the CPU
// engine measures its own, a point measures them first where the options allow it and none are
// cached, and every passed row then carries % of peak and the bound.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "attnprof/engine.hpp"
#include "attnprof/peaks.hpp"
#include "attnprof/registry.hpp"
#include "attnprof/runner.hpp"
#include "one_point.hpp"
#include "run/ceilings.hpp"

namespace attnprof {
namespace {

// A cache folder of this test's own, so nothing of the user's is read or written.
class Ceilings : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("attnprof_ceilings_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    ASSERT_EQ(setenv("XDG_CACHE_HOME", dir_.c_str(), 1), 0);
  }
  void TearDown() override {
    unsetenv("XDG_CACHE_HOME");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

TEST_F(Ceilings, TheCpuEngineMeasuresItsOwn) {
  auto engine = make_cpu_engine(1);
  int lines = 0;
  const Peaks p = engine->measure_peaks([&](const std::string&) { ++lines; });
  EXPECT_EQ(lines, busy_note(p).empty() ? 3 : 4);  // a fourth when the host was busy meanwhile
  EXPECT_EQ(p.kind, DeviceKind::cpu);
  EXPECT_EQ(p.key, engine->peaks_key());
  EXPECT_NE(p.key.find("threads 1"), std::string::npos) << p.key;
  EXPECT_GT(p.fp32_tflops, 0);
  EXPECT_GT(p.copy_tbps, 0);
  EXPECT_GT(p.read_tbps, 0);
  // Every CPU provider computes in fp32: one matrix rate for every dtype.
  for (DType d : {DType::fp32, DType::fp16, DType::bf16}) EXPECT_EQ(p.tflops_for(d), p.fp32_tflops);
  // The cache keeps the kind and the CPU rate.
  ASSERT_FALSE(save_peaks(p).empty());
  const auto back = load_cached_peaks(p.key);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, DeviceKind::cpu);
  EXPECT_DOUBLE_EQ(back->fp32_tflops, p.fp32_tflops);
}

// "gpu" (what the commands ask) never measures a CPU; "any" does, once, and caches it; the
// point's row then carries % of the measured ceilings and the bound.
TEST_F(Ceilings, APointMeasuresThemFirstWhereAllowedAndItsRowCarriesThem) {
  auto engine = make_cpu_engine(1);
  EXPECT_FALSE(ceilings(*engine, AutoPeaks::gpu));
  EXPECT_FALSE(ceilings(*engine, AutoPeaks::off));
  EXPECT_FALSE(std::filesystem::exists(peaks_cache_path(engine->peaks_key())));

  Spec s;
  s.q_heads = s.kv_heads = 2;
  s.q_len = s.kv_len = 64;
  s.head_dim = 16;
  s.dtype = DType::fp32;
  RunOptions o = testing_specs::quick_run_options();
  o.auto_peaks = AutoPeaks::any;
  const Result r = run_point(s, *find_provider("cpu.naive"), *engine, o);
  ASSERT_EQ(r.status, Status::passed) << r.reason;
  EXPECT_TRUE(std::filesystem::exists(peaks_cache_path(engine->peaks_key())));
  ASSERT_TRUE(r.pct_peak_flops.has_value());
  ASSERT_TRUE(r.pct_peak_bw.has_value());
  EXPECT_GT(*r.pct_peak_flops, 0);
  EXPECT_FALSE(r.bound.empty());
  EXPECT_GT(r.peak_tflops, 0);
  EXPECT_NE(r.peaks_source.find("measured by attnprof"), std::string::npos) << r.peaks_source;
  // Measured once: the next point (even one that may not measure) takes the same figures.
  const auto again = ceilings(*engine, AutoPeaks::off);
  ASSERT_TRUE(again);
  EXPECT_DOUBLE_EQ(again->fp32_tflops, r.peak_tflops);
}

}  // namespace
}  // namespace attnprof
