// The two batched matrix products of materialized attention, through cuBLAS:
//   S = alpha * Q K^T   (B, Hq, Nq, Nk), one (Nq x Nk) block per (batch, query head)
//   O = P V             P has S's shape; O in the layout of Q
// with native GQA: query head h reads KV head h / group, by pointer arithmetic, never by a copy.
//
// bhsd: a KV group's query heads are adjacent in memory, so the group is stacked into one
// (group * Nq x D) matrix and each product is ONE cublasGemmStridedBatchedEx over the
// batch * kv_heads groups (K and V are read once per KV head, as in a fused kernel).
// bshd: heads interleave with positions, so a group does not stack; each product is one
// cublasGemmBatchedEx over batch * q_heads matrices whose pointers (built in bind(), never in a
// launch) live in a device buffer, leading dimensions stepping over the other heads.
//
// A run binds the operand sets its launches use (the harness's copy 0 of the tensors, and the
// copies cold timing rotates through: Run::bind); set 0's pointer arrays are tracked, the
// copies' are a measurement device and are not.
//
// Every operand has the point's storage dtype; accumulation is fp32 (CUBLAS_COMPUTE_32F, which
// for fp32 operands means true fp32: no TF32). Sizes are 64-bit: the _64 entry points are used
// where a dimension, leading dimension or batch count passes INT32_MAX.
#pragma once

#include <cublas_v2.h>

#include <cstdint>
#include <span>
#include <vector>

#include "attnprof/memory.hpp"
#include "attnprof/spec.hpp"
#include "cuda/device_buffer.hpp"

namespace attnprof::cuda {

struct GemmShape {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, d = 0, dv = 0;
  DType dtype = DType::fp32;     // storage of Q, K, V, S, P and O
  Layout layout = Layout::bhsd;  // of Q, K, V and O; S and P are always (B, Hq, Nq, Nk)
};
// The shape of `spec`'s products, with `kv_heads` KV heads (the spec's, or q_heads once K and V
// were expanded).
GemmShape gemm_shape(const Spec& spec, DType dtype, int64_t kv_heads);

struct GemmOperands {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* s = nullptr;
  const void* p = nullptr;
  void* o = nullptr;
};

class AttentionGemms {
 public:
  AttentionGemms(const GemmShape& shape, MemoryTracker* tracker);

  // Device bytes one operand set needs for `shape` (the bshd pointer arrays).
  static int64_t bytes_for(const GemmShape& shape);
  // Tracked bytes held (set 0's arrays).
  int64_t bytes() const;

  // Builds both products over each set of operands, set 0 first (uploading the bshd pointer
  // arrays; synchronous). Replaces the sets bound before.
  void bind(std::span<const GemmOperands> sets);

  void scores(cublasHandle_t handle, float alpha, std::size_t set) const;  // S = alpha Q K^T
  void output(cublasHandle_t handle, std::size_t set) const;               // O = P V

  // One batched product in cuBLAS's column-major terms: C_i = A_i^op * B_i^op. Either strided
  // (a, b, c plus strides) or pointer arrays (arrays non-null, in device memory).
  struct Batched {
    cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
    int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, count = 0;
    const void* a = nullptr;
    const void* b = nullptr;
    void* c = nullptr;
    int64_t stride_a = 0, stride_b = 0, stride_c = 0;
    const void* const* a_array = nullptr;
    const void* const* b_array = nullptr;
    void* const* c_array = nullptr;
  };

 private:
  struct Products {
    Batched scores, output;
    DeviceBuffer pointers;
  };
  Products build(const GemmOperands& x, MemoryTracker* tracker) const;

  GemmShape shape_;
  MemoryTracker* tracker_;
  std::vector<Products> sets_;
};

}  // namespace attnprof::cuda
