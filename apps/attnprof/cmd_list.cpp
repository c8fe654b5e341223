// `attnprof list`: every provider known to this build, available or not, and why.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "attnprof/engine.hpp"
#include "attnprof/provider_settings.hpp"
#include "attnprof/registry.hpp"
#include "attnprof/result_json.hpp"
#include "cli.hpp"
#include "python_options.hpp"

namespace attnprof::cli {

namespace {

struct ListOptions {
  bool json = false;
  PythonCliOptions python;
};

// Availability of a provider here: its own, then its engine's (a built CUDA provider on a
// machine without a driver is unavailable for the engine's reason).
Availability availability_here(const Provider& p, const Engine* cuda) {
  Availability a = p.availability();
  if (!a.available || p.device_kind() == DeviceKind::cpu) return a;
  if (cuda == nullptr) return {false, "no CUDA engine in this build"};
  return cuda->availability();
}

// A setting's values as --set takes them: "a|b|c", or "W:C".
std::string values_of(const ProviderSetting& s) {
  return s.values.empty() ? std::string("W:C") : fmt::format("{}", fmt::join(s.values, "|"));
}

}  // namespace

Command add_list_command(CLI::App& app) {
  auto opts = std::make_shared<ListOptions>();
  CLI::App* sub = app.add_subcommand("list", "List providers, available or not, and why");
  sub->add_flag("--json", opts->json, "One JSON object per provider");
  add_python_options(sub, opts->python);
  return {sub, [opts]() {
            const std::string no_python = register_python_providers(opts->python, true, "");
            std::unique_ptr<Engine> cuda = make_cuda_engine(0);
            // The name column as wide as the longest name, so no name breaks the columns.
            std::size_t width = 4;
            for (const auto& p : all_providers()) width = std::max(width, p->name().size());
            for (const auto& p : all_providers()) {
              const Availability a = availability_here(*p, cuda.get());
              const ProviderTraits t = p->traits();
              if (opts->json) {
                nlohmann::ordered_json settings = nlohmann::ordered_json::array();
                for (const ProviderSetting* s : settings_of(t.name)) {
                  settings.push_back({{"name", s->name},
                                      {"values", values_of(*s)},
                                      {"value", setting_value(t.name, s->name)},
                                      {"help", s->help}});
                }
                nlohmann::ordered_json j = {{"provider", t.name},
                                            {"available", a.available},
                                            {"reason", a.reason},
                                            {"traits", to_json(t)},
                                            {"settings", settings}};
                fmt::print("{}\n", j.dump());
              } else {
                fmt::print("{:<{}} {:<5} {:<12} {}\n", t.name, width, to_string(t.device),
                           a.available ? "available" : "unavailable",
                           a.available ? t.description : a.reason);
                for (const ProviderSetting* s : settings_of(t.name)) {
                  fmt::print("    --set {}.{}={}  {}\n", t.name, s->name, values_of(*s), s->help);
                }
              }
            }
            if (!no_python.empty()) {
              if (opts->json) {
                nlohmann::ordered_json j = {
                    {"provider", "py.*"}, {"available", false}, {"reason", no_python}};
                fmt::print("{}\n", j.dump());
              } else {
                fmt::print("{:<{}} {:<5} {:<12} {}\n", "py.*", width, "", "unavailable", no_python);
              }
            }
            return 0;
          }};
}

}  // namespace attnprof::cli
