// Roofline placement: the point against the ridge, the fused kernels only where every matmul
// is theirs, and honest notes for what cannot be placed.
#include <gtest/gtest.h>

#include "attnprof/model.hpp"
#include "attnprof/trace.hpp"
#include "trace_fixtures.hpp"

namespace attnprof {
namespace {

using testing::kernel;
using testing::phased_trace;

const Ceilings kH200{800.0, 4.0, "test"};  // ridge 200 FLOP/byte

bool any_note(const Roofline& r, std::string_view text) {
  for (const std::string& n : r.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(Roofline, FusedPointIsComputeBoundAndItsKernelsArePlaced) {
  Result t = phased_trace("cudnn.sdpa", 2);  // B2 H16 N8192 D128 bf16
  t.trace->device_events = {kernel("cudnn_generated_fort_native_sdpa_x", 300'000, 400'000),
                            kernel("cudnn_generated_fort_native_sdpa_x", 400'000, 500'000),
                            kernel("convert_kernel", 500'000, 520'000)};
  const Breakdown b = make_breakdown(t);
  const Roofline r = place_on_roofline(t, b, kH200);
  ASSERT_EQ(r.placements.size(), 2u);
  const RooflinePlacement& point = r.placements[0];
  EXPECT_EQ(point.what, "point");
  EXPECT_DOUBLE_EQ(point.flops, flops(t.spec));
  EXPECT_DOUBLE_EQ(point.bytes, min_bytes(t.spec));
  EXPECT_DOUBLE_EQ(point.time_us, 110.0);  // 220 µs of kernels over 2 launches
  EXPECT_DOUBLE_EQ(point.intensity, flops(t.spec) / min_bytes(t.spec));
  EXPECT_GT(point.intensity, kH200.ridge());
  EXPECT_EQ(point.bound, "compute");
  EXPECT_NEAR(point.tflops, flops(t.spec) / 110e-6 / 1e12, 1e-9);
  EXPECT_NEAR(point.pct_peak_flops, 100.0 * point.tflops / 800.0, 1e-9);
  const RooflinePlacement& fused = r.placements[1];
  EXPECT_EQ(fused.what, "fused attention kernels");
  EXPECT_DOUBLE_EQ(fused.time_us, 100.0);
  EXPECT_TRUE(any_note(r, "1 softmax/elementwise/other event(s)"));
}

TEST(Roofline, GemmKernelsAreNotPlacedAndSaySo) {
  Result t = phased_trace("cuda.naive", 1);
  t.spec.q_len = t.spec.kv_len = 1;  // decode-like: tiny intensity
  t.trace->device_events = {kernel("nvjet_sm90_a", 300'000, 301'000),
                            kernel("masked_softmax_kernel", 301'000, 302'000),
                            kernel("nvjet_sm90_b", 302'000, 303'000)};
  const Roofline r = place_on_roofline(t, make_breakdown(t), kH200);
  ASSERT_EQ(r.placements.size(), 1u);
  EXPECT_EQ(r.placements[0].bound, "memory");
  EXPECT_TRUE(any_note(r, "2 GEMM kernel launch(es): per-kernel FLOPs unknown"));
}

TEST(Roofline, FusedAndGemmTogetherPlaceOnlyThePoint) {
  Result t = phased_trace("torch.sdpa.flash", 1);
  t.trace->device_events = {kernel("flash_fwd_kernel", 300'000, 400'000),
                            kernel("nvjet_sm90_a", 400'000, 410'000)};
  const Roofline r = place_on_roofline(t, make_breakdown(t), kH200);
  EXPECT_EQ(r.placements.size(), 1u);
  EXPECT_TRUE(any_note(r, "fused attention kernels not placed"));
}

TEST(Roofline, WithoutCeilingsRatesButNoBound) {
  Result t = phased_trace("cpu.naive", 2);
  const Roofline r = place_on_roofline(t, make_breakdown(t), std::nullopt);
  ASSERT_EQ(r.placements.size(), 1u);
  EXPECT_EQ(r.placements[0].bound, "");
  EXPECT_DOUBLE_EQ(r.placements[0].time_us, 350.0);  // the timed range (700 µs) over 2 launches
  EXPECT_TRUE(any_note(r, "no ceilings"));
  EXPECT_NE(render_roofline(r, std::nullopt, false).find("point"), std::string::npos);
}

TEST(Roofline, NothingToPlaceForAFailedPoint) {
  Result t = phased_trace("cuda.naive", 1);
  t.status = Status::failed;
  const Roofline r = place_on_roofline(t, make_breakdown(t), kH200);
  EXPECT_TRUE(r.placements.empty());
  EXPECT_FALSE(r.notes.empty());
}

}  // namespace
}  // namespace attnprof
