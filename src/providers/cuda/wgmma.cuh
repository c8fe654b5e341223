// The warpgroup-level pieces of attnprof's Hopper kernels (sm_90a; mla_decode_kernel.cu): shared
// memory descriptors of the 128-byte-swizzled layout, the fences and groups around
// wgmma.mma_async (the instructions themselves are generated: wgmma_ops.cuh), named barriers
// between warpgroups, and the fence that hands data written through the generic proxy (stores,
// cp.async) to the async proxy wgmma reads shared memory through.
//
// The layout: an operand tile is held as column blocks of 64 16-bit elements (128 bytes) per row,
// each block rows x 128 bytes, 1024-byte aligned; the 16-byte chunk c of row r sits at chunk
// c ^ (r % 8) of its row (swizzled_chunk). One wgmma k-step (16 elements, 32 bytes) of a K-major
// operand starts 32 bytes into the rows; 8-row groups are 1024 bytes apart. An MN-major operand
// (B = V, rows being the k index) steps 16 rows (2048 bytes) per k-step, and its 64-wide blocks
// along N are one block apart.
//
// Accumulators of m64nN (fp32): warp w of the warpgroup holds rows 16 w + g and 16 w + g + 8
// (lane = 4 g + t4), at columns 8 j + 2 t4 (+1) in d[4 j] (d[4 j + 1]) and d[4 j + 2] (+3): per
// warp, mma.sync's m16n8 layout repeated over N / 8 blocks (warp_mma.cuh). An A fragment from
// registers (m64k16) is mma.sync's m16n8k16 A fragment of the warp's 16 rows.
#pragma once

#include <cstdint>

#include "providers/cuda/wgmma_ops.cuh"

namespace attnprof::cuda {

// The byte offset of element column `col` (a multiple of 8) of row `row` in a swizzled tile of
// `rows` rows: its column block, its row, its chunk swizzled by the row.
__device__ __forceinline__ int swizzled_offset(int row, int col, int rows) {
  const int block = col >> 6, chunk = (col >> 3) & 7;
  return block * rows * 128 + row * 128 + ((chunk ^ (row & 7)) << 4);
}

// A descriptor of the 128-byte swizzle mode (bits 62-63: 1) at shared address `smem`: leading
// byte offset `lbo` and stride byte offset `sbo` (both in bytes, multiples of 16).
__device__ __forceinline__ uint64_t smem_descriptor(const void* smem, uint32_t lbo, uint32_t sbo) {
  const auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32) |
         (uint64_t(1) << 62);
}
// A K-major operand: 8-row groups 1024 bytes apart (the leading offset is unused: 16).
__device__ __forceinline__ uint64_t kmajor_descriptor(const void* smem) {
  return smem_descriptor(smem, 16, 1024);
}
// An MN-major operand of `rows` rows (the k index) per column block: blocks along N `rows` x 128
// bytes apart (leading), 8-row groups along K 1024 bytes apart (stride).
__device__ __forceinline__ uint64_t mnmajor_descriptor(const void* smem, int rows) {
  return smem_descriptor(smem, uint32_t(rows) * 128, 1024);
}

// The generated wrapper (wgmma_ops.cuh) of width N: A and B K-major in shared memory (ss), or A
// from registers and B MN-major (rs).
template <class T, int N>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t da, uint64_t db, int acc) {
  if constexpr (N == 128) {
    wgmma_ss_n128<T>(d, da, db, acc);
  } else if constexpr (N == 64) {
    wgmma_ss_n64<T>(d, da, db, acc);
  } else {
    static_assert(N == 32, "no wgmma_ss of this width is generated");
    wgmma_ss_n32<T>(d, da, db, acc);
  }
}
template <class T, int N>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t db,
                                         int acc) {
  if constexpr (N == 256) {
    wgmma_rs_n256<T>(d, a, db, acc);
  } else if constexpr (N == 128) {
    wgmma_rs_n128<T>(d, a, db, acc);
  } else {
    static_assert(N == 64, "no wgmma_rs of this width is generated");
    wgmma_rs_n64<T>(d, a, db, acc);
  }
}

// The descriptor of the operand `bytes` (a multiple of 16) further on: its address field (bits
// 0-13, in 16-byte units) cannot carry, shared memory being under 256 KB.
__device__ __forceinline__ uint64_t advance(uint64_t desc, int bytes) {
  return desc + uint64_t(bytes >> 4);
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Registers an accumulator lives in, pinned across an asynchronous wgmma (the compiler may not
// move their reads or writes over it).
template <int N>
__device__ __forceinline__ void pin(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// This thread's earlier shared-memory accesses (its stores, completed cp.async copies) ordered
// before its later async-proxy ones: wgmma reading them, or a tensor copy writing the same bytes.
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// A named barrier: `threads` (a multiple of 32) meet at barrier `id` (1-15; 0 is
// __syncthreads), each waiting for all of them.
__device__ __forceinline__ void barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Its arriving half: counts this warp's threads toward `threads` without waiting.
__device__ __forceinline__ void barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Warp specialization's register split: every warp of a warpgroup lowers (dec) or raises (inc)
// its registers per thread to N (a multiple of 8, 24 to 256).
template <int N>
__device__ __forceinline__ void set_max_registers_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void set_max_registers_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

}  // namespace attnprof::cuda
