// The files a command will write, checked before any work starts: a sweep that runs for an hour
// must not die at its end on a typo in --markdown, nor write its CSV over its own journal.
#pragma once

#include <string>
#include <vector>

namespace attnprof::cli {

// One path given to one option ("--csv", "r.csv"); an empty path means the option was not given.
// `own_rules`: the command decides itself whether an existing file may be replaced (a journal:
// --resume continues it, --force replaces it).
struct PathOption {
  std::string option;
  std::string path;
  bool own_rules = false;
};

// Every given output must be a file this process can create or write: its folder exists and
// takes new files (tried: a probe file created and removed), a device takes writes (/dev/full
// does not), and it is not a folder. An existing non-empty file is refused unless `force` (or
// the option has its own rules): no file a user wrote is replaced without being asked. No two
// outputs may be one file, nor an output one of the `inputs`, however they are spelled
// (./a.jsonl, a.jsonl, a symlink: compared canonically). Throws std::invalid_argument with one
// line naming the option and the path; nothing is written.
void check_output_paths(const std::vector<PathOption>& outputs,
                        const std::vector<PathOption>& inputs = {}, bool force = false);

}  // namespace attnprof::cli
