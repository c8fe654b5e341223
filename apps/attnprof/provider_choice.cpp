#include "provider_choice.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "attnprof/registry.hpp"
#include "python_options.hpp"

namespace attnprof::cli {

namespace {

std::vector<std::string_view> split_patterns(std::string_view patterns) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= patterns.size()) {
    const std::size_t comma = patterns.find(',', start);
    const std::string_view p =
        patterns.substr(start, comma == patterns.npos ? patterns.npos : comma - start);
    if (!p.empty()) out.push_back(p);
    if (comma == patterns.npos) break;
    start = comma + 1;
  }
  return out;
}

bool is_glob(std::string_view pattern) {
  return pattern.find_first_of("*?") != std::string_view::npos;
}

// The providers one pattern matches; the registry's refusal when none, with why the Python
// providers are missing where that may be the cause.
std::vector<Provider*> matches(std::string_view pattern, const std::string& python_unavailable) {
  try {
    return select_providers(pattern);
  } catch (const std::invalid_argument& e) {
    if (python_unavailable.empty()) throw;
    throw std::invalid_argument(
        fmt::format("--providers: '{}' matches no provider; the Python providers (py.*, ort.*) "
                    "are unavailable: {}",
                    pattern, python_unavailable));
  }
}

}  // namespace

std::string cannot_run_here(const Provider& p, const RunDevices& devices) {
  if (const Availability a = p.availability(); !a.available) return a.reason;
  if (p.device_kind() == DeviceKind::cuda && !devices.cuda) {
    return devices.cuda_reason.empty() ? std::string("this run has no CUDA device")
                                       : devices.cuda_reason;
  }
  return {};
}

std::vector<Provider*> chosen_providers(const std::string& patterns, const RunDevices& devices,
                                        const std::string& python_unavailable,
                                        std::span<const Spec> specs) {
  if (patterns.empty() || patterns == "default") {
    DefaultSet set = default_set(devices.device, specs,
                                 [&](const Provider& p) { return cannot_run_here(p, devices); });
    std::vector<Provider*> out = std::move(set.providers);
    for (const std::string& name : added_python_providers()) {
      Provider* p = find_provider(name);
      if (p && std::find(out.begin(), out.end(), p) == out.end() &&
          cannot_run_here(*p, devices).empty()) {
        out.push_back(p);
      }
    }
    std::vector<std::string> left_out;
    for (const auto& [p, why] : set.left_out)
      left_out.push_back(fmt::format("{} ({})", p->name(), why));
    if (!left_out.empty()) {
      fmt::print(
          stderr,
          "attnprof: the default set leaves out {} that can run no point of this grid: {}\n",
          left_out.size() == 1 ? "one provider" : fmt::format("{} providers", left_out.size()),
          fmt::join(left_out, "; "));
    }
    return out;
  }
  std::vector<Provider*> out;
  std::vector<std::string> left_out;
  for (const std::string_view pattern : split_patterns(patterns)) {
    for (Provider* p : matches(pattern, python_unavailable)) {
      const std::string why = cannot_run_here(*p, devices);
      if (!why.empty() && !is_glob(pattern)) {
        throw std::invalid_argument(
            fmt::format("--providers: {} cannot run here: {}", p->name(), why));
      }
      if (!why.empty()) {
        left_out.push_back(fmt::format("{} ({})", p->name(), why));
        continue;
      }
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    }
  }
  if (out.empty()) {
    throw std::invalid_argument(fmt::format("--providers: nothing '{}' matches can run here: {}",
                                            patterns, fmt::join(left_out, "; ")));
  }
  if (!left_out.empty()) {
    fmt::print(stderr, "attnprof: --providers '{}' leaves out {} that cannot run here: {}\n",
               patterns,
               left_out.size() == 1 ? "one provider" : fmt::format("{} providers", left_out.size()),
               fmt::join(left_out, "; "));
  }
  return out;
}

SettingsByProvider settings_of_run(const std::vector<std::string>& settings,
                                   const std::vector<Provider*>& providers) {
  SettingsByProvider out;
  for (const std::string& s : settings) {
    SettingAssignment a = parse_setting_assignment(s);
    // A provider this run leaves out is still checked first: a wrong name or value says so.
    if (const Provider* known = find_provider(a.provider))
      check_setting_assignment(a, s, known->traits().settings);
    const auto p = std::find_if(providers.begin(), providers.end(),
                                [&](const Provider* q) { return q->name() == a.provider; });
    if (p == providers.end()) {
      throw std::invalid_argument(fmt::format(
          "--set {}: {} is not among this run's providers, so the setting would change nothing", s,
          a.provider));
    }
    check_setting_assignment(a, s, (*p)->traits().settings);
    out[a.provider][a.name] = std::move(a.values);
  }
  return out;
}

}  // namespace attnprof::cli
