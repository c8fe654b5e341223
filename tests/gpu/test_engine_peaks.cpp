// The measured ceilings of the GPU (src/measure/cuda/peaks.cpp); the cache and the per-row
// figures are tests/measure/test_peaks.cpp's.
#include <gtest/gtest.h>

#include <cstdio>

#include "attnprof/peaks.hpp"
#include "engine_test_util.hpp"

namespace attnprof::testing {
namespace {

// The measured ceilings on this GPU: every figure positive, none above the datasheet (that
// would be a timing bug), and the matrix and memory figures in a plausible share of it.
TEST_F(CudaEngineTest, MeasuredPeaksArePlausible) {
  const Peaks p = engine().measure_peaks(
      [](const std::string& line) { std::printf("  peaks: %s\n", line.c_str()); });
  RecordProperty("bf16_tflops", std::to_string(p.bf16_tflops));
  RecordProperty("fp16_tflops", std::to_string(p.fp16_tflops));
  RecordProperty("tf32_tflops", std::to_string(p.tf32_tflops));
  RecordProperty("fp8_tflops", std::to_string(p.fp8_tflops));
  RecordProperty("copy_tbps", std::to_string(p.copy_tbps));
  RecordProperty("read_tbps", std::to_string(p.read_tbps));
  EXPECT_EQ(p.key, engine().peaks_key());
  EXPECT_EQ(p.kind, DeviceKind::cuda);
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
  EXPECT_LE(p.fp8_tflops, ds.fp8_tflops);
  if (ds.fp8_tflops > 0) {
    EXPECT_GE(p.fp8_tflops, 1.5 * p.bf16_tflops) << "fp8 runs at twice bf16";
  }
  EXPECT_LE(p.copy_tbps, ds.hbm_tbps);
  EXPECT_LE(p.read_tbps, ds.hbm_tbps);
  EXPECT_GE(p.bf16_tflops, 0.5 * ds.bf16_tflops);
  EXPECT_GE(p.copy_tbps, 0.5 * ds.hbm_tbps);
  EXPECT_GE(p.read_tbps, 0.5 * ds.hbm_tbps);
}

}  // namespace
}  // namespace attnprof::testing
