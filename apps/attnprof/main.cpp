// attnprof: profile attention implementations across providers, shapes and devices.
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"

namespace attnprof::cli {

int usage_error(const std::string& message) {
  fmt::print(stderr, "attnprof: error: {}\n", message);
  return kUsageExit;
}

void warning(const std::string& message) {
  fmt::print(stderr, "attnprof: warning: {}\n", message);
}

}  // namespace attnprof::cli

int main(int argc, char** argv) {
  using namespace attnprof::cli;
  CLI::App app{"attnprof: a profiler for attention kernels across providers (docs: README.md)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", ATTNPROF_CLI_VERSION);
  std::vector<Command> commands;
  commands.push_back(add_list_command(app));
  commands.push_back(add_run_command(app));
  commands.push_back(add_peaks_command(app));
  commands.push_back(add_worker_command(app));
  commands.push_back(add_tune_command(app));
  commands.push_back(add_report_command(app));
  commands.push_back(add_compare_command(app));
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
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "attnprof: error: {}\n", e.what());
    return 1;
  }
  return usage_error("no subcommand given (try --help)");
}
