// `attnprof compare A B`: each point of run B against run A, labelled FASTER, SLOWER, SAME or
// AMBIGUOUS from both runs' noise; --fail-on-regression makes a regression the exit code (CI).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "attnprof/compare.hpp"
#include "attnprof/history.hpp"
#include "cli.hpp"
#include "grid_options.hpp"
#include "output_paths.hpp"

namespace attnprof::cli {

namespace {

struct CompareCliOptions {
  std::string base, head;
  std::string threshold = "5%";
  bool fail_on_regression = false;
  bool allow_missing = false;
  std::string history;
  std::string json;    // also write the comparison here
  bool force = false;  // replace an existing --json file
};

int compare_command(const CompareCliOptions& o) {
  CompareOptions options;
  options.threshold = parse_fraction_option(o.threshold, "--threshold");
  std::vector<PathOption> inputs;
  for (const std::string& source : {o.base, o.head}) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(source, ec)) inputs.push_back({"journal", source});
  }
  check_output_paths({{"--json", o.json}}, inputs, o.force);
  const std::filesystem::path db = history_path(o.history);
  const LoadedRows a = load_rows(o.base, db);
  const LoadedRows b = load_rows(o.head, db);
  for (const LoadedRows* side : {&a, &b}) {
    if (!side->warning.empty()) warning(side->warning);
  }
  begin_work();
  const Comparison c = compare_runs(a.rows, b.rows, options);
  fmt::print("{}", format_comparison(c, a.label, b.label, options));
  if (!o.json.empty()) {
    std::ofstream out(o.json, std::ios::binary | std::ios::trunc);
    out << comparison_json(c, a.label, b.label, options);
    if (!out.flush()) throw std::runtime_error(fmt::format("cannot write --json {}", o.json));
  }
  if (c.rows.empty() && c.changes.empty()) {
    warning("the runs share no point to compare");
  }
  if (o.fail_on_regression && c.has_regression(o.allow_missing)) {
    std::string what = fmt::format("{} SLOWER", c.count(Verdict::slower));
    if (c.broken() > 0) what += fmt::format(", {} passed in A and broke in B", c.broken());
    if (!o.allow_missing && !c.missing.empty()) {
      what += fmt::format(", {} passed in A and are missing from B (--allow-missing accepts that)",
                          c.missing.size());
    }
    fmt::print(stderr, "attnprof: regression: {}\n", what);
    return kFailedExit;
  }
  return 0;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare", "Compare run B with run A point by point, judging changes against the noise");
  sub->add_option("A", o->base, "The base: a JSONL journal or a run id (or 'last')")->required();
  sub->add_option("B", o->head, "The new run: a JSONL journal or a run id")->required();
  sub->add_option("--threshold", o->threshold,
                  "Smallest change that counts as FASTER or SLOWER (5%)");
  sub->add_flag("--fail-on-regression", o->fail_on_regression,
                "Exit 1 when a point is SLOWER, or passed in A and broke in B or is missing "
                "from B (absent, or not passed)");
  sub->add_flag("--allow-missing", o->allow_missing,
                "With --fail-on-regression: accept points that passed in A and are absent or "
                "not passed in B (a smaller grid)");
  sub->add_option("--history", o->history, "History database for run ids");
  sub->add_option("--json", o->json, "Also write the comparison as JSON to this file");
  sub->add_flag("--force", o->force, "Replace an existing --json file");
  return {sub, [o]() { return compare_command(*o); }};
}

}  // namespace attnprof::cli
