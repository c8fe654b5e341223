// The split-KV decode kernel and its merge (decode_kernel.cuh). Verified end to end: cuda.decode
// is checked against the fp64 reference on every row, for every mask, layout, paging and ragged
// batch the GPU tests cover (tests/gpu/test_decode.cpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/decode_common.cuh"
#include "providers/cuda/decode_kernel.cuh"
#include "providers/cuda/tma.cuh"

namespace attnprof::cuda {

namespace {

using namespace decode;  // NOLINT: the kernels' shared helpers

constexpr int kThreads = kDecodeThreads;
constexpr int kWarps = kThreads / 32;

template <int D>
constexpr int key_tile() {
  return D <= 128 ? 64 : 32;
}
// A staged K or V row: D elements and 16 bytes of padding, so the 8 rows one phase of a 16-byte
// shared load reads start in distinct banks.
template <int D>
constexpr int staged_row() {
  return D + 8;
}

// The shared memory of one CTA, carved from the dynamic allocation.
template <class T, int D>
struct Smem {
  float* q;      // [rows][D]
  T* kv;         // [2 stages][K, V][key tile][staged_row]
  float* s;      // [rows][key tile]: scores, then probabilities
  float* m;      // [rows] running max (base 2)
  float* l;      // [rows] running sum
  float* alpha;  // [rows] this tile's rescale of the accumulators
  float* red;    // after the loop: the key groups' sums (aliases kv)
  __device__ T* tile(int stage, int which) const {
    return kv + (stage * 2 + which) * key_tile<D>() * staged_row<D>();
  }
};

template <int D>
__host__ __device__ constexpr int kv_stage_bytes(int elem_bytes) {
  return 2 * 2 * key_tile<D>() * staged_row<D>() * elem_bytes;
}

template <class T, int D>
__device__ Smem<T, D> carve(unsigned char* base, int rows) {
  Smem<T, D> s;
  s.kv = reinterpret_cast<T*>(base);
  s.red = reinterpret_cast<float*>(base);
  base += kv_stage_bytes<D>(int(sizeof(T)));
  s.q = reinterpret_cast<float*>(base);
  base += rows * D * sizeof(float);
  s.s = reinterpret_cast<float*>(base);
  base += rows * key_tile<D>() * sizeof(float);
  s.m = reinterpret_cast<float*>(base);
  s.l = s.m + rows;
  s.alpha = s.l + rows;
  return s;
}

// MAXR: the most query rows this instantiation holds (registers are sized for it).
template <class T, int D, int MAXR>
__global__ void __launch_bounds__(kThreads) attention_split_kernel(const DecodeArgs a) {
  constexpr int KT = key_tile<D>();
  constexpr int RG = kThreads / KT;  // row groups of the score phase
  constexpr int RPT = (MAXR + RG - 1) / RG;
  constexpr int CH = D / 8;  // 16-byte chunks per row
  constexpr int UPT = (MAXR * CH + kThreads - 1) / kThreads;
  extern __shared__ __align__(16) unsigned char smem_raw[];

  const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int G = a.q_heads / a.kv_heads;
  const Seq sq = seq_of(a, b);
  const int R = G * sq.nq;  // row r: head kvh * G + r / nq, query r % nq
  const Smem<T, D> sm = carve<T, D>(smem_raw, R);
  const T* q = static_cast<const T*>(a.q);
  const T* k = static_cast<const T*>(a.k);
  const T* v = static_cast<const T*>(a.v);

  // This split's keys, cut to those some row sees.
  const KeyRange kr = key_range(a, sq, split, KT);
  const int hi = kr.hi, t0 = kr.t0, ntiles = kr.tiles;

  auto load_tile = [&](int stage, int start) {
    T* ks = sm.tile(stage, 0);
    T* vs = sm.tile(stage, 1);
    for (int ci = tid; ci < KT * CH; ci += kThreads) {
      const int jr = ci / CH, cc = ci % CH, pos = start + jr;
      const bool valid = pos <= hi;
      const int64_t ko = valid ? kv_row(a, a.k_pages, b, kvh, pos, D) : 0;
      const int64_t vo = valid ? kv_row(a, a.v_pages, b, kvh, pos, D) : 0;
      copy16(ks + jr * staged_row<D>() + cc * 8, k + ko + cc * 8, valid);
      copy16(vs + jr * staged_row<D>() + cc * 8, v + vo + cc * 8, valid);
    }
    commit_copies();
  };
  if (ntiles > 0) load_tile(0, t0);
  if (ntiles > 1) load_tile(1, t0 + KT);

  // Q rows as float; the running max and sum.
  for (int ci = tid; ci < R * CH; ci += kThreads) {
    const int r = ci / CH, cc = ci % CH, h = kvh * G + r / sq.nq, i = r % sq.nq;
    const uint4 raw =
        *reinterpret_cast<const uint4*>(q + b * a.q_sb + h * a.q_sh + i * a.q_ss + cc * 8);
    widen8<T>(raw, sm.q + r * D + cc * 8);
  }
  for (int r = tid; r < R; r += kThreads) {
    sm.m[r] = -INFINITY;
    sm.l[r] = 0;
  }

  // P.V: units of 8 output columns of one row; a thread's units share their columns.
  const int units = R * CH;
  const int ks_groups = units >= kThreads ? 1 : kThreads / units;
  const int my_group = units >= kThreads ? 0 : tid / units;
  const int my_unit = units >= kThreads ? tid : tid % units;
  const bool pv_active = my_group < ks_groups;
  const int my_cc = my_unit % CH;
  float acc[UPT][8];
#pragma unroll
  for (int u = 0; u < UPT; ++u)
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[u][e] = 0;

  const int sj = tid % KT, srg = tid / KT;  // the score phase's key and row group
  for (int t = 0; t < ntiles; ++t) {
    const int stage = t & 1, start = t0 + t * KT;
    if (t + 1 < ntiles) {
      wait_copies<1>();
    } else {
      wait_copies<0>();
    }
    __syncthreads();
    // Scores of key `sj` for rows srg, srg + RG, ...
    {
      float sacc[RPT];
#pragma unroll
      for (int rr = 0; rr < RPT; ++rr) sacc[rr] = 0;
      const T* krow = sm.tile(stage, 0) + sj * staged_row<D>();
#pragma unroll 4
      for (int cc = 0; cc < CH; ++cc) {
        float kf[8];
        widen8<T>(*reinterpret_cast<const uint4*>(krow + cc * 8), kf);
#pragma unroll
        for (int rr = 0; rr < RPT; ++rr) {
          const int r = srg + rr * RG;
          if (r < R) {
            const float4* qv = reinterpret_cast<const float4*>(sm.q + r * D + cc * 8);
            const float4 x = qv[0], y = qv[1];
            sacc[rr] += x.x * kf[0] + x.y * kf[1] + x.z * kf[2] + x.w * kf[3] + y.x * kf[4] +
                        y.y * kf[5] + y.z * kf[6] + y.w * kf[7];
          }
        }
      }
      const int pos = start + sj;
#pragma unroll
      for (int rr = 0; rr < RPT; ++rr) {
        const int r = srg + rr * RG;
        if (r >= R) continue;
        const bool seen = key_seen(a, sq, kr, r % sq.nq, pos);
        sm.s[r * KT + sj] = seen ? score2(a, sacc[rr]) : -INFINITY;
      }
    }
    __syncthreads();
    // Online softmax: one warp per row.
    for (int r = warp; r < R; r += kWarps) {
      float mx = -INFINITY;
      for (int j = lane; j < KT; j += 32) mx = fmaxf(mx, sm.s[r * KT + j]);
      mx = warp_max(mx);
      const float m_old = sm.m[r], m_new = fmaxf(m_old, mx);
      float sum = 0;
      for (int j = lane; j < KT; j += 32) {
        const float s = sm.s[r * KT + j];
        const float p = s == -INFINITY ? 0.f : exp2f(s - m_new);
        sm.s[r * KT + j] = p;
        sum += p;
      }
      sum = warp_sum(sum);
      // Every lane has read the row's running max (m_old) before lane 0 replaces it: the
      // shuffles order the lanes on the hardware, but not in the memory model (racecheck
      // reported the read and the write as a hazard, 2026-12-02-decode-copy call 5).
      __syncwarp();
      if (lane == 0) {
        const float alpha = m_old == -INFINITY ? 0.f : exp2f(m_old - m_new);
        sm.alpha[r] = alpha;
        sm.l[r] = sm.l[r] * alpha + sum;
        sm.m[r] = m_new;
      }
    }
    __syncthreads();
    // O += P V over this tile's keys.
    if (pv_active) {
      const int nv = min(KT, hi - start + 1);
#pragma unroll
      for (int u = 0; u < UPT; ++u) {
        const int r = (my_unit + u * kThreads) / CH;
        if (r < R) {
          const float al = sm.alpha[r];
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[u][e] *= al;
        }
      }
      const T* vcol = sm.tile(stage, 1) + my_cc * 8;
      for (int j = my_group; j < nv; j += ks_groups) {
        float vf[8];
        widen8<T>(*reinterpret_cast<const uint4*>(vcol + j * staged_row<D>()), vf);
#pragma unroll
        for (int u = 0; u < UPT; ++u) {
          const int r = (my_unit + u * kThreads) / CH;
          if (r < R) {
            const float p = sm.s[r * KT + j];
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[u][e] += p * vf[e];
          }
        }
      }
    }
    __syncthreads();
    if (t + 2 < ntiles) load_tile(stage, start + 2 * KT);
  }

  __syncthreads();         // the running sums are complete (and, with no tile, initialized)
  allow_dependent_grid();  // past the keys: the merge may start once every CTA is here
  // The key groups' sums (one unit per thread when there are several groups).
  if (ks_groups > 1) {
    if (pv_active) {
#pragma unroll
      for (int e = 0; e < 8; ++e) sm.red[(my_group * units + my_unit) * 8 + e] = acc[0][e];
    }
    __syncthreads();
    if (my_group == 0) {
      for (int g = 1; g < ks_groups; ++g)
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[0][e] += sm.red[(g * units + my_unit) * 8 + e];
    }
  }
  if (my_group != 0) return;

#pragma unroll
  for (int u = 0; u < UPT; ++u) {
    const int r = (my_unit + u * kThreads) / CH;
    if (r >= R) continue;
    emit_row<T, D>(a, b, kvh * G + r / sq.nq, r % sq.nq, split, sm.m[r], sm.l[r], acc[u],
                   my_cc * 8);
  }
}

// The splits of one row combined: O = sum_s o_s 2^(m_s - M) / L, the sink joining M and L.
// One block of kMergeThreads per (sequence, query head, query row) and slab of `cols` columns
// (decode_merge_columns): the splits' maxima are read at once (a strided loop, a block reduction),
// then each thread adds four columns of O over every (1024 / cols)-th split (float4 loads, unrolled
// so that their reads overlap), and the split groups' sums meet in shared memory. Launched after
// the split kernel, as its programmatic dependent where the device has them
// (DecodeArgs::dependent_merge).
constexpr int kMergeThreads = kDecodeMergeThreads;
constexpr int kMergeMaxGroups = 16;

template <class T, int D>
__global__ void __launch_bounds__(kMergeThreads) merge_reduce_kernel(const DecodeArgs a, int cols) {
  __shared__ float warp_top[kMergeThreads / 32];
  __shared__ float4 group_o[kMergeThreads];
  __shared__ float group_total[kMergeMaxGroups];
  wait_for_prior_grid();  // the split kernel's partial sums are written and visible

  const int64_t row = blockIdx.x;
  const int i = int(row % a.q_len), h = int((row / a.q_len) % a.q_heads),
            b = int(row / (int64_t(a.q_len) * a.q_heads));
  if (i >= seq_of(a, b).nq) return;  // a ragged batch's padding row: no output
  const int tid = threadIdx.x, stride = partial_stride(D), col0 = int(blockIdx.y) * cols;
  const int threads = cols / 4, groups = kMergeThreads / threads;  // per group; split groups
  const float* p = a.partial + row * a.splits * stride;
  const float s2 = sink2(a, h);

  float top = -INFINITY;
  for (int s = tid; s < a.splits; s += kMergeThreads) top = fmaxf(top, p[s * stride + D]);
  top = warp_max(top);
  if ((tid & 31) == 0) warp_top[tid >> 5] = top;
  __syncthreads();
  top = s2;
#pragma unroll
  for (int w = 0; w < kMergeThreads / 32; ++w) top = fmaxf(top, warp_top[w]);

  const int c4 = tid % threads, g = tid / threads;
  float4 o = make_float4(0, 0, 0, 0);
  float total = 0;
#pragma unroll 4
  for (int s = g; s < a.splits; s += groups) {
    const float* ps = p + s * stride;
    const float m = ps[D];
    const float w = m == -INFINITY ? 0.f : exp2f(m - top);  // a split that saw no key adds 0
    const float4 x = reinterpret_cast<const float4*>(ps + col0)[c4];
    total += ps[D + 1] * w;
    o.x += x.x * w;
    o.y += x.y * w;
    o.z += x.z * w;
    o.w += x.w * w;
  }
  group_o[tid] = o;
  if (c4 == 0) group_total[g] = total;
  __syncthreads();
  if (g != 0) return;
  total = 0;
  for (int gg = 0; gg < groups; ++gg) total += group_total[gg];
  for (int gg = 1; gg < groups; ++gg) {
    const float4 x = group_o[gg * threads + c4];
    o.x += x.x;
    o.y += x.y;
    o.z += x.z;
    o.w += x.w;
  }
  if (s2 != -INFINITY) total += exp2f(s2 - top);
  const float f = total > 0 ? 1.f / total : 0.f;
  T* out = static_cast<T*>(a.o) + b * a.o_sb + h * a.o_sh + i * a.o_ss + col0 + 4 * c4;
  out[0] = narrow<T>(o.x * f);
  out[1] = narrow<T>(o.y * f);
  out[2] = narrow<T>(o.z * f);
  out[3] = narrow<T>(o.w * f);
  if (tid == 0 && col0 == 0 && a.lse != nullptr)
    a.lse[row] = total > 0 ? (top + log2f(total)) * kLn2 : -INFINITY;
}

template <class T, int D, int MAXR>
void launch_typed(const DecodeArgs& a, cudaStream_t stream) {
  const int rows = (a.q_heads / a.kv_heads) * a.q_len;
  const int smem = decode_smem_bytes(D, rows, a.pipeline);
  static const cudaError_t set = cudaFuncSetAttribute(attention_split_kernel<T, D, MAXR>,
                                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                      decode_smem_bytes(D, MAXR, a.pipeline));
  ATTNPROF_CUDA(set);
  const dim3 grid(unsigned(a.splits), unsigned(a.kv_heads), unsigned(a.batch));
  attention_split_kernel<T, D, MAXR><<<grid, kThreads, smem, stream>>>(a);
  ATTNPROF_CUDA(cudaGetLastError());
}

template <class T, int D>
void launch_merge(const DecodeArgs& a, cudaStream_t stream) {
  const int64_t rows_total = int64_t(a.batch) * a.q_heads * a.q_len;
  cudaLaunchConfig_t cfg = {};
  const int cols = decode_merge_columns(a.splits, D);
  cfg.gridDim = dim3(unsigned(rows_total), unsigned(D / cols));
  cfg.blockDim = dim3(kMergeThreads);
  cfg.stream = stream;
  cudaLaunchAttribute dependent = {};
  dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &dependent;
  cfg.numAttrs = a.dependent_merge ? 1 : 0;
  ATTNPROF_CUDA(cudaLaunchKernelEx(&cfg, merge_reduce_kernel<T, D>, a, cols));
}

// The merge of value dim D in the args' dtype.
template <int D>
void launch_merge_of(const DecodeArgs& a, cudaStream_t stream) {
  if (a.dtype == DType::bf16) return launch_merge<__nv_bfloat16, D>(a, stream);
  launch_merge<__half, D>(a, stream);
}

template <class T, int D>
void launch_rows(const DecodeArgs& a, cudaStream_t stream) {
  const int rows = (a.q_heads / a.kv_heads) * a.q_len;
  if (decode_uses_mma(D, rows)) {
    if (pipeline_has_producer(a.pipeline))
      launch_producer(a, stream);
    else
      launch_mma(a, stream);
  } else if (rows <= 8) {
    launch_typed<T, D, 8>(a, stream);
  } else {
    launch_typed<T, D, (D == 256 ? 32 : kMaxDecodeRows)>(a, stream);
  }
  if (a.splits > 1) launch_decode_merge(a, D, stream);
}

}  // namespace

int decode_merge_columns(int splits, int value_dim) {
  int groups = 1;
  while (groups < splits && groups < kMergeMaxGroups) groups *= 2;
  return std::min(value_dim, 4 * kMergeThreads / groups);
}

DecodeCopy decode_copy_used(DecodeCopy asked, int64_t page_size) {
  const bool rows_strided = page_size == 0 || page_size >= kMmaKeyTile;
  return asked == DecodeCopy::tma && !rows_strided ? DecodeCopy::cp_async : asked;
}

DecodePipeline decode_pipeline_used(DecodePipeline asked, DecodeCopy copy) {
  return pipeline_has_producer(asked) && copy != DecodeCopy::tma ? DecodePipeline::warps4_stages3
                                                                 : asked;
}

bool decode_uses_mma(int head_dim, int rows) {
  return DecodeMmaHeadDims::contains(head_dim) && rows <= kMmaRows;
}

int decode_smem_bytes(int head_dim, int rows, DecodePipeline pipeline) {
  if (decode_uses_mma(head_dim, rows)) {
    if (pipeline_has_producer(pipeline)) return producer_smem_bytes(head_dim, pipeline);
    return mma_smem_bytes(head_dim, pipeline_warps(pipeline), pipeline_stages(pipeline));
  }
  const int kt = head_dim <= 128 ? 64 : 32;
  const int kv = 2 * 2 * kt * (head_dim + 8) * 2;  // two stages of K and V, 2-byte elements
  return kv + rows * head_dim * 4 + rows * kt * 4 + 3 * rows * 4;
}

int64_t decode_partial_floats(int64_t batch, int64_t q_heads, int64_t q_len, int64_t head_dim,
                              int splits) {
  return splits > 1 ? batch * q_heads * q_len * splits * partial_stride(int(head_dim)) : 0;
}

void launch_decode(const DecodeArgs& a, cudaStream_t stream) {
  dispatch_dtype<__half, __nv_bfloat16>(a.dtype, "cuda.decode", [&](auto t) {
    DecodeHeadDims::dispatch(a.head_dim, "cuda.decode", [&](auto d) {
      launch_rows<decltype(t), decltype(d)::value>(a, stream);
    });
  });
}

void launch_decode_merge(const DecodeArgs& a, int value_dim, cudaStream_t stream) {
  switch (value_dim) {
    case 64:
      return launch_merge_of<64>(a, stream);
    case 128:
      return launch_merge_of<128>(a, stream);
    case 256:
      return launch_merge_of<256>(a, stream);
    case 512:
      return launch_merge_of<512>(a, stream);
    default:
      throw CudaError(cudaErrorInvalidValue, "decode merge: value dim not instantiated");
  }
}

}  // namespace attnprof::cuda
