// The forward check through fp64 GEMMs (device_check_gemm.hpp). Per chunk of (batch, KV head)
// groups and their query rows (the group's query heads' rows stacked, so a decode step's 128 query
// heads on one latent head make one GEMM, and K and V are widened once per group):
//   widen   the query rows, and the groups' K and V into doubles, |v_j|^2 per key;
//   DGEMM   S = scale Q K^T (every key; the mask is applied by the softmax);
//   softmax per row: S_ij capped (Spec::softcap), m = max over visible keys and the head's sink,
//           S_ij <- exp(S_ij - m) on visible keys, 0 elsewhere; l = sum (+ exp(sink - m)),
//           w2 = sum P^2 |v_j|^2;
//   DGEMM   A = P V;
//   compare per row: O_ref = A / l against the provider's O (squared error, squared reference,
//           largest error, floor sqrt(w2) / l) and, where written, the LSE against m + log(l).
// Row-major matrices are handed to cuBLAS (column-major) as their transposes.
#include "measure/cuda/device_check_gemm.hpp"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "measure/cuda/check_common.cuh"

namespace attnprof::cuda {

namespace {

constexpr int kThreads = 256;

// Blocks for grid-stride kernels over `threads` elements.
unsigned grid_for(int64_t threads) {
  return unsigned(std::clamp<int64_t>((threads + kThreads - 1) / kThreads, 1, 65536));
}
// Blocks for a warp per row over `rows` rows (chunks hold at most 2^28 rows: under 2^31 blocks).
unsigned warp_grid(int64_t rows) {
  return unsigned((rows * 32 + kThreads - 1) / kThreads);
}

// A group's stacked query rows: row R of group u (u = b * kv_heads + kv head) is query i = R % nq
// of query head kv_head * group + R / nq.
struct Groups {
  int64_t kv_heads, group, nq;
  __device__ int64_t batch(int64_t u) const { return u / kv_heads; }
  __device__ int64_t q_head(int64_t u, int64_t row) const {
    return (u % kv_heads) * group + row / nq;
  }
  __device__ int64_t query(int64_t row) const { return row % nq; }
};

// out[u][r][d] = K or V (b, kv head, r, d) for the chunk's groups u (from unit0).
template <class T>
__global__ void widen_kv_kernel(View<T> t, double* out, int64_t unit0, int64_t kv_heads,
                                int64_t rows, int64_t dim, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const int64_t d = e % dim, r = (e / dim) % rows, u = unit0 + e / (dim * rows);
    out[e] = t.at(u / kv_heads, u % kv_heads, r, d);
  }
}

// out[u][r][d] = Q of the chunk's stacked rows row0 + r of each group u (from unit0).
template <class T>
__global__ void widen_q_kernel(View<T> q, double* out, Groups g, int64_t unit0, int64_t row0,
                               int64_t rows, int64_t dim, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const int64_t d = e % dim, r = row0 + (e / dim) % rows, u = unit0 + e / (dim * rows);
    out[e] = q.at(g.batch(u), g.q_head(u, r), g.query(r), d);
  }
}

// vn[k] = |row k of v|^2 for the n = groups * kv_len rows of the widened V.
__global__ void norms_kernel(const double* v, double* vn, int64_t dv, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    double x = 0;
    for (int64_t d = 0; d < dv; ++d) x = fma(v[k * dv + d], v[k * dv + d], x);
    vn[k] = x;
  }
}

struct Chunk {
  int64_t rows, row0, nk;  // stacked rows per group in the chunk, the first one, keys
  int64_t nq;              // query rows per head: stacked row R is query R % nq
  DevMask mask;
  ScoreMods mods;  // the softcap and the sinks
  Groups g;        // whose query head a stacked row is
  int64_t unit0;   // the chunk's first group
};

// A warp per chunk row (p, r): the softmax of S's row in place, its max, sum and w2.
__global__ void softmax_kernel(double* s, const double* vn, double* row_m, double* row_l,
                               double* row_w2, Chunk c, int64_t n_rows) {
  const int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= n_rows) return;
  const int64_t stacked = c.row0 + row % c.rows, p = row / c.rows;
  const int64_t i = stacked % c.nq;
  const int64_t lo = c.mask.first(i), hi = c.mask.last(i);
  double* x = s + row * c.nk;
  const double* norms = vn + p * c.nk;
  double m = -INFINITY;
  for (int64_t j = lo + lane; j <= hi; j += 32) {
    x[j] = c.mods.cap(x[j]);
    m = fmax(m, x[j]);
  }
  // A sink joins the maximum and the sum, with no value row.
  const double sink = c.mods.sink_of(c.g.q_head(c.unit0 + p, stacked));
  m = fmax(warp_max(m), sink);
  double l = 0, w2 = 0;
  for (int64_t j = lane; j < c.nk; j += 32) {
    const double e = (j >= lo && j <= hi) ? exp(x[j] - m) : 0.0;
    x[j] = e;
    l += e;
    w2 = fma(e * e, norms[j], w2);
  }
  l = warp_sum(l);
  w2 = warp_sum(w2);
  if (sink > -INFINITY) l += exp(sink - m);
  if (lane == 0) {
    row_m[row] = m;
    row_l[row] = l;
    row_w2[row] = w2;
  }
}

// A warp per chunk row: the reference row against the provider's.
template <class T>
__global__ void compare_kernel(View<T> o, const double* acc, const double* row_m,
                               const double* row_l, const double* row_w2, ForwardRowSums out,
                               Chunk c, Groups g, int64_t unit0, int64_t q_heads, int64_t dv,
                               int64_t n_rows) {
  const int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= n_rows) return;
  const int64_t stacked = c.row0 + row % c.rows, u = unit0 + row / c.rows;
  const int64_t b = g.batch(u), h = g.q_head(u, stacked), i = g.query(stacked);
  const double l = row_l[row];
  const double inv = l > 0 ? 1.0 / l : 0.0;
  double e2 = 0, r2 = 0, mx = 0;
  const int64_t flat = (b * q_heads + h) * c.nq + i;
  for (int64_t d = lane; d < dv; d += 32) {
    const double ref = acc[row * dv + d] * inv;
    compare(o.at(b, h, i, d), ref, e2, r2, mx);
    if (out.o_keep) out.o_keep[flat * dv + d] = ref;
  }
  e2 = warp_sum(e2);
  r2 = warp_sum(r2);
  mx = warp_max(mx);
  if (lane != 0) return;
  out.err2[flat] = nan_as_inf(e2);
  out.ref2[flat] = r2;
  out.max_abs[flat] = mx;
  out.floor[flat] = sqrt(row_w2[row]) * inv;
  const double lse_ref = l > 0 ? row_m[row] + log(l) : -INFINITY;
  if (out.lse) out.lse_err[flat] = lse_error(out.lse[flat], lse_ref);
  if (out.lse_keep) out.lse_keep[flat] = lse_ref;
}

cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t x = nullptr;
    ATTNPROF_CUBLAS(cublasCreate(&x));
    return x;
  }();
  return h;
}

// Groups and stacked query rows per chunk within `budget` bytes of scratch; rows 0 when not
// even one query row of one group fits.
struct ChunkSize {
  int64_t units = 0, rows = 0;
};
ChunkSize chunk_size(const Spec& spec, int64_t budget) {
  const int64_t d = spec.head_dim, dv = spec.dv(), nk = spec.kv_len;
  const int64_t nq = spec.q_len * spec.group_size();  // a group's stacked rows
  const int64_t units = spec.batch * spec.kv_heads;
  const int64_t per_row = 8 * (nk + dv + d + 3);   // S, A, Q rows and the row's m, l, w2
  const int64_t per_unit = 8 * nk * (d + dv + 1);  // K, V and |v|^2
  ChunkSize c;
  if (nq * per_row + per_unit <= budget) {
    c.rows = nq;
    c.units = std::min(units, budget / (nq * per_row + per_unit));
  } else {
    c.units = 1;
    c.rows = std::min(nq, std::max<int64_t>(0, (budget - per_unit) / per_row));
  }
  return c;
}

template <class T>
void run_chunks(const Spec& spec, const Io& io, cudaStream_t stream, const ForwardRowSums& out,
                ChunkSize size, double* scratch) {
  const int64_t d = spec.head_dim, dv = spec.dv(), nk = spec.kv_len;
  const Groups g{spec.kv_heads, spec.group_size(), spec.q_len};
  const int64_t stacked = g.group * g.nq;  // rows of one group
  const int64_t units = spec.batch * spec.kv_heads;
  double* kd = scratch;
  double* vd = kd + size.units * nk * d;
  double* vn = vd + size.units * nk * dv;
  double* qd = vn + size.units * nk;
  double* s = qd + size.units * size.rows * d;
  double* acc = s + size.units * size.rows * nk;
  double* row_m = acc + size.units * size.rows * dv;
  double* row_l = row_m + size.units * size.rows;
  double* row_w2 = row_l + size.units * size.rows;
  const View<T> q = view_of<T>(io.q), k = view_of<T>(io.k), v = view_of<T>(io.v);
  const View<T> o = view_of<T>(io.o);
  cublasHandle_t blas = handle();
  ATTNPROF_CUBLAS(cublasSetStream(blas, stream));
  const double scale = spec.softmax_scale(), one = 1.0, zero = 0.0;
  for (int64_t unit0 = 0; unit0 < units; unit0 += size.units) {
    const int64_t nu = std::min(size.units, units - unit0);
    widen_kv_kernel<T><<<grid_for(nu * nk * d), kThreads, 0, stream>>>(k, kd, unit0, g.kv_heads, nk,
                                                                       d, nu * nk * d);
    widen_kv_kernel<T><<<grid_for(nu * nk * dv), kThreads, 0, stream>>>(v, vd, unit0, g.kv_heads,
                                                                        nk, dv, nu * nk * dv);
    norms_kernel<<<grid_for(nu * nk), kThreads, 0, stream>>>(vd, vn, dv, nu * nk);
    ATTNPROF_CUDA(cudaGetLastError());
    for (int64_t row0 = 0; row0 < stacked; row0 += size.rows) {
      const int64_t nr = std::min(size.rows, stacked - row0);
      const Chunk c{nr, row0, nk, g.nq, dev_mask(spec, io), score_mods(spec, io), g, unit0};
      const int64_t n_rows = nu * nr;
      widen_q_kernel<T>
          <<<grid_for(n_rows * d), kThreads, 0, stream>>>(q, qd, g, unit0, row0, nr, d, n_rows * d);
      ATTNPROF_CUDA(cudaGetLastError());
      // S^T (nk x nr, column-major) = K (nk x d) Q^T: K^T and Q^T are the row-major K and Q.
      ATTNPROF_CUBLAS(cublasDgemmStridedBatched(blas, CUBLAS_OP_T, CUBLAS_OP_N, int(nk), int(nr),
                                                int(d), &scale, kd, int(d), nk * d, qd, int(d),
                                                nr * d, &zero, s, int(nk), nr * nk, int(nu)));
      softmax_kernel<<<warp_grid(n_rows), kThreads, 0, stream>>>(s, vn, row_m, row_l, row_w2, c,
                                                                 n_rows);
      ATTNPROF_CUDA(cudaGetLastError());
      // A^T (dv x nr) = V^T (dv x nk) P^T (nk x nr).
      ATTNPROF_CUBLAS(cublasDgemmStridedBatched(blas, CUBLAS_OP_N, CUBLAS_OP_N, int(dv), int(nr),
                                                int(nk), &one, vd, int(dv), nk * dv, s, int(nk),
                                                nr * nk, &zero, acc, int(dv), nr * dv, int(nu)));
      compare_kernel<T><<<warp_grid(n_rows), kThreads, 0, stream>>>(
          o, acc, row_m, row_l, row_w2, out, c, g, unit0, spec.q_heads, dv, n_rows);
      ATTNPROF_CUDA(cudaGetLastError());
    }
  }
}

}  // namespace

bool gemm_forward_sums(const Spec& spec, const Io& io, cudaStream_t stream,
                       const ForwardRowSums& out, int64_t budget) {
  if (spec.mode != Mode::fwd) return false;
  if (budget <= 0) {
    // Half of what is free, at most 2 GiB: the check's scratch must not push the point's own
    // memory out (it is freed before the next launch).
    size_t free_bytes = 0, total = 0;
    ATTNPROF_CUDA(cudaMemGetInfo(&free_bytes, &total));
    budget = std::min<int64_t>(int64_t(free_bytes) / 2, int64_t{2} << 30);
  }
  const ChunkSize size = chunk_size(spec, budget);
  if (size.rows == 0 || spec.kv_len > INT32_MAX || spec.q_len * spec.group_size() > INT32_MAX)
    return false;
  const int64_t doubles = size.units * spec.kv_len * (spec.head_dim + spec.dv() + 1) +
                          size.units * size.rows * (spec.head_dim + spec.kv_len + spec.dv() + 3);
  DeviceBuffer scratch;
  try {
    scratch = DeviceBuffer(doubles * int64_t(sizeof(double)), nullptr);
  } catch (const CudaError& e) {
    if (e.code() != cudaErrorMemoryAllocation) throw;
    (void)cudaGetLastError();  // not sticky: clear it and let the kernel path check
    return false;
  }
  switch (spec.dtype) {
    case DType::fp32:
      run_chunks<float>(spec, io, stream, out, size, scratch.as<double>());
      break;
    case DType::fp16:
      run_chunks<__half>(spec, io, stream, out, size, scratch.as<double>());
      break;
    case DType::bf16:
      run_chunks<__nv_bfloat16>(spec, io, stream, out, size, scratch.as<double>());
      break;
    case DType::fp8_e4m3:
      run_chunks<Fp8E4M3>(spec, io, stream, out, size, scratch.as<double>());
      break;
    case DType::fp8_e5m2:
      run_chunks<Fp8E5M2>(spec, io, stream, out, size, scratch.as<double>());
      break;
  }
  // The scratch is freed on return: the work queued on `stream` must be done with it.
  ATTNPROF_CUDA(cudaStreamSynchronize(stream));
  return true;
}

}  // namespace attnprof::cuda
