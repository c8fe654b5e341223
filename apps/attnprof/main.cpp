// attnprof: profile attention implementations across providers, shapes and devices.
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"

namespace attnprof::cli {

namespace {
bool work_started = false;
}  // namespace

int usage_error(const std::string& message) {
  fmt::print(stderr, "attnprof: error: {}\n", message);
  return kUsageExit;
}

void warning(const std::string& message) {
  fmt::print(stderr, "attnprof: warning: {}\n", message);
}

void begin_work() {
  work_started = true;
}

bool work_begun() {
  return work_started;
}

}  // namespace attnprof::cli

int main(int argc, char** argv) {
  using namespace attnprof::cli;
  CLI::App app{"attnprof: a profiler for attention kernels across providers (docs: README.md)"};
  app.require_subcommand(1);
  app.footer(
      "Exit codes (every subcommand):\n"
      "  0      success\n"
      "  1      the work ran and something failed: an error mid-way, bad points with\n"
      "         --fail-on-error, a regression with compare --fail-on-regression, a traced point\n"
      "         that did not pass\n"
      "  2      refused before any work started, nothing written: bad options, grid or preset;\n"
      "         an input that cannot be read or used; an output that cannot be written; a\n"
      "         journal that exists (without --resume or --force) or is in use; no such device\n"
      "  128+N  stopped by signal N (130: SIGINT, 143: SIGTERM)\n");
  app.set_version_flag("--version", ATTNPROF_CLI_VERSION);
  std::vector<Command> commands;
  commands.push_back(add_list_command(app));
  commands.push_back(add_run_command(app));
  commands.push_back(add_peaks_command(app));
  commands.push_back(add_worker_command(app));
  commands.push_back(add_tune_command(app));
  commands.push_back(add_report_command(app));
  commands.push_back(add_compare_command(app));
  commands.push_back(add_merge_command(app));
  commands.push_back(add_history_command(app));
  commands.push_back(add_trace_command(app));

  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const Command& c : commands) {
      found = found || c.app->get_name() == argv[1];
      if (c.app->get_group().empty()) continue;  // hidden (the supervisor's worker)
      known += (known.empty() ? "" : ", ") + c.app->get_name();
    }
    if (!found)
      return usage_error(fmt::format("unknown subcommand '{}' (known: {})", argv[1], known));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  }
  try {
    for (const Command& c : commands) {
      if (c.app->parsed()) return c.run();
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "attnprof: error: {}\n", e.what());
    return work_begun() ? kFailedExit : kUsageExit;
  }
  return usage_error("no subcommand given (try --help)");
}
