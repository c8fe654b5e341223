// The axis table (include/attnprof/axes.hpp) and the grid's product.
#include "attnprof/axes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "attnprof/ragged.hpp"

namespace attnprof {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The items of a comma list, trimmed.
std::vector<std::string_view> items(std::string_view list) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0;;) {
    const std::size_t comma = list.find(',', at);
    out.push_back(trim(list.substr(at, comma == std::string_view::npos ? comma : comma - at)));
    if (comma == std::string_view::npos) return out;
    at = comma + 1;
  }
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

// ---- canonical text: one value of an axis as a list holds it -----------------------------

std::string canonical(int64_t x) {
  return std::to_string(x);
}
std::string canonical(double x) {
  return fmt::format("{}", x);  // the shortest text that reads back to the same bits
}
std::string canonical(bool x) {
  return x ? "on" : "off";
}
template <class T>  // the enums and the mask
std::string canonical(const T& x) {
  return std::string(to_string(x));
}

int64_t as_int(std::string_view v) {
  int64_t x = 0;
  std::from_chars(v.data(), v.data() + v.size(), x);
  return x;
}
double as_number(std::string_view v) {
  double x = 0;
  std::from_chars(v.data(), v.data() + v.size(), x);
  return x;
}
bool as_bool(std::string_view v) {
  return v == "on";
}
DType as_dtype(std::string_view v) {
  return *parse_dtype(v);
}
Mask as_mask(std::string_view v) {
  return *parse_mask(v);
}
Mode as_mode(std::string_view v) {
  return *parse_mode(v);
}
Layout as_layout(std::string_view v) {
  return *parse_layout(v);
}

// ---- the parsers: a list's values as canonical text ------------------------------------

std::vector<std::string> integers(std::string_view list) {
  std::vector<std::string> out;
  for (int64_t v : parse_int_list(list)) out.push_back(canonical(v));
  return out;
}

std::vector<std::string> numbers(std::string_view list) {
  std::vector<std::string> out;
  for (std::string_view item : items(list)) {
    double v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() ||
        !std::isfinite(v)) {
      throw std::invalid_argument(fmt::format(
          "'{}' in '{}' is not a finite number (allowed: 50, 0.125, lists with ',')", item, list));
    }
    out.push_back(canonical(v));
  }
  return out;
}

template <class Parse>
std::vector<std::string> choices(std::string_view list, Parse parse, std::string_view allowed) {
  std::vector<std::string> out;
  for (std::string_view item : items(list)) {
    const auto v = parse(item);
    if (!v) throw std::invalid_argument(fmt::format("'{}' is not one of {}", item, allowed));
    out.push_back(canonical(*v));
  }
  return out;
}

std::vector<std::string> on_off(std::string_view list) {
  return choices(list, parse_on_off, "on, off");
}
std::vector<std::string> dtypes(std::string_view list) {
  return choices(list, parse_dtype, kDTypeChoices);
}
std::vector<std::string> masks(std::string_view list) {
  return choices(list, parse_mask, kMaskChoices);
}
std::vector<std::string> modes(std::string_view list) {
  return choices(list, parse_mode, kModeChoices);
}
std::vector<std::string> layouts(std::string_view list) {
  return choices(list, parse_layout, kLayoutChoices);
}

// ---- key parts and label words ------------------------------------------------------------

// Seqlens text as a key part: ':' becomes '-', '/' '_' ("uniform-512-8192", "512_1024").
std::string seqlens_key(std::string text) {
  for (char& c : text) c = c == ':' ? '-' : c == '/' ? '_' : c;
  return text;
}

// "prefix" and the value where it is set (> 0), "" otherwise.
template <class T>
std::string when_positive(std::string_view prefix, T value) {
  return value > 0 ? fmt::format("{}{}", prefix, value) : std::string();
}

// A member's axis: its setter and its getter, through the canonical text.
#define ATTNPROF_FIELD(member, from_text)                              \
  .set = [](Spec& s, std::string_view v) { s.member = from_text(v); }, \
  .get = [](const Spec& s) { return canonical(s.member); }

using enum AxisKind;

// clang-format off
const std::array kAxes = {
  Axis{.key = "batch", .flag = "--batch",
       .help = "Batch sizes: 1,8 or 1:64:*2 or 16:128:16 (default 1)", .fallback = "1",
       .json = "batch", .kind = integer, .nest = 8, .parse = integers,
       ATTNPROF_FIELD(batch, as_int),
       .key_part = [](const Spec& s) { return fmt::format("b{}", s.batch); }, .key_at = 0,
       .label_part = [](const Spec& s) { return fmt::format("B{}", s.batch); }, .label_at = 0},
  Axis{.key = "heads", .flag = "--heads", .help = "Query heads (default 8)", .fallback = "8",
       .json = "q_heads", .kind = integer, .nest = 5, .model = true, .parse = integers,
       ATTNPROF_FIELD(q_heads, as_int),
       .key_part = [](const Spec& s) { return fmt::format("hq{}", s.q_heads); }, .key_at = 1,
       .label_part = [](const Spec& s) {
         return s.q_heads == s.kv_heads ? fmt::format("H{}", s.q_heads)
                                        : fmt::format("H{}/{}", s.q_heads, s.kv_heads);
       },
       .label_at = 1},
  Axis{.key = "kv_heads", .flag = "--kv-heads",
       .help = "KV heads (must divide query heads; default: the query heads)",
       .json = "kv_heads", .kind = integer, .nest = 6, .model = true, .parse = integers,
       ATTNPROF_FIELD(kv_heads, as_int),
       .derive = [](Spec& s) { s.kv_heads = s.q_heads; },
       .key_part = [](const Spec& s) { return fmt::format("hkv{}", s.kv_heads); }, .key_at = 2},
  Axis{.key = "seq", .flag = "--seq",
       .help = "Query lengths (and KV lengths unless --kv-seq; default 1024)", .fallback = "1024",
       .json = "q_len", .kind = integer, .nest = 7, .parse = integers,
       ATTNPROF_FIELD(q_len, as_int),
       .key_part = [](const Spec& s) { return fmt::format("q{}", s.q_len); }, .key_at = 3,
       .label_part = [](const Spec& s) {
         return (s.q_len == s.kv_len ? "N" : "Nq") + std::to_string(s.q_len);
       },
       .label_at = 2},
  Axis{.key = "kv_seq", .flag = "--kv-seq",
       .help = "KV lengths, crossed with --seq (default: the query length)",
       .json = "kv_len", .kind = integer, .nest = 9, .parse = integers,
       ATTNPROF_FIELD(kv_len, as_int),
       .derive = [](Spec& s) { s.kv_len = s.q_len; },
       .key_part = [](const Spec& s) { return fmt::format("k{}", s.kv_len); }, .key_at = 4,
       .label_part = [](const Spec& s) {
         return s.q_len == s.kv_len ? std::string() : fmt::format("Nk{}", s.kv_len);
       },
       .label_at = 3},
  Axis{.key = "head_dim", .flag = "--head-dim", .help = "Head dims of Q and K (default 64)",
       .fallback = "64", .json = "head_dim", .kind = integer, .nest = 3, .model = true,
       .parse = integers, ATTNPROF_FIELD(head_dim, as_int),
       .key_part = [](const Spec& s) { return fmt::format("d{}", s.head_dim); }, .key_at = 5,
       .label_part = [](const Spec& s) {
         return s.dv() == s.head_dim ? fmt::format("D{}", s.head_dim)
                                     : fmt::format("D{}/{}", s.head_dim, s.dv());
       },
       .label_at = 4},
  // A value equal to the head dim is stored as 0 ("the same"), so a spec's key does not depend
  // on how one shape was asked for.
  Axis{.key = "v_head_dim", .flag = "--v-head-dim",
       .help = "Head dims of V and O (default: the head dim; MLA prefill: 192 with 128)",
       .json = "v_head_dim", .kind = integer, .nest = 4, .model = true, .parse = integers,
       .set = [](Spec& s, std::string_view v) {
         s.v_head_dim = as_int(v) == s.head_dim ? 0 : as_int(v);
       },
       .get = [](const Spec& s) { return canonical(s.v_head_dim); },
       .key_part = [](const Spec& s) { return fmt::format("dv{}", s.dv()); }, .key_at = 6},
  Axis{.key = "dtype", .flag = "--dtype",
       .help = "fp32, fp16, bf16, fp8_e4m3, fp8_e5m2 (comma list; default fp16)",
       .fallback = "fp16", .json = "dtype", .kind = text, .nest = 1, .parse = dtypes,
       ATTNPROF_FIELD(dtype, as_dtype),
       .key_part = [](const Spec& s) { return canonical(s.dtype); }, .key_at = 7,
       .label_part = [](const Spec& s) { return canonical(s.dtype); }, .label_at = 5},
  Axis{.key = "mask", .flag = "--mask",
       .help = "none, causal, causal-br, window:W (comma list; default none)", .fallback = "none",
       .json = "mask", .kind = text, .nest = 2, .parse = masks,
       ATTNPROF_FIELD(mask, as_mask),
       .key_part = [](const Spec& s) { return canonical(s.mask); }, .key_at = 8,
       .label_part = [](const Spec& s) { return canonical(s.mask); }, .label_at = 6},
  Axis{.key = "mode", .flag = "--mode", .help = "fwd, bwd, fwd_bwd (comma list; default fwd)",
       .fallback = "fwd", .json = "mode", .kind = text, .nest = 0, .parse = modes,
       ATTNPROF_FIELD(mode, as_mode),
       .key_part = [](const Spec& s) { return canonical(s.mode); }, .key_at = 9,
       .label_part = [](const Spec& s) { return canonical(s.mode); }, .label_at = 7},
  Axis{.key = "layout", .flag = "--layout",
       .help = "Memory layout of Q, K, V and O: bhsd (PyTorch's SDPA), bshd (FlashAttention's, "
               "FlashInfer's NHD); 'bhsd,bshd' compares them (default bhsd)",
       .fallback = "bhsd", .json = "layout", .kind = text, .nest = 15, .parse = layouts,
       ATTNPROF_FIELD(layout, as_layout),
       .key_part = [](const Spec& s) { return canonical(s.layout); }, .key_at = 10,
       .label_part = [](const Spec& s) {
         return s.layout == Layout::bhsd ? std::string() : canonical(s.layout);
       },
       .label_at = 8},
  Axis{.key = "scale", .flag = "--scale", .help = "Softmax scale (default 0: 1/sqrt(head dim))",
       .fallback = "0", .json = "scale", .kind = number, .nest = 16, .parse = numbers,
       ATTNPROF_FIELD(scale, as_number),
       .key_part = [](const Spec& s) { return when_positive("s", s.scale); }, .key_at = 12,
       .label_part = [](const Spec& s) { return when_positive("scale", s.scale); }, .label_at = 9},
  Axis{.key = "page_size", .flag = "--page-size",
       .help = "Paged KV cache: keys per page, a power of two (0: contiguous; '0,16,64' compares "
               "them)",
       .fallback = "0", .json = "page_size", .json_when_set = true, .kind = integer, .nest = 10,
       .parse = integers, ATTNPROF_FIELD(page_size, as_int),
       .key_part = [](const Spec& s) { return when_positive("p", s.page_size); }, .key_at = 11,
       .label_part = [](const Spec& s) { return when_positive("paged", s.page_size); },
       .label_at = 10, .forward_only = "a paged KV cache"},
  Axis{.key = "softcap", .flag = "--softcap",
       .help = "Logit softcap C: scores become C*tanh(s/C) (Gemma 2: 50; 0: none; '0,50' compares "
               "them; forward only)",
       .fallback = "0", .json = "softcap", .json_when_set = true, .kind = number, .nest = 11,
       .model = true, .parse = numbers, ATTNPROF_FIELD(softcap, as_number),
       .key_part = [](const Spec& s) { return when_positive("cap", s.softcap); }, .key_at = 13,
       .label_part = [](const Spec& s) { return when_positive("softcap", s.softcap); },
       .label_at = 11, .forward_only = "softcap"},
  Axis{.key = "sinks", .flag = "--sinks",
       .help = "Attention sinks, a learned logit per head (GPT-OSS): on, off ('off,on' compares "
               "them; forward only)",
       .fallback = "off", .json = "sinks", .json_when_set = true, .kind = boolean, .nest = 12,
       .model = true, .parse = on_off, ATTNPROF_FIELD(sinks, as_bool),
       .key_part = [](const Spec& s) { return std::string(s.sinks ? "sinks" : ""); },
       .key_at = 14,
       .label_part = [](const Spec& s) { return std::string(s.sinks ? "sinks" : ""); },
       .label_at = 12, .forward_only = "sinks"},
  Axis{.key = "shared_latent", .flag = "--shared-latent",
       .help = "Absorbed MLA: V is K's first Dv columns, one latent cache (DeepSeek-V3 decode; the "
               "deepseek-v3-mla-decode model sets it): on, off (forward only)",
       .fallback = "off", .json = "shared_latent", .json_when_set = true, .kind = boolean,
       .nest = 13, .model = true, .parse = on_off,
       ATTNPROF_FIELD(shared_latent, as_bool),
       .key_part = [](const Spec& s) { return std::string(s.shared_latent ? "latent" : ""); },
       .key_at = 16,
       .label_part = [](const Spec& s) { return std::string(s.shared_latent ? "latent" : ""); },
       .label_at = 14, .forward_only = "a shared latent (absorbed MLA)"},
  Axis{.key = "seqlens", .flag = "--seqlens",
       .help = "Ragged batch: each sequence's keys drawn from uniform:A:B, zipf:A:B[:S] or a list "
               "L1/L2/... (at most the KV length; off: uniform lengths; 'off,uniform:512:8192' "
               "compares them; forward only)",
       .fallback = "off", .json = "seqlens", .json_when_set = true, .kind = text, .nest = 14,
       .parse = parse_seqlens_list,
       .set = [](Spec& s, std::string_view v) { s.seqlens = std::string(v); },
       .get = [](const Spec& s) { return s.seqlens.empty() ? std::string("off") : s.seqlens; },
       .key_part = [](const Spec& s) {
         return s.ragged() ? "sl-" + seqlens_key(s.seqlens) : std::string();
       },
       .key_at = 15,
       .label_part = [](const Spec& s) {
         return s.ragged() ? "ragged " + s.seqlens : std::string();
       },
       .label_at = 13, .forward_only = "a ragged batch (seqlens)"},
  // The rules, after the axes they read.
  Axis{.key = "tokens", .flag = "--tokens",
       .help = "Tokens per batch: batch = tokens / seq (replaces --batch)", .kind = integer,
       .nest = 8, .replaces = "batch", .single = true, .parse = integers,
       .set = [](Spec& s, std::string_view v) {
         s.batch = s.q_len > 0 ? std::max<int64_t>(as_int(v) / s.q_len, 1) : 0;
       }},
  Axis{.key = "model_dim", .flag = "--model-dim",
       .help = "Model dim: heads = model_dim / head_dim (replaces --heads)", .kind = integer,
       .nest = 5, .replaces = "heads", .single = true, .parse = integers,
       .set = [](Spec& s, std::string_view v) {
         s.q_heads = s.head_dim > 0 ? as_int(v) / s.head_dim : 0;
       }},
};
// clang-format on

#undef ATTNPROF_FIELD

const Axis& axis_of(std::string_view key) {
  const Axis* a = find_axis(key);
  if (!a) {
    throw std::invalid_argument(fmt::format("unknown axis '{}' (known: {})", key, axis_keys()));
  }
  return *a;
}

}  // namespace

std::vector<int64_t> parse_int_list(std::string_view text) {
  std::vector<int64_t> out;
  if (trim(text).empty())
    throw std::invalid_argument("empty list (allowed: 64, 4k, a:b:step, a:b:*f, lists with ',')");
  for (std::string_view item : items(text)) {
    std::size_t c1 = item.find(':');
    if (c1 == std::string_view::npos) {
      out.push_back(parse_count(item, text));
      continue;
    }
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
  return out;
}

std::optional<bool> parse_on_off(std::string_view s) {
  if (s == "on" || s == "true") return true;
  if (s == "off" || s == "false") return false;
  return std::nullopt;
}

std::vector<std::string> parse_seqlens_list(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view item : items(text)) {
    if (item == "off") {
      out.emplace_back();
    } else if (auto why = seqlens_problem(item)) {
      throw std::invalid_argument(*why);
    } else {
      out.emplace_back(item);
    }
  }
  return out;
}

std::span<const Axis> axes() {
  return kAxes;
}

const Axis* find_axis(std::string_view key) {
  for (const Axis& a : kAxes) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

std::string axis_keys() {
  std::string out;
  for (const Axis& a : kAxes) out += (out.empty() ? "" : ", ") + std::string(a.key);
  return out;
}

bool axis_is_set(const Axis& axis, const Spec& spec) {
  return axis.get != nullptr && !axis.fallback.empty() && axis.get(spec) != axis.fallback;
}

std::vector<std::string> spec_argv(const Spec& spec) {
  std::vector<std::string> argv;
  for (const Axis& a : kAxes) {
    if (a.get == nullptr) continue;  // a rule: the axes it sets are given themselves
    argv.emplace_back(a.flag);
    argv.push_back(a.get(spec));
  }
  return argv;
}

void GridAxes::set(std::string_view key, std::string_view list) {
  const Axis& axis = axis_of(key);
  if (trim(list).empty()) throw std::invalid_argument("an empty list; give at least one value");
  std::vector<std::string> values = axis.parse(list);
  if (axis.single && values.size() != 1) {
    throw std::invalid_argument(fmt::format("takes one value (got {})", values.size()));
  }
  reset(key);
  for (const Axis& rule : kAxes) {
    if (rule.replaces == key) reset(rule.key);
  }
  given_.emplace_back(std::string(key), std::move(values));
}

void GridAxes::reset(std::string_view key) {
  std::erase_if(given_, [&](const auto& g) { return g.first == key; });
}

bool GridAxes::given(std::string_view key) const {
  return std::any_of(given_.begin(), given_.end(), [&](const auto& g) { return g.first == key; });
}

std::vector<std::string> GridAxes::values(std::string_view key) const {
  for (const auto& [k, v] : given_) {
    if (k == key) return v;
  }
  const Axis& axis = axis_of(key);
  return axis.fallback.empty() ? std::vector<std::string>{} : axis.parse(axis.fallback);
}

std::vector<Spec> expand(const GridAxes& grid) {
  // The axes that take part, each with its values, outermost first; an unset axis and one a set
  // rule replaces do not.
  struct Level {
    std::size_t axis;
    std::vector<std::string> values;
  };
  std::vector<Level> levels;
  for (std::size_t i = 0; i < kAxes.size(); ++i) {
    const bool replaced = std::any_of(kAxes.begin(), kAxes.end(), [&](const Axis& rule) {
      return rule.replaces == kAxes[i].key && grid.given(rule.key);
    });
    std::vector<std::string> values = grid.values(kAxes[i].key);
    if (!replaced && !values.empty()) levels.push_back({i, std::move(values)});
  }
  std::stable_sort(levels.begin(), levels.end(), [](const Level& a, const Level& b) {
    return kAxes[a.axis].nest < kAxes[b.axis].nest;
  });

  std::vector<Spec> specs;
  std::vector<std::size_t> at(levels.size(), 0);
  while (true) {
    // One point: the chosen values applied in the table's order, then the unset axes derived.
    std::array<const std::string*, std::tuple_size_v<decltype(kAxes)>> chosen{};
    for (std::size_t l = 0; l < levels.size(); ++l)
      chosen[levels[l].axis] = &levels[l].values[at[l]];
    Spec s;
    for (std::size_t i = 0; i < kAxes.size(); ++i) {
      if (chosen[i]) kAxes[i].set(s, *chosen[i]);
    }
    for (std::size_t i = 0; i < kAxes.size(); ++i) {
      if (!chosen[i] && kAxes[i].derive) kAxes[i].derive(s);
    }
    specs.push_back(s);
    // The innermost level turns fastest.
    std::size_t l = levels.size();
    while (l > 0 && ++at[l - 1] == levels[l - 1].values.size()) at[--l] = 0;
    if (l == 0) break;
  }
  return specs;
}

}  // namespace attnprof
