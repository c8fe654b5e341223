#include "cpu_run.hpp"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <mutex>

extern "C" char* openblas_get_config(void);
extern "C" char* openblas_get_corename(void);

namespace attnprof::cpu {

int cpu_threads(int requested, int64_t work_items) {
  return static_cast<int>(std::clamp<int64_t>(work_items, 1, std::max(1, requested)));
}

Support check_blas_dims(const Spec& s) {
  // The largest leading dimension is a bshd row stride (heads * dim) or a score row (kv_len).
  const int64_t biggest = std::max({s.q_len, s.kv_len, s.q_heads * std::max(s.head_dim, s.dv()),
                                    s.kv_heads * std::max(s.head_dim, s.dv())});
  if (biggest > INT_MAX)
    return Support::no("a dimension or row stride exceeds the 32-bit int of the CBLAS interface");
  return Support::yes();
}

void use_single_threaded_blas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

std::string openblas_version() {
  return fmt::format("{} (core {})", openblas_get_config(), openblas_get_corename());
}

CpuRun::CpuRun(const Spec& spec, const PrepareContext& ctx)
    : spec_(spec), threads_(std::max(1, ctx.threads)), tracker_(ctx.tracker) {}

CpuRun::~CpuRun() {
  if (tracker_ != nullptr) tracker_->on_free(workspace_bytes_);
}

void CpuRun::add_workspace(int64_t bytes) {
  workspace_bytes_ += bytes;
  if (tracker_ != nullptr) tracker_->on_alloc(bytes);
}

}  // namespace attnprof::cpu
