#include "history_options.hpp"

#include "attnprof/command_line.hpp"
#include "attnprof/history.hpp"

namespace attnprof::cli {

void add_history_options(CLI::App* sub, RunHistoryOptions& o) {
  sub->add_option("--history", o.path,
                  "Record the run in this history database (default $ATTNPROF_HISTORY or "
                  "~/.local/share/attnprof/history.sqlite)");
  sub->add_flag("--no-history", o.off, "Do not record the run in the history database");
}

std::unique_ptr<Sink> open_history(const RunHistoryOptions& o, const std::string& journal,
                                   const std::string& device) {
  if (o.off) return nullptr;
  return open_run_history(o.path, {process_command_line(), journal, device});
}

}  // namespace attnprof::cli
