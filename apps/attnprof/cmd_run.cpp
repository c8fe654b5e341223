// `attnprof run`: a grid of shapes x providers, every point verified and measured, rows to the
// console, a JSONL journal and optional CSV / Markdown. Points run in a supervised worker process
// (supervisor.hpp) unless --in-process; --resume continues a journal, --force replaces one.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "attnprof/command_line.hpp"
#include "attnprof/grid.hpp"
#include "attnprof/history.hpp"
#include "attnprof/interrupt.hpp"
#include "attnprof/journal.hpp"
#include "attnprof/registry.hpp"
#include "attnprof/report.hpp"
#include "attnprof/sweep.hpp"
#include "cli.hpp"
#include "gpus.hpp"
#include "grid_options.hpp"
#include "history_options.hpp"
#include "invalid_points.hpp"
#include "journal_output.hpp"
#include "measure_options.hpp"
#include "output_paths.hpp"
#include "provider_choice.hpp"
#include "python_options.hpp"
#include "run_execution.hpp"
#include "time_split.hpp"

namespace attnprof::cli {

namespace {

struct RunCliOptions {
  std::string device = "auto";
  std::string providers;
  PythonCliOptions python;
  std::string preset;
  GridCliOptions grid;
  std::string out, csv, markdown;
  MeasureCliOptions measure;
  bool fail_on_error = false;
  bool resume = false;
  bool force = false;
  bool in_process = false;
  RunHistoryOptions history;
  std::string hang_timeout;   // empty: default_hang_timeout_s(point timeout)
  double hang_timeout_s = 0;  // parsed
  std::string shard;          // "K/N", empty: the whole grid
  Shard shard_parsed;
  std::string gpus;  // --gpus: one share of the grid per GPU (gpus.hpp); empty: one device
};

struct Plan {
  std::vector<Spec> specs;
  std::vector<Provider*> providers;
  SettingsByProvider settings;  // --set, swept per provider
  std::string preset;
  int64_t grid_shapes = 0;  // before --shard took its share
};

// The grid: a preset (explicit, or the device's default when no grid option is given), with
// explicit options replacing their axes; and the providers. Impossible points stay in the grid
// (the point lifecycle refuses each with its reason, fault `invalid`) unless there is nothing
// else.
Plan make_plan(const RunCliOptions& o, bool on_cuda, const RunDevices& devices) {
  Plan plan;
  std::vector<GridAxes> series;
  plan.preset = o.preset;
  if (plan.preset.empty() && !any_grid_option(o.grid))
    plan.preset = on_cuda ? "fa-bench" : "cpu-small";
  if (!plan.preset.empty()) {
    series = load_preset(plan.preset).series;
  } else {
    series.emplace_back();
  }
  for (GridAxes& ax : series) {
    apply_grid_overrides(ax, o.grid);
    for (const Spec& s : expand(ax)) plan.specs.push_back(s);
  }
  require_a_valid_spec(plan.specs);
  plan.grid_shapes = static_cast<int64_t>(plan.specs.size());
  plan.specs = shard_specs(plan.specs, o.shard_parsed);
  // Defaults are the providers that declare themselves in the default set of the device, can
  // run here and can run a point of the grid, and those the --py-provider files add; named
  // providers always get a row.
  plan.providers =
      chosen_providers(o.providers, devices, python_providers_unavailable(), plan.specs);
  plan.settings = settings_of_run(o.measure.settings, plan.providers);
  warn_cuda_only_options(o.measure, plan.providers);
  return plan;
}

// Every option that is only checked, before anything starts or is written.
RunOptions parse_run_options(RunCliOptions& o) {
  RunOptions ro = measure_run_options(o.measure);
  o.hang_timeout_s = o.hang_timeout.empty()
                         ? default_hang_timeout_s(ro.measure.rule.timeout_s)
                         : positive_seconds_option(o.hang_timeout, "--hang-timeout");
  if (!o.shard.empty()) o.shard_parsed = parse_shard(o.shard);
  if (o.resume && o.out.empty()) {
    throw std::invalid_argument("--resume needs --out FILE, the journal to resume");
  }
  if (o.force && o.out.empty() && o.csv.empty() && o.markdown.empty()) {
    throw std::invalid_argument(
        "--force needs --out, --csv or --markdown FILE, the file to replace");
  }
  if (o.force && o.resume) {
    throw std::invalid_argument("--resume continues the journal and --force replaces it: give one");
  }
  if (o.in_process && !o.hang_timeout.empty()) {
    throw std::invalid_argument("--hang-timeout needs the supervisor (not --in-process)");
  }
  return ro;
}

// The journal to resume, read (under the lock) before anything is written: a bad one ends the
// run untouched.
JournalRows read_journal_to_resume(const RunCliOptions& o) {
  if (!o.resume) return {};
  try {
    JournalRows j = read_journal(o.out);
    if (!j.warning.empty()) warning(j.warning);
    return j;
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(
        fmt::format("--resume: {} (the journal is left as it is)", e.what()));
  }
}

// This command line as a shell would take it, with --resume in place of --force: how to pick
// up after a stop (--force again would throw the finished rows away).
std::string resume_command() {
  std::vector<std::string> args = command_line_args(static_cast<int>(::getpid()));
  std::erase(args, "--force");
  if (std::find(args.begin(), args.end(), "--resume") == args.end()) args.push_back("--resume");
  return shell_join(args);
}

// --gpus: the shares run as child runs, one per GPU (gpus.hpp), and are merged into --out.
int run_on_every_gpu(const RunCliOptions& o, const CLI::App& app) {
  if (!o.shard.empty())
    throw std::invalid_argument("--gpus shards the grid itself, one share per GPU: drop --shard");
  if (o.in_process) throw std::invalid_argument("--gpus runs a process per GPU: drop --in-process");
  if (o.device == "cpu" && !gpus_stood_in())
    throw std::invalid_argument("--gpus runs on CUDA devices: drop --device cpu");
  return run_on_gpus(
      {o.gpus, o.out, o.csv, o.markdown, o.history.path, o.history.off, o.resume, o.force}, app);
}

// Where a run's rows go: the console, the journal, CSV and Markdown (which resumed rows are
// replayed into), the history database, and the time split of its summary line.
struct RunSinks {
  std::vector<std::unique_ptr<Sink>> owned;
  std::vector<Sink*> all, replay;
  TimeSplit split;
};

void open_sinks(const RunCliOptions& o, const Plan& plan, std::unique_ptr<Sink> history,
                RunSinks& s) {
  std::size_t provider_width = 0;
  for (const Provider* p : plan.providers)
    provider_width = std::max(provider_width, p->name().size());
  s.owned.push_back(make_console_sink(std::cout, isatty(STDOUT_FILENO) != 0, provider_width));
  if (!o.out.empty()) s.owned.push_back(make_jsonl_sink(o.out, o.resume));
  if (!o.csv.empty()) s.replay.push_back(s.owned.emplace_back(make_csv_sink(o.csv)).get());
  if (!o.markdown.empty())
    s.replay.push_back(s.owned.emplace_back(make_markdown_sink(o.markdown)).get());
  if (history) s.owned.push_back(std::move(history));
  for (auto& sink : s.owned) s.all.push_back(sink.get());
  s.all.push_back(&s.split);
}

std::string count_of(std::size_t n, const char* what) {
  return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
}

// "attnprof run: 12 shapes x 2 providers = 24 points on ...", and what a resume finds.
void print_run_header(const RunCliOptions& o, const Plan& plan, const std::vector<Point>& points,
                      const std::string& device, const std::string& where,
                      const JournalRows& journal, Executor& executor) {
  fmt::print("attnprof run: {} x {} = {} on {}{}{}, {}\n", count_of(plan.specs.size(), "shape"),
             count_of(plan.providers.size(), "provider"), count_of(points.size(), "point"), device,
             plan.preset.empty() ? "" : fmt::format(" (preset {})", plan.preset),
             o.shard.empty() ? ""
                             : fmt::format(" (shard {}/{} of {} shapes)", o.shard_parsed.index,
                                           o.shard_parsed.count, plan.grid_shapes),
             where);
  if (const std::string why = charts_unavailable(); !why.empty()) {
    fmt::print(stderr, "attnprof: no charts in `attnprof report --html` of this run: {}\n", why);
  }
  if (o.resume) {
    const ResumedElsewhere other = resumed_elsewhere(points, executor, journal.rows);
    fmt::print(
        "resuming {}: {} rows in the journal{}\n", o.out, journal.rows.size(),
        other.points == 0
            ? ""
            : fmt::format("; {} of its points were measured by another build, device or setting "
                          "({}): they run again, their new rows beside the old",
                          other.points, other.differs));
  }
  std::cout.flush();
}

// The summary line, what a stop leaves and how to resume, and the exit code (README, "Exit
// codes": 128 + the signal after a stop; 1 with --fail-on-error for a failed point or none
// passed).
int finish_run(const RunCliOptions& o, const SweepSummary& sum, const TimeSplit& split,
               double sweep_s) {
  std::string counts;
  for (const auto& [status, n] : sum.by_status) {
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, to_string(status));
  }
  int64_t ran = 0;
  for (const auto& [status, n] : sum.by_status) ran += n;
  fmt::print("done: {} of {} points run{}: {}\n", ran, sum.total,
             sum.resumed > 0 ? fmt::format(" ({} already in the journal)", sum.resumed) : "",
             counts.empty() ? "nothing to do" : counts);
  if (ran > 0) fmt::print("{}\n", split.line(sweep_s));
  if (sum.stop_signal != 0) {
    std::cout.flush();
    fmt::print(stderr, "attnprof: stopped by {} with {} of {} points left to run.\n",
               signal_text(sum.stop_signal), sum.total - sum.resumed - ran, sum.total);
    if (o.out.empty()) {
      fmt::print(stderr, "attnprof: no journal was written (no --out); nothing to resume\n");
    } else {
      fmt::print(stderr, "attnprof: every finished row is in {}; resume with:\n  {}\n", o.out,
                 resume_command());
    }
    return 128 + sum.stop_signal;
  }
  const int64_t bad =
      sum.count(Status::incorrect) + sum.count(Status::failed) + sum.count(Status::timeout);
  // A run that measured nothing has not answered its question, whatever the reasons.
  const bool none_passed = ran > 0 && sum.count(Status::passed) == 0;
  if (none_passed) {
    std::cout.flush();
    fmt::print(stderr, "attnprof: no point passed: this run measured nothing{}\n",
               o.fail_on_error ? "" : " (--fail-on-error makes that exit 1)");
  }
  return (o.fail_on_error && (bad > 0 || none_passed)) ? kFailedExit : 0;
}

int run_command(RunCliOptions& o, const CLI::App& app) {
  RunOptions ro = parse_run_options(o);
  if (!o.gpus.empty()) return run_on_every_gpu(o, app);
  check_output_paths(
      {{"--out", o.out, /*own_rules=*/true}, {"--csv", o.csv}, {"--markdown", o.markdown}}, {},
      o.force);
  const std::unique_ptr<JournalLock> lock = claim_journal({o.out, o.resume, o.force});
  const JournalRows journal = read_journal_to_resume(o);

  StopRequest stop;
  const StopSignals signals(stop, /*second_kills=*/o.in_process);
  Execution exec({o.in_process, o.device, o.measure.threads, o.hang_timeout_s}, stop);
  // Which device: auto picks CUDA where a device answers, else the CPU. Only the CPU needs no
  // look at the devices, so the grid is checked before a worker starts.
  if (o.device != "cpu") exec.open();
  const bool on_cuda = exec.use_cuda(o.device);
  const Plan plan = make_plan(o, on_cuda, exec.devices(on_cuda));
  if (o.device == "cpu") exec.open();
  Executor& executor = exec.executor(ro);

  std::unique_ptr<Sink> history = open_history(o.history, o.out, exec.device_name(on_cuda));
  // Every check has passed: from here on files are written.
  begin_work();
  if (lock) lock->keep();
  RunSinks sinks;
  open_sinks(o, plan, std::move(history), sinks);
  const auto points = plan_points(plan.specs, plan.providers, plan.settings);
  print_run_header(o, plan, points, exec.device_name(on_cuda), exec.where(), journal, executor);

  SweepControl control;
  control.journal = &journal.rows;
  control.replay = sinks.replay;
  control.stop = &stop;
  control.seed = ro.seed;
  const auto sweep_t0 = std::chrono::steady_clock::now();
  const SweepSummary sum = run_sweep(points, executor, sinks.all, control);
  const double sweep_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sweep_t0).count();
  return finish_run(o, sum, sinks.split, sweep_s);
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "run", "Run a grid of shapes on providers: verify and measure every point");
  sub->add_option("--device", o->device, "auto (CUDA where present, else CPU), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  sub->add_option("--providers", o->providers,
                  "Provider names or globs, comma-separated (see `attnprof list`)")
      ->check(non_empty());
  add_python_options(sub, o->python);
  std::string presets;
  for (const std::string& name : preset_names()) {
    if (!presets.empty()) presets += ", ";
    presets += name;
  }
  sub->add_option("--preset", o->preset,
                  "A preset grid from presets/ (docs/usage.md says what each holds): " + presets);
  add_grid_options(sub, o->grid);
  sub->add_option("--out", o->out, "JSONL journal, one row per point, flushed per point");
  sub->add_option("--shard", o->shard,
                  "Run share K of N of the grid (shapes K, K+N, ...; K from 0): "
                  "--shard $SLURM_PROCID/$SLURM_NTASKS, each with its own --out; "
                  "`attnprof merge` joins the journals");
  sub->add_option("--gpus", o->gpus,
                  "Every GPU of the host at once: all, a count N (GPUs 0..N-1) or indices 0,2 "
                  "(1, alone); one share of the shapes per GPU, each GPU's journal beside --out "
                  "(r.gpu0.jsonl, ...), merged into --out at the end");
  sub->add_option("--csv", o->csv, "CSV file");
  sub->add_option("--markdown", o->markdown, "Markdown summary file");
  add_measure_options(sub, o->measure);
  sub->add_flag("--fail-on-error", o->fail_on_error,
                "Exit 1 when any point is incorrect, failed or timed out, or when no point passed");
  sub->add_flag("--resume", o->resume,
                "Append to the --out journal, running only the points it has no row for "
                "(same provider, shape, build and device)");
  sub->add_flag("--force", o->force,
                "Replace an existing --out journal (without --resume or --force, a non-empty "
                "journal is refused)");
  add_history_options(sub, o->history);
  sub->add_flag("--in-process", o->in_process,
                "Run points in this process, not in a supervised worker (a crash or hang ends "
                "the sweep)");
  sub->add_option("--hang-timeout", o->hang_timeout,
                  "Wall limit per point before its worker is killed and the row is timeout "
                  "(default: 5 x --point-timeout + 30s)");
  return {sub, [o, sub]() {
            register_python_providers(o->python, false, o->providers);
            return run_command(*o, *sub);
          }};
}

}  // namespace attnprof::cli
