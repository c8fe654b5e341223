// A paged KV cache (Spec::page_size): the block table the harness scatters, the host tensors that
// hold K and V in its pages, cpu.reference reading through it, the runner refusing it to a
// provider that reads contiguous K and V only, and the spec and traits in the JSON rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/paging.hpp"
#include "attnprof/result_json.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/verify.hpp"
#include "one_point.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

Spec paged(Layout layout = Layout::bhsd) {
  return {.batch = 3,
          .q_heads = 4,
          .kv_heads = 2,
          .q_len = 5,
          .kv_len = 37,  // three pages of 16, the last one 11 keys short
          .head_dim = 8,
          .v_head_dim = 4,
          .dtype = DType::bf16,
          .mask = Mask{MaskKind::causal_br, 0},
          .layout = layout,
          .page_size = 16};
}

TEST(Paging, TheBlockTableIsASeededPermutationOfThePages) {
  const Spec s = paged();
  const std::vector<int32_t> t = block_table(s, 7);
  ASSERT_EQ(t.size(), 9u);  // 3 sequences x 3 pages
  std::vector<int32_t> sorted = t;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int32_t> ids(9);
  std::iota(ids.begin(), ids.end(), 0);
  EXPECT_EQ(sorted, ids);
  EXPECT_EQ(block_table(s, 7), t);  // the same for every provider of the point
  EXPECT_NE(block_table(s, 8), t);
  // Scattered: over many seeds, hardly any table leaves every sequence's pages in order.
  int in_order = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) in_order += block_table(s, seed) == ids;
  EXPECT_LE(in_order, 1);
  Spec contiguous = s;
  contiguous.page_size = 0;
  EXPECT_TRUE(block_table(contiguous, 7).empty());
}

// Every key of the paged K and V holds the value the contiguous tensor has at that key, and the
// last page's tail holds kPageTailValue (a kernel that gives a tail key weight fails).
TEST(Paging, HostTensorsHoldTheContiguousValuesInTheirPages) {
  for (Layout layout : {Layout::bhsd, Layout::bshd}) {
    const Spec s = paged(layout);
    Spec flat = s;
    flat.page_size = 0;
    const InputFill fill{.seed = 11};
    auto engine = make_cpu_engine(1);
    auto pages = engine->allocate(s, false, fill);
    auto contiguous = engine->allocate(flat, false, fill);
    for (TensorRole r : {TensorRole::k, TensorRole::v}) {
      const TensorView& p = pages->io()[r];
      const TensorView& c = contiguous->io()[r];
      ASSERT_TRUE(p.paged());
      EXPECT_EQ(p.elems(), 3 * 2 * 48 * p.dim);
      std::vector<bool> written(static_cast<size_t>(p.elems()), false);
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t h = 0; h < s.kv_heads; ++h)
          for (int64_t pos = 0; pos < s.kv_len; ++pos)
            for (int64_t d = 0; d < p.dim; ++d) {
              const int64_t at = p.offset(b, h, pos, d);
              ASSERT_GE(at, 0);
              ASSERT_LT(at, p.elems());
              EXPECT_FALSE(written[size_t(at)]) << "two keys share element " << at;
              written[size_t(at)] = true;
              EXPECT_EQ(p.as<float>()[at], c.as<float>()[c.offset(b, h, pos, d)]);
            }
      for (size_t e = 0; e < written.size(); ++e) {
        if (!written[e]) {
          EXPECT_EQ(p.as<float>()[e], kPageTailValue) << e;
        }
      }
    }
    // The table is part of the point's memory.
    EXPECT_EQ(pages->bytes(), tensor_bytes(pages->io()) + 9 * 4);
  }
}

// cpu.reference reads K and V through the table: its output is bit for bit the contiguous one's,
// and it verifies against the fp64 reference of the contiguous values.
TEST(Paging, TheReferenceReadsThePagesExactly) {
  for (Layout layout : {Layout::bhsd, Layout::bshd}) {
    const Spec s = paged(layout);
    Spec flat = s;
    flat.page_size = 0;
    const InputFill fill{.seed = 5};
    auto engine = make_cpu_engine(1);
    auto p = make_cpu_reference();
    const HostOutputs a = testing_specs::run_once(*p, *engine, s, fill);
    const HostOutputs b = testing_specs::run_once(*p, *engine, flat, fill);
    EXPECT_EQ(a.o, b.o);
    EXPECT_EQ(a.lse, b.lse);
    const VerifyResult r = verify_outputs(s, fill, a);
    EXPECT_TRUE(verify_passed(r)) << r.detail;
  }
}

// The page tail catches a kernel that gives weight to a key past kv_len: attention over one key
// too many (the tail's first slot), read through the table, fails verification in both layouts,
// while the same code over exactly kv_len keys passes.
TEST(Paging, AKeyPastTheEndIsCaughtByTheTail) {
  for (Layout layout : {Layout::bhsd, Layout::bshd}) {
    Spec s = paged(layout);
    s.mask = Mask{};
    s.dtype = DType::fp32;
    const InputFill fill{.seed = 3};
    auto engine = make_cpu_engine(1);
    auto tensors = engine->allocate(s, false, fill);
    const Io& io = tensors->io();
    for (int64_t extra : {0, 1}) {
      const int64_t keys = s.kv_len + extra;
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t h = 0; h < s.q_heads; ++h)
          for (int64_t i = 0; i < s.q_len; ++i) {
            const int64_t kvh = h / s.group_size();
            std::vector<double> p(static_cast<size_t>(keys));
            double m = -INFINITY, sum = 0;
            for (int64_t j = 0; j < keys; ++j) {
              double dot = 0;
              for (int64_t d = 0; d < s.head_dim; ++d)
                dot += double(io.q.as<float>()[io.q.offset(b, h, i, d)]) *
                       io.k.as<float>()[io.k.offset(b, kvh, j, d)];
              p[size_t(j)] = dot * s.softmax_scale();
              m = std::max(m, p[size_t(j)]);
            }
            for (double& x : p) sum += (x = std::exp(x - m));
            for (int64_t d = 0; d < s.dv(); ++d) {
              double o = 0;
              for (int64_t j = 0; j < keys; ++j)
                o += p[size_t(j)] / sum * io.v.as<float>()[io.v.offset(b, kvh, j, d)];
              io.o.as<float>()[io.o.offset(b, h, i, d)] = static_cast<float>(o);
            }
          }
      const VerifyResult r = verify_outputs(s, fill, tensors->read_outputs());
      EXPECT_EQ(verify_passed(r), extra == 0)
          << to_string(layout) << " +" << extra << ": " << r.detail;
    }
  }
}

TEST(Paging, TheRunnerRefusesAPagedPointToAContiguousProvider) {
  auto engine = make_cpu_engine(1);
  RunOptions o = testing_specs::quick_run_options();
  auto naive = make_cpu_naive();
  const Result no = run_point(paged(), *naive, *engine, o);
  EXPECT_EQ(no.status, Status::not_supported);
  EXPECT_EQ(no.reason,
            "cpu.naive reads contiguous K and V only: it has no paged KV cache (page_size 16)");
  auto ref = make_cpu_reference();
  const Result yes = run_point(paged(), *ref, *engine, o);
  EXPECT_EQ(yes.status, Status::passed) << yes.reason;
  EXPECT_TRUE(yes.traits.paged_kv);
  // The row's spec and traits survive the JSON round trip; a contiguous row has neither field.
  const Result back = result_from_json(nlohmann::json::parse(to_json(yes).dump()));
  EXPECT_EQ(back.spec, paged());
  EXPECT_TRUE(back.traits.paged_kv);
  Spec flat = paged();
  flat.page_size = 0;
  EXPECT_FALSE(to_json(flat).contains("page_size"));
  EXPECT_FALSE(to_json(naive->traits()).contains("paged_kv"));
}

}  // namespace
}  // namespace attnprof
