// The masked row softmax (softmax.cuh). Host reference: reference_row() in
// src/core/reference.cpp, applied by verify_outputs() to every run of cuda.naive, cuda.naive.expand
// and cuda.math.
//
// One block per row (grid-stride over rows). Pass 1 reads only the 16-byte packs that hold a
// visible key and keeps up to kCachedPacks of them per thread in registers while it builds the
// row's (max, sum of exp) online; pass 2 writes every pack of P: zeros outside the visible keys
// without reading S, exp(s - max) / sum inside, from the registers. Each score is therefore read
// once from memory (rows up to 4 * 1024 packs: 32K keys in fp16/bf16, 16K in fp32; longer rows
// re-read the rest, from L2) and each probability written once.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>

#include "measure/cuda/cuda_check.hpp"
#include "providers/cuda/softmax.cuh"

namespace attnprof::cuda {

RowMask row_mask(const Mask& mask, int64_t q_len, int64_t kv_len) {
  RowMask r;
  r.causal = mask.kind != MaskKind::none;
  r.offset = r.causal ? mask.diagonal_offset(q_len, kv_len) : 0;
  r.window = mask.kind == MaskKind::window ? mask.window : 0;
  return r;
}

namespace {

constexpr int kCachedPacks = 4;  // packs of 16 bytes each thread holds between the two passes
constexpr int kMaxThreads = 1024;

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

// N consecutive elements moved as one load or store (16 bytes when N * sizeof(T) == 16).
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

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

__device__ __forceinline__ void add(MaxSum& a, float x) {
  if (x > a.m) {
    a.l = a.l * expf(a.m - x) + 1.f;
    a.m = x;
  } else if (x > -INFINITY) {  // a -inf score (masked by the math provider) adds nothing
    a.l += expf(x - a.m);
  }
}

template <class T, int N>
__device__ __forceinline__ void add_pack(MaxSum& a, const Pack<T, N>& x, int64_t j0, int64_t first,
                                         int64_t last) {
#pragma unroll
  for (int e = 0; e < N; ++e) {
    const int64_t j = j0 + e;
    if (j >= first && j <= last) add(a, to_float(x.v[e]));
  }
}

template <class T, int N>
__device__ __forceinline__ Pack<T, N> normalize(const Pack<T, N>& x, int64_t j0, int64_t first,
                                                int64_t last, float m, float inv_sum) {
  Pack<T, N> out;
#pragma unroll
  for (int e = 0; e < N; ++e) {
    const int64_t j = j0 + e;
    const bool visible = j >= first && j <= last && inv_sum > 0.f;
    store(out.v[e], visible ? expf(to_float(x.v[e]) - m) * inv_sum : 0.f);
  }
  return out;
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

// Requires kv_len % N == 0 (so every row starts on a pack boundary) and 16-byte aligned s, p.
template <class T, int N>
__global__ void __launch_bounds__(kMaxThreads)
    masked_softmax_kernel(const T* __restrict__ s, T* __restrict__ p, int64_t rows, int64_t q_len,
                          int64_t kv_len, RowMask mask) {
  using P = Pack<T, N>;
  __shared__ MaxSum smem[32];
  const int64_t packs = kv_len / N;
  const int64_t stride = blockDim.x;
  P zero;
#pragma unroll
  for (int e = 0; e < N; ++e) store(zero.v[e], 0.f);

  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t i = row % q_len;
    const int64_t first = mask.first(i), last = mask.last(i, kv_len);
    int64_t pb = 0, pe = 0;  // packs holding at least one visible key: [pb, pe)
    if (first <= last) {
      pb = first / N;
      pe = last / N + 1;
    }
    const P* src = reinterpret_cast<const P*>(s + row * kv_len);
    P* dst = reinterpret_cast<P*>(p + row * kv_len);

    MaxSum acc{-INFINITY, 0.f};
    P cache[kCachedPacks];
#pragma unroll
    for (int c = 0; c < kCachedPacks; ++c) {
      const int64_t k = pb + threadIdx.x + c * stride;
      if (k < pe) {
        cache[c] = src[k];
        add_pack(acc, cache[c], k * N, first, last);
      }
    }
    for (int64_t k = pb + threadIdx.x + kCachedPacks * stride; k < pe; k += stride)
      add_pack(acc, src[k], k * N, first, last);

    acc = block_reduce(acc, smem);
    const float inv_sum = acc.l > 0.f ? 1.f / acc.l : 0.f;  // 0: no visible finite score

    for (int64_t k = threadIdx.x; k < pb; k += stride) dst[k] = zero;
    for (int64_t k = pe + threadIdx.x; k < packs; k += stride) dst[k] = zero;
#pragma unroll
    for (int c = 0; c < kCachedPacks; ++c) {
      const int64_t k = pb + threadIdx.x + c * stride;
      if (k < pe) dst[k] = normalize(cache[c], k * N, first, last, acc.m, inv_sum);
    }
    for (int64_t k = pb + threadIdx.x + kCachedPacks * stride; k < pe; k += stride)
      dst[k] = normalize(src[k], k * N, first, last, acc.m, inv_sum);
  }
}

// Threads per block: enough that a row's packs fit twice over in the register cache, a whole
// number of warps, at most kMaxThreads.
unsigned threads_for(int64_t packs) {
  const int64_t want = (packs + 1) / 2;
  unsigned t = 32;
  while (t < want && t < kMaxThreads) t *= 2;
  return t;
}

template <class T, int N>
void launch_packed(const SoftmaxArgs& a, cudaStream_t stream) {
  const unsigned threads = threads_for(a.kv_len / N);
  // Rows beyond the grid limit are covered by the kernel's grid-stride loop.
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(a.rows, 0x7fffffff));
  masked_softmax_kernel<T, N><<<blocks, threads, 0, stream>>>(
      static_cast<const T*>(a.s), static_cast<T*>(a.p), a.rows, a.q_len, a.kv_len, a.mask);
  ATTNPROF_CUDA(cudaGetLastError());
}

template <class T>
void launch_typed(const SoftmaxArgs& a, cudaStream_t stream) {
  constexpr int kPack = 16 / sizeof(T);
  if (a.kv_len % kPack == 0) {
    launch_packed<T, kPack>(a, stream);
  } else {
    launch_packed<T, 1>(a, stream);  // rows do not start on 16-byte boundaries
  }
}

}  // namespace

void launch_masked_softmax(const SoftmaxArgs& a, cudaStream_t stream) {
  if (a.rows <= 0 || a.kv_len <= 0) return;
  switch (a.dtype) {
    case DType::fp32:
      return launch_typed<float>(a, stream);
    case DType::fp16:
      return launch_typed<__half>(a, stream);
    case DType::bf16:
      return launch_typed<__nv_bfloat16>(a, stream);
  }
}

}  // namespace attnprof::cuda
