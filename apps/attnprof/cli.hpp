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
Command add_merge_command(CLI::App& app);    // cmd_merge.cpp
Command add_history_command(CLI::App& app);  // cmd_history.cpp
Command add_trace_command(CLI::App& app);    // cmd_trace.cpp

// Exit codes, one rule for every subcommand (docs/usage.md, "Exit codes"): 0 success; 1 the work ran
// and something failed (an error mid-way, bad points with --fail-on-error, a regression with
// --fail-on-regression); 2 the request was refused before any work started, nothing written;
// 128+N stopped by signal N.
inline constexpr int kFailedExit = 1;
inline constexpr int kUsageExit = 2;

// One line on stderr, "attnprof: error: <message>", and the usage exit code.
int usage_error(const std::string& message);
// One line on stderr, "attnprof: warning: <message>".
void warning(const std::string& message);

// A command calls this once every check has passed, just before its work starts: an exception
// that ends the command is a refusal (exit 2) before this point and a failure (exit 1) after
// it, whatever its type. One mark per command instead of a classification of every error.
void begin_work();
bool work_begun();

}  // namespace attnprof::cli
