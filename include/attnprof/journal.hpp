// Reading a journal back for `attnprof run --resume`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "attnprof/result.hpp"

namespace attnprof {

struct ResumeJournal {
  std::vector<Result> rows;
  // Non-empty when a partial last row was dropped: what happened, in one line.
  std::string warning;
};

// Every line must be a row of this schema version (blank lines are ignored). The one exception
// is what a writer killed inside write(2) leaves behind: a last line without its newline that
// does not parse. It is dropped with a warning (the JSONL sink cuts it off when it opens the
// journal to append). Anything else — a corrupt row anywhere, a foreign file, another
// schema_version — throws std::runtime_error with one line "<path>, line N: <what>"; the file is
// not touched. A file that does not exist reads as no rows.
ResumeJournal read_resume_journal(const std::filesystem::path& path);

}  // namespace attnprof
