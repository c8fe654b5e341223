// cudnn.sdpa against the fp64 reference on the device: random shapes over every mask, GQA
// ratio, dtype, layout and mode; decode shapes; the mask-coverage pattern; and shapes cuDNN or
// the provider reject, which must come back as not_supported with a reason.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "attnprof/provider.hpp"
#include "attnprof/reference.hpp"
#include "attnprof/verify.hpp"
#include "engine_test_util.hpp"
#include "one_point.hpp"
#include "providers/cudnn/cudnn_version.hpp"
#include "providers/factories.hpp"
#include "test_specs.hpp"

namespace attnprof {

// gtest prints a parameter with this instead of its bytes. Internal linkage: other test files of
// test_gpu may print Specs their own way.
[[maybe_unused]] static void PrintTo(const Spec& spec, std::ostream* os) {
  *os << spec.label();
}

namespace {

constexpr uint64_t kSeed = 20261129;

// One engine for the suite: its non-blocking stream means launches cannot rely on implicit
// legacy-stream ordering.
cuda::CudaEngine& shared_engine() {
  static cuda::CudaEngine engine(0);
  return engine;
}

class CudnnSdpa : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Availability a = shared_engine().availability(); !a.available) GTEST_SKIP() << a.reason;
    device_ = shared_engine().device();
    provider_ = make_cudnn_sdpa();
    if (Availability a = provider_->availability(); !a.available) GTEST_SKIP() << a.reason;
  }

  MemoryTracker& tracker() { return *shared_engine().tracker(); }

  testing_specs::OnePoint prepare(const Spec& spec, InputPattern pattern = InputPattern::random) {
    return testing_specs::prepare_point(*provider_, shared_engine(), spec, {kSeed, pattern});
  }

  // prepare -> poison -> launch -> read -> verify, as the runner does it.
  VerifyResult run_and_verify(const Spec& spec, InputPattern pattern, HostOutputs* keep = nullptr) {
    EXPECT_TRUE(spec.validate().empty()) << spec.label();
    Support s = provider_->supports(spec, device_);
    EXPECT_TRUE(s.ok) << spec.label() << ": " << s.reason;
    const int64_t base = tracker().current();
    VerifyResult v;
    {
      testing_specs::OnePoint pt = prepare(spec, pattern);
      // Every byte the point holds went through the tracker, workspace included.
      EXPECT_EQ(tracker().current() - base, pt.tensors->bytes() + pt.run->workspace_bytes());
      HostOutputs out = pt.launch_and_read(shared_engine());
      v = verify_outputs(spec, pt.fill, out);
      if (keep) *keep = std::move(out);
    }
    EXPECT_EQ(tracker().current(), base);
    return v;
  }

  Device device_;
  std::unique_ptr<Provider> provider_;
};

using testing_specs::coverage_means;
using testing_specs::make_spec;

using testing_specs::kCausal;
using testing_specs::kCausalBr;
using testing_specs::kNone;
using testing_specs::window;

using testing_specs::bf16;
using testing_specs::bshd;
using testing_specs::fp16;

// --- random inputs vs the fp64 reference -------------------------------------------------

class CudnnSdpaRandom : public CudnnSdpa, public ::testing::WithParamInterface<Spec> {};

TEST_P(CudnnSdpaRandom, MatchesReference) {
  const Spec& spec = GetParam();
  VerifyResult v = run_and_verify(spec, InputPattern::random);
  EXPECT_TRUE(verify_passed(v)) << spec.label() << ": rel err " << v.rel_l2_err << " (bound "
                                << v.tolerance << "), lse err " << v.lse_max_abs_err << ", nan "
                                << v.nan_count << "; " << v.detail;
  EXPECT_EQ(v.nan_count, 0) << v.detail;
  // The forward's log-sum-exp is exposed and therefore checked.
  if (spec.mode != Mode::bwd) {
    EXPECT_GE(v.lse_max_abs_err, 0.0) << "LSE was not checked";
  }
}

std::string spec_name(const ::testing::TestParamInfo<Spec>& info) {
  std::string k = info.param.key();
  for (char& c : k) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return k;
}

// Lengths 1, 17, 129, 1000, 4097; GQA ratios 1, 4, 8; every mask; bf16 and fp16; both layouts.
INSTANTIATE_TEST_SUITE_P(
    Forward, CudnnSdpaRandom,
    ::testing::Values(make_spec(2, 4, 4, 17, 17, 64, bf16, kNone),
                      make_spec(1, 8, 2, 129, 129, 128, fp16, kCausal, Mode::fwd, bshd),
                      make_spec(1, 8, 1, 1000, 1000, 128, bf16, kCausalBr),
                      make_spec(1, 4, 4, 4097, 4097, 64, fp16, window(256)),
                      make_spec(1, 8, 2, 129, 1000, 128, bf16, kCausalBr, Mode::fwd, bshd),
                      make_spec(2, 8, 8, 17, 4097, 128, fp16, kCausal),
                      make_spec(3, 2, 2, 1000, 129, 64, fp16, kCausal),
                      make_spec(1, 8, 1, 1, 1000, 64, bf16, kNone),
                      make_spec(1, 4, 1, 1, 4097, 128, fp16, window(128), Mode::fwd, bshd),
                      make_spec(1, 16, 4, 4097, 4097, 128, bf16, kCausal, Mode::fwd, bshd),
                      make_spec(1, 2, 2, 1000, 1000, 256, bf16, kNone),
                      make_spec(1, 8, 2, 1000, 1000, 64, fp16, window(17), Mode::fwd, bshd)),
    spec_name);

INSTANTIATE_TEST_SUITE_P(
    Backward, CudnnSdpaRandom,
    ::testing::Values(make_spec(1, 4, 4, 17, 17, 64, bf16, kNone, Mode::bwd),
                      make_spec(1, 8, 2, 129, 129, 128, fp16, kCausal, Mode::bwd, bshd),
                      make_spec(1, 8, 1, 1000, 1000, 64, bf16, kCausalBr, Mode::fwd_bwd),
                      make_spec(1, 4, 4, 129, 1000, 128, fp16, window(64), Mode::fwd_bwd),
                      make_spec(2, 4, 1, 1000, 1000, 128, bf16, window(256), Mode::bwd, bshd),
                      make_spec(1, 8, 8, 1, 1000, 64, fp16, kNone, Mode::fwd_bwd),
                      make_spec(1, 2, 2, 4097, 4097, 64, bf16, kCausal, Mode::bwd),
                      make_spec(1, 4, 2, 1000, 1000, 256, bf16, kCausal, Mode::fwd_bwd, bshd)),
    spec_name);

// One query token over a long KV cache: B 2, 32 query / 8 KV heads, D 128, KV 8192.
INSTANTIATE_TEST_SUITE_P(Decode, CudnnSdpaRandom,
                         ::testing::Values(make_spec(2, 32, 8, 1, 8192, 128, bf16, kNone),
                                           make_spec(2, 32, 8, 1, 8192, 128, fp16, kCausalBr,
                                                     Mode::fwd, bshd),
                                           make_spec(1, 32, 8, 1, 8192, 128, bf16, window(4096))),
                         spec_name);

// A paged cache through cuDNN's page tables: decode with pages of 16 and 64 in both layouts, and
// a prefill chunk whose last page is partial (its NaN tail must not be read).
INSTANTIATE_TEST_SUITE_P(
    Paged, CudnnSdpaRandom,
    ::testing::Values(
        testing_specs::paged(make_spec(2, 32, 8, 1, 8192, 128, bf16, kCausalBr), 16),
        testing_specs::paged(make_spec(2, 32, 8, 1, 4097, 128, fp16, kCausalBr, Mode::fwd, bshd),
                             64),
        testing_specs::paged(make_spec(1, 8, 2, 129, 1000, 128, bf16, kCausalBr), 32),
        testing_specs::paged(make_spec(1, 4, 4, 1, 8192, 64, bf16, window(1000)), 16)),
    spec_name);

// --- mask coverage: Q = 0, V encodes the key index -------------------------------------------

// O's dims 0..2 against the mean of the mask-coverage encoding over the visible keys
// (testing_specs::coverage_means).
void expect_visible_means(const Spec& s, const std::vector<float>& o) {
  const int64_t dv = s.dv();
  int64_t bad = 0;
  for (int64_t h = 0; h < s.q_heads; ++h) {
    for (int64_t i = 0; i < s.q_len; ++i) {
      const testing_specs::CoverageMeans cov = coverage_means(s, i);
      const int64_t n = cov.visible;
      ASSERT_GT(n, 0);
      for (int64_t c = 0; c < 3; ++c) {
        const double want = cov.mean[c];
        const double got =
            o[static_cast<size_t>(flat_index(s, 0, h, i, c, s.q_heads, s.q_len, dv))];
        // fp16 holds values below 64 to 1/32; the mean of n values is rounded once more.
        if (std::abs(got - want) > 0.04 && bad++ < 5) {
          ADD_FAILURE() << s.label() << " row " << i << " head " << h << " dim " << c << ": got "
                        << got << ", mean of visible keys " << want << " (" << n << " keys)";
        }
      }
    }
  }
  EXPECT_EQ(bad, 0) << s.label();
}

class CudnnSdpaMaskCoverage : public CudnnSdpa, public ::testing::WithParamInterface<Spec> {};

TEST_P(CudnnSdpaMaskCoverage, OutputIsMeanVisibleKeyIndex) {
  const Spec& spec = GetParam();
  HostOutputs out;
  VerifyResult v = run_and_verify(spec, InputPattern::mask_coverage, &out);
  EXPECT_TRUE(verify_passed(v)) << spec.label() << ": " << v.detail;
  expect_visible_means(spec, out.o);
}

INSTANTIATE_TEST_SUITE_P(
    Masks, CudnnSdpaMaskCoverage,
    ::testing::Values(make_spec(1, 2, 1, 130, 130, 64, fp16, kNone),
                      make_spec(1, 2, 1, 130, 130, 64, fp16, kCausal),
                      make_spec(1, 2, 1, 70, 150, 64, fp16, kCausal, Mode::fwd, bshd),
                      make_spec(1, 2, 1, 70, 150, 64, fp16, kCausalBr),
                      make_spec(1, 2, 1, 150, 70, 64, fp16, kCausal),
                      make_spec(1, 2, 1, 130, 130, 64, fp16, window(5)),
                      make_spec(1, 2, 1, 70, 150, 64, fp16, window(33), Mode::fwd, bshd),
                      make_spec(1, 2, 2, 1, 300, 64, fp16, window(7)),
                      // masks the graph gets in a simpler form (Mask::simplest)
                      make_spec(1, 2, 1, 130, 130, 64, fp16, kCausalBr),
                      make_spec(1, 2, 2, 1, 300, 64, fp16, kCausalBr, Mode::fwd, bshd),
                      make_spec(1, 2, 1, 70, 150, 64, fp16, window(150))),
    spec_name);

// --- what the runner relies on -----------------------------------------------------------

// The last timed launch is verified too: a relaunch after poisoning must rewrite every output.
TEST_F(CudnnSdpa, RelaunchRewritesEveryOutput) {
  const Spec spec = make_spec(1, 8, 2, 257, 257, 128, bf16, kCausal, Mode::fwd_bwd);
  testing_specs::OnePoint pt = prepare(spec);
  HostOutputs first = pt.launch_and_read(shared_engine());
  pt.tensors->poison_outputs();
  pt.run->launch(shared_engine().stream(), pt.io());
  HostOutputs last = pt.launch_and_read(shared_engine());
  const VerifyResult first_check = verify_outputs(spec, pt.fill, first);
  EXPECT_TRUE(verify_passed(first_check)) << first_check.detail;
  const VerifyResult last_check = verify_outputs(spec, pt.fill, last);
  EXPECT_TRUE(verify_passed(last_check)) << last_check.detail;
  // The forward is deterministic; cuDNN's backward accumulates dQ with atomics, so only O and
  // the LSE are compared bit for bit.
  EXPECT_EQ(first.o, last.o);
  EXPECT_EQ(first.lse, last.lse);
  EXPECT_GT(pt.run->workspace_bytes(), 0) << "the backward needs a dQ accumulator";
}

// cudnn.sdpa.infer: cuDNN's inference forward (no log-sum-exp) gives the same verified outputs,
// exposes no LSE, and leaves the backward modes to cudnn.sdpa with the reason.
TEST_F(CudnnSdpa, InferenceForwardMatchesWithoutAnLse) {
  provider_ = make_cudnn_sdpa_infer();
  EXPECT_EQ(provider_->name(), "cudnn.sdpa.infer");
  for (const Spec& spec : {make_spec(2, 32, 8, 1, 4097, 128, bf16, kCausalBr),
                           make_spec(1, 8, 2, 1000, 1000, 128, fp16, kCausal, Mode::fwd, bshd),
                           make_spec(1, 4, 4, 1000, 1000, 64, bf16, window(64))}) {
    HostOutputs out;
    const VerifyResult v = run_and_verify(spec, InputPattern::random, &out);
    EXPECT_TRUE(verify_passed(v)) << spec.label() << ": " << v.detail;
    EXPECT_EQ(v.nan_count, 0) << spec.label();
    EXPECT_TRUE(out.lse.empty()) << spec.label();
    EXPECT_LT(v.lse_max_abs_err, 0.0) << "no LSE is exposed, so none is checked";
  }
  const Support bwd =
      provider_->supports(make_spec(1, 4, 4, 128, 128, 64, bf16, kNone, Mode::bwd), device_);
  EXPECT_FALSE(bwd.ok);
  EXPECT_NE(bwd.reason.find("inference forward"), std::string::npos) << bwd.reason;
}

// A decode step's bottom-right causal mask hides nothing: the graph is built without a mask
// (the graph PyTorch builds for the same call) and the row says so; a real mask is kept.
TEST_F(CudnnSdpa, GraphGetsTheSimplestEquivalentMask) {
  const auto decode = prepare(make_spec(1, 8, 2, 1, 512, 64, bf16, kCausalBr));
  EXPECT_NE(decode.run->note().find("graph built with mask none"), std::string::npos)
      << decode.run->note();
  const auto square = prepare(make_spec(1, 8, 2, 64, 64, 64, bf16, kCausalBr));
  EXPECT_NE(square.run->note().find("mask causal,"), std::string::npos) << square.run->note();
  const auto chunk = prepare(make_spec(1, 8, 2, 64, 512, 64, bf16, kCausalBr));
  EXPECT_EQ(chunk.run->note(), "");
}

TEST_F(CudnnSdpa, TraitsNameTheCudnnVersion) {
  const ProviderTraits t = provider_->traits();
  EXPECT_NE(t.description.find(cudnn::cudnn_runtime_version()), std::string::npos) << t.description;
  EXPECT_EQ(t.library, "cuDNN");
  EXPECT_TRUE(t.fused);
  EXPECT_TRUE(t.writes_lse);
  EXPECT_EQ(provider_->fingerprint().at("cudnn"), cudnn::cudnn_runtime_version());
}

// --- not supported: a result with a reason, never a crash ------------------------------------

TEST_F(CudnnSdpa, Fp32IsNotSupported) {
  Support s = provider_->supports(make_spec(1, 2, 2, 64, 64, 64, DType::fp32, kNone), device_);
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.reason, "cuDNN SDPA needs fp16, bf16 or fp8");
}

TEST_F(CudnnSdpa, UnsupportedHeadDimIsNotSupportedWithAReason) {
  for (int64_t d : {int64_t{4}, int64_t{264}}) {
    const Spec spec = make_spec(1, 2, 2, 64, 64, d, bf16, kNone);
    Support s = provider_->supports(spec, device_);
    EXPECT_FALSE(s.ok) << d;
    EXPECT_NE(s.reason.find("head dim"), std::string::npos) << s.reason;
    // prepare() of a point supports() rejects throws NotSupported with the same words, so a
    // caller that skips supports() still records not_supported, not failed.
    const int64_t base = tracker().current();
    try {
      prepare(spec);
      ADD_FAILURE() << "prepare accepted head dim " << d;
    } catch (const NotSupported& e) {
      EXPECT_EQ(e.reason(), s.reason);
      EXPECT_EQ(std::string(e.what()), "not_supported: " + s.reason);
    }
    EXPECT_EQ(tracker().current(), base) << "nothing may stay allocated";
  }
}

}  // namespace
}  // namespace attnprof
