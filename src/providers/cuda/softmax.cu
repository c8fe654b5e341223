// The masked row softmax (softmax.cuh). Host reference: reference_row() in
// src/core/reference.cpp, applied by verify_outputs() to every run of cuda.naive, cuda.naive.expand
// and cuda.math.
//
// Memory-bound: each score is read once (only the 16-byte packs that hold a visible key) and each
// probability written once, with 16-byte accesses coalesced across the warp. Two kernels
// (softmax_plan() picks; SoftmaxPlan in softmax.cuh describes them):
//   * warp kernel, rows of up to kWarpRowPacks packs: a power-of-two group of lanes per row (up
//     to a warp), several rows per block, the row in fp32 registers; max and sum by shuffles;
//     one __expf per key (its value is kept and scaled).
//   * block kernel, longer rows (and rows that are not whole aligned packs, with scalar access):
//     a block per row, 32 keys per thread cached raw in registers (32K keys at 1024 threads;
//     16 scalar keys, 16K, when not whole packs; longer rows re-read the rest); per-thread (max,
//     sum) merged in one block reduction. A cached key's __expf(s - thread max) is kept (fp32
//     for fp32 rows, fp16 pairs for 16-bit rows) and scaled by expf(thread max - row max) / sum:
//     one exponential per key (re-read keys take one more for their probability).
// Every written probability is exp(s - max) * (1 / sum) rounded to the dtype, 0 outside the
// visible keys and on rows with no visible finite score. With a softcap each score is capped as
// it is read (cap * tanh(s / cap)); with sinks the row's head's sink logit joins the max and the
// sum (no probability is written for it).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/softmax.cuh"

namespace attnprof::cuda {

RowMask ragged_row_mask(const Mask& mask, int64_t q_heads, int64_t q_len, int64_t kv_len,
                        const int32_t* seq_q, const int32_t* seq_kv) {
  RowMask r = row_mask(mask, q_len, kv_len);
  r.seq_q = seq_q;
  r.seq_kv = seq_kv;
  r.rows_per_seq = q_heads * q_len;
  r.bottom_right = r.causal && mask.kind != MaskKind::causal_tl;
  return r;
}

RowMask row_mask(const Mask& mask, int64_t q_len, int64_t kv_len) {
  RowMask r;
  r.causal = mask.kind != MaskKind::none;
  r.offset = r.causal ? mask.diagonal_offset(q_len, kv_len) : 0;
  r.window = mask.kind == MaskKind::window ? mask.window : 0;
  return r;
}

namespace {

constexpr int kMaxThreads = 1024;
constexpr int kSmallBlock = 256;
constexpr int kSmallBlocksPerSm = 5;
// Keys per thread cached by the block kernel: 32 in 16-byte packs (1024 threads hold a row of 32K
// keys), 16 as scalars when the rows are not whole aligned packs.
constexpr int kBlockKeys = 32;
constexpr int kBlockScalars = 16;
constexpr int64_t kMaxKvLen = 1 << 30;  // keeps key and pack indices in int

__device__ __forceinline__ float to_float(float x) {
  return x;
}
__device__ __forceinline__ float to_float(__half x) {
  return __half2float(x);
}
__device__ __forceinline__ float to_float(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
__device__ __forceinline__ void store(float& d, float x) {
  d = x;
}
__device__ __forceinline__ void store(__half& d, float x) {
  d = __float2half_rn(x);
}
__device__ __forceinline__ void store(__nv_bfloat16& d, float x) {
  d = __float2bfloat16_rn(x);
}
template <class T>
__device__ __forceinline__ T neg_inf();
template <>
__device__ __forceinline__ float neg_inf<float>() {
  return -INFINITY;
}
template <>
__device__ __forceinline__ __half neg_inf<__half>() {
  return __ushort_as_half(static_cast<unsigned short>(0xfc00u));
}
template <>
__device__ __forceinline__ __nv_bfloat16 neg_inf<__nv_bfloat16>() {
  return __ushort_as_bfloat16(static_cast<unsigned short>(0xff80u));
}

// A score after the softcap (cap 0: none); -inf (a hidden key) stays -inf.
__device__ __forceinline__ float capped(float x, float cap) {
  return cap > 0.f && x != -INFINITY ? cap * tanhf(x / cap) : x;
}

// The score modifiers a kernel applies (SoftmaxArgs): the softcap and the sink logits.
struct Mods {
  float cap;
  const float* sink;
  int64_t q_heads;
  // The sink logit of `row` (of q_len rows per head), -inf when there is none.
  __device__ __forceinline__ float sink_of(int64_t row, int64_t q_len) const {
    return sink ? sink[(row / q_len) % q_heads] : -INFINITY;
  }
};

// N consecutive elements moved as one load or store (16 bytes when N * sizeof(T) == 16).
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// A row's visible keys [first, last] (empty: first > last) and the packs of N keys that hold
// at least one of them, [pb, pe) (empty: 0, 0).
template <int N>
struct Visible {
  int first = 0, last = -1, pb = 0, pe = 0;

  Visible() = default;  // no visible key
  __device__ __forceinline__ Visible(const RowMask& mask, int64_t row, int64_t rows, int64_t q_len,
                                     int kv_len) {
    // row % q_len, in 32 bits when the row index fits (a 64-bit remainder is a long call).
    const int64_t i =
        rows <= int64_t{0xffffffff}
            ? static_cast<int64_t>(static_cast<uint32_t>(row) % static_cast<uint32_t>(q_len))
            : row % q_len;
    RowMask m = mask;
    int64_t nk = kv_len;
    if (mask.seq_q != nullptr) {  // a ragged batch: the row's sequence's lengths
      const int64_t b = row / mask.rows_per_seq, nq = mask.seq_q[b];
      nk = mask.seq_kv[b];
      if (i >= nq) return;  // padding: no key
      if (mask.bottom_right) m.offset = nk - nq;
    }
    const int64_t f = m.first(i), l = m.last(i, nk);
    if (f <= l && f < nk && l >= 0) {  // f >= 0 and l < nk always
      first = static_cast<int>(f);
      last = static_cast<int>(l);
      pb = first / N;
      pe = last / N + 1;
    }
  }
  // Key j visible (given that its pack is in [pb, pe), so first <= last).
  __device__ __forceinline__ bool operator()(int j) const {
    return static_cast<unsigned>(j - first) <= static_cast<unsigned>(last - first);
  }
};

// Pack k of the row with every hidden key (and every key of a pack outside [pb, pe), which is
// not read) as -inf.
template <class T, int N>
__device__ __forceinline__ Pack<T, N> load_masked(const Pack<T, N>* src, int k,
                                                  const Visible<N>& vis) {
  Pack<T, N> x;
  if (k >= vis.pb && k < vis.pe) {
    x = src[k];
#pragma unroll
    for (int e = 0; e < N; ++e)
      if (!vis(k * N + e)) x.v[e] = neg_inf<T>();
  } else {
#pragma unroll
    for (int e = 0; e < N; ++e) x.v[e] = neg_inf<T>();
  }
  return x;
}

template <class T, int N>
__device__ __forceinline__ float pack_max(float m, const Pack<T, N>& x, float cap) {
#pragma unroll
  for (int e = 0; e < N; ++e) m = fmaxf(m, capped(to_float(x.v[e]), cap));
  return m;
}

// Sum of exp(x - m) over the pack; m finite. -inf keys add 0.
template <class T, int N>
__device__ __forceinline__ float pack_sum(float l, const Pack<T, N>& x, float m, float cap) {
#pragma unroll
  for (int e = 0; e < N; ++e) l += __expf(capped(to_float(x.v[e]), cap) - m);
  return l;
}

// exp(x - m) * inv_sum in the dtype; m finite (0 for a row with no finite key, inv_sum 0 then).
template <class T, int N>
__device__ __forceinline__ Pack<T, N> normalize(const Pack<T, N>& x, float m, float inv_sum,
                                                float cap) {
  Pack<T, N> out;
#pragma unroll
  for (int e = 0; e < N; ++e) store(out.v[e], expf(capped(to_float(x.v[e]), cap) - m) * inv_sum);
  return out;
}

// Running maximum and sum of exp(x - m) of a set of scores; empty: m = -inf, l = 0.
struct MaxSum {
  float m;
  float l;
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.f};
  return {m, a.l * expf(a.m - m) + b.l * expf(b.m - m)};
}

// (max, sum) of the whole block, returned to every thread. blockDim.x is a multiple of 32.
__device__ MaxSum block_reduce(MaxSum v, MaxSum* smem) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const MaxSum w{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.l, o)};
    v = merge(v, w);
  }
  const int warps = static_cast<int>(blockDim.x) / 32;
  if (warps == 1) return v;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? smem[lane] : MaxSum{-INFINITY, 0.f};
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const MaxSum w{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.l, o)};
      v = merge(v, w);
    }
    if (lane == 0) smem[0] = v;
  }
  __syncthreads();
  const MaxSum r = smem[0];
  __syncthreads();  // smem is written again by the next row
  return r;
}

// Warp kernel: groups of 2^group_log2 lanes (<= 32; VPT == 1 unless a whole warp) per row, pack
// k of the row at lane k % group, slot k / group. Requires kv_len % N == 0, 16-byte aligned s,
// p, and kv_len <= group * VPT * N.
template <class T, int N, int VPT>
__global__ void __launch_bounds__(kWarpBlockThreads)
    softmax_warp_kernel(const T* __restrict__ s, T* __restrict__ p, int64_t rows, int64_t q_len,
                        int kv_len, RowMask mask, int group_log2, Mods mods) {
  using P = Pack<T, N>;
  const int group = 1 << group_log2;
  const int lane = static_cast<int>(threadIdx.x) & (group - 1);
  const int64_t rows_per_block = static_cast<int64_t>(blockDim.x) >> group_log2;
  const int packs = kv_len / N;
  // The loop bound depends on the block only, so every lane of a warp takes part in the
  // shuffles; lanes past the last row compute on -inf and store nothing.
  for (int64_t base = blockIdx.x * rows_per_block; base < rows;
       base += static_cast<int64_t>(gridDim.x) * rows_per_block) {
    const int64_t row = base + (static_cast<int>(threadIdx.x) >> group_log2);
    const bool valid = row < rows;
    Visible<N> vis = valid ? Visible<N>(mask, row, rows, q_len, kv_len) : Visible<N>{};
    const P* src = reinterpret_cast<const P*>(s + row * kv_len);
    P* dst = reinterpret_cast<P*>(p + row * kv_len);

    float x[VPT][N];
#pragma unroll
    for (int c = 0; c < VPT; ++c) {
      const P v = load_masked(src, lane + c * group, vis);
#pragma unroll
      for (int e = 0; e < N; ++e) x[c][e] = capped(to_float(v.v[e]), mods.cap);
    }
    float m = -INFINITY;
#pragma unroll
    for (int c = 0; c < VPT; ++c)
#pragma unroll
      for (int e = 0; e < N; ++e) m = fmaxf(m, x[c][e]);
    for (int o = group >> 1; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    const float sink = valid ? mods.sink_of(row, q_len) : -INFINITY;
    m = fmaxf(m, sink);
    if (m == -INFINITY) m = 0.f;  // no finite visible score: every x is -inf, every exp 0
    float l = 0.f;
#pragma unroll
    for (int c = 0; c < VPT; ++c)
#pragma unroll
      for (int e = 0; e < N; ++e) {
        x[c][e] = __expf(x[c][e] - m);
        l += x[c][e];
      }
    for (int o = group >> 1; o > 0; o >>= 1) l += __shfl_xor_sync(0xffffffffu, l, o);
    if (sink != -INFINITY) l += __expf(sink - m);  // the sink's share: no probability written
    const float inv_sum = l > 0.f ? 1.f / l : 0.f;
    if (!valid) continue;
#pragma unroll
    for (int c = 0; c < VPT; ++c) {
      const int k = lane + c * group;
      if (k < packs) {
        P out;
#pragma unroll
        for (int e = 0; e < N; ++e) store(out.v[e], x[c][e] * inv_sum);
        dst[k] = out;
      }
    }
  }
}

// Block kernel: one block per row (grid-stride over rows), pack k at thread k % blockDim, the
// first K * blockDim packs cached. Requires kv_len % N == 0 and, for N > 1, 16-byte aligned s, p.
// It waits on memory, so rows in flight per SM matter: for 16-bit rows, blocks of up to
// kSmallBlock threads (rows up to 8K keys) are compiled for kSmallBlocksPerSm of them per SM (48
// registers); larger blocks and fp32 rows for one block of up to 1024 threads (64 registers).
// On the H200 (B2 H16 N8192 D128 bf16) that took the softmax from 3.25 to 2.86 ms by Nsight
// Compute; keeping fp16 pairs in the large kernel too made N 16384 3% slower.
template <class T, int N, int K, int MaxThreads, int MinBlocks>
__global__ void __launch_bounds__(MaxThreads, MinBlocks)
    softmax_block_kernel(const T* __restrict__ s, T* __restrict__ p, int64_t rows, int64_t q_len,
                         int kv_len, RowMask mask, Mods mods) {
  using P = Pack<T, N>;
  __shared__ MaxSum smem[32];
  const int packs = kv_len / N;
  const int stride = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
  const int uncached = t + K * stride;  // first pack of this thread not cached

  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const Visible<N> vis(mask, row, rows, q_len, kv_len);
    const P* src = reinterpret_cast<const P*>(s + row * kv_len);
    P* dst = reinterpret_cast<P*>(p + row * kv_len);

    P cache[K];
#pragma unroll
    for (int c = 0; c < K; ++c) cache[c] = load_masked(src, t + c * stride, vis);
    float m = -INFINITY;
#pragma unroll
    for (int c = 0; c < K; ++c) m = pack_max(m, cache[c], mods.cap);
    for (int k = uncached; k < vis.pe; k += stride)
      m = pack_max(m, load_masked(src, k, vis), mods.cap);
    // A thread with no finite key (all -inf: masked or outside the row) exponentiates against
    // 0: every exp is 0 and so is its sum; exp(-inf - m) would be NaN.
    const float mt = m == -INFINITY ? 0.f : m;
    // exp(x - mt) of each cached key (one exponential per key), kept until the row's max and
    // sum are known: as fp16 pairs in the small-block kernel of 16-bit rows (values in [0, 1];
    // half the registers, which lets 5 blocks share an SM; one more rounding, 2^-12 relative,
    // below the output's own), else in fp32 (packing costs time where it buys no occupancy).
    constexpr bool kHalf = sizeof(T) == 2 && N % 2 == 0 && MaxThreads <= kSmallBlock;
    constexpr int kSlots = kHalf ? N / 2 : N;
    using Kept = std::conditional_t<kHalf, __half2, float>;
    Kept kept[K][kSlots];
    float l = 0.f;
#pragma unroll
    for (int c = 0; c < K; ++c)
#pragma unroll
      for (int i = 0; i < kSlots; ++i) {
        if constexpr (kHalf) {
          const float e0 = __expf(capped(to_float(cache[c].v[2 * i]), mods.cap) - mt);
          const float e1 = __expf(capped(to_float(cache[c].v[2 * i + 1]), mods.cap) - mt);
          l += e0 + e1;
          kept[c][i] = __floats2half2_rn(e0, e1);
        } else {
          const float e0 = __expf(capped(to_float(cache[c].v[i]), mods.cap) - mt);
          l += e0;
          kept[c][i] = e0;
        }
      }
    if (m != -INFINITY) {
      for (int k = uncached; k < vis.pe; k += stride)
        l = pack_sum(l, load_masked(src, k, vis), m, mods.cap);
    }

    MaxSum r = block_reduce({m, l}, smem);
    // The sink joins the row's maximum and sum, with no probability written for it.
    if (const float sink = mods.sink_of(row, q_len); sink != -INFINITY) r = merge(r, {sink, 1.f});
    const float inv_sum = r.l > 0.f ? 1.f / r.l : 0.f;  // 0: no visible finite score
    const float mr = r.m == -INFINITY ? 0.f : r.m;      // then every key is -inf: exp 0
    // exp(x - mr) / sum = exp(x - m) * (exp(m - mr) / sum); 0 for a thread with no finite key.
    const float scale = m == -INFINITY ? 0.f : expf(m - mr) * inv_sum;

#pragma unroll
    for (int c = 0; c < K; ++c) {
      const int k = t + c * stride;
      if (k < packs) {
        P out;
#pragma unroll
        for (int i = 0; i < kSlots; ++i) {
          if constexpr (kHalf) {
            const float2 e = __half22float2(kept[c][i]);
            store(out.v[2 * i], e.x * scale);
            store(out.v[2 * i + 1], e.y * scale);
          } else {
            store(out.v[i], kept[c][i] * scale);
          }
        }
        dst[k] = out;
      }
    }
    for (int k = uncached; k < packs; k += stride)
      dst[k] = normalize(load_masked(src, k, vis), mr, inv_sum, mods.cap);
  }
}

Mods mods_of(const SoftmaxArgs& a) {
  return {a.softcap, a.sink, a.q_heads};
}

// Rows beyond the grid limit are covered by the kernels' grid-stride loops.
unsigned grid_for(int64_t blocks) {
  return static_cast<unsigned>(std::min<int64_t>(blocks, 0x7fffffff));
}

template <class T, int N, int VPT>
void launch_warp(const SoftmaxArgs& a, const SoftmaxPlan& plan, cudaStream_t stream) {
  int group_log2 = 0;
  while ((1 << group_log2) < plan.row_threads) ++group_log2;
  softmax_warp_kernel<T, N, VPT>
      <<<grid_for((a.rows + plan.rows_per_block - 1) / plan.rows_per_block), plan.block_threads, 0,
         stream>>>(static_cast<const T*>(a.s), static_cast<T*>(a.p), a.rows, a.q_len,
                   static_cast<int>(a.kv_len), a.mask, group_log2, mods_of(a));
}

template <class T, int N, int K>
void launch_block(const SoftmaxArgs& a, const SoftmaxPlan& plan, cudaStream_t stream) {
  const auto* s = static_cast<const T*>(a.s);
  auto* p = static_cast<T*>(a.p);
  const auto kv_len = static_cast<int>(a.kv_len);
  if constexpr (sizeof(T) == 2) {
    if (plan.block_threads <= kSmallBlock) {
      softmax_block_kernel<T, N, K, kSmallBlock, kSmallBlocksPerSm>
          <<<grid_for(a.rows), plan.block_threads, 0, stream>>>(s, p, a.rows, a.q_len, kv_len,
                                                                a.mask, mods_of(a));
      return;
    }
  }
  softmax_block_kernel<T, N, K, kMaxThreads, 1>
      <<<grid_for(a.rows), plan.block_threads, 0, stream>>>(s, p, a.rows, a.q_len, kv_len, a.mask,
                                                            mods_of(a));
}

template <class T>
void launch_typed(const SoftmaxArgs& a, const SoftmaxPlan& plan, cudaStream_t stream) {
  constexpr int kPack = 16 / sizeof(T);
  if (plan.elems == 1) return launch_block<T, 1, kBlockScalars>(a, plan, stream);
  if (!plan.warp) return launch_block<T, kPack, kBlockKeys / kPack>(a, plan, stream);
  switch (plan.packs_per_thread) {
    case 1:
      return launch_warp<T, kPack, 1>(a, plan, stream);
    case 2:
      return launch_warp<T, kPack, 2>(a, plan, stream);
    default:
      return launch_warp<T, kPack, 4>(a, plan, stream);
  }
}

bool aligned16(const void* ptr) {
  return reinterpret_cast<uintptr_t>(ptr) % 16 == 0;
}

}  // namespace

SoftmaxPlan softmax_plan(DType dtype, int64_t kv_len, bool aligned) {
  SoftmaxPlan plan;
  const int pack = static_cast<int>(16 / dtype_bytes(dtype));
  plan.elems = aligned && kv_len % pack == 0 ? pack : 1;
  const int64_t packs = kv_len / plan.elems;
  if (plan.elems > 1 && packs <= kWarpRowPacks) {
    plan.warp = true;
    plan.packs_per_thread = packs <= 32 ? 1 : packs <= 64 ? 2 : 4;
    plan.row_threads = 1;
    while (plan.row_threads < packs && plan.row_threads < 32) plan.row_threads *= 2;
    plan.block_threads = kWarpBlockThreads;
    plan.rows_per_block = kWarpBlockThreads / plan.row_threads;
    return plan;
  }
  plan.packs_per_thread = plan.elems == 1 ? kBlockScalars : kBlockKeys / plan.elems;
  const int64_t want = (packs + plan.packs_per_thread - 1) / plan.packs_per_thread;
  plan.block_threads = static_cast<int>(std::min<int64_t>((want + 31) / 32 * 32, kMaxThreads));
  plan.row_threads = plan.block_threads;
  plan.rows_per_block = 1;
  return plan;
}

void launch_masked_softmax(const SoftmaxArgs& a, cudaStream_t stream) {
  if (a.rows <= 0 || a.kv_len <= 0) return;
  if (a.kv_len >= kMaxKvLen)
    throw std::invalid_argument("masked softmax: kv_len " + std::to_string(a.kv_len) +
                                " is not below 2^30");
  const SoftmaxPlan plan = softmax_plan(a.dtype, a.kv_len, aligned16(a.s) && aligned16(a.p));
  switch (a.dtype) {
    case DType::fp32:
      launch_typed<float>(a, plan, stream);
      break;
    case DType::fp16:
      launch_typed<__half>(a, plan, stream);
      break;
    case DType::bf16:
      launch_typed<__nv_bfloat16>(a, plan, stream);
      break;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
      throw std::invalid_argument("masked softmax: scores are fp32, fp16 or bf16, not fp8");
  }
  ATTNPROF_CUDA(cudaGetLastError());
}

}  // namespace attnprof::cuda
