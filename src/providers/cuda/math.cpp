// cuda.math: the recipe of PyTorch's math SDPA backend (_scaled_dot_product_attention_math in
// aten/src/ATen/native/transformers/attention.cpp, read for its structure), one kernel per step:
//   1. Q, K, V upcast to fp32 (convert.cu; skipped for fp32 bhsd inputs, where PyTorch's
//      .to(float) is a no-op; our fp32 copies are always bhsd)
//   2. Q' = Q * sqrt(scale)                      (PyTorch scales both operands, for stability)
//   3. K, V repeated to the query heads for GQA  (repeat_kv.cu: repeat_interleave, enable_gqa)
//   4. K' = K * sqrt(scale)
//   5. S = Q' K'^T, fp32 cuBLAS, no TF32         (allow_tf32 is off by default in PyTorch)
//   6. S += mask, -inf on hidden keys            (mask_scores.cu; skipped for no mask)
//   7. P = softmax(S), fp32, a row of only -inf gives 0 (softmax.cu, as _safe_softmax)
//   8. O = P V, fp32 cuBLAS
//   9. O cast to the dtype and layout, and P cast to the dtype (the attention weights PyTorch's
//      math function also returns; both casts skipped where PyTorch's are no-ops)
// Differences, all on the cheap side: the mask is computed, not read from a materialized
// (Nq x Nk) tensor; _safe_softmax's extra eq/all/where passes are folded into step 7; the dtype
// copy of P reuses S's buffer (S is dead after step 7), so S, P and that copy peak at 8 bytes
// per score, near the ~9 PyTorch's caching allocator shows (ANCHORS.md: 456 MB at B1 H12 N2048).
#include <cmath>
#include <span>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/library_versions.hpp"
#include "providers/cuda/attention_gemms.hpp"
#include "providers/cuda/convert.cuh"
#include "providers/cuda/cublas_session.hpp"
#include "providers/cuda/mask_scores.cuh"
#include "providers/cuda/provider_common.hpp"
#include "providers/cuda/repeat_kv.cuh"
#include "providers/cuda/softmax.cuh"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

using cuda::DeviceBuffer;
constexpr int64_t kF32 = 4;  // bytes of every temporary

// fp32 copies are made unless the inputs already are fp32 in bhsd (PyTorch's layout).
bool upcasts(const Spec& spec) {
  return !(spec.dtype == DType::fp32 && spec.layout == Layout::bhsd);
}

// Every buffer a run allocates besides the harness's tensors, in bytes; workspace_estimate()
// and the run use the same numbers.
struct MathPlan {
  int64_t q32 = 0, k32 = 0, v32 = 0;  // step 1
  int64_t q_scaled = 0;               // step 2
  int64_t k_rep = 0, v_rep = 0;       // step 3 (GQA only)
  int64_t k_scaled = 0;               // step 4
  int64_t scores = 0;                 // S, and P again
  int64_t o32 = 0;                    // step 8, unless O is written directly
  int64_t cublas = cuda::CublasSession::kWorkspaceBytes;

  int64_t total() const {
    return q32 + k32 + v32 + q_scaled + k_rep + v_rep + k_scaled + 2 * scores + o32 + cublas;
  }
};

MathPlan plan_for(const Spec& s) {
  MathPlan p;
  if (upcasts(s)) {
    p.q32 = s.q_elems() * kF32;
    p.k32 = s.k_elems() * kF32;
    p.v32 = s.v_elems() * kF32;
    p.o32 = s.o_elems() * kF32;
  }
  p.q_scaled = s.q_elems() * kF32;
  if (s.group_size() > 1) {
    p.k_rep = s.batch * s.q_heads * s.kv_len * s.head_dim * kF32;
    p.v_rep = s.batch * s.q_heads * s.kv_len * s.dv() * kF32;
  }
  p.k_scaled = s.batch * s.q_heads * s.kv_len * s.head_dim * kF32;
  p.scores = s.batch * s.q_heads * s.q_len * s.kv_len * kF32;
  return p;
}

class MathRun final : public Run {
 public:
  MathRun(const Spec& spec, const PrepareContext& ctx)
      : spec_(spec),
        plan_(plan_for(spec)),
        q32_(plan_.q32, ctx.tracker),
        k32_(plan_.k32, ctx.tracker),
        v32_(plan_.v32, ctx.tracker),
        q_scaled_(plan_.q_scaled, ctx.tracker),
        k_rep_(plan_.k_rep, ctx.tracker),
        v_rep_(plan_.v_rep, ctx.tracker),
        k_scaled_(plan_.k_scaled, ctx.tracker),
        s_(plan_.scores, ctx.tracker),
        p_(plan_.scores, ctx.tracker),
        o32_(plan_.o32, ctx.tracker),
        cublas_(ctx.tracker),
        gemms_(shape(), ctx.tracker) {
    softmax_.s = s_.data();
    softmax_.p = p_.data();
    softmax_.dtype = DType::fp32;
    softmax_.rows = spec.batch * spec.q_heads * spec.q_len;
    softmax_.q_len = spec.q_len;
    softmax_.kv_len = spec.kv_len;
    softmax_.mask = {};  // step 6 already put -inf on every hidden key
  }

  void bind(std::span<const Io> sets) override {
    bound_q_ = cuda::bind_gemms(gemms_, sets, [this](const Io& io) { return operands(io); });
  }

  void launch(Stream& stream, const Io& io) override {
    const std::size_t set = cuda::bound_index(bound_q_, io);
    const cudaStream_t st = cuda::native_stream(stream);
    const cublasHandle_t handle = cublas_.bind(st);
    const Spec& s = spec_;
    const cuda::Dims4 q_dims{s.batch, s.q_heads, s.q_len, s.head_dim};
    const cuda::Dims4 k_dims{s.batch, s.kv_heads, s.kv_len, s.head_dim};
    const cuda::Dims4 v_dims{s.batch, s.kv_heads, s.kv_len, s.dv()};
    const cuda::Dims4 k_rep_dims{s.batch, s.q_heads, s.kv_len, s.head_dim};
    const cuda::Dims4 o_dims{s.batch, s.q_heads, s.q_len, s.dv()};
    const cuda::Dims4 p_dims{s.batch, s.q_heads, s.q_len, s.kv_len};
    const auto in = [&](const void* p) {
      return cuda::TensorRef{const_cast<void*>(p), s.dtype, s.layout};
    };
    const auto f32 = [](const void* p) {
      return cuda::TensorRef{const_cast<void*>(p), DType::fp32, Layout::bhsd};
    };
    const double scale = s.softmax_scale();
    const auto root = static_cast<float>(std::sqrt(std::abs(scale)));

    if (upcasts(s)) {  // 1
      cuda::launch_convert(in(io.q.data), f32(q32_.data()), q_dims, 1.f, st);
      cuda::launch_convert(in(io.k.data), f32(k32_.data()), k_dims, 1.f, st);
      cuda::launch_convert(in(io.v.data), f32(v32_.data()), v_dims, 1.f, st);
    }
    cuda::launch_convert(f32(q_acc(io)), f32(q_scaled_.data()), q_dims,  // 2
                         scale < 0 ? -root : root, st);
    if (s.group_size() > 1) {  // 3
      const auto blocks = [&](int64_t dim) {
        return cuda::head_blocks(Layout::bhsd, s.batch, s.kv_heads, s.kv_len, dim, DType::fp32);
      };
      cuda::launch_repeat_kv(k_acc(io), k_rep_.data(), blocks(s.head_dim), s.group_size(), st);
      cuda::launch_repeat_kv(v_acc(io), v_rep_.data(), blocks(s.dv()), s.group_size(), st);
    }
    cuda::launch_convert(f32(k_expanded(io)), f32(k_scaled_.data()), k_rep_dims, root, st);  // 4
    gemms_.scores(handle, 1.f, set);                                                         // 5
    if (s.mask.kind != MaskKind::none) {                                                     // 6
      cuda::launch_mask_scores(s_.as<float>(), softmax_.rows, s.q_len, s.kv_len,
                               cuda::row_mask(s.mask, s.q_len, s.kv_len), st);
    }
    cuda::launch_masked_softmax(softmax_, st);  // 7
    gemms_.output(handle, set);                 // 8
    if (upcasts(s))                             // 9
      cuda::launch_convert(f32(o32_.data()), in(io.o.data), o_dims, 1.f, st);
    if (s.dtype != DType::fp32) {
      cuda::launch_convert(f32(p_.data()), {s_.data(), s.dtype, Layout::bhsd}, p_dims, 1.f, st);
    }
  }

  int64_t workspace_bytes() const override {
    int64_t sum = cublas_.bytes() + gemms_.bytes();
    for (const DeviceBuffer* b :
         {&q32_, &k32_, &v32_, &q_scaled_, &k_rep_, &v_rep_, &k_scaled_, &s_, &p_, &o32_})
      sum += b->bytes();
    return sum;
  }

 private:
  // The fp32 inputs of steps 2-4 and where step 8 writes.
  const void* q_acc(const Io& io) const { return upcasts(spec_) ? q32_.data() : io.q.data; }
  const void* k_acc(const Io& io) const { return upcasts(spec_) ? k32_.data() : io.k.data; }
  const void* v_acc(const Io& io) const { return upcasts(spec_) ? v32_.data() : io.v.data; }
  const void* k_expanded(const Io& io) const {
    return spec_.group_size() > 1 ? k_rep_.data() : k_acc(io);
  }
  const void* v_expanded(const Io& io) const {
    return spec_.group_size() > 1 ? v_rep_.data() : v_acc(io);
  }
  void* o_acc(const Io& io) const { return upcasts(spec_) ? o32_.data() : io.o.data; }

  cuda::GemmShape shape() const {
    cuda::GemmShape g = cuda::gemm_shape(spec_, DType::fp32, spec_.q_heads);
    g.layout = Layout::bhsd;  // the fp32 copies (and O itself when not upcasting) are bhsd
    return g;
  }
  cuda::GemmOperands operands(const Io& io) const {
    cuda::GemmOperands x;
    x.q = q_scaled_.data();
    x.k = k_scaled_.data();
    x.v = v_expanded(io);
    x.s = s_.data();
    x.p = p_.data();
    x.o = o_acc(io);
    return x;
  }

  Spec spec_;
  MathPlan plan_;
  DeviceBuffer q32_, k32_, v32_, q_scaled_, k_rep_, v_rep_, k_scaled_, s_, p_, o32_;
  cuda::CublasSession cublas_;
  cuda::AttentionGemms gemms_;
  std::vector<const void*> bound_q_;  // Q of each bound set, to find a launch's set
  cuda::SoftmaxArgs softmax_;
};

class MathProvider final : public Provider {
 public:
  ProviderTraits traits() const override {
    ProviderTraits t = cuda_math_traits();
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
    return plan_for(spec).total();
  }
  std::unique_ptr<Run> prepare(const Spec& spec, const Device&, const PrepareContext& ctx,
                               const Io&) override {
    return std::make_unique<MathRun>(spec, ctx);
  }
};

}  // namespace

std::unique_ptr<Provider> make_cuda_math() {
  return std::make_unique<MathProvider>();
}

}  // namespace attnprof
