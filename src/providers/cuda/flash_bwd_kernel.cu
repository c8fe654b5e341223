// cuda.flash's backward kernels (flash_bwd_kernel.cuh).
//
// The key-block kernel computes S^T = K Q^T rather than S, so that P^T and dS^T land with keys
// as rows: the A operand of dV += P^T dO and dK += dS^T Q once stored to shared memory (plain
// ldmatrix), and, read back by ldmatrix.trans, dS as dQ += dS K's. dO and Q are B operands read
// by ldmatrix (plain for the scores' k = D, transposed for the gradients' k = queries). Q and dO
// (and each query row's LSE and D) are double-buffered: the next block's copies run during this
// block's five products. Most of its cost is shared-memory traffic (ldmatrix) and its latency,
// so the warps' tiles are chosen for the fewest fragment loads per mma.
#include "providers/cuda/flash_bwd_kernel.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/attention_rows.cuh"
#include "providers/cuda/flash_bwd_common.cuh"
#include "providers/cuda/warp_mma.cuh"

namespace attnprof::cuda {

namespace {

constexpr int kKeys = kFlashBwdKeys;  // keys per CTA
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
// Queries per step of the key-block kernel: 128 at D 64, 64 at D 128 (the registers hold two
// score tiles of 32 keys x half the step, and dK and dV).
constexpr int step_queries(int head_dim) {
  return head_dim == 64 ? 128 : 64;
}
// Shared memory, in elements of the dtype: K and V (kKeys rows of D + 8), two buffers of Q and
// of dO (a step's rows), P^T and dS^T (kKeys rows of the step's queries + 8, padded by 16
// bytes); then fp32: two buffers of the queries' LSE (base 2) and of D.
constexpr int smem_of(int head_dim) {
  const int qs = step_queries(head_dim);
  return (2 * kKeys * (head_dim + 8) + 4 * qs * (head_dim + 8) + 2 * kKeys * (qs + 8)) * 2 +
         4 * qs * 4;
}

// 1. D_i = dO_i . O_i, and dQ's accumulator zeroed: a warp per query row.
template <class T, int D>
__global__ void __launch_bounds__(128) delta_kernel(const __grid_constant__ FlashBwdArgs a) {
  const int64_t row = int64_t(blockIdx.x) * 4 + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= int64_t(a.batch) * a.q_heads * a.q_len) return;
  const int i = int(row % a.q_len);
  const int h = int(row / a.q_len % a.q_heads), b = int(row / a.q_len / a.q_heads);
  const T* o = static_cast<const T*>(a.o) + b * a.o_sb + h * a.o_sh + i * a.o_ss;
  const T* d = static_cast<const T*>(a.d_o) + b * a.do_sb + h * a.do_sh + i * a.do_ss;
  float sum = 0;
#pragma unroll
  for (int c = lane; c < D; c += 32) sum += static_cast<float>(o[c]) * static_cast<float>(d[c]);
  sum = warp_sum(sum);
  if (lane == 0) a.delta[row] = sum;
  if (a.dq_acc == nullptr) return;  // the deterministic option
  float* acc = a.dq_acc + row * D;
#pragma unroll
  for (int c = lane; c < D; c += 32) acc[c] = 0;
}

// c = A B^T for MT x 16 rows of A from `a` and NT x 8 rows of B from `b`, k = D (both row-major
// in shared memory, rows of D + 8): the scores' and dP's products. A step of k = 16 holds MT A
// fragments and one B fragment of two n-blocks, to keep the registers live beside the products'
// accumulators few.
template <class T, int D, int MT, int NT>
__device__ __forceinline__ void tile_product(float (&c)[MT][NT][4], const T* a, const T* b) {
  constexpr int ROW = D + 8;
  const int lane = threadIdx.x & 31, mi = lane >> 3, ri = lane & 7;
  a += ((mi & 1) * 8 + ri) * ROW + (mi >> 1) * 8;  // A: rows 0-7, 8-15 x columns 0-7, 8-15
  b += ((mi >> 1) * 8 + ri) * ROW + (mi & 1) * 8;  // B: two n-blocks' columns 0-7, 8-15
  zero(c);
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    uint32_t af[MT][4];
#pragma unroll
    for (int m = 0; m < MT; ++m) ldmatrix4(af[m], a + m * 16 * ROW + kk * 16);
#pragma unroll
    for (int n = 0; n < NT; n += 2) {
      uint32_t bf[4];
      ldmatrix4(bf, b + n * 8 * ROW + kk * 16);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        mma<T>(c[m][n], af[m], bf[0], bf[1]);
        mma<T>(c[m][n + 1], af[m], bf[2], bf[3]);
      }
    }
  }
}

// c += A B for the warp's 32 keys (A: 32 rows of P^T or dS^T from `a`, rows of QS + 8, by
// ldmatrix) and half of D (B: the step's QS rows of dO or Q from `b`, rows of D + 8, by
// ldmatrix.trans), k = the step's queries: dV's and dK's products.
template <class T, int D, int QS, int NV>
__device__ __forceinline__ void keys_by_queries(float (&c)[2][NV][4], const T* a, const T* b) {
  constexpr int ROW = D + 8, SROW = QS + 8;
  const int lane = threadIdx.x & 31, mi = lane >> 3, ri = lane & 7;
  a += ((mi & 1) * 8 + ri) * SROW + (mi >> 1) * 8;
  b += (ri + (mi & 1) * 8) * ROW + (mi >> 1) * 8;
#pragma unroll
  for (int kq = 0; kq < QS / 16; ++kq) {
    uint32_t af[2][4];
#pragma unroll
    for (int m = 0; m < 2; ++m) ldmatrix4(af[m], a + m * 16 * SROW + kq * 16);
#pragma unroll
    for (int nb = 0; nb < NV; nb += 2) {
      uint32_t bf[4];
      ldmatrix4_trans(bf, b + kq * 16 * ROW + nb * 8);
#pragma unroll
      for (int m = 0; m < 2; ++m) {
        mma<T>(c[m][nb], af[m], bf[0], bf[1]);
        mma<T>(c[m][nb + 1], af[m], bf[2], bf[3]);
      }
    }
  }
}

// 2. dK and dV of a block of keys; dQ's share added to the accumulator (kDQ; the deterministic
// option leaves dQ to dq_rows_kernel). The eight warps split each product's output tile
// (FlashAttention-2's arrangement): the scores S^T = K Q^T and dP^T = V dO^T as 4 x 2 tiles of
// 32 keys x half the step's queries; dV += P^T dO and dK += dS^T Q as 32 keys x half of D; dQ
// += dS K as 32 queries x 32 columns. Each warp so loads fewer fragments per mma than when it
// owns whole rows, at the price of P^T and dS^T going through shared memory.
template <class T, int D, bool kDQ>
__global__ void __launch_bounds__(kThreads, 1) kv_kernel(const __grid_constant__ FlashBwdArgs a) {
  constexpr int ROW = D + 8, CH = D / 8;
  constexpr int QS = step_queries(D), SROW = QS + 8, QW = QS / 2;  // QW: a warp's scores' queries
  constexpr int NV = D / 16;       // dV and dK: n-blocks of 8 columns in half of D
  constexpr int QG = QS / 32;      // dQ: groups of 32 queries, each over 8 / QG column groups
  constexpr int DQC = D * QG / 8;  // dQ: a warp's columns
  constexpr int NC = DQC / 8;      // dQ: n-blocks in them
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* ks = reinterpret_cast<T*>(smem_raw);
  T* vs = ks + kKeys * ROW;
  T* qs = vs + kKeys * ROW;                                   // [2][QS][ROW]
  T* dos = qs + 2 * QS * ROW;                                 // [2][QS][ROW]
  T* ps = dos + 2 * QS * ROW;                                 // P^T [kKeys][SROW]
  T* ss = ps + kKeys * SROW;                                  // dS^T [kKeys][SROW]
  float* lses = reinterpret_cast<float*>(ss + kKeys * SROW);  // [2][QS]
  float* dlt = lses + 2 * QS;                                 // [2][QS]

  const int kb = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
  const int mi = lane >> 3, ri = lane & 7;  // ldmatrix: this lane's matrix and row
  const int G = a.q_heads / a.kv_heads;
  const Seq sq = seq_of(a, b);
  const int k0 = kb * kKeys, k1 = min(k0 + kKeys, sq.nk) - 1;  // the block's first and last keys
  // The warp's keys (scores, dV and dK): kr... kr + 31 of the block; its queries in the scores:
  // qr... qr + QW - 1 of the step; its half of D in dV and dK.
  const int kr = 32 * (warp & 3), qr = QW * (warp >> 2), half = (warp >> 2) * (D / 2);
  const int w0 = k0 + kr;  // the warp's first key
  const T* k = static_cast<const T*>(a.k);
  const T* v = static_cast<const T*>(a.v);
  const T* q = static_cast<const T*>(a.q);
  const T* d_o = static_cast<const T*>(a.d_o);

  const QueryBlocks seen = query_blocks(a, sq, k0, k1, QS);
  const int qb_lo = seen.first, blocks = seen.count;  // query blocks per head
  const int steps = G * blocks;

  for (int c = threadIdx.x; c < kKeys * CH; c += kThreads) {
    const int r = c / CH, col = (c % CH) * 8;
    const bool valid = k0 + r < sq.nk;
    const int64_t at = b * a.kv_sb + kvh * a.kv_sh + int64_t(k0 + r) * a.kv_ss + col;
    copy16(ks + r * ROW + col, valid ? k + at : k, valid);
    copy16(vs + r * ROW + col, valid ? v + at : v, valid);
  }
  // Step t's query head and block: Q and dO copied in (this thread's rows lr, lr + RSTEP, ...
  // and columns lc...lc + 7), and each row's LSE and D.
  constexpr int RSTEP = kThreads / CH;
  const int lr = threadIdx.x / CH, lc = (threadIdx.x % CH) * 8;
  auto load = [&](int t) {
    const int hq = t / blocks;
    const int h = kvh * G + hq, q0 = (qb_lo + t - hq * blocks) * QS, buf = t & 1;
    const T* qsrc = q + b * a.q_sb + h * a.q_sh + int64_t(q0 + lr) * a.q_ss + lc;
    const T* dsrc = d_o + b * a.do_sb + h * a.do_sh + int64_t(q0 + lr) * a.do_ss + lc;
    T* qdst = qs + (buf * QS + lr) * ROW + lc;
    T* ddst = dos + (buf * QS + lr) * ROW + lc;
#pragma unroll
    for (int i = 0; i < QS / RSTEP; ++i) {
      const bool valid = q0 + lr + i * RSTEP < sq.nq;
      copy16(qdst + i * RSTEP * ROW, valid ? qsrc : q, valid);
      copy16(ddst + i * RSTEP * ROW, valid ? dsrc : d_o, valid);
      qsrc += RSTEP * a.q_ss;
      dsrc += RSTEP * a.do_ss;
    }
    if (threadIdx.x < QS) {
      const int i = q0 + threadIdx.x;
      const int64_t row = (int64_t(b) * a.q_heads + h) * a.q_len + i;
      // Copied, not loaded: a load here would hold these warps for its latency every step.
      // Rows past the sequence read 0; their scores are masked.
      const bool valid = i < sq.nq;
      copy4(lses + buf * QS + threadIdx.x, valid ? a.lse + row : a.lse, valid);
      copy4(dlt + buf * QS + threadIdx.x, valid ? a.delta + row : a.delta, valid);
    }
  };
  if (steps > 0) load(0);
  commit_copies();

  float dv[2][NV][4], dk[2][NV][4];
  zero(dv);
  zero(dk);
  const float sl2 = a.scale * kLog2e;
  // dQ's share: queries dq_r... dq_r + 31 of the step, columns dq_c... dq_c + DQC - 1.
  const int dq_r = 32 * (warp % QG), dq_c = (warp / QG) * DQC;

  for (int t = 0; t < steps; ++t) {
    wait_copies<0>();
    __syncthreads();  // step t's tiles landed; every warp is past step t - 1
    if (t + 1 < steps) load(t + 1);
    commit_copies();
    const int hq = t / blocks;
    const int h = kvh * G + hq, q0 = (qb_lo + t - hq * blocks) * QS, buf = t & 1;
    const T* qb = qs + buf * QS * ROW;
    const T* db = dos + buf * QS * ROW;
    const float* lb = lses + buf * QS;
    const float* dd = dlt + buf * QS;

    // S^T = K Q^T: the warp's 32 keys x QW queries. P^T = 2^(scale S^T log2 e - LSE_2) where
    // the mask lets query i see the key (0 elsewhere, and past the sequence); the mask is tested
    // only where the warp's tile is not wholly seen: every query of it in the sequence and
    // seeing all of its keys.
    float s[2][QW / 8][4], dp[2][QW / 8][4];
    tile_product<T, D>(s, ks + kr * ROW, qb + qr * ROW);
    const int qa = q0 + qr;
    bool whole = qa + QW <= sq.nq && w0 + 32 <= sq.nk;
    if (a.mask != MaskKind::none) whole = whole && qa + sq.off >= w0 + 31;
    if (a.mask == MaskKind::window) whole = whole && qa + QW - 1 + sq.off - a.window + 1 <= w0;
    // The lane's offset in P^T and dS^T of its (m, n, hh) pair: rows kr + 16 m + g + 8 hh,
    // columns qr + 8 n + 2 t4.
    const int st_lane = (kr + g) * SROW + qr + 2 * t4;
    // P^T and dP^T's product in one basic block for each path, with no shared-memory store
    // between them, so that the compiler can issue the exponents among the product's mma.
    auto p_then_dp = [&](auto masked) {
#pragma unroll
      for (int m = 0; m < 2; ++m)
#pragma unroll
        for (int n = 0; n < QW / 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int qi = qr + n * 8 + 2 * t4 + (e & 1);
            const float x = s[m][n][e] * sl2 - lb[qi] * kLog2e;
            if constexpr (decltype(masked)::value) {
              const int key = w0 + m * 16 + g + 8 * (e >> 1), i = q0 + qi;
              // Every test evaluated (& not &&): no branches in the block.
              const bool seen =
                  (i < sq.nq) & (key >= first_key(a, sq, i)) & (key <= last_key(a, sq, i));
              s[m][n][e] = seen ? fast_exp2(x) : 0.f;
            } else {
              s[m][n][e] = fast_exp2(x);
            }
          }
      tile_product<T, D>(dp, vs + kr * ROW, db + qr * ROW);  // dP^T = V dO^T
    };
    if (whole) {
      p_then_dp(std::false_type{});
    } else {
      p_then_dp(std::true_type{});
    }
    // P^T and dS^T = P^T (dP^T - D) to shared memory.
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
      for (int n = 0; n < QW / 8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int qi = qr + n * 8 + 2 * t4 + (e & 1);
          dp[m][n][e] = s[m][n][e] * (dp[m][n][e] - dd[qi]);
        }
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int at = st_lane + (m * 16 + 8 * hh) * SROW + n * 8;
          *reinterpret_cast<uint32_t*>(ps + at) = pack2<T>(s[m][n][2 * hh], s[m][n][2 * hh + 1]);
          *reinterpret_cast<uint32_t*>(ss + at) = pack2<T>(dp[m][n][2 * hh], dp[m][n][2 * hh + 1]);
        }
      }
    __syncthreads();  // P^T and dS^T complete

    // dV += P^T dO, then dQ += dS K and its atomics, then dK += dS^T Q: the atomics issue under
    // dK's products.
    keys_by_queries<T, D, QS>(dv, ps + kr * SROW, db + half);
    if constexpr (kDQ) {
      // dQ += dS K for the warp's 32 queries and DQC columns (A: dS^T by ldmatrix.trans; B: K
      // by ldmatrix.trans), over the block's keys, added to the accumulator.
      float acc[2][NC][4];
      zero(acc);
#pragma unroll
      for (int kk = 0; kk < kKeys / 16; ++kk) {
        uint32_t af[2][4];
#pragma unroll
        for (int m = 0; m < 2; ++m)
          ldmatrix4_trans(
              af[m], ss + (16 * kk + (mi >> 1) * 8 + ri) * SROW + dq_r + m * 16 + (mi & 1) * 8);
#pragma unroll
        for (int nb = 0; nb < NC; nb += 2) {
          uint32_t bf[4];
          ldmatrix4_trans(bf,
                          ks + (16 * kk + ri + (mi & 1) * 8) * ROW + dq_c + (nb + (mi >> 1)) * 8);
#pragma unroll
          for (int m = 0; m < 2; ++m) {
            mma<T>(acc[m][nb], af[m], bf[0], bf[1]);
            mma<T>(acc[m][nb + 1], af[m], bf[2], bf[3]);
          }
        }
      }
      const int64_t row0 = (int64_t(b) * a.q_heads + h) * a.q_len + q0 + dq_r;
#pragma unroll
      for (int m = 0; m < 2; ++m)
        add_dq<D>(a.dq_acc + (row0 + m * 16) * D, sq.nq - (q0 + dq_r + m * 16), dq_c, acc[m],
                  a.dq_acc + (row0 - dq_r) * D);
    }
    keys_by_queries<T, D, QS>(dk, ss + kr * SROW, qb + half);
  }
  wait_copies<0>();

  // dK (x scale) and dV of the warp's keys and half of D, in the dtype.
  T* dkp = static_cast<T*>(a.dk) + b * a.dkv_sb + kvh * a.dkv_sh;
  T* dvp = static_cast<T*>(a.dv) + b * a.dkv_sb + kvh * a.dkv_sh;
#pragma unroll
  for (int m = 0; m < 2; ++m)
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int key = w0 + m * 16 + g + 8 * hh;
      if (key >= sq.nk) continue;
#pragma unroll
      for (int nb = 0; nb < NV; ++nb) {
        const int64_t at = int64_t(key) * a.dkv_ss + half + nb * 8 + 2 * t4;
        *reinterpret_cast<uint32_t*>(dkp + at) =
            pack2<T>(dk[m][nb][2 * hh] * a.scale, dk[m][nb][2 * hh + 1] * a.scale);
        *reinterpret_cast<uint32_t*>(dvp + at) = pack2<T>(dv[m][nb][2 * hh], dv[m][nb][2 * hh + 1]);
      }
    }
}

// 3. dQ = scale x the accumulator, eight columns a thread.
template <class T, int D>
__global__ void __launch_bounds__(256) dq_kernel(const __grid_constant__ FlashBwdArgs a) {
  const int64_t item = int64_t(blockIdx.x) * 256 + threadIdx.x;
  if (item >= int64_t(a.batch) * a.q_heads * a.q_len * (D / 8)) return;
  const int64_t row = item / (D / 8);
  const int col = int(item % (D / 8)) * 8;
  const int i = int(row % a.q_len);
  const int h = int(row / a.q_len % a.q_heads), b = int(row / a.q_len / a.q_heads);
  const float* acc = a.dq_acc + row * D + col;
  alignas(16) T out[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) out[e] = narrow<T>(acc[e] * a.scale);
  *reinterpret_cast<uint4*>(static_cast<T*>(a.dq) + b * a.dq_sb + h * a.dq_sh + i * a.dq_ss + col) =
      *reinterpret_cast<const uint4*>(out);
}

// 4. The deterministic option's dQ: a CTA per block of kDqRows queries of one head, four warps of
// 16 rows; the key tiles the block sees stream through shared memory (K and V double-buffered), S =
// Q K^T and dP = dO V^T are computed again, and dQ += dS K is summed in registers in key order and
// written once: the same bits every launch.
constexpr int kDqRows = kFlashBwdQueries;
constexpr int kDqWarps = kDqRows / 16;
constexpr int kDqKeys = kDqRows;  // keys per tile
constexpr int dq_smem_of(int head_dim) {
  return (2 * kDqRows + 4 * kDqKeys) * (head_dim + 8) * 2;
}

template <class T, int D>
__global__ void __launch_bounds__(kDqWarps * 32, 2)
    dq_rows_kernel(const __grid_constant__ FlashBwdArgs a) {
  constexpr int ROW = D + 8, CH = D / 8, NB = D / 8, KT = kDqKeys, NT = kDqWarps * 32;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* qs = reinterpret_cast<T*>(smem_raw);  // [kDqRows][ROW]
  T* dos = qs + kDqRows * ROW;             // [kDqRows][ROW]
  T* ks = dos + kDqRows * ROW;             // [2][KT][ROW]
  T* vs = ks + 2 * KT * ROW;               // [2][KT][ROW]
  const int h = blockIdx.y, b = blockIdx.z;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
  const int mi = lane >> 3, ri = lane & 7;
  const int kvh = h / (a.q_heads / a.kv_heads);
  const Seq sq = seq_of(a, b);
  const int q0 = blockIdx.x * kDqRows;
  if (q0 >= sq.nq) return;
  const T* q = static_cast<const T*>(a.q);
  const T* d_o = static_cast<const T*>(a.d_o);
  const T* k = static_cast<const T*>(a.k);
  const T* v = static_cast<const T*>(a.v);

  // The key tiles: from the first row's first key to the last row's last.
  const int key_lo = first_key(a, sq, q0), key_hi = last_key(a, sq, min(q0 + kDqRows, sq.nq) - 1);
  const int kt_lo = key_lo / KT;
  const int tiles = key_hi >= key_lo ? key_hi / KT - kt_lo + 1 : 0;

  for (int c = threadIdx.x; c < kDqRows * CH; c += NT) {
    const int r = c / CH, col = (c % CH) * 8;
    const bool valid = q0 + r < sq.nq;
    const int64_t qa = b * a.q_sb + h * a.q_sh + int64_t(q0 + r) * a.q_ss + col;
    const int64_t da = b * a.do_sb + h * a.do_sh + int64_t(q0 + r) * a.do_ss + col;
    copy16(qs + r * ROW + col, valid ? q + qa : q, valid);
    copy16(dos + r * ROW + col, valid ? d_o + da : d_o, valid);
  }
  auto load = [&](int j) {
    const int k0 = (kt_lo + j) * KT, buf = j & 1;
    for (int c = threadIdx.x; c < KT * CH; c += NT) {
      const int r = c / CH, col = (c % CH) * 8;
      const bool valid = k0 + r < sq.nk;
      const int64_t at = b * a.kv_sb + kvh * a.kv_sh + int64_t(k0 + r) * a.kv_ss + col;
      copy16(ks + (buf * KT + r) * ROW + col, valid ? k + at : k, valid);
      copy16(vs + (buf * KT + r) * ROW + col, valid ? v + at : v, valid);
    }
  };
  if (tiles > 0) load(0);
  commit_copies();

  // This lane's rows r0 and r0 + 8: their LSE (base 2) and D.
  const int w0 = q0 + warp * 16, r0 = w0 + g;
  float lse2[2], dlt[2];
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int i = r0 + 8 * hh;
    const int64_t row = (int64_t(b) * a.q_heads + h) * a.q_len + i;
    lse2[hh] = i < sq.nq ? a.lse[row] * kLog2e : INFINITY;
    dlt[hh] = i < sq.nq ? a.delta[row] : 0.f;
  }
  float acc[NB][4];
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[nb][e] = 0;
  const float sl2 = a.scale * kLog2e;

  for (int j = 0; j < tiles; ++j) {
    wait_copies<0>();
    __syncthreads();  // tile j landed; every warp is past tile j - 1
    if (j + 1 < tiles) load(j + 1);
    commit_copies();
    const int k0 = (kt_lo + j) * KT, buf = j & 1;
    const T* kb = ks + buf * KT * ROW;
    const T* vb = vs + buf * KT * ROW;
    float s[1][8][4], dp1[1][8][4];
    tile_product<T, D>(s, qs + warp * 16 * ROW, kb);
    tile_product<T, D>(dp1, dos + warp * 16 * ROW, vb);
    float(&dp)[8][4] = dp1[0];
    // dS = P (dP - D), the mask tested where the warp's 16 rows do not all see the whole tile.
    bool whole = w0 + 16 <= sq.nq && k0 + KT <= sq.nk;
    if (a.mask != MaskKind::none) whole = whole && w0 + sq.off >= k0 + KT - 1;
    if (a.mask == MaskKind::window) whole = whole && w0 + 15 + sq.off - a.window + 1 <= k0;
#pragma unroll
    for (int nb = 0; nb < 8; ++nb)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int hh = e >> 1, i = r0 + 8 * hh, key = k0 + nb * 8 + 2 * t4 + (e & 1);
        const bool seen =
            whole || (i < sq.nq && key >= first_key(a, sq, i) && key <= last_key(a, sq, i));
        const float p = seen ? fast_exp2(s[0][nb][e] * sl2 - lse2[hh]) : 0.f;
        dp[nb][e] = p * (dp[nb][e] - dlt[hh]);
      }
      // dQ += dS K: A from the accumulators (k = 16 keys a step), B = K by ldmatrix.trans.
#pragma unroll
    for (int kq = 0; kq < KT / 16; ++kq) {
      uint32_t sa[4];
      a_fragment<T>(sa, dp, kq);
#pragma unroll
      for (int nb = 0; nb < NB; nb += 2) {
        uint32_t bf[4];
        ldmatrix4_trans(bf, kb + (kq * 16 + ri + (mi & 1) * 8) * ROW + (nb + (mi >> 1)) * 8);
        mma<T>(acc[nb], sa, bf[0], bf[1]);
        mma<T>(acc[nb + 1], sa, bf[2], bf[3]);
      }
    }
  }
  wait_copies<0>();

  T* dq = static_cast<T*>(a.dq) + b * a.dq_sb + h * a.dq_sh;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int i = r0 + 8 * hh;
    if (i >= sq.nq) continue;
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
      *reinterpret_cast<uint32_t*>(dq + int64_t(i) * a.dq_ss + nb * 8 + 2 * t4) =
          pack2<T>(acc[nb][2 * hh] * a.scale, acc[nb][2 * hh + 1] * a.scale);
  }
}

// Step 2 on mma.sync: the key blocks, dQ's share added to the accumulator unless deterministic.
template <class T, int D>
void launch_key_blocks(const FlashBwdArgs& a, cudaStream_t stream) {
  const int smem = smem_of(D);
  static const cudaError_t set = cudaFuncSetAttribute(
      kv_kernel<T, D, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  static const cudaError_t set_det = cudaFuncSetAttribute(
      kv_kernel<T, D, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  const dim3 grid(unsigned((a.kv_len + kKeys - 1) / kKeys), unsigned(a.kv_heads),
                  unsigned(a.batch));
  if (a.dq_acc != nullptr) {
    ATTNPROF_CUDA(set);
    kv_kernel<T, D, true><<<grid, kThreads, smem, stream>>>(a);
  } else {
    ATTNPROF_CUDA(set_det);
    kv_kernel<T, D, false><<<grid, kThreads, smem, stream>>>(a);
  }
  ATTNPROF_CUDA(cudaGetLastError());
}

template <class T, int D>
void launch_typed(const FlashBwdArgs& a, cudaStream_t stream, FlashBwdKeyBlocks key_blocks) {
  const int64_t rows = int64_t(a.batch) * a.q_heads * a.q_len;
  delta_kernel<T, D><<<unsigned((rows + 3) / 4), 128, 0, stream>>>(a);
  ATTNPROF_CUDA(cudaGetLastError());
  (key_blocks != nullptr ? key_blocks : launch_key_blocks<T, D>)(a, stream);
  if (a.dq_acc != nullptr) {
    dq_kernel<T, D><<<unsigned((rows * (D / 8) + 255) / 256), 256, 0, stream>>>(a);
  } else {
    static const cudaError_t set_rows = cudaFuncSetAttribute(
        dq_rows_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, dq_smem_of(D));
    ATTNPROF_CUDA(set_rows);
    const dim3 rows_grid(unsigned((a.q_len + kDqRows - 1) / kDqRows), unsigned(a.q_heads),
                         unsigned(a.batch));
    dq_rows_kernel<T, D><<<rows_grid, kDqWarps * 32, dq_smem_of(D), stream>>>(a);
  }
  ATTNPROF_CUDA(cudaGetLastError());
}

}  // namespace

int64_t flash_bwd_workspace_floats(int64_t batch, int64_t q_heads, int64_t q_len, int64_t head_dim,
                                   bool deterministic) {
  return batch * q_heads * q_len * (deterministic ? 1 : head_dim + 1);
}

void place_flash_bwd_workspace(FlashBwdArgs& a, float* workspace, bool deterministic) {
  const int64_t rows = int64_t(a.batch) * a.q_heads * a.q_len;
  a.dq_acc = deterministic ? nullptr : workspace;
  a.delta = deterministic ? workspace : workspace + rows * a.head_dim;
}

int flash_bwd_smem_bytes(int head_dim) {
  return smem_of(head_dim);
}

int flash_bwd_step_queries(int head_dim) {
  return step_queries(head_dim);
}

void launch_flash_bwd(const FlashBwdArgs& a, cudaStream_t stream, FlashBwdKeyBlocks key_blocks) {
  if (reinterpret_cast<std::uintptr_t>(a.dq_acc) % 16 != 0)
    throw std::logic_error("cuda.flash backward: dQ's accumulator must be 16-byte aligned");
  dispatch_dtype<__half, __nv_bfloat16>(a.dtype, "cuda.flash backward", [&](auto t) {
    FlashBwdHeadDims::dispatch(a.head_dim, "cuda.flash backward", [&](auto d) {
      launch_typed<decltype(t), decltype(d)::value>(a, stream, key_blocks);
    });
  });
}

}  // namespace attnprof::cuda
