// Reading a journal back. `run --resume`, `report`, `compare` and the history's file sources all
// read it here, so a journal one of them accepts, every one of them accepts.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "attnprof/result.hpp"

namespace attnprof {

struct JournalRows {
  std::vector<Result> rows;
  // Non-empty when a partial last row was dropped: what happened, in one line (callers print it
  // as a warning).
  std::string warning;
};

// Every line must be a row of this schema version (blank lines are ignored). The one exception
// is what a writer killed inside write(2) leaves behind: a last line without its newline that
// does not parse. It is dropped with a warning (the JSONL sink cuts it off when it opens the
// journal to append). Anything else — a corrupt row anywhere, a foreign file, another
// schema_version, a file that cannot be opened — throws std::runtime_error with one line
// "<path>, line N: <what>"; the file is not touched.
JournalRows read_journal(const std::filesystem::path& path);

}  // namespace attnprof
