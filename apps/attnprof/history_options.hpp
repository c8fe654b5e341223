// --history and --no-history, the same on every subcommand that measures points (run, tune,
// trace): each records its rows in the run history (`attnprof history`), as the README says.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "attnprof/sink.hpp"

namespace attnprof::cli {

struct RunHistoryOptions {
  std::string path;  // --history (empty: the default database)
  bool off = false;  // --no-history
};

void add_history_options(CLI::App* sub, RunHistoryOptions& o);

// The history sink for this command (null with --no-history, or when the default database
// cannot be used: one warning). `journal` is the command's --out ("" when none), `device` the
// device its points run on. Throws for an explicit --history that cannot be used.
std::unique_ptr<Sink> open_history(const RunHistoryOptions& o, const std::string& journal,
                                   const std::string& device);

}  // namespace attnprof::cli
