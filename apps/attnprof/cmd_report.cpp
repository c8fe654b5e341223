// `attnprof report SOURCE --html report.html [--markdown report.md]`: a report of a journal or a
// recorded run, with plots (gnuplot), tables and generated findings.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "attnprof/history.hpp"
#include "attnprof/registry.hpp"
#include "attnprof/report.hpp"
#include "catalog.hpp"
#include "cli.hpp"
#include "output_paths.hpp"

namespace attnprof::cli {

namespace {

struct ReportCliOptions {
  std::vector<std::string> sources;  // journals or run ids, reported together
  std::string html, markdown;
  std::string baseline;
  std::string title = "attnprof report";
  std::string history;
  std::string tune;         // a `tune --json` file
  bool force = false;       // replace an existing --html or --markdown
  PythonCliOptions python;  // whose providers the seeds' comparison lists
};

int report_command(const ReportCliOptions& o) {
  if (o.html.empty() && o.markdown.empty()) {
    return usage_error("report: give --html FILE and/or --markdown FILE");
  }
  std::vector<PathOption> inputs;
  for (const std::string& source : o.sources) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(source, ec)) inputs.push_back({"journal", source});
  }
  if (!o.tune.empty()) inputs.push_back({"--tune", o.tune});
  check_output_paths({{"--html", o.html}, {"--markdown", o.markdown}}, inputs, o.force);
  // Several sources are one report: their rows together, their names joined.
  LoadedRows loaded;
  std::vector<std::string> labels;
  for (const std::string& source : o.sources) {
    LoadedRows one = load_rows(source, history_path(o.history));
    if (!one.warning.empty()) warning(one.warning);
    labels.push_back(one.label);
    for (Result& r : one.rows) loaded.rows.push_back(std::move(r));
  }
  loaded.label = fmt::format("{}", fmt::join(labels, ", "));
  backfill_traits(loaded.rows);  // rows of schema 1 declared no traits
  ReportOptions options;
  options.title = o.title;
  options.source = loaded.label;
  options.baseline = o.baseline;
  if (!o.tune.empty()) options.tune = read_tune_summary(o.tune);
  check_reportable(loaded.rows, options);
  begin_work();
  // The seeds' comparison says why a system has no rows as `attnprof list` would here.
  const Catalog catalog = provider_catalog(o.python);
  for (const auto& [p, a] : catalog.providers)
    options.catalog.push_back({p->name(), p->device_kind(), a});
  options.python_unavailable = catalog.python_unavailable;
  const std::vector<std::string> warnings =
      write_report(loaded.rows, options, ReportFiles{o.html, o.markdown});
  for (const std::string& w : warnings) warning(w);
  for (const std::string& path : {o.html, o.markdown}) {
    if (!path.empty()) fmt::print("wrote {}\n", path);
  }
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "report", "HTML and Markdown report of a journal or a recorded run: plots, tables, findings");
  sub->add_option("source", o->sources,
                  "JSONL journals, or run ids from `attnprof history` (or 'last'), reported "
                  "together")
      ->required();
  sub->add_option("--html", o->html, "Self-contained HTML report (plots inline)");
  sub->add_flag("--force", o->force, "Replace an existing --html or --markdown file");
  sub->add_option("--markdown", o->markdown,
                  "Markdown report; its plots are written to <name>-plots/ beside it");
  sub->add_option(
      "--baseline", o->baseline,
      "Provider that speedups are measured against (default: the provider that declares "
      "itself its device's baseline, cuda.naive or cpu.naive)");
  sub->add_option("--title", o->title, "The report's title");
  sub->add_option("--tune", o->tune,
                  "A `tune --json` file: the batch to deploy per provider, as findings and a "
                  "table");
  sub->add_option("--history", o->history,
                  "History database for run ids (default $ATTNPROF_HISTORY or "
                  "~/.local/share/attnprof/history.sqlite)");
  sub->add_option("--python", o->python.python,
                  "Interpreter whose Python providers the seeds' comparison lists as `attnprof "
                  "list` would (default $ATTNPROF_PYTHON, else the first python3 on PATH that has "
                  "torch)");
  return {sub, [o]() { return report_command(*o); }};
}

}  // namespace attnprof::cli
