#include "core/reference_block.hpp"

#include "attnprof/reference.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnprof {

BlockRef reference_block(const Spec& spec, const std::vector<double>& q,
                         const std::vector<double>& k, const std::vector<double>& v,
                         const int64_t* rows, int64_t n, double sink) {
  const int64_t d = spec.head_dim, dv = spec.dv(), nq = spec.q_len, nk = spec.kv_len;
  BlockRef r;
  r.o.assign(static_cast<size_t>(n * dv), 0.0);
  r.lse.assign(static_cast<size_t>(n), sink);  // a row that sees no key: the sink's, or -inf
  r.floor.assign(static_cast<size_t>(n), 0.0);
  if (n <= 0) return r;
  // The keys any of the rows sees: one interval, since both ends never decrease with i.
  const int64_t first = std::max<int64_t>(0, spec.mask.first_visible(rows[0], nq, nk));
  const int64_t last = std::min<int64_t>(nk - 1, spec.mask.last_visible(rows[n - 1], nq, nk));
  if (first > last) return r;
  const int64_t cols = last - first + 1;
  std::vector<double> qs(static_cast<size_t>(n * d));
  for (int64_t t = 0; t < n; ++t) std::copy_n(q.data() + rows[t] * d, d, qs.data() + t * d);
  std::vector<double> s(static_cast<size_t>(n * cols));
  // S = scale * Q[rows] K[first:last]^T, row-major n x cols.
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(cols),
              static_cast<int>(d), spec.softmax_scale(), qs.data(), static_cast<int>(d),
              k.data() + first * d, static_cast<int>(d), 0.0, s.data(), static_cast<int>(cols));
  std::vector<double> vn(static_cast<size_t>(cols), 0.0);  // |v_j|^2 of the visible keys
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t c = 0; c < dv; ++c)
      vn[size_t(j)] += v[size_t((first + j) * dv + c)] * v[size_t((first + j) * dv + c)];
  std::vector<double> l(static_cast<size_t>(n), 0.0);
  for (int64_t t = 0; t < n; ++t) {
    double* row = s.data() + t * cols;
    const int64_t lo = std::max<int64_t>(0, spec.mask.first_visible(rows[t], nq, nk)) - first;
    const int64_t hi = std::min<int64_t>(nk - 1, spec.mask.last_visible(rows[t], nq, nk)) - first;
    if (lo > hi) {
      std::fill(row, row + cols, 0.0);
      continue;
    }
    for (int64_t j = lo; j <= hi; ++j) row[j] = capped(spec, row[j]);
    // A sink joins the maximum and the sum (exp(-inf - m) = 0 without one).
    const double m = std::max(sink, *std::max_element(row + lo, row + hi + 1));
    double sum = std::exp(sink - m), w2 = 0;
    for (int64_t j = 0; j < cols; ++j) {
      row[j] = (j < lo || j > hi) ? 0.0 : std::exp(row[j] - m);
      sum += row[j];
      w2 += row[j] * row[j] * vn[size_t(j)];
    }
    l[static_cast<size_t>(t)] = sum;
    r.lse[static_cast<size_t>(t)] = m + std::log(sum);
    r.floor[static_cast<size_t>(t)] = std::sqrt(w2) / sum;
  }
  // O = P V[first:last] / l.
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(dv),
              static_cast<int>(cols), 1.0, s.data(), static_cast<int>(cols), v.data() + first * dv,
              static_cast<int>(dv), 0.0, r.o.data(), static_cast<int>(dv));
  for (int64_t t = 0; t < n; ++t) {
    const double sum = l[static_cast<size_t>(t)];
    if (sum == 0) continue;  // a row that sees no key: o stays 0
    for (int64_t c = 0; c < dv; ++c) r.o[static_cast<size_t>(t * dv + c)] /= sum;
  }
  return r;
}

}  // namespace attnprof
