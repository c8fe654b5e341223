// `attnprof run`: a grid of shapes x providers, every point verified and measured, rows to the
// console, a JSONL journal and optional CSV / Markdown.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "attnprof/grid.hpp"
#include "attnprof/parse_units.hpp"
#include "attnprof/registry.hpp"
#include "attnprof/sweep.hpp"
#include "cli.hpp"

namespace attnprof::cli {

namespace {

struct RunCliOptions {
  std::string device = "auto";
  std::string providers;
  std::string preset;
  std::string model;
  std::string batch, heads, kv_heads, seq, kv_seq, head_dim, tokens, model_dim;
  std::string dtype, mask, mode;
  std::string out, csv, markdown;
  uint64_t seed = 20261129;
  std::string timing = "cold";
  std::string max_noise = "0.5%";
  std::string min_time = "0.5s";
  std::string point_timeout = "2s";
  int64_t min_samples = 10;
  int warmup = 1;
  int threads = 0;
  bool fail_on_error = false;
  bool no_trace = false;
};

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

// Explicit options replace that axis in every series of the preset.
void apply_overrides(GridAxes& ax, const RunCliOptions& o) {
  if (!o.model.empty()) {
    const ModelShape m = find_model(o.model);
    ax.heads = {m.heads};
    ax.kv_heads = {m.kv_heads};
    ax.head_dim = {m.head_dim};
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
  if (!o.tokens.empty()) ax.tokens = int_option(o.tokens, "--tokens").at(0);
  if (!o.model_dim.empty()) ax.model_dim = int_option(o.model_dim, "--model-dim").at(0);
  if (!o.dtype.empty())
    ax.dtype = parse_list<DType>(o.dtype, "--dtype", parse_dtype, kDTypeChoices);
  if (!o.mask.empty()) ax.mask = parse_list<Mask>(o.mask, "--mask", parse_mask, kMaskChoices);
  if (!o.mode.empty()) ax.mode = parse_list<Mode>(o.mode, "--mode", parse_mode, kModeChoices);
}

bool any_grid_option(const RunCliOptions& o) {
  return !(o.model.empty() && o.batch.empty() && o.heads.empty() && o.kv_heads.empty() &&
           o.seq.empty() && o.kv_seq.empty() && o.head_dim.empty() && o.tokens.empty() &&
           o.model_dim.empty() && o.dtype.empty() && o.mask.empty() && o.mode.empty());
}

double parse_fraction(const std::string& text, const char* option) {
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

double positive_seconds(const std::string& text, const char* option) {
  double s = 0;
  try {
    s = parse_seconds(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", option, e.what()));
  }
  if (!(s > 0))
    throw std::invalid_argument(fmt::format("{}: must be > 0 (got '{}')", option, text));
  return s;
}

int run_command(const RunCliOptions& o) {
  // Which device: auto picks CUDA where a device answers, else the CPU.
  std::unique_ptr<Engine> cuda;
  if (o.device != "cpu") cuda = make_cuda_engine(0);
  const bool cuda_ok = cuda && cuda->availability().available;
  if (o.device == "cuda" && !cuda_ok) {
    throw std::runtime_error(
        fmt::format("--device cuda: {}",
                    cuda ? cuda->availability().reason : "CUDA is not built into this binary"));
  }
  const bool on_cuda = o.device == "cuda" || (o.device == "auto" && cuda_ok);

  // The grid: a preset (explicit, or the device's default when no grid option is given), with
  // explicit options replacing their axes.
  std::vector<GridAxes> series;
  std::vector<std::string> preset_providers;
  std::string preset = o.preset;
  if (preset.empty() && !any_grid_option(o)) preset = on_cuda ? "fa-bench" : "cpu-small";
  if (!preset.empty()) {
    Preset p = load_preset(preset);
    series = p.series;
    preset_providers = p.providers;
  } else {
    series.emplace_back();
  }
  std::vector<Spec> specs;
  for (GridAxes& ax : series) {
    apply_overrides(ax, o);
    for (const Spec& s : expand(ax)) specs.push_back(s);
  }
  for (const Spec& s : specs) {
    if (auto errors = s.validate(); !errors.empty()) {
      throw std::invalid_argument(fmt::format("point {}: {}", s.label(), errors.front()));
    }
  }

  std::string provider_patterns = o.providers;
  if (provider_patterns.empty()) {
    provider_patterns = on_cuda ? "cuda.*,cudnn.*,torch.sdpa.*,torch.naive" : "cpu.naive,cpu.flash";
  }
  std::vector<Provider*> providers = select_providers(provider_patterns);
  if (o.providers.empty()) {
    // Defaults leave out what cannot run here; named providers always get a row.
    std::erase_if(providers, [](Provider* p) { return !p->availability().available; });
  }

  RunOptions ro;
  ro.seed = o.seed;
  ro.measure.mode = o.timing;
  ro.measure.rule.max_noise = parse_fraction(o.max_noise, "--max-noise");
  ro.measure.rule.min_time_s = positive_seconds(o.min_time, "--min-time");
  ro.measure.rule.timeout_s = positive_seconds(o.point_timeout, "--point-timeout");
  ro.measure.rule.min_samples = o.min_samples;
  ro.warmup_launches = o.warmup;
  ro.trace_kernels = !o.no_trace;
  std::unique_ptr<Engine> cpu = make_cpu_engine(o.threads);
  ro.threads = cpu->device().threads;

  std::vector<std::unique_ptr<Sink>> owned;
  owned.push_back(make_console_sink(std::cout, isatty(STDOUT_FILENO) != 0));
  if (!o.out.empty()) owned.push_back(make_jsonl_sink(o.out, false));
  if (!o.csv.empty()) owned.push_back(make_csv_sink(o.csv));
  if (!o.markdown.empty()) owned.push_back(make_markdown_sink(o.markdown));
  std::vector<Sink*> sinks;
  for (auto& s : owned) sinks.push_back(s.get());

  Engines engines{cpu.get(), cuda_ok ? cuda.get() : nullptr};
  const auto points = plan_points(specs, providers);
  fmt::print("attnprof run: {} shapes x {} providers = {} points on {}{}\n", specs.size(),
             providers.size(), points.size(), on_cuda ? cuda->device().name : cpu->device().name,
             preset.empty() ? "" : fmt::format(" (preset {})", preset));
  const SweepSummary sum = run_sweep(points, engines, ro, sinks);

  std::string counts;
  for (const auto& [status, n] : sum.by_status) {
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, to_string(status));
  }
  fmt::print("done: {} points: {}\n", sum.total, counts);
  const int64_t bad =
      sum.count(Status::incorrect) + sum.count(Status::failed) + sum.count(Status::timeout);
  return (o.fail_on_error && bad > 0) ? 1 : 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "run", "Run a grid of shapes on providers: verify and measure every point");
  sub->add_option("--device", o->device, "auto (CUDA where present, else CPU), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  sub->add_option("--providers", o->providers,
                  "Provider names or globs, comma-separated (see `attnprof list`)");
  sub->add_option("--preset", o->preset,
                  "A preset grid from presets/ (seed-000, seed-003, fa-bench, decode, cpu-small)");
  sub->add_option("--model", o->model,
                  "Model shape: heads, KV heads and head dim from presets/models.toml");
  sub->add_option("--batch", o->batch, "Batch sizes: 1,8 or 1:64:*2 or 16:128:16");
  sub->add_option("--heads", o->heads, "Query heads");
  sub->add_option("--kv-heads", o->kv_heads, "KV heads (must divide query heads; default: same)");
  sub->add_option("--seq", o->seq, "Query lengths (and KV lengths unless --kv-seq): 64:2048:*2");
  sub->add_option("--kv-seq", o->kv_seq,
                  "KV lengths, crossed with --seq (decode: --seq 1 --kv-seq 1k:32k:*2)");
  sub->add_option("--head-dim", o->head_dim, "Head dims: 64,128");
  sub->add_option("--tokens", o->tokens,
                  "Tokens per batch: batch = tokens / seq (replaces --batch)");
  sub->add_option("--model-dim", o->model_dim,
                  "Model dim: heads = model_dim / head_dim (replaces --heads)");
  sub->add_option("--dtype", o->dtype, "fp32, fp16, bf16 (comma list)");
  sub->add_option("--mask", o->mask, "none, causal, causal-br, window:W (comma list)");
  sub->add_option("--mode", o->mode, "fwd, bwd, fwd_bwd (comma list)");
  sub->add_option("--out", o->out, "JSONL journal, one row per point, flushed per point");
  sub->add_option("--csv", o->csv, "CSV file");
  sub->add_option("--markdown", o->markdown, "Markdown summary file");
  sub->add_option("--seed", o->seed, "Seed of the random inputs");
  sub->add_option("--timing", o->timing, "CUDA timing: cold (L2 flushed), hot, graph, wall")
      ->check(CLI::IsMember({"cold", "hot", "graph", "wall"}));
  sub->add_option("--max-noise", o->max_noise,
                  "Stop once the median's relative noise is below this (0.5%)");
  sub->add_option("--min-time", o->min_time, "Measured time before stopping may happen (0.5s)");
  sub->add_option("--point-timeout", o->point_timeout,
                  "Measurement time limit per point (2s); the row is flagged noisy");
  sub->add_option("--min-samples", o->min_samples, "Fewest samples per point (10)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--warmup", o->warmup, "Untimed launches before sampling (1)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--threads", o->threads, "CPU threads for CPU providers (default: all)")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--fail-on-error", o->fail_on_error,
                "Exit 1 when any point is incorrect, failed or timed out");
  sub->add_flag("--no-trace", o->no_trace, "Do not record which kernels ran");
  return {sub, [o]() { return run_command(*o); }};
}

}  // namespace attnprof::cli
