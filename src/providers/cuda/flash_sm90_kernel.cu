// cuda.flash.sm90's forward kernel (flash_sm90_kernel.cuh). Verified end to end: every row of O
// and the LSE against the fp64 reference on the host and on the device (tests/gpu/test_flash.cpp,
// under both of its schedules).
//
// Shared memory (1024-byte aligned, the 128-byte swizzle of wgmma.cuh, written by the tensor
// copies): Q's block (kRows x D), K and V tiles of BC keys in two stages each, the mbarriers.
// The CTA walks work items (work_of); the producer warpgroup's one thread, per item: waits until
// both consumer warpgroups are done with the last Q (`q_empty`) and loads the item's Q block on
// `q_full`; then per tile (stage: the CTA's running tile count % 2) it waits until the stage's
// last K is released (`k_empty`), loads K's tile on `k_full`, and the same for V. Consumer
// warpgroup w (rows 64 w ...), per item:
//   tile 0   S = Q K^T; release K; softmax; P to A fragments
//   tile t   [its turn] issue S = Q K^T of tile t and O += P V of tile t - 1 [the other's turn];
//            wait for S, release K of t; scale, mask, the online softmax; wait for P V, release
//            V of t - 1; rescale O; P of tile t to A fragments
//   end      [its turn] O += P V of the last tile; O / sum (the sink joining it) and the LSE out
// Turns: named barrier 1 + w is warpgroup w's, each sync at it waiting for the other's arrival,
// so that one warpgroup's GEMMs are queued while the other runs its softmax.
#include "providers/cuda/flash_sm90_kernel.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/attention_rows.cuh"
#include "providers/cuda/tensor_map.hpp"
#include "providers/cuda/tma.cuh"
#include "providers/cuda/warp_mma.cuh"
#include "providers/cuda/wgmma.cuh"
#include "providers/cuda/wgmma_fragments.cuh"

namespace attnprof::cuda {

namespace {

constexpr int kRows = kFlashSm90Rows, STAGES = kFlashSm90Stages;

// The kernel's parameters: what every own kernel is told, and the three tensor maps.
struct Params {
  FlashSm90Args a;
  CUtensorMap q, k, v;
};

template <int D>
struct Cfg {
  static constexpr int BC = flash_sm90_key_tile(D);  // keys per tile
  static constexpr int kQBytes = kRows * D * 2;
  static constexpr int kTileBytes = BC * D * 2;
  static constexpr int kBarBytes = (2 + 4 * STAGES) * 8;
  static constexpr int kSmemBytes = 1024 + kQBytes + 2 * STAGES * kTileBytes + kBarBytes;
};
static_assert(Cfg<128>::kSmemBytes <= 227 * 1024 && Cfg<256>::kSmemBytes <= 227 * 1024);

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// One work item: a block of query rows of one head of one sequence, its keys (from the block's
// first row's first to its last row's last; none when tiles is 0), and the range of keys every
// row of the block sees, where a tile needs no mask.
struct Work {
  int h, b, kvh, m0;
  Seq sq;
  int t0, tiles, all_first, all_last;
};
// Item `item`: with `heads_major` (a sequence's heads, then sequences), the blocks of one
// head next to each other, so that the CTAs running at once share K and V in L2; under a causal
// mask a head's last blocks, which see the most keys, first. Without, blocks major (under a
// causal mask every head's last block first). A block past a ragged sequence's rows has m0 >=
// sq.nq.
// `blocks`: the query blocks of a head; BC: keys per tile.
template <int BC>
__device__ __forceinline__ Work work_of(const FlashSm90Args& a, int blocks, int item) {
  Work w;
  const int per_block = a.q_heads * a.batch;
  const int rank = a.heads_major ? item % blocks : item / per_block;
  const int hb = a.heads_major ? item / blocks : item % per_block;
  const bool causal = a.mask == MaskKind::causal_tl || a.mask == MaskKind::causal_br;
  w.h = hb % a.q_heads;
  w.b = hb / a.q_heads;
  w.kvh = w.h / (a.q_heads / a.kv_heads);
  w.m0 = (causal ? blocks - 1 - rank : rank) * kRows;
  w.sq = seq_of(a, w.b);
  w.tiles = 0;
  w.t0 = 0;
  if (w.m0 >= w.sq.nq) return w;
  const int m_last = min(w.m0 + kRows, w.sq.nq) - 1;
  const int lo = first_key(a, w.sq, w.m0), hi = last_key(a, w.sq, m_last);
  if (hi >= lo) {
    w.t0 = lo / BC * BC;
    w.tiles = (hi - w.t0) / BC + 1;
  }
  w.all_first = first_key(a, w.sq, m_last);
  w.all_last = last_key(a, w.sq, w.m0);
  return w;
}
#endif

template <class T, int D>
__global__ void __launch_bounds__(kFlashSm90Threads, 1)
    flash_sm90_kernel(const __grid_constant__ Params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = Cfg<D>;
  constexpr int BC = C::BC;        // keys per tile
  constexpr int CB = D / 64;       // column blocks of 64 (128 bytes)
  constexpr int SREGS = BC / 2;    // S accumulators per thread (64 x BC / 128)
  constexpr int OREGS = D / 2;     // O accumulators per thread
  constexpr int KSTEPS = BC / 16;  // k-steps of P V
  constexpr int kConsumers = 256;  // threads of the two consumer warpgroups
  // Registers a thread of the producer and of a consumer warpgroup holds: each SM sub-partition
  // (16384 registers) runs one warp of each warpgroup, 24 + 240 + 240 of 512 a lane.
  constexpr int kProducerRegs = 24, kConsumerRegs = 240;
  const FlashSm90Args& a = p.a;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = smem_u32(smem_raw);
  unsigned char* base = smem_raw + ((1024 - (raw & 1023)) & 1023);
  unsigned char* qs = base;
  unsigned char* ks = qs + C::kQBytes;              // STAGES tiles
  unsigned char* vs = ks + STAGES * C::kTileBytes;  // STAGES tiles
  auto* bars = reinterpret_cast<uint64_t*>(vs + STAGES * C::kTileBytes);
  uint64_t* q_full = bars;
  uint64_t* q_empty = bars + 1;
  uint64_t* k_full = bars + 2;
  uint64_t* k_empty = k_full + STAGES;
  uint64_t* v_full = k_empty + STAGES;
  uint64_t* v_empty = v_full + STAGES;

  const int tid = int(threadIdx.x);
  // The warpgroup (2: the producer), warp-uniform to the compiler.
  const int wg = __shfl_sync(0xffffffffu, tid >> 7, 0);
  if (tid == 0) {
    mbar_init(q_full, 1);
    mbar_init(q_empty, kConsumers);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(k_full + s, 1);
      mbar_init(v_full + s, 1);
      mbar_init(k_empty + s, kConsumers);
      mbar_init(v_empty + s, kConsumers);
    }
    mbar_init_fence();
  }
  __syncthreads();

  // The CTA's work items: item, item + gridDim.x, ... of blocks x q_heads x batch, every role
  // walking the same ones. `it` counts the tiles the CTA has streamed (the stages' uses) and `nq`
  // the blocks of Q it has loaded, across items.
  const int blocks = (a.q_len + kRows - 1) / kRows, items = blocks * a.q_heads * a.batch;
  int it = 0, nq = 0;

  if (wg == 2) {
    // The producer warpgroup gives its registers to the consumers; one thread issues every copy.
    set_max_registers_dec<kProducerRegs>();
    if (tid != kConsumers) return;
    for (int item = int(blockIdx.x); item < items; item += int(gridDim.x)) {
      const Work w = work_of<BC>(a, blocks, item);
      if (w.tiles == 0) continue;
      if (nq > 0) mbar_wait(q_empty, (nq - 1) & 1);
      ++nq;
      mbar_expect_bytes(q_full, C::kQBytes);
#pragma unroll
      for (int c = 0; c < CB; ++c)
        tma_load_4d(qs + c * kRows * 128, &p.q, q_full, 64 * c, w.m0, w.h, w.b);
      for (int t = 0; t < w.tiles; ++t, ++it) {
        const int s = it % STAGES, use = it / STAGES, k0 = w.t0 + t * BC;
        // A tile of `map` (K or V) into stage s of `tiles`, once its last use there is released.
        auto load = [&](const CUtensorMap* map, unsigned char* tiles, uint64_t* full,
                        uint64_t* empty) {
          if (use > 0) mbar_wait(empty + s, (use - 1) & 1);
          mbar_expect_bytes(full + s, C::kTileBytes);
#pragma unroll
          for (int c = 0; c < CB; ++c)
            tma_load_4d(tiles + s * C::kTileBytes + c * BC * 128, map, full + s, 64 * c, k0, w.kvh,
                        w.b);
        };
        load(&p.k, ks, k_full, k_empty);
        load(&p.v, vs, v_full, v_empty);
      }
    }
    return;
  }

  set_max_registers_inc<kConsumerRegs>();
  const int wt = tid & 127, warp = wt >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
  const bool capped = a.softcap > 0;
  const float mul = capped ? 1.f : a.scale * kLog2e;  // a raw score to base 2
  const int mine = 1 + wg, other = 2 - wg;            // the turns' named barriers
  const bool pingpong = a.pingpong;
  const unsigned char* qw = qs + wg * 64 * 128;  // this warpgroup's rows of each column block

  float o[OREGS];
  float m[2], l[2];
  float sacc[SREGS];
  uint32_t pa[KSTEPS][4];
  float alpha[2];
  int first[2], last[2];

  for (int item = int(blockIdx.x); item < items; item += int(gridDim.x)) {
    const Work w = work_of<BC>(a, blocks, item);
    if (w.m0 >= w.sq.nq) continue;  // a ragged batch's shorter sequence: no rows here
      // This thread's two rows: m0 + 64 wg + 16 warp + g and + 8, and the keys each sees (a row
      // past the sequence: none).
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int i = w.m0 + 64 * wg + 16 * warp + g + 8 * hh;
      first[hh] = i < w.sq.nq ? first_key(a, w.sq, i) : 1;
      last[hh] = i < w.sq.nq ? last_key(a, w.sq, i) : 0;
      m[hh] = -INFINITY;
      l[hh] = 0;
      alpha[hh] = 1.f;
    }
#pragma unroll
    for (int i = 0; i < OREGS; ++i) o[i] = 0;

    auto issue_scores = [&](int stage) {
      const unsigned char* kt = ks + stage * C::kTileBytes;
#pragma unroll
      for (int i = 0; i < SREGS; ++i) sacc[i] = 0;
      wgmma_fence();
#pragma unroll
      for (int c = 0; c < CB; ++c)
#pragma unroll
        for (int k = 0; k < 4; ++k)
          wgmma_ss<T, BC>(sacc, kmajor_descriptor(qw + c * kRows * 128 + k * 32),
                          kmajor_descriptor(kt + c * BC * 128 + k * 32), c + k > 0);
      wgmma_commit();
    };
    auto issue_pv = [&](int stage) {
      const unsigned char* vt = vs + stage * C::kTileBytes;
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < KSTEPS; ++k)
        wgmma_rs<T, D>(o, pa[k], mnmajor_descriptor(vt + k * 16 * 128, BC), 1);
      wgmma_commit();
    };
    // S of tile t complete: scale (cap) and mask where some row does not see the whole tile
    // (element e of n-block j: row e >= 2, key k0 + 8 j + 2 t4 + e % 2); the online softmax,
    // P in sacc, `alpha` the rescale of O before P V of tile t.
    auto softmax = [&](int t) {
      pin(sacc);
      const int k0 = w.t0 + t * BC;
      if (capped) {
#pragma unroll
        for (int i = 0; i < SREGS; ++i) sacc[i] = score2(a, sacc[i]);
      }
      if (k0 < w.all_first || k0 + BC - 1 > w.all_last) mask_keys(sacc, k0, t4, first, last);
      float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int i = 0; i < SREGS; ++i) mx[(i >> 1) & 1] = fmaxf(mx[(i >> 1) & 1], sacc[i]);
      float use[2];
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const float mnew = fmaxf(m[hh], quad_max(mx[hh]) * mul);  // base 2
        use[hh] = mnew == -INFINITY ? 0.f : mnew;                 // a row that has seen nothing
        alpha[hh] = fast_exp2(m[hh] - use[hh]);
        m[hh] = mnew;
      }
      float sum[2] = {0, 0};
#pragma unroll
      for (int i = 0; i < SREGS; ++i) {
        const int hh = (i >> 1) & 1;
        sacc[i] = fast_exp2(fmaf(sacc[i], mul, -use[hh]));
        sum[hh] += sacc[i];
      }
      l[0] = l[0] * alpha[0] + sum[0];
      l[1] = l[1] * alpha[1] + sum[1];
    };
    // O *= alpha (P V's registers free), P to A fragments: n-blocks 2 k and 2 k + 1 of S.
    auto rescale_and_pack = [&] {
      if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f))  // warp-uniform
        scale_rows(o, alpha);
      pack_a_fragments<T>(sacc, pa);
    };

    const int tiles = w.tiles;
    if (tiles > 0) {
      mbar_wait(q_full, nq & 1);
      ++nq;
      const int s = it % STAGES;
      mbar_wait(k_full + s, (it / STAGES) & 1);
      issue_scores(s);
      wgmma_wait<0>();
      mbar_arrive(k_empty + s);
      if (tiles == 1) mbar_arrive(q_empty);  // Q's last use
      softmax(0);
      rescale_and_pack();
      // The first turn is warpgroup 0's.
      if (pingpong && wg == 1) barrier_arrive(other, kConsumers);
    }
    for (int t = 1; t < tiles; ++t) {
      const int cur = it + t, s = cur % STAGES, sp = (cur - 1) % STAGES;
      mbar_wait(k_full + s, (cur / STAGES) & 1);
      mbar_wait(v_full + sp, ((cur - 1) / STAGES) & 1);
      if (pingpong) barrier_sync(mine, kConsumers);
      issue_scores(s);
      issue_pv(sp);
      if (pingpong) barrier_arrive(other, kConsumers);
      wgmma_wait<1>();  // the scores; P V may still run
      mbar_arrive(k_empty + s);
      if (t == tiles - 1) mbar_arrive(q_empty);  // Q's last use
      softmax(t);
      wgmma_wait<0>();
      pin(o);
      mbar_arrive(v_empty + sp);
      rescale_and_pack();
    }
    if (tiles > 0) {
      const int last_tile = it + tiles - 1, s = last_tile % STAGES;
      mbar_wait(v_full + s, (last_tile / STAGES) & 1);
      if (pingpong) barrier_sync(mine, kConsumers);
      issue_pv(s);
      // Warpgroup 1's last turn is the item's last: its arrival would have no sync to meet.
      if (pingpong && wg == 0) barrier_arrive(other, kConsumers);
      wgmma_wait<0>();
      pin(o);
      mbar_arrive(v_empty + s);
      it += tiles;
    }

    // Each row normalized (the sink joining its sum) and written, with its LSE.
    const float s2 = sink2(a, w.h);
    T* og = static_cast<T*>(a.o) + w.b * a.o_sb + w.h * a.o_sh;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int i = w.m0 + 64 * wg + 16 * warp + g + 8 * hh;
      const RowEnd end = end_row(m[hh], quad_sum(l[hh]), s2);
      if (i >= w.sq.nq) continue;
      store_row<T>(og + int64_t(i) * a.o_ss + 2 * t4, o, hh, end.factor);
      if (t4 == 0 && a.lse != nullptr)
        a.lse[(int64_t(w.b) * a.q_heads + w.h) * a.q_len + i] = end.lse;
    }
  }
#else
  __trap();  // built for sm_90a only (the provider refuses other devices)
#endif
}

template <class T, int D>
void launch_typed(const FlashSm90Args& a, cudaStream_t stream) {
  constexpr int smem = Cfg<D>::kSmemBytes;
  static const cudaError_t set = cudaFuncSetAttribute(
      flash_sm90_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  ATTNPROF_CUDA(set);
  Params p;
  p.a = a;
  p.q = swizzled_tensor_map(
      TensorView4{a.q, a.batch, a.q_heads, a.q_len, D, a.q_sb, a.q_sh, a.q_ss}, a.dtype, kRows);
  p.k = swizzled_tensor_map(
      TensorView4{a.k, a.batch, a.kv_heads, a.kv_len, D, a.kv_sb, a.kv_sh, a.kv_ss}, a.dtype,
      Cfg<D>::BC);
  p.v = swizzled_tensor_map(
      TensorView4{a.v, a.batch, a.kv_heads, a.kv_len, D, a.kv_sb, a.kv_sh, a.kv_ss}, a.dtype,
      Cfg<D>::BC);
  flash_sm90_kernel<T, D><<<unsigned(a.ctas), kFlashSm90Threads, smem, stream>>>(p);
  ATTNPROF_CUDA(cudaGetLastError());
}

}  // namespace

int flash_sm90_smem_bytes(int head_dim) {
  return FlashSm90HeadDims::dispatch(head_dim, "cuda.flash.sm90",
                                     [](auto d) { return Cfg<decltype(d)::value>::kSmemBytes; });
}

void launch_flash_sm90(const FlashSm90Args& a, cudaStream_t stream) {
  dispatch_dtype<__half, __nv_bfloat16>(a.dtype, "cuda.flash.sm90", [&](auto t) {
    FlashSm90HeadDims::dispatch(a.head_dim, "cuda.flash.sm90", [&](auto d) {
      launch_typed<decltype(t), decltype(d)::value>(a, stream);
    });
  });
}

}  // namespace attnprof::cuda
