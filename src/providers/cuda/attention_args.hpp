// What a launch of one of attnprof's own attention kernels is told about its point (decode's
// DecodeArgs and flash's FlashArgs extend it with their own): the tensors, their element
// strides, a ragged batch's lengths, the shape, the mask, the scale, the softcap and the sinks.
// Filled from the spec and the bound tensors by provider_common.hpp attention_args().
#pragma once

#include <cstdint>

#include "attnprof/spec.hpp"

namespace attnprof::cuda {

struct AttentionArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;  // (B, Hq, Nq) fp32; null: not written
  // Element strides (b, h, s) of Q, O, and of contiguous K and V (the same for both: D == Dv).
  int64_t q_sb = 0, q_sh = 0, q_ss = 0;
  int64_t o_sb = 0, o_sh = 0, o_ss = 0;
  int64_t kv_sb = 0, kv_sh = 0, kv_ss = 0;
  const int32_t* seq_q = nullptr;  // a ragged batch's lengths (device); null: uniform
  const int32_t* seq_kv = nullptr;
  int batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head_dim = 0;
  MaskKind mask = MaskKind::none;
  int window = 0;
  float scale = 1;              // softmax scale (natural units)
  float softcap = 0;            // 0: none
  const float* sink = nullptr;  // (Hq) sink logits; null: none
  DType dtype = DType::bf16;    // bf16 or fp16
};

}  // namespace attnprof::cuda
