// The declared traits of the CUDA providers (traits.hpp), compiled in every build: the providers
// (naive.cpp, math.cpp) and the registry's "not built" entries read the same facts.
#include "providers/factories.hpp"

namespace attnprof {

namespace {

ProviderTraits unfused(std::string name, std::string description, Family family) {
  ProviderTraits t;
  t.name = std::move(name);
  t.description = std::move(description);
  t.device = DeviceKind::cuda;
  t.family = family;
  t.library = "cuBLAS";
  t.in_default_set = true;
  return t;
}

// One of attnprof's own fused kernels: in the default set, writing the LSE, taking the softcap,
// the sinks and ragged batches.
ProviderTraits own_kernel(std::string name, std::string description) {
  ProviderTraits t = fused_cuda_traits(std::move(name), std::move(description), "attnprof");
  t.in_default_set = true;
  t.writes_lse = true;
  t.softcap = true;
  t.sinks = true;
  t.ragged = true;  // each sequence's lengths bound its rows and keys
  return t;
}

// The backward's deterministic option, a setting of cuda.flash and of cuda.flash.sm90 each.
ProviderSetting deterministic_setting() {
  return {"deterministic",
          {"0", "1"},
          0,
          "1: the backward sums dQ in key order (the same bits every launch); default 0, atomics"};
}

constexpr const char* kNaiveRecipe =
    "cuBLAS S = scale*QK^T stored in the dtype (fp32 accumulate; fp32 without TF32), masked row "
    "softmax kernel (fp32 math, P in the dtype), cuBLAS O = PV; S and P materialized (B*Hq*Nq*Nk "
    "each)";

}  // namespace

ProviderTraits fused_cuda_traits(std::string name, std::string description, std::string library) {
  ProviderTraits t;
  t.name = std::move(name);
  t.description = std::move(description);
  t.device = DeviceKind::cuda;
  t.family = Family::fused;
  t.fused = true;
  t.library = std::move(library);
  return t;
}

ProviderTraits cuda_naive_traits() {
  ProviderTraits t = unfused(
      "cuda.naive",
      std::string("naive attention, native GQA (K/V indexed per group, no copy): ") + kNaiveRecipe,
      Family::naive);
  t.role = Role::baseline;
  t.paged_kv = true;  // gathers the pages first, inside the launch (naive.cpp)
  t.fp8 = true;       // widens fp8 inputs to bf16 inside the launch (naive.cpp)
  t.softcap = true;   // the softmax kernel caps the scores and takes the sinks
  t.sinks = true;
  t.ragged = true;  // the softmax masks each row at its sequence's lengths
  return t;
}

ProviderTraits cuda_naive_expand_traits() {
  ProviderTraits t = unfused("cuda.naive.expand",
                             std::string("naive attention after materializing K and V repeated to "
                                         "the query heads (repeat_interleave; no copy when "
                                         "q_heads == kv_heads): ") +
                                 kNaiveRecipe,
                             Family::naive);
  t.role = Role::gqa_expansion;
  t.variant_of = "cuda.naive";
  t.paged_kv = true;
  t.fp8 = true;
  t.softcap = true;
  t.sinks = true;
  t.ragged = true;
  return t;
}

ProviderTraits cuda_decode_traits() {
  ProviderTraits t = own_kernel(
      "cuda.decode",
      "attnprof's split-KV decode kernel: one CTA per (sequence, KV head, chunk of keys) holding "
      "the KV head's query rows (GQA packed), K/V streamed through shared memory by cp.async, "
      "scores and P V on mma.sync up to 16 rows (CUDA cores beyond), online softmax in fp32, "
      "an exact log-sum-exp merge of the splits; at most 64 query rows per KV head");
  t.paged_kv = true;  // reads each key through the block table
  // Its knobs, for comparing schedules on a device; measured in bench/results/h200
  // (docs/providers.md says where and what each showed).
  t.settings = {
      {"pipeline",
       {"auto", "4x3", "8x3", "4x2", "p64x3", "p128x3", "p64x6", "p64x3r"},
       0,
       "the tensor-core kernel's pipeline: warps x stages, or a producer warp's stages (pKEYSxN, "
       "r: boxes of whole rows); auto (default): the split's rule"},
      {"copy",
       {"tma", "cp.async"},
       0,
       "how tiles are copied; default tma on sm_90, cp.async elsewhere"},
      {"l2",
       {"none", "64", "128", "256"},
       0,
       "the L2 promotion of a tensor copy's row, in bytes; default none"},
      {"split",
       {},
       256,
       "W:C, W waves of CTAs and chunks of at least C keys; default 4:1024 (ragged 16:2048)"},
  };
  return t;
}

ProviderTraits cuda_flash_traits() {
  ProviderTraits t = own_kernel(
      "cuda.flash",
      "attnprof's fused prefill kernel, FlashAttention-2's forward for sm80+: a CTA per 128 "
      "query rows of a head, K/V tiles through shared memory by cp.async, Q K^T and P V on "
      "mma.sync (fp32 accumulate), online softmax in base 2, masked tiles skipped; native GQA, "
      "head dims 64 and 128. Backward (FlashAttention-2's): a CTA per 128 keys of a KV head "
      "recomputing P from the LSE, its eight warps splitting each product's tile, dK and dV in "
      "registers, dQ added in fp32 by atomics (or, with --set cuda.flash.deterministic=1, summed "
      "in key order by a kernel of its own)");
  t.backward = true;  // uniform batches without softcap or sinks (flash.cpp refuses the rest)
  t.settings = {deterministic_setting()};
  return t;
}

ProviderTraits cuda_flash_sm90_traits() {
  ProviderTraits t = own_kernel(
      "cuda.flash.sm90",
      "attnprof's fused prefill kernel for Hopper (sm_90a): a persistent CTA per SM walking "
      "blocks of 128 query rows of a head, a producer warpgroup bringing Q and two stages of "
      "128-key K/V tiles (64-key at head dim 256) by TMA (mbarriers), two "
      "consumer warpgroups of 64 rows taking turns at the tensor cores, S = Q K^T and P V on "
      "wgmma from 128-byte-swizzled shared memory, each tile's softmax under the previous tile's "
      "P V; masked tiles skipped; native GQA, head dims 64, 128 and 256. Backward (64 and 128): "
      "cuda.flash's with a CTA per 128 keys of a KV head as two warpgroups of 64, S^T, dP^T and "
      "dQ on wgmma from shared memory, dV and dK on wgmma with P^T and dS^T from registers, dQ "
      "added in fp32 by atomics (or in key order, --set cuda.flash.sm90.deterministic=1)");
  t.variant_of = "cuda.flash";
  t.backward = true;  // as cuda.flash's, and not at head dim 256 (flash_sm90.cpp refuses)
  t.settings = {
      {"schedule",
       {"pingpong", "nopingpong"},
       0,
       "whether the consumer warpgroups take turns at the tensor cores; default pingpong"},
      {"order",
       {"auto", "heads", "blocks"},
       0,
       "the work items' order; auto (default): heads major, blocks major under a causal mask"},
      deterministic_setting(),
  };
  return t;
}

ProviderTraits cuda_mla_decode_traits() {
  ProviderTraits t = own_kernel(
      "cuda.mla.decode",
      "attnprof's absorbed-MLA decode kernel for Hopper (sm_90a): d_qk 576, d_v 512 over one "
      "latent cache (V read as K's first 512 columns), one CTA per 64 query rows of a KV head and "
      "chunk of keys, two warpgroups, S = Q K^T and P V on wgmma from 128-byte-swizzled shared "
      "memory (cp.async, two stages of 64 keys), the scores and softmax on one warpgroup, P V "
      "split by value columns, online softmax in fp32, an exact log-sum-exp merge of the splits");
  t.paged_kv = true;  // reads each key through the block table
  t.settings = {
      {"split", {}, 64, "W:C, W waves of CTAs and chunks of at least C keys; default 1:256"},
      {"pipeline",
       {"serial64", "overlap32"},
       0,
       "tiles of 64 keys in turn (default), or of 32 with P V a tile behind the scores"},
  };
  return t;
}

ProviderTraits cuda_math_traits() {
  return unfused("cuda.math",
                 "PyTorch's math SDPA recipe, unfused: fp32 upcast of Q/K/V, Q and K each times "
                 "sqrt(scale), repeat_interleave of K/V for GQA, fp32 cuBLAS QK^T (no TF32), "
                 "additive -inf mask, fp32 safe softmax, fp32 cuBLAS PV, O and P cast back to the "
                 "dtype; one kernel per step",
                 Family::math);
}

}  // namespace attnprof
