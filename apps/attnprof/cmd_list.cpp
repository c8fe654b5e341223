// `attnprof list`: every provider known to this build, available or not, and why.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "attnprof/provider_settings.hpp"
#include "attnprof/report.hpp"
#include "attnprof/result_json.hpp"
#include "catalog.hpp"
#include "cli.hpp"

namespace attnprof::cli {

namespace {

struct ListOptions {
  bool json = false;
  PythonCliOptions python;
};

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
  return {
      sub, [opts]() {
        const Catalog catalog = provider_catalog(opts->python);
        const std::string& no_python = catalog.python_unavailable;
        // The name column as wide as the longest name, so no name breaks the columns.
        std::size_t width = 4;
        for (const auto& [p, a] : catalog.providers) width = std::max(width, p->name().size());
        for (const auto& [p, a] : catalog.providers) {
          const ProviderTraits t = p->traits();
          if (opts->json) {
            nlohmann::ordered_json settings = nlohmann::ordered_json::array();
            for (const ProviderSetting& s : t.settings) {
              settings.push_back({{"name", s.name}, {"values", values_of(s)}, {"help", s.help}});
            }
            nlohmann::ordered_json j = {
                {"provider", t.name},   {"available", a.available},
                {"reason", a.reason},   {"default", t.in_default_set && a.available},
                {"traits", to_json(t)}, {"settings", settings}};
            fmt::print("{}\n", j.dump());
          } else {
            // "default": in the default set wherever the grid has a point it can run.
            fmt::print("{:<{}} {:<5} {:<12} {:<8}{}\n", t.name, width, to_string(t.device),
                       a.available ? "available" : "unavailable",
                       t.in_default_set && a.available ? "default" : "",
                       a.available ? t.description : a.reason);
            for (const ProviderSetting& s : t.settings) {
              fmt::print("    --set {}.{}={}  {}\n", t.name, s.name, values_of(s), s.help);
            }
          }
        }
        if (!no_python.empty()) {
          if (opts->json) {
            nlohmann::ordered_json j = {
                {"provider", "py.*"}, {"available", false}, {"reason", no_python}};
            fmt::print("{}\n", j.dump());
          } else {
            fmt::print("{:<{}} {:<5} {:<12} {:<8}{}\n", "py.*", width, "", "unavailable", "",
                       no_python);
          }
        }
        // Where the HTML report's charting library comes from (report.hpp).
        if (!opts->json) {
          const ChartLibrary charts = find_chart_library();
          fmt::print("\nreport charts: {}\n",
                     charts.found ? fmt::format("Chart.js {}, inlined in each HTML report from {}",
                                                charts.version, charts.path.string())
                                  : charts.reason);
        }
        return 0;
      }};
}

}  // namespace attnprof::cli
