// cuda.naive and cuda.naive.expand: attention with the N x N scores materialized, the recipe of
// PyTorch's naive `softmax(q @ k.T * scale) @ v` in the point's dtype:
//   1. S = scale * Q K^T   cuBLAS batched GEMM, S stored in the dtype, fp32 accumulation
//   2. P = softmax(S)      masked row softmax kernel (softmax.cu), fp32 math, P in the dtype
//   3. O = P V             cuBLAS batched GEMM
// The scale is the first GEMM's alpha and the mask is applied inside the softmax (PyTorch's
// naive spends a separate multiply and a masked_fill pass on each). S and P are separate
// buffers of B*Hq*Nq*Nk elements each, as PyTorch's peak holds both.
//
// cuda.naive reads K and V per KV group (native GQA, attention_gemms.hpp). cuda.naive.expand is
// the same implementation with one flag: it first materializes K and V repeated to the query
// heads (repeat_kv.cu, torch.repeat_interleave) and then runs attention as MHA, so the cost of
// GQA expansion (time and memory) is the difference between the two rows.
//
// A paged KV cache (Spec::page_size) is first gathered into contiguous K and V (gather_pages.cu)
// inside the launch, as an unfused implementation over a paged cache must.
#include <fmt/format.h>

#include <span>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/library_versions.hpp"
#include "providers/cuda/attention_gemms.hpp"
#include "providers/cuda/cublas_session.hpp"
#include "providers/cuda/gather_pages.cuh"
#include "providers/cuda/provider_common.hpp"
#include "providers/cuda/repeat_kv.cuh"
#include "providers/cuda/softmax.cuh"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

using cuda::DeviceBuffer;

// Every buffer a run allocates besides the harness's tensors, in bytes; workspace_estimate()
// and the run use the same numbers.
struct NaivePlan {
  int64_t k_gathered = 0;  // paged only: K and V gathered from their pages
  int64_t v_gathered = 0;
  int64_t k_expanded = 0;  // expand only: K and V repeated to the query heads
  int64_t v_expanded = 0;
  int64_t scores = 0;  // S, and P again
  int64_t gemm = 0;    // bshd pointer arrays
  int64_t cublas = cuda::CublasSession::kWorkspaceBytes;

  int64_t total() const {
    return k_gathered + v_gathered + k_expanded + v_expanded + 2 * scores + gemm + cublas;
  }
};

int64_t kv_heads_seen(const Spec& spec, bool expand) {
  return expand ? spec.q_heads : spec.kv_heads;
}

NaivePlan plan_for(const Spec& spec, bool expand) {
  const auto esize = static_cast<int64_t>(dtype_bytes(spec.dtype));
  NaivePlan p;
  if (spec.paged()) {
    p.k_gathered = spec.batch * spec.kv_heads * spec.kv_len * spec.head_dim * esize;
    p.v_gathered = spec.batch * spec.kv_heads * spec.kv_len * spec.dv() * esize;
  }
  if (expand && spec.group_size() > 1) {
    p.k_expanded = spec.batch * spec.q_heads * spec.kv_len * spec.head_dim * esize;
    p.v_expanded = spec.batch * spec.q_heads * spec.kv_len * spec.dv() * esize;
  }
  p.scores = spec.batch * spec.q_heads * spec.q_len * spec.kv_len * esize;
  p.gemm = cuda::AttentionGemms::bytes_for(
      cuda::gemm_shape(spec, spec.dtype, kv_heads_seen(spec, expand)));
  return p;
}

class NaiveRun final : public Run {
 public:
  NaiveRun(const Spec& spec, bool expand, const PrepareContext& ctx)
      : spec_(spec),
        plan_(plan_for(spec, expand)),
        k_gathered_(plan_.k_gathered, ctx.tracker),
        v_gathered_(plan_.v_gathered, ctx.tracker),
        k_expanded_(plan_.k_expanded, ctx.tracker),
        v_expanded_(plan_.v_expanded, ctx.tracker),
        s_(plan_.scores, ctx.tracker),
        p_(plan_.scores, ctx.tracker),
        cublas_(ctx.tracker),
        gemms_(cuda::gemm_shape(spec, spec.dtype, kv_heads_seen(spec, expand)), ctx.tracker) {
    const auto kv = [&](int64_t dim) {
      return cuda::head_blocks(spec.layout, spec.batch, spec.kv_heads, spec.kv_len, dim,
                               spec.dtype);
    };
    k_blocks_ = kv(spec.head_dim);
    v_blocks_ = kv(spec.dv());
    softmax_.s = s_.data();
    softmax_.p = p_.data();
    softmax_.dtype = spec.dtype;
    softmax_.rows = spec.batch * spec.q_heads * spec.q_len;
    softmax_.q_len = spec.q_len;
    softmax_.kv_len = spec.kv_len;
    softmax_.mask = cuda::row_mask(spec.mask, spec.q_len, spec.kv_len);
  }

  void bind(std::span<const Io> sets) override {
    bound_q_ = cuda::bind_gemms(gemms_, sets, [this](const Io& io) { return operands(io); });
  }

  void launch(Stream& stream, const Io& io) override {
    const std::size_t set = cuda::bound_index(bound_q_, io);
    const cudaStream_t st = cuda::native_stream(stream);
    const cublasHandle_t handle = cublas_.bind(st);
    if (gathering()) {
      cuda::launch_gather_pages(io.k, k_gathered_.data(), st);
      cuda::launch_gather_pages(io.v, v_gathered_.data(), st);
    }
    if (expanding()) {
      cuda::launch_repeat_kv(k_in(io), k_expanded_.data(), k_blocks_, spec_.group_size(), st);
      cuda::launch_repeat_kv(v_in(io), v_expanded_.data(), v_blocks_, spec_.group_size(), st);
    }
    gemms_.scores(handle, static_cast<float>(spec_.softmax_scale()), set);
    cuda::launch_masked_softmax(softmax_, st);
    gemms_.output(handle, set);
  }

  int64_t workspace_bytes() const override {
    return k_gathered_.bytes() + v_gathered_.bytes() + k_expanded_.bytes() + v_expanded_.bytes() +
           s_.bytes() + p_.bytes() + cublas_.bytes() + gemms_.bytes();
  }

 private:
  bool expanding() const { return k_expanded_.data() != nullptr; }
  bool gathering() const { return k_gathered_.data() != nullptr; }
  // Contiguous K and V: the harness's, or gathered from their pages.
  const void* k_in(const Io& io) const { return gathering() ? k_gathered_.data() : io.k.data; }
  const void* v_in(const Io& io) const { return gathering() ? v_gathered_.data() : io.v.data; }

  cuda::GemmOperands operands(const Io& io) const {
    cuda::GemmOperands x;
    x.q = io.q.data;
    x.k = expanding() ? k_expanded_.data() : k_in(io);
    x.v = expanding() ? v_expanded_.data() : v_in(io);
    x.s = s_.data();
    x.p = p_.data();
    x.o = io.o.data;
    return x;
  }

  Spec spec_;
  NaivePlan plan_;
  DeviceBuffer k_gathered_, v_gathered_;  // empty unless the spec is paged
  DeviceBuffer k_expanded_, v_expanded_;  // empty unless expanding a GQA spec
  DeviceBuffer s_, p_;
  cuda::CublasSession cublas_;
  cuda::AttentionGemms gemms_;
  std::vector<const void*> bound_q_;  // Q of each bound set, to find a launch's set
  cuda::HeadBlocks k_blocks_, v_blocks_;
  cuda::SoftmaxArgs softmax_;
};

class NaiveProvider final : public Provider {
 public:
  explicit NaiveProvider(bool expand) : expand_(expand) {}

  ProviderTraits traits() const override {
    ProviderTraits t = expand_ ? cuda_naive_expand_traits() : cuda_naive_traits();
    t.library_version = cuda::cublas_version();
    return t;
  }
  Availability availability() const override { return cuda::device_availability(); }
  // 63: every index is 64-bit (kernels, strides, cuBLAS's _64 entry points past INT32_MAX).
  int index_bits() const override { return 63; }

  Support supports(const Spec& spec, const Device& device) const override {
    return cuda::supports_forward_on(spec, device, name());
  }
  int64_t workspace_estimate(const Spec& spec) const override {
    return plan_for(spec, expand_).total();
  }
  std::unique_ptr<Run> prepare(const Spec& spec, const Device&, const PrepareContext& ctx,
                               const Io&) override {
    return std::make_unique<NaiveRun>(spec, expand_, ctx);
  }

 private:
  bool expand_;
};

}  // namespace

std::unique_ptr<Provider> make_cuda_naive() {
  return std::make_unique<NaiveProvider>(false);
}
std::unique_ptr<Provider> make_cuda_naive_expand() {
  return std::make_unique<NaiveProvider>(true);
}

}  // namespace attnprof
