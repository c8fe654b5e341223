// Peaks (src/measure/peaks_cache.cpp): datasheets, the cache file and the figures a row takes
// from the ceilings. No device needed; the measured figures are tests/gpu/test_engine_peaks.cpp's
// (a GPU) and tests/run/test_ceilings.cpp's (the CPU).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "attnprof/peaks.hpp"

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

// The bf16 ceiling measured at 1500 MHz, a row timed at 1800 MHz: the ceiling it is held against
// at its own clock is 800 * 1800 / 1500 = 960 TFLOP/s; the datasheet's is 989.4.
TEST(Peaks, RowsGetPercentOfTheCeilingAtTheirOwnClockAndOfTheDatasheet) {
  Peaks p = h200_like();
  p.bf16_clock_mhz = 1500;
  p.fp16_clock_mhz = 1600;
  EXPECT_DOUBLE_EQ(p.clock_for(DType::bf16), 1500);
  EXPECT_DOUBLE_EQ(p.clock_for(DType::fp16), 1600);
  EXPECT_DOUBLE_EQ(p.clock_for(DType::fp32), 0);  // not read
  Result r;
  r.spec.dtype = DType::bf16;
  r.timing.median_us = 1000;
  r.timing.clock_mhz = 1800;
  r.tflops = 480;
  r.gbps = 900;
  apply_peaks(r, p);
  EXPECT_DOUBLE_EQ(r.peak_clock_mhz, 1500);
  ASSERT_TRUE(r.pct_peak_flops && r.pct_peak_flops_at_clock && r.pct_datasheet_flops);
  EXPECT_DOUBLE_EQ(*r.pct_peak_flops, 60.0);
  EXPECT_DOUBLE_EQ(*r.pct_peak_flops_at_clock, 50.0);
  EXPECT_DOUBLE_EQ(r.datasheet_tflops, 989.4);
  EXPECT_NEAR(*r.pct_datasheet_flops, 100.0 * 480 / 989.4, 1e-12);
  // A row whose clock was not read, or a ceiling without one, has no clock-scaled figure.
  Result unread = r;
  unread.pct_peak_flops_at_clock.reset();
  unread.timing.clock_mhz = 0;
  apply_peaks(unread, p);
  EXPECT_FALSE(unread.pct_peak_flops_at_clock);
  Result tf32 = r;
  tf32.pct_peak_flops_at_clock.reset();
  tf32.spec.dtype = DType::fp32;
  apply_peaks(tf32, p);
  EXPECT_FALSE(tf32.pct_peak_flops_at_clock);
  // An unknown device has no datasheet figure.
  Peaks other = h200_like();
  other.device = "NVIDIA GeForce RTX 4090";
  Result consumer = r;
  consumer.pct_datasheet_flops.reset();
  apply_peaks(consumer, other);
  EXPECT_DOUBLE_EQ(consumer.datasheet_tflops, 0);
  EXPECT_FALSE(consumer.pct_datasheet_flops);
}

TEST(Peaks, CacheRoundTripsPerKey) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("attnprof-peaks-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ASSERT_EQ(setenv("XDG_CACHE_HOME", dir.c_str(), 1), 0);
  const std::string key = "NVIDIA H200|sm132|cc9.0|mem161061273600|cuda_driver 580";
  EXPECT_FALSE(load_cached_peaks(key));
  Peaks p = h200_like();
  p.key = key;
  p.measured_at = "2026-11-29T00:00:00Z";
  p.env["gpu"] = p.device;
  p.bf16_clock_mhz = 1755;
  p.fp8_clock_mhz = 1410;
  const std::string path = save_peaks(p);
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(path, peaks_cache_path(p.key));
  EXPECT_EQ(path.rfind((dir / "attnprof" / "peaks-").string(), 0), 0u) << path;
  const auto back = load_cached_peaks(key);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, DeviceKind::cuda);
  EXPECT_DOUBLE_EQ(back->bf16_tflops, 800);
  EXPECT_DOUBLE_EQ(back->read_tbps, 4.5);
  EXPECT_DOUBLE_EQ(back->bf16_clock_mhz, 1755);
  EXPECT_DOUBLE_EQ(back->fp8_clock_mhz, 1410);
  EXPECT_EQ(back->env.at("gpu"), "NVIDIA H200");
  // Another device (or driver, or library) does not see these figures.
  EXPECT_FALSE(load_cached_peaks(key + "|sm114"));
  // A damaged file is ignored, not trusted.
  std::ofstream(path) << "{ not json";
  EXPECT_FALSE(load_cached_peaks(key));
  std::filesystem::remove_all(dir);
  unsetenv("XDG_CACHE_HOME");
}

// CPU ceilings measured while other processes ran read low (on this 2-core VM, 89.5 GFLOP/s
// during a test run against 195 idle), and rows held against them read 150% of peak: such figures
// say so, and carry the share in the cache file so an idle run measures them again.
TEST(Peaks, CeilingsOfABusyHostSaySo) {
  Peaks p;
  p.kind = DeviceKind::cpu;
  p.host_busy = 0.05;
  EXPECT_EQ(busy_note(p), "");
  p.host_busy = 0.55;
  EXPECT_NE(busy_note(p).find("55% of its CPU time"), std::string::npos) << busy_note(p);
  EXPECT_NE(to_json(p).find("\"host_busy\": 0.55"), std::string::npos);
}

}  // namespace
}  // namespace attnprof
