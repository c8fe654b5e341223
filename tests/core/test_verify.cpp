// The verifier (src/core/verify.cpp): correct outputs pass, a single wrong element fails and is
// named, the NaN poison is found anywhere, the bounds separate dtypes, and the host's row sample
// contains the rows it promises and is deterministic.
#include "attnprof/verify.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "attnprof/reference.hpp"
#include "core/reference_cache.hpp"
#include "test_specs.hpp"

namespace attnprof {
namespace {

using testing_specs::make_spec;

// Outputs from the fp64 reference rounded to float, for the given rows only (others stay 0):
// what a perfect provider would return on those rows.
HostOutputs reference_outputs(const Spec& s, const InputFill& ctx,
                              const std::vector<RowIndex>& rows) {
  HostOutputs out;
  const int64_t dv = s.dv(), d = s.head_dim, g = s.group_size();
  if (s.mode != Mode::bwd) {
    out.o.assign(size_t(s.o_elems()), 0.0f);
    out.lse.assign(size_t(s.batch * s.q_heads * s.q_len), 0.0f);
    for (const RowIndex& r : rows) {
      const auto q = input_slice(s, ctx.seed, ctx.pattern, TensorId::q, r.b, r.h);
      const auto k = input_slice(s, ctx.seed, ctx.pattern, TensorId::k, r.b, r.h / g);
      const auto v = input_slice(s, ctx.seed, ctx.pattern, TensorId::v, r.b, r.h / g);
      const RowRef ref = reference_row(s, &q[size_t(r.i * d)], k, v, r.i, kNoSink);
      for (int64_t c = 0; c < dv; ++c)
        out.o[size_t(flat_index(s, r.b, r.h, r.i, c, s.q_heads, s.q_len, dv))] =
            float(ref.o[size_t(c)]);
      out.lse[size_t((r.b * s.q_heads + r.h) * s.q_len + r.i)] = float(ref.lse);
    }
  }
  if (s.mode != Mode::fwd) {
    out.dq.assign(size_t(s.q_elems()), 0.0f);
    out.dk.assign(size_t(s.k_elems()), 0.0f);
    out.dv.assign(size_t(s.v_elems()), 0.0f);
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t kvh = 0; kvh < s.kv_heads; ++kvh) {
        const GroupGrads gr = reference_group_grads(s, ctx.seed, ctx.pattern, b, kvh);
        for (int64_t t = 0; t < g; ++t)
          for (int64_t i = 0; i < s.q_len; ++i)
            for (int64_t c = 0; c < d; ++c)
              out.dq[size_t(flat_index(s, b, kvh * g + t, i, c, s.q_heads, s.q_len, d))] =
                  float(gr.dq[size_t((t * s.q_len + i) * d + c)]);
        for (int64_t j = 0; j < s.kv_len; ++j) {
          for (int64_t c = 0; c < d; ++c)
            out.dk[size_t(flat_index(s, b, kvh, j, c, s.kv_heads, s.kv_len, d))] =
                float(gr.dk[size_t(j * d + c)]);
          for (int64_t c = 0; c < dv; ++c)
            out.dv[size_t(flat_index(s, b, kvh, j, c, s.kv_heads, s.kv_len, dv))] =
                float(gr.dv[size_t(j * dv + c)]);
        }
      }
  }
  return out;
}

HostOutputs full_reference(const Spec& s, const InputFill& ctx) {
  return reference_outputs(s, ctx, rows_to_check(s, VerifyOptions{}, ctx.seed));
}

TEST(Verify, BoundsGrowWithTheRoundoffOfTheDtype) {
  const Tolerance f32 = tolerance_for(DType::fp32), f16 = tolerance_for(DType::fp16),
                  b16 = tolerance_for(DType::bf16);
  EXPECT_LT(f32.output, f16.output);
  EXPECT_LT(f16.output, b16.output);
  for (const Tolerance& t : {f32, f16, b16}) {
    EXPECT_GT(t.gradient, t.output);
    EXPECT_GT(t.lse_abs, 0.0);
  }
  // fp8: twice its unit roundoff on O (2^-4 for e4m3, 2^-3 for e5m2); its gradients, rounded
  // four times, about twice the worst of an fp64 emulation of cuDNN's fp8 backward.
  const Tolerance e4 = tolerance_for(DType::fp8_e4m3), e5 = tolerance_for(DType::fp8_e5m2);
  EXPECT_LT(b16.output, e4.output);
  EXPECT_DOUBLE_EQ(e4.output, 2.0 / 16);
  EXPECT_DOUBLE_EQ(e5.output, 2.0 / 8);
  EXPECT_DOUBLE_EQ(e4.gradient, 4.0 / 16);
  EXPECT_DOUBLE_EQ(e5.gradient, 0.4);
  EXPECT_GT(e4.gradient, e4.output);
  EXPECT_GT(e4.lse_abs, 0.0);
}

TEST(Verify, CorrectOutputsPass) {
  const InputFill ctx{.seed = 5};
  const Spec specs[] = {
      make_spec(2, 4, 2, 37, 37, 16, DType::fp32, {MaskKind::causal_tl, 0}),
      make_spec(1, 8, 1, 20, 45, 8, DType::fp16, {MaskKind::causal_br, 0}, Mode::fwd, Layout::bshd),
      make_spec(1, 2, 2, 45, 20, 8, DType::bf16, {MaskKind::window, 5}),  // empty rows
      make_spec(2, 4, 2, 13, 17, 8, DType::fp32, {MaskKind::causal_br, 0}, Mode::fwd_bwd,
                Layout::bshd),
      make_spec(1, 3, 1, 9, 9, 8, DType::fp16, {}, Mode::bwd),
  };
  for (const Spec& s : specs) {
    const VerifyResult r = verify_outputs(s, ctx, full_reference(s, ctx));
    EXPECT_TRUE(verify_passed(r)) << s.label() << ": " << r.detail;
    EXPECT_TRUE(r.checked);
    EXPECT_EQ(r.sampling, "all");
    EXPECT_EQ(r.rows_checked, r.rows_total);
    EXPECT_EQ(r.rows_total, s.batch * s.q_heads * s.q_len);
    EXPECT_EQ(r.nan_count, 0);
    EXPECT_LT(r.rel_l2_err, 1e-6);  // float rounding of the reference itself
    if (s.mode == Mode::bwd)
      EXPECT_EQ(r.lse_max_abs_err, -1.0);
    else
      EXPECT_GE(r.lse_max_abs_err, 0.0);
  }
}

TEST(Verify, OneWrongElementFailsAndNamesItsRow) {
  const InputFill ctx{.seed = 9};
  const Spec s = make_spec(2, 4, 2, 33, 40, 16, DType::fp16, {MaskKind::causal_br, 0}, Mode::fwd,
                           Layout::bshd);
  HostOutputs out = full_reference(s, ctx);
  const size_t e = size_t(flat_index(s, 1, 2, 5, 7, s.q_heads, s.q_len, s.dv()));
  out.o[e] = -out.o[e] + 0.5f;
  const VerifyResult r = verify_outputs(s, ctx, out);
  EXPECT_FALSE(verify_passed(r));
  EXPECT_GT(r.rel_l2_err, r.tolerance);
  EXPECT_NE(r.detail.find("o row (b=1, h=2, i=5)"), std::string::npos) << r.detail;

  // The same in a gradient: dK of KV head 1, key 3.
  const Spec sb =
      make_spec(1, 4, 2, 12, 10, 8, DType::fp32, {MaskKind::causal_tl, 0}, Mode::fwd_bwd);
  HostOutputs ob = full_reference(sb, ctx);
  EXPECT_TRUE(verify_passed(verify_outputs(sb, ctx, ob)));
  ob.dk[size_t(flat_index(sb, 0, 1, 3, 2, sb.kv_heads, sb.kv_len, sb.head_dim))] += 0.25f;
  const VerifyResult rb = verify_outputs(sb, ctx, ob);
  EXPECT_FALSE(verify_passed(rb));
  EXPECT_NE(rb.detail.find("dk row (b=0, kv_head=1, j=3)"), std::string::npos) << rb.detail;
}

// Gradient rows are judged against max(own norm, RMS row norm of the tensor's checked rows):
// an error of a tenth of a typical row still fails, named; an error of a thousandth of a typical
// row on a row that nearly cancels (its own norm far smaller) passes.
TEST(Verify, GradientRowsAreJudgedAgainstTheTypicalRowNorm) {
  const InputFill ctx{.seed = 11};
  const Spec s = make_spec(1, 2, 1, 16, 16, 8, DType::bf16, {MaskKind::causal_tl, 0}, Mode::bwd);
  HostOutputs out = full_reference(s, ctx);
  double sum2 = 0;
  for (float x : out.dq) sum2 += double(x) * x;
  const double rms_row = std::sqrt(sum2 / double(s.q_heads * s.q_len));
  // Row (0, 1, 1) sees two keys; find its norm.
  auto row_at = [&](int64_t h, int64_t i, int64_t c) {
    return size_t(flat_index(s, 0, h, i, c, s.q_heads, s.q_len, s.head_dim));
  };
  HostOutputs small = out;
  small.dq[row_at(1, 1, 0)] += float(1e-3 * rms_row);
  EXPECT_TRUE(verify_passed(verify_outputs(s, ctx, small)));
  HostOutputs big = out;
  big.dq[row_at(1, 9, 3)] += float(0.2 * rms_row);
  const VerifyResult r = verify_outputs(s, ctx, big);
  EXPECT_FALSE(verify_passed(r));
  EXPECT_NE(r.detail.find("dq row (b=0, h=1, i=9)"), std::string::npos) << r.detail;
}

TEST(Verify, WrongLseFailsEvenWithCorrectOutput) {
  const InputFill ctx{.seed = 2};
  const Spec s = make_spec(1, 2, 2, 16, 16, 8, DType::fp32);
  HostOutputs out = full_reference(s, ctx);
  out.lse[7] += 0.01f;  // e.g. a log2 / ln mix-up would be far larger
  const VerifyResult r = verify_outputs(s, ctx, out);
  EXPECT_LE(r.rel_l2_err, r.tolerance);
  EXPECT_GT(r.lse_max_abs_err, r.lse_tolerance);
  EXPECT_FALSE(verify_passed(r));
}

TEST(Verify, Fp16RoundedOutputPassesFp16ButNotFp32) {
  const InputFill ctx{.seed = 4};
  Spec s = make_spec(1, 2, 2, 64, 64, 32, DType::fp32);
  HostOutputs out = full_reference(s, ctx);
  for (float& x : out.o) x = round_to_dtype(x, 1);
  EXPECT_FALSE(verify_passed(verify_outputs(s, ctx, out)));
  s.dtype = DType::fp16;  // inputs differ, so recompute before rounding
  out = full_reference(s, ctx);
  for (float& x : out.o) x = round_to_dtype(x, 1);
  EXPECT_TRUE(verify_passed(verify_outputs(s, ctx, out)));
}

TEST(Verify, NanLeftAnywhereFailsEvenOutsideTheSample) {
  const InputFill ctx{.seed = 17};
  VerifyOptions opt;
  opt.full_check_flops = 1e6;  // force the sample
  const Spec s = make_spec(1, 2, 2, 4096, 4096, 16, DType::bf16, {MaskKind::causal_tl, 0});
  const std::vector<RowIndex> rows = rows_to_check(s, opt, ctx.seed);
  HostOutputs out = reference_outputs(s, ctx, rows);
  VerifyResult r = verify_outputs(s, ctx, out, opt);
  EXPECT_EQ(r.sampling, "sample");
  EXPECT_EQ(r.rows_checked, int64_t(rows.size()));
  EXPECT_LT(r.rows_checked, r.rows_total);
  ASSERT_TRUE(verify_passed(r)) << r.detail;
  // A row the sample does not contain.
  RowIndex unchecked{0, 1, 3001};
  while (std::find(rows.begin(), rows.end(), unchecked) != rows.end()) ++unchecked.i;
  out.o[size_t(flat_index(s, 0, 1, unchecked.i, 3, 2, 4096, 16))] =
      std::numeric_limits<float>::quiet_NaN();
  r = verify_outputs(s, ctx, out, opt);
  EXPECT_EQ(r.nan_count, 1);
  EXPECT_FALSE(verify_passed(r));
  EXPECT_NE(r.detail.find("i=" + std::to_string(unchecked.i)), std::string::npos) << r.detail;
  // An infinite LSE on a row that sees keys is caught the same way.
  out.o[size_t(flat_index(s, 0, 1, unchecked.i, 3, 2, 4096, 16))] = 0.0f;
  out.lse[size_t(4096 + unchecked.i)] = std::numeric_limits<float>::infinity();
  r = verify_outputs(s, ctx, out, opt);
  EXPECT_EQ(r.nan_count, 1);
  EXPECT_FALSE(verify_passed(r));
}

TEST(Verify, EmptyRowsAcceptZeroOutputAndInfiniteLseOfEitherSign) {
  const InputFill ctx{.seed = 3};
  const Spec s = make_spec(1, 1, 1, 12, 4, 8, DType::fp32, {MaskKind::causal_br, 0});
  HostOutputs out = full_reference(s, ctx);  // rows 0..7 see no key
  ASSERT_TRUE(std::isinf(out.lse[0]));
  EXPECT_TRUE(verify_passed(verify_outputs(s, ctx, out)));
  out.lse[0] = std::numeric_limits<float>::infinity();  // FlashAttention's choice
  EXPECT_TRUE(verify_passed(verify_outputs(s, ctx, out)));
  out.o[0] = 1e-3f;  // an empty row must be exactly the zero convention (absolute error)
  EXPECT_FALSE(verify_passed(verify_outputs(s, ctx, out)));
}

TEST(Verify, MissingOrShortTensorsFail) {
  const InputFill ctx{.seed = 1};
  const Spec s = make_spec(1, 2, 2, 8, 8, 8, DType::fp32, {}, Mode::fwd_bwd);
  HostOutputs out = full_reference(s, ctx);
  out.dv.pop_back();
  VerifyResult r = verify_outputs(s, ctx, out);
  EXPECT_FALSE(verify_passed(r));
  EXPECT_NE(r.detail.find("dv has"), std::string::npos) << r.detail;
  out = full_reference(s, ctx);
  out.o.clear();
  EXPECT_FALSE(verify_passed(verify_outputs(s, ctx, out)));
}

TEST(Verify, SampledRowsCoverEveryTileOfEveryHeadAndTheMasksEdges) {
  // Bottom-right causal with q_len > kv_len: off = 3000 - 5000 = -2000, so row 2000 is the
  // first that sees key 0 and row 4999 the first that sees the last key.
  const Spec s = make_spec(3, 8, 2, 5000, 3000, 64, DType::fp16, {MaskKind::causal_br, 0});
  const VerifyOptions opt;  // 2*3*8*5000*3000*128 = 4.6e10 fp64 FLOPs: beyond the budget
  const std::vector<RowIndex> a = rows_to_check(s, opt, 77);
  EXPECT_EQ(a, rows_to_check(s, opt, 77));
  EXPECT_NE(a, rows_to_check(s, opt, 78));
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end(), [](const RowIndex& x, const RowIndex& y) {
    return std::tie(x.b, x.h, x.i) < std::tie(y.b, y.h, y.i);
  }));
  EXPECT_EQ(std::adjacent_find(a.begin(), a.end()), a.end());
  auto has = [&](int64_t b, int64_t h, int64_t i) {
    return std::binary_search(a.begin(), a.end(), RowIndex{b, h, i},
                              [](const RowIndex& x, const RowIndex& y) {
                                return std::tie(x.b, x.h, x.i) < std::tie(y.b, y.h, y.i);
                              });
  };
  // Every (batch, head): the first and last row of every tile of 16, the last row.
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t h = 0; h < 8; ++h) {
      for (int64_t i = 0; i < 5000; i += 16) {
        EXPECT_TRUE(has(b, h, i)) << b << " " << h << " " << i;
        EXPECT_TRUE(has(b, h, std::min<int64_t>(i + 15, 4999))) << b << " " << h << " " << i;
      }
    }
  for (int64_t i : {1999, 2000, 2001}) EXPECT_TRUE(has(0, 0, i)) << i;  // diagonal enters
  for (int64_t i : {1999, 2000, 2001}) EXPECT_TRUE(has(2, 4, i)) << i;  // last KV group's first
  EXPECT_LT(a.size(), size_t(3 * 8 * 5000 / 6));
  for (const RowIndex& r : a) {
    EXPECT_LT(r.b, 3);
    EXPECT_LT(r.h, 8);
    EXPECT_LT(r.i, 5000);
    EXPECT_GE(r.i, 0);
  }
  // Window: the rows where the window starts sliding past key 0 (i = W - off - 1, W - off).
  const Spec w = make_spec(1, 4, 4, 8192, 8192, 64, DType::bf16, {MaskKind::window, 300});
  const std::vector<RowIndex> wr = rows_to_check(w, opt, 1);
  for (int64_t i : {299, 300, 301})
    EXPECT_NE(std::find(wr.begin(), wr.end(), RowIndex{0, 0, i}), wr.end()) << i;
  // --verify full: every row whatever it costs.
  VerifyOptions full;
  full.full = true;
  EXPECT_EQ(rows_to_check(s, full, 77).size(), size_t(3 * 8 * 5000));
}

TEST(Verify, StratifiedBackwardChecksSampledGroupsWithinItsBudget) {
  const InputFill ctx{.seed = 12};
  const Spec s = make_spec(2, 4, 2, 24, 20, 8, DType::fp32, {MaskKind::window, 9}, Mode::bwd);
  VerifyOptions opt;
  opt.full_check_flops = 100;  // force the sample on a small shape
  HostOutputs out = full_reference(s, ctx);
  // The last group (b=1, kv_head=1) is always sampled: a wrong dV there fails.
  out.dv[size_t(flat_index(s, 1, 1, 4, 0, s.kv_heads, s.kv_len, s.dv()))] += 0.5f;
  VerifyResult r = verify_outputs(s, ctx, out, opt);
  EXPECT_EQ(r.sampling, "sample");
  EXPECT_FALSE(verify_passed(r));
  EXPECT_NE(r.detail.find("dv row (b=1, kv_head=1, j=4)"), std::string::npos) << r.detail;
  // Over the group budget, dK/dV are not checked and the detail says so.
  opt.grad_group_work = 10;
  r = verify_outputs(s, ctx, out, opt);
  EXPECT_NE(r.detail.find("dk/dv not checked"), std::string::npos) << r.detail;
  EXPECT_TRUE(verify_passed(r)) << r.detail;
}

TEST(Verify, SmallShapesCheckEveryRow) {
  const Spec s = make_spec(2, 3, 3, 10, 12, 8, DType::fp32);
  const std::vector<RowIndex> rows = rows_to_check(s, VerifyOptions{}, 5);
  ASSERT_EQ(rows.size(), size_t(2 * 3 * 10));
  EXPECT_EQ(rows.front(), (RowIndex{0, 0, 0}));
  EXPECT_EQ(rows.back(), (RowIndex{1, 2, 9}));
}

// The judge works on any check's rows (the host's or the device's): the worst row relative to its
// bound is named, gradient rows of a group are measured against the group's RMS row norm.
TEST(Verify, JudgeRowsRanksRowsByTheirBound) {
  const Spec s = make_spec(1, 2, 1, 4, 3, 8, DType::fp16, {}, Mode::fwd_bwd);
  RowChecks c;
  c.sampling = "all (device)";
  c.rows_checked = 8;
  for (int64_t r = 0; r < 8; ++r) c.o.push_back({r, 1e-6, 1.0, 1e-3});
  c.o[5].err2 = 9e-6;  // rel 3e-3: within fp16's 5e-3
  for (int64_t r = 0; r < 8; ++r) c.dq.push_back({r, 0, 1.0, 0});
  for (int64_t r = 0; r < 3; ++r) {
    c.dk.push_back({r, 0, 1.0, 0});
    c.dv.push_back({r, 0, 1.0, 0});
  }
  // dK row 2 nearly cancels (ref2 1e-8) with an error of 1e-3 of the group's RMS norm (1.0 over
  // its other rows): judged against the RMS, it passes.
  c.dk[2] = {2, 1e-6, 1e-8, 1e-3};
  VerifyResult v = judge_rows(s, c);
  EXPECT_TRUE(verify_passed(v)) << v.detail;
  EXPECT_EQ(v.sampling, "all (device)");
  EXPECT_EQ(v.rows_checked, 8);
  EXPECT_EQ(v.rows_total, 8);
  EXPECT_NEAR(v.rel_l2_err, 3e-3, 1e-12);
  EXPECT_NE(v.detail.find("o row (b=0, h=1, i=1)"), std::string::npos) << v.detail;
  // A dV row off by 2e-2 of its norm is worse relative to the gradient bound (1e-2) than the O
  // row relative to its own: it is named, and fails.
  c.dv[1].err2 = 4e-4;
  v = judge_rows(s, c);
  EXPECT_FALSE(verify_passed(v));
  EXPECT_NE(v.detail.find("dv row (b=0, kv_head=0, j=1)"), std::string::npos) << v.detail;
  EXPECT_DOUBLE_EQ(v.tolerance, tolerance_for(DType::fp16).gradient);
  // A NaN is the worst error there is; a problem makes nothing comparable.
  c.dv[1].err2 = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isinf(judge_rows(s, c).rel_l2_err));
  c.problem = "o has 3 elements, expected 64";
  v = judge_rows(s, c);
  EXPECT_FALSE(verify_passed(v));
  EXPECT_EQ(v.detail, c.problem);
}

TEST(Verify, DisagreementComparesTheRowsBothChecked) {
  const Spec s = make_spec(1, 1, 1, 10, 10, 8, DType::fp32);
  RowChecks host, device;
  host.o = {{3, 1e-6, 1.0, 0}, {7, 4e-6, 1.0, 0}};
  host.lse = {{3, 1e-4}};
  for (int64_t r = 0; r < 10; ++r) device.o.push_back({r, 1e-6 * double(r % 5), 1.0, 0});
  device.lse = {{3, 1e-4}, {4, 0.5}};
  // Row 3: 3e-6 against 1e-6 (sqrt: 1.73e-3 against 1e-3); row 7: 2e-6 against 4e-6.
  EXPECT_NEAR(check_disagreement(s, device, host), std::sqrt(3e-6) - 1e-3, 1e-12);
  device.o[3].err2 = 1e-6;
  device.o[7].err2 = 4e-6;
  EXPECT_EQ(check_disagreement(s, device, host), 0.0);
  device.lse[0].second = 2e-4;
  EXPECT_NEAR(check_disagreement(s, device, host), 1e-4, 1e-15);
  host.dq = {{11, 0, 1, 0}};  // a row the device did not check
  EXPECT_TRUE(std::isinf(check_disagreement(s, device, host)));
}

// Only `rows` of `full` (and every row of the given (batch, KV head) groups of dK and dV), as a
// partial read holds them (PointTensors::read_rows), in reverse order so no offset lines up.
HostOutputs partial_copy(const Spec& s, const HostOutputs& full, const std::vector<RowIndex>& rows,
                         const std::vector<int64_t>& groups) {
  HostOutputs part;
  auto take = [&](TensorRole role, int64_t first, int64_t dim) {
    const std::vector<float>& from = *full.slot(role);
    if (from.empty()) return;
    std::vector<float>& to = *part.slot(role);
    if (part.held[role].emplace(first, to.size()).second)
      to.insert(to.end(), from.begin() + first, from.begin() + first + dim);
  };
  for (auto r = rows.rbegin(); r != rows.rend(); ++r) {
    take(TensorRole::o, flat_index(s, r->b, r->h, r->i, 0, s.q_heads, s.q_len, s.dv()), s.dv());
    take(TensorRole::lse, flat_row(s, *r), 1);
    take(TensorRole::dq, flat_index(s, r->b, r->h, r->i, 0, s.q_heads, s.q_len, s.head_dim),
         s.head_dim);
  }
  for (int64_t g : groups) {
    for (int64_t j = 0; j < s.kv_len; ++j) {
      const int64_t b = g / s.kv_heads, h = g % s.kv_heads;
      take(TensorRole::dk, flat_index(s, b, h, j, 0, s.kv_heads, s.kv_len, s.head_dim), s.head_dim);
      take(TensorRole::dv, flat_index(s, b, h, j, 0, s.kv_heads, s.kv_len, s.dv()), s.dv());
    }
  }
  return part;
}

void expect_same(const std::vector<RowCheck>& a, const std::vector<RowCheck>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t t = 0; t < a.size(); ++t) {
    EXPECT_EQ(a[t].row, b[t].row);
    EXPECT_EQ(a[t].err2, b[t].err2);
    EXPECT_EQ(a[t].ref2, b[t].ref2);
    EXPECT_EQ(a[t].floor, b[t].floor);
  }
}

// The device's cross-check reads back only the rows it compares: the host check of those rows
// gives what it gives on whole copies, and a row the read lacks is a problem, never a pass.
TEST(Verify, APartialReadChecksItsRowsAsTheWholeCopyDoes) {
  for (const Spec& s :
       {make_spec(2, 4, 2, 40, 40, 16, DType::fp32, testing_specs::kCausal, Mode::fwd,
                  Layout::bshd),
        make_spec(1, 2, 1, 24, 24, 8, DType::fp32, testing_specs::kNone, Mode::fwd_bwd)}) {
    const InputFill fill{.seed = 11};
    const std::vector<RowIndex> rows = cross_check_rows(s, fill.seed);
    HostOutputs full = reference_outputs(s, fill, rows);
    const RowIndex& r0 = rows.front();  // one wrong element, so that errors are not all 0
    full.o[size_t(flat_index(s, r0.b, r0.h, r0.i, 1, s.q_heads, s.q_len, s.dv()))] += 0.5f;
    const std::vector<int64_t> groups =
        s.mode == Mode::fwd ? std::vector<int64_t>{} : std::vector<int64_t>{0};
    const HostOutputs part = partial_copy(s, full, rows, groups);
    ASSERT_TRUE(part.partial());
    const RowChecks a = check_rows_on_host(s, fill, full, rows, groups);
    const RowChecks b = check_rows_on_host(s, fill, part, rows, groups);
    EXPECT_EQ(b.problem, "") << s.label();
    expect_same(a.o, b.o);
    expect_same(a.dq, b.dq);
    expect_same(a.dk, b.dk);
    expect_same(a.dv, b.dv);
    ASSERT_EQ(a.lse.size(), b.lse.size());
    for (size_t t = 0; t < a.lse.size(); ++t) EXPECT_EQ(a.lse[t], b.lse[t]);

    std::vector<RowIndex> more = rows;
    more.push_back({s.batch - 1, s.q_heads - 1, s.q_len / 2});
    std::sort(more.begin(), more.end(), [](const RowIndex& x, const RowIndex& y) {
      return std::tie(x.b, x.h, x.i) < std::tie(y.b, y.h, y.i);
    });
    more.erase(std::unique(more.begin(), more.end()), more.end());
    if (more.size() == rows.size()) continue;  // already held
    const RowChecks c = check_rows_on_host(s, fill, part, more, groups);
    EXPECT_NE(c.problem.find("lacks row"), std::string::npos) << c.problem;
    EXPECT_FALSE(verify_passed(judge_rows(s, c)));
  }
}

}  // namespace
}  // namespace attnprof

namespace attnprof {
namespace {

// The host check keeps its fp64 reference for the next check of the same rows of the same
// inputs (core/reference_cache.hpp): the second check is served from it and judges exactly as
// the first, a wrong output is still caught from the kept reference, and other inputs (another
// seed) or another spec never reuse it.
TEST(Verify, TheKeptReferenceServesTheNextCheckAndNeverHidesAWrongOutput) {
  const InputFill ctx{.seed = 21};
  const Spec s = make_spec(2, 4, 2, 50, 70, 16, DType::fp32, {MaskKind::causal_br, 0});
  const HostOutputs good = full_reference(s, ctx);
  const int64_t hits0 = forward_refs_hits();
  const RowChecks first = check_on_host(s, ctx, good, VerifyOptions{});
  const RowChecks again = check_on_host(s, ctx, good, VerifyOptions{});
  EXPECT_EQ(forward_refs_hits(), hits0 + 1);
  ASSERT_EQ(first.o.size(), again.o.size());
  for (size_t t = 0; t < first.o.size(); ++t) {
    EXPECT_EQ(first.o[t].row, again.o[t].row);
    EXPECT_EQ(first.o[t].err2, again.o[t].err2);
    EXPECT_EQ(first.o[t].floor, again.o[t].floor);
  }
  EXPECT_TRUE(verify_passed(judge_rows(s, again)));

  HostOutputs bad = good;
  bad.o[size_t(flat_index(s, 1, 3, 49, 4, s.q_heads, s.q_len, s.dv()))] += 0.5f;
  const VerifyResult r = judge_rows(s, check_on_host(s, ctx, bad, VerifyOptions{}));
  EXPECT_EQ(forward_refs_hits(), hits0 + 2);
  EXPECT_FALSE(verify_passed(r));
  EXPECT_NE(r.detail.find("o row (b=1, h=3, i=49)"), std::string::npos) << r.detail;

  // Another seed's inputs: computed afresh (no hit), and the first seed's outputs fail there.
  const InputFill other{.seed = 22};
  EXPECT_FALSE(verify_passed(judge_rows(s, check_on_host(s, other, good, VerifyOptions{}))));
  Spec capped = s;
  capped.softcap = 2;
  EXPECT_FALSE(
      verify_passed(judge_rows(capped, check_on_host(capped, ctx, good, VerifyOptions{}))));
  EXPECT_EQ(forward_refs_hits(), hits0 + 2);
}

// The stale check's rows: one (batch, head) pair, a non-empty sequence, its first and last rows,
// a different pair for another seed.
TEST(FreshCheckRows, OnePairItsEdgesAndAnotherPairForAnotherSeed) {
  const Spec s = make_spec(4, 8, 2, 300, 500, 16, DType::bf16, testing_specs::kCausal, Mode::fwd);
  std::set<std::pair<int64_t, int64_t>> seen;
  for (uint64_t seed : {1u, 2u, 3u, 4u}) {
    const std::vector<RowIndex> rows = fresh_check_rows(s, seed);
    ASSERT_GE(rows.size(), 3u);
    for (const RowIndex& r : rows) {
      EXPECT_EQ(r.b, rows.front().b);
      EXPECT_EQ(r.h, rows.front().h);
      EXPECT_LT(r.i, s.q_len);
    }
    EXPECT_EQ(rows.front().i, 0);
    EXPECT_EQ(rows.back().i, s.q_len - 1);
    seen.insert({rows.front().b, rows.front().h});
  }
  EXPECT_GT(seen.size(), 1u) << "the pair follows the seed";
}

}  // namespace
}  // namespace attnprof
