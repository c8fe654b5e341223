#include "cpu_tensors.hpp"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <mutex>
#include <new>
#include <string>

namespace attnprof::cpu {
namespace {

struct Shape {
  int64_t heads = 0, len = 0, dim = 0;
};

Shape shape_of(const Spec& s, TensorId t) {
  switch (t) {
    case TensorId::q:
      return {s.q_heads, s.q_len, s.head_dim};
    case TensorId::k:
      return {s.kv_heads, s.kv_len, s.head_dim};
    case TensorId::v:
      return {s.kv_heads, s.kv_len, s.dv()};
    case TensorId::d_o:
      return {s.q_heads, s.q_len, s.dv()};
  }
  return {};
}

int64_t bytes_of(const std::vector<float>& t) {
  return static_cast<int64_t>(t.size() * sizeof(float));
}

}  // namespace

SliceView slice_view(const Spec& spec, int64_t b, int64_t h, int64_t heads, int64_t len,
                     int64_t dim) {
  if (spec.layout == Layout::bhsd) return {(b * heads + h) * len * dim, dim};
  return {(b * len * heads + h) * dim, heads * dim};
}

std::vector<float> generate_input(const Spec& spec, const PrepareContext& ctx, TensorId tensor) {
  const Shape sh = shape_of(spec, tensor);
  const int64_t n = spec.batch * sh.heads * sh.len * sh.dim;
  std::vector<float> out(static_cast<size_t>(n));
  const int dtype_code = static_cast<int>(spec.dtype);
  // Position of flat element e: bhsd rows are (b, h, pos), bshd rows are (b, pos, h).
  const int64_t pos_div = spec.layout == Layout::bhsd ? sh.dim : sh.dim * sh.heads;
  const int threads = cpu_threads(ctx.threads, n / 4096 + 1);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t e = 0; e < n; ++e) {
    const int64_t dim = e % sh.dim;
    const int64_t pos = (e / pos_div) % sh.len;
    out[static_cast<size_t>(e)] =
        input_value(ctx.pattern, ctx.seed, tensor, static_cast<uint64_t>(e), dtype_code, pos, dim);
  }
  return out;
}

int64_t cpu_tensor_bytes(const Spec& s) {
  const int64_t lse = s.batch * s.q_heads * s.q_len;
  int64_t elems = s.q_elems() + s.k_elems() + s.v_elems();
  if (s.mode != Mode::bwd) elems += s.o_elems() + lse;
  if (s.mode != Mode::fwd) elems += s.o_elems() + s.q_elems() + s.k_elems() + s.v_elems();
  return elems * static_cast<int64_t>(sizeof(float));
}

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

CpuRun::CpuRun(const Spec& spec, const PrepareContext& ctx)
    : spec_(spec), threads_(std::max(1, ctx.threads)), tracker_(ctx.tracker) {
  try {
    q_ = generate_input(spec, ctx, TensorId::q);
    k_ = generate_input(spec, ctx, TensorId::k);
    v_ = generate_input(spec, ctx, TensorId::v);
    if (spec.mode != Mode::fwd) d_o_ = generate_input(spec, ctx, TensorId::d_o);
    if (spec.mode != Mode::bwd) {
      o_.resize(static_cast<size_t>(spec.o_elems()));
      lse_.resize(static_cast<size_t>(spec.batch * spec.q_heads * spec.q_len));
    }
    if (spec.mode != Mode::fwd) {
      dq_.resize(static_cast<size_t>(spec.q_elems()));
      dk_.resize(static_cast<size_t>(spec.k_elems()));
      dv_.resize(static_cast<size_t>(spec.v_elems()));
    }
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("host allocation of " + std::to_string(cpu_tensor_bytes(spec)) +
                      " bytes of CPU tensors failed");
  }
  for (const auto* t : {&q_, &k_, &v_, &d_o_, &o_, &lse_, &dq_, &dk_, &dv_})
    tensor_bytes_ += bytes_of(*t);
  if (tracker_ != nullptr) tracker_->on_alloc(tensor_bytes_);
}

CpuRun::~CpuRun() {
  if (tracker_ != nullptr) tracker_->on_free(tensor_bytes_ + workspace_bytes_);
}

void CpuRun::add_workspace(int64_t bytes) {
  workspace_bytes_ += bytes;
  if (tracker_ != nullptr) tracker_->on_alloc(bytes);
}

void CpuRun::poison_outputs() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (auto* t : {&o_, &lse_, &dq_, &dk_, &dv_}) std::fill(t->begin(), t->end(), nan);
}

HostOutputs CpuRun::read_outputs() {
  HostOutputs out;
  out.o = o_;
  out.lse = lse_;
  out.dq = dq_;
  out.dk = dk_;
  out.dv = dv_;
  return out;
}

}  // namespace attnprof::cpu
