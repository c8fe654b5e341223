// The files a command will write, checked before any work starts: a sweep that runs for an hour
// must not die at its end on a typo in --markdown, nor write its CSV over its own journal.
#pragma once

#include <string>
#include <vector>

namespace attnprof::cli {

// One path given to one option ("--csv", "r.csv"); an empty path means the option was not given.
struct PathOption {
  std::string option;
  std::string path;
};

// Every given output must lie in an existing folder this process may write to, and must not be
// a folder or a file it may not write; no two outputs may be one file, nor an output one of the
// `inputs`, however they are spelled (./a.jsonl, a.jsonl, a symlink: compared canonically).
// Throws std::invalid_argument with one line naming the option and the path.
void check_output_paths(const std::vector<PathOption>& outputs,
                        const std::vector<PathOption>& inputs = {});

}  // namespace attnprof::cli
