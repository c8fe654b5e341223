// The journal a command writes (--out of run and tune): locked for the whole command, so two
// runs never write one file, and an existing, non-empty one refused unless the command is told
// to continue it (--resume) or to replace it (--force): a rerun with the same --out must not
// silently destroy the rows of the last one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attnprof/journal_lock.hpp"
#include "attnprof/result.hpp"

namespace attnprof::cli {

struct JournalClaim {
  std::string path;        // --out; empty: no journal, nothing is claimed
  bool resume = false;     // --resume: the rows are continued
  bool force = false;      // --force: the rows are replaced
  bool can_resume = true;  // whether the command has --resume (tune has not)
};

// The lock on the journal, held until it is destroyed (null when no journal is written).
// Throws std::invalid_argument with one line: the journal is locked by another run (naming it),
// or exists, is not empty, and neither --resume nor --force was given (it is left untouched).
std::unique_ptr<JournalLock> claim_journal(const JournalClaim& claim);

// Writes `rows` as the journal `path`: beside it first, then renamed over it, so a reader never
// sees half a journal (merge, run --gpus). Throws std::runtime_error when it cannot be written.
void write_journal_whole(const std::string& path, const std::vector<Result>& rows);

}  // namespace attnprof::cli
