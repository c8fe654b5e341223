// cuda.decode (attnprof's split-KV decode kernel) on the GPU: every row of O and the LSE against
// the host's fp64 reference and the device check, over the shapes it takes: one and several
// query tokens, GQA and MQA, head dims 64, 128 and 256, every mask, both layouts, one split and
// many, paged and ragged caches, softcap and sinks; and what it refuses, in words.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnprof/ragged.hpp"
#include "attnprof/verify.hpp"
#include "engine_test_util.hpp"
#include "measure/cuda/device_verify.hpp"
#include "one_point.hpp"
#include "providers/cuda/decode_kernel.cuh"
#include "providers/cuda/decode_split.hpp"
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

struct Case {
  Spec spec;
  bool several_splits;  // the split the kernel should choose on a GPU of 16 SMs or more
};

std::vector<Case> cases() {
  const Mask none{}, tl{MaskKind::causal_tl, 0}, br{MaskKind::causal_br, 0},
      win{MaskKind::window, 100};
  const DType bf = DType::bf16, fp = DType::fp16;
  return {
      {make_spec(3, 32, 8, 1, 3000, 128, bf, br), true},
      {make_spec(2, 8, 8, 1, 100, 128, fp, none), false},
      {make_spec(2, 16, 4, 4, 1500, 64, fp, br, Mode::fwd, Layout::bshd), true},
      {make_spec(2, 8, 2, 3, 2000, 128, bf, win), true},
      {make_spec(2, 8, 2, 5, 700, 128, bf, tl), true},
      {make_spec(1, 16, 1, 4, 1000, 128, bf, br), true},  // MQA: 64 rows in one CTA
      {make_spec(2, 8, 4, 1, 1200, 256, bf, br), true},
      {make_spec(1, 16, 2, 2, 900, 256, fp, br, Mode::fwd, Layout::bshd), true},  // 16 rows
      {variant(make_spec(4, 16, 2, 1, 2048, 128, bf, br), "", 16), true},
      {variant(make_spec(6, 16, 2, 1, 3000, 128, bf, br), "uniform:1:3000"), true},
      {variant(make_spec(4, 16, 2, 2, 2048, 64, fp, br, Mode::fwd, Layout::bshd),
               "uniform:100:2048", 16),
       true},
      {variant(make_spec(2, 8, 2, 1, 4096, 256, bf, br), "", 0, 50.0), true},
      {variant(make_spec(2, 16, 4, 1, 2000, 64, bf, win), "", 0, 0, true), true},
      {variant(make_spec(3, 8, 8, 1, 1000, 128, fp, br), "", 0, 30.0, true), true},
  };
}

// The forms EveryRowPassesBothChecks runs: COPY:PIPELINE (cuda.decode's settings copy and
// pipeline): the copies under the default pipeline, the tensor copies under the
// others. ATTNPROF_DECODE_TEST_FORMS names fewer (space-separated), so that a sanitizer can take
// one form at a time.
std::vector<std::pair<std::string, std::string>> forms() {
  std::string names =
      "tma:4x3 cp.async:4x3 tma:8x3 tma:4x2 tma:p64x3 tma:p128x3 tma:p64x6 tma:p64x3r";
  if (const char* v = std::getenv("ATTNPROF_DECODE_TEST_FORMS"); v != nullptr) names = v;
  std::vector<std::pair<std::string, std::string>> out;
  size_t at = 0;
  while (at < names.size()) {
    const size_t end = std::min(names.find(' ', at), names.size());
    const std::string f = names.substr(at, end - at);
    if (const size_t colon = f.find(':'); colon != std::string::npos)
      out.emplace_back(f.substr(0, colon), f.substr(colon + 1));
    at = end + 1;
  }
  return out;
}

// What the note says of the tensor-core kernel asked for `pipeline`, with the tensor copies or
// not (its own spelling: the test checks the rule, not decode.cpp's words again).
std::string expected_kernel(const std::string& pipeline, bool tma) {
  const std::string copy_words = tma ? "TMA boxes" : "cp.async)";
  if (pipeline[0] == 'p' && tma) {  // p<keys>x<stages>[r]: a producer warp's stages
    const size_t x = pipeline.find('x');
    const bool rows = pipeline.back() == 'r';
    return fmt::format("a producer warp and 4 warps, {} stages of {} keys, {}{}",
                       pipeline.substr(x + 1, pipeline.size() - x - 1 - (rows ? 1 : 0)),
                       pipeline.substr(1, x - 1), copy_words, rows ? " of whole rows" : "");
  }
  const std::string classic = pipeline[0] == 'p' ? "4x3" : pipeline;
  return fmt::format("{} warps x {} stages, {}", classic[0], classic[2], copy_words);
}

// Every case under each form (a run reads its settings when prepared). The note names the
// kernel that ran: the tensor memory accelerator on sm_90 unless cp.async is asked for, or the
// cache is in pages of less than its tile of 16 keys; a producer warp only with the tensor
// copies (else four warps three deep).
TEST(CudaDecode, EveryRowPassesBothChecks) {
  REQUIRE_ENGINE();
  auto p = make_cuda_decode();
  ASSERT_TRUE(p->availability().available);
  const bool hopper = engine().device().cc_major == 9;
  for (const auto& [copy, pipeline] : forms())
    for (const Case& c : cases()) {
      const Spec& s = c.spec;
      SCOPED_TRACE(copy + " " + pipeline + " " + s.label());
      const Support sup = p->supports(s, engine().device());
      ASSERT_TRUE(sup.ok) << sup.reason;
      ASSERT_EQ(variant_refusal(p->traits(), s), "");
      const InputFill fill{.seed = 17};
      testing_specs::OnePoint pt = testing_specs::prepare_point(
          *p, engine(), s, fill, 1, {{"copy", copy}, {"pipeline", pipeline}});
      const std::string note = pt.run->note();
      EXPECT_EQ(note.find("1 split of") == std::string::npos, c.several_splits) << note;
      if (note.find("tensor cores") != std::string::npos) {
        const bool tma =
            copy == "tma" && hopper && (s.page_size == 0 || s.page_size >= cuda::kMmaKeyTile);
        EXPECT_NE(note.find(expected_kernel(pipeline, tma)), std::string::npos) << note;
      }
      testing::expect_rows_pass_both_checks(s, fill, pt, note);
    }
}

// A second launch on the same run reads the same inputs and writes the same bits (no state
// carried between launches: the partial sums are rewritten whole).
TEST(CudaDecode, RelaunchesAreBitIdentical) {
  REQUIRE_ENGINE();
  auto p = make_cuda_decode();
  const Spec s = make_spec(4, 32, 8, 1, 5000, 128, DType::bf16, Mask{MaskKind::causal_br, 0});
  for (const auto& [copy, pipeline] : std::vector<std::pair<const char*, const char*>>{
           {"tma", "4x3"}, {"cp.async", "4x3"}, {"tma", "p64x3"}}) {
    SCOPED_TRACE(std::string(copy) + " " + pipeline);
    testing_specs::OnePoint pt = testing_specs::prepare_point(
        *p, engine(), s, InputFill{.seed = 2}, 1, {{"copy", copy}, {"pipeline", pipeline}});
    testing::expect_relaunch_bit_identical(pt);
  }
}

// The producer forms need the tensor copies; without them the default pipeline runs (host code:
// runs without a GPU).
TEST(CudaDecodePipeline, ProducerFormsNeedTheTensorCopies) {
  using cuda::DecodeCopy;
  using cuda::DecodePipeline;
  EXPECT_EQ(cuda::decode_pipeline_used(DecodePipeline::producer128_stages3, DecodeCopy::tma),
            DecodePipeline::producer128_stages3);
  EXPECT_EQ(cuda::decode_pipeline_used(DecodePipeline::producer64_stages3, DecodeCopy::cp_async),
            DecodePipeline::warps4_stages3);
  EXPECT_EQ(cuda::decode_pipeline_used(DecodePipeline::warps8_stages3, DecodeCopy::cp_async),
            DecodePipeline::warps8_stages3);
  // Pages of 8 keys: a tile spans two pages, so cp.async, so no producer.
  const DecodeCopy paged8 = cuda::decode_copy_used(DecodeCopy::tma, 8);
  EXPECT_EQ(paged8, DecodeCopy::cp_async);
  EXPECT_EQ(cuda::decode_pipeline_used(DecodePipeline::producer64_stages6, paged8),
            DecodePipeline::warps4_stages3);
  // Three stages of 64 keys: two CTAs an SM, like the default; 128-key stages or six deep: one.
  EXPECT_LT(cuda::decode_smem_bytes(128, 4, DecodePipeline::producer64_stages3), 113 * 1024);
  EXPECT_GT(cuda::decode_smem_bytes(128, 4, DecodePipeline::producer128_stages3), 113 * 1024);
  EXPECT_GT(cuda::decode_smem_bytes(128, 4, DecodePipeline::producer64_stages6), 113 * 1024);
}

TEST(CudaDecode, RefusesWhatItIsNotBuiltFor) {
  REQUIRE_ENGINE();
  auto p = make_cuda_decode();
  const Mask br{MaskKind::causal_br, 0};
  const auto reason = [&](const Spec& s) { return p->supports(s, engine().device()).reason; };
  EXPECT_NE(reason(make_spec(1, 8, 8, 1, 64, 96, DType::bf16, br)).find("head dims 64, 128"),
            std::string::npos);
  EXPECT_NE(reason(make_spec(1, 8, 8, 1, 64, 128, DType::fp32, br)).find("fp16 and bf16 only"),
            std::string::npos);
  EXPECT_NE(reason(make_spec(1, 32, 8, 512, 512, 128, DType::bf16, br)).find("not a prefill"),
            std::string::npos);
  EXPECT_NE(reason(make_spec(1, 8, 8, 1, 64, 128, DType::bf16, br, Mode::bwd)).find("forward"),
            std::string::npos);
  EXPECT_TRUE(p->supports(make_spec(1, 128, 8, 4, 64, 128, DType::bf16, br), engine().device()).ok);
  EXPECT_FALSE(
      p->supports(make_spec(1, 128, 8, 5, 64, 128, DType::bf16, br), engine().device()).ok);
}

// The split rule on an H200's 132 SMs (host code: runs without a GPU), at the configurations
// measured in bench/results/h200/2026-12-01-sweep and 2026-12-02-decode-paged.
TEST(CudaDecodeSplit, TheMeasuredConfigurationsOnAnH200) {
  const auto split = [](Spec s, std::string lens = "") {
    s.seqlens = std::move(lens);
    return cuda::choose_decode_split(s, 132, cuda::DecodePipeline::warps4_stages3);
  };
  const Mask br{MaskKind::causal_br, 0};
  const auto decode = [&](int64_t b, int64_t kv) {
    return make_spec(b, 32, 8, 1, kv, 128, DType::bf16, br);
  };
  const auto expect = [](cuda::DecodeSplit got, int splits, int chunk) {
    EXPECT_EQ(got.splits, splits);
    EXPECT_EQ(got.chunk, chunk);
  };
  expect(split(decode(64, 32768)), 1, 32768);  // 512 CTAs fill the GPU already
  expect(split(decode(64, 1024)), 1, 1024);
  expect(split(decode(8, 32768)), 17, 1984);
  expect(split(decode(1, 32768)), 32, 1024);
  expect(split(decode(64, 32768), "uniform:1024:32768"), 9, 3648);
  expect(split(decode(8, 32768), "uniform:1024:32768"), 16, 2048);
  // A ragged batch too small to fill one wave is still split (chunks of at least 256 keys).
  EXPECT_GT(split(make_spec(6, 16, 2, 1, 3000, 128, DType::bf16, br), "uniform:1:3000").splits, 1);
  EXPECT_GT(split(make_spec(4, 16, 2, 2, 2048, 64, DType::fp16, br), "uniform:100:2048").splits, 1);
}

// The default pipeline follows the split's chunk (host code: runs without a GPU): the producer
// warp where each CTA streams 1024 keys or more (B 8, KV 32k: 1984), four warps where it
// streams fewer (B 8, KV 1k: 4 splits of 256).
TEST(CudaDecodePipeline, TheDefaultFollowsTheChunk) {
  const auto decode = [](int64_t b, int64_t kv) {
    return make_spec(b, 32, 8, 1, kv, 128, DType::bf16, Mask{MaskKind::causal_br, 0});
  };
  const auto pipeline = [](const Spec& s) {
    return cuda::choose_decode_pipeline(
        cuda::choose_decode_split(s, 132, cuda::DecodePipeline::warps4_stages3).chunk);
  };
  EXPECT_EQ(pipeline(decode(8, 32768)), cuda::DecodePipeline::producer64_stages3);
  EXPECT_EQ(pipeline(decode(64, 1024)), cuda::DecodePipeline::producer64_stages3);
  EXPECT_EQ(pipeline(decode(8, 1024)), cuda::DecodePipeline::warps4_stages3);
  EXPECT_EQ(pipeline(decode(1, 8192)), cuda::DecodePipeline::warps4_stages3);
  // Both take two CTAs an SM, so the split chosen for four warps is the producer's too.
  EXPECT_EQ(
      cuda::choose_decode_split(decode(8, 32768), 132, cuda::DecodePipeline::producer64_stages3)
          .chunk,
      1984);
}

// The merge's block shape (host code: runs without a GPU). With few splits a block takes more
// columns, so its threads are not idle: 4 splits of MLA's 512 value columns left three quarters
// of them idle in blocks of 64 columns (bench/results/h200/2026-12-02-decode-copy, call 1: 92.1
// us at B 16, KV 4k, where wider blocks ran 67.3 in call 2).
TEST(CudaDecodeMerge, ColumnsPerBlockFollowTheSplits) {
  EXPECT_EQ(cuda::decode_merge_columns(4, 512), 256);  // 4 groups of 64 threads
  EXPECT_EQ(cuda::decode_merge_columns(64, 512), 64);  // MLA at B 1: 16 groups of 16 threads
  EXPECT_EQ(cuda::decode_merge_columns(32, 128), 64);  // cuda.decode at B 1, KV 32k
  EXPECT_EQ(cuda::decode_merge_columns(2, 128), 128);  // never past the row
  EXPECT_EQ(cuda::decode_merge_columns(5, 64), 64);
  for (int splits = 2; splits <= 4096; splits *= 3)
    for (int dv : {64, 128, 256, 512}) {
      const int cols = cuda::decode_merge_columns(splits, dv);
      EXPECT_EQ(dv % cols, 0) << splits << " " << dv;  // the slabs tile the row
      EXPECT_GE(cols, 64);
      // Threads per split group (cols / 4) divide the block, and the groups are at most the
      // splits rounded up to a power of two, unless the row is too narrow to leave fewer.
      EXPECT_EQ(cuda::kDecodeMergeThreads % (cols / 4), 0);
      const int groups = cuda::kDecodeMergeThreads / (cols / 4);
      EXPECT_TRUE(groups <= std::max(splits, 1) * 2 || cols == dv) << splits << " " << dv;
    }
}

// What attnprof's own kernels refuse, in the words of their shared check (host code: runs
// without a GPU, on a described H200).
TEST(OwnKernelSupport, RefusalsNameTheDtypesAndHeadDimsBuiltFor) {
  const Device h200 = described_gpu("NVIDIA H200", 9);
  const Mask br{MaskKind::causal_br, 0};
  const auto reason = [&](const Provider& p, const Spec& s) { return p.supports(s, h200).reason; };
  const auto decode = make_cuda_decode();
  const auto flash = make_cuda_flash();
  EXPECT_EQ(reason(*decode, make_spec(1, 8, 8, 1, 64, 96, DType::bf16, br)),
            "cuda.decode is built for head dims 64, 128 and 256 with Dv == D; this spec has D 96 "
            "and Dv 96");
  EXPECT_EQ(
      reason(*flash, make_spec(1, 8, 8, 64, 64, 128, DType::bf16, br, Mode::fwd, Layout::bhsd, 64)),
      "cuda.flash is built for head dims 64 and 128 with Dv == D; this spec has D 128 and "
      "Dv 64");
  EXPECT_EQ(reason(*flash, make_spec(1, 8, 8, 64, 64, 128, DType::fp32, br)),
            "cuda.flash takes fp16 and bf16 only, not fp32");
  EXPECT_TRUE(decode->supports(make_spec(1, 8, 8, 1, 64, 256, DType::fp16, br), h200).ok);
  EXPECT_TRUE(flash->supports(make_spec(1, 8, 2, 64, 64, 64, DType::bf16, br), h200).ok);
}

}  // namespace
}  // namespace attnprof
