// The device check (device_verify.hpp): the kernels' per-row sums (device_check.cu) as RowChecks.
#include "measure/cuda/device_verify.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "measure/cuda/device_check.hpp"

namespace attnprof::cuda {

namespace {

std::vector<RowCheck> row_checks(const DeviceRowSums& s) {
  std::vector<RowCheck> out(s.err2.size());
  for (size_t r = 0; r < out.size(); ++r)
    out[r] = {static_cast<int64_t>(r), s.err2[r], s.ref2[r], s.max_abs[r],
              s.floor.empty() ? 0.0 : s.floor[r]};
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

RowChecks check_on_device(const Spec& spec, const Io& io, cudaStream_t stream) {
  const DeviceCheck d = run_device_check(spec, io, stream);
  RowChecks checks;
  checks.sampling = "all (device)";
  checks.rows_checked = spec.batch * spec.q_heads * spec.q_len;
  checks.o = row_checks(d.o);
  checks.dq = row_checks(d.dq);
  checks.dk = row_checks(d.dk);
  checks.dv = row_checks(d.dv);
  checks.lse.reserve(d.lse_err.size());
  for (size_t r = 0; r < d.lse_err.size(); ++r)
    checks.lse.emplace_back(static_cast<int64_t>(r), d.lse_err[r]);
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
