// The CLI's subcommands, one file each. Each add_* registers its options on `app` and returns
// the function to call when that subcommand was given (its exit code).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace attnprof::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_list_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_worker_command(CLI::App& app);   // hidden: the supervisor's worker process
Command add_tune_command(CLI::App& app);     // cmd_tune.cpp
Command add_report_command(CLI::App& app);   // cmd_report.cpp
Command add_compare_command(CLI::App& app);  // cmd_compare.cpp
Command add_history_command(CLI::App& app);  // cmd_history.cpp
Command add_trace_command(CLI::App& app);    // cmd_trace.cpp

// One line on stderr, "attnprof: error: <message>", and the usage exit code.
int usage_error(const std::string& message);
inline constexpr int kUsageExit = 2;
// One line on stderr, "attnprof: warning: <message>".
void warning(const std::string& message);

}  // namespace attnprof::cli
