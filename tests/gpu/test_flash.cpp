// attnprof's fused prefill kernels on the GPU: cuda.flash (sm80+) and cuda.flash.sm90 (Hopper,
// under both of its schedules: the consumer warpgroups taking turns and not). Every row of O and
// the LSE against the host's fp64 reference and the device check, over the shapes they take:
// head dims 64 and 128, fp16 and bf16, every mask, Nq != Nk both ways, lengths that are no
// multiple of a tile, MHA, GQA and MQA, both layouts, ragged batches, softcap and sinks;
// relaunches; and what they refuse.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "attnprof/ragged.hpp"
#include "attnprof/verify.hpp"
#include "engine_test_util.hpp"
#include "measure/cuda/device_verify.hpp"
#include "one_point.hpp"
#include "providers/factories.hpp"
#include "row_checks.hpp"
#include "test_specs.hpp"

namespace attnprof {
namespace {

using namespace testing_specs;

cuda::CudaEngine& engine() {
  return testing::process_engine();
}

Spec variant(Spec s, std::string lens, double softcap = 0, bool sinks = false) {
  s.seqlens = std::move(lens);
  s.softcap = softcap;
  s.sinks = sinks;
  return s;
}

// A kernel under test: its provider and, for cuda.flash.sm90, its schedule (its setting
// `schedule`, read when a run is prepared).
struct Kernel {
  const char* label;
  std::unique_ptr<Provider> (*make)();
  const char* schedule;  // null: the default
  bool hopper_only;
};
const Kernel kKernels[] = {
    {"flash", make_cuda_flash, nullptr, false},
    {"sm90", make_cuda_flash_sm90, nullptr, true},
    {"sm90_nopingpong", make_cuda_flash_sm90, "nopingpong", true},
};

void PrintTo(const Kernel& k, std::ostream* os) {
  *os << k.label;
}

// The kernel's schedule, the settings its points are prepared under.
class FlashKernels : public ::testing::TestWithParam<Kernel> {
 protected:
  static Settings settings() {
    return GetParam().schedule != nullptr ? Settings{{"schedule", GetParam().schedule}}
                                          : Settings{};
  }
};

bool hopper() {
  const Device& d = engine().device();
  return d.cc_major == 9 && d.cc_minor == 0;
}

#define REQUIRE_KERNEL() \
  REQUIRE_ENGINE();      \
  if (GetParam().hopper_only && !hopper()) GTEST_SKIP() << "built for sm_90a only"

std::vector<Spec> cases() {
  return {
      make_spec(1, 4, 4, 1000, 1000, 128, bf16, kNone),
      make_spec(2, 8, 2, 777, 777, 128, fp16, kCausal),
      make_spec(1, 8, 1, 300, 1234, 128, bf16, kCausalBr),  // MQA, Nq < Nk
      make_spec(1, 4, 4, 1234, 300, 128, bf16, kCausal),    // Nq > Nk: rows past Nk see 0..Nk-1
      make_spec(1, 4, 2, 1234, 300, 64, fp16, kCausalBr),   // Nq > Nk: early rows see nothing
      make_spec(2, 6, 3, 513, 513, 64, bf16, window(100)),
      make_spec(1, 4, 4, 2048, 2048, 64, fp16, kNone, Mode::fwd, bshd),
      make_spec(1, 8, 2, 1500, 1500, 128, bf16, kCausal, Mode::fwd, bshd),
      make_spec(3, 2, 2, 1, 700, 128, bf16, kCausalBr),  // one query row per sequence
      make_spec(1, 2, 2, 129, 65, 64, bf16, window(7)),
      variant(make_spec(4, 8, 2, 1024, 1024, 128, bf16, kCausal), "uniform:1:1024"),
      variant(make_spec(3, 4, 4, 600, 900, 64, fp16, kCausalBr), "uniform:50:600"),
      variant(make_spec(2, 8, 4, 1000, 1000, 128, bf16, kCausal), "", 50.0),
      variant(make_spec(2, 8, 4, 800, 800, 64, fp16, window(64)), "", 0, true),
      variant(make_spec(1, 4, 2, 333, 999, 128, fp16, kCausalBr), "", 30.0, true),
  };
}

TEST_P(FlashKernels, EveryRowPassesBothChecks) {
  REQUIRE_KERNEL();
  auto p = GetParam().make();
  ASSERT_TRUE(p->availability().available);
  for (const Spec& s : cases()) {
    SCOPED_TRACE(s.label());
    const Support sup = p->supports(s, engine().device());
    ASSERT_TRUE(sup.ok) << sup.reason;
    ASSERT_EQ(variant_refusal(p->traits(), s), "");
    const InputFill fill{.seed = 23};
    testing_specs::OnePoint pt = testing_specs::prepare_point(*p, engine(), s, fill, 1, settings());
    testing::expect_rows_pass_both_checks(s, fill, pt, pt.run->note());
  }
}

// Head dim 256 (cuda.flash.sm90 alone: 64-key tiles, O of 64 x 256 a warpgroup): the same
// checks over each mask, Nq != Nk, MQA/GQA, both layouts, a ragged batch, softcap and sinks.
TEST_P(FlashKernels, HeadDim256EveryRowPassesBothChecks) {
  REQUIRE_KERNEL();
  if (!GetParam().hopper_only) GTEST_SKIP() << "cuda.flash stops at head dim 128";
  auto p = GetParam().make();
  for (const Spec& s : {
           make_spec(1, 4, 2, 1000, 1000, 256, bf16, kNone),
           make_spec(2, 4, 4, 777, 777, 256, fp16, kCausal),
           make_spec(1, 4, 1, 300, 1234, 256, bf16, kCausalBr),  // MQA, Nq < Nk
           make_spec(1, 2, 2, 1234, 300, 256, fp16, kCausalBr),  // Nq > Nk
           make_spec(1, 4, 2, 513, 513, 256, bf16, window(100), Mode::fwd, bshd),
           variant(make_spec(3, 4, 4, 600, 900, 256, fp16, kCausalBr), "uniform:50:600"),
           variant(make_spec(2, 4, 2, 800, 800, 256, bf16, kCausal), "", 30.0, true),
       }) {
    SCOPED_TRACE(s.label());
    const Support sup = p->supports(s, engine().device());
    ASSERT_TRUE(sup.ok) << sup.reason;
    ASSERT_EQ(variant_refusal(p->traits(), s), "");
    const InputFill fill{.seed = 29};
    testing_specs::OnePoint pt = testing_specs::prepare_point(*p, engine(), s, fill, 1, settings());
    testing::expect_rows_pass_both_checks(s, fill, pt, pt.run->note());
  }
}

// The mask-coverage inputs (Q = 0, so every key a row sees gets the same weight; V encodes the
// key index): O's first three dims are the means of j % 64, j / 64 % 256 and j % 7 over the
// keys the mask lets the row see, computed from Mask::visible alone. Short rows in fp16, so
// that a mask one key off moves a mean by more than the rounding.
TEST_P(FlashKernels, MaskCoverageMatchesTheMaskDefinition) {
  REQUIRE_KERNEL();
  auto p = GetParam().make();
  for (const Spec& s : {make_spec(1, 2, 1, 200, 200, 64, fp16, kCausal),
                        make_spec(1, 2, 2, 70, 150, 128, fp16, kCausalBr),
                        make_spec(1, 2, 2, 150, 70, 128, fp16, kCausalBr),
                        make_spec(1, 2, 2, 150, 70, 64, fp16, kCausal),
                        make_spec(1, 2, 2, 260, 260, 64, fp16, window(9)),
                        make_spec(1, 2, 2, 130, 140, 128, fp16, kNone)}) {
    SCOPED_TRACE(s.label());
    const InputFill fill{.seed = 5, .pattern = InputPattern::mask_coverage};
    testing_specs::OnePoint pt = testing_specs::prepare_point(*p, engine(), s, fill, 1, settings());
    const HostOutputs out = pt.launch_and_read(engine());
    int64_t bad = 0;
    std::string first_bad;
    for (int64_t i = 0; i < s.q_len; ++i) {
      const CoverageMeans want = coverage_means(s, i);
      for (int d = 0; d < 3; ++d) {
        const double got = out.o[size_t(i * s.head_dim + d)];  // b 0, h 0 (bhsd)
        if (std::abs(got - want.mean[d]) <= 2e-3 * (1 + std::abs(want.mean[d]))) continue;
        if (bad++ == 0)
          first_bad = "row " + std::to_string(i) + " dim " + std::to_string(d) + ": " +
                      std::to_string(got) + " against " + std::to_string(want.mean[d]) + " over " +
                      std::to_string(want.visible) + " keys";
      }
    }
    EXPECT_EQ(bad, 0) << first_bad;
  }
}

// A second launch on the same run reads the same inputs and writes the same bits.
TEST_P(FlashKernels, RelaunchesAreBitIdentical) {
  REQUIRE_KERNEL();
  auto p = GetParam().make();
  const Spec s = make_spec(2, 8, 2, 1111, 1111, 128, bf16, kCausal);
  testing_specs::OnePoint pt =
      testing_specs::prepare_point(*p, engine(), s, InputFill{.seed = 3}, 1, settings());
  testing::expect_relaunch_bit_identical(pt);
}

INSTANTIATE_TEST_SUITE_P(CudaFlash, FlashKernels, ::testing::ValuesIn(kKernels),
                         [](const ::testing::TestParamInfo<Kernel>& i) { return i.param.label; });

TEST_P(FlashKernels, RefusesWhatItIsNotBuiltFor) {
  REQUIRE_KERNEL();
  auto p = GetParam().make();
  const auto reason = [&](const Spec& s) { return p->supports(s, engine().device()).reason; };
  // cuda.flash is built for head dims 64 and 128, cuda.flash.sm90 for 256 as well.
  const bool d256 = GetParam().make == make_cuda_flash_sm90;
  EXPECT_NE(reason(make_spec(1, 8, 8, 64, 64, d256 ? 96 : 256, bf16, kCausal))
                .find(d256 ? "head dims 64, 128 and 256" : "head dims 64 and 128"),
            std::string::npos);
  EXPECT_NE(reason(make_spec(1, 8, 8, 64, 64, 128, bf16, kCausal, Mode::fwd, Layout::bhsd, 64))
                .find("Dv == D"),
            std::string::npos);
  EXPECT_NE(reason(make_spec(1, 8, 8, 64, 64, 128, fp32, kCausal)).find("fp16 and bf16 only"),
            std::string::npos);
  if (GetParam().make == make_cuda_flash) {  // a backward, without softcap or sinks
    EXPECT_TRUE(
        p->supports(make_spec(1, 8, 8, 64, 64, 128, bf16, kCausal, Mode::bwd), engine().device())
            .ok);
    EXPECT_NE(reason(variant(make_spec(1, 8, 8, 64, 64, 128, bf16, kCausal, Mode::bwd), "", 30.0))
                  .find("no logit softcap or sinks"),
              std::string::npos);
    EXPECT_NE(reason(variant(make_spec(2, 8, 8, 64, 64, 128, bf16, kCausal, Mode::fwd_bwd),
                             "uniform:1:64"))
                  .find("uniform batch"),
              std::string::npos);
  } else {  // cuda.flash.sm90: a backward at head dims 64 and 128
    EXPECT_TRUE(
        p->supports(make_spec(1, 8, 8, 64, 64, 128, bf16, kCausal, Mode::bwd), engine().device())
            .ok);
    EXPECT_NE(reason(make_spec(1, 8, 8, 64, 64, 256, bf16, kCausal, Mode::bwd))
                  .find("backward is built for head dims 64 and 128"),
              std::string::npos);
    EXPECT_NE(reason(variant(make_spec(1, 8, 8, 64, 64, 128, bf16, kCausal, Mode::bwd), "", 30.0))
                  .find("no logit softcap or sinks"),
              std::string::npos);
  }
  EXPECT_NE(variant_refusal(p->traits(), paged(make_spec(1, 8, 8, 1, 64, 128, bf16), 16))
                .find("no paged KV cache"),
            std::string::npos);
}

// The backward of cuda.flash and of cuda.flash.sm90 (its key blocks on wgmma; on Hopper): dQ, dK
// and dV against the host's fp64 reference, over head dims 64 and 128, fp16 and bf16, every
// mask, Nq != Nk both ways, lengths no multiple of its blocks, MHA, GQA and MQA, both layouts,
// modes bwd (the forward run when prepared) and fwd_bwd; with dQ by atomic adds and under the
// deterministic option (the setting deterministic=1).
struct Backward {
  const char* label;
  std::unique_ptr<Provider> (*make)();
  bool deterministic;
  bool hopper_only;
};
const Backward kBackwards[] = {
    {"atomic", make_cuda_flash, false, false},
    {"deterministic", make_cuda_flash, true, false},
    {"sm90_atomic", make_cuda_flash_sm90, false, true},
    {"sm90_deterministic", make_cuda_flash_sm90, true, true},
};
void PrintTo(const Backward& k, std::ostream* os) {
  *os << k.label;
}

class CudaFlashBackward : public ::testing::TestWithParam<Backward> {
 protected:
  static Settings settings() {
    return GetParam().deterministic ? Settings{{"deterministic", "1"}} : Settings{};
  }
};

TEST_P(CudaFlashBackward, GradientsMatchTheReference) {
  REQUIRE_KERNEL();
  auto p = GetParam().make();
  const std::vector<Spec> specs = {
      make_spec(1, 4, 4, 17, 17, 64, bf16, kNone, Mode::bwd),
      make_spec(2, 8, 2, 300, 300, 128, fp16, kCausal, Mode::bwd),
      make_spec(1, 8, 1, 200, 777, 128, bf16, kCausalBr, Mode::bwd),  // MQA, Nq < Nk
      make_spec(1, 4, 2, 500, 130, 64, fp16, kCausalBr, Mode::bwd),   // early rows see nothing
      make_spec(1, 4, 4, 400, 150, 128, bf16, kCausal, Mode::bwd, bshd),
      make_spec(2, 6, 3, 513, 513, 64, bf16, window(100), Mode::bwd),
      make_spec(1, 8, 2, 1000, 1000, 128, bf16, kCausal, Mode::fwd_bwd, bshd),
      make_spec(1, 2, 2, 129, 65, 64, fp16, window(7), Mode::fwd_bwd),
  };
  for (const Spec& s : specs) {
    SCOPED_TRACE(s.label());
    const Support sup = p->supports(s, engine().device());
    ASSERT_TRUE(sup.ok) << sup.reason;
    ASSERT_EQ(variant_refusal(p->traits(), s), "");
    testing_specs::OnePoint pt =
        testing_specs::prepare_point(*p, engine(), s, InputFill{.seed = 29}, 1, settings());
    EXPECT_EQ(pt.run->note().find("deterministic") != std::string::npos, GetParam().deterministic)
        << pt.run->note();
    const HostOutputs out = pt.launch_and_read(engine());
    const VerifyResult v = verify_outputs(s, pt.fill, out);
    EXPECT_TRUE(verify_passed(v)) << "rel err " << v.rel_l2_err << " (bound " << v.tolerance
                                  << "), rows " << v.rows_checked << " of " << v.rows_total << "; "
                                  << v.detail << "; " << pt.run->note();
    EXPECT_EQ(v.nan_count, 0) << v.detail;
  }
}

// The deterministic option's point: dQ (and dK, dV) the same bits on every launch, GQA and a
// causal mask included.
TEST_P(CudaFlashBackward, DeterministicRelaunchesAreBitIdentical) {
  REQUIRE_KERNEL();
  if (!GetParam().deterministic) GTEST_SKIP() << "dQ by atomic adds may differ in its last bits";
  auto p = GetParam().make();
  const Spec s = make_spec(2, 8, 2, 777, 777, 128, bf16, kCausal, Mode::bwd);
  testing_specs::OnePoint pt =
      testing_specs::prepare_point(*p, engine(), s, InputFill{.seed = 5}, 1, settings());
  const HostOutputs a = pt.launch_and_read(engine());
  const HostOutputs b = pt.launch_and_read(engine());
  EXPECT_EQ(a.dq, b.dq);
  EXPECT_EQ(a.dk, b.dk);
  EXPECT_EQ(a.dv, b.dv);
}

INSTANTIATE_TEST_SUITE_P(Flash, CudaFlashBackward, ::testing::ValuesIn(kBackwards),
                         [](const ::testing::TestParamInfo<Backward>& i) { return i.param.label; });

// cuda.flash's backward as the host sees it (runs without a GPU): what it takes, what it refuses
// and says why, and the workspace each dQ form needs.
TEST(CudaFlashBackwardHost, SupportsAndWorkspace) {
  auto p = make_cuda_flash();
  const Device h200 = described_gpu("NVIDIA H200", 9);
  const Spec s = make_spec(2, 8, 2, 300, 300, 128, bf16, kCausal, Mode::bwd);
  EXPECT_TRUE(p->supports(s, h200).ok) << p->supports(s, h200).reason;
  EXPECT_NE(p->supports(variant(s, "", 30.0), h200).reason.find("no logit softcap or sinks"),
            std::string::npos);
  EXPECT_NE(p->supports(variant(s, "uniform:1:64"), h200).reason.find("uniform batch"),
            std::string::npos);
  const Spec fwd = make_spec(2, 8, 2, 300, 300, 128, bf16, kCausal);
  EXPECT_EQ(p->workspace_estimate(fwd), 0);
  EXPECT_EQ(p->workspace_estimate(s), int64_t{2} * 8 * 300 * (128 + 1) * 4);  // dQ's fp32 sum, D
  EXPECT_EQ(p->workspace_estimate(s, {{"deterministic", "1"}}), int64_t{2} * 8 * 300 * 4);  // D
  EXPECT_EQ(make_cuda_flash_sm90()->workspace_estimate(s, {{"deterministic", "1"}}),
            int64_t{2} * 8 * 300 * 4);  // its own setting
}

// cuda.flash.sm90 takes a described H200 and says why not an A100 (host code: runs without a
// GPU).
TEST(CudaFlashSm90, RefusesOtherDevices) {
  auto p = make_cuda_flash_sm90();
  const Device h200 = described_gpu("NVIDIA H200", 9), a100 = described_gpu("NVIDIA A100", 8);
  const Spec s = make_spec(1, 8, 8, 64, 64, 128, bf16, kCausal);
  EXPECT_TRUE(p->supports(s, h200).ok) << p->supports(s, h200).reason;
  const Spec d256 = make_spec(1, 8, 8, 64, 64, 256, bf16, kCausal);
  EXPECT_TRUE(p->supports(d256, h200).ok) << p->supports(d256, h200).reason;
  EXPECT_FALSE(p->supports(make_spec(1, 8, 8, 64, 64, 96, bf16, kCausal), h200).ok);
  // Its backward: head dims 64 and 128, the workspace as cuda.flash's.
  const Spec bwd = make_spec(2, 8, 2, 300, 300, 64, fp16, kCausal, Mode::bwd);
  EXPECT_TRUE(p->supports(bwd, h200).ok) << p->supports(bwd, h200).reason;
  EXPECT_NE(p->supports(make_spec(1, 8, 8, 64, 64, 256, bf16, kCausal, Mode::fwd_bwd), h200)
                .reason.find("backward is built for head dims 64 and 128"),
            std::string::npos);
  EXPECT_NE(p->supports(variant(bwd, "uniform:1:64"), h200).reason.find("uniform batch"),
            std::string::npos);
  EXPECT_EQ(p->workspace_estimate(bwd), int64_t{2} * 8 * 300 * (64 + 1) * 4);
  EXPECT_EQ(p->supports(s, a100).reason,
            "cuda.flash.sm90 is built for sm_90a only (wgmma, TMA; Hopper); NVIDIA A100 is compute "
            "capability 8.0");
}

}  // namespace
}  // namespace attnprof
