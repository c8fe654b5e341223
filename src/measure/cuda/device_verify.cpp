// The device check (device_verify.hpp): the kernels' per-row sums (device_check.cu) as RowChecks.
#include "measure/cuda/device_verify.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/ragged.hpp"
#include "measure/cuda/device_check.hpp"

namespace attnprof::cuda {

namespace {

// The flat row of entry `t`: rows[t], or t where every row came back.
int64_t row_at(const std::vector<int64_t>& rows, size_t t) {
  return rows.empty() ? static_cast<int64_t>(t) : rows[t];
}

// Whether flat query row `row` lies in a ragged batch's padding (never for uniform lengths).
struct PaddingRows {
  std::vector<int64_t> q;  // per sequence its query rows; empty: uniform
  int64_t heads = 1, len = 1;
  explicit PaddingRows(const Spec& spec) : heads(spec.q_heads), len(spec.q_len) {
    if (spec.ragged()) q = seq_lens(spec).q;
  }
  bool operator()(int64_t row) const {
    return !q.empty() && row % len >= q[static_cast<size_t>(row / len / heads)];
  }
};

std::vector<RowCheck> row_checks(const DeviceRowSums& s, const std::vector<int64_t>& rows = {},
                                 const PaddingRows* padding = nullptr) {
  std::vector<RowCheck> out;
  out.reserve(s.err2.size());
  for (size_t t = 0; t < s.err2.size(); ++t) {
    const int64_t row = row_at(rows, t);
    if (padding != nullptr && (*padding)(row)) continue;
    out.push_back({row, s.err2[t], s.ref2[t], s.max_abs[t], s.floor.empty() ? 0.0 : s.floor[t]});
  }
  return out;
}

// A flat element index of `t` in words: "o[123] (b=0, h=1, i=2, d=3)".
std::string element_name(std::string_view name, const TensorView& t, int64_t e) {
  const int64_t d = e % t.dim;
  int64_t r = e / t.dim;
  int64_t pos = 0, h = 0;
  if (t.layout == Layout::bhsd) {
    pos = r % t.len;
    r /= t.len;
    h = r % t.heads;
    r /= t.heads;
  } else {
    h = r % t.heads;
    r /= t.heads;
    pos = r % t.len;
    r /= t.len;
  }
  return fmt::format("{}[{}] (b={}, h={}, i={}, d={})", name, e, r, h, pos, d);
}

}  // namespace

std::string device_check_unavailable(const Spec& spec) {
  size_t need = 0, optin = 0;
  if (device_check_tile(spec, need, optin) > 0) return {};
  return fmt::format(
      "the device check needs {} bytes of shared memory per block at D={} Dv={}, the device "
      "allows {}",
      need, spec.head_dim, spec.dv(), optin);
}

RowChecks check_on_device(const Spec& spec, const Io& io, cudaStream_t stream,
                          const DeviceRows& rows) {
  const DeviceCheck d = run_device_check(spec, io, stream, DeviceCheckPath::fastest, 0, rows);
  RowChecks checks;
  checks.sampling = "all (device)";
  // A ragged batch's padding rows are no output (their sums are zero): left out.
  const PaddingRows padding(spec);
  checks.rows_checked = seq_lens(spec).q_total() * spec.q_heads;
  checks.o = row_checks(d.o, d.o_rows, &padding);
  checks.dq = row_checks(d.dq);
  checks.dk = row_checks(d.dk);
  checks.dv = row_checks(d.dv);
  checks.lse.reserve(d.lse_err.size());
  for (size_t t = 0; t < d.lse_err.size(); ++t) {
    const int64_t row = row_at(d.lse_rows, t);
    if (!padding(row)) checks.lse.emplace_back(row, d.lse_err[t]);
  }
  for (const DeviceScan& s : d.scans) {
    checks.nonfinite += s.count;
    if (s.count == 0 || !checks.first_nonfinite.empty()) continue;
    checks.first_nonfinite =
        fmt::format("{} = {}", element_name(to_string(s.role), io[s.role], s.first),
                    static_cast<float>(s.value));
  }
  return checks;
}

}  // namespace attnprof::cuda
