// Ragged batches (Spec::seqlens) on the GPU: the device fill pads each sequence's keys with the
// tail value, every ragged provider (cuda.naive, cuda.naive.expand, cudnn.sdpa and .infer) passes
// the host's fp64 check and the device check at each sequence's lengths, the two checks agree row
// by row and leave the padding out, and a launch that ignores the lengths is caught by both.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnprof/fault.hpp"
#include "attnprof/paging.hpp"
#include "attnprof/ragged.hpp"
#include "attnprof/verify.hpp"
#include "cuda/tensor_fill.hpp"
#include "engine_test_util.hpp"
#include "measure/cuda/device_verify.hpp"
#include "one_point.hpp"
#include "providers/factories.hpp"
#include "test_specs.hpp"

namespace attnprof {
namespace {

using testing_specs::make_spec;

cuda::CudaEngine& engine() {
  return testing::process_engine();
}

std::unique_ptr<Provider> make(const std::string& name) {
  if (name == "cuda.naive") return make_cuda_naive();
  if (name == "cuda.naive.expand") return make_cuda_naive_expand();
#if defined(ATTNPROF_WITH_CUDNN)
  if (name == "cudnn.sdpa") return make_cudnn_sdpa();
  if (name == "cudnn.sdpa.infer") return make_cudnn_sdpa_infer();
#endif
  return nullptr;
}

Spec with_lens(Spec s, std::string lens, int64_t page = 0) {
  s.seqlens = std::move(lens);
  s.page_size = page;
  return s;
}

// Prefill (q_len == kv_len) in both layouts and every mask, a decode step and a chunk of new
// tokens against longer caches, a paged decode; lengths that are multiples of no tile, a
// sequence of one key, one at the full length.
std::vector<Spec> cases() {
  const Mask none{}, tl{MaskKind::causal_tl, 0}, br{MaskKind::causal_br, 0},
      win{MaskKind::window, 100};
  return {
      with_lens(make_spec(4, 8, 2, 700, 700, 64, DType::bf16, tl), "700/1/333/65"),
      with_lens(make_spec(4, 8, 8, 700, 700, 128, DType::fp16, none, Mode::fwd, Layout::bshd),
                "uniform:1:700"),
      with_lens(make_spec(5, 4, 1, 513, 513, 64, DType::bf16, br), "zipf:1:513"),
      with_lens(make_spec(3, 8, 2, 600, 600, 64, DType::bf16, win), "17/600/250"),
      with_lens(make_spec(6, 16, 2, 1, 3000, 128, DType::bf16, br), "uniform:1:3000"),
      with_lens(make_spec(3, 8, 2, 64, 2000, 128, DType::fp16, br, Mode::fwd, Layout::bshd),
                "2000/64/1500"),
      with_lens(make_spec(4, 16, 2, 1, 2048, 128, DType::bf16, br), "uniform:100:2048", 16),
  };
}

TEST(RaggedGpu, TheDeviceFillPadsEachSequencesKeysWithTheTailValue) {
  REQUIRE_ENGINE();
  for (Layout layout : {Layout::bhsd, Layout::bshd}) {
    const Spec s =
        with_lens(make_spec(3, 2, 2, 40, 40, 16, DType::bf16, Mask{}, Mode::fwd, layout), "40/7/1");
    auto t = engine().allocate(s, false, InputFill{.seed = 3});
    const TensorView& k = t->io().k;
    const std::vector<float> host = cuda::to_host_float(k.data, k.elems(), k.storage, nullptr);
    const SeqLens l = seq_lens(s);
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t pos = 0; pos < 40; ++pos)
        EXPECT_EQ(host[size_t(k.offset(b, 1, pos, 5))] == kPageTailValue, pos >= l.kv[size_t(b)])
            << to_string(layout) << " b" << b << " pos " << pos;
    EXPECT_EQ(t->bytes(), tensor_bytes(t->io()) + 6 * 4);
  }
}

void run_case(const std::string& provider, const Spec& s) {
  auto p = make(provider);
  if (!p) GTEST_SKIP() << provider << " not built";
  ASSERT_TRUE(p->traits().ragged) << provider;
  const Support sup = p->supports(s, engine().device());
  ASSERT_TRUE(sup.ok) << provider << " " << s.label() << ": " << sup.reason;
  const InputFill fill{.seed = 11};
  testing_specs::OnePoint pt;
  try {
    pt = testing_specs::prepare_point(*p, engine(), s, fill);
  } catch (const NotSupported& e) {  // the library's own words, for every case that has them
    ADD_FAILURE() << provider << " " << s.label() << ": " << e.what();
    return;
  }
  const HostOutputs out = pt.launch_and_read(engine());
  VerifyOptions full;
  full.full = true;
  const RowChecks host = check_on_host(s, fill, out, full);
  const VerifyResult hv = judge_rows(s, host);
  EXPECT_TRUE(verify_passed(hv)) << provider << " " << s.label() << " (host): " << hv.detail;
  auto* stream = static_cast<cudaStream_t>(engine().stream().native);
  const RowChecks dev = cuda::check_on_device(s, pt.io(), stream, {.all = true, .keep = {}});
  const VerifyResult dv = judge_rows(s, dev);
  EXPECT_TRUE(verify_passed(dv)) << provider << " " << s.label() << " (device): " << dv.detail;
  const int64_t rows = seq_lens(s).q_total() * s.q_heads;
  EXPECT_EQ(dev.rows_checked, rows);
  EXPECT_EQ(int64_t(dev.o.size()), rows);  // the padding left out
  EXPECT_EQ(dev.nonfinite, 0) << dev.first_nonfinite;
  EXPECT_EQ(host.o.size(), dev.o.size());
  std::map<int64_t, const RowCheck*> by_row;
  for (const RowCheck& c : dev.o) by_row[c.row] = &c;
  double worst = 0;
  for (const RowCheck& h : host.o) {
    ASSERT_TRUE(by_row.count(h.row)) << "row " << h.row;
    const RowCheck& d = *by_row[h.row];
    worst = std::max(worst, std::abs(std::sqrt(d.err2) - std::sqrt(h.err2)) /
                                std::max(1e-30, std::sqrt(h.ref2)));
  }
  EXPECT_LT(worst, 1e-9) << provider << " " << s.label();
  // The engine's check (device, cross-checked on the host's sample) agrees.
  const RowChecks checked = engine().check_outputs(s, *pt.tensors, fill, VerifyOptions{}, true);
  EXPECT_GE(checked.disagreement, 0.0);
  EXPECT_LT(checked.disagreement, 1e-9) << s.label();
  EXPECT_TRUE(verify_passed(judge_rows(s, checked)));
}

TEST(RaggedGpu, CudaNaivePassesBothChecks) {
  REQUIRE_ENGINE();
  for (const Spec& s : cases()) run_case("cuda.naive", s);
}
TEST(RaggedGpu, CudaNaiveExpandPassesBothChecks) {
  REQUIRE_ENGINE();
  for (const Spec& s : cases()) run_case("cuda.naive.expand", s);
}
TEST(RaggedGpu, CudnnSdpaPassesBothChecks) {
  REQUIRE_ENGINE();
  for (const Spec& s : cases()) run_case("cudnn.sdpa", s);
}
TEST(RaggedGpu, CudnnSdpaInferPassesBothChecks) {
  REQUIRE_ENGINE();
  for (const Spec& s : cases()) run_case("cudnn.sdpa.infer", s);
}

// cuda.naive launched without the lengths runs the padded shape as if it were uniform: both
// checks fail it. (Not for a causal prefill: there every row's keys end before its sequence's
// padding, so the lengths change nothing.)
TEST(RaggedGpu, IgnoringTheLengthsIsCaughtByBothChecks) {
  REQUIRE_ENGINE();
  for (const Spec& s : {cases()[1], cases()[4], cases()[5]}) {
    auto p = make_cuda_naive();
    const InputFill fill{.seed = 5};
    testing_specs::OnePoint pt = testing_specs::prepare_point(*p, engine(), s, fill);
    Io blind = pt.io();
    blind.seq_q = blind.seq_kv = nullptr;
    pt.tensors->poison_outputs();
    pt.run->launch(engine().stream(), blind);
    pt.run->publish(engine().stream(), blind);
    const VerifyResult host = verify_outputs(s, fill, pt.tensors->read_outputs());
    EXPECT_FALSE(verify_passed(host)) << s.label() << ": " << host.detail;
    auto* stream = static_cast<cudaStream_t>(engine().stream().native);
    const VerifyResult dev = judge_rows(s, cuda::check_on_device(s, pt.io(), stream));
    EXPECT_FALSE(verify_passed(dev)) << s.label() << ": " << dev.detail;
  }
}

}  // namespace
}  // namespace attnprof
