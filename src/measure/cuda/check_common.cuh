// What the device check's kernels (device_check.cu, device_check_gemm.cu) share: tensors read
// with their elements widened to double (exact for fp32, fp16, bf16 and fp8) through element
// strides of (batch, head, position), features contiguous; and the mask.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "attnprof/io.hpp"
#include "attnprof/spec.hpp"

namespace attnprof::cuda {

__host__ __device__ __forceinline__ double widen(float x) {
  return x;
}
__host__ __device__ __forceinline__ double widen(__half x) {
  return __half2float(x);
}
__host__ __device__ __forceinline__ double widen(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
// An element of an fp8 tensor (inputs.hpp): its bits, widened to the real value they hold (the
// format's value over the per-tensor scale, a power of two: exact).
template <int Format>
struct Fp8 {
  uint8_t bits;
};
using Fp8E4M3 = Fp8<0>;
using Fp8E5M2 = Fp8<1>;
template <int Format>
__host__ __device__ __forceinline__ double widen(Fp8<Format> x) {
  return scaled_fp8_value(x.bits, Format);
}

// A paged K or V (io.hpp) is read through its block table (PageMap).
template <class T>
struct View {
  const T* data = nullptr;
  int64_t sb = 0, sh = 0, ss = 0;
  PageMap pages{};  // table null: contiguous
  int64_t dim = 0;
  __device__ double at(int64_t b, int64_t h, int64_t pos, int64_t d) const {
    if (pages.table == nullptr) return widen(data[b * sb + h * sh + pos * ss + d]);
    return widen(data[pages.row(b, h, pos) * dim + d]);
  }
};

template <class T>
View<T> view_of(const TensorView& t) {
  View<T> v{static_cast<const T*>(t.data), t.stride_b(), t.stride_h(), t.stride_s()};
  if (t.paged()) {
    v.pages = t.page_map();
    v.dim = t.dim;
  }
  return v;
}

// The mask on the device: key j is visible to query i iff first(i) <= j <= last(i). A ragged
// batch's (Spec::seqlens) is the mask of each sequence at its own lengths: at(b).
struct DevMask {
  MaskKind kind = MaskKind::none;
  int64_t off = 0, window = 0, nk = 0;
  int64_t nq = 0;  // query rows: the spec's q_len, a ragged sequence's own after at(b)
  const int32_t* seq_q = nullptr;  // a ragged batch's lengths (io.hpp Io, device memory)
  const int32_t* seq_kv = nullptr;
  __device__ DevMask at(int64_t b) const {
    if (seq_q == nullptr) return *this;
    DevMask m = *this;
    m.seq_q = m.seq_kv = nullptr;
    m.nq = seq_q[b];
    m.nk = seq_kv[b];
    m.off = kind == MaskKind::causal_tl ? 0 : m.nk - m.nq;
    return m;
  }
  __device__ int64_t first(int64_t i) const {
    if (kind != MaskKind::window) return 0;
    const int64_t f = i + off - window + 1;
    return f > 0 ? f : 0;
  }
  __device__ int64_t last(int64_t i) const {
    if (kind == MaskKind::none) return nk - 1;
    const int64_t l = i + off;
    return l < nk - 1 ? l : nk - 1;
  }
};

// Sums and maxima over a warp's 32 lanes, every lane getting the result.
__device__ __forceinline__ double warp_sum(double x) {
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}
__device__ __forceinline__ double warp_max(double x) {
  for (int o = 16; o > 0; o /= 2) x = fmax(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}

// An error sum as the host judges it: a NaN anywhere is the worst error there is (inf).
__device__ __forceinline__ double nan_as_inf(double err) {
  return err <= INFINITY ? err : INFINITY;
}

// Lane's share of the comparison of one reference element with the provider's.
__device__ __forceinline__ void compare(double got, double ref, double& e2, double& r2,
                                        double& mx) {
  const double e = got - ref;
  e2 += e * e;
  r2 += ref * ref;
  mx = fmax(mx, fabs(e));
}

// |lse - lse_ref|: 0 where both are the same infinity (a row that sees no key), inf for a NaN.
__device__ __forceinline__ double lse_error(double got, double ref) {
  return nan_as_inf(isinf(got) && isinf(ref) ? 0.0 : fabs(got - ref));
}

// The score modifiers on the device: the softcap (0: none) of each scaled score and the sink
// logits (one per query head; null: none), Spec::softcap and Spec::sinks.
struct ScoreMods {
  double softcap = 0;
  const float* sink = nullptr;
  __device__ double cap(double s) const { return softcap > 0 ? softcap * tanh(s / softcap) : s; }
  __device__ double sink_of(int64_t h) const { return sink ? double(sink[h]) : -INFINITY; }
};
inline ScoreMods score_mods(const Spec& s, const Io& io) {
  return {s.softcap, s.sinks ? static_cast<const float*>(io.sink.data) : nullptr};
}

inline DevMask dev_mask(const Spec& s, const Io& io) {
  return {s.mask.kind,   s.mask.diagonal_offset(s.q_len, s.kv_len),
          s.mask.window, s.kv_len,
          s.q_len,       io.seq_q,
          io.seq_kv};
}

// A ragged batch's padding on the device: whether flat element e of a (batch, heads, len, dim)
// output in `bshd` or bhsd order lies past its sequence's query rows (seq_q null: never).
struct Padding {
  const int32_t* seq_q = nullptr;
  int64_t heads = 0, len = 0, dim = 1;
  bool bshd = false;
  __device__ bool operator()(int64_t e) const {
    if (seq_q == nullptr) return false;
    const int64_t r = e / dim;
    const int64_t pos = bshd ? (r / heads) % len : r % len;
    return pos >= seq_q[r / (heads * len)];
  }
};

}  // namespace attnprof::cuda
