// cuda.flash.sm90's key-block kernel of the backward (flash_sm90_bwd_kernel.cuh).
//
// Shared memory (1024-byte aligned, wgmma.cuh's 128-byte swizzle, written by cp.async): K and V
// (kKeys rows), two buffers each of Q and dO (a step's rows), dS^T (kKeys rows of the step's
// queries), then fp32: two buffers of the step's LSE and of its D. Warpgroup wg owns keys
// 64 wg... 64 wg + 63 of the block in S^T, dP^T, dV and dK (the rows of its m64 products). dQ
// (the step's queries x D) is split between the warpgroups: at D 128 (64 queries) each takes
// 64 of the columns, at D 64 (128 queries) each 64 of the queries.
#include "providers/cuda/flash_sm90_bwd_kernel.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/attention_rows.cuh"
#include "providers/cuda/flash_bwd_common.cuh"
#include "providers/cuda/warp_mma.cuh"
#include "providers/cuda/wgmma.cuh"
#include "providers/cuda/wgmma_fragments.cuh"

namespace attnprof::cuda {

namespace {

constexpr int kKeys = kFlashBwdKeys;  // keys per CTA: two warpgroups of 64
constexpr int kThreads = 256;

constexpr int step_queries(int head_dim) {
  return head_dim == 64 ? 128 : 64;
}

template <int D>
struct Cfg {
  static constexpr int QS = step_queries(D);
  static constexpr int kKvBytes = kKeys * D * 2;   // K or V
  static constexpr int kQBytes = QS * D * 2;       // a buffer of Q or dO
  static constexpr int kStBytes = kKeys * QS * 2;  // dS^T
  static constexpr int kSmemBytes = 1024 + 2 * kKvBytes + 4 * kQBytes + kStBytes + 4 * QS * 4;
};
static_assert(Cfg<64>::kSmemBytes <= 227 * 1024 && Cfg<128>::kSmemBytes <= 227 * 1024);

// A thread's share of copying rows row0... of a [rows][D] tensor (rows past `valid` zero-filled)
// into a swizzled tile of R rows, 16 bytes a copy: rows r0 + i RS at column col. RS is a multiple
// of 8, so the swizzle of every one of its rows is r0's: the offsets are computed once.
template <int R, int D>
struct TileCopy {
  static constexpr int CH = D / 8, RS = kThreads / CH;
  static_assert(RS % 8 == 0 && R % RS == 0);
  int r0, col, dst;
  __device__ __forceinline__ TileCopy()
      : r0(threadIdx.x / CH), col(threadIdx.x % CH * 8), dst(swizzled_offset(r0, col, R)) {}
  template <class T>
  __device__ __forceinline__ void operator()(unsigned char* tile, const T* rows0, int64_t stride,
                                             int valid) const {
    const T* src = rows0 + r0 * stride + col;
#pragma unroll
    for (int i = 0; i < R / RS; ++i) {
      const bool in = r0 + i * RS < valid;
      copy16(tile + dst + i * RS * 128, in ? src : rows0, in);
      src += RS * stride;
    }
  }
};

template <class T, int D, bool kDQ>
__global__ void __launch_bounds__(kThreads, 1)
    sm90_kv_kernel(const __grid_constant__ FlashBwdArgs a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = Cfg<D>;
  constexpr int QS = C::QS, CB = D / 64, SN = QS / 2, KS = QS / 16;
  extern __shared__ unsigned char smem_raw[];
  const auto raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  unsigned char* ks = smem_raw + ((1024 - (raw & 1023)) & 1023);
  unsigned char* vs = ks + C::kKvBytes;
  unsigned char* qs = vs + C::kKvBytes;      // [2]
  unsigned char* dos = qs + 2 * C::kQBytes;  // [2]
  unsigned char* sts = dos + 2 * C::kQBytes;
  float* lses = reinterpret_cast<float*>(sts + C::kStBytes);  // [2][QS]
  float* dlt = lses + 2 * QS;                                 // [2][QS]

  const int kb = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int wg = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int g = lane >> 2, t4 = lane & 3;
  const int G = a.q_heads / a.kv_heads;
  const Seq sq = seq_of(a, b);
  const int k0 = kb * kKeys, k1 = min(k0 + kKeys, sq.nk) - 1;
  const int w0 = k0 + 64 * wg;  // the warpgroup's first key
  const T* q = static_cast<const T*>(a.q);
  const T* d_o = static_cast<const T*>(a.d_o);

  const QueryBlocks seen = query_blocks(a, sq, k0, k1, QS);
  const int qb_lo = seen.first, blocks = seen.count;  // query blocks per head
  const int steps = G * blocks;

  const int64_t kv_at = b * a.kv_sb + kvh * a.kv_sh + int64_t(k0) * a.kv_ss;
  {
    const TileCopy<kKeys, D> copy_kv;
    copy_kv(ks, static_cast<const T*>(a.k) + kv_at, a.kv_ss, sq.nk - k0);
    copy_kv(vs, static_cast<const T*>(a.v) + kv_at, a.kv_ss, sq.nk - k0);
  }
  const TileCopy<QS, D> copy_q;
  auto load = [&](int t) {
    const int hq = t / blocks;
    const int h = kvh * G + hq, q0 = (qb_lo + t - hq * blocks) * QS, buf = t & 1;
    copy_q(qs + buf * C::kQBytes, q + b * a.q_sb + h * a.q_sh + int64_t(q0) * a.q_ss, a.q_ss,
           sq.nq - q0);
    copy_q(dos + buf * C::kQBytes, d_o + b * a.do_sb + h * a.do_sh + int64_t(q0) * a.do_ss, a.do_ss,
           sq.nq - q0);
    if (threadIdx.x < QS) {
      const int i = q0 + threadIdx.x;
      const int64_t row = (int64_t(b) * a.q_heads + h) * a.q_len + i;
      const bool valid = i < sq.nq;  // rows past read 0; their scores are masked
      copy4(lses + buf * QS + threadIdx.x, valid ? a.lse + row : a.lse, valid);
      copy4(dlt + buf * QS + threadIdx.x, valid ? a.delta + row : a.delta, valid);
    }
  };
  if (steps > 0) load(0);
  commit_copies();

  float dv[D / 2], dk[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) dv[i] = dk[i] = 0;
  const float sl2 = a.scale * kLog2e;
  // dQ's share: queries dq_q... dq_q + 63 of the step, columns dq_c... dq_c + 63.
  const int dq_q = QS == 128 ? 64 * wg : 0, dq_c = D == 128 ? 64 * wg : 0;
  // This thread's rows (keys) of S^T: w0 + 16 warp + g and + 8.
  const int key0 = w0 + 16 * warp + g;
  // The descriptors of the operands that stay: the warpgroup's rows of K and V (K-major, the
  // scores' A), K's and dS^T's columns of dQ's share (MN-major, dQ's B and A).
  const uint64_t k_rows = kmajor_descriptor(ks + wg * 64 * 128);
  const uint64_t v_rows = kmajor_descriptor(vs + wg * 64 * 128);
  const uint64_t k_cols = mnmajor_descriptor(ks + dq_c * 2 * kKeys, kKeys);
  const uint64_t st_cols = mnmajor_descriptor(sts + dq_q * 2 * kKeys, kKeys);

  for (int t = 0; t < steps; ++t) {
    wait_copies<0>();
    fence_async_shared();  // the copies, to wgmma's proxy
    __syncthreads();       // step t's tiles landed; both warpgroups are past step t - 1
    const int hq = t / blocks;
    const int h = kvh * G + hq, q0 = (qb_lo + t - hq * blocks) * QS, buf = t & 1;
    const uint64_t q_rows = kmajor_descriptor(qs + buf * C::kQBytes);  // B of S^T
    const uint64_t do_rows = kmajor_descriptor(dos + buf * C::kQBytes);
    const uint64_t q_cols = mnmajor_descriptor(qs + buf * C::kQBytes, QS);  // B of dK, dV
    const uint64_t do_cols = mnmajor_descriptor(dos + buf * C::kQBytes, QS);
    const float* lb = lses + buf * QS;
    const float* dd = dlt + buf * QS;

    // S^T = K Q^T and dP^T = V dO^T for the warpgroup's 64 keys: k = D in CB column blocks of
    // four k-steps.
    float s[SN], dp[SN];
#pragma unroll
    for (int i = 0; i < SN; ++i) s[i] = dp[i] = 0;  // read by the first k-step, which ignores them
    auto scores = [&](float(&acc)[SN], uint64_t a_rows, uint64_t b_rows) {
#pragma unroll
      for (int c = 0; c < CB; ++c)
#pragma unroll
        for (int k = 0; k < 4; ++k)
          wgmma_ss<T, QS>(acc, advance(a_rows, c * kKeys * 128 + k * 32),
                          advance(b_rows, c * QS * 128 + k * 32), c + k > 0);
      wgmma_commit();
    };
    wgmma_fence();
    scores(s, k_rows, q_rows);
    scores(dp, v_rows, do_rows);
    // The next step's tiles, copied while the tensor cores work (its buffers' last readers, step
    // t - 1's products, were waited for before the barrier).
    if (t + 1 < steps) load(t + 1);
    commit_copies();

    // P^T = 2^(scale S^T log2 e - LSE_2) where the mask lets query i see the key (0 elsewhere
    // and past the sequences; element e of n-block j: key key0 + 8 (e / 2), query 8 j + 2 t4 +
    // e % 2 of the step), under dP^T's product. The mask is tested only where the warpgroup's
    // tile is not wholly seen.
    wgmma_wait<1>();
    pin(s);
    bool whole = q0 + QS <= sq.nq && w0 + 64 <= sq.nk;
    if (a.mask != MaskKind::none) whole = whole && q0 + sq.off >= w0 + 63;
    if (a.mask == MaskKind::window) whole = whole && q0 + QS - 1 + sq.off - a.window + 1 <= w0;
    // Each n-block's two queries' LSE (base 2) in one 8-byte load.
    float lse2[SN / 2];
#pragma unroll
    for (int j = 0; j < SN / 4; ++j) {
      const float2 l = *reinterpret_cast<const float2*>(lb + 8 * j + 2 * t4);
      lse2[2 * j] = l.x * kLog2e;
      lse2[2 * j + 1] = l.y * kLog2e;
    }
    if (whole) {
#pragma unroll
      for (int i = 0; i < SN; ++i) s[i] = fast_exp2(s[i] * sl2 - lse2[(i >> 2) * 2 + (i & 1)]);
    } else {
#pragma unroll
      for (int i = 0; i < SN; ++i) {
        const int qi = 8 * (i >> 2) + 2 * t4 + (i & 1), key = key0 + 8 * ((i >> 1) & 1);
        const int n = q0 + qi;
        const bool seen = (n < sq.nq) & (key >= first_key(a, sq, n)) & (key <= last_key(a, sq, n));
        const float p = fast_exp2(s[i] * sl2 - lse2[(i >> 2) * 2 + (i & 1)]);
        s[i] = seen ? p : 0.f;
      }
    }
    uint32_t pa[KS][4], sa[KS][4];
    pack_a_fragments<T>(s, pa);
    // dV += P^T dO (k = the step's queries, dO read MN-major): at D 128 under dS^T's
    // arithmetic; at D 64 after it (P^T's floats and fragments, S^T's and dP^T's 128 columns
    // would not fit in the registers together).
    auto issue_dv = [&] {
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < KS; ++k) wgmma_rs<T, D>(dv, pa[k], advance(do_cols, k * 2048), 1);
      wgmma_commit();
    };
    constexpr bool kEarlyDv = D == 128;
    if constexpr (kEarlyDv) {
      issue_dv();
      wgmma_wait<1>();  // dP^T; dV's products may still run
    } else {
      wgmma_wait<0>();
    }
    pin(dp);
    // dS^T = P^T (dP^T - D), as A fragments and, for dQ, to shared memory (4-byte stores:
    // conflict-free under the swizzle).
#pragma unroll
    for (int j = 0; j < SN / 4; ++j) {
      const float2 d2 = *reinterpret_cast<const float2*>(dd + 8 * j + 2 * t4);
#pragma unroll
      for (int e = 0; e < 4; ++e)
        dp[4 * j + e] = s[4 * j + e] * (dp[4 * j + e] - (e & 1 ? d2.y : d2.x));
    }
    pack_a_fragments<T>(dp, sa);
    if constexpr (kDQ) {
#pragma unroll
      for (int j = 0; j < SN / 4; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int row = 64 * wg + 16 * warp + g + 8 * hh;
          *reinterpret_cast<uint32_t*>(sts + swizzled_offset(row, 8 * j, kKeys) + 4 * t4) =
              pack2<T>(dp[4 * j + 2 * hh], dp[4 * j + 2 * hh + 1]);
        }
    }

    if constexpr (!kEarlyDv) issue_dv();
    // dK += dS^T Q (Q read MN-major).
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < KS; ++k) wgmma_rs<T, D>(dk, sa[k], advance(q_cols, k * 2048), 1);
    wgmma_commit();

    if constexpr (kDQ) {
      fence_async_shared();  // dS^T's stores, to wgmma's proxy
      __syncthreads();       // both warpgroups' rows of dS^T written
      // dQ = dS K: m = the share's 64 queries (dS^T's columns, read MN-major), k = the block's
      // keys, n = its 64 columns of K (read MN-major).
      float dq[32];
#pragma unroll
      for (int i = 0; i < 32; ++i) dq[i] = 0;
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < kKeys / 16; ++k)
        wgmma_ss_mn_n64<T>(dq, advance(st_cols, k * 2048), advance(k_cols, k * 2048), k > 0);
      wgmma_commit();
      wgmma_wait<0>();
      pin(dv);
      pin(dk);
      pin(dq);
      // Warp `warp`'s 16 rows of the share: per warp the mma accumulator layout.
      const int r0 = q0 + dq_q + 16 * warp;
      const int64_t row0 = (int64_t(b) * a.q_heads + h) * a.q_len;
      add_dq<D>(a.dq_acc + (row0 + r0) * D, sq.nq - r0, dq_c,
                *reinterpret_cast<const float(*)[8][4]>(dq), a.dq_acc + (row0 + q0) * D);
    } else {
      wgmma_wait<0>();
      pin(dv);
      pin(dk);
    }
  }
  wait_copies<0>();

  // dK (x scale) and dV of this thread's two keys, in the dtype.
  T* dkp = static_cast<T*>(a.dk) + b * a.dkv_sb + kvh * a.dkv_sh;
  T* dvp = static_cast<T*>(a.dv) + b * a.dkv_sb + kvh * a.dkv_sh;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int key = key0 + 8 * hh;
    if (key >= sq.nk) continue;
    store_row<T>(dkp + int64_t(key) * a.dkv_ss + 2 * t4, dk, hh, a.scale);
    store_row<T>(dvp + int64_t(key) * a.dkv_ss + 2 * t4, dv, hh, 1.f);
  }
#else
  (void)a;
  __trap();  // built for sm_90a only (the provider refuses other devices)
#endif
}

template <class T, int D>
void launch_typed(const FlashBwdArgs& a, cudaStream_t stream) {
  constexpr int smem = Cfg<D>::kSmemBytes;
  static const cudaError_t set = cudaFuncSetAttribute(
      sm90_kv_kernel<T, D, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  static const cudaError_t set_det = cudaFuncSetAttribute(
      sm90_kv_kernel<T, D, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  const dim3 grid(unsigned((a.kv_len + kKeys - 1) / kKeys), unsigned(a.kv_heads),
                  unsigned(a.batch));
  if (a.dq_acc != nullptr) {
    ATTNPROF_CUDA(set);
    sm90_kv_kernel<T, D, true><<<grid, kThreads, smem, stream>>>(a);
  } else {
    ATTNPROF_CUDA(set_det);
    sm90_kv_kernel<T, D, false><<<grid, kThreads, smem, stream>>>(a);
  }
  ATTNPROF_CUDA(cudaGetLastError());
}

}  // namespace

int flash_sm90_bwd_step_queries(int head_dim) {
  return step_queries(head_dim);
}

int flash_sm90_bwd_smem_bytes(int head_dim) {
  return FlashSm90BwdHeadDims::dispatch(head_dim, "cuda.flash.sm90 backward",
                                        [](auto d) { return Cfg<decltype(d)::value>::kSmemBytes; });
}

void launch_flash_sm90_bwd_key_blocks(const FlashBwdArgs& a, cudaStream_t stream) {
  dispatch_dtype<__half, __nv_bfloat16>(a.dtype, "cuda.flash.sm90 backward", [&](auto t) {
    FlashSm90BwdHeadDims::dispatch(a.head_dim, "cuda.flash.sm90 backward", [&](auto d) {
      launch_typed<decltype(t), decltype(d)::value>(a, stream);
    });
  });
}

}  // namespace attnprof::cuda
