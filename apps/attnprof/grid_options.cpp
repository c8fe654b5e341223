#include "grid_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "attnprof/grid.hpp"

namespace attnprof::cli {

CLI::Validator non_empty() {
  return CLI::Validator(
      [](const std::string& v) {
        return v.empty() ? std::string("an empty list; give at least one value") : std::string();
      },
      "NONEMPTY", "non_empty");
}

bool GridCliOptions::given(std::string_view key) const {
  const auto it = axes.find(key);
  return it != axes.end() && !it->second.empty();
}

void add_grid_options(CLI::App* sub, GridCliOptions& o) {
  // Each option given empty (`--seq ''`) is refused, as an empty axis in a preset is: it would
  // silently run the default instead.
  sub->add_option("--model", o.model,
                  "Model shape: heads, KV heads, head dims and score modifiers from "
                  "presets/models.toml")
      ->check(non_empty());
  for (const Axis& axis : axes()) {
    sub->add_option(std::string(axis.flag), o.axes[std::string(axis.key)], std::string(axis.help))
        ->check(non_empty());
  }
}

void apply_grid_overrides(GridAxes& ax, const GridCliOptions& o) {
  if (!o.model.empty()) apply_model(ax, find_model(o.model));
  for (const Axis& axis : axes()) {
    if (!o.given(axis.key)) continue;
    try {
      ax.set(axis.key, o.axes.at(std::string(axis.key)));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}: {}", axis.flag, e.what()));
    }
  }
}

bool any_grid_option(const GridCliOptions& o) {
  return !o.model.empty() ||
         std::any_of(o.axes.begin(), o.axes.end(), [](const auto& a) { return !a.second.empty(); });
}

std::vector<Spec> grid_points(const GridCliOptions& o) {
  GridAxes ax;
  apply_grid_overrides(ax, o);
  return expand(ax);
}

std::vector<Spec> grid_specs(const GridCliOptions& o) {
  std::vector<Spec> specs = grid_points(o);
  for (const Spec& s : specs) {
    if (auto errors = s.validate(); !errors.empty()) {
      throw std::invalid_argument(fmt::format("point {}: {}", s.label(), errors.front()));
    }
  }
  return specs;
}

double parse_fraction_option(const std::string& text, const char* option) {
  std::string s = text;
  double scale = 1;
  if (!s.empty() && s.back() == '%') {
    s.pop_back();
    scale = 0.01;
  }
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used) * scale;
    if (used != s.size() || !(v > 0) || v >= 1) throw std::invalid_argument("range");
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument(fmt::format(
        "{}: '{}' must be a fraction in (0, 1) or a percentage like 0.5%", option, text));
  }
}

}  // namespace attnprof::cli
