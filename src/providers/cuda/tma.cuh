// The asynchronous copy machinery of attnprof's Hopper kernels (sm_90a; flash_sm90_kernel.cu,
// decode_mma.cu, decode_producer.cu): shared-memory mbarriers (init, arrive, arrive with an
// expected byte count, a parity wait); the tensor memory accelerator's tiled copy from global to
// shared memory, which lands a box of a tensor map (tensor_map.hpp; the 5-d copy reads its boxes
// of whole rows) in the 128-byte-swizzled layout wgmma.cuh describes and counts its bytes on an
// mbarrier; and the two halves of a programmatic dependent launch (the decode kernels and their
// merge). The proxy fence between shared-memory accesses and the async proxy is wgmma.cuh's
// fence_async_shared.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace attnprof::cuda {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// An mbarrier expecting `count` arrivals a phase; the init made visible to the async proxy
// (the tensor copies complete on it) before any thread uses it (then __syncthreads).
__device__ __forceinline__ void mbar_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count)
               : "memory");
}
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
// This thread's arrival, and `bytes` more for the phase to wait for (the tensor copies').
__device__ __forceinline__ void mbar_expect_bytes(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)),
               "r"(bytes)
               : "memory");
}
// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  const uint32_t addr = smem_u32(bar);
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
  } while (done == 0);
}

// Box (c0, c1, c2, c3) of the 4-d tensor map `map` (a __grid_constant__ kernel parameter) into
// shared memory at `dst` (1024-byte aligned for the 128-byte swizzle), its bytes counted on `bar`.
__device__ __forceinline__ void tma_load_4d(void* dst, const CUtensorMap* map, uint64_t* bar,
                                            int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_u32(bar))
      : "memory");
}

// Box (c0, .., c4) of the 5-d tensor map `map` (tensor_map.hpp row_tensor_map), likewise.
__device__ __forceinline__ void tma_load_5d(void* dst, const CUtensorMap* map, uint64_t* bar,
                                            int c0, int c1, int c2, int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4),
      "r"(smem_u32(bar))
      : "memory");
}

// Programmatic dependent launch (sm_90): a kernel launched with the programmatic stream
// serialization attribute may start once every CTA of the kernel before it has called
// allow_dependent_grid (or exited), and waits in wait_for_prior_grid until that kernel has
// finished and its writes are visible.
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_dependent_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

}  // namespace attnprof::cuda
