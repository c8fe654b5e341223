// cuda.mla.decode (attnprof's absorbed-MLA decode kernel, sm_90a) on the GPU: every row of O and
// the LSE against the host's fp64 reference and the device check, over the shapes it takes: 128
// query heads on one latent head and fewer, one and several query tokens (row blocks cut short),
// one split and many, every mask, both layouts, paged and ragged caches, softcap and sinks,
// bf16 and fp16; relaunches; and what it refuses, in words. Its split rule runs without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "attnprof/verify.hpp"
#include "engine_test_util.hpp"
#include "one_point.hpp"
#include "providers/cuda/decode_split.hpp"
#include "providers/cuda/mla_decode_kernel.cuh"
#include "providers/factories.hpp"
#include "row_checks.hpp"
#include "test_specs.hpp"

namespace attnprof {
namespace {

using testing_specs::described_gpu;
using testing_specs::make_spec;
using testing_specs::variant;

cuda::CudaEngine& engine() {
  return testing::process_engine();
}

constexpr int64_t kD = cuda::kMlaQkDim, kDv = cuda::kMlaVDim;

// The absorbed form: V is K's first 512 columns (Spec::shared_latent).
Spec mla(int64_t b, int64_t hq, int64_t hkv, int64_t nq, int64_t nk, DType t, Mask mask,
         Layout layout = Layout::bhsd) {
  Spec s = make_spec(b, hq, hkv, nq, nk, kD, t, mask, Mode::fwd, layout, kDv);
  s.shared_latent = true;
  return s;
}

bool is_hopper() {
  const Device& d = engine().device();
  return d.cc_major == 9 && d.cc_minor == 0;
}

std::vector<Spec> cases() {
  const Mask none{}, tl{MaskKind::causal_tl, 0}, br{MaskKind::causal_br, 0},
      win{MaskKind::window, 100};
  const DType bf = DType::bf16, fp = DType::fp16;
  return {
      mla(1, 128, 1, 1, 3000, bf, br),  // two row blocks, many splits
      mla(2, 32, 1, 3, 1000, fp, win, Layout::bshd),
      mla(2, 128, 1, 1, 777, fp, none),
      mla(2, 16, 1, 2, 1500, bf, br),   // 32 rows: a row block cut short; two causal tokens
      mla(1, 32, 1, 3, 2000, fp, win),  // 96 rows: the second block half full
      mla(2, 8, 1, 5, 700, bf, tl),
      mla(2, 64, 1, 1, 1024, bf, br, Layout::bshd),
      mla(1, 128, 2, 1, 900, bf, br),  // two KV heads of 64 query heads each
      mla(3, 128, 1, 1, 1, bf, br),    // one key
      variant(mla(2, 128, 1, 1, 2048, bf, br), "", 64),
      variant(mla(2, 16, 1, 2, 1000, fp, br, Layout::bshd), "", 16),
      variant(mla(2, 128, 1, 1, 1000, bf, br), "", 16),
      variant(mla(4, 128, 1, 1, 2048, bf, br), "uniform:1:2048"),
      variant(mla(2, 128, 1, 1, 600, bf, br), "", 0, 30.0, true),
      variant(mla(2, 32, 1, 1, 1000, fp, win), "", 0, 0, true),
  };
}

TEST(CudaMlaDecode, EveryRowPassesBothChecks) {
  REQUIRE_ENGINE();
  if (!is_hopper()) GTEST_SKIP() << "cuda.mla.decode runs on sm_90 only";
  auto p = make_cuda_mla_decode();
  ASSERT_TRUE(p->availability().available);
  // Both pipelines (mla_decode_kernel.cuh MlaPipeline; a run reads its setting when prepared).
  for (const char* pipeline : {"serial64", "overlap32"})
    for (const Spec& s : cases()) {
      SCOPED_TRACE(std::string(pipeline) + " " + s.label());
      const Support sup = p->supports(s, engine().device());
      ASSERT_TRUE(sup.ok) << sup.reason;
      ASSERT_EQ(variant_refusal(p->traits(), s), "");
      const InputFill fill{.seed = 23};
      testing_specs::OnePoint pt =
          testing_specs::prepare_point(*p, engine(), s, fill, 1, {{"pipeline", pipeline}});
      const std::string note = pt.run->note();
      EXPECT_NE(note.find(std::string(pipeline) == "overlap32" ? "4 stages of 32 keys"
                                                               : "2 stages of 64 keys"),
                std::string::npos)
          << note;
      testing::expect_rows_pass_both_checks(s, fill, pt, note);
    }
}

// A second launch on the same run writes the same bits (the partial sums are rewritten whole).
TEST(CudaMlaDecode, RelaunchesAreBitIdentical) {
  REQUIRE_ENGINE();
  if (!is_hopper()) GTEST_SKIP() << "cuda.mla.decode runs on sm_90 only";
  auto p = make_cuda_mla_decode();
  const Spec s = mla(2, 128, 1, 1, 5000, DType::bf16, Mask{MaskKind::causal_br, 0});
  testing_specs::OnePoint pt = testing_specs::prepare_point(*p, engine(), s, InputFill{.seed = 4});
  EXPECT_NE(pt.run->note().find("splits of"), std::string::npos) << pt.run->note();
  testing::expect_relaunch_bit_identical(pt);
}

// What it refuses, on a described H200 and an A100 (host code: runs without a GPU).
TEST(CudaMlaDecodeSupport, RefusalsSayWhy) {
  const Device h200 = described_gpu("NVIDIA H200", 9), a100 = described_gpu("NVIDIA A100", 8);
  const Mask br{MaskKind::causal_br, 0};
  const auto p = make_cuda_mla_decode();
  const auto reason = [&](const Spec& s, const Device* d = nullptr) {
    return p->supports(s, d != nullptr ? *d : h200).reason;
  };
  EXPECT_TRUE(p->supports(mla(64, 128, 1, 1, 4096, DType::bf16, br), h200).ok);
  EXPECT_EQ(reason(make_spec(1, 8, 8, 1, 64, 128, DType::bf16, br)),
            "cuda.mla.decode is built for head dim 576 with Dv 512; this spec has D 128 and Dv "
            "128");
  EXPECT_EQ(reason(mla(1, 128, 1, 1, 64, DType::fp32, br)),
            "cuda.mla.decode takes fp16 and bf16 only, not fp32");
  EXPECT_EQ(reason(mla(1, 128, 1, 1, 64, DType::bf16, br), &a100),
            "cuda.mla.decode is built for sm_90a only (wgmma, Hopper); NVIDIA A100 is compute "
            "capability 8.0");
  EXPECT_NE(reason(mla(1, 128, 1, 65, 64, DType::bf16, br)).find("not a prefill"),
            std::string::npos);
  Spec apart = mla(1, 128, 1, 1, 64, DType::bf16, br);
  apart.shared_latent = false;
  EXPECT_EQ(reason(apart),
            "cuda.mla.decode reads V as K's first 512 columns, the absorbed form's one latent "
            "cache: it needs a shared latent (--shared-latent on; the deepseek-v3-mla-decode "
            "model sets it)");
}

// The split rule on an H200's 132 SMs: a batch that fills the SMs is not split; below, as many
// splits as fill them, in chunks of at least 256 keys; a ragged batch aims at four waves.
TEST(CudaMlaDecodeSplit, FillsTheSmsOnAnH200) {
  const Mask br{MaskKind::causal_br, 0};
  const auto split = [&](int64_t b, int64_t kv, std::string lens = "",
                         const cuda::WavesChunk& asked = std::nullopt) {
    Spec s = mla(b, 128, 1, 1, kv, DType::bf16, br);
    s.seqlens = std::move(lens);
    return cuda::choose_mla_decode_split(s, 132, cuda::mla_row_blocks(128, 1), asked);
  };
  const auto expect = [](cuda::DecodeSplit got, int splits, int chunk) {
    EXPECT_EQ(got.splits, splits);
    EXPECT_EQ(got.chunk, chunk);
  };
  expect(split(64, 16384), 1, 16384);  // 128 CTAs
  expect(split(128, 4096), 1, 4096);
  expect(split(16, 32768), 4, 8192);  // 32 CTAs x 4
  expect(split(1, 32768), 64, 512);   // 66 wanted: chunks of 497 round up to 512
  expect(split(1, 1024), 4, 256);     // no chunk under 256 keys
  expect(split(64, 32768, "uniform:1024:32768"), 5, 6592);
  // The workspace's bound holds every split the rule gives, with the knob's shorter chunks too.
  for (const char* knob : {"", "1:64", "4:128"}) {
    const cuda::WavesChunk asked = waves_chunk(knob);
    for (int64_t b : {1, 16, 64})
      for (int64_t kv : {1, 1000, 4096, 32768})
        for (const char* lens : {"", "uniform:1:1000"}) {
          Spec s = mla(b, 128, 1, 1, kv, DType::bf16, br);
          if (kv >= 1000) s.seqlens = lens;
          EXPECT_LE(split(b, kv, s.seqlens, asked).splits, cuda::mla_decode_most_splits(s, asked))
              << knob << " " << s.label();
        }
  }
}

}  // namespace
}  // namespace attnprof
