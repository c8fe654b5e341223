// Provider settings: the knobs a provider takes beyond the spec (a kernel's pipeline, split or
// schedule, a deterministic backward), declared once in a table (src/core/provider_settings.cpp).
// Each is set with `--set PROVIDER.NAME=VALUE` on run, tune and trace (or its ATTNPROF_*
// variable), validated before any work starts, listed by `attnprof list`, and recorded in each
// row's env as "setting.NAME" (only those set), where the resume and compare keys see it, so two
// configurations of one provider are never mixed under its name.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnprof/env.hpp"
#include "attnprof/provider.hpp"

namespace attnprof {

struct ProviderSetting {
  std::string_view provider;  // "cuda.decode"
  std::string_view name;      // "pipeline"
  std::string_view variable;  // "ATTNPROF_DECODE_PIPELINE": how the setting reaches the provider
  // The values it takes; empty: a "W:C" pair of integers (waves and chunk keys), W >= 1 and
  // C >= min_chunk.
  std::vector<std::string_view> values;
  int min_chunk = 0;
  std::string_view help;  // what it changes, and its default
};

// Every declared setting, in a fixed order.
std::span<const ProviderSetting> provider_settings();
// The provider's settings (none for most providers).
std::vector<const ProviderSetting*> settings_of(std::string_view provider);

// The value set for a provider's setting ("" when unset). A setting must be declared: an
// undeclared one is a logic_error (a provider asking for what the table lacks).
std::string setting_value(std::string_view provider, std::string_view name);

// A "W:C" setting's waves and chunk keys; nullopt when unset, or not W:C with W >= 1 and
// C >= its min_chunk (a value --set and check_settings refuse).
std::optional<std::pair<int64_t, int64_t>> waves_chunk_setting(std::string_view provider,
                                                               std::string_view name);

// "PROVIDER.NAME=VALUE" from --set: checked against the table (one-line invalid_argument naming
// what is known) and made the process's value, which the workers it starts inherit.
void apply_setting(std::string_view assignment);
// Every declared variable that is set holds one of its setting's values; else invalid_argument,
// one line naming the variable, its value and what it takes.
void check_settings();

// "setting.NAME" -> value for each of the provider's settings that is set: what a row records.
Fingerprint settings_fingerprint(std::string_view provider);
// The provider's own fingerprint entries (Provider::fingerprint: library versions) with its
// settings: what every executor adds to its engine's fingerprint for the provider's rows.
Fingerprint provider_entries(const Provider& provider);
// The "setting.*" entries of a fingerprint as one key part ("" when none).
std::string settings_key(const Fingerprint& env);

}  // namespace attnprof
