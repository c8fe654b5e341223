// `attnprof tune`: the largest and the throughput-optimal batch under --max-memory and --p95
// limits (or, with --max-seq, the longest sequence before OOM), per provider and shape. Points run
// through the same executor and worker groups as `attnprof run`; an OOM is a boundary, never a
// crash.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "attnprof/interrupt.hpp"
#include "attnprof/parse_units.hpp"
#include "attnprof/registry.hpp"
#include "attnprof/sink.hpp"
#include "attnprof/tune.hpp"
#include "cli.hpp"
#include "grid_options.hpp"
#include "history_options.hpp"
#include "invalid_points.hpp"
#include "journal_output.hpp"
#include "measure_options.hpp"
#include "number_options.hpp"
#include "output_paths.hpp"
#include "provider_choice.hpp"
#include "python_options.hpp"
#include "run_execution.hpp"

namespace attnprof::cli {

namespace {

// The batch is resolved to 5% of itself unless --resolution says otherwise: a boundary at 1000
// found to +-1 costs several more points and moves the throughput by well under 1%.
constexpr double kBatchResolution = 0.05;

// Tune measures each candidate only as long as its p95 needs: at least 59 samples (then the
// largest sample is above the true p95 with 95% probability; docs/method.md), 50 ms of timed
// launches, and no repeated verification (every candidate is still verified). The time limit
// ("auto") lets 59 samples of a point at the p95 limit finish, within 1 to 10 s.
MeasureCliOptions tune_measure_defaults() {
  MeasureCliOptions m;
  m.min_samples = 59;
  m.min_time = "50ms";
  m.point_timeout = "auto";
  m.max_noise = "1%";
  m.verify_repeats = 0;
  return m;
}

struct TuneCliOptions {
  GridCliOptions grid;
  std::string device = "auto";
  std::string providers;
  PythonCliOptions python;
  std::string max_memory, p95;
  bool max_seq = false;
  int64_t cap = 0;         // 0: 65536 for the batch, 1M for the sequence
  int64_t resolution = 0;  // 0: 5% of the batch (at least 1); 64 for the sequence
  std::string out, json;
  bool force = false;  // replace an existing --out journal
  MeasureCliOptions measure = tune_measure_defaults();
  bool in_process = false;
  RunHistoryOptions history;
};

TuneOptions tune_options(const TuneCliOptions& o) {
  TuneOptions t;
  t.axis = o.max_seq ? TuneAxis::seq : TuneAxis::batch;
  if (!o.max_memory.empty()) {
    try {
      t.limits.max_memory_bytes = parse_bytes(o.max_memory);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("--max-memory: {}", e.what()));
    }
    if (*t.limits.max_memory_bytes <= 0) throw std::invalid_argument("--max-memory: must be > 0");
  }
  if (!o.p95.empty()) t.limits.max_p95_us = positive_seconds_option(o.p95, "--p95") * 1e6;
  if (t.axis == TuneAxis::batch && !t.limits.max_memory_bytes && !t.limits.max_p95_us) {
    throw std::invalid_argument(
        "tune needs a limit: --max-memory SIZE and/or --p95 TIME (or --max-seq for the longest "
        "sequence before OOM)");
  }
  if (t.axis == TuneAxis::batch && o.grid.given("batch")) {
    throw std::invalid_argument(
        "--batch: tune searches the batch; --batch only fixes it for --max-seq");
  }
  t.max_value =
      o.cap > 0 ? o.cap : (t.axis == TuneAxis::batch ? int64_t{1} << 16 : int64_t{1} << 20);
  t.resolution = o.resolution > 0 ? o.resolution : (t.axis == TuneAxis::batch ? 1 : 64);
  if (o.resolution == 0 && t.axis == TuneAxis::batch) t.relative_resolution = kBatchResolution;
  MeasureCliOptions measure = o.measure;
  if (measure.point_timeout == "auto") {
    const double at_limit = t.limits.max_p95_us ? 1.2 * 59 * *t.limits.max_p95_us * 1e-6 : 1;
    measure.point_timeout = fmt::format("{}s", std::clamp(at_limit, 1.0, 10.0));
  }
  t.run = measure_run_options(measure);
  // A candidate far over the p95 limit is known after 10 samples.
  if (t.limits.max_p95_us) t.run.measure.rule.over_limit_s = *t.limits.max_p95_us * 1e-6;
  // And one over the memory limit whatever its timing.
  if (t.limits.max_memory_bytes) t.run.memory_limit_bytes = *t.limits.max_memory_bytes;
  return t;
}

// A memory limit above what the device has is searched within the device: an extrapolation to
// 40 GB on a 23.5 GiB host once tried batch 18999 and hung. Said in one line.
void within_device_memory(TuneOptions& t, const std::vector<Provider*>& providers,
                          const Execution& exec) {
  if (!t.limits.max_memory_bytes) return;
  for (const Provider* p : providers) {
    const int64_t has = exec.memory_bytes(p->device_kind());
    if (has <= 0 || *t.limits.max_memory_bytes <= has) continue;
    const auto gib = [](int64_t bytes) {
      return fmt::format("{:.1f} GiB", double(bytes) / (1 << 30));
    };
    warning(fmt::format("--max-memory {} is more than the {} has ({}): the search stays within it",
                        gib(*t.limits.max_memory_bytes),
                        p->device_kind() == DeviceKind::cuda ? "GPU" : "host", gib(has)));
    t.limits.max_memory_bytes = has;
    t.run.memory_limit_bytes = has;
  }
}

// Every provider (and value of its settings) on every shape of the grid, each searched along the
// axis; an impossible shape is a result that says why it was not tuned. Stops between points.
std::vector<TuneResult> tune_grid(const std::vector<Spec>& specs,
                                  const std::vector<Provider*>& providers,
                                  const SettingsByProvider& settings, Executor& executor,
                                  TuneOptions& t, const StopRequest& stop) {
  std::vector<TuneResult> results;
  for (const Spec& spec : specs) {
    Spec start = spec;
    if (t.axis == TuneAxis::seq) t.start = spec.q_len == spec.kv_len ? spec.q_len : spec.kv_len;
    const std::string invalid = invalid_reason(spec);
    for (Provider* p : providers) {
      if (stop.stop_after_point()) break;  // the rest are not tuned; the summary says it stopped
      if (!invalid.empty()) {
        TuneResult none;
        none.provider = p->name();
        none.spec = start;
        none.axis = t.axis;
        none.boundary = "not run: an impossible point: " + invalid;
        results.push_back(std::move(none));
        continue;
      }
      const auto given = settings.find(p->name());
      for (const Settings& set :
           setting_combinations(given == settings.end() ? SettingValues{} : given->second)) {
        if (stop.stop_after_point()) break;
        fmt::print("tune {} {}{} ({}):\n", p->name(), spec.label(),
                   set.empty() ? "" : " [" + settings_label(set) + "]",
                   t.axis == TuneAxis::batch ? "largest batch" : "longest sequence");
        results.push_back(tune(spec, *p, executor, t, set));
        fmt::print("{}\n", format_tune_curve(results.back()));
      }
    }
  }
  return results;
}

// The summary, the --json answer and, after a stop, what the batches found so far are not; the
// exit code.
int finish_tune(const TuneCliOptions& o, const TuneOptions& t,
                const std::vector<TuneResult>& results, int signal) {
  fmt::print("{}", format_tune_summary(results, t.axis));
  const std::string stopped_by = signal == 0 ? "" : std::string(signal_text(signal));
  if (!o.json.empty()) {
    std::ofstream out(o.json, std::ios::binary | std::ios::trunc);
    out << tune_summary_json(results, t.limits, stopped_by);
    if (!out.flush()) throw std::runtime_error(fmt::format("cannot write --json {}", o.json));
  }
  if (signal == 0) return 0;
  std::cout.flush();
  fmt::print(stderr,
             "attnprof: tune stopped by {} before its search ended: the batches above are what "
             "was found so far, not the answer{}\n",
             stopped_by, o.json.empty() ? "" : fmt::format(" ({} says so)", o.json));
  return 128 + signal;
}

int tune_command(const TuneCliOptions& o) {
  TuneOptions t = tune_options(o);
  // Impossible points of the grid are reported as not tuned, with the reason; the rest are.
  const std::vector<Spec> specs = grid_points(o.grid);
  require_a_valid_spec(specs);
  if (o.force && o.out.empty() && o.json.empty()) {
    throw std::invalid_argument("--force needs --out FILE or --json FILE, the file to replace");
  }
  check_output_paths({{"--out", o.out, /*own_rules=*/true}, {"--json", o.json}}, {}, o.force);
  const std::unique_ptr<JournalLock> lock =
      claim_journal({o.out, /*resume=*/false, o.force, /*can_resume=*/false});

  // Points run where `attnprof run` runs them: a supervised worker (a provider's worker group in
  // a worker of its own), or this process with --in-process.
  StopRequest stop;
  const StopSignals signals(stop, /*second_kills=*/o.in_process);
  Execution exec({o.in_process, o.device, o.measure.threads,
                  default_hang_timeout_s(t.run.measure.rule.timeout_s)},
                 stop);
  exec.open();
  const bool on_cuda = exec.use_cuda(o.device);
  // The default set: the providers that can run a point of the grid (at its start value).
  const std::vector<Provider*> providers =
      chosen_providers(o.providers, exec.devices(on_cuda), python_providers_unavailable(), specs);
  const SettingsByProvider settings = settings_of_run(o.measure.settings, providers);
  warn_cuda_only_options(o.measure, providers);
  within_device_memory(t, providers, exec);
  Executor& executor = exec.executor(t.run);
  t.stop = &stop;

  begin_work();
  if (lock) lock->keep();
  std::unique_ptr<Sink> journal;
  if (!o.out.empty()) {
    journal = make_jsonl_sink(o.out, /*append=*/false);
    journal->begin(0);
  }
  std::unique_ptr<Sink> history = open_history(o.history, o.out, exec.device_name(on_cuda));
  if (history) history->begin(0);
  t.on_point = [&](const TunePoint& p) {
    if (journal) journal->write(p.result);
    if (history) history->write(p.result);
    fmt::print("  {}\n", format_tune_point(p, t.axis));
    std::cout.flush();
  };
  const std::vector<TuneResult> results = tune_grid(specs, providers, settings, executor, t, stop);
  if (journal) journal->end();
  const int signal = stop.count.load() > 0 ? stop.signal.load() : 0;
  if (history) {
    if (signal != 0) history->stopped(signal);
    history->end();
  }
  return finish_tune(o, t, results, signal);
}

}  // namespace

Command add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "tune",
      "Largest and throughput-optimal batch under --max-memory / --p95 limits, or the "
      "longest sequence before OOM (--max-seq)");
  add_grid_options(sub, o->grid);
  sub->add_option("--device", o->device, "auto (CUDA where present, else CPU), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  sub->add_option("--providers", o->providers, "Provider names or globs, comma-separated")
      ->check(non_empty());
  add_python_options(sub, o->python);
  sub->add_option("--max-memory", o->max_memory,
                  "Peak memory limit per point: 512MiB, 40GiB (an OOM always fails)");
  sub->add_option("--p95", o->p95, "p95 latency limit per launch: 250us, 20ms");
  sub->add_flag("--max-seq", o->max_seq,
                "Find the longest sequence before OOM (or the limits) at a fixed --batch, "
                "starting from --seq");
  add_whole_number_option(sub, "--cap", o->cap,
                          "Largest value tried (65536 batch, 1048576 sequence)", 1);
  add_whole_number_option(sub, "--resolution", o->resolution,
                          "Stop when the boundary is known to within this (default: 5% of the "
                          "batch, 64 for the sequence)",
                          1);
  sub->add_option("--out", o->out, "JSONL journal of every measured point");
  sub->add_flag("--force", o->force,
                "Replace an existing --out journal (without it, a non-empty journal is refused)");
  sub->add_option("--json", o->json, "The summary (limits, boundaries, curves) as JSON");
  add_measure_options(sub, o->measure);
  sub->add_flag("--in-process", o->in_process,
                "Run points in this process, not in a supervised worker (a crash or hang ends "
                "the search)");
  add_history_options(sub, o->history);
  return {sub, [o]() {
            register_python_providers(o->python, false, o->providers);
            return tune_command(*o);
          }};
}

}  // namespace attnprof::cli
