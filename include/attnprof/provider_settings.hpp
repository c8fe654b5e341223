// Provider settings: the knobs a provider takes beyond the spec (a kernel's pipeline, split or
// schedule, a deterministic backward). Each provider declares its own beside its traits
// (ProviderTraits::settings); core knows no provider's name. `--set PROVIDER.NAME=V1,V2` on run,
// trace and tune is checked against the declaration before any work starts and sweeps its values
// like an axis: a point carries the values of its provider's settings (Point::settings, the
// worker's request), the provider reads them from PrepareContext::settings, and the row records
// those set in its env as "setting.NAME", where the resume and compare keys see them, so two
// configurations of one provider are never mixed under its name (docs/design.md, "Provider
// settings").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnprof/env.hpp"

namespace attnprof {

// One setting a provider declares.
struct ProviderSetting {
  std::string name;  // "pipeline"
  // The values it takes; empty: a "W:C" pair of integers (waves and chunk keys), W >= 1 and
  // C >= min_chunk.
  std::vector<std::string> values;
  int64_t min_chunk = 0;
  std::string help;  // what it changes, and its default
};

// A point's values of its provider's settings, by name; a setting not given is absent (the
// provider's default).
using Settings = std::map<std::string, std::string>;
// The values given for each setting of one provider, by name: swept as a product.
using SettingValues = std::map<std::string, std::vector<std::string>>;

// The value of `name` in `settings`, "" when not given.
std::string setting_of(const Settings& settings, std::string_view name);
// A "W:C" value's waves and chunk keys; nullopt for "" or anything else.
std::optional<std::pair<int64_t, int64_t>> waves_chunk(std::string_view value);

// What the setting takes, in words ("one of a, b", "W:C with W >= 1 and C >= 256").
std::string setting_takes(const ProviderSetting& setting);
bool setting_accepts(const ProviderSetting& setting, const std::string& value);

// "PROVIDER.NAME=V1,V2" from --set, split at the '=', the last '.' before it and the commas.
struct SettingAssignment {
  std::string provider, name;
  std::vector<std::string> values;
};
// Throws invalid_argument (one line) on another form.
SettingAssignment parse_setting_assignment(std::string_view assignment);
// Checks the assignment's name and values against the provider's declared settings; throws
// invalid_argument (one line naming what is known, or what the setting takes) otherwise.
void check_setting_assignment(const SettingAssignment& a, std::string_view text,
                              const std::vector<ProviderSetting>& declared);

// Every combination of the values, in order (the first setting's values outermost); one empty
// Settings when none are given.
std::vector<Settings> setting_combinations(const SettingValues& values);

// "NAME=VALUE NAME=VALUE" ("" when none): how a console line names a point's settings.
std::string settings_label(const Settings& settings);

// "setting.NAME" -> value for each setting given: what a row records in its env.
Fingerprint settings_fingerprint(const Settings& settings);
// The "setting.*" entries of a fingerprint as one key part ("" when none).
std::string settings_key(const Fingerprint& env);

}  // namespace attnprof
