#include "attnprof/grid.hpp"

#include "attnprof/ragged.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <toml++/toml.h>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace attnprof {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "512", "4k" (x1024), "1m" (x1024^2).
int64_t parse_count(std::string_view text, std::string_view whole) {
  std::string_view s = trim(text);
  int64_t mult = 1;
  if (!s.empty() && (s.back() == 'k' || s.back() == 'K')) {
    mult = 1024;
    s.remove_suffix(1);
  } else if (!s.empty() && (s.back() == 'm' || s.back() == 'M')) {
    mult = 1024 * 1024;
    s.remove_suffix(1);
  }
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) {
    throw std::invalid_argument(fmt::format(
        "'{}' in '{}' is not a whole number (allowed: 64, 4k, a:b:step, a:b:*f, lists with ',')",
        text, whole));
  }
  if (v > std::numeric_limits<int64_t>::max() / mult) {
    throw std::invalid_argument(fmt::format("'{}' in '{}' is too large", text, whole));
  }
  return v * mult;
}

constexpr std::size_t kMaxListLength = 100000;

}  // namespace

std::vector<int64_t> parse_int_list(std::string_view text) {
  std::vector<int64_t> out;
  if (trim(text).empty())
    throw std::invalid_argument("empty list (allowed: 64, 4k, a:b:step, a:b:*f, lists with ',')");
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    std::size_t c1 = item.find(':');
    if (c1 == std::string_view::npos) {
      out.push_back(parse_count(item, text));
    } else {
      std::size_t c2 = item.find(':', c1 + 1);
      if (c2 == std::string_view::npos) {
        throw std::invalid_argument(
            fmt::format("range '{}' needs three parts a:b:step or a:b:*f", item));
      }
      const int64_t a = parse_count(item.substr(0, c1), text);
      const int64_t b = parse_count(item.substr(c1 + 1, c2 - c1 - 1), text);
      std::string_view step = trim(item.substr(c2 + 1));
      const bool geometric = !step.empty() && step.front() == '*';
      const int64_t st = parse_count(geometric ? step.substr(1) : step, text);
      if (b < a) throw std::invalid_argument(fmt::format("range '{}' ends before it starts", item));
      if (geometric ? st < 2 : st < 1) {
        throw std::invalid_argument(fmt::format(
            "range '{}' needs a step >= 1 (arithmetic) or a factor >= 2 (geometric, '*2')", item));
      }
      if (geometric && a < 1) {
        throw std::invalid_argument(fmt::format("geometric range '{}' must start at >= 1", item));
      }
      for (int64_t x = a; x <= b;) {
        out.push_back(x);
        if (out.size() > kMaxListLength) {
          throw std::invalid_argument(
              fmt::format("range '{}' has more than {} values", item, kMaxListLength));
        }
        if (geometric ? x > b / st : x > b - st) break;
        x = geometric ? x * st : x + st;
      }
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<Spec> expand(const GridAxes& ax) {
  std::vector<Spec> specs;
  for (Mode mode : ax.mode)
    for (DType dtype : ax.dtype)
      for (const Mask& mask : ax.mask)
        for (int64_t d : ax.head_dim)
          for (int64_t dv : ax.v_head_dim.empty() ? std::vector<int64_t>{0} : ax.v_head_dim) {
            std::vector<int64_t> heads = ax.heads;
            if (ax.model_dim) heads = {d > 0 ? *ax.model_dim / d : 0};
            for (int64_t h : heads) {
              std::vector<int64_t> kvh =
                  ax.kv_heads.empty() ? std::vector<int64_t>{h} : ax.kv_heads;
              for (int64_t hk : kvh)
                for (int64_t n : ax.seq) {
                  std::vector<int64_t> kvs =
                      ax.kv_seq.empty() ? std::vector<int64_t>{n} : ax.kv_seq;
                  std::vector<int64_t> batches = ax.batch;
                  if (ax.tokens) batches = {n > 0 ? std::max<int64_t>(*ax.tokens / n, 1) : 0};
                  for (int64_t b : batches)
                    for (int64_t nk : kvs)
                      for (int64_t page : ax.page_size)
                        for (int64_t cap : ax.softcap)
                          for (bool sinks : ax.sinks)
                            for (bool latent : ax.shared_latent)
                              for (const std::string& lens : ax.seqlens) {
                                Spec s;
                                s.batch = b;
                                s.q_heads = h;
                                s.kv_heads = hk;
                                s.q_len = n;
                                s.kv_len = nk;
                                s.head_dim = d;
                                s.v_head_dim = dv == d ? 0 : dv;
                                s.dtype = dtype;
                                s.mask = mask;
                                s.mode = mode;
                                s.page_size = page;
                                s.softcap = static_cast<double>(cap);
                                s.sinks = sinks;
                                s.shared_latent = latent;
                                s.seqlens = lens;
                                specs.push_back(s);
                              }
                }
            }
          }
  return specs;
}

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
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / "share" / "attnprof" / "presets");
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

// A TOML value that is an integer, an array of integers or a list/range string.
std::vector<int64_t> int_axis(const toml::node& node, std::string_view key) {
  if (auto i = node.value<int64_t>()) return {*i};
  if (auto s = node.value<std::string>()) {
    try {
      return parse_int_list(*s);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("'{}': {}", key, e.what()));
    }
  }
  if (const auto* arr = node.as_array()) {
    if (arr->empty()) throw std::invalid_argument(fmt::format("'{}' is empty", key));
    std::vector<int64_t> v;
    for (const auto& el : *arr) {
      auto i = el.value<int64_t>();
      if (!i) throw std::invalid_argument(fmt::format("'{}' must hold whole numbers", key));
      v.push_back(*i);
    }
    return v;
  }
  throw std::invalid_argument(
      fmt::format("'{}' must be a number, a list of numbers or a range string", key));
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

template <class T, class Parse>
std::vector<T> parsed_axis(const toml::node& node, std::string_view key, Parse parse,
                           std::string_view choices) {
  std::vector<T> out;
  for (const auto& s : string_axis(node, key)) {
    auto v = parse(s);
    if (!v) throw std::invalid_argument(fmt::format("{} '{}' is not one of {}", key, s, choices));
    out.push_back(*v);
  }
  return out;
}

// The one value of a key that takes a single value (tokens, model_dim, model).
template <class T>
T one_value(const std::vector<T>& values, std::string_view key) {
  if (values.size() != 1) {
    throw std::invalid_argument(fmt::format("'{}' takes one value (got {})", key, values.size()));
  }
  return values.front();
}

// A TOML value that is a boolean, "on"/"off", or a list of them.
std::vector<bool> bool_axis(const toml::node& node, std::string_view key) {
  const auto one = [&](const toml::node& n) {
    if (auto b = n.value<bool>()) return *b;
    if (auto s = n.value<std::string>()) {
      if (auto b = parse_on_off(*s)) return *b;
    }
    throw std::invalid_argument(fmt::format("'{}' must hold true/false or \"on\"/\"off\"", key));
  };
  if (const auto* arr = node.as_array()) {
    if (arr->empty()) throw std::invalid_argument(fmt::format("'{}' is empty", key));
    std::vector<bool> v;
    for (const auto& el : *arr) v.push_back(one(el));
    return v;
  }
  return {one(node)};
}

// A TOML value that is a seqlens string ("off" for uniform lengths) or a list of them.
std::vector<std::string> seqlens_axis(const toml::node& node, std::string_view key) {
  std::vector<std::string> out;
  const auto one = [&](const toml::node& n) {
    const auto s = n.value<std::string>();
    if (!s) throw std::invalid_argument(fmt::format("'{}' must hold strings", key));
    for (std::string& v : parse_seqlens_list(*s)) out.push_back(std::move(v));
  };
  if (const auto* arr = node.as_array()) {
    if (arr->empty()) throw std::invalid_argument(fmt::format("'{}' is empty", key));
    for (const auto& el : *arr) one(el);
  } else {
    one(node);
  }
  return out;
}

GridAxes parse_series(const toml::table& t) {
  GridAxes ax;
  std::optional<std::string> model;
  for (const auto& [k, node] : t) {
    const std::string_view key = k.str();
    if (key == "batch")
      ax.batch = int_axis(node, key);
    else if (key == "heads")
      ax.heads = int_axis(node, key);
    else if (key == "kv_heads")
      ax.kv_heads = int_axis(node, key);
    else if (key == "seq")
      ax.seq = int_axis(node, key);
    else if (key == "kv_seq")
      ax.kv_seq = int_axis(node, key);
    else if (key == "head_dim")
      ax.head_dim = int_axis(node, key);
    else if (key == "v_head_dim")
      ax.v_head_dim = int_axis(node, key);
    else if (key == "tokens")
      ax.tokens = one_value(int_axis(node, key), key);
    else if (key == "model_dim")
      ax.model_dim = one_value(int_axis(node, key), key);
    else if (key == "dtype")
      ax.dtype = parsed_axis<DType>(node, key, parse_dtype, kDTypeChoices);
    else if (key == "mask")
      ax.mask = parsed_axis<Mask>(node, key, parse_mask, kMaskChoices);
    else if (key == "mode")
      ax.mode = parsed_axis<Mode>(node, key, parse_mode, kModeChoices);
    else if (key == "page_size")
      ax.page_size = int_axis(node, key);
    else if (key == "softcap")
      ax.softcap = int_axis(node, key);
    else if (key == "sinks")
      ax.sinks = bool_axis(node, key);
    else if (key == "shared_latent")
      ax.shared_latent = bool_axis(node, key);
    else if (key == "seqlens")
      ax.seqlens = seqlens_axis(node, key);
    else if (key == "model") {
      model = one_value(string_axis(node, key), key);
    } else {
      throw std::invalid_argument(
          fmt::format("unknown key '{}' (known: batch, heads, kv_heads, seq, kv_seq, head_dim, "
                      "v_head_dim, tokens, model_dim, dtype, mask, mode, page_size, softcap, "
                      "sinks, shared_latent, seqlens, model)",
                      key));
    }
  }
  // A model sets its shape and its score modifiers; keys of the series still override those.
  if (model) {
    const ModelShape m = find_model(*model);
    if (!t.contains("heads")) ax.heads = {m.heads};
    if (!t.contains("kv_heads")) ax.kv_heads = {m.kv_heads};
    if (!t.contains("head_dim")) ax.head_dim = {m.head_dim};
    if (!t.contains("v_head_dim")) ax.v_head_dim = {m.v_head_dim};
    if (!t.contains("softcap")) ax.softcap = {m.softcap};
    if (!t.contains("sinks")) ax.sinks = {m.sinks};
    if (!t.contains("shared_latent")) ax.shared_latent = {m.shared_latent};
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

std::vector<ModelShape> model_shapes() {
  const auto path = preset_dir() / "models.toml";
  if (!std::filesystem::exists(path)) {
    throw std::invalid_argument(fmt::format("model shapes file {} not found", path.string()));
  }
  toml::table tbl = toml::parse(read_file(path), path.string());
  std::vector<ModelShape> models;
  for (const auto& [k, node] : tbl) {
    const auto* t = node.as_table();
    if (!t) continue;
    ModelShape m;
    m.name = std::string(k.str());
    m.heads = (*t)["heads"].value_or(int64_t{0});
    m.kv_heads = (*t)["kv_heads"].value_or(m.heads);
    m.head_dim = (*t)["head_dim"].value_or(int64_t{0});
    m.v_head_dim = (*t)["v_head_dim"].value_or(int64_t{0});
    m.softcap = (*t)["softcap"].value_or(int64_t{0});
    m.sinks = (*t)["sinks"].value_or(false);
    m.shared_latent = (*t)["shared_latent"].value_or(false);
    models.push_back(m);
  }
  return models;
}

std::vector<std::string> parse_seqlens_list(std::string_view text) {
  std::vector<std::string> out;
  for (size_t at = 0;;) {
    const size_t comma = text.find(',', at);
    const std::string_view item =
        trim(text.substr(at, comma == std::string_view::npos ? comma : comma - at));
    if (item == "off") {
      out.emplace_back();
    } else if (auto why = seqlens_problem(item)) {
      throw std::invalid_argument("--seqlens: " + *why);
    } else {
      out.emplace_back(item);
    }
    if (comma == std::string_view::npos) return out;
    at = comma + 1;
  }
}

std::optional<bool> parse_on_off(std::string_view s) {
  if (s == "on" || s == "true") return true;
  if (s == "off" || s == "false") return false;
  return std::nullopt;
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
