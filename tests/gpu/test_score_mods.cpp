// Logit softcap and attention sinks on the GPU: cuda.naive (and .expand) apply both in their
// softmax kernel and pass the device's fp64 check of every row; cudnn.sdpa (and .infer) apply the
// softcap through cuDNN's score modifier and the sinks through its sink token, or are refused in
// cuDNN's or the provider's words; a provider without them is refused by the runner.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "attnprof/runner.hpp"
#include "attnprof/verify.hpp"
#include "engine_test_util.hpp"
#include "one_point.hpp"
#include "providers/factories.hpp"
#include "test_specs.hpp"

namespace attnprof {
namespace {

using namespace testing_specs;

cuda::CudaEngine& engine() {
  return testing::process_engine();
}

Spec mods(Spec s, double softcap, bool sinks) {
  s.softcap = softcap;
  s.sinks = sinks;
  return s;
}

// Gemma 2's softcap of 50 on its shape (16/8 heads, D 256), a small cap that bends every score,
// GPT-OSS's sinks on its shape (64/8 heads, D 64), decode and windows.
std::vector<Spec> shapes() {
  return {mods(make_spec(1, 16, 8, 1000, 1000, 256, bf16, kCausal), 50, false),
          mods(make_spec(2, 8, 2, 777, 777, 128, fp16, kNone), 2, false),
          mods(make_spec(4, 16, 8, 1, 4097, 256, bf16, kCausalBr), 50, false),
          mods(make_spec(1, 64, 8, 1000, 1000, 64, bf16, kCausal), 0, true),
          mods(make_spec(1, 64, 8, 1000, 1000, 64, bf16, window(128)), 0, true),
          mods(make_spec(8, 64, 8, 1, 8192, 64, bf16, kCausalBr), 0, true),
          mods(make_spec(1, 8, 2, 513, 513, 128, fp16, kCausal), 2, true)};
}

TEST(ScoreMods, NaiveAppliesBothAndPasses) {
  REQUIRE_ENGINE();
  for (auto make : {make_cuda_naive, make_cuda_naive_expand}) {
    auto p = make();
    for (const Spec& s : shapes()) {
      const Result r = run_point(s, *p, engine(), quick_run_options());
      EXPECT_EQ(r.status, Status::passed)
          << p->name() << " " << s.label() << ": " << r.reason << " " << r.verify.detail;
      EXPECT_EQ(r.verify.rows_checked, r.verify.rows_total);
    }
  }
}

// cuDNN: each shape passes, or is refused in words; the plain softcap and the causal sinks of
// prefill must run (cuDNN 9.13+ has sink tokens; its score modifier takes a causal mask inside).
TEST(ScoreMods, CudnnAppliesBothOrSaysWhyNot) {
  REQUIRE_ENGINE();
  for (auto make : {make_cudnn_sdpa, make_cudnn_sdpa_infer}) {
    auto p = make();
    if (!p || !p->availability().available) GTEST_SKIP() << "cuDNN not available";
    for (const Spec& s : shapes()) {
      const Result r = run_point(s, *p, engine(), quick_run_options());
      std::printf("[ mods     ] %s %s: %s, rel %.3g, lse %.3g; %s\n", p->name().c_str(),
                  s.label().c_str(), std::string(to_string(r.status)).c_str(), r.verify.rel_l2_err,
                  r.verify.lse_max_abs_err, r.reason.c_str());
      if (r.status == Status::not_supported) {
        EXPECT_FALSE(r.reason.empty());
        EXPECT_EQ(r.reason.find('\n'), std::string::npos) << r.reason;
        continue;
      }
      EXPECT_EQ(r.status, Status::passed)
          << s.label() << ": " << r.reason << " " << r.verify.detail;
    }
  }
}

TEST(ScoreMods, AProviderWithoutThemIsRefusedInWords) {
  REQUIRE_ENGINE();
  auto math = make_cuda_math();
  const Result r = run_point(mods(make_spec(1, 4, 4, 256, 256, 64, bf16, kCausal), 0, true), *math,
                             engine(), quick_run_options());
  EXPECT_EQ(r.status, Status::not_supported);
  EXPECT_EQ(r.reason, "cuda.math has no attention sinks");
}

}  // namespace
}  // namespace attnprof
