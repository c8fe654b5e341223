// The warp-level pieces attnprof's own tensor-core kernels are made of (decode_mma.cu,
// flash_kernel.cu): 16- and 4-byte asynchronous copies into shared memory, mma.sync m16n8k16
// with fp32 accumulators, ldmatrix (plain and transposed), two floats packed as a bf16 or fp16
// pair, a float rounded to the dtype, the reductions across the four lanes (a quad) that hold
// one row of an accumulator fragment, zeroed fragments, and 2^x on the SFU.
//
// Fragment layout of m16n8k16 (lane = 4 g + t4): C/D hold rows g (elements 0, 1) and g + 8
// (2, 3) at columns 2 t4 and 2 t4 + 1; A holds rows g and g + 8 at columns 2 t4 (+1) and
// 2 t4 + 8 (+1); B (k x n, "col") holds k rows 2 t4 (+1) and 2 t4 + 8 (+1) of column g.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace attnprof::cuda {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;

// 16 bytes global -> shared, asynchronously; `valid` false zero-fills without reading.
__device__ __forceinline__ void copy16(void* smem, const void* gmem, bool valid) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int n = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(n));
}
// 4 bytes global -> shared, asynchronously (through L1); `valid` false writes 0.
__device__ __forceinline__ void copy4(void* smem, const void* gmem, bool valid) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int n = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(n));
}
__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// c += a b on the tensor cores: A 16x16 and B 16x8 in the dtype T, C 16x8 in fp32.
template <class T>
__device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                    uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Four 8x8 matrices of 16-bit elements from shared memory: lane l gives the address of row
// l % 8 of matrix l / 8, and gets row g, columns 2 t4 and 2 t4 + 1 of each (transposed:
// column g, rows 2 t4 and 2 t4 + 1).
__device__ __forceinline__ void ldmatrix4(uint32_t (&r)[4], const void* smem) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
__device__ __forceinline__ void ldmatrix4_trans(uint32_t (&r)[4], const void* smem) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

// Two floats as the dtype's pair, `lo` in the low half.
template <class T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

// The A fragment (16 rows x k 16, in the dtype) of columns 16 kq... of accumulator tiles c (16 rows
// x 8 columns each): how P (or P^T, dS) enters the next product without shared memory.
template <class T, int N>
__device__ __forceinline__ void a_fragment(uint32_t (&f)[4], const float (&c)[N][4], int kq) {
  f[0] = pack2<T>(c[2 * kq][0], c[2 * kq][1]);
  f[1] = pack2<T>(c[2 * kq][2], c[2 * kq][3]);
  f[2] = pack2<T>(c[2 * kq + 1][0], c[2 * kq + 1][1]);
  f[3] = pack2<T>(c[2 * kq + 1][2], c[2 * kq + 1][3]);
}

template <class T>
__device__ __forceinline__ T narrow(float x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(x);
  } else {
    return __float2half_rn(x);
  }
}

// Accumulator fragments (A x B tiles of one m16n8 each) set to 0.
template <int A, int B>
__device__ __forceinline__ void zero(float (&c)[A][B][4]) {
#pragma unroll
  for (int i = 0; i < A; ++i)
#pragma unroll
    for (int j = 0; j < B; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) c[i][j][e] = 0;
}

// The max and the sum over a warp's 32 lanes, every lane getting the result.
__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}
__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// 2^x by the SFU's approximation (relative error ~2^-22; 2^-inf = 0), denormals flushed.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace attnprof::cuda
