// Verification against the fp64 reference (include/attnprof/verify.hpp): the verdict on a
// check's row comparisons, whoever made them (the host, host_checks.cpp; the CUDA engine's
// device check). Each row's relative L2 error is held against its tensor's bound; the worst row
// relative to its bound is named.
#include "attnprof/verify.hpp"

#include "attnprof/ragged.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

namespace attnprof {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A flat row index (b * heads + h) * len + pos, in words.
std::string row_name(const char* tensor, int64_t row, int64_t heads, int64_t len, bool kv) {
  const int64_t pos = row % len, h = (row / len) % heads, b = row / len / heads;
  return fmt::format("{} row (b={}, {}={}, {}={})", tensor, b, kv ? "kv_head" : "h", h,
                     kv ? "j" : "i", pos);
}

// The relative L2 error of a row against the largest of its reference norm, its own floor and
// `floor`; the absolute L2 error where all are 0 (a row that sees no key); inf for a NaN.
double rel_error(const RowCheck& c, double floor) {
  const double f = std::max(floor, c.floor);
  const double denom2 = std::max(c.ref2, f * f);
  const double e = denom2 > 0 ? std::sqrt(c.err2 / denom2) : std::sqrt(c.err2);
  return e <= kInf ? e : kInf;
}

// The worst checked row over all tensors, ranked by error / bound so that one verdict covers O
// rows (output bound) and gradient rows (gradient bound) alike.
struct Worst {
  double ratio = -1, err = 0, tol = 0, max_abs = 0;
  std::string where;
  template <class Describe>
  void add(double err_in, double tol_in, double max_abs_in, Describe&& describe) {
    if (max_abs_in > max_abs) max_abs = max_abs_in;
    const double r = err_in / tol_in;
    if (r > ratio) {
      ratio = r;
      err = err_in;
      tol = tol_in;
      where = describe();
    }
  }
};

// sqrt(mean ref2) over the rows of `rows` with row / group_len == key, per key.
std::map<int64_t, double> rms_per_group(const std::vector<RowCheck>& rows, int64_t group_len) {
  std::map<int64_t, std::pair<double, int64_t>> acc;
  for (const RowCheck& c : rows) {
    auto& [sum, n] = acc[c.row / group_len];
    sum += c.ref2;
    ++n;
  }
  std::map<int64_t, double> out;
  for (const auto& [g, a] : acc) out[g] = std::sqrt(a.first / double(a.second));
  return out;
}

// The RMS row norms gradient rows are measured against (besides their own norm and floor): dQ's
// over all its checked rows, dK's and dV's over each (batch, KV head) group.
struct Floors {
  double dq = 0;
  std::map<int64_t, double> dk, dv;
  int64_t kv_len = 1;
  explicit Floors(const Spec& spec, const RowChecks& c)
      : kv_len(std::max<int64_t>(1, spec.kv_len)) {
    double sum = 0;
    for (const RowCheck& r : c.dq) sum += r.ref2;
    dq = c.dq.empty() ? 0 : std::sqrt(sum / double(c.dq.size()));
    dk = rms_per_group(c.dk, kv_len);
    dv = rms_per_group(c.dv, kv_len);
  }
  static double at(const std::map<int64_t, double>& m, int64_t group) {
    const auto it = m.find(group);
    return it == m.end() ? 0 : it->second;
  }
  double dk_of(const RowCheck& r) const { return at(dk, r.row / kv_len); }
  double dv_of(const RowCheck& r) const { return at(dv, r.row / kv_len); }
};

}  // namespace

// Bounds, per dtype, on the per-row relative L2 error ||o - ref|| / max(||ref||, floor). The inputs
// are exact in every dtype (the reference sees the same rounded values), so the error is only the
// provider's arithmetic. u is the unit roundoff: 2^-24 fp32, 2^-11 fp16, 2^-8 bf16.
//  - fp32 1e-4: fp32 accumulation over D and N grows like sqrt(N) u, ~2e-5 at N = 128K; 1e-4
//    keeps 5x margin yet fails TF32 matmuls (u = 2^-11, row errors ~5e-4), which do not
//    compute what an fp32 row claims.
//  - fp16 5e-3 and bf16 4e-2, about 10u: fused kernels keep P in registers and sit below 1u
//    (cuDNN, FlashAttention: 3e-3 in bf16 on the H200). Unfused ones materialize the scores in
//    the dtype: each rounding of S moves a probability by |s| u / 2, |s| up to ~5 for
//    unit-variance inputs, and PyTorch's eager formula rounds S twice (Q K^T, then the scale);
//    with P and O rounded too, the worst row of torch.naive in bf16 at D 128 was 3.07e-2 (7.9u)
//    over fa-bench on the H200 (bench/results/h200/2026-11-30-verify), cuda.naive's 1.7e-2. A
//    wrong scale, a dropped tile or a mask off by one gives errors of 1e-1 to 1.
// Gradients: dK and dV sum over all query rows and dS = P (dP - D_i) cancels where dP ~ D_i,
// amplifying the rounding of P and dO: fp32 1e-3, fp16 1e-2, bf16 5e-2 (rows judged against
// the larger of their norm, their floor and the RMS row norm; the worst on the H200 was 0.56 of
// the bound, torch.naive in bf16).
// LSE is always an fp32 output; its error is the error of the scores, |s| u_in with u_in the
// roundoff of the input dtype where a kernel pre-scales Q in that dtype, and |s| stays under
// ~8 for normal inputs: fp32 1e-3, fp16 4e-3, bf16 3e-2 (absolute, natural log).
// fp8: the inputs are exact (the reference sees the scaled fp8 values, inputs.hpp), but a fused
// fp8 kernel rounds twice on the way out: P to fp8 before P V (each probability off by up to u
// relative, u = 2^-4 for e4m3 and 2^-3 for e5m2, which moves O_i by about u/sqrt(3) of its floor,
// RowCheck::floor) and O itself to fp8 (each element off by up to u relative, RMS u/sqrt(3) =
// 0.036 for e4m3). Together about 0.05 per row in e4m3, 0.1 in e5m2; the bounds are 2u: 0.125
// and 0.25. The price of fp8 is what these bounds cannot see: a wrong scale moves every row by
// 0.5 or more, but losing a fraction f of a row's keys (a dropped tile, a mask off by one) moves
// it by about sqrt(f), seen only from f ~ 1/64 (e4m3) and 1/16 (e5m2). The LSE comes from fp32
// scores of exact fp8 products: 1e-2.
// fp8 gradients (cuDNN's fp8 backward, Hopper: dQ, dK, dV written in fp8 at the harness's scale)
// round more often: D_i from the fp8 O (the dQ floor covers it), P to fp8 before dV = P^T dO,
// the scores' gradient to fp8 before dQ and dK, and each gradient to fp8. An fp64 emulation of
// those roundings (scripts/fp8_bwd_emulation.py) gave worst rows of 0.069 (dQ), 0.130 (dK) and
// 0.062 (dV) in e4m3 over 64 heads of a causal N 512 D 128, 0.12/0.22/0.11 in e5m2; dK's worst
// is a key few queries see, whose gradient nearly cancels. cuDNN on the H200 stayed within
// that: 0.057-0.096 in e4m3 and 0.11-0.24 in e5m2 over 32 points of N 1024-2048
// (bench/results/h200/2026-12-02-fp8-backward). The bounds are about twice the emulation's
// worst: 0.25 (4u) and 0.4 (3.2u).
Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::fp32:
      return {1e-4, 1e-3, 1e-3};
    case DType::fp16:
      return {5e-3, 1e-2, 4e-3};
    case DType::bf16:
      return {4e-2, 5e-2, 3e-2};
    case DType::fp8_e4m3:
      return {1.25e-1, 2.5e-1, 1e-2};
    case DType::fp8_e5m2:
      return {2.5e-1, 4e-1, 1e-2};
  }
  return {};
}

Tolerance tolerance_for(DType dtype, const ProviderTraits& traits) {
  Tolerance t = tolerance_for(dtype);
  if (traits.output_tolerance > 0)
    t.output = std::max(t.output, std::min(traits.output_tolerance, kMaxDeclaredTolerance));
  return t;
}

VerifyResult judge_rows(const Spec& spec, const RowChecks& checks) {
  return judge_rows(spec, checks, tolerance_for(spec.dtype));
}

VerifyResult judge_rows(const Spec& spec, const RowChecks& checks, const Tolerance& tol) {
  VerifyResult r;
  r.checked = true;
  r.tolerance = spec.mode == Mode::bwd ? tol.gradient : tol.output;
  r.lse_tolerance = tol.lse_abs;
  r.rows_total = seq_lens(spec).q_total() * spec.q_heads;  // a ragged batch's padding is no row
  r.rows_checked = checks.rows_checked;
  r.sampling = checks.sampling;
  r.reference_disagreement = checks.disagreement;
  if (!checks.problem.empty()) {
    r.rel_l2_err = kInf;  // nothing comparable: fail without reading out of bounds
    r.detail = checks.problem;
    return r;
  }
  r.nan_count = checks.nonfinite;
  Worst worst;
  for (const RowCheck& c : checks.o)
    worst.add(rel_error(c, 0), tol.output, c.max_abs,
              [&] { return row_name("o", c.row, spec.q_heads, spec.q_len, false); });
  // Gradient rows are judged against the largest of their norm, their floor and an RMS row norm:
  // dQ rows against the checked dQ rows', dK/dV rows against their (batch, KV head) group's.
  // dS = P o (dP - D) sums to zero over a row, so a row that sees few keys (or a key few queries
  // see) nearly cancels, and its own norm would turn rounding in dP into a huge relative error;
  // the RMS is the magnitude a kernel's rounding is proportional to, the dQ floor the magnitude
  // its rounding of D moves dQ by.
  const Floors floors(spec, checks);
  for (const RowCheck& c : checks.dq)
    worst.add(rel_error(c, floors.dq), tol.gradient, c.max_abs,
              [&] { return row_name("dq", c.row, spec.q_heads, spec.q_len, false); });
  for (const RowCheck& c : checks.dk)
    worst.add(rel_error(c, floors.dk_of(c)), tol.gradient, c.max_abs,
              [&] { return row_name("dk", c.row, spec.kv_heads, spec.kv_len, true); });
  for (const RowCheck& c : checks.dv)
    worst.add(rel_error(c, floors.dv_of(c)), tol.gradient, c.max_abs,
              [&] { return row_name("dv", c.row, spec.kv_heads, spec.kv_len, true); });
  double lse_err = checks.lse.empty() ? -1.0 : 0.0;
  int64_t lse_row = -1;
  for (const auto& [row, err] : checks.lse) {
    const double e = err <= kInf ? err : kInf;
    if (e > lse_err) {
      lse_err = e;
      lse_row = row;
    }
  }
  if (worst.ratio >= 0) {
    r.rel_l2_err = worst.err;
    r.tolerance = worst.tol;
  }
  r.max_abs_err = worst.max_abs;
  r.lse_max_abs_err = lse_err;
  std::vector<std::string> parts;
  if (r.nan_count > 0)
    parts.push_back(
        fmt::format("{} non-finite elements, first {}", r.nan_count, checks.first_nonfinite));
  if (worst.ratio >= 0)
    parts.push_back(
        fmt::format("worst {}: rel L2 {:.3g} (bound {:.3g})", worst.where, worst.err, worst.tol));
  if (lse_err > 0)
    parts.push_back(fmt::format("worst {}: abs err {:.3g} (bound {:.3g})",
                                row_name("lse", lse_row, spec.q_heads, spec.q_len, false), lse_err,
                                tol.lse_abs));
  for (const std::string& n : checks.notes) parts.push_back(n);
  for (size_t t = 0; t < parts.size(); ++t) r.detail += (t ? "; " : "") + parts[t];
  return r;
}

VerifyResult verify_outputs(const Spec& spec, const InputFill& fill, const HostOutputs& out,
                            const VerifyOptions& options) {
  return judge_rows(spec, check_on_host(spec, fill, out, options));
}

double check_disagreement(const Spec& spec, const RowChecks& device, const RowChecks& host) {
  double worst = 0;
  const Floors floors(spec, device);
  // The host checked a few dozen rows, the device every row (tens of millions at large shapes):
  // index the host's, scan the device's once.
  auto compare = [&](const std::vector<RowCheck>& dev, const std::vector<RowCheck>& ref,
                     auto&& floor_of) {
    std::unordered_map<int64_t, const RowCheck*> by_row;
    for (const RowCheck& h : ref) by_row.emplace(h.row, nullptr);
    for (const RowCheck& c : dev) {
      if (auto it = by_row.find(c.row); it != by_row.end()) it->second = &c;
    }
    for (const RowCheck& h : ref) {
      const auto it = by_row.find(h.row);
      if (it->second == nullptr) {  // the device did not check a row the host did
        worst = kInf;
        continue;
      }
      const double f = floor_of(*it->second);
      const double a = rel_error(*it->second, f), b = rel_error(h, f);
      if (a == b) continue;  // both inf included
      worst = std::max(worst, std::abs(a - b));
    }
  };
  compare(device.o, host.o, [](const RowCheck&) { return 0.0; });
  compare(device.dq, host.dq, [&](const RowCheck&) { return floors.dq; });
  compare(device.dk, host.dk, [&](const RowCheck& r) { return floors.dk_of(r); });
  compare(device.dv, host.dv, [&](const RowCheck& r) { return floors.dv_of(r); });
  std::unordered_map<int64_t, std::optional<double>> lse;
  for (const auto& [row, err] : host.lse) lse.emplace(row, std::nullopt);
  for (const auto& [row, err] : device.lse) {
    if (auto it = lse.find(row); it != lse.end()) it->second = err;
  }
  for (const auto& [row, err] : host.lse) {
    const std::optional<double> got = lse.at(row);
    if (!got) return kInf;
    if (*got == err) continue;
    worst = std::max(worst, std::abs(*got - err));
  }
  return worst <= kInf ? worst : kInf;
}

bool verify_passed(const VerifyResult& v) {
  const bool lse_ok = v.lse_max_abs_err < 0 || v.lse_max_abs_err <= v.lse_tolerance;
  return v.checked && v.nan_count == 0 && v.rel_l2_err <= v.tolerance && lse_ok;
}

}  // namespace attnprof
