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
// Logit softcap and attention sinks (Spec::softcap, Spec::sinks) are applied by the softmax kernel
// (the scores capped as they are read, the head's sink logit joining the row's max and sum).
//
// A ragged batch (Spec::seqlens) runs at its padded shape: the GEMMs compute the padding too, as
// an unfused implementation over padded tensors does, and the softmax gives each row its
// sequence's keys and padding rows none (so their O rows are 0).
//
// A paged KV cache (Spec::page_size) is first gathered into contiguous K and V (gather_pages.cu)
// inside the launch, as an unfused implementation over a paged cache must.
//
// fp8 inputs (no fp8 GEMM or softmax here) are what a framework without fp8 attention does with
// them: Q, K and V are widened to bf16 with their scales applied (convert.cu), attention runs in
// bf16, and O is rounded to fp8 with its scale, all inside the launch.
#include <fmt/format.h>

#include <span>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/library_versions.hpp"
#include "providers/cuda/attention_gemms.hpp"
#include "providers/cuda/convert.cuh"
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
  int64_t wide = 0;        // fp8 only: Q, K, V and O in bf16
  int64_t k_expanded = 0;  // expand only: K and V repeated to the query heads
  int64_t v_expanded = 0;
  int64_t scores = 0;  // S, and P again
  int64_t gemm = 0;    // bshd pointer arrays
  int64_t cublas = cuda::CublasSession::kWorkspaceBytes;

  int64_t total() const {
    return k_gathered + v_gathered + wide + k_expanded + v_expanded + 2 * scores + gemm + cublas;
  }
};

int64_t kv_heads_seen(const Spec& spec, bool expand) {
  return expand ? spec.q_heads : spec.kv_heads;
}

// The dtype the GEMMs and the softmax run in: the spec's, bf16 for fp8 inputs.
DType compute_dtype(const Spec& spec) {
  return is_fp8(spec.dtype) ? DType::bf16 : spec.dtype;
}

// Contiguous (B, H, len, dim) in the spec's layout.
cuda::Dims4 dims_of(const Spec& s, int64_t heads, int64_t len, int64_t dim) {
  return {s.batch, heads, len, dim};
}

NaivePlan plan_for(const Spec& spec, bool expand) {
  const auto stored = static_cast<int64_t>(dtype_bytes(spec.dtype));
  const auto esize = static_cast<int64_t>(dtype_bytes(compute_dtype(spec)));
  NaivePlan p;
  if (spec.paged()) {
    p.k_gathered = spec.batch * spec.kv_heads * spec.kv_len * spec.head_dim * stored;
    p.v_gathered = spec.batch * spec.kv_heads * spec.kv_len * spec.dv() * stored;
  }
  if (is_fp8(spec.dtype)) {
    p.wide = (dims_of(spec, spec.q_heads, spec.q_len, spec.head_dim).elems() +
              dims_of(spec, spec.kv_heads, spec.kv_len, spec.head_dim).elems() +
              dims_of(spec, spec.kv_heads, spec.kv_len, spec.dv()).elems() +
              dims_of(spec, spec.q_heads, spec.q_len, spec.dv()).elems()) *
             esize;
  }
  if (expand && spec.group_size() > 1) {
    p.k_expanded = spec.batch * spec.q_heads * spec.kv_len * spec.head_dim * esize;
    p.v_expanded = spec.batch * spec.q_heads * spec.kv_len * spec.dv() * esize;
  }
  p.scores = spec.batch * spec.q_heads * spec.q_len * spec.kv_len * esize;
  p.gemm = cuda::AttentionGemms::bytes_for(
      cuda::gemm_shape(spec, compute_dtype(spec), kv_heads_seen(spec, expand)));
  return p;
}

class NaiveRun final : public Run {
 public:
  NaiveRun(const Spec& spec, bool expand, const PrepareContext& ctx)
      : spec_(spec),
        plan_(plan_for(spec, expand)),
        k_gathered_(plan_.k_gathered, ctx.tracker),
        v_gathered_(plan_.v_gathered, ctx.tracker),
        wide_(plan_.wide, ctx.tracker),
        k_expanded_(plan_.k_expanded, ctx.tracker),
        v_expanded_(plan_.v_expanded, ctx.tracker),
        s_(plan_.scores, ctx.tracker),
        p_(plan_.scores, ctx.tracker),
        cublas_(ctx.tracker),
        gemms_(cuda::gemm_shape(spec, compute_dtype(spec), kv_heads_seen(spec, expand)),
               ctx.tracker) {
    const auto kv = [&](int64_t dim) {
      return cuda::head_blocks(spec.layout, spec.batch, spec.kv_heads, spec.kv_len, dim,
                               compute_dtype(spec));
    };
    if (widening()) {
      // Q, K, V and O in bf16, one after the other in wide_.
      auto* at = static_cast<unsigned char*>(wide_.data());
      const int64_t esize = 2;
      for (auto [slot, n] :
           {std::pair{&q_wide_, dims_of(spec, spec.q_heads, spec.q_len, spec.head_dim)},
            std::pair{&k_wide_, dims_of(spec, spec.kv_heads, spec.kv_len, spec.head_dim)},
            std::pair{&v_wide_, dims_of(spec, spec.kv_heads, spec.kv_len, spec.dv())},
            std::pair{&o_wide_, dims_of(spec, spec.q_heads, spec.q_len, spec.dv())}}) {
        *slot = at;
        at += n.elems() * esize;
      }
    }
    k_blocks_ = kv(spec.head_dim);
    v_blocks_ = kv(spec.dv());
    softmax_.s = s_.data();
    softmax_.p = p_.data();
    softmax_.dtype = compute_dtype(spec);
    softmax_.rows = spec.batch * spec.q_heads * spec.q_len;
    softmax_.q_len = spec.q_len;
    softmax_.kv_len = spec.kv_len;
    softmax_.mask = cuda::row_mask(spec.mask, spec.q_len, spec.kv_len);
    softmax_.softcap = static_cast<float>(spec.softcap);
    softmax_.q_heads = spec.q_heads;
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
    if (widening()) widen(io, st);
    if (expanding()) {
      cuda::launch_repeat_kv(k_in(io), k_expanded_.data(), k_blocks_, spec_.group_size(), st);
      cuda::launch_repeat_kv(v_in(io), v_expanded_.data(), v_blocks_, spec_.group_size(), st);
    }
    gemms_.scores(handle, static_cast<float>(spec_.softmax_scale()), set);
    softmax_.sink = io.sink.present() ? io.sink.as<const float>() : nullptr;  // this set's copy
    if (io.seq_q != nullptr)  // a ragged batch: each row masked at its sequence's lengths
      softmax_.mask = cuda::ragged_row_mask(spec_.mask, spec_.q_heads, spec_.q_len, spec_.kv_len,
                                            io.seq_q, io.seq_kv);
    cuda::launch_masked_softmax(softmax_, st);
    gemms_.output(handle, set);
    if (widening()) {
      const Spec& s = spec_;
      cuda::launch_convert({o_wide_, DType::bf16, s.layout}, {io.o.data, s.dtype, s.layout},
                           dims_of(s, s.q_heads, s.q_len, s.dv()), fp8_scale(), st);
    }
  }

  int64_t workspace_bytes() const override {
    return k_gathered_.bytes() + v_gathered_.bytes() + wide_.bytes() + k_expanded_.bytes() +
           v_expanded_.bytes() + s_.bytes() + p_.bytes() + cublas_.bytes() + gemms_.bytes();
  }

 private:
  bool expanding() const { return k_expanded_.data() != nullptr; }
  bool gathering() const { return k_gathered_.data() != nullptr; }
  bool widening() const { return wide_.data() != nullptr; }
  float fp8_scale() const { return fp8_tensor_scale(fp8_format(spec_.dtype)); }
  // Contiguous K and V in the stored dtype: the harness's, or gathered from their pages.
  const void* k_stored(const Io& io) const { return gathering() ? k_gathered_.data() : io.k.data; }
  const void* v_stored(const Io& io) const { return gathering() ? v_gathered_.data() : io.v.data; }
  // Contiguous K and V in the compute dtype: the stored ones, or their bf16 widening.
  const void* k_in(const Io& io) const { return widening() ? k_wide_ : k_stored(io); }
  const void* v_in(const Io& io) const { return widening() ? v_wide_ : v_stored(io); }

  // fp8: Q, K, V to bf16 with their scales applied (exact: every fp8 value times a power of two
  // is a bf16 value).
  void widen(const Io& io, cudaStream_t st) {
    const Spec& s = spec_;
    const float descale = 1.0f / fp8_scale();
    cuda::launch_convert({io.q.data, s.dtype, s.layout}, {q_wide_, DType::bf16, s.layout},
                         dims_of(s, s.q_heads, s.q_len, s.head_dim), descale, st);
    cuda::launch_convert({const_cast<void*>(k_stored(io)), s.dtype, s.layout},
                         {k_wide_, DType::bf16, s.layout},
                         dims_of(s, s.kv_heads, s.kv_len, s.head_dim), descale, st);
    cuda::launch_convert({const_cast<void*>(v_stored(io)), s.dtype, s.layout},
                         {v_wide_, DType::bf16, s.layout}, dims_of(s, s.kv_heads, s.kv_len, s.dv()),
                         descale, st);
  }

  cuda::GemmOperands operands(const Io& io) const {
    cuda::GemmOperands x;
    x.q = widening() ? q_wide_ : io.q.data;
    x.k = expanding() ? k_expanded_.data() : k_in(io);
    x.v = expanding() ? v_expanded_.data() : v_in(io);
    x.s = s_.data();
    x.p = p_.data();
    x.o = widening() ? o_wide_ : io.o.data;
    return x;
  }

  Spec spec_;
  NaivePlan plan_;
  DeviceBuffer k_gathered_, v_gathered_;  // empty unless the spec is paged
  DeviceBuffer wide_;                     // empty unless the inputs are fp8
  void *q_wide_ = nullptr, *k_wide_ = nullptr, *v_wide_ = nullptr, *o_wide_ = nullptr;
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
  int64_t workspace_estimate(const Spec& spec, const Settings&) const override {
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
