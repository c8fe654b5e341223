// The provider settings table and its checks (provider_settings.hpp).
#include "attnprof/provider_settings.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace attnprof {

namespace {

// Each provider's knobs, for comparing schedules on a device; measured in bench/results/h200
// (docs/providers.md says where and what each showed).
const std::vector<ProviderSetting>& table() {
  static const std::vector<ProviderSetting> t = {
      {"cuda.decode",
       "pipeline",
       "ATTNPROF_DECODE_PIPELINE",
       {"auto", "4x3", "8x3", "4x2", "p64x3", "p128x3", "p64x6", "p64x3r"},
       0,
       "the tensor-core kernel's pipeline: warps x stages, or a producer warp's stages (pKEYSxN, "
       "r: boxes of whole rows); auto (default): the split's rule"},
      {"cuda.decode",
       "copy",
       "ATTNPROF_DECODE_COPY",
       {"tma", "cp.async"},
       0,
       "how tiles are copied; default tma on sm_90, cp.async elsewhere"},
      {"cuda.decode",
       "l2",
       "ATTNPROF_DECODE_L2",
       {"none", "64", "128", "256"},
       0,
       "the L2 promotion of a tensor copy's row, in bytes; default none"},
      {"cuda.decode",
       "split",
       "ATTNPROF_DECODE_SPLIT",
       {},
       256,
       "W:C, W waves of CTAs and chunks of at least C keys; default 4:1024 (ragged 16:2048)"},
      {"cuda.mla.decode",
       "split",
       "ATTNPROF_MLA_SPLIT",
       {},
       64,
       "W:C, W waves of CTAs and chunks of at least C keys; default 1:256"},
      {"cuda.mla.decode",
       "pipeline",
       "ATTNPROF_MLA_PIPELINE",
       {"serial64", "overlap32"},
       0,
       "tiles of 64 keys in turn (default), or of 32 with P V a tile behind the scores"},
      {"cuda.flash.sm90",
       "schedule",
       "ATTNPROF_FLASH_SM90",
       {"pingpong", "nopingpong"},
       0,
       "whether the consumer warpgroups take turns at the tensor cores; default pingpong"},
      {"cuda.flash.sm90",
       "order",
       "ATTNPROF_FLASH_SM90_ORDER",
       {"auto", "heads", "blocks"},
       0,
       "the work items' order; auto (default): heads major, blocks major under a causal mask"},
      {"cuda.flash.sm90",
       "deterministic",
       "ATTNPROF_FLASH_DETERMINISTIC",
       {"0", "1"},
       0,
       "1: the backward sums dQ in key order (the same bits every launch); default 0, atomics"},
      {"cuda.flash",
       "deterministic",
       "ATTNPROF_FLASH_DETERMINISTIC",
       {"0", "1"},
       0,
       "1: the backward sums dQ in key order (the same bits every launch); default 0, atomics"},
  };
  return t;
}

const ProviderSetting* find(std::string_view provider, std::string_view name) {
  for (const ProviderSetting& s : table()) {
    if (s.provider == provider && s.name == name) return &s;
  }
  return nullptr;
}

std::string takes(const ProviderSetting& s) {
  return s.values.empty() ? fmt::format("W:C with W >= 1 and C >= {}", s.min_chunk)
                          : fmt::format("one of {}", fmt::join(s.values, ", "));
}

// "W:C" with W >= 1 and C >= the setting's min_chunk, nothing after it.
std::optional<std::pair<int64_t, int64_t>> waves_chunk(const ProviderSetting& s,
                                                       const std::string& value) {
  long long w = 0, c = 0;
  char tail = 0;
  if (std::sscanf(value.c_str(), "%lld:%lld%c", &w, &c, &tail) != 2 || w < 1 || c < s.min_chunk)
    return std::nullopt;
  return std::pair<int64_t, int64_t>{w, c};
}

bool valid(const ProviderSetting& s, const std::string& value) {
  if (s.values.empty()) return waves_chunk(s, value).has_value();
  for (std::string_view v : s.values) {
    if (v == value) return true;
  }
  return false;
}

}  // namespace

std::span<const ProviderSetting> provider_settings() {
  return table();
}

std::vector<const ProviderSetting*> settings_of(std::string_view provider) {
  std::vector<const ProviderSetting*> out;
  for (const ProviderSetting& s : table()) {
    if (s.provider == provider) out.push_back(&s);
  }
  return out;
}

std::string setting_value(std::string_view provider, std::string_view name) {
  const ProviderSetting* s = find(provider, name);
  if (s == nullptr) {
    throw std::logic_error(fmt::format("{} has no declared setting {}", provider, name));
  }
  const char* v = std::getenv(std::string(s->variable).c_str());
  return v != nullptr ? v : "";
}

std::optional<std::pair<int64_t, int64_t>> waves_chunk_setting(std::string_view provider,
                                                               std::string_view name) {
  const std::string v = setting_value(provider, name);  // throws for an undeclared setting
  return v.empty() ? std::nullopt : waves_chunk(*find(provider, name), v);
}

void apply_setting(std::string_view assignment) {
  const size_t eq = assignment.find('=');
  const std::string_view target = assignment.substr(0, eq);
  const size_t dot = target.rfind('.');
  if (eq == std::string_view::npos || dot == std::string_view::npos || dot == 0) {
    throw std::invalid_argument(fmt::format(
        "--set {}: expected PROVIDER.NAME=VALUE, e.g. cuda.decode.pipeline=p64x3", assignment));
  }
  const std::string_view provider = target.substr(0, dot), name = target.substr(dot + 1);
  const std::string value(assignment.substr(eq + 1));
  const ProviderSetting* s = find(provider, name);
  if (s == nullptr) {
    std::vector<std::string> known;
    for (const ProviderSetting* k : settings_of(provider)) known.emplace_back(k->name);
    throw std::invalid_argument(
        known.empty()
            ? fmt::format("--set {}: {} takes no settings (`attnprof list` shows which do)",
                          assignment, provider)
            : fmt::format("--set {}: {} has no setting '{}' (known: {})", assignment, provider,
                          name, fmt::join(known, ", ")));
  }
  if (!valid(*s, value)) {
    throw std::invalid_argument(
        fmt::format("--set {}: {}.{} takes {}", assignment, provider, name, takes(*s)));
  }
  // Two providers may share a variable (cuda.flash and cuda.flash.sm90's deterministic): one
  // --set gives both the value, and their rows both record it.
  ::setenv(std::string(s->variable).c_str(), value.c_str(), 1);
}

void check_settings() {
  for (const ProviderSetting& s : table()) {
    const char* v = std::getenv(std::string(s.variable).c_str());
    if (v == nullptr || valid(s, v)) continue;
    throw std::invalid_argument(
        fmt::format("{}={}: {}.{} takes {}", s.variable, v, s.provider, s.name, takes(s)));
  }
}

Fingerprint settings_fingerprint(std::string_view provider) {
  Fingerprint f;
  for (const ProviderSetting* s : settings_of(provider)) {
    const std::string v = setting_value(provider, s->name);
    if (!v.empty()) f[fmt::format("setting.{}", s->name)] = v;
  }
  return f;
}

Fingerprint provider_entries(const Provider& provider) {
  Fingerprint f = provider.fingerprint();
  for (auto& [k, v] : settings_fingerprint(provider.name())) f[k] = std::move(v);
  return f;
}

std::string settings_key(const Fingerprint& env) {
  std::string key;
  for (auto it = env.lower_bound("setting."); it != env.end() && it->first.starts_with("setting.");
       ++it) {
    key += fmt::format("{}={};", it->first, it->second);
  }
  return key;
}

}  // namespace attnprof
