#include "attnprof/model.hpp"

#include <algorithm>

#include "attnprof/ragged.hpp"

namespace attnprof {

namespace {

// G(m) = sum over integers x in [0, m) of clamp(x, 0, kv). Exact in 64-bit for any valid spec.
int64_t clamp_prefix_sum(int64_t m, int64_t kv) {
  if (m <= 0) return 0;
  if (m <= kv + 1) return m * (m - 1) / 2;
  return kv * (kv + 1) / 2 + (m - kv - 1) * kv;
}

// S(c) = sum_{i=0}^{q-1} clamp(i + c, 0, kv).
int64_t clamp_sum(int64_t c, int64_t q, int64_t kv) {
  return clamp_prefix_sum(c + q, kv) - clamp_prefix_sum(c, kv);
}

// A ragged batch's f: the sum of f over its sequences (ragged.hpp sequence_spec).
template <class F>
double over_sequences(const Spec& s, F&& f) {
  const SeqLens l = seq_lens(s);
  double sum = 0;
  for (size_t b = 0; b < l.q.size(); ++b) sum += f(sequence_spec(s, l.q[b], l.kv[b]));
  return sum;
}

}  // namespace

// Query i sees keys [max(0, i+off-W+1), min(kv-1, i+off)]; its count is U(i) - L(i) with
// U(i) = clamp(i+off+1, 0, kv) and L(i) = clamp(i+off-W+1, 0, kv) (L = 0 without a window),
// and U >= L always, so the total is a difference of two clamped arithmetic series.
int64_t visible_pairs(const Mask& mask, int64_t q_len, int64_t kv_len) {
  if (mask.kind == MaskKind::none) return q_len * kv_len;
  const int64_t off = mask.diagonal_offset(q_len, kv_len);
  const int64_t upper = clamp_sum(off + 1, q_len, kv_len);
  if (mask.kind != MaskKind::window) return upper;
  return upper - clamp_sum(off - mask.window + 1, q_len, kv_len);
}

int64_t visible_pairs_brute_force(const Mask& mask, int64_t q_len, int64_t kv_len) {
  int64_t n = 0;
  for (int64_t i = 0; i < q_len; ++i) {
    for (int64_t j = 0; j < kv_len; ++j) n += mask.visible(i, j, q_len, kv_len) ? 1 : 0;
  }
  return n;
}

double forward_flops(const Spec& s) {
  if (s.ragged()) return over_sequences(s, [](const Spec& q) { return forward_flops(q); });
  const double pairs = static_cast<double>(visible_pairs(s.mask, s.q_len, s.kv_len));
  return 2.0 * static_cast<double>(s.head_dim + s.dv()) * pairs * static_cast<double>(s.batch) *
         static_cast<double>(s.q_heads);
}

double backward_flops(const Spec& s) {
  return 2.5 * forward_flops(s);
}

double flops(const Spec& s) {
  switch (s.mode) {
    case Mode::fwd:
      return forward_flops(s);
    case Mode::bwd:
      return backward_flops(s);
    case Mode::fwd_bwd:
      return forward_flops(s) + backward_flops(s);
  }
  return 0;
}

KeysRead keys_read(const Spec& s) {
  KeysRead r;
  if (s.q_len < 1 || s.kv_len < 1) return r;
  const int64_t lo = std::max<int64_t>(0, s.mask.first_visible(0, s.q_len, s.kv_len));
  const int64_t hi =
      std::min<int64_t>(s.kv_len - 1, s.mask.last_visible(s.q_len - 1, s.q_len, s.kv_len));
  if (lo > hi) return r;
  r.first = lo;
  r.keys = hi - lo + 1;
  r.pages = s.page_size > 0 ? hi / s.page_size - lo / s.page_size + 1 : 0;
  return r;
}

double min_bytes(const Spec& s) {
  // A ragged batch reads and writes each sequence's rows only (and the lengths, 8 bytes each).
  if (s.ragged())
    return over_sequences(s, [](const Spec& q) { return min_bytes(q); }) + 8.0 * double(s.batch);
  const double w = static_cast<double>(dtype_bytes(s.dtype));
  const double q = static_cast<double>(s.q_elems()) * w;
  const double o = static_cast<double>(s.o_elems()) * w;
  // The forward reads only the keys some query sees (a sliding window's decode reads W keys of a
  // long cache); a paged cache's, in whole pages, and their block table entries.
  const KeysRead kr = keys_read(s);
  const double rows = static_cast<double>(s.paged() ? kr.pages * s.page_size : kr.keys);
  const double per_row = static_cast<double>(s.batch) * static_cast<double>(s.kv_heads) * w;
  const double k_read = rows * per_row * static_cast<double>(s.head_dim);
  // A shared latent's V is K's first Dv columns: read once, with K.
  const double v_read = s.shared_latent ? 0.0 : rows * per_row * static_cast<double>(s.dv());
  const double table = static_cast<double>(s.batch) * static_cast<double>(kr.pages) * 4.0;
  const double fwd = q + k_read + v_read + o + table;
  // Backward reads Q, K, V, O, dO and writes dQ, dK, dV, all of dK and dV (the LSE row statistics
  // are negligible: one float per query row, left out).
  const double k = static_cast<double>(s.k_elems()) * w;
  const double v = static_cast<double>(s.v_elems()) * w;
  const double bwd = q + k_read + v_read + o + o + q + k + v;
  switch (s.mode) {
    case Mode::fwd:
      return fwd;
    case Mode::bwd:
      return bwd;
    case Mode::fwd_bwd:
      return fwd + bwd;
  }
  return 0;
}

int64_t io_bytes(const Spec& s) {
  const int64_t w = static_cast<int64_t>(dtype_bytes(s.dtype));
  const int64_t fwd = (s.q_elems() + s.k_elems() + s.v_elems() + s.o_elems()) * w +
                      s.block_table_elems() * 4 +      // a paged cache's int32 block table
                      (s.ragged() ? s.batch * 8 : 0);  // a ragged batch's int32 lengths
  if (s.mode == Mode::fwd) return fwd;
  // + dO, dQ, dK, dV
  return fwd + (s.o_elems() + s.q_elems() + s.k_elems() + s.v_elems()) * w;
}

}  // namespace attnprof
