// Peaks (src/measure/cuda/peaks.cpp, peaks_cache.cpp): datasheets, the cache file and the
// figures a row takes from the peaks (no GPU needed), and the measured figures on the GPU.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "attnprof/peaks.hpp"
#include "engine_test_util.hpp"

namespace attnprof {
namespace {

Peaks h200_like() {
  Peaks p;
  p.device = "NVIDIA H200";
  p.bf16_tflops = 800;
  p.fp16_tflops = 790;
  p.tf32_tflops = 400;
  p.copy_tbps = 4.2;
  p.read_tbps = 4.5;
  return p;
}

TEST(Peaks, DatasheetsOfKnownDevicesOnly) {
  const Datasheet h200 = datasheet_for("NVIDIA H200");
  EXPECT_TRUE(h200.known);
  EXPECT_DOUBLE_EQ(h200.bf16_tflops, 989.4);
  EXPECT_DOUBLE_EQ(h200.hbm_tbps, 4.8);
  EXPECT_DOUBLE_EQ(datasheet_for("NVIDIA H100 80GB HBM3").hbm_tbps, 3.35);
  EXPECT_DOUBLE_EQ(datasheet_for("NVIDIA A100-SXM4-80GB").tf32_tflops, 156);
  EXPECT_FALSE(datasheet_for("NVIDIA H100 PCIe").known);
  EXPECT_FALSE(datasheet_for("NVIDIA GeForce RTX 4090").known);
}

TEST(Peaks, RowsGetPercentOfPeakAndBound) {
  const Peaks p = h200_like();
  EXPECT_DOUBLE_EQ(p.tflops_for(DType::fp32), 400);
  EXPECT_DOUBLE_EQ(p.best_tbps(), 4.5);
  Result r;
  r.spec.dtype = DType::bf16;
  r.timing.median_us = 1000;
  r.tflops = 400;  // half the bf16 peak
  r.gbps = 900;    // a fifth of 4.5 TB/s
  r.flops = 4e11;
  r.bytes = 1e9;  // 400 FLOP/byte, above the bf16 ridge of 800 / 4.5 = 178
  apply_peaks(r, p);
  ASSERT_TRUE(r.pct_peak_flops && r.pct_peak_bw);
  EXPECT_DOUBLE_EQ(*r.pct_peak_flops, 50.0);
  EXPECT_DOUBLE_EQ(*r.pct_peak_bw, 20.0);
  EXPECT_EQ(r.bound, "compute");
  r.bytes = 1e10;  // 40 FLOP/byte
  apply_peaks(r, p);
  EXPECT_EQ(r.bound, "memory");
  Result untimed;
  apply_peaks(untimed, p);
  EXPECT_FALSE(untimed.pct_peak_flops);
  EXPECT_TRUE(untimed.bound.empty());
}

TEST(Peaks, CacheRoundTripsPerDevice) {
  const auto dir = std::filesystem::temp_directory_path() / "attnprof-peaks-test";
  std::filesystem::remove_all(dir);
  ASSERT_EQ(setenv("XDG_CACHE_HOME", dir.c_str(), 1), 0);
  Device d;
  d.kind = DeviceKind::cuda;
  d.name = "NVIDIA H200";
  d.sm_count = 132;
  d.cc_major = 9;
  d.memory_bytes = int64_t{150} << 30;
  EXPECT_FALSE(load_cached_peaks(d));
  Peaks p = h200_like();
  p.key = peaks_key(d);
  p.measured_at = "2026-11-29T00:00:00Z";
  p.env["gpu"] = d.name;
  const std::string path = save_peaks(p);
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(path, peaks_cache_path(p.key));
  EXPECT_EQ(path.rfind((dir / "attnprof" / "peaks-").string(), 0), 0u) << path;
  const auto back = load_cached_peaks(d);
  ASSERT_TRUE(back);
  EXPECT_DOUBLE_EQ(back->bf16_tflops, 800);
  EXPECT_DOUBLE_EQ(back->read_tbps, 4.5);
  EXPECT_EQ(back->env.at("gpu"), "NVIDIA H200");
  // Another device (or driver, or cuBLAS) does not see these figures.
  Device other = d;
  other.sm_count = 114;
  EXPECT_FALSE(load_cached_peaks(other));
  // A damaged file is ignored, not trusted.
  std::ofstream(path) << "{ not json";
  EXPECT_FALSE(load_cached_peaks(d));
  std::filesystem::remove_all(dir);
  unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace attnprof

namespace attnprof::testing {
namespace {

// The measured ceilings on this GPU: every figure positive, none above the datasheet (that
// would be a timing bug), and the matrix and memory figures in a plausible share of it.
TEST_F(CudaEngineTest, MeasuredPeaksArePlausible) {
  const Peaks p = measure_peaks(
      engine(), [](const std::string& line) { std::printf("  peaks: %s\n", line.c_str()); });
  RecordProperty("bf16_tflops", std::to_string(p.bf16_tflops));
  RecordProperty("fp16_tflops", std::to_string(p.fp16_tflops));
  RecordProperty("tf32_tflops", std::to_string(p.tf32_tflops));
  RecordProperty("copy_tbps", std::to_string(p.copy_tbps));
  RecordProperty("read_tbps", std::to_string(p.read_tbps));
  EXPECT_EQ(p.key, peaks_key(engine().device()));
  EXPECT_FALSE(p.measured_at.empty());
  for (double v : {p.bf16_tflops, p.fp16_tflops, p.tf32_tflops, p.copy_tbps, p.read_tbps}) {
    EXPECT_GT(v, 0);
  }
  EXPECT_GT(p.bf16_tflops, 1.5 * p.tf32_tflops) << "tf32 runs at half the bf16 rate";
  const Datasheet ds = datasheet_for(p.device);
  if (!ds.known) GTEST_SKIP() << "no datasheet for " << p.device;
  EXPECT_LE(p.bf16_tflops, ds.bf16_tflops);
  EXPECT_LE(p.fp16_tflops, ds.fp16_tflops);
  EXPECT_LE(p.tf32_tflops, ds.tf32_tflops);
  EXPECT_LE(p.copy_tbps, ds.hbm_tbps);
  EXPECT_LE(p.read_tbps, ds.hbm_tbps);
  EXPECT_GE(p.bf16_tflops, 0.5 * ds.bf16_tflops);
  EXPECT_GE(p.copy_tbps, 0.5 * ds.hbm_tbps);
  EXPECT_GE(p.read_tbps, 0.5 * ds.hbm_tbps);
}

}  // namespace
}  // namespace attnprof::testing
