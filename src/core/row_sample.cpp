#include <algorithm>
#include <tuple>

#include "core/row_sample.hpp"

namespace attnprof {

namespace {

// Query indices every stratified sample contains: first/last rows, tile edges, and the rows
// where the mask's diagonal (or window edge) starts, ends or crosses a key-tile edge. Those are
// where off-by-one errors of masks and tiling show; interior rows are covered by random rows.
std::vector<int64_t> structural_queries(const Spec& s) {
  std::vector<int64_t> out;
  const int64_t nq = s.q_len;
  auto add3 = [&](int64_t i) {
    for (int64_t t = i - 1; t <= i + 1; ++t)
      if (t >= 0 && t < nq) out.push_back(t);
  };
  add3(0);
  add3(nq - 1);
  for (int64_t tile : {int64_t{64}, int64_t{128}}) {
    for (int64_t m : {tile, 2 * tile, (nq / 2) / tile * tile, (nq - 1) / tile * tile})
      if (m > 0) add3(m);
  }
  if (s.mask.kind != MaskKind::none) {
    const int64_t off = s.mask.diagonal_offset(s.q_len, s.kv_len);
    add3(-off);                // first row that sees key 0 (rows above are empty when off < 0)
    add3(s.kv_len - 1 - off);  // first row that sees the last key
    for (int64_t tile : {int64_t{64}, int64_t{128}}) add3(tile - off);  // diagonal at a tile edge
    if (s.mask.kind == MaskKind::window) {
      const int64_t w = s.mask.window;
      add3(w - off);  // first row whose window has slid past key 0
      for (int64_t tile : {int64_t{64}, int64_t{128}}) add3(tile + w - 1 - off);
    }
  }
  return out;
}

}  // namespace

bool check_all_rows(const Spec& s, const VerifyOptions& options) {
  const double work =
      double(s.batch) * double(s.q_heads) * double(s.q_len) * double(s.kv_len) * double(s.head_dim);
  return work <= options.full_check_work;
}

std::vector<RowIndex> rows_to_check(const Spec& spec, const VerifyOptions& options, uint64_t seed) {
  std::vector<RowIndex> rows;
  if (check_all_rows(spec, options)) {
    rows.reserve(static_cast<size_t>(spec.batch * spec.q_heads * spec.q_len));
    for (int64_t b = 0; b < spec.batch; ++b)
      for (int64_t h = 0; h < spec.q_heads; ++h)
        for (int64_t i = 0; i < spec.q_len; ++i) rows.push_back({b, h, i});
    return rows;
  }
  const int64_t g = spec.group_size();
  const int64_t last_b = spec.batch - 1;
  // (batch, head) pairs that carry the structural rows: the first, the last, the first head of
  // the last KV group and the last head of the first group (GQA indexing edges).
  const RowIndex pairs[] = {{0, 0, 0},
                            {last_b, spec.q_heads - 1, 0},
                            {last_b, (spec.kv_heads - 1) * g, 0},
                            {0, g - 1, 0}};
  const std::vector<int64_t> queries = structural_queries(spec);
  for (const RowIndex& p : pairs)
    for (int64_t i : queries) rows.push_back({p.b, p.h, i});
  // Random rows come from a pool of at most 16 (batch, head) pairs: each distinct pair costs a
  // regeneration of its K/V slices, which dominates the check at long kv_len.
  Rng rng{seed ^ 0xA5A5F00DC0FFEE11ull};
  const int64_t bh = spec.batch * spec.q_heads;
  std::vector<int64_t> pool(static_cast<size_t>(std::min<int64_t>(16, bh)));
  for (int64_t& x : pool) x = rng.below(bh);
  for (int64_t t = 0; t < options.sample_rows; ++t) {
    const int64_t pair = pool[static_cast<size_t>(rng.below(static_cast<int64_t>(pool.size())))];
    rows.push_back({pair / spec.q_heads, pair % spec.q_heads, rng.below(spec.q_len)});
  }
  auto key = [](const RowIndex& r) { return std::tie(r.b, r.h, r.i); };
  std::sort(rows.begin(), rows.end(),
            [&](const RowIndex& a, const RowIndex& b) { return key(a) < key(b); });
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

}  // namespace attnprof
