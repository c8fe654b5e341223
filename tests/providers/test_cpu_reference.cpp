// cpu.reference (src/providers/cpu/reference.cpp): its gradients against central finite
// differences of the fp64 forward on a tiny GQA shape, its forward against reference_row, and
// its support limit.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/reference.hpp"
#include "attnprof/verify.hpp"
#include "one_point.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

Spec tiny() {
  Spec s;
  s.batch = 2;
  s.q_heads = 4;
  s.kv_heads = 2;  // two query heads per KV head: dK and dV sum over both
  s.q_len = 5;
  s.kv_len = 7;
  s.head_dim = 4;
  s.v_head_dim = 3;
  s.dtype = DType::fp32;
  s.mask = Mask{MaskKind::causal_br, 0};
  s.mode = Mode::fwd_bwd;
  s.layout = Layout::bshd;
  return s;
}

// Inputs of one (batch, KV head) group in double, and the loss sum(dO * O) over the group.
struct Group {
  std::vector<std::vector<double>> q, d_o;  // per query head of the group
  std::vector<double> k, v;
};

Group load(const Spec& s, uint64_t seed, int64_t b, int64_t kvh) {
  Group g;
  g.k = input_slice(s, seed, InputPattern::random, TensorId::k, b, kvh);
  g.v = input_slice(s, seed, InputPattern::random, TensorId::v, b, kvh);
  for (int64_t t = 0; t < s.group_size(); ++t) {
    const int64_t h = kvh * s.group_size() + t;
    g.q.push_back(input_slice(s, seed, InputPattern::random, TensorId::q, b, h));
    g.d_o.push_back(input_slice(s, seed, InputPattern::random, TensorId::d_o, b, h));
  }
  return g;
}

double loss(const Spec& s, const Group& g) {
  double l = 0;
  for (size_t t = 0; t < g.q.size(); ++t)
    for (int64_t i = 0; i < s.q_len; ++i) {
      const RowRef r = reference_row(s, &g.q[t][size_t(i * s.head_dim)], g.k, g.v, i, kNoSink);
      for (int64_t c = 0; c < s.dv(); ++c) l += g.d_o[t][size_t(i * s.dv() + c)] * r.o[size_t(c)];
    }
  return l;
}

// Central difference of the loss in one input element; eps 1e-5 leaves a truncation error of
// ~1e-10 and a cancellation error of ~1e-11 in double.
double numeric_grad(const Spec& s, Group g, std::vector<double> Group::*member, int64_t head,
                    size_t e) {
  const double eps = 1e-5;
  auto& x = member ? (g.*member)[e] : g.q[size_t(head)][e];
  const double x0 = x;
  x = x0 + eps;
  const double up = loss(s, g);
  x = x0 - eps;
  const double down = loss(s, g);
  return (up - down) / (2 * eps);
}

TEST(CpuReference, GradientsMatchFiniteDifferences) {
  const Spec s = tiny();
  const InputFill ctx{.seed = 21};
  std::unique_ptr<Provider> p = make_cpu_reference();
  ASSERT_TRUE(p->supports(s, Device{}).ok);
  std::unique_ptr<Engine> cpu = make_cpu_engine(2);
  const HostOutputs out = testing_specs::run_once(*p, *cpu, s, ctx, 2);
  ASSERT_EQ(out.dq.size(), size_t(s.q_elems()));
  const int64_t d = s.head_dim, dv = s.dv(), gs = s.group_size();
  // The float outputs carry ~6e-8 relative rounding; the finite differences ~1e-9 absolute.
  auto near = [](double got, double want) {
    return std::abs(got - want) <= 1e-6 + 1e-6 * std::abs(want);
  };
  int64_t checked = 0;
  double max_grad = 0;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t kvh = 0; kvh < s.kv_heads; ++kvh) {
      const Group g = load(s, ctx.seed, b, kvh);
      for (int64_t t = 0; t < gs; ++t)
        for (int64_t i = 0; i < s.q_len; ++i)
          for (int64_t c = 0; c < d; ++c) {
            const double want = numeric_grad(s, g, nullptr, t, size_t(i * d + c));
            const double got =
                out.dq[size_t(flat_index(s, b, kvh * gs + t, i, c, s.q_heads, s.q_len, d))];
            EXPECT_TRUE(near(got, want)) << "dq b=" << b << " h=" << kvh * gs + t << " i=" << i
                                         << " c=" << c << ": " << got << " vs " << want;
            max_grad = std::max(max_grad, std::abs(want));
            ++checked;
          }
      for (int64_t j = 0; j < s.kv_len; ++j) {
        for (int64_t c = 0; c < d; ++c) {
          const double want = numeric_grad(s, g, &Group::k, 0, size_t(j * d + c));
          const double got = out.dk[size_t(flat_index(s, b, kvh, j, c, s.kv_heads, s.kv_len, d))];
          EXPECT_TRUE(near(got, want))
              << "dk b=" << b << " kvh=" << kvh << " j=" << j << ": " << got << " vs " << want;
          ++checked;
        }
        for (int64_t c = 0; c < dv; ++c) {
          const double want = numeric_grad(s, g, &Group::v, 0, size_t(j * dv + c));
          const double got = out.dv[size_t(flat_index(s, b, kvh, j, c, s.kv_heads, s.kv_len, dv))];
          EXPECT_TRUE(near(got, want))
              << "dv b=" << b << " kvh=" << kvh << " j=" << j << ": " << got << " vs " << want;
          ++checked;
        }
      }
    }
  EXPECT_EQ(checked, s.q_elems() + s.k_elems() + s.v_elems());
  EXPECT_GT(max_grad, 1e-2);  // the gradients are not trivially zero
  // The forward half of fwd_bwd, and the verifier's view of the whole.
  const VerifyResult r = verify_outputs(s, ctx, out);
  EXPECT_TRUE(verify_passed(r)) << r.detail;
  EXPECT_LT(r.rel_l2_err, 1e-6);
}

TEST(CpuReference, EveryModeAndDtypeVerifies) {
  for (Mode m : {Mode::fwd, Mode::bwd, Mode::fwd_bwd})
    for (DType t : {DType::fp32, DType::fp16, DType::bf16}) {
      Spec s = tiny();
      s.mode = m;
      s.dtype = t;
      s.mask = Mask{MaskKind::window, 3};
      s.q_len = 19;
      s.kv_len = 11;
      const InputFill ctx{.seed = 4};
      std::unique_ptr<Engine> cpu = make_cpu_engine(2);
      const HostOutputs out = testing_specs::run_once(*make_cpu_reference(), *cpu, s, ctx, 2);
      EXPECT_EQ(out.o.empty(), m == Mode::bwd);
      EXPECT_EQ(out.dq.empty(), m == Mode::fwd);
      const VerifyResult r = verify_outputs(s, ctx, out);
      EXPECT_TRUE(verify_passed(r)) << s.label() << ": " << r.detail;
    }
}

TEST(CpuReference, RefusesShapesTooLargeForFp64) {
  std::unique_ptr<Provider> p = make_cpu_reference();
  Spec s;
  s.q_heads = s.kv_heads = 16;
  s.q_len = s.kv_len = 32768;
  s.head_dim = 128;  // 16 * 2^30 * 128 = 2^41 > 2^34
  const Support sup = p->supports(s, Device{});
  EXPECT_FALSE(sup.ok);
  EXPECT_NE(sup.reason.find("too slow for the fp64 oracle"), std::string::npos);
  s.q_len = s.kv_len = 256;
  EXPECT_TRUE(p->supports(s, Device{}).ok);
}

}  // namespace
}  // namespace attnprof
