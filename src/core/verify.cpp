// Verification against the fp64 reference (include/attnprof/verify.hpp).
//
// Order of work: shapes of the produced tensors, a NaN/inf scan of every element (the poison
// must be gone everywhere, not only in the checked rows), then per-row relative L2 errors of the
// chosen rows (O, LSE, dQ), then whole (batch, KV head) groups for dK/dV. K and V slices are
// regenerated once per group and reused by all of the group's rows, so the row checks cost
// O(rows x kv_len x (D + Dv)) plus O(groups touched x kv_len x (D + Dv)) for the slices.
#include "attnprof/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "attnprof/reference.hpp"
#include "core/row_sample.hpp"

namespace attnprof {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Shape of one tensor in the spec's layout: heads x len x dim per batch.
struct Shape {
  int64_t heads = 0, len = 0, dim = 0;
};

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

// Tracks the worst checked row over all tensors, ranked by error / bound so that one verdict
// covers O rows (output bound) and gradient rows (gradient bound) alike.
struct Worst {
  double ratio = -1, err = 0, tol = 0, max_abs = 0;
  std::string where;
  template <typename Describe>
  void add(double err_in, double tol_in, double max_abs_in, Describe&& describe) {
    max_abs = std::max(max_abs, max_abs_in);
    if (!(err_in <= kInf)) err_in = kInf;  // NaN counts as the worst possible error
    const double r = err_in / tol_in;
    if (r > ratio) {
      ratio = r;
      err = err_in;
      tol = tol_in;
      where = describe();
    }
  }
};

// Relative L2 error of one row: `got` read through flat indices of `tensor`, `ref` contiguous.
// The denominator is max(||ref||, norm_floor); with a zero floor it falls back to the absolute
// L2 error when the reference row is all zeros (an empty row).
struct RowErr {
  double rel = 0, max_abs = 0;
};
RowErr row_error(const Spec& spec, const std::vector<float>& got, const Shape& sh, int64_t b,
                 int64_t h, int64_t pos, const double* ref, double norm_floor = 0) {
  double diff2 = 0, ref2 = 0, max_abs = 0;
  for (int64_t c = 0; c < sh.dim; ++c) {
    const double g =
        got[static_cast<size_t>(flat_index(spec, b, h, pos, c, sh.heads, sh.len, sh.dim))];
    const double e = g - ref[c];
    diff2 += e * e;
    ref2 += ref[c] * ref[c];
    max_abs = std::max(max_abs, std::abs(e));
  }
  RowErr r;
  const double denom2 = std::max(ref2, norm_floor * norm_floor);
  r.rel = denom2 > 0 ? std::sqrt(diff2 / denom2) : std::sqrt(diff2);
  r.max_abs = max_abs;
  if (!(r.rel <= kInf)) r.rel = kInf;
  return r;
}

// sqrt(mean over rows of ||row||^2) of a row-major (rows x dim) block.
double rms_row_norm(const std::vector<double>& block, int64_t dim) {
  if (block.empty() || dim <= 0) return 0;
  double sum2 = 0;
  for (double x : block) sum2 += x * x;
  return std::sqrt(sum2 / (static_cast<double>(block.size()) / static_cast<double>(dim)));
}

// One (batch, KV head) group's K and V slices, regenerated when the group changes.
struct KvCache {
  int64_t b = -1, kvh = -1;
  std::vector<double> k, v;
  void load(const Spec& spec, const InputFill& ctx, int64_t b_in, int64_t kvh_in) {
    if (b_in == b && kvh_in == kvh) return;
    b = b_in;
    kvh = kvh_in;
    k = input_slice(spec, ctx.seed, ctx.pattern, TensorId::k, b, kvh);
    v = input_slice(spec, ctx.seed, ctx.pattern, TensorId::v, b, kvh);
  }
};

// One row of input `tensor` (dim values), regenerated from the seed.
std::vector<double> input_row(const Spec& spec, const InputFill& ctx, TensorId tensor,
                              const Shape& sh, int64_t b, int64_t h, int64_t pos) {
  std::vector<double> row(static_cast<size_t>(sh.dim));
  for (int64_t c = 0; c < sh.dim; ++c) {
    const int64_t idx = flat_index(spec, b, h, pos, c, sh.heads, sh.len, sh.dim);
    row[static_cast<size_t>(c)] =
        input_value(ctx.pattern, ctx.seed, tensor, static_cast<uint64_t>(idx),
                    static_cast<int>(spec.dtype), pos, c);
  }
  return row;
}

struct Tensors {
  Shape q, k, v, o;
};
Tensors shapes_of(const Spec& s) {
  return {{s.q_heads, s.q_len, s.head_dim},
          {s.kv_heads, s.kv_len, s.head_dim},
          {s.kv_heads, s.kv_len, s.dv()},
          {s.q_heads, s.q_len, s.dv()}};
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

// Counts non-finite elements of every produced tensor. An infinite LSE is legal only on a row
// that sees no key (see reference.hpp); a NaN is never legal.
int64_t scan_non_finite(const Spec& s, const HostOutputs& out, std::string& first) {
  const Tensors sh = shapes_of(s);
  int64_t count = 0;
  auto scan = [&](const char* name, const std::vector<float>& t, const Shape& shape) {
    for (size_t e = 0; e < t.size(); ++e) {
      if (std::isfinite(t[e])) continue;
      ++count;
      if (first.empty()) {
        const Coord c = decode(s, static_cast<int64_t>(e), shape);
        first = fmt::format("{}[{}] (b={}, h={}, i={}, d={}) = {}", name, e, c.b, c.h, c.pos, c.d,
                            t[e]);
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
    if (std::isfinite(x) || (std::isinf(x) && row_is_empty(s, i))) continue;
    ++count;
    if (first.empty()) {
      const int64_t bh = static_cast<int64_t>(e) / s.q_len;
      first =
          fmt::format("lse[{}] (b={}, h={}, i={}) = {}", e, bh / s.q_heads, bh % s.q_heads, i, x);
    }
  }
  return count;
}

// Per-row checks of O, LSE and dQ on the chosen rows.
void check_rows(const Spec& spec, const InputFill& ctx, const HostOutputs& out,
                const std::vector<RowIndex>& rows, const Tolerance& tol, Worst& worst,
                double& lse_err, std::string& lse_where) {
  const Tensors sh = shapes_of(spec);
  const int64_t g = spec.group_size();
  const bool grads = spec.mode != Mode::fwd && !out.dq.empty();
  std::vector<std::pair<RowIndex, std::vector<double>>> dq_rows;  // checked rows, fp64 dQ
  KvCache kv;
  for (const RowIndex& r : rows) {
    kv.load(spec, ctx, r.b, r.h / g);
    const std::vector<double> q = input_row(spec, ctx, TensorId::q, sh.q, r.b, r.h, r.i);
    auto where = [&](const char* tensor) {
      return fmt::format("{} row (b={}, h={}, i={})", tensor, r.b, r.h, r.i);
    };
    if (!out.o.empty() || !out.lse.empty()) {
      const RowRef ref = reference_row(spec, q.data(), kv.k, kv.v, r.i);
      if (!out.o.empty()) {
        const RowErr e = row_error(spec, out.o, sh.o, r.b, r.h, r.i, ref.o.data());
        worst.add(e.rel, tol.output, e.max_abs, [&] { return where("o"); });
      }
      if (!out.lse.empty()) {
        const double got =
            out.lse[static_cast<size_t>((r.b * spec.q_heads + r.h) * spec.q_len + r.i)];
        double err = std::isinf(ref.lse) && std::isinf(got) ? 0.0 : std::abs(got - ref.lse);
        if (!(err <= kInf)) err = kInf;
        if (err > lse_err) {
          lse_err = err;
          lse_where = where("lse");
        }
      }
    }
    if (grads) {
      const std::vector<double> d_o = input_row(spec, ctx, TensorId::d_o, sh.o, r.b, r.h, r.i);
      dq_rows.push_back({r, reference_row_dq(spec, q.data(), d_o.data(), kv.k, kv.v, r.i)});
    }
  }
  // dQ rows are judged like dK rows (check_groups): against the larger of their own norm and
  // the RMS norm of the checked dQ rows, since sum_j dS_ij = 0 makes a row that sees few keys
  // nearly cancel.
  double sum2 = 0;
  for (const auto& [r, ref] : dq_rows) {
    for (double x : ref) sum2 += x * x;
  }
  const double floor = dq_rows.empty() ? 0 : std::sqrt(sum2 / static_cast<double>(dq_rows.size()));
  for (const auto& [r, ref] : dq_rows) {
    const RowErr e = row_error(spec, out.dq, sh.q, r.b, r.h, r.i, ref.data(), floor);
    worst.add(e.rel, tol.gradient, e.max_abs, [&, row = r] {
      return fmt::format("dq row (b={}, h={}, i={})", row.b, row.h, row.i);
    });
  }
}

// dK/dV of whole groups: all groups when every row is checked, else the first, the last and a
// seeded random one, each only within options.grad_group_work. Returns a note when skipped.
std::string check_groups(const Spec& spec, const InputFill& ctx, const HostOutputs& out,
                         const VerifyOptions& options, const Tolerance& tol, Worst& worst) {
  const Tensors sh = shapes_of(spec);
  const int64_t groups = spec.batch * spec.kv_heads;
  std::vector<int64_t> chosen;
  if (check_all_rows(spec, options)) {
    for (int64_t t = 0; t < groups; ++t) chosen.push_back(t);
  } else {
    const double work = double(spec.group_size()) * double(spec.q_len) * double(spec.kv_len) *
                        double(spec.head_dim + spec.dv());
    if (work > options.grad_group_work)
      return fmt::format("dk/dv not checked: a group is {:.3g} fp64 MACs, above {:.3g}", work,
                         options.grad_group_work);
    Rng rng{ctx.seed ^ 0x6A09E667F3BCC908ull};
    chosen = {0, groups - 1, rng.below(groups)};
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  }
  for (int64_t grp : chosen) {
    const int64_t b = grp / spec.kv_heads, kvh = grp % spec.kv_heads;
    const GroupGrads ref = reference_group_grads(spec, ctx.seed, ctx.pattern, b, kvh);
    // dK rows are scale * sum_i dS_ij q_i with dS = P o (dP - D): where dP_ij nearly equals
    // D_i the reference row nearly cancels, and its own norm would turn rounding in dP into a
    // huge relative error. Rows are judged against the larger of their norm and the group's RMS
    // row norm, the magnitude a kernel's rounding is proportional to.
    const double dk_floor = rms_row_norm(ref.dk, sh.k.dim);
    const double dv_floor = rms_row_norm(ref.dv, sh.v.dim);
    for (int64_t j = 0; j < spec.kv_len; ++j) {
      auto where = [&](const char* tensor) {
        return fmt::format("{} row (b={}, kv_head={}, j={})", tensor, b, kvh, j);
      };
      const RowErr ek =
          row_error(spec, out.dk, sh.k, b, kvh, j, &ref.dk[size_t(j * sh.k.dim)], dk_floor);
      worst.add(ek.rel, tol.gradient, ek.max_abs, [&] { return where("dk"); });
      const RowErr ev =
          row_error(spec, out.dv, sh.v, b, kvh, j, &ref.dv[size_t(j * sh.v.dim)], dv_floor);
      worst.add(ev.rel, tol.gradient, ev.max_abs, [&] { return where("dv"); });
    }
  }
  return {};
}

}  // namespace

// Bounds, per dtype, on the per-row relative L2 error ||o - ref|| / ||ref||. The inputs are
// exact in every dtype (the reference sees the same rounded values), so the error is only the
// provider's arithmetic: output rounding to the dtype, P rounded to the dtype before P.V (flash
// kernels), and fp32 accumulation. u is the unit roundoff: 2^-24 fp32, 2^-11 fp16, 2^-8 bf16.
//  - fp32 1e-4: fp32 accumulation over D and N grows like sqrt(N) u, ~2e-5 at N = 128K; 1e-4
//    keeps 5x margin yet fails TF32 matmuls (u = 2^-11, row errors ~5e-4), which do not
//    compute what an fp32 row claims.
//  - fp16 4e-3 (~8u): output rounding alone gives up to u = 4.9e-4 per element, P rounding
//    another few u on the row; 8u leaves margin, while a wrong scale, a dropped tile or a mask
//    off by one on the diagonal-edge rows (which see few keys) gives errors of 1e-2 to 1.
//  - bf16 2e-2 (~5u, u = 3.9e-3): the same budget as fp16 in units of the coarser roundoff.
// Gradients get looser bounds: dK and dV sum over all query rows, and dS = P (dP - D_i)
// cancels where dP ~ D_i, amplifying the rounding of P and dO: fp32 1e-3, fp16 1e-2, bf16 5e-2
// (10x, 2.5x and 2.5x the output bounds).
// LSE is always an fp32 output; its error is the error of the scores, |s| u_in with u_in the
// roundoff of the input dtype where a kernel pre-scales Q in that dtype, and |s| stays under
// ~8 for normal inputs: fp32 1e-3, fp16 4e-3, bf16 3e-2 (absolute, natural log).
Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::fp32:
      return {1e-4, 1e-3, 1e-3};
    case DType::fp16:
      return {4e-3, 1e-2, 4e-3};
    case DType::bf16:
      return {2e-2, 5e-2, 3e-2};
  }
  return {};
}

VerifyResult verify_outputs(const Spec& spec, const InputFill& ctx, const HostOutputs& out,
                            const VerifyOptions& options) {
  const Tolerance tol = tolerance_for(spec.dtype);
  VerifyResult r;
  r.checked = true;
  r.tolerance = spec.mode == Mode::bwd ? tol.gradient : tol.output;
  r.lse_tolerance = tol.lse_abs;
  r.rows_total = spec.batch * spec.q_heads * spec.q_len;
  r.sampling = check_all_rows(spec, options) ? "all" : "stratified";

  if (const std::string problems = shape_problems(spec, out); !problems.empty()) {
    r.rel_l2_err = kInf;  // nothing comparable: fail without reading out of bounds
    r.detail = problems;
    return r;
  }
  std::string first_bad;
  r.nan_count = scan_non_finite(spec, out, first_bad);

  const std::vector<RowIndex> rows = rows_to_check(spec, options, ctx.seed);
  r.rows_checked = static_cast<int64_t>(rows.size());
  Worst worst;
  double lse_err = out.lse.empty() ? -1.0 : 0.0;
  std::string lse_where;
  check_rows(spec, ctx, out, rows, tol, worst, lse_err, lse_where);
  std::string group_note;
  if (spec.mode != Mode::fwd) group_note = check_groups(spec, ctx, out, options, tol, worst);

  if (worst.ratio >= 0) {
    r.rel_l2_err = worst.err;
    r.tolerance = worst.tol;
  }
  r.max_abs_err = worst.max_abs;
  r.lse_max_abs_err = lse_err;
  std::vector<std::string> parts;
  if (r.nan_count > 0)
    parts.push_back(fmt::format("{} non-finite elements, first {}", r.nan_count, first_bad));
  if (worst.ratio >= 0)
    parts.push_back(
        fmt::format("worst {}: rel L2 {:.3g} (bound {:.3g})", worst.where, worst.err, worst.tol));
  if (lse_err > 0)
    parts.push_back(
        fmt::format("worst {}: abs err {:.3g} (bound {:.3g})", lse_where, lse_err, tol.lse_abs));
  if (!group_note.empty()) parts.push_back(group_note);
  for (size_t t = 0; t < parts.size(); ++t) r.detail += (t ? "; " : "") + parts[t];
  return r;
}

bool verify_passed(const VerifyResult& v) {
  const bool lse_ok = v.lse_max_abs_err < 0 || v.lse_max_abs_err <= v.lse_tolerance;
  return v.checked && v.nan_count == 0 && v.rel_l2_err <= v.tolerance && lse_ok;
}

}  // namespace attnprof
