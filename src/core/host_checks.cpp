// The host's check (verify.hpp check_on_host): host copies of the outputs against the fp64
// reference regenerated from the seed.
//
// Order of work: shapes of the produced tensors, a NaN/inf scan of every element (the poison must
// be gone everywhere), then the rows of rows_to_check (all of them within the budget): O and LSE
// through the fp64 BLAS reference of reference_block.cpp, dQ one row at a time, and whole
// (batch, KV head) groups for dK/dV. Work is spread over (batch, head) with OpenMP.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnprof/ragged.hpp"
#include "attnprof/reference.hpp"
#include "attnprof/verify.hpp"
#include "core/reference_block.hpp"
#include "core/reference_cache.hpp"
#include "core/row_sample.hpp"

namespace attnprof {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Shape of one tensor in the spec's layout: heads x len x dim per batch.
struct Shape {
  int64_t heads = 0, len = 0, dim = 0;
};

struct Tensors {
  Shape q, k, v, o;
};
Tensors shapes_of(const Spec& s) {
  return {{s.q_heads, s.q_len, s.head_dim},
          {s.kv_heads, s.kv_len, s.head_dim},
          {s.kv_heads, s.kv_len, s.dv()},
          {s.q_heads, s.q_len, s.dv()}};
}

struct Coord {
  int64_t b = 0, h = 0, pos = 0, d = 0;
};

Coord decode(const Spec& spec, int64_t idx, const Shape& s) {
  Coord c;
  c.d = idx % s.dim;
  int64_t r = idx / s.dim;
  if (spec.layout == Layout::bhsd) {
    c.pos = r % s.len;
    r /= s.len;
    c.h = r % s.heads;
    c.b = r / s.heads;
  } else {
    c.h = r % s.heads;
    r /= s.heads;
    c.pos = r % s.len;
    c.b = r / s.len;
  }
  return c;
}

bool row_is_empty(const Spec& s, int64_t i) {
  const int64_t first = std::max<int64_t>(0, s.mask.first_visible(i, s.q_len, s.kv_len));
  const int64_t last = std::min<int64_t>(s.kv_len - 1, s.mask.last_visible(i, s.q_len, s.kv_len));
  return first > last;
}

// One row of output `role` of `out` against `ref` (contiguous).
RowCheck compare_row(const Spec& spec, const HostOutputs& out, TensorRole role, const Shape& sh,
                     int64_t b, int64_t h, int64_t pos, const double* ref) {
  RowCheck c;
  c.row = (b * sh.heads + h) * sh.len + pos;
  const float* got = out.row(role, flat_index(spec, b, h, pos, 0, sh.heads, sh.len, sh.dim));
  if (!got) {  // not read back (missing_rows says so first)
    c.err2 = kInf;
    return c;
  }
  for (int64_t d = 0; d < sh.dim; ++d) {
    const double e = double(got[d]) - ref[d];
    c.err2 += e * e;
    c.ref2 += ref[d] * ref[d];
    c.max_abs = std::max(c.max_abs, std::abs(e));
  }
  if (!(c.err2 <= kInf)) c.err2 = kInf;  // a NaN is the worst error there is
  return c;
}

double lse_error(double got, double ref) {
  const double err = std::isinf(ref) && std::isinf(got) ? 0.0 : std::abs(got - ref);
  return err <= kInf ? err : kInf;
}

// Sizes of the produced tensors: required ones must be there, any present one must be whole.
std::string shape_problems(const Spec& s, const HostOutputs& out) {
  const bool fwd_out = s.mode != Mode::bwd;
  const bool grads = s.mode != Mode::fwd;
  std::string problems;
  auto check = [&](const char* name, const std::vector<float>& t, int64_t want, bool required) {
    if (t.empty() && !required) return;
    if (static_cast<int64_t>(t.size()) == want) return;
    problems += fmt::format("{}{} has {} elements, expected {}", problems.empty() ? "" : "; ", name,
                            t.size(), want);
  };
  check("o", out.o, s.o_elems(), fwd_out);
  check("lse", out.lse, s.batch * s.q_heads * s.q_len, false);
  check("dq", out.dq, s.q_elems(), grads);
  check("dk", out.dk, s.k_elems(), grads);
  check("dv", out.dv, s.v_elems(), grads);
  return problems;
}

// A partial read's rows that `rows` and `groups` need but it lacks, the first in words ("" when
// none): the harness read back the wrong rows, which no verdict may hide.
std::string missing_rows(const Spec& s, const HostOutputs& out, const std::vector<RowIndex>& rows,
                         const std::vector<int64_t>& groups) {
  const Tensors sh = shapes_of(s);
  auto lacks = [&](TensorRole role, const Shape& shape, int64_t b, int64_t h, int64_t pos) {
    const std::vector<float>* v = out.slot(role);
    return !v->empty() &&
           !out.row(role, flat_index(s, b, h, pos, 0, shape.heads, shape.len, shape.dim));
  };
  auto said = [&](TensorRole role, int64_t b, int64_t h, int64_t pos) {
    return fmt::format("the host copy of {} lacks row (b={}, h={}, i={})", to_string(role), b, h,
                       pos);
  };
  for (const RowIndex& r : rows) {
    if (lacks(TensorRole::o, sh.o, r.b, r.h, r.i)) return said(TensorRole::o, r.b, r.h, r.i);
    if (lacks(TensorRole::dq, sh.q, r.b, r.h, r.i)) return said(TensorRole::dq, r.b, r.h, r.i);
    if (!out.lse.empty() && !out.row(TensorRole::lse, flat_row(s, r)))
      return said(TensorRole::lse, r.b, r.h, r.i);
  }
  for (int64_t g : groups) {
    const int64_t b = g / s.kv_heads, h = g % s.kv_heads;
    for (int64_t j = 0; j < s.kv_len; ++j) {
      if (lacks(TensorRole::dk, sh.k, b, h, j)) return said(TensorRole::dk, b, h, j);
      if (lacks(TensorRole::dv, sh.v, b, h, j)) return said(TensorRole::dv, b, h, j);
    }
  }
  return "";
}

// Counts non-finite elements of every produced tensor. An infinite LSE is legal only on a row
// that sees no key (see reference.hpp); a NaN is never legal. A ragged batch's padding rows are
// no output: they are skipped.
int64_t scan_non_finite(const Spec& s, const HostOutputs& out, std::string& first) {
  const Tensors sh = shapes_of(s);
  const SeqLens lens = seq_lens(s);
  int64_t count = 0;
  auto scan = [&](const char* name, const std::vector<float>& t, const Shape& shape) {
    for (size_t e = 0; e < t.size(); ++e) {
      if (std::isfinite(t[e])) continue;
      const Coord c = decode(s, static_cast<int64_t>(e), shape);
      if (s.ragged() && c.pos >= lens.q[size_t(c.b)]) continue;  // fwd only: O's padding
      ++count;
      if (first.empty()) {
        first = fmt::format("{}[{}] (b={}, h={}, i={}, d={}) = {}", name, e, c.b, c.h, c.pos, c.d,
                            std::isnan(t[e]) ? std::string("nan") : fmt::format("{}", t[e]));
      }
    }
  };
  scan("o", out.o, sh.o);
  scan("dq", out.dq, sh.q);
  scan("dk", out.dk, sh.k);
  scan("dv", out.dv, sh.v);
  for (size_t e = 0; e < out.lse.size(); ++e) {
    const float x = out.lse[e];
    const int64_t i = static_cast<int64_t>(e) % s.q_len;
    const int64_t bh = static_cast<int64_t>(e) / s.q_len;
    const auto b = static_cast<size_t>(bh / s.q_heads);
    if (i >= lens.q[b]) continue;  // a ragged batch's padding
    if (std::isfinite(x) ||
        (std::isinf(x) && row_is_empty(sequence_spec(s, lens.q[b], lens.kv[b]), i)))
      continue;
    ++count;
    if (first.empty()) {
      first =
          fmt::format("lse[{}] (b={}, h={}, i={}) = {}", e, bh / s.q_heads, bh % s.q_heads, i, x);
    }
  }
  return count;
}

// One (batch, KV head) group's K and V slices, regenerated when the group changes.
struct KvCache {
  int64_t b = -1, kvh = -1;
  std::vector<double> k, v;
  void load(const Spec& spec, const InputFill& fill, int64_t b_in, int64_t kvh_in) {
    if (b_in == b && kvh_in == kvh) return;
    b = b_in;
    kvh = kvh_in;
    k = input_slice(spec, fill.seed, fill.pattern, TensorId::k, b, kvh);
    v = input_slice(spec, fill.seed, fill.pattern, TensorId::v, b, kvh);
  }
};

// One row of input `tensor` (dim values), regenerated from the seed.
std::vector<double> input_row(const Spec& spec, const InputFill& fill, TensorId tensor,
                              const Shape& sh, int64_t b, int64_t h, int64_t pos) {
  std::vector<double> row(static_cast<size_t>(sh.dim));
  for (int64_t c = 0; c < sh.dim; ++c) {
    const int64_t idx = flat_index(spec, b, h, pos, c, sh.heads, sh.len, sh.dim);
    row[static_cast<size_t>(c)] =
        input_value_of(fill.pattern, fill.seed, tensor, static_cast<uint64_t>(idx),
                       static_cast<int>(spec.dtype), pos, c, spec.head_dim, spec.latent_columns());
  }
  return row;
}

// The pairs' runs of `rows` (sorted by (b, h, i)): [begin, end) index ranges of one (b, h) each.
std::vector<std::pair<size_t, size_t>> pair_runs(const std::vector<RowIndex>& rows) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t a = 0; a < rows.size();) {
    size_t e = a + 1;
    while (e < rows.size() && rows[e].b == rows[a].b && rows[e].h == rows[a].h) ++e;
    runs.emplace_back(a, e);
    a = e;
  }
  return runs;
}

// What names a forward reference: the spec (every field that shapes the inputs or the math), the
// fill, and the rows (FNV-1a over their indices).
std::string forward_refs_key(const Spec& spec, const InputFill& fill,
                             const std::vector<RowIndex>& rows) {
  static_assert(sizeof(RowIndex) == 3 * sizeof(int64_t), "RowIndex is hashed as its bytes");
  const std::string_view bytes(reinterpret_cast<const char*>(rows.data()),
                               rows.size() * sizeof(RowIndex));
  return fmt::format("{}|{}|{}|{}|{:016x}", spec.key(), fill.seed, static_cast<int>(fill.pattern),
                     rows.size(), fnv1a(bytes));
}

// The fp64 BLAS reference of the rows, per (batch, head) run in blocks, in parallel over runs
// (or the one a check of the same rows of the same inputs kept).
std::shared_ptr<const ForwardRefs> forward_refs(const Spec& spec, const InputFill& fill,
                                                const std::vector<RowIndex>& rows) {
  const std::string key = forward_refs_key(spec, fill, rows);
  if (auto kept = find_forward_refs(key)) return kept;
  const int64_t g = spec.group_size();
  const auto runs = pair_runs(rows);
  const SeqLens lens = seq_lens(spec);
  auto refs = std::make_shared<ForwardRefs>();
  refs->runs.resize(runs.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t u = 0; u < runs.size(); ++u) {
    const auto [a, e] = runs[u];
    const int64_t b = rows[a].b, h = rows[a].h;
    const std::vector<double> q = input_slice(spec, fill.seed, fill.pattern, TensorId::q, b, h);
    const std::vector<double> k = input_slice(spec, fill.seed, fill.pattern, TensorId::k, b, h / g);
    const std::vector<double> v = input_slice(spec, fill.seed, fill.pattern, TensorId::v, b, h / g);
    std::vector<int64_t> idx(e - a);
    for (size_t t = a; t < e; ++t) idx[t - a] = rows[t].i;
    const double sink = sink_of(spec, fill, h);
    // The slices keep the padded spec's rows; the math is the sequence's (ragged.hpp).
    const Spec seq = sequence_spec(spec, lens.q[size_t(b)], lens.kv[size_t(b)]);
    for (size_t t0 = 0; t0 < idx.size(); t0 += kReferenceBlockRows) {
      const int64_t n = std::min<int64_t>(kReferenceBlockRows, int64_t(idx.size() - t0));
      refs->runs[u].push_back(reference_block(seq, q, k, v, idx.data() + t0, n, sink));
    }
  }
  keep_forward_refs(key, refs);
  return refs;
}

// Forward rows (O and LSE) against their fp64 reference, in parallel over (batch, head).
void check_forward(const Spec& spec, const InputFill& fill, const HostOutputs& out,
                   const std::vector<RowIndex>& rows, RowChecks& checks) {
  const Tensors sh = shapes_of(spec);
  const auto runs = pair_runs(rows);
  const std::shared_ptr<const ForwardRefs> refs = forward_refs(spec, fill, rows);
  std::vector<RowChecks> part(runs.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t u = 0; u < runs.size(); ++u) {
    const size_t a = runs[u].first;
    const int64_t b = rows[a].b, h = rows[a].h;
    RowChecks& mine = part[u];
    size_t t = a;
    for (const BlockRef& ref : refs->runs[u]) {
      for (size_t r = 0; r < ref.lse.size(); ++r, ++t) {
        const int64_t i = rows[t].i;
        if (!out.o.empty()) {
          RowCheck c = compare_row(spec, out, TensorRole::o, sh.o, b, h, i,
                                   &ref.o[r * static_cast<size_t>(sh.o.dim)]);
          c.floor = ref.floor[r];
          mine.o.push_back(c);
        }
        if (!out.lse.empty()) {
          const int64_t row = flat_row(spec, {b, h, i});
          const float* got = out.row(TensorRole::lse, row);
          mine.lse.emplace_back(row, got ? lse_error(*got, ref.lse[r]) : kInf);
        }
      }
    }
  }
  for (RowChecks& p : part) {
    checks.o.insert(checks.o.end(), p.o.begin(), p.o.end());
    checks.lse.insert(checks.lse.end(), p.lse.begin(), p.lse.end());
  }
}

// A dQ row's floor (RowCheck::floor): scale * |sum_j P_ij k_j| * sum_c |dO_ic O_ic|, from the
// row's forward reference.
double dq_floor(const Spec& spec, const double* q, const double* d_o, const std::vector<double>& k,
                const std::vector<double>& v, int64_t i) {
  const RowRef ref = reference_row(spec, q, k, v, i, kNoSink);  // backward: no sinks
  if (!std::isfinite(ref.lse)) return 0;                        // a row that sees no key
  const int64_t d = spec.head_dim, nq = spec.q_len, nk = spec.kv_len;
  const int64_t lo = std::max<int64_t>(0, spec.mask.first_visible(i, nq, nk));
  const int64_t hi = std::min<int64_t>(nk - 1, spec.mask.last_visible(i, nq, nk));
  std::vector<double> kbar(static_cast<size_t>(d), 0.0);
  for (int64_t j = lo; j <= hi; ++j) {
    double s = 0;
    for (int64_t c = 0; c < d; ++c) s += q[c] * k[size_t(j * d + c)];
    const double p = std::exp(s * spec.softmax_scale() - ref.lse);
    for (int64_t c = 0; c < d; ++c) kbar[size_t(c)] += p * k[size_t(j * d + c)];
  }
  double kbar2 = 0, dsum = 0;
  for (double x : kbar) kbar2 += x * x;
  for (int64_t c = 0; c < spec.dv(); ++c) dsum += std::abs(d_o[c] * ref.o[size_t(c)]);
  return spec.softmax_scale() * std::sqrt(kbar2) * dsum;
}

// dQ of the given rows, one reference_row_dq each, in parallel over (batch, head).
void check_dq_rows(const Spec& spec, const InputFill& fill, const HostOutputs& out,
                   const std::vector<RowIndex>& rows, RowChecks& checks) {
  const Tensors sh = shapes_of(spec);
  const int64_t g = spec.group_size();
  const auto runs = pair_runs(rows);
  std::vector<std::vector<RowCheck>> part(runs.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t u = 0; u < runs.size(); ++u) {
    const auto [a, e] = runs[u];
    KvCache kv;
    for (size_t t = a; t < e; ++t) {
      const RowIndex& r = rows[t];
      kv.load(spec, fill, r.b, r.h / g);
      const std::vector<double> q = input_row(spec, fill, TensorId::q, sh.q, r.b, r.h, r.i);
      const std::vector<double> d_o = input_row(spec, fill, TensorId::d_o, sh.o, r.b, r.h, r.i);
      const std::vector<double> ref = reference_row_dq(spec, q.data(), d_o.data(), kv.k, kv.v, r.i);
      RowCheck c = compare_row(spec, out, TensorRole::dq, sh.q, r.b, r.h, r.i, ref.data());
      c.floor = dq_floor(spec, q.data(), d_o.data(), kv.k, kv.v, r.i);
      part[u].push_back(c);
    }
  }
  for (auto& p : part) checks.dq.insert(checks.dq.end(), p.begin(), p.end());
}

// dK/dV of the given (batch, KV head) groups (flat b * kv_heads + kv_head), whole.
void check_groups(const Spec& spec, const InputFill& fill, const HostOutputs& out,
                  const std::vector<int64_t>& groups, RowChecks& checks) {
  const Tensors sh = shapes_of(spec);
  std::vector<RowChecks> part(groups.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t u = 0; u < groups.size(); ++u) {
    const int64_t b = groups[u] / spec.kv_heads, kvh = groups[u] % spec.kv_heads;
    const GroupGrads ref = reference_group_grads(spec, fill.seed, fill.pattern, b, kvh);
    for (int64_t j = 0; j < spec.kv_len; ++j) {
      part[u].dk.push_back(
          compare_row(spec, out, TensorRole::dk, sh.k, b, kvh, j, &ref.dk[size_t(j * sh.k.dim)]));
      part[u].dv.push_back(
          compare_row(spec, out, TensorRole::dv, sh.v, b, kvh, j, &ref.dv[size_t(j * sh.v.dim)]));
    }
  }
  for (RowChecks& p : part) {
    checks.dk.insert(checks.dk.end(), p.dk.begin(), p.dk.end());
    checks.dv.insert(checks.dv.end(), p.dv.begin(), p.dv.end());
  }
}

// fp64 multiply-adds of one group's dK/dV reference.
double group_work(const Spec& spec) {
  return double(spec.group_size()) * double(spec.q_len) * double(spec.kv_len) *
         double(spec.head_dim + spec.dv());
}

// The groups a host check compares: all of them when every row is checked, else the first, the
// last and a seeded random one, each only within options.grad_group_work (else a note).
std::vector<int64_t> groups_to_check(const Spec& spec, const InputFill& fill,
                                     const VerifyOptions& options, RowChecks& checks) {
  const int64_t groups = spec.batch * spec.kv_heads;
  std::vector<int64_t> chosen;
  if (check_all_rows(spec, options)) {
    for (int64_t t = 0; t < groups; ++t) chosen.push_back(t);
    return chosen;
  }
  if (group_work(spec) > options.grad_group_work) {
    checks.notes.push_back(
        fmt::format("dk/dv not checked: a group is {:.3g} fp64 MACs, above {:.3g}",
                    group_work(spec), options.grad_group_work));
    return chosen;
  }
  Rng rng{fill.seed ^ 0x6A09E667F3BCC908ull};
  chosen = {0, groups - 1, rng.below(groups)};
  std::sort(chosen.begin(), chosen.end());
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  return chosen;
}

}  // namespace

RowChecks check_rows_on_host(const Spec& spec, const InputFill& fill, const HostOutputs& out,
                             const std::vector<RowIndex>& rows,
                             const std::vector<int64_t>& groups) {
  RowChecks checks;
  // A partial read holds only some rows of tensors the harness allocated: those rows must be there.
  if (std::string problems =
          out.partial() ? missing_rows(spec, out, rows, groups) : shape_problems(spec, out);
      !problems.empty()) {
    checks.problem = std::move(problems);
    return checks;
  }
  if (!out.o.empty() || !out.lse.empty()) check_forward(spec, fill, out, rows, checks);
  if (!out.dq.empty()) check_dq_rows(spec, fill, out, rows, checks);
  if (!out.dk.empty() && !out.dv.empty()) check_groups(spec, fill, out, groups, checks);
  checks.rows_checked = static_cast<int64_t>(rows.size());
  return checks;
}

RowChecks check_on_host(const Spec& spec, const InputFill& fill, const HostOutputs& out,
                        const VerifyOptions& options) {
  RowChecks checks;
  const std::vector<RowIndex> rows = rows_to_check(spec, options, fill.seed);
  const std::vector<int64_t> groups = spec.mode == Mode::fwd
                                          ? std::vector<int64_t>{}
                                          : groups_to_check(spec, fill, options, checks);
  std::vector<std::string> notes = std::move(checks.notes);
  checks = check_rows_on_host(spec, fill, out, rows, groups);
  if (!checks.problem.empty()) return checks;
  checks.notes = std::move(notes);
  checks.nonfinite = scan_non_finite(spec, out, checks.first_nonfinite);
  checks.sampling = check_all_rows(spec, options) ? "all" : "sample";
  return checks;
}

}  // namespace attnprof
