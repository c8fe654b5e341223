// The rows a host check compares (verify.hpp rows_to_check, cross_check_rows).
#include "core/row_sample.hpp"

#include <algorithm>
#include <tuple>

#include "attnprof/ragged.hpp"

namespace attnprof {

namespace {

// Query rows where the mask's structure changes: the first row that sees key 0 and the first
// that sees the last key, the rows whose diagonal (or window start) crosses a key-tile edge of
// 16..256, each with its neighbours. Off-by-one errors of masks show there first.
std::vector<int64_t> structural_queries(const Spec& s) {
  std::vector<int64_t> out;
  if (s.mask.kind == MaskKind::none) return out;
  const int64_t nq = s.q_len;
  auto add3 = [&](int64_t i) {
    for (int64_t t = i - 1; t <= i + 1; ++t)
      if (t >= 0 && t < nq) out.push_back(t);
  };
  const int64_t off = s.mask.diagonal_offset(s.q_len, s.kv_len);
  add3(-off);                // first row that sees key 0 (rows above are empty when off < 0)
  add3(s.kv_len - 1 - off);  // first row that sees the last key
  for (int64_t tile = 16; tile <= 256; tile *= 2) {
    add3(tile - off);  // the diagonal at a key-tile edge
    add3(((s.kv_len - 1) / tile) * tile - off);
    if (s.mask.kind == MaskKind::window) {
      add3(s.mask.window - off);  // first row whose window has slid past key 0
      add3(tile + s.mask.window - 1 - off);
    }
  }
  return out;
}

// Sequence b of a (ragged or uniform) spec as a spec of its own.
Spec sequence_of(const Spec& spec, const SeqLens& lens, int64_t b) {
  return sequence_spec(spec, lens.q[static_cast<size_t>(b)], lens.kv[static_cast<size_t>(b)]);
}

void sort_unique(std::vector<RowIndex>& rows) {
  auto key = [](const RowIndex& r) { return std::tie(r.b, r.h, r.i); };
  std::sort(rows.begin(), rows.end(),
            [&](const RowIndex& a, const RowIndex& b) { return key(a) < key(b); });
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
}

// The (batch, head) pairs that carry the structural rows: the first, the last, the first head of
// the last KV group and the last head of the first group (GQA indexing edges).
std::vector<RowIndex> edge_pairs(const Spec& spec) {
  const int64_t g = spec.group_size(), last_b = spec.batch - 1;
  return {{0, 0, 0},
          {last_b, spec.q_heads - 1, 0},
          {last_b, (spec.kv_heads - 1) * g, 0},
          {0, g - 1, 0}};
}

}  // namespace

double forward_check_flops(const Spec& s) {
  double pairs = double(s.batch) * double(s.q_len) * double(s.kv_len);
  if (s.ragged()) {  // each sequence's rows against its keys
    const SeqLens l = seq_lens(s);
    pairs = 0;
    for (size_t b = 0; b < l.q.size(); ++b) pairs += double(l.q[b]) * double(l.kv[b]);
  }
  return 2.0 * pairs * double(s.q_heads) * double(s.head_dim + s.dv());
}

bool check_all_rows(const Spec& s, const VerifyOptions& options) {
  return options.full || forward_check_flops(s) <= options.full_check_flops;
}

std::vector<RowIndex> rows_to_check(const Spec& spec, const VerifyOptions& options, uint64_t seed) {
  std::vector<RowIndex> rows;
  // A ragged batch's rows past a sequence's queries are padding: never checked.
  const SeqLens lens = seq_lens(spec);
  auto nq_of = [&](int64_t b) { return lens.q[static_cast<size_t>(b)]; };
  if (check_all_rows(spec, options)) {
    rows.reserve(static_cast<size_t>(lens.q_total() * spec.q_heads));
    for (int64_t b = 0; b < spec.batch; ++b)
      for (int64_t h = 0; h < spec.q_heads; ++h)
        for (int64_t i = 0; i < nq_of(b); ++i) rows.push_back({b, h, i});
    return rows;
  }
  // Every (batch, head): the first and last row of every query tile of kSampleTile rows, so a
  // wrong tile of any size from 16 to 256 (unions of these) is seen wherever it is, and so is
  // a wrong (batch, head) or a wrong first or last row.
  for (int64_t b = 0; b < spec.batch; ++b)
    for (int64_t h = 0; h < spec.q_heads; ++h) {
      const int64_t nq = nq_of(b);
      for (int64_t i0 = 0; i0 < nq; i0 += kSampleTile) {
        rows.push_back({b, h, i0});
        rows.push_back({b, h, std::min(nq, i0 + kSampleTile) - 1});
      }
    }
  for (const RowIndex& p : edge_pairs(spec))
    for (int64_t i : structural_queries(sequence_of(spec, lens, p.b)))
      rows.push_back({p.b, p.h, i});
  Rng rng{seed ^ 0xA5A5F00DC0FFEE11ull};
  const int64_t pairs = spec.batch * spec.q_heads;
  for (int64_t t = 0; t < options.sample_rows; ++t) {
    const int64_t pair = rng.below(pairs);
    const int64_t b = pair / spec.q_heads;
    rows.push_back({b, pair % spec.q_heads, rng.below(nq_of(b))});
  }
  sort_unique(rows);
  return rows;
}

std::vector<RowIndex> cross_check_rows(const Spec& spec, uint64_t seed) {
  std::vector<RowIndex> rows;
  const SeqLens lens = seq_lens(spec);
  const std::vector<RowIndex> pairs = edge_pairs(spec);
  for (const RowIndex& p : {pairs[0], pairs[1]}) {
    const Spec seq = sequence_of(spec, lens, p.b);
    for (int64_t i : {int64_t{0}, seq.q_len - 1}) rows.push_back({p.b, p.h, i});
    for (int64_t i : structural_queries(seq)) rows.push_back({p.b, p.h, i});
  }
  Rng rng{seed ^ 0x3C6EF372FE94F82Bull};
  const int64_t pairs_total = spec.batch * spec.q_heads;
  for (int t = 0; t < 16; ++t) {
    const int64_t pair = rng.below(pairs_total);
    const int64_t b = pair / spec.q_heads;
    rows.push_back({b, pair % spec.q_heads, rng.below(lens.q[static_cast<size_t>(b)])});
  }
  sort_unique(rows);
  return rows;
}

std::vector<RowIndex> fresh_check_rows(const Spec& spec, uint64_t seed) {
  const SeqLens lens = seq_lens(spec);
  Rng rng{seed ^ 0xBB67AE8584CAA73Bull};
  int64_t b = rng.below(spec.batch);
  for (int64_t t = 0; t < spec.batch && lens.q[static_cast<size_t>(b)] == 0; ++t) {
    b = (b + 1) % spec.batch;  // a sequence with queries
  }
  const int64_t h = rng.below(spec.q_heads);
  const Spec seq = sequence_of(spec, lens, b);
  std::vector<RowIndex> rows = {{b, h, 0}, {b, h, seq.q_len - 1}};
  for (int64_t i : structural_queries(seq)) rows.push_back({b, h, i});
  for (int t = 0; t < 8; ++t) rows.push_back({b, h, rng.below(seq.q_len)});
  sort_unique(rows);
  return rows;
}

}  // namespace attnprof
