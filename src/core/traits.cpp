#include "attnprof/traits.hpp"

#include <fmt/format.h>

namespace attnprof {

std::string_view to_string(Family f) {
  switch (f) {
    case Family::reference:
      return "reference";
    case Family::naive:
      return "naive";
    case Family::math:
      return "math";
    case Family::fused:
      return "fused";
    case Family::dispatcher:
      return "dispatcher";
    case Family::test:
      return "test";
  }
  return "?";
}

std::string_view to_string(Role r) {
  switch (r) {
    case Role::none:
      return "";
    case Role::baseline:
      return "baseline";
    case Role::gqa_expansion:
      return "gqa_expansion";
  }
  return "?";
}

std::optional<Family> parse_family(std::string_view s) {
  for (Family f : {Family::reference, Family::naive, Family::math, Family::fused,
                   Family::dispatcher, Family::test}) {
    if (to_string(f) == s) return f;
  }
  return std::nullopt;
}

std::optional<Role> parse_role(std::string_view s) {
  for (Role r : {Role::none, Role::baseline, Role::gqa_expansion}) {
    if (to_string(r) == s) return r;
  }
  return std::nullopt;
}

std::string variant_refusal(const ProviderTraits& traits, const Spec& spec) {
  if (spec.paged() && !traits.paged_kv) {
    return traits.name + " reads contiguous K and V only: it has no paged KV cache (page_size " +
           std::to_string(spec.page_size) + ")";
  }
  if (spec.softcap > 0 && !traits.softcap) {
    return traits.name + " has no logit softcap (softcap " + fmt::format("{}", spec.softcap) + ")";
  }
  if (spec.sinks && !traits.sinks) return traits.name + " has no attention sinks";
  if (spec.ragged() && !traits.ragged)
    return traits.name + " takes uniform lengths only: it has no ragged batches (seqlens " +
           spec.seqlens + ")";
  if (is_fp8(spec.dtype) && !traits.fp8) {
    return traits.name + " computes in fp32, fp16 or bf16 only: it takes no " +
           std::string(to_string(spec.dtype)) + " inputs";
  }
  return {};
}

}  // namespace attnprof
