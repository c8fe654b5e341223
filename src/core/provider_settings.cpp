// Provider settings' checks, combinations and records (provider_settings.hpp). The settings
// themselves are declared by each provider (ProviderTraits::settings).
#include "attnprof/provider_settings.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <stdexcept>

namespace attnprof {

std::string setting_of(const Settings& settings, std::string_view name) {
  const auto it = settings.find(std::string(name));
  return it == settings.end() ? "" : it->second;
}

std::optional<std::pair<int64_t, int64_t>> waves_chunk(std::string_view value) {
  long long w = 0, c = 0;
  char tail = 0;
  if (std::sscanf(std::string(value).c_str(), "%lld:%lld%c", &w, &c, &tail) != 2)
    return std::nullopt;
  return std::pair<int64_t, int64_t>{w, c};
}

std::string setting_takes(const ProviderSetting& s) {
  return s.values.empty() ? fmt::format("W:C with W >= 1 and C >= {}", s.min_chunk)
                          : fmt::format("one of {}", fmt::join(s.values, ", "));
}

bool setting_accepts(const ProviderSetting& s, const std::string& value) {
  if (s.values.empty()) {
    const auto wc = waves_chunk(value);
    return wc && wc->first >= 1 && wc->second >= s.min_chunk;
  }
  for (const std::string& v : s.values) {
    if (v == value) return true;
  }
  return false;
}

SettingAssignment parse_setting_assignment(std::string_view assignment) {
  const size_t eq = assignment.find('=');
  const std::string_view target = assignment.substr(0, eq);
  const size_t dot = target.rfind('.');
  if (eq == std::string_view::npos || dot == std::string_view::npos || dot == 0) {
    throw std::invalid_argument(
        fmt::format("--set {}: expected PROVIDER.NAME=VALUE[,VALUE...], e.g. "
                    "cuda.decode.pipeline=p64x3",
                    assignment));
  }
  SettingAssignment a{std::string(target.substr(0, dot)), std::string(target.substr(dot + 1)), {}};
  std::string_view rest = assignment.substr(eq + 1);
  while (true) {
    const size_t comma = rest.find(',');
    a.values.emplace_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return a;
}

void check_setting_assignment(const SettingAssignment& a, std::string_view text,
                              const std::vector<ProviderSetting>& declared) {
  const ProviderSetting* s = nullptr;
  std::vector<std::string> known;
  for (const ProviderSetting& d : declared) {
    known.push_back(d.name);
    if (d.name == a.name) s = &d;
  }
  if (s == nullptr) {
    throw std::invalid_argument(
        known.empty()
            ? fmt::format("--set {}: {} takes no settings (`attnprof list` shows which do)", text,
                          a.provider)
            : fmt::format("--set {}: {} has no setting '{}' (known: {})", text, a.provider, a.name,
                          fmt::join(known, ", ")));
  }
  for (const std::string& v : a.values) {
    if (!setting_accepts(*s, v)) {
      throw std::invalid_argument(
          fmt::format("--set {}: {}.{} takes {}", text, a.provider, a.name, setting_takes(*s)));
    }
  }
}

std::vector<Settings> setting_combinations(const SettingValues& values) {
  std::vector<Settings> out = {Settings{}};
  for (auto it = values.rbegin(); it != values.rend(); ++it) {
    std::vector<Settings> next;
    for (const std::string& v : it->second) {
      for (const Settings& rest : out) {
        Settings s = rest;
        s[it->first] = v;
        next.push_back(std::move(s));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::string settings_label(const Settings& settings) {
  std::string out;
  for (const auto& [name, value] : settings) {
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, value);
  }
  return out;
}

Fingerprint settings_fingerprint(const Settings& settings) {
  Fingerprint f;
  for (const auto& [name, value] : settings) f[fmt::format("setting.{}", name)] = value;
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
