// cuda.flash's forward kernel (flash_kernel.cuh): per CTA a block of 128 query rows of one head,
// four warps of 32 rows (two m16 tiles each), head dim 64 (tiles of 128 keys) or 128 (64 keys).
//
// Shared memory holds Q's block, one K tile and one V tile, rows padded by 16 bytes so that
// ldmatrix reads no bank twice. Per tile: wait for K, start V's copy, S = Q K^T (Q's and K's
// fragments by ldmatrix, mma.sync), scale (and cap) and mask S, the online softmax (each row's
// max and sum across the quad that holds it), wait for V, start the next K's copy, O += P V
// (P rounded to the dtype as the A operand, V's fragments by ldmatrix.trans). At the end each
// warp scales its rows by 1 / sum (the sink joining the sum), stages them through its own rows
// of Q's block and writes them in 16-byte stores, with the LSE.
#include "providers/cuda/flash_kernel.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/attention_rows.cuh"
#include "providers/cuda/warp_mma.cuh"

namespace attnprof::cuda {

namespace {

constexpr int kWarps = kFlashThreads / 32;
constexpr int kWarpRows = kFlashRows / kWarps;  // 32
constexpr int kMT = kWarpRows / 16;             // m16 tiles per warp

// Keys per tile: 8192 / D. Half that (fewer score registers, twice the tiles) measured
// 0.84-0.98x on the H200 (bench/results/h200/2026-12-02-flash, call 2).
template <int D>
constexpr int key_tile() {
  return D == 64 ? 128 : 64;
}
template <int D>
constexpr int row_elems() {
  return D + 8;  // 16 bytes of padding
}
template <int D>
constexpr int smem_bytes() {
  return (kFlashRows + 2 * key_tile<D>()) * row_elems<D>() * 2;
}

template <class T, int D>
__global__ void __launch_bounds__(kFlashThreads, 2) flash_forward_kernel(const FlashArgs a) {
  constexpr int BC = key_tile<D>();
  constexpr int ROW = row_elems<D>();
  constexpr int CH = D / 8;    // 16-byte chunks per row
  constexpr int KS = D / 16;   // k-steps of Q K^T
  constexpr int NS = BC / 8;   // n-blocks of S
  constexpr int KP = BC / 16;  // k-steps of P V
  constexpr int NO = D / 8;    // n-blocks of O
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* qs = reinterpret_cast<T*>(smem_raw);
  T* ks = qs + kFlashRows * ROW;
  T* vs = ks + BC * ROW;

  const int h = blockIdx.y, b = blockIdx.z;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
  const int mi = lane >> 3, ri = lane & 7;  // ldmatrix: this lane's matrix and row
  const int kvh = h / (a.q_heads / a.kv_heads);
  const Seq sq = seq_of(a, b);
  // Under a causal mask the last blocks see the most keys: they start first.
  const bool causal = a.mask == MaskKind::causal_tl || a.mask == MaskKind::causal_br;
  const int blk = causal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);
  const int m0 = blk * kFlashRows;
  if (m0 >= sq.nq) return;  // a ragged batch's shorter sequence
  const int m_last = min(m0 + kFlashRows, sq.nq) - 1;

  // The block's keys: from the first row's first to the last row's last.
  const int lo = first_key(a, sq, m0), hi = last_key(a, sq, m_last);
  const int t0 = hi >= lo ? lo / BC * BC : 0;
  const int tiles = hi >= lo ? (hi - t0) / BC + 1 : 0;
  // A tile every row sees whole needs no mask.
  const int all_first = first_key(a, sq, m_last), all_last = last_key(a, sq, m0);

  const T* qg = static_cast<const T*>(a.q) + b * a.q_sb + h * a.q_sh;
  const T* kg = static_cast<const T*>(a.k) + b * a.kv_sb + kvh * a.kv_sh;
  const T* vg = static_cast<const T*>(a.v) + b * a.kv_sb + kvh * a.kv_sh;
  // This thread's 16-byte chunks of a tile: column c8, rows r0, r0 + RS, ...
  constexpr int RS = kFlashThreads / CH;
  const int r0 = tid / CH, c8 = (tid % CH) * 8;
  auto load_rows = [&](T* dst, const T* src, int first_row, int rows, int limit, int64_t stride) {
    const T* from = src + int64_t(first_row + r0) * stride + c8;
    T* to = dst + r0 * ROW + c8;
#pragma unroll
    for (int it = 0; it < rows / RS; ++it) {
      const bool ok = first_row + r0 + it * RS < limit;
      copy16(to + it * RS * ROW, ok ? from : src, ok);
      from += RS * stride;
    }
  };
  auto load_tile = [&](T* dst, const T* src, int k0) {
    load_rows(dst, src, k0, BC, sq.nk, a.kv_ss);
  };
  if (tiles > 0) {
    load_rows(qs, qg, m0, kFlashRows, sq.nq, a.q_ss);
    load_tile(ks, kg, t0);
  }
  commit_copies();

  float o[kMT][NO][4];
  zero(o);
  float m[kMT][2], l[kMT][2];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      m[mt][hh] = -INFINITY;
      l[mt][hh] = 0;
    }
  const bool capped = a.softcap > 0;
  const float mul = capped ? 1.f : a.scale * kLog2e;  // a raw score to base 2
  const T* qw = qs + warp * kWarpRows * ROW;

  for (int j = 0; j < tiles; ++j) {
    const int k0 = t0 + j * BC;
    wait_copies<0>();
    __syncthreads();  // K's tile (and Q) landed for every thread; V's tile is free
    load_tile(vs, vg, k0);
    commit_copies();

    float s[kMT][NS][4];
    zero(s);
#pragma unroll
    for (int kk = 0; kk < KS; ++kk) {
      uint32_t qa[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
        ldmatrix4(qa[mt], qw + (mt * 16 + (mi & 1) * 8 + ri) * ROW + kk * 16 + (mi >> 1) * 8);
#pragma unroll
      for (int nb = 0; nb < NS; nb += 2) {
        uint32_t kb[4];  // n-blocks nb and nb + 1 at this k-step
        ldmatrix4(kb, ks + ((nb + (mi >> 1)) * 8 + ri) * ROW + kk * 16 + (mi & 1) * 8);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma<T>(s[mt][nb], qa[mt], kb[0], kb[1]);
          mma<T>(s[mt][nb + 1], qa[mt], kb[2], kb[3]);
        }
      }
    }

    // Capped scores go into base 2 here; otherwise the scale joins the exponent below (one
    // FFMA per score). Then the mask, where some row does not see the whole tile. Each pass is
    // its own loop, so the common case runs none but the mask's edge tiles.
    if (capped) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int nb = 0; nb < NS; ++nb)
#pragma unroll
          for (int e = 0; e < 4; ++e) s[mt][nb][e] = score2(a, s[mt][nb][e]);
    }
    if (k0 < all_first || k0 + BC - 1 > all_last) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {  // rows past the sequence see no key
          const int i = m0 + warp * kWarpRows + mt * 16 + g + 8 * (e >> 1);
          const int lo_i = i < sq.nq ? first_key(a, sq, i) : 1;
          const int hi_i = i < sq.nq ? last_key(a, sq, i) : 0;
#pragma unroll
          for (int nb = 0; nb < NS; ++nb) {
            const int pos = k0 + nb * 8 + 2 * t4 + (e & 1);
            if (pos < lo_i || pos > hi_i) s[mt][nb][e] = -INFINITY;
          }
        }
    }
    // The online softmax of rows g (e 0, 1) and g + 8 (e 2, 3) of each m tile.
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        float mx = -INFINITY;
#pragma unroll
        for (int nb = 0; nb < NS; ++nb)
          mx = fmaxf(mx, fmaxf(s[mt][nb][2 * hh], s[mt][nb][2 * hh + 1]));
        mx = fmaxf(m[mt][hh], quad_max(mx) * mul);      // base 2
        const float base = mx == -INFINITY ? 0.f : mx;  // a row that has seen nothing yet
        const float alpha = fast_exp2(m[mt][hh] - base);
        m[mt][hh] = mx;
        float sum = 0;
#pragma unroll
        for (int nb = 0; nb < NS; ++nb)
#pragma unroll
          for (int e = 2 * hh; e < 2 * hh + 2; ++e) {
            const float p = fast_exp2(fmaf(s[mt][nb][e], mul, -base));
            s[mt][nb][e] = p;
            sum += p;
          }
        l[mt][hh] = l[mt][hh] * alpha + sum;
        // Once the rows' maxima settle most tiles leave them: then the warp skips the rescale.
        if (__any_sync(0xffffffffu, alpha != 1.f)) {
#pragma unroll
          for (int nb = 0; nb < NO; ++nb) {
            o[mt][nb][2 * hh] *= alpha;
            o[mt][nb][2 * hh + 1] *= alpha;
          }
        }
      }

    wait_copies<0>();
    __syncthreads();  // V's tile landed; every thread is done with K's
    if (j + 1 < tiles) load_tile(ks, kg, k0 + BC);
    commit_copies();

#pragma unroll
    for (int kp = 0; kp < KP; ++kp) {
      uint32_t pa[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) a_fragment<T>(pa[mt], s[mt], kp);
#pragma unroll
      for (int nb = 0; nb < NO; nb += 2) {
        uint32_t vb[4];
        ldmatrix4_trans(vb, vs + (kp * 16 + ri + (mi & 1) * 8) * ROW + nb * 8 + (mi >> 1) * 8);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma<T>(o[mt][nb], pa[mt], vb[0], vb[1]);
          mma<T>(o[mt][nb + 1], pa[mt], vb[2], vb[3]);
        }
      }
    }
  }
  wait_copies<0>();
  __syncthreads();

  // Each warp's rows, normalized, through its own rows of Q's block (no other warp reads them),
  // then out in 16-byte stores; the LSE from the quad's first lane.
  const float s2 = sink2(a, h);
  const int64_t lse_row = (int64_t(b) * a.q_heads + h) * a.q_len;
  T* stage = qs + warp * kWarpRows * ROW;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const RowEnd end = end_row(m[mt][hh], quad_sum(l[mt][hh]), s2);
      const int r = mt * 16 + g + 8 * hh, i = m0 + warp * kWarpRows + r;
#pragma unroll
      for (int nb = 0; nb < NO; ++nb)
        *reinterpret_cast<uint32_t*>(stage + r * ROW + nb * 8 + 2 * t4) =
            pack2<T>(o[mt][nb][2 * hh] * end.factor, o[mt][nb][2 * hh + 1] * end.factor);
      if (t4 == 0 && i < sq.nq && a.lse != nullptr) a.lse[lse_row + i] = end.lse;
    }
  __syncwarp();
  T* og = static_cast<T*>(a.o) + b * a.o_sb + h * a.o_sh;
#pragma unroll
  for (int it = 0; it < kWarpRows * CH / 32; ++it) {
    const int c = lane + 32 * it, r = c / CH, cc = c % CH, i = m0 + warp * kWarpRows + r;
    if (i < sq.nq)
      *reinterpret_cast<uint4*>(og + int64_t(i) * a.o_ss + cc * 8) =
          *reinterpret_cast<const uint4*>(stage + r * ROW + cc * 8);
  }
}

template <class T, int D>
void launch_typed(const FlashArgs& a, cudaStream_t stream) {
  constexpr int smem = smem_bytes<D>();
  static const cudaError_t set = cudaFuncSetAttribute(
      flash_forward_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  ATTNPROF_CUDA(set);
  const dim3 grid(unsigned((a.q_len + kFlashRows - 1) / kFlashRows), unsigned(a.q_heads),
                  unsigned(a.batch));
  flash_forward_kernel<T, D><<<grid, kFlashThreads, smem, stream>>>(a);
  ATTNPROF_CUDA(cudaGetLastError());
}

}  // namespace

int flash_key_tile(int head_dim) {
  return FlashHeadDims::dispatch(head_dim, "cuda.flash",
                                 [](auto d) { return key_tile<decltype(d)::value>(); });
}

int flash_smem_bytes(int head_dim) {
  return FlashHeadDims::dispatch(head_dim, "cuda.flash",
                                 [](auto d) { return smem_bytes<decltype(d)::value>(); });
}

void launch_flash(const FlashArgs& a, cudaStream_t stream) {
  dispatch_dtype<__half, __nv_bfloat16>(a.dtype, "cuda.flash", [&](auto t) {
    FlashHeadDims::dispatch(a.head_dim, "cuda.flash", [&](auto d) {
      launch_typed<decltype(t), decltype(d)::value>(a, stream);
    });
  });
}

}  // namespace attnprof::cuda
