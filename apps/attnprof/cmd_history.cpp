// `attnprof history`: the runs recorded in the history database, newest first.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "attnprof/history.hpp"
#include "cli.hpp"
#include "number_options.hpp"

namespace attnprof::cli {

namespace {

struct HistoryCliOptions {
  std::string history;
  int64_t limit = 20;
  bool commands = false;
};

int history_command(const HistoryCliOptions& o) {
  const std::filesystem::path path = history_path(o.history);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    fmt::print("no runs recorded yet: no history database at {}\n", path.string());
    return 0;
  }
  const History db = History::open(path, /*create=*/false);
  const std::vector<RunRecord> runs = db.runs(o.limit);
  fmt::print("history {}\n", path.string());
  if (runs.empty()) {
    fmt::print("no runs recorded yet\n");
    return 0;
  }
  fmt::print("{:>5}  {:<20}  {:<36}  {:>6}  {:>6}  {}\n", "id", "started (UTC)", "device", "points",
             "passed", o.commands ? "command" : "journal");
  for (const RunRecord& r : runs) {
    std::string device =
        r.meta.device.size() > 36 ? r.meta.device.substr(0, 35) + "~" : r.meta.device;
    std::string what = o.commands ? r.meta.command : r.meta.journal;
    const std::string mark = r.finished_at.empty()  ? "(unfinished)"
                             : r.stopped_by.empty() ? ""
                                                    : fmt::format("(stopped by {})", r.stopped_by);
    if (!mark.empty()) what += (what.empty() ? "" : " ") + mark;
    fmt::print("{:>5}  {:<20}  {:<36}  {:>6}  {:>6}  {}\n", r.id, r.started_at, device, r.points,
               r.passed, what);
  }
  return 0;
}

}  // namespace

Command add_history_command(CLI::App& app) {
  auto o = std::make_shared<HistoryCliOptions>();
  CLI::App* sub = app.add_subcommand("history", "List the runs recorded in the history database");
  sub->add_option("--history", o->history,
                  "History database (default $ATTNPROF_HISTORY or "
                  "~/.local/share/attnprof/history.sqlite)");
  add_whole_number_option(sub, "--limit", o->limit, "Newest runs to list (20; 0 for all)", 0);
  sub->add_flag("--commands", o->commands, "Show each run's command line instead of its journal");
  return {sub, [o]() { return history_command(*o); }};
}

}  // namespace attnprof::cli
