// The kernel breakdown: time shares over the timed range only, counts per launch, the kernel
// table, and the flags (fused path with casts, host copies, kernels off the timed stream).
#include <gtest/gtest.h>

#include "attnprof/trace.hpp"
#include "trace_fixtures.hpp"

namespace attnprof {
namespace {

using testing::kernel;
using testing::memcpy_event;
using testing::phased_trace;

const char* kGemm = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT";
const char* kSoftmax =
    "void attnprof::cuda::(anonymous namespace)::masked_softmax_kernel<__nv_bfloat16, "
    "8>(__nv_bfloat16 const*, __nv_bfloat16*, long, long, long, attnprof::cuda::RowMask)";
const char* kFused =
    "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_"
    "cga1x1x1_kernel0_0";
const char* kCast =
    "attnprof::cuda::(anonymous namespace)::convert_kernel(attnprof::cuda::TensorRef, "
    "attnprof::cuda::TensorRef, attnprof::cuda::Dims4, float)";

// cuda.naive, two timed launches: GEMM 60 µs, softmax 30 µs, GEMM 10 µs each; the prepare and
// verify phases run kernels too, which the breakdown must leave out.
Result naive_trace() {
  Result t = phased_trace("cuda.naive", 2);
  t.trace->device_events = {kernel("fill_random_kernel", 10'000, 20'000),
                            kernel(kGemm, 150'000, 160'000)};
  for (uint64_t base : {300'000u, 500'000u}) {
    t.trace->device_events.push_back(kernel(kGemm, base, base + 60'000));
    t.trace->device_events.push_back(kernel(kSoftmax, base + 60'000, base + 90'000));
    t.trace->device_events.push_back(kernel(kGemm, base + 90'000, base + 100'000));
  }
  return t;
}

TEST(Breakdown, SharesCountsAndTotalsOverTheTimedRange) {
  const Breakdown b = make_breakdown(naive_trace());
  EXPECT_EQ(b.launches, 2);
  EXPECT_DOUBLE_EQ(b.total_us, 200.0);
  ASSERT_EQ(b.categories.size(), 5u);
  EXPECT_EQ(b.row(KernelCategory::gemm).count, 4);
  EXPECT_DOUBLE_EQ(b.row(KernelCategory::gemm).total_us, 140.0);
  EXPECT_DOUBLE_EQ(b.row(KernelCategory::gemm).share, 0.7);
  EXPECT_EQ(b.row(KernelCategory::softmax_reduction).count, 2);
  EXPECT_DOUBLE_EQ(b.row(KernelCategory::softmax_reduction).share, 0.3);
  EXPECT_EQ(b.row(KernelCategory::other).count, 0);  // the fill ran in prepare
  EXPECT_FALSE(b.fused_path);
  EXPECT_TRUE(b.flags.empty());
  ASSERT_EQ(b.kernels.size(), 2u);
  EXPECT_EQ(b.kernels[0].name, kGemm);  // most time first
  EXPECT_EQ(b.kernels[0].count, 4);
  EXPECT_DOUBLE_EQ(b.kernels[1].total_us, 60.0);
}

TEST(Breakdown, WithoutATimedRangeEveryEventCounts) {
  Result t = naive_trace();
  t.trace->ranges.clear();
  EXPECT_DOUBLE_EQ(make_breakdown(t).total_us, 220.0);
}

TEST(Breakdown, FlagsCastsInAFusedPath) {
  Result t = phased_trace("cudnn.sdpa", 1);
  t.trace->device_events = {kernel(kCast, 300'000, 310'000), kernel(kFused, 310'000, 400'000)};
  const Breakdown b = make_breakdown(t);
  EXPECT_TRUE(b.fused_path);
  EXPECT_DOUBLE_EQ(b.row(KernelCategory::elementwise_copy).share, 0.1);
  ASSERT_EQ(b.flags.size(), 1u);
  EXPECT_NE(b.flags[0].find("10.0% of kernel time in elementwise/cast/copy"), std::string::npos)
      << b.flags[0];
  EXPECT_NE(b.flags[0].find("convert_kernel"), std::string::npos) << b.flags[0];
}

TEST(Breakdown, CastsUnderTheLimitOrOutsideAFusedPathAreNotFlagged) {
  Result t = phased_trace("cudnn.sdpa", 1);
  t.trace->device_events = {kernel(kCast, 300'000, 304'000), kernel(kFused, 304'000, 400'000)};
  EXPECT_TRUE(make_breakdown(t).flags.empty());  // 4% <= 5%
  Result math = phased_trace("cuda.math", 1);
  math.trace->device_events = {kernel(kCast, 300'000, 350'000), kernel(kGemm, 350'000, 400'000)};
  EXPECT_TRUE(make_breakdown(math).flags.empty());  // not a fused path: casts are expected
}

TEST(Breakdown, AFusedKernelMakesAFusedPathWhateverTheProviderIsCalled) {
  Result t = phased_trace("torch.sdpa.cudnn", 1);
  t.trace->device_events = {kernel(kCast, 300'000, 320'000), kernel(kFused, 320'000, 400'000)};
  EXPECT_EQ(make_breakdown(t).flags.size(), 1u);
}

TEST(Breakdown, FlagsAFusedProviderThatRanNoFusedKernel) {
  Result t = phased_trace("test.flash", 1);
  t.trace->device_events = {kernel(kGemm, 300'000, 400'000)};
  const Breakdown b = make_breakdown(t);
  ASSERT_EQ(b.flags.size(), 1u);
  EXPECT_NE(b.flags[0].find("no fused-attention kernel ran"), std::string::npos);
}

TEST(Breakdown, FlagsHostCopiesAndKernelsOffTheTimedStream) {
  Result t = phased_trace("cuda.naive", 1);
  t.trace->device_events = {kernel(kGemm, 300'000, 400'000, 7), kernel(kGemm, 400'000, 410'000, 9),
                            memcpy_event("memcpy DtoH", 410'000, 420'000, 4096),
                            memcpy_event("memcpy DtoD", 420'000, 430'000, 4096)};
  const Breakdown b = make_breakdown(t);
  ASSERT_EQ(b.flags.size(), 2u);
  EXPECT_EQ(b.flags[0].rfind("1 host<->device copies", 0), 0u) << b.flags[0];
  EXPECT_EQ(b.flags[1].rfind("1 kernel(s) ran outside the timed stream 7", 0), 0u) << b.flags[1];
  EXPECT_EQ(b.row(KernelCategory::elementwise_copy).count, 2);
}

TEST(Breakdown, FusedIsWhatTheRowDeclaresNotItsName) {
  // A provider whose name says nothing, declaring itself fused, and running no fused kernel.
  Result t = phased_trace("vendor.x", 1);
  t.traits.fused = true;
  t.trace->device_events = {kernel(kGemm, 300'000, 400'000)};
  const Breakdown b = make_breakdown(t);
  EXPECT_TRUE(b.fused_path);
  ASSERT_EQ(b.flags.size(), 1u);
  EXPECT_NE(b.flags[0].find("vendor.x is a fused provider"), std::string::npos) << b.flags[0];
  // The same name declaring nothing is not held to it.
  t.traits.fused = false;
  EXPECT_TRUE(make_breakdown(t).flags.empty());
}

TEST(Breakdown, RendersCategoriesKernelsAndFlags) {
  Result t = phased_trace("cudnn.sdpa", 1);
  t.trace->device_events = {kernel(kCast, 300'000, 310'000), kernel(kFused, 310'000, 400'000)};
  const Breakdown b = make_breakdown(t);
  const std::string plain = render_breakdown(t, b, false);
  EXPECT_NE(plain.find("fused attention"), std::string::npos) << plain;
  EXPECT_NE(plain.find("90.0%"), std::string::npos) << plain;
  EXPECT_NE(plain.find("flag: fused path spends 10.0%"), std::string::npos) << plain;
  const std::string md = render_breakdown(t, b, true);
  EXPECT_NE(md.find("| GEMM"), std::string::npos) << md;
  EXPECT_NE(md.find("- flag: "), std::string::npos) << md;
}

}  // namespace
}  // namespace attnprof
