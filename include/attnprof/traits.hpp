// What a provider declares about itself (docs/design.md, "Provider traits"): the facts reports,
// traces and findings read, never guessed from a provider's name. Every row records them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/device.hpp"
#include "attnprof/provider_settings.hpp"
#include "attnprof/spec.hpp"

namespace attnprof {

// How attention is computed.
enum class Family {
  reference,   // the fp64 oracle
  naive,       // scores materialized, softmax, PV: the unfused baseline
  math,        // unfused with fp32 upcasts (PyTorch's math backend)
  fused,       // one kernel (or a few) that never write the N x N scores to memory
  dispatcher,  // chooses among the others per call (torch.sdpa.default): see the row's note
  test,        // fault injection, test-only
};
std::string_view to_string(Family f);
std::optional<Family> parse_family(std::string_view s);

// The role a provider plays in comparisons (findings, report tables).
enum class Role {
  none,
  baseline,       // the unfused baseline of its device: speedups are relative to it
  gqa_expansion,  // the baseline after repeating K/V heads: prices GQA expansion
};
std::string_view to_string(Role r);
std::optional<Role> parse_role(std::string_view s);

struct ProviderTraits {
  std::string name;         // "cpu.naive", "cuda.naive", "cudnn.sdpa"
  std::string description;  // which upstream kernel or algorithm runs
  DeviceKind device = DeviceKind::cpu;
  Family family = Family::naive;
  // Whether the N x N scores stay out of device memory (a fused kernel). A dispatcher is fused
  // only if every backend it may choose is.
  bool fused = false;
  std::string library;          // "OpenBLAS", "cuBLAS", "cuDNN", "PyTorch", "attnprof"
  std::string library_version;  // of the library loaded at run time, "" when not known yet
  bool in_default_set = false;  // run when no --providers is given (on its device)
  Role role = Role::none;
  // The provider this one is a variant of ("cuda.naive" for cuda.naive.expand, "cudnn.sdpa" for
  // cudnn.sdpa.infer); "" for none. Findings compare a variant with what it varies.
  std::string variant_of;
  bool forward = true;
  bool backward = false;
  bool writes_lse = false;  // fills the point's log-sum-exp (verified)
  // Reads K and V from a paged cache through its block table (Spec::page_size, io.hpp). The
  // runner refuses a paged point to a provider without it, saying so.
  bool paged_kv = false;
  // Takes fp8 inputs (DType::fp8_e4m3/fp8_e5m2: one byte per element with the harness's
  // per-tensor scale, inputs.hpp fp8_tensor_scale) and writes O (with `backward`: dQ, dK and dV
  // too, from an fp8 dO) in the same format. The runner refuses an fp8 point to a provider
  // without it, saying so.
  bool fp8 = false;
  // Applies logit soft-capping (Spec::softcap) and attention sinks (Spec::sinks); the runner
  // refuses such points to a provider without them, saying so.
  bool softcap = false;
  bool sinks = false;
  // Takes a ragged batch (Spec::seqlens, ragged.hpp): reads each sequence's lengths (Io::seq_q,
  // seq_kv) and neither reads past a sequence's keys nor needs its padding rows. The runner
  // refuses a ragged point to a provider without it, saying so.
  bool ragged = false;
  // Runs kernels on streams of its own (JAX) and orders them with the timed stream, proving the
  // order in prepare: kernels elsewhere are then off the stream only when they run outside the
  // launch's window (Engine::trace_kernels); without it any is (fault off_stream).
  bool own_streams = false;
  // A kernel whose arithmetic is deliberately lossier than its dtype (SageAttention's INT8
  // Q K^T) says how ("int8 Q K^T per block, fp16 P V"; "" for none) and the per-row relative L2
  // bound it promises for O, which then replaces the dtype's when that is tighter (verify.hpp
  // tolerance_for; at most kMaxDeclaredTolerance). Rows and reports say the bound was declared.
  std::string quantization;
  double output_tolerance = 0;
  // Seconds its prepare() may take beyond the worker's hang limit (--hang-timeout): a library that
  // JIT-compiles a kernel module on first use (FlashInfer: up to 65 s on the H200). The supervisor
  // waits that much longer for its points before it calls the worker hung; the time lands in
  // prepare_s like any preparation. 0: none.
  double prepare_allowance_s = 0;
  // The knobs it takes beyond the spec (provider_settings.hpp): `--set NAME=...` is checked
  // against them, and its points carry their values to prepare() (PrepareContext::settings).
  std::vector<ProviderSetting> settings;
};

// The loosest bound a provider may declare: a row 10% off in L2 is no longer the attention asked
// for, whatever the arithmetic.
inline constexpr double kMaxDeclaredTolerance = 0.1;

// Why a provider with these traits cannot take the spec's variant (a paged cache, fp8, softcap,
// sinks, a ragged batch), in words;
// "" when nothing in the traits stands in the way.
std::string variant_refusal(const ProviderTraits& traits, const Spec& spec);

}  // namespace attnprof
