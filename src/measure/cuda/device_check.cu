// The device check's kernels (device_check.hpp; the check itself: device_verify.hpp).
//
// Three kernels, each a warp per output row and kWarps rows per block sharing shared-memory tiles
// of 32 rows of the other side (a lane each; 16 or 8 where the head dimensions need more shared
// memory than a block may have):
//  - forward: per query row, an online softmax over key tiles (running max and sum in double),
//    O's reference accumulated in double; compares O and the LSE; in backward modes it keeps the
//    row's reference LSE and D = dO . O_ref for the gradient kernels;
//  - dQ: per query row, P = exp(s - lse), dP = dO . V, dS = P (dP - D), dQ = scale sum dS K;
//  - dK/dV: per key row, over the query tiles of every query head of its group: dV = sum P dO,
//    dK = scale sum dS Q.
// Inputs are read in their dtype and widened to double (exact), so the reference is the fp64
// reference of reference.hpp, summed in another order. Lanes own the keys (queries) of a tile
// for the scores and the output's features for the accumulation; the accumulators live in
// shared memory, a row of doubles per warp, so any head dimension that fits in shared memory
// works. A separate pass counts the non-finite elements of every output.
#include "measure/cuda/device_check.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "measure/cuda/check_common.cuh"
#include "measure/cuda/device_check_gemm.hpp"
#include "measure/cuda/device_check_kept.hpp"
#include "measure/cuda/device_check_pick.hpp"

namespace attnprof::cuda {

namespace {

constexpr int kWarps = 8;  // output rows per block
constexpr int kLanes = 32;
constexpr int kThreads = kWarps * kLanes;

// Per-row sums written for the host: squared error, squared reference, largest error.
struct RowSums {
  double* err2 = nullptr;
  double* ref2 = nullptr;
  double* max_abs = nullptr;
  double* floor = nullptr;  // O and dQ rows: RowCheck::floor
};

struct Shape {
  int64_t batch, q_heads, kv_heads, q_len, kv_len, d, dv;
  double scale;
  DevMask mask;
  ScoreMods mods;  // forward only (the spec allows neither in backward modes)
  int tile;        // rows of the other side per shared-memory tile: 32 (one per lane), 16 or 8
};

// A row's sums from this lane's partial ones, written by lane 0. A NaN anywhere is the worst
// error there is (inf); fmax drops NaNs from the largest error, as std::max does on the host.
__device__ void finish_row(const RowSums& out, int64_t row, double e2, double r2, double mx) {
  e2 = warp_sum(e2);
  r2 = warp_sum(r2);
  mx = warp_max(mx);
  if ((threadIdx.x & 31) == 0) {
    out.err2[row] = nan_as_inf(e2);
    out.ref2[row] = r2;
    out.max_abs[row] = mx;
  }
}

// Loads rows [r0, r0 + rows) of (b, h) of `t` into a (rows x (dim + 1)) tile of doubles (the
// odd stride keeps a lane per row free of bank conflicts), zeros past `len`.
template <class T>
__device__ void load_tile(double* tile, const View<T>& t, int64_t b, int64_t h, int64_t r0,
                          int rows, int64_t len, int64_t dim) {
  for (int64_t idx = threadIdx.x; idx < rows * dim; idx += blockDim.x) {
    const int64_t r = idx / dim, d = idx % dim;
    tile[r * (dim + 1) + d] = r0 + r < len ? t.at(b, h, r0 + r, d) : 0.0;
  }
}

struct ForwardArgs {
  Shape s;
  RowSums o_out;               // O rows (o_out.err2 null: O not checked)
  const float* lse;            // the provider's LSE (null: none)
  double* lse_err;             // |lse - lse_ref| per row
  double* lse_ref;             // backward modes: the reference LSE per row (else null)
  double* delta;               // backward modes: dO . O_ref per row
  double* dsum;                // backward modes: sum_c |dO_c O_ref_c| per row (the dQ floor's)
  double* o_keep = nullptr;    // mode fwd: O_ref per element to keep (device_check_kept.hpp)
  double* lse_keep = nullptr;  // mode fwd: the reference LSE per row to keep
};

// Where a block's rows are: (batch, head) and the first row, for blocks of kWarps rows over
// `heads` heads of `len` rows.
struct BlockRows {
  int64_t bh, b, h, r0, r_last;
};
__device__ BlockRows block_rows(int64_t heads, int64_t len) {
  const int64_t per_head = (len + kWarps - 1) / kWarps;
  BlockRows r;
  r.bh = blockIdx.x / per_head;
  r.b = r.bh / heads;
  r.h = r.bh % heads;
  r.r0 = (blockIdx.x % per_head) * kWarps;
  r.r_last = min(r.r0 + kWarps, len) - 1;
  return r;
}

// The warp's query row in a block of kWarps query rows of one (batch, q head): where it is, its
// flat row, the keys it sees ([lo, hi]; none when past the end) and the keys its block sees.
struct QueryRow {
  int64_t b, h, kvh, i, row;
  bool active;   // the warp's row is an output (the others only help load tiles)
  bool padding;  // the row lies in a ragged batch's padding: no output, its sums are zero
  int64_t lo, hi, kv_lo, kv_hi;
};
__device__ QueryRow query_row(const Shape& s) {
  const BlockRows br = block_rows(s.q_heads, s.q_len);
  const DevMask m = s.mask.at(br.b);  // a ragged batch's sequence's lengths
  QueryRow r;
  r.b = br.b;
  r.h = br.h;
  r.kvh = br.h / (s.q_heads / s.kv_heads);
  r.i = br.r0 + threadIdx.x / kLanes;
  r.row = br.bh * s.q_len + r.i;
  r.active = r.i < m.nq;
  r.padding = !r.active && r.i < s.q_len;
  r.lo = m.first(r.i);
  r.hi = r.active ? m.last(r.i) : -1;
  const int64_t last_row = min(br.r_last, m.nq - 1);
  r.kv_lo = m.first(br.r0);
  r.kv_hi = br.r0 <= last_row ? m.last(last_row) : -1;  // a block of padding loads nothing
  return r;
}

// Row (b, h, pos) of `t` into `dst` (dim doubles), the warp's lanes striding over the features.
template <class T>
__device__ void load_row(double* dst, const View<T>& t, int64_t b, int64_t h, int64_t pos,
                         int64_t dim) {
  for (int64_t d = threadIdx.x % kLanes; d < dim; d += kLanes) dst[d] = t.at(b, h, pos, d);
}
__device__ void zero_row(double* dst, int64_t dim) {
  for (int64_t d = threadIdx.x % kLanes; d < dim; d += kLanes) dst[d] = 0;
}

// Lane's dot product of a (dim) row with row `lane` of a (x (dim + 1)) tile.
__device__ __forceinline__ double dot_row(const double* row, const double* tile, int lane,
                                          int64_t dim) {
  double x = 0;
  const double* t = tile + lane * (dim + 1);
  for (int64_t d = 0; d < dim; ++d) x = fma(row[d], t[d], x);
  return x;
}

// acc[d] (+)= sum_t w[t] * tile[t][d] for the lane's features d.
__device__ __forceinline__ void accumulate(double* acc, double corr, const double* w,
                                           const double* tile, int rows, int64_t dim, int lane) {
  for (int64_t d = lane; d < dim; d += kLanes) {
    double x = acc[d] * corr;
    for (int t = 0; t < rows; ++t) x = fma(w[t], tile[t * (dim + 1) + d], x);
    acc[d] = x;
  }
}

// One block: kWarps query rows of one (batch, q head).
template <class T>
__global__ void __launch_bounds__(kThreads)
    forward_kernel(ForwardArgs a, View<T> q, View<T> k, View<T> v, View<T> o, View<T> d_o) {
  extern __shared__ double smem[];
  const Shape& s = a.s;
  const int64_t D = s.d, Dv = s.dv;
  const int tile = s.tile;
  double* ps = smem;                   // kWarps x kLanes probabilities
  double* acc = ps + kWarps * kLanes;  // kWarps x Dv
  double* qs = acc + kWarps * Dv;      // kWarps x D
  double* ks = qs + kWarps * D;        // tile x (D + 1)
  double* vs = ks + tile * (D + 1);    // tile x (Dv + 1)
  const int warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const QueryRow qr = query_row(s);
  const int64_t b = qr.b, h = qr.h, kvh = qr.kvh, i = qr.i, lo = qr.lo, hi = qr.hi;
  const bool active = qr.active;
  double* my_acc = acc + warp * Dv;
  double* my_q = qs + warp * D;
  if (active) load_row(my_q, q, b, h, i, D);
  zero_row(my_acc, Dv);
  double m = -INFINITY, l = 0, w2 = 0;  // w2: sum_j exp(2 (s_j - m)) |v_j|^2
  for (int64_t j0 = qr.kv_lo; j0 <= qr.kv_hi; j0 += tile) {
    __syncthreads();
    load_tile(ks, k, b, kvh, j0, tile, s.kv_len, D);
    load_tile(vs, v, b, kvh, j0, tile, s.kv_len, Dv);
    __syncthreads();
    if (!active) continue;  // the warp's row is past the end: only loads
    const int64_t j = j0 + lane;
    const bool vis = lane < tile && j >= lo && j <= hi;
    const double sc = vis ? s.mods.cap(dot_row(my_q, ks, lane, D) * s.scale) : -INFINITY;
    const double tile_max = warp_max(sc);
    if (tile_max == -INFINITY) continue;  // no visible key in this tile
    const double m_new = fmax(m, tile_max);
    const double corr = exp(m - m_new);  // 0 on the first tile (m = -inf)
    const double p = vis ? exp(sc - m_new) : 0.0;
    const double vn = vis ? dot_row(vs + lane * (Dv + 1), vs, lane, Dv) : 0.0;
    l = l * corr + warp_sum(p);
    w2 = w2 * corr * corr + warp_sum(p * p * vn);
    m = m_new;
    ps[warp * kLanes + lane] = p;
    __syncwarp();
    accumulate(my_acc, corr, ps + warp * kLanes, vs, tile, Dv, lane);
    __syncwarp();
  }
  if (qr.padding && lane == 0 && a.o_out.err2 != nullptr) {  // zero sums: never the worst row
    a.o_out.err2[qr.row] = a.o_out.ref2[qr.row] = a.o_out.max_abs[qr.row] = 0;
    a.o_out.floor[qr.row] = 0;
  }
  if (qr.padding && lane == 0 && a.lse != nullptr) a.lse_err[qr.row] = 0;
  if (!active) return;
  // A sink joins the maximum and the sum with no value row: the accumulator rescales.
  if (const double sk = s.mods.sink_of(h); sk > -INFINITY) {
    const double m_new = fmax(m, sk);
    const double corr = exp(m - m_new);
    for (int64_t d = lane; d < Dv; d += kLanes) my_acc[d] *= corr;
    l = l * corr + exp(sk - m_new);
    w2 *= corr * corr;
    m = m_new;
    __syncwarp();
  }
  const double inv = l > 0 ? 1.0 / l : 0.0;
  const double lse_ref = l > 0 ? m + log(l) : -INFINITY;
  double e2 = 0, r2 = 0, mx = 0, dl = 0, da = 0;
  for (int64_t d = lane; d < Dv; d += kLanes) {
    const double ref = my_acc[d] * inv;
    if (a.o_out.err2) compare(o.at(b, h, i, d), ref, e2, r2, mx);
    if (a.o_keep) a.o_keep[qr.row * Dv + d] = ref;
    if (a.delta) {
      const double x = d_o.at(b, h, i, d) * ref;
      dl += x;
      da += fabs(x);
    }
  }
  const int64_t row = qr.row;
  if (a.o_out.err2) {
    finish_row(a.o_out, row, e2, r2, mx);
    if (lane == 0) a.o_out.floor[row] = sqrt(w2) * inv;
  }
  if (a.delta) {
    dl = warp_sum(dl);
    da = warp_sum(da);
  }
  if (lane != 0) return;
  if (a.lse) a.lse_err[row] = lse_error(a.lse[row], lse_ref);
  if (a.lse_keep) a.lse_keep[row] = lse_ref;
  if (a.delta) {
    a.lse_ref[row] = lse_ref;
    a.delta[row] = dl;
    a.dsum[row] = da;
  }
}

struct GradArgs {
  Shape s;
  const double* lse_ref;  // per query row
  const double* delta;    // per query row
  const double* dsum;     // per query row
  RowSums dq_out, dk_out, dv_out;
};

// dQ: one block holds kWarps query rows of one (batch, q head).
template <class T>
__global__ void __launch_bounds__(kThreads)
    dq_kernel(GradArgs a, View<T> q, View<T> k, View<T> v, View<T> d_o, View<T> dq) {
  extern __shared__ double smem[];
  const Shape& s = a.s;
  const int64_t D = s.d, Dv = s.dv;
  const int tile = s.tile;
  double* ps = smem;                   // kWarps x kLanes dS values
  double* pp = ps + kWarps * kLanes;   // kWarps x kLanes P values
  double* acc = pp + kWarps * kLanes;  // kWarps x D: dQ / scale
  double* kbar = acc + kWarps * D;     // kWarps x D: sum_j P_ij k_j
  double* qs = kbar + kWarps * D;      // kWarps x D
  double* dos = qs + kWarps * D;       // kWarps x Dv
  double* ks = dos + kWarps * Dv;      // tile x (D + 1)
  double* vs = ks + tile * (D + 1);    // tile x (Dv + 1)
  const int warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const QueryRow qr = query_row(s);
  const int64_t b = qr.b, h = qr.h, kvh = qr.kvh, i = qr.i, lo = qr.lo, hi = qr.hi;
  const int64_t row = qr.row;
  const bool active = qr.active;
  double* my_acc = acc + warp * D;
  double* my_q = qs + warp * D;
  double* my_do = dos + warp * Dv;
  if (active) {
    load_row(my_q, q, b, h, i, D);
    load_row(my_do, d_o, b, h, i, Dv);
  }
  double* my_kbar = kbar + warp * D;
  zero_row(my_acc, D);
  zero_row(my_kbar, D);
  const double lse = active ? a.lse_ref[row] : 0.0, delta = active ? a.delta[row] : 0.0;
  for (int64_t j0 = qr.kv_lo; j0 <= qr.kv_hi; j0 += tile) {
    __syncthreads();
    load_tile(ks, k, b, kvh, j0, tile, s.kv_len, D);
    load_tile(vs, v, b, kvh, j0, tile, s.kv_len, Dv);
    __syncthreads();
    if (!active) continue;
    const int64_t j = j0 + lane;
    double p = 0, ds = 0;
    if (lane < tile && j >= lo && j <= hi) {
      p = exp(dot_row(my_q, ks, lane, D) * s.scale - lse);
      ds = p * (dot_row(my_do, vs, lane, Dv) - delta);
    }
    ps[warp * kLanes + lane] = ds;
    pp[warp * kLanes + lane] = p;
    __syncwarp();
    accumulate(my_acc, 1.0, ps + warp * kLanes, ks, tile, D, lane);
    accumulate(my_kbar, 1.0, pp + warp * kLanes, ks, tile, D, lane);
    __syncwarp();
  }
  if (!active) return;
  double e2 = 0, r2 = 0, mx = 0, kb2 = 0;
  for (int64_t d = lane; d < D; d += kLanes) {
    compare(dq.at(b, h, i, d), my_acc[d] * s.scale, e2, r2, mx);
    kb2 += my_kbar[d] * my_kbar[d];
  }
  finish_row(a.dq_out, row, e2, r2, mx);
  kb2 = warp_sum(kb2);
  if (lane == 0) a.dq_out.floor[row] = s.scale * sqrt(kb2) * a.dsum[row];
}

// dK/dV: one block holds kWarps key rows of one (batch, KV head), over the query tiles of every
// query head of the group.
template <class T>
__global__ void __launch_bounds__(kThreads)
    dkdv_kernel(GradArgs a, View<T> q, View<T> k, View<T> v, View<T> d_o, View<T> dk, View<T> dv) {
  extern __shared__ double smem[];
  const Shape& s = a.s;
  const int64_t D = s.d, Dv = s.dv;
  const int tile = s.tile;
  double* ps = smem;                      // kWarps x kLanes P values
  double* dss = ps + kWarps * kLanes;     // kWarps x kLanes dS values
  double* acc_k = dss + kWarps * kLanes;  // kWarps x D
  double* acc_v = acc_k + kWarps * D;     // kWarps x Dv
  double* kw = acc_v + kWarps * Dv;       // kWarps x D: the warps' key rows
  double* vw = kw + kWarps * D;           // kWarps x Dv
  double* lses = vw + kWarps * Dv;        // kLanes: reference LSEs of the query tile
  double* deltas = lses + kLanes;         // kLanes
  double* qt = deltas + kLanes;           // tile x (D + 1)
  double* dot = qt + tile * (D + 1);      // tile x (Dv + 1): the dO tile
  const int warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const BlockRows br = block_rows(s.kv_heads, s.kv_len);
  const int64_t b = br.b, kvh = br.h;
  const int64_t group = s.q_heads / s.kv_heads;
  const int64_t j = br.r0 + warp;
  const bool active = j < s.kv_len;
  double* my_k = kw + warp * D;
  double* my_v = vw + warp * Dv;
  if (active) {
    load_row(my_k, k, b, kvh, j, D);
    load_row(my_v, v, b, kvh, j, Dv);
  }
  zero_row(acc_k + warp * D, D);
  zero_row(acc_v + warp * Dv, Dv);
  // The queries that see any key of the block: last(i) >= r0 and first(i) <= r_last.
  const DevMask& mk = s.mask;
  int64_t q_lo = 0, q_hi = s.q_len - 1;
  if (mk.kind != MaskKind::none) q_lo = max(int64_t{0}, br.r0 - mk.off);
  if (mk.kind == MaskKind::window) q_hi = min(q_hi, br.r_last - mk.off + mk.window - 1);
  for (int64_t t = 0; t < group; ++t) {
    const int64_t h = kvh * group + t;
    const int64_t row0 = (b * s.q_heads + h) * s.q_len;
    for (int64_t i0 = q_lo; i0 <= q_hi; i0 += tile) {
      __syncthreads();
      load_tile(qt, q, b, h, i0, tile, s.q_len, D);
      load_tile(dot, d_o, b, h, i0, tile, s.q_len, Dv);
      if (threadIdx.x < tile) {
        const int64_t i = i0 + threadIdx.x;
        lses[threadIdx.x] = i < s.q_len ? a.lse_ref[row0 + i] : 0.0;
        deltas[threadIdx.x] = i < s.q_len ? a.delta[row0 + i] : 0.0;
      }
      __syncthreads();
      if (!active) continue;
      const int64_t i = i0 + lane;
      double p = 0, ds = 0;
      if (lane < tile && i < s.q_len && mk.first(i) <= j && j <= mk.last(i)) {
        p = exp(dot_row(my_k, qt, lane, D) * s.scale - lses[lane]);
        ds = p * (dot_row(my_v, dot, lane, Dv) - deltas[lane]);
      }
      ps[warp * kLanes + lane] = p;
      dss[warp * kLanes + lane] = ds;
      __syncwarp();
      accumulate(acc_v + warp * Dv, 1.0, ps + warp * kLanes, dot, tile, Dv, lane);
      accumulate(acc_k + warp * D, 1.0, dss + warp * kLanes, qt, tile, D, lane);
      __syncwarp();
    }
  }
  if (!active) return;
  const int64_t row = br.bh * s.kv_len + j;
  double e2 = 0, r2 = 0, mx = 0;
  for (int64_t d = lane; d < D; d += kLanes)
    compare(dk.at(b, kvh, j, d), acc_k[warp * D + d] * s.scale, e2, r2, mx);
  finish_row(a.dk_out, row, e2, r2, mx);
  e2 = r2 = mx = 0;
  for (int64_t d = lane; d < Dv; d += kLanes)
    compare(dv.at(b, kvh, j, d), acc_v[warp * Dv + d], e2, r2, mx);
  finish_row(a.dv_out, row, e2, r2, mx);
}

// Non-finite elements of one output: their count and the smallest index. An infinite LSE is
// legal on a row that sees no key (`lse_rows` > 0: the tensor is an LSE of rows of that length).
struct Scan {
  unsigned long long count;
  unsigned long long first;
};
// A ragged batch's padding (`padding`) is no output: skipped.
template <class T>
__global__ void scan_kernel(const T* data, int64_t n, Scan* out, int64_t lse_rows, DevMask mask,
                            Padding padding) {
  unsigned long long count = 0, first = ~0ull;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const double x = widen(data[e]);
    if (isfinite(x) || padding(e)) continue;
    if (lse_rows > 0 && isinf(x)) {
      const int64_t i = e % lse_rows;
      const DevMask m = mask.at(e / (lse_rows * padding.heads));
      if (m.first(i) > m.last(i)) continue;
    }
    ++count;
    if (static_cast<unsigned long long>(e) < first) first = static_cast<unsigned long long>(e);
  }
  if (count > 0) {
    atomicAdd(&out->count, count);
    atomicMin(&out->first, first);
  }
}

// Bytes of dynamic shared memory each kernel needs with tiles of `tile` rows.
size_t forward_smem(const Spec& s, int tile) {
  const size_t d = size_t(s.head_dim), dv = size_t(s.dv());
  return sizeof(double) * (kWarps * kLanes + kWarps * (dv + d) + tile * (d + 1 + dv + 1));
}
size_t dq_smem(const Spec& s, int tile) {
  const size_t d = size_t(s.head_dim), dv = size_t(s.dv());
  return sizeof(double) * (2 * kWarps * kLanes + kWarps * (3 * d + dv) + tile * (d + 1 + dv + 1));
}
size_t dkdv_smem(const Spec& s, int tile) {
  const size_t d = size_t(s.head_dim), dv = size_t(s.dv());
  return sizeof(double) *
         (2 * kWarps * kLanes + 2 * kWarps * (d + dv) + 2 * kLanes + tile * (d + 1 + dv + 1));
}
size_t smem_needed(const Spec& s, int tile) {
  size_t need = forward_smem(s, tile);
  if (s.mode != Mode::fwd) need = std::max({need, dq_smem(s, tile), dkdv_smem(s, tile)});
  return need;
}

// The largest tile (32, 16 or 8 rows) whose kernels fit the device's shared memory; 0 if none.
int tile_for(const Spec& spec, size_t optin) {
  for (int tile : {32, 16, 8})
    if (smem_needed(spec, tile) <= optin) return tile;
  return 0;
}

size_t smem_optin() {
  int device = 0, optin = 0;
  ATTNPROF_CUDA(cudaGetDevice(&device));
  ATTNPROF_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return size_t(optin);
}

template <class Kernel>
void allow_smem(Kernel kernel, size_t bytes) {
  ATTNPROF_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(bytes)));
}

Shape shape_of(const Spec& spec, const Io& io, int tile) {
  Shape s{spec.batch,    spec.q_heads, spec.kv_heads,        spec.q_len, spec.kv_len,
          spec.head_dim, spec.dv(),    spec.softmax_scale(), {},         {},
          tile};
  s.mask = dev_mask(spec, io);
  s.mods = score_mods(spec, io);
  return s;
}

// Device memory for per-row results, untracked (the check is not the point's footprint).
struct Scratch {
  DeviceBuffer buf;
  double* next = nullptr;
  explicit Scratch(int64_t doubles) : buf(doubles * int64_t(sizeof(double)), nullptr) {
    next = buf.as<double>();
  }
  double* take(int64_t n) {
    double* p = next;
    next += n;
    return p;
  }
  RowSums sums(int64_t rows, bool floor = false) {
    return {take(rows), take(rows), take(rows), floor ? take(rows) : nullptr};
  }
};

std::vector<double> to_host(const double* src, int64_t n, cudaStream_t stream) {
  std::vector<double> out(static_cast<size_t>(n));
  if (n > 0)
    ATTNPROF_CUDA(cudaMemcpyAsync(out.data(), src, size_t(n) * sizeof(double),
                                  cudaMemcpyDeviceToHost, stream));
  return out;
}

DeviceRowSums to_host(const RowSums& s, int64_t rows, cudaStream_t stream) {
  return {to_host(s.err2, rows, stream), to_host(s.ref2, rows, stream),
          to_host(s.max_abs, rows, stream),
          s.floor ? to_host(s.floor, rows, stream) : std::vector<double>{}};
}

DeviceRowSums gather(const RowSums& s, const std::vector<int64_t>& rows, cudaStream_t stream) {
  std::vector<const double*> srcs = {s.err2, s.ref2, s.max_abs};
  if (s.floor) srcs.push_back(s.floor);
  std::vector<std::vector<double>> got = gather_rows(srcs, rows, stream);
  got.resize(4);  // no floor: empty
  return {std::move(got[0]), std::move(got[1]), std::move(got[2]), std::move(got[3])};
}

// `keep` and the picked rows (-1: none) within [0, rows), sorted and unique.
std::vector<int64_t> with_picks(std::vector<int64_t> keep, std::initializer_list<int64_t> picks,
                                int64_t rows) {
  keep.insert(keep.end(), picks.begin(), picks.end());
  std::erase_if(keep, [&](int64_t r) { return r < 0 || r >= rows; });
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  return keep;
}
template <class T>
DeviceCheck check_typed(const Spec& spec, const Io& io, cudaStream_t stream, int tile,
                        DeviceCheckPath path, int64_t gemm_budget, const DeviceRows& rows) {
  const Shape s = shape_of(spec, io, tile);
  const int64_t q_rows = spec.batch * spec.q_heads * spec.q_len;
  const int64_t k_rows = spec.batch * spec.kv_heads * spec.kv_len;
  const bool fwd_out = spec.mode != Mode::bwd, grads = spec.mode != Mode::fwd;
  const bool lse = fwd_out && io.lse.present();
  static_assert(sizeof(Scan) == 2 * sizeof(double));
  Scratch scratch(4 * q_rows + q_rows + 3 * q_rows + 4 * q_rows + 6 * k_rows + 2 * 5);
  auto* scans = reinterpret_cast<Scan*>(scratch.take(2 * 5));
  std::vector<Scan> init(5, Scan{0, ~0ull});
  ATTNPROF_CUDA(
      cudaMemcpyAsync(scans, init.data(), 5 * sizeof(Scan), cudaMemcpyHostToDevice, stream));

  ForwardArgs fa{s, {}, nullptr, nullptr, nullptr, nullptr, nullptr};
  if (fwd_out) fa.o_out = scratch.sums(q_rows, true);
  if (lse) {
    fa.lse = static_cast<const float*>(io.lse.data);
    fa.lse_err = scratch.take(q_rows);
  }
  if (grads) {
    fa.lse_ref = scratch.take(q_rows);
    fa.delta = scratch.take(q_rows);
    fa.dsum = scratch.take(q_rows);
  }
  const View<T> q = view_of<T>(io.q), k = view_of<T>(io.k), v = view_of<T>(io.v);
  const View<T> o = view_of<T>(io.o), d_o = grads ? view_of<T>(io.d_o) : View<T>{};
  const int64_t q_blocks = spec.batch * spec.q_heads * ((spec.q_len + kWarps - 1) / kWarps);
  const int64_t k_blocks = spec.batch * spec.kv_heads * ((spec.kv_len + kWarps - 1) / kWarps);
  if (std::max(q_blocks, k_blocks) > int64_t{std::numeric_limits<int32_t>::max()})
    throw FaultError(Fault::harness, "the device check's grid exceeds 2^31 blocks");
  // Mode fwd through fp64 GEMMs where their scratch fits; the shared-memory kernel otherwise (and
  // for the backward modes, whose gradient kernels read its per-row state).
  bool done = false;
  // A ragged batch: the kernel, which masks each sequence at its lengths.
  if (spec.ragged() && path == DeviceCheckPath::gemm)
    throw FaultError(Fault::harness, "the device check's GEMM path takes no ragged batch");
  const ForwardRowSums sums{fa.o_out.err2,  fa.o_out.ref2, fa.o_out.max_abs,
                            fa.o_out.floor, fa.lse,        fa.lse_err};
  // The reference kept from the last check of these same inputs, or rows to keep this one's in
  // (mode fwd; a forced path always computes, it is what a test asks for).
  const KeptSlot kept =
      path == DeviceCheckPath::fastest ? kept_forward(spec, io, stream) : KeptSlot{};
  if (kept.filled) {
    compare_with_kept(spec, io, stream, kept.rows, sums);
    done = true;
  }
  fa.o_keep = kept.rows.o;
  fa.lse_keep = kept.rows.lse;
  if (!done && path != DeviceCheckPath::kernels && spec.mode == Mode::fwd && !spec.ragged()) {
    ForwardRowSums keep = sums;
    keep.o_keep = kept.rows.o;
    keep.lse_keep = kept.rows.lse;
    done = gemm_forward_sums(spec, io, stream, keep, gemm_budget);
    if (!done && path == DeviceCheckPath::gemm)
      throw FaultError(Fault::harness,
                       "the device check's GEMM path has no memory for its scratch");
  }
  if (!done) {
    allow_smem(forward_kernel<T>, forward_smem(spec, tile));
    forward_kernel<T>
        <<<unsigned(q_blocks), kThreads, forward_smem(spec, tile), stream>>>(fa, q, k, v, o, d_o);
    ATTNPROF_CUDA(cudaGetLastError());
  }
  GradArgs ga{s, fa.lse_ref, fa.delta, fa.dsum, {}, {}, {}};
  if (grads) {
    ga.dq_out = scratch.sums(q_rows, true);
    ga.dk_out = scratch.sums(k_rows);
    ga.dv_out = scratch.sums(k_rows);
    allow_smem(dq_kernel<T>, dq_smem(spec, tile));
    dq_kernel<T><<<unsigned(q_blocks), kThreads, dq_smem(spec, tile), stream>>>(ga, q, k, v, d_o,
                                                                                view_of<T>(io.dq));
    ATTNPROF_CUDA(cudaGetLastError());
    allow_smem(dkdv_kernel<T>, dkdv_smem(spec, tile));
    dkdv_kernel<T><<<unsigned(k_blocks), kThreads, dkdv_smem(spec, tile), stream>>>(
        ga, q, k, v, d_o, view_of<T>(io.dk), view_of<T>(io.dv));
    ATTNPROF_CUDA(cudaGetLastError());
  }
  if (kept.rows.o != nullptr && !kept.filled) {  // the squared reference and floor rows too
    ATTNPROF_CUDA(cudaMemcpyAsync(kept.rows.ref2, fa.o_out.ref2, size_t(q_rows) * sizeof(double),
                                  cudaMemcpyDeviceToDevice, stream));
    ATTNPROF_CUDA(cudaMemcpyAsync(kept.rows.floor, fa.o_out.floor, size_t(q_rows) * sizeof(double),
                                  cudaMemcpyDeviceToDevice, stream));
  }
  // The scan: every element of every output of the launch.
  const std::vector<TensorRole> outputs = launch_outputs(spec, io);
  for (size_t t = 0; t < outputs.size(); ++t) {
    const TensorView& view = io[outputs[t]];
    const int64_t n = view.elems();
    const unsigned blocks = unsigned(std::min<int64_t>((n + 255) / 256, 4096));
    if (n == 0) continue;
    // Forward outputs (O, the LSE) of a ragged batch have padding rows; gradients never do.
    const bool rows_of_q = outputs[t] == TensorRole::o || outputs[t] == TensorRole::lse;
    const Padding pad{rows_of_q ? io.seq_q : nullptr, view.heads, view.len, view.dim,
                      view.layout == Layout::bshd};
    if (outputs[t] == TensorRole::lse) {
      scan_kernel<float><<<blocks, 256, 0, stream>>>(static_cast<const float*>(view.data), n,
                                                     scans + t, spec.q_len, s.mask, pad);
    } else {
      scan_kernel<T><<<blocks, 256, 0, stream>>>(static_cast<const T*>(view.data), n, scans + t, 0,
                                                 s.mask, pad);
    }
    ATTNPROF_CUDA(cudaGetLastError());
  }

  DeviceCheck out;
  std::vector<Scan> scanned(outputs.size());
  if (!outputs.empty())
    ATTNPROF_CUDA(cudaMemcpyAsync(scanned.data(), scans, outputs.size() * sizeof(Scan),
                                  cudaMemcpyDeviceToHost, stream));
  if (rows.all) {
    if (fwd_out) out.o = to_host(fa.o_out, q_rows, stream);
    if (lse) out.lse_err = to_host(fa.lse_err, q_rows, stream);
  } else {
    const RowSums& o_sums = fa.o_out;
    const ForwardPicks p = pick_forward_rows(
        {o_sums.err2, o_sums.ref2, o_sums.max_abs, o_sums.floor, lse ? fa.lse_err : nullptr},
        q_rows, stream);
    if (fwd_out) {
      out.o_rows = with_picks(rows.keep, {p.worst_o, p.largest_abs}, q_rows);
      out.o = gather(o_sums, out.o_rows, stream);
    }
    if (lse) {
      out.lse_rows = with_picks(rows.keep, {p.worst_lse}, q_rows);
      out.lse_err = std::move(gather_rows({fa.lse_err}, out.lse_rows, stream)[0]);
    }
  }
  if (grads) {
    out.dq = to_host(ga.dq_out, q_rows, stream);
    out.dk = to_host(ga.dk_out, k_rows, stream);
    out.dv = to_host(ga.dv_out, k_rows, stream);
  }
  ATTNPROF_CUDA(cudaStreamSynchronize(stream));
  commit_kept(kept);
  for (size_t t = 0; t < outputs.size(); ++t) {
    DeviceScan d{outputs[t], int64_t(scanned[t].count), int64_t(scanned[t].first), 0.0};
    if (d.count > 0) {
      const TensorView& view = io[outputs[t]];
      if (view.storage == DType::fp32) {
        float value = 0;
        ATTNPROF_CUDA(cudaMemcpy(&value, static_cast<const float*>(view.data) + d.first,
                                 sizeof(float), cudaMemcpyDeviceToHost));
        d.value = value;
      } else {
        T bits;
        ATTNPROF_CUDA(cudaMemcpy(&bits, static_cast<const T*>(view.data) + d.first, sizeof(T),
                                 cudaMemcpyDeviceToHost));
        d.value = widen(bits);
      }
    }
    out.scans.push_back(d);
  }
  return out;
}

}  // namespace

int device_check_tile(const Spec& spec, size_t& need_bytes, size_t& optin) {
  optin = smem_optin();
  need_bytes = smem_needed(spec, 8);
  return tile_for(spec, optin);
}

DeviceCheck run_device_check(const Spec& spec, const Io& io, cudaStream_t stream,
                             DeviceCheckPath path, int64_t gemm_budget, const DeviceRows& rows) {
  size_t need = 0, optin = 0;
  const int tile = device_check_tile(spec, need, optin);
  if (tile == 0) throw FaultError(Fault::harness, "the device check does not fit this device");
  switch (spec.dtype) {
    case DType::fp32:
      return check_typed<float>(spec, io, stream, tile, path, gemm_budget, rows);
    case DType::fp16:
      return check_typed<__half>(spec, io, stream, tile, path, gemm_budget, rows);
    case DType::bf16:
      return check_typed<__nv_bfloat16>(spec, io, stream, tile, path, gemm_budget, rows);
    case DType::fp8_e4m3:
      return check_typed<Fp8E4M3>(spec, io, stream, tile, path, gemm_budget, rows);
    case DType::fp8_e5m2:
      return check_typed<Fp8E5M2>(spec, io, stream, tile, path, gemm_budget, rows);
  }
  return {};
}

}  // namespace attnprof::cuda
