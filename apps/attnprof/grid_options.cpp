#include "grid_options.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "attnprof/grid.hpp"

namespace attnprof::cli {

namespace {

template <class T, class Parse>
std::vector<T> parse_list(const std::string& text, const char* option, Parse parse,
                          std::string_view choices) {
  std::vector<T> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto v = parse(item);
    if (!v)
      throw std::invalid_argument(fmt::format("{}: '{}' is not one of {}", option, item, choices));
    out.push_back(*v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<int64_t> int_option(const std::string& text, const char* option) {
  try {
    return parse_int_list(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", option, e.what()));
  }
}

}  // namespace

CLI::Validator non_empty() {
  return CLI::Validator(
      [](const std::string& v) {
        return v.empty() ? std::string("an empty list; give at least one value") : std::string();
      },
      "NONEMPTY", "non_empty");
}

void add_grid_options(CLI::App* sub, GridCliOptions& o, bool with_batch) {
  const size_t before = sub->get_options().size();
  sub->add_option("--model", o.model,
                  "Model shape: heads, KV heads and head dim from presets/models.toml");
  if (with_batch) {
    sub->add_option("--batch", o.batch, "Batch sizes: 1,8 or 1:64:*2 or 16:128:16");
    sub->add_option("--tokens", o.tokens,
                    "Tokens per batch: batch = tokens / seq (replaces --batch)");
    sub->add_option("--model-dim", o.model_dim,
                    "Model dim: heads = model_dim / head_dim (replaces --heads)");
  }
  sub->add_option("--heads", o.heads, "Query heads (default 8)");
  sub->add_option("--kv-heads", o.kv_heads, "KV heads (must divide query heads; default: same)");
  sub->add_option("--seq", o.seq, "Query lengths (and KV lengths unless --kv-seq; default 1024)");
  sub->add_option("--kv-seq", o.kv_seq, "KV lengths, crossed with --seq");
  sub->add_option("--head-dim", o.head_dim, "Head dims of Q and K (default 64)");
  sub->add_option("--v-head-dim", o.v_head_dim,
                  "Head dims of V and O (default: the head dim; MLA prefill: 192 with 128)");
  sub->add_option("--dtype", o.dtype,
                  "fp32, fp16, bf16, fp8_e4m3, fp8_e5m2 (comma list; default fp16)");
  sub->add_option("--mask", o.mask, "none, causal, causal-br, window:W (comma list)");
  sub->add_option("--mode", o.mode, "fwd, bwd, fwd_bwd (comma list)");
  sub->add_option("--page-size", o.page_size,
                  "Paged KV cache: keys per page, a power of two (0: contiguous; '0,16,64' "
                  "compares them)");
  sub->add_option("--softcap", o.softcap,
                  "Logit softcap C: scores become C*tanh(s/C) (Gemma 2: 50; 0: none; '0,50' "
                  "compares them; forward only)");
  sub->add_option("--sinks", o.sinks,
                  "Attention sinks, a learned logit per head (GPT-OSS): on, off ('off,on' "
                  "compares them; forward only)");
  sub->add_option("--shared-latent", o.shared_latent,
                  "Absorbed MLA: V is K's first Dv columns, one latent cache (DeepSeek-V3 decode; "
                  "the deepseek-v3-mla-decode model sets it): on, off (forward only)");
  sub->add_option("--seqlens", o.seqlens,
                  "Ragged batch: each sequence's keys drawn from uniform:A:B, zipf:A:B[:S] or "
                  "a list L1/L2/... (at most the KV length; off: uniform lengths; 'off,"
                  "uniform:512:8192' compares them; forward only)");
  // Each axis given empty (`--seq ''`) is refused, as an empty axis in a preset is: it would
  // silently run the default instead.
  const std::vector<CLI::Option*> options = sub->get_options();
  for (size_t i = before; i < options.size(); ++i) options[i]->check(non_empty());
}

void apply_grid_overrides(GridAxes& ax, const GridCliOptions& o) {
  if (!o.model.empty()) {
    const ModelShape m = find_model(o.model);
    ax.heads = {m.heads};
    ax.kv_heads = {m.kv_heads};
    ax.head_dim = {m.head_dim};
    ax.v_head_dim = {m.v_head_dim};
    ax.softcap = {m.softcap};
    ax.sinks = {m.sinks};
    ax.shared_latent = {m.shared_latent};
    ax.model_dim.reset();
  }
  if (!o.batch.empty()) {
    ax.batch = int_option(o.batch, "--batch");
    ax.tokens.reset();
  }
  if (!o.heads.empty()) {
    ax.heads = int_option(o.heads, "--heads");
    ax.model_dim.reset();
  }
  if (!o.kv_heads.empty()) ax.kv_heads = int_option(o.kv_heads, "--kv-heads");
  if (!o.seq.empty()) ax.seq = int_option(o.seq, "--seq");
  if (!o.kv_seq.empty()) ax.kv_seq = int_option(o.kv_seq, "--kv-seq");
  if (!o.head_dim.empty()) ax.head_dim = int_option(o.head_dim, "--head-dim");
  if (!o.v_head_dim.empty()) ax.v_head_dim = int_option(o.v_head_dim, "--v-head-dim");
  if (!o.tokens.empty()) ax.tokens = int_option(o.tokens, "--tokens").at(0);
  if (!o.model_dim.empty()) ax.model_dim = int_option(o.model_dim, "--model-dim").at(0);
  if (!o.dtype.empty())
    ax.dtype = parse_list<DType>(o.dtype, "--dtype", parse_dtype, kDTypeChoices);
  if (!o.mask.empty()) ax.mask = parse_list<Mask>(o.mask, "--mask", parse_mask, kMaskChoices);
  if (!o.mode.empty()) ax.mode = parse_list<Mode>(o.mode, "--mode", parse_mode, kModeChoices);
  if (!o.page_size.empty()) ax.page_size = int_option(o.page_size, "--page-size");
  if (!o.softcap.empty()) ax.softcap = int_option(o.softcap, "--softcap");
  if (!o.sinks.empty()) ax.sinks = parse_list<bool>(o.sinks, "--sinks", parse_on_off, "on, off");
  if (!o.shared_latent.empty())
    ax.shared_latent =
        parse_list<bool>(o.shared_latent, "--shared-latent", parse_on_off, "on, off");
  if (!o.seqlens.empty()) ax.seqlens = parse_seqlens_list(o.seqlens);
}

bool any_grid_option(const GridCliOptions& o) {
  return !(o.model.empty() && o.batch.empty() && o.heads.empty() && o.kv_heads.empty() &&
           o.seq.empty() && o.kv_seq.empty() && o.head_dim.empty() && o.v_head_dim.empty() &&
           o.tokens.empty() && o.model_dim.empty() && o.dtype.empty() && o.mask.empty() &&
           o.mode.empty() && o.page_size.empty() && o.softcap.empty() && o.sinks.empty() &&
           o.shared_latent.empty() && o.seqlens.empty());
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
