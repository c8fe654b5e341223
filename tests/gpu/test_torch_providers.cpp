// The LibTorch providers (src/providers/torch/, built with ATTNPROF_WITH_TORCH) end to end on
// the device through run_point: every point verified against fp64 (NaN poison, rows, both
// the first and the last timed output), GQA, every mask, decode, backward gradients; the SDPA
// backends ATen refuses come back not_supported with ATen's reasons; torch.sdpa.default names
// its choice; every kernel of a timed launch ran on the engine's stream.
#if defined(ATTNPROF_WITH_TORCH)

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <tuple>

#include "attnprof/registry.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/trace.hpp"
#include "engine_test_util.hpp"
#include "test_specs.hpp"

namespace attnprof::testing {
namespace {

using testing_specs::make_spec;

using testing_specs::bf16;
using testing_specs::bshd;
using testing_specs::fp16;
using testing_specs::fp32;
using testing_specs::kCausal;
using testing_specs::kCausalBr;
using testing_specs::kNone;
using testing_specs::window;

RunOptions quick_run() {
  RunOptions o;
  o.measure.rule.min_time_s = 0.02;
  o.measure.rule.timeout_s = 0.5;
  return o;
}

class TorchProviderTest : public CudaEngineTest {
 protected:
  Provider& provider(const std::string& name) {
    Provider* p = find_provider(name);
    EXPECT_NE(p, nullptr) << name;
    return *p;
  }
  Result run(const std::string& name, const Spec& spec) {
    Provider& p = provider(name);
    if (Availability a = p.availability(); !a.available) {
      ADD_FAILURE() << name << " unavailable on a CUDA machine: " << a.reason;
    }
    return run_point(spec, p, engine(), quick_run());
  }
};

// Backends that must run every point: math, the naive recipe, and ATen's own choice (math is
// always among its options). The fused ones may refuse a point, with ATen's reason.
bool must_pass(const std::string& provider) {
  return provider == "torch.sdpa.math" || provider == "torch.naive" ||
         provider == "torch.sdpa.default";
}

class TorchRandom : public TorchProviderTest,
                    public ::testing::WithParamInterface<std::tuple<std::string, Spec>> {};

TEST_P(TorchRandom, PassesVerificationOrSaysWhyNot) {
  const auto& [name, spec] = GetParam();
  const Result r = run(name, spec);
  SCOPED_TRACE(name + " " + spec.label() + ": " + r.reason);
  if (r.status == Status::not_supported && !must_pass(name)) {
    EXPECT_FALSE(r.reason.empty());
    return;
  }
  ASSERT_EQ(r.status, Status::passed);
  EXPECT_EQ(r.verify.nan_count, 0);
  EXPECT_GT(r.timing.median_us, 0);
  EXPECT_GE(r.memory.peak_bytes, r.memory.analytic_bytes) << "inputs and outputs are held";
  EXPECT_NE(r.provider_note.find("PyTorch "), std::string::npos) << r.provider_note;
  if (r.kernels_note.rfind("unavailable", 0) != 0) {
    EXPECT_FALSE(r.kernels.empty()) << "kernel names belong in every GPU row";
  }
}

const std::string kTorchProviders[] = {"torch.sdpa.default",   "torch.sdpa.flash",
                                       "torch.sdpa.efficient", "torch.sdpa.cudnn",
                                       "torch.sdpa.math",      "torch.naive"};

std::string param_name(const ::testing::TestParamInfo<std::tuple<std::string, Spec>>& info) {
  std::string k = std::get<0>(info.param) + "_" + std::get<1>(info.param).key();
  for (char& c : k) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return k;
}

// Lengths 1, 17, 129, 1000, 4097; GQA ratios 1, 4, 8; every mask; each dtype; both layouts.
INSTANTIATE_TEST_SUITE_P(
    Forward, TorchRandom,
    ::testing::Combine(
        ::testing::ValuesIn(kTorchProviders),
        ::testing::Values(make_spec(2, 4, 4, 17, 17, 64, bf16, kNone),
                          make_spec(1, 8, 2, 129, 129, 128, fp16, kCausal, Mode::fwd, bshd),
                          make_spec(1, 8, 1, 1000, 1000, 128, bf16, kCausalBr),
                          make_spec(1, 8, 2, 129, 1000, 128, bf16, kCausalBr, Mode::fwd, bshd),
                          make_spec(1, 4, 4, 4097, 4097, 64, fp16, window(256)),
                          make_spec(2, 8, 8, 17, 4097, 128, fp16, kCausal),
                          make_spec(1, 32, 8, 1, 4097, 128, bf16, kCausalBr),
                          make_spec(1, 2, 2, 1000, 1000, 64, fp32, kNone))),
    param_name);

INSTANTIATE_TEST_SUITE_P(
    Backward, TorchRandom,
    ::testing::Combine(
        ::testing::ValuesIn(kTorchProviders),
        ::testing::Values(make_spec(1, 4, 4, 129, 129, 64, bf16, kNone, Mode::bwd),
                          make_spec(1, 8, 2, 129, 1000, 128, fp16, kCausalBr, Mode::fwd_bwd),
                          make_spec(1, 4, 1, 1000, 1000, 128, bf16, kCausal, Mode::fwd_bwd, bshd),
                          make_spec(1, 2, 2, 1000, 1000, 64, fp32, window(64), Mode::bwd))),
    param_name);

// The shapes FlashAttention-2 is for: the flash backend runs them; ATen's own choice (cuDNN
// first on Hopper in 2.11) is named in the note.
TEST_F(TorchProviderTest, FlashRunsTheShapesItIsForAndDefaultNamesItsChoice) {
  const Spec spec = make_spec(2, 16, 16, 1024, 1024, 128, bf16, kCausal);
  const Result flash = run("torch.sdpa.flash", spec);
  ASSERT_EQ(flash.status, Status::passed) << flash.reason;
  EXPECT_NE(flash.provider_note.find("ATen ran flash_attention"), std::string::npos)
      << flash.provider_note;
  const Result chosen = run("torch.sdpa.default", spec);
  ASSERT_EQ(chosen.status, Status::passed) << chosen.reason;
  EXPECT_NE(chosen.provider_note.find("ATen chose "), std::string::npos) << chosen.provider_note;
}

// fp32 has no flash kernel: flash alone is not_supported with ATen's words, and the default
// provider says which backend it took instead and why flash was passed over.
TEST_F(TorchProviderTest, RefusalsCarryAtensReasons) {
  const Spec spec = make_spec(1, 4, 4, 256, 256, 64, fp32, kNone);
  const Result flash = run("torch.sdpa.flash", spec);
  EXPECT_EQ(flash.status, Status::not_supported) << flash.reason;
  EXPECT_NE(flash.reason.find("ATen has no flash_attention kernel"), std::string::npos)
      << flash.reason;
  // ATen's own words about the dtype, not only that no kernel was found.
  EXPECT_NE(flash.reason.find("dtype"), std::string::npos) << flash.reason;
  const Result chosen = run("torch.sdpa.default", spec);
  ASSERT_EQ(chosen.status, Status::passed) << chosen.reason;
  EXPECT_NE(chosen.provider_note.find("passed over: "), std::string::npos) << chosen.provider_note;
  EXPECT_NE(chosen.provider_note.find("flash_attention: "), std::string::npos)
      << chosen.provider_note;
  EXPECT_NE(chosen.provider_note.find("dtype"), std::string::npos) << chosen.provider_note;
}

// The mask-coverage pattern (Q = 0, V encodes the key index) through an explicit bottom-right
// mask and a window: the verifier checks each row against the visible keys' mean.
TEST_F(TorchProviderTest, ExplicitMasksAreExact) {
  RunOptions o = quick_run();
  for (const char* name : {"torch.sdpa.math", "torch.naive", "torch.sdpa.efficient"}) {
    for (const Spec& spec : {make_spec(1, 2, 1, 70, 150, 64, fp16, kCausalBr),
                             make_spec(1, 2, 1, 130, 130, 64, fp16, window(5))}) {
      Provider& p = provider(name);
      const Result r = run_point(spec, p, engine(), o);
      SCOPED_TRACE(std::string(name) + " " + spec.label());
      if (r.status == Status::not_supported && !must_pass(name)) continue;
      EXPECT_EQ(r.status, Status::passed) << r.reason;
    }
  }
}

// Other providers run in other processes: a finished point's memory goes back to the device,
// not into PyTorch's cache (where it starved the next cuda.naive points into false ooms).
TEST_F(TorchProviderTest, FinishedPointsGiveTheirMemoryBack) {
  // A small point first: PyTorch's first use of a stream sets up what it keeps for good (the
  // H200 showed 212 MB of it: lazily loaded kernels, the cuBLAS workspace of the stream).
  ASSERT_EQ(run("torch.sdpa.math", make_spec(1, 2, 2, 64, 64, 64, fp32, kCausal)).status,
            Status::passed);
  size_t free_before = 0, free_after = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  // fp32 scores of 4 x 16 x 2048 x 2048: 1 GiB, and as much again for the probabilities
  const Result r = run("torch.sdpa.math", make_spec(4, 16, 16, 2048, 2048, 64, fp32, kCausal));
  ASSERT_EQ(r.status, Status::passed) << r.reason;
  EXPECT_GT(r.memory.peak_bytes, int64_t{1} << 30);
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_GE(free_after + (size_t{64} << 20), free_before)
      << "free before " << free_before << ", after " << free_after;
}

// Every kernel of the timed launches ran on the engine's stream: the stream guard covers
// ATen's kernels, and autograd's backward follows the forward's stream.
TEST_F(TorchProviderTest, EveryTimedKernelRunsOnTheTimedStream) {
  struct Case {
    const char* provider;
    Spec spec;
  };
  for (const Case& c :
       {Case{"torch.sdpa.flash", make_spec(1, 8, 8, 512, 512, 64, bf16, kCausal, Mode::fwd_bwd)},
        Case{"torch.sdpa.default", make_spec(1, 8, 2, 512, 512, 128, bf16, kNone, Mode::bwd)},
        Case{"torch.naive", make_spec(1, 8, 2, 512, 512, 64, bf16, kCausal)}}) {
    SCOPED_TRACE(std::string(c.provider) + " " + c.spec.label());
    RunOptions options;
    options.trace_launches = 2;
    options.trace_kernels = false;
    std::unique_ptr<PointHooks> hooks = trace_hooks_factory()(options, engine());
    const Result t = run_point(c.spec, provider(c.provider), engine(), options, hooks.get());
    ASSERT_EQ(t.status, Status::passed) << t.reason;
    if (t.kernels_note.rfind("unavailable", 0) == 0) GTEST_SKIP() << t.kernels_note;
    int kernels = 0;
    for (const TraceEvent& e : events_in_phase(t, kPhaseTimed)) {
      if (e.kind != TraceKind::kernel) continue;
      ++kernels;
      EXPECT_EQ(e.stream, trace_of(t).timed_stream) << e.name;
    }
    EXPECT_GE(kernels, 2);
  }
}

}  // namespace
}  // namespace attnprof::testing

#endif  // ATTNPROF_WITH_TORCH
