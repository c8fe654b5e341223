// The fp64 reference (include/attnprof/reference.hpp). Everything is computed in double from the
// exact, already rounded inputs, so its own error (~1e-16 relative) is far below every bound the
// verifier gates on. Only the visible keys of a row are ever touched: masked scores are not
// "-inf then exp", they are absent, which is also what makes the empty-row convention explicit.
#include "attnprof/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnprof {
namespace {

struct TensorShape {
  int64_t heads = 0, len = 0, dim = 0;
};

TensorShape shape_of(const Spec& spec, TensorId tensor) {
  switch (tensor) {
    case TensorId::q:
      return {spec.q_heads, spec.q_len, spec.head_dim};
    case TensorId::k:
      return {spec.kv_heads, spec.kv_len, spec.head_dim};
    case TensorId::v:
      return {spec.kv_heads, spec.kv_len, spec.dv()};
    case TensorId::d_o:
      return {spec.q_heads, spec.q_len, spec.dv()};
    case TensorId::sink:
      return {spec.q_heads, 1, 1};
  }
  return {};
}

// Visible keys of query i, clamped to [0, kv_len); empty when first > last.
struct KeyRange {
  int64_t first = 0, last = -1;
  bool empty() const { return first > last; }
};

KeyRange visible_keys(const Spec& spec, int64_t i) {
  KeyRange r;
  r.first = std::max<int64_t>(0, spec.mask.first_visible(i, spec.q_len, spec.kv_len));
  r.last = std::min<int64_t>(spec.kv_len - 1, spec.mask.last_visible(i, spec.q_len, spec.kv_len));
  return r;
}

double dot(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t t = 0; t < n; ++t) s += a[t] * b[t];
  return s;
}

// Softmax of query row i over its visible keys: p[j - keys.first] for j in keys, and the
// natural-log log-sum-exp of the scaled scores (-inf when no key is visible).
struct RowSoftmax {
  KeyRange keys;
  std::vector<double> p;
  double lse = -std::numeric_limits<double>::infinity();
};

// A sink (finite `sink`) joins the denominator and the LSE and takes no key: a row that sees no
// key gives it all its weight (o = 0, lse = sink).
RowSoftmax row_softmax(const Spec& spec, const double* q_row, const std::vector<double>& k,
                       int64_t i, double sink) {
  RowSoftmax sm;
  sm.keys = visible_keys(spec, i);
  if (sm.keys.empty()) {
    sm.lse = sink;
    return sm;
  }
  const int64_t d = spec.head_dim;
  const double scale = spec.softmax_scale();
  const int64_t n = sm.keys.last - sm.keys.first + 1;
  sm.p.resize(static_cast<size_t>(n));
  double m = sink;
  for (int64_t t = 0; t < n; ++t) {
    const double s =
        capped(spec, scale * dot(q_row, &k[static_cast<size_t>((sm.keys.first + t) * d)], d));
    sm.p[static_cast<size_t>(t)] = s;
    m = std::max(m, s);
  }
  // Subtracting the row maximum keeps every exp in (0, 1]: no overflow, and the largest term
  // is exactly 1, so the sum is at least 1 and its log is well conditioned.
  double sum = std::exp(sink - m);  // 0 without a sink
  for (double& x : sm.p) {
    x = std::exp(x - m);
    sum += x;
  }
  for (double& x : sm.p) x /= sum;
  sm.lse = m + std::log(sum);
  return sm;
}

// O row from softmax probabilities: sum_j p_j v_j (Dv values).
std::vector<double> weighted_values(const Spec& spec, const RowSoftmax& sm,
                                    const std::vector<double>& v) {
  const int64_t dv = spec.dv();
  std::vector<double> o(static_cast<size_t>(dv), 0.0);
  for (size_t t = 0; t < sm.p.size(); ++t) {
    const double* vj = &v[static_cast<size_t>((sm.keys.first + static_cast<int64_t>(t)) * dv)];
    for (int64_t c = 0; c < dv; ++c) o[static_cast<size_t>(c)] += sm.p[t] * vj[c];
  }
  return o;
}

// Backward of one query row for the loss sum(dO * O): writes dq_row (D values) and, when dk/dv
// are non-null, adds this row's contributions to the (kv_len x D) and (kv_len x Dv) grads.
//   dP_j = dO . v_j,  D_i = dO . O_i,  dS_j = P_j (dP_j - D_i)
//   dq = scale sum_j dS_j k_j,  dk_j += scale dS_j q,  dv_j += P_j dO
void row_backward(const Spec& spec, const double* q_row, const double* do_row,
                  const std::vector<double>& k, const std::vector<double>& v, int64_t i,
                  double* dq_row, double* dk, double* dv) {
  const int64_t d = spec.head_dim;
  const int64_t dvd = spec.dv();
  const double scale = spec.softmax_scale();
  std::fill(dq_row, dq_row + d, 0.0);
  const RowSoftmax sm = row_softmax(spec, q_row, k, i, kNoSink);  // backward: no sinks (validate)
  if (sm.keys.empty()) return;  // o = 0 does not depend on any input: every gradient is 0
  const std::vector<double> o = weighted_values(spec, sm, v);
  const double d_i = dot(do_row, o.data(), dvd);
  for (size_t t = 0; t < sm.p.size(); ++t) {
    const int64_t j = sm.keys.first + static_cast<int64_t>(t);
    const double* vj = &v[static_cast<size_t>(j * dvd)];
    const double* kj = &k[static_cast<size_t>(j * d)];
    const double p = sm.p[t];
    const double ds = p * (dot(do_row, vj, dvd) - d_i);
    for (int64_t c = 0; c < d; ++c) dq_row[c] += scale * ds * kj[c];
    if (dk != nullptr) {
      double* dkj = dk + j * d;
      for (int64_t c = 0; c < d; ++c) dkj[c] += scale * ds * q_row[c];
      double* dvj = dv + j * dvd;
      for (int64_t c = 0; c < dvd; ++c) dvj[c] += p * do_row[c];
    }
  }
}

}  // namespace

double capped(const Spec& spec, double s) {
  return spec.softcap > 0 ? spec.softcap * std::tanh(s / spec.softcap) : s;
}

double sink_of(const Spec& spec, const InputFill& fill, int64_t h) {
  return spec.sinks ? double(sink_logit(fill.pattern, fill.seed, h)) : kNoSink;
}

int64_t flat_index(const Spec& spec, int64_t b, int64_t h, int64_t pos, int64_t dim_index,
                   int64_t heads, int64_t len, int64_t dim) {
  switch (spec.layout) {
    case Layout::bhsd:
      return ((b * heads + h) * len + pos) * dim + dim_index;
    case Layout::bshd:
      return ((b * len + pos) * heads + h) * dim + dim_index;
  }
  return 0;
}

std::vector<double> input_slice(const Spec& spec, uint64_t seed, InputPattern pattern,
                                TensorId tensor, int64_t b, int64_t h) {
  const TensorShape sh = shape_of(spec, tensor);
  const int dtype_code = static_cast<int>(spec.dtype);
  std::vector<double> out(static_cast<size_t>(sh.len * sh.dim));
  for (int64_t pos = 0; pos < sh.len; ++pos) {
    for (int64_t c = 0; c < sh.dim; ++c) {
      const int64_t idx = flat_index(spec, b, h, pos, c, sh.heads, sh.len, sh.dim);
      out[static_cast<size_t>(pos * sh.dim + c)] =
          input_value_of(pattern, seed, tensor, static_cast<uint64_t>(idx), dtype_code, pos, c,
                         spec.head_dim, spec.latent_columns());
    }
  }
  return out;
}

RowRef reference_row(const Spec& spec, const double* q_row, const std::vector<double>& k,
                     const std::vector<double>& v, int64_t i, double sink) {
  const RowSoftmax sm = row_softmax(spec, q_row, k, i, sink);
  RowRef r;
  r.o = weighted_values(spec, sm, v);  // all zeros for an empty row
  r.lse = sm.lse;
  return r;
}

std::vector<double> reference_row_dq(const Spec& spec, const double* q_row, const double* do_row,
                                     const std::vector<double>& k, const std::vector<double>& v,
                                     int64_t i) {
  std::vector<double> dq(static_cast<size_t>(spec.head_dim));
  row_backward(spec, q_row, do_row, k, v, i, dq.data(), nullptr, nullptr);
  return dq;
}

GroupGrads group_grads_from_slices(const Spec& spec, const std::vector<double>& q,
                                   const std::vector<double>& k, const std::vector<double>& v,
                                   const std::vector<double>& d_o) {
  const int64_t g = spec.group_size();
  const int64_t d = spec.head_dim;
  const int64_t dvd = spec.dv();
  GroupGrads gr;
  gr.dq.assign(static_cast<size_t>(g * spec.q_len * d), 0.0);
  gr.dk.assign(static_cast<size_t>(spec.kv_len * d), 0.0);
  gr.dv.assign(static_cast<size_t>(spec.kv_len * dvd), 0.0);
  // dK and dV sum over every query head of the group (GQA) and every query row.
  for (int64_t row = 0; row < g * spec.q_len; ++row) {
    const int64_t i = row % spec.q_len;
    row_backward(spec, &q[static_cast<size_t>(row * d)], &d_o[static_cast<size_t>(row * dvd)], k, v,
                 i, &gr.dq[static_cast<size_t>(row * d)], gr.dk.data(), gr.dv.data());
  }
  return gr;
}

GroupGrads reference_group_grads(const Spec& spec, uint64_t seed, InputPattern pattern, int64_t b,
                                 int64_t kv_head) {
  const int64_t g = spec.group_size();
  const std::vector<double> k = input_slice(spec, seed, pattern, TensorId::k, b, kv_head);
  const std::vector<double> v = input_slice(spec, seed, pattern, TensorId::v, b, kv_head);
  std::vector<double> q, d_o;
  q.reserve(static_cast<size_t>(g * spec.q_len * spec.head_dim));
  d_o.reserve(static_cast<size_t>(g * spec.q_len * spec.dv()));
  // Query head h reads KV head h / g, so the group of KV head kvh is heads kvh*g .. kvh*g+g-1.
  for (int64_t t = 0; t < g; ++t) {
    const int64_t h = kv_head * g + t;
    const std::vector<double> qs = input_slice(spec, seed, pattern, TensorId::q, b, h);
    const std::vector<double> ds = input_slice(spec, seed, pattern, TensorId::d_o, b, h);
    q.insert(q.end(), qs.begin(), qs.end());
    d_o.insert(d_o.end(), ds.begin(), ds.end());
  }
  return group_grads_from_slices(spec, q, k, v, d_o);
}

}  // namespace attnprof
