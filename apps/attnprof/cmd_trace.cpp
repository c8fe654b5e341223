// `attnprof trace`: one point per provider, run once through the point lifecycle under the kernel
// tracer (in a supervised worker, like `attnprof run`); a Chrome/Perfetto trace (one process per
// provider), the kernel breakdown, the roofline placement and, with --ncu, Nsight Compute's DRAM
// and tensor-pipe figures (docs/tracing.md).
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "attnprof/command_line.hpp"
#include "attnprof/interrupt.hpp"
#include "attnprof/ncu.hpp"
#include "attnprof/registry.hpp"
#include "attnprof/trace.hpp"
#include "cli.hpp"
#include "grid_options.hpp"
#include "history_options.hpp"
#include "measure_options.hpp"
#include "number_options.hpp"
#include "output_paths.hpp"
#include "provider_choice.hpp"
#include "python_options.hpp"
#include "run_execution.hpp"

#if defined(ATTNPROF_WITH_CUDA)
#include "attnprof/peaks.hpp"
#endif

namespace attnprof::cli {

namespace {

struct TraceCliOptions {
  GridCliOptions grid;
  std::string device = "auto";
  std::string providers;
  PythonCliOptions python;
  std::string chrome;     // trace file
  std::string breakdown;  // Markdown file
  bool force = false;     // replace an existing --chrome or --breakdown
  bool ncu = false;
  bool ncu_target = false;            // hidden: the child ncu profiles
  std::vector<std::string> settings;  // --set: swept per provider; the ncu child gets its point's
  int threads = 0;
  uint64_t seed = 20261129;
  int warmup = 1;
  int launches = 3;
  bool in_process = false;
  double hang_timeout_s = 300;
  RunHistoryOptions history;
};

// The ceilings a traced row is held against: the ones the point recorded (measured by `attnprof
// peaks`), else the datasheet of the GPU the row ran on (said so), else none.
std::optional<Ceilings> ceilings_for(const Result& row) {
  if (row.peak_tflops > 0 && row.peak_tbps > 0) {
    return Ceilings{row.peak_tflops, row.peak_tbps, row.peaks_source};
  }
#if defined(ATTNPROF_WITH_CUDA)
  const auto gpu = row.env.find("gpu");
  if (row.traits.device != DeviceKind::cuda || gpu == row.env.end()) return std::nullopt;
  const Datasheet d = datasheet_for(gpu->second);
  if (!d.known) return std::nullopt;
  const double tf = d.tflops_for(row.spec.dtype);
  if (tf <= 0) return std::nullopt;
  return Ceilings{tf, d.hbm_tbps,
                  fmt::format("{}: not measured here (run attnprof peaks)", d.source)};
#else
  return std::nullopt;
#endif
}

std::string phases_line(const Result& row) {
  std::string line;
  for (const TraceEvent& r : trace_of(row).ranges) {
    line += fmt::format("{}{} {:.3f} ms", line.empty() ? "" : ", ", r.name, r.duration_us() * 1e-3);
    if (r.name == kPhaseTimed) line += fmt::format(" ({} launches)", trace_of(row).timed_launches);
  }
  return line.empty() ? "none ran" : line;
}

void write_file(const std::string& path, const std::string& text, const char* option) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error(fmt::format("{}: cannot write {}", option, path));
}

// The one shape the grid options give, and the files checked before anything runs.
Spec trace_spec(const TraceCliOptions& o) {
  const std::vector<Spec> specs = grid_specs(o.grid);
  if (specs.size() != 1) {
    throw std::invalid_argument(fmt::format(
        "trace takes one shape per provider; the grid options give {} points", specs.size()));
  }
  if (o.providers.empty()) throw std::invalid_argument("--providers: name at least one provider");
  check_output_paths({{"--chrome", o.chrome}, {"--breakdown", o.breakdown}}, {}, o.force);
  check_setting_forms(o.settings);
  return specs.front();
}

RunOptions trace_run_options(const TraceCliOptions& o) {
  RunOptions ro;
  ro.seed = o.seed;
  ro.warmup_launches = o.warmup;
  ro.trace_kernels = false;  // the trace's own kernels: those of the timed range
  if (o.ncu_target) {
    ro.profile_one_launch = true;  // and no ceilings measured here: ncu would profile them too
  } else {
    ro.trace_launches = o.launches;
    ro.auto_peaks = AutoPeaks::any;
  }
  return ro;
}

// What the traced points give: their rows (the Chrome trace) and the breakdown's Markdown.
struct Traced {
  std::vector<Result> rows;
  std::string markdown;
  bool all_passed = true;
};

// One traced row on the console and in the Markdown: its status and phases, and for a passed
// one the kernel breakdown, the roofline and (with `ncu` found) Nsight Compute's view of it.
void describe_trace(const Result& t, const Point& pt, const Spec& spec, const TraceCliOptions& o,
                    const std::string& ncu, const std::string& title, Traced& out) {
  const std::string status = t.reason.empty()
                                 ? std::string(to_string(t.status))
                                 : fmt::format("{}: {}", to_string(t.status), t.reason);
  const std::string phases = phases_line(t);
  fmt::print("status: {}\nphases: {}\n", status, phases);
  out.markdown += fmt::format("\n## {}\n\nstatus: {}; phases: {}\n\n", title, status, phases);
  if (t.status != Status::passed) return;
  const Breakdown b = make_breakdown(t);
  const std::optional<Ceilings> c = ceilings_for(t);
  const Roofline r = place_on_roofline(t, b, c);
  fmt::print("\n{}\n{}", render_breakdown(t, b, false), render_roofline(r, c, false));
  out.markdown += fmt::format("{}\n{}", render_breakdown(t, b, true), render_roofline(r, c, true));
  if (ncu.empty() || pt.provider->device_kind() != DeviceKind::cuda) return;
  const NcuReport rep = run_ncu(
      ncu_command(ncu, ncu_target_argv(this_executable().string(), spec, pt.provider->name(),
                                       pt.settings, o.seed, o.warmup)));
  fmt::print("\n{}", render_ncu(rep, false));
  out.markdown += fmt::format("\n{}", render_ncu(rep, true));
}

void write_trace_files(const TraceCliOptions& o, const Traced& traced) {
  if (!o.chrome.empty()) {
    write_file(o.chrome, chrome_trace_json(traced.rows), "--chrome");
    fmt::print("chrome trace: {} ({} provider(s); open in ui.perfetto.dev or chrome://tracing)\n",
               o.chrome, traced.rows.size());
  }
  if (!o.breakdown.empty()) {
    write_file(o.breakdown, traced.markdown, "--breakdown");
    fmt::print("breakdown: {}\n", o.breakdown);
  }
}

// --ncu-target: the one launch the parent's ncu profiles, in this process.
int profile_for_ncu(Executor& executor, const Point& point) {
  const std::optional<Result> row = executor.run(point);
  if (!row || row->status != Status::passed) {
    fmt::print(stderr, "attnprof trace --ncu-target: {}\n", row ? row->reason : "stopped");
    return 1;
  }
  return 0;
}

int trace_command(const TraceCliOptions& o) {
  const Spec spec = trace_spec(o);
  bool wants_cuda = false;
  for (const Provider* p : select_providers(o.providers))
    wants_cuda = wants_cuda || (o.device != "cpu" && p->device_kind() == DeviceKind::cuda);

  // The points run through the one lifecycle with trace hooks, where `attnprof run` runs them (a
  // supervised worker per worker group); ncu's target is the process ncu watches: in-process.
  StopRequest stop;
  const StopSignals signals(stop, /*second_kills=*/true);
  const bool in_process = o.in_process || o.ncu_target;
  Execution exec({in_process, wants_cuda ? "auto" : "cpu", o.threads, o.hang_timeout_s}, stop);
  exec.open();
  const bool on_cuda = exec.use_cuda(o.device) && wants_cuda;
  // Named providers that cannot run here are refused (one line, exit 2), as run and tune do.
  const std::vector<Provider*> providers =
      chosen_providers(o.providers, exec.devices(on_cuda), python_providers_unavailable(),
                       std::span<const Spec>(&spec, 1));
  const std::vector<Point> points =
      plan_points({spec}, providers, settings_of_run(o.settings, providers));
  if (o.ncu_target && points.size() != 1) {
    throw std::invalid_argument("--ncu-target takes exactly one provider and one value a setting");
  }
  begin_work();
  RunOptions ro = trace_run_options(o);
  Executor& executor = exec.executor(ro);
  if (o.ncu_target) return profile_for_ncu(executor, points.front());
  std::string ncu;
  if (o.ncu) {
    ncu = find_on_path("ncu");
    if (ncu.empty()) fmt::print(stderr, "--ncu: ncu not found on PATH\n");
  }

  std::unique_ptr<Sink> history = open_history(o.history, "", exec.device_name(on_cuda));
  if (history) history->begin(static_cast<int64_t>(points.size()));
  Traced traced;
  traced.markdown = fmt::format("# attnprof trace: {}\n", spec.label());
  int stopped_by = 0;  // the signal that stopped the trace before its last point
  for (const Point& pt : points) {
    if (stop.stop_after_point()) {  // the point in flight ended; the rest are not traced
      stopped_by = stop.signal.load();
      break;
    }
    const std::string title = pt.settings.empty() ? pt.provider->name()
                                                  : fmt::format("{} [{}]", pt.provider->name(),
                                                                settings_label(pt.settings));
    fmt::print("== {} · {} · {}\n", title, spec.label(),
               exec.device_name(pt.provider->device_kind() == DeviceKind::cuda));
    std::cout.flush();
    std::optional<Result> ran = executor.run(pt);
    if (!ran) {
      stopped_by = stop.signal.load();
      break;
    }
    Result& t = *ran;
    t.env = point_env(executor, pt);
    if (history) history->write(t);
    traced.all_passed = traced.all_passed && t.status == Status::passed;
    describe_trace(t, pt, spec, o, ncu, title, traced);
    fmt::print("\n");
    traced.rows.push_back(std::move(t));
  }
  if (history) {
    if (stopped_by != 0) history->stopped(stopped_by);
    history->end();
  }
  // What was traced before a stop is written (nothing is when nothing was).
  if (stopped_by == 0 || !traced.rows.empty()) write_trace_files(o, traced);
  if (stopped_by == 0) return traced.all_passed ? 0 : kFailedExit;
  std::cout.flush();
  fmt::print(stderr, "attnprof: trace stopped by {} with {} of {} points traced{}\n",
             signal_text(stopped_by), traced.rows.size(), points.size(),
             traced.rows.empty() || (o.chrome.empty() && o.breakdown.empty())
                 ? ""
                 : "; the files above hold those");
  return 128 + stopped_by;
}

}  // namespace

Command add_trace_command(CLI::App& app) {
  auto o = std::make_shared<TraceCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "trace",
      "Trace one point per provider: Chrome/Perfetto trace, kernel breakdown by category, "
      "roofline placement, optional Nsight Compute metrics (docs/tracing.md)");
  add_grid_options(sub, o->grid);
  sub->add_option("--device", o->device,
                  "auto (CUDA where present for CUDA providers, else CPU), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  add_python_options(sub, o->python);
  sub->add_option("--providers", o->providers, "Provider names or globs, comma-separated")
      ->required()
      ->check(non_empty());
  sub->add_option("--chrome", o->chrome,
                  "Write the Chrome trace JSON here (one process per provider)");
  sub->add_option("--breakdown", o->breakdown, "Write the breakdown tables as Markdown here");
  sub->add_flag("--force", o->force, "Replace an existing --chrome or --breakdown file");
  add_settings_option(sub, o->settings);
  sub->add_flag("--ncu", o->ncu,
                "Also run the point once under Nsight Compute (ncu on PATH): DRAM throughput "
                "and tensor-pipe utilization per kernel");
  sub->add_flag("--in-process", o->in_process,
                "Trace in this process, not in a supervised worker (a crash or hang ends it)");
  add_whole_number_option(sub, "--threads", o->threads,
                          "CPU threads for CPU providers (default: all)", 0);
  add_whole_number_option(sub, "--seed", o->seed, "Seed of the random inputs (0 to 2^64-1)", 0);
  add_whole_number_option(sub, "--warmup", o->warmup, "Untimed launches before the timed range (1)",
                          0);
  add_whole_number_option(sub, "--launches", o->launches, "Launches in the timed range (3)", 1);
  add_history_options(sub, o->history);
  sub->add_flag("--ncu-target", o->ncu_target, "(internal) the launch ncu profiles")->group("");
  return {sub, [o] {
            register_python_providers(o->python, false, o->providers);
            return trace_command(*o);
          }};
}

}  // namespace attnprof::cli
