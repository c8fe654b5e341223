// Command lines of processes, as a shell would take them back: the history records a run's, a
// stopped run prints how to resume, a locked journal names the run that holds it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace attnprof {

// The arguments of process `pid` from /proc/<pid>/cmdline; empty when it cannot be read (the
// process is gone, or hidden from this one).
std::vector<std::string> command_line_args(int pid);

// The arguments joined with spaces, each quoted for a POSIX shell where it needs it.
std::string shell_join(const std::vector<std::string>& args);

// This process's command line: shell_join(command_line_args(getpid())).
std::string process_command_line();

// This process's executable (/proc/self/exe resolved); empty when it cannot be read. Files that
// travel with the binary are found beside it; child runs and ncu's target start it again.
std::filesystem::path this_executable();

}  // namespace attnprof
