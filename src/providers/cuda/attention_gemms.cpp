#include "providers/cuda/attention_gemms.hpp"

#include <cuda_runtime.h>

#include <climits>
#include <stdexcept>
#include <vector>

#include "cuda/cuda_check.hpp"

namespace attnprof::cuda {
namespace {

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::fp16:
      return CUDA_R_16F;
    case DType::bf16:
      return CUDA_R_16BF;
    case DType::fp32:
      break;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
      throw std::invalid_argument("the naive GEMMs take fp32, fp16 or bf16 operands, not fp8");
  }
  return CUDA_R_32F;
}

bool fits_int(const AttentionGemms::Batched& g) {
  for (int64_t x : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.count})
    if (x > INT_MAX) return false;
  return true;
}

void run(cublasHandle_t h, const AttentionGemms::Batched& g, DType dtype, float alpha) {
  const float beta = 0.f;
  const cudaDataType_t t = cuda_type(dtype);
  constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_32F;
  constexpr cublasGemmAlgo_t kAlgo = CUBLAS_GEMM_DEFAULT;
  const bool small = fits_int(g);
  if (g.a_array) {
    if (small) {
      ATTNPROF_CUBLAS(cublasGemmBatchedEx(h, g.trans_a, g.trans_b, int(g.m), int(g.n), int(g.k),
                                          &alpha, g.a_array, t, int(g.lda), g.b_array, t,
                                          int(g.ldb), &beta, g.c_array, t, int(g.ldc), int(g.count),
                                          kCompute, kAlgo));
    } else {
      ATTNPROF_CUBLAS(cublasGemmBatchedEx_64(h, g.trans_a, g.trans_b, g.m, g.n, g.k, &alpha,
                                             g.a_array, t, g.lda, g.b_array, t, g.ldb, &beta,
                                             g.c_array, t, g.ldc, g.count, kCompute, kAlgo));
    }
    return;
  }
  if (small) {
    ATTNPROF_CUBLAS(cublasGemmStridedBatchedEx(
        h, g.trans_a, g.trans_b, int(g.m), int(g.n), int(g.k), &alpha, g.a, t, int(g.lda),
        g.stride_a, g.b, t, int(g.ldb), g.stride_b, &beta, g.c, t, int(g.ldc), g.stride_c,
        int(g.count), kCompute, kAlgo));
  } else {
    ATTNPROF_CUBLAS(cublasGemmStridedBatchedEx_64(
        h, g.trans_a, g.trans_b, g.m, g.n, g.k, &alpha, g.a, t, g.lda, g.stride_a, g.b, t, g.ldb,
        g.stride_b, &beta, g.c, t, g.ldc, g.stride_c, g.count, kCompute, kAlgo));
  }
}

// Row-major products in cuBLAS's column-major terms: cuBLAS reads a row-major (r x c) matrix
// as the column-major (c x r) matrix, its transpose. Row-major S = Q K^T is therefore computed
// as column-major S^T (Nk x rows) = K (Nk x D) * Q^T (D x rows): A = K's storage read as
// (D x Nk) with op T, B = Q's storage read as (D x rows) with op N. Row-major O = P V is
// column-major O^T (Dv x rows) = V^T (Dv x Nk) * P^T (Nk x rows), both op N.

}  // namespace

GemmShape gemm_shape(const Spec& spec, DType dtype, int64_t kv_heads) {
  GemmShape g;
  g.batch = spec.batch;
  g.q_heads = spec.q_heads;
  g.kv_heads = kv_heads;
  g.q_len = spec.q_len;
  g.kv_len = spec.kv_len;
  g.d = spec.head_dim;
  g.dv = spec.dv();
  g.dtype = dtype;
  g.layout = spec.layout;
  return g;
}

int64_t AttentionGemms::bytes_for(const GemmShape& s) {
  // Six arrays (A, B, C of each product) of one pointer per (batch, query head).
  return s.layout == Layout::bshd ? 6 * s.batch * s.q_heads * int64_t{sizeof(void*)} : 0;
}

AttentionGemms::AttentionGemms(const GemmShape& shape, MemoryTracker* tracker)
    : shape_(shape), tracker_(tracker) {}

int64_t AttentionGemms::bytes() const {
  return sets_.empty() ? 0 : sets_.front().pointers.bytes();
}

void AttentionGemms::bind(std::span<const GemmOperands> sets) {
  sets_.clear();
  for (std::size_t i = 0; i < sets.size(); ++i) {
    sets_.push_back(build(sets[i], i == 0 ? tracker_ : nullptr));
  }
}

AttentionGemms::Products AttentionGemms::build(const GemmOperands& x,
                                               MemoryTracker* tracker) const {
  const GemmShape& s = shape_;
  Products p;
  p.pointers = DeviceBuffer(bytes_for(s), tracker);
  const int64_t group = s.q_heads / s.kv_heads;
  const int64_t scores_per_head = s.q_len * s.kv_len;

  p.scores.trans_a = CUBLAS_OP_T;  // K^T
  p.scores.trans_b = CUBLAS_OP_N;
  p.scores.m = s.kv_len;
  p.scores.k = s.d;
  p.scores.ldc = s.kv_len;
  p.output.trans_a = CUBLAS_OP_N;
  p.output.trans_b = CUBLAS_OP_N;
  p.output.m = s.dv;
  p.output.k = s.kv_len;
  p.output.ldb = s.kv_len;

  if (s.layout == Layout::bhsd) {
    // One product per (batch, KV head): the group's query heads stacked as group * Nq rows.
    const int64_t rows = group * s.q_len;
    p.scores.n = rows;
    p.scores.count = s.batch * s.kv_heads;
    p.scores.a = x.k;
    p.scores.lda = s.d;
    p.scores.stride_a = s.kv_len * s.d;
    p.scores.b = x.q;
    p.scores.ldb = s.d;
    p.scores.stride_b = rows * s.d;
    p.scores.c = x.s;
    p.scores.stride_c = rows * s.kv_len;

    p.output.n = rows;
    p.output.count = s.batch * s.kv_heads;
    p.output.a = x.v;
    p.output.lda = s.dv;
    p.output.stride_a = s.kv_len * s.dv;
    p.output.b = x.p;
    p.output.stride_b = rows * s.kv_len;
    p.output.c = x.o;
    p.output.ldc = s.dv;
    p.output.stride_c = rows * s.dv;
    return p;
  }

  // bshd: one product per (batch, query head), rows strided over the other heads.
  const int64_t count = s.batch * s.q_heads;
  const size_t n = static_cast<size_t>(count);
  std::vector<const void*> host(6 * n);
  const auto esize = static_cast<int64_t>(dtype_bytes(s.dtype));
  auto at = [esize](const void* base, int64_t elems) {
    return static_cast<const void*>(static_cast<const char*>(base) + elems * esize);
  };
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.q_heads; ++h) {
      const size_t i = static_cast<size_t>(b * s.q_heads + h);
      const int64_t g = h / group;
      host[0 * n + i] = at(x.k, (b * s.kv_len * s.kv_heads + g) * s.d);
      host[1 * n + i] = at(x.q, (b * s.q_len * s.q_heads + h) * s.d);
      host[2 * n + i] = at(x.s, (b * s.q_heads + h) * scores_per_head);
      host[3 * n + i] = at(x.v, (b * s.kv_len * s.kv_heads + g) * s.dv);
      host[4 * n + i] = at(x.p, (b * s.q_heads + h) * scores_per_head);
      host[5 * n + i] = at(x.o, (b * s.q_len * s.q_heads + h) * s.dv);
    }
  }
  ATTNPROF_CUDA(cudaMemcpy(p.pointers.data(), host.data(), host.size() * sizeof(void*),
                           cudaMemcpyHostToDevice));
  auto* dev = p.pointers.as<const void*>();

  p.scores.n = s.q_len;
  p.scores.count = count;
  p.scores.lda = s.kv_heads * s.d;
  p.scores.ldb = s.q_heads * s.d;
  p.scores.a_array = dev + 0 * n;
  p.scores.b_array = dev + 1 * n;
  p.scores.c_array = const_cast<void* const*>(dev + 2 * n);

  p.output.n = s.q_len;
  p.output.count = count;
  p.output.lda = s.kv_heads * s.dv;
  p.output.ldc = s.q_heads * s.dv;
  p.output.a_array = dev + 3 * n;
  p.output.b_array = dev + 4 * n;
  p.output.c_array = const_cast<void* const*>(dev + 5 * n);
  return p;
}

void AttentionGemms::scores(cublasHandle_t handle, float alpha, std::size_t set) const {
  run(handle, sets_.at(set).scores, shape_.dtype, alpha);
}

void AttentionGemms::output(cublasHandle_t handle, std::size_t set) const {
  run(handle, sets_.at(set).output, shape_.dtype, 1.f);
}

}  // namespace attnprof::cuda
