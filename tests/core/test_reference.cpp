// The fp64 reference (src/core/reference.cpp) against a brute-force implementation written here
// from the definitions: full score matrices, the mask applied through Mask::visible, softmax by
// exp/sum over every key, and the backward as dense matrix products.
#include "attnprof/reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace attnprof {
namespace {

Spec tiny_spec(MaskKind kind, int64_t window, int64_t nq, int64_t nk, int64_t hq, int64_t hkv) {
  Spec s;
  s.batch = 2;
  s.q_heads = hq;
  s.kv_heads = hkv;
  s.q_len = nq;
  s.kv_len = nk;
  s.head_dim = 8;
  s.v_head_dim = 5;  // Dv != D catches a swapped dimension
  s.dtype = DType::fp32;
  s.mask = Mask{kind, window};
  return s;
}

// Brute force: out (nq x dv) and lse (nq) of one query head, every key looked at.
struct Dense {
  std::vector<double> p;  // nq x nk probabilities (0 where masked)
  std::vector<double> o, lse;
};
Dense brute_forward(const Spec& s, const std::vector<double>& q, const std::vector<double>& k,
                    const std::vector<double>& v, double sink = kNoSink) {
  const int64_t nq = s.q_len, nk = s.kv_len, d = s.head_dim, dv = s.dv();
  Dense r;
  r.p.assign(size_t(nq * nk), 0.0);
  r.o.assign(size_t(nq * dv), 0.0);
  r.lse.assign(size_t(nq), -std::numeric_limits<double>::infinity());
  for (int64_t i = 0; i < nq; ++i) {
    double sum = std::exp(sink);  // the sink's term (0 without one)
    for (int64_t j = 0; j < nk; ++j) {
      if (!s.mask.visible(i, j, nq, nk)) continue;
      double dot = 0;
      for (int64_t c = 0; c < d; ++c) dot += q[size_t(i * d + c)] * k[size_t(j * d + c)];
      double score = s.softmax_scale() * dot;
      if (s.softcap > 0) score = s.softcap * std::tanh(score / s.softcap);
      r.p[size_t(i * nk + j)] = std::exp(score);  // small inputs: no overflow
      sum += r.p[size_t(i * nk + j)];
    }
    if (sum == 0) continue;
    r.lse[size_t(i)] = std::log(sum);
    for (int64_t j = 0; j < nk; ++j) {
      r.p[size_t(i * nk + j)] /= sum;
      for (int64_t c = 0; c < dv; ++c)
        r.o[size_t(i * dv + c)] += r.p[size_t(i * nk + j)] * v[size_t(j * dv + c)];
    }
  }
  return r;
}

TEST(Reference, RowMatchesBruteForceForEveryMask) {
  const Mask masks[] = {{MaskKind::none, 0},
                        {MaskKind::causal_tl, 0},
                        {MaskKind::causal_br, 0},
                        {MaskKind::window, 3}};
  const int64_t lens[][2] = {{1, 1}, {5, 5}, {4, 11}, {11, 4}, {13, 13}};
  for (const Mask& mask : masks) {
    for (const auto& len : lens) {
      // Plain, with a softcap small enough to bend the scores (|s| reaches ~3 here), with sinks.
      for (const auto& [cap, sinks] : {std::pair{0.0, false}, std::pair{1.5, false},
                                       std::pair{0.0, true}, std::pair{1.5, true}}) {
        Spec s = tiny_spec(mask.kind, mask.window, len[0], len[1], 4, 2);
        s.softcap = cap;
        s.sinks = sinks;
        for (int64_t h : {0, 3}) {
          const int64_t kvh = h / s.group_size();
          const auto q = input_slice(s, 7, InputPattern::random, TensorId::q, 1, h);
          const auto k = input_slice(s, 7, InputPattern::random, TensorId::k, 1, kvh);
          const auto v = input_slice(s, 7, InputPattern::random, TensorId::v, 1, kvh);
          const double sink = sink_of(s, {.seed = 7}, h);
          EXPECT_EQ(std::isinf(sink), !sinks);
          const Dense want = brute_forward(s, q, k, v, sink);
          for (int64_t i = 0; i < s.q_len; ++i) {
            const RowRef got = reference_row(s, &q[size_t(i * s.head_dim)], k, v, i, sink);
            ASSERT_EQ(got.o.size(), size_t(s.dv()));
            for (int64_t c = 0; c < s.dv(); ++c)
              EXPECT_NEAR(got.o[size_t(c)], want.o[size_t(i * s.dv() + c)], 1e-12)
                  << to_string(mask) << " nq=" << len[0] << " nk=" << len[1] << " i=" << i;
            if (std::isinf(want.lse[size_t(i)]))
              EXPECT_EQ(got.lse, want.lse[size_t(i)]);
            else
              EXPECT_NEAR(got.lse, want.lse[size_t(i)], 1e-12);
          }
        }
      }
    }
  }
}

TEST(Reference, EmptyRowsGiveZeroOutputAndMinusInfinityLse) {
  // Bottom-right causal with q_len 6 > kv_len 2: off = -4, so rows 0..3 see no key.
  Spec s = tiny_spec(MaskKind::causal_br, 0, 6, 2, 1, 1);
  const auto q = input_slice(s, 3, InputPattern::random, TensorId::q, 0, 0);
  const auto k = input_slice(s, 3, InputPattern::random, TensorId::k, 0, 0);
  const auto v = input_slice(s, 3, InputPattern::random, TensorId::v, 0, 0);
  const auto d_o = input_slice(s, 3, InputPattern::random, TensorId::d_o, 0, 0);
  for (int64_t i = 0; i < 6; ++i) {
    const RowRef r = reference_row(s, &q[size_t(i * s.head_dim)], k, v, i, kNoSink);
    const auto dq =
        reference_row_dq(s, &q[size_t(i * s.head_dim)], &d_o[size_t(i * s.dv())], k, v, i);
    if (i < 4) {
      EXPECT_EQ(r.lse, -std::numeric_limits<double>::infinity()) << i;
      for (double x : r.o) EXPECT_EQ(x, 0.0);
      for (double x : dq) EXPECT_EQ(x, 0.0);
    } else {
      EXPECT_TRUE(std::isfinite(r.lse)) << i;
      double norm = 0;
      for (double x : r.o) norm += x * x;
      EXPECT_GT(norm, 0.0);
    }
  }
  // A window of 1 sees exactly one key: o equals that key's value row, lse its scaled score.
  Spec w = tiny_spec(MaskKind::window, 1, 3, 3, 1, 1);
  const auto qw = input_slice(w, 3, InputPattern::random, TensorId::q, 0, 0);
  const auto kw = input_slice(w, 3, InputPattern::random, TensorId::k, 0, 0);
  const auto vw = input_slice(w, 3, InputPattern::random, TensorId::v, 0, 0);
  const RowRef r = reference_row(w, &qw[2 * 8], kw, vw, 2, kNoSink);
  for (int64_t c = 0; c < w.dv(); ++c) EXPECT_DOUBLE_EQ(r.o[size_t(c)], vw[size_t(2 * 5 + c)]);
}

TEST(Reference, GroupGradsMatchDenseBackward) {
  for (MaskKind kind : {MaskKind::none, MaskKind::causal_br, MaskKind::window}) {
    Spec s = tiny_spec(kind, 4, 9, 7, 6, 2);  // group of 3 query heads per KV head
    const int64_t nq = s.q_len, nk = s.kv_len, d = s.head_dim, dv = s.dv(), g = s.group_size();
    const double scale = s.softmax_scale();
    const int64_t b = 1, kvh = 1;
    const auto k = input_slice(s, 11, InputPattern::random, TensorId::k, b, kvh);
    const auto v = input_slice(s, 11, InputPattern::random, TensorId::v, b, kvh);
    std::vector<double> dk(size_t(nk * d), 0.0), dvv(size_t(nk * dv), 0.0);
    const GroupGrads got = reference_group_grads(s, 11, InputPattern::random, b, kvh);
    ASSERT_EQ(got.dq.size(), size_t(g * nq * d));
    for (int64_t t = 0; t < g; ++t) {
      const int64_t h = kvh * g + t;
      const auto q = input_slice(s, 11, InputPattern::random, TensorId::q, b, h);
      const auto d_o = input_slice(s, 11, InputPattern::random, TensorId::d_o, b, h);
      const Dense f = brute_forward(s, q, k, v);
      // dP = dO V^T, D = rowsum(dO * O), dS = P (dP - D)
      std::vector<double> ds(size_t(nq * nk), 0.0);
      for (int64_t i = 0; i < nq; ++i) {
        double di = 0;
        for (int64_t c = 0; c < dv; ++c) di += d_o[size_t(i * dv + c)] * f.o[size_t(i * dv + c)];
        for (int64_t j = 0; j < nk; ++j) {
          double dp = 0;
          for (int64_t c = 0; c < dv; ++c) dp += d_o[size_t(i * dv + c)] * v[size_t(j * dv + c)];
          ds[size_t(i * nk + j)] = f.p[size_t(i * nk + j)] * (dp - di);
        }
      }
      for (int64_t i = 0; i < nq; ++i)
        for (int64_t c = 0; c < d; ++c) {
          double dq = 0;
          for (int64_t j = 0; j < nk; ++j)
            dq += scale * ds[size_t(i * nk + j)] * k[size_t(j * d + c)];
          EXPECT_NEAR(got.dq[size_t((t * nq + i) * d + c)], dq, 1e-12);
        }
      for (int64_t j = 0; j < nk; ++j) {
        for (int64_t i = 0; i < nq; ++i) {
          for (int64_t c = 0; c < d; ++c)
            dk[size_t(j * d + c)] += scale * ds[size_t(i * nk + j)] * q[size_t(i * d + c)];
          for (int64_t c = 0; c < dv; ++c)
            dvv[size_t(j * dv + c)] += f.p[size_t(i * nk + j)] * d_o[size_t(i * dv + c)];
        }
      }
      // The per-row dQ entry point agrees with the group's dQ.
      for (int64_t i = 0; i < nq; ++i) {
        const auto row = reference_row_dq(s, &q[size_t(i * d)], &d_o[size_t(i * dv)], k, v, i);
        for (int64_t c = 0; c < d; ++c)
          EXPECT_NEAR(row[size_t(c)], got.dq[size_t((t * nq + i) * d + c)], 1e-12);
      }
    }
    for (size_t e = 0; e < dk.size(); ++e) EXPECT_NEAR(got.dk[e], dk[e], 1e-12);
    for (size_t e = 0; e < dvv.size(); ++e) EXPECT_NEAR(got.dv[e], dvv[e], 1e-12);
  }
}

}  // namespace
}  // namespace attnprof
