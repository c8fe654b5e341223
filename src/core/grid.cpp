#include "attnprof/grid.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <toml++/toml.h>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "attnprof/command_line.hpp"

namespace attnprof {

Shard parse_shard(std::string_view text) {
  const std::size_t slash = text.find('/');
  const auto whole = [&](std::string_view part, int64_t& v) {
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    return !part.empty() && ec == std::errc() && ptr == part.data() + part.size();
  };
  Shard s;
  if (slash == std::string_view::npos || !whole(text.substr(0, slash), s.index) ||
      !whole(text.substr(slash + 1), s.count) || s.count < 1 || s.index < 0 || s.index >= s.count) {
    throw std::invalid_argument(fmt::format(
        "--shard: '{}' is not K/N with 0 <= K < N (the share K of N, counted from 0, as "
        "$SLURM_PROCID/$SLURM_NTASKS are)",
        text));
  }
  return s;
}

std::vector<Spec> shard_specs(const std::vector<Spec>& specs, const Shard& shard) {
  std::vector<Spec> out;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (static_cast<int64_t>(i % static_cast<std::size_t>(shard.count)) == shard.index)
      out.push_back(specs[i]);
  }
  return out;
}

std::filesystem::path preset_dir() {
  if (const char* env = std::getenv("ATTNPROF_PRESETS"); env && *env) return env;
  // Installed (<prefix>/bin/attnprof -> <prefix>/share/attnprof/presets), then the source tree
  // the binary was built from, then ./presets (a binary carried to another machine and run
  // from a checkout).
  std::vector<std::filesystem::path> candidates;
  std::error_code ec;
  if (const auto exe = this_executable(); !exe.empty())
    candidates.push_back(exe.parent_path().parent_path() / "share" / "attnprof" / "presets");
#ifdef ATTNPROF_SOURCE_PRESETS
  candidates.emplace_back(ATTNPROF_SOURCE_PRESETS);
#endif
  candidates.emplace_back("presets");
  for (const auto& c : candidates) {
    if (std::filesystem::exists(c / "models.toml", ec)) return c;
  }
  return candidates.back();
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(preset_dir(), ec)) {
    if (e.path().extension() == ".toml" && e.path().stem() != "models") {
      names.push_back(e.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// A TOML value as an axis's list text: a number, a boolean (on/off), a string (a list or a range
// itself) or an array of them (joined with ',').
std::string list_text(const toml::node& node, std::string_view key) {
  const auto one = [&](const toml::node& n) -> std::string {
    if (auto i = n.value_exact<int64_t>()) return std::to_string(*i);
    if (auto d = n.value_exact<double>()) return fmt::format("{}", *d);
    if (auto b = n.value_exact<bool>()) return *b ? "on" : "off";
    if (auto s = n.value_exact<std::string>()) return *s;
    throw std::invalid_argument(
        fmt::format("'{}' must be a number, a boolean, a string or a list of them", key));
  };
  const auto* arr = node.as_array();
  if (!arr) return one(node);
  if (arr->empty()) throw std::invalid_argument(fmt::format("'{}' is empty", key));
  std::string text;
  for (const auto& el : *arr) {
    if (el.is_array()) throw std::invalid_argument(fmt::format("'{}' holds a list in a list", key));
    if (!text.empty()) text += ',';
    text += one(el);
  }
  return text;
}

std::vector<std::string> string_axis(const toml::node& node, std::string_view key) {
  if (auto s = node.value<std::string>()) return {*s};
  if (const auto* arr = node.as_array()) {
    if (arr->empty()) throw std::invalid_argument(fmt::format("'{}' is empty", key));
    std::vector<std::string> v;
    for (const auto& el : *arr) {
      auto s = el.value<std::string>();
      if (!s) throw std::invalid_argument(fmt::format("'{}' must hold strings", key));
      v.push_back(*s);
    }
    return v;
  }
  throw std::invalid_argument(fmt::format("'{}' must be a string or a list of strings", key));
}

// One axis set from a TOML value, its errors naming the key.
void set_axis(GridAxes& ax, std::string_view key, const toml::node& node) {
  if (!find_axis(key)) {
    throw std::invalid_argument(
        fmt::format("unknown key '{}' (known: {}, model)", key, axis_keys()));
  }
  const std::string list = list_text(node, key);
  try {
    ax.set(key, list);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("'{}': {}", key, e.what()));
  }
}

// A series: a model first (its axes), then every other key, which overrides the model's.
GridAxes parse_series(const toml::table& t) {
  GridAxes ax;
  if (const toml::node* model = t.get("model")) {
    const std::vector<std::string> names = string_axis(*model, "model");
    if (names.size() != 1) {
      throw std::invalid_argument(fmt::format("'model' takes one value (got {})", names.size()));
    }
    apply_model(ax, find_model(names.front()));
  }
  for (const auto& [k, node] : t) {
    if (k.str() != "model") set_axis(ax, k.str(), node);
  }
  return ax;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A top-level string field; `fallback` when absent.
std::string string_field(const toml::table& tbl, const char* key, std::string fallback) {
  const toml::node* node = tbl.get(key);
  if (!node) return fallback;
  auto s = node->value<std::string>();
  if (!s) throw std::invalid_argument(fmt::format("'{}' must be a string", key));
  return *s;
}

Preset read_preset(const toml::table& tbl, std::string_view name) {
  // A misspelt key would otherwise be ignored and the grid silently differ from the file.
  for (const auto& [k, node] : tbl) {
    const std::string_view key = k.str();
    if (key != "name" && key != "description" && key != "providers" && key != "series") {
      throw std::invalid_argument(fmt::format(
          "unknown top-level key '{}' (known: name, description, providers, [[series]])", key));
    }
  }
  Preset p;
  p.name = string_field(tbl, "name", std::string(name));
  p.description = string_field(tbl, "description", "");
  if (const toml::node* prov = tbl.get("providers")) p.providers = string_axis(*prov, "providers");
  const auto* series = tbl["series"].as_array();
  if (!series || series->empty()) throw std::invalid_argument("no [[series]]");
  for (std::size_t i = 0; i < series->size(); ++i) {
    const auto* t = (*series)[i].as_table();
    if (!t) throw std::invalid_argument("each series must be a table ([[series]])");
    try {
      p.series.push_back(parse_series(*t));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("series {}: {}", i + 1, e.what()));
    }
  }
  return p;
}

}  // namespace

Preset parse_preset(std::string_view text, std::string_view name, std::string_view source) {
  if (source.empty()) source = name;
  toml::table tbl;
  try {
    tbl = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw std::invalid_argument(fmt::format("preset {}: not valid TOML: {} (line {})", source,
                                            e.description(), e.source().begin.line));
  }
  try {
    return read_preset(tbl, name);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("preset {}: {}", source, e.what()));
  }
}

Preset load_preset(std::string_view name) {
  const auto path = preset_dir() / (std::string(name) + ".toml");
  if (name.empty() || name == "models" || !std::filesystem::exists(path)) {
    throw std::invalid_argument(
        fmt::format("--preset: unknown preset '{}' (known: {})", name, join(preset_names())));
  }
  return parse_preset(read_file(path), name, path.string());
}

std::string_view ModelShape::value(std::string_view key) const {
  for (const auto& [k, v] : values) {
    if (k == key) return v;
  }
  return {};
}

std::vector<ModelShape> model_shapes() {
  const auto path = preset_dir() / "models.toml";
  if (!std::filesystem::exists(path)) {
    throw std::invalid_argument(fmt::format("model shapes file {} not found", path.string()));
  }
  toml::table tbl;
  try {
    tbl = toml::parse(read_file(path), path.string());
  } catch (const toml::parse_error& e) {
    throw std::invalid_argument(fmt::format("{}: not valid TOML: {} (line {})", path.string(),
                                            e.description(), e.source().begin.line));
  }
  std::vector<ModelShape> models;
  for (const auto& [k, node] : tbl) {
    const auto* t = node.as_table();
    if (!t) continue;
    ModelShape m{std::string(k.str()), {}};
    for (const auto& [key, value] : *t) {
      const Axis* axis = find_axis(key.str());
      if (!axis || !axis->model) {
        throw std::invalid_argument(fmt::format("{} [{}]: '{}' is not an axis of a model shape",
                                                path.string(), m.name, key.str()));
      }
      m.values.emplace_back(std::string(key.str()), list_text(value, key.str()));
    }
    models.push_back(std::move(m));
  }
  return models;
}

void apply_model(GridAxes& ax, const ModelShape& model) {
  for (const Axis& axis : axes()) {
    if (!axis.model) continue;
    const std::string_view v = model.value(axis.key);
    if (v.empty()) {
      ax.reset(axis.key);
      continue;
    }
    try {
      ax.set(axis.key, v);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(
          fmt::format("model {}: '{}': {}", model.name, axis.key, e.what()));
    }
  }
}

ModelShape find_model(std::string_view name) {
  std::vector<std::string> names;
  for (auto& m : model_shapes()) {
    if (m.name == name) return m;
    names.push_back(m.name);
  }
  throw std::invalid_argument(
      fmt::format("--model: unknown model '{}' (known: {})", name, join(names)));
}

}  // namespace attnprof
